"""Date functions against SAS 9.4 Functions and CALL Routines: INTNX/INTCK examples from the manual and
hand-computed ones (dates computed here with Python's datetime, independently of the code)."""
from __future__ import annotations

import datetime as dt

import pytest

from statgrid.sas.functions import call_function
from tests.unit.sas.test_sas_functions_numeric import rt


def d(text: str) -> float:
    """'17OCT1991' → SAS date, computed with datetime."""
    return float((dt.datetime.strptime(text, "%d%b%Y").date() - dt.date(1960, 1, 1)).days)


def f(name, *args):
    return call_function(rt(), name, *args)


@pytest.mark.parametrize("args,expected", [
    (("month", d("05JAN1995"), 0), d("01JAN1995")), (("year", d("05FEB1994"), 3), d("01JAN1997")),
    (("month", d("15MAR2000"), 5, "end"), d("31AUG2000")), (("week", d("17OCT2003"), 6), d("23NOV2003")),
    (("qtr", d("15FEB2020"), 0, "e"), d("31MAR2020")), (("month", d("31JAN2020"), 1, "s"), d("29FEB2020")),
    (("year", d("29FEB2020"), 1, "same"), d("28FEB2021")), (("day", d("01JAN2020"), -1), d("31DEC2019")),
    (("semiyear", d("15AUG2020"), 0), d("01JUL2020")), (("month2", d("15MAR2020"), 0), d("01MAR2020")),
    (("year.7", d("15MAR2020"), 0), d("01JUL2019")), (("month", d("01JAN2020"), 0, "m"), d("16JAN2020")),
    (("MONTH", d("15JAN2020"), -13), d("01DEC2018")), (("tenday", d("25JAN2020"), 1), d("01FEB2020"))])
def test_intnx(args, expected):
    assert f("INTNX", *args) == expected


def test_intnx_datetime_intervals():
    t = d("15MAR2020") * 86400 + 10 * 3600 + 30 * 60          # 15MAR2020:10:30:00
    assert f("INTNX", "dtmonth", t, 1) == d("01APR2020") * 86400
    assert f("INTNX", "dtday", t, 0, "e") == d("15MAR2020") * 86400 + 86399
    assert f("INTNX", "hour", t, 2) == d("15MAR2020") * 86400 + 12 * 3600
    assert f("INTNX", "dtyear", t, 0, "s") == t


@pytest.mark.parametrize("args,expected", [
    (("qtr", d("10JAN1995"), d("01JUL1995")), 2), (("year", d("31DEC1999"), d("01JAN2000")), 1),
    (("month", d("31JAN2020"), d("01FEB2020"), "c"), 0), (("month", d("31JAN2020"), d("01FEB2020")), 1),
    (("year", d("15JUN2000"), d("14JUN2010"), "continuous"), 9), (("day", d("01JAN2020"), d("01MAR2020")), 60),
    (("week", d("04JAN2020"), d("05JAN2020")), 1), (("month", d("01MAR2020"), d("15JAN2020")), -2)])
def test_intck(args, expected):
    assert f("INTCK", *args) == expected


def test_bad_interval_is_an_invalid_argument():
    r = rt(2, 4)
    from statgrid.sas.functions import FUNCTIONS
    v = FUNCTIONS["INTNX"].fn(r, "fortnight", 0.0, 1.0)
    assert v != v and r.program.log.notes == ["Invalid first argument to function INTNX at line 2 column 4."]


def test_date_parts_and_builders():
    x = d("17OCT1991")
    assert (f("YEAR", x), f("MONTH", x), f("DAY", x), f("QTR", x), f("WEEKDAY", x)) == (1991, 10, 17, 4, 5)
    assert f("MDY", 10, 17, 1991) == x and f("MDY", 10, 17, 91) == x          # YEARCUTOFF=1926
    assert f("MDY", 1, 1, 20) == d("01JAN2020")
    assert f("MDY", 2, 29, 2001) != f("MDY", 2, 29, 2001)                  # invalid → missing
    assert f("YYQ", 2001, 3) == d("01JUL2001")
    t = f("DHMS", d("01JAN2003"), 15, 30, 15)
    assert t == d("01JAN2003") * 86400 + 55815 and f("DATEPART", t) == d("01JAN2003") and f("TIMEPART", t) == 55815
    assert f("HMS", 1, 2, 3) == 3723 and f("HOUR", 55815) == 15 and f("MINUTE", t) == 30 and f("SECOND", t) == 15
    assert f("DATEPART", -1.0) == -1 and f("YEAR", float("nan")) != f("YEAR", float("nan"))
    today = (dt.date.today() - dt.date(1960, 1, 1)).days
    assert f("TODAY") in (today, today + 1) and f("DATE") in (today, today + 1)
