"""PROC LOGISTIC with a STRATA statement: conditional logistic regression (SAS/STAT LOGISTIC, "Conditional
Logistic Regression"; matched case-control studies). Within each stratum the likelihood is conditioned on the
number of events m: the probability that exactly the observed events occurred among all subsets of size m,

    L_s(β) = exp(Σ_{events} x_i'β) / Σ_{|S| = m} exp(Σ_{i∈S} x_i'β),

and its denominator, gradient (the conditional mean of Σ_S x) and information (its covariance) come from one pass
over the stratum's rows (the recurrence of the elementary symmetric functions, carried with their first and
second moments). No intercept (it cancels). Strata whose rows all have the same response carry no information
and are left out, as SAS does. Newton-Raphson from β = 0 (SAS's default technique for the conditional model).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import design as _design
from statgrid.procs._base import ResultTable


def _stratum(X: np.ndarray, eta: np.ndarray, m: int) -> tuple[float, np.ndarray, np.ndarray]:
    """(log of the denominator, conditional mean of Σ_S x, its covariance) for subsets of size m."""
    p = X.shape[1]
    shift = float(eta.max())
    r = np.exp(eta - shift)
    B = np.zeros(m + 1)
    G = np.zeros((m + 1, p))
    H = np.zeros((m + 1, p, p))
    B[0] = 1.0
    for j in range(len(r)):
        x = X[j]
        top = min(m, j + 1)
        for k in range(top, 0, -1):            # k descending: B[k - 1] is still the value before row j
            H[k] += r[j] * (H[k - 1] + np.outer(x, G[k - 1]) + np.outer(G[k - 1], x) + np.outer(x, x) * B[k - 1])
            G[k] += r[j] * (G[k - 1] + x * B[k - 1])
            B[k] += r[j] * B[k - 1]
    mean = G[m] / B[m]
    return math.log(B[m]) + m * shift, mean, H[m] / B[m] - np.outer(mean, mean)


def _evaluate(strata, beta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(log conditional likelihood, gradient, information) at beta."""
    p = len(beta)
    ll, grad, info = 0.0, np.zeros(p), np.zeros((p, p))
    for X, y in strata:
        m = int(y.sum())
        eta = X @ beta
        log_den, mean, cov = _stratum(X, eta, m)
        ll += float(eta[y == 1].sum()) - log_den
        grad += X[y == 1].sum(axis=0) - mean
        info += cov
    return ll, grad, info


def fit(strata, p: int, maxiter: int = 25) -> tuple[np.ndarray, float, np.ndarray, int]:
    """Newton-Raphson with step halving: (β̂, log likelihood, information at β̂, iterations)."""
    beta = np.zeros(p)
    ll, grad, info = _evaluate(strata, beta)
    for it in range(1, maxiter + 1):
        step = np.linalg.lstsq(info, grad, rcond=None)[0]
        for _ in range(30):
            new = beta + step
            ll_new, g_new, i_new = _evaluate(strata, new)
            if ll_new >= ll - 1e-12:
                break
            step /= 2
        converged = abs(ll_new - ll) < 1e-10 * (abs(ll) + 1e-8) and np.max(np.abs(step)) < 1e-8
        beta, ll, grad, info = new, ll_new, g_new, i_new
        if converged or np.max(np.abs(grad)) < 1e-10:
            return beta, ll, info, it
    raise StatgridError(f"the conditional logistic fit did not converge within MAXITER={maxiter}; raise MAXITER=.")


