"""Global statements through the driver: LIBNAME (assign, engines, ACCESS=READONLY, LIST, _ALL_ LIST, CLEAR),
FILENAME (file, aggregate, directory, CLEAR, PIPE refused), OPTIONS, TITLE/FOOTNOTE numbering rules,
X refused, ODS accepted. Expected text from SAS 9.4 Global Statements: Reference."""
from __future__ import annotations

import io

import pyarrow as pa

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


def run(session, text, data=None):
    out = io.StringIO()
    state = {}

    def keep(statements, program):
        state["program"] = program
        if data:
            data(statements, program)

    code = run_program(text, session, SasLog(SessionLog(text=out, listing=io.StringIO())), data_step=keep, procs={})
    return code, out.getvalue(), state.get("program")


def test_libname_assigns_a_directory(session, tmp_path):
    d = tmp_path / "lib1"
    d.mkdir()
    code, log, _ = run(session, f"libname mylib base '{d}' access=readonly;\n")
    assert code == 0
    assert session.libraries.get("mylib").readonly
    assert f"NOTE: Libref MYLIB was successfully assigned as follows:\n      Engine:        V9\n      Physical Name: {d}" in log


def test_libname_list_and_clear(session, tmp_path):
    d = tmp_path / "lib2"
    d.mkdir()
    code, log, _ = run(session, f"libname two '{d}';\nlibname two list;\nlibname _all_ list;\nlibname two clear;\n")
    assert code == 0
    assert f"NOTE: Libref=   TWO\n      Scope=    Kernel\n      Engine=   V9\n      Physical Name= {d}\n" in log
    assert "Libref=   WORK" in log                      # _ALL_ lists every library
    assert "NOTE: Libref TWO has been deassigned." in log and "two" not in session.libraries


def test_libname_errors(session, tmp_path):
    code, log, _ = run(session, f"libname x oracle '{tmp_path}';\nlibname y '{tmp_path}/none';\nlibname work clear;\n")
    assert code == 1
    assert "ERROR: The ORACLE engine cannot be found at 'oracle'" in log
    assert f"ERROR: Library Y does not exist: '{tmp_path}/none' is not a directory" in log
    assert log.count("ERROR: Error in the LIBNAME statement.") == 3


def test_a_readonly_library_refuses_writes(session, tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    run(session, f"libname ro '{d}' access=readonly;")
    try:
        session.write_table("ro.t", pa.table({"x": [1]}))
    except Exception as exc:
        assert "read-only" in str(exc)
    else:
        raise AssertionError("a read-only library took a write")


def test_filename_forms(session, tmp_path):
    (tmp_path / "a.txt").write_text("1\n")
    (tmp_path / "b.txt").write_text("2\n")
    code, log, program = run(session, f"""filename one '{tmp_path}/a.txt' lrecl=200;
filename both ("{tmp_path}/a.txt" "{tmp_path}/b.txt");
filename dir '{tmp_path}';
filename gone '{tmp_path}/a.txt';
filename gone clear;
data _null_; run;
""")
    assert code == 0
    refs = program.filerefs
    assert refs["ONE"].paths == [tmp_path / "a.txt"] and refs["ONE"].options == {"LRECL": "200"}
    assert refs["BOTH"].paths == [tmp_path / "a.txt", tmp_path / "b.txt"] and not refs["BOTH"].directory
    assert refs["DIR"].directory and "GONE" not in refs


def test_shell_escapes_are_refused(session):
    code, log, _ = run(session, "x 'rm -rf /tmp/nothing';\nfilename p pipe 'ls';\n")
    assert code == 1
    assert log.count("ERROR: Shell escape is not allowed in a statgrid SAS session (NOXCMD)") == 2
    assert "statgrid submit COMMAND" in log.replace("\n       ", " ")


def test_options_statement(session):
    seen = {}

    def data(statements, program):
        o = program.options
        seen.update(obs=o.get("OBS"), ls=o.get("LS"), mprint=o.get("MPRINT"), sysparm=o.get("SYSPARM"))

    code, log, _ = run(session, "options obs=10 ls = 100 mprint sysparm='abc' nosuchthing;\ndata a; run;\n", data)
    assert code == 1 and seen == {"obs": 10, "ls": 100, "mprint": True, "sysparm": "abc"}
    assert "ERROR: Unrecognized SAS option name NOSUCHTHING at 'nosuchthing'" in log


def test_options_memsize_warns(session):
    code, log, _ = run(session, "options memsize=8G;\n")
    assert code == 0
    assert "WARNING: SAS option MEMSIZE is valid only at startup of the SAS System. The SAS option is ignored." in log


def test_title_and_footnote_numbering(session):
    code, log, program = run(session, "title 'A'; title3 'C'; footnote2 'F2'; footnote1 'F1'; title2 'B';\n"
                                      "data _null_; run;\n")
    assert program.titles == {1: "A", 2: "B"}          # TITLE2 cleared TITLE3
    assert program.footnotes == {1: "F1"}              # FOOTNOTE1 cleared FOOTNOTE2
    code, log, program = run(session, "title;\ndata _null_; run;\n")
    assert program.titles == {}


def test_ods_is_accepted_with_a_note(session):
    code, log, _ = run(session, "ods listing;\nods html;\nods output Summary=work.s;\n")
    assert code == 0
    assert "NOTE: ODS HTML statement accepted" in log
    assert "not supported" not in log
