"""Grouping by formatted values (SAS/STAT FREQ, "Grouping with Formats"; Base Procedures MEANS, CLASS): a PROC's
FORMAT statement or a data set's own format makes the values that print alike one level, carried by the level's
lowest internal value; a missing value is its own level. Expected counts and means worked out by hand."""
from __future__ import annotations


import pytest
from tests.unit.sas.standins import rows, run_sas


DATA = """proc format; value agef low-12 = 'young' 13-high = 'old'; run;
data a; input g $ age x; datalines;
a 11 1
a 14 2
b 12 3
b 15 4
b 16 5
b . 6
;
run;
"""


def run(session, text):
    return run_sas(session, DATA + text)


def test_freq_counts_formatted_levels_under_their_lowest_value(session):
    code, log, lst = run(session, "proc freq data=a; tables age / out=fo missing; format age agef.; run;")
    assert code == 0, log
    # young: 11, 12 → 2 (value 11); old: 14, 15, 16 → 3 (value 14); missing: 1
    assert [(r["age"], r["COUNT"]) for r in rows(session, "work.fo")] == [(None, 1), (11.0, 2), (14.0, 3)]
    assert "young" in lst and "old" in lst


def test_means_class_levels_and_a_stored_format_group_too(session):
    code, log, _ = run(session, """proc means data=a noprint; class age; var x; output out=mo mean=m n=n;
  format age agef.; run;
data b; set a; format age agef.; run;
proc freq data=b noprint; tables age*g / out=cross; run;
proc freq data=a noprint; tables age / out=plain; run;""")
    assert code == 0, log
    got = [(r["_TYPE_"], r["age"], r["n"], r["m"]) for r in rows(session, "work.mo")]
    assert got[0] == (0, None, 5, 3.0)                          # 1+2+3+4+5 over 5 (age missing: not a level)
    assert got[1:] == [(1, 11.0, 2, 2.0), (1, 14.0, 3, pytest.approx(11 / 3))]
    # the data set's own format: young×a 1, young×b 1, old×a 1, old×b 2 (and OUT='s row for the missing age)
    assert [(r["age"], r["g"], r["COUNT"]) for r in rows(session, "work.cross")] == [
        (None, "b", 1), (11.0, "a", 1), (11.0, "b", 1), (14.0, "a", 1), (14.0, "b", 2)]
    # without a format every value is its own level
    assert [r["age"] for r in rows(session, "work.plain")] == [None, 11.0, 12.0, 14.0, 15.0, 16.0]


def test_a_numeric_format_rounds_levels_and_format_errors_are_sas_errors(session):
    code, log, _ = run(session, """data r; input v @@; datalines;
1.1 1.4 1.7 2.1 2.3
;
proc freq data=r noprint; tables v / out=ro; format v 1.; run;""")
    assert code == 0, log
    # the FREQ documentation's own example: 1.1 1.4 → level 1 (two), 1.7 2.1 2.3 → level 2 (three)
    assert [(r["v"], r["COUNT"]) for r in rows(session, "work.ro")] == [(1.1, 2), (1.7, 3)]
    code, log, _ = run(session, "proc freq data=a; tables x; format x nosuch.; run;")
    assert code != 0 and "The format NOSUCH was not found" in log
    code, log, _ = run(session, "proc freq data=a; tables x; format nonvar 5.; run;")
    assert code != 0 and "Variable nonvar not found" in log


def test_tabulate_class_levels_by_format(session):
    code, log, _ = run(session, """proc tabulate data=a out=tt; class age; var x; table age, x*(n mean);
  format age agef.; run;""")
    assert code == 0, log
    # young: x 1, 3 → n 2, mean 2; old: x 2, 4, 5 → n 3, mean 11/3 (age missing: not a level)
    got = [(r["age"], r["x_N"], r["x_Mean"]) for r in rows(session, "work.tt")]
    assert got == [(11.0, 2, 2.0), (14.0, 3, pytest.approx(11 / 3))]
