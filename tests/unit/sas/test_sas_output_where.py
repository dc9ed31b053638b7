"""WHERE= on an output data set (SAS Data Set Options: WHERE= "You can also select observations that are written to
an output data set"): the DATA step (every engine), PROC SUMMARY's OUTPUT OUT= (the `_type_` idiom), PROC SORT
OUT=, PROC FREQ OUT=, PROC SQL CREATE TABLE — only the rows that pass are written, and the NOTE counts them.
Expected rows written out by hand from the three input rows."""
from __future__ import annotations

import io

import pytest

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog

DATA = "data a; input g $ x; datalines;\na 1\nb 2\nb 3\n;\nrun;\n"


def run(session, text):
    out = io.StringIO()
    code = run_program(DATA + text, session, SasLog(SessionLog(text=out, jsonl=io.StringIO(), listing=io.StringIO())))
    return code, out.getvalue()


def rows(session, name):
    return session.fetch_arrow("SELECT * FROM " + session.ref(name).scan_sql()).to_pylist()


@pytest.mark.parametrize("engine", ["python", "sql", "numba", "auto"])
def test_data_step_output_where(session, engine):
    code, log = run(session, f"options dsengine={engine};\ndata o(where=(x > 1)); set a; run;\n"
                             "data r(where=(y > 2) rename=(x=y)); set a; run;\n")
    assert code == 0, log
    assert rows(session, "work.o") == [{"g": "b", "x": 2.0}, {"g": "b", "x": 3.0}]
    assert "The data set WORK.O has 2 observations" in log
    assert rows(session, "work.r") == [{"g": "b", "y": 3.0}]          # WHERE= names the variables as written


def test_procedure_outputs_keep_only_the_rows_that_pass(session):
    code, log = run(session, """proc summary data=a; class g; var x; output out=s(where=(_type_ = 1)) sum=total; run;
proc sort data=a out=srt(where=(x > 1)); by descending x; run;
proc freq data=a noprint; tables g / out=f(where=(count > 1)); run;
proc sql; create table q(where=(x > 1)) as select * from a; quit;
""")
    assert code == 0, log
    assert [(r["g"], r["_TYPE_"], r["total"]) for r in rows(session, "work.s")] == [("a", 1, 1.0), ("b", 1, 5.0)]
    assert "The data set WORK.S has 2 observations" in log
    assert [r["x"] for r in rows(session, "work.srt")] == [3.0, 2.0]
    assert [(r["g"], r["COUNT"]) for r in rows(session, "work.f")] == [("b", 2.0)]
    assert [r["x"] for r in rows(session, "work.q")] == [2.0, 3.0]
    assert "Table WORK.Q created, with 2 rows" in log


def test_a_bad_output_where_is_an_error_and_replaces_nothing(session):
    code, log = run(session, "data o; set a; run;\ndata o(where=(nosuch > 1)); set a; x = x * 10; run;\n")
    assert code != 0
    assert "nosuch" in log.lower()
    assert [r["x"] for r in rows(session, "work.o")] == [1.0, 2.0, 3.0]       # the old data set is still there


def test_where_also_same_and_replace_and_the_option_winning(session):
    """A PROC's WHERE statements: WHERE ALSO / WHERE SAME AND join the condition with AND, a plain later WHERE
    replaces the earlier one, and a WHERE= data set option wins over the statement (SAS Statements: WHERE)."""
    code, log = run(session, """data n; do i = 1 to 100; x = i; output; end; run;
proc summary data=n; var x; where x > 1; where also x < 50; output out=s1 n=n; run;
proc summary data=n; var x; where x > 10; where same and x <= 20; output out=s2 n=n; run;
proc summary data=n; var x; where x > 90; where x <= 5; output out=s3 n=n; run;
proc summary data=n(where=(x <= 3)); var x; where x > 50; output out=s4 n=n; run;
""")
    assert code == 0, log
    assert [rows(session, f"work.s{k}")[0]["n"] for k in (1, 2, 3, 4)] == [48.0, 10.0, 5.0, 3.0]


def test_data_step_where_statements_replace_or_augment_with_sas_notes(session):
    """In a DATA step too a later WHERE replaces the earlier one and WHERE ALSO / WHERE SAME AND add to it,
    each change logged ("WHERE clause has been replaced." / "augmented."); a variable named ALSO is still a
    variable; a WHERE= data set option is kept beside the statement."""
    code, log = run(session, """data n; do i = 1 to 100; x = i; also = mod(i, 2); output; end; run;
data a; set n; where x > 10; where also x <= 20; run;
data b; set n; where x > 90; where x <= 5; run;
data c; set n; where x > 10; where same and x <= 40; where also also = 1; run;
data d; set n; where also = 0 and x < 7; run;
data e; set n(where=(x <= 30)); where x > 25; run;
""")
    assert code == 0, log
    # the rows, counted by hand: 11..20; 1..5; odd 11..39; even below 7; 26..30
    assert [r["x"] for r in rows(session, "work.a")] == [float(k) for k in range(11, 21)]
    assert [r["x"] for r in rows(session, "work.b")] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert [r["x"] for r in rows(session, "work.c")] == [float(k) for k in range(11, 40, 2)]
    assert [r["x"] for r in rows(session, "work.d")] == [2.0, 4.0, 6.0]
    assert [r["x"] for r in rows(session, "work.e")] == [26.0, 27.0, 28.0, 29.0, 30.0]
    assert log.count("NOTE: WHERE clause has been augmented.") == 3, log
    assert log.count("NOTE: WHERE clause has been replaced.") == 1, log
