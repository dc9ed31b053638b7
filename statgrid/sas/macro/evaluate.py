"""%EVAL (integer arithmetic) and %SYSEVALF (floating point) over resolved macro text — also the
conditions of %IF, %DO %WHILE/%UNTIL and the bounds of %DO.

By Macro Language Reference, "Macro Expressions" and the %EVAL/%SYSEVALF entries:
- operands are text; %EVAL reads an operand as a number only when it is an integer (decimal, or
  hexadecimal such as 0FFx), %SYSEVALF also when it has a period or an exponent (`.` is missing);
- operators by priority: ** (1, right to left), prefix + - (2), ^ ~ ¬ NOT (3), * / (4), + - (5),
  < <= = # ^= > >= and LT LE EQ IN NE GT GE (6), & AND (7), | OR (8); the mnemonics are operators only
  as whole words, and # / IN only under MINOPERATOR (its list is split at MINDELIMITER, a blank by default);
- a comparison of two numbers is numeric, else the operands are compared as text;
- any other operator given a character operand is the ERROR "A character operand was found in the
  %EVAL function or %IF condition where a numeric operand is required. The condition was: …";
- integer division truncates; division by zero is an ERROR.
Masked (macro-quoted) characters are operand text, never operators. Standard library only.
"""
from __future__ import annotations

import math
import re

from statgrid.sas.macro.quoting import unquote

_OPS = ("**", "<=", ">=", "^=", "~=", "¬=", "+", "-", "*", "/", "<", ">", "=", "#", "^", "~", "¬",
        "&", "|", "(", ")")
_WORD_OPS = {"AND": "&", "OR": "|", "NOT": "^", "EQ": "=", "NE": "^=", "LT": "<", "LE": "<=",
             "GT": ">", "GE": ">=", "IN": "#"}
