"""The estimation of a linear mixed model (statgrid.procs.mixed's docstring has the formulas): rows
grouped by subject, the covariance parameters from statsmodels' MixedLM, GLS given them, batched
over subjects, the DF methods, and the Wald tests."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._mixed_setup import Fixed

RANK_TOL = 1e-9         # singular values of unit-scaled columns below this count as zero (containment ranks)
POLISH_GTOL = 1e-8      # gradient tolerance of the polishing fit


def _rank_scaled(A: np.ndarray, ref: np.ndarray) -> int:
    """Rank of A whose columns are residuals of ref's columns: each is scaled by ‖ref_j‖ first."""
    norms = np.linalg.norm(ref, axis=0)
    ok = norms > 0
    if not ok.any() or A.shape[0] == 0:
        return 0
    sv = np.linalg.svd(A[:, ok] / norms[ok], compute_uv=False)
    return int(np.sum(sv > RANK_TOL))


# ---------------------------------------------------------------------------- subjects
@dataclass
class Blocks:
    """Rows sorted by subject: order (input row of each sorted row), group index, group starts."""
    order: np.ndarray
    gidx: np.ndarray
    starts: np.ndarray
    keys: list

    @property
    def g(self) -> int:
        return len(self.starts)

    def sums(self, a: np.ndarray) -> np.ndarray:
        return np.add.reduceat(a, self.starts, axis=0)


def _blocks(df, subject: list[str]) -> Blocks:
    if not subject:
        n = len(df)
        return Blocks(np.arange(n), np.zeros(n, dtype=int), np.array([0]), [()])
    codes = df.groupby(subject, sort=True, dropna=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
    gidx = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(sc)]))
    return Blocks(order, gidx, starts, list(range(len(starts))))


