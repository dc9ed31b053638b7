"""The (restricted) likelihood of a linear mixed model with the covariance structures of _mixed_cov, its
gradient, information and Hessian, and its maximisation. V is block-diagonal: rows linked by a shared
subject (any RANDOM's or the REPEATED's) or a shared random-effect column form one block; blocks of one
size are stacked and handled together by numpy (no loop over blocks in Python).

With P = V⁻¹ − V⁻¹X C XᵀV⁻¹, C = (XᵀV⁻¹X)⁻¹ and V_k = ∂V/∂θ_k, for −2ℓ (REML; ML drops the C terms):
    −2ℓ_R = log|V| + log|XᵀV⁻¹X| + rᵀV⁻¹r + (n − p) log 2π
    ∂/∂θ_k = tr(P V_k) − yᵀP V_k P y
    E ∂²/∂θ_k∂θ_l = tr(P V_k P V_l)               (Fisher scoring's information, ×2 of ℓ's)
The observed Hessian is the central difference of the analytic gradient. The maximisation starts
from PARMS values or simple ones (half of the OLS variance to each variance), runs Fisher scoring
for SCORING= iterations, then L-BFGS-B with the parameters' bounds, then Newton-Raphson steps on
the parameters off their bounds until the gradient vanishes (SAS's Newton-Raphson, ridge-stabilised).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from statgrid.errors import StatgridError

GTOL = 1e-7              # convergence: max |gradient| of −2ℓ, relative to max(1, |−2ℓ|)… per unit of θ


@dataclass
class Group:
    idx: np.ndarray                  # (B, m) rows (engine order)
    X: np.ndarray                    # (B, m, p)
    y: np.ndarray                    # (B, m)
    g_d: list = field(default_factory=list)     # per RANDOM statement: its ∂V/∂θ_k
    r_cache: dict = field(default_factory=dict)


@dataclass
class Eval:
    m2ll: float
    beta: np.ndarray | None = None
    C: np.ndarray | None = None
    grad: np.ndarray | None = None
    info: np.ndarray | None = None
    Q: list | None = None            # per θ_k: XᵀV⁻¹V_kV⁻¹X
    py: list | None = None           # per group: V⁻¹r (B, m)
    vg_py: list | None = None        # per group: (G-side part of V) V⁻¹r, the EBLUP part of the prediction


class Model:
    def __init__(self, X: np.ndarray, y: np.ndarray, block: np.ndarray, gsides: list, rside, reml: bool):
        self.X, self.y, self.gsides, self.rside, self.reml = X, y, gsides, rside, reml
        self.n, self.p = X.shape
        self.params = [p for g in gsides for p in g.params] + list(rside.params)
        self.k_g = [len(g.params) for g in gsides]
        self.groups = self._groups(block)

    def _groups(self, block: np.ndarray) -> list[Group]:
        sizes = np.bincount(block)
        order = np.argsort(block, kind="stable")
        starts = np.r_[0, np.cumsum(sizes)[:-1]]
        out = []
        for m in np.unique(sizes[sizes > 0]):
            ids = np.flatnonzero(sizes == m)
            idx = order[starts[ids][:, None] + np.arange(m)[None, :]]
            g = Group(idx, self.X[idx], self.y[idx])
            g.g_d = [gs.prepare(idx) for gs in self.gsides]
            g.r_cache = self.rside.prepare(idx)
            out.append(g)
        return out

    def with_y(self, y: np.ndarray) -> Model:
        new = object.__new__(Model)
        new.__dict__.update(self.__dict__)
        new.y = y
        new.groups = [Group(g.idx, g.X, y[g.idx], g.g_d, g.r_cache) for g in self.groups]
        return new

    # -------------------------------------------------------------- V and its derivatives
    def _v(self, theta: np.ndarray, g: Group) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
        V, D, pos = 0.0, [], 0
        for gs, Ds, k in zip(self.gsides, g.g_d, self.k_g):
            for t, d in zip(theta[pos:pos + k], Ds):
                V = V + t * d
            D += Ds
            pos += k
        VG = V
        R, DR = self.rside.matrices(theta[pos:], g.r_cache)
        return V + R, D + list(DR), VG

    def evaluate(self, theta: np.ndarray, level: int = 0) -> Eval:
        """level 0: −2ℓ; 1: and its gradient; 2: and the information and XᵀV⁻¹V_kV⁻¹X."""
        p = self.p
        xwx, xwy, ywy, logdet = np.zeros((p, p)), np.zeros(p), 0.0, 0.0
        parts = []
        for g in self.groups:
            V, D, VG = self._v(theta, g)
            try:
                L = np.linalg.cholesky(V)
            except np.linalg.LinAlgError:
                return Eval(math.inf)
            logdet += 2.0 * float(np.sum(np.log(np.diagonal(L, axis1=1, axis2=2))))
            try:
                W = np.linalg.inv(V)
            except np.linalg.LinAlgError:     # Cholesky can pass a V that is singular in floating point
                return Eval(math.inf)
            WX, Wy = W @ g.X, np.einsum("bij,bj->bi", W, g.y)
            xwx += np.einsum("bmp,bmq->pq", g.X, WX)
            xwy += np.einsum("bmp,bm->p", g.X, Wy)
            ywy += float(np.sum(g.y * Wy))
            parts.append((W, WX, Wy, D, VG))
        try:
            Lx = np.linalg.cholesky(xwx)
        except np.linalg.LinAlgError:
            return Eval(math.inf)
        C = np.linalg.inv(xwx)
        beta = C @ xwy
        rwr = ywy - float(beta @ xwy)
        n_eff = self.n - p if self.reml else self.n
        m2ll = logdet + rwr + n_eff * math.log(2 * math.pi)
        if self.reml:
            m2ll += 2.0 * float(np.sum(np.log(np.diag(Lx))))
        ev = Eval(m2ll, beta, C)
        if level == 0:
            return ev
        K = len(self.params)
        grad = np.zeros(K)
        Q = [np.zeros((p, p)) for _ in range(K)]
        info = np.zeros((K, K))
        tr_wdwd = np.zeros((K, K))
        cross = np.zeros((K, K))
        ev.py, ev.vg_py = [], []
        for W, WX, Wy, D, VG in parts:
            py = Wy - WX @ beta
            ev.py.append(py)
            ev.vg_py.append(np.einsum("bij,bj->bi", VG, py) if not np.isscalar(VG) else np.zeros_like(py))
            A, M = [], []
            for k, Dk in enumerate(D):
                Mk = W @ Dk                                  # W V_k
                grad[k] += float(np.einsum("bii->", Mk)) - float(np.einsum("bi,bij,bj->", py, Dk, py))
                Ak = Dk @ WX                                 # V_k W X
                Q[k] += np.einsum("bmp,bmq->pq", WX, Ak)
                A.append(Ak)
                M.append(Mk)
            if level >= 2:
                for k in range(K):
                    WAk = W @ A[k]
                    for j in range(k + 1):
                        tr_wdwd[k, j] += float(np.einsum("bij,bji->", M[k], M[j]))
                        cross[k, j] += float(np.einsum("pq,pq->", C, np.einsum("bmp,bmq->pq", A[j], WAk)))
        ev.Q = Q
        if self.reml:
            grad -= np.array([float(np.sum(C * Qk)) for Qk in Q])
        ev.grad = grad
        if level >= 2:
            for k in range(K):
                for j in range(k + 1):
                    v = tr_wdwd[k, j]
                    if self.reml:
                        v += -2 * cross[k, j] + float(np.sum((C @ Q[k]) * (C @ Q[j]).T))
                    info[k, j] = info[j, k] = v
            ev.info = info
        return ev

    # -------------------------------------------------------------- Hessian
    def hessian(self, theta: np.ndarray, free: np.ndarray) -> np.ndarray:
        """Observed Hessian of −2ℓ over the free parameters: central differences of the gradient."""
        K = len(theta)
        H = np.full((K, K), np.nan)
        ks = np.flatnonzero(free)
        rows = {}
        for k in ks:
            h = 1e-4 * abs(theta[k]) if theta[k] != 0 else 1e-8 * _typical(theta, self.params, k)
            tp, tm = theta.copy(), theta.copy()
            tp[k] += h
            tm[k] -= h
            gp, gm = self.evaluate(tp, 1).grad, self.evaluate(tm, 1).grad
            if gp is None or gm is None:
                raise StatgridError("the likelihood's Hessian could not be evaluated at the estimates (V is not "
                                    "positive definite next to them); the covariance parameters are at a limit.")
            rows[k] = (gp - gm) / (2 * h)
        sub = np.array([[rows[k][j] for j in ks] for k in ks])
        sub = (sub + sub.T) / 2
        H[np.ix_(ks, ks)] = sub
        return H


def _typical(theta, params, k) -> float:
    scale = max([abs(t) for t, p in zip(theta, params) if p.variance] or [1.0])
    return scale if params[k].variance else 1.0


# ---------------------------------------------------------------------------- maximisation
def _bounds(params) -> list[tuple]:
    return [(p.lower, p.upper) for p in params]


def _clip(theta, params) -> np.ndarray:
    out = theta.copy()
    for i, p in enumerate(params):
        if p.lower is not None:
            out[i] = max(out[i], p.lower)
        if p.upper is not None:
            out[i] = min(out[i], p.upper)
    return out


def _on_bound(theta, params, tol=1e-9) -> np.ndarray:
    return np.array([p.lower is not None and p.lower == 0.0 and t <= tol * max(1.0, abs(t)) for t, p
                     in zip(theta, params)])


def maximise(model: Model, start: np.ndarray, hold: np.ndarray, scoring: int, maxiter: int,
             noiter: bool) -> tuple[np.ndarray, list[dict], bool]:
    """θ̂, the iteration history [{Iteration, Evaluations, Objective, Criterion}], converged."""
    params = model.params
    theta = _clip(np.asarray(start, float), params)
    history = []
    f0 = model.evaluate(theta).m2ll
    if not math.isfinite(f0):
        raise StatgridError("the starting covariance parameters do not give a positive definite V; give other "
                            "values in PARMS.")
    history.append({"Iteration": 0, "Evaluations": 1, "Objective": f0, "Criterion": float("nan")})
    if noiter or hold.all():
        return theta, history, True
    free = ~hold
    for it in range(scoring):            # Fisher scoring
        ev = model.evaluate(theta, 2)
        step = _solve(ev.info[np.ix_(free, free)], ev.grad[free])
        theta, f = _line(model, theta, free, -step, ev.m2ll)
        history.append({"Iteration": it + 1, "Evaluations": 1, "Objective": f, "Criterion": _crit(ev)})
    theta, used = _lbfgs(model, theta, free, maxiter)
    if used:                              # the quasi-Newton iterations as one step of the history (their count)
        ev = model.evaluate(theta, 1)
        history.append({"Iteration": len(history), "Evaluations": int(used), "Objective": ev.m2ll,
                        "Criterion": _crit(ev)})
    converged = _small_gradient(model, theta, free)
    for it in range(max(0, min(50, maxiter - used))):
        if converged:
            break
        ev = model.evaluate(theta, 1)
        act = free & ~(_on_bound(theta, params) & (ev.grad > 0))
        H = model.hessian(theta, act)[np.ix_(act, act)]
        step = _solve(H, ev.grad[act])
        theta_new, f = _line(model, theta, act, -step, ev.m2ll)
        history.append({"Iteration": len(history), "Evaluations": 1, "Objective": f, "Criterion": _crit(ev)})
        stalled = np.allclose(theta_new, theta, rtol=1e-12, atol=1e-14)
        theta = theta_new
        converged = stalled or _small_gradient(model, theta, free)
    return theta, history, converged


def _small_gradient(model, theta, free) -> bool:
    """Converged: the gradient of −2ℓ over the parameters off their bounds, each times its size, is
    below GTOL relative to −2ℓ."""
    ev = model.evaluate(theta, 1)
    act = free & ~(_on_bound(theta, model.params) & (ev.grad > 0))
    if not act.any():
        return True
    g = np.abs(ev.grad[act]) * np.maximum(np.abs(theta[act]), 1e-3)
    return bool(np.max(g) < GTOL * max(1.0, abs(ev.m2ll)))


def _crit(ev: Eval) -> float:
    return float(np.max(np.abs(ev.grad))) if ev.grad is not None else float("nan")


def _solve(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh((H + H.T) / 2)
    w = np.maximum(np.abs(w), 1e-8 * max(np.abs(w).max(initial=0.0), 1e-300))   # ridge-stabilised
    return v @ ((v.T @ g) / w)


def _line(model, theta, act, direction, f0) -> tuple[np.ndarray, float]:
    step = 1.0
    for _ in range(30):
        cand = theta.copy()
        cand[act] += step * direction
        cand = _clip(cand, model.params)
        f = model.evaluate(cand).m2ll
        if math.isfinite(f) and f <= f0 + 1e-12 * max(1.0, abs(f0)):
            return cand, f
        step /= 2
    return theta, f0


def _lbfgs(model, theta, free, maxiter) -> np.ndarray:
    from scipy.optimize import minimize
    idx = np.flatnonzero(free)
    if not idx.size:
        return theta, 0
    big = [None]

    def fun(x):
        t = theta.copy()
        t[idx] = x
        ev = model.evaluate(t, 1)
        if not math.isfinite(ev.m2ll):
            base = big[0] if big[0] is not None else 1e10
            return base + 1e6, np.zeros(len(x))
        if big[0] is None or ev.m2ll > big[0]:
            big[0] = ev.m2ll
        return ev.m2ll, ev.grad[idx]

    bounds = [_bounds(model.params)[i] for i in idx]
    res = minimize(fun, theta[idx], jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": maxiter, "ftol": 1e-15, "gtol": 1e-10, "maxcor": 20})
    out = theta.copy()
    out[idx] = res.x
    if not math.isfinite(model.evaluate(out).m2ll):
        raise StatgridError(f"the likelihood maximisation did not converge within maxiter={maxiter}; give "
                            "starting values in PARMS, raise MAXITER=, or simplify the covariance structure.")
    return out, int(res.nit)
