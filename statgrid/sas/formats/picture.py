"""How one PICTURE of PROC FORMAT writes a number (SAS 9.4 Base Procedures, PROC FORMAT: PICTURE statement
and "Building a Picture Format: Step by Step").

A numeric picture ('00,000,000.00', '009.9%') is filled this way:
  1. the absolute value of the number is taken (a negative range shows its sign with PREFIX='-');
  2. it is multiplied by MULT= (default 10**n, n = the digit selectors after the decimal point);
  3. the product is truncated to an integer (rounded to the nearest one with the format's ROUND option);
  4. the integer becomes a string of as many digits as the picture has digit selectors, with leading zeros
     (a number with more digits than selectors loses its leftmost ones, as SAS's picture does);
  5. the digits replace the digit selectors from the right; a leading zero under a `0` selector is not
     printed, nor is a message character to the left of it, until the first nonzero digit or the first
     nonzero selector (1-9), from which on every digit prints;
  6. PREFIX= goes just before the first printed character, and FILL= (default blank) fills the picture's
     leading positions left.
A picture with no digit selectors (or NOEDIT) is a message, written as it is. Characters before the first
digit selector are dropped: SAS requires a digit selector first ("If the picture format contains digit
selectors, then a digit selector must be the first character in the picture"); PREFIX= is the way to a
leading message.

DATATYPE=DATE|TIME|DATETIME pictures hold directives instead: %Y (year, 4 digits) %y (2 digits) %m %d %j
%H %I %M %S %w %U (numbers; no leading zero unless written %0m, %0d …) %B %b %A %a (month and weekday
names) %p (AM/PM) %% (a percent sign); everything else — %s fractional seconds and %n included, which are
not built — is written as it is.
"""
from __future__ import annotations

import datetime as _dt
import math
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, InvalidOperation

from statgrid.sas.formats.dates import MONTH_NAMES

DATATYPES = ("DATE", "TIME", "DATETIME")
_EPOCH = _dt.date(1960, 1, 1)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _selector(ch: str) -> bool:
    return "0" <= ch <= "9"


def default_mult(picture: str) -> float:
    """10**n, n = the digit selectors after the picture's decimal point: the last '.' with a digit selector on
    both sides (SAS: "the number of digit selectors to the right of the decimal character")."""
    for i in range(len(picture) - 2, 0, -1):
        if picture[i] == "." and _selector(picture[i - 1]) and _selector(picture[i + 1]):
            return float(10 ** sum(1 for ch in picture[i + 1:] if _selector(ch)))
    return 1.0


def _digits(value: float, mult: float, rounding: bool) -> int | None:
    """|value| * MULT truncated (or rounded): the integer the digit selectors show. Exact decimal arithmetic on
    the shortest text of each number, so 1259.45 * 100 is 125945, not 125944.99999999999 truncated."""
    try:
        x = abs(Decimal(repr(float(value)))) * Decimal(repr(float(mult)))
        return int(x.quantize(Decimal(1), rounding=ROUND_HALF_UP if rounding else ROUND_DOWN))
    except (InvalidOperation, ValueError, OverflowError):
        return None


def fill_number(value: float, picture: str, mult: float | None, prefix: str, fill: str, rounding: bool) -> str:
    """One numeric picture filled with `value` (steps 1-6 above): the text, as long as the picture plus any
    PREFIX= that found no blank to take, with no padding beyond the picture."""
    first = next((i for i, ch in enumerate(picture) if _selector(ch)), None)
    if first is None:
        return picture                                   # a message: no digit selectors
    pic = picture[first:]
    n_sel = sum(1 for ch in pic if _selector(ch))
    m = default_mult(pic) if mult is None else mult
    number = _digits(value, m, rounding)
    if number is None or math.isinf(value):
        return "*" * len(pic)
    text = str(number).rjust(n_sel, "0")[-n_sel:]       # the rightmost n_sel digits
    out = []
    k = 0
    printing = False
    for ch in pic:
        if _selector(ch):
            d = text[k]
            k += 1
            if not printing and (d != "0" or ch != "0"):
                printing = True
            out.append(d if printing else " ")
        else:
            out.append(ch if printing else " ")
    body = "".join(out)
    lead = len(body) - len(body.lstrip(" "))
    sig = body[lead:]
    if prefix:
        need = len(prefix)
        sig = prefix + sig
        lead = max(0, lead - need)
    return (fill or " ")[0] * lead + sig


def _date_parts(value: float, datatype: str) -> tuple[_dt.date | None, float | None]:
    """(the date, the seconds into its day) of a SAS date, time or datetime value."""
    if datatype == "TIME":
        return None, value
    if datatype == "DATE":
        days, secs = math.floor(value), None
    else:
        days, secs = math.floor(value / 86400.0), value - math.floor(value / 86400.0) * 86400.0
    try:
        return _EPOCH + _dt.timedelta(days=days), secs
    except OverflowError:
        raise ValueError(value) from None


def fill_datetime(value: float, picture: str, datatype: str) -> str:
    """A DATATYPE= picture's directives replaced by the parts of `value` (a SAS date: days since 1 Jan 1960; a
    time: seconds since midnight; a datetime: seconds since 1 Jan 1960 00:00). ValueError when `value` is not
    a date SAS can write (the caller writes asterisks)."""
    if value != value or math.isinf(value):
        raise ValueError(value)
    d, secs = _date_parts(value, datatype)
    hms = None
    if secs is not None:
        s = int(math.floor(secs + 1e-9))
        hms = (s // 3600, s // 60 % 60, s % 60) if datatype == "TIME" else (s // 3600 % 24, s // 60 % 60, s % 60)
    out = []
    i, n = 0, len(picture)
    while i < n:
        ch = picture[i]
        if ch != "%" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        j = i + 1
        zero = picture[j] == "0"
        if zero and j + 1 < n:
            j += 1
        code = picture[j]
        text = _directive(code, d, hms, zero)
        if text is None:
            out.append(picture[i:j + 1])                 # not a directive: as written
        else:
            out.append(text)
        i = j + 1
    return "".join(out)


def _directive(code: str, d: _dt.date | None, hms: tuple | None, zero: bool) -> str | None:
    def num(v: int, width: int = 2) -> str:
        return str(v).rjust(width, "0") if zero else str(v)
    if code == "%":
        return "%"
    if code in "YymdjBbAawU":
        if d is None:
            return ""
        if code == "Y":
            return str(d.year)
        if code == "y":
            return num(d.year % 100)
        if code == "m":
            return num(d.month)
        if code == "d":
            return num(d.day)
        if code == "j":
            return num(d.timetuple().tm_yday, 3)
        if code == "B":
            return MONTH_NAMES[d.month - 1]
        if code == "b":
            return MONTH_NAMES[d.month - 1][:3]
        if code == "A":
            return _WEEKDAYS[d.weekday()]
        if code == "a":
            return _WEEKDAYS[d.weekday()][:3]
        if code == "U":                                  # week of the year, Sunday its first day (0-53)
            return num(int(d.strftime("%U")))
        return str(d.isoweekday() % 7 + 1)               # %w: 1 is Sunday, as SAS's WEEKDAY()
    if code in "HIMSp":
        if hms is None:
            return ""
        h, mi, s = hms
        if code == "H":
            return num(h)
        if code == "I":
            return num(h % 12 or 12)
        if code == "M":
            return num(mi)
        if code == "S":
            return num(s)
        return "AM" if h % 24 < 12 else "PM"
    return None
