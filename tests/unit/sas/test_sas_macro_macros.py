"""%MACRO/%MEND, parameters, %IF, %DO, scopes, MPRINT/MLOGIC, %GOTO/%RETURN/%ABORT and statgrid's
limits (SAS 9.4 Macro Language Reference: "%MACRO Statement", "%IF-%THEN/%ELSE", "%DO", "Scopes of
Macro Variables", "MPRINT", "MLOGIC"). Expected texts follow the manual's rules, worked by hand."""
from __future__ import annotations

import pytest

from tests.unit.sas.test_sas_macro_harness import run


def test_positional_and_keyword_parameters_with_defaults():
    prog = ("%macro rpt(ds, var, title=Report, n=);\n"
            "  proc print data=&ds(obs=&n); var &var; title \"&title\"; run;\n"
            "%mend rpt;\n"
            "%rpt(work.a, x y, n=5)\n%rpt(b, z, title=Other, n=1)\n")
    r = run(prog)
    assert r.texts == ['proc print data=work.a(obs=5);', 'var x y;', 'title "Report";', 'run;',
                       'proc print data=b(obs=1);', 'var z;', 'title "Other";', 'run;']
    assert all(s.generated for s in r.stmts) and {s.line for s in r.stmts} == {4, 5}


def test_mprint_and_mlogic_lines():
    prog = ("%macro mktitle(proc, data=sasuser.houses);\n"
            "  %if &proc=gplot %then %do; title \"Plot of &data\"; %end;\n"
            "  %else title \"&proc of &data\";\n"
            "%mend;\n%mktitle(gplot)\n")
    r = run(prog, "MPRINT", "MLOGIC")
    assert r.log == [
        "MLOGIC(MKTITLE):  Beginning execution.",
        "MLOGIC(MKTITLE):  Parameter PROC has value gplot",
        "MLOGIC(MKTITLE):  Parameter DATA has value sasuser.houses",
        "MLOGIC(MKTITLE):  %IF condition &proc=gplot is TRUE",
        'MPRINT(MKTITLE):   title "Plot of sasuser.houses";',
        "MLOGIC(MKTITLE):  Ending execution.",
    ]


def test_if_then_else_inline_text_and_blocks():
    prog = ("%macro m(t);\n%if &t = 1 %then data one;\n%else %if &t = 2 %then data two;\n%else data other;\n"
            "run;\n%mend;\n%m(1) %m(2) %m(3)\n")
    r = run(prog)
    assert r.texts == ["data one;", "run;", "data two;", "run;", "data other;", "run;"]


def test_iterative_do_with_by_and_mlogic():
    prog = "%macro m; %do i = 3 %to 1 %by -1; %put i=&i; %end; %mend;\n%m\n"
    r = run(prog, "MLOGIC")
    assert [ln for ln in r.log if not ln.startswith("MLOGIC")] == ["i=3", "i=2", "i=1"]
    assert ("MLOGIC(M):  %DO loop beginning; index variable I; start value is 3; stop value is 1; by value is -1."
            in r.log)
    assert "MLOGIC(M):  %DO loop index variable I is now 2; loop will iterate again." in r.log
    assert "MLOGIC(M):  %DO loop index variable I is now 0; loop will not iterate again." in r.log


def test_do_while_and_until():
    prog = ("%macro w; %let i=1; %do %while(&i <= 3); %put w&i; %let i=%eval(&i+1); %end; %mend;\n"
            "%macro u; %let j=5; %do %until(&j >= 5); %put u&j; %let j=%eval(&j+1); %end; %mend;\n%w %u\n")
    r = run(prog)
    assert r.log == ["w1", "w2", "w3", "u5"]    # %UNTIL runs its body once before testing


