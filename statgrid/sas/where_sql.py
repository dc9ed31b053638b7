"""WHERE expressions (parse/ast.py trees) → DuckDB SQL with SAS's semantics, for the WHERE statement,
the WHERE= data set option and the PROCs' WHERE.

SAS's rules kept here (SAS 9.4 Language Reference: Concepts, "WHERE-Expression Processing", "Missing
Values"):
- a numeric missing is smaller than every number: `x < 5` is true for a missing x, `x = .` finds the
  missings. Comparisons therefore compare `coalesce(x, -inf)` (a SAS number is never -inf), and are never
  NULL: a WHERE row is kept or not.
- character comparisons ignore trailing blanks (the shorter value is padded): both sides are rtrimmed;
  a character missing is blank ('' after rtrim, NULL taken as blank).
- the colon modifier `=:` compares the first min(len(a), len(b)) characters.
- arithmetic on a missing gives missing (SQL NULL does that); division by zero gives missing.
- the MIN/MAX operators use the missing order (missing is the minimum).
- truth: a number that is neither 0 nor missing.
Columns arrive as SAS types (DOUBLE or VARCHAR: dataset.input_sql converts dates and integers).
Only functions with an exact SQL equivalent are translated; another one raises WhereNotSql, and a caller
that can evaluate the WHERE row by row (the DATA step) does so. Standard library only.
"""
from __future__ import annotations

from dataclasses import dataclass

from statgrid.sas.errors import SasError
from statgrid.sas.parse import ast as A

NEG_INF = "'-infinity'::DOUBLE"


class WhereNotSql(SasError):
    """The WHERE expression uses something with no SQL translation here (a function, a special missing)."""


@dataclass(frozen=True)
class Column:
    sql: str            # the quoted SQL identifier (or expression) of the column
    type: str           # 'num' or 'char'
    length: int = 8     # a character column's length (for concatenation of padded values)


def sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _num_lit(v: float) -> str:
    if v != v:
        return "NULL::DOUBLE"
    return repr(float(v)) + "::DOUBLE"


