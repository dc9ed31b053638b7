"""PROC UNIVARIATE: moments, quantiles, extreme observations and tests for normality, per
variable and BY group.

Moments use SAS's formulas (VARDEF=DF): N, mean, std, skewness and kurtosis with their bias
corrections, USS, CSS, CV, std error of the mean; the engine finds the groups, missing counts and
quantiles, and each group's values come to numpy once for moments and extremes. Quantiles follow
SAS's PCTLDEF= definition 1–5 (qntldef=, default 5: the empirical distribution function with
averaging, numpy's 'averaged_inverted_cdf'), computed as in MEANS (procs/_quantile.py).
Normality (normal=True): Shapiro–Wilk W with its p-value (n ≤ 5000, as SAS), Anderson–Darling
A² with its p-value (interpolated in Stephens' tables for an estimated mean and std, as SAS
does), and the Kolmogorov–Smirnov D (statistic only: its p-value needs Lilliefors' tables,
which this module does not carry).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import (ResultTable, as_list, check_columns, dataset_types, is_numeric, procedure, qi,
                                  render_table)
from statgrid.procs._quantile import DEFAULT_QNTLDEF, check_qntldef, quantiles_sql

QUANTILES = [(100, "100% Max"), (99, "99%"), (95, "95%"), (90, "90%"), (75, "75% Q3"), (50, "50% Median"),
             (25, "25% Q1"), (10, "10%"), (5, "5%"), (1, "1%"), (0, "0% Min")]


def _moments(x: np.ndarray) -> tuple:
    """n, mean, std, skewness, kurtosis, USS, CSS with SAS's VARDEF=DF formulas; a statistic
    the sample is too small for (std n < 2, skewness n < 3, kurtosis n < 4) is None."""
    n = x.size
    if n == 0:
        return 0, None, None, None, None, None, None
    mean = float(x.mean())
    d = x - mean
    css = float(d @ d)
    uss = float(x @ x)
    std = (css / (n - 1)) ** 0.5 if n > 1 else None
    skew = kurt = None
    if std:
        z = d / std
        if n > 2:
            skew = float(n / ((n - 1) * (n - 2)) * np.sum(z ** 3))
        if n > 3:
            kurt = float(n * (n + 1) / ((n - 1) * (n - 2) * (n - 3)) * np.sum(z ** 4)
                         - 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    return n, mean, std, skew, kurt, uss, css


def normality(x: np.ndarray) -> dict:
    from scipy import stats

    out = {}
    n = x.size
    if 3 <= n <= 5000:
        w, p = stats.shapiro(x)
        out.update(shapiro_w=float(w), shapiro_p=float(p))
    if n >= 2 and x.std(ddof=1) > 0:
        z = np.sort((x - x.mean()) / x.std(ddof=1))
        out["ks_d"] = float(stats.kstest(z, "norm").statistic)
        ad = stats.anderson(x, "norm", method="interpolate")      # Stephens' tables, estimated mean/std
        out.update(ad_a2=float(ad.statistic), ad_p=float(ad.pvalue))
    return out


@procedure("PROCEDURE UNIVARIATE")
def univariate(s, data: str, var: str | Sequence[str] | None = None, by: str | Sequence[str] | None = None,
               normal: bool = False, nextrobs: int = 5, print: bool = True,
               qntldef: int = DEFAULT_QNTLDEF) -> ResultTable:
    """One row per BY group and variable: n, nmiss, mean, std, skewness, kurtosis, uss, css, cv,
    stderr, the quantiles of QUANTILES (q100 … q0), and with normal=True shapiro_w, shapiro_p,
    ks_d, ad_a2, ad_p. `stats['extremes']` lists the nextrobs lowest and highest values with their
    observation numbers (1-based, input order). qntldef: SAS's quantile definition 1–5 (PCTLDEF=,
    default 5; see procs/_quantile.py)."""
    qntldef = check_qntldef(qntldef)
    src, types = dataset_types(s, data)
    names = list(types)
    groups = check_columns(as_list(by), names, "BY", str(src))
    variables = check_columns(as_list(var), names, "VAR", str(src)) if var else \
        [c for c, t in types.items() if is_numeric(t) and c not in groups]
    bad = [v for v in variables if not is_numeric(types[v])]
    if bad or not variables:
        raise StatgridError(f"VAR variable {bad[0]!r} in {src} is {types[bad[0]]}, not numeric." if bad else
                            f"{src} has no numeric variables; name them with var=[...].")
    # per BY group: the missing count and the list of quantiles of each variable
    gsel = ", ".join(qi(g) for g in groups)
    percents = [p for p, _ in QUANTILES]
    aggs = [agg for v in variables for agg in (f"count(*) - count({qi(v)})",
                                               quantiles_sql(f"CAST({qi(v)} AS DOUBLE)", percents, qntldef))]
    group_sql = f" GROUP BY {gsel} ORDER BY {gsel}" if groups else ""
    moments = s.con.sql(f"SELECT {gsel + ', ' if groups else ''}{', '.join(aggs)} FROM {src.scan_sql()}"
                        f"{group_sql}").fetchall()
    rows, extremes = [], []
    columns = [*groups, "variable", "n", "nmiss", "mean", "std", "skewness", "kurtosis", "uss", "css", "cv",
               "stderr", *(f"q{p}" for p, _ in QUANTILES)]
    if normal:
        columns += ["shapiro_w", "shapiro_p", "ks_d", "ad_a2", "ad_p"]
    numbered = src.scan_sql(row_numbers=True)
    for mrow in moments:
        key = list(mrow[:len(groups)])
        cond = " AND ".join(f"{qi(g)} IS NOT DISTINCT FROM ?" for g in groups) or "TRUE"
        for i, v in enumerate(variables):
            nmiss, qs = mrow[len(groups) + 2 * i], mrow[len(groups) + 2 * i + 1]
            data_rows = s.con.execute(f"SELECT CAST({qi(v)} AS DOUBLE), file_row_number FROM {numbered} "
                                      f"WHERE {cond} AND {qi(v)} IS NOT NULL", key).fetchall()
            vals = np.array([r[0] for r in data_rows], dtype=float)
            obs = np.array([r[1] + 1 for r in data_rows], dtype=np.int64)
            n, mean, std, skew, kurt, uss, css = _moments(vals)
            row = [*key, v, n, nmiss, mean, std, skew, kurt, uss, css,
                   100 * std / mean if std is not None and mean else None,
                   std / n ** 0.5 if std is not None and n else None, *qs]
            if normal:
                t = normality(vals)
                row += [t.get(k) for k in ("shapiro_w", "shapiro_p", "ks_d", "ad_a2", "ad_p")]
            rows.append(row)
            order = np.lexsort((obs, vals))
            extremes.append({"by": dict(zip(groups, key)), "variable": v,
                             "lowest": [(float(vals[j]), int(obs[j])) for j in order[:nextrobs]],
                             "highest": [(float(vals[j]), int(obs[j])) for j in order[::-1][:nextrobs][::-1]]})
    result = ResultTable(columns, rows, stats={"extremes": extremes, "qntldef": qntldef})
    if print:
        s.log.listing(_listing(result, groups))
    return result


def _listing(t: ResultTable, groups: list[str]) -> str:
    parts = ["The UNIVARIATE Procedure"]
    for rec, ext in zip(t.to_dicts(), t.stats["extremes"]):
        head = f"Variable: {rec['variable']}" + ("  " + " ".join(f"{g}={rec[g]}" for g in groups) if groups else "")
        moments = render_table(["N", "Mean", "Std Deviation", "Skewness", "Kurtosis", "Uncorrected SS",
                                "Corrected SS", "Coeff Variation", "Std Error Mean"],
                               [[rec[k] for k in ("n", "mean", "std", "skewness", "kurtosis", "uss", "css", "cv",
                                                  "stderr")]], title="Moments")
        quant = render_table(["Level", "Quantile"], [[label, rec[f"q{p}"]] for p, label in QUANTILES],
                             title=f"Quantiles (Definition {t.stats['qntldef']})")
        ex = render_table(["Lowest", "Obs", "Highest", "Obs"],
                          [[lo[0], lo[1], hi[0], hi[1]] for lo, hi in zip(ext["lowest"], ext["highest"])],
                          title="Extreme Observations")
        parts += [head, moments, quant, ex]
        if "shapiro_w" in rec:
            parts.append(render_table(["Test", "Statistic", "p Value"], [
                ["Shapiro-Wilk W", rec["shapiro_w"], rec["shapiro_p"]], ["Kolmogorov-Smirnov D", rec["ks_d"], None],
                ["Anderson-Darling A-Sq", rec["ad_a2"], rec["ad_p"]]], title="Tests for Normality"))
    return "\n".join(parts)
