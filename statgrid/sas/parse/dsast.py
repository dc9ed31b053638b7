"""DATA step statements as trees (built by parse/statements.py, compiled by datastep/compiler.py).
Every node has the line and column of its first token. Standard library only."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stmt:
    line: int
    col: int


@dataclass
class Assign(Stmt):
    target: Any            # ast.Var | ast.Index | ast.Call (array ref or SUBSTR(...) on the left)
    expr: Any


@dataclass
class SumStmt(Stmt):
    target: Any
    expr: Any


@dataclass
class If(Stmt):
    cond: Any
    then: Stmt | None      # None: a subsetting IF
    else_: Stmt | None = None


@dataclass
class Do(Stmt):
    """kind: 'block' (DO; … END;), 'iter' (DO i = specs), 'while', 'until' (DO WHILE/UNTIL), 'over'."""
    kind: str
    body: list = field(default_factory=list)
    var: Any = None        # the index variable (ast.Var / ast.Index)
    specs: list = field(default_factory=list)   # [(start, stop|None, by|None)]
    while_: Any = None
    until: Any = None
    array: str = ""        # DO OVER


@dataclass
class Select(Stmt):
    expr: Any
    whens: list            # [(list[expr], Stmt)]
    otherwise: Stmt | None = None
    has_otherwise: bool = False


@dataclass
class Simple(Stmt):
    """OUTPUT, DELETE, STOP, LEAVE, CONTINUE, RETURN, ABORT, GOTO, LINK, a label, an empty statement."""
    kind: str
    args: list = field(default_factory=list)


@dataclass
class Retain(Stmt):
    items: list            # [(list of var-list items, list of initial values (floats/strs) or [])]
    all_: bool = False


@dataclass
class Length(Stmt):
    items: list            # [(var-list items, 'char'|'num', length)]
    default: int | None = None


@dataclass
class Array(Stmt):
    name: str
    dims: list             # ints, or ['*']
    char: bool
    length: int | None
    elements: list         # var-list items, or [] for name1…nameN
    init: list             # initial values
    temporary: bool = False
    lower: list = field(default_factory=list)   # lower bounds per dimension (1 unless `lo:hi`)
    text: str = ""         # the name as written: `array x{3}` makes x1-x3 (SAS keeps the case)


@dataclass
class VarAttrs(Stmt):
    """KEEP, DROP, RENAME, LABEL, FORMAT, INFORMAT, ATTRIB: kind and its items."""
    kind: str
    items: list


@dataclass
class SetStmt(Stmt):
    kind: str              # 'SET' | 'MERGE'
    datasets: list         # list[DatasetSpec]
    end: str = ""
    point: str = ""
    nobs: str = ""


@dataclass
class By(Stmt):
    vars: list             # [(name, descending)]
    notsorted: bool = False


@dataclass
class Where(Stmt):
    expr: Any
    text: str = ""


@dataclass
class CallStmt(Stmt):
    name: str
    args: list


@dataclass
class Put(Stmt):
    items: list            # [('expr'|'named'|'text'|'at'|'plus'|'slash'|'all'|'hold'|'col', …)]


@dataclass
class Input(Stmt):
    items: list


@dataclass
class FileStmt(Stmt):
    kind: str              # 'FILE' | 'INFILE'
    target: Any            # 'LOG' | 'PRINT' | 'DATALINES' | ('path', str) | ('ref', NAME)
    options: dict = field(default_factory=dict)


@dataclass
class MethodStmt(Stmt):
    call: Any              # ast.Method


@dataclass
class Declare(Stmt):
    kind: str              # 'HASH' | 'HITER'
    name: str
    args: list             # [(tag, expr)]
