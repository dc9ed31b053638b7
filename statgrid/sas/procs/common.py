"""What the Base SAS procedures here share: reading a PROC statement's options against the procedure's
table (an unknown option is an ERROR naming it, with the options that would be valid), a statement's
cursor, BY lists with DESCENDING, the input data set (DATA= or _LAST_) through the data-set layer
(statgrid/sas/dataset.py), formatted values for listings, streaming writes of a SELECT into a data set,
and SORTSIZE= as the engine's memory limit while a sort runs.

Messages follow SAS 9.4's wording where SAS has one ("ERROR 22-322: Syntax error, expecting one of the
following: …", "ERROR 180-322: Statement is not valid or it is used out of proper order.").
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Iterator

from statgrid.sas.cursor import TokenCursor
from statgrid.sas.dataset import ColumnInfo, DatasetWriter, column_info, input_sql
from statgrid.sas.parse.dsname import DatasetSpec, parse_dataset
from statgrid.sas.errors import SasError, SasRuntimeError
from statgrid.sas.lexer import NAME, NUM, STR
from statgrid.sas.statement import Statement

# option kinds of a PROC statement's table
FLAG, DATASET, VALUE, TEXT, LIBREF, SIZE = "flag", "dataset", "value", "text", "libref", "size"



def cursor(stmt: Statement) -> TokenCursor:
    return TokenCursor(stmt.tokens, stmt.source)


@dataclass
class ProcOptions:
    """The options of a PROC (or DATASETS sub-) statement: upper-case name → value (True for a flag,
    a DatasetSpec, str/float for values), and where each was written (for later messages)."""
    values: dict[str, Any] = field(default_factory=dict)
    where: dict[str, tuple[int, int]] = field(default_factory=dict)
    value_at: dict[str, tuple[int, int]] = field(default_factory=dict)   # where each value starts

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def __contains__(self, name: str) -> bool:
        return name in self.values


def parse_options(cur: TokenCursor, table: dict[str, str], program: Any, what: str,
                  aliases: dict[str, str] | None = None, stop: tuple[str, ...] = ()) -> ProcOptions:
    """Options up to the statement's end (or a token in `stop`): NAME (flag) or NAME=value. `table`
    maps each valid name to its kind; `aliases` other spellings to the name (LIB → LIBRARY). An
    option not in the table: SAS's ERROR 22-322 listing the valid ones."""
    aliases = aliases or {}
    out = ProcOptions()
    while not cur.at_end() and not cur.at(*stop):
        t = cur.peek()
        if t.kind != NAME:
            raise cur.error(f"Syntax error in the {what} statement", _expected(table))
        name = aliases.get(t.upper, t.upper)
        kind = table.get(name)
        if kind is None:
            raise cur.error(f"The option or parameter {t.text} is not recognized in the {what} statement",
                            _expected(table))
        cur.next()
        out.where[name] = (t.line, t.col)
        if kind == FLAG:
            out.values[name] = True
            continue
        cur.expect("=", expected=f"= after {name}")
        v0 = cur.peek()
        out.value_at[name] = (v0.line, v0.col)
        if kind == DATASET:
            out.values[name] = parse_dataset(cur, program)
        elif kind == LIBREF:
            out.values[name] = cur.expect_name(f"a libref after {name}=").upper()
        elif kind == TEXT:
            v = cur.next()
            if v.kind == STR:
                out.values[name] = v.value
            elif v.kind in (NAME, NUM):
                out.values[name] = v.text
            else:
                raise cur.error(f"Syntax error after {name}=", "a quoted string", v)
        elif kind == SIZE:
            v = cur.next()
            text = v.text
            if v.kind == NUM and cur.peek().kind == NAME and v.touches(cur.peek()):
                text += cur.next().text          # 512M: a number touching its unit
            out.values[name] = text.upper()
        else:                                    # VALUE: a name, number or string, or a ( … ) list
            if cur.at("("):
                cur.next()
                items = []
                while not cur.accept(")"):
                    if cur.at_end():
                        raise cur.error(f"Syntax error in {name}=", ")")
                    items.append(_atom(cur.next()))
                out.values[name] = items
            else:
                out.values[name] = _atom(cur.next())
    return out


def _atom(t) -> Any:
    if t.kind == STR:
        return t.value
    if t.kind == NUM:
        return t.value
    return t.text.upper()


def _expected(table: dict[str, str]) -> str:
    return "one of the following: ;, " + ", ".join(sorted(table))


