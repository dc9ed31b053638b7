"""More SAS informats (SAS 9.4 Formats and Informats: Reference):

- E8601DAw./IS8601DAw. ('2021-07-05'), B8601DAw. ('20210705'); E8601DTw.d/IS8601DTw.d
  ('2021-07-05T13:04:05', seconds optional, fractions kept), B8601DTw.d ('20210705T130405'); E8601TMw.d
  ('13:04:05').
- MONYYw. ('JUL2021', 'jul21': the first day of the month), YYQw. ('2021Q3': the quarter's first day),
  JULIANw. ('21186', '2021186').
- ANYDTDTMw. (a datetime: DATETIME's forms, an ISO 8601 datetime, a date alone at midnight), ANYDTTMEw.
  (a time: TIME's forms, or a datetime's time part).
- COMMAXw.d / DOLLARXw.d (periods between groups, a decimal comma), NUMXw.d (a decimal comma), HEXw. (a
  hexadecimal integer), TRAILSGNw. ('12-' is -12), BZw.d (blanks read as zeros).
Each reader takes (text, d, yearcutoff) and returns a float or raises InvalidData; '' and '.' are missing.
"""
from __future__ import annotations

import math
import re

from statgrid.sas.formats.dates import (_MONTH_NUM, _make_date, expand_year, read_anydate, read_datetime,
                                        read_time)
from statgrid.sas.formats.numeric import InvalidData, read_comma, read_number
from statgrid.sas.values import MISSING

_ISO_DATE = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})$")
_ISO_DT = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})T(\d{2}):?(\d{2})(?::?(\d{2}(?:\.\d*)?))?$")
_ISO_TM = re.compile(r"^(\d{2}):?(\d{2})(?::?(\d{2}(?:\.\d*)?))?$")


def _blank(t: str) -> bool:
    return t in ("", ".")


def iso_date(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    m = _ISO_DATE.match(t)
    if not m:
        raise InvalidData(text)
    return _make_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


def iso_datetime(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    m = _ISO_DT.match(t)
    if not m:
        raise InvalidData(text)
    h, mi, s = int(m.group(4)), int(m.group(5)), float(m.group(6) or 0)
    if h > 24 or mi > 59 or s >= 61:
        raise InvalidData(text)
    return _make_date(int(m.group(1)), int(m.group(2)), int(m.group(3))) * 86400 + h * 3600 + mi * 60 + s


def iso_time(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    m = _ISO_TM.match(t)
    if not m:
        raise InvalidData(text)
    h, mi, s = int(m.group(1)), int(m.group(2)), float(m.group(3) or 0)
    if h > 24 or mi > 59 or s >= 61:
        raise InvalidData(text)
    return h * 3600 + mi * 60 + s


def monyy(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    m = re.match(r"^([A-Za-z]{3})[-/ .]?(\d{2}|\d{4})$", t)
    if not m or m.group(1).upper() not in _MONTH_NUM:
        raise InvalidData(text)
    return _make_date(expand_year(int(m.group(2)), len(m.group(2)), y), _MONTH_NUM[m.group(1).upper()], 1)


def yyq(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    m = re.match(r"^(\d{2}|\d{4})[Qq-]?([1-4])$", t)
    if not m:
        raise InvalidData(text)
    return _make_date(expand_year(int(m.group(1)), len(m.group(1)), y), 3 * int(m.group(2)) - 2, 1)


def julian(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    if not t.isdigit() or len(t) not in (5, 7):
        raise InvalidData(text)
    year = expand_year(int(t[:-3]), len(t) - 3, y)
    doy = int(t[-3:])
    first = _make_date(year, 1, 1)
    last = _make_date(year, 12, 31)
    if not 1 <= doy <= last - first + 1:
        raise InvalidData(text)
    return first + doy - 1


def any_datetime(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    for reader in (lambda s: iso_datetime(s.replace(" ", "T", 1)), lambda s: read_datetime(s, y)):
        try:
            return reader(t)
        except (InvalidData, ValueError):
            pass
    return read_anydate(t, y) * 86400


def any_time(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    try:
        return read_time(t)
    except InvalidData:
        v = any_datetime(t, d, y)
        return v - math.floor(v / 86400) * 86400


def commax(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    if "," in t and "." in t and t.rfind(".") > t.rfind(","):
        raise InvalidData(text)
    return read_comma(t.replace(".", "").replace(",", "."), d)


def numx(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if "." in t:
        raise InvalidData(text)
    return read_number(t.replace(",", "."), d)


def hexnum(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if _blank(t):
        return MISSING
    try:
        return float(int(t, 16))
    except ValueError:
        raise InvalidData(text) from None


def trailsgn(text: str, d: int = 0, y: int = 1926) -> float:
    t = text.strip()
    if t.endswith("-"):
        v = read_comma(t[:-1], d)
        return -v if v == v else v
    return read_comma(t.rstrip("+"), d)


def bz(text: str, d: int = 0, y: int = 1926) -> float:
    if not text.strip():
        return 0.0
    core = text.strip()
    return read_number(text.replace(" ", "0") if core and core[0] not in "+-" else core, d)


READERS = {
    "E8601DA": iso_date, "IS8601DA": iso_date, "B8601DA": iso_date,
    "E8601DT": iso_datetime, "IS8601DT": iso_datetime, "B8601DT": iso_datetime,
    "E8601TM": iso_time, "IS8601TM": iso_time,
    "MONYY": monyy, "YYQ": yyq, "JULIAN": julian, "ANYDTDTM": any_datetime, "ANYDTTME": any_time,
    "COMMAX": commax, "DOLLARX": commax, "NUMX": numx, "HEX": hexnum, "TRAILSGN": trailsgn, "BZ": bz,
}
DEFAULTS = {"E8601DA": 10, "IS8601DA": 10, "B8601DA": 8, "E8601DT": 19, "IS8601DT": 19, "B8601DT": 19,
            "E8601TM": 8, "IS8601TM": 8, "MONYY": 5, "YYQ": 6, "JULIAN": 5, "ANYDTDTM": 19, "ANYDTTME": 8,
            "COMMAX": 1, "DOLLARX": 1, "NUMX": 12, "HEX": 8, "TRAILSGN": 6, "BZ": 1}
