"""PROC NLMIXED: nonlinear mixed models by maximum likelihood, with one normal random effect per subject
integrated out by adaptive Gauss–Hermite quadrature (SAS/STAT User's Guide, "The NLMIXED Procedure":
"Integral Approximations", "Optimization Algorithms").

The model is given as a function: loglik(data, params, u) → each observation's log likelihood log f(y | θ, u),
numpy arrays in and out (the SAS front end builds it from NLMIXED's programming statements and its MODEL
statement; see statgrid/sas/procs/nlmixed.py). With RANDOM u ~ N(m(θ), v(θ)) SUBJECT=s the likelihood of
subject i is the integral over u of exp(Σ_j log f(y_ij | θ, u)) φ(u; m, v). Adaptive quadrature, as SAS and
lme4 do it: h_i(u) = Σ_j log f + log φ(u; m, v) is maximised in u per subject (Newton steps, all subjects at
once; the derivatives are central differences in u), its curvature at the mode û_i gives σ̂_i = (−h_i″(û_i))^−½,
and with the Gauss–Hermite rule (z_k, w_k) of Q points for ∫e^(−z²/2)g(z)dz,

    log L_i = log σ̂_i + h_i(û_i) + log Σ_k w_k exp(h_i(û_i + σ̂_i z_k) − h_i(û_i) + z_k²/2).

Q = 1 is the Laplace approximation. Without QPOINTS= the number of points is chosen as SAS chooses it: the log
likelihood at the starting values with Q = 1, 2, 3, … points until two successive values differ by less than
QTOL = 1e-4 relative (at most 31 points).

The parameters are estimated by a quasi-Newton method (scipy's BFGS with central-difference gradients — SAS's
default TECHNIQUE=QUANEW is a dual BFGS), then polished by Newton steps on a central-difference Hessian, kept
only while the likelihood improves. A BOUNDS constraint turns the method into L-BFGS-B. A point where the
likelihood is not finite (a variance ≤ 0, a probability outside (0, 1)) counts as the worst value, so the line
search backs away from it. Standard errors are the square roots of the diagonal of the inverse Hessian of
−log L at the estimates; t tests and 95 % limits use DF = the number of subjects − 1 (SAS: subjects minus the
number of random effects), or the number of observations without RANDOM.

Fit Statistics: −2 Log Likelihood, AIC = −2ℓ + 2p, AICC = −2ℓ + 2pn/(n − p − 1), BIC = −2ℓ + p log n, p the
number of parameters and n the number of subjects (observations without RANDOM).
Observations with a missing value in a data variable the model uses are not used (the NOTE counts them).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import ResultTable, check_columns, dataset_types, is_numeric, procedure, qi

QTOL = 1e-4             # the adaptive choice of quadrature points (SAS's QTOL=)
QMAX = 31
MODE_TOL = 1e-10        # Newton steps for the random-effect modes stop below this (in units of the prior sd)
WORST = 1e300           # −log L at a point where it is not finite


@dataclass
class Random:
    """RANDOM name ~ NORMAL(mean(θ), variance(θ)) SUBJECT=subject."""
    name: str
    mean: Callable[[dict], float]
    variance: Callable[[dict], float]
    subject: str


@dataclass
class Data:
    cols: dict[str, np.ndarray]
    gidx: np.ndarray        # subject index of each observation (0 … g−1); zeros without RANDOM
    g: int
    n_read: int
    n_used: int
    max_per_subject: int


class Likelihood:
    """−log L(θ) for a parameter vector, with the random-effect modes kept between calls (a start only:
    each call converges them afresh)."""

    def __init__(self, names: list[str], loglik, data: Data, random: Random | None, q: int):
        self.names, self.loglik, self.data, self.random, self.q = names, loglik, data, random, q
        self.modes = np.zeros(data.g)
        self.evaluations = 0

    def params(self, theta) -> dict:
        return dict(zip(self.names, (float(x) for x in theta)))

    def obs(self, p: dict, u_obs) -> np.ndarray:
        self.evaluations += 1
        with np.errstate(all="ignore"):
            out = np.asarray(self.loglik(self.data.cols, p, u_obs), dtype=float)
        return np.broadcast_to(out, (self.data.n_used,))

    def h(self, p: dict, u: np.ndarray, m: float, v: float) -> np.ndarray:
        """h_i(u_i) per subject: the data's log likelihood plus the random effect's log density."""
        per_obs = self.obs(p, u[self.data.gidx])
        s = np.bincount(self.data.gidx, weights=per_obs, minlength=self.data.g)
        return s - (u - m) ** 2 / (2 * v) - 0.5 * math.log(2 * math.pi * v)

    def value(self, theta) -> float:
        p = self.params(theta)
        if self.random is None:
            ll = float(np.sum(self.obs(p, np.zeros(self.data.n_used))))
            return -ll if math.isfinite(ll) else WORST
        with np.errstate(all="ignore"):
            m, v = float(self.random.mean(p)), float(self.random.variance(p))
        if not (math.isfinite(m) and math.isfinite(v) and v > 0):
            return WORST
        ll = self.marginal(p, m, v, self.q)
        return -ll if math.isfinite(ll) else WORST

    def marginal(self, p: dict, m: float, v: float, q: int) -> float:
        u, sig = self.mode(p, m, v)
        if u is None:
            return -math.inf
        z, w = np.polynomial.hermite_e.hermegauss(q)
        h0 = self.h(p, u, m, v)
        terms = np.array([self.h(p, u + sig * zk, m, v) - h0 + zk * zk / 2 for zk in z])    # q × g
        top = terms.max(axis=0)
        log_sum = top + np.log(np.sum(w[:, None] * np.exp(terms - top), axis=0))
        return float(np.sum(np.log(sig) + h0 + log_sum))

    def mode(self, p: dict, m: float, v: float):
        """Each subject's mode û of h and σ̂ = (−h″(û))^−½ — Newton steps with step halving."""
        sd = math.sqrt(v)
        d = 1e-4 * sd
        u = np.where(np.isfinite(self.modes), self.modes, m)
        for _ in range(100):
            hm, h0, hp = self.h(p, u - d, m, v), self.h(p, u, m, v), self.h(p, u + d, m, v)
            g1, g2 = (hp - hm) / (2 * d), (hp - 2 * h0 + hm) / (d * d)
            if not np.all(np.isfinite(h0)):
                return None, None
            step = np.where(g2 < 0, -g1 / np.where(g2 < 0, g2, -1.0), np.sign(g1) * sd)
            step = np.clip(step, -3 * sd, 3 * sd)
            for _ in range(30):
                trial = u + step
                better = self.h(p, trial, m, v) >= h0 - 1e-12 * np.abs(h0)
                if better.all():
                    break
                step = np.where(better, step, step / 2)
            u = u + step
            if np.max(np.abs(step)) < MODE_TOL * sd:
                break
        hm, h0, hp = self.h(p, u - d, m, v), self.h(p, u, m, v), self.h(p, u + d, m, v)
        curv = -(hp - 2 * h0 + hm) / (d * d)
        if not np.all(np.isfinite(curv)) or np.any(curv <= 0):
            return None, None
        self.modes = u.copy()
        return u, 1 / np.sqrt(curv)