def conditional_logistic(s, data: str, model: str, strata: Sequence[str], class_=None, param: str = "effect",
                         event=None, descending: bool = False, ref: dict | None = None,
                         maxiter: int = 25) -> ResultTable:
    """Conditional logistic regression of 'y = effects' within the `strata` (their value combinations). Returns
    the estimates (Parameter, DF, Estimate, StdErr, WaldChiSq, ProbChiSq) with stats: n, n_missing, event, levels,
    strata_summary [[events, nonevents, number of strata, frequency]], informative (strata used), fit
    [[criterion, without, with]], global [[test, chi-square, DF, p]], odds_ratios [[effect, OR, lower, upper]]."""
    from scipy.stats import chi2, norm
    src = s.dataset(data)
    names_all = [c for c, _ in s.columns(src.scan_sql())]
    (yname,), effects = _design.parse_model(model, names_all, str(src), many_responses=False)
    if not effects:
        raise StatgridError("a conditional logistic model (STRATA) needs at least one effect.")
    # coded as beside an intercept (the strata absorb it), whose column is then dropped
    design, sql, _, n_missing = _design.prepare(s, src, effects, [], class_, raw=[yname, *strata], intercept=True,
                                                ref=ref)
    table = s.fetch_arrow(sql)
    levels = sorted(set(table.column(yname).to_pylist()))
    if len(levels) != 2:
        raise StatgridError(f"response {yname!r} must have exactly two levels; found {len(levels)}.")
    if event is not None:
        match = [v for v in levels if str(v).strip() == str(event).strip() or _same(v, event)]
        if not match:
            raise StatgridError(f"EVENT={event!r} is not a level of {yname!r}.")
        ev = match[0]
    else:
        ev = levels[-1] if descending else levels[0]
    T, names, _ = design.coding("ref" if param == "glm" else param)     # GLM: its non-aliased columns are REF's
    X = (design.matrix(table) @ T)[:, 1:]
    names = names[1:]
    y = np.array([1.0 if v == ev else 0.0 for v in table.column(yname).to_pylist()])
    keys = list(zip(*(table.column(c).to_pylist() for c in strata)))
    groups: dict = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    summary: dict[tuple[int, int], list[int]] = {}
    used = []
    for k, idx in groups.items():
        m = int(y[idx].sum())
        pattern = summary.setdefault((m, len(idx) - m), [0, 0])
        pattern[0] += 1
        pattern[1] += len(idx)
        if 0 < m < len(idx):
            used.append((X[idx], y[idx]))
    if not used:
        raise StatgridError("no stratum has both response levels: the conditional likelihood has no information.")
    p = X.shape[1]
    ll0, g0, i0 = _evaluate(used, np.zeros(p))
    beta, ll, info, iters = fit(used, p, maxiter)
    cov = np.linalg.pinv(info)
    se = np.sqrt(np.diag(cov))
    rows = []
    for j, nm in enumerate(names):
        chi = (beta[j] / se[j]) ** 2 if se[j] > 0 else float("nan")
        rows.append([nm, 1, float(beta[j]), float(se[j]), chi, float(chi2.sf(chi, 1))])
    n_used = int(sum(len(yy) for _, yy in used))
    lr = 2 * (ll - ll0)
    score = float(g0 @ np.linalg.pinv(i0) @ g0)
    wald = float(beta @ info @ beta)
    z = norm.ppf(0.975)
    odds = []
    for nm, b, e in zip(names, beta, se):
        var = nm.split(" ")[0]
        if " " in nm and param != "ref":
            continue                         # EFFECT/GLM coding: a level's parameter is no odds ratio by itself
        label = f"{nm} vs {_design.level_text(design.levels[var][-1])}" if " " in nm else nm
        odds.append([label, math.exp(b), math.exp(b - z * e), math.exp(b + z * e)])
    result = ResultTable(["Parameter", "DF", "Estimate", "StdErr", "WaldChiSq", "ProbChiSq"], rows)
    result.stats = {"conditional": True, "n": len(y), "n_missing": n_missing, "event": ev, "levels": levels,
                    "events": int(y.sum()), "strata_summary": [[m, nm_, *v] for (m, nm_), v in sorted(summary.items())],
                    "informative": len(used), "n_informative": n_used, "iterations": iters,
                    "fit": [["-2 Log L", -2 * ll0, -2 * ll], ["AIC", -2 * ll0, -2 * ll + 2 * p],
                            ["SC", -2 * ll0, -2 * ll + p * math.log(n_used)]],
                    "global": [["Likelihood Ratio", lr, p, float(chi2.sf(lr, p))],
                               ["Score", score, p, float(chi2.sf(score, p))],
                               ["Wald", wald, p, float(chi2.sf(wald, p))]],
                    "odds_ratios": odds, "class_levels": {c: list(design.levels[c]) for c in design.classes},
                    "param": param}
    return result


def _same(v, event) -> bool:
    try:
        return float(v) == float(event)
    except (TypeError, ValueError):
        return False

