"""More defects found by running realistic analyst programs through the PROC steps (helper "psmoke"; the first
part is test_sas_psmoke.py): each test is the smallest program that showed one, with expected figures computed
independently — R, statsmodels, numpy least squares or by hand — never by the code under test."""
from __future__ import annotations

import numpy as np
import pytest

from tests.unit.sas.standins import rows, run_sas
from tests.unit.sas.test_sas_psmoke import _logistic_data


# ------------------------------------------------------------------------------------------ CORR ALPHA, PARTIAL
CORR_DATA = """data k; input x1 x2 x3 g; datalines;
2 3 1 0
4 5 3 1
3 2 4 0
5 6 4 1
6 7 5 1
4 3 6 0
7 6 5 1
8 9 7 0
. 1 1 1
;
run;
"""


def test_corr_alpha_cronbach_agrees_with_r(session):
    """ALPHA was refused. R 4 (base), on the 8 complete rows:
    k/(k-1)*(1 - sum(apply(X,2,var))/var(rowSums(X))) → 0.891532927504; standardized k·r̄/(1+(k−1)·r̄) →
    0.895300124161; deleting x1: cor(x1, x2+x3) 0.959168185202, alpha 0.692708333333, standardized
    0.952745161066 and 0.706088707622."""
    code, log, lst = run_sas(session, CORR_DATA + """ods output CronbachAlpha=ca CronbachAlphaDel=cd;
proc corr data=k alpha; var x1 x2 x3; run;""")
    assert code == 0, log
    assert "Cronbach Coefficient Alpha with Deleted Variable" in lst and "N = 8" in lst
    ca = {r["Variables"]: r["Alpha"] for r in rows(session, "work.ca")}
    assert ca["Raw"] == pytest.approx(0.891532927504, abs=1e-10)
    assert ca["Standardized"] == pytest.approx(0.895300124161, abs=1e-10)
    cd = {r["Variable"]: r for r in rows(session, "work.cd")}
    assert [cd["x1"][k] for k in ("RawCorr", "RawAlpha", "StdCorr", "StdAlpha")] == pytest.approx(
        [0.959168185202, 0.692708333333, 0.952745161066, 0.706088707622], abs=1e-10)
    assert cd["x3"]["RawAlpha"] == pytest.approx(0.941406250000, abs=1e-10)
    code, log, _ = run_sas(session, CORR_DATA + "proc corr data=k alpha; var x1 x2; with x3; run;")
    assert code != 0 and "ALPHA option is not valid with a WITH statement" in log


def test_corr_partial_agrees_with_r(session):
    """PARTIAL was refused. R 4: e1 <- resid(lm(x1 ~ g)); e3 <- resid(lm(x3 ~ g)); cor(e1, e3) → 0.849178267621,
    p of t = r·sqrt(5/(1−r²)) on 8 − 3 = 5 DF → 0.015616733698; partial variance of x1 SSE/6 → 4.291666666667."""
    code, log, lst = run_sas(session, CORR_DATA + """ods output PearsonPartialCorr=pc SimpleStats=ss;
proc corr data=k; var x1 x3; partial g; run;""")
    assert code == 0, log
    assert "Pearson Partial Correlation Coefficients, N = 8" in lst and "Partial Rho=0" in lst
    got = {r["Variable"]: r for r in rows(session, "work.pc")}
    assert got["x1"]["x3"] == pytest.approx(0.849178267621, abs=1e-10)
    assert got["x1"]["Px3"] == pytest.approx(0.015616733698, rel=1e-8)
    ss = {r["Variable"]: r for r in rows(session, "work.ss")}
    assert ss["x1"]["PartialVar"] == pytest.approx(4.291666666667, rel=1e-10) and ss["g"]["NObs"] == 8


