"""DDFM=KENWARDROGER (KR): the Kenward–Roger (1997) bias-adjusted covariance of the fixed effects and
denominator degrees of freedom (SAS/STAT User's Guide, MIXED, "Kenward-Roger Degrees of Freedom
Approximation"; the same algebra as R's pbkrtest vcovAdj / KRmodcomp / get_Lb_ddf).

With Φ = (XᵀV⁻¹X)⁻¹, V_i = ∂V/∂θ_i, P_i = XᵀV⁻¹V_iV⁻¹X, Q_ij = XᵀV⁻¹V_iV⁻¹V_jV⁻¹X and W the
asymptotic covariance of θ̂ (the free parameters; 0 for those on a bound or held):
    Φ_A = Φ + 2 Φ [Σ_ij W_ij (Q_ij − P_i Φ P_j)] Φ
(the second-order term −¼R_ij of structures whose V is not linear in θ is not built: KR is refused for
them). For H₀: Lβ = 0 with q = rank L, Θ = Lᵀ(LΦLᵀ)⁻¹L:
    A1 = Σ_ij W_ij tr(ΘΦP_iΦ) tr(ΘΦP_jΦ),  A2 = Σ_ij W_ij tr(ΘΦP_iΦΘΦP_jΦ)
    B = (A1 + 6A2)/(2q),  g = ((q+1)A1 − (q+4)A2)/((q+2)A2),  d = 3q + 2(1 − g)
    c1 = g/d, c2 = (q − g)/d, c3 = (q + 2 − g)/d
    E* = 1/(1 − A2/q),  V* = (2/q)(1 + c1B)/((1 − c2B)²(1 − c3B)),  ρ = V*/(2E*²)
    m = 4 + (q + 2)/(qρ − 1)  (the DenDF),  λ = m/(E*(m − 2))
    F* = λ (Lβ)ᵀ(LΦ_ALᵀ)⁻¹(Lβ)/q.
W: SAS's default is the inverse of the observed information (information='observed': A = 2H⁻¹, H the
Hessian of −2ℓ, as COVTEST's); pbkrtest's is the expected information's (information='expected':
2·[tr(PV_iPV_j)]⁻¹). The two agree on balanced designs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from statgrid.errors import StatgridError


@dataclass
class KenwardRoger:
    """The adjusted covariance and what the DF of any L needs."""
    phi: np.ndarray              # Φ, unadjusted (p × p)
    phi_a: np.ndarray            # Φ_A, adjusted (p × p)
    P: list[np.ndarray]          # P_i per covariance parameter
    W: np.ndarray                # asymptotic covariance of θ̂ (K × K; 0 off the free parameters)

    def _basis(self, L: np.ndarray) -> np.ndarray:
        """L's rows reduced to a full-rank basis of its row space (rank q rows)."""
        L = np.atleast_2d(np.asarray(L, float))
        M = L @ self.phi @ L.T
        w, U = np.linalg.eigh((M + M.T) / 2)
        keep = w > 1e-10 * max(w.max(initial=0.0), 1e-300)
        return U[:, keep].T @ L

    def ddf(self, L: np.ndarray) -> tuple[float, float]:
        """(m, λ) for H₀: Lβ = 0 (m: nan when L is 0)."""
        Lr = self._basis(L)
        q = Lr.shape[0]
        if q == 0:
            return float("nan"), float("nan")
        theta = Lr.T @ np.linalg.solve(Lr @ self.phi @ Lr.T, Lr)
        tp = theta @ self.phi
        u = [tp @ Pi @ self.phi for Pi in self.P]
        tr = np.array([np.trace(x) for x in u])
        K = len(u)
        A1 = float(tr @ self.W @ tr)
        A2 = float(sum(self.W[i, j] * np.sum(u[i] * u[j].T) for i in range(K) for j in range(K) if self.W[i, j]))
        return _m_lambda(q, A1, A2)

    def wald_f(self, L: np.ndarray, beta: np.ndarray) -> tuple[float, int, float]:
        """(F*, q, m) for H₀: Lβ = 0: the scaled Wald F on Φ_A and the KR DenDF."""
        Lr = self._basis(L)
        q = Lr.shape[0]
        if q == 0:
            return float("nan"), 0, float("nan")
        b = Lr @ beta
        f = float(b @ np.linalg.solve(Lr @ self.phi_a @ Lr.T, b)) / q
        m, lam = self.ddf(Lr)
        return lam * f, q, m


