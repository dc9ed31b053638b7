"""Macro functions and evaluation (SAS 9.4 Macro Language Reference: %EVAL, %SYSEVALF, %SCAN,
%SUBSTR, %UPCASE, %LENGTH, %INDEX, quoting functions, %SYSFUNC, %SYSGET). Expected values are the
manual's examples or worked by hand from its rules."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from statgrid.sas.macro.evaluate import EvalError, eval_condition, eval_float, eval_int
from tests.unit.sas.test_sas_macro_harness import run


@pytest.mark.parametrize("expr, expected", [
    ("1+2", "3"), ("10*3", "30"), ("4/2", "2"), ("5/3", "1"), ("-7/2", "-3"), ("2**3**2", "512"),
    ("10 < 9.5", "1"), ("abc = abc", "1"), ("abc < abd", "1"), ("1 = 1.0", "0"), ("3 > 2 and 2 > 3", "0"),
    ("3 > 2 or 2 > 3", "1"), ("not 0", "1"), ("-(2+3)*2", "-10"), ("0Ax + 1", "11"), ("2 eq 2", "1"),
    ("5 ne 4", "1"), ("1 < 2 < 3", "1"), ("John Smith = John Smith", "1"), ("", ""),
])
def test_eval(expr, expected):
    assert eval_int(expr) == expected


def test_eval_character_operand_error_is_sas_text():
    with pytest.raises(EvalError) as exc:
        eval_int("10.0+20.0")
    assert str(exc.value) == ("A character operand was found in the %EVAL function or %IF condition where a "
                              "numeric operand is required. The condition was: 10.0+20.0")
    with pytest.raises(EvalError, match="Division by zero"):
        eval_int("1/0")


def test_in_operator_needs_minoperator():
    assert eval_condition("b in a b c", minoperator=True)
    assert not eval_condition("d # a b c", minoperator=True)
    assert eval_condition("b in a,b,c", minoperator=True, mindelimiter=",")
    with pytest.raises(EvalError):
        eval_condition("b in a b c", minoperator=False)
    r = run("%macro m(x)/minoperator; %if &x in RED GREEN %then %put yes; %else %put no; %mend;\n%m(GREEN) %m(BLUE)\n")
    assert r.log == ["yes", "no"]


@pytest.mark.parametrize("expr, conv, expected", [
    ("10.0*3.0", "", "30"), ("10.5+20.8", "", "31.3"), ("1/3", "boolean", "1"), ("10+.", "boolean", "0"),
    ("1 + 1.1", "ceil", "3"), ("-1 -2.4", "ceil", "-3"), ("-1 + 1.e-11", "ceil", "0"), ("10+.", "", "."),
    ("-2.4", "floor", "-3"), ("3", "floor", "3"), ("1.-1.e-13", "floor", "1"), (".", "floor", "."),
    ("2.1", "integer", "2"), ("-2.4", "integer", "-2"), ("-1.6", "integer", "-1"), ("1.-1.e-13", "integer", "1"),
    ("1.5 > 1.25", "", "1"), ("1e3 + 1", "", "1001"),
])
def test_sysevalf_manual_examples(expr, conv, expected):
    assert eval_float(expr, conv) == expected


def test_character_functions():
    r = run("%let c = a b c;\n"
            "%put %scan(&c, 2)|%scan(&c, -1)|%scan(a.b-c, 3)|%scan(%str(x,y;z), 2, %str(,;))|%scan(&c, 5)|;\n"
            "%put %substr(abcdef, 2, 3)|%substr(abcdef, 4)|%upcase(MiXed)|%lowcase(MiXed)|%length(hello)|%length()|;\n"
            "%put %index(abcdef, cd)|%index(abc, z)|%cmpres(  a   b  )|%left(   x)|%datatyp(12.5)|%datatyp(a1)|;\n"
            "%put %substr(abc, %length(abc) - 1);\n")
    assert r.log == ["b|c|c|y||", "bcd|def|MIXED|mixed|5|0|", "3|0|a b|x|NUMERIC|CHAR|", "bc"]


def test_substr_out_of_range_warns():
    r = run("%put [%substr(abc, 5)] [%substr(abc, 2, 9)];\n")
    assert r.log == ["WARNING: Argument 2 to macro function %SUBSTR is out of range.",
                     "WARNING: Argument 3 to macro function %SUBSTR is out of range.", "[] [bc]"]


def test_quoting_functions_keep_special_characters_as_text():
    r = run("%let state = OR;\n"
            "%put %eval(%quote(&state) = %str(OR));\n"
            "%let x = %nrstr(%put inside;);\n%put &x;\n"
            "%let q = %str(it%'s);\n%put &q;\n"
            "%let commas = %str(a,b,c);\n%macro count(list); %put n=%sysfunc(countw(&list, %str(,))); %mend;\n"
            "%put %bquote(it's) %nrbquote(&q);\n"
            "%let u = %unquote(%nrstr(&state));\n%put &u;\n")
    # %quote masks the mnemonic OR so %EVAL compares text (the manual's own %QUOTE example)
    assert r.log == ["1", "%put inside;", "it's", "it's it's", "OR"]


def test_str_keeps_commas_in_macro_arguments():
    r = run("%macro two(a, b); %put a=[&a] b=[&b]; %mend;\n%two(%str(x,y), z)\n%two((1,2), 3)\n")
    assert r.log == ["a=[x,y] b=[z]", "a=[(1,2)] b=[3]"]


def test_mnemonic_in_value_without_quoting_is_an_operator():
    r = run("%let state = OR;\n%macro m; %if &state = OR %then %put yes; %mend;\n%m\n")
    assert r.log[0].startswith("ERROR: ")
    assert r.log[1] == "ERROR: The macro M will stop executing."


def test_symbol_existence_functions():
    r = run("%let g=1;\n%macro m; %local l; %put %symexist(g) %symexist(l) %symglobl(l) %symlocal(l) %symexist(zz) "
            "%sysmacexist(m) %sysmacexist(nope); %mend;\n%m\n")
    assert r.log == ["1 1 0 1 0 1 0"]


def test_sysget(monkeypatch):
    monkeypatch.setenv("STATGRID_TEST_HOST", "node7")
    monkeypatch.delenv("STATGRID_TEST_NOPE", raising=False)
    r = run("%put host=%sysget(STATGRID_TEST_HOST);\n%put [%sysget(STATGRID_TEST_NOPE)];\n")
    assert r.log == ["host=node7", "WARNING: The argument to macro function %SYSGET is not defined as a system variable.",
                     "[]"]


def _fake_registry():
    """Stand-ins for the DATA step registry with its interface (Function.fn(rt, *args), min/max args)."""
    def fn(f, lo, hi):
        return SimpleNamespace(fn=f, min_args=lo, max_args=hi)

    state_seen = []

    def getoption(rt, name):
        return rt.program.options.getoption_text(name)

    def open_(rt, name, mode="I"):
        state_seen.append(rt.state)
        rt.state.setdefault("open", {})[1] = name
        return 1.0

    def attrn(rt, dsid, what):
        return 19.0 if rt.state["open"].get(int(dsid)) and what.upper() == "NOBS" else -1.0

    def close(rt, dsid):
        return 0.0 if rt.state["open"].pop(int(dsid), None) else -1.0

    table = {
        "GETOPTION": fn(getoption, 1, 2), "OPEN": fn(open_, 1, 2), "ATTRN": fn(attrn, 2, 2), "CLOSE": fn(close, 1, 1),
        "MDY": fn(lambda rt, m, d, y: 21915.0 if (m, d, y) == (1.0, 1.0, 2020.0) else math.nan, 3, 3),
        "SUM": fn(lambda rt, *a: float(sum(a)), 1, -1),
        "UPCASE": fn(lambda rt, s: str(s).upper().ljust(20), 1, 1),
        "COUNTW": fn(lambda rt, s, d=" ": float(len([w for w in __import__("re").split("[" + __import__("re").escape(d) + "]", s) if w])), 1, 2),
    }

    def lookup(name, line=0, col=0):
        if name.upper() not in table:
            from statgrid.sas.errors import SasError
            raise SasError(f"Function {name.upper()} is unknown", line, col, name)
        return table[name.upper()]
    return lookup, state_seen


def test_sysfunc_over_the_function_registry():
    lookup, states = _fake_registry()
    r = run("%let dsid = %sysfunc(open(sashelp.class));\n"
            "%let n = %sysfunc(attrn(&dsid, nobs));\n"
            "%let rc = %sysfunc(close(&dsid));\n"
            "%put &dsid &n &rc;\n"
            "%put %sysfunc(mdy(1, 1, 2020)) %sysfunc(mdy(1, 1, 2020), date9.) %sysfunc(sum(1, 2.5, 3));\n"
            "%put [%sysfunc(upcase(abc))] %sysfunc(getoption(sysparm)) %sysfunc(getoption(MPRINT));\n"
            "%put %sysfunc(nosuch(1));\n", "SYSPARM=run7", lookup=lookup)
    assert r.log == ["1 19 0", "21915 01JAN2020 6.5", "[ABC] run7 NOMPRINT",
                     "ERROR: The function NOSUCH referenced by the %SYSFUNC or %QSYSFUNC macro function is not found.", ""]
    assert len(states) == 1


def test_sysfunc_argument_count_is_checked():
    lookup, _ = _fake_registry()
    r = run("%put %sysfunc(close());\n", lookup=lookup)
    assert r.log[0] == ("ERROR: The function CLOSE referenced by the %SYSFUNC or %QSYSFUNC macro function has too "
                        "few arguments.")


def test_sysfunc_with_statgrids_registry_when_present():
    import statgrid.sas.functions as funcs
    if "MDY" not in getattr(funcs, "FUNCTIONS", {}):
        pytest.skip("MDY not in the registry yet")
    r = run("%put %sysfunc(mdy(1, 1, 2020), date9.) %sysfunc(mdy(1, 1, 2020));\n")
    assert r.log == ["01JAN2020 21915"]