# ------------------------------------------------------------------------------------------ TTEST WEIGHT
def test_ttest_weight_matches_weighted_least_squares(session):
    """WEIGHT was refused. The weighted one-sample t is the WLS fit of the mean and the pooled two-sample t the WLS
    fit of the group difference (statsmodels); a row with weight 0 or missing is left out, as SAS."""
    sm = pytest.importorskip("statsmodels.api")
    g = [1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]
    y = [4.0, 6.5, 5.0, 7.25, 3.5, 8.0, 9.5, 7.0, 10.0, 8.5, 99.0]
    w = [1.0, 2.0, 0.5, 3.0, 1.5, 2.5, 1.0, 1.0, 0.5, 2.0, 0.0]
    text = "data t; input g y w; datalines;\n" + "\n".join(f"{a} {b} {c}" for a, b, c in zip(g, y, w)) + \
        "\n. 1 1\n;\nrun;\n"
    code, log, lst = run_sas(session, text + """ods output Statistics=s1 TTests=t1;
proc ttest data=t(where=(g=1)) h0=5; var y; weight w; run;
ods output Statistics=s2 TTests=t2;
proc ttest data=t; class g; var y; weight w; run;""")
    assert code == 0, log
    yy, ww, gg = (np.array(v[:10], dtype=float) for v in (y, w, g))
    one = sm.WLS(yy[gg == 1], np.ones(5), weights=ww[gg == 1]).fit()
    s1, t1 = rows(session, "work.s1")[0], rows(session, "work.t1")[0]
    assert s1["N"] == 5 and s1["Mean"] == pytest.approx(one.params[0], rel=1e-12)
    assert s1["StdErr"] == pytest.approx(one.bse[0], rel=1e-10)
    assert t1["tValue"] == pytest.approx((one.params[0] - 5) / one.bse[0], rel=1e-10) and t1["DF"] == 4
    two = sm.WLS(yy, np.column_stack([np.ones(10), (gg == 1) * 1.0]), weights=ww).fit()
    tests = {r["Method"]: r for r in rows(session, "work.t2")}
    assert tests["Pooled"]["tValue"] == pytest.approx(two.tvalues[1], rel=1e-10) and tests["Pooled"]["DF"] == 8
    # Satterthwaite by hand: each group's weighted variance over its Σw
    parts = []
    for k in (1, 2):
        yk, wk = yy[gg == k], ww[gg == k]
        m = (wk * yk).sum() / wk.sum()
        parts.append(((wk * (yk - m) ** 2).sum() / (len(yk) - 1) / wk.sum(), len(yk)))
    se = np.sqrt(parts[0][0] + parts[1][0])
    df = (parts[0][0] + parts[1][0]) ** 2 / sum(v * v / (n - 1) for v, n in parts)
    assert tests["Satterthwaite"]["tValue"] == pytest.approx(two.params[1] / se, rel=1e-10)
    assert tests["Satterthwaite"]["DF"] == pytest.approx(df, rel=1e-10)


def test_mixed_and_glimmix_show_the_solution_only_under_s(session):
    """SAS's MIXED and GLIMMIX print the Solution for Fixed Effects only with MODEL / SOLUTION (S); both printed
    it always. ODS OUTPUT SolutionF then gets SAS's WARNING."""
    text = "data c; do id = 1 to 30; u = rannor(3); do t = 1 to 3; x = ranuni(3); y = u + x + rannor(3); " \
           "b = y > 0.5; output; end; end; run;\n"
    code, log, lst = run_sas(session, text + """ods output SolutionF=sf;
proc mixed data=c; class id; model y = x; random intercept / subject=id; run;
proc glimmix data=c; class id; model b(event='1') = x / dist=binary; random intercept / subject=id; run;""")
    assert code == 0, log
    assert "Solution for Fixed Effects" not in lst and "Covariance Parameter Estimates" in lst
    assert "WARNING: Output 'SolutionF' was not created" in log
    code, log, lst = run_sas(session, text + """proc mixed data=c; class id; model y = x / s;
random intercept / subject=id; run;
proc glimmix data=c; class id; model b(event='1') = x / dist=binary s; random intercept / subject=id; run;""")
    assert code == 0, log
    assert lst.count("Solution for Fixed Effects") == 2


