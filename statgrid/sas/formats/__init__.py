"""SAS formats and informats: `parse_spec` ('COMMA10.2' → FormatSpec), `format_value` (a value →
its text in exactly w characters), `informat_value` (text → value, or InvalidData), `default_format`
(BEST12. for numbers, $w. for characters), and user formats from PROC FORMAT (catalog.py).

Built-in formats (SAS 9.4 Formats and Informats: Reference): w.d, BESTw., COMMAw.d, DOLLARw.d, Ew.,
Zw.d, PERCENTw.d, NEGPARENw.d-like COMMA fallbacks, $w., $CHARw., DATEw., DDMMYYw., MMDDYYw., YYMMDDw.,
MONYYw., WORDDATEw., DATETIMEw.d, TIMEw.d, TODw.d, HHMMw.d. Informats: w.d, BESTw., COMMAw.d, DOLLARw.d, $w.,
$CHARw., DATEw., DDMMYYw., MMDDYYw., YYMMDDw., DATETIMEw., TIMEw., ANYDTDTEw.
An unknown name raises SasError naming it ("The format X was not found or could not be loaded.").
Standard library only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from statgrid.sas.errors import SasError
from statgrid.sas.formats import binary as _b
from statgrid.sas.formats import charfmt as _c
from statgrid.sas.formats import dates as _d
from statgrid.sas.formats import morefmts as _more
from statgrid.sas.formats import morein as _morein
from statgrid.sas.formats import numeric as _n
from statgrid.sas.formats.numeric import InvalidData, best
from statgrid.sas.values import MISSING, pad

__all__ = ["FormatSpec", "InvalidData", "parse_spec", "format_value", "informat_value", "default_format",
           "best", "known_format", "FORMAT_DEFAULTS"]


@dataclass(frozen=True)
class FormatSpec:
    """A format or informat reference as written: name without '$' and upper case ('' for w.d and $w.),
    width and decimals (None when not written), char True for a '$' (character) format."""
    name: str
    width: int | None = None
    decimals: int | None = None
    char: bool = False

    @property
    def text(self) -> str:
        """Back to SAS's spelling: 'COMMA10.2', '$CHAR8.', 'BEST.', '8.2'."""
        w = "" if self.width is None else str(self.width)
        d = "" if self.decimals is None else str(self.decimals)
        return f"{'$' if self.char else ''}{self.name}{w}.{d}"

    def __str__(self) -> str:
        return self.text


_SPEC_RE = re.compile(r"^(\$?)([A-Za-z_](?:[A-Za-z0-9_]*[A-Za-z_])?)?(\d+)?\.(\d+)?$")


def parse_spec(text: str, line: int = 0, col: int = 0) -> FormatSpec:
    """'COMMA10.2' → FormatSpec('COMMA', 10, 2, False); '$CHAR8.' → ('CHAR', 8, None, True);
    '8.' → ('', 8, None, False); 'mmddyy10.' → ('MMDDYY', 10). The trailing period is required
    (without it SAS reads a variable name)."""
    t = str(text).strip()
    m = _SPEC_RE.match(t)
    if not m or (not m.group(2) and not m.group(3) and not m.group(1)):
        raise SasError("Invalid format or informat specification", line, col, t,
                       "a name ending in a period such as 8.2, BEST12., $CHAR10., DATE9. or a user format")
    spec = FormatSpec((m.group(2) or "").upper(), int(m.group(3)) if m.group(3) else None,
                      int(m.group(4)) if m.group(4) else None, bool(m.group(1)))
    if spec.width is not None and spec.width > 32767:     # SAS's widest (in)format: no value is longer
        name = ("$" if spec.char else "") + (spec.name or ("" if spec.char else "W.D"))
        raise SasError(f"Width specified for format {name} is invalid", line, col, t, "a width from 1 to 32767")
    return spec


