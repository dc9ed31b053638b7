"""PROC CORR's ALPHA option and PARTIAL statement (Base SAS Procedures: CORR), on the rows with every VAR, WITH and
PARTIAL value present (SAS drops the others for both):

- ALPHA: Cronbach's coefficient alpha of the VAR variables, raw, α = k/(k−1)·(1 − Σ var_i / var(Σ x_i)), and
  standardized, α = k·r̄/(1 + (k−1)·r̄) with r̄ the mean correlation; then, for each variable deleted, its
  correlation with the total of the others and the alpha of the others (raw, and on standardized values).
  Tables CronbachAlpha ("Cronbach Coefficient Alpha": Variables, Alpha) and CronbachAlphaDel ("Cronbach
  Coefficient Alpha with Deleted Variable": Variable, RawCorr, RawAlpha, StdCorr, StdAlpha).
- PARTIAL vars: Pearson partial correlations — of the residuals of the VAR (and WITH) variables on the PARTIAL
  variables and an intercept — with p-values of t = r·√(df/(1 − r²)), df = n − 2 − (number of PARTIAL
  variables); table PearsonPartialCorr ("Pearson Partial Correlation Coefficients", "Prob > |r| under H0: Partial
  Rho=0"). The partial variances and standard deviations (divisor n − 1 − partials) join Simple Statistics.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from statgrid.libraries import sql_ident
from statgrid.procs.corr import PairStat
from statgrid.sas.ods import OdsColumn as Col, OdsTable
from statgrid.sas.procs.stattext import dnum, text_table

PARTIAL_KIND = ("PearsonPartialCorr", "Pearson Partial Correlation Coefficients",
                "Prob > |r| under H0: Partial Rho=0")


def complete_rows(program: Any, base: str, names: Sequence[str]) -> np.ndarray:
    """The rows of `base` with every one of `names` present, as an n × len(names) array."""
    cols = ", ".join(f"CAST({sql_ident(n)} AS DOUBLE)" for n in names)
    where = " AND ".join(f"{sql_ident(n)} IS NOT NULL" for n in names)
    got = program.session.con.sql(f"SELECT {cols} FROM ({base}) WHERE {where}").fetchall()
    return np.array(got, dtype=float).reshape(len(got), len(names))


def _alpha_raw(x: np.ndarray) -> float | None:
    k = x.shape[1]
    total = x.sum(axis=1).var(ddof=1)
    if k < 2 or total <= 0:
        return None
    return k / (k - 1) * (1 - x.var(axis=0, ddof=1).sum() / total)


def _alpha_std(x: np.ndarray) -> float | None:
    k = x.shape[1]
    if k < 2:
        return None
    r = np.corrcoef(x, rowvar=False)
    mean_r = (r.sum() - k) / (k * (k - 1))
    return k * mean_r / (1 + (k - 1) * mean_r)


def _corr(a: np.ndarray, b: np.ndarray) -> float | None:
    da, db = a - a.mean(), b - b.mean()
    den = math.sqrt(float(da @ da) * float(db @ db))
    return float(da @ db) / den if den > 0 else None


def cronbach(x: np.ndarray, names: Sequence[str]) -> tuple[list[list], list[list]]:
    """(CronbachAlpha rows [Variables, Alpha], CronbachAlphaDel rows [Variable, RawCorr, RawAlpha, StdCorr,
    StdAlpha]) of the complete rows x (n × k)."""
    z = (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)
    head = [["Raw", _alpha_raw(x)], ["Standardized", _alpha_std(x)]]
    deleted = []
    for j, name in enumerate(names):
        rest = [i for i in range(len(names)) if i != j]
        deleted.append([name, _corr(x[:, j], x[:, rest].sum(axis=1)), _alpha_raw(x[:, rest]),
                        _corr(z[:, j], z[:, rest].sum(axis=1)), _alpha_std(x[:, rest])])
    return head, deleted


def alpha_tables(listing, head: list[list], deleted: list[list], by) -> None:
    """The two Cronbach tables to the listing and ODS, in SAS's layout."""
    t1 = OdsTable("CronbachAlpha", "Cronbach Coefficient Alpha", [Col("Variables", type="char"),
                                                                    Col("Alpha", fmt="d6")], head, "Corr",
                  "Corr.CronbachAlpha", by=by)
    text = text_table(["Variables", "Alpha"], [[v, dnum(a, 6)] for v, a in head], title="Cronbach Coefficient Alpha")
    listing.table(t1, text)
    t2 = OdsTable("CronbachAlphaDel", "Cronbach Coefficient Alpha with Deleted Variable", [
        Col("Variable", type="char"), Col("RawCorr", "Raw Correlation with Total", fmt="d6"),
        Col("RawAlpha", "Raw Alpha", fmt="d6"), Col("StdCorr", "Standardized Correlation with Total", fmt="d6"),
        Col("StdAlpha", "Standardized Alpha", fmt="d6")], deleted, "Corr", "Corr.CronbachAlphaDel", by=by)
    heads = ["Deleted Variable", "Correlation with Total", "Alpha", "Correlation with Total", "Alpha"]
    body = text_table(heads, [[r[0], *(dnum(v, 6) for v in r[1:])] for r in deleted])
    ends, at = [], 0                                 # where each column ends in the heading line
    for h in heads:
        at = body[0].index(h, at) + len(h)
        ends.append(at)
    span = ""
    for first, last, label in ((1, 2, "Raw Variables"), (3, 4, "Standardized Variables")):
        left = ends[first - 1] + 2
        span = span.ljust(left) + label.center(ends[last] - left).rstrip()
    width = max(len(x) for x in body)
    title = "Cronbach Coefficient Alpha with Deleted Variable"
    listing.table(t2, [title.center(width).rstrip(), "", span, *body])


def partial_cells(x: np.ndarray, z: np.ndarray, rows_v: Sequence[str], names: Sequence[str],
                  order: Sequence[str]) -> tuple[dict, dict]:
    """({(a, b): PairStat} of the partial correlations, {variable: (partial variance, partial std)}): x holds the
    columns `order` (VAR and WITH), z the PARTIAL variables, both over the complete rows."""
    n = x.shape[0]
    design = np.column_stack([np.ones(n), z])
    coef, *_ = np.linalg.lstsq(design, x, rcond=None)
    res = x - design @ coef
    rank = int(np.linalg.matrix_rank(design))
    df = n - rank                                   # the residuals' degrees of freedom: n − 1 − partials
    cov = res.T @ res / (df if df > 0 else float("nan"))
    pos = {v: i for i, v in enumerate(order)}
    from scipy.stats import t as tdist
    cells = {}
    for a in rows_v:
        for b in names:
            i, j = pos[a], pos[b]
            den = math.sqrt(cov[i, i] * cov[j, j])
            r = max(-1.0, min(1.0, cov[i, j] / den)) if den > 0 else None
            p = None
            if a != b and r is not None and df - 1 > 0:
                p = 0.0 if abs(r) >= 1 else float(2 * tdist.sf(abs(r) * math.sqrt((df - 1) / (1 - r * r)), df - 1))
            cells[(a, b)] = PairStat(r, p, n, float(cov[i, j]))
    variances = {v: (float(cov[pos[v], pos[v]]), math.sqrt(cov[pos[v], pos[v]])) for v in order}
    return cells, variances
