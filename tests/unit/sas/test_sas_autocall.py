"""Macro autocall, %SYSCALL, %WINDOW/%DISPLAY (SAS 9.4 Macro Language: Reference). Autocall: under MAUTOSOURCE
an undefined %name compiles name.sas from the first SASAUTOS= location holding it (a directory or a fileref);
%SYSCALL RANUNI(seed, x) runs CALL RANUNI on macro variables (RANUNI: x(n+1) = 397204094 x(n) mod 2**31-1,
u = x/(2**31-1), from Functions and CALL Routines: RANUNI); %SYSCALL SET(dsid) fills macro variables named as
the data set's variables at each FETCH. Expected values by hand."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


def run(session, text):
    code, log, _ = run_sas(session, text, procs={}, header=False)
    return code, log


def puts(log):
    """The lines %PUT wrote (they start with '>')."""
    return [ln[1:] for ln in log.splitlines() if ln.startswith(">")]


def test_autocall_from_directories_and_filerefs(session, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "hello.sas").write_text("%macro hello(n);\n%put >hello &n;\n%mend;\n%macro helper; %put >helped; %mend;\n")
    (b / "hello.sas").write_text("%macro hello(n); %put >second library; %mend;\n")
    (b / "other.sas").write_text("%macro nothere; %put >wrong macro; %mend;\n")
    (b / "twice.sas").write_text("%macro twice(x=1);%eval(&x * 2)%mend;\n")
    code, log = run(session, f"""filename mylib '{b}';
options mautosource sasautos=('{tmp_path}/none' '{a}' mylib);
%hello(4)
%helper
%put >%twice(x=21);
data _null_; length s $ 8; s = "%twice()"; put '>' s; run;
%other
options nomautosource;
%hello(5)
""")
    # a's hello.sas is first; helper came with it; twice.sas from the fileref; other.sas does not define OTHER
    assert puts(log) == ["hello 4", "helped", "42", "2", "hello 5"]
    assert "WARNING: Apparent invocation of macro OTHER not resolved." in log
    assert "second library" not in log


def test_autocall_off_or_missing_member_leaves_the_invocation(session, tmp_path):
    (tmp_path / "late.sas").write_text("%macro late; %put >late; %mend;\n")
    code, log = run(session, f"""options nomautosource sasautos=('{tmp_path}');
%late;
options mautosource;
%late""")
    assert log.count("WARNING: Apparent invocation of macro LATE not resolved.") == 1
    assert puts(log) == ["late"]


def test_syscall_ranuni_and_set(session):
    code, log = run(session, """%let seed=123; %let x=0;
%syscall ranuni(seed, x);
%put >&seed &x;
data cls; input name $ age; datalines;
Ann 13
Bob 14.5
;
%let dsid=%sysfunc(open(work.cls));
%syscall set(dsid);
%let rc=%sysfunc(fetch(&dsid));
%put >&rc &name &age;
%let rc=%sysfunc(fetch(&dsid));
%put >&rc &name &age;
%let rc=%sysfunc(fetch(&dsid));
%put >&rc &name &age;
%let rc=%sysfunc(close(&dsid));""")
    m = 2 ** 31 - 1
    seed = 397204094 * 123 % m
    assert puts(log) == [f"{seed} {seed / m:.10f}", "0 Ann 13", "0 Bob 14.5", "-1 Bob 14.5"]


def test_syscall_faults_and_windows_in_batch(session):
    code, log = run(session, """%let x=1;
%syscall nosuch(x);
%syscall ranuni(nov, x);
%syscall ranuni(1, x);
%window w #5 @5 'hi';
%display w;""")
    assert code == 1
    assert "ERROR: The CALL routine NOSUCH referenced by the %SYSCALL macro statement is not valid there." in log
    assert "ERROR: Macro variable NOV named in %SYSCALL RANUNI does not exist: %LET it first." in log
    assert "ERROR: Argument '1' to %SYSCALL RANUNI is not a macro variable name" in log
    for kind in ("WINDOW", "DISPLAY"):
        assert f"ERROR: The %{kind} statement needs SAS's windowing environment" in log
