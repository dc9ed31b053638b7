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
from statgrid.procs._base import render_table

_LEAD = r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*"
_NAME = r"([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?"
_CTAS = re.compile(_LEAD + r"CREATE\s+(OR\s+REPLACE\s+)?TABLE\s+(IF\s+NOT\s+EXISTS\s+)?" + _NAME + r"\s+AS\s+(.*)$",
                   re.IGNORECASE | re.DOTALL)
_DROP = re.compile(_LEAD + r"DROP\s+TABLE\s+(IF\s+EXISTS\s+)?" + _NAME + r"\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_CREATE_TABLE = re.compile(_LEAD + r"CREATE\s+(OR\s+REPLACE\s+)?TABLE\s+" + _NAME, re.IGNORECASE | re.DOTALL)
PRINT_ROWS = 20


def _dataset_name(s, first: str, second: str | None) -> str | None:
    """'lib', 'member' → 'lib.member' when lib is a library; a one-level name is WORK's."""
    if second is None:
        return f"work.{first}"
    return f"{first}.{second}" if first in s.libraries else None


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


def sql(s, text: str, print: bool = True, print_rows: int = PRINT_ROWS):
    """Run one or more SQL statements, each as a step. Returns the last SELECT's rows as an
    Arrow table (or None). SELECT results are listed (first `print_rows` rows) when print=True."""
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as exc:
        with s.step("PROCEDURE SQL"):
            raise StatgridError(f"SQL error: {str(exc).strip()}") from None
    result = None
    for stmt in statements:
        with s.step("PROCEDURE SQL"):
            s.log.note(f"SQL: {_summary_line(stmt.query)}")
            out = _run_statement(s, stmt, print, print_rows)
            if out is not None:
                result = out
    return result


def _run_statement(s, stmt, print_: bool, print_rows: int):
    query = stmt.query
    m = _CTAS.match(query)
    if m and (name := _dataset_name(s, m.group(3), m.group(4))):
        ref = s.libraries.for_write(name)
        if m.group(2) and ref.exists():
            s.log.note(f"Table {ref} exists; IF NOT EXISTS leaves it as it is.")
            return None
        s.libraries.sync_views(s.con)
        # newlines keep a '--' comment inside the query from swallowing COPY's closing parenthesis
        s.write(ref, "\n" + strip_tail(m.group(5)) + "\n")
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
    m = _CREATE_TABLE.match(query)
    if m and _dataset_name(s, m.group(2), m.group(3)):
        raise StatgridError("CREATE TABLE in a library needs AS SELECT …: a data set is written in one go. "
                            "Use CREATE TABLE lib.member AS SELECT …, or CREATE TEMP TABLE for a scratch table.")
    s.libraries.sync_views(s.con)
    if stmt.type == duckdb.StatementType.SELECT:
        table = s.fetch_arrow(query)
    else:
        cur = s.execute(query)
        if cur.description is None:
            return None
        table = cur.to_arrow_table()
    if print_ and stmt.type in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN,
                                duckdb.StatementType.PRAGMA):
        rows = [list(r.values()) for r in table.slice(0, print_rows).to_pylist()]
        more = f"({table.num_rows - print_rows} more rows not shown)\n" if table.num_rows > print_rows else ""
        s.log.listing(render_table(table.column_names, rows, title="The SQL Procedure") + more)
    return table