def test_mixed_model_information_iteration_history_and_convergence(session):
    """MIXED printed no Model Information, Iteration History nor "Convergence criteria met." (SAS's ModelInfo,
    IterHistory, ConvergenceStatus); the last iteration's objective is the fit's -2 Res Log Likelihood."""
    text = "data c; do id = 1 to 30; u = rannor(3); do t = 1 to 3; x = ranuni(3); y = u + x + rannor(3); " \
           "output; end; end; run;\n"
    code, log, lst = run_sas(session, text + """ods output ModelInfo=mi IterHistory=ih ConvergenceStatus=cs
  FitStatistics=fs;
proc mixed data=c covtest; class id; model y = x / ddfm=satterth; random intercept / subject=id; run;""")
    assert code == 0, log
    assert lst.index("Model Information") < lst.index("Iteration History") < lst.index(
        "Convergence criteria met.") < lst.index("Covariance Parameter Estimates")
    info = {r["Descr"]: r["Value"] for r in rows(session, "work.mi")}
    assert info["Data Set"] == "WORK.C" and info["Dependent Variable"] == "y"
    assert info["Subject Effect"] == "id" and info["Degrees of Freedom Method"] == "Satterthwaite"
    hist = rows(session, "work.ih")
    fit = {r["Descr"]: r["Value"] for r in rows(session, "work.fs")}
    assert hist[0]["Iteration"] == 0 and hist[-1]["Objective"] == pytest.approx(fit["-2 Res Log Likelihood"],
                                                                                 rel=1e-9)
    assert rows(session, "work.cs")[0]["Reason"] == "Convergence criteria met."


def test_genmod_event_option_picks_the_modelled_level(session):
    """MODEL y(EVENT='1') in GENMOD was passed over: the probability of y=0 (the default, lowest level) was
    modelled, every estimate's sign reversed. Expected: statsmodels Logit of y=1 on x."""
    sm = pytest.importorskip("statsmodels.api")
    x = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2, 0.65, 0.5, 0.95, 0.05, 0.7, 0.3]
    y = [0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1]
    ids = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]
    text = "data e; input id x y; datalines;\n" + "\n".join(f"{i} {a} {b}" for i, a, b in zip(ids, x, y)) + \
        "\n;\nrun;\n"
    code, log, _ = run_sas(session, text + """ods output ParameterEstimates=pe;
proc genmod data=e; model y(event='1') = x / dist=binomial link=logit; run;
ods output ParameterEstimates=p0;
proc genmod data=e; model y = x / dist=binomial link=logit; run;
ods output GEEEmpPEst=pg;
proc genmod data=e; class id; model y(event='1') = x / dist=binomial; repeated subject=id / type=ind; run;""")
    assert code == 0, log
    fit = sm.Logit(np.array(y), sm.add_constant(np.array(x))).fit(disp=0, tol=1e-12)
    est = {r["Parameter"]: r["Estimate"] for r in rows(session, "work.pe")}
    assert [est["Intercept"], est["x"]] == pytest.approx(list(fit.params), rel=1e-6)
    low = {r["Parameter"]: r["Estimate"] for r in rows(session, "work.p0")}
    assert [low["Intercept"], low["x"]] == pytest.approx(list(-fit.params), rel=1e-6)
    gee = {r["Parm"]: r["Estimate"] for r in rows(session, "work.pg")}
    assert [gee["Intercept"], gee["x"]] == pytest.approx(list(fit.params), rel=1e-5)


