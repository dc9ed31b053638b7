"""Tests and fit criteria of a GEE fit (PROC GENMOD with a REPEATED statement), as SAS/STAT's GENMOD
documents them ("Generalized Score Statistics", "Quasi-likelihood Information Criterion"):

  - Type 3 (MODEL / TYPE3) and CONTRAST: by default the generalized score statistic of Boos (1992) and
    Rotnitzky and Jewell (1990) for H0: Lβ = 0. The GEE is solved again under the restriction (β = N·γ, N a
    basis of the null space of L; its own φ and working correlation, their "− p" the restricted model's
    parameter count), and at that β̃, with S the estimating equations' value, Σm the model-based covariance
    (Σ D'V⁻¹D)⁻¹ and Σe the empirical Σm (Σ D'V⁻¹rr'V⁻¹D) Σm — all of the full model —
        T = S' Σm L' (L Σe L')⁻ L Σm S,   χ² on rank L DF.
    φ cancels in T (S ∝ 1/φ, Σm ∝ φ, Σe free of φ). With WALD (MODEL / TYPE3 WALD, CONTRAST / WALD) the
    Wald χ² (Lb)'(L Σe L')⁻(Lb) with the full fit's empirical covariance.
    Type 3's L for an effect: the hypothesis that the mean lies in the span of the design without the
    effect's columns in sum-to-zero coding (design.coding('effect'), PROC GLM's Type III with every cell
    filled, as genmod_tests.py), written as L over the fit's non-aliased columns.
  - ESTIMATE: l'b with the empirical standard error √(l'Σe l), Wald limits and χ² (genmod_tests.estimate_rows).
  - QIC (Pan 2001) = −2Q(β̂(R), φ) + 2 trace(Ω̂_I V̂_R), QICu = −2Q + 2p: Q the quasi-likelihood under
    independence at the GEE estimates, Σ Q_ij/φ with SAS's Q_ij (normal −½w(y−μ)², Poisson w(y log μ − μ),
    binomial w(y log μ + (1 − y) log(1 − μ)) on the events/trials proportion y with trials w, gamma
    −w(y/μ + log μ)); Ω̂_I = Σ wᵢⱼ xᵢⱼxᵢⱼ'(∂μ/∂η)²/(φ v(μ)) the inverse of the model-based covariance under
    the independence working correlation, evaluated at β̂(R); V̂_R the empirical covariance; p the number of
    non-aliased parameters. φ is 1 for Poisson and binomial (their quasi-likelihoods have none) and the
    GEE's φ̂ for normal and gamma. Not computed for the negative binomial.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import _irls
from statgrid.procs import _gee_core as _gee
from statgrid.procs import genmod_tests as gt


@dataclass
class GeeFit:
    """What the tests need of a GEE fit: the rows, the non-aliased columns and the fitted pieces."""
    X_all: np.ndarray          # the over-parameterized design (n × design.width)
    kept: list[int]            # the non-aliased columns of X_all, the estimates' order
    y: np.ndarray
    w: np.ndarray              # prior weights (binomial trials)
    off: np.ndarray
    fam: Any
    lk: Any
    kind: str                  # working correlation: ind, exch, ar, un
    cl: Any                    # gee.Clusters
    beta: np.ndarray           # the GEE estimates of the kept columns
    cov_emp: np.ndarray        # empirical covariance of beta
    phi: float                 # the GEE's dispersion at beta
    design: Any
    maxiter: int
    converge: float

    @property
    def X(self) -> np.ndarray:
        return self.X_all[:, self.kept]


def _rank_rows(L: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """A basis of the row space of L (rank × p), from its SVD."""
    if L.size == 0:
        return L.reshape(0, L.shape[1] if L.ndim == 2 else 0)
    _, sv, vt = np.linalg.svd(L, full_matrices=False)
    r = int(np.sum(sv > tol * max(1.0, sv[0])))
    return vt[:r]


def null_basis(L: np.ndarray) -> np.ndarray:
    """N (p × (p − rank L)): β = N·γ satisfies Lβ = 0."""
    p = L.shape[1]
    _, sv, vt = np.linalg.svd(L, full_matrices=True) if L.size else (None, np.zeros(0), np.eye(p))
    r = int(np.sum(sv > 1e-9 * max(1.0, sv[0]))) if sv.size else 0
    return vt[r:].T


def wald(fit: GeeFit, L: np.ndarray) -> tuple[float, int]:
    """The Wald χ² of Lβ = 0 (L over the kept columns) with the empirical covariance, and its DF."""
    L = _rank_rows(L)
    if L.shape[0] == 0:
        return 0.0, 0
    lb = L @ fit.beta
    return float(lb @ np.linalg.pinv(L @ fit.cov_emp @ L.T) @ lb), L.shape[0]


def score(fit: GeeFit, L: np.ndarray) -> tuple[float, int]:
    """The generalized score statistic of Lβ = 0 (L over the kept columns) and its DF (see the module)."""
    L = _rank_rows(L)
    if L.shape[0] == 0:
        return 0.0, 0
    X = fit.X
    N = null_basis(L)
    if N.shape[1]:
        gamma0 = np.linalg.lstsq(N, fit.beta, rcond=None)[0]
        gamma, st, _, _, _ = _gee.fit_gee(X @ N, fit.y, fit.w, fit.off, gamma0, fit.fam, fit.lk, fit.kind, fit.cl,
                                          fit.maxiter, fit.converge)
        beta_r = N @ gamma
    else:                                 # the restriction leaves no parameter: μ from the offset alone
        beta_r = np.zeros(X.shape[1])
        st = _gee._state(X, fit.y, fit.w, fit.off, beta_r, fit.fam, fit.lk, fit.kind, fit.cl, 0)
    M0, S, M1 = _gee._sums(X, fit.y, fit.w, st, fit.fam, fit.lk, fit.cl, meat=True)
    sigma_m = np.linalg.pinv(M0)
    sigma_e = sigma_m @ M1 @ sigma_m
    u = L @ sigma_m @ S
    return float(u @ np.linalg.pinv(L @ sigma_e @ L.T) @ u), L.shape[0]


def _test(fit: GeeFit, L: np.ndarray, use_wald: bool, what: str) -> tuple[float, int]:
    if use_wald:
        return wald(fit, L)
    try:
        return score(fit, L)
    except StatgridError as exc:      # the restricted GEE fit: say which test needed it
        raise StatgridError(f"{what} (a generalized score test) refits the model under its hypothesis, and {exc} "
                            "The WALD option (MODEL / TYPE3 WALD, CONTRAST / WALD) needs no refit.") from exc


def type3_l(fit: GeeFit) -> list[tuple[str, np.ndarray]]:
    """(effect name, L over the kept columns) per effect: Type 3's hypothesis (see the module)."""
    T, _, slices = fit.design.coding("effect")
    X = fit.X
    gram = X.T @ X
    out = []
    for e, sl in zip(fit.design.effects, slices):
        keep = [c for c in range(T.shape[1]) if not sl.start <= c < sl.stop]
        Z = fit.X_all @ T[:, keep]                       # the design without the effect, sum-to-zero coded
        B = np.linalg.lstsq(gram, X.T @ Z, rcond=None)[0] if Z.shape[1] else np.zeros((X.shape[1], 0))
        out.append((e.name, null_basis(B.T).T if B.shape[1] else np.eye(X.shape[1])))
    return out


