"""A PROC's BY group out of order is an execution-time ERROR (SAS 9.4 Language Reference: Concepts, "Error
Processing": only syntax and semantic errors put a batch program in syntax-check mode). The step stops and
names the two groups; the steps after it run as usual."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas

PROGRAM = """data a; input g h x; datalines;
1 1 10
2 1 20
1 2 30
;
proc means data=a noprint; by g {notsorted}; var x; output out=m mean=mx; run;
data b; set a; y = x * 2; run;
"""


def test_next_step_runs_after_a_by_order_error_and_the_groups_are_named(session):
    code, log, _ = run_sas(session, PROGRAM.format(notsorted=""))
    flat = " ".join(x.strip() for x in log.split("\n"))
    assert code == 1
    # rows 2 → 3 go from g=2 back to g=1
    assert ("ERROR: Data set WORK.A is not sorted in ascending sequence. The current BY group has g = 2 and the "
            "next BY group has g = 1") in flat
    assert "OBS=0" not in flat
    assert "NOTE: The data set WORK.B has 3 observations and 4 variables." in flat
    ys = sorted(r["y"] for r in session.fetch_arrow("SELECT * FROM " + session.ref("work.b").scan_sql()).to_pylist())
    assert ys == [20.0, 40.0, 60.0]


def test_notsorted_in_a_proc_takes_each_run_as_a_group(session):
    """With NOTSORTED nothing is checked: g = 1 | 2 | 1 are three BY groups (by hand: x 10, 20, 30)."""
    code, log, _ = run_sas(session, PROGRAM.format(notsorted="notsorted"))
    flat = " ".join(x.strip() for x in log.split("\n"))
    assert code == 0 and "ERROR" not in flat, log
    got = session.fetch_arrow("SELECT g, mx FROM " + session.ref("work.m").scan_sql()).to_pylist()
    assert got == [{"g": 1.0, "mx": 10.0}, {"g": 2.0, "mx": 20.0}, {"g": 1.0, "mx": 30.0}]
    assert "NOTE: The data set WORK.B has 3 observations" in flat


def test_proc_print_by_order_error_does_not_stop_the_program(session):
    program = PROGRAM.format(notsorted="").replace("proc means data=a noprint; by g ; var x; output out=m mean=mx;",
                                                   "proc print data=a; by g;")
    assert "proc print" in program
    code, log, _ = run_sas(session, program)
    flat = " ".join(x.strip() for x in log.split("\n"))
    assert code == 1 and "The current BY group has g = 2 and the next BY group has g = 1" in flat
    assert "OBS=0" not in flat and "NOTE: The data set WORK.B has 3 observations and 4 variables." in flat


def test_cimport_refusal_lets_the_rest_of_the_program_run(session):
    """PROC CIMPORT cannot run here (no open reader of CPORT files): an execution-time ERROR, so the steps
    after it run with their data (4 of the benchmark programs SAS-SUBSET.md counts start with CIMPORT)."""
    code, log, _ = run_sas(session, "proc cimport library=work infile='/nonexistent/x.cpt'; run;\n"
                                    "data b; do i = 1 to 3; output; end; run;\n")
    flat = " ".join(x.strip() for x in log.split("\n"))
    assert code == 1 and "PROC CIMPORT is not available" in flat
    assert "OBS=0" not in flat and "NOTE: The data set WORK.B has 3 observations and 1 variables." in flat
