"""Macro variables: %LET, references, rescans, quoting, %PUT, comments and strings (SAS 9.4 Macro
Language Reference: "%LET Statement", "Macro Variables", "Referencing Macro Variables Indirectly",
"Macro Quoting", "%PUT Statement"). Expected values are the manual's."""
from __future__ import annotations

from tests.unit.sas.test_sas_macro_harness import run


def test_let_trims_unquoted_blanks_keeps_inner_and_quoted_ones():
    r = run("%let name=  Bob   Smith ;\n%let pad = %str(  a  );\n%let empty=;\n")
    assert r.sym("name") == "Bob   Smith"
    assert r.sym("pad") == "  a  "
    assert r.sym("empty") == ""


def test_references_in_code_double_quotes_resolve_single_quotes_do_not():
    r = run("%let dsn = work.class;\ntitle \"Data &dsn\";\nfootnote 'Data &dsn';\nproc print data=&dsn.;\n")
    assert r.texts == ['title "Data work.class";', "footnote 'Data &dsn';", "proc print data=work.class;"]


def test_period_ends_a_name_and_two_periods_leave_one():
    r = run("%let lib = sasuser;\n%let f = rpt;\n%put &lib..data &f.txt &lib.&f;\n")
    assert r.log == ["sasuser.data rpttxt sasuserrpt"]


def test_indirect_references_rescan():
    # Macro Language Reference, "Referencing Macro Variables Indirectly": &&city&n → &city2 → the value
    r = run("%let city1=Cary; %let city2=Durham; %let n=2;\n%put &&city&n;\n"
            "%let a=b; %let b=c;\n%put &&&a &&a;\n")
    assert r.log == ["Durham", "c b"]


def test_undefined_reference_warns_and_leaves_the_text():
    r = run("%put value is &nosuch.;\ndata a; x = \"&nosuch\"; run;\n")
    assert r.log == ["WARNING: Apparent symbolic reference NOSUCH not resolved.", "value is &nosuch.",
                     "WARNING: Apparent symbolic reference NOSUCH not resolved."]
    assert r.texts[1] == 'x = "&nosuch";'


def test_noserror_suppresses_the_warning():
    r = run("%put &nosuch;\n", "NOSERROR")
    assert r.log == ["&nosuch"]


def test_undefined_macro_warns_and_leaves_the_text():
    r = run("%put before;\n%nomacro;\n")
    assert r.log == ["before", "WARNING: Apparent invocation of macro NOMACRO not resolved."]


def test_value_from_symput_is_rescanned_and_superq_prevents_it():
    # %SUPERQ's entry: a value assigned by CALL SYMPUT that holds & is resolved again unless %SUPERQ masks it
    r = run("%let b = B;\n")
    r.program.symbols.symput("v", "x&b")
    assert list(r.mp.statements("%put &v;\n%put %superq(v);\n")) == []
    assert r.log == ["xB", "x&b"]


def test_symbolgen_lines():
    r = run("%let a=one; %let c=%nrstr(&a);\n%put &c &a;\n%let i=1; %let v1=x;\n%put &&v&i;\n", "SYMBOLGEN")
    assert r.log == [
        "SYMBOLGEN:  Macro variable C resolves to &a",
        "SYMBOLGEN:  Some characters in the above value which were subject to macro quoting have been unquoted for printing.",
        "SYMBOLGEN:  Macro variable A resolves to one",
        "&a one",
        "SYMBOLGEN:  && resolves to &.",
        "SYMBOLGEN:  Macro variable I resolves to 1",
        "SYMBOLGEN:  Macro variable V1 resolves to x",
        "x",
    ]


def test_put_forms():
    r = run("%let x=5;\n%put   leading blanks go   ;\n%put &=x;\n%put ERROR: my own message;\n"
            "%put ERROR- continued;\n%put NOTE: note text &x;\n%put WARNING: careful;\n%put;\n")
    assert r.log == ["leading blanks go", "X=5", "ERROR: my own message", "       continued", "NOTE: note text 5",
                     "WARNING: careful", ""]


def test_put_user_global_automatic():
    r = run("%let b=2; %let a=1;\n%macro m(p); %local q; %let q=3; %put _local_; %put _user_; %mend;\n%m(x)\n"
            "%put _global_;\n")
    assert r.log == ["M P x", "M Q 3", "M P x", "M Q 3", "GLOBAL A 1", "GLOBAL B 2", "GLOBAL A 1", "GLOBAL B 2"]
    r2 = run("%put _automatic_;\n")
    names = [ln.split(" ")[1] for ln in r2.log]
    assert all(ln.startswith("AUTOMATIC ") for ln in r2.log)
    for n in ("SYSDATE", "SYSDATE9", "SYSDAY", "SYSTIME", "SYSJOBID", "SYSUSERID", "SYSHOSTNAME", "SYSERR",
              "SYSCC", "SYSLAST", "SYSSCP", "SYSVER", "SYSPARM", "SYSMAXLONG", "SYSINDEX", "SYSMACRONAME"):
        assert n in names
    assert names == sorted(names)


def test_macro_comment_is_dropped_and_block_comment_is_not_resolved():
    r = run("%* a macro comment with &undefined and %nomac;\n/* &undefined2 */ data a;\nrun;\n")
    assert r.log == []
    assert r.texts[0].endswith("data a;") and r.stmts[0].keyword == "DATA"


def test_asterisk_comment_is_text_so_macro_statements_in_it_run():
    # SAS resolves macro triggers in a `* …;` comment: the %LET runs, the comment goes on to the next ';'
    r = run("* %let y = 1; this is still comment;\n* don't mind the apostrophe;\ndata a; run;\n")
    assert r.sym("y") == "1"
    assert r.texts == ["data a;", "run;"]


def test_unquoted_semicolon_in_a_value_ends_statements():
    r = run("%let s = %str(proc print; run;);\n&s\n")
    assert r.texts == ["proc print;", "run;"]


def test_let_name_from_references_and_bad_names():
    r = run("%let p=v; %let i=3;\n%let &p&i = three;\n%put &v3;\n%let 1x = bad;\n")
    assert r.log[0] == "three"
    assert r.log[1] == "ERROR: Symbolic variable name 1x must contain only letters, digits, and underscores."


def test_read_only_automatic_variable():
    r = run("%let sysdate = 01JAN20;\n%let sysparm = abc;\n%put &sysparm;\n")
    assert r.log == ["ERROR: Attempt to %LET automatic macro variable SYSDATE which is read only.", "abc"]


def test_let_without_equal_sign_names_line_and_column():
    r = run("data a;\nrun;\n  %let x 5;\n%put next;\n")
    assert r.log[0].startswith("ERROR: Expecting an equal sign in the %LET statement.")
    assert "(line 3, column 7)" in r.log[0]
    assert r.log[1] == "next"