def test_nested_do_generates_steps_from_a_list():
    prog = ("%let vars = age height weight;\n"
            "%macro sums;\n"
            "  %let k = 1;\n"
            "  %do %while(%scan(&vars, &k) ne );\n"
            "    %let v = %scan(&vars, &k);\n"
            "    %do g = 1 %to 2;\n"
            "      proc summary data=grp&g; var &v; output out=s_&v._&g; run;\n"
            "    %end;\n"
            "    %let k = %eval(&k + 1);\n"
            "  %end;\n"
            "%mend sums;\n%sums\n")
    r = run(prog)
    outs = [t for t in r.texts if t.startswith("output")]
    assert outs == [f"output out=s_{v}_{g};" for v in ("age", "height", "weight") for g in (1, 2)]
    assert len(r.texts) == 24


def test_let_scope_rules():
    prog = ("%let g = global0;\n"
            "%macro inner; %let g = set_by_inner; %let o = set_in_outer_scope; %let new = inner_local; %mend;\n"
            "%macro outer; %local o; %inner %put o=&o; %put new=%symexist(new); %mend;\n"
            "%outer\n%put g=&g o=%symexist(o);\n")
    r = run(prog)
    assert r.log == ["o=set_in_outer_scope", "new=0", "g=set_by_inner o=0"]


def test_global_and_local_statements():
    prog = ("%macro m; %global made; %let made = yes; %local x; %let x = 1; %mend;\n%m\n%put &made %symexist(x);\n"
            "%macro bad; %local y; %global y; %mend;\n%bad\n%local z;\n")
    r = run(prog)
    assert r.log == ["yes 0",
                     "ERROR: Attempt to %GLOBAL a name (Y) which exists in a local environment.",
                     "ERROR: The macro BAD will stop executing.",
                     "ERROR: The %LOCAL statement is not valid in open code."]


def test_symput_rule_most_local_nonempty_table():
    # SAS: CALL SYMPUT creates the variable in the most local non-empty symbol table
    seen = {}

    def step(st, program):
        if st.keyword == "RUN":
            program.symbols.symput("made" + str(len(seen)), "v")
            seen[len(seen)] = [s.name for s in program.symbols.locals]

    prog = ("%macro empty; data _null_; run; %put in_empty=%symglobl(made0); %mend;\n"
            "%macro full(p); data _null_; run; %put in_full=%symlocal(made1); %mend;\n"
            "%empty\n%full(1)\n%put %symexist(made1);\n")
    r = run(prog, on_statement=step)
    assert r.log == ["in_empty=1", "in_full=1", "0"]
    assert seen == {0: ["EMPTY"], 1: ["FULL"]}


def test_step_runs_before_the_macro_goes_on():
    def step(st, program):
        if st.keyword == "RUN" and program.symbols.get("x") is None:
            program.symbols.symput("x", "42")

    prog = ("%macro m;\n data _null_; call symput('x', '42'); run;\n %put x is &x;\n data b; y = \"&x\"; run;\n"
            "%mend;\n%m\n")
    r = run(prog, on_statement=step)
    assert r.log == ["x is 42"]
    assert 'y = "42";' in r.texts


def test_nested_macros_mprint_names_the_generating_macro():
    prog = "%macro inner(d); data &d; run; %mend;\n%macro outer; %inner(a) proc print; run; %mend;\n%outer\n"
    r = run(prog, "MPRINT")
    assert r.log == ["MPRINT(INNER):   data a;", "MPRINT(INNER):   run;", "MPRINT(OUTER):   proc print;",
                     "MPRINT(OUTER):   run;"]


def test_parameter_errors_do_not_run_the_macro():
    prog = "%macro m(a); %put ran &a; %mend;\n%m(1, 2)\n%m(b=1)\n%m(1)\n"
    r = run(prog)
    assert r.log == ["ERROR: More positional parameters found than defined.",
                     "ERROR: The keyword parameter B was not defined with the macro.", "ran 1"]


def test_call_without_parentheses_and_parentheses_after_a_macro_without_parameters():
    prog = "%macro p(a=dflt); %put a=&a; %mend;\n%macro np;x%mend;\n%p\n%put [%np(1)];\n"
    r = run(prog)
    assert r.log == ["a=dflt", "[x(1)]"]


