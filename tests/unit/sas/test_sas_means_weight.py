"""PROC MEANS/SUMMARY's WEIGHT and FREQ statements and MODE (SAS 9.4 Base Procedures: MEANS — WEIGHT Statement,
FREQ Statement, "Keywords and Formulas"). Every expected figure is worked out by hand below from the eight rows."""
from __future__ import annotations

import math

import pytest
from tests.unit.sas.standins import rows, run_sas


# g x w f — group b: a missing x (counted in N Obs), a missing weight (row left out), a negative weight (0)
DATA = """data a; input g $ x w f; datalines;
a 1 2 1
a 3 1 2
a 3 1 1
b 4 1 1
b 6 3 2
b . 1 1
b 9 . 1
b 7 -1 0
;
run;
"""


def run(session, text):
    code, log, _ = run_sas(session, DATA + text)
    return code, log


def test_weighted_statistics_by_sas_formulas(session):
    code, log = run(session, """proc means data=a noprint; class g; var x; weight w;
  output out=o mean=m sum=s n=n sumwgt=sw var=v stderr=se css=css uss=uss cv=cv t=t; run;""")
    assert code == 0, log
    got = {r["g"]: r for r in rows(session, "work.o")}
    # a: (1,2) (3,1) (3,1): Σw 4, Σwx 8, x̄ 2, CSS 2·1+1+1 = 4, s² = 4/(3-1), se = √(2/4), USS 2+9+9
    a = got["a"]
    assert (a["n"], a["sw"], a["s"], a["m"], a["css"], a["v"], a["uss"]) == (3, 4, 8, 2, 4, 2, 20)
    assert a["se"] == pytest.approx(math.sqrt(0.5)) and a["t"] == pytest.approx(2 / math.sqrt(0.5))
    assert a["cv"] == pytest.approx(100 * math.sqrt(2) / 2)
    # b: (4,1) (6,3) (7,-1→0); x missing: not in N; w missing: left out (also of _FREQ_)
    b = got["b"]
    assert (b["n"], b["sw"], b["s"], b["m"], b["css"], b["v"], b["uss"], b["_FREQ_"]) == (3, 4, 22, 5.5, 3, 1.5, 124, 4)
    # all: Σw 8, Σwx 30, x̄ 3.75, CSS Σw(x-3.75)² = 15.125+.5625+.5625+.0625+15.1875+0 = 31.5, n 6
    t = next(r for r in got.values() if r["_TYPE_"] == 0)
    assert (t["n"], t["sw"], t["m"]) == (6, 8, 3.75)
    assert t["css"] == pytest.approx(31.5) and t["v"] == pytest.approx(31.5 / 5)
    assert t["se"] == pytest.approx(math.sqrt(6.3 / 8))


def test_vardef_divisors_and_exclnpwgt(session):
    code, log = run(session, """proc means data=a noprint vardef=wdf; var x; weight w; output out=wdf var=v; run;
proc means data=a noprint vardef=weight; var x; weight w; output out=wgt var=v; run;
proc means data=a noprint vardef=n exclnpwgt; var x; weight w; output out=ex var=v n=n css=css; run;
proc means data=a noprint vardef=n; var x; output out=un var=v css=css n=n; run;""")
    assert code == 0, log
    assert rows(session, "work.wdf")[0]["v"] == pytest.approx(31.5 / 7)      # Σw - 1
    assert rows(session, "work.wgt")[0]["v"] == pytest.approx(31.5 / 8)      # Σw
    # EXCLNPWGT: the weight-0 row (x 7) is left out: (1,2)(3,1)(3,1)(4,1)(6,3), Σw 8, Σwx 30, x̄ 3.75
    ex = rows(session, "work.ex")[0]
    assert ex["n"] == 5 and ex["css"] == pytest.approx(31.5) and ex["v"] == pytest.approx(31.5 / 5)
    # unweighted VARDEF=N: x = 1 3 3 4 6 9 7, mean 33/7, CSS = Σx² - 33²/7, divisor 7 (CSS is not var·(n-1))
    xs = [1, 3, 3, 4, 6, 9, 7]
    css = sum(x * x for x in xs) - sum(xs) ** 2 / 7
    un = rows(session, "work.un")[0]
    assert un["n"] == 7 and un["css"] == pytest.approx(css) and un["v"] == pytest.approx(css / 7)


def test_freq_repeats_rows_for_every_statistic_and_freq_counts(session):
    code, log = run(session, """proc means data=a mean n sum median mode nmiss; var x; freq f;
  output out=o mean=m n=n sum=s median=md mode=mo nmiss=nm; run;""")
    assert code == 0, log
    r = rows(session, "work.o")[0]
    # f: 1 2 1 1 2 1 1 0 → 1 3 3 3 4 6 6 . 9 (the f=0 row left out): _FREQ_ 9, N 8, sum 35, median (3+4)/2
    assert (r["_FREQ_"], r["n"], r["nm"], r["s"], r["m"], r["md"], r["mo"]) == (9, 8, 1, 35, 35 / 8, 3.5, 3)


def test_mode_takes_the_lowest_of_tied_values(session):
    code, log = run(session, """data t; input y @@; datalines;
5 2 5 2 8
;
proc means data=t noprint; var y; output out=o mode=mo; run;""")
    assert code == 0, log
    assert rows(session, "work.o")[0]["mo"] == 2


def test_weight_refuses_what_sas_does_not_compute(session):
    for stat in ("skewness", "mode", "median"):
        code, log = run(session, f"proc means data=a {stat}; var x; weight w; run;")
        assert code != 0 and f"Statistic {stat.upper()} of PROC MEANS is not computed with a WEIGHT statement" in log
    code, log = run(session, "proc means data=a; var x; weight g; run;")
    assert code != 0 and "Variable g in the FREQ/WEIGHT statement is not numeric" in log
    code, log = run(session, "proc means data=a; var x; freq f w; run;")
    assert code != 0 and "The FREQ statement of PROC MEANS names one numeric variable" in log
