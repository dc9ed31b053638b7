"""ODS OUTPUT of UNIVARIATE, TABULATE and FREQ's statistics tables, LOGISTIC's Response Profile, and ODS LISTING
CLOSE / SELECT / EXCLUDE on the PROCs that write their listing as text (statgrid/sas/ods.py): columns by SAS's
names, values checked against numpy, scipy, statsmodels and DuckDB computed here."""
from __future__ import annotations

import duckdb
import numpy as np
import pytest
from scipy import stats

from tests.unit.sas.test_sas_ods_output import ROWS, ods_rows, run, table

G, H, X, Y, B = ROWS.T


# ------------------------------------------------------------------------------------------ UNIVARIATE
def test_univariate_moments_measures_quantiles_extremes(session):
    rows, log, lst = ods_rows(session, "ods output Moments=mo BasicMeasures=bm Quantiles=qu ExtremeObs=ex;\n"
                                       "proc univariate data=a; var x; run;\n",
                                       "work.mo",
                                       ["VarName", "Label1", "cValue1", "nValue1", "Label2", "cValue2", "nValue2"])
    got = {r[1]: r[3] for r in rows} | {r[4]: r[6] for r in rows}
    n, mean, sd = X.size, X.mean(), X.std(ddof=1)
    assert got["N"] == n and got["Sum Weights"] == n
    assert got["Mean"] == pytest.approx(mean, rel=1e-12) and got["Sum Observations"] == pytest.approx(X.sum())
    assert got["Variance"] == pytest.approx(X.var(ddof=1), rel=1e-12)
    assert got["Skewness"] == pytest.approx(stats.skew(X, bias=False), rel=1e-9)
    assert got["Kurtosis"] == pytest.approx(stats.kurtosis(X, bias=False), rel=1e-9)
    assert got["Corrected SS"] == pytest.approx(((X - mean) ** 2).sum(), rel=1e-12)
    assert got["Std Error Mean"] == pytest.approx(sd / np.sqrt(n), rel=1e-12)
    assert all(r[0] == "x" for r in rows)
    cols, rows = table(session, "work.bm")
    assert cols == ["VarName", "LocMeasure", "LocValue", "VarMeasure", "VarValue"]
    loc = {r[1]: r[2] for r in rows}
    spread = {r[3]: r[4] for r in rows}
    assert loc["Median"] == pytest.approx(np.median(X))
    vals, counts = np.unique(X, return_counts=True)
    assert loc["Mode"] == (vals[np.argmax(counts)] if counts.max() > 1 else None)
    assert spread["Range"] == pytest.approx(np.ptp(X))
    # PCTLDEF=5: the empirical distribution function with averaging (numpy's averaged_inverted_cdf)
    q75, q25 = np.percentile(X, [75, 25], method="averaged_inverted_cdf")
    assert spread["Interquartile Range"] == pytest.approx(q75 - q25)
    cols, rows = table(session, "work.qu")
    assert cols == ["VarName", "Quantile", "Estimate"]
    assert [r[1] for r in rows][:2] == ["100% Max", "99%"] and rows[-1][1] == "0% Min"
    want = np.percentile(X, [100, 99, 95, 90, 75, 50, 25, 10, 5, 1, 0], method="averaged_inverted_cdf")
    assert np.allclose([r[2] for r in rows], want)
    cols, rows = table(session, "work.ex")
    assert cols == ["VarName", "Low", "LowObs", "High", "HighObs"]
    order = np.lexsort((np.arange(40), X))
    assert [r[2] for r in rows] == list(order[:5] + 1)
    assert [r[1] for r in rows] == list(X[order[:5]])
    assert sorted(r[3] for r in rows) == sorted(np.sort(X)[-5:])
    assert "Basic Statistical Measures" in lst and "Variable:  x" in lst and "Extreme Observations" in lst


