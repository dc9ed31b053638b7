"""Functions that reach the program: PUT PUTN PUTC INPUT INPUTN INPUTC (through formats), SYMGET
SYMGETN GETOPTION SYSGET SYSTEM; the state-code functions FIPSTATE FIPNAME FIPNAMEL STFIPS STNAME
STNAMEL; CALL routines MISSING SYMPUT SYMPUTX SYSTEM (SAS 9.4 Functions and CALL Routines).

CALL SYMPUT(name, value): the name trimmed, a character value as it is (trailing blanks kept), a number
written with BEST12. (right-aligned, as SAS's automatic conversion); the symbol table is chosen by
SAS's rule, which `rt.program.symbols.symput` implements. CALL SYMPUTX(name, value <, scope>): name and
value stripped of leading and trailing blanks, a number written with BEST32. stripped; the symbol-table
argument ('G', 'L', 'F', or blank for SYMPUT's rule) is handed to `symbols.symput(name, value, table)`.
"""
from __future__ import annotations

import os
from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.formats import InvalidData, format_value, informat_value, parse_spec
from statgrid.sas.formats.numeric import best
from statgrid.sas.functions.registry import call_routine, function, invalid_argument
from statgrid.sas.functions.character import to_char
from statgrid.sas.functions.numeric import to_num
from statgrid.sas.values import MISSING


def _program(rt):
    return getattr(rt, "program", None)


def _catalog(rt):
    p = _program(rt)
    return getattr(p, "formats", None) if p is not None else None


def _missing_char(rt) -> str:
    p = _program(rt)
    try:
        return str(p.options.get("MISSING")) if p is not None and p.options is not None else "."
    except Exception:
        return "."


def _yearcutoff(rt) -> int | None:
    p = _program(rt)
    try:
        return int(p.options.get("YEARCUTOFF")) if p is not None and p.options is not None else None
    except Exception:
        return None


def _spec(rt, text: Any, name: str, strict: bool = False):
    """The format named by `text`; None when it is not one (the caller's invalid-argument NOTE), or with
    `strict` (PUT, INPUT: the format is written in the program) an ERROR naming the text."""
    t = to_char(text).strip()
    try:
        return parse_spec(t, getattr(rt, "line", 0), getattr(rt, "col", 0))
    except SasError:
        if strict:
            raise SasError(f"The {name} function's format {t!r} is not a valid format name", getattr(rt, "line", 0),
                           getattr(rt, "col", 0), t,
                           "a format such as 8.2, BEST12., DOLLAR10.2, $CHAR10. or a user format") from None
        return None


# -- PUT / INPUT ---------------------------------------------------------------------------------------
@function("PUT", 2, 2, returns="char", char_length=-1, args="af")
def f_put(rt, value, fmt):
    """The value written with the format (the format's width; numeric formats right-aligned). A
    format unknown at run time is an ERROR naming it."""
    spec = _spec(rt, fmt, "PUT", strict=True)
    if spec is None:
        return invalid_argument(rt, "PUT", 2, "")
    return format_value(value, spec, _catalog(rt), _missing_char(rt))


@function("PUTN", 2, 4, returns="char", char_length=200, args="ncnn")
def f_putn(rt, value, fmt, w=None, d=None):
    spec = _spec(rt, fmt, "PUTN")
    if spec is None or spec.char:
        return invalid_argument(rt, "PUTN", 2, "")
    if w is not None or d is not None:
        from statgrid.sas.formats import FormatSpec
        ww, dd = to_num(w) if w is not None else MISSING, to_num(d) if d is not None else MISSING
        if ww == ww and not 1 <= ww <= 32767 or dd == dd and not 0 <= dd <= 31:
            return invalid_argument(rt, "PUTN", 3 if ww == ww and not 1 <= ww <= 32767 else 4, "")
        spec = FormatSpec(spec.name, int(ww) if ww == ww else spec.width, int(dd) if dd == dd else spec.decimals)
    return format_value(to_num(value), spec, _catalog(rt), _missing_char(rt))


