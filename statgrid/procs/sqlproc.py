"""PROC SQL: SQL statements where `lib.member` names are data sets.

Each statement is its own step (own STIMER record). Reading: every library is a schema of
views over its Parquet members, refreshed before each statement; a one-level name means WORK.
Writing: `CREATE [OR REPLACE] TABLE lib.member AS <query>` streams the query into the member's
Parquet file (DuckDB COPY, atomic rename) instead of building an in-memory table;
`DROP TABLE lib.member` deletes the member. TEMP tables work as usual and live in memory
(spilling to UTIL).
"""
from __future__ import annotations

import re

import duckdb

from statgrid.errors import StatgridError
from statgrid.procs._base import qi, render_table

_LEAD = r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*"
_PART = r'(?:"[^"]+"|[A-Za-z_][A-Za-z0-9_]*)'
_NAME = rf"({_PART})(?:\.({_PART}))?"
_CTAS = re.compile(_LEAD + r"CREATE\s+(OR\s+REPLACE\s+)?TABLE\s+(IF\s+NOT\s+EXISTS\s+)?" + _NAME + r"\s+AS\s+(.*)$",
                   re.IGNORECASE | re.DOTALL)
_DROP = re.compile(_LEAD + r"DROP\s+TABLE\s+(IF\s+EXISTS\s+)?" + _NAME + r"\s*$", re.IGNORECASE | re.DOTALL)
# Engine settings that session options own: changing them from SQL would escape memsize or
# move spill files out of UTIL, where nothing cleans them.
_OWNED = {"memory_limit": "memsize", "max_memory": "memsize", "threads": "threads", "worker_threads": "threads",
          "temp_directory": "UTIL ([libraries] util)", "max_temp_directory_size": "utilsize"}
_SET = re.compile(_LEAD + r"(?:SET|PRAGMA|RESET)\s+(?:GLOBAL\s+|SESSION\s+|LOCAL\s+)?(\w+)", re.IGNORECASE)
PRINT_ROWS = 20


def _dataset_name(s, first: str, second: str | None) -> str | None:
    """'lib', 'member' → 'lib.member' when lib is a library; a one-level name is WORK's."""
    first, second = first.strip('"'), second.strip('"') if second else None
    if second is None:
        return f"work.{first}"
    return f"{first}.{second}" if first.lower() in s.libraries else None


def strip_tail(query: str) -> str:
    """The statement without trailing comments and semicolons (DuckDB's tokenizer finds them,
    so a ';' or '--' inside a string literal is left alone)."""
    tokens = duckdb.tokenize(query)
    cut = len(query)
    for pos, kind in reversed(tokens):
        if kind == duckdb.token_type.comment or (kind == duckdb.token_type.operator and
                                                 query[pos:pos + 1] == ";"):
            cut = pos
            continue
        break
    return query[:cut].rstrip()


def _summary_line(text: str) -> str:
    body = re.sub(_LEAD, "", text, flags=re.DOTALL).strip().rstrip(";")
    one = " ".join(body.split())
    return one if len(one) <= 100 else one[:97] + "..."


def sql(s, text: str, print: bool = True, print_rows: int = PRINT_ROWS, keep_result: bool = True):
    """Run one or more SQL statements, each as a step. SELECT results are listed (first
    `print_rows` rows) when print=True. Returns the last SELECT's rows as an Arrow table (or
    None); that table is held in Python memory, outside memsize — with keep_result=False (as
    in .sql jobs) only the listed rows are fetched."""
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as exc:
        with s.step("PROCEDURE SQL"):
            raise StatgridError(f"SQL error: {str(exc).strip()}") from None
    result = None
    for stmt in statements:
        with s.step("PROCEDURE SQL"):
            s.log.note(f"SQL: {_summary_line(stmt.query)}")
            out = _run_statement(s, stmt, print, print_rows, keep_result)
            if out is not None:
                result = out
    return result


def _run_statement(s, stmt, print_: bool, print_rows: int, keep_result: bool):
    query = strip_tail(stmt.query)
    m = _CTAS.match(query)
    if m and (name := _dataset_name(s, m.group(3), m.group(4))):
        ref = s.libraries.for_write(name)
        if m.group(2) and ref.exists():
            s.log.note(f"Table {ref} exists; IF NOT EXISTS leaves it as it is.")
            return None
        s.libraries.sync_views(s.con)
        # newlines keep a '--' comment inside the query from swallowing COPY's closing parenthesis
        s.write(ref, "\n" + m.group(5) + "\n")
        return None
    m = _DROP.match(query)
    if m and (name := _dataset_name(s, m.group(2), m.group(3))):
        ref = s.libraries.ref(name)
        if not ref.exists():
            if m.group(1):
                return None
            s.dataset(name)   # raises: no such member, naming the library's members
        s.delete(ref.name)
        return None
    m = _SET.match(query)
    if m and m.group(1).lower() in _OWNED:
        raise StatgridError(f"{m.group(1)} is set by the session ({_OWNED[m.group(1).lower()]}); change it with "
                            "--option or statgrid.session(...) instead of SQL.")
    s.libraries.sync_views(s.con)
    listing = None
    if stmt.type == duckdb.StatementType.SELECT:
        table = s.fetch_arrow(query, limit=None if keep_result else print_rows + 1)
        listing = table.slice(0, print_rows + 1)
        result = table if keep_result else None
    else:
        cur = s.execute(query)
        result = None
        if cur.description is not None:
            cols = [d[0] for d in cur.description]
            listing = [cols, cur.fetchmany(print_rows + 1)]
    _refuse_library_tables(s)
    if print_ and listing is not None:
        if isinstance(listing, list):
            cols, rows = listing
        else:
            cols, rows = listing.column_names, [list(r.values()) for r in listing.to_pylist()]
        more = "(more rows not shown)\n" if len(rows) > print_rows else ""
        s.log.listing(render_table(cols, [list(r) for r in rows[:print_rows]], title="The SQL Procedure") + more)
    return result


def _refuse_library_tables(s) -> None:
    """A table the engine made inside a library schema would vanish with the session: refuse it."""
    libs = [lib.name for lib in s.libraries]
    made = s.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT temporary AND "
                     f"schema_name IN ({', '.join('?' for _ in libs)})", libs).fetchall()
    for schema, table in made:
        s.execute(f"DROP TABLE {qi(schema)}.{qi(table)}")
    if made:
        names = ", ".join(f"{a}.{b}".upper() for a, b in made)
        raise StatgridError(f"{names} was not written as a data set: CREATE TABLE in a library needs AS SELECT … "
                            "(a data set is written in one go). Use CREATE TABLE lib.member AS SELECT …, or "
                            "CREATE TEMP TABLE for a scratch table.")
