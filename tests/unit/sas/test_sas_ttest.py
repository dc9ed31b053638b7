"""PROC TTEST (SAS/STAT: TTEST): one-sample (H0=, SIDES=, ALPHA=), PAIRED and CLASS two-sample tests, their
tables (Statistics, ConfLimits, TTests, Equality) and listing. Expected figures: a real SAS 9 listing of a
two-sample test (https://pastebin.com/5h0tyjvM: groups of 5 with means 1.0 and 1.6, std 0.7071 and 1.3416 —
the data below, 0 1 1 1 2 and 0 1 1 3 3, have exactly those figures, and every statistic in the listing is a
function of them), scipy.stats (ttest_1samp, ttest_rel, ttest_ind equal_var True/False) on SAS's Getting
Started golf scores (https://support.sas.com/documentation/onlinedoc/stat/ex_code/143/ttegs2.html), and hand
arithmetic."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tests.unit.sas.standins import rows, run_sas

GOLF = """data scores; input Gender $ Score @@; datalines;
f 75  f 76  f 80  f 77  f 80  f 77  f 73
m 82  m 80  m 85  m 85  m 78  m 87  m 82
;
run;
"""
F = [75, 76, 80, 77, 80, 77, 73]
M = [82, 80, 85, 85, 78, 87, 82]


def test_two_sample_listing_matches_a_real_sas_listing(session):
    code, log, lst = run_sas(session, """data a; input k y @@; datalines;
1 0 1 1 1 1 1 1 1 2 2 0 2 1 2 1 2 3 2 3
;
proc ttest data=a; class k; var y; run;""")
    assert code == 0, log
    got = [" ".join(ln.split()) for ln in lst.splitlines()]
    # the lines of https://pastebin.com/5h0tyjvM (SAS 9, 2010), blanks collapsed
    for want in ["The TTEST Procedure", "Variable: y",
                 "1 5 1.0000 0.7071 0.3162 0 2.0000", "2 5 1.6000 1.3416 0.6000 0 3.0000",
                 "Diff (1-2) -0.6000 1.0724 0.6782",
                 "k Method Mean 95% CL Mean Std Dev 95% CL Std Dev",
                 "1 1.0000 0.1220 1.8780 0.7071 0.4237 2.0319", "2 1.6000 -0.0659 3.2659 1.3416 0.8038 3.8553",
                 "Diff (1-2) Pooled -0.6000 -2.1640 0.9640 1.0724 0.7243 2.0544",
                 "Diff (1-2) Satterthwaite -0.6000 -2.2554 1.0554",
                 "Method Variances DF t Value Pr > |t|", "Pooled Equal 8 -0.88 0.4021",
                 "Satterthwaite Unequal 6.063 -0.88 0.4101", "Equality of Variances",
                 "Method Num DF Den DF F Value Pr > F", "Folded F 4 4 3.60 0.2425"]:
        assert want in got, want


def test_two_sample_tables_agree_with_scipy(session):
    code, log, _ = run_sas(session, GOLF + """ods output Statistics=work.st ConfLimits=work.cl TTests=work.tt
  Equality=work.eq;
proc ttest data=scores; class Gender; var Score; run;""")
    assert code == 0, log
    tt = {r["Method"]: r for r in rows(session, "work.tt")}
    pooled, welch = stats.ttest_ind(F, M, equal_var=True), stats.ttest_ind(F, M, equal_var=False)
    assert tt["Pooled"]["tValue"] == pytest.approx(pooled.statistic, rel=1e-10)
    assert tt["Pooled"]["Probt"] == pytest.approx(pooled.pvalue, rel=1e-8) and tt["Pooled"]["DF"] == 12
    assert tt["Satterthwaite"]["tValue"] == pytest.approx(welch.statistic, rel=1e-10)
    assert tt["Satterthwaite"]["Probt"] == pytest.approx(welch.pvalue, rel=1e-8)
    assert tt["Satterthwaite"]["DF"] == pytest.approx(welch.df, rel=1e-10)
    st = {r["Class"]: r for r in rows(session, "work.st")}
    assert st["f"]["N"] == 7 and st["f"]["Mean"] == pytest.approx(538 / 7) and st["m"]["Maximum"] == 87
    assert st["Diff (1-2)"]["Mean"] == pytest.approx(538 / 7 - 579 / 7)
    # Folded F: larger variance over smaller, p = 2·P(F(6,6) > f)
    v1, v2 = np.var(F, ddof=1), np.var(M, ddof=1)
    f = max(v1, v2) / min(v1, v2)
    eq = rows(session, "work.eq")[0]
    assert (eq["Method"], eq["NumDF"], eq["DenDF"]) == ("Folded F", 6, 6)
    assert eq["FValue"] == pytest.approx(f) and eq["ProbF"] == pytest.approx(2 * stats.f.sf(f, 6, 6))
    cl = {(r["Class"], r["Method"]): r for r in rows(session, "work.cl")}
    ci = pooled.confidence_interval(0.95)
    assert cl[("Diff (1-2)", "Pooled")]["LowerCLMean"] == pytest.approx(ci.low)
    assert cl[("Diff (1-2)", "Satterthwaite")]["UpperCLMean"] == pytest.approx(welch.confidence_interval(0.95).high)
    # std CL of group f: s·√(6/χ²(.975, 6)) … s·√(6/χ²(.025, 6))
    s = math.sqrt(v1)
    assert cl[("f", "")]["LowerCLStdDev"] == pytest.approx(s * math.sqrt(6 / stats.chi2.ppf(0.975, 6)))
    assert cl[("f", "")]["UpperCLStdDev"] == pytest.approx(s * math.sqrt(6 / stats.chi2.ppf(0.025, 6)))


def test_one_sample_h0_sides_alpha(session):
    code, log, lst = run_sas(session, GOLF + """ods output TTests=work.tt ConfLimits=work.cl;
