"""The SAS expression parser: tokens (statgrid.sas.lexer) → the tree of parse/ast.py.

Precedence follows SAS 9.4 Language Reference: Concepts, "Order of Evaluation in Compound Expressions":
  Group I   (right to left) `**`, prefix `+` `-`, `NOT` `^` `~` `¬`, `><` (MIN) `<>` (MAX)
  Group II  `*` `/`
  Group III infix `+` `-`
  Group IV  `||` `!!`
  Group V   comparisons `=` `^=` `<` `<=` `>` `>=`, mnemonics EQ NE LT LE GT GE, `IN`, the colon modifier
            (`=:`); `a < x < b` means `a < x and x < b`
  Group VI  `&` AND
  Group VII `|` `!` OR
`-x**2` is `-(x**2)`. In a WHERE expression (`where=True`) the WHERE operators are added at group V —
BETWEEN … AND, CONTAINS / `?`, LIKE, IS [NOT] MISSING / NULL, `=*` (sounds like), NOT before any of
them — and `<>` means "not equal" (SAS: "<> is interpreted as not equal to" in WHERE); the mnemonics
MIN and MAX stand for the operators.
"""
from __future__ import annotations

import re

from statgrid.sas.cursor import TokenCursor
from statgrid.sas.lexer import NAME, NUM, OP, STR
from statgrid.sas.parse import ast as A
from statgrid.sas.values import MISSING, special_missing

_CMP = {"=": "EQ", "EQ": "EQ", "^=": "NE", "~=": "NE", "¬=": "NE", "NE": "NE", "<": "LT", "LT": "LT",
        "<=": "LE", "LE": "LE", ">": "GT", "GT": "GT", ">=": "GE", "GE": "GE"}
