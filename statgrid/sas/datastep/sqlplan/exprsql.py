"""SAS expressions → DuckDB SQL, for the steps whose arithmetic is the same in both (sqlplan's rules).

Taken: numeric constants, + - * (IEEE double in both), / by a non-zero constant, unary minus, ABS,
comparisons, AND/OR/NOT, numeric IN lists of constants, character comparisons (both sides cut and
blank-trimmed as the Python engine compares them). Every operand must be a value that cannot be missing
(an input column checked to hold no missing value, or a variable assigned on every path from such
values): SAS's missing-value rules and NOTEs then never come into play.

Each numeric expression also gets a bound on its magnitude (from the inputs' largest |value|): the step is
taken only when no expression can reach 1e300, so no operation overflows to an infinity, and no NaN
(whose SAS NOTE and comparison order SQL does not share) can ever appear."""
from __future__ import annotations

import math
from dataclasses import dataclass

from statgrid.sas.parse import ast as A

BOUND_LIMIT = 1e300
_CMP = {"EQ": "=", "NE": "<>", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


class Refuse(Exception):
    """The SQL engine cannot take this step (the message says why); nothing has been done."""


@dataclass
class Val:
    """A variable's value at one point of the row: its SQL (a column or NULL), type, and — numeric — whether
    it is certainly not missing and a bound on |value|."""
    sql: str
    kind: str                 # 'num' | 'char'
    sure: bool
    bound: float = 0.0
    length: int = 8


def num_const(v: float) -> str:
    # a string cast: DuckDB reads the shortest repr back to the same double (a bare 0.1 would be DECIMAL)
    return f"CAST('{float(v)!r}' AS DOUBLE)"


def sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class ExprSql:
    def __init__(self, env: dict[str, Val], refs: set):
        self.env = env
        self.refs = refs          # the SQL columns an expression read (for the caller's layering)

    def _var(self, n) -> Val:
        v = self.env.get(n.name)
        if v is None:
            raise Refuse(f"variable {n.text} is not a plain variable of the step")
        if v.kind == "num" and not v.sure:
            raise Refuse(f"variable {n.text} may be missing where it is read")
        self.refs.add(v.sql)
        return v

    # -- numeric ------------------------------------------------------------------------------------------------
    def num(self, n) -> tuple[str, float]:
        """(SQL of a DOUBLE that is never NULL, bound on its magnitude)."""
        sql, bound = self._num(n)
        if not bound < BOUND_LIMIT:
            raise Refuse(f"the value at line {n.line} column {n.col} could overflow")
        return sql, bound

    def _num(self, n) -> tuple[str, float]:
        if isinstance(n, A.Num):
            if n.value != n.value or math.isinf(n.value):
                raise Refuse("a missing-value constant")
            return num_const(n.value), abs(float(n.value))
        if isinstance(n, A.Var):
            v = self._var(n)
            if v.kind != "num":
                raise Refuse(f"character variable {n.text} in a numeric expression (a conversion)")
            return v.sql, v.bound
        if isinstance(n, A.Unary):
            if n.op == "NOT":
                return f"CAST({self.cond(n)} AS DOUBLE)", 1.0
            s, b = self.num(n.operand)
            return (s, b) if n.op == "+" else (f"(-{s})", b)
        if isinstance(n, A.Binary):
            if n.op in ("AND", "OR"):
                return f"CAST({self.cond(n)} AS DOUBLE)", 1.0
            if n.op in ("+", "-", "*"):
                (a, ba), (b, bb) = self.num(n.left), self.num(n.right)
                return f"({a} {n.op} {b})", (ba * bb if n.op == "*" else ba + bb)
            if n.op == "/":
                r = n.right
                if isinstance(r, A.Unary) and r.op in ("-", "+") and isinstance(r.operand, A.Num):
                    r = A.Num(r.line, r.col, -r.operand.value if r.op == "-" else r.operand.value)
                if not isinstance(r, A.Num) or r.value != r.value or r.value == 0 or math.isinf(r.value):
                    raise Refuse("a division by something other than a non-zero constant")
                a, ba = self.num(n.left)
                return f"({a} / {num_const(r.value)})", ba / abs(r.value)
            raise Refuse(f"the operator {n.op}")
        if isinstance(n, (A.Compare, A.In)):
            return f"CAST({self.cond(n)} AS DOUBLE)", 1.0
        if isinstance(n, A.Call) and n.name == "ABS" and len(n.args) == 1 and not isinstance(n.args[0], A.OfList):
            s, b = self.num(n.args[0])
            return f"abs({s})", b
        raise Refuse(f"{type(n).__name__} {getattr(n, 'name', '')} in an expression".replace("  ", " "))

    # -- character ----------------------------------------------------------------------------------------------
    def char(self, n) -> str:
        """SQL of a character value with trailing blanks removed (as the Python engine compares them)."""
        if isinstance(n, A.Str) and not n.is_format:
            return sql_str(n.value.rstrip(" "))
        if isinstance(n, A.Var):
            v = self._var(n)
            if v.kind == "char":
                return v.sql
        raise Refuse("a character expression other than a variable or a constant")

    def _kind(self, n) -> str:
        if isinstance(n, A.Str):
            return "char"
        if isinstance(n, A.Var) and n.name in self.env:
            return self.env[n.name].kind
        return "num"

    # -- conditions ---------------------------------------------------------------------------------------------
    def cond(self, n) -> str:
        """SQL of a BOOLEAN that is never NULL: SAS's truth of the expression."""
        if isinstance(n, A.Compare):
            if n.colon:
                raise Refuse("the =: comparison")
            kl, kr = self._kind(n.left), self._kind(n.right)
            if kl == "char" and kr == "char":
                return f"({self.char(n.left)} {_CMP[n.op]} {self.char(n.right)})"
            if kl == "char" or kr == "char":
                raise Refuse("a comparison of a character and a numeric value (a conversion)")
            (a, _), (b, _) = self.num(n.left), self.num(n.right)
            return f"({a} {_CMP[n.op]} {b})"
        if isinstance(n, A.Binary) and n.op in ("AND", "OR"):
            return f"({self.cond(n.left)} {n.op} {self.cond(n.right)})"
        if isinstance(n, A.Unary) and n.op == "NOT":
            return f"(NOT {self.cond(n.operand)})"
        if isinstance(n, A.In):
            return self._in(n)
        s, _ = self.num(n)
        return f"({s} <> {num_const(0.0)})"

    def _in(self, n) -> str:
        if n.array or self._kind(n.operand) != "num":
            raise Refuse("an IN test on an array or a character value")
        s, _ = self.num(n.operand)
        parts = []
        for item in n.items:
            if isinstance(item, tuple):
                lo, hi = item[1], item[2]
                if not (isinstance(lo, A.Num) and isinstance(hi, A.Num)) or lo.value != lo.value or hi.value != hi.value:
                    raise Refuse("an IN range that is not two numbers")
                parts.append(f"({s} BETWEEN {num_const(lo.value)} AND {num_const(hi.value)})")
            elif isinstance(item, A.Num) and item.value == item.value:
                parts.append(f"({s} = {num_const(item.value)})")
            else:
                raise Refuse("an IN list item that is not a number")
        test = "(" + " OR ".join(parts or ["FALSE"]) + ")"
        return f"(NOT {test})" if n.negated else test
