"""A SAS data set name and its data set options as written, parsed: `lib.mem(opts)` → DatasetSpec. A
one- or two-level name (one-level: WORK, or USER when that option names a library), the special names
_NULL_, _LAST_ (the data set written last), _DATA_ (DATAn), and the options KEEP= DROP= RENAME= WHERE=
OBS= FIRSTOBS= IN= LABEL= COMPRESS= (others kept as written: SAS ignores many on this engine). Reading and
writing the data set is statgrid/sas/dataset.py's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from statgrid.sas.cursor import TokenCursor
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM, STR, tokenize
from statgrid.sas.parse import ast as A
from statgrid.sas.parse.expr import parse_expression, parse_var_list

MAX_OBS = 2**63 - 1
LIST_OPTIONS = ("KEEP", "DROP")


@dataclass
class DatasetSpec:
    libref: str                          # upper case; '' for _NULL_
    member: str                          # upper case
    options: dict[str, Any] = field(default_factory=dict)   # every option as written (upper-case keys)
    keep: list | None = None             # variable-list items (parse_var_list), None: not given
    drop: list | None = None
    rename: dict[str, str] = field(default_factory=dict)    # OLD (upper) → new (as written)
    where: A.Node | None = None
    where_text: str = ""
    where_from_option: bool = False          # WHERE= (it wins over a PROC's WHERE statement)
    obs: int | None = None
    firstobs: int | None = None
    in_var: str = ""                     # IN=: as written
    label: str | None = None
    line: int = 0
    col: int = 0
    is_view: bool = False                # DATA … / VIEW= target

    @property
    def is_null(self) -> bool:
        return self.member == "_NULL_"

    @property
    def name(self) -> str:
        return "_NULL_" if self.is_null else f"{self.libref}.{self.member}"

    def __str__(self) -> str:
        return self.name


# -- parsing ---------------------------------------------------------------------------------------------------
def parse_dataset(cur: TokenCursor, program: Any = None) -> DatasetSpec:
    """`name`, `lib.name`, `_null_`, `_last_`, `_data_`, each with optional `(options)`."""
    t = cur.peek()
    if t.kind == STR:                    # a quoted physical path is not a data set here
        raise cur.error("A quoted file name is not a data set name here; assign a LIBNAME and use lib.member",
                        "a data set name such as work.a")
    text = cur.dotted_name("a data set name")
    parts = text.upper().split(".")
    if len(parts) > 2:
        raise SasError(f"Data set name {text} has too many levels", t.line, t.col, text, "LIBREF.MEMBER")
    if len(parts) == 1:
        lib, mem = default_libref(program), parts[0]
    else:
        lib, mem = parts
    spec = DatasetSpec(lib, mem, line=t.line, col=t.col)
    if mem == "_NULL_" and len(parts) == 1:
        spec.libref = ""
    elif mem == "_LAST_" and len(parts) == 1:
        last = (getattr(program, "last", "") or "").upper()
        if not last:
            raise SasError("There is no last data set (_LAST_): no data set has been created yet",
                           t.line, t.col, text)
        spec.libref, spec.member = last.split(".") if "." in last else ("WORK", last)
    elif mem == "_DATA_" and len(parts) == 1:
        spec.member = next_data_name(program, spec.libref)
    if cur.at("("):
        cur.next()
        _parse_options(cur, spec)
    return spec


def default_libref(program: Any) -> str:
    try:
        user = program.options.get("USER") if program is not None else None
    except Exception:  # noqa: BLE001 - USER is not an option of this build
        user = None
    return str(user).upper() if user else "WORK"


def next_data_name(program: Any, libref: str) -> str:
    """_DATA_: DATA1, DATA2 … the first free name in the library (SAS's DATAn naming)."""
    n = 1
    while program is not None:
        try:
            if not program.session.ref(f"{libref}.data{n}").exists():
                break
        except Exception:  # noqa: BLE001
            break
        n += 1
    return f"DATA{n}"


def _parse_options(cur: TokenCursor, spec: DatasetSpec) -> None:
    while not cur.accept(")"):
        if cur.at_end():
            raise cur.error("Syntax error in data set options", ")")
        t = cur.expect_kind(NAME, "a data set option such as KEEP=")
        opt = t.upper
        cur.expect("=", expected=f"= after {opt}")
        if opt in LIST_OPTIONS:
            items = []
            while not cur.at(")") and not cur.at_end() and not (cur.peek().kind == NAME and cur.peek(1).is_("=")):
                got = parse_var_list(cur, stop=(")",))
                if not got:
                    raise cur.error(f"Syntax error in {opt}=", "variable names")
                items += got
            setattr(spec, opt.lower(), items)
            spec.options[opt] = items
        elif opt == "RENAME":
            cur.expect("(", expected="( after RENAME=")
            while not cur.accept(")"):
                old = cur.expect_name("a variable name")
                cur.expect("=", expected="=")
                spec.rename[old.upper()] = cur.expect_name("a new variable name")
            spec.options[opt] = dict(spec.rename)
        elif opt == "WHERE":
            cur.expect("(", expected="( after WHERE=")
            start = cur.peek()
            spec.where = parse_expression(cur, where=True)
            spec.where_from_option = True
            end = cur.peek()
            spec.where_text = " ".join(x.text for x in cur.tokens[cur.tokens.index(start):cur.tokens.index(end)])
            cur.expect(")", expected=")")
            spec.options[opt] = spec.where_text
        elif opt in ("OBS", "FIRSTOBS"):
            v = cur.next()
            if v.is_("MAX"):
                n = MAX_OBS
            elif v.kind == NUM and float(v.value).is_integer() and v.value >= 0:
                n = int(v.value)
            else:
                raise cur.error(f"Invalid value for {opt}=", "a whole number or MAX", v)
            setattr(spec, opt.lower(), n)
            spec.options[opt] = n
        elif opt == "IN":
            spec.in_var = cur.expect_name("a variable name for IN=")
            spec.options[opt] = spec.in_var
        elif opt == "LABEL":
            v = cur.next()
            spec.label = v.value if v.kind == STR else v.text
            spec.options[opt] = spec.label
        else:
            spec.options[opt] = _option_value(cur)


def _option_value(cur: TokenCursor) -> Any:
    if cur.at("("):
        depth, out = 0, []
        while True:
            t = cur.next()
            out.append(t.text)
            depth += t.is_("(") - t.is_(")")
            if depth == 0 or cur.at_end():
                return " ".join(out)
    t = cur.next()
    if t.kind == NUM and cur.peek().kind == NAME and t.touches(cur.peek()) and \
            cur.peek().upper in ("K", "M", "G", "T"):        # bufsize=64k: a number with its size unit
        return f"{t.text}{cur.next().upper}"
    return t.value if t.kind in (STR, NUM) else t.text.upper()


def parse_dataset_text(text: str, program: Any = None) -> DatasetSpec:
    cur = TokenCursor(tokenize(text))
    spec = parse_dataset(cur, program)
    if not cur.at_end():
        raise cur.error("Syntax error after the data set name", "end")
    return spec


# -- columns --------------------------------------------------------------------------------------------------
