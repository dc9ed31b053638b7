"""The macro processor inside the real driver (statgrid.sas.program.run_program) and a real session:
macros that generate steps, the CALL SYMPUT → &x → SYMGET round trip, %SYSFUNC over the DATA step's
functions (GETOPTION, OPEN/ATTRN/CLOSE, FILENAME/FOPEN/FREAD/FGET, a date with a format), -sysparm and
-set. Expected log lines and values worked by hand from the SAS 9.4 manuals."""
from __future__ import annotations

import io

from statgrid.sas.invocation import Invocation
from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog



def go(session, text, invocation=None):
    out = io.StringIO()
    log = SasLog(SessionLog(text=out, jsonl=io.StringIO(), listing=io.StringIO()))
    code = run_program(text, session, log, invocation, header=False, procs={})
    return code, out.getvalue().split("\n")


def rows(session, name):
    return session.fetch_arrow("SELECT * FROM " + session.ref(name).scan_sql()).to_pylist()


def test_macro_generates_steps_and_symput_round_trip(session):
    code, log = go(session, """options mprint;
%macro make(n);
  %global total;  /* else SYMPUT puts TOTAL in MAKE's local table (N is there), gone after %MEND */
  %do i = 1 %to &n;
    data part&i; x = &i; run;
  %end;
  data _null_; call symput('total', put(&n * 10, 3.)); run;
  %put total is &total;
%mend make;
%make(3)
data check; t = symget('total'); run;
""")
    assert code == 0, "\n".join(log)
    assert [rows(session, f"work.part{i}") for i in (1, 2, 3)] == [[{"x": 1.0}], [{"x": 2.0}], [{"x": 3.0}]]
    assert "total is  30" in log
    assert "MPRINT(MAKE):   data part2;" in log and "MPRINT(MAKE):   x = 2;" in log
    assert rows(session, "work.check")[0]["t"].strip() == "30"


def test_sysfunc_getoption_sysparm_and_sysget(session, monkeypatch):
    inv = Invocation(system={"SYSPARM": "17"}, env={"STATGRID_MACRO_T": "here"})
    code, log = go(session, "%put p=%sysfunc(getoption(sysparm)) s=&sysparm e=%sysget(STATGRID_MACRO_T);\n", inv)
    assert code == 0
    assert "p=17 s=17 e=here" in log


def test_sysfunc_open_attrn_close_and_dates(session):
    code, log = go(session, """data a; do i = 1 to 7; output; end; run;
%let dsid = %sysfunc(open(work.a));
%let nobs = %sysfunc(attrn(&dsid, nobs));
%let rc = %sysfunc(close(&dsid));
%put nobs=&nobs rc=&rc;
%put %sysfunc(mdy(1, 1, 2020), date9.) %sysfunc(mdy(1, 1, 2020));
""")
    assert code == 0, "\n".join(log)
    assert "nobs=7 rc=0" in log
    assert "01JAN2020 21915" in log


def test_sysfunc_filename_fopen_fread_fget(session, tmp_path):
    f = tmp_path / "in.txt"
    f.write_text("alpha beta\n")
    code, log = go(session, f"""%macro readit;
  %let fref = myf;
  %let rc = %sysfunc(filename(fref, {f}));
  %let fid = %sysfunc(fopen(&fref));
  %if &fid > 0 %then %do;
    %let rc = %sysfunc(fread(&fid));
    %let rc = %sysfunc(fget(&fid, word));
    %put first word=&word;
    %let rc = %sysfunc(fclose(&fid));
  %end;
  %else %put open failed;
%mend;
%readit
""")
    assert code == 0, "\n".join(log)
    assert "first word=alpha" in log


def test_macro_error_makes_the_exit_code_one(session):
    code, log = go(session, "%put %eval(a + 1);\n")
    assert code == 1
    assert any(ln.startswith("ERROR: A character operand was found") for ln in log)


def test_the_source_through_a_macro_call_is_echoed_before_the_steps_it_generates(session):
    # SAS's log: the word scanner echoes each source line as it reads it, so the line holding %gen(2)
    # comes before the NOTEs of the steps the macro generates (SAS 9.4 Macro Language Reference, MPRINT).
    code, log = go(session, "%macro gen(k);\n%do i = 1 %to &k; data t&i; x = &i; run; %end;\n%mend;\n%gen(2)\n")
    assert code == 0
    call = next(i for i, ln in enumerate(log) if ln.startswith("4 ") and "%gen(2)" in ln)
    first_note = next(i for i, ln in enumerate(log) if ln.startswith("NOTE: The data set WORK.T1 has 1 observations"))
    assert call < first_note, log
