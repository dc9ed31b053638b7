"""The macro processor's input: DATALINES/CARDS, %INCLUDE, the source echo around %PUT/MPRINT,
statement places, automatic variables and the SymbolTables interface the DATA step uses (SAS 9.4
Statements: DATALINES, CARDS4, %INCLUDE; Macro Language Reference: "Automatic Macro Variables",
CALL SYMPUT/SYMPUTX scope rules)."""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from statgrid.sas.context import Fileref
from statgrid.sas.macro.symbols import SymbolTables
from tests.unit.sas.test_sas_macro_harness import run


def test_datalines_are_raw_and_reading_goes_on_after_them():
    prog = ("%let x = 1;\ndata a;\n  input n s $;\n  datalines;\n1 &x\n2 %m(\n;\nproc print; run;\n"
            "data b; input t $; cards4;\nsemi;colon\n;;;;\nrun;\n")
    r = run(prog)
    dl = [s for s in r.stmts if s.datalines is not None]
    assert [s.keyword for s in dl] == ["DATALINES", "CARDS4"]
    assert dl[0].datalines == ["1 &x", "2 %m("] and dl[1].datalines == ["semi;colon"]
    assert r.texts[-3:] == ["input t $;", "cards4;", "run;"]
    assert "proc print;" in r.texts
    assert r.log == []


def test_datalines_terminator_line_may_hold_the_next_statement():
    r = run("data a; input x; datalines;\n1\n2\n;run;\n%put done;\n")
    assert r.stmts[2].datalines == ["1", "2"]
    assert r.texts[-1] == "run;" and r.log == ["done"]


def test_datalines_from_a_macro_is_an_error():
    r = run("%macro m; data a; input x; datalines; %mend;\n%m\n")
    assert r.log[0].startswith("ERROR: The macro M generated CARDS (data lines) for the DATA step")


def test_include_file_and_fileref_with_source2(tmp_path: Path):
    inc = tmp_path / "part.sas"
    inc.write_text("%let from_inc = yes;\ndata inc;\n  x = 1;\nrun;\n")
    prog = f"%include '{inc}';\n%put &from_inc;\nfilename code '{tmp_path}';\n"
    r = run(prog, "SOURCE2", echo=True)
    assert r.texts[:3] == ["data inc;", "x = 1;", "run;"]
    assert r.stmts[0].source == str(inc) and r.stmts[1].line == 3
    assert r.log[:6] == [f"1          %include '{inc}';", "2         +%let from_inc = yes;", "3         +data inc;",
                         "4         +  x = 1;", "5         +run;", "2          %put &from_inc;"]
    assert "yes" in r.log
    assert any(ln.endswith("+data inc;") for ln in r.log)
    r2 = run("%inc code(part);\n%inc nosuch;\n", filerefs={"CODE": Fileref("CODE", [tmp_path], directory=True)})
    assert r2.texts == ["data inc;", "x = 1;", "run;"]
    assert r2.log[0].startswith("ERROR: The file or fileref nosuch named in %INCLUDE is not assigned.")


def test_include_generated_by_a_macro(tmp_path: Path):
    inc = tmp_path / "g.sas"
    inc.write_text("proc print; run;\n")
    r = run(f"%macro m(f); %include \"&f\"; %mend;\n%m({inc})\n")
    assert r.texts == ["proc print;", "run;"]


def test_source_echo_comes_before_put_and_mprint():
    prog = "data a;\nrun;\n%put hello;\n%macro m;\n  proc print; run;\n%mend;\n%m\n"
    r = run(prog, "MPRINT", echo=True)
    assert r.log == ["1          data a;", "2          run;", "3          %put hello;", "hello", "4          %macro m;",
                     "5            proc print; run;", "6          %mend;", "7          %m",
                     "MPRINT(M):   proc print;", "MPRINT(M):   run;"]


def test_statement_places_after_resolution():
    r = run("%let v = longer_value;\ndata a;\n  x =\n    &v; y = 2;\nrun;\n")
    x = r.stmts[1]
    assert x.line == 3 and x.tokens[0].col == 3
    assert [(t.text, t.line) for t in x.tokens] == [("x", 3), ("=", 3), ("longer_value", 4), (";", 4)]
    assert r.stmts[2].tokens[0].line == 4


def test_unclosed_string_is_a_syntax_error_with_its_place():
    r = run("data a;\n  x = 'abc;\nrun;\n")
    assert r.texts == ["data a;"]
    assert r.log[0].startswith("ERROR: a quoted string is not closed") and "(line 2, column 7)" in r.log[0]


def test_automatic_variables(monkeypatch):
    monkeypatch.setenv("STATGRID_JOB_ID", "job-123")
    t = SymbolTables(now=datetime(2020, 1, 6, 10, 32), sysparm="7")
    assert (t.get("sysdate"), t.get("SYSDATE9"), t.get("SYSTIME"), t.get("SYSDAY")) == (
        "06JAN20", "06JAN2020", "10:32", "Monday")
    assert (t.get("SYSJOBID"), t.get("SYSPARM"), t.get("SYSSCP"), t.get("SYSVER")) == ("job-123", "7", "LIN X64", "9.4")
    assert (t.get("SYSERR"), t.get("SYSCC"), t.get("SYSLAST"), t.get("SYSMAXLONG")) == ("0", "0", "_NULL_",
                                                                                      "9007199254740992")
    monkeypatch.delenv("STATGRID_JOB_ID")
    assert re.fullmatch(r"\d+", SymbolTables().get("SYSJOBID"))
    r = run("%put &sysparm &sysscp &sysver;\n", "SYSPARM=abc")
    assert r.log == ["abc LIN X64 9.4"]


def test_symbol_tables_interface_for_the_data_step():
    t = SymbolTables()
    t.set_global("g", "1")
    t.set_automatic("SYSLAST", "WORK.A")
    assert t.get("G") == "1" and t.get("syslast") == "WORK.A" and t.get("nope") is None
    t.push("OUTER")
    t.symput("a", "x")                       # every local table empty: global
    assert t.globals.values["A"] == "x"
    t.declare_local("l")
    t.push("INNER")
    t.symput("b", "y")                       # INNER empty, OUTER not: OUTER
    assert t.locals[0].values["B"] == "y"
    t.symput("g", "2")                       # exists: updated where it is
    assert t.globals.values["G"] == "2"
    t.symput("c", "z", "L")
    t.symput("d", "w", "G")
    assert t.locals[1].values["C"] == "z" and t.globals.values["D"] == "w"
    t.pop()
    t.pop()
    assert t.get("b") is None and t.get("a") == "x"


def test_syscc_let_updates_the_program():
    r = run("%let syscc = 0;\n%put &syscc;\n")
    assert r.program.syscc == 0 and r.log == ["0"]
