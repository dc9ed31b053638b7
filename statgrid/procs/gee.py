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
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import _irls
from statgrid.procs import design as _design
from statgrid.procs._base import ResultTable, as_list, check_columns, procedure
from statgrid.procs.genmod import genmod as _genmod

Z95 = 1.959963984540054
from statgrid.procs._gee_core import (MAX_UN_POSITIONS, Clusters, _clusters, corr_type, fit_gee,
                                      working_correlation)


@procedure("PROCEDURE GENMOD")
def gee(s, data: str, model: str, subject: str | Sequence[str], type: str = "ind", within: str | None = None,
        dist: str = "normal", link: str | None = None, class_: str | Sequence[str] | None = None,
        trials: str | None = None, offset: str | None = None, noint: bool = False, scale: str | None = None,
        glm_maxiter: int = 50, maxiter: int = 50, converge: float = 1e-4, descending: bool = False,
        corrw: bool = False, modelse: bool = False, print: bool = True, type3: bool = False,
        type3_wald: bool = False, contrasts: Sequence | None = None, estimates: Sequence | None = None,
        data_label: str | None = None, ref: dict | None = None) -> ResultTable:
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
                     (empirical standard errors).
    data_label: the data set's name for the listing's Model Information (default: `data`'s own name).
    ref: {CLASS variable: REF= level | 'FIRST' | 'LAST'}: that level last among the variable's levels (SAS's
    CLASS var(REF=))."""
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
                 scale=scale, maxiter=glm_maxiter, descending=descending, print=False, ref=ref)
    st0 = initial.stats
    responses, effects = _design.parse_model(model, names_all, str(src), many_responses=False)
    extra = check_columns([c for c in (trials, offset) if c], names_all, "trials/offset", str(src))
    design, sql, _, _ = _design.prepare(s, src, effects, responses, classes, extra=extra, intercept=not noint,
                                        raw=[*subj, *([wcol] if wcol else [])], ref=ref)
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
        s.log.listing(gee_listing.listing(result, design, y_name, trials, data_label or str(src), corrw,
                                                 modelse))
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