# ------------------------------------------------------------------------------------------ REG TEST
def test_reg_test_statement_agrees_with_restricted_fits(session):
    """REG's TEST statement was refused. F = ((SSE restricted − SSE) / q) / MSE, the restricted fits by numpy least
    squares: x1 = x2 = 0 drops both; x1 = 2, x2 = −1.5 moves them to the left-hand side."""
    rng = np.random.default_rng(3)
    x1, x2, x3 = (np.round(rng.normal(size=30), 4) for _ in range(3))
    y = np.round(1 + 2 * x1 - 1.5 * x2 + rng.normal(size=30), 4)
    text = "data a; input x1 x2 x3 y; datalines;\n" + "\n".join(
        f"{float(a)!r} {float(b)!r} {float(c)!r} {float(d)!r}" for a, b, c, d in zip(x1, x2, x3, y)) + "\n;\nrun;\n"
    code, log, lst = run_sas(session, text + """ods output TestANOVA=ta;
proc reg data=a; model y = x1 x2 x3; test x1=0, x2=0; both: test x1 = 2, x2 + 1.5 = 0; run; quit;""")
    assert code == 0, log
    assert "Test 1 Results for Dependent Variable y" in lst and "Test both Results for Dependent Variable y" in lst

    def sse(X, target):
        X = np.column_stack([np.ones(30), *X])
        r = target - X @ np.linalg.lstsq(X, target, rcond=None)[0]
        return float(r @ r)
    full = sse([x1, x2, x3], y)
    mse = full / 26
    f1 = (sse([x3], y) - full) / 2 / mse
    f2 = (sse([x3], y - 2 * x1 + 1.5 * x2) - full) / 2 / mse
    got = rows(session, "work.ta")
    assert [r["Source"] for r in got] == ["Numerator", "Denominator"] * 2
    assert got[0]["DF"] == 2 and got[1]["DF"] == 26 and got[1]["MS"] == pytest.approx(mse, rel=1e-10)
    assert got[0]["FValue"] == pytest.approx(f1, rel=1e-9) and got[2]["FValue"] == pytest.approx(f2, rel=1e-9)


def test_datasets_age_renames_down_the_chain(session):
    """AGE was accepted and did nothing. AGE a a1 a2: a2 is deleted, a1 becomes a2, a becomes a1."""
    code, log, _ = run_sas(session, """data a; v = 0; run; data a1; v = 1; run; data a2; v = 2; run;
proc datasets lib=work nolist; age a a1 a2; quit;""")
    assert code == 0, log
    assert [r["v"] for r in rows(session, "work.a1")] == [0] and [r["v"] for r in rows(session, "work.a2")] == [1]
    assert not session.ref("work.a").exists()
    assert "Ageing the name WORK.A to WORK.A1 (memtype=DATA)." in log


def test_genmod_model_information_response_profile_and_convergence(session):
    """GENMOD (without REPEATED) printed no Model Information, Response Profile nor "Algorithm converged.", and
    neither GENMOD printed which level of a 0/1 response is modelled. Counts by hand: 7 ones, 5 zeros."""
    ys = [1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 1, 0]
    text = "data e; input id x y; datalines;\n" + "\n".join(
        f"{k // 2} {k / 10} {v}" for k, v in enumerate(ys)) + "\n;\nrun;\n"
    code, log, lst = run_sas(session, text + """ods output ModelInfo=mi ResponseProfile=rp ConvergenceStatus=cs;
proc genmod data=e descending; model y = x / dist=binomial; run;
proc genmod data=e; class id; model y = x / dist=binomial; repeated subject=id; run;""")
    assert code == 0, log
    info = {r["Label1"]: r["cValue1"] for r in rows(session, "work.mi")}
    assert info == {"Data Set": "WORK.E", "Distribution": "Binomial", "Link Function": "Logit",
                    "Dependent Variable": "y"}
    assert [(r["OrderedValue"], r["Value"], r["Count"]) for r in rows(session, "work.rp")] == [(1, "1", 7),
                                                                                              (2, "0", 5)]
    assert rows(session, "work.cs")[0]["Reason"] == "Algorithm converged."
    assert "PROC GENMOD is modeling the probability that y='1'." in lst
    assert "PROC GENMOD is modeling the probability that y='0'." in lst          # the GEE fit: SAS's default
    assert lst.count("Response Profile") == 2


