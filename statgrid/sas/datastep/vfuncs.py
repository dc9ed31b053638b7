"""The variable-information functions of the DATA step (SAS 9.4 Functions and CALL Routines: VNAME, VLABEL,
VFORMAT, VLENGTH, VTYPE, VVALUE): what the PDV knows of a variable — or of an array element, chosen by its
subscript while the step runs. They read the step's own variables, so they are compiled here, not called
through the function registry (PROC SQL has no PDV: it refuses them).

- VNAME(x): the name as first written; VLABEL(x): its label, else the name;
- VFORMAT(x): its format, else the default (BEST12. for a number, $w. for a character of length w);
- VLENGTH(x): the length in bytes; VTYPE(x): 'N' or 'C';
- VVALUE(x): its value written with that format, leading blanks removed.
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.parse import ast as A

NAMES = ("VNAME", "VLABEL", "VFORMAT", "VLENGTH", "VTYPE", "VVALUE")


def _format_of(var) -> str:
    if var.format:
        return var.format.upper()
    return f"${var.length or 8}." if var.type == "char" else "BEST12."


def _attribute(fn: str, var) -> Any:
    if fn == "VNAME":
        return var.name
    if fn == "VLABEL":
        return var.label or var.name
    if fn == "VFORMAT":
        return _format_of(var)
    if fn == "VLENGTH":
        return float(var.length or 8)
    return "C" if var.type == "char" else "N"


def generate(gen: Any, n: A.Call) -> tuple[str, str, int] | None:
    """(source, kind, length) of a V* call whose argument is a variable or an array element; None when `n`
    is not one of them (the registry's functions take it)."""
    if n.name not in NAMES:
        return None
    if len(n.args) != 1 or not isinstance(n.args[0], (A.Var, A.Index, A.Call)):
        raise SasError(f"The {n.name} function takes one variable or array reference", n.line, n.col, n.name,
                       "a variable name or an array element")
    arg = n.args[0]
    pdv, fn = gen.pdv, n.name
    kind, length = ("num", 8) if fn == "VLENGTH" else ("char", 200 if fn == "VVALUE" else 32 if fn != "VLABEL"
                                                       else 256)
    if isinstance(arg, A.Var):
        var = pdv.get(arg.name)
        if var is None:
            raise SasError(f"Variable {arg.text} is not in the step for {fn}", n.line, n.col, arg.text,
                           "a variable of the step")
        slot_src = str(var.slot)
    else:
        name = arg.name
        if name not in pdv.arrays:
            return None                              # a function call, not an array reference
        subs = arg.subs if isinstance(arg, A.Index) else arg.args
        src, _, _ = gen.element(name, subs, n.line, n.col)
        slot_src = src[2:-1]                         # v[<slot>] → <slot>
    if fn == "VVALUE":
        from statgrid.sas.formats import format_value
        formats = tuple(_format_of(v) for v in pdv.slots)
        catalog = getattr(gen.program, "formats", None) if hasattr(gen, "program") else None

        def vvalue(value, fmt):
            try:
                return format_value(value, fmt, catalog).lstrip(" ")
            except Exception:  # noqa: BLE001 - a format the value cannot take: its default
                return str(value)
        return f"{gen.const(vvalue)}(v[{slot_src}], {gen.const(formats)}[{slot_src}])", kind, length
    table = tuple(_attribute(fn, v) for v in pdv.slots)
    return f"{gen.const(table)}[{slot_src}]", kind, length
