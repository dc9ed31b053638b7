"""CALL EXECUTE (statements and macro calls run when the DATA step ends, SAS's "CALL EXECUTE generated line."),
SET's data set lists (a numbered range sales1-sales3, a prefix sales:), and a member named like an SQL keyword
(ALL) in PROC SQL. Expected rows by hand."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


def rows(session, name):
    return session.fetch_arrow("SELECT * FROM " + session.ref(name).scan_sql()).to_pylist()


def test_call_execute_runs_steps_and_macros_after_the_step(session):
    code, log, _ = run_sas(session, """%macro mk(k); data m&k; v = &k * 10; run; %mend;
data _null_;
  do k = 1 to 3;
    call execute(cats('data ex', k, '; v=', k, '; run;'));
  end;
  call execute('%mk(7)');
run;
data all; set ex1-ex3 m7; run;
proc sql noprint; select sum(v) into :s trimmed from all; quit;
%put total=&s;
""")
    assert code == 0, log
    assert "NOTE: CALL EXECUTE generated line." in log and "1         + data ex1; v=1; run;" in log
    assert [r["v"] for r in rows(session, "work.all")] == [1.0, 2.0, 3.0, 70.0]
    assert "total=76" in log


def test_data_set_lists_range_prefix_and_errors(session):
    code, log, _ = run_sas(session, """data s01; x = 1; run; data s02; x = 2; run; data s03; x = 3; run;
data t2; x = 9; run;
data r; set s01-s03(where=(x > 1)); run;
data p; set s:; run;
data bad; set s01-s05; run;
""")
    assert [r["x"] for r in rows(session, "work.r")] == [2.0, 3.0]
    assert [r["x"] for r in rows(session, "work.p")] == [1.0, 2.0, 3.0]
    assert code == 1 and "File WORK.S04.DATA does not exist" in log