class WhereTranslator:
    def __init__(self, columns: dict[str, Column], dataset: str = "", program=None):
        self.columns, self.dataset = columns, dataset
        self.program = program      # given: another DATA step function runs as a UDF (procs/sqludf.py)

    def condition(self, node: A.Node) -> str:
        """SQL that is TRUE for the rows to keep (never NULL)."""
        return self.boolean(node)

    # -- typed translation: (sql, kind) with kind 'num' | 'char' | 'bool' --------------------------------
    def expr(self, n: A.Node) -> tuple[str, str]:
        if isinstance(n, A.Num):
            if n.value != n.value and getattr(n.value, "code", ".") != ".":
                raise WhereNotSql("Special missing values are not supported in WHERE here", n.line, n.col, n.text)
            return _num_lit(n.value), "num"
        if isinstance(n, A.Str):
            return sql_str(n.value), "char"
        if isinstance(n, A.Var):
            col = self.columns.get(n.name)
            if col is None:
                on = f" on file {self.dataset}" if self.dataset else ""
                raise SasError(f"Variable {n.text} is not{on}", n.line, n.col, n.text,
                               "a variable of the data set")
            return col.sql, col.type
        if isinstance(n, A.Unary):
            if n.op == "NOT":
                return f"(NOT {self.boolean(n.operand)})", "bool"
            s = self.num(n.operand)
            return (f"(-{s})" if n.op == "-" else s), "num"
        if isinstance(n, A.Binary):
            return self._binary(n)
        if isinstance(n, A.Call):
            return self._call(n)
        if isinstance(n, (A.Compare, A.In, A.Between, A.Contains, A.Like, A.IsMissing, A.SoundsLike)):
            return self._predicate(n), "bool"
        raise WhereNotSql("This expression is not supported in a WHERE clause", n.line, n.col, type(n).__name__)

    def num(self, n: A.Node) -> str:
        s, k = self.expr(n)
        if k == "bool":
            return f"CAST({s} AS DOUBLE)"
        if k == "char":
            raise SasError("A character operand is used where a number is required", n.line, n.col, "",
                           "a numeric expression")
        return s

    def char(self, n: A.Node) -> str:
        s, k = self.expr(n)
        if k != "char":
            raise SasError("A numeric operand is used where a character value is required", n.line, n.col, "",
                           "a character expression")
        return s

    def boolean(self, n: A.Node) -> str:
        s, k = self.expr(n)
        if k == "bool":
            return s
        if k == "num":
            return f"coalesce(({s}) <> 0, false)"
        return f"(rtrim(coalesce({s}, '')) <> '')"

    def _binary(self, n: A.Binary) -> tuple[str, str]:
        if n.op in ("AND", "OR"):
            return f"({self.boolean(n.left)} {n.op} {self.boolean(n.right)})", "bool"
        if n.op == "||":
            return f"({self._padded(n.left)} || {self._padded(n.right)})", "char"
        a, b = self.num(n.left), self.num(n.right)
        if n.op == "/":
            return f"({a} / nullif({b}, 0))", "num"
        if n.op == "**":
            return f"power({a}, {b})", "num"
        if n.op in ("MIN", "MAX"):
            fn = "least" if n.op == "MIN" else "greatest"
            ka, kb = f"coalesce({a}, {NEG_INF})", f"coalesce({b}, {NEG_INF})"
            return f"nullif({fn}({ka}, {kb}), {NEG_INF})", "num"
        return f"({a} {n.op} {b})", "num"

    def _padded(self, n: A.Node) -> str:
        """A character value as the PDV holds it: padded to its variable's length."""
        if isinstance(n, A.Var):
            col = self.columns.get(n.name)
            if col is not None and col.type == "char":
                return f"rpad(coalesce({col.sql}, ''), {col.length}, ' ')"
        return f"coalesce({self.char(n)}, '')"

    def _key(self, n: A.Node) -> tuple[str, str]:
        """A comparison key: numbers with missing as -inf, characters rtrimmed (missing = '')."""
        s, k = self.expr(n)
        if k == "char":
            return f"rtrim(coalesce({s}, ''))", "char"
        if k == "bool":
            return f"CAST({s} AS DOUBLE)", "num"
        return f"coalesce({s}, {NEG_INF})", "num"

    def _predicate(self, n: A.Node) -> str:
        if isinstance(n, A.Compare):
            (a, ka), (b, kb) = self._key(n.left), self._key(n.right)
            if ka != kb:
                raise SasError("The operands of a comparison must be both numeric or both character",
                               n.line, n.col, n.op, "operands of one type")
            op = {"EQ": "=", "NE": "<>", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}[n.op]
            if n.colon and ka == "char":
                # SAS cuts the longer value (as the PDV holds it: padded) to the shorter one's length
                a, b = self._padded(n.left), self._padded(n.right)
                ln = f"least(length({a}), length({b}))"
                return f"(left({a}, {ln}) {op} left({b}, {ln}))"
            return f"({a} {op} {b})"
        if isinstance(n, A.In):
            if n.array:
                raise WhereNotSql("IN with an array is not valid in WHERE", n.line, n.col, n.array)
            a, ka = self._key(n.operand)
            parts, singles = [], []
            for item in n.items:
                if isinstance(item, tuple):
                    lo, hi = self._key(item[1])[0], self._key(item[2])[0]
                    parts.append(f"({a} BETWEEN {lo} AND {hi})")
                else:
                    s, k = self._key(item)
                    if k != ka:
                        raise SasError("The IN list's values must have the type of the left operand",
                                       n.line, n.col, "IN", "values of one type")
                    singles.append(s)
            if singles:
                parts.append(f"({a} IN ({', '.join(singles)}))")
            body = " OR ".join(parts) or "false"
            return f"(NOT ({body}))" if n.negated else f"({body})"
        if isinstance(n, A.Between):
            a, ka = self._key(n.operand)
            lo, hi = self._key(n.low)[0], self._key(n.high)[0]
            s = f"({a} BETWEEN {lo} AND {hi})"
            return f"(NOT {s})" if n.negated else s
        if isinstance(n, A.Contains):
            a, p = self._key(n.operand)[0], self.char(n.pattern)
            s = f"contains({a}, {p})"
            return f"(NOT {s})" if n.negated else s
        if isinstance(n, A.Like):
            a, p = self._key(n.operand)[0], self.char(n.pattern)
            s = f"({a} LIKE {p} ESCAPE '\\')"
            return f"(NOT {s})" if n.negated else s
        if isinstance(n, A.IsMissing):
            s, k = self.expr(n.operand)
            test = f"(rtrim(coalesce({s}, '')) = '')" if k == "char" else f"({s} IS NULL OR isnan({s}))"
            return f"(NOT {test})" if n.negated else test
        if isinstance(n, A.SoundsLike):
            a, p = self._key(n.operand)[0], self.char(n.pattern)
            s = f"(sas_soundex({a}) = sas_soundex({p}))"
            return f"(NOT {s})" if n.negated else s
        raise WhereNotSql("unsupported WHERE operator", n.line, n.col)

    # -- functions with an exact SQL equivalent -------------------------------------------------------------
    def _call(self, n: A.Call) -> tuple[str, str]:
        name, args = n.name, n.args
        if any(isinstance(a, A.OfList) for a in args):
            raise WhereNotSql(f"OF lists in {name} are not translated to SQL", n.line, n.col, name)
        if name in ("UPCASE", "LOWCASE", "TRIM", "STRIP", "LEFT") and len(args) == 1:
            fn = {"UPCASE": "upper", "LOWCASE": "lower", "TRIM": "rtrim", "STRIP": "trim", "LEFT": "ltrim"}[name]
            return f"{fn}(coalesce({self.char(args[0])}, ''))", "char"
        if name == "SUBSTR" and len(args) in (2, 3):
            s = self._padded(args[0])
            rest = ", ".join(f"CAST(trunc({self.num(a)}) AS BIGINT)" for a in args[1:])
            return f"substr({s}, {rest})", "char"
        if name in ("ABS", "SQRT", "EXP", "LOG", "LOG10", "CEIL", "FLOOR") and len(args) == 1:
            fn = {"LOG": "ln"}.get(name, name.lower())
            return f"{fn}({self.num(args[0])})", "num"
        if name == "INT" and len(args) == 1:
            return f"trunc({self.num(args[0])})", "num"
        if name == "ROUND" and len(args) in (1, 2):
            if len(args) == 1:
                return f"round({self.num(args[0])})", "num"
            u = self.num(args[1])
            return f"(round({self.num(args[0])} / {u}) * {u})", "num"
        if name == "MISSING" and len(args) == 1:
            return self._predicate(A.IsMissing(n.line, n.col, args[0])), "bool"
        if name in ("MIN", "MAX", "SUM") and args:
            vals = [self.num(a) for a in args]
            fn = {"MIN": "least", "MAX": "greatest"}.get(name)
            if fn:
                return f"{fn}({', '.join(vals)})", "num"        # DuckDB's least/greatest skip NULLs, as SAS
            nn = " AND ".join(f"{v} IS NULL" for v in vals)
            return f"(CASE WHEN {nn} THEN NULL ELSE {' + '.join(f'coalesce({v}, 0)' for v in vals)} END)", "num"
        if name in ("YEAR", "MONTH", "DAY", "QTR", "WEEKDAY") and len(args) == 1:
            d = f"(DATE '1960-01-01' + CAST(floor({self.num(args[0])}) AS INTEGER))"
            part = {"YEAR": f"year({d})", "MONTH": f"month({d})", "DAY": f"day({d})", "QTR": f"quarter({d})",
                    "WEEKDAY": f"(dayofweek({d}) + 1)"}[name]
            return f"CAST({part} AS DOUBLE)", "num"
        if name == "MDY" and len(args) == 3:
            m, d, y = (self.num(a) for a in args)
            return (f"CAST(date_diff('day', DATE '1960-01-01', make_date(CAST({y} AS BIGINT), CAST({m} AS BIGINT), "
                    f"CAST({d} AS BIGINT))) AS DOUBLE)"), "num"
        if name == "INDEX" and len(args) == 2:
            return f"CAST(strpos({self._padded(args[0])}, {self.char(args[1])}) AS DOUBLE)", "num"
        if name == "LENGTH" and len(args) == 1:
            # SAS: the position of the last non-blank character, 1 for a blank value
            return f"CAST(greatest(length(rtrim(coalesce({self.char(args[0])}, ''))), 1) AS DOUBLE)", "num"
        if name == "MOD" and len(args) == 2:
            a, b = self.num(args[0]), self.num(args[1])
            return f"({a} - {b} * trunc({a} / nullif({b}, 0)))", "num"
        if name == "COALESCE" and args:
            return f"coalesce({', '.join(self.num(a) for a in args)})", "num"
        if name in ("TODAY", "DATE") and not args:
            return "CAST(date_diff('day', DATE '1960-01-01', current_date) AS DOUBLE)", "num"
        if self.program is not None:
            from statgrid.sas.procs.sqludf import where_call
            got = where_call(self, n)
            if got is not None:
                return got
        raise WhereNotSql(f"Function {name} is not translated to SQL in a WHERE expression", n.line, n.col, name)


