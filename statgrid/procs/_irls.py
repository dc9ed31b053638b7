"""Generalized linear models by iteratively reweighted least squares, one QR per iteration.

Each iteration is one pass over the rows: the working response z = η + (y − μ)·g'(μ) and weights
W = w / (V(μ)·g'(μ)²) at the current estimates are folded chunk by chunk into the triangular factor
R of [√W·X | √W·z] (a tall-skinny QR: each chunk's R by tall_r, then the QR of the stacked R's) — the
weighted least-squares step with the accuracy of a QR: X'WX is formed only inside CholeskyQR2, on
chunks well enough conditioned for it to be as accurate as Householder (tall_r). The rows stay in memory when they fit in half of MEMSIZE; otherwise every pass
reads them again from the engine, so a model can be fitted on a table larger than memory.

Convergence: relative change of the deviance below `tol` (R's glm rule) and no estimate moving by
more than PARAM_TOL of itself (Fisher scoring converges only linearly for non-canonical links); a rising deviance or a
mean outside the family's range halves the step (up to 30 times). Columns that are linear
combinations of earlier ones (found on the first pass, from R) are aliased: estimate 0, DF 0.
Covariance of the estimates: φ·(R'R)⁻¹ from the last pass — the expected (Fisher) information,
which is SAS's EXPECTED option (equal to its default observed information for canonical links).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._aliasing import split_aliased


class _Special:
    """scipy.special, imported on first use (it costs 0.2 s at session start otherwise)."""

    def __getattr__(self, name: str):
        from scipy import special as sp
        return getattr(sp, name)


special = _Special()

MIN_ALPHA = 1e-6          # a negative binomial dispersion below this is no overdispersion: say so
PARAM_TOL = 1e-8          # and no estimate moves by more than this share (linear convergence of non-canonical links)
EPS = 1e-15


# ---------------------------------------------------------------------------- links
@dataclass(frozen=True)
class Link:
    name: str
    fn: Callable[[np.ndarray], np.ndarray]          # η = g(μ)
    inv: Callable[[np.ndarray], np.ndarray]         # μ = g⁻¹(η)
    deriv: Callable[[np.ndarray], np.ndarray]       # g'(μ)


def _probit_deriv(mu):
    return 1.0 / np.maximum(np.exp(-0.5 * special.ndtri(mu) ** 2) / math.sqrt(2 * math.pi), 1e-300)


LINKS = {
    "identity": Link("identity", lambda m: m, lambda e: e, lambda m: np.ones_like(m)),
    "log": Link("log", np.log, lambda e: np.exp(np.minimum(e, 700)), lambda m: 1.0 / m),
    "logit": Link("logit", lambda m: special.logit(m), lambda e: special.expit(e), lambda m: 1.0 / (m * (1 - m))),
    "probit": Link("probit", lambda m: special.ndtri(m), lambda e: special.ndtr(e), _probit_deriv),
    "cloglog": Link("cloglog", lambda m: np.log(-np.log1p(-m)), lambda e: -np.expm1(-np.exp(np.minimum(e, 700))),
                    lambda m: -1.0 / ((1 - m) * np.log1p(-m))),
    "inverse": Link("inverse", lambda m: 1.0 / m, lambda e: 1.0 / e, lambda m: -1.0 / m ** 2),
}


# ---------------------------------------------------------------------------- families
@dataclass
class Family:
    """Variance, deviance and log-likelihood of one distribution (y per unit weight)."""

    name: str
    canonical: str
    alpha: float = 0.0                  # negative binomial dispersion (variance μ + αμ²)

    def variance(self, mu):
        return {"normal": lambda m: np.ones_like(m), "poisson": lambda m: m, "binomial": lambda m: m * (1 - m),
                "gamma": lambda m: m ** 2, "negbin": lambda m: m + self.alpha * m ** 2}[self.name](mu)

    def valid(self, mu) -> bool:
        if self.name == "normal":
            return bool(np.all(np.isfinite(mu)))
        if self.name == "binomial":            # 0 and 1 in floating point: separated data, caught by the caller
            return bool(np.all((mu >= 0) & (mu <= 1)))
        return bool(np.all(mu > 0) and np.all(np.isfinite(mu)))

    def start(self, y, w):
        if self.name == "binomial":
            return (w * y + 0.5) / (w + 1)
        if self.name in ("poisson", "negbin"):
            return y + 0.1
        if self.name == "gamma":
            return np.maximum(y, EPS)
        return y

    def unit_deviance(self, y, mu, w):
        if self.name == "normal":
            return w * (y - mu) ** 2
        if self.name == "poisson":
            return 2 * w * (special.xlogy(y, y / mu) - (y - mu))
        if self.name == "binomial":
            return 2 * w * (special.xlogy(y, y / mu) + special.xlogy(1 - y, (1 - y) / (1 - mu)))
        if self.name == "gamma":
            return 2 * w * (-np.log(y / mu) + (y - mu) / mu)
        a = self.alpha
        if a == 0:
            return 2 * w * (special.xlogy(y, y / mu) - (y - mu))
        return 2 * w * (special.xlogy(y, y / mu) - (y + 1 / a) * (np.log1p(a * y) - np.log1p(a * mu)))

    def loglik(self, y, mu, w, phi: float) -> float:
        """Full log-likelihood (constants included), φ the scale: σ² (normal), 1/ν (gamma)."""
        if self.name == "normal":
            return float(-0.5 * np.sum(w * (y - mu) ** 2 / phi + np.log(2 * math.pi * phi / w)))
        if self.name == "poisson":
            return float(np.sum(w * (special.xlogy(y, mu) - mu - special.gammaln(y + 1))))
        if self.name == "binomial":              # w trials, y the proportion of events
            k = w * y
            return float(np.sum(special.gammaln(w + 1) - special.gammaln(k + 1) - special.gammaln(w - k + 1)
                                + special.xlogy(k, mu) + special.xlog1py(w - k, -mu)))
        if self.name == "gamma":
            nu = 1.0 / phi
            return float(np.sum(w * (nu * np.log(nu * y / mu) - nu * y / mu - np.log(y) - special.gammaln(nu))))
        a = self.alpha
        r = 1.0 / a
        return float(np.sum(w * (special.gammaln(y + r) - special.gammaln(r) - special.gammaln(y + 1)
                                 + special.xlogy(y, a * mu) - (y + r) * np.log1p(a * mu))))


FAMILIES = {"normal": "identity", "poisson": "log", "binomial": "logit", "gamma": "inverse", "negbin": "log"}
ALIASES = {"gaussian": "normal", "norm": "normal", "nor": "normal", "poi": "poisson", "bin": "binomial",
           "binary": "binomial", "gam": "gamma", "nb": "negbin", "negativebinomial": "negbin"}


def family(name: str) -> Family:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in FAMILIES:
        raise StatgridError(f"dist {name!r} is not one of {', '.join(FAMILIES)}.")
    return Family(key, FAMILIES[key])


def link(name: str | None, fam: Family) -> Link:
    key = (name or fam.canonical).lower()
    key = {"id": "identity", "power(-1)": "inverse", "recip": "inverse", "reciprocal": "inverse",
           "clog": "cloglog", "cll": "cloglog"}.get(key, key)
    if key not in LINKS:
        raise StatgridError(f"link {name!r} is not one of {', '.join(LINKS)}.")
    return LINKS[key]


# ---------------------------------------------------------------------------- data
class Rows:
    """Chunks of (X, y, w, offset): kept in memory if they fit, else produced again on every pass."""

    def __init__(self, produce: Callable[[], Iterable[tuple]], n_rows: int, width: int, memsize_bytes: int):
        self._produce = produce
        self.in_memory = n_rows * (width + 3) * 8 <= memsize_bytes // 2
        self._chunks = list(produce()) if self.in_memory else None

    def __iter__(self) -> Iterator[tuple]:
        return iter(self._chunks) if self._chunks is not None else iter(self._produce())


# ---------------------------------------------------------------------------- the fit
@dataclass
class GLMFit:
    beta: np.ndarray                    # all columns; aliased ones 0
    kept: list[int]
    rinv: np.ndarray                    # R⁻¹ of the kept columns at the estimates
    deviance: float
    pearson: float
    n: int
    weight_sum: float
    iterations: int
    mu_range: tuple[float, float] = (0.0, 0.0)
    max_abs_eta: float = 0.0
    aliased: list[int] = field(default_factory=list)
    separated: bool = False             # stopped at maxiter with estimates growing without bound (separation)

    def cov(self, phi: float = 1.0) -> np.ndarray:
        """Covariance of the kept estimates."""
        return phi * (self.rinv @ self.rinv.T)

    def stderr(self, phi: float = 1.0) -> np.ndarray:
        se = np.full(self.beta.size, np.nan)
        se[self.kept] = math.sqrt(phi) * np.linalg.norm(self.rinv, axis=1)
        return se


CHOLQR_MIN_RCOND = 1e-3   # CholeskyQR2 only for chunks whose column-scaled R is this well conditioned (κ₁ ≤ 1000)


def tall_r(a: np.ndarray) -> np.ndarray:
    """R of the QR factorization of a tall matrix `a` (m × k); row signs may differ from LAPACK's.

    CholeskyQR2 (Yamamoto, Nakatsukasa, Yanagisawa, Fukaya 2015, ETNA 44: R₁ = chol(AᵀA),
    Q₁ = A R₁⁻¹, R = chol(Q₁ᵀQ₁)·R₁) is three matrix products at the speed of the BLAS, where
    Householder QR of a tall-skinny matrix runs mostly on vector operations: it was two thirds of
    a logistic fit's time on 200 k rows × 50 regressors (cProfile: 20.3 of 30 s). It is as accurate as Householder (orthogonality and
    residual O(ε)) while κ(A) stays well below ε^(-1/2); so it runs on column-scaled A only when
    the condition estimate of R₁ (LAPACK dtrcon) is at most 1/CHOLQR_MIN_RCOND, and any other
    chunk — a zero or nearly dependent column, the ones aliasing looks for — takes Householder.
    """
    from scipy.linalg import blas, lapack

    m, k = a.shape
    if k and m >= 4 * k:
        a = np.ascontiguousarray(a, dtype=np.float64)
        at = a.T                                        # Fortran-ordered k × m view: no copy for the BLAS
        g = blas.dsyrk(1.0, at)                         # upper triangle of AᵀA
        d = np.sqrt(np.diag(g))
        if np.all(d > 0) and np.all(np.isfinite(d)):
            s = 1.0 / d
            r1, info = lapack.dpotrf(g * s[:, None] * s[None, :], lower=0, clean=1)
            if info == 0:
                rcond, info = lapack.dtrcon(r1, norm="1", uplo="U", diag="N")
                if info == 0 and rcond >= CHOLQR_MIN_RCOND:
                    r1inv, info = lapack.dtrtri(r1, lower=0)
                    if info == 0:
                        q1 = a @ (s[:, None] * r1inv)            # Q₁ = A D⁻¹ R₁⁻¹ by one product
                        r2, info = lapack.dpotrf(blas.dsyrk(1.0, q1.T), lower=0, clean=1)
                        if info == 0:
                            return (r2 @ r1) * d[None, :]
    return np.linalg.qr(a, mode="r")


def fold_r(R: np.ndarray | None, a: np.ndarray) -> np.ndarray:
    """R of [previous rows; a] from the previous rows' R and the next chunk `a` (tall-skinny QR)."""
    ra = tall_r(a)
    return ra if R is None else np.linalg.qr(np.vstack([R, ra]), mode="r")


