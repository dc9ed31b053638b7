"""SAS's SQL dialect (PROC SQL's query expressions) → DuckDB SQL, token by token (SAS 9.4 SQL Procedure
User's Guide; Base SAS Procedures: SQL).

What is rewritten, and why:
- Table references (`lib.member`, `member` = WORK's, with data-set options in parentheses) become the
  data-set layer's SELECT (dataset.input_sql): the columns arrive as SAS sees them (numbers DOUBLE, dates
  as SAS days), DATA step views run, KEEP=/WHERE=/RENAME= apply. Without an alias the member's name is
  its alias, so `member.col` works as in SAS. DICTIONARY.TABLES/COLUMNS (and SASHELP.VTABLE/VCOLUMN) are
  built from the assigned libraries.
- Literals: "double quoted" strings are strings in SAS (identifiers in DuckDB); `'01jan2020'd`, `…'t`,
  `…'dt` are SAS numbers; `.` and `.A`-`.Z` are missing (NULL); `'name'n` is a quoted identifier.
- Operators: EQ NE GT LT GE LE, ^= ~= ¬=, ^ ~ ¬ for NOT, !! for ||, `x = .` / `x ne .` → IS [NOT] NULL,
  IS MISSING → IS NULL, `a CONTAINS b`, CALCULATED dropped (DuckDB resolves select-list aliases),
  OUTER UNION CORR → UNION ALL BY NAME, UNION/EXCEPT/INTERSECT CORR → BY NAME.
- SAS's missing value is smaller than every number and equal to itself: a comparison with a numeric
  column compares coalesce(col, -inf) (a SAS number is never -inf), so `x < 5` keeps missing x and a join
  on a missing key matches, as in SAS; ORDER BY puts missing first (the caller sets DuckDB's null order).
- Functions: SAS's names mapped to DuckDB's (upcase → upper, index → instr, sum(a, b) with SAS's
  missing rule, min/max of several arguments, mdy, year, put, input …); one with no exact mapping is an
  ERROR naming it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.cursor import TokenCursor
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM, OP, STR

NEG_INF = "'-infinity'::DOUBLE"
SAS_EPOCH = "DATE '1960-01-01'"
COMPARE = {"=": "=", "EQ": "=", "^=": "<>", "~=": "<>", "¬=": "<>", "NE": "<>", "<>": "<>", "<": "<", "LT": "<",
           "<=": "<=", "LE": "<=", ">": ">", "GT": ">", ">=": ">=", "GE": ">="}
CLAUSE_END = {"WHERE", "GROUP", "HAVING", "ORDER", "UNION", "EXCEPT", "INTERSECT", "OUTER", "ON", "INTO", "LEFT",
              "RIGHT", "FULL", "INNER", "JOIN", "CROSS", "NATURAL", "USING", "LIMIT"}
SAS_DATE = f"({SAS_EPOCH} + CAST(floor({{0}}) AS INTEGER))"
# SAS function → DuckDB template ({0}, {1} … the translated arguments; {*} all of them)
FUNCTIONS: dict[str, str | dict[int, str]] = {
    "UPCASE": "upper({0})", "LOWCASE": "lower({0})", "TRIM": "rtrim({0})", "TRIMN": "rtrim({0})",
    "STRIP": "trim({0})", "LEFT": "ltrim({0})", "RIGHT": "{0}", "REVERSE": "reverse({0})",
    "SUBSTR": {2: "substr({0}, CAST({1} AS INTEGER))", 3: "substr({0}, CAST({1} AS INTEGER), CAST({2} AS INTEGER))"},
    "SUBSTRN": {3: "substr({0}, CAST({1} AS INTEGER), CAST({2} AS INTEGER))"},
    "INDEX": {2: "CAST(instr({0}, {1}) AS DOUBLE)"}, "FIND": {2: "CAST(instr({0}, {1}) AS DOUBLE)"},
    "LENGTH": {1: "CAST(greatest(length(rtrim({0})), 1) AS DOUBLE)"},
    "LENGTHN": {1: "CAST(length(rtrim({0})) AS DOUBLE)"},
    "COMPRESS": {1: "replace({0}, ' ', '')"}, "COMPBL": {1: "regexp_replace({0}, ' +', ' ', 'g')"},
    "TRANWRD": {3: "replace({0}, {1}, {2})"}, "CATS": "concat({*trim})", "CAT": "concat({*})",
    "CATT": "concat({*rtrim})", "CATX": "concat_ws({0}, {*trim1})", "COALESCE": "coalesce({*})",
    "COALESCEC": "coalesce({*})", "ABS": "abs({0})", "SQRT": "sqrt({0})", "EXP": "exp({0})", "LOG": "ln({0})",
    "LOG10": "log10({0})", "LOG2": "log2({0})", "INT": "trunc({0})", "CEIL": "ceil({0})", "FLOOR": "floor({0})",
    "SIGN": "sign({0})", "MOD": {2: "fmod({0}, {1})"},
    "ROUND": {1: "round({0})", 2: "(round({0} / {1}) * {1})"},
    "COUNT": "count({*})", "FREQ": "count({*})", "N": {1: "count({0})"}, "AVG": "avg({0})",
    "STD": {1: "stddev_samp({0})"}, "VAR": {1: "var_samp({0})"}, "RANGE": {1: "(max({0}) - min({0}))"},
    "NMISS": {1: "(count(*) - count({0}))"},
    "TODAY": {0: f"CAST(current_date - {SAS_EPOCH} AS DOUBLE)"},
    "DATE": {0: f"CAST(current_date - {SAS_EPOCH} AS DOUBLE)"},
    "MDY": {3: f"CAST(make_date(CAST({{2}} AS INTEGER), CAST({{0}} AS INTEGER), CAST({{1}} AS INTEGER)) - {SAS_EPOCH} AS DOUBLE)"},
    "YEAR": {1: f"CAST(year({SAS_DATE.format('{0}')}) AS DOUBLE)"},
    "MONTH": {1: f"CAST(month({SAS_DATE.format('{0}')}) AS DOUBLE)"},
    "DAY": {1: f"CAST(day({SAS_DATE.format('{0}')}) AS DOUBLE)"},
    "QTR": {1: f"CAST(quarter({SAS_DATE.format('{0}')}) AS DOUBLE)"},
    "WEEKDAY": {1: f"CAST(dayofweek({SAS_DATE.format('{0}')}) + 1 AS DOUBLE)"},
    "DATEPART": {1: "floor({0} / 86400)"}, "TIMEPART": {1: "fmod({0}, 86400)"},
    "MONOTONIC": {0: "CAST(row_number() OVER () AS DOUBLE)"},
    "MISSING": {1: "({0} IS NULL)"},
}
AGGREGATE_OR_ROW = {"SUM", "MIN", "MAX", "MEAN"}     # one argument: the aggregate; several: SAS's row function
# The aggregates of FUNCTIONS as window functions ({over}: the window), for a query SAS remerges
WINDOWED: dict[str, dict[int, str]] = {
    "COUNT": {0: "count(*) {over}", 1: "count({0}) {over}"}, "FREQ": {0: "count(*) {over}", 1: "count({0}) {over}"},
    "N": {1: "count({0}) {over}"}, "AVG": {1: "avg({0}) {over}"}, "STD": {1: "stddev_samp({0}) {over}"},
    "VAR": {1: "var_samp({0}) {over}"}, "RANGE": {1: "(max({0}) {over} - min({0}) {over})"},
    "NMISS": {1: "(count(*) {over} - count({0}) {over})"},
}


@dataclass
class Translated:
    sql: str
    columns: dict[str, Any] = field(default_factory=dict)      # upper-case column name → ColumnInfo of a source


def at_top(toks: list, a: int, b: int):
    """(position, token) of the tokens of toks[a:b] outside parentheses (the parentheses not included)."""
    depth = 0
    for k in range(a, b):
        t = toks[k]
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif depth == 0:
            yield k, t


def split_top(toks: list, a: int, b: int, sep: str = ",") -> list[tuple[int, int]]:
    """The (start, end) ranges of toks[a:b] between the separators outside parentheses."""
    parts, start = [], a
    for k, t in at_top(toks, a, b):
        if t.kind == OP and t.text == sep:
            parts.append((start, k))
            start = k + 1
    parts.append((start, b))
    return parts


def find_top(toks: list, a: int, b: int, *words: str) -> int:
    """The position of the first of `words` outside parentheses in toks[a:b], or -1."""
    return next((k for k, t in at_top(toks, a, b) if t.kind == NAME and t.upper in words), -1)


class SqlText:
    """Translates one statement's tokens (from `start`) for `program`."""

    def __init__(self, program: Any, tokens: list, source: str = ""):
        self.program, self.toks, self.source = program, tokens, source
        self.columns: dict[str, Any] = {}          # every source column by upper-case name (and alias.name)
        self.aliases: dict[str, str] = {}
        # remerging (a query SAS answers by remerging summary statistics with the detail rows): the window
        # its aggregates are computed over, e.g. "OVER (PARTITION BY g)"; None: aggregates as written
        self.over: str | None = None
        self.carried: Any = None                   # the letters of the query's one table (sqlspecials.plan)
        self.carried_at = -1                       # … at this token

    def error(self, tok, message: str, expected: str = "") -> SasError:
        return SasError(message, tok.line, tok.col, tok.text, expected, self.source)

    # -- the walk ---------------------------------------------------------------------------------------------
    def translate(self, i: int, end: int | None = None) -> str:
        """Tokens i … end (exclusive) → DuckDB SQL."""
        toks = self.toks
        end = len(toks) if end is None else end
        self._prescan(i, end)
        out: list[str] = []
        from_depth: set[int] = set()
        depth = 0
        wrap_next = False
        while i < end:
            t = toks[i]
            up = t.upper if t.kind == NAME else t.text
            nxt = toks[i + 1] if i + 1 < end else None
            if t.kind == OP and t.text == "(" and (self.over or self.carried is not None) and nxt is not None \
                    and nxt.is_("SELECT"):
                k = self._close(i, end)            # a subquery's aggregates are its own, never remerged, and its
                over, self.over = self.over, None  # columns are its own tables' (no outer table's letters)
                carried, self.carried = self.carried, None
                try:
                    out.append("(" + self.translate_sub(i + 1, k) + ")")
                finally:
                    self.over, self.carried = over, carried
                i = k + 1
                continue
            if t.kind == OP and t.text == "(":
                depth += 1
                out.append("(")
                i += 1
                continue
            if t.kind == OP and t.text == ")":
                from_depth.discard(depth)
                depth -= 1
                out.append(")")
                i += 1
                continue
            if t.kind == NAME and up in ("FROM", "JOIN"):
                out.append(up)
                if up == "FROM":
                    from_depth.add(depth)
                i = self._table(i + 1, end, out)
                continue
            if t.kind == OP and t.text == "," and depth in from_depth:
                out.append(",")
                i = self._table(i + 1, end, out)
                continue
            if t.kind == NAME and up in CLAUSE_END and up not in ("JOIN", "ON", "LEFT", "RIGHT", "FULL", "INNER",
                                                                 "CROSS", "NATURAL", "OUTER"):
                from_depth.discard(depth)
            if t.kind == NAME and up == "CALCULATED":
                i += 1
                continue
            if t.kind == NAME and up == "CORR" or (t.kind == NAME and up == "CORRESPONDING"):
                out.append("BY NAME")
                i += 1
                continue
            if t.kind == NAME and up == "OUTER" and nxt is not None and nxt.is_("UNION"):
                out.append("UNION ALL")
                i += 3 if i + 2 < end and toks[i + 2].is_("ALL") else 2
                if i < end and toks[i].is_("CORR", "CORRESPONDING"):
                    out.append("BY NAME")
                    i += 1
                continue
            if t.kind == NAME and up == "IS" and nxt is not None:
                neg = nxt.is_("NOT")
                k = i + 1 + (1 if neg else 0)
                if k < end and toks[k].is_("MISSING", "NULL"):
                    out.append("IS NOT NULL" if neg else "IS NULL")
                    i = k + 1
                    continue
            if t.kind == NAME and up == "CONTAINS":
                if not out:
                    raise self.error(t, "CONTAINS needs a character expression before it")
                left = out.pop()
                out.append(f"contains({left}, ")
                i, piece = self._operand(i + 1, end)
                out.append(piece + ")")
                continue
            if up in COMPARE and (t.kind == OP or up.isalpha()):
                op = COMPARE[up]
                if nxt is not None and self._missing_at(i + 1) and self.carried is not None and out:
                    letter = toks[i + 2].text if (i + 2 < end and toks[i + 2].kind == NAME
                                                  and toks[i + 1].touches(toks[i + 2])) else None
                    test = self.carried.compare(out[-1].removeprefix("\x00num:"), op, letter)
                    if test is not None:
                        out[-1] = test
                        i += 3 if letter else 2
                        continue
                if nxt is not None and self._missing_at(i + 1):
                    out.append("IS NULL" if op == "=" else "IS NOT NULL" if op == "<>" else
                               "IS NOT NULL" if op in (">", ">=") else "IS NULL AND FALSE")
                    i += 2 if not (i + 2 < end and toks[i + 2].kind == NAME and toks[i + 1].touches(toks[i + 2])) else 3
                    continue
                if out and out[-1].startswith("\x00num:"):
                    out[-1] = f"coalesce({out[-1][5:]}, {NEG_INF})"
                out.append(op)
                wrap_next = True
                i += 1
                continue
            if t.kind == OP and t.text in ("^", "~", "¬"):
                out.append("NOT")
                i += 1
                continue
            if t.kind == OP and t.text == "!!":
                out.append("||")
                i += 1
                continue
            if t.kind == NAME and nxt is not None and nxt.kind == OP and nxt.text == "(" \
                    and (up in FUNCTIONS or up in AGGREGATE_OR_ROW or up in ("PUT", "INPUT")):
                i, piece = self._function(i, end)
                out.append(piece)
                wrap_next = False
                continue
            if t.kind == NAME and nxt is not None and nxt.kind == OP and nxt.text == "(" \
                    and up not in ("IN", "EXISTS", "ANY", "ALL", "SOME", "AND", "OR", "NOT", "AS", "SELECT", "VALUES",
                                   "USING", "OVER", "CASE", "WHEN", "THEN", "ELSE", "ON", "BY", "BETWEEN"):
                from statgrid.sas.functions import FUNCTIONS as SAS_FUNCTIONS
                from statgrid.sas.procs.sqludf import bridge_call, refusal
                if up in SAS_FUNCTIONS or refusal(up):    # no native translation: the DATA step's function, a UDF
                    i, piece = bridge_call(self, i, end)
                    if SAS_FUNCTIONS[up].returns == "num":    # a missing result compares as SAS's missing
                        piece = f"coalesce({piece}, {NEG_INF})" if wrap_next else "\x00num:" + piece
                    out.append(piece)
                    wrap_next = False
                    continue
            if t.kind in (NAME, NUM, STR) or (t.kind == OP and t.text == "."):
                i, piece, is_num_col = self._primary(i, end)
                if is_num_col:
                    piece = f"coalesce({piece}, {NEG_INF})" if wrap_next else "\x00num:" + piece
                wrap_next = False
                out.append(piece)
                continue
            out.append(t.text)
            wrap_next = False
            i += 1
        return " ".join(p[5:] if p.startswith("\x00num:") else p for p in out)

    # -- pieces -----------------------------------------------------------------------------------------------
    def _missing_at(self, i: int) -> bool:
        t = self.toks[i]
        return t.kind == OP and t.text == "." and not (i > 0 and self.toks[i - 1].touches(t)
                                                       and self.toks[i - 1].kind == NAME)

    def _primary(self, i: int, end: int) -> tuple[int, str, bool]:
        """A literal, a missing value, or a (qualified) name; True when it is a numeric source column."""
        toks = self.toks
        t = toks[i]
        if t.kind == OP and t.text == ".":
            if i + 1 < end and toks[i + 1].kind == NAME and t.touches(toks[i + 1]) and len(toks[i + 1].text) == 1:
                return i + 2, "NULL", False          # .A … .Z
            return i + 1, "NULL", False
        if t.kind == NUM:
            return i + 1, repr(float(t.value)) if "x" in t.text.lower() else t.text, False
        if t.kind == STR:
            if t.suffix in ("D", "T", "DT"):
                from statgrid.sas.parse.expr import ExprParser
                node = ExprParser(TokenCursor([t], self.source)).primary()
                return i + 1, repr(float(node.value)), False
            if t.suffix == "N":
                return i + 1, '"' + str(t.value).replace('"', '""') + '"', False
            if t.suffix == "X":
                return i + 1, "'" + bytes.fromhex(str(t.value)).decode("latin-1").replace("'", "''") + "'", False
            return i + 1, "'" + str(t.value).replace("'", "''") + "'", False
        name = t.text
        j = i + 1
        if j + 1 < end and toks[j].kind == OP and toks[j].text == "." and t.touches(toks[j]) \
                and toks[j + 1].kind in (NAME,) and toks[j].touches(toks[j + 1]):
            name = f"{t.text}.{toks[j + 1].text}"
            j += 2
        elif j + 1 < end and toks[j].kind == OP and toks[j].text == "." and t.touches(toks[j]) \
                and toks[j + 1].kind == OP and toks[j + 1].text == "*":
            return j + 2, f"{t.text}.*", False
        info = self.columns.get(name.upper())
        return j, name, info is not None and info.type == "num"

    def _operand(self, i: int, end: int) -> tuple[int, str]:
        if self.toks[i].kind == OP and self.toks[i].text == "(":
            k = self._close(i, end)
            return k + 1, "(" + self.translate_sub(i + 1, k) + ")"
        j, piece, _ = self._primary(i, end)
        return j, piece

    def translate_sub(self, i: int, end: int) -> str:
        sub = SqlText(self.program, self.toks, self.source)
        sub.columns, sub.aliases, sub.over = self.columns, self.aliases, self.over
        sub.carried, sub.carried_at = self.carried, self.carried_at
        return sub.translate(i, end)

    def _close(self, i: int, end: int) -> int:
        """toks[i] is '(': the index of its ')'."""
        depth = 0
        for k in range(i, end):
            t = self.toks[k]
            if t.kind == OP and t.text == "(":
                depth += 1
            elif t.kind == OP and t.text == ")":
                depth -= 1
                if depth == 0:
                    return k
        raise self.error(self.toks[i], "Syntax error: a '(' is not closed", ")")

    def _args(self, i: int, end: int) -> tuple[int, list[tuple[int, int]]]:
        """toks[i] is '(': the token ranges of the arguments, and the index after ')'."""
        k = self._close(i, end)
        args, depth, start = [], 0, i + 1
        for j in range(i + 1, k):
            t = self.toks[j]
            if t.kind == OP and t.text == "(":
                depth += 1
            elif t.kind == OP and t.text == ")":
                depth -= 1
            elif t.kind == OP and t.text == "," and depth == 0:
                args.append((start, j))
                start = j + 1
        if start < k or args:
            args.append((start, k))
        return k + 1, args

    def _function(self, i: int, end: int) -> tuple[int, str]:
        t = self.toks[i]
        name = t.upper
        after, ranges = self._args(i + 1, end)
        if name in ("PUT", "INPUT"):
            if len(ranges) != 2:
                raise self.error(t, f"{name} takes 2 arguments", "a value and a format")
            fmt = "".join(x.text for x in self.toks[ranges[1][0]:ranges[1][1]]).upper()
            value = self.translate_sub(*ranges[0])
            from statgrid.sas.procs.sqlfuncs import register
            register(self.program)
            if name == "PUT":
                src = self._source_type(ranges[0])
                fn = "sas_put_c" if src == "char" or fmt.startswith("$") else "sas_put_n"
                cast = "CAST({} AS VARCHAR)" if fn == "sas_put_c" else "CAST({} AS DOUBLE)"
                return after, f"{fn}({cast.format(value)}, '{fmt}')"
            fn = "sas_input_c" if fmt.startswith("$") else "sas_input_n"
            return after, f"{fn}(CAST({value} AS VARCHAR), '{fmt}')"
        args = [self.translate_sub(a, b) for a, b in ranges]
        over = f" {self.over}" if self.over else ""
        if name == "COUNT" and ranges and self.toks[ranges[0][0]].is_("DISTINCT"):
            return after, f"count({args[0]}){over}"
        if name in AGGREGATE_OR_ROW:
            if len(args) == 1:
                return after, {"SUM": "sum", "MIN": "min", "MAX": "max", "MEAN": "avg"}[name] + f"({args[0]}){over}"
            if name == "SUM":
                present = " AND ".join(f"({a}) IS NULL" for a in args)
                return after, f"(CASE WHEN {present} THEN NULL ELSE {' + '.join(f'coalesce({a}, 0)' for a in args)} END)"
            if name == "MEAN":
                n = " + ".join(f"CAST(({a}) IS NOT NULL AS INTEGER)" for a in args)
                s = " + ".join(f"coalesce({a}, 0)" for a in args)
                return after, f"(CASE WHEN {n} = 0 THEN NULL ELSE ({s}) / ({n}) END)"
            return after, ("least" if name == "MIN" else "greatest") + f"({', '.join(args)})"
        spec = FUNCTIONS[name]
        if self.over and name in WINDOWED:
            n_args = 0 if len(args) == 1 and self.toks[ranges[0][0]].text == "*" else len(args)
            spec = {k: v.replace("{over}", self.over) for k, v in WINDOWED[name].items()}
            args = [] if n_args == 0 else args
        if isinstance(spec, dict):
            tmpl = spec.get(len(args))
            if tmpl is None:
                raise self.error(t, f"The function {name} with {len(args)} argument(s) is not supported in PROC SQL "
                                 "by statgrid", f"{name} with " + " or ".join(str(k) for k in spec) + " arguments")
        else:
            tmpl = spec
        tmpl = (tmpl.replace("{*trim1}", ", ".join(f"trim({a})" for a in args[1:]))
                .replace("{*trim}", ", ".join(f"trim({a})" for a in args))
                .replace("{*rtrim}", ", ".join(f"rtrim({a})" for a in args))
                .replace("{*}", ", ".join(args)))
        return after, tmpl.format(*args)

    def _source_type(self, rng: tuple[int, int]) -> str:
        a, b = rng
        toks = self.toks[a:b]
        if toks and toks[0].kind == STR and not toks[0].suffix:
            return "char"
        name = "".join(x.text for x in toks).upper()
        info = self.columns.get(name)
        return info.type if info is not None else "num"

    # -- table references -------------------------------------------------------------------------------------
    def _table(self, i: int, end: int, out: list[str]) -> int:
        toks = self.toks
        if i >= end:
            return i
        t = toks[i]
        if t.kind == OP and t.text == "(":
            return i                                    # a subquery: the walk goes on inside it
        if t.kind != NAME:
            raise self.error(t, "Syntax error: expecting a table name", "lib.member or a subquery in parentheses")
        cur = TokenCursor(toks[:end], self.source)
        cur.i = i
        first = t.upper
        second = None
        if i + 2 < end and toks[i + 1].text == "." and t.touches(toks[i + 1]):
            second = toks[i + 2].upper
        if first in ("DICTIONARY", "SASHELP") and second in ("TABLES", "COLUMNS", "VTABLE", "VCOLUMN", "MEMBERS",
                                                            "VMEMBER"):
            from statgrid.sas.procs.sqlfuncs import dictionary_sql
            sql = dictionary_sql(self.program, "TABLES" if second in ("TABLES", "VTABLE", "MEMBERS", "VMEMBER")
                                 else "COLUMNS")
            j = i + 3
            alias = second.lower()
        else:
            from statgrid.sas.dataset import column_info, input_sql
            from statgrid.sas.parse.dsname import parse_dataset
            spec = parse_dataset(cur, self.program)
            j = cur.i
            cols = column_info(self.program, spec)
            sql = self.carried.sql if self.carried is not None and i == self.carried_at else \
                input_sql(self.program, spec, cols)
            alias = spec.member.lower()
            for c in cols:
                self.columns.setdefault(c.name.upper(), c)
        k = j
        if k < end and toks[k].is_("AS"):
            k += 1
        if k < end and toks[k].kind == NAME and toks[k].upper not in CLAUSE_END | {"GROUP", "SET", "VALUES"}:
            alias = toks[k].text
            k += 1
        # quoted: a member named like an SQL keyword (ALL, ORDER, GROUP, TABLE…) is a valid SAS name
        out.append(f"({sql}) AS {sql_ident(alias)}")
        return k

    def _prescan(self, i: int, end: int) -> None:
        """Learn the columns of every table the statement names (for the missing-value rule) before the walk:
        the names after FROM and JOIN, and after the commas of a FROM list."""
        from statgrid.sas.dataset import column_info
        from statgrid.sas.parse.dsname import parse_dataset

        toks = self.toks
        depth, in_from = 0, set()
        for k in range(i, end - 1):
            t = toks[k]
            if t.text == "(":
                depth += 1
                continue
            if t.text == ")":
                in_from.discard(depth)
                depth -= 1
                continue
            if t.kind == NAME and t.upper in CLAUSE_END - {"JOIN", "ON", "LEFT", "RIGHT", "FULL", "INNER", "CROSS",
                                                        "NATURAL", "OUTER"}:
                in_from.discard(depth)
            if t.is_("FROM"):
                in_from.add(depth)
            if not (t.is_("FROM", "JOIN") or (t.text == "," and depth in in_from)):
                continue
            nt = toks[k + 1]
            if nt.kind != NAME or nt.is_("SELECT", "DICTIONARY", "SASHELP"):
                continue
            try:
                cur = TokenCursor(toks[:end], self.source)
                cur.i = k + 1
                spec = parse_dataset(cur, self.program)
                cols = column_info(self.program, spec)
            except SasError:
                continue
            alias = spec.member
            j = cur.i
            if j < end and toks[j].is_("AS"):
                j += 1
            if j < end and toks[j].kind == NAME and toks[j].upper not in CLAUSE_END:
                alias = toks[j].text
            for c in cols:
                self.columns.setdefault(c.name.upper(), c)
                self.columns[f"{alias}.{c.name}".upper()] = c
