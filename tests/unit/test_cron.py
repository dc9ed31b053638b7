"""Cron calendars (statgrid.grid.scheduling.cron): parsing, messages, next_after in UTC and across DST changes,
and next_after against a minute-by-minute reference. Every call passes its time zone, so the
machine's own zone does not matter."""
from __future__ import annotations

import bisect
import random
from datetime import datetime, timedelta, timezone

import pytest
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from statgrid.errors import UsageError
from statgrid.grid.scheduling.cron import CronSpec, matches, next_after, parse

UTC = timezone.utc


def _zone(name: str):
    """The zone from the system's /usr/share/zoneinfo or the tzdata package; None if neither has it."""
    try:
        return ZoneInfo(name)
    except ZoneInfoNotFoundError:
        return None


BERLIN = _zone("Europe/Berlin")
LORD_HOWE = _zone("Australia/Lord_Howe")          # its clocks move by 30 minutes
needs_berlin = pytest.mark.skipif(BERLIN is None, reason="no zoneinfo data for Europe/Berlin (neither "
                                  "/usr/share/zoneinfo nor the tzdata package)")
needs_lord_howe = pytest.mark.skipif(LORD_HOWE is None, reason="no zoneinfo data for Australia/Lord_Howe")


def ts(tz, *fields, fold=0) -> float:
    return datetime(*fields, tzinfo=tz, fold=fold).timestamp()


def wall(instant: float, tz) -> str:
    return datetime.fromtimestamp(instant, tz).isoformat()


# --- parsing ---------------------------------------------------------------------------------------

def test_fields():
    spec = parse("*/15 9-17 1,15 JAN-MAR,dec mon-fri")
    assert spec == CronSpec("*/15 9-17 1,15 JAN-MAR,dec mon-fri", (0, 15, 30, 45), tuple(range(9, 18)), (1, 15),
                            (1, 2, 3, 12), (1, 2, 3, 4, 5), day_or=True)
    assert str(spec) == "*/15 9-17 1,15 JAN-MAR,dec mon-fri"


@pytest.mark.parametrize("text, field, values", [
    ("1-30/5 * * * *", "minutes", (1, 6, 11, 16, 21, 26)),
    ("0-59/20 * * * *", "minutes", (0, 20, 40)),
    ("*/25 * * * *", "minutes", (0, 25, 50)),
    ("5,5,1-3 * * * *", "minutes", (1, 2, 3, 5)),
    ("0 */100 * * *", "hours", (0,)),
    ("0 0 */10 * *", "days", (1, 11, 21, 31)),
    ("0 0 * */4 *", "months", (1, 5, 9)),
    ("0 0 * Jul,AUG,sep *", "months", (7, 8, 9)),
    ("0 0 * * 7", "weekdays", (0,)),
    ("0 0 * * 0,7", "weekdays", (0,)),
    ("0 0 * * 5-7", "weekdays", (0, 5, 6)),
    ("0 0 * * FRI-SUN", "weekdays", (0, 5, 6)),      # SUN ending a range is 7
    ("0 0 * * SUN-TUE", "weekdays", (0, 1, 2)),
    ("0 0 * * */2", "weekdays", (0, 2, 4, 6)),
    ("0 0 * * *", "weekdays", (0, 1, 2, 3, 4, 5, 6)),
])
def test_field_values(text, field, values):
    assert getattr(parse(text), field) == values


@pytest.mark.parametrize("nickname, same_as", [
    ("@hourly", "0 * * * *"), ("@daily", "0 0 * * *"), ("@midnight", "0 0 * * *"), ("@weekly", "0 0 * * 0"),
    ("@monthly", "0 0 1 * *"), ("@yearly", "0 0 1 1 *"), ("@annually", "0 0 1 1 *"), ("  @Daily ", "0 0 * * *"),
])
def test_nicknames(nickname, same_as):
    spec, expanded = parse(nickname), parse(same_as)
    assert spec.text == nickname
    assert (spec.minutes, spec.hours, spec.days, spec.months, spec.weekdays, spec.day_or) == (
        expanded.minutes, expanded.hours, expanded.days, expanded.months, expanded.weekdays, expanded.day_or)


