"""Denominator degrees of freedom of PROC MIXED's t and F tests besides BETWITHIN (in _mixed_gls).

DDFM=SATTERTHWAITE (SAS/STAT User's Guide, MIXED, "Satterthwaite"; Fai and Cornelius 1996; the same
rule as R's lmerTest). With C(θ) = (XᵀV⁻¹X)⁻¹, ∂C/∂θ_k = C (XᵀV⁻¹V_kV⁻¹X) C and A = 2 H⁻¹, H the
observed Hessian of −2ℓ over the covariance parameters off their bounds:
    one row l:   ν = 2 (l C lᵀ)² / (gᵀ A g),  g_k = l ∂C/∂θ_k lᵀ
    q rows L:    L C Lᵀ = U D Uᵀ; ν_m for each row u_mᵀL; E = Σ ν_m/(ν_m − 2) over ν_m > 2;
                 DenDF = 2E/(E − q) when E > q, else missing.
DDFM=CONTAIN: the random effects (a RANDOM effect crossed with its SUBJECT=) are taken in order and
each gets its rank contribution to [X Z]; a fixed effect gets the smallest contribution among those
whose variables include all of its own, else the residual n − rank[X Z].
"""
from __future__ import annotations

import numpy as np

from statgrid.errors import StatgridError

RANK_TOL = 1e-9


def satterthwaite(L: np.ndarray, C: np.ndarray, dC: list[np.ndarray], A: np.ndarray) -> float:
    """Denominator DF of the F test of L β = 0 (one row: the t test's DF)."""
    L = np.atleast_2d(L)
    LCL = L @ C @ L.T
    w, U = np.linalg.eigh((LCL + LCL.T) / 2)
    keep = w > 1e-10 * max(w.max(initial=0.0), 1e-300)
    w, U = w[keep], U[:, keep]
    q = len(w)
    if q == 0:
        return float("nan")
    nus = []
    for m in range(q):
        lm = U[:, m] @ L
        g = np.array([float(lm @ d @ lm) for d in dC])
        var = float(g @ A @ g)
        nus.append(2 * w[m] ** 2 / var if var > 0 else float("inf"))
    if q == 1:
        return float(nus[0])
    E = sum(v / (v - 2) for v in nus if v > 2)
    return float(2 * E / (E - q)) if E > q else float("nan")


def asymptotic_cov(H: np.ndarray, free: np.ndarray) -> np.ndarray:
    """A = 2 H⁻¹ over the free parameters (zero rows and columns elsewhere)."""
    K = H.shape[0]
    A = np.zeros((K, K))
    if free.any():
        sub = H[np.ix_(free, free)]
        try:
            A[np.ix_(free, free)] = 2 * np.linalg.inv(sub)
        except np.linalg.LinAlgError:
            A[np.ix_(free, free)] = 2 * np.linalg.pinv(sub)
    return A


def _rank(M: np.ndarray, ref: np.ndarray | None = None) -> int:
    """Rank of M, its columns scaled by the norms of ref's (M's own by default)."""
    if M.size == 0:
        return 0
    norms = np.linalg.norm(M if ref is None else ref, axis=0)
    ok = norms > 0
    if not ok.any():
        return 0
    sv = np.linalg.svd(M[:, ok] / norms[ok], compute_uv=False)
    return int(np.sum(sv > RANK_TOL * (max(sv.max(initial=0.0), 1.0) if ref is None else 1.0)))


def _expanded(Z: np.ndarray, subject: np.ndarray) -> np.ndarray:
    """Z's columns crossed with the subject levels (rows of one block), empty columns dropped."""
    levels, inv = np.unique(subject, return_inverse=True)
    out = np.zeros((Z.shape[0], len(levels) * Z.shape[1]))
    for s in range(len(levels)):
        rows = inv == s
        out[rows, s * Z.shape[1]:(s + 1) * Z.shape[1]] = Z[rows]
    return out[:, np.any(out != 0, axis=0)]


def containment(X: np.ndarray, effects: list, random_effects: list[tuple[set, np.ndarray, np.ndarray]],
                blocks: list[np.ndarray], memsize: int) -> tuple[dict[int, float], int]:
    """DF per fixed effect (index into effects) and the residual DF. random_effects: (variables, Z
    columns (n × w), subject codes (n,)) in order; blocks: the row indices of each block of V."""
    n, p = X.shape
    k_all = len(random_effects)
    ranks = np.zeros(k_all + 1)
    ranks[0] = _rank(X)
    resid_parts = [[] for _ in range(k_all)]
    z_rank = np.zeros(k_all)
    for rows in blocks:
        Zs = []
        for k, (_, Z, subj) in enumerate(random_effects):
            Zs.append(_expanded(Z[rows], subj[rows]))
            Zk = np.hstack(Zs)
            if Zk.size * 8 * 4 > memsize:
                raise StatgridError("DDFM=CONTAIN needs the random-effects design of a block in memory, above "
                                    "memsize; use DDFM=RESIDUAL, BETWITHIN or SATTERTHWAITE.")
            if Zk.shape[1] == 0:
                resid_parts[k].append(X[rows])
                continue
            coef, *_ = np.linalg.lstsq(Zk, X[rows], rcond=None)
            z_rank[k] += _rank(Zk)
            resid_parts[k].append(X[rows] - Zk @ coef)
    for k in range(k_all):
        ranks[k + 1] = z_rank[k] + _rank(np.vstack(resid_parts[k]), X[np.concatenate(blocks)]) if resid_parts[k] else ranks[0]
    contrib = [ranks[k + 1] - ranks[k] for k in range(k_all)]
    resid_df = int(n - ranks[-1])
    out = {}
    for i, e in enumerate(effects):
        found = [contrib[k] for k, (vs, _, _) in enumerate(random_effects) if set(e.variables) <= vs]
        out[i] = float(min(found)) if found else float(resid_df)
    return out, resid_df
