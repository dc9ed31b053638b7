"""The bridge from PROC SQL to the DATA step's functions: a SAS function with no native DuckDB translation
(sqltext.FUNCTIONS) is called through a DuckDB Python UDF wrapping statgrid.sas.functions' own
implementation, so PROBNORM, CDF, QUANTILE, PRXMATCH, WHICHN, YRDIF, MD5 … give in SQL what they give in
a DATA step.

- One UDF per (function, argument types), registered once per program connection: `sas_udf_<name>_<sig>`,
  sig one letter per argument (n: DOUBLE, c: VARCHAR), typed by the function's declared argument kinds
  (registry.Function.args; an 'a' argument takes the type of the value given) and return type.
- SAS's missing values: a NULL number reaches the function as SAS's missing (NaN), a NULL character value
  as blank; the function applies its own rule; a missing (NaN) result is NULL. A character column is
  padded to its length, as the DATA step's PDV holds it (LENGTHC, FIRST …).
- An invalid argument writes the DATA step's NOTE ("Invalid argument to function X(...)") to the log, at
  most NOTE_LIMIT times per UDF and program, and gives a missing value.
- Vectorized: by default the UDF is an arrow UDF (duckdb's type='arrow'): DuckDB hands it whole vectors, the
  Python loop runs over plain lists (benchmarks/sql_udf.py measures both ways).
- Functions that need the DATA step itself (its PDV, arrays, lagged queues, assigned arguments) stay refused.
"""
from __future__ import annotations

import re
from typing import Any

# Functions that need the DATA step: the PDV (V* of a variable), arrays, assigned arguments.
DATA_STEP_ONLY = frozenset({"VNAME", "VNAMEX", "VLABEL", "VLABELX", "VLENGTH", "VLENGTHX", "VFORMAT", "VFORMATX",
                            "VFORMATD", "VFORMATN", "VFORMATW", "VINFORMAT", "VINFORMATX", "VVALUE", "VVALUEX",
                            "VARRAY", "VARRAYX", "VTYPEX", "DIM", "HBOUND", "LBOUND", "FGET", "FILENAME"})
NOTE_LIMIT = 20          # invalid-argument NOTEs per UDF and program (the DATA step's ERRORS= default is 20)
UDF_MODE = "arrow"       # 'arrow' (vectorized) or 'native' (one Python call per row)
SQL_TYPE = {"n": "DOUBLE", "c": "VARCHAR"}


def refusal(name: str) -> str | None:
    """Why `name` cannot be called from SQL, or None when the bridge can call it."""
    from statgrid.sas.functions import FUNCTIONS
    f = FUNCTIONS.get(name)
    if name in DATA_STEP_ONLY or re.fullmatch(r"(LAG|DIF)\d*", name) or (f is not None and f.out_args):
        return (f"The function {name} is not supported in PROC SQL: it needs the DATA step (its program data "
                "vector, arrays or assigned arguments)")
    return None


def signature(f: Any, kinds: list[str]) -> str:
    """The SQL argument types (n/c per argument) of a call of `f` whose arguments have SAS types `kinds`."""
    sig = ""
    for i, k in enumerate(kinds):
        want = f.arg_type(i)
        sig += "c" if want in ("c", "f") else "n" if want == "n" else ("c" if k == "char" else "n")
    return sig


def _to_sas(kind: str):
    if kind == "n":
        return lambda v: float("nan") if v is None else float(v)
    return lambda v: "" if v is None else v


def _from_sas(returns: str):
    if returns == "char":
        return lambda r: None if r is None else str(r).rstrip(" ")      # trailing blanks: as SAS stores them

    def num(r):
        if r is None or isinstance(r, str):
            return None
        r = float(r)
        return None if r != r else r
    return num


def _runtime(program: Any):
    from statgrid.sas.context import FunctionRuntime

    shown = [0]

    def on_invalid(line, col, math):
        shown[0] += 1
        return shown[0] <= NOTE_LIMIT
    return FunctionRuntime(program, {"_on_invalid": on_invalid})