@function("PUTC", 2, 3, returns="char", char_length=200, args="ccn")
def f_putc(rt, value, fmt, w=None):
    spec = _spec(rt, fmt, "PUTC")
    if spec is None or not spec.char:
        return invalid_argument(rt, "PUTC", 2, "")
    if w is not None and to_num(w) == to_num(w):
        if not 1 <= to_num(w) <= 32767:
            return invalid_argument(rt, "PUTC", 3, "")
        from statgrid.sas.formats import FormatSpec
        spec = FormatSpec(spec.name, int(to_num(w)), None, True)
    return format_value(to_char(value), spec, _catalog(rt))


def _input(rt, name: str, text: Any, fmt: Any, want: str | None):
    quiet = 0
    if isinstance(fmt, str) and fmt.startswith("?"):    # INPUT(s, ? 8.) / INPUT(s, ?? 8.)
        quiet = len(fmt) - len(fmt.lstrip("?"))
        fmt = fmt.lstrip("?")
    spec = _spec(rt, fmt, name, strict=want is None)
    if spec is None or (want == "num" and spec.char) or (want == "char" and not spec.char):
        return invalid_argument(rt, name, 2, "" if want == "char" else MISSING)
    try:
        return informat_value(to_char(text), spec, _catalog(rt), _yearcutoff(rt))
    except InvalidData:
        result = "" if spec.char else MISSING
        if quiet:
            # SAS 9.4 Functions: INPUT, "? or ??": ? suppresses the invalid-argument NOTE (_ERROR_ is still
            # set to 1), ?? also keeps _ERROR_ from being set
            state = getattr(rt, "state", None)
            if quiet == 1 and isinstance(state, dict):
                state["_ERROR_"] = 1
                hook = state.get("_on_invalid")
                if hook is not None:
                    hook(getattr(rt, "line", 0), getattr(rt, "col", 0), False)
            return result
        # SAS: "NOTE: Invalid argument to function INPUT at line N column M." and _ERROR_ = 1
        return invalid_argument(rt, name, None, result)


@function("INPUT", 2, 2, returns="num", args="af")
def f_input(rt, text, informat):
    """The text read with the informat: a number, or a character value for a $ informat (the DATA
    step types the call by its informat: `returns` here is the numeric case)."""
    return _input(rt, "INPUT", text, informat, None)


@function("INPUTN", 2, 4, args="ccnn")
def f_inputn(rt, text, informat, w=None, d=None):
    return _input(rt, "INPUTN", text, informat, "num")


@function("INPUTC", 2, 3, returns="char", args="ccn")
def f_inputc(rt, text, informat, w=None):
    return _input(rt, "INPUTC", text, informat, "char")


# -- macro variables, options, environment -------------------------------------------------------------
@function("SYMGET", 1, 1, returns="char", char_length=200, args="c")
def f_symget(rt, name):
    """The value of a macro variable; a name that does not exist gives SAS's invalid-argument NOTE and
    a blank value."""
    p = _program(rt)
    sym = getattr(p, "symbols", None) if p is not None else None
    n = to_char(name).strip()
    v = sym.get(n) if sym is not None and n else None
    if v is None:
        return invalid_argument(rt, "SYMGET", result="")
    return v


@function("SYMGETN", 1, 1, args="c")
def f_symgetn(rt, name):
    v = f_symget(rt, name)
    return to_num(v) if v.strip() else MISSING


@function("SYMEXIST", 1, 1, args="c")
def f_symexist(rt, name):
    p = _program(rt)
    sym = getattr(p, "symbols", None) if p is not None else None
    return 1.0 if sym is not None and sym.get(to_char(name).strip()) is not None else 0.0


@function("GETOPTION", 1, 3, returns="char", args="ccc")
def f_getoption(rt, name, *options):
    """A system option's value as text (SAS: FULLSTIMER or NOFULLSTIMER; blank for an unknown option)."""
    p = _program(rt)
    opts = getattr(p, "options", None) if p is not None else None
    if opts is None:
        return ""
    return opts.getoption_text(to_char(name).strip())


@function("SYSGET", 1, 1, returns="char", args="c")
def f_sysget(rt, name):
    """An environment variable (-set NAME VALUE puts one there); blank with a NOTE when unset."""
    v = os.environ.get(to_char(name).strip())
    if v is None:
        return invalid_argument(rt, "SYSGET", result="")
    return v


def _refuse(rt, what: str):
    from statgrid.sas.errors import SHELL_ESCAPE_REFUSED
    raise SasError(SHELL_ESCAPE_REFUSED.format(what=what), getattr(rt, "line", 0), getattr(rt, "col", 0), what)