def _pass(rows: Rows, cols: list[int], fam: Family, lk: Link, beta: np.ndarray | None):
    """One pass: R of [√W X | √W z] at `beta` (or at the starting means), deviance, Pearson χ²."""
    R = None
    dev = pearson = wsum = 0.0
    n = 0
    lo, hi, max_eta = math.inf, -math.inf, 0.0
    for X, y, w, off in rows:
        Xc = X if cols == list(range(X.shape[1])) else X[:, cols]   # all columns in order: no copy
        if beta is None:
            mu = fam.start(y, w)
            with np.errstate(divide="ignore", invalid="ignore"):
                eta = lk.fn(mu)
            if not np.all(np.isfinite(eta)):          # e.g. log link and y ≤ 0: start those rows at the mean
                fallback = float(np.mean(mu[np.isfinite(eta)])) if np.isfinite(eta).any() else 1.0
                mu = np.where(np.isfinite(eta), mu, fallback)
                eta = lk.fn(mu)
        else:
            eta = Xc @ beta + off
            mu = lk.inv(eta)
            if not fam.valid(mu):
                return None
        if fam.name == "binomial":
            mu_w = np.clip(mu, EPS, 1 - EPS)
        else:
            mu_w = mu
        d = lk.deriv(mu_w)
        z = eta - off + (y - mu_w) * d
        W = w / (fam.variance(mu_w) * d * d)
        sw = np.sqrt(W)
        a = np.empty((Xc.shape[0], Xc.shape[1] + 1))
        np.multiply(Xc, sw[:, None], out=a[:, :-1])
        np.multiply(z, sw, out=a[:, -1])
        R = fold_r(R, a)
        if beta is not None:
            # binomial μ that rounds to 0 or 1 (probit/cloglog tails, separated data) is taken at the clip
            dev += float(np.sum(fam.unit_deviance(y, mu_w, w)))
            pearson += float(np.sum(w * (y - mu_w) ** 2 / fam.variance(mu_w)))
            lo, hi = min(lo, float(mu.min())), max(hi, float(mu.max()))
            max_eta = max(max_eta, float(np.abs(eta).max()))
        wsum += float(w.sum())
        n += y.size
    if R is not None and R.shape[0] < R.shape[1]:
        R = np.vstack([R, np.zeros((R.shape[1] - R.shape[0], R.shape[1]))])
    return R, dev, pearson, n, wsum, (lo, hi), max_eta