# ------------------------------------------------------------------------------------------ LOGISTIC STRATA
CLOGIT_ROWS = "1 0.03 1 0;1 1.36 2 0;1 1.22 0 1;1 -0.51 1 0;2 0.75 2 0;2 -1.85 0 0;2 1.57 1 1;2 -0.1 2 0;2 0.68 0 0;3 -0.15 0 0;3 0.69 1 1;3 -0.87 2 0;4 -1.92 1 0;4 -0.81 2 1;4 -0.47 0 1;4 -1.19 1 0;5 -0.74 2 0;5 0.38 0 0;5 0.72 1 0;5 -0.3 2 0;5 0.54 0 1;6 1.1 0 1;6 -1.28 1 0;6 -0.66 2 0;7 0.53 1 0;7 -0.74 2 0;7 1.39 0 1;7 0.82 1 0;8 0.61 2 1;8 0.6 0 0;8 -1.77 1 0;8 0.35 2 1;8 -0.25 0 0;9 0.6 0 0;9 -0.1 1 1;9 0.49 2 0;10 -0.18 1 0;10 0.63 2 0;10 1.26 0 0;10 1.79 1 1;11 -1.01 2 0;11 1.26 0 0;11 -1.26 1 0;11 0.57 2 0;11 1.3 0 1;12 2.02 0 1;12 -1.78 1 1;12 -0.57 2 0;13 -0.75 1 0;13 0.3 2 1;13 -0.02 0 0;13 -0.2 1 0;14 -0.22 2 0;14 -1.28 0 0;14 -0.49 1 0;14 1.21 2 1;14 -0.19 0 0;15 -0.46 0 1;15 -1.45 1 0;15 1.32 2 0;"


def test_logistic_strata_conditional_fit_agrees_with_r_clogit(session):
    """STRATA was refused. R 4, survival 3: d$g <- factor(d$g, levels=c(2,0,1));
    clogit(case ~ x + g + strata(s), method="exact") → coefficients 1.5850554669 0.6493536709 0.7950248911,
    standard errors 0.5777439955 0.7980124826 0.8777351088, -2 log L 43.1406701996 (β = 0) and 29.0507649089,
    score test 10.8295872089."""
    text = "data m; input s x g case; datalines;\n" + CLOGIT_ROWS.replace(";", "\n") + ";\nrun;\n"
    code, log, lst = run_sas(session, text + """ods output ParameterEstimates=pe GlobalTests=gt FitStatistics=fs
  StrataSummary=ss ModelInfo=mi;
proc logistic data=m; class g / param=ref; strata s; model case(event='1') = x g; run;""")
    assert code == 0, log
    assert "Analysis of Conditional Maximum Likelihood Estimates" in lst and "Strata Summary" in lst
    pe = [(r["Variable"], r["ClassVal0"], r["Estimate"], r["StdErr"]) for r in rows(session, "work.pe")]
    assert [(v, c) for v, c, *_ in pe] == [("x", ""), ("g", "0"), ("g", "1")]
    assert [e for *_, e, _ in pe] == pytest.approx([1.5850554669, 0.6493536709, 0.7950248911], abs=1e-7)
    assert [s for *_, s in pe] == pytest.approx([0.5777439955, 0.7980124826, 0.8777351088], rel=1e-6)
    fs = {r["Criterion"]: r for r in rows(session, "work.fs")}
    assert fs["-2 Log L"]["WithoutCovariates"] == pytest.approx(43.1406701996, rel=1e-9)
    assert fs["-2 Log L"]["WithCovariates"] == pytest.approx(29.0507649089, rel=1e-9)
    gt = {r["Test"]: r for r in rows(session, "work.gt")}
    assert gt["Score"]["ChiSq"] == pytest.approx(10.8295872089, rel=1e-8) and gt["Score"]["DF"] == 3
    assert gt["Likelihood Ratio"]["ChiSq"] == pytest.approx(43.1406701996 - 29.0507649089, rel=1e-8)
    # by hand from the rows: s has 3 + s mod 3 rows (five strata each of 3, 4, 5 rows), one case each except
    # s = 4 (4 rows), 8 (5 rows) and 12 (3 rows), which have two
    got = {(r["Events"], r["NonEvents"]): r["NumberOfStrata"] for r in rows(session, "work.ss")}
    assert got == {(1, 2): 4, (1, 3): 4, (1, 4): 4, (2, 2): 1, (2, 3): 1, (2, 1): 1}
    info = {r["Label1"]: r["cValue1"] for r in rows(session, "work.mi")}
    assert info["Data Set"] == "WORK.M" and info["Number of Strata"] == "15"
    code, log, _ = run_sas(session, text + "proc logistic data=m; strata s; model case = x / selection=s; run;")
    assert code != 0 and "STRATA" in log


