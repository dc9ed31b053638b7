"""PROC GENMOD's hypothesis tests beyond the estimates (SAS/STAT User's Guide, GENMOD: "Type 3 Analysis",
"F Statistics", CONTRAST and ESTIMATE statements), on a fitted model (statgrid.procs.genmod):

  - Type 3 (MODEL / TYPE3): for each effect the model is fitted again under the constraint that its Type III
    function is 0 — with every cell filled, the model without the effect's columns in sum-to-zero coding
    (design.coding('effect'), as PROC GLM's Type III) — and S = 2(l(full) − l(constrained)), DF = the
    drop in rank;
  - CONTRAST 'label' L: by default the likelihood-ratio test of Lβ = 0 (the model refitted on the null
    space of L over the non-aliased columns), or with WALD the Wald χ² (Lb)'(L V L')⁻(Lb), DF = rank L;
  - ESTIMATE 'label' l: l'b with its standard error √(l'Vl), Wald limits, χ², the inverse link of l'b and
    its limits (SAS's "Mean Estimate"), and with EXP exp(l'b), its delta-method standard error and limits.
The scale, as SAS documents: estimated by maximum likelihood in each fit (normal σ, gamma ν, negative
binomial α: S = 2Δl), 1 for Poisson and binomial (S = deviance difference), or with SCALE=DEVIANCE/PEARSON
the full model's φ̂ held fixed: S = (D₁ − D₀)/φ̂ and F = S/r on r and n − p DF.
As in PROC GENMOD's CONTRAST statement (not GLM's), an effect not named gets coefficients 0 — nothing is
filled in from the effects it contains — and a row not estimable (not orthogonal to the null space of the
design) gives missing values.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import _irls
from statgrid.procs._irls import special

ESTIMABLE_TOL = 1e-7


class Mapped:
    """The rows of a fit with their design columns mapped by M (X → X·M): a constrained model's rows."""

    def __init__(self, rows: Any, M: np.ndarray):
        self.rows, self.M = rows, M

    def __iter__(self):
        for X, y, w, off in self.rows:
            yield X @ self.M, y, w, off


@dataclass
class Fitted:
    """What the tests need of the full fit: its rows (over-parameterized design), family, link, scale mode."""
    rows: Any
    design: Any
    fam: _irls.Family
    lk: _irls.Link
    fit: _irls.GLMFit
    loglik: float
    phi: float                 # the φ of the covariance (ML, 1, or the fixed DSCALE/PSCALE value)
    fixed_scale: bool          # SCALE=DEVIANCE/PEARSON: φ̂ held fixed, F tests too
    df_error: int
    maxiter: int


def _p_f(f: float, df1: float, df2: float) -> float:
    return float(special.fdtrc(df1, df2, f)) if df1 > 0 and df2 > 0 and not math.isnan(f) else float("nan")


def p_chi2(x: float, df: float) -> float:
    return float(special.chdtrc(df, x)) if df > 0 and not math.isnan(x) else float("nan")


def _refit(full: Fitted, M: np.ndarray) -> tuple[_irls.GLMFit, float, _irls.Family]:
    """The model on columns X·M: its fit, log-likelihood at its own ML scale, and its family."""
    rows = Mapped(full.rows, M)
    if full.fam.name == "negbin":
        fit, fam = _irls.fit_negbin(rows, M.shape[1], full.lk, maxiter=full.maxiter)
    else:
        fam = full.fam
        fit = _irls.irls(rows, M.shape[1], fam, full.lk, maxiter=full.maxiter, what="constrained model")
    phi = 1.0
    if fam.name == "normal":
        phi = fit.deviance / fit.weight_sum
    elif fam.name == "gamma":
        phi = 1.0 / _irls.gamma_shape(fit.deviance, fit.weight_sum)
    return fit, _irls.loglik_at(rows, fit.kept, fam, full.lk, fit.beta[fit.kept], phi), fam


def _lr(full: Fitted, M: np.ndarray) -> tuple[float, int, _irls.GLMFit]:
    """S and its DF for the model constrained to the columns X·M."""
    red, ll, _ = _refit(full, M)
    df = len(full.fit.kept) - len(red.kept)
    if full.fixed_scale:
        s = (red.deviance - full.fit.deviance) / full.phi
    elif full.fam.name in ("poisson", "binomial"):
        s = red.deviance - full.fit.deviance
    else:
        s = 2.0 * (full.loglik - ll)
    return max(s, 0.0), df, red


def _row(full: Fitted, label: str, s: float, df: int, kind: str | None = None) -> list:
    """[label, DF, (DenDF, F, Pr > F,) χ², Pr > χ² (, Type)]."""
    out: list = [label, df]
    if full.fixed_scale:
        f = s / df if df else float("nan")
        out += [full.df_error, f, _p_f(f, df, full.df_error)]
    out += [s, p_chi2(s, df)]
    return out + ([kind] if kind else [])


def type3(full: Fitted) -> list[list]:
    """Rows [Source, DF, (DenDF, FValue, ProbF,) ChiSq, ProbChiSq] per effect (LR Statistics For Type 3)."""
    design = full.design
    T, _, slices = design.coding("effect")
    out = []
    for e, sl in zip(design.effects, slices):
        keep = [c for c in range(T.shape[1]) if not sl.start <= c < sl.stop]
        s, df, _ = _lr(full, T[:, keep])
        out.append(_row(full, e.name, s, df))
    return out