@pytest.mark.parametrize("text, day_or", [
    ("0 0 1,15 * MON", True),          # both restricted: either matches (crontab(5))
    ("0 0 1 * *", False),
    ("0 0 * * MON", False),
    ("0 0 */2 * MON", False),          # starts with '*': unrestricted, as Vixie cron's entry.c reads it
    ("0 0 1 * */2", False),
    ("0 0 1-31 * 0-7", True),
])
def test_day_or(text, day_or):
    assert parse(text).day_or is day_or


FIX = '"0 2 * * *" = 02:00 daily'
FORMS = "(*, lists 1,2, ranges 1-5, steps */15 or 1-30/5)"


@pytest.mark.parametrize("text, message", [
    ("0 25 * * *", f"calendar '0 25 * * *': hour '25' is not valid: 25 is out of range; hour takes 0-23 {FORMS}; "
                   f"e.g. {FIX}"),
    ("60 * * * *", f"calendar '60 * * * *': minute '60' is not valid: 60 is out of range; minute takes 0-59 {FORMS}; "
                   f"e.g. {FIX}"),
    ("0 0 0 * *", f"calendar '0 0 0 * *': day-of-month '0' is not valid: 0 is out of range; day-of-month takes 1-31 "
                  f"{FORMS}; e.g. {FIX}"),
    ("0 0 * 1,13 *", f"calendar '0 0 * 1,13 *': month '1,13' is not valid: 13 is out of range; month takes 1-12 or "
                     f"JAN-DEC {FORMS}; e.g. {FIX}"),
    ("0 0 * * 8", f"calendar '0 0 * * 8': day-of-week '8' is not valid: 8 is out of range; day-of-week takes 0-7 "
                  f"(0 and 7 = Sunday) or SUN-SAT {FORMS}; e.g. {FIX}"),
    ("0 0 * foo *", f"calendar '0 0 * foo *': month 'foo' is not valid: 'foo' is not a number or a month name; month "
                    f"takes 1-12 or JAN-DEC {FORMS}; e.g. {FIX}"),
    ("0 0 * * MONDAY", f"calendar '0 0 * * MONDAY': day-of-week 'MONDAY' is not valid: 'MONDAY' is not a number or a "
                       f"day name; day-of-week takes 0-7 (0 and 7 = Sunday) or SUN-SAT {FORMS}; e.g. {FIX}"),
    ("0 JAN * * *", f"calendar '0 JAN * * *': hour 'JAN' is not valid: 'JAN' is not a number; hour takes 0-23 "
                    f"{FORMS}; e.g. {FIX}"),
    ("5/15 * * * *", f"calendar '5/15 * * * *': minute '5/15' is not valid: '5/15' steps from a single value (write "
                     f"a range: 5-59/15); minute takes 0-59 {FORMS}; e.g. {FIX}"),
    ("*/0 * * * *", f"calendar '*/0 * * * *': minute '*/0' is not valid: the step '0' in '*/0' is not a whole number "
                    f"≥ 1; minute takes 0-59 {FORMS}; e.g. {FIX}"),
    ("*/ * * * *", f"calendar '*/ * * * *': minute '*/' is not valid: the step '' in '*/' is not a whole number ≥ 1; "
                   f"minute takes 0-59 {FORMS}; e.g. {FIX}"),
    ("0 22-2 * * *", f"calendar '0 22-2 * * *': hour '22-2' is not valid: the range '22-2' runs backwards (put the "
                     f"smaller end first, or write two items, e.g. 22-23,0-2); hour takes 0-23 {FORMS}; e.g. {FIX}"),
    ("1,,2 * * * *", f"calendar '1,,2 * * * *': minute '1,,2' is not valid: a list item is empty; minute takes 0-59 "
                     f"{FORMS}; e.g. {FIX}"),
    ("-1 * * * *", f"calendar '-1 * * * *': minute '-1' is not valid: '' is not a number; minute takes 0-59 "
                   f"{FORMS}; e.g. {FIX}"),
    ("0 2 * *", f"calendar '0 2 * *' has 4 fields; give five: minute hour day-of-month month day-of-week, e.g. {FIX}, "
                "or a nickname such as @daily"),
    ("0 2 * * * *", f"calendar '0 2 * * * *' has 6 fields; give five: minute hour day-of-month month day-of-week, "
                    f"e.g. {FIX}, or a nickname such as @daily"),
    ("", f"calendar '' has 0 fields; give five: minute hour day-of-month month day-of-week, e.g. {FIX}, or a "
         "nickname such as @daily"),
    ("@reboot", "calendar '@reboot': '@reboot' is not a nickname; nicknames: @hourly, @daily, @midnight, @weekly, "
                f"@monthly, @yearly, @annually; or give five fields, e.g. {FIX}"),
    ("0 0 31 2 *", f"calendar '0 0 31 2 *' never matches: day-of-month '31' does not occur in month '2'; e.g. {FIX}"),
    ("0 0 30,31 FEB *", f"calendar '0 0 30,31 FEB *' never matches: day-of-month '30,31' does not occur in month "
                        f"'FEB'; e.g. {FIX}"),
    ("0 0 31 4,6,9,11 *", f"calendar '0 0 31 4,6,9,11 *' never matches: day-of-month '31' does not occur in month "
                          f"'4,6,9,11'; e.g. {FIX}"),
])
def test_error_messages(text, message):
    with pytest.raises(UsageError) as info:
        parse(text)
    assert str(info.value) == message


