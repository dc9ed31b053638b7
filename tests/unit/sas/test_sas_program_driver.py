"""The SAS program driver over small programs in a real statgrid session: step boundaries, global statements
inside steps, syntax-check mode after an ERROR, SYSCC/SYSERR, exit codes, STIMER records per step, ENDSAS,
RUN CANCEL, the autoexec. The DATA step and the procedures are stand-ins that record what they were given
(their own tests are their owners'): what is checked here is what the driver hands them and logs."""
from __future__ import annotations

import io

import pytest

from statgrid.sas.errors import SasError
from statgrid.sas.invocation import parse_invocation
from statgrid.sas.errors import ProgramAbort
from statgrid.sas.program import plain_statements, run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


class Recorder:
    def __init__(self):
        self.calls: list[tuple] = []

    def data(self, statements, program):
        self.calls.append(("DATA", [s.keyword for s in statements], program.syntax_check, program.options.get("OBS"),
                           statements[-1].datalines))
        for s in statements:
            if s.keyword == "BAD":
                raise SasError("Variable BAD is not known", s.line, s.tokens[0].col, "bad")
            if s.keyword == "WARN":
                program.log.warning("something odd")
            if s.keyword == "ABORT":
                raise ProgramAbort(3, "Execution terminated by an ABORT statement.")

    def print_(self, statements, program):
        self.calls.append(("PRINT", [s.keyword for s in statements]))
        program.log.listing("Obs    x\n  1    1")

    def sql(self, statements, program):
        for s in statements:                       # one at a time, as they come
            self.calls.append(("SQL", s.keyword))

    def procs(self):
        return {"PRINT": self.print_, "SQL": self.sql}


def run(session, text, **kw):
    rec = Recorder()
    text_io, lst = io.StringIO(), io.StringIO()
    log = SasLog(SessionLog(text=text_io, jsonl=io.StringIO(), listing=lst))
    code = run_program(text, session, log, data_step=rec.data, procs=rec.procs(), **kw)
    return code, rec, text_io.getvalue(), lst.getvalue(), log


def test_step_boundaries(session):
    code, rec, log, _, _ = run(session, """data a; x = 1; run;
data b; set a
  ; y = 2;
proc print data=b;
run;
data c;
  input x;
datalines;
1
2
;
data d
""")
    assert code == 0
    assert rec.calls == [("DATA", ["DATA", "X"], False, 2**63 - 1, None),
                         ("DATA", ["DATA", "SET", "Y"], False, 2**63 - 1, None),
                         ("PRINT", ["PROC"]),
                         ("DATA", ["DATA", "INPUT", "DATALINES"], False, 2**63 - 1, ["1", "2"]),
                         ("DATA", ["DATA"], False, 2**63 - 1, None)]
    assert [s.name for s in session.steps] == ["DATA", "DATA", "PROC PRINT", "DATA", "DATA"]
    assert log.count("NOTE: DATA statement used (Total process time):") == 4
    assert "NOTE: PROCEDURE PRINT used (Total process time):" in log


def test_global_statements_run_inside_steps_but_assignments_stay(session):
    code, rec, log, lst, _ = run(session, "data a; title2 'Inner'; title = 'x'; x + 1; run; proc print; run;")
    assert rec.calls[0][1] == ["DATA", "TITLE", "X"]
    assert "Inner" in lst and "The SAS System" in lst


def test_sql_gets_statements_one_by_one_until_quit(session):
    code, rec, log, _, _ = run(session, "proc sql; create table x as select 1 as a; run; select * from x; quit; "
                                        "proc print; run;")
    assert rec.calls == [("SQL", "PROC"), ("SQL", "CREATE"), ("SQL", "SELECT"), ("PRINT", ["PROC"])]
    assert "NOTE: PROC SQL statements are executed immediately; The RUN statement has no effect." in log


def test_error_starts_syntax_check_mode(session):
    code, rec, log, _, _ = run(session, "data a; bad; run;\ndata b; x = 1; run;\n")
    assert code == 1
    assert rec.calls[1][2:4] == (True, 0)          # syntax_check, OBS=0
    lines = log.split("\n")
    i = lines.index("ERROR: Variable BAD is not known at 'bad' (line 1, column 9)")
    assert lines[i + 1] == "NOTE: The SAS System stopped processing this step because of errors."
    assert lines[i + 2] == "NOTE: DATA statement used (Total process time):"
    assert ("NOTE: SAS set option OBS=0 and will continue to check statements. This might cause NOTE: No "
            "observations in data set.") in log
    assert [s.status for s in session.steps] == ["error", "ok"]


