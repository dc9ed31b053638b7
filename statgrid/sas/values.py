"""SAS values in Python: what every part of the SAS front end (DATA step, functions, formats, PROCs,
the macro processor's %SYSFUNC) agrees on. Standard library only.

Numeric: a Python float. A missing value is a NaN: the ordinary missing `.` is `MISSING` (a plain
float NaN); the special missings `._` and `.A`–`.Z` are `SpecialMissing` instances (a float NaN that
carries its letter). Arithmetic on any missing gives a plain NaN, i.e. `.` — as SAS does. NaN never
compares in Python, so comparisons go through `num_key` (SAS's order: `._` < `.` < `.A` < … < `.Z` <
every number). In Parquet a missing is a NULL (the letter of a special missing is kept only while the
step runs; see README).

Character: a Python str holding the value padded with blanks to its variable's length, as the
program data vector does in SAS (`x||'c'` sees the blanks); written to Parquet with trailing blanks
removed and padded again when read. Comparisons pad the shorter side with blanks (`char_eq`,
`char_key`). A character missing is blanks.

Dates are days since 1960-01-01, times seconds since midnight, datetimes seconds since 1960-01-01
00:00:00 — numbers, as in SAS, with a format saying how to show them.
"""
from __future__ import annotations

import datetime as _dt
import math

MISSING = float("nan")
SAS_EPOCH = _dt.date(1960, 1, 1)
SAS_EPOCH_DT = _dt.datetime(1960, 1, 1)
SPECIAL_CODES = "_" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DEFAULT_CHAR_LENGTH = 8        # a character variable first seen without a length (SAS's rule for many cases)
MAX_CHAR_LENGTH = 32767
NUMERIC_LENGTH = 8


class SpecialMissing(float):
    """A special missing value `.A`–`.Z` or `._`: a NaN that remembers its letter."""
    __slots__ = ("code",)

    def __new__(cls, code: str):
        self = super().__new__(cls, "nan")
        self.code = code
        return self

    def __repr__(self) -> str:
        return f".{self.code}"

    def __reduce__(self):
        return (special_missing, (self.code,))


_SPECIAL = {c: SpecialMissing(c) for c in SPECIAL_CODES}


def special_missing(code: str) -> float:
    """The special missing `.code` (`code` one of _ A–Z, any case); '' or '.' gives the ordinary `.`."""
    if code in ("", "."):
        return MISSING
    return _SPECIAL[code.upper()]


def is_missing(x) -> bool:
    """SAS's MISSING(): a numeric NaN (any missing) or a character value of blanks only."""
    if isinstance(x, str):
        return x.strip(" ") == ""
    return x is None or x != x


def missing_code(x: float) -> str:
    """'' for a number, '.' for the ordinary missing, '_' or 'A'–'Z' for a special one."""
    if x == x:
        return ""
    return getattr(x, "code", ".")


def num_key(x: float) -> tuple[int, float]:
    """Sort/compare key in SAS's order: ._ < . < .A < … < .Z < numbers."""
    if x == x:
        return (28, x)
    code = getattr(x, "code", None)
    if code is None:
        return (1, 0.0)
    return (0, 0.0) if code == "_" else (2 + ord(code) - ord("A"), 0.0)


def num_lt(a: float, b: float) -> bool:
    return num_key(a) < num_key(b)


def num_eq(a: float, b: float) -> bool:
    return num_key(a) == num_key(b)


def pad(s: str, length: int) -> str:
    """`s` cut or padded with blanks to `length` characters (assignment to a character variable)."""
    n = len(s)
    return s if n == length else (s[:length] if n > length else s + " " * (length - n))


def char_key(s: str) -> str:
    """Compare key of a character value: trailing blanks do not count ('a' = 'a  ')."""
    return s.rstrip(" ")


def char_eq(a: str, b: str) -> bool:
    return a.rstrip(" ") == b.rstrip(" ")


def truth(x) -> bool:
    """SAS's truth of a value in IF/WHILE: a number that is neither 0 nor missing (characters are
    converted first by the caller, with SAS's NOTE)."""
    return x == x and x != 0


# -- dates ---------------------------------------------------------------------------------------------
def date_to_sas(d: _dt.date) -> float:
    """The SAS date of a Python date, in SAS's calendar (years divisible by 4000 have no 29 February)."""
    from statgrid.sas.formats.calendar import day_number
    return float(day_number(d.year, d.month, d.day))


def sas_to_date(days: float) -> _dt.date | None:
    if days != days or math.isinf(days):
        return None
    return SAS_EPOCH + _dt.timedelta(days=math.floor(days))


def datetime_to_sas(t: _dt.datetime) -> float:
    if t.tzinfo is not None:
        t = t.replace(tzinfo=None)
    delta = t - SAS_EPOCH_DT
    return delta.days * 86400.0 + delta.seconds + delta.microseconds / 1e6


def sas_to_datetime(seconds: float) -> _dt.datetime | None:
    if seconds != seconds or math.isinf(seconds):
        return None
    return SAS_EPOCH_DT + _dt.timedelta(seconds=seconds)