def test_length_limit():
    text = ("0 " + ",".join(["1"] * 124) + " * * *").ljust(256)
    assert parse(text).minutes == (0,)
    with pytest.raises(UsageError) as info:
        parse(text + " ")
    assert str(info.value) == ("calendar '0 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,'… is 257 characters long, over "
                               f"the limit of 256; e.g. {FIX}")


@pytest.mark.parametrize("text", ["0 0 29 2 *", "0 0 31 2 MON", "0 0 31 2,3 *", "0 0 */31 2 1"])
def test_rare_but_possible_days_parse(text):
    parse(text)


def test_matches_uses_the_wall_clock_fields():
    spec = parse("30 2 1,15 * MON")
    assert matches(spec, datetime(2024, 1, 1, 2, 30))              # Monday the 1st
    assert matches(spec, datetime(2024, 1, 8, 2, 30))              # a Monday
    assert matches(spec, datetime(2024, 2, 15, 2, 30))             # a Thursday, the 15th
    assert not matches(spec, datetime(2024, 2, 14, 2, 30))
    assert not matches(spec, datetime(2024, 1, 8, 2, 31))


# --- next_after: hand-computed times ---------------------------------------------------------------

@pytest.mark.parametrize("text, start, expected", [
    ("0 2 * * *", (2024, 1, 1, 0, 0), (2024, 1, 1, 2, 0)),
    ("0 2 * * *", (2024, 1, 1, 2, 0), (2024, 1, 2, 2, 0)),                  # strictly after
    ("0 2 * * *", (2024, 1, 1, 1, 59, 59), (2024, 1, 1, 2, 0)),
    ("* * * * *", (2024, 1, 1, 10, 7, 30), (2024, 1, 1, 10, 8)),
    ("*/15 * * * *", (2024, 1, 1, 10, 7, 30), (2024, 1, 1, 10, 15)),
    ("*/15 * * * *", (2024, 1, 1, 23, 50), (2024, 1, 2, 0, 0)),
    ("0 0 1 * *", (2024, 1, 31, 12, 0), (2024, 2, 1, 0, 0)),
    ("0 0 31 * *", (2024, 4, 1, 0, 0), (2024, 5, 31, 0, 0)),                # April has no 31st
    ("0 0 29 2 *", (2023, 3, 1, 0, 0), (2024, 2, 29, 0, 0)),
    ("0 0 29 2 *", (2096, 3, 1, 0, 0), (2104, 2, 29, 0, 0)),                # 2100 is not a leap year
    ("59 23 31 12 *", (2024, 12, 31, 23, 59), (2025, 12, 31, 23, 59)),
    ("0 0 1,15 * MON", (2024, 1, 2, 0, 0), (2024, 1, 8, 0, 0)),              # a Monday (either matches)
    ("0 0 1,15 * MON", (2024, 1, 29, 0, 0), (2024, 2, 1, 0, 0)),             # the 1st, a Thursday
    ("0 0 */2 * MON", (2024, 1, 1, 0, 0), (2024, 1, 15, 0, 0)),              # an odd day AND a Monday
    ("0 0 31 2 MON", (2024, 2, 1, 0, 0), (2024, 2, 5, 0, 0)),
    ("@weekly", (2024, 1, 3, 12, 0), (2024, 1, 7, 0, 0)),                    # Wednesday → Sunday
    ("0 9 * * FRI-SUN", (2024, 1, 1, 0, 0), (2024, 1, 5, 9, 0)),
    ("0 0 */31 2 1", (2027, 3, 1, 0, 0), (2038, 2, 1, 0, 0)),                # 1 February on a Monday
    ("15 14 1 * *", (2024, 1, 1, 14, 15), (2024, 2, 1, 14, 15)),
    ("0 12 * 7 *", (2024, 7, 31, 12, 0), (2025, 7, 1, 12, 0)),
])
def test_next_after_utc(text, start, expected):
    assert next_after(parse(text), ts(UTC, *start), UTC) == ts(UTC, *expected)