def test_warnings_keep_exit_code_zero(session):
    code, _, log, _, sas = run(session, "data a; warn; run;")
    assert code == 0 and "WARNING: something odd" in log and sas.warnings == 1


def test_unknown_procedure(session):
    code, _, log, _, _ = run(session, "proc nosuch data=a; var x; run;\n")
    assert code == 1
    assert "ERROR: Procedure NOSUCH not found at 'nosuch'; expecting the name of a procedure (line 1, column 6)" in log


def test_statement_out_of_place(session):
    code, _, log, _, _ = run(session, "set a;\n")
    assert code == 1 and "ERROR: Statement is not valid or it is used out of proper order at 'set'" in log


def test_endsas_stops_and_hides_the_rest(session):
    code, rec, log, _, _ = run(session, "data a; run;\nendsas;\ndata b; run;\n")
    assert code == 0 and len(rec.calls) == 1
    assert "2          endsas;" in log and "data b" not in log


def test_abort_return_code(session):
    code, rec, log, _, _ = run(session, "data a; abort; run;\ndata b; run;\n")
    assert code == 3 and len(rec.calls) == 1
    assert "ERROR: Execution terminated by an ABORT statement." in log


def test_run_cancel_skips_the_step(session):
    code, rec, log, _, _ = run(session, "data a; x = 1; run cancel;\n")
    assert code == 0 and rec.calls == []


def test_run_and_quit_outside_steps_are_ignored(session):
    code, rec, log, _, _ = run(session, "run; quit; ;\n")
    assert code == 0 and rec.calls == [] and "ERROR" not in log


def test_autoexec_runs_first_without_echo(session, tmp_path):
    auto = tmp_path / "auto.sas"
    auto.write_text("title 'From autoexec';\n")
    code, rec, log, lst, _ = run(session, "proc print; run;\n", invocation=parse_invocation(["-autoexec", str(auto)]))
    assert f"NOTE: AUTOEXEC processing beginning; file is {auto}." in log
    assert "title 'From autoexec'" not in log and "From autoexec" in lst
    assert log.index("AUTOEXEC processing completed") < log.index("1          proc print; run;")


def test_invocation_sysparm_and_set(session, monkeypatch):
    monkeypatch.delenv("SG_TEST_HOST", raising=False)
    seen = {}

    def data(statements, program):
        import os
        seen["sysparm"] = program.options.getoption_text("SYSPARM")
        seen["env"] = os.environ.get("SG_TEST_HOST")
        seen["fullstimer"] = program.options.get("FULLSTIMER")

    text_io = io.StringIO()
    code = run_program("data _null_; run;", session, SasLog(SessionLog(text=text_io, listing=None)),
                       parse_invocation(["-sysparm", "7", "-set", "SG_TEST_HOST", "n1", "-fullstimer"]), data_step=data,
                       procs={})
    assert code == 0 and seen == {"sysparm": "7", "env": "n1", "fullstimer": True}
    assert "      user cpu time" in text_io.getvalue()
    import os
    assert "SG_TEST_HOST" not in os.environ           # -set lasts for the program only


def test_plain_statements_attach_datalines4():
    stmts = list(plain_statements("data a;\ninput s $;\ndatalines4;\na;b\n;;;;\nrun;\n"))
    assert [s.keyword for s in stmts] == ["DATA", "INPUT", "DATALINES4", "RUN"]
    assert stmts[2].datalines == ["a;b"] and stmts[3].line == 6


@pytest.mark.parametrize("program", ["data a; x = 'unclosed; run;\n"])
def test_a_program_that_does_not_tokenize_is_an_error(session, program):
    code, _, log, _, _ = run(session, program)
    assert code == 1 and "ERROR: a quoted string is not closed" in log


def test_grid_toml_autoexec_runs_before_the_program(home, tmp_path, captured):
    from statgrid.config import load_config
    from statgrid.session import Session

    (tmp_path / "site.sas").write_text("title 'Site title';\n")
    (home / "grid.toml").write_text('[session]\nautoexec = "site.sas"\nmemsize = "512M"\n')
    cfg = load_config()
    assert cfg.session.autoexec == "site.sas"
    s = Session(cfg, cfg.session, log=captured.log())
    try:
        code, rec, log, lst, _ = run(s, "proc print; run;\n")
    finally:
        s.close()
    assert code == 0 and "AUTOEXEC processing beginning; file is site.sas." in log and "Site title" in lst