def _m_lambda(q: int, A1: float, A2: float) -> tuple[float, float]:
    if A2 <= 0:                       # no uncertainty from θ (all held or on bounds): the F test is exact
        return float("inf"), 1.0
    B = (A1 + 6 * A2) / (2 * q)
    g = ((q + 1) * A1 - (q + 4) * A2) / ((q + 2) * A2)
    d = 3 * q + 2 * (1 - g)
    c1, c2, c3 = g / d, (q - g) / d, (q + 2 - g) / d
    v0, v1, v2 = 1 + c1 * B, 1 - c2 * B, 1 - c3 * B
    v0 = 0.0 if abs(v0) < 1e-10 else v0
    rho = (1 / q) * ((1 - A2 / q) / v1) ** 2 * v0 / v2 if v1 != 0 and v2 != 0 else float("nan")
    m = 4 + (q + 2) / (q * rho - 1) if q * rho != 1 else float("inf")
    lam = 1.0 if abs(m - 2) < 1e-2 or not math.isfinite(m) else m * (1 - A2 / q) / (m - 2)
    return float(m), float(lam)


def kenward_roger(model, theta: np.ndarray, ev, free: np.ndarray, A_observed: np.ndarray | None,
                  information: str = "observed") -> KenwardRoger:
    """Φ_A and the pieces of the DF at θ̂ (ev: model.evaluate(θ̂, 2))."""
    if not all(getattr(x, "linear", False) for x in [*model.gsides, model.rside]):
        raise StatgridError("DDFM=KENWARDROGER is built for covariance structures linear in their parameters "
                            "(VC, CS, UN); with AR(1) or SP(…) its second-order term is not built — use "
                            "DDFM=SATTERTHWAITE.")
    K = len(model.params)
    W = np.zeros((K, K))
    if information == "expected":
        if free.any():
            sub = ev.info[np.ix_(free, free)]
            W[np.ix_(free, free)] = 2 * (np.linalg.inv(sub) if np.linalg.cond(sub) < 1e12 else np.linalg.pinv(sub))
    elif information == "observed":
        W = np.nan_to_num(A_observed) if A_observed is not None else W
    else:
        raise StatgridError(f"kr_information={information!r} is not one of 'observed' (SAS) or 'expected' (pbkrtest).")
    phi = ev.C
    p = phi.shape[0]
    Qs = _q_pairs(model, theta, free)
    U = np.zeros((p, p))
    ks = np.flatnonzero(free)
    for i in ks:
        for j in ks:
            if W[i, j]:
                U += W[i, j] * (Qs[(min(i, j), max(i, j))] if i <= j else Qs[(j, i)].T) \
                    - W[i, j] * ev.Q[i] @ phi @ ev.Q[j]
    phi_a = phi + 2 * phi @ U @ phi
    return KenwardRoger(phi, (phi_a + phi_a.T) / 2, list(ev.Q), W)


def _q_pairs(model, theta: np.ndarray, free: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    """Q_ij = XᵀV⁻¹V_iV⁻¹V_jV⁻¹X for the free i ≤ j, summed over V's blocks."""
    ks = np.flatnonzero(free)
    p = model.p
    out = {(i, j): np.zeros((p, p)) for i in ks for j in ks if i <= j}
    for g in model.groups:
        V, D, _ = model._v(theta, g)
        Winv = np.linalg.inv(V)
        WX = Winv @ g.X
        A = {k: D[k] @ WX for k in ks}                  # V_k V⁻¹ X   (B, m, p)
        for (i, j) in out:
            out[(i, j)] += np.einsum("bmp,bmn,bnq->pq", A[i], Winv, A[j])
    return out
