"""More date functions (SAS 9.4 Functions and CALL Routines): YRDIF DATDIF (SAS's day-count bases), WEEK,
DATEJUL JULDATE JULDATE7, NWKDOM, HOLIDAY.

Day counts: ACT/ACT counts the days from start (included) to end (excluded) that fall in 365-day years
/ 365 plus those in 366-day years / 366; ACT/360 and ACT/365 the days / 360, / 365; 30/360 (alias 360)
360*(Y2-Y1) + 30*(M2-M1) + (D2-D1) after SAS's end-of-month rules (the last day of February counts as
the 30th; a 31st as the 30th; D2 = 31 with D1 >= 30 as the 30th); AGE (YRDIF's default) the whole years
completed plus the part of the current year of age gone (days since the last birthday / days from it
to the next; a 29 February birthday falls on 28 February in other years).
"""
from __future__ import annotations

import datetime as _dt
import math

from statgrid.sas.formats import calendar as _cal
from statgrid.sas.functions.character import to_char
from statgrid.sas.functions.dates import _yearcutoff
from statgrid.sas.functions.numeric import to_num
from statgrid.sas.functions.registry import function, invalid_argument
from statgrid.sas.values import MISSING

def _date(v: float) -> _dt.date:
    """SAS date v as a Python date, by SAS's calendar (no 29FEB4000: Python's ordinals are a day off past it);
    ValueError past 9999 (Python's last year) or outside SAS's dates."""
    return _dt.date(*_cal.ymd(v))


def _sas(d: _dt.date) -> float:
    return float(_cal.day_number(d.year, d.month, d.day))


def _basis(text) -> str | None:
    b = to_char(text).strip().upper().replace(" ", "")
    return {"30/360": "30/360", "360": "30/360", "ACT/ACT": "ACT/ACT", "ACTUAL": "ACT/ACT", "ACT/360": "ACT/360",
            "ACT/365": "ACT/365", "AGE": "AGE"}.get(b)


def days_30_360(a: _dt.date, b: _dt.date) -> int:
    """SAS's 30/360 day count from a to b (the rules of DATDIF's "Method of Calculation")."""
    d1, d2 = a.day, b.day
    feb_end = lambda d: d.month == 2 and d.day == _cal.month_days(d.year, 2)   # noqa: E731
    if feb_end(a) and feb_end(b):
        d2 = 30
    if feb_end(a):
        d1 = 30
    if d2 == 31 and d1 >= 30:
        d2 = 30
    if d1 == 31:
        d1 = 30
    return 360 * (b.year - a.year) + 30 * (b.month - a.month) + (d2 - d1)


def _act_act(a: _dt.date, b: _dt.date) -> float:
    sign = 1.0
    if b < a:
        a, b, sign = b, a, -1.0
    total = 0.0
    d = a
    while d < b:
        nxt = min(_dt.date(d.year + 1, 1, 1), b)
        total += (nxt - d).days / (366 if _cal.is_leap(d.year) else 365)
        d = nxt
    return sign * total


def _anniversary(birth: _dt.date, year: int) -> _dt.date:
    if birth.month == 2 and birth.day == 29 and not _cal.is_leap(year):
        return _dt.date(year, 2, 28)
    return _dt.date(year, birth.month, birth.day)


def _age(a: _dt.date, b: _dt.date) -> float:
    if b < a:
        return -_age(b, a)
    n = b.year - a.year
    if _anniversary(a, b.year) > b:
        n -= 1
    last = _anniversary(a, a.year + n)
    nxt = _anniversary(a, a.year + n + 1)
    return n + (b - last).days / (nxt - last).days


@function("YRDIF", 2, 3, args="nnc")
def f_yrdif(rt, start, end, basis=None):
    """The years from start to end by the day-count basis (default AGE)."""
    s, e = to_num(start), to_num(end)
    b = "AGE" if basis is None else _basis(basis)
    if b is None:
        return invalid_argument(rt, "YRDIF", 3)
    if s != s or e != e:
        return MISSING
    a, z = _date(s), _date(e)
    if b == "AGE":
        return _age(a, z)
    if b == "ACT/ACT":
        return _act_act(a, z)
    if b == "30/360":
        return days_30_360(a, z) / 360
    return (e - s) / (360 if b == "ACT/360" else 365)