def _steps(theta: np.ndarray) -> np.ndarray:
    return 1e-4 * np.maximum(1.0, np.abs(theta))


def gradient(f, theta: np.ndarray) -> np.ndarray:
    hs = _steps(theta)
    g = np.empty_like(theta)
    for i, h in enumerate(hs):
        e = np.zeros_like(theta)
        e[i] = h
        g[i] = (f(theta + e) - f(theta - e)) / (2 * h)
    return g


def hessian(f, theta: np.ndarray) -> np.ndarray:
    hs = _steps(theta)
    k = len(theta)
    H = np.empty((k, k))
    f0 = f(theta)
    for i in range(k):
        ei = np.zeros(k)
        ei[i] = hs[i]
        H[i, i] = (f(theta + ei) - 2 * f0 + f(theta - ei)) / hs[i] ** 2
        for j in range(i):
            ej = np.zeros(k)
            ej[j] = hs[j]
            H[i, j] = H[j, i] = (f(theta + ei + ej) - f(theta + ei - ej) - f(theta - ei + ej)
                                 + f(theta - ei - ej)) / (4 * hs[i] * hs[j])
    return H


def read_data(s, data: str, variables: list[str], subject: str | None) -> Data:
    src, types = dataset_types(s, data)
    names = list(types)
    variables = check_columns(variables, names, "NLMIXED program", str(src))
    subj = check_columns([subject], names, "SUBJECT", str(src))[0] if subject else None
    used = list(dict.fromkeys(variables + ([subj] if subj else [])))
    for v in variables:
        if not is_numeric(types[v]):
            raise StatgridError(f"variable {v!r} of {src} is character; NLMIXED's programming statements take "
                                "numeric variables only here.")
    n_read = int(s.con.sql(f"SELECT count(*) FROM {src.scan_sql()}").fetchall()[0][0])
    numeric = {c for c in used if c in variables or is_numeric(types[c])}
    where = " AND ".join(f"{qi(c)} IS NOT NULL" + (f" AND NOT isnan(CAST({qi(c)} AS DOUBLE))" if c in numeric
                                                     else "") for c in used) or "TRUE"
    sel = ", ".join(qi(c) for c in used) or "1 AS __one"
    table = s.fetch_arrow(f"SELECT {sel} FROM {src.scan_sql()} WHERE {where}")
    n = table.num_rows
    if n == 0:
        raise StatgridError(f"{src} has no observation without a missing value in {', '.join(used)}; nothing to fit.")
    cols = {v.upper(): table.column(v).to_numpy(zero_copy_only=False).astype(float) for v in variables}
    if subj:
        import pandas as pd
        codes, uniques = pd.factorize(table.column(subj).to_pandas(), sort=False)
        g = len(uniques)
        max_per = int(np.bincount(codes).max())
    else:
        codes, g, max_per = np.zeros(n, dtype=int), 1, n
    return Data(cols, np.asarray(codes, dtype=int), g, n_read, n, max_per)


