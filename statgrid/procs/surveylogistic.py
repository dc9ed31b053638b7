"""PROC SURVEYLOGISTIC: binary logistic regression for survey data, Taylor-series (linearization) variance.

As SAS documents it (SURVEYLOGISTIC, "Variance Estimation" and "Degrees of Freedom"): the estimates
maximize the weighted (pseudo-) likelihood Σ w·[y log π + (1 − y) log(1 − π)] (Fisher scoring, statgrid's
IRLS); their covariance is Q⁻¹ G Q⁻¹ with Q = Σ w π(1 − π) x x' and
  G = (n − 1)/(n − p) · Σ_h n_h (1 − f_h)/(n_h − 1) · Σ_i (e_hi − ē_h)(e_hi − ē_h)',
e_hi the sum over cluster i of stratum h of w (y − π) x, ē_h their mean over the n_h clusters of the
stratum (each observation is its own cluster without CLUSTER), n the number of observations, p the
number of parameters ((n − 1)/(n − p) is VADJUST=DF, SAS's default; vadjust='none' drops it) and f_h
the sampling fraction (rate=, or n_h/total= — one number for every stratum; 0 by default). A stratum
with a single cluster adds nothing to G (a NOTE says so). The parameter tests are t tests with the
design degrees of freedom f = #clusters − #strata (#observations − #strata without CLUSTER), or df=
(a number, or 'infinity' for normal tests). The probability modelled is that of the first ordered
response level unless event= or descending=True, as SAS; CLASS variables are coded PARAM=EFFECT by
default (or 'ref'). Observations with a missing or nonpositive weight, a missing STRATA or CLUSTER
value or a missing model variable are not used.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import _irls
from statgrid.procs import design as _design
from statgrid.procs._base import ResultTable, as_list, check_columns, procedure, qi
from statgrid.procs.logistic import _literal, _same_number


@procedure("PROCEDURE SURVEYLOGISTIC")
def surveylogistic(s, data: str, model: str, class_: str | Sequence[str] | None = None, param: str = "effect",
                   event=None, descending: bool = False, weight: str | None = None,
                   strata: str | Sequence[str] | None = None, cluster: str | Sequence[str] | None = None,
                   df=None, vadjust: str = "df", rate: float | None = None, total: float | None = None,
                   maxiter: int = 25, noint: bool = False, print: bool = True,
                   data_label: str | None = None) -> ResultTable:
    """Survey logistic regression of 'y = effects'. Returns the estimates (Parameter, Estimate, StdErr,
    tValue, Probt); `stats` holds cov, df, design_df, n, strata, clusters, sum_weights, fit (AIC, SC,
    −2 Log L), event and levels. data_label: the data set's name in the listing (default: `data`'s own)."""
    src = s.dataset(data)
    names_all = [c for c, _ in s.columns(src.scan_sql())]
    (yname,), effects = _design.parse_model(model, names_all, str(src), many_responses=False)
    wcol = check_columns([weight], names_all, "WEIGHT", str(src))[0] if weight else None
    scols = check_columns(as_list(strata), names_all, "STRATA", str(src))
    ccols = check_columns(as_list(cluster), names_all, "CLUSTER", str(src))
    _check_options(param, vadjust, rate, total)
    design, sql, _, n_missing = _design.prepare(s, src, effects, [], class_, extra=[wcol] if wcol else [],
                                                raw=list(dict.fromkeys([yname, *scols, *ccols])),
                                                intercept=not noint)
    n_read = n_missing + int(s.con.sql(f"SELECT count(*) FROM ({sql})").fetchall()[0][0])
    if wcol:
        sql = f"SELECT * FROM ({sql}) WHERE {qi(wcol)} > 0"
    ev, levels = _event(s, sql, yname, event, descending)
    T, cnames, _ = design.coding(param)
    table = s.fetch_arrow(f"SELECT *, CAST({qi(yname)} = {_literal(ev)} AS DOUBLE) AS __event FROM ({sql})")
    n = table.num_rows
    M = design.matrix(table, ["__event", *([wcol] if wcol else [])])
    p_all = design.width
    X = M[:, :p_all] @ T
    y = M[:, p_all]
    w = M[:, p_all + 1] if wcol else np.ones(n)
    fit = _fit(s, X, y, w, maxiter)
    k = len(fit.kept)
    Xk = X[:, fit.kept]
    mu = _irls.LINKS["logit"].inv(Xk @ fit.beta[fit.kept])
    scores = (w * (y - mu))[:, None] * Xk
    st_key, cl_key = _keys(table, scols), _keys(table, ccols) if ccols else list(range(n))
    G, n_strata, n_clusters, lonely = taylor_meat(scores, st_key, cl_key, rate, total)
    if vadjust == "df":
        G *= (n - 1) / (n - k)
    bread = fit.rinv @ fit.rinv.T
    cov = bread @ G @ bread
    design_df = (n_clusters if ccols else n) - n_strata
    dfv = _df_value(df, design_df)
    result = _table(cnames, fit, cov, dfv)
    result.stats.update({"cov": cov, "df": dfv, "design_df": design_df, "n": n, "n_read": n_read,
                         "strata": n_strata, "clusters": n_clusters if ccols else None, "sum_weights": float(w.sum()),
                         "fit": _fit_stats(y, w, mu, k, n), "event": ev, "levels": levels,
                         "response_profile": _profile(y, w, levels, ev), "iterations": fit.iterations,
                         "lonely_strata": lonely})
    if lonely:
        s.log.note(f"{lonely} stratum(s) with a single cluster contribute nothing to the variance estimate.")
    if print:
        from statgrid.procs import surveylogistic_listing
        s.log.listing(surveylogistic_listing.listing(result, design, yname, data_label or str(src), wcol, scols, ccols,
                                                     vadjust))
    return result


def _check_options(param: str, vadjust: str, rate, total) -> None:
    if param not in ("effect", "ref"):
        raise StatgridError(f"PARAM={param} is not supported by statgrid's SURVEYLOGISTIC (EFFECT or REF).")
    if vadjust not in ("df", "none"):
        raise StatgridError(f"VADJUST={vadjust} is not one of DF, NONE.")
    if rate is not None and total is not None:
        raise StatgridError("give RATE= or TOTAL=, not both.")
    if rate is not None and not 0 <= rate < 1:
        raise StatgridError(f"RATE={rate} is not a sampling rate in [0, 1).")
    if total is not None and not total > 0:
        raise StatgridError(f"TOTAL={total} is not a positive population total.")


def _event(s, sql: str, yname: str, event, descending: bool):
    levels = [r[0] for r in s.con.sql(f"SELECT DISTINCT {qi(yname)} FROM ({sql}) ORDER BY 1 LIMIT 21").fetchall()]
    if len(levels) != 2:
        shown = ", ".join(repr(v) for v in levels[:20]) + (" …" if len(levels) > 20 else "")
        raise StatgridError(f"response {yname!r} of SURVEYLOGISTIC must have exactly two levels (binary logit); "
                            f"found {len(levels)}: {shown or 'none (no complete rows)'}.")
    if event is None:
        return (levels[-1] if descending else levels[0]), levels
    match = [v for v in levels if str(v) == str(event) or _same_number(v, event)]
    if not match:
        raise StatgridError(f"EVENT={event!r} is not a level of {yname!r}; its levels are "
                            f"{', '.join(repr(v) for v in levels)}.")
    return match[0], levels


def _fit(s, X, y, w, maxiter: int) -> _irls.GLMFit:
    rows = _irls.Rows(lambda: iter([(X, y, w, np.zeros(y.size))]), y.size, X.shape[1], s.options.memsize_bytes)
    fam = _irls.family("binomial")
    return _irls.irls(rows, X.shape[1], fam, _irls.link("logit", fam), maxiter=maxiter, tol=1e-12,
                      what="survey logistic model")


def _keys(table, cols: list[str]) -> list:
    if not cols:
        return [()] * table.num_rows
    return list(zip(*(table.column(c).to_pylist() for c in cols)))


def taylor_meat(scores: np.ndarray, strata: list, clusters: list, rate=None, total=None):
    """G without the (n − 1)/(n − p) factor: Σ_h n_h(1 − f_h)/(n_h − 1) Σ_i (e_hi − ē_h)(e_hi − ē_h)'.
    Returns (G, number of strata, number of clusters, strata with a single cluster)."""
    k = scores.shape[1]
    psu: dict[tuple, int] = {}
    st_of: list = []
    sums: list[np.ndarray] = []
    for i, (h, c) in enumerate(zip(strata, clusters)):
        j = psu.setdefault((h, c), len(psu))
        if j == len(sums):
            sums.append(np.zeros(k))
            st_of.append(h)
        sums[j] += scores[i]
    by_stratum: dict = {}
    for h, e in zip(st_of, sums):
        by_stratum.setdefault(h, []).append(e)
    G = np.zeros((k, k))
    lonely = 0
    for h, es in by_stratum.items():
        nh = len(es)
        if nh < 2:
            lonely += 1
            continue
        f = rate if rate is not None else (nh / total if total is not None else 0.0)
        E = np.array(es)
        E -= E.mean(axis=0)
        G += nh * (1 - f) / (nh - 1) * (E.T @ E)
    return G, len(by_stratum), len(psu), lonely


def _df_value(df, design_df: int) -> float:
    if df is None or str(df).lower() == "design":
        return float(design_df)
    if str(df).lower() in ("infinity", "inf", "none"):
        return math.inf
    try:
        v = float(df)
    except (TypeError, ValueError):
        raise StatgridError(f"DF={df} is not a number, DESIGN or INFINITY.") from None
    if not v > 0:
        raise StatgridError(f"DF={df} must be positive.")
    return v


def _table(names: list[str], fit: _irls.GLMFit, cov: np.ndarray, dfv: float) -> ResultTable:
    from scipy import stats
    se = np.sqrt(np.diag(cov))
    where = {j: i for i, j in enumerate(fit.kept)}
    rows = []
    for j, nm in enumerate(names):
        if j not in where:
            rows.append([nm, 0.0, None, None, None])
            continue
        b, e = float(fit.beta[j]), float(se[where[j]])
        t = b / e if e > 0 else float("nan")
        pv = 2 * (stats.norm.sf(abs(t)) if math.isinf(dfv) else stats.t.sf(abs(t), dfv))
        rows.append([nm, b, e, t, float(pv)])
    return ResultTable(["Parameter", "Estimate", "StdErr", "tValue", "Probt"], rows)


def _fit_stats(y, w, mu, k: int, n: int) -> list[list]:
    def m2ll(m):
        return float(-2 * np.sum(w * (y * np.log(m) + (1 - y) * np.log1p(-m))))
    pbar = float(np.sum(w * y) / np.sum(w))
    full, null = m2ll(np.clip(mu, 1e-300, 1 - 1e-16)), m2ll(np.full(y.size, pbar))
    return [["AIC", null + 2, full + 2 * k], ["SC", null + math.log(n), full + k * math.log(n)],
            ["-2 Log L", null, full]]


def _profile(y, w, levels, ev) -> list[list]:
    out = []
    for i, v in enumerate(levels, 1):
        mask = (y == 1) if v == ev else (y == 0)
        out.append([i, v, int(mask.sum()), float(w[mask].sum())])
    return out
