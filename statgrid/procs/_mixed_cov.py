"""PROC MIXED's covariance structures as parameters and matrices (SAS/STAT User's Guide, The MIXED
Procedure, "Covariance Structures"). V = Σ_j S_j ∘ (Z_j G_j Z_jᵀ) + R, where S_j(a, b) = 1 when rows a
and b have the same level of statement j's SUBJECT= (every row without one).

G side, one per RANDOM statement (Z_j: one column per random effect's level, its value the product
of the effect's numeric variables):
    VC  one variance per random effect (all its columns)          CovParm: the effect's name
    UN  an unstructured G_j over all the statement's columns       CovParm: UN(i,j), i ≥ j
R side, REPEATED (rows are linked within its SUBJECT=, t is the REPEATED effect's level index or the
row's position in its subject, d the Euclidean distance between the rows' coordinates):
    VC       σ² I                                                  Residual
    CS       σ₁ (same subject) + σ² I (σ₁ may be negative)           CS, Residual
    AR(1)    σ² ρ^|t_a − t_b| within a subject                       AR(1), Residual
    UN       Σ[t_a, t_b] within a subject                            UN(i,j)
    SP(EXP)  σ² exp(−d/ρ);  SP(SPH) σ² (1 − 1.5 d/ρ + 0.5 (d/ρ)³) for d < ρ, else 0
             without LOCAL:                                          SP(…) = ρ, Residual = σ²
             with LOCAL (a nugget σ₀² I added):                       Variance = σ², SP(…) = ρ, Residual = σ₀²
Every structure gives, for a stack of equal-sized blocks of rows, its part of V and ∂V/∂θ_k.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REPEATED_TYPES = ("vc", "cs", "ar(1)", "un", "sp(exp)", "sp(sph)")
RANDOM_TYPES = ("vc", "un")


@dataclass
class CovParm:
    name: str
    subject: str
    lower: float | None = 0.0        # bound (None: none)
    upper: float | None = None
    variance: bool = True            # scales with Var(y); a variance (one-sided Wald test) when lower == 0
    start: float = 1.0               # start value on the scale Var(y) = 1
    factor: float = 1.0              # the estimate in the data's units = factor × the engine's parameter


def _same(codes: np.ndarray) -> np.ndarray:
    """(B, m) codes → (B, m, m) indicator of equal codes."""
    return (codes[:, :, None] == codes[:, None, :]).astype(float)


class GSide:
    """One RANDOM statement: Z (n × q, rows in the engine's order), subject codes, TYPE=VC or UN."""

    def __init__(self, Z: np.ndarray, subject: np.ndarray, effect_cols: list[list[int]], effect_names: list[str],
                 subject_name: str, type_: str):
        # columns scaled to unit root-mean-square (per effect for VC) so that the parameters are O(Var y)
        if type_ == "vc":
            scale = np.ones(Z.shape[1])
            for cols in effect_cols:
                scale[cols] = np.sqrt(np.mean(np.sum(Z[:, cols] ** 2, axis=1))) or 1.0
        else:
            scale = np.sqrt(np.mean(Z ** 2, axis=0))
            scale = np.where(scale > 0, scale, 1.0)
        self.scale = scale
        self.Z, self.subject, self.type = Z / scale, subject, type_
        self.effect_cols, self.subject_name = effect_cols, subject_name
        q = Z.shape[1]
        if type_ == "vc":
            self.params = [CovParm(nm, subject_name, start=0.5) for nm in effect_names]
            self.pattern = [(cols, cols) for cols in effect_cols]
        else:
            self.params, self.pattern = [], []
            for i in range(q):
                for j in range(i + 1):
                    self.params.append(CovParm(f"UN({i + 1},{j + 1})", subject_name, lower=0.0 if i == j else None,
                                               start=0.5 if i == j else 0.0))
                    self.pattern.append(([i], [j]))
        for prm, (a, b) in zip(self.params, self.pattern):
            prm.factor = 1.0 / (scale[a[0]] * scale[b[0]])
        self.linear = True

    def prepare(self, idx: np.ndarray) -> list[np.ndarray]:
        """∂V/∂θ_k for each parameter over the blocks idx (B, m)."""
        Zb, S = self.Z[idx], _same(self.subject[idx])
        out = []
        for a, b in self.pattern:
            M = Zb[:, :, a] @ np.swapaxes(Zb[:, :, b], 1, 2)
            if a != b:
                M = M + np.swapaxes(M, 1, 2)
            out.append(S * M)
        return out

    def G(self, theta: np.ndarray) -> np.ndarray:
        q = self.Z.shape[1]
        G = np.zeros((q, q))
        for t, (a, b) in zip(theta, self.pattern):
            if a == b:
                G[a, a] += t
            else:
                G[a[0], b[0]] = G[b[0], a[0]] = t
        return G / np.outer(self.scale, self.scale)


class RSide:
    """The REPEATED statement (or σ² I without one)."""

    def __init__(self, type_: str, subject: np.ndarray, subject_name: str, pos: np.ndarray | None = None,
                 coords: np.ndarray | None = None, local: bool = False, n_levels: int = 0):
        self.type, self.subject, self.pos, self.coords, self.local = type_, subject, pos, coords, local
        sn = subject_name
        if type_ == "vc":
            self.params = [CovParm("Residual", "", start=1.0)]
        elif type_ == "cs":
            self.params = [CovParm("CS", sn, lower=None, start=0.0), CovParm("Residual", "", start=1.0)]
        elif type_ == "ar(1)":
            self.params = [CovParm("AR(1)", sn, lower=-0.999999, upper=0.999999, variance=False, start=0.2),
                           CovParm("Residual", "", start=1.0)]
        elif type_ == "un":
            self.params = [CovParm(f"UN({i + 1},{j + 1})", sn, lower=0.0 if i == j else None,
                                   start=1.0 if i == j else 0.0) for i in range(n_levels) for j in range(i + 1)]
        else:
            sp = CovParm(type_.upper(), sn, lower=1e-8, variance=False, start=1.0)
            self.params = ([CovParm("Variance", sn, start=0.5), sp, CovParm("Residual", "", start=0.5)] if local
                           else [sp, CovParm("Residual", "", start=1.0)])
        self.linear = type_ in ("vc", "cs", "un")

    # -------------------------------------------------------------- per stack of blocks
    def prepare(self, idx: np.ndarray) -> dict:
        B, m = idx.shape
        eye = np.broadcast_to(np.eye(m), (B, m, m))
        S = _same(self.subject[idx])
        cache = {"I": eye, "S": S}
        if self.type == "cs":
            cache["D"] = [S, eye]
        elif self.type == "vc":
            cache["D"] = [eye]
        elif self.type == "un":
            p = self.pos[idx]
            D = []
            for i in range(int(round((np.sqrt(8 * len(self.params) + 1) - 1) / 2))):
                for j in range(i + 1):
                    M = ((p[:, :, None] == i) & (p[:, None, :] == j)).astype(float)
                    D.append(S * (M + np.swapaxes(M, 1, 2)) if i != j else S * M)
            cache["D"] = D
        elif self.type == "ar(1)":
            p = self.pos[idx].astype(float)
            cache["lag"] = np.abs(p[:, :, None] - p[:, None, :])
        else:
            c = self.coords[idx]
            cache["d"] = np.sqrt(np.sum((c[:, :, None, :] - c[:, None, :, :]) ** 2, axis=-1))
        return cache

    def matrices(self, theta: np.ndarray, cache: dict) -> tuple[np.ndarray, list[np.ndarray]]:
        """R over the blocks and ∂R/∂θ_k."""
        if self.linear:
            D = cache["D"]
            return sum(t * d for t, d in zip(theta, D)), D
        S = cache["S"]
        if self.type == "ar(1)":
            rho, s2 = theta
            lag = cache["lag"]
            F = S * np.power(rho, lag)
            with np.errstate(divide="ignore", invalid="ignore"):
                dF = S * np.where(lag > 0, lag * np.power(rho, np.maximum(lag - 1, 0)), 0.0)
            return s2 * F, [s2 * dF, F]
        d = cache["d"]
        if self.local:
            s2, rng, nug = theta
        else:
            rng, s2 = theta
        F, dF = _spatial(self.type, d, rng)
        F, dF = S * F, S * dF
        if self.local:
            return s2 * F + nug * cache["I"], [F, s2 * dF, cache["I"]]
        return s2 * F, [s2 * dF, F]


def _spatial(type_: str, d: np.ndarray, rng: float) -> tuple[np.ndarray, np.ndarray]:
    """Correlation f(d; ρ) and ∂f/∂ρ."""
    if type_ == "sp(exp)":
        F = np.exp(-d / rng)
        return F, F * d / rng ** 2
    r = d / rng
    inside = r < 1
    F = np.where(inside, 1 - 1.5 * r + 0.5 * r ** 3, 0.0)
    dF = np.where(inside, 1.5 * d / rng ** 2 - 1.5 * d ** 3 / rng ** 4, 0.0)
    return F, dF