def make_row_fn(program: Any, f: Any, sig: str):
    """fn(*values) → value: the SAS function `f` on one row's SQL values (None = NULL)."""
    rt = _runtime(program)
    convs = [_to_sas(k) for k in sig]
    back = _from_sas(f.returns)
    fn = f.fn

    def row(*vals):
        return back(fn(rt, *[c(v) for c, v in zip(convs, vals)]))
    return row


def make_arrow_fn(program: Any, f: Any, sig: str):
    """The same over arrow vectors: fn(*arrays) → array. NULLs become SAS's missing, NaN results NULL and
    character results lose their trailing blanks vector-wise; only the function's own call is per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rt = _runtime(program)
    fn = f.fn
    fills = [pa.scalar(float("nan")) if k == "n" else pa.scalar("") for k in sig]
    back = _from_sas(f.returns)

    def vec(*arrays):
        cols = [a.fill_null(fill).to_pylist() for a, fill in zip(arrays, fills)]
        got = [fn(rt, *vals) for vals in zip(*cols)] if cols else [fn(rt)]
        if f.returns == "char":
            try:
                return pc.utf8_rtrim(pa.array(got, type=pa.string()), characters=" ")
            except (pa.ArrowException, TypeError):
                return pa.array([back(r) for r in got], type=pa.string())
        try:
            out = pa.array(got, type=pa.float64())
        except (pa.ArrowException, TypeError):
            return pa.array([back(r) for r in got], type=pa.float64())
        return pc.if_else(pc.is_nan(out), pa.scalar(None, pa.float64()), out)
    return vec


def _fixed_arity(fn, n: int):
    """`fn(*args)` as a function of exactly `n` positional parameters (DuckDB counts a UDF's parameters from
    its signature)."""
    names = ", ".join(f"a{k}" for k in range(n))
    scope: dict[str, Any] = {"fn": fn}
    exec(f"def call({names}):\n    return fn({names})\n", scope)       # noqa: S102 - generated names only
    return scope["call"]


def register(program: Any, name: str, sig: str, mode: str | None = None) -> str:
    """Register (once per program connection) the UDF calling SAS function `name` with SQL argument types
    `sig`; its SQL name."""
    from statgrid.sas.functions import FUNCTIONS
    mode = mode or UDF_MODE
    con = program.session.con
    udf = f"sas_udf_{name.lower()}_{sig or '0'}" + ("" if mode == UDF_MODE else f"_{mode}")
    done = program.extras.setdefault("sql_bridge_udfs", set())
    if (id(con), udf) in done:
        return udf
    f = FUNCTIONS[name]
    types = [SQL_TYPE[k] for k in sig]
    ret = "VARCHAR" if f.returns == "char" else "DOUBLE"
    try:
        con.remove_function(udf)
    except Exception:  # noqa: BLE001 - not registered yet on this connection
        pass
    # side_effects: random-number functions (RAND, RANUNI …) must be called per row, never folded
    side = name.startswith(("RAN", "NORMAL", "UNIFORM")) or name == "RAND"
    if mode == "arrow":
        con.create_function(udf, _fixed_arity(make_arrow_fn(program, f, sig), len(sig)), types, ret, type="arrow",
                            null_handling="special", side_effects=side)
    else:
        con.create_function(udf, _fixed_arity(make_row_fn(program, f, sig), len(sig)), types, ret, null_handling="special",
                            side_effects=side)
    done.add((id(con), udf))
    return udf


def bridge_call(sql: Any, i: int, end: int) -> tuple[int, str]:
    """sqltext.SqlText `sql` at a call of a SAS function with no native translation (toks[i] its name):
    (index after the call, the DuckDB SQL calling its UDF), or SasError when SQL cannot call it."""
    from statgrid.sas.functions import FUNCTIONS, check_arity
    t = sql.toks[i]
    name = t.upper
    why = refusal(name)
    if why:
        raise sql.error(t, why, "a function that does not need the DATA step, or a DATA step")
    after, ranges = sql._args(i + 1, end)
    check_arity(name, len(ranges), t.line, t.col)
    f = FUNCTIONS[name]
    kinds = [sql._source_type(r) for r in ranges]
    sig = signature(f, kinds)
    args = []
    for n, ((a, b), k, want) in enumerate(zip(ranges, kinds, sig), 1):
        declared = f.arg_type(n - 1)
        if declared == "n" and k == "char":
            raise sql.error(sql.toks[a], f"Function {name} requires a numeric expression as argument {n}",
                            "a numeric expression")
        if declared == "c" and k == "num" and _literal_or_column(sql, a, b):
            raise sql.error(sql.toks[a], f"Function {name} requires a character expression as argument {n}",
                            "a character expression")
        args.append(_arg_sql(sql, a, b, want))
    udf = register(sql.program, name, sig)
    return after, f"{udf}({', '.join(args)})"


def _literal_or_column(sql: Any, a: int, b: int) -> bool:
    """The argument is a number literal or a numeric column (whose type is certain)."""
    from statgrid.sas.lexer import NUM
    toks = sql.toks[a:b]
    if len(toks) == 1 and toks[0].kind == NUM:
        return True
    info = sql.columns.get("".join(x.text for x in toks).upper())
    return info is not None and info.type == "num"


def _arg_sql(sql: Any, a: int, b: int, want: str) -> str:
    text = sql.translate_sub(a, b)
    if want == "n":
        return f"CAST({text} AS DOUBLE)"
    info = sql.columns.get("".join(x.text for x in sql.toks[a:b]).upper())
    if info is not None and info.type == "char" and info.length:       # as the PDV holds it: padded
        return f"rpad(coalesce({text}, ''), {int(info.length)}, ' ')"
    return f"CAST({text} AS VARCHAR)"


def where_call(tr: Any, n: Any) -> tuple[str, str] | None:
    """where_sql.WhereTranslator `tr` (with a program) at call `n` of a function it has no SQL for: (the
    DuckDB SQL calling its UDF, 'num' | 'char'), or None when the bridge cannot call it (the caller raises
    WhereNotSql: the DATA step then evaluates the WHERE row by row)."""
    from statgrid.sas.functions import FUNCTIONS, check_arity
    from statgrid.sas.parse import ast as A
    name = n.name
    f = FUNCTIONS.get(name)
    if f is None or refusal(name):
        return None
    check_arity(name, len(n.args), n.line, n.col)
    typed = [tr.expr(a) for a in n.args]
    kinds = ["num" if k == "bool" else k for _, k in typed]
    sig = signature(f, kinds)
    args = []
    for k, (a, (text, kind), want) in enumerate(zip(n.args, typed, sig), 1):
        if f.arg_type(k - 1) == "n" and kind == "char":
            raise tr_error(n, f"Function {name} requires a numeric expression as argument {k}", "a numeric expression")
        if want == "n":
            args.append(f"CAST({text} AS DOUBLE)")
        elif kind == "char":
            args.append(tr._padded(a) if isinstance(a, A.Var) else f"coalesce({text}, '')")
        else:
            raise tr_error(n, f"Function {name} requires a character expression as argument {k}",
                           "a character expression")
    udf = register(tr.program, name, sig)
    return f"{udf}({', '.join(args)})", "char" if f.returns == "char" else "num"


def tr_error(n: Any, message: str, expected: str):
    from statgrid.sas.errors import SasError
    return SasError(message, n.line, n.col, n.name, expected)


__all__ = ["DATA_STEP_ONLY", "NOTE_LIMIT", "UDF_MODE", "bridge_call", "make_arrow_fn", "make_row_fn",
           "refusal", "register", "signature", "where_call"]