def empty_cells(fit: GeeFit) -> list[str]:
    """The crossed effects with a cell no row has (as procs/glm.py finds them)."""
    design = fit.design
    unused = ~np.any(fit.X_all != 0, axis=0)
    return [e.name for i, (e, sl) in enumerate(zip(design.effects, design.slices()))
            if len(design.effect_classes(e)) > 1 and not design.present_coded(i)
            and (unused[sl].any() or design.effect_width(e) < design.grid_size(e))]


def type3(fit: GeeFit, use_wald: bool, log=None) -> list[list]:
    """Rows [Source, DF, ChiSq, ProbChiSq] (Score/Wald Statistics For Type 3 GEE Analysis)."""
    empty = empty_cells(fit)
    if empty and log is not None:
        log.note(f"Some cells of {', '.join(empty)} have no observations: the Type 3 tests here test sum-to-zero "
                 "hypotheses, which differ from SAS's Type III estimable functions with empty cells; test the "
                 "hypotheses you mean with CONTRAST statements.")
    rows = []
    for name, L in type3_l(fit):
        s, df = _test(fit, L, use_wald, f"the Type 3 test of {name}")
        rows.append([name, df, s, gt.p_chi2(s, df)])
    return rows


def contrast(fit: GeeFit, label: str, specs: Sequence[dict], use_wald: bool, null: np.ndarray, log=None) -> list:
    """[Contrast, DF, ChiSq, ProbChiSq, Type 'Score'|'Wald']; missing values when not estimable."""
    kind = "Wald" if use_wald else "Score"
    L = np.array([gt.l_row(fit.design, s, log) for s in specs])
    if not all(gt.estimable(r, null) for r in L):
        if log is not None:
            log.warning(f"Contrast {label!r} is not estimable.")
        return [label, None, None, None, kind]
    s, df = _test(fit, L[:, fit.kept], use_wald, f"CONTRAST {label!r}")
    return [label, df, s, gt.p_chi2(s, df), kind]


