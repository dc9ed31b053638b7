"""SAS's calendar in day numbers (days since 1960-01-01), without Python's datetime (which stops at year
9999). SAS date values run from 1 January 1582 (-138061) to 31 December 20000 (6589335); SAS's calendar
is the Gregorian one with years divisible by 4000 not leap years (that is why 31DEC20000 is 6589335,
five days short of the proleptic Gregorian count, and why SAS's datetime of 31DEC9999 is 253717660800).
`day_number(y, m, d)` and `ymd(n)` convert; both raise ValueError outside SAS's range (the function
dispatcher turns that into SAS's "Invalid argument" NOTE). Standard library only.
"""
from __future__ import annotations

import math
from typing import NamedTuple

MIN_DAY, MAX_DAY = -138061, 6589335          # 01JAN1582, 31DEC20000
MIN_YEAR, MAX_YEAR = 1582, 20000


class YMD(NamedTuple):
    year: int
    month: int
    day: int


def is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) and y % 4000 != 0


def month_days(y: int, m: int) -> int:
    if m == 2:
        return 29 if is_leap(y) else 28
    return 30 if m in (4, 6, 9, 11) else 31


def _greg(y: int, m: int, d: int) -> int:
    """Proleptic Gregorian day count (days since 1970-01-01; Hinnant's days_from_civil)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil(z: int) -> tuple[int, int, int]:
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


_EPOCH = _greg(1960, 1, 1)
# the Gregorian 29 Februaries SAS leaves out (years 4000, 8000 … 20000), as Gregorian day counts
_SKIPPED = [_greg(y, 2, 29) - _EPOCH for y in range(4000, MAX_YEAR + 1, 4000)]


def _skipped_before(y: int, m: int) -> int:
    return (y if m > 2 else y - 1) // 4000 if y > 0 else 0


def day_number(y: int, m: int, d: int) -> int:
    """The SAS date of y-m-d; ValueError for a date that does not exist or is outside 1582–20000."""
    if not (MIN_YEAR <= y <= MAX_YEAR and 1 <= m <= 12 and 1 <= d <= month_days(y, m)):
        raise ValueError(f"{y}-{m}-{d} is not a SAS date (years 1582 to 20000)")
    return _greg(y, m, d) - _EPOCH - _skipped_before(y, m)


def ymd(n: float) -> YMD:
    """Year, month and day of SAS date `n` (the floor of n); ValueError outside SAS's range."""
    if n != n or math.isinf(n):
        raise ValueError("not a SAS date")
    k = math.floor(n)
    if not MIN_DAY <= k <= MAX_DAY:
        raise ValueError(f"{n} is outside SAS's dates (years 1582 to 20000)")
    g = k
    for s in _SKIPPED:                 # walk over the days SAS leaves out
        if g >= s:
            g += 1
    return YMD(*_civil(g + _EPOCH))


def weekday(n: float) -> int:
    """1 = Sunday … 7 = Saturday (1 January 1960 was a Friday)."""
    return (math.floor(n) + 5) % 7 + 1