# name → (default width, minimum width, maximum width) for numeric formats (SAS's documented ranges)
FORMAT_DEFAULTS: dict[str, tuple[int, int, int]] = {
    "": (12, 1, 32), "F": (12, 1, 32), "BEST": (12, 1, 32), "COMMA": (6, 1, 32), "DOLLAR": (6, 2, 32),
    "E": (12, 7, 32), "Z": (1, 1, 32), "PERCENT": (6, 4, 32), "DATE": (7, 5, 11), "DDMMYY": (8, 2, 10),
    "MMDDYY": (8, 2, 10), "YYMMDD": (8, 2, 10), "MONYY": (5, 5, 7), "WORDDATE": (18, 3, 32),
    "DATETIME": (16, 7, 40), "TIME": (8, 2, 20), "TOD": (8, 2, 26), "HHMM": (5, 2, 20), "COMMAX": (6, 1, 32),
}
CHAR_DEFAULTS: dict[str, tuple[int, int, int]] = {"": (1, 1, 32767), "CHAR": (8, 1, 32767)}
CHAR_DEFAULTS.update(_c.CHAR_RANGES)                # $QUOTE. $UPCASE. (formats/charfmt.py)


def _dec(spec: FormatSpec) -> int:
    return spec.decimals or 0


_NUMERIC_WRITERS: dict[str, Callable[[float, int, int, str], str]] = {
    "": lambda v, w, d, m: _n.w_d(v, w, d, m),
    "F": lambda v, w, d, m: _n.w_d(v, w, d, m),
    "BEST": lambda v, w, d, m: _n.best(v, w, m),
    "COMMA": lambda v, w, d, m: _n.comma(v, w, d, m),
    "DOLLAR": lambda v, w, d, m: _n.comma(v, w, d, m, prefix="$"),
    "E": lambda v, w, d, m: _n.e_format(v, w, None, m),
    "Z": lambda v, w, d, m: _n.z_format(v, w, d, m),
    "PERCENT": lambda v, w, d, m: _n.percent(v, w, d, m),
    "DATE": lambda v, w, d, m: _d.date_format(v, w, m),
    "DDMMYY": lambda v, w, d, m: _d.ddmmyy(v, w, m),
    "MMDDYY": lambda v, w, d, m: _d.mmddyy(v, w, m),
    "YYMMDD": lambda v, w, d, m: _d.yymmdd(v, w, m),
    "MONYY": lambda v, w, d, m: _d.monyy(v, w, m),
    "WORDDATE": lambda v, w, d, m: _d.worddate(v, w, m),
    "DATETIME": lambda v, w, d, m: _d.datetime_format(v, w, d, m),
    "TIME": lambda v, w, d, m: _d.time_format(v, w, d, m),
    "HHMM": lambda v, w, d, m: _d.hhmm(v, w, d, m),
    "TOD": lambda v, w, d, m: _d.tod(v, w, d, m),
}
_NUMERIC_WRITERS.update(_more.WRITERS)              # YYMMDDN8., WEEKDATE., E8601DT., COMMAX. … (morefmts.py)
FORMAT_DEFAULTS.update(_more.RANGES)


def known_format(spec: FormatSpec, catalog: Any = None, informat: bool = False) -> bool:
    """Whether `spec` names a built-in (in)format or a user one in `catalog`."""
    if informat:
        if spec.char:
            return spec.name in CHAR_INFORMATS or _user(spec, catalog, True) is not None
        return spec.name in _NUMERIC_READERS or _user(spec, catalog, True) is not None
    if spec.char:
        return spec.name in CHAR_DEFAULTS or _user(spec, catalog, False) is not None
    return spec.name in _NUMERIC_WRITERS or _user(spec, catalog, False) is not None


def builtin_name(name: str, char: bool, informat: bool = False) -> bool:
    """Whether `name` (no '$', upper case) is a SAS (in)format statgrid writes itself. A user format
    cannot have such a name (SAS 9.4 Base Procedures, PROC FORMAT VALUE: "The name of a user-defined
    format cannot be the same as the name of a format that is supplied by SAS"), so these names are
    never looked up in a catalog."""
    if char:
        return name in CHAR_DEFAULTS
    return name in (_NUMERIC_READERS if informat else _NUMERIC_WRITERS)


def _user(spec: FormatSpec, catalog: Any, informat: bool) -> Any:
    if catalog is None or not spec.name or builtin_name(spec.name, spec.char, informat):
        return None
    return catalog.get(("$" if spec.char else "") + spec.name, informat=informat)


MAX_WIDTH = 32767          # SAS's widest format (and longest character value)


