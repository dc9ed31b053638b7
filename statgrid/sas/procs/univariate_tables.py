"""PROC UNIVARIATE's tables as SAS's ODS holds them (Base SAS Procedures: UNIVARIATE, "ODS Table Names"): Moments,
BasicMeasures, TestsForNormality (NORMAL), Quantiles and ExtremeObs, one set per analysis variable (and BY group),
made from the engine's figures (procs/univariate.py) and published through ods.Listing. Columns as SAS's
templates name them: VarName first in each; Moments as label/value pairs (Label1 cValue1 nValue1 …);
BasicMeasures LocMeasure LocValue VarMeasure VarValue; TestsForNormality Test TestLab Stat pType pSign pValue;
Quantiles Quantile Estimate; ExtremeObs Low LowObs High HighObs.

The EDF tests of normality (mean and variance estimated from the data, Stephens' "case 3"):
- Kolmogorov-Smirnov D, its p-value interpolated (log p linear in the statistic) in Stephens' (1974) upper-tail
  points of the modified D* = D (sqrt(n) - 0.01 + 0.85/sqrt(n)); outside the table SAS's bounds >0.1500 / <0.0100;
- Cramer-von Mises W² and Anderson-Darling A², p-values from D'Agostino and Stephens (1986, Table 4.9) on
  W²(1 + 0.5/n) and A²(1 + 0.75/n + 2.25/n²), shown within SAS's bounds >0.2500 / <0.0050.
pSign holds the bound's sign ('>' or '<', else blank), as in SAS's data set.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from statgrid.sas.ods import OdsColumn as Col, OdsTable

# Stephens (1974), Table 1A, normal with estimated mean and variance: modified D* at upper-tail probabilities
KS_POINTS = [(0.775, 0.15), (0.819, 0.10), (0.895, 0.05), (0.955, 0.025), (1.035, 0.01)]
QUANTILE_LABELS = [(100, "100% Max"), (99, "99%"), (95, "95%"), (90, "90%"), (75, "75% Q3"), (50, "50% Median"),
                   (25, "25% Q1"), (10, "10%"), (5, "5%"), (1, "1%"), (0, "0% Min")]


def _var_col() -> Col:
    return Col("VarName", type="char", hidden=True)


def _table(name: str, title: str, var: str, cols: list[Col], rows: list[list], headings: bool = True) -> OdsTable:
    return OdsTable(name, title, cols, [[var, *r] for r in rows], "Univariate", f"Univariate.{var}.{name}",
                    headings=headings)


def moments(var: str, rec: dict) -> OdsTable:
    n, mean, std = rec["n"], rec["mean"], rec["std"]
    pairs = [("N", n, "Sum Weights", n),
             ("Mean", mean, "Sum Observations", None if mean is None else mean * n),
             ("Std Deviation", std, "Variance", None if std is None else std * std),
             ("Skewness", rec["skewness"], "Kurtosis", rec["kurtosis"]),
             ("Uncorrected SS", rec["uss"], "Corrected SS", rec["css"]),
             ("Coeff Variation", rec["cv"], "Std Error Mean", rec["stderr"])]
    rows = [[a, _text(x), _num(x), b, _text(y), _num(y)] for a, x, b, y in pairs]
    return _table("Moments", "Moments", var, [
        _var_col(), Col("Label1", "", "char"), Col("cValue1", "", "char", right=True), Col("nValue1", hidden=True),
        Col("Label2", "", "char"), Col("cValue2", "", "char", right=True), Col("nValue2", hidden=True)],
        rows, headings=False)


def basic_measures(var: str, rec: dict, mode: float | None) -> OdsTable:
    q = {p: rec[f"q{p}"] for p, _ in QUANTILE_LABELS}
    spread = None if q[100] is None else q[100] - q[0]
    iqr = None if q[75] is None else q[75] - q[25]
    std = rec["std"]
    rows = [["Mean", _num(rec["mean"]), "Std Deviation", _num(std)],
            ["Median", _num(q[50]), "Variance", _num(None if std is None else std * std)],
            ["Mode", _num(mode), "Range", _num(spread)],
            ["", None, "Interquartile Range", _num(iqr)]]
    return _table("BasicMeasures", "Basic Statistical Measures", var, [
        _var_col(), Col("LocMeasure", "Location", "char"), Col("LocValue", "", fmt="best"),
        Col("VarMeasure", "Variability", "char"), Col("VarValue", "", fmt="best")], rows)


def quantiles(var: str, rec: dict, qntldef: int) -> OdsTable:
    rows = [[label, _num(rec[f"q{p}"])] for p, label in QUANTILE_LABELS]
    return _table("Quantiles", f"Quantiles (Definition {qntldef})", var, [
        _var_col(), Col("Quantile", "Level", "char"), Col("Estimate", "Quantile", fmt="best")], rows)


def extreme_obs(var: str, ext: dict) -> OdsTable:
    rows = [[lo[0], lo[1], hi[0], hi[1]] for lo, hi in zip(ext["lowest"], ext["highest"])]
    return _table("ExtremeObs", "Extreme Observations", var, [
        _var_col(), Col("Low", "Lowest", fmt="best"), Col("LowObs", "Obs", fmt="int"),
        Col("High", "Highest", fmt="best"), Col("HighObs", "Obs", fmt="int")], rows)


def normality_tests(var: str, rec: dict, values: np.ndarray) -> OdsTable:
    """Shapiro-Wilk (the engine's W and p, n ≤ 5000 as SAS), then the three EDF tests on `values`."""
    d, w2, a2 = edf_statistics(values)
    n = values.size
    rows = [["Shapiro-Wilk", "W", rec.get("shapiro_w"), "Pr < W", "", rec.get("shapiro_p")]]
    for test, lab, stat, p_type, (sign, p) in (
            ("Kolmogorov-Smirnov", "D", d, "Pr > D", ks_p(d, n)),
            ("Cramer-von Mises", "W-Sq", w2, "Pr > W-Sq", cvm_p(w2, n)),
            ("Anderson-Darling", "A-Sq", a2, "Pr > A-Sq", ad_p(a2, n))):
        rows.append([test, lab, stat, p_type, sign, p])
    rows = [[t, lab, _num(s), pt, sign, _num(p)] for t, lab, s, pt, sign, p in rows]
    return _table("TestsForNormality", "Tests for Normality", var, [
        _var_col(), Col("Test", type="char"), Col("TestLab", "", "char"), Col("Stat", "Statistic", fmt="d6"),
        Col("pType", "", "char"), Col("pSign", "", "char"), Col("pValue", "p Value", fmt="d4")], rows)


def normality_text(table: OdsTable) -> list[str]:
    """The listing's Tests for Normality: the bound's sign joined to its p-value (">0.1500"), as SAS prints."""
    shown = OdsTable(table.name, table.title, [
        Col("Test", type="char"), Col("TestLab", "", "char"), Col("Stat", "Statistic", fmt="d6"),
        Col("pType", "", "char"), Col("p", "p Value", "char", right=True)],
        [[r[1], r[2], r[3], r[4], "." if r[6] is None else f"{r[5]}{r[6]:.4f}"] for r in table.rows])
    from statgrid.sas.odstable import render
    return render(shown)


# ------------------------------------------------------------------------------------------ EDF tests
def edf_statistics(values: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """Kolmogorov D, Cramer-von Mises W² and Anderson-Darling A² of `values` against the normal distribution with
    the sample's mean and standard deviation (divisor n - 1); None when n < 2 or the values are all equal."""
    from scipy.special import log_ndtr, ndtr

    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n < 2 or not np.ptp(x) > 0:
        return None, None, None
    z = (x - x.mean()) / x.std(ddof=1)
    u = ndtr(z)
    i = np.arange(1, n + 1)
    d = float(max(np.max(i / n - u), np.max(u - (i - 1) / n)))
    w2 = float(np.sum((u - (2 * i - 1) / (2 * n)) ** 2) + 1 / (12 * n))
    log_u, log_1mu = log_ndtr(z), log_ndtr(-z)
    a2 = float(-n - np.sum((2 * i - 1) * (log_u + log_1mu[::-1])) / n)
    return d, w2, a2


def ks_p(d: float | None, n: int) -> tuple[str, float | None]:
    if d is None:
        return "", None
    dm = d * (math.sqrt(n) - 0.01 + 0.85 / math.sqrt(n))
    if dm < KS_POINTS[0][0]:
        return ">", KS_POINTS[0][1]
    if dm > KS_POINTS[-1][0]:
        return "<", KS_POINTS[-1][1]
    for (x0, p0), (x1, p1) in zip(KS_POINTS, KS_POINTS[1:]):
        if x0 <= dm <= x1:
            t = (dm - x0) / (x1 - x0)
            return "", math.exp(math.log(p0) + t * (math.log(p1) - math.log(p0)))
    return "", None


def cvm_p(w2: float | None, n: int) -> tuple[str, float | None]:
    if w2 is None:
        return "", None
    w = w2 * (1 + 0.5 / n)
    if w < 0.0275:
        p = 1 - math.exp(-13.953 + 775.5 * w - 12542.61 * w * w)
    elif w < 0.051:
        p = 1 - math.exp(-5.903 + 179.546 * w - 1515.29 * w * w)
    elif w < 0.092:
        p = math.exp(0.886 - 31.62 * w + 10.897 * w * w)
    else:
        p = math.exp(1.111 - 34.242 * w + 12.832 * w * w)
    return _bounded(p)


def ad_p(a2: float | None, n: int) -> tuple[str, float | None]:
    if a2 is None:
        return "", None
    a = a2 * (1 + 0.75 / n + 2.25 / (n * n))
    if a < 0.2:
        p = 1 - math.exp(-13.436 + 101.14 * a - 223.73 * a * a)
    elif a < 0.34:
        p = 1 - math.exp(-8.318 + 42.796 * a - 59.938 * a * a)
    elif a < 0.6:
        p = math.exp(0.9177 - 4.279 * a - 1.38 * a * a)
    else:
        p = math.exp(1.2937 - 5.709 * a + 0.0186 * a * a)
    return _bounded(p)


def _bounded(p: float) -> tuple[str, float]:
    """SAS shows the Cramer-von Mises and Anderson-Darling p-values within 0.005 … 0.25."""
    if p > 0.25:
        return ">", 0.25
    if p < 0.005:
        return "<", 0.005
    return "", p


# ------------------------------------------------------------------------------------------ values
def _num(v: Any) -> float | None:
    if v is None:
        return None
    v = float(v)
    return None if math.isnan(v) else v


def _text(v: Any) -> str:
    from statgrid.sas.odstable import cell
    return "." if _num(v) is None else cell(float(v), "best12")