def choose_q(lik: Likelihood, theta0: np.ndarray) -> int:
    """SAS's adaptive choice: Q = 1, 2, … until −log L at the start changes by less than QTOL relative."""
    prev = None
    for q in range(1, QMAX + 1):
        lik.q = q
        val = lik.value(theta0)
        if val >= WORST:
            raise StatgridError("the log likelihood is not finite at the starting values; give PARMS values at "
                                "which every observation's likelihood is positive (variances > 0).")
        if prev is not None and abs(val - prev) <= QTOL * max(1.0, abs(prev)):
            return q - 1
        prev = val
    return QMAX


def optimize(lik: Likelihood, theta0: np.ndarray, bounds, maxiter: int) -> tuple[np.ndarray, bool, int]:
    from scipy.optimize import minimize

    f = lik.value
    if f(theta0) >= WORST:
        raise StatgridError("the log likelihood is not finite at the starting values; give PARMS values at which "
                            "every observation's likelihood is positive (variances > 0).")
    method = "L-BFGS-B" if bounds else "BFGS"
    opts = {"maxiter": maxiter, "gtol": 1e-7} if method == "BFGS" else {"maxiter": maxiter, "gtol": 1e-9,
                                                                        "ftol": 1e-14}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(f, theta0, jac=lambda t: gradient(f, t), method=method, bounds=bounds, options=opts)
    theta = np.asarray(res.x, dtype=float)
    best = f(theta)
    for _ in range(5):                         # Newton polish on the central-difference Hessian
        g, H = gradient(f, theta), hessian(f, theta)
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            break
        trial = theta - step
        if bounds:
            trial = np.clip(trial, [b[0] if b[0] is not None else -np.inf for b in bounds],
                            [b[1] if b[1] is not None else np.inf for b in bounds])
        val = f(trial)
        if not val < best:
            break
        theta, best = trial, val
    g = gradient(f, theta)
    converged = bool(res.success) or float(np.max(np.abs(g))) < 1e-4 * max(1.0, abs(best))
    return theta, converged, int(res.nit)