def _bad_width(spec: FormatSpec, lo: int, hi: int) -> SasError:
    # SAS: "ERROR 29-185: Width specified for format DATE is invalid."
    name = ("$" if spec.char else "") + (spec.name or ("" if spec.char else "W.D"))
    return SasError(f"Width specified for format {name} is invalid", 0, 0, spec.text, f"a width from {lo} to {hi}")


def not_found(spec: FormatSpec, informat: bool = False, line: int = 0, col: int = 0) -> SasError:
    """SAS: "ERROR 48-59: The format $SEXF was not found or could not be loaded." """
    kind = "informat" if informat else "format"
    name = ("$" if spec.char else "") + spec.name
    return SasError(f"The {kind} {name} was not found or could not be loaded", line, col, spec.text,
                    f"a SAS {kind} or one defined by PROC FORMAT in a library on FMTSEARCH=")


def format_value(value: Any, spec: FormatSpec | str, catalog: Any = None, missing: str = ".") -> str:
    """`value` (float or str) written with `spec`: exactly w characters (numeric formats right-aligned,
    character formats left-aligned). `missing` is the MISSING= option's character. A numeric value with
    a character format (or the reverse) is written with the default format of its type, as SAS does
    when it finds a format of the other type (with a NOTE the caller may write)."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    user = _user(spec, catalog, False)
    if user is not None:
        if spec.width is not None and not 1 <= spec.width <= MAX_WIDTH:
            raise _bad_width(spec, 1, MAX_WIDTH)
        return user.format(value, spec.width, catalog=catalog, missing=missing)
    if isinstance(value, str):
        if not spec.char:
            if spec.name in _NUMERIC_WRITERS or spec.name == "":
                spec = FormatSpec("", spec.width, None, True)
            else:
                raise not_found(spec)
        if spec.name not in CHAR_DEFAULTS:
            raise not_found(spec)
        if spec.width is not None and not 1 <= spec.width <= MAX_WIDTH:
            raise _bad_width(spec, 1, MAX_WIDTH)
        if spec.name in _c.CHAR_WRITERS:
            return _c.CHAR_WRITERS[spec.name](value, spec.width)
        w = spec.width if spec.width is not None else min(len(value), MAX_WIDTH) or 1
        return pad(value, w)
    if value is None:
        value = MISSING
    if spec.char:
        if spec.name not in CHAR_DEFAULTS:
            raise not_found(spec)
        if spec.width is not None and not 1 <= spec.width <= MAX_WIDTH:
            raise _bad_width(spec, 1, MAX_WIDTH)
        spec = FormatSpec("BEST", spec.width, None, False)
    writer = _NUMERIC_WRITERS.get(spec.name)
    if writer is None:
        raise not_found(spec)
    dflt, lo, hi = FORMAT_DEFAULTS.get(spec.name, (12, 1, 32))
    w = spec.width if spec.width is not None else dflt
    if not lo <= w <= hi:
        raise _bad_width(spec, lo, hi)
    v = value if isinstance(value, float) else float(value)
    try:
        return writer(v, w, min(_dec(spec), 31), missing)
    except (ArithmeticError, ValueError):
        return _n.stars(w)        # a value no SAS number can be (infinite, beyond the largest double)


def default_format(value_or_type: Any = 0.0, length: int | None = None) -> FormatSpec:
    """SAS's default: BEST12. for a number, $w. (w = the variable's length) for a character value.
    Give a value or 'num'/'char' (and the length for characters)."""
    if value_or_type == "char" or isinstance(value_or_type, str) and value_or_type != "num":
        w = length if length is not None else (len(value_or_type) if value_or_type != "char" else 8)
        return FormatSpec("", max(w, 1), None, True)
    return FormatSpec("BEST", 12, None, False)


# -- informats -----------------------------------------------------------------------------------------
def _yc(yearcutoff: int | None) -> int:
    return 1926 if yearcutoff is None else yearcutoff


_NUMERIC_READERS: dict[str, Callable[[str, int, int], float]] = {
    "": lambda t, d, y: _n.read_number(t, d),
    "F": lambda t, d, y: _n.read_number(t, d),
    "BEST": lambda t, d, y: _n.read_number(t, d),
    "D": lambda t, d, y: _n.read_number(t, d),
    "E": lambda t, d, y: _n.read_number(t, d),
    "COMMA": lambda t, d, y: _n.read_comma(t, d),
    "DOLLAR": lambda t, d, y: _n.read_comma(t, d),
    "PERCENT": lambda t, d, y: _read_percent(t, d),
    "DATE": lambda t, d, y: _d.read_date(t, y),
    "DDMMYY": lambda t, d, y: _d.read_dmy(t, "dmy", y),
    "MMDDYY": lambda t, d, y: _d.read_dmy(t, "mdy", y),
    "YYMMDD": lambda t, d, y: _d.read_dmy(t, "ymd", y),
    "DATETIME": lambda t, d, y: _d.read_datetime(t, y),
    "TIME": lambda t, d, y: _d.read_time(t),
    "ANYDTDTE": lambda t, d, y: _d.read_anydate(t, y),
}
INFORMAT_DEFAULTS: dict[str, int] = {"": 12, "F": 12, "BEST": 12, "D": 12, "E": 12, "COMMA": 12, "DOLLAR": 12,
                                     "PERCENT": 6, "DATE": 7, "DDMMYY": 6, "MMDDYY": 6, "YYMMDD": 6,
                                     "DATETIME": 18, "TIME": 8, "ANYDTDTE": 9}
_NUMERIC_READERS.update(_b.READERS)                # binary informats (formats/binary.py)
INFORMAT_DEFAULTS.update(_b.DEFAULTS)
_NUMERIC_READERS.update(_morein.READERS)           # E8601DA., MONYY., JULIAN., ANYDTDTM., COMMAX. … (morein.py)
INFORMAT_DEFAULTS.update(_morein.DEFAULTS)
CHAR_INFORMATS = ("", "CHAR", "EBCDIC", "UPCASE", "QUOTE")


def _read_percent(text: str, d: int) -> float:
    t = text.strip()
    v = _n.read_comma(t.replace("%", ""), d)
    return v / 100 if "%" in t and v == v else v


def informat_value(text: str, spec: FormatSpec | str, catalog: Any = None, yearcutoff: int | None = None,
                   whole: bool = False) -> Any:
    """Read `text` with informat `spec` → float (numeric informats) or str ($w. and $CHARw.: the
    first w characters; $w. removes leading blanks, $CHARw. keeps them; neither pads). The first w
    characters are read unless `whole` (list input reads the whole token). Raises InvalidData when the
    text is not valid for the informat (the caller writes SAS's NOTE and uses a missing value)."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    user = _user(spec, catalog, True)
    if user is not None:
        w = spec.width or user.default_width
        return user.read(text if whole or not w else text[:w], catalog=catalog)
    if spec.char:
        w = spec.width
        t = text if whole or w is None else text[:w]
        if spec.name == "":
            # $w. trims leading blanks and reads a single period as a blank (SAS 9.4 Formats and
            # Informats: $w. informat; $CHARw. does neither)
            t = t.lstrip(" ")
            return "" if t.rstrip(" ") == "." else t
        if spec.name == "CHAR":
            return t
        if spec.name == "EBCDIC":
            return _b.ebcdic(t if w is not None or whole else t[:1])
        if spec.name == "UPCASE":                  # $UPCASEw.: as $w., in upper case
            t = t.lstrip(" ")
            return "" if t.rstrip(" ") == "." else t.upper()
        if spec.name == "QUOTE":                   # $QUOTEw.: the value without its enclosing quotes
            t = t.strip(" ")
            if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
                t = t[1:-1].replace(t[0] * 2, t[0])
            return t
        raise not_found(spec, informat=True)
    reader = _NUMERIC_READERS.get(spec.name)
    if reader is None:
        raise not_found(spec, informat=True)
    w = spec.width if spec.width is not None else INFORMAT_DEFAULTS[spec.name]
    t = text if whole else text[:w]
    return reader(t, _dec(spec), _yc(yearcutoff))


def format_width(spec: FormatSpec | str, catalog: Any = None) -> int:
    """The width a format writes (the length of PUT()'s result)."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    if spec.width is not None:
        return spec.width
    user = _user(spec, catalog, False)
    if user is not None:
        return user.default_width
    if spec.char:
        return CHAR_DEFAULTS.get(spec.name, (8, 1, 1))[0]
    return FORMAT_DEFAULTS.get(spec.name, (12, 1, 1))[0]
