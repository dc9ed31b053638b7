"""A DATA step's BY group out of order (SAS 9.4 Language Reference: Concepts, "BY-Group Processing in the DATA
Step"): SAS finds the fault when the look-ahead it does for LAST. reads the row at fault, so the iterations before
it run and write their observations; then "ERROR: BY variables are not properly sorted on data set X." and the
PDV (the variables, FIRST./LAST., _ERROR_=1, _N_) and the step stops. Expected values by hand from the data."""
from __future__ import annotations

from tests.unit.sas.standins import rows, run_sas

DATA = """data g; input k x; datalines;
1 1
2 2
3 3
1 4
1 5
;
"""


def run(session, text):
    code, log, _ = run_sas(session, DATA + text, procs={}, header=False)
    return code, log


def test_set_by_out_of_order_runs_up_to_the_row_before_and_dumps_the_pdv(session):
    code, log = run(session, "data h; set g; by k; y = x * 10; run;")
    assert code == 1
    lines = log.splitlines()
    i = lines.index("ERROR: BY variables are not properly sorted on data set WORK.G.")
    # row 4 (k=1) sorts before row 3 (k=3): found while row 3 is read (_N_=3); y not yet computed, so missing;
    # k=3 is alone in its group by the look-ahead (FIRST.k=1 LAST.k=1)
    assert lines[i + 1] == "k=3 x=3 FIRST.k=1 LAST.k=1 y=. _ERROR_=1 _N_=3"   # PDV order: y after BY
    assert "NOTE: The SAS System stopped processing this step because of errors." in lines[i + 2:]
    assert ("WARNING: The data set WORK.H may be incomplete.  When this step was stopped there were 2 observations "
            "and 3 variables.") in log
    assert rows(session, "work.h") == [{"k": 1.0, "x": 1.0, "y": 10.0}, {"k": 2.0, "x": 2.0, "y": 20.0}]


def test_subsetting_if_last_and_descending_and_notsorted(session):
    code, log = run(session, "data h2; set g; by k; if last.k; run;\n"
                             "data d; set g; by descending k; run;\n"
                             "data n; set g; by k notsorted; if first.k; run;")
    assert code == 1
    # descending: row 2 (k=2) is above row 1 (k=1), found while row 1 is read
    assert "k=1 x=1 FIRST.k=1 LAST.k=1 _ERROR_=1 _N_=1" in log.splitlines()
    assert rows(session, "work.h2") == [{"k": 1.0, "x": 1.0}, {"k": 2.0, "x": 2.0}]
    assert rows(session, "work.d") == []
    # NOTSORTED: groups in file order, no ERROR for this step (groups 1 | 2 | 3 | 1 1)
    assert [r["x"] for r in rows(session, "work.n")] == [1.0, 2.0, 3.0, 4.0]
    assert log.count("ERROR: BY variables are not properly sorted") == 2


def test_merge_by_out_of_order_stops_before_any_row(session):
    code, log = run(session, "data m; merge g g(rename=(x=x2)); by k; run;")
    assert code == 1
    assert "ERROR: BY variables are not properly sorted on data set WORK.G." in log


def test_abort_dumps_the_pdv(session):
    code, log = run(session, "data _null_; set g; y = 'ab'; if x = 2 then abort; run;")
    assert code == 1
    lines = log.splitlines()
    i = next(j for j, t in enumerate(lines) if t.startswith("ERROR: Execution terminated by an ABORT statement"))
    assert lines[i + 1] == "k=2 x=2 y=ab _ERROR_=1 _N_=2"