def test_univariate_tests_for_normality(session):
    diag = pytest.importorskip("statsmodels.stats.diagnostic")
    rows, log, lst = ods_rows(session, "ods output TestsForNormality=tn;\n"
                                       "proc univariate data=a normal; var y; run;\n",
                                       "work.tn", ["VarName", "Test", "TestLab", "Stat", "pType", "pSign", "pValue"])
    by = {r[1]: r for r in rows}
    w, p = stats.shapiro(Y)
    assert by["Shapiro-Wilk"][3] == pytest.approx(w, rel=1e-9) and by["Shapiro-Wilk"][6] == pytest.approx(p)
    d, _ = diag.lilliefors(Y, dist="norm", pvalmethod="table")
    assert by["Kolmogorov-Smirnov"][3] == pytest.approx(d, rel=1e-9)
    z = (Y - Y.mean()) / Y.std(ddof=1)
    assert by["Cramer-von Mises"][3] == pytest.approx(stats.cramervonmises(z, "norm").statistic, rel=1e-9)
    a2, ap = diag.normal_ad(Y)                       # D'Agostino-Stephens' modified statistic and p-value
    assert by["Anderson-Darling"][3] == pytest.approx(a2, rel=1e-9)
    shown = 0.25 if ap > 0.25 else 0.005 if ap < 0.005 else ap
    assert by["Anderson-Darling"][6] == pytest.approx(shown, rel=1e-6)
    assert by["Anderson-Darling"][5] == (">" if ap > 0.25 else "<" if ap < 0.005 else "")
    assert [r[4] for r in rows] == ["Pr < W", "Pr > D", "Pr > W-Sq", "Pr > A-Sq"]
    assert "Tests for Normality" in lst


def test_univariate_by_groups_stack_with_by_variable_first(session):
    rows, log, _ = ods_rows(session, "proc sort data=a out=s; by h; run;\n"
                                     "ods output Quantiles=qu;\nproc univariate data=s; by h; var x y; run;\n",
                                     "work.qu", ["h", "VarName", "Quantile", "Estimate"])
    assert len(rows) == 2 * 2 * 11
    med = {(r[0], r[1]): r[3] for r in rows if r[2] == "50% Median"}
    for hv in (0, 1):
        for name, v in (("x", X), ("y", Y)):
            assert med[(hv, name)] == pytest.approx(np.median(v[H == hv]))


# ------------------------------------------------------------------------------------------ TABULATE
def test_tabulate_table_in_sas_layout(session):
    rows, log, lst = ods_rows(session, "ods output Table=tb;\nproc tabulate data=a; class g h; var x;\n"
                                       "table g all, h*x*(sum mean); run;\n",
                                       "work.tb", ["g", "h", "_TYPE_", "_PAGE_", "_TABLE_", "x_Sum", "x_Mean"])
    con = duckdb.connect()
    con.register("t", {"g": G, "h": H, "x": X})
    want = {(r[0], r[1]): r[2:] for r in con.sql("SELECT g, h, sum(x), avg(x) FROM t GROUP BY g, h").fetchall()}
    cells = {(r[0], r[1]): r[5:] for r in rows if r[2] == "11"}
    assert set(cells) == set(want)
    for k, (s, m) in want.items():
        assert cells[k] == (pytest.approx(s), pytest.approx(m))
    totals = {r[1]: r[5] for r in rows if r[2] == "01"}                 # ALL: over g's levels, by h
    assert totals == {hv: pytest.approx(X[H == hv].sum()) for hv in (0.0, 1.0)}
    assert all(r[3] == 1 and r[4] == 1 for r in rows)
    assert "Sum" in lst


# ------------------------------------------------------------------------------------------ FREQ
def test_freq_chisq_and_fishers_exact(session):
    code, log, lst = run(session, "ods output ChiSq=cs FishersExact=fe;\n"
                                  "proc freq data=a; tables h*b / chisq; run;\n")
    assert code == 0, log
    m = np.array([[np.sum((H == r) & (B == c)) for c in (0, 1)] for r in (0, 1)], dtype=float)
    cols, rows = table(session, "work.cs")
    assert cols == ["Table", "Statistic", "DF", "Value", "Prob"]
    got = {r[1]: r for r in rows}
    chi, p, df, _ = stats.chi2_contingency(m, correction=False)
    assert got["Chi-Square"][2:] == (df, pytest.approx(chi, rel=1e-9), pytest.approx(p, rel=1e-9))
    g2, gp, _, _ = stats.chi2_contingency(m, correction=False, lambda_="log-likelihood")
    assert got["Likelihood Ratio Chi-Square"][3] == pytest.approx(g2, rel=1e-9)
    cont, _, _, _ = stats.chi2_contingency(m, correction=True)
    assert got["Continuity Adj. Chi-Square"][3] == pytest.approx(cont, rel=1e-9)
    assert got["Phi Coefficient"][2] is None and rows[0][0] == "Table h * b"
    cols, rows = table(session, "work.fe")
    assert cols == ["Table", "Name1", "Label1", "cValue1", "nValue1"]
    fe = {r[1]: r[4] for r in rows}
    assert fe["FREQ11"] == m[0, 0]
    assert fe["XP2_FISH"] == pytest.approx(stats.fisher_exact(m)[1], rel=1e-9)
    assert fe["XPL_FISH"] == pytest.approx(stats.fisher_exact(m, alternative="less")[1], rel=1e-9)
    assert fe["P_TABLE"] == pytest.approx(stats.hypergeom.pmf(m[0, 0], 40, m[:, 0].sum(), m[0].sum()), rel=1e-9)
    assert "Statistics for Table of h by b" in lst and "Fisher's Exact Test" in lst and "Sample Size = 40" in lst


