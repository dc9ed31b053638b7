"""Built-in formats and informats against SAS 9.4 Formats and Informats: Reference (its example outputs,
e.g. PUT(1234.5, COMMA10.2) = '  1,234.50', PERCENT10. of -0.05 = '(      5%)'), and hand-computed
values: width, right alignment, what happens when the value does not fit, missing values."""
from __future__ import annotations

import datetime as dt

import pytest

from statgrid.sas.errors import SasError
from statgrid.sas.formats import FormatSpec, InvalidData, default_format, format_value, informat_value, parse_spec
from statgrid.sas.values import MISSING, special_missing


def d(text):
    return float((dt.datetime.strptime(text, "%d%b%Y").date() - dt.date(1960, 1, 1)).days)


def test_parse_spec():
    assert parse_spec("COMMA10.2") == FormatSpec("COMMA", 10, 2, False)
    assert parse_spec("$char8.") == FormatSpec("CHAR", 8, None, True)
    assert parse_spec("8.") == FormatSpec("", 8, None, False) and parse_spec("$5.") == FormatSpec("", 5, None, True)
    assert parse_spec("best.") == FormatSpec("BEST", None, None) and parse_spec("mmddyy10.").name == "MMDDYY"
    assert parse_spec("$sexf.").text == "$SEXF." and parse_spec("date9.").text == "DATE9."
    with pytest.raises(SasError):
        parse_spec("comma10")


@pytest.mark.parametrize("value,fmt,expected", [
    (1234.5, "COMMA10.2", "  1,234.50"), (23451.23, "comma10.2", " 23,451.23"), (-1234567, "comma12.", "  -1,234,567"),
    (1234.5, "DOLLAR10.2", " $1,234.50"), (1257000, "E10.", " 1.257E+06"), (1350, "Z8.", "00001350"),
    (-1.5, "z8.2", "-0001.50"), (0.1, "PERCENT10.", "      10% "), (1.2, "percent10.", "     120% "),
    (-0.05, "percent10.", "(      5%)"), (3.14159, "8.2", "    3.14"), (2.5, "3.", "  3"), (-0.001, "5.2", " 0.00"),
    (0.5, "3.2", ".50"), (123456789, "5.", "1.2E8"), (1234.5678, "F8.1", "  1234.6"),
    (3.14159, "BEST12.", "     3.14159"), (1 / 3, "best12.", "0.3333333333"), (1e15, "best12.", "        1E15"),
    (123456789012345, "BEST12.", "1.2345679E14"), (1234567, "best6.", "1.23E6"), (1234, "BEST.", "        1234"),
    (-12.5, "best4.", " -13"), (0, "best5.", "    0"), (1e6, "comma5.", "  1E6"), (2.675, "4.2", "2.68"), (-2.5, "2.", "-3"),
])
def test_numeric_formats(value, fmt, expected):
    assert format_value(float(value), fmt) == expected


def test_missing_values_in_formats():
    with pytest.raises(SasError, match="Width specified for format DATE is invalid"):
        format_value(0.0, "date3.")
    assert format_value(MISSING, "8.2") == "       ." and format_value(MISSING, "date9.") == "        ."
    assert format_value(MISSING, "comma6.", missing=" ") == "      "
    assert format_value(special_missing("A"), "best5.") == "    A" and format_value(special_missing("_"), "3.") == "  _"


@pytest.mark.parametrize("value,fmt,expected", [
    ("17OCT1991", "DATE9.", "17OCT1991"), ("17OCT1991", "date7.", "17OCT91"), ("17OCT1991", "date5.", "17OCT"),
    ("17OCT1991", "date11.", "17-OCT-1991"), ("17OCT1991", "mmddyy10.", "10/17/1991"),
    ("17OCT1991", "mmddyy8.", "10/17/91"), ("17OCT1991", "mmddyy6.", "101791"), ("17OCT1991", "ddmmyy10.", "17/10/1991"),
    ("17OCT1991", "yymmdd10.", "1991-10-17"), ("17OCT1991", "yymmdd8.", "91-10-17"), ("17OCT1991", "monyy7.", "OCT1991"),
    ("17OCT1991", "monyy5.", "OCT91"), ("17OCT1991", "worddate.", "  October 17, 1991"),
    ("17OCT1991", "worddate12.", "Oct 17, 1991")])
