"""Date and time functions (SAS 9.4 Functions and CALL Routines): TODAY DATE DATETIME TIME MDY YYQ
YEAR MONTH DAY WEEKDAY QTR HOUR MINUTE SECOND DATEPART TIMEPART DHMS HMS INTNX INTCK.

SAS dates are days since 1960-01-01, times seconds since midnight, datetimes seconds since
1960-01-01 00:00:00. Intervals (INTNX, INTCK) follow SAS's "Date and Time Intervals" (Language
Reference: Concepts): NAME<multiple><.shift> with DAY WEEK TENDAY SEMIMONTH MONTH QTR SEMIYEAR YEAR for
dates, DT-prefixed ones and HOUR MINUTE SECOND for datetimes; weeks begin on Sunday; multi-period
intervals are counted from 1 January 1960. INTNX alignments: B (BEGINNING, default), M (MIDDLE),
E (END), S (SAME/SAMEDAY). INTCK counts boundaries crossed (DISCRETE, default) or whole intervals
(C/CONTINUOUS). A two-digit year in MDY is placed by YEARCUTOFF=.
"""
from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass
from typing import Any

from statgrid.sas.formats import calendar as _cal
from statgrid.sas.formats.dates import expand_year
from statgrid.sas.functions.registry import function, invalid_argument
from statgrid.sas.functions.numeric import to_num
from statgrid.sas.values import MISSING, date_to_sas, datetime_to_sas


def _day(v: float) -> _cal.YMD:
    """Year, month, day of a SAS date; ValueError outside SAS's dates (1582–20000), which the function
    dispatcher reports as SAS's "Invalid argument" NOTE with a missing result."""
    return _cal.ymd(v)


def _sasday(y: int, m: int, d: int) -> float:
    return float(_cal.day_number(y, m, d))


def _int_arg(x: float) -> int:
    """A count argument (INTNX's n, MDY's parts) as an integer; beyond any SAS date → ValueError."""
    if math.isinf(x) or abs(x) > 1e12:
        raise ValueError(f"{x} is out of range")
    return int(x)


def _yearcutoff(rt) -> int:
    try:
        return int(rt.program.options.get("YEARCUTOFF"))
    except Exception:
        return 1926


@function("TODAY", 0, 0, aliases=("DATE",))
def f_today(rt):
    return date_to_sas(_dt.date.today())


@function("DATETIME", 0, 0)
def f_datetime(rt):
    return datetime_to_sas(_dt.datetime.now())


@function("TIME", 0, 0)
def f_time(rt):
    n = _dt.datetime.now()
    return n.hour * 3600 + n.minute * 60 + n.second + n.microsecond / 1e6


@function("MDY", 3, 3)
def f_mdy(rt, m, d, y):
    m, d, y = to_num(m), to_num(d), to_num(y)
    if m != m or d != d or y != y:
        return MISSING
    yy = _int_arg(y)
    if 0 <= yy < 100:
        yy = expand_year(yy, 2, _yearcutoff(rt))
    try:
        return _sasday(yy, _int_arg(m), _int_arg(d))
    except ValueError:
        return invalid_argument(rt, "MDY")


@function("YYQ", 2, 2)
def f_yyq(rt, y, q):
    y, q = to_num(y), to_num(q)
    if y != y or q != q:
        return MISSING
    if not 1 <= q <= 4:
        return invalid_argument(rt, "YYQ")
    yy = _int_arg(y)
    if 0 <= yy < 100:
        yy = expand_year(yy, 2, _yearcutoff(rt))
    return _sasday(yy, 3 * (int(q) - 1) + 1, 1)


def _part(name: str, get):
    @function(name, 1, 1)
    def fn(rt, v):
        v = to_num(v)
        return MISSING if v != v else float(get(_day(v)))
    return fn


_part("YEAR", lambda d: d.year)
_part("MONTH", lambda d: d.month)
_part("DAY", lambda d: d.day)


@function("WEEKDAY", 1, 1)
def f_weekday(rt, v):
    """1 = Sunday … 7 = Saturday."""
    v = to_num(v)
    if v != v:
        return MISSING
    _day(v)                                              # outside SAS's dates: invalid argument
    return float(_cal.weekday(v))