def test_freq_chisq_larger_table_has_no_fishers_exact(session):
    code, log, _ = run(session, "ods output ChiSq=cs FishersExact=fe;\nproc freq data=a; tables g*h / chisq; run;\n")
    assert code == 0
    assert "WARNING: Output 'FishersExact' was not created." in log
    _, rows = table(session, "work.cs")
    m = np.array([[np.sum((G == r) & (H == c)) for c in (0, 1)] for r in (0, 1, 2)], dtype=float)
    assert rows[0][2:4] == (2, pytest.approx(stats.chi2_contingency(m, correction=False)[0], rel=1e-9))


# ------------------------------------------------------------------------------------------ LOGISTIC
def _model_of(text):
    from statgrid.sas.cursor import TokenCursor
    from statgrid.sas.lexer import tokenize
    from statgrid.sas.procs.models import _model

    c = TokenCursor(list(tokenize(text)), text)
    c.next()
    return _model(c)


@pytest.mark.parametrize("model, descending, order, event", [
    ("model b = x;", False, ["0", "1"], "0"),                      # SAS's default: the lowest level is modeled
    ("model b = x;", True, ["1", "0"], "1"),                       # PROC LOGISTIC DESCENDING
    ("model b(event='1') = x;", False, ["0", "1"], "1"),           # EVENT= picks the level, the order stays
])
def test_logistic_response_profile(session, model, descending, order, event):
    from statgrid.procs.logistic import logistic
    from statgrid.sas.odstable import render
    from statgrid.sas.procs.modeltables import tables

    run(session, "")
    spec = _model_of(model)
    fit = getattr(logistic, "__wrapped__", logistic)
    result = fit(session, "work.a", "b = x", event=spec[2].get("EVENT"), descending=descending, print=False)
    profile = next(t for t in tables("LOGISTIC", result, [], spec) if t.name == "ResponseProfile")
    assert [c.name for c in profile.columns] == ["OrderedValue", "Outcome", "Count"]
    counts = {"0": int(np.sum(B == 0)), "1": int(np.sum(B == 1))}
    assert profile.rows == [[1, order[0], counts[order[0]]], [2, order[1], counts[order[1]]]]
    lines = render(profile)
    assert lines[-1].strip() == f"Probability modeled is b={event}."
    assert "Response Profile" in lines[0] and "Total" in "\n".join(lines)


# ------------------------------------------------------------------------------------------ ODS and text PROCs
def test_listing_close_reaches_print_sql_and_contents(session):
    code, log, lst = run(session, "ods listing close;\nproc print data=a(obs=2); run;\n"
                                  "proc sql; select count(*) as n from a; quit;\nproc contents data=a; run;\n"
                                  "ods listing;\nproc print data=a(obs=1); var g; run;\n")
    assert code == 0, log
    assert lst.count("Obs") == 1 and "CONTENTS" not in lst.upper().replace("THE SAS SYSTEM", "")


def test_select_and_exclude_reach_print(session):
    _, _, lst = run(session, "ods select ParameterEstimates;\nproc print data=a(obs=1); var g; run;\n"
                             "proc print data=a(obs=1); var h; run;\n")
    assert lst.count("Obs") == 1 and "h" in lst.split("Obs")[1]      # the list left out the first PRINT only
    _, _, lst = run(session, "ods exclude Print;\nproc print data=a(obs=1); run;\nods select Print;\n"
                             "proc print data=a(obs=1); var g; run;\n")
    assert lst.count("Obs") == 1
    _, _, lst = run(session, "ods select none;\nproc sql; select g from a(obs=1); quit;\n")
    assert lst.strip() == ""