@function("SYSTEM", 1, 1, args="c")
def f_system(rt, command):
    _refuse(rt, "SYSTEM()")


@call_routine("SYSTEM", 1, 1)
def call_system(rt, args):
    _refuse(rt, "CALL SYSTEM")


@call_routine("MISSING", 1, None)
def call_missing(rt, args):
    """Every argument set to missing: '.' for a number, blanks for a character variable."""
    return ["" if isinstance(a, str) else MISSING for a in args]


def _symbols(rt):
    p = _program(rt)
    sym = getattr(p, "symbols", None) if p is not None else None
    if sym is None:
        raise SasError("CALL SYMPUT needs the macro processor's symbol tables", getattr(rt, "line", 0),
                       getattr(rt, "col", 0))
    return sym


def _macro_name(rt, arg) -> str:
    """CALL SYMPUT(X)'s first argument, stripped; SAS's ERROR (which stops the step) if it is no name."""
    name = to_char(arg).strip()
    if not (name and len(name) <= 32 and (name[0].isalpha() or name[0] == "_")
            and all(c.isalnum() or c == "_" for c in name)):
        raise SasError(f"Symbolic variable name {name or '(blank)'} must begin with a letter or underscore and "
                       "contain only letters, digits and underscores", getattr(rt, "line", 0), getattr(rt, "col", 0),
                       name)
    return name


@call_routine("SYMPUT", 2, 2, args="cc")
def call_symput(rt, args):
    name = _macro_name(rt, args[0])
    v = args[1]
    text = v if isinstance(v, str) else best(float(v), 12)
    _symbols(rt).symput(name.upper(), text)
    return None


@call_routine("SYMPUTX", 2, 3, args="cac")
def call_symputx(rt, args):
    name = _macro_name(rt, args[0])
    v = args[1]
    text = v.strip(" ") if isinstance(v, str) else best(float(v), 32).strip()
    scope = to_char(args[2]).strip().upper()[:1] if len(args) > 2 else ""
    if scope not in ("", "G", "L", "F"):
        return invalid_argument(rt, "SYMPUTX", 3, None)
    # '' SYMPUT's table, 'F' the nearest holding it (else the most local), 'G' global, 'L' most local
    _symbols(rt).symput(name.upper(), text, scope)
    return None


@call_routine("EXECUTE", 1, 1, args="c")
def call_execute(rt, args):
    """CALL EXECUTE(text): macro statements and macro calls in the text run at once; the SAS statements run
    when this DATA step has ended, in the order given (SAS 9.4 Functions and CALL Routines: CALL EXECUTE)."""
    p = _program(rt)
    if p is None:
        raise SasError("CALL EXECUTE needs a SAS program to run its statements in", getattr(rt, "line", 0),
                       getattr(rt, "col", 0))
    text = to_char(args[0]).rstrip(" ")
    mp = p.extras.get("macro_processor")
    # the macro statements and macro calls in the text run now (SAS Macro Language Reference, CALL EXECUTE:
    # "the macro executes immediately"); the SAS statements they make wait for the step's end
    made = mp.statements_now(text, "CALL EXECUTE") if mp is not None else None
    if made is not None and any(_masked_call(st) for st in made):
        made = _Deferred([st.text if _masked_call(st) else st for st in made], mp)
    p.extras.setdefault("call_execute", []).append((text, made))
    return None


def _masked_call(st) -> bool:
    """A statement that is a macro call CALL EXECUTE's text masked (`%nrstr(%mymac)(…)`): it is run when the
    step has ended, as SAS reads the stacked text then."""
    t = st.text.lstrip()
    return t.startswith("%") and len(t) > 1 and (t[1].isalpha() or t[1] == "_")


class _Deferred(list):
    """CALL EXECUTE's statements, a masked macro call among them read by the macro processor only when the
    statements are taken to run (after the DATA step): `call execute('%nrstr(%pr)(a)')` runs %PR then."""

    def __init__(self, parts: list, mp: Any):
        super().__init__()
        self.parts, self.mp = parts, mp

    def __iter__(self):
        for part in self.parts:
            if isinstance(part, str):
                yield from self.mp.statements_now(part, "CALL EXECUTE")
            else:
                yield part


