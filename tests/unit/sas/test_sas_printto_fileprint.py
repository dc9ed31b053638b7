"""PROC PRINTTO (Base SAS Procedures: PRINTTO) sends the log / the listing to a file (NEW replaces it, else
appended) and back; a DATA step's FILE PRINT lines share the listing's pages and stand where PUT put them.
Expected texts by hand."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


def test_printto_log_and_print_to_files_and_back(session, tmp_path):
    log_file, lst_file = tmp_path / "step.log", tmp_path / "step.lst"
    log_file.write_text("old line\n")
    code, log, lst = run_sas(session, f"""proc printto log='{log_file}' print='{lst_file}' new; run;
data a; x = 1; run;
proc print data=a; run;
proc printto; run;
data b; y = 2; run;
proc print data=b; run;
""")
    assert code == 0, log
    moved = log_file.read_text()
    assert "old line" not in moved and "NOTE: The data set WORK.A has 1 observations" in moved
    assert "WORK.A has" not in log and "NOTE: The data set WORK.B has 1 observations" in log
    assert "Obs    x" in lst_file.read_text() and "Obs    x" not in lst and "Obs    y" in lst


def test_printto_appends_without_new_and_names_a_bad_path(session, tmp_path):
    f = tmp_path / "app.log"
    f.write_text("first\n")
    run_sas(session, f"proc printto log='{f}'; run; data a; x = 1; run; proc printto; run;")
    assert f.read_text().startswith("first\n") and "WORK.A has 1" in f.read_text()
    code, log, _ = run_sas(session, "proc printto log='/nonexistent/dir/x.log'; run;\ndata c; z = 1; run;")
    assert code == 1 and "PROC PRINTTO cannot open '/nonexistent/dir/x.log'" in log
    assert "NOTE: The data set WORK.C has 1 observations" in log        # an execution-time ERROR


def test_file_print_lines_share_a_page_and_are_not_centred(session):
    code, log, lst = run_sas(session, "options center; data _null_; file print; put 'hello' / @5 'second';"
                                      " run;")
    assert code == 0, log
    body = [ln for ln in lst.split("\n") if ln.strip() and "The SAS System" not in ln]
    assert body == ["hello", "    second"]
    assert lst.count("The SAS System") == 1
