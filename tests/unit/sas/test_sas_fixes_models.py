"""Issue 26/27 fixes in the model PROCs' tables (statgrid/sas/procs/modeltables.py): MIXED's Class Level
Information and Dimensions with SUBJECT=, GENMOD's kernel log likelihood for other distributions. Expected
figures by hand from the data below (or numpy/scipy on them, said so)."""
from __future__ import annotations

import math

import pytest
from tests.unit.sas.standins import rows, run_sas

# the Heights data of SAS/STAT MIXED's "Clustered Data Example" (18 rows: family 1 has 5, 2 has 6, 3 has 2, 4 has 5)
HEIGHTS = """data h; input Family Gender $ Height @@; datalines;
1 F 67 1 F 66 1 F 64 1 M 71 1 M 72 2 F 63 2 F 63 2 F 67 2 M 69 2 M 68 2 M 70 3 F 63 3 M 64 4 F 67 4 F 66 4 M 67
4 M 67 4 M 69
;
"""


def run_ok(session, text: str) -> tuple[str, str]:
    code, log, lst = run_sas(session, text)
    assert code == 0, log
    return log, lst


def test_mixed_dimensions_with_subject(session):
    _, lst = run_ok(session, HEIGHTS + """ods output ClassLevels=cl Dimensions=dim;
proc mixed data=h; class Family Gender; model Height = Gender; random intercept Gender / subject=Family; run;""")
    cl = {r["Class"]: (r["Levels"], r["Values"]) for r in rows(session, "work.cl")}
    assert cl == {"Family": (4, "1 2 3 4"), "Gender": (2, "F M")}
    dim = [(r["Descr"], r["Value"]) for r in rows(session, "work.dim")]
    # by hand: parameters Intercept, Gender, Residual (VC); X = intercept + 2 Gender columns; Z per subject =
    # intercept + 2 Gender columns; 4 families, the largest (family 2) has 6 rows
    assert dim == [("Covariance Parameters", 3), ("Columns in X", 3), ("Columns in Z per Subject", 3),
                   ("Subjects", 4), ("Max Obs Per Subject", 6)]
    lines = [line.split() for line in lst.splitlines()]
    assert ["Class", "Level", "Information"] in lines and ["Dimensions"] in lines
    assert ["Columns", "in", "Z", "per", "Subject", "3"] in lines and ["Max", "Obs", "Per", "Subject", "6"] in lines
    assert lst.index("Class Level Information") < lst.index("Dimensions") < lst.index("Number of Observations Read")


def test_mixed_class_levels_count_only_rows_used(session):
    # a row with a missing Height is not used: its family (5) is not a level SAS lists
    run_ok(session, HEIGHTS.replace("4 M 69\n", "4 M 69 5 F .\n") + """ods output ClassLevels=cl Dimensions=dim;
proc mixed data=h; class Family Gender; model Height = Gender; random Family; run;""")
    cl = {r["Class"]: (r["Levels"], r["Values"]) for r in rows(session, "work.cl")}
    assert cl == {"Family": (4, "1 2 3 4"), "Gender": (2, "F M")}
    dim = {r["Descr"]: r["Value"] for r in rows(session, "work.dim")}
    assert dim == {"Covariance Parameters": 2, "Columns in X": 3, "Columns in Z": 4, "Subjects": 1,
                   "Max Obs Per Subject": 18}


COUNTS = """data c; input x y n; datalines;
0 1 4
1 3 5
2 4 4
3 6 7
;
"""


def _lgamma_sum(values) -> float:
    return sum(math.lgamma(v + 1) for v in values)


def test_genmod_poisson_kernel_is_full_plus_log_factorials(session):
    run_ok(session, COUNTS + """ods output ModelFit=fit;
proc genmod data=c; model y = x / dist=poisson; run;""")
    fit = {r["Criterion"]: r["Value"] for r in rows(session, "work.fit")}
    # kernel = full + sum(log y!) with y = 1, 3, 4, 6: log(1·6·24·720)
    assert fit["Log Likelihood"] - fit["Full Log Likelihood"] == pytest.approx(_lgamma_sum([1, 3, 4, 6]), rel=1e-12)
    assert fit["Full Log Likelihood"] == pytest.approx(-(fit["AIC (smaller is better)"] - 2 * 2) / 2, rel=1e-12)


def test_genmod_binomial_events_trials_kernel_leaves_out_log_choose(session):
    run_ok(session, COUNTS + """ods output ModelFit=fit;
proc genmod data=c; model y/n = x / dist=binomial; run;""")
    fit = {r["Criterion"]: r["Value"] for r in rows(session, "work.fit")}
    # log C(n, y) for (4,1) (5,3) (4,4) (7,6): log(4 · 10 · 1 · 7) = log 280
    assert fit["Full Log Likelihood"] - fit["Log Likelihood"] == pytest.approx(math.log(280), rel=1e-12)


def test_genmod_normal_kernel_is_the_full_log_likelihood(session):
    # SAS/STAT GENMOD, Example "Normal Regression, Log Link", Output 40.2.1: Log Likelihood -32.1783 and Full Log
    # Likelihood -32.1783 (the same: the normal kernel keeps every term), AIC 70.3566
    # https://support.sas.com/documentation/cdl/en/statug/65328/HTML/default/statug_genmod_examples02.htm
    run_ok(session, """data nor; input x y @@; datalines;
0 5 0 7 0 9 1 7 1 10 1 8 2 11 2 9 3 16 3 13 3 14 4 25 4 24 5 34 5 32 5 30
;
ods output ModelFit=fit;
proc genmod data=nor; model y = x / dist=normal link=log; run;""")
    fit = {r["Criterion"]: r["Value"] for r in rows(session, "work.fit")}
    assert fit["Log Likelihood"] == pytest.approx(-32.1783, abs=5e-5)
    assert fit["Full Log Likelihood"] == pytest.approx(-32.1783, abs=5e-5)
    assert fit["AIC (smaller is better)"] == pytest.approx(70.3566, abs=5e-5)


def test_glm_listing_decimals_follow_each_columns_largest_value(session):
    # y = 2x − 2 + e, e = (1, −2, 2, −2, 1) orthogonal to 1 and x (by hand): b = 2, a = −2, SSM = 4·Sxx = 40,
    # SSE = Σe² = 14, SST = 54, MSE = 14/3; F = 60/7 = 8.57, Pr > F 0.0611 (scipy's F(1, 3) tail)
    _, lst = run_ok(session, """data g; input x y; datalines;
1 1
2 0
3 6
4 4
5 9
;
proc glm data=g; model y = x / solution; run; quit;""")
    lines = [line.split() for line in lst.splitlines()]
    # the SS column's largest value 54 (2 digits): 8 decimals, and the Mean Square column with it
    assert ["Model", "1", "40.00000000", "40.00000000", "8.57", "0.0611"] in lines
    assert ["Error", "3", "14.00000000", "4.66666667"] in lines
    assert ["Corrected", "Total", "4", "54.00000000"] in lines
    # estimates: largest |−2| → 9 decimals; standard errors sqrt(MSE·(1/5 + 9/10)) = 2.265686062 and
    # sqrt(MSE/10) = 0.683130051, largest 2.27 → 9 decimals
    assert ["Intercept", "-2.000000000", "2.265686062", "-0.88", "0.4424"] in lines
    assert ["x", "2.000000000", "0.683130051", "2.93", "0.0611"] in lines
    # the y Mean (4) in BEST8.: no decimals; R-Square 40/54 = 0.740741
    assert any(line[:1] == ["0.740741"] and line[-1] == "4" for line in lines)
