"""SAS's calendar past the year 4000 (SAS Language Reference: Concepts, "About SAS Date, Time, and Datetime Values":
dates run to A.D. 20,000; years divisible by 4000 are not leap years): a date literal, MDY, the DATEw. informat
and format agree with it; a year of five digits does not fit DATE9. (asterisks). Day numbers by hand: 31DEC9999
is 2,936,547 (SAS's datetime 253717660800 / 86400), so 01JAN10000 is 2,936,548; 01MAR4000 follows 28FEB4000."""
from __future__ import annotations

from statgrid.sas.formats.dates import date_format, read_date
from tests.unit.sas.standins import run_sas


def test_formats_and_informats_in_sas_calendar():
    assert date_format(2936547, 9) == "31DEC9999"
    assert date_format(2936548, 9) == "*" * 9
    assert read_date("01JAN10000") == 2936548.0


def test_literals_and_mdy_in_a_program(session):
    code, log, _ = run_sas(session, """data a;
  f = '01JAN10000'd; m = mdy(1, 1, 10000); g = '01MAR4000'd; h = mdy(2, 28, 4000); bad = mdy(2, 29, 4000);
  t = put(g, date9.);
run;""")
    row = session.fetch_arrow("SELECT * FROM " + session.ref("work.a").scan_sql()).to_pylist()[0]
    assert row["f"] == row["m"] == 2936548.0
    assert row["g"] == row["h"] + 1 and row["t"] == "01MAR4000"
    assert row["bad"] is None and "Invalid argument" in log        # no 29 February in 4000