@function("DATDIF", 3, 3, args="nnc")
def f_datdif(rt, start, end, basis):
    """The days from start to end: actual (ACT/ACT, ACT/360, ACT/365) or by the 30/360 rules."""
    s, e = to_num(start), to_num(end)
    b = _basis(basis)
    if b is None or b == "AGE":
        return invalid_argument(rt, "DATDIF", 3)
    if s != s or e != e:
        return MISSING
    if b == "30/360":
        return float(days_30_360(_date(s), _date(e)))
    return float(math.floor(e) - math.floor(s))


@function("WEEK", 0, 2, args="nc")
def f_week(rt, date=None, descriptor=None):
    """The week number: U (default; 0-53, weeks begin on Sunday, week 0 before the year's first Sunday),
    W (0-53, weeks begin on Monday), V (ISO 8601: 1-53, Monday, week 1 holds the year's first Thursday).
    WEEK('descriptor') alone is today's week."""
    if isinstance(date, str) and descriptor is None:
        date, descriptor = float(_sas(_dt.date.today())), date
    if date is None:
        date = float(_sas(_dt.date.today()))
    v = to_num(date)
    kind = "U" if descriptor is None else to_char(descriptor).strip().upper()[:1] or "U"
    if kind not in "UVW":
        return invalid_argument(rt, "WEEK", 2)
    if v != v:
        return MISSING
    d = _date(v)
    if kind == "V":
        return float(d.isocalendar()[1])
    jan1 = _dt.date(d.year, 1, 1)
    first = 6 if kind == "U" else 0            # Python weekday(): Monday 0 … Sunday 6
    offset = (first - jan1.weekday()) % 7      # days from 1 January to the year's first such day
    return float(((d - jan1).days - offset) // 7 + 1) if (d - jan1).days >= offset else 0.0


def _year(rt, yy: int) -> int:
    cutoff = _yearcutoff(rt)
    century = cutoff - cutoff % 100
    y = century + yy
    return y if y >= cutoff else y + 100


@function("DATEJUL", 1, 1)
def f_datejul(rt, jul):
    """The date of a Julian date yyddd or yyyyddd (a 2-digit year by YEARCUTOFF=)."""
    v = to_num(jul)
    if v != v:
        return MISSING
    n = int(v)
    yy, ddd = divmod(n, 1000)
    y = yy if n >= 100000 else _year(rt, yy)
    if not 1 <= ddd <= (366 if _cal.is_leap(y) else 365):
        return invalid_argument(rt, "DATEJUL")
    return float(_cal.day_number(y, 1, 1) + ddd - 1)


def _juldate(rt, name: str, date, seven: bool):
    v = to_num(date)
    if v != v:
        return MISSING
    d = _date(v)
    ddd = d.timetuple().tm_yday
    cutoff = _yearcutoff(rt)
    if not seven and cutoff <= d.year < cutoff + 100:
        return float((d.year % 100) * 1000 + ddd)
    return float(d.year * 1000 + ddd)


@function("JULDATE", 1, 1)
def f_juldate(rt, date):
    """yyddd when the year is in the YEARCUTOFF= window, else yyyyddd."""
    return _juldate(rt, "JULDATE", date, False)


@function("JULDATE7", 1, 1)
def f_juldate7(rt, date):
    return _juldate(rt, "JULDATE7", date, True)


def nth_weekday(n: int, weekday: int, month: int, year: int) -> _dt.date:
    """The n-th (5: the last) weekday (1 Sunday … 7 Saturday) of the month."""
    first = _dt.date(year, month, 1)
    want = (weekday + 5) % 7                     # SAS 1=Sunday → Python 6
    d = first + _dt.timedelta(days=(want - first.weekday()) % 7)
    if n == 5:
        while (d + _dt.timedelta(days=7)).month == month:
            d += _dt.timedelta(days=7)
        return d
    return d + _dt.timedelta(days=7 * (n - 1))


@function("NWKDOM", 4, 4)
def f_nwkdom(rt, n, weekday, month, year):
    """The date of the n-th (1-4; 5 the last) weekday (1 Sunday … 7 Saturday) of month in year."""
    vals = [to_num(x) for x in (n, weekday, month, year)]
    if any(x != x for x in vals):
        return MISSING
    k, w, m, y = (int(x) for x in vals)
    for i, ok in enumerate((1 <= k <= 5, 1 <= w <= 7, 1 <= m <= 12, 1582 <= y <= 9999), 1):
        if not ok:
            return invalid_argument(rt, "NWKDOM", i)
    return _sas(nth_weekday(k, w, m, y))


def _easter(y: int) -> _dt.date:
    a, b, c = y % 19, y // 100, y % 100
    d, e = divmod(b, 4)
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    ll = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ll) // 451
    month, day = divmod(h + ll - 7 * m + 114, 31)
    return _dt.date(y, month, day + 1)