def statement_error(stmt: Statement, proc: str, valid: tuple[str, ...] | list[str]) -> SasError:
    """SAS: "ERROR 180-322: Statement is not valid or it is used out of proper order." """
    t = stmt.tokens[0]
    return SasError(f"Statement {t.text.upper()} is not valid or it is used out of proper order in PROC {proc}",
                    t.line, t.col, t.text, "one of " + ", ".join(valid), stmt.source)


def proc_statement(stmt: Statement) -> TokenCursor:
    """The cursor after `PROC name`."""
    cur = cursor(stmt)
    cur.expect("PROC")
    cur.expect_kind(NAME, "a procedure name")
    return cur


def input_dataset(program: Any, opts: ProcOptions, key: str = "DATA", stmt: Statement | None = None) -> DatasetSpec:
    """DATA= or, when absent, _LAST_ (SAS: the data set created last)."""
    spec = opts.get(key)
    if spec is not None:
        return spec
    last = (program.last or "").upper()
    if not last or last == "_NULL_":
        t = stmt.tokens[0] if stmt else None
        raise SasError("There is not a default input data set (_LAST_ is _NULL_)", t.line if t else 0,
                       t.col if t else 0, "", f"{key}=")
    lib, _, mem = last.rpartition(".")
    return DatasetSpec(lib or "WORK", mem)


class ByList(list):
    """A BY statement's [(name, descending)], and whether it said NOTSORTED."""
    notsorted = False


def by_list(cur: TokenCursor) -> list[tuple[str, bool]]:
    """`BY [DESCENDING] a [DESCENDING] b …` (after BY): [(name as written, descending)]."""
    keys, desc = ByList(), False
    while not cur.at_end():
        t = cur.next()
        if t.kind != NAME:
            raise cur.error("Syntax error in the BY statement", "a variable name", t)
        if t.upper == "DESCENDING":
            desc = True
            continue
        if t.upper == "NOTSORTED":
            keys.notsorted = True
            continue
        keys.append((t.text, desc))
        desc = False
    if not keys:
        raise cur.error("The BY statement names no variable", "a variable name")
    return keys


def resolve_names(names: list[str], cols: list[ColumnInfo], spec: DatasetSpec, line: int = 0, col: int = 0,
                  ) -> list[ColumnInfo]:
    """Columns for `names` (case-blind); SAS: "ERROR: Variable X not found." naming the first missing."""
    by = {c.name.upper(): c for c in cols}
    out = []
    for n in names:
        c = by.get(n.upper())
        if c is None:
            raise SasError(f"Variable {n} not found in {spec.name}", line, col, n, "a variable of the data set")
        out.append(c)
    return out


def check_by_sorted(program: Any, spec: DatasetSpec, cols: list[ColumnInfo], by: list[tuple[str, bool]]) -> None:
    """SAS's ERROR when the data set is not sorted by the BY variables (a PROC's BY statement): the first
    observation whose key sorts before the one before it, found by one query over the input. Nothing is
    checked when the BY statement says NOTSORTED (its groups are runs: byruns.py)."""
    from statgrid.libraries import sql_ident

    if getattr(by, "notsorted", False):
        return
    types = {c.name.upper(): c.type for c in cols}
    keys = []
    for name, desc in by:
        q = sql_ident(next((c.name for c in cols if c.name.upper() == name.upper()), name))
        # a missing value sorts lowest (SAS): NULL and '' before everything
        k = f"coalesce({q}, '')" if types.get(name.upper()) == "char" else f"coalesce({q}, -'inf'::DOUBLE)"
        keys.append((k, desc, q))
    lags = ", ".join(f"{k} AS __k{j}, lag({k}) OVER (ORDER BY __r) AS __p{j}, {q} AS __v{j}, "
                     f"lag({q}) OVER (ORDER BY __r) AS __w{j}" for j, (k, _, q) in enumerate(keys))
    cond, eq = [], []
    for j, (_, desc, _) in enumerate(keys):
        cond.append("(" + " AND ".join(eq + [f"__k{j} {'>' if desc else '<'} __p{j}"]) + ")")
        eq.append(f"__k{j} = __p{j}")
    values = ", ".join(f"__w{j}, __v{j}" for j in range(len(keys)))
    sql = (f"SELECT {values} FROM (SELECT __r, {lags} FROM (SELECT *, row_number() OVER () AS __r FROM "
           f"({input_sql(program, spec, cols)}))) WHERE {' OR '.join(cond)} ORDER BY __r LIMIT 1")
    first = program.session.execute(sql).fetchall()
    if first:
        how = "descending" if by[0][1] else "ascending"
        row = first[0]
        fix = "data sorted by the BY variables (PROC SORT), or NOTSORTED on the BY statement"

        def shown(v):
            return "." if v is None else (v if isinstance(v, str) else format_cell(program, v, None, "num").strip())
        names = [name for name, _ in by]
        current = " ".join(f"{n} = {shown(row[2 * j])}" for j, n in enumerate(names))
        following = " ".join(f"{n} = {shown(row[2 * j + 1])}" for j, n in enumerate(names))
        # an execution-time ERROR (the step stops; the program goes on, not in syntax-check mode)
        raise SasRuntimeError(f"Data set {spec.name} is not sorted in {how} sequence. The current BY group has "
                              f"{current} and the next BY group has {following}", spec.line, spec.col, spec.name, fix)