def where_sql(node: A.Node, columns: dict[str, Column], dataset: str = "", program=None) -> str:
    """The SQL condition of WHERE expression `node` over `columns` (upper-case SAS name → Column). With
    `program`, a DATA step function with no SQL equivalent is called through a UDF on its connection."""
    return WhereTranslator(columns, dataset, program).condition(node)


# -- SOUNDEX for `=*` (SAS 9.4 Functions: SOUNDEX — the American Soundex algorithm) -------------------------
_SOUNDEX = {c: d for d, letters in (("1", "BFPV"), ("2", "CGJKQSXZ"), ("3", "DT"), ("4", "L"), ("5", "MN"),
                                     ("6", "R")) for c in letters}


def soundex(text: str | None) -> str:
    """SAS's SOUNDEX: the first letter, then the codes of the rest, adjacent equal codes once, vowels
    dropped (H and W do not separate equal codes); no padding to 4 (SAS does not pad)."""
    s = "".join(ch for ch in (text or "").upper() if ch.isalpha())
    if not s:
        return ""
    out, prev = [s[0]], _SOUNDEX.get(s[0], "")
    for ch in s[1:]:
        code = _SOUNDEX.get(ch, "")
        if ch in "HW":
            continue
        if code and code != prev:
            out.append(code)
        prev = code
    return "".join(out)


def register_udfs(con) -> None:
    """Make `sas_soundex` known to a DuckDB connection (once)."""
    try:
        con.create_function("sas_soundex", soundex, ["VARCHAR"], "VARCHAR")
    except Exception:  # noqa: BLE001 - already registered on this connection
        pass
