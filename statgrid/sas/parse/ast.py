"""The SAS expression tree (DATA step expressions and WHERE expressions), built by parse/expr.py and read
by the DATA step compiler (datastep/) and the WHERE → SQL translator (where_sql.py).

Every node carries the line and column of its first token (for NOTEs: "Missing values were generated …
at (Line):(Column)", "Division by zero detected at line N column M", and ERRORs). Names are kept upper
case (SAS variable names are case-blind; the case first written is kept by the DATA step for output).
Standard library only.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Node:
    line: int
    col: int


@dataclass(slots=True)
class Num(Node):
    """A numeric constant: a number, a missing value `.`/`.A`/`._`, or a date/time/datetime literal
    already converted to its SAS value (days / seconds)."""
    value: float
    text: str = ""


@dataclass(slots=True)
class Str(Node):
    """A character constant ('…', "…", '41'x), quotes undone; is_format: a format name as PUT's argument."""
    value: str
    is_format: bool = False


@dataclass(slots=True)
class Var(Node):
    """A variable: `x`, `first.id`, `'my var'n`. `name` upper case as written (FIRST.ID); `text` as written."""
    name: str
    text: str


@dataclass(slots=True)
class Index(Node):
    """An array reference with braces or brackets: `a{i}`, `a[i, j]`, `a{*}` (star: subs == ['*'])."""
    name: str
    subs: list


@dataclass(slots=True)
class OfList(Node):
    """`OF x1-x5 a--b _numeric_ arr{*} pre:` inside a function's arguments: the variable-list items as
    written (each a tuple: ('name', N) / ('range', A, B) / ('dashes', A, B, kind) / ('special', _ALL_) /
    ('array', NAME) / ('prefix', P)); the DATA step expands them against the PDV."""
    items: list


@dataclass(slots=True)
class Call(Node):
    """`f(args)`: a function call, or `a(i)` — an array reference when `a` is an array (decided by the
    compiler, as SAS does)."""
    name: str
    args: list


@dataclass(slots=True)
class Method(Node):
    """A component-object method call: `h.find()`, `h.add(key: 1, data: 'x')` (tags upper case or '')."""
    obj: str
    method: str
    args: list                              # list[tuple[tag, Node]]


@dataclass(slots=True)
class Unary(Node):
    op: str                                 # '-', '+', 'NOT'
    operand: Node


@dataclass(slots=True)
class Binary(Node):
    """Arithmetic '**' '*' '/' '+' '-', '||', 'MIN' ('><'), 'MAX' ('<>'), 'AND', 'OR'."""
    op: str
    left: Node
    right: Node


@dataclass(slots=True)
class Compare(Node):
    """'EQ' 'NE' 'LT' 'LE' 'GT' 'GE'; colon: the `=:` modifier (compare the longer value cut to the
    shorter's length — character only)."""
    op: str
    left: Node
    right: Node
    colon: bool = False


@dataclass(slots=True)
class In(Node):
    """`x IN (1, 2, 5:9)` / `x NOT IN ('a' 'b')`: items are Nodes or ('range', lo, hi) tuples; `array`
    names an array instead (`x in arr`)."""
    operand: Node
    items: list
    negated: bool = False
    array: str = ""


# -- WHERE-only operators (SAS 9.4 Language Reference: Concepts, "WHERE-Expression Processing") -------------
@dataclass(slots=True)
class Between(Node):
    operand: Node
    low: Node
    high: Node
    negated: bool = False


@dataclass(slots=True)
class PatternOp(Node):
    """`operand [NOT] op pattern`: CONTAINS (`?`), LIKE, and `=*` (SOUNDEX of both sides equal)."""
    operand: Node
    pattern: Node
    negated: bool = False


@dataclass(slots=True)
class Contains(PatternOp):
    pass


@dataclass(slots=True)
class Like(PatternOp):
    pass


@dataclass(slots=True)
class SoundsLike(PatternOp):
    pass


@dataclass(slots=True)
class IsMissing(Node):
    operand: Node
    negated: bool = False


@dataclass(slots=True)
class SameAnd(Node):
    """Placeholder for WHERE SAME AND (the DATA step's WHERE statements are ANDed by the compiler)."""
    parts: list = field(default_factory=list)


def walk(node):
    """Every node of a tree, parents first (for finding variables, LAG call sites …)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(x for x in n if isinstance(x, (Node, tuple, list)))
            continue
        if isinstance(n, list):
            stack.extend(n)
            continue
        if not isinstance(n, Node):
            continue
        yield n
        for name in n.__slots__:
            v = getattr(n, name)
            if isinstance(v, (Node, list, tuple)):
                stack.append(v)
