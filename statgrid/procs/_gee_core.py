"""The GEE fit's core (Liang & Zeger 1986, as PROC GENMOD's REPEATED statement does it): working correlation
structures, clusters, the iteration and its sums — shared by the procedure (procs/gee.py) and its score tests,
which refit restricted models (procs/gee_tests.py)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import _irls

TYPE_NAMES = {"ind": "Independent", "exch": "Exchangeable", "ar": "Autoregressive(1)", "un": "Unstructured"}
TYPE_ALIASES = {"ind": "ind", "indep": "ind", "independent": "ind", "exch": "exch", "cs": "exch",
                "exchangeable": "exch", "ar": "ar", "ar(1)": "ar", "ar1": "ar", "un": "un", "unstr": "un",
                "unstructured": "un"}
MAX_UN_POSITIONS = 100     # UN: at most this many within-subject positions (and fewer than the clusters)


def corr_type(name: str) -> str:
    key = TYPE_ALIASES.get(str(name).lower().replace(" ", ""))
    if key is None:
        raise StatgridError(f"TYPE={name} is not a working correlation statgrid's GEE has; use IND, EXCH (CS), "
                            "AR(1) or UN.")
    return key


@dataclass
class Clusters:
    """Row indices and within-subject positions (0-based) of each cluster, grouped by position pattern."""
    groups: list[tuple[np.ndarray, np.ndarray]]   # (rows: G × m, positions: m) per pattern
    count: int
    dim: int
    sizes: np.ndarray


def _clusters(keys: list[tuple], positions: np.ndarray | None) -> Clusters:
    ids: dict[tuple, int] = {}
    members: list[list[int]] = []
    for i, k in enumerate(keys):
        c = ids.setdefault(k, len(ids))
        if c == len(members):
            members.append([])
        members[c].append(i)
    patterns: dict[tuple, list[list[int]]] = {}
    for rows in members:
        if positions is None:
            pos = tuple(range(len(rows)))
        else:
            order = sorted(rows, key=lambda r: positions[r])
            pos = tuple(int(positions[r]) for r in order)
            if len(set(pos)) != len(pos):
                raise StatgridError("a subject has two observations at the same WITHINSUBJECT= level; each level "
                                    "may occur once per subject (check SUBJECT= and WITHINSUBJECT=).")
            rows = order
        patterns.setdefault(pos, []).append(rows)
    groups = [(np.array(rs, dtype=np.int64), np.array(pos, dtype=np.int64)) for pos, rs in patterns.items()]
    dim = 1 + max(int(p.max()) for _, p in groups)
    return Clusters(groups, len(members), dim, np.array([len(r) for r in members]))


# ---------------------------------------------------------------------------------------------- estimators
def working_correlation(kind: str, e: np.ndarray, cl: Clusters, phi: float, p: int) -> tuple[np.ndarray, float | None]:
    """SAS's moment estimate of R (dim × dim) from the Pearson residuals e; α for EXCH and AR(1)."""
    d = cl.dim
    if kind == "ind":
        return np.eye(d), None
    if kind == "exch":
        total = pairs = 0.0
        for rows, _ in cl.groups:
            r = e[rows]
            s = r.sum(axis=1)
            total += float(np.sum((s * s - np.sum(r * r, axis=1)) / 2))
            m = rows.shape[1]
            pairs += rows.shape[0] * m * (m - 1) / 2
        alpha = total / ((pairs - p) * phi) if pairs - p > 0 else 0.0
        return np.full((d, d), alpha) + (1 - alpha) * np.eye(d), alpha
    if kind == "ar":
        total = pairs = 0.0
        for rows, pos in cl.groups:
            adj = np.nonzero(np.diff(pos) == 1)[0]
            if adj.size:
                total += float(np.sum(e[rows[:, adj]] * e[rows[:, adj + 1]]))
                pairs += rows.shape[0] * adj.size
        alpha = total / ((pairs - p) * phi) if pairs - p > 0 else 0.0
        lag = np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
        return alpha ** lag, alpha
    cross = np.zeros((d, d))
    for rows, pos in cl.groups:
        r = e[rows]
        cross[np.ix_(pos, pos)] += r.T @ r
    R = cross / ((cl.count - p) * phi)
    np.fill_diagonal(R, 1.0)
    return R, None


@dataclass
class _State:
    mu: np.ndarray
    e: np.ndarray
    phi: float
    R: np.ndarray
    alpha: float | None


def _state(X, y, w, off, beta, fam, lk, kind, cl, p) -> _State:
    mu = lk.inv(X @ beta + off)
    if fam.name == "binomial":
        mu = np.clip(mu, _irls.EPS, 1 - _irls.EPS)
    v = fam.variance(mu) / w
    e = (y - mu) / np.sqrt(v)
    n = y.size
    phi = float(np.sum(e * e) / (n - p)) if n > p else float("nan")
    R, alpha = working_correlation(kind, e, cl, phi, p)
    return _State(mu, e, phi, R, alpha)


def _sums(X, y, w, st: _State, fam, lk, cl, meat: bool):
    """M0 = Σ D'V⁻¹D, U = Σ D'V⁻¹(y − μ) and (meat) M1 = Σ D'V⁻¹rr'V⁻¹D, in batches of equal pattern."""
    k = X.shape[1]
    dmu = 1.0 / lk.deriv(st.mu)                              # ∂μ/∂η
    sd = np.sqrt(fam.variance(st.mu) / w)
    M0, U, M1 = np.zeros((k, k)), np.zeros(k), np.zeros((k, k))
    for rows, pos in cl.groups:
        Ri = st.R[np.ix_(pos, pos)]
        a = sd[rows]                                          # G × m
        V = st.phi * a[:, :, None] * Ri[None] * a[:, None, :]
        D = dmu[rows][:, :, None] * X[rows]                  # G × m × k
        r = (y - st.mu)[rows]
        rhs = np.concatenate([D, r[:, :, None]], axis=2)
        sol = np.linalg.solve(V, rhs)                         # V⁻¹[D | r]
        M0 += np.einsum("gmi,gmj->ij", D, sol[:, :, :k])
        u = np.einsum("gmi,gm->gi", D, sol[:, :, k])          # per-cluster score
        U += u.sum(axis=0)
        if meat:
            M1 += u.T @ u
    return M0, U, M1


def fit_gee(X, y, w, off, beta0, fam, lk, kind: str, cl: Clusters, maxiter: int, converge: float):
    """The GEE iterations from beta0; returns (beta, state, M0, M1, iterations)."""
    p = X.shape[1]
    beta = beta0.copy()
    for it in range(1, maxiter + 1):
        st = _state(X, y, w, off, beta, fam, lk, kind, cl, p)
        M0, U, _ = _sums(X, y, w, st, fam, lk, cl, meat=False)
        step = np.linalg.solve(M0, U)
        new = beta + step
        scale = np.where(np.abs(new) > 0.08, np.abs(new), 1.0)
        beta = new
        if not np.all(np.isfinite(beta)):
            break
        if np.max(np.abs(step) / scale, initial=0.0) < converge:
            st = _state(X, y, w, off, beta, fam, lk, kind, cl, p)
            M0, _, M1 = _sums(X, y, w, st, fam, lk, cl, meat=True)
            return beta, st, M0, M1, it
    raise StatgridError(f"the GEE iterations did not converge in {maxiter} iterations (CONVERGE={converge:g}); "
                        "raise MAXITER= in the REPEATED statement or simplify the model.")


# ---------------------------------------------------------------------------------------------- procedure