def test_next_after_in_a_fixed_offset_zone():
    tz = timezone(timedelta(hours=-3, minutes=-30))
    got = next_after(parse("0 2 * * *"), ts(UTC, 2024, 1, 1, 0, 0), tz)
    assert wall(got, tz) == "2024-01-01T02:00:00-03:30"
    assert wall(got, UTC) == "2024-01-01T05:30:00+00:00"


def test_bound_reached_raises():
    """`parse` refuses day/month combinations that never occur; a spec built by hand reaches the bound."""
    never = CronSpec("0 0 31 2 *", (0,), (0,), (31,), (2,), tuple(range(7)), day_or=False)
    with pytest.raises(UsageError) as info:
        next_after(never, ts(UTC, 2024, 1, 1), UTC)
    assert str(info.value) == (f"calendar '0 0 31 2 *' matches no time in the 28 years after 2024-01-01 00:00 (UTC); "
                               f"e.g. {FIX}")


# --- next_after: daylight saving time --------------------------------------------------------------
# Europe/Berlin: 2024-03-31 02:00 CET → 03:00 CEST (02:xx does not exist); 2024-10-27 03:00 CEST →
# 02:00 CET (02:xx occurs twice, first at +02:00, then at +01:00).

def chain(text: str, start: float, tz, n: int) -> list[str]:
    spec, out = parse(text), []
    for _ in range(n):
        start = next_after(spec, start, tz)
        out.append(wall(start, tz))
    return out


@needs_berlin
def test_spring_forward_skips_the_missing_time():
    assert chain("30 2 * * *", ts(BERLIN, 2024, 3, 30, 12, 0), BERLIN, 2) == [
        "2024-04-01T02:30:00+02:00", "2024-04-02T02:30:00+02:00"]
    assert chain("*/30 * * * *", ts(BERLIN, 2024, 3, 31, 1, 0), BERLIN, 3) == [
        "2024-03-31T01:30:00+01:00", "2024-03-31T03:00:00+02:00", "2024-03-31T03:30:00+02:00"]


@needs_berlin
def test_fall_back_fires_once_at_the_first_occurrence():
    assert chain("30 2 * * *", ts(BERLIN, 2024, 10, 26, 12, 0), BERLIN, 3) == [
        "2024-10-27T02:30:00+02:00", "2024-10-28T02:30:00+01:00", "2024-10-29T02:30:00+01:00"]
    assert chain("*/20 * * * *", ts(BERLIN, 2024, 10, 27, 1, 50), BERLIN, 6) == [
        "2024-10-27T02:00:00+02:00", "2024-10-27T02:20:00+02:00", "2024-10-27T02:40:00+02:00",
        "2024-10-27T03:00:00+01:00", "2024-10-27T03:20:00+01:00", "2024-10-27T03:40:00+01:00"]
    # From inside the repeated hour (its second pass), the next firing is after it.
    second_pass = ts(BERLIN, 2024, 10, 27, 2, 10, fold=1)
    assert wall(second_pass, BERLIN) == "2024-10-27T02:10:00+01:00"
    assert wall(next_after(parse("*/20 * * * *"), second_pass, BERLIN), BERLIN) == "2024-10-27T03:00:00+01:00"
    # From its first pass, too.
    first_pass = ts(BERLIN, 2024, 10, 27, 2, 50, fold=0)
    assert wall(next_after(parse("15 * * * *"), first_pass, BERLIN), BERLIN) == "2024-10-27T03:15:00+01:00"


