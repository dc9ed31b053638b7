"""Functions against hostile values (a review's findings): infinities and overflow give SAS's "Invalid
argument" NOTE and a missing result, never a crash; dates run to 31DEC20000 (SAS's calendar, in day
numbers); INTNX/INTCK's WEEKDAY interval; character results never pass SAS's 32767 characters."""
from __future__ import annotations

import math

import pytest

from statgrid.sas.context import FunctionRuntime
from statgrid.sas.errors import SasError
from statgrid.sas.functions import FUNCTIONS
from tests.unit.sas.standins import Program

INF = math.inf


def call(name, *args):
    """(result, NOTEs) of the function as the DATA step calls it (the registered callable)."""
    rt = FunctionRuntime(Program(), {}, 3, 7)
    return FUNCTIONS[name].fn(rt, *args), rt.program.log.notes


def miss(v):
    return isinstance(v, float) and v != v


def invalid(name, *args):
    r, notes = call(name, *args)
    assert (miss(r) or r == ""), (name, args, r)
    assert any(f"to function {name}" in n for n in notes), (name, args, notes)
    return r


@pytest.mark.parametrize("name,args", [
    ("INT", (INF,)), ("ROUND", (INF,)), ("CEIL", (INF,)), ("FLOOR", (-INF,)), ("FUZZ", (INF,)),
    ("DATEPART", (INF,)), ("MOD", (INF, 2.0)), ("SUBSTR", ("abc", INF)), ("SCAN", ("a b", INF)),
    ("FIND", ("abc", "b", INF)), ("FIPSTATE", (INF,)), ("YEAR", (INF,)), ("TIMEPART", (INF,)),
])
def test_infinite_arguments_are_invalid_not_crashes(name, args):
    invalid(name, *args)


def test_round_to_a_unit_finer_than_the_value_keeps_it():
    assert call("ROUND", 1e300, 1e-300)[0] == 1e300
    assert call("ROUND", 2.675, 0.01)[0] == 2.68                  # SAS's documented example still holds


def test_input_beyond_the_largest_double_is_invalid_data():
    r, notes = call("INPUT", "1e400", "best32.")
    assert miss(r) and any("Invalid argument to function INPUT" in n for n in notes)
    assert call("INPUT", "1e300", "best32.")[0] == 1e300


def test_put_and_cats_of_infinity_do_not_raise():
    assert len(call("PUT", INF, "best12.")[0]) == 12
    assert isinstance(call("CATS", INF, "x")[0], str)


# -- dates: SAS's calendar runs from 01JAN1582 (-138061) to 31DEC20000 (6589335) ------------------------
def test_dates_to_the_year_20000():
    assert call("YEAR", 6589335.0)[0] == 20000.0
    assert call("MONTH", 6589335.0)[0] == 12.0 and call("DAY", 6589335.0)[0] == 31.0
    assert call("MDY", 12.0, 31.0, 20000.0)[0] == 6589335.0
    assert call("YEAR", -138061.0)[0] == 1582.0
    # SAS writes '31DEC9999:00:00:00'dt as 253717660800 (its calendar skips 29 Feb 4000 and 8000)
    day = call("DATEPART", 253717660800.0)[0]
    assert day == 2936547.0
    assert (call("YEAR", day)[0], call("MONTH", day)[0], call("DAY", day)[0]) == (9999.0, 12.0, 31.0)
    assert call("MDY", 3.0, 1.0, 4000.0)[0] - call("MDY", 2.0, 28.0, 4000.0)[0] == 1.0
    assert call("WEEKDAY", 0.0)[0] == 6.0                          # 01JAN1960 was a Friday


@pytest.mark.parametrize("name,args", [
    ("MONTH", (6589336.0,)), ("DAY", (3e6 * 10,)), ("YEAR", (-138062.0,)), ("MDY", (1.0, 1.0, 1e10)),
    ("MDY", (2.0, 29.0, 4000.0)), ("INTNX", ("month", 1e15, 1.0)), ("INTNX", ("month", 21945.0, 1e15)),
    ("INTNX", ("year", 0.0, 1e5)), ("INTCK", ("month", -1e15, 1e15)), ("INTNX", ("dtmonth", INF, 1.0)),
])
def test_dates_outside_sas_range_are_invalid_arguments(name, args):
    invalid(name, *args)


def test_intnx_hour_returns_a_float():
    r = call("INTNX", "hour", 3600.5, 1.0)[0]
    assert r == 7200.0 and type(r) is float
    assert type(call("INTNX", "minute", 59.0, 1.0, "m")[0]) is float


def test_weekday_interval():
    fri = call("MDY", 10.0, 17.0, 2003.0)[0]         # Friday 17 October 2003
    sat, mon = fri + 1, fri + 3
    assert call("WEEKDAY", fri)[0] == 6.0
    assert call("INTNX", "weekday", fri, 1.0)[0] == mon
    assert call("INTNX", "weekday", sat, 0.0)[0] == fri            # Friday, Saturday, Sunday: one interval
    assert call("INTNX", "weekday", mon, -1.0)[0] == fri
    assert call("INTCK", "weekday", fri, mon)[0] == 1.0
    assert call("INTCK", "weekday", fri, sat)[0] == 0.0
    assert call("INTNX", "weekday1w", fri, 1.0)[0] == sat          # only Sunday is a weekend day
    # SAS/ETS User's Guide, "Using Interval Functions for Calendar Calculations": weekdays from
    # 17OCT91 to the second Friday of November 1991, inclusive, N=17
    d = call("MDY", 10.0, 17.0, 1991.0)[0]
    nxt = call("INTNX", "month", d, 1.0)[0]
    second_friday = call("INTNX", "week.6", nxt - 1, 2.0)[0]
    assert call("INTCK", "weekday", d - 1, second_friday + 1)[0] == 17.0


# -- character results: at most 32767 characters ------------------------------------------------------------
def test_character_builders_stop_at_32767():
    assert len(call("REPEAT", "ab", 1e9)[0]) == 32767
    assert call("REPEAT", "ab", 2.0)[0] == "ababab"
    big = call("TRANWRD", "a" * 32767, "a", "b" * 32767)[0]
    assert len(big) == 32767 and set(big) == {"b"}
    assert call("TRANWRD", "a cat", "cat", "dog")[0] == "a dog"
    assert len(call("CATS", "x" * 30000, "y" * 30000)[0]) == 32767


def test_put_with_a_huge_character_width_is_an_error_naming_the_format():
    with pytest.raises(SasError, match=r"\$"):
        call("PUT", "abc", "$300000000.")


def test_put_with_a_bad_format_text_names_it():
    with pytest.raises(SasError, match="dollar-1"):
        call("PUT", 1.0, "dollar-1.")
