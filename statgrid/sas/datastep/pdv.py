"""The program data vector built in the DATA step's compile phase (SAS 9.4 Language Reference: Concepts,
"How the DATA Step Works"): each variable's type and length fixed by its first use (LENGTH, ATTRIB,
RETAIN with a value, an input data set, an assignment …), its slot in the PDV (a Python list at run
time), whether it is retained, written out, and its attributes (format, informat, label)."""
from __future__ import annotations

from dataclasses import dataclass

from statgrid.sas.parse.varlist import expand_numbered
from statgrid.sas.errors import SasError
from statgrid.sas.values import MISSING


@dataclass(slots=True)
class Var:
    name: str                     # as first written
    type: str | None              # 'num' | 'char' | None (not known yet)
    length: int | None
    slot: int
    retained: bool = False
    auto: bool = False            # _N_, _ERROR_, FIRST./LAST., IN=, END=, POINT=, NOBS=, temporaries: not written
    from_input: bool = False      # read by SET/MERGE (retained automatically)
    init: object = None           # RETAIN's initial value
    format: str = ""
    informat: str = ""
    label: str = ""
    uninit: bool = True           # never assigned in the program (SAS's "is uninitialized" NOTE)
    len_explicit: bool = False    # a LENGTH/ATTRIB or an input data set gave the length

    @property
    def missing(self):
        return " " * (self.length or 8) if self.type == "char" else MISSING


@dataclass
class ArrayInfo:
    name: str
    slots: list
    dims: list
    lower: list
    char: bool
    temporary: bool = False
    implicit: bool = False        # ARRAY a x y z; (no dimension): DO OVER and a(i)
    index_var: str = ""           # the implicit array's index variable (_I_)


class PDV:
    def __init__(self):
        self.vars: dict[str, Var] = {}
        self.order: list[str] = []
        self.slots: list[Var] = []
        self.arrays: dict[str, ArrayInfo] = {}
        self.default_length = 8
        self.spelling: dict[str, str] = {}
        self.missing_letters: set[str] = set()   # the MISSING statement's special missing values for INPUT     # a name's case as first written in a variable list

    def get(self, name: str) -> Var | None:
        return self.vars.get(name.upper())

    def declare(self, name: str, type_: str | None = None, length: int | None = None, line: int = 0,
                col: int = 0, auto: bool = False) -> Var:
        up = name.upper()
        v = self.vars.get(up)
        if v is None:
            if name == up:
                name = self.spelling.get(up, name)
            v = Var(name, type_, length, len(self.slots), auto=auto)
            self.vars[up] = v
            self.slots.append(v)
            if not auto:
                self.order.append(up)
        elif type_ and v.type and v.type != type_:
            raise SasError(f"Variable {v.name} has been defined as both character and numeric", line, col, name,
                           "one type per variable")
        if type_ and v.type is None:
            v.type = type_
        if v.type and v.length is None:
            v.length = length or (8 if v.type == "num" else None)
        return v

    def auto_var(self, name: str) -> Var:
        """A variable SAS does not write (IN=, END=, POINT=, NOBS=, FIRST./LAST.), even when the program
        named it before the statement that makes it so."""
        v = self.declare(name, "num", auto=True)
        if not v.auto:
            v.auto = True
            self.order.remove(name.upper())
        v.uninit = False
        return v

    def temp_block(self, n: int, type_: str, length: int | None, inits: list) -> list[int]:
        """n slots of a _TEMPORARY_ array. The elements past the initial values share one Var (they differ
        only by slot; a temporary is retained, never written, never listed), so a million-element array costs
        a list entry per element, not an object."""
        first = len(self.slots)
        for i, init in enumerate(inits[:n]):
            v = self.temp_slot(type_, length)
            v.init = init
        rest = n - len(self.slots) + first
        if rest > 0:
            shared = Var("_TEMPORARY_", type_, length, len(self.slots), retained=True, auto=True)
            self.slots.extend([shared] * rest)
        return list(range(first, first + n))

    def temp_slot(self, type_: str, length: int | None) -> Var:
        v = Var("_TEMPORARY_", type_, length, len(self.slots), retained=True, auto=True)
        self.slots.append(v)
        return v

    def expand(self, items: list, line: int = 0, col: int = 0, declare: bool = True) -> list[str]:
        """Variable-list items (parse_var_list) → upper-case names in PDV order where a range needs it."""
        out: list[str] = []
        for item in items:
            kind = item[0]
            if kind == "name":
                self.spelling.setdefault(item[1].upper(), item[1])
                if declare:
                    self.declare(item[1])
                out.append(item[1].upper())
            elif kind == "range":
                for n in expand_numbered(item[1], item[2]):
                    self.spelling.setdefault(n.upper(), n)
                    if declare:
                        self.declare(n)
                    out.append(n.upper())
            elif kind == "dashes":
                if item[1] not in self.vars or item[2] not in self.vars:
                    bad = item[1] if item[1] not in self.vars else item[2]
                    raise SasError(f"Variable {bad} in list does not match type prescribed for this list", line,
                                   col, bad)
                a, b = self.order.index(item[1]), self.order.index(item[2])
                sel = self.order[a:b + 1]
                if item[3]:
                    want = "num" if item[3] == "NUMERIC" else "char"
                    sel = [n for n in sel if self.vars[n].type == want]
                out += sel
            elif kind == "special":
                want = {"_NUMERIC_": "num", "_CHARACTER_": "char"}.get(item[1])
                out += [n for n in self.order if want is None or self.vars[n].type == want]
            elif kind == "prefix":
                out += [n for n in self.order if n.startswith(item[1])]
            elif kind == "array":
                arr = self.arrays.get(item[1])
                if arr is None:
                    raise SasError(f"Array {item[1]} is not defined", line, col, item[1])
                out += [self.slots[s].name.upper() for s in arr.slots]
        return out
