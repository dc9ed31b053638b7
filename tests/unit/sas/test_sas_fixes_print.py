"""PROC PRINT shows special missing values as their letter (SAS Language Reference: Concepts, "Missing Values":
.A-.Z and ._ print as A-Z and _), read from the letters the DATA step keeps in the data set's file."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas

DATA = """data a; input x y; if _n_ = 2 then x = .A; if _n_ = 3 then x = ._; if _n_ = 4 then y = .Z; datalines;
1 10
2 20
3 30
4 .
5 50
;
"""


def listing(session, text: str) -> list[list[str]]:
    code, log, lst = run_sas(session, DATA + text)
    assert code == 0, log
    return [line.split() for line in lst.splitlines() if line.strip()]


def test_print_shows_the_letters(session):
    lines = listing(session, "proc print data=a; run;")
    assert ["1", "1", "10"] in lines and ["2", "A", "20"] in lines and ["3", "_", "30"] in lines
    assert ["4", "4", "Z"] in lines and ["5", "5", "50"] in lines


def test_print_with_where_and_a_format_keeps_each_rows_letter(session):
    # WHERE leaves out observations 1 and 5: the Obs column and the letters stay the file's
    lines = listing(session, "proc print data=a; where y ne 10 and x ne 5; format x 6.1; run;")
    assert ["2", "A", "20"] in lines and ["3", "_", "30"] in lines and ["4", "4.0", "Z"] in lines
    assert not any(line[:1] == ["1"] or line[:1] == ["5"] for line in lines[1:])


def test_plain_missing_still_prints_a_period(session):
    code, log, lst = run_sas(session, "data b; input x; datalines;\n1\n.\n;\nproc print data=b; run;")
    assert code == 0, log
    assert ["2", "."] in [line.split() for line in lst.splitlines()]