_part("QTR", lambda d: (d.month - 1) // 3 + 1)


@function("DATEPART", 1, 1)
def f_datepart(rt, dt):
    dt = to_num(dt)
    return MISSING if dt != dt else float(math.floor(dt / 86400))


@function("TIMEPART", 1, 1)
def f_timepart(rt, dt):
    dt = to_num(dt)
    return MISSING if dt != dt else dt - math.floor(dt / 86400) * 86400


@function("HOUR", 1, 1)
def f_hour(rt, t):
    t = to_num(t)
    return MISSING if t != t else float(math.floor((t % 86400) / 3600))


@function("MINUTE", 1, 1)
def f_minute(rt, t):
    t = to_num(t)
    return MISSING if t != t else float(math.floor((t % 3600) / 60))


@function("SECOND", 1, 1)
def f_second(rt, t):
    t = to_num(t)
    return MISSING if t != t else t % 60


@function("DHMS", 4, 4)
def f_dhms(rt, d, h, m, s):
    vals = [to_num(x) for x in (d, h, m, s)]
    if any(v != v for v in vals):
        return MISSING
    d, h, m, s = vals
    return d * 86400 + h * 3600 + m * 60 + s


@function("HMS", 3, 3)
def f_hms(rt, h, m, s):
    vals = [to_num(x) for x in (h, m, s)]
    if any(v != v for v in vals):
        return MISSING
    return vals[0] * 3600 + vals[1] * 60 + vals[2]


# -- intervals -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    base: str            # DAY WEEKDAY WEEK TENDAY SEMIMONTH MONTH QTR SEMIYEAR YEAR HOUR MINUTE SECOND
    mult: int
    shift: int           # 1 = no shift
    datetime: bool       # the values are datetimes (DT… intervals, HOUR, MINUTE, SECOND)
    weekend: tuple[int, ...] = (1, 7)     # WEEKDAY: the weekend days (1 = Sunday … 7 = Saturday)


_MONTHS_PER = {"MONTH": 1, "QTR": 3, "SEMIYEAR": 6, "YEAR": 12}
_SECONDS_PER = {"HOUR": 3600, "MINUTE": 60, "SECOND": 1}
_INTERVAL_RE = re.compile(r"^(DT)?([A-Z]+?)(?:(\d*)|([1-7]+)W)(?:\.(\d+))?$")
_BASES = ("DAY", "WEEKDAY", "WEEK", "TENDAY", "SEMIMONTH", "MONTH", "QTR", "SEMIYEAR", "YEAR", "HOUR", "MINUTE",
          "SECOND")


def parse_interval(text: str) -> Interval | None:
    """NAME<multiple><.shift> (SAS's "Date and Time Intervals"); WEEKDAY also as WEEKDAYdaysW, the
    digits naming the weekend days (WEEKDAY17W, the default: Sunday and Saturday; WEEKDAY1W: Sunday)."""
    m = _INTERVAL_RE.match(text.strip().upper())
    if not m or m.group(2) not in _BASES:
        return None
    base = m.group(2)
    if m.group(4) and base != "WEEKDAY":
        return None
    dt = bool(m.group(1)) or base in _SECONDS_PER
    if m.group(1) and base in _SECONDS_PER:
        return None
    weekend = tuple(sorted({int(c) for c in m.group(4)})) if m.group(4) else (1, 7)
    if len(weekend) >= 7:
        return None
    mult = int(m.group(3) or 1) if m.group(3) is not None else 1
    return Interval(base, mult or 1, int(m.group(5) or 1) or 1, dt, weekend)


def _months(d: _cal.YMD) -> int:
    return (d.year - 1960) * 12 + d.month - 1


def _month_start(mi: int) -> float:
    y, m = divmod(mi, 12)
    return _sasday(1960 + y, m + 1, 1)


# WEEKDAY: weeks counted from Sunday 27 December 1959 (SAS date -5)
_SUNDAY0 = -5


def _workdays(iv: Interval) -> list[int]:
    """Offsets in the week (0 = Sunday … 6 = Saturday) of the days that are not weekend days."""
    return [o for o in range(7) if o + 1 not in iv.weekend]


def _weekday_index(iv: Interval, day: int) -> int:
    """The number of the working day `day` belongs to (a weekend day belongs to the working day before
    it: SAS counts Friday, Saturday and Sunday as one WEEKDAY interval)."""
    work = _workdays(iv)
    q, o = divmod(day - _SUNDAY0, 7)
    return q * len(work) + sum(1 for w in work if w <= o) - 1


def _weekday_start(iv: Interval, k: int) -> int:
    work = _workdays(iv)
    q, r = divmod(k, len(work))
    return _SUNDAY0 + 7 * q + work[r]


def _index(iv: Interval, day: float) -> int:
    """Which interval (counted from 1960) day (a SAS date) falls in."""
    b = iv.base
    if b == "DAY":
        return math.floor((day - (iv.shift - 1)) / iv.mult)
    if b == "WEEK":
        return math.floor((day - (-5 + iv.shift - 1)) / (7 * iv.mult))   # 27DEC1959 was a Sunday
    if b == "WEEKDAY":
        _day(day)
        return math.floor((_weekday_index(iv, math.floor(day)) - (iv.shift - 1)) / iv.mult)
    d = _day(day)
    if b in ("TENDAY", "SEMIMONTH"):
        per = 3 if b == "TENDAY" else 2
        part = min((d.day - 1) // 10, 2) if b == "TENDAY" else (0 if d.day < 16 else 1)
        return math.floor((_months(d) * per + part - (iv.shift - 1)) / iv.mult)
    return math.floor((_months(d) - (iv.shift - 1)) / (_MONTHS_PER[b] * iv.mult))


def _bounds(iv: Interval, idx: int) -> tuple[float, float]:
    """First and last day (SAS dates) of interval number idx; ValueError outside SAS's dates."""
    b = iv.base
    if b == "DAY":
        s = idx * iv.mult + iv.shift - 1
        return _checked(float(s)), _checked(float(s + iv.mult - 1))
    if b == "WEEK":
        s = -5 + iv.shift - 1 + idx * 7 * iv.mult
        return _checked(float(s)), _checked(float(s + 7 * iv.mult - 1))
    if b == "WEEKDAY":
        k0 = idx * iv.mult + iv.shift - 1
        return _checked(float(_weekday_start(iv, k0))), _checked(float(_weekday_start(iv, k0 + iv.mult) - 1))
    if b in ("TENDAY", "SEMIMONTH"):
        per = 3 if b == "TENDAY" else 2
        starts = (1, 11, 21) if b == "TENDAY" else (1, 16)

        def start_of(k: int) -> float:
            mi, part = divmod(k, per)
            y, m = divmod(mi, 12)
            return _sasday(1960 + y, m + 1, starts[part])
        k0 = idx * iv.mult + iv.shift - 1
        return start_of(k0), _end_before(lambda: start_of(k0 + iv.mult), start_of(k0))
    span = _MONTHS_PER[b] * iv.mult
    m0 = idx * span + iv.shift - 1
    return _month_start(m0), _end_before(lambda: _month_start(m0 + span), _month_start(m0))


def _checked(day: float) -> float:
    if not _cal.MIN_DAY <= day <= _cal.MAX_DAY:
        raise ValueError(f"{day} is outside SAS's dates")
    return day


def _end_before(next_start, start: float) -> float:
    """The day before the next interval's start; the last SAS date when that start is past 20000."""
    try:
        return next_start() - 1
    except ValueError:
        if start <= _cal.MAX_DAY:
            return float(_cal.MAX_DAY)
        raise


def _same(iv: Interval, day: float, idx_from: int, idx_to: int) -> float:
    b0, _ = _bounds(iv, idx_from)
    b1, e1 = _bounds(iv, idx_to)
    if iv.base in ("DAY", "WEEK", "WEEKDAY"):
        return _checked(b1 + (day - b0))
    d, start = _day(day), _day(b0)
    months_in = (d.year - start.year) * 12 + d.month - start.month
    t = _day(b1)
    mi = (t.year - 1960) * 12 + t.month - 1 + months_in
    y, m = divmod(mi, 12)
    y, m = 1960 + y, m + 1
    return min(_sasday(y, m, min(d.day, _cal.month_days(y, m))), e1)


def _align(text: Any) -> str | None:
    t = (str(text) if text is not None else "B").strip().upper()
    table = {"B": "B", "BEGINNING": "B", "BEG": "B", "M": "M", "MIDDLE": "M", "MID": "M", "E": "E", "END": "E",
             "S": "S", "SAME": "S", "SAMEDAY": "S", "": "B"}
    return table.get(t)


def _finite(*vals: float) -> None:
    for v in vals:
        if math.isinf(v) or abs(v) > 1e15 * 86400:
            raise ValueError(f"{v} is out of range")


@function("INTNX", 3, 4, args="cnnc")
def f_intnx(rt, interval, start, n, alignment=None):
    """The date (datetime) `n` intervals from `start`, aligned to the beginning, middle, end or the
    same place of that interval. A result outside SAS's dates (1582–20000) is an invalid argument."""
    iv = parse_interval(str(interval))
    al = _align(alignment)
    if iv is None:
        return invalid_argument(rt, "INTNX", 1)
    if al is None:
        return invalid_argument(rt, "INTNX", 4)
    v, k = to_num(start), to_num(n)
    if v != v or k != k:
        return MISSING
    _finite(v, k)
    k = _int_arg(k)
    if iv.base in _SECONDS_PER:
        unit = _SECONDS_PER[iv.base] * iv.mult
        off = (iv.shift - 1) * _SECONDS_PER[iv.base]
        idx = math.floor((v - off) / unit)
        b = (idx + k) * unit + off
        r = {"B": b, "E": b + unit - 1, "M": b + unit // 2, "S": v + k * unit}[al]
        _checked(math.floor(r / 86400))
        return float(r)
    if iv.datetime:
        day = math.floor(v / 86400)
        tod = v - day * 86400
        return _intnx_days(iv, day, k, al, tod)
    return _intnx_days(iv, math.floor(v), k, al, None)


def _intnx_days(iv: Interval, day: float, k: int, al: str, tod: float | None) -> float:
    _checked(day)
    idx = _index(iv, day)
    b, e = _bounds(iv, idx + k)
    if al == "B":
        r, t = b, 0.0
    elif al == "E":
        r, t = e, 86399.0
    elif al == "M":
        r, t = math.floor((b + e) / 2), 0.0
        if tod is not None:
            mid = (b * 86400 + e * 86400 + 86399) / 2
            return float(math.floor(mid))
    else:
        r, t = _same(iv, day, idx, idx + k), (tod or 0.0)
    return float(r * 86400 + t) if tod is not None else float(r)


@function("INTCK", 3, 4, args="cnnc")
def f_intck(rt, interval, start, end, method=None):
    """Interval boundaries crossed from start to end (DISCRETE), or whole intervals (CONTINUOUS)."""
    iv = parse_interval(str(interval))
    if iv is None:
        return invalid_argument(rt, "INTCK", 1)
    meth = (str(method).strip().upper() if method is not None else "D") or "D"
    if meth not in ("D", "DISCRETE", "C", "CONTINUOUS", "CONT"):
        return invalid_argument(rt, "INTCK", 4)
    a, b = to_num(start), to_num(end)
    if a != a or b != b:
        return MISSING
    _finite(a, b)
    if iv.base in _SECONDS_PER:
        unit = _SECONDS_PER[iv.base] * iv.mult
        off = (iv.shift - 1) * _SECONDS_PER[iv.base]
        if meth[0] == "C":
            return float(math.trunc((b - a) / unit))
        return float(math.floor((b - off) / unit) - math.floor((a - off) / unit))
    if iv.datetime:
        da, db = math.floor(a / 86400), math.floor(b / 86400)
    else:
        da, db = math.floor(a), math.floor(b)
    _checked(da), _checked(db)
    n = _index(iv, db) - _index(iv, da)
    if meth[0] != "C":
        return float(n)
    # continuous: whole intervals, counting from `start` (the same place in each interval)
    sign = 1 if b >= a else -1
    if iv.datetime:
        def at(k: int) -> float:
            return _intnx_days(iv, da, k, "S", a - da * 86400)
    else:
        def at(k: int) -> float:
            return _intnx_days(iv, da, k, "S", None)

    def beyond(k: int) -> bool:
        try:
            r = at(k)
        except ValueError:
            return True
        return r > b if sign > 0 else r < b
    while n and beyond(n):
        n -= sign
    return float(n)
