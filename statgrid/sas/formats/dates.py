"""SAS's date, time and datetime formats and informats (SAS 9.4 Formats and Informats: Reference):
DATEw. (DATE9.), DDMMYYw., MMDDYYw., YYMMDDw., MONYYw., WORDDATEw., DATETIMEw.d, TIMEw.d, TODw.d, HHMMw.d;
informats DATEw., DDMMYYw., MMDDYYw., YYMMDDw., DATETIMEw., TIMEw., ANYDTDTEw.

Values are SAS numbers (days since 1960-01-01, seconds since midnight or since 1960-01-01 00:00:00).
A value that does not fit in w is written as asterisks; missing as the MISSING= character.
Two-digit years are read with YEARCUTOFF= (default 1926: '26'–'99' → 1926–1999, '00'–'25' → 2000–2025).
Standard library only.
"""
from __future__ import annotations

import math
import re

from statgrid.sas.formats import calendar as _cal
from statgrid.sas.formats.numeric import InvalidData, missing_text, stars
from statgrid.sas.values import MISSING

MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December")
_MONTH_NUM = {m: i + 1 for i, m in enumerate(MONTHS)}



def _date(v: float) -> _cal.YMD | None:
    """Year, month, day of SAS date v in SAS's calendar (1582 to 20000 A.D.; no 29 February in years
    divisible by 4000 — Python's date would put day numbers past 28FEB4000 one day off, and stop at 9999)."""
    if v != v or math.isinf(v):
        return None
    try:
        return _cal.ymd(v)
    except ValueError:
        return None


def _fit(text: str, w: int) -> str:
    return text.rjust(w) if len(text) <= w else stars(w)


def _dated(v: float, w: int, missing: str, write) -> str:
    """A date format's value: missing as its MISSING= text, a value beyond SAS's dates (1582 to 20000
    A.D.) as asterisks, a date as write(date) writes it."""
    if v != v:
        return missing_text(v, missing).rjust(w)
    d = _date(v)
    return stars(w) if d is None else write(d)


def date_format(v: float, w: int = 7, missing: str = ".") -> str:
    """DATEw.: 5 'ddmmm', 7 'ddmmmyy', 9 'ddmmmyyyy', 11 'dd-mmm-yyyy' (right-aligned in w)."""
    def write(d: _cal.YMD) -> str:
        dd, mon, yyyy = f"{d.day:02d}", MONTHS[d.month - 1], f"{d.year:04d}"
        if w >= 11:
            text = f"{dd}-{mon}-{yyyy}"
        elif w >= 9:
            text = dd + mon + yyyy
        elif w >= 7:
            text = dd + mon + yyyy[2:]
        elif w >= 5:
            text = dd + mon
        else:
            return stars(w)
        return _fit(text, w)
    return _dated(v, w, missing, write)


def _dmy(v: float, w: int, order: str, missing: str, sep: str = "/") -> str:
    """DDMMYYw. ('dmy'), MMDDYYw. ('mdy'), YYMMDDw. ('ymd', '-' separated): w 2, 4, 5, 6, 8, 10 as
    SAS documents (w=6 or 7 without separators, 8 with, 10 with a four-digit year)."""
    def write(d: _cal.YMD) -> str:
        year4 = w >= 10 or (w == 8 and False)
        parts = {"d": f"{d.day:02d}", "m": f"{d.month:02d}",
                 "y": f"{d.year:04d}" if year4 else f"{d.year % 100:02d}"}
        if w == 2:
            return parts[order[0]]
        if w == 3:
            return parts[order[0]] + " "
        if w in (4, 5):
            # the first two fields, with a separator when there is room
            return (parts[order[0]] + (sep if w == 5 else "") + parts[order[1]])
        if w in (6, 7):
            return (parts[order[0]] + parts[order[1]] + parts[order[2]]).rjust(w)
        if w in (8, 9):
            return sep.join(parts[c] for c in order).rjust(w)
        return sep.join(parts[c] for c in order).rjust(w)
    return _dated(v, w, missing, write)


def ddmmyy(v: float, w: int = 8, missing: str = ".") -> str:
    return _dmy(v, w, "dmy", missing)


def mmddyy(v: float, w: int = 8, missing: str = ".") -> str:
    return _dmy(v, w, "mdy", missing)


def yymmdd(v: float, w: int = 8, missing: str = ".") -> str:
    return _dmy(v, w, "ymd", missing, sep="-")


def monyy(v: float, w: int = 5, missing: str = ".") -> str:
    """MONYYw.: 5 'JAN20', 7 'JAN2020'."""
    def write(d: _cal.YMD) -> str:
        if w < 5:
            return stars(w)
        mon = MONTHS[d.month - 1]
        return _fit(mon + (f"{d.year:04d}" if w >= 7 else f"{d.year % 100:02d}"), w)
    return _dated(v, w, missing, write)