proc ttest data=scores h0=78 sides=u alpha=0.1; var Score; run;""")
    assert code == 0, log
    x = F + M
    want = stats.ttest_1samp(x, 78, alternative="greater")
    tt = rows(session, "work.tt")[0]
    assert tt["DF"] == 13 and tt["tValue"] == pytest.approx(want.statistic) and tt["Probt"] == pytest.approx(want.pvalue)
    cl = rows(session, "work.cl")[0]
    # one-sided 90%: x̄ - t(0.9, 13)·s/√14, upper limit infinite
    se = np.std(x, ddof=1) / math.sqrt(14)
    assert cl["LowerCLMean"] == pytest.approx(np.mean(x) - stats.t.ppf(0.9, 13) * se) and cl["UpperCLMean"] == math.inf
    assert "Pr > t" in lst and "90% CL Mean" in lst


def test_paired_differences_agree_with_ttest_rel(session):
    code, log, lst = run_sas(session, """data p; input a b; datalines;
1 2
3 3
4 6
5 5
7 4
;
ods output TTests=work.tt Statistics=work.st;
proc ttest data=p sides=l; paired a*b; run;""")
    assert code == 0, log
    a, b = [1, 3, 4, 5, 7], [2, 3, 6, 5, 4]
    want = stats.ttest_rel(a, b, alternative="less")
    tt = rows(session, "work.tt")[0]
    assert tt["tValue"] == pytest.approx(want.statistic) and tt["Probt"] == pytest.approx(want.pvalue)
    st = rows(session, "work.st")[0]
    # differences -1 0 -2 0 3: mean 0, min -2, max 3
    assert (st["N"], st["Mean"], st["Minimum"], st["Maximum"]) == (5, 0, -2, 3)
    assert "Difference:  a - b" in lst and "Pr < t" in lst


def test_by_groups_and_where(session):
    code, log, _ = run_sas(session, GOLF + """data s2; set scores; block = (_n_ > 7); run;
ods output TTests=work.tt;
proc ttest data=s2; by block; var Score; where Score > 74; run;""")
    assert code == 0, log
    got = {r["block"]: r for r in rows(session, "work.tt")}
    for blk, xs in ((0, [v for v in F if v > 74]), (1, [v for v in M if v > 74])):
        assert got[blk]["tValue"] == pytest.approx(stats.ttest_1samp(xs, 0).statistic)
        assert got[blk]["DF"] == len(xs) - 1


@pytest.mark.parametrize("text, msg", [
    ("data t; input g y; datalines;\n1 1\n2 2\n3 3\n1 4\n;\nproc ttest data=t; class g; var y; run;",
     "has more than two levels"),
    ("proc ttest data=scores sides=3; var Score; run;", "SIDES=3 is not valid"),
    ("proc ttest data=scores alpha=2; var Score; run;", "ALPHA=2 is not valid"),
    ("proc ttest data=scores; paired Score; run;", "PAIRED a*b"),
    ("proc ttest data=scores ci=umpu; var Score; run;", "CI=UMPU is not supported"),
    ("proc ttest data=scores; class Gender; var Nosuch; run;", "Nosuch"),
])
def test_bad_input_names_the_fault(session, text, msg):
    code, log, _ = run_sas(session, GOLF + text)
    assert code != 0 and msg in log, log


def test_freq_counts_each_row_its_whole_part_times(session):
    code, log, _ = run_sas(session, """data f; input g $ y n; datalines;
a 1 2
a 3 1.7
a 5 0
b 2 1
b 4 3
b 9 .
;
ods output TTests=work.tt Statistics=work.st;
proc ttest data=f; class g; var y; freq n; run;""")
    assert code == 0, log
    # a: 1 1 3 (n 1.7 → 1; 0 and missing leave the row out), b: 2 4 4 4
    a, b = [1, 1, 3], [2, 4, 4, 4]
    tt = {r["Method"]: r for r in rows(session, "work.tt")}
    assert tt["Pooled"]["tValue"] == pytest.approx(stats.ttest_ind(a, b).statistic)
    assert tt["Satterthwaite"]["DF"] == pytest.approx(stats.ttest_ind(a, b, equal_var=False).df)
    st = {r["Class"]: r for r in rows(session, "work.st")}
    assert (st["a"]["N"], st["b"]["N"], st["b"]["Maximum"]) == (3, 4, 4)