_NOT = ("NOT", "^", "~", "¬")
_MONTHS = {m: i + 1 for i, m in enumerate("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split())}
_DATE_RE = re.compile(r"\s*(\d{1,2})([A-Za-z]{3})(\d{2}|\d{4,5})\s*$")
_TIME_RE = re.compile(r"\s*(\d{1,2}):(\d{1,2})(?::(\d{1,2}(?:\.\d*)?))?\s*(AM|PM)?\s*$", re.I)
# Words that end an expression where a statement goes on (IF … THEN, DO i = 1 TO n BY 2 WHILE (…)).
FORMAT_ARG = frozenset({"PUT", "INPUT"})
STOP_WORDS = frozenset({"THEN", "TO", "BY", "WHILE", "UNTIL", "ELSE", "OF"})


def parse_date_literal(text: str, year_cutoff: int = 1926) -> float | None:
    """'01jan2020'd → days since 1960-01-01 (None if not a date). Two-digit years follow YEARCUTOFF."""
    m = _DATE_RE.match(text)
    if not m or m.group(2).upper() not in _MONTHS:
        return None
    year = int(m.group(3))
    if len(m.group(3)) == 2:
        century = year_cutoff // 100 * 100
        year += century if century + year >= year_cutoff else century + 100
    from statgrid.sas.formats.calendar import day_number      # SAS's calendar (1582–20000; no 29FEB4000)
    try:
        return float(day_number(year, _MONTHS[m.group(2).upper()], int(m.group(1))))
    except ValueError:
        return None


def parse_time_literal(text: str) -> float | None:
    m = _TIME_RE.match(text)
    if not m:
        return None
    h, mi, s = int(m.group(1)), int(m.group(2)), float(m.group(3) or 0)
    if m.group(4):
        h = h % 12 + (12 if m.group(4).upper() == "PM" else 0)
    return h * 3600.0 + mi * 60.0 + s


def parse_datetime_literal(text: str, year_cutoff: int = 1926) -> float | None:
    date, sep, rest = text.strip().partition(":")
    d = parse_date_literal(date, year_cutoff)
    if d is None:
        return None
    t = parse_time_literal(rest) if sep else 0.0
    return None if t is None else d * 86400.0 + t


class ExprParser:
    """Parses one expression from a TokenCursor, leaving the cursor after it."""

    def __init__(self, cur: TokenCursor, where: bool = False, stop: frozenset[str] = STOP_WORDS):
        self.cur, self.where, self.stop = cur, where, stop

    # -- precedence levels -----------------------------------------------------------------------------
    def parse(self) -> A.Node:
        return self.or_()

    def _left_chain(self, ops: tuple[str, ...], operand, name: str = "") -> A.Node:
        """`operand (op operand)…` grouped left to right, op one of `ops`: in the tree as `name` (as
        written when '')."""
        left = operand()
        while self.cur.at(*ops):
            t = self.cur.next()
            left = A.Binary(t.line, t.col, name or t.text, left, operand())
        return left

    def or_(self) -> A.Node:
        return self._left_chain(("OR", "|", "!"), self.and_, "OR")

    def and_(self) -> A.Node:
        return self._left_chain(("AND", "&"), self.not_, "AND")

    def not_(self) -> A.Node:
        # NOT binds in group I in SAS; in practice `not a = b` means not (a = b) because the operand of a
        # prefix NOT is the whole comparison (SAS evaluates `not x = 1` as `not (x = 1)`).
        if self.cur.at(*_NOT) and not self.cur.peek(1).is_("="):
            t = self.cur.next()
            return A.Unary(t.line, t.col, "NOT", self.not_())
        return self.compare()

    def compare(self) -> A.Node:
        left = self.concat()
        result = None
        while True:
            c = self.cur
            t = c.peek()
            negated = False
            if self.where and t.is_(*_NOT) and c.peek(1).is_("IN", "BETWEEN", "LIKE", "CONTAINS", "?"):
                c.next()
                negated, t = True, c.peek()
            if t.is_("IN") or (t.is_(*_NOT) and c.peek(1).is_("IN")):
                if t.is_(*_NOT):
                    c.next()
                    negated = True
                c.next()
                if c.at(":"):                       # `name in: ('Ja', 'Jo')`: each compared as =: does
                    c.next()
                    node = self._in_colon(left, t, negated)
                else:
                    node = self._in(left, t, negated)
            elif self.where and t.is_("BETWEEN"):
                c.next()
                low = self.concat()
                c.expect("AND", expected="AND in BETWEEN … AND …")
                node = A.Between(t.line, t.col, left, low, self.concat(), negated)
            elif self.where and t.is_("CONTAINS", "?"):
                c.next()
                node = A.Contains(t.line, t.col, left, self.concat(), negated)
            elif self.where and t.is_("LIKE"):
                c.next()
                node = A.Like(t.line, t.col, left, self.concat(), negated)
            elif self.where and t.is_("IS"):
                c.next()
                neg = bool(c.accept(*_NOT))
                c.expect("MISSING", "NULL", expected="MISSING or NULL after IS")
                node = A.IsMissing(t.line, t.col, left, neg)
            elif self.where and t.is_("=") and c.peek(1).is_("*") and t.touches(c.peek(1)):
                c.next(), c.next()
                node = A.SoundsLike(t.line, t.col, left, self.concat())
            elif t.upper in _CMP and t.kind in (OP, NAME) and not (self.where and t.is_("<>")):
                c.next()
                colon = bool(c.peek().is_(":") and c.accept(":"))
                node = A.Compare(t.line, t.col, _CMP[t.upper], left, self.concat(), colon)
            elif self.where and t.is_("<>"):
                c.next()
                node = A.Compare(t.line, t.col, "NE", left, self.concat())
            else:
                return left if result is None else result
            # a chain `1 < x < 5`: SAS reads it as `1 < x and x < 5`
            right = getattr(node, "right", None)
            result = node if result is None else A.Binary(t.line, t.col, "AND", result, node)
            if right is None or not isinstance(node, A.Compare):
                return result
            left = right

    def _in(self, left: A.Node, t, negated: bool) -> A.Node:
        c = self.cur
        if c.peek().kind == NAME and not c.peek(1).is_("("):
            return A.In(t.line, t.col, left, [], negated, c.next().text.upper())     # `x in arr`
        c.expect("(", expected="( after IN")
        items: list = []
        while not c.accept(")"):
            if c.at_end():
                raise c.error("Syntax error in the IN list", ")")
            if c.accept(","):
                continue
            item = self._in_item()
            if c.at(":"):
                c.next()
                items.append(("range", item, self._in_item()))
            else:
                items.append(item)
        return A.In(t.line, t.col, left, items, negated)

    def _in_colon(self, left: A.Node, t, negated: bool) -> A.Node:
        """IN: (SAS 9.4 Language Reference: Concepts, "The IN Operator": the colon modifier compares each
        value cut to the shorter length): `x in: (a, b)` is `x =: a or x =: b`."""
        node = self._in(left, t, False)
        if node.array or not node.items or any(isinstance(i, tuple) for i in node.items):
            raise self.cur.error("Syntax error in IN:", "a list of character constants in parentheses")
        out: A.Node | None = None
        for item in node.items:
            cmp = A.Compare(t.line, t.col, "EQ", left, item, True)
            out = cmp if out is None else A.Binary(t.line, t.col, "OR", out, cmp)
        return A.Unary(t.line, t.col, "NOT", out) if negated else out

    def _in_item(self) -> A.Node:
        c = self.cur
        t = c.peek()
        if t.is_("-", "+"):
            c.next()
            n = c.expect_kind(NUM, "a number")
            return A.Num(t.line, t.col, -n.value if t.text == "-" else n.value, t.text + n.text)
        return self.primary()

    def concat(self) -> A.Node:
        left = self.additive()
        while self.cur.at("||", "!!") or (self.cur.at("|", "!") and self.cur.peek(1).is_(self.cur.peek().text)
                                          and self.cur.peek().touches(self.cur.peek(1))):
            t = self.cur.next()
            if t.text in ("|", "!"):
                self.cur.next()
            left = A.Binary(t.line, t.col, "||", left, self.additive())
        return left

    def additive(self) -> A.Node:
        return self._left_chain(("+", "-"), self.multiplicative)

    def multiplicative(self) -> A.Node:
        return self._left_chain(("*", "/"), self.prefix)

    def prefix(self) -> A.Node:
        c = self.cur
        t = c.peek()
        if t.is_("-", "+"):
            c.next()
            operand = self.prefix()
            if isinstance(operand, A.Num) and t.text == "-" and operand.value == operand.value:
                return A.Num(t.line, t.col, -operand.value, "-" + operand.text)
            return A.Unary(t.line, t.col, t.text, operand)
        if t.is_(*_NOT) and not c.peek(1).is_("="):
            c.next()
            return A.Unary(t.line, t.col, "NOT", self.prefix())
        return self.power()

    def power(self) -> A.Node:
        left = self.primary()
        c = self.cur
        t = c.peek()
        if t.is_("**"):
            c.next()
            return A.Binary(t.line, t.col, "**", left, self.prefix())          # right to left
        if t.is_("><") or (t.is_("<>") and not self.where) or (self.where and t.is_("MIN", "MAX")):
            c.next()
            op = "MIN" if t.text in ("><",) or t.upper == "MIN" else "MAX"
            return A.Binary(t.line, t.col, op, left, self.prefix())
        return left

    # -- operands --------------------------------------------------------------------------------------
    def primary(self) -> A.Node:
        c = self.cur
        t = c.peek()
        if t.kind == NUM:
            c.next()
            return A.Num(t.line, t.col, t.value, t.text)
        if t.kind == STR:
            c.next()
            return self._string(t)
        if t.is_("("):
            c.next()
            inner = self.parse()
            c.expect(")", expected=")")
            return inner
        if t.is_("."):
            c.next()
            nxt = c.peek()
            if nxt.kind == NAME and t.touches(nxt) and (len(nxt.text) == 1 and (nxt.text.isalpha() or nxt.text == "_")):
                c.next()
                return A.Num(t.line, t.col, special_missing(nxt.text), "." + nxt.text.upper())
            return A.Num(t.line, t.col, MISSING, ".")
        if t.kind == NAME:
            return self._name()
        raise c.error("Syntax error", "a variable, constant, function or (")

    def _string(self, t) -> A.Node:
        v = t.value
        if t.suffix in ("D", "T", "DT"):
            fn = {"D": parse_date_literal, "T": parse_time_literal, "DT": parse_datetime_literal}[t.suffix]
            num = fn(v)
            if num is None:
                kind = {"D": "date", "T": "time", "DT": "datetime"}[t.suffix]
                raise self.cur.error(f"Invalid {kind} constant {t.text}", "e.g. '01JAN2020'd, '10:30't, "
                                     "'01JAN2020:10:30:00'dt", t)
            return A.Num(t.line, t.col, num, t.text)
        if t.suffix == "N":
            return A.Var(t.line, t.col, v.upper(), v)
        return A.Str(t.line, t.col, v)

    def _name(self) -> A.Node:
        c = self.cur
        t = c.next()
        name, text = t.upper, t.text
        # first.x / last.x / obj.method(
        if c.peek().is_(".") and t.touches(c.peek()) and c.peek(1).kind == NAME and c.peek().touches(c.peek(1)):
            c.next()
            m = c.next()
            if c.at("("):
                return A.Method(t.line, t.col, name, m.upper, self._method_args())
            return A.Var(t.line, t.col, f"{name}.{m.upper}", f"{text}.{m.text}")
        if c.at("{", "["):
            close = "}" if c.next().text == "{" else "]"
            subs = self._subscripts(close)
            return A.Index(t.line, t.col, name, subs)
        if c.at("("):
            c.next()
            return A.Call(t.line, t.col, name, self._args(name))
        return A.Var(t.line, t.col, name, text)

    def _subscripts(self, close: str) -> list:
        c = self.cur
        if c.at("*"):
            c.next()
            c.expect(close, expected=close)
            return ["*"]
        subs = [self.parse()]
        while c.accept(","):
            subs.append(self.parse())
        c.expect(close, expected=close)
        return subs

    def _args(self, name: str = "") -> list:
        c = self.cur
        args: list = []
        if c.accept(")"):
            return args
        while True:
            if c.at(",") and args:
                # an omitted argument (`compress(s, , 'kd')`): an empty character constant, which the
                # functions that allow omission read as "not given"
                t = c.peek()
                args.append(A.Str(t.line, t.col, ""))
                c.next()
                continue
            quiet = ""
            while len(args) == 1 and name == "INPUT" and c.at("?") and len(quiet) < 2:
                quiet += c.next().text              # INPUT(s, ?? 8.): the ? and ?? modifiers, kept before the
            if len(args) == 1 and name in FORMAT_ARG and c.at_format():   # informat's name
                # PUT(x, date9.), INPUT(s, 8.): the second argument is a format name, not an expression
                t = c.peek()
                args.append(A.Str(t.line, t.col, quiet + c.format_name()))
                args[-1].is_format = True
            elif c.at("OF") and c.peek(1).kind == NAME:
                t = c.next()
                args.append(A.OfList(t.line, t.col, parse_var_list(c, stop=(")", ","))))
            else:
                args.append(self.parse())
            if c.accept(")"):
                return args
            c.expect(",", ")", expected=", or )")

    def _method_args(self) -> list:
        c = self.cur
        c.expect("(")
        args: list = []
        if c.accept(")"):
            return args
        while True:
            tag = ""
            if c.peek().kind == NAME and c.peek(1).is_(":"):
                tag = c.next().upper
                c.next()
            args.append((tag, self.parse()))
            if c.accept(")"):
                return args
            c.expect(",", expected=", or )")


def parse_var_list(c: TokenCursor, stop=(";",), formats: bool = False) -> list:
    """A SAS variable list up to a stop token (or the statement's end): `x y`, `x1-x10`, `a--b`,
    `a-numeric-b`, `a-character-b`, `_NUMERIC_`, `_CHARACTER_`, `_ALL_`, `pre:`, `arr{*}`. Items as in
    ast.OfList."""
    items: list = []
    while not c.at_end() and not c.at(*stop):
        if formats and c.at_format():
            break
        t = c.peek()
        if t.kind != NAME or c.peek(1).is_("="):
            break
        c.next()
        up = t.upper
        if up in ("_NUMERIC_", "_CHARACTER_", "_CHAR_", "_ALL_"):
            items.append(("special", "_CHARACTER_" if up == "_CHAR_" else up))
        elif c.at("{", "[") and c.peek(1).is_("*"):
            c.next(), c.next()
            c.expect("}", "]")
            items.append(("array", up))
        elif c.at(":") and t.touches(c.peek()):
            c.next()
            items.append(("prefix", up))
        elif c.at("-") and c.peek(1).is_("-") and c.peek().touches(c.peek(1)):
            c.next(), c.next()
            items.append(("dashes", up, c.expect_name("a variable after --").upper(), ""))
        elif c.at("-") and c.peek(1).is_("NUMERIC", "CHARACTER", "CHAR") and c.peek(2).is_("-"):
            c.next()
            kind = c.next().upper
            c.next()
            items.append(("dashes", up, c.expect_name("a variable").upper(), "CHARACTER" if kind == "CHAR" else kind))
        elif c.at("-") and c.peek(1).kind == NAME:
            c.next()
            items.append(("range", t.text, c.next().text))
        else:
            items.append(("name", t.text))
    return items


def parse_expression(cur: TokenCursor, where: bool = False, stop: frozenset[str] = STOP_WORDS) -> A.Node:
    return ExprParser(cur, where, stop).parse()


def parse_expression_text(text: str, where: bool = False) -> A.Node:
    """Parse a whole text as one expression (tests, WHERE= options)."""
    from statgrid.sas.lexer import tokenize
    cur = TokenCursor(tokenize(text))
    node = parse_expression(cur, where)
    if not cur.at_end():
        raise cur.error("Syntax error: the expression goes on", "an operator or the end")
    return node