_CANON = {"~=": "^=", "¬=": "^=", "~": "^", "¬": "^"}
_INT_RE = re.compile(r"^\d+$")
_HEX_RE = re.compile(r"^\d[0-9A-Fa-f]*[xX]$")
_FLOAT_RE = re.compile(r"^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MANTISSA_RE = re.compile(r"(?:^|[^A-Za-z0-9_.])(?:\d+\.?\d*|\.\d+)[eE]$")   # '1e' before an exponent's sign
_COMPARE = ("<", "<=", "=", "^=", ">", ">=", "#")
MAX_INT = 2**63 - 1


class EvalError(Exception):
    """A fault in an expression: the message is SAS's ERROR text (without 'ERROR: ')."""


def char_operand_error(expr: str, fn: str = "%EVAL function or %IF condition") -> EvalError:
    return EvalError(f"A character operand was found in the {fn} where a numeric operand is required. "
                     f"The condition was: {unquote(expr).strip()}")


class _Expr:
    """One evaluation: tokens of the text, a recursive-descent parser by SAS's priorities."""

    def __init__(self, text: str, floating: bool, minoperator: bool, mindelimiter: str):
        self.text, self.floating = text, floating
        self.minoperator, self.delim = minoperator, mindelimiter or " "
        self.fn = "%SYSEVALF function" if floating else "%EVAL function or %IF condition"
        self.toks = self._tokens(text)
        self.i = 0

    # ---------------------------------------------------------------- tokens
    def _tokens(self, text: str) -> list[tuple[str, str]]:
        """('op', canonical operator) and ('val', operand text) items; operand text between operators
        is one operand (blanks inside kept, outer blanks dropped)."""
        out: list[tuple[str, str]] = []
        buf: list[str] = []

        def flush() -> None:
            t = "".join(buf).strip(" \t\r\n")
            if t:
                out.append(("val", t))
            buf.clear()

        i, n = 0, len(text)
        while i < n:
            c = text[i]
            if c.isascii() and (c.isalpha() or c == "_"):
                m = _WORD_RE.match(text, i)
                w = m.group().upper()
                prev = text[i - 1] if i else " "
                nxt = text[m.end()] if m.end() < n else " "
                alone = not (prev.isalnum() or prev == "_") and not (
                    nxt.isalnum() or nxt == "_")
                if w in _WORD_OPS and alone and (w != "IN" or self.minoperator):
                    flush()
                    out.append(("op", _WORD_OPS[w]))
                else:
                    buf.append(m.group())
                i = m.end()
                continue
            op = next((o for o in _OPS if text.startswith(o, i)), None)
            if op == "#" and not self.minoperator:
                op = None
            if op is not None and self.floating and op in "+-" and buf and _MANTISSA_RE.search("".join(buf).strip()):
                op = None                   # the sign of an exponent (1e-5) in %SYSEVALF
            if op is not None:
                flush()
                out.append(("op", _CANON.get(op, op)))
                i += len(op)
                continue
            buf.append(c)
            i += 1
        flush()
        return out

    # ---------------------------------------------------------------- parser
    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def at_op(self, *ops: str) -> str | None:
        t = self.peek()
        if t and t[0] == "op" and t[1] in ops:
            self.i += 1
            return t[1]
        return None

    def fail(self) -> EvalError:
        return EvalError(f"Required operator not found in expression: {unquote(self.text).strip()}")

    def run(self) -> object:
        if not self.toks:
            return ""
        v = self.p_or()
        if self.i < len(self.toks):
            t = self.toks[self.i]
            if t == ("op", ")"):
                raise EvalError(f"Unbalanced parentheses in expression: {unquote(self.text).strip()}")
            raise self.fail()
        return v

    def _left_chain(self, ops: tuple[str, ...], operand, combine) -> object:
        """`operand (op operand)…` evaluated left to right, op one of `ops`: combine(op, left, right)."""
        v = operand()
        while (op := self.at_op(*ops)) is not None:
            v = combine(op, v, operand())
        return v

    def logical(self, b: bool) -> object:
        """A true/false result: 1 or 0, as a float in %SYSEVALF."""
        return float(b) if self.floating else int(b)

    def p_or(self) -> object:
        return self._left_chain(("|",), self.p_and, lambda op, v, r: self.logical(self.truth(v) or self.truth(r)))

    def p_and(self) -> object:
        return self._left_chain(("&",), self.p_cmp, lambda op, v, r: self.logical(self.truth(v) and self.truth(r)))

    def _empty_operand(self) -> bool:
        """An operand left out beside a comparison is null text (`%if &x = %then`, `%scan(…) ne`)."""
        t = self.peek()
        return t is None or (t[0] == "op" and t[1] in (*_COMPARE, ")", "&", "|"))

    def p_cmp(self) -> object:
        v = "" if self._empty_operand() and self.peek() is not None and self.peek()[1] in _COMPARE else self.p_add()
        while (op := self.at_op(*_COMPARE)) is not None:
            if op == "#":
                v = self.in_list(v)
                continue
            r = "" if self._empty_operand() else self.p_add()
            v = self.compare(op, v, r)
        return v

    def in_list(self, left: object) -> object:
        t = self.peek()
        if not t or t[0] != "val":
            raise EvalError(f"Operand missing for IN operator in argument to {self.fn.split(' or')[0]}.")
        self.i += 1
        items = [x for x in unquote(t[1]).split(self.delim) if x != ""] if self.delim != " " else unquote(t[1]).split()
        return self.logical(any(self.compare("=", left, self.operand(x)) for x in items))

    def p_add(self) -> object:
        return self._left_chain(("+", "-"), self.p_mul, self.arith)

    def p_mul(self) -> object:
        return self._left_chain(("*", "/"), self.p_not, self.arith)

    def p_not(self) -> object:
        if self.at_op("^"):
            return self.logical(not self.truth(self.p_not()))
        return self.p_sign()

    def p_sign(self) -> object:
        op = self.at_op("+", "-")
        if op is not None:
            v = self.num(self.p_sign())
            return -v if op == "-" else v
        return self.p_pow()

    def p_pow(self) -> object:
        v = self.p_atom()
        if self.at_op("**"):
            r = self.p_sign()             # right to left: 2**3**2 = 2**9
            return self.arith("**", v, r)
        return v

    def p_atom(self) -> object:
        if self.at_op("("):
            v = self.p_or() if self.peek() != ("op", ")") else ""
            if not self.at_op(")"):
                raise EvalError(f"Unbalanced parentheses in expression: {unquote(self.text).strip()}")
            return v
        t = self.peek()
        if t is None or t[0] != "val":
            raise EvalError(f"Required operand not found in expression: {unquote(self.text).strip()}")
        self.i += 1
        return self.operand(t[1])

    # ---------------------------------------------------------------- values
    def operand(self, text: str) -> object:
        """A number when the text is one for this evaluator, else the text (a character operand)."""
        t = unquote(text).strip()
        if _INT_RE.match(t):
            v = int(t)
            return float(v) if self.floating else v
        if _HEX_RE.match(t):
            v = int(t[:-1], 16)
            return float(v) if self.floating else v
        if self.floating:
            if t == ".":
                return math.nan
            if _FLOAT_RE.match(t):
                return float(t)
        return text

    def num(self, v: object) -> object:
        if isinstance(v, str):
            raise char_operand_error(self.text, self.fn)
        return v

    def truth(self, v: object) -> bool:
        v = self.num(v)
        return not (v == 0 or (isinstance(v, float) and math.isnan(v)))

    def as_text(self, v: object) -> str:
        if isinstance(v, str):
            return unquote(v).strip()
        return format_number(v) if isinstance(v, float) else str(v)

    def compare(self, op: str, a: object, b: object) -> object:
        if isinstance(a, str) or isinstance(b, str):
            x, y = self.as_text(a), self.as_text(b)
        else:
            x, y = a, b
            if isinstance(x, float) and math.isnan(x):
                x = -math.inf                 # missing sorts below every number (SAS's order)
            if isinstance(y, float) and math.isnan(y):
                y = -math.inf
        r = {"<": x < y, "<=": x <= y, "=": x == y, "^=": x != y, ">": x > y, ">=": x >= y}[op]
        return self.logical(r)

    def arith(self, op: str, a: object, b: object) -> object:
        x, y = self.num(a), self.num(b)
        if self.floating:
            if math.isnan(x) or math.isnan(y):
                return math.nan
            try:
                if op == "+":
                    return x + y
                if op == "-":
                    return x - y
                if op == "*":
                    return x * y
                if op == "/":
                    return math.nan if y == 0 else x / y
                return float(x ** y)
            except (OverflowError, ZeroDivisionError, ValueError):
                return math.nan
        if op == "/":
            if y == 0:
                raise EvalError("Division by zero in %EVAL is invalid.")
            q = abs(x) // abs(y)
            r = q if (x >= 0) == (y >= 0) else -q
        elif op == "+":
            r = x + y
        elif op == "-":
            r = x - y
        elif op == "*":
            r = x * y
        else:
            if y < 0:
                r = 0 if abs(x) != 1 else (x if y % 2 else 1)
            else:
                r = x ** y if y < 4096 else None
        if r is None or not -MAX_INT - 1 <= r <= MAX_INT:
            raise EvalError(f"Integer overflow in %EVAL: {unquote(self.text).strip()}")
        return r


def format_number(v: float) -> str:
    """%SYSEVALF's text of a number: up to 15 significant digits (SAS formats it with BEST32.), an
    integer without a decimal point, '.' for missing."""
    if math.isnan(v):
        return "."
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    t = f"{v:.15g}"
    if "e" in t:
        mant, exp = t.split("e")
        t = f"{mant}E{int(exp)}"
    return t


def eval_int(text: str, minoperator: bool = False, mindelimiter: str = " ") -> str:
    """%EVAL(text): the result as text ('' for empty text). Raises EvalError."""
    v = _Expr(text, False, minoperator, mindelimiter).run()
    if isinstance(v, str):
        return unquote(v).strip()
    return str(v)


def eval_condition(text: str, minoperator: bool = False, mindelimiter: str = " ") -> bool:
    """A %IF / %DO %WHILE / %UNTIL condition: true when %EVAL gives a number other than 0. A text
    result (no operator at all) is the character-operand ERROR, as SAS."""
    v = _Expr(text, False, minoperator, mindelimiter).run()
    if isinstance(v, str):
        raise char_operand_error(text)
    return v != 0


def eval_float(text: str, conversion: str = "", minoperator: bool = False, mindelimiter: str = " ") -> str:
    """%SYSEVALF(text, conversion): BOOLEAN, CEIL, FLOOR, INTEGER or '' (the number). Raises EvalError."""
    ex = _Expr(text, True, minoperator, mindelimiter)
    v = ex.run()
    if isinstance(v, str):
        raise char_operand_error(text, "%SYSEVALF function")
    conv = conversion.strip().upper()
    if conv == "BOOLEAN":
        return "0" if (math.isnan(v) or v == 0) else "1"
    if conv in ("CEIL", "FLOOR", "INTEGER"):
        if math.isnan(v):
            return "."
        near = round(v)
        if abs(v - near) < 1e-12:
            return str(int(near))
        return str(int(math.ceil(v) if conv == "CEIL" else math.floor(v) if conv == "FLOOR" else math.trunc(v)))
    if conv:
        raise EvalError(f"%SYSEVALF conversion type {conv} is not valid; expecting BOOLEAN, CEIL, FLOOR or INTEGER.")
    return format_number(v)