@procedure("PROCEDURE NLMIXED")
def nlmixed(s, data: str, parms: dict[str, float], loglik, variables: list[str], random: Random | None = None,
            qpoints: int | None = None, bounds: dict[str, tuple[float | None, float | None]] | None = None,
            maxiter: int = 200, alpha: float = 0.05) -> ResultTable:
    """Maximum-likelihood fit. Returns Parameter Estimates (Parameter, Estimate, StandardError, DF, tValue,
    Probt, Alpha, Lower, Upper, Gradient) with `stats`: fit {'-2 Log Likelihood', AIC, AICC, BIC}, q (quadrature
    points), n_read, n_used, subjects, max_per_subject, converged, iterations, cov (inverse Hessian),
    start [(name, value)], start_neg_loglik. See the module docstring."""
    names = list(parms)
    if not names:
        raise StatgridError("no parameters: name them with their starting values (PARMS b0=0 b1=0 s2u=1).")
    d = read_data(s, data, variables, random.subject if random else None)
    if random and d.g < 2:
        raise StatgridError(f"subject {random.subject!r} has {d.g} level in the observations used; a random effect "
                            "needs at least 2 subjects.")
    theta0 = np.array([float(parms[k]) for k in names])
    lik = Likelihood(names, loglik, d, random, qpoints or 1)
    if random and qpoints is None:
        lik.q = choose_q(lik, theta0)
    start_nll = lik.value(theta0)
    bnds = None
    if bounds:
        bnds = [bounds.get(k, (None, None)) for k in names]
        theta0 = np.clip(theta0, [b[0] if b[0] is not None else -np.inf for b in bnds],
                         [b[1] if b[1] is not None else np.inf for b in bnds])
    theta, converged, iters = optimize(lik, theta0, bnds, maxiter)
    if not converged:
        raise StatgridError(f"the optimization did not converge in {maxiter} iterations (MAXITER=); give better "
                            "starting values in PARMS or raise MAXITER=.")
    nll = lik.value(theta)
    H = hessian(lik.value, theta)
    try:
        cov = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        cov = np.full_like(H, np.nan)
    grad = gradient(lik.value, theta)
    n_eff = d.g if random else d.n_used
    df = (d.g - 1) if random else d.n_used
    rows = _estimate_rows(names, theta, cov, grad, df, alpha)
    k = len(names)
    m2ll = 2 * nll
    fit = {"-2 Log Likelihood": m2ll, "AIC": m2ll + 2 * k,
           "AICC": m2ll + 2 * k * n_eff / (n_eff - k - 1) if n_eff - k - 1 > 0 else float("nan"),
           "BIC": m2ll + k * math.log(n_eff)}
    return ResultTable(["Parameter", "Estimate", "StandardError", "DF", "tValue", "Probt", "Alpha", "Lower", "Upper",
                        "Gradient"], rows,
                       stats={"fit": fit, "q": lik.q if random else None, "n_read": d.n_read, "n_used": d.n_used,
                              "subjects": d.g if random else None, "max_per_subject": d.max_per_subject,
                              "converged": converged, "iterations": iters, "cov": cov.tolist(),
                              "start": list(zip(names, [float(parms[k]) for k in names])),
                              "start_neg_loglik": start_nll, "df": df})


def _estimate_rows(names, theta, cov, grad, df, alpha) -> list[list]:
    from scipy import stats

    tq = stats.t.ppf(1 - alpha / 2, df)
    rows = []
    for i, name in enumerate(names):
        var = cov[i, i]
        se = math.sqrt(var) if math.isfinite(var) and var > 0 else float("nan")
        t = theta[i] / se if se == se and se > 0 else float("nan")
        p = float(2 * stats.t.sf(abs(t), df)) if t == t else float("nan")
        rows.append([name, float(theta[i]), se, df, t, p, alpha, float(theta[i] - tq * se), float(theta[i] + tq * se),
                     float(grad[i])])
    return rows
