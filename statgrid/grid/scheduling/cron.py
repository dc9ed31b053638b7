"""Cron calendars for `statgrid schedule add`: parse the five fields, find the next matching minute.

    minute hour day-of-month month day-of-week      e.g. "0 2 * * *" = 02:00 daily

The syntax is Vixie cron's, as in crontab(5): `*`, lists `1,2`, ranges `1-5`, steps `*/15` and
`1-30/5`, month names JAN-DEC and day names SUN-SAT (any case), day-of-week 0-7 with 0 and 7 both
Sunday, and the nicknames @hourly @daily @midnight @weekly @monthly @yearly @annually (@reboot
is not a calendar, so it is refused). Two choices beyond crontab(5): SUN at the end of a
day-of-week range is 7, so FRI-SUN means Friday to Sunday (Vixie cron refuses it as backwards);
and `5/15` (a step from a single value, which Vixie refuses too) is refused with the fix 5-59/15.

Day-of-month and day-of-week: when both are restricted a day matches if EITHER matches, else
both must ("0 0 1,15 * MON" runs on the 1st, the 15th and every Monday — crontab(5), NOTES). As
in Vixie cron's entry.c, a field counts as unrestricted when it starts with '*' (so "*/2" does too).

Pure: no I/O, no clock; times are POSIX timestamps and the time zone is an argument.
"""
from __future__ import annotations

import bisect
import calendar
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from statgrid.errors import UsageError

MAX_CHARS = 256
# next_after looks this far ahead. The weekdays of dates repeat every 28 years (from 1901 to
# 2099), so a calendar that matches at all matches within 28 years; `parse` already refuses one
# whose days never occur (31 February), so reaching this bound means a broken time zone.
SEARCH_YEARS = 28
EXAMPLE = '"0 2 * * *" = 02:00 daily'

NICKNAMES = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@weekly": "0 0 * * 0",
             "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *"}
_MONTHS = {name: i for i, name in enumerate(
    ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), start=1)}
_DAYS = {name: i for i, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))}


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: dict[str, int]
    allowed: str


_FIELDS = (_Field("minute", 0, 59, {}, "0-59"),
           _Field("hour", 0, 23, {}, "0-23"),
           _Field("day-of-month", 1, 31, {}, "1-31"),
           _Field("month", 1, 12, _MONTHS, "1-12 or JAN-DEC"),
           _Field("day-of-week", 0, 7, _DAYS, "0-7 (0 and 7 = Sunday) or SUN-SAT"))


@dataclass(frozen=True)
class CronSpec:
    """A parsed calendar. text: as given; minutes (0-59), hours (0-23), days (day of month,
    1-31), months (1-12), weekdays (0-6, 0 = Sunday): the values each field matches, sorted;
    day_or: both day fields are restricted, so a day matches if either does (else both must)."""
    text: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: tuple[int, ...]
    months: tuple[int, ...]
    weekdays: tuple[int, ...]
    day_or: bool

    def __str__(self) -> str:
        return self.text


def _error(text: str, field: _Field, value: str, problem: str) -> UsageError:
    return UsageError(f"calendar {text!r}: {field.name} {value!r} is not valid: {problem}; {field.name} takes "
                      f"{field.allowed} (*, lists 1,2, ranges 1-5, steps */15 or 1-30/5); e.g. {EXAMPLE}")


def _value(text: str, field: _Field, value: str, word: str, range_end: bool = False) -> int:
    if word.isdigit():
        n = int(word)
    elif word.upper() in field.names:
        n = field.names[word.upper()]
        if range_end and field.name == "day-of-week" and n == 0:
            n = 7                                  # FRI-SUN: Friday to Sunday
    else:
        what = "a number or a month name" if field.name == "month" else (
            "a number or a day name" if field.name == "day-of-week" else "a number")
        raise _error(text, field, value, f"{word!r} is not {what}")
    if not field.low <= n <= field.high:
        raise _error(text, field, value, f"{word} is out of range")
    return n


def _parse_field(text: str, field: _Field, value: str) -> set[int]:
    matched: set[int] = set()
    for part in value.split(","):
        if not part:
            raise _error(text, field, value, "a list item is empty")
        body, slash, step_text = part.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise _error(text, field, value, f"the step {step_text!r} in {part!r} is not a whole number ≥ 1")
            step = int(step_text)
        if body == "*":
            low, high = field.low, field.high
        elif "-" in body:
            first, _, last = body.partition("-")
            low = _value(text, field, value, first)
            high = _value(text, field, value, last, range_end=True)
            if low > high:
                raise _error(text, field, value, f"the range {body!r} runs backwards (put the smaller end first, "
                             "or write two items, e.g. 22-23,0-2)")
        else:
            low = _value(text, field, value, body)
            if slash:
                raise _error(text, field, value, f"{part!r} steps from a single value (write a range: "
                             f"{body}-{field.high}/{step})")
            high = low
        matched.update(range(low, high + 1, step))
    if field.name == "day-of-week" and 7 in matched:
        matched.discard(7)
        matched.add(0)
    return matched