def _solve(R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy.linalg import solve_triangular
    k = R.shape[1] - 1
    Rk = R[:k, :k]
    return solve_triangular(Rk, R[:k, k]), solve_triangular(Rk, np.eye(k))


def aliased_columns(R: np.ndarray, cols: list[int]) -> tuple[list[int], list[int]]:
    """Split `cols` (R's first columns) into kept and aliased by the shared rule (_aliasing)."""
    kept, aliased = split_aliased(R, len(cols))
    return [cols[j] for j in kept], [cols[j] for j in aliased]


# |η| past which a fit that has not converged is taken as (quasi-)complete separation: a fitted probability within
# 3e-7 of 0 or 1 (the linear predictor grows about one per iteration then: 30 was past MAXITER=25's reach)
SEPARATION_ETA = 15.0


def irls(rows: Rows, p: int, fam: Family, lk: Link, cols: list[int] | None = None, maxiter: int = 50,
         tol: float = 1e-10, what: str = "model", allow_separation: bool = False) -> GLMFit:
    """Fit the columns `cols` (default all p) of the design; raise with the iteration count when the
    deviance does not settle in `maxiter` iterations."""
    cols = list(range(p)) if cols is None else list(cols)
    first = _pass(rows, cols, fam, lk, None)
    R, _, _, n, wsum, _, _ = first
    if R is None or n == 0:
        raise StatgridError(f"no observations to fit the {what}.")
    kept, aliased = aliased_columns(R, cols)
    if aliased:
        R = _pass(rows, kept, fam, lk, None)[0]
    beta, _ = _solve(R)
    dev_old = math.inf
    prev = None
    state = None
    for it in range(1, maxiter + 1):
        state = _pass(rows, kept, fam, lk, beta)
        halvings = 0
        while prev is not None and (state is None or state[1] > dev_old * (1 + 1e-12) + 1e-12) and halvings < 30:
            beta = (beta + prev) / 2
            state = _pass(rows, kept, fam, lk, beta)
            halvings += 1
        if state is None:
            raise StatgridError(f"the {what} gives means outside the range of the {fam.name} distribution with "
                                f"the {lk.name} link at iteration {it}; try another link or starting values.")
        dev = state[1]
        step = _solve(state[0])[0]
        if abs(dev - dev_old) / (abs(dev) + 0.1) < tol and \
                np.max(np.abs(step - beta) / (np.abs(beta) + 1e-3), initial=0.0) < PARAM_TOL:
            break
        dev_old = dev
        prev = beta
        beta = step
    else:
        if allow_separation and state[6] > SEPARATION_ETA:
            # (quasi-)complete separation: SAS LOGISTIC warns and reports the last iteration; the caller says so
            R, dev, pearson, n, wsum, mu_range, max_eta = state
            _, rinv = _solve(R)
            full = np.zeros(p)
            full[kept] = beta
            return GLMFit(full, kept, rinv, dev, pearson, n, wsum, maxiter, mu_range, max_eta, aliased, True)
        raise StatgridError(f"the {what} did not converge in {maxiter} iterations (relative change of the deviance "
                            f"still {abs(state[1] - dev_old) / (abs(state[1]) + 0.1):.3g}, criterion {tol:g})"
                            + ("; the estimates are growing without bound, a sign of (quasi-)complete separation "
                               "of the response by the regressors" if state[6] > SEPARATION_ETA else "")
                            + "; raise maxiter= or simplify the model.")
    R, dev, pearson, n, wsum, mu_range, max_eta = state
    _, rinv = _solve(R)
    full = np.zeros(p)
    full[kept] = beta
    return GLMFit(full, kept, rinv, dev, pearson, n, wsum, it, mu_range, max_eta, aliased)


def loglik_at(rows: Rows, cols: list[int], fam: Family, lk: Link, beta: np.ndarray, phi: float = 1.0) -> float:
    total = 0.0
    for X, y, w, off in rows:
        total += fam.loglik(y, lk.inv(X[:, cols] @ beta + off), w, phi)
    return total


def fit_negbin(rows: Rows, p: int, lk: Link, maxiter: int = 50, tol: float = 1e-10) -> tuple[GLMFit, Family]:
    """Negative binomial: β by IRLS for a fixed dispersion α, α by maximum likelihood for fixed β,
    in turn until α settles (the joint maximum: β and α are orthogonal in the information)."""
    from scipy.optimize import minimize_scalar

    fam = Family("negbin", "log", alpha=0.0)
    fit = irls(rows, p, Family("poisson", "log"), lk, maxiter=maxiter, tol=tol, what="Poisson start")
    num = den = 0.0
    for X, y, w, off in rows:
        mu = lk.inv(X[:, fit.kept] @ fit.beta[fit.kept] + off)
        num += float(np.sum(w * ((y - mu) ** 2 - y)))
        den += float(np.sum(w * mu ** 2))
    alpha = max(num / den, 1e-4) if den > 0 else 0.1
    for _ in range(maxiter):
        fam.alpha = alpha
        fit = irls(rows, p, fam, lk, maxiter=maxiter, tol=tol, what="negative binomial model")
        beta = fit.beta[fit.kept]

        def nll(log_a: float, kept=fit.kept, beta=beta) -> float:
            fam.alpha = math.exp(log_a)
            return -loglik_at(rows, kept, fam, lk, beta)
        res = minimize_scalar(nll, bounds=(math.log(alpha) - 5, math.log(alpha) + 5), method="bounded",
                              options={"xatol": 1e-10})
        new = math.exp(res.x)
        if new < MIN_ALPHA:
            raise StatgridError(f"the negative binomial dispersion goes to 0 (α = {new:.3g}): the data show no "
                                "overdispersion; fit dist='poisson' instead.")
        fam.alpha = new
        if abs(new - alpha) <= 1e-8 * alpha:
            alpha = new
            break
        alpha = new
    else:
        raise StatgridError(f"the negative binomial dispersion did not settle in {maxiter} iterations "
                            f"(last α = {alpha:.6g}); the data may have no overdispersion — try dist='poisson'.")
    fam.alpha = alpha
    return irls(rows, p, fam, lk, maxiter=maxiter, tol=tol, what="negative binomial model"), fam


def gamma_shape(deviance: float, weight_sum: float) -> float:
    """Maximum-likelihood shape ν of a gamma GLM: log ν − ψ(ν) = deviance / (2 Σw)."""
    from scipy.optimize import brentq
    target = deviance / (2 * weight_sum)
    if target <= 0:
        return math.inf
    f = lambda v: math.log(v) - special.digamma(v) - target
    lo, hi = 1e-8, 1.0
    while f(hi) > 0:
        hi *= 2
    return brentq(f, lo, hi, xtol=1e-14, rtol=1e-14)