def worddate(v: float, w: int = 18, missing: str = ".") -> str:
    """WORDDATEw.: 'January 1, 2020', right-aligned; narrower widths abbreviate the month."""
    def write(d: _cal.YMD) -> str:
        full = f"{MONTH_NAMES[d.month - 1]} {d.day}, {d.year}"
        if len(full) <= w:
            return full.rjust(w)
        short = f"{MONTH_NAMES[d.month - 1][:3]} {d.day}, {d.year}"
        if len(short) <= w:
            return short.rjust(w)
        return _fit(MONTH_NAMES[d.month - 1][:3], w) if w >= 3 else stars(w)
    return _dated(v, w, missing, write)


def _hms(seconds: float, d: int) -> tuple[str, int, int, str]:
    """(sign, hours, minutes, seconds text with d decimals) of a time in seconds."""
    sign = "-" if seconds < 0 else ""
    s = abs(seconds)
    scale = 10 ** d
    total = math.floor(s * scale + 0.5) if d else math.floor(s + 1e-9)   # TIME truncates whole seconds
    whole, frac = divmod(total, scale)
    h, rem = divmod(whole, 3600)
    m, sec = divmod(rem, 60)
    sec_text = f"{sec:02d}" + (f".{frac:0{d}d}" if d else "")
    return sign, int(h), int(m), sec_text


def time_format(v: float, w: int = 8, d: int = 0, missing: str = ".") -> str:
    """TIMEw.d: 'h:mm:ss' (hours may pass 24), right-aligned; w < 8 drops the seconds ('hh:mm')."""
    if v != v:
        return missing_text(v, missing).rjust(w)
    sign, h, m, sec = _hms(v, d if w >= 10 else 0)
    if w >= 8:
        text = f"{sign}{h}:{m:02d}:{sec}"
        if len(text) > w:
            text = f"{sign}{h}:{m:02d}"
    else:
        text = f"{sign}{h}:{m:02d}"
    return _fit(text, w)


def tod(v: float, w: int = 8, d: int = 0, missing: str = ".") -> str:
    """TODw.d: the time of day 'hh:mm:ss' with a leading zero (a datetime's time part: the value modulo
    86,400 seconds); w < 8 drops the seconds ('hh:mm')."""
    if v != v:
        return missing_text(v, missing).rjust(w)
    _, h, m, sec = _hms(math.fmod(v, 86400.0) % 86400.0, d if w >= 10 else 0)
    text = f"{h:02d}:{m:02d}:{sec}" if w >= 8 else f"{h:02d}:{m:02d}"
    if len(text) > w:
        text = f"{h:02d}:{m:02d}"
    return _fit(text, w)


def hhmm(v: float, w: int = 5, d: int = 0, missing: str = ".") -> str:
    """HHMMw.d: hours and minutes, rounded to the nearest minute ('9:05' → ' 9:05')."""
    if v != v:
        return missing_text(v, missing).rjust(w)
    minutes = abs(v) / 60
    if d:
        whole = math.floor(minutes)
        frac = minutes - whole
        h, m = divmod(whole, 60)
        text = f"{'-' if v < 0 else ''}{int(h)}:{int(m):02d}" + f"{frac:.{d}f}"[1:]
    else:
        total = math.floor(minutes + 0.5)
        h, m = divmod(total, 60)
        text = f"{'-' if v < 0 else ''}{int(h)}:{int(m):02d}"
    return _fit(text, w)


def datetime_format(v: float, w: int = 16, d: int = 0, missing: str = ".") -> str:
    """DATETIMEw.d: 'ddmmmyy:hh:mm:ss' (w 16); w >= 18 gives a four-digit year, d decimals of the
    seconds need w >= 20 + d; 7 'ddmmmyy', 10 '…:hh', 13 '…:hh:mm'."""
    if v != v:
        return missing_text(v, missing).rjust(w)
    days = math.floor(v / 86400)
    d_ = _date(days)
    if d_ is None:
        return stars(w)
    secs = v - days * 86400
    use_d = d if d and w >= 19 + d + 1 else 0
    _, h, m, sec = _hms(secs, use_d)
    if h >= 24:                                  # rounding the seconds reached midnight
        d_ = _date(days + 1)
        if d_ is None:
            return stars(w)
        h -= 24
    year = f"{d_.year:04d}" if w >= 18 else f"{d_.year % 100:02d}"
    date = f"{d_.day:02d}{MONTHS[d_.month - 1]}{year}"
    if w < 7:
        return stars(w)
    if w < 10:
        text = date
    elif w < 13:
        text = f"{date}:{h:02d}"
    elif w < 16:
        text = f"{date}:{h:02d}:{m:02d}"
    else:
        text = f"{date}:{h:02d}:{m:02d}:{sec}"
    return _fit(text, w)