def test_parmbuff():
    prog = "%macro printz/parmbuff; %put &syspbuff; %let n=%scan(&syspbuff, 2); %put second=&n; %mend;\n" \
           "%printz(purple,red,blue)\n"
    r = run(prog)
    assert r.log == ["(purple,red,blue)", "second=red"]


def test_goto_and_return():
    prog = ("%macro g(x); %if &x = skip %then %goto out; %put body; %out: %put end; %mend;\n"
            "%macro r; %put one; %return; %put two; %mend;\n%g(skip) %g(run) %r\n")
    r = run(prog)
    assert r.log == ["end", "body", "end", "one"]


def test_sysmacroname_and_sysindex():
    prog = "%macro a; %put &sysmacroname; %b %mend;\n%macro b; %put &sysmacroname %sysmexecdepth; %mend;\n%a\n%put &sysindex;\n"
    r = run(prog)
    assert r.log == ["A", "B 2", "2"]


def test_open_code_if_do_block_and_invalid_open_code_do():
    prog = "%let run=1;\n%if &run = 1 %then %do;\n data yes; run;\n%end;\n%else %do; data no; run; %end;\n" \
           "%do i = 1 %to 2; %end;\n"
    r = run(prog)
    assert r.texts == ["data yes;", "run;"]
    assert r.log == ["ERROR: The %DO statement is not valid in open code."]
    assert r.stmts[0].line == 3 and not r.stmts[0].generated


def test_recursion_stops_at_the_documented_depth():
    prog = "%macro down(n); %put &n; %down(%eval(&n+1)) %mend;\n%down(1)\n%put after;\n"
    r = run(prog)
    numbers = [ln for ln in r.log if ln.isdigit()]
    assert numbers == [str(i) for i in range(1, 51)]
    assert any("nested 50 deep (statgrid's limit" in ln for ln in r.log)
    assert r.log[-1] == "after"


def test_endless_do_loop_stops_at_the_iteration_cap():
    prog = "%macro forever; %do %while(1); %let x=1; %end; %put never; %mend;\n%forever\n%put after;\n"
    from statgrid.sas.macro import execute
    old = execute.MAX_DO_ITERATIONS
    execute.MAX_DO_ITERATIONS = 500
    try:
        r = run(prog)
    finally:
        execute.MAX_DO_ITERATIONS = old
    assert r.log[0] == ("ERROR: A %DO loop in FOREVER has run 500 times (statgrid's limit for one %DO loop); "
                        "the macro stops.")
    assert r.log[1:] == ["ERROR: The macro FOREVER will stop executing.", "after"]


def test_if_condition_error_stops_the_macro():
    prog = "%macro m(x); %if &x > 1.5 + 1 %then %put big; %put after; %mend;\n%m(3)\n"
    r = run(prog)
    assert r.log == ["ERROR: A character operand was found in the %EVAL function or %IF condition where a numeric "
                     "operand is required. The condition was: 3 > 1.5 + 1",
                     "ERROR: The macro M will stop executing."]


def test_abort_ends_the_program():
    from statgrid.sas.errors import ProgramAbort
    with pytest.raises(ProgramAbort) as exc:
        run("%macro m; %abort abend 3; %mend;\n%m\ndata a; run;\n")
    assert exc.value.code == 3


def test_missing_mend_and_stray_end_are_syntax_errors_with_places():
    r = run("%put a;\n%end;\n%put b;\n%macro m;\n data a;\n")
    assert r.log[0] == "a"
    assert r.log[1].startswith("ERROR: The %END statement is not valid here.") or "%END" in r.log[1]
    assert "(line 2, column 1)" in r.log[1]
    assert r.log[2] == "b"
    assert "has no %MEND" in r.log[3] and "(line 4, column 1)" in r.log[3]


def test_macro_definition_with_comments_and_quotes():
    prog = ("%macro m(x);\n /* a comment with %put no; */\n %* macro comment &nothing;\n"
            " data _null_; put 'it''s %not a call &x'; put \"val &x\"; run;\n%mend;\n%m(7)\n")
    r = run(prog)
    assert r.texts == ["data _null_;", "put 'it''s %not a call &x';", 'put "val 7";', "run;"]
    assert r.log == []
