"""GEE: PROC GENMOD with a REPEATED statement (generalized estimating equations, Liang and Zeger 1986).

As SAS documents it (GENMOD, "Generalized Estimating Equations"): the model is fitted first as an ordinary
generalized linear model (PROC GENMOD's fit, printed as "Analysis Of Initial Parameter Estimates"); from
those estimates each iteration takes the Pearson residuals e = (y − μ)·√w/√v(μ), the dispersion
φ = Σe² / (N − p), the working correlation R(α) by SAS's moment estimators, and one scoring step
β ← β + M0⁻¹ Σ Dᵢ'Vᵢ⁻¹(yᵢ − μᵢ) with Vᵢ = φ·Aᵢ^½ Rᵢ Aᵢ^½ (Aᵢ = diag v(μ)/w) and M0 = Σ Dᵢ'Vᵢ⁻¹Dᵢ.
Convergence is SAS's CONVERGE= rule: every estimate moves by less than `converge` (relative to the
estimate where |β| > 0.08). The working correlation estimators (SAS's table, N* pairs, p parameters):
  IND  R = I;  EXCH (CS)  α = Σᵢ Σ_{j<k} eᵢⱼeᵢₖ / ((N* − p)·φ), N* = ½ Σ nᵢ(nᵢ − 1);
  AR(1)  α = Σ over adjacent positions eᵢⱼeᵢ,ⱼ₊₁ / ((K₁ − p)·φ), K₁ = the number of such pairs;
  UN  α_jk = Σᵢ eᵢⱼeᵢₖ / ((K − p)·φ), K the number of clusters.
After convergence φ and R are computed once more at the final estimates, and the standard errors are the
empirical (robust sandwich) M0⁻¹ M1 M0⁻¹, M1 = Σ Dᵢ'Vᵢ⁻¹ rᵢrᵢ' Vᵢ⁻¹Dᵢ — no small-sample factor, as SAS —
or, for MODELSE, the model-based M0⁻¹. Wald Z and 95% limits β ± z·SE.
The positions of a cluster's rows are the values of WITHINSUBJECT= (its sorted levels), else the rows'
order in the data set. Rows are held in memory (clusters are solved in batches of equal shape).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import _irls
from statgrid.procs import design as _design
from statgrid.procs._base import ResultTable, as_list, check_columns, procedure
from statgrid.procs.genmod import genmod as _genmod

Z95 = 1.959963984540054
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
@procedure("PROCEDURE GENMOD")
def gee(s, data: str, model: str, subject: str | Sequence[str], type: str = "ind", within: str | None = None,
        dist: str = "normal", link: str | None = None, class_: str | Sequence[str] | None = None,
        trials: str | None = None, offset: str | None = None, noint: bool = False, scale: str | None = None,
        glm_maxiter: int = 50, maxiter: int = 50, converge: float = 1e-4, descending: bool = False,
        corrw: bool = False, modelse: bool = False, print: bool = True, type3: bool = False,
        type3_wald: bool = False, contrasts: Sequence | None = None, estimates: Sequence | None = None
        ) -> ResultTable:
    """GEE fit of 'y = effects' with clusters given by `subject` (CLASS variables; several: their
    combinations). Returns the GEE estimates (Parameter, Estimate, StdErr, LowerCL, UpperCL, Z, ProbZ)
    with empirical standard errors; `stats` has working_correlation, alpha, phi, scale, cov_empirical,
    cov_model, model_stderr, clusters, iterations, `initial` (the GLM fit, genmod's ResultTable) and the
    tests and criteria of gee_tests.py:
      qic            {qic, qicu, quasi_likelihood, trace, phi} (GEE Fit Criteria; None for negbin);
      type3=True     stats['type3']: [Source, DF, ChiSq, ProbChiSq] — generalized score tests, or Wald with
                     type3_wald=True;
      contrasts      [(label, [row {effect: [coefficients]}, …], wald)] → stats['contrasts']: [Contrast, DF,
                     ChiSq, ProbChiSq, Type 'Score'|'Wald'];
      estimates      [(label, row, alpha, exp)] → stats['estimates']: [Label, MeanEstimate, MeanLowerCL,
                     MeanUpperCL, LBetaEstimate, StdErr, Alpha, LBetaLowerCL, LBetaUpperCL, ChiSq, ProbChiSq]
                     (empirical standard errors)."""
    kind = corr_type(type)
    src = s.dataset(data)
    names_all = [c for c, _ in s.columns(src.scan_sql())]
    classes = check_columns(as_list(class_), names_all, "CLASS", str(src))
    subj = check_columns(as_list(subject), names_all, "SUBJECT=", str(src))
    wcol = check_columns([within], names_all, "WITHINSUBJECT=", str(src))[0] if within else None
    for v, role in [*((v, "SUBJECT=") for v in subj), *(((wcol, "WITHINSUBJECT="),) if wcol else ())]:
        if v not in classes:
            raise StatgridError(f"the {role} variable {v!r} must be listed in CLASS (class_=[..., {v!r}]), as "
                                "SAS requires for the REPEATED statement's effects.")
    if maxiter < 1 or not converge > 0:
        raise StatgridError(f"MAXITER={maxiter} and CONVERGE={converge} must be positive.")
    fn = getattr(_genmod, "__wrapped__", _genmod)
    initial = fn(s, data, model, dist=dist, link=link, class_=classes, trials=trials, offset=offset, noint=noint,
                 scale=scale, maxiter=glm_maxiter, descending=descending, print=False)
    st0 = initial.stats
    responses, effects = _design.parse_model(model, names_all, str(src), many_responses=False)
    extra = check_columns([c for c in (trials, offset) if c], names_all, "trials/offset", str(src))
    design, sql, _, _ = _design.prepare(s, src, effects, responses, classes, extra=extra, intercept=not noint,
                                        raw=[*subj, *([wcol] if wcol else [])])
    table = s.fetch_arrow(sql)
    y_name = responses[0]
    tail = [y_name, *([trials] if trials else []), *([offset] if offset else [])]
    M = design.matrix(table, tail)
    p_all = design.width
    X, y = M[:, :p_all], M[:, p_all]
    w = M[:, p_all + 1] if trials else np.ones(y.size)
    off = M[:, -1] if offset else np.zeros(y.size)
    if trials:
        y = y / w
    elif st0["dist"] == "binomial" and str(st0.get("modeled", "")).endswith("= 0"):
        y = 1.0 - y
    kept = [j for j in range(p_all) if initial.rows[j][1] == 1]
    beta0 = np.array([initial.rows[j][2] for j in kept], dtype=float)
    cl = _clusters(_keys(table, subj), _positions(s, sql, table, wcol))
    _check_clusters(kind, cl, len(kept), subj)
    fam = _irls.Family(st0["dist"], _irls.FAMILIES[st0["dist"]], alpha=st0.get("alpha") or 0.0)
    lk = _irls.link(st0["link"], fam)
    beta, st, M0, M1, iters = fit_gee(X[:, kept], y, w, off, beta0, fam, lk, kind, cl, maxiter, converge)
    from scipy.linalg import inv
    bread = inv(M0)
    cov_emp = bread @ M1 @ bread
    result = _result(design.column_names(), kept, beta, cov_emp, bread)
    result.stats.update({
        "type": kind, "working_correlation": st.R, "alpha": st.alpha, "phi": st.phi, "scale": math.sqrt(st.phi),
        "cov_empirical": cov_emp, "cov_model": bread, "clusters": cl.count, "dim": cl.dim,
        "max_size": int(cl.sizes.max()), "min_size": int(cl.sizes.min()), "iterations": iters, "initial": initial,
        "subject": subj, "within": wcol, "n": int(y.size), "model_stderr": np.sqrt(np.diag(bread)),
        "subject_levels": cl.count, "within_levels": cl.dim if wcol else None,
        "class_levels": {c: v.to_pylist() for c, v in _design.levels_of(s, sql, [c for c in classes if c in table.column_names]).items()}})
    from statgrid.procs import gee_tests
    fitted = gee_tests.GeeFit(X, kept, y, w, off, fam, lk, kind, cl, beta, cov_emp, st.phi, design, maxiter, converge)
    result.stats.update(gee_tests.run(s, fitted, type3, type3_wald, contrasts or (), estimates or ()))
    if print:
        from statgrid.procs import gee_listing
        s.log.listing(gee_listing.listing(result, design, y_name, trials, str(src), corrw, modelse))
    return result


def _keys(table, subj: list[str]) -> list[tuple]:
    cols = [table.column(c).to_pylist() for c in subj]
    return list(zip(*cols))


def _positions(s, sql: str, table, wcol: str | None) -> np.ndarray | None:
    if wcol is None:
        return None
    levels = _design.levels_of(s, sql, [wcol])[wcol]
    import pyarrow.compute as pc
    return pc.index_in(table.column(wcol), value_set=levels).to_numpy(zero_copy_only=False).astype(np.int64)


def _check_clusters(kind: str, cl: Clusters, p: int, subj: list[str]) -> None:
    if kind == "un" and (cl.dim > MAX_UN_POSITIONS or cl.dim >= cl.count or cl.count - p <= 0):
        raise StatgridError(f"TYPE=UN has {cl.dim} within-subject positions for {cl.count} clusters "
                            f"({' * '.join(subj)}) and {p} parameters: an unstructured working correlation needs "
                            f"more clusters than positions (and more than the parameters), and at most "
                            f"{MAX_UN_POSITIONS} positions; use TYPE=EXCH or AR(1), or WITHINSUBJECT= to name "
                            "the positions.")


def _result(names: list[str], kept: list[int], beta: np.ndarray, cov: np.ndarray, bread: np.ndarray) -> ResultTable:
    from scipy.special import ndtr
    se = np.sqrt(np.diag(cov))
    where = {j: i for i, j in enumerate(kept)}
    rows = []
    for j, nm in enumerate(names):
        if j not in where:
            rows.append([nm, 0.0, 0.0, 0.0, 0.0, None, None])
            continue
        b, e = float(beta[where[j]]), float(se[where[j]])
        z = b / e if e > 0 else float("nan")
        rows.append([nm, b, e, b - Z95 * e, b + Z95 * e, z, float(2 * ndtr(-abs(z)))])
    return ResultTable(["Parameter", "Estimate", "StdErr", "LowerCL", "UpperCL", "Z", "ProbZ"], rows)


__all__ = ["gee", "fit_gee", "working_correlation", "corr_type"]