# ---------------------------------------------------------------------------------------------- L rows
def l_row(design, spec: dict, log=None) -> np.ndarray:
    """One row of L over the over-parameterized columns from {effect: coefficients}: GENMOD's rule — an
    effect not named is 0, missing trailing coefficients are 0, extra ones are ignored (with a WARNING)."""
    L = np.zeros(design.width)
    for _, e, sl, coeffs in design.contrast_terms(spec):
        if e is None:
            if not design.intercept:
                raise StatgridError("INTERCEPT in a CONTRAST or ESTIMATE of a model without an intercept (NOINT).")
            L[0] = coeffs[0] if coeffs else 0.0
            continue
        width = sl.stop - sl.start
        if len(coeffs) > width and log is not None:
            log.warning(f"Effect {e.name} has {width} parameters; the extra {len(coeffs) - width} coefficient(s) "
                        "are ignored.")
        coeffs = coeffs[:width]
        L[sl.start:sl.start + len(coeffs)] = coeffs
    return L


def design_null_space(rows: Any, p: int) -> np.ndarray:
    """Basis of the null space of the over-parameterized design (p × d), from one QR pass."""
    R = None
    for X, _y, _w, _off in rows:
        R = _irls.fold_r(R, X)
    if R is None:
        return np.zeros((p, 0))
    _, sv, vt = np.linalg.svd(R, full_matrices=True)
    tol = max(R.shape) * np.finfo(float).eps * (sv[0] if sv.size else 0.0) * 1e3
    return vt[int(np.sum(sv > tol)):].T


def estimable(L: np.ndarray, null: np.ndarray) -> bool:
    return not (null.size and np.max(np.abs(L @ null)) > ESTIMABLE_TOL * max(1.0, np.abs(L).max()))


def contrast(full: Fitted, label: str, specs: Sequence[dict], wald: bool, null: np.ndarray, log=None) -> list:
    """[Contrast, DF, (DenDF, FValue, ProbF,) ChiSq, ProbChiSq, Type]; missing values when not estimable."""
    kind = "Wald" if wald else "LR"
    L = np.array([l_row(full.design, s, log) for s in specs])
    fit = full.fit
    if not all(estimable(r, null) for r in L):
        if log is not None:
            log.warning(f"Contrast {label!r} is not estimable.")
        return [label, None, *([None] * 3 if full.fixed_scale else []), None, None, kind]
    Lk = L[:, fit.kept]
    rank = int(np.linalg.matrix_rank(Lk))
    if rank == 0:
        return _row(full, label, 0.0, 0, kind)
    if wald:
        lb = Lk @ fit.beta[fit.kept]
        V = Lk @ fit.cov(full.phi) @ Lk.T
        s = float(lb @ np.linalg.pinv(V) @ lb)
        return _row(full, label, s, rank, kind)
    _, sv, vt = np.linalg.svd(Lk, full_matrices=True)
    N = vt[rank:].T                                     # β_kept = N·γ satisfies Lβ = 0
    E = np.zeros((full.design.width, len(fit.kept)))
    E[fit.kept, range(len(fit.kept))] = 1.0
    s, _, _ = _lr(full, E @ N)
    return _row(full, label, s, rank, kind)


def estimate(full: Fitted, label: str, spec: dict, alpha: float, exp: bool, null: np.ndarray, log=None
             ) -> list[list]:
    """Rows [Label, MeanEstimate, MeanLowerCL, MeanUpperCL, LBetaEstimate, StdErr, Alpha, LBetaLowerCL,
    LBetaUpperCL, ChiSq, ProbChiSq] (and the Exp(label) row with EXP)."""
    L = l_row(full.design, spec, log)
    fit = full.fit
    return estimate_rows(label, L, fit.kept, fit.beta[fit.kept], fit.cov(full.phi), full.lk, alpha, exp, null, log)


def estimate_rows(label: str, L: np.ndarray, kept: Sequence[int], beta: np.ndarray, cov: np.ndarray, lk,
                  alpha: float, exp: bool, null: np.ndarray, log=None) -> list[list]:
    """The ESTIMATE rows of l'b for the estimates `beta` of the columns `kept` and their covariance `cov` (the
    likelihood fit's, or GEE's empirical one — procs/gee_tests.py); missing values when l is not estimable."""
    if not estimable(L, null):
        if log is not None:
            log.warning(f"Estimate {label!r} is not estimable.")
        return [[label, None, None, None, None, None, alpha, None, None, None, None]]
    lk_row = L[list(kept)]
    est = float(lk_row @ beta)
    se = math.sqrt(max(float(lk_row @ cov @ lk_row), 0.0))
    z = float(special.ndtri(1 - alpha / 2))
    lo, hi = est - z * se, est + z * se
    chi = (est / se) ** 2 if se > 0 else float("nan")
    means = sorted(float(lk.inv(np.array([v]))[0]) for v in (lo, hi))
    rows = [[label, float(lk.inv(np.array([est]))[0]), means[0], means[1], est, se, alpha, lo, hi, chi,
             p_chi2(chi, 1)]]
    if exp:
        e = _exp(est)
        rows.append([f"Exp({label})", None, None, None, e, e * se, alpha, _exp(lo), _exp(hi), None, None])
    return rows


def _exp(v: float) -> float:
    return math.exp(v) if v < 709.0 else math.inf