def _outer_sums(b: Blocks, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Per subject, A_iᵀB_i (g × a × b)."""
    return b.sums(A[:, :, None] * B[:, None, :])


# ---------------------------------------------------------------------------- GLS given (G, σ²)
@dataclass
class Gls:
    beta: np.ndarray
    cov: np.ndarray
    m2ll: float
    pred: np.ndarray      # conditional: Xβ + Zû (sorted order)
    blup: np.ndarray      # g × q


def _gls(y, X, Z, b: Blocks, G: np.ndarray, s2: float, reml: bool) -> Gls:
    n, p = X.shape
    q = Z.shape[1]
    Xy = np.column_stack([X, y])
    if q:
        ZtZ = _outer_sums(b, Z, Z)
        ZtXy = _outer_sums(b, Z, Xy)
        M = s2 * np.eye(q) + G @ ZtZ
        A = np.linalg.solve(M, G @ ZtXy)
        S = (Xy.T @ Xy - np.einsum("gqi,gqj->ij", ZtXy, A)) / s2
        _, logdet_m = np.linalg.slogdet(M)
        logdet_v = n * math.log(s2) + float(np.sum(logdet_m)) - b.g * q * math.log(s2)
    else:
        S = Xy.T @ Xy / s2
        logdet_v = n * math.log(s2)
    xtvx = S[:p, :p]
    L = np.linalg.cholesky(xtvx)
    cov = np.linalg.inv(L).T @ np.linalg.inv(L)
    beta = cov @ S[:p, p]
    r = y - X @ beta
    if q:
        Ztr = b.sums(Z * r[:, None])
        c = np.linalg.solve(M, (G @ Ztr[:, :, None]))[:, :, 0]
        rvr = (r @ r - float(np.sum(Ztr * c))) / s2
        u = (G @ (Ztr - (ZtZ @ c[:, :, None])[:, :, 0])[:, :, None])[:, :, 0] / s2
        pred = X @ beta + np.sum(Z * u[b.gidx], axis=1)
    else:
        rvr = (r @ r) / s2
        u = np.zeros((b.g, 0))
        pred = X @ beta
    if reml:
        m2ll = logdet_v + 2 * float(np.sum(np.log(np.diag(L)))) + rvr + (n - p) * math.log(2 * math.pi)
    else:
        m2ll = logdet_v + rvr + n * math.log(2 * math.pi)
    return Gls(beta, cov, m2ll, pred, u)


# ---------------------------------------------------------------------------- statsmodels fit
def _fit_mixedlm(y, X, Z, b: Blocks, reml: bool, maxiter: int, diagonal: bool) -> tuple[np.ndarray, float, list[str]]:
    """(G, σ²) by statsmodels MixedLM, and the warnings it gave. The columns of X and Z are scaled
    to unit root-mean-square first (G is scaled back after): the optimiser works on G/σ², and a
    slope in thousandths would otherwise leave it a badly scaled problem it may not solve. The
    optimum is unchanged (a reparameterization; REML's log|XᵀV⁻¹X| moves by a constant only)."""
    from statsmodels.regression.mixed_linear_model import MixedLM, MixedLMParams

    def rms(a):
        r = np.sqrt(np.mean(a ** 2, axis=0))
        return np.where(r > 0, r, 1.0)

    xs, zs = rms(X), rms(Z)
    q = Z.shape[1]
    free = MixedLMParams.from_components(np.ones(X.shape[1]), np.eye(q)) if diagonal and q > 1 else None
    methods = ["bfgs", "lbfgs"] if free is not None else ["bfgs", "lbfgs", "cg"]   # cg ignores free=
    model = MixedLM(y, X / xs, groups=b.gidx, exog_re=Z / zs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = model.fit(reml=reml, method=methods, maxiter=maxiter, free=free)
        except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, FloatingPointError) as exc:
            raise StatgridError(f"the mixed-model fit failed numerically ({exc}); check for a response or "
                                "random-effect variable that is constant, or too few subjects.") from None
        if not res.converged:
            raise StatgridError(f"the {'REML' if reml else 'ML'} fit did not converge within maxiter={maxiter} "
                                f"iterations of each optimiser tried ({', '.join(methods)}); raise maxiter=, "
                                "rescale the variables, or simplify the random effects.")
        # Polish: restart BFGS from the optimum with a tight tolerance and keep it if the likelihood is no
        # worse. It often stops on "precision loss" (nothing left to gain in floating point): that is
        # fine, as the first fit already met statsmodels' convergence test.
        try:
            tight = model.fit(reml=reml, method="bfgs", maxiter=max(maxiter, 50), gtol=POLISH_GTOL,
                              start_params=res.params_object, free=free)
            if np.isfinite(tight.llf) and tight.llf >= res.llf:
                tight.converged = True
                res = tight
        except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, FloatingPointError):
            pass
    messages = list(dict.fromkeys(str(w.message) for w in caught))
    G = np.array(res.cov_re, dtype=float).reshape(q, q) / np.outer(zs, zs)
    return G, float(res.scale), messages


# ---------------------------------------------------------------------------- degrees of freedom
def _rank_xz(X: np.ndarray, Z: np.ndarray, b: Blocks) -> int:
    """rank [X Z] for Z block-diagonal by subject: rank Z + rank((I − P_Z) X), per subject."""
    if Z.shape[1] == 0:
        return _rank_scaled(X, X)
    ZtZ = _outer_sums(b, Z, Z)
    ZtX = _outer_sums(b, Z, X)
    ev = np.linalg.eigvalsh(ZtZ)
    rank_z = int(np.sum(ev > 1e-10 * np.maximum(ev[:, -1:], 1e-300)))
    coef = np.linalg.pinv(ZtZ, rcond=1e-10, hermitian=True) @ ZtX
    resid = X - np.einsum("nq,nqp->np", Z, coef[b.gidx])
    return rank_z + _rank_scaled(resid, X)


def _df_containment(design: Fixed, Z: np.ndarray, re_vars: list[set], b: Blocks) -> tuple[dict[int, float], int]:
    X = design.X
    ranks = [_rank_scaled(X, X)] + [_rank_xz(X, Z[:, :k + 1], b) for k in range(Z.shape[1])]
    contrib = [ranks[k + 1] - ranks[k] for k in range(Z.shape[1])]
    resid_df = X.shape[0] - ranks[-1]
    out = {}
    for i, e in enumerate(design.effects):
        found = [contrib[k] for k, vs in enumerate(re_vars) if set(e.variables) <= vs]
        out[i] = float(min(found)) if found else float(resid_df)
    return out, resid_df


def _df_between_within(design: Fixed, b: Blocks) -> tuple[dict[int, float], int]:
    X = design.X
    n = X.shape[0]
    spread = np.maximum.reduceat(X, b.starts, axis=0) - np.minimum.reduceat(X, b.starts, axis=0)
    scale = np.max(np.abs(X), axis=0)
    varies = np.any(spread > 1e-12 * np.maximum(scale, 1e-300), axis=0)        # per kept column
    kept_effect = [design.col_effect[j] for j in design.kept]
    within = {e for e, v in zip(kept_effect, varies) if v}
    between_cols = [k for k, e in enumerate(kept_effect) if e not in within]
    rank_x = _rank_scaled(X, X)
    df_between = b.g - (_rank_scaled(X[:, between_cols], X[:, between_cols]) if between_cols else 0)
    df_within = n - rank_x - df_between
    return {i: float(df_within if i in within else df_between) for i in range(len(design.effects))}, n - rank_x


# ---------------------------------------------------------------------------- tests
def _p_t(t: float, df: float) -> float:
    from scipy.special import stdtr
    return float(2 * stdtr(df, -abs(t))) if df > 0 and math.isfinite(t) else float("nan")


def _p_f(f: float, df1: float, df2: float) -> float:
    from scipy.special import fdtrc
    return float(fdtrc(df1, df2, f)) if df1 > 0 and df2 > 0 and math.isfinite(f) else float("nan")


def _wald(b: np.ndarray, C: np.ndarray) -> tuple[float, int]:
    """bᵀC⁻b and rank C (pseudo-inverse over C's non-negligible eigenvalues)."""
    w, v = np.linalg.eigh((C + C.T) / 2)
    keep = w > 1e-10 * max(w.max(initial=0.0), 1e-300)
    if not keep.any():
        return float("nan"), 0
    z = v[:, keep].T @ b
    return float(np.sum(z ** 2 / w[keep])), int(keep.sum())


def _type3(design: Fixed, beta, cov) -> tuple[list[tuple[int, float, int]], bool]:
    """[(effect index, Wald chi-square, rank)] per effect but the intercept; and whether the
    effect-coded (Type III) hypotheses could be used."""
    Xk = design.X
    Xs = design.X_full @ design.T
    s_effect = design.coded_effect
    B, *_ = np.linalg.lstsq(Xs, Xk, rcond=None)
    same_space = (Xs.shape[1] == Xk.shape[1] and _rank_scaled(Xs, Xs) == Xs.shape[1]
                  and np.linalg.norm(Xs @ B - Xk) <= 1e-8 * max(np.linalg.norm(Xk), 1e-300))
    if same_space:
        bb, C, col_eff = B @ beta, B @ cov @ B.T, s_effect
    else:
        bb, C, col_eff = beta, cov, [design.col_effect[j] for j in design.kept]
    out = []
    for i, e in enumerate(design.effects):
        if not e.variables:
            continue
        idx = [k for k, ce in enumerate(col_eff) if ce == i]
        if not idx:
            out.append((i, float("nan"), 0))
            continue
        chi, rank = _wald(bb[idx], C[np.ix_(idx, idx)])
        out.append((i, chi, rank))
    return out, same_space