def var_names(cur: TokenCursor, cols: list[ColumnInfo]) -> list[str]:
    """A variable list (`a b`, `x1-x3`, `a--c`, `_numeric_`, `pre:`) → names among `cols`."""
    from statgrid.sas.dataset import expand_var_list
    from statgrid.sas.parse.expr import parse_var_list

    items = parse_var_list(cur)
    names = [c.name for c in cols]
    types = {c.name.upper(): c.type for c in cols}
    return expand_var_list(items, names, types)


def fetch_rows(program: Any, sql: str) -> tuple[list[str], list[list[Any]]]:
    """(column names, rows as Python lists) of a SELECT: for listings, which are small."""
    table = program.session.fetch_arrow(sql)
    cols = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return table.column_names, [list(r) for r in zip(*cols)] if cols else []


def observations_read(program: Any, n: int, spec: DatasetSpec, where: Any = None) -> None:
    """SAS's NOTE on the rows a step read, with the WHERE clause that chose them on the next line
    ("      WHERE (cd='BB') and (amt>500);"): `where` (an expression node), else the data set's WHERE=."""
    node = where if where is not None else getattr(spec, "where", None)
    text = f"There were {n} observations read from the data set {spec.name}."
    if node is not None:
        try:
            text += f"\nWHERE {where_text(node)};"
        except Exception:  # noqa: BLE001  (a node the echo cannot show: the NOTE without it)
            pass
    program.log.note(text)