def test_reg_outest_statistics_and_model_labels(session):
    """PROC REG RSQUARE/ADJRSQ/EDF/SSE/MSE (OUTEST= statistics) and `label: MODEL` were ERRORs. _RSQ_ and _SSE_
    by numpy least squares; _MODEL_ is the label."""
    rng = np.random.default_rng(5)
    x1 = np.round(rng.normal(size=12), 3)
    y = np.round(2 + x1 + rng.normal(size=12), 3)
    text = "data a; input x1 y; datalines;\n" + "\n".join(f"{float(a)!r} {float(b)!r}" for a, b in zip(x1, y)) + \
        "\n;\nrun;\n"
    code, log, _ = run_sas(session, text + "proc reg data=a outest=e rsquare edf sse noprint; first: model y = x1; "
                                           "run; quit;")
    assert code == 0, log
    X = np.column_stack([np.ones(12), x1])
    res = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    sse = float(res @ res)
    rsq = 1 - sse / float(((y - y.mean()) ** 2).sum())
    got = rows(session, "work.e")[0]
    assert got["_MODEL_"] == "first" and got["_IN_"] == 1 and got["_P_"] == 2 and got["_EDF_"] == 10
    assert got["_RSQ_"] == pytest.approx(rsq, rel=1e-10) and got["_SSE_"] == pytest.approx(sse, rel=1e-10)
    assert "_ADJRSQ_" not in got and "_MSE_" not in got


def test_logistic_rsquare_option(session):
    """MODEL / RSQUARE was accepted and printed nothing. SAS: R² = 1 − (L₀/L)^(2/n) and its max-rescaled form
    R² / (1 − L₀^(2/n)); L and L₀ from statsmodels' Logit (llf, llnull)."""
    sm = pytest.importorskip("statsmodels.api")
    text, grp, sex, x, y = _logistic_data()
    code, log, lst = run_sas(session, text + """ods output RSquare=rs;
proc logistic data=b; model y(event='1') = x / rsquare; run;""")
    assert code == 0, log
    fit = sm.Logit(y, sm.add_constant(x)).fit(disp=0, tol=1e-12)
    n = len(y)
    r2 = 1 - np.exp(2 * (fit.llnull - fit.llf) / n)
    top = 1 - np.exp(2 * fit.llnull / n)
    got = rows(session, "work.rs")[0]
    assert got["nValue1"] == pytest.approx(r2, rel=1e-7) and got["nValue2"] == pytest.approx(r2 / top, rel=1e-7)
    assert "Max-rescaled R-Square" in lst


def test_mixed_noitprint_and_noclprint(session):
    """PROC MIXED NOITPRINT leaves out the Iteration History (the convergence line stays), NOCLPRINT the Class
    Level Information."""
    text = "data c; do id = 1 to 20; u = rannor(3); do t = 1 to 3; y = u + rannor(3); output; end; end; run;\n"
    code, log, lst = run_sas(session, text + """proc mixed data=c noitprint noclprint; class id; model y = ;
random intercept / subject=id; run;""")
    assert code == 0, log
    assert "Iteration History" not in lst and "Class Level Information" not in lst
    assert "Convergence criteria met." in lst and "Covariance Parameter Estimates" in lst


def test_order_data_and_freq_set_the_class_levels(session):
    """PROC GLM/LOGISTIC ORDER=DATA|FREQ was accepted and passed over (levels stayed sorted). ORDER=DATA: the levels
    as they first appear (c, a, b), the last one aliased; cell means by hand: a 4, b 11, c 7.5."""
    text = "data g; input k $ y; datalines;\nc 7\nc 8\na 3\na 5\nb 10\nb 12\nb 11\n;\nrun;\n"
    code, log, lst = run_sas(session, text + """ods output ParameterEstimates=pe ClassLevels=cl;
proc glm data=g order=data; class k; model y = k / solution; run; quit;
ods output ClassLevelInfo=li;
data g2; set g; b = mod(_n_, 2); run;
proc logistic data=g2 order=freq; class k / param=ref; model b(event='1') = k; run;""")
    assert code == 0, log
    assert rows(session, "work.cl")[0]["Values"] == "c a b"
    got = {r["Parameter"].strip(): r["Estimate"] for r in rows(session, "work.pe")}
    assert got["Intercept"] == pytest.approx(11.0) and got["k c"] == pytest.approx(-3.5)
    assert got["k a"] == pytest.approx(-7.0) and got["k b"] == 0
    # ORDER=FREQ: b (3 rows) first, then a and c (2 each, ties by value); c, last, is the reference
    assert [r["Value"] for r in rows(session, "work.li")] == ["b", "a", "c"]