def parse(text: str) -> CronSpec:
    """The calendar in `text` (five fields or a nickname). Raises UsageError naming the field, its
    value, the values it takes and an example; also for a calendar whose days never occur (e.g.
    "0 0 31 2 *"), so `next_after` finds a time for every CronSpec this returns."""
    if not isinstance(text, str):
        raise UsageError(f"calendar {text!r} is not text; e.g. {EXAMPLE}")
    if len(text) > MAX_CHARS:
        raise UsageError(f"calendar {text[:40]!r}… is {len(text):,} characters long, over the limit of {MAX_CHARS}; "
                         f"e.g. {EXAMPLE}")
    words = text.split()
    if len(words) == 1 and words[0].startswith("@"):
        nickname = words[0].lower()
        if nickname not in NICKNAMES:
            raise UsageError(f"calendar {text!r}: {words[0]!r} is not a nickname; nicknames: {', '.join(NICKNAMES)}; "
                             f"or give five fields, e.g. {EXAMPLE}")
        words = NICKNAMES[nickname].split()
    if len(words) != 5:
        raise UsageError(f"calendar {text!r} has {len(words)} field{'s' * (len(words) != 1)}; give five: minute hour "
                         f"day-of-month month day-of-week, e.g. {EXAMPLE}, or a nickname such as @daily")
    sets = [sorted(_parse_field(text, field, value)) for field, value in zip(_FIELDS, words)]
    minutes, hours, days, months, weekdays = sets
    day_or = not words[2].startswith("*") and not words[4].startswith("*")
    # With both day fields restricted every month has some matching weekday. Otherwise (the days
    # must match, with or without a weekday) some listed day must exist in some listed month.
    if not day_or and not any(days[0] <= _longest_month(m) for m in months):
        raise UsageError(f"calendar {text!r} never matches: day-of-month {words[2]!r} does not occur in month "
                         f"{words[3]!r}; e.g. {EXAMPLE}")
    return CronSpec(text, *map(tuple, sets), day_or=day_or)


def _longest_month(month: int) -> int:
    return 29 if month == 2 else calendar.monthrange(2001, month)[1]


def _day_matches(spec: CronSpec, day: datetime) -> bool:
    in_days = day.day in spec.days
    in_weekdays = day.isoweekday() % 7 in spec.weekdays         # isoweekday: Monday 1 … Sunday 7
    return (in_days or in_weekdays) if spec.day_or else (in_days and in_weekdays)


def matches(spec: CronSpec, when: datetime) -> bool:
    """Whether the wall-clock minute of `when` (its own fields; the time zone is not consulted)
    matches the calendar."""
    return (when.minute in spec.minutes and when.hour in spec.hours and when.month in spec.months
            and _day_matches(spec, when))


def _next_wall(spec: CronSpec, t: datetime, last_year: int) -> datetime | None:
    """The first wall-clock minute ≥ t (naive) that matches, skipping a whole month, day or hour
    at a time; None past `last_year`."""
    while t.year <= last_year:
        if t.month not in spec.months:
            i = bisect.bisect_left(spec.months, t.month)
            t = datetime(t.year, spec.months[i], 1) if i < len(spec.months) else datetime(t.year + 1, spec.months[0], 1)
        elif not _day_matches(spec, t):
            t = datetime(t.year, t.month, t.day) + timedelta(days=1)
        elif t.hour not in spec.hours:
            i = bisect.bisect_left(spec.hours, t.hour)
            t = (t.replace(hour=spec.hours[i], minute=0) if i < len(spec.hours)
                 else datetime(t.year, t.month, t.day) + timedelta(days=1))
        elif t.minute not in spec.minutes:
            i = bisect.bisect_left(spec.minutes, t.minute)
            t = (t.replace(minute=spec.minutes[i]) if i < len(spec.minutes)
                 else t.replace(minute=0) + timedelta(hours=1))
        else:
            return t
    return None


def next_after(spec: CronSpec, ts: float, tz: tzinfo) -> float:
    """The POSIX time (seconds) of the first minute strictly after `ts` that matches `spec` on the
    wall clock of `tz`. Daylight saving time: a wall-clock time that does not exist (in the hour
    the clock skips) is skipped; one that occurs twice (in the hour it repeats) fires once, at its
    first occurrence. Never-matching calendars are refused by `parse`; should none match within
    SEARCH_YEARS, this raises UsageError."""
    start = datetime.fromtimestamp(ts, tz).replace(tzinfo=None, second=0, microsecond=0, fold=0)
    last_year = min(start.year + SEARCH_YEARS, 9998)
    t = start + timedelta(minutes=1)
    while True:
        wall = _next_wall(spec, t, last_year)
        if wall is None:
            raise UsageError(f"calendar {spec.text!r} matches no time in the {SEARCH_YEARS} years after "
                             f"{start:%Y-%m-%d %H:%M} ({tz}); e.g. {EXAMPLE}")
        instant = wall.replace(tzinfo=tz, fold=0).timestamp()       # fold=0: the first occurrence
        # A wall time in a skipped hour comes back from the round trip as another time; one in a
        # repeated hour whose first occurrence is not after ts fired before ts (or never will).
        if instant > ts and datetime.fromtimestamp(instant, tz).replace(tzinfo=None) == wall:
            return instant
        t = wall + timedelta(minutes=1)