@needs_lord_howe
def test_half_hour_changes():
    # Australia/Lord_Howe: 2024-10-06 02:00 +10:30 → 02:30 +11:00; 2024-04-07 02:00 +11:00 → 01:30 +10:30.
    assert chain("15 2 * * *", ts(LORD_HOWE, 2024, 10, 5, 12, 0), LORD_HOWE, 2) == [
        "2024-10-07T02:15:00+11:00", "2024-10-08T02:15:00+11:00"]
    assert chain("45 1 * * *", ts(LORD_HOWE, 2024, 4, 6, 12, 0), LORD_HOWE, 2) == [
        "2024-04-07T01:45:00+11:00", "2024-04-08T01:45:00+10:30"]


# --- next_after against a minute-by-minute reference ------------------------------------------------

FIELD_CHOICES = (
    ["*", "*/7", "0", "5,35", "10-20/3", "59", "0-4", "*/30"],
    ["*", "*", "*/5", "2", "1-3", "0,12", "23", "2-3"],
    ["*", "*", "1-10", "*/3", "15", "31", "28-31", "*/2"],
    ["*", "*", "*", "*/2", "MAR-APR,SEP-OCT", "2-4,10"],
    ["*", "*", "MON-FRI", "SUN", "0,6", "*/3", "7"],
)


def minutes(tz, start: float, end: float) -> list[tuple[float, datetime]]:
    """Each minute in [start, end) with its wall clock in tz."""
    return [(float(t), datetime.fromtimestamp(t, tz)) for t in range(int(start), int(end), 60)]


def reference(spec: CronSpec, window: list[tuple[float, datetime]]) -> list[float]:
    """Every matching minute of the window, found by looking at each one: its wall clock must
    match, and it must not be the second pass of a repeated hour (fold 1)."""
    found = []
    for instant, local in window:
        in_days = local.day in spec.days
        in_weekdays = (local.weekday() + 1) % 7 in spec.weekdays            # Monday 0 → 1, Sunday 6 → 0
        day = (in_days or in_weekdays) if spec.day_or else (in_days and in_weekdays)
        if (local.fold == 0 and day and local.minute in spec.minutes and local.hour in spec.hours
                and local.month in spec.months):
            found.append(instant)
    return found


def windows():
    yield "UTC", UTC, ts(UTC, 2024, 2, 22), ts(UTC, 2024, 3, 4)                  # through 29 February
    if BERLIN is not None:
        yield "Berlin spring", BERLIN, ts(UTC, 2024, 3, 27), ts(UTC, 2024, 4, 6)
        yield "Berlin fall", BERLIN, ts(UTC, 2024, 10, 23), ts(UTC, 2024, 11, 2)
    if LORD_HOWE is not None:
        yield "Lord Howe spring", LORD_HOWE, ts(UTC, 2024, 10, 1), ts(UTC, 2024, 10, 10)
        yield "Lord Howe autumn", LORD_HOWE, ts(UTC, 2024, 4, 2), ts(UTC, 2024, 4, 11)


@pytest.mark.parametrize("label, tz, start, end", list(windows()), ids=lambda v: v if isinstance(v, str) else "")
def test_against_minute_by_minute_reference(label, tz, start, end):
    rng = random.Random(18)
    window = minutes(tz, start, end)
    seen = 0
    for _ in range(16):
        text = " ".join(rng.choice(choices) for choices in FIELD_CHOICES)
        spec = parse(text)
        expected = reference(spec, window)
        seen += len(expected)
        # The whole sequence of firings from the window's start (at most 200 of them)...
        got, t = [], start - 0.5
        for _ in range(min(len(expected), 200)):
            t = next_after(spec, t, tz)
            got.append(t)
        assert got == expected[:200], text
        # ...and from random instants, some on a minute, some between; past the last firing in
        # the window, the next one is past its end.
        for _ in range(30):
            at = rng.uniform(start, end)
            if rng.random() < 0.3:
                at = float(int(at) // 60 * 60)
            i = bisect.bisect_right(expected, at)
            if i < len(expected):
                assert next_after(spec, at, tz) == expected[i], (text, wall(at, tz))
            else:
                assert next_after(spec, at, tz) >= end, (text, wall(at, tz))
    assert seen > 500                  # the specs fire often enough in the window to test something