def test_logistic_quasi_complete_separation_warns_within_maxiter_25(session):
    """Quasi-complete separation (k=a all 0, k=b all 1) ended in an ERROR under the default MAXITER=25: the
    separation test needed |η| > 30. SAS warns and reports the last iteration."""
    code, log, lst = run_sas(session, """data g; input k $ b; datalines;
c 0
c 1
a 0
a 0
b 1
b 1
b 1
;
run;
proc logistic data=g; class k / param=ref; model b(event='1') = k; run;""")
    assert code == 0, log
    assert "WARNING: There is possibly a quasi-complete separation of data points." in log
    assert "Analysis of Maximum Likelihood Estimates" in lst


def test_mixed_and_glimmix_class_ref(session):
    """GLIMMIX's CLASS took `(ref='0')` for variable names (ERROR: CLASS variable 'ref' …); MIXED passed REF= over.
    Balanced subjects, treatment between them: the GLS difference trt 1 − trt 0 is the difference of the group
    means (numpy), and trt 0 — the REF= level — is the aliased one."""
    rng = np.random.default_rng(9)
    recs = [(i, i % 2, float(np.round(rng.normal() + (i % 2) * 0.7 + u, 3)))
            for i, u in enumerate(rng.normal(size=12)) for _ in range(3)]
    text = "data c; input id trt y; b = y > 0.4; datalines;\n" + "\n".join(f"{a} {b} {c!r}" for a, b, c in recs) + \
        "\n;\nrun;\n"
    code, log, lst = run_sas(session, text + """ods output SolutionF=sf;
proc mixed data=c; class id trt(ref='0'); model y = trt / s; random intercept / subject=id; run;
proc glimmix data=c; class id trt(ref='0'); model b(event='1') = trt / dist=binary s;
  random intercept / subject=id; run;""")
    assert code == 0, log
    y = np.array([r[2] for r in recs])
    t = np.array([r[1] for r in recs])
    got = {r["trt"]: r["Estimate"] for r in rows(session, "work.sf") if r["Effect"] == "trt"}
    assert got["1"] == pytest.approx(y[t == 1].mean() - y[t == 0].mean(), rel=1e-6) and got["0"] == 0
    glim = lst[lst.index("The GLIMMIX Procedure"):]
    assert glim.index("trt        1") < glim.index("trt        0")


def test_append_force_note(session):
    """PROC APPEND FORCE with variables that differ: SAS adds "NOTE: FORCE is specified, so dropping/truncating will
    occur." after the WARNINGs; the row is appended with y missing and z dropped."""
    code, log, _ = run_sas(session, """data b1; x = 1; y = 'a'; run; data b2; x = 2; z = 3; run;
proc append base=b1 data=b2 force; run;""")
    assert code == 0, log
    assert "NOTE: FORCE is specified, so dropping/truncating will occur." in log
    assert log.index("WARNING: Variable z was not found on BASE file") < log.index("NOTE: FORCE is specified")
    assert [(r["x"], (r["y"] or "").strip()) for r in rows(session, "work.b1")] == [(1, "a"), (2, "")]


def test_surveylogistic_parameter_estimates_without_class_have_no_classval0(session):
    """SAS's ParameterEstimates has ClassVal0 only with CLASS effects (as LOGISTIC's); SURVEYLOGISTIC always had it."""
    code, log, _ = run_sas(session, """data s; do i = 1 to 40; x = mod(i * 7, 11); y = mod(i * 3, 5) > 1;
  c = mod(i, 3); output; end; run;
ods output ParameterEstimates=p1;
proc surveylogistic data=s; model y(event='1') = x; run;
ods output ParameterEstimates=p2;
proc surveylogistic data=s; class c; model y(event='1') = x c; run;""")
    assert code == 0, log
    assert "ClassVal0" not in rows(session, "work.p1")[0] and "ClassVal0" in rows(session, "work.p2")[0]