# -- state codes (FIPS) --------------------------------------------------------------------------------
_STATES: dict[int, tuple[str, str]] = {
    1: ("AL", "Alabama"), 2: ("AK", "Alaska"), 4: ("AZ", "Arizona"), 5: ("AR", "Arkansas"),
    6: ("CA", "California"), 8: ("CO", "Colorado"), 9: ("CT", "Connecticut"), 10: ("DE", "Delaware"),
    11: ("DC", "District of Columbia"), 12: ("FL", "Florida"), 13: ("GA", "Georgia"), 15: ("HI", "Hawaii"),
    16: ("ID", "Idaho"), 17: ("IL", "Illinois"), 18: ("IN", "Indiana"), 19: ("IA", "Iowa"), 20: ("KS", "Kansas"),
    21: ("KY", "Kentucky"), 22: ("LA", "Louisiana"), 23: ("ME", "Maine"), 24: ("MD", "Maryland"),
    25: ("MA", "Massachusetts"), 26: ("MI", "Michigan"), 27: ("MN", "Minnesota"), 28: ("MS", "Mississippi"),
    29: ("MO", "Missouri"), 30: ("MT", "Montana"), 31: ("NE", "Nebraska"), 32: ("NV", "Nevada"),
    33: ("NH", "New Hampshire"), 34: ("NJ", "New Jersey"), 35: ("NM", "New Mexico"), 36: ("NY", "New York"),
    37: ("NC", "North Carolina"), 38: ("ND", "North Dakota"), 39: ("OH", "Ohio"), 40: ("OK", "Oklahoma"),
    41: ("OR", "Oregon"), 42: ("PA", "Pennsylvania"), 44: ("RI", "Rhode Island"), 45: ("SC", "South Carolina"),
    46: ("SD", "South Dakota"), 47: ("TN", "Tennessee"), 48: ("TX", "Texas"), 49: ("UT", "Utah"),
    50: ("VT", "Vermont"), 51: ("VA", "Virginia"), 53: ("WA", "Washington"), 54: ("WV", "West Virginia"),
    55: ("WI", "Wisconsin"), 56: ("WY", "Wyoming"), 60: ("AS", "American Samoa"), 64: ("FM", "Micronesia"),
    66: ("GU", "Guam"), 68: ("MH", "Marshall Islands"), 69: ("MP", "Northern Mariana Islands"),
    70: ("PW", "Palau"), 72: ("PR", "Puerto Rico"), 78: ("VI", "U.S. Virgin Islands"),
}
_BY_CODE = {code: fips for fips, (code, _) in _STATES.items()}


def _fips(x) -> tuple[str, str] | None:
    v = to_num(x)
    if v != v or v != int(v):
        return None
    return _STATES.get(int(v))


@function("FIPSTATE", 1, 1, returns="char", char_length=20)
def f_fipstate(rt, code):
    """FIPS state code → the two-letter postal code (blank for a code that names no state)."""
    s = _fips(code)
    return s[0] if s else ""


@function("FIPNAME", 1, 1, returns="char", char_length=20)
def f_fipname(rt, code):
    s = _fips(code)
    return s[1].upper()[:20] if s else ""


@function("FIPNAMEL", 1, 1, returns="char", char_length=20)
def f_fipnamel(rt, code):
    s = _fips(code)
    return s[1][:20] if s else ""


def _postal(rt, name: str, text: Any) -> int | None:
    t = to_char(text).rstrip(" ")
    if t != t.lstrip(" "):
        invalid_argument(rt, name)      # SAS: leading blanks are an error
        return None
    return _BY_CODE.get(t.upper())


@function("STFIPS", 1, 1, args="c")
def f_stfips(rt, code):
    f = _postal(rt, "STFIPS", code)
    return float(f) if f is not None else MISSING


@function("STNAME", 1, 1, returns="char", char_length=20, args="c")
def f_stname(rt, code):
    f = _postal(rt, "STNAME", code)
    return _STATES[f][1].upper()[:20] if f is not None else ""


@function("STNAMEL", 1, 1, returns="char", char_length=20, args="c")
def f_stnamel(rt, code):
    f = _postal(rt, "STNAMEL", code)
    return _STATES[f][1][:20] if f is not None else ""