_WHERE_CMP = {"EQ": "=", "NE": " not = ", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def where_text(node: Any) -> str:
    """A WHERE expression as SAS echoes it in the log: comparisons without blanks (x>1), the operands of
    AND/OR each in parentheses, lower-case logical words, character constants in single quotes,
    function names in upper case."""
    from statgrid.sas.parse import ast as A

    def lit(n):
        if isinstance(n, A.Str):
            return "'" + n.value.replace("'", "''") + "'"
        if isinstance(n, A.Num):
            if n.text:
                return n.text
            x = n.value
            return "." if x != x else (str(int(x)) if x == int(x) else repr(x))
        return None

    def part(n):                      # an operand of AND/OR: itself in parentheses
        return f"({r(n)})"

    def operand(n):                   # an operand of an operator: parentheses round another operation
        if isinstance(n, (A.Binary, A.Compare, A.In, A.Between, A.PatternOp, A.IsMissing, A.Unary)):
            return f"({r(n)})"
        return r(n)

    def chain(n, op):
        if isinstance(n, A.Binary) and n.op == op:
            return chain(n.left, op) + chain(n.right, op)
        return [n]

    def r(n):
        t = lit(n)
        if t is not None:
            return t
        if isinstance(n, A.Var):
            return n.text or n.name
        if isinstance(n, A.Call):
            return f"{n.name.upper()}(" + ", ".join(r(a) for a in n.args) + ")"
        if isinstance(n, A.Binary):
            if n.op in ("AND", "OR"):
                return f" {n.op.lower()} ".join(part(x) for x in chain(n, n.op))
            op = {"MIN": "><", "MAX": "<>"}.get(n.op, n.op)
            return f"{operand(n.left)}{op}{operand(n.right)}"
        if isinstance(n, A.Compare):
            op = _WHERE_CMP[n.op] + (":" if n.colon else "")
            return f"{operand(n.left)}{op}{operand(n.right)}"
        if isinstance(n, A.Unary):
            if n.op == "NOT":
                return f"not {part(n.operand)}"
            return f"{n.op}{operand(n.operand)}"
        if isinstance(n, A.In):
            items = []
            for it in n.items:
                items.append(f"{r(it[1])}:{r(it[2])}" if isinstance(it, tuple) else r(it))
            return f"{operand(n.operand)}{' not' if n.negated else ''} in ({', '.join(items)})"
        if isinstance(n, A.Between):
            return (f"{operand(n.operand)}{' not' if n.negated else ''} between {operand(n.low)} "
                    f"and {operand(n.high)}")
        if isinstance(n, A.IsMissing):
            return f"{operand(n.operand)} is{' not' if n.negated else ''} null"
        if isinstance(n, A.PatternOp):
            word = {"Contains": "contains", "Like": "like", "SoundsLike": "=*"}.get(type(n).__name__, "contains")
            return f"{operand(n.operand)}{' not' if n.negated else ''} {word} {r(n.pattern)}"
        raise TypeError(type(n).__name__)

    return r(node)


def open_input(program: Any, spec: DatasetSpec) -> tuple[list[ColumnInfo], str]:
    cols = column_info(program, spec)
    return cols, input_sql(program, spec, cols)


def narrowed_input(program: Any, spec: DatasetSpec, cols: list[ColumnInfo], names: list[str]) -> str:
    """input_sql over only the columns a step reads (`names`), so a PROC on 3 of 300 columns does not bind 300
    conversions per query; all of them when WHERE= (or a WHERE statement) may read others."""
    if spec.where is not None:
        return input_sql(program, spec, cols)
    want = {n.upper() for n in names}
    return input_sql(program, spec, [c for c in cols if c.name.upper() in want] or cols[:1])


# -- formatted values --------------------------------------------------------------------------------------
def format_cell(program: Any, value: Any, fmt: str, ctype: str) -> str:
    """One value as a listing shows it: with its format (helper F's format_value, the MISSING= option for
    a numeric missing), else BEST12. for numbers, the value for characters; stripped."""
    from statgrid.sas.formats import format_value

    missing = _missing_char(program)
    if ctype == "char":
        v = "" if value is None else str(value)
        if fmt:
            return format_value(v, fmt, program.formats, missing).rstrip()
        return v.rstrip()
    v = float("nan") if value is None else value if isinstance(value, float) else float(value)   # .A keeps its letter
    return format_value(v, fmt or "BEST12.", program.formats, missing).strip()


def _missing_char(program: Any) -> str:
    try:
        return str(program.options.get("MISSING"))
    except Exception:  # noqa: BLE001 - options without MISSING
        return "."


# -- listing pieces ---------------------------------------------------------------------------------------
def by_text(program: Any, pairs) -> str:
    """'g=1 region=N': each BY variable with its value as SAS shows it (its format, else BEST.: 1, not 1.0)."""
    return " ".join(f"{b.name}={format_cell(program, v, b.format, b.type).strip()}" for b, v in pairs)


def by_rule(text: str, ls: int = 72) -> str:
    """SAS's BY line: the text between runs of dashes across the line."""
    body = f" {text} "
    left = max(1, (ls - len(body)) // 2)
    right = max(1, ls - len(body) - left)
    return "-" * left + body + "-" * right


# -- writing ----------------------------------------------------------------------------------------------
SORTED_KEY = "statgrid.sortedby"     # PROC SORT's BY list, shown by CONTENTS as SAS's Sort Information


def write_select(program: Any, spec: DatasetSpec, sql: str, cols: list[ColumnInfo],
                 extra_kv: dict[str, str] | None = None) -> int:
    """Write the rows of `sql` (its columns are `cols`, in order) as data set `spec`, applying the output's
    KEEP=/DROP=/RENAME=: DuckDB copies them straight to a temporary Parquet file beside the data set
    (streaming, parallel, zstd, BUFSIZE's row groups) that replaces it in one rename — the data-set layer's
    schema (DOUBLE/VARCHAR, column metadata under statgrid.columns) and NOTE. Measured on 10 M rows this
    is the Python API's speed, where streaming Arrow batches through a pyarrow writer cost 14 % more.
    In syntax-check mode the data-set layer's writer says nothing was replaced."""
    import json

    from statgrid.libraries import atomic_output, parquet_copy_sql, sql_ident
    from statgrid.sas.dataset import COLUMNS_KEY, columns_metadata, output_names

    names = [c.name for c in cols]
    types = {c.name.upper(): c.type for c in cols}
    keep = output_names(spec, names, types)
    out_cols, select = [], []
    for c in cols:
        if c.name.upper() not in keep:
            continue
        new = spec.rename.get(c.name.upper(), c.name)
        out_cols.append(ColumnInfo(new, c.type, c.length, c.format, c.informat, c.label))
        typ = "VARCHAR" if c.type == "char" else "DOUBLE"
        select.append(f"CAST({sql_ident(c.name)} AS {typ}) AS {sql_ident(new)}")
    writer = DatasetWriter(program, spec, out_cols)       # checks the library (read-only, assigned)
    if getattr(program, "syntax_check", False) or writer.ref is None:
        writer.commit()                                   # its WARNING: nothing replaced
        return 0
    session = program.session
    kv = {COLUMNS_KEY: json.dumps(columns_metadata(out_cols))}
    if spec.label:
        from statgrid.sas.dataset import LABEL_KEY
        kv[LABEL_KEY] = spec.label
    if extra_kv:                                              # (special missing letters: under the new names)
        from statgrid.sas.dataset import SPECIALS_KEY
        kv.update({k: v for k, v in extra_kv.items() if k == SPECIALS_KEY or not spec.rename})
    from statgrid.sas.dataset import dataset_io
    group = dataset_io(program, spec)                         # BUFSIZE= and COMPRESS= (session's, data set's)
    from statgrid.sas.dataset import output_where_sql
    cond = output_where_sql(program, spec, out_cols)          # WHERE= of the output: over the names written
    body = f"SELECT {', '.join(select) or 'NULL AS __none'} FROM ({sql})"
    if cond is not None:
        body = f"SELECT * FROM ({body}) WHERE {cond}"
    with atomic_output(writer.ref) as tmp:
        rows = int(session.execute(parquet_copy_sql(body, tmp, group, kv)).fetchall()[0][0])
    session.record_output(writer.ref, rows)
    program.last = spec.name
    program.log.note(f"The data set {spec.name} has {rows} observations and {len(out_cols)} variables.")
    return rows


@contextlib.contextmanager
def sortsize(program: Any) -> Iterator[int]:
    """SORTSIZE= as DuckDB's memory_limit while a sort runs (never above MEMSIZE, the session's cap);
    the session's limit is set back afterwards. A sort that needs more spills to UTIL."""
    session = program.session
    try:
        limit = int(program.options.get("SORTSIZE"))
    except Exception:  # noqa: BLE001
        limit = 0
    cap = int(getattr(getattr(session, "options", None), "memsize_bytes", 0) or 0)
    if not limit or (cap and limit >= cap):
        yield cap
        return
    limit = max(limit, 16 * 1024**2)          # DuckDB needs a little to run at all
    session.con.execute(f"SET memory_limit = '{limit}B'")
    try:
        yield limit
    finally:
        session.con.execute(f"SET memory_limit = '{cap}B'")


def write_rows(program, spec: DatasetSpec, cols: list[ColumnInfo], rows: list[list]) -> None:
    """Rows computed in Python (a PROC's OUT= of one row per group: few) written as data set `spec`, as
    write_select writes (column metadata, atomic, KEEP=/DROP=/RENAME=, the NOTE)."""
    import pyarrow as pa

    from statgrid.libraries import sql_ident

    arrays = []
    for j, c in enumerate(cols):
        vals = [r[j] for r in rows]
        if c.type == "char":
            arrays.append(pa.array([None if v is None else str(v) for v in vals], pa.string()))
        else:
            arrays.append(pa.array([None if v is None or (isinstance(v, float) and v != v) else float(v)
                                    for v in vals], pa.float64()))
    table = pa.Table.from_arrays(arrays, names=[f"c{j}" for j in range(len(cols))])
    con = program.session.con
    name = "__sas_proc_rows"
    con.register(name, table)
    try:
        select = ", ".join(f"c{j} AS {sql_ident(c.name)}" for j, c in enumerate(cols))
        write_select(program, spec, f"SELECT {select} FROM {name}", cols, _letters_kv(spec, cols, rows))
    finally:
        con.unregister(name)


def _letters_kv(spec: DatasetSpec, cols: list[ColumnInfo], rows: list[list]) -> dict | None:
    """The special missing letters among rows computed in Python (SpecialMissing values), as the written
    file's metadata under the output's names; None for none, or when an output WHERE= renumbers the rows."""
    import json

    from statgrid.sas.dataset import SPECIALS_KEY
    from statgrid.sas.values import SpecialMissing
    out: dict[str, dict[str, str]] = {}
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            if c.type == "num" and isinstance(r[j], SpecialMissing):
                out.setdefault(spec.rename.get(c.name.upper(), c.name), {})[str(i)] = r[j].code
    return {SPECIALS_KEY: json.dumps(out)} if out and spec.where is None else None


def by_condition(byc, key) -> str:
    """SQL true for the rows of one BY group (`key`: its values, in BY order; missing matches missing; a
    NOTSORTED group's key has its run, byruns.py)."""
    from statgrid.libraries import sql_ident, sql_literal
    from statgrid.sas.procs.byruns import RUN
    if getattr(key, "run", None) is not None:
        return f"{RUN} = {int(key.run)}"
    parts = []
    for b, v in zip(byc, key):
        lit = "NULL" if v is None else (sql_literal(str(v)) if b.type == "char" else repr(float(v)))
        parts.append(f"{sql_ident(b.name)} IS NOT DISTINCT FROM {lit}")
    return " AND ".join(parts)


def without_notes(program, fn) -> Any:
    """Run fn without its data-set NOTE (an internal member the user never named)."""
    before = program.log.note
    program.log.note = lambda *a, **k: None
    try:
        return fn()
    finally:
        program.log.note = before


def drop_member(program, spec: DatasetSpec) -> None:
    try:
        ref = program.session.libraries.for_write(f"{spec.libref}.{spec.member}")
        ref.path.unlink(missing_ok=True)
    except Exception:  # noqa: BLE001 - nothing to remove
        pass


def where_statement(cur: TokenCursor, spec: DatasetSpec) -> None:
    """A PROC's WHERE statement (after WHERE): its expression on the input, unless a WHERE= data set option
    already chose the rows (SAS: the data set option wins)."""
    from statgrid.sas.parse import ast as A
    from statgrid.sas.parse.expr import parse_expression

    also = False
    if cur.peek().kind == "NAME" and cur.peek().upper == "ALSO":          # WHERE ALSO expr
        cur.next()
        also = True
    elif cur.peek().kind == "NAME" and cur.peek().upper == "SAME" and cur.peek(1).kind == "NAME" \
            and cur.peek(1).upper == "AND":                                  # WHERE SAME AND expr
        cur.next()
        cur.next()
        also = True
    start = cur.i
    t0 = cur.peek()
    node = parse_expression(cur, where=True)
    text = " ".join(t.text for t in cur.tokens[start:cur.i])
    if getattr(spec, "where_from_option", False):
        return                                    # the WHERE= data set option chose the rows
    if spec.where is None:
        spec.where, spec.where_text = node, text
    elif also:                                    # SAS: the conditions are joined with AND
        spec.where = A.Binary(t0.line, t0.col, "AND", spec.where, node)
        spec.where_text = f"({spec.where_text}) and ({text})"
    else:                                         # SAS: a later WHERE statement replaces the earlier one
        spec.where, spec.where_text = node, text


def by_keys(program: Any, byc: list[ColumnInfo], sql: str) -> list[list]:
    """The BY groups' values in BY order (missing first), or [[]] without BY: a PROC fitted per group. With
    NOTSORTED (`byc` a byruns.ByColumns saying so, `sql` with its RUN column) the runs in data order, each
    key with its run."""
    if not byc:
        return [[]]
    from statgrid.libraries import sql_ident
    from statgrid.sas.procs.byruns import by_key, runs_keys_sql, runs_on
    if runs_on(byc):
        return [by_key(r[1:], r[0]) for r in fetch_rows(program, runs_keys_sql(byc, sql))[1]]
    _, keys = fetch_rows(program, f"SELECT DISTINCT {', '.join(sql_ident(b.name) for b in byc)} FROM ({sql}) "
                                  "ORDER BY ALL")
    return keys


def by_group_members(program: Any, byc: list[ColumnInfo], cols: list[ColumnInfo], sql: str,
                     member: str) -> Iterator[tuple[list, str]]:
    """For a PROC fitted per BY group by a procedure that reads a data set: each group's rows of `sql`
    written to WORK.member (no NOTE: the user never named it), yielding (the group's BY values, 'work.member')
    in BY order — one group, all rows, without BY. The member is removed when the loop ends, however."""
    from statgrid.sas.errors import skip_if_syntax_check
    skip_if_syntax_check(program)                    # after an ERROR: the statements were read; fit nothing
    spec = DatasetSpec("WORK", member.upper())
    try:
        for key in by_keys(program, byc, sql):
            rows = f"SELECT * FROM ({sql})" + (f" WHERE {by_condition(byc, key)}" if byc else "")
            without_notes(program, lambda: write_select(program, spec, rows, cols))
            yield key, f"work.{member.lower()}"
    finally:
        drop_member(program, spec)