def test_date_formats(value, fmt, expected):
    assert format_value(d(value), fmt) == expected


def test_time_and_datetime_formats():
    t = d("17OCT1991") * 86400 + 14 * 3600 + 45 * 60 + 32
    assert format_value(t, "DATETIME.") == "17OCT91:14:45:32" and format_value(t, "datetime20.") == "  17OCT1991:14:45:32"
    assert format_value(t, "datetime18.") == "17OCT1991:14:45:32" and format_value(t, "datetime7.") == "17OCT91"
    assert format_value(t + .5, "datetime22.1") == "  17OCT1991:14:45:32.5"
    assert format_value(53132.0, "TIME8.") == "14:45:32" and format_value(3723.0, "time8.") == " 1:02:03"
    assert format_value(3723.0, "time5.") == " 1:02" and format_value(90000.0, "time8.") == "25:00:00"
    assert format_value(32700.0, "HHMM.") == " 9:05" and format_value(32730.0, "hhmm5.") == " 9:06"


def test_character_formats():
    assert format_value("ab", "$5.") == "ab   " and format_value("  ab", "$CHAR5.") == "  ab " and format_value("abcdef", "$3.") == "abc"
    assert format_value("xy", "$.") == "xy"
    with pytest.raises(SasError, match="NOSUCH"):
        format_value(1.0, "nosuch8.")
    assert default_format(1.0) == FormatSpec("BEST", 12) and default_format("char", 20) == FormatSpec("", 20, None, True)


def test_numeric_informats():
    assert informat_value("1234", "6.2") == 12.34 and informat_value("12.5", "6.2") == 12.5
    assert informat_value("  1.5E3", "8.") == 1500 and informat_value(" ", "8.") != informat_value(" ", "8.")
    assert informat_value("1,234.50", "COMMA10.") == 1234.5 and informat_value("$1,000", "dollar8.") == 1000
    assert informat_value("(500)", "comma6.") == -500 and informat_value("12345678", "3.") == 123
    assert informat_value("25%", "percent5.") == .25
    with pytest.raises(InvalidData):
        informat_value("12a", "5.")


def test_date_and_character_informats():
    assert informat_value("17OCT1991", "DATE9.") == d("17OCT1991") and informat_value("17-oct-91", "date9.") == d("17OCT1991")
    assert informat_value("10/17/1991", "MMDDYY10.") == d("17OCT1991") and informat_value("101791", "mmddyy6.") == d("17OCT1991")
    assert informat_value("17/10/1991", "ddmmyy10.") == d("17OCT1991") and informat_value("1991-10-17", "yymmdd10.") == d("17OCT1991")
    assert informat_value("19911017", "yymmdd8.") == d("17OCT1991") and informat_value("10/17/20", "mmddyy8.") == d("17OCT2020")
    assert informat_value("10/17/20", "mmddyy8.", yearcutoff=1900) == d("17OCT1920")
    assert informat_value("17OCT1991:14:45:32", "DATETIME18.") == d("17OCT1991") * 86400 + 53132
    assert informat_value("14:45:32", "TIME8.") == 53132 and informat_value("2:45 PM", "time8.") == 53100
    assert informat_value("2020-03-05", "anydtdte10.") == d("05MAR2020") and informat_value("03/05/2020", "anydtdte10.") == d("05MAR2020")
    with pytest.raises(InvalidData):
        informat_value("31FEB2020", "date9.")
    assert informat_value("  ab ", "$5.") == "ab " and informat_value("  ab ", "$CHAR5.") == "  ab " and informat_value("abcdef", "$3.") == "abc"