def estimate(fit: GeeFit, label: str, spec: dict, alpha: float, exp: bool, null: np.ndarray, log=None) -> list[list]:
    """ESTIMATE's rows (genmod_tests.estimate_rows) with the empirical covariance."""
    L = gt.l_row(fit.design, spec, log)
    return gt.estimate_rows(label, L, fit.kept, fit.beta, fit.cov_emp, fit.lk, alpha, exp, null, log)


def quasi_terms(fam_name: str, y: np.ndarray, mu: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """SAS's Q_ij (before the division by φ); None for a distribution without one here."""
    if fam_name == "normal":
        return -0.5 * w * (y - mu) ** 2
    if fam_name == "poisson":
        return w * (np.where(y > 0, y * np.log(np.where(y > 0, mu, 1.0)), 0.0) - mu)
    if fam_name == "binomial":
        mu = np.clip(mu, _irls.EPS, 1 - _irls.EPS)
        return w * (y * np.log(mu) + (1 - y) * np.log1p(-mu))
    if fam_name == "gamma":
        return -w * (y / mu + np.log(mu))
    return None


def qic(fit: GeeFit) -> dict[str, float] | None:
    """{"qic", "qicu", "quasi_likelihood", "trace", "phi"} of the fit (see the module); None for negbin."""
    X = fit.X
    eta = X @ fit.beta + fit.off
    mu = fit.lk.inv(eta)
    q = quasi_terms(fit.fam.name, fit.y, mu, fit.w)
    if q is None:
        return None
    phi = fit.phi if fit.fam.name in ("normal", "gamma") else 1.0
    if fit.fam.name == "binomial":
        mu = np.clip(mu, _irls.EPS, 1 - _irls.EPS)
    dmu = 1.0 / fit.lk.deriv(mu)
    weight = fit.w * dmu * dmu / fit.fam.variance(mu) / phi
    omega = X.T @ (X * weight[:, None])
    quasi = float(np.sum(q)) / phi
    trace = float(np.trace(omega @ fit.cov_emp))
    p = X.shape[1]
    return {"qic": -2.0 * quasi + 2.0 * trace, "qicu": -2.0 * quasi + 2.0 * p, "quasi_likelihood": quasi,
            "trace": trace, "phi": phi}


def run(s, fit: GeeFit, type3_on: bool, type3_wald: bool, contrasts: Sequence, estimates: Sequence) -> dict:
    """stats entries: type3, type3_wald, contrasts, estimates, qic (the GEE Fit Criteria)."""
    out: dict = {"qic": qic(fit), "type3_wald": bool(type3_wald)}
    if type3_on:
        out["type3"] = type3(fit, bool(type3_wald), s.log)
    if contrasts or estimates:
        null = gt.design_null_space([(fit.X_all, fit.y, fit.w, fit.off)], fit.X_all.shape[1])
        out["contrasts"] = [contrast(fit, label, rows, bool(w), null, s.log) for label, rows, w in contrasts]
        out["estimates"] = [r for label, row, alpha, exp in estimates
                            for r in estimate(fit, label, row, float(alpha), bool(exp), null, s.log)]
    return out


__all__ = ["GeeFit", "wald", "score", "type3", "contrast", "estimate", "qic", "run"]
