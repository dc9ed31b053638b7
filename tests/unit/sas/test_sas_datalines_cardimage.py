"""DATALINES records are 80-column card images, blank-padded, or the whole line when it is longer (SAS 9.4
Statements: DATALINES, "Reading Long Data Lines"): a column or formatted field inside column 80 reads blanks
where the typed line ends, and one that reaches past column 80 flows over to the next record (FLOWOVER, the
default: formatted input from column 1 of it). Expected values by hand: z $72. from column 9 ends at column 80;
z $73. does not, so it is read from the next line, and the third line's z runs out of lines (LOST CARD)."""
from __future__ import annotations

from tests.unit.sas.standins import rows, run_sas

CARDS = """abc 123 456
def 789 101
ghi 121 141
;
"""


def test_a_formatted_field_inside_column_80_is_padded(session):
    code, log, _ = run_sas(session, "data d72; input x $ y z $72.; datalines;\n" + CARDS)
    assert code == 0, log
    assert [(r["x"], r["y"], r["z"]) for r in rows(session, "work.d72")] == [
        ("abc", 123.0, "456"), ("def", 789.0, "101"), ("ghi", 121.0, "141")]
    assert "went to a new line" not in log


def test_a_formatted_field_past_column_80_flows_to_the_next_record(session):
    code, log, _ = run_sas(session, "data d73; input x $ y z $73.; datalines;\n" + CARDS)
    assert code == 0, log
    assert [(r["x"], r["y"], r["z"]) for r in rows(session, "work.d73")] == [("abc", 123.0, "def 789 101")]
    assert "NOTE: SAS went to a new line when INPUT statement reached past the end of a line." in log
    assert "NOTE: LOST CARD." in log


def test_column_input_past_column_80_flows_and_missover_stops_it(session):
    code, log, _ = run_sas(session, "data c; input x 1-2 y 79-80 z 81-82; datalines;\n11\n22\n;\n"
                                    "data m; infile datalines missover; input x 1-2 y 79-80 z 81-82; datalines;\n"
                                    "11\n22\n;\n")
    assert code == 0, log
    assert [(r["x"], r["y"], r["z"]) for r in rows(session, "work.c")] == [(11.0, None, None)]
    assert [(r["x"], r["y"], r["z"]) for r in rows(session, "work.m")] == [(11.0, None, None), (22.0, None, None)]