# name → (first year it is observed, the date in a year); SAS's holiday names (a subset; US and Canada)
_HOLIDAYS = {
    "NEWYEAR": (0, lambda y: _dt.date(y, 1, 1)),
    "MLK": (1986, lambda y: nth_weekday(3, 2, 1, y)),
    "USPRESIDENTS": (1971, lambda y: nth_weekday(3, 2, 2, y)),
    "EASTER": (0, _easter),
    "GOODFRIDAY": (0, lambda y: _easter(y) - _dt.timedelta(days=2)),
    "EASTERMONDAY": (0, lambda y: _easter(y) + _dt.timedelta(days=1)),
    "MEMORIAL": (1971, lambda y: nth_weekday(5, 2, 5, y)),
    "USINDEPENDENCE": (1776, lambda y: _dt.date(y, 7, 4)),
    "LABOR": (1894, lambda y: nth_weekday(1, 2, 9, y)),
    "COLUMBUS": (1971, lambda y: nth_weekday(2, 2, 10, y)),
    "VETERANS": (1938, lambda y: _dt.date(y, 11, 11)),
    "THANKSGIVING": (1941, lambda y: nth_weekday(4, 5, 11, y)),
    "CHRISTMAS": (0, lambda y: _dt.date(y, 12, 25)),
    "BOXING": (0, lambda y: _dt.date(y, 12, 26)),
    "CANADA": (1879, lambda y: _dt.date(y, 7, 1)),
    "CANADAOBSERVED": (1879, lambda y: _dt.date(y, 7, 2) if _dt.date(y, 7, 1).weekday() == 6 else _dt.date(y, 7, 1)),
    "CANADIANTHANKSGIVING": (1957, lambda y: nth_weekday(2, 2, 10, y)),
    "VICTORIA": (1953, lambda y: nth_weekday(5, 2, 5, y) - _dt.timedelta(days=7)
                 if nth_weekday(5, 2, 5, y).day > 24 else nth_weekday(5, 2, 5, y)),
    "VALENTINES": (0, lambda y: _dt.date(y, 2, 14)),
    "HALLOWEEN": (0, lambda y: _dt.date(y, 10, 31)),
    "MOTHERS": (1914, lambda y: nth_weekday(2, 1, 5, y)),
    "FATHERS": (1972, lambda y: nth_weekday(3, 1, 6, y)),
    "USPRESIDENTSDAY": (1971, lambda y: nth_weekday(3, 2, 2, y)),
}


@function("HOLIDAY", 2, 2, args="cn")
def f_holiday(rt, name, year):
    """The date of the holiday in the year; missing before the year it was first observed (MLK: 1986).
    VICTORIA is the Monday before 25 May; MEMORIAL the last Monday of May."""
    n = to_char(name).strip().upper()
    entry = _HOLIDAYS.get(n)
    if entry is None:
        return invalid_argument(rt, "HOLIDAY", 1)
    y = to_num(year)
    if y != y:
        return MISSING
    y = int(y)
    if not 1583 <= y <= 9999:
        return invalid_argument(rt, "HOLIDAY", 2)
    if y < entry[0]:
        return MISSING
    return _sas(entry[1](y))