# -- informats -----------------------------------------------------------------------------------------
def expand_year(y: int, digits: int, yearcutoff: int = 1926) -> int:
    """A two-digit year in the 100-year window starting at YEARCUTOFF= (SAS System Options)."""
    if digits > 2:
        return y
    century = yearcutoff - yearcutoff % 100
    year = century + y
    return year if year >= yearcutoff else year + 100


def _make_date(y: int, m: int, d: int) -> float:
    try:
        return float(_cal.day_number(y, m, d))
    except ValueError:
        raise InvalidData(f"{y}-{m}-{d}") from None


_DATE_RE = re.compile(r"^(\d{1,2})[-/ .]?([A-Za-z]{3})[-/ .]?(\d{2}|\d{4,5})$")


def read_date(text: str, yearcutoff: int = 1926) -> float:
    """DATEw. informat: ddmmmyy or ddmmmyyyy, with or without blanks, dashes, slashes or periods
    between the parts ('01JAN2020', '1-jan-20')."""
    t = text.strip()
    if t in ("", "."):
        return MISSING
    m = _DATE_RE.match(t)
    if not m or m.group(2).upper() not in _MONTH_NUM:
        raise InvalidData(text)
    y = expand_year(int(m.group(3)), len(m.group(3)), yearcutoff)
    return _make_date(y, _MONTH_NUM[m.group(2).upper()], int(m.group(1)))


def _split_numeric_date(t: str) -> list[str] | None:
    parts = re.split(r"[-/ .:]", t)
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        return parts
    if t.isdigit() and len(t) in (6, 8):
        return None
    return []


def read_dmy(text: str, order: str, yearcutoff: int = 1926) -> float:
    """DDMMYYw. ('dmy'), MMDDYYw. ('mdy'), YYMMDDw. ('ymd'): with separators ('01/02/2020',
    '2020-01-02') or without ('010220', '01022020', '20200102')."""
    t = text.strip()
    if t in ("", "."):
        return MISSING
    parts = _split_numeric_date(t)
    if parts is None:                  # digits only
        if order == "ymd":
            parts = [t[:4], t[4:6], t[6:]] if len(t) == 8 else [t[:2], t[2:4], t[4:]]
        else:
            parts = [t[:2], t[2:4], t[4:]]
    if not parts:
        raise InvalidData(text)
    fields = dict(zip(order, parts))
    y = expand_year(int(fields["y"]), len(fields["y"]), yearcutoff)
    return _make_date(y, int(fields["m"]), int(fields["d"]))


_TIME_RE = re.compile(r"^(-?)(\d+)(?::(\d{1,2}))?(?::(\d{1,2}(?:\.\d*)?))?\s*([AaPp][Mm])?$")


def read_time(text: str) -> float:
    """TIMEw. informat: 'hh:mm:ss.ss', 'hh:mm', 'hh' with optional AM/PM → seconds."""
    t = text.strip()
    if t in ("", "."):
        return MISSING
    m = _TIME_RE.match(t)
    if not m:
        raise InvalidData(text)
    h = int(m.group(2))
    mi = int(m.group(3) or 0)
    s = float(m.group(4) or 0)
    if mi > 59 or s >= 61:
        raise InvalidData(text)
    ampm = (m.group(5) or "").upper()
    if ampm == "PM" and h < 12:
        h += 12
    elif ampm == "AM" and h == 12:
        h = 0
    v = h * 3600 + mi * 60 + s
    return -v if m.group(1) else v


_DT_RE = re.compile(r"^(\d{1,2}[-/ .]?[A-Za-z]{3}[-/ .]?(?:\d{4}|\d{2}))[:/ T]+(.*)$")


def read_datetime(text: str, yearcutoff: int = 1926) -> float:
    """DATETIMEw. informat: 'ddmmmyy:hh:mm:ss' or 'ddmmmyyyy hh:mm:ss.ss' (the time may be partial)."""
    t = text.strip()
    if t in ("", "."):
        return MISSING
    m = _DT_RE.match(t)
    if m:
        day = read_date(m.group(1), yearcutoff)
        return day * 86400 + read_time(m.group(2))
    return read_date(t, yearcutoff) * 86400


def read_anydate(text: str, yearcutoff: int = 1926) -> float:
    """ANYDTDTEw.: a date in any of the forms above (DATE, YYMMDD with a four-digit year first, MMDDYY
    — SAS's default DATESTYLE=MDY for ambiguous numeric dates — or a datetime's date part)."""
    t = text.strip()
    if t in ("", "."):
        return MISSING
    for reader in (lambda s: read_date(s, yearcutoff),
                   lambda s: math.floor(read_datetime(s, yearcutoff) / 86400)):
        try:
            return reader(t)
        except InvalidData:
            pass
    if re.match(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}$", t) or (t.isdigit() and len(t) == 8 and int(t[:4]) > 1582
                                                         and int(t[4:6]) <= 12):
        return read_dmy(t, "ymd", yearcutoff)
    return read_dmy(t, "mdy", yearcutoff)
