"""PROC MIXED's LSMEANS: for each level (combination) of a CLASS effect, l β with l averaging the other
CLASS effects' levels equally and setting covariates to their means (statgrid.procs.design's
average_weights, as GLM's LS-means), its standard error √(l C lᵀ), t test with the model's DF
(the effect's containment/residual/between-within DF, or l's Satterthwaite DF); / DIFF adds every
pairwise difference. A level whose l is not estimable has missing values (SAS: Non-est)."""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import format_value
from statgrid.procs._mixed_gls import _p_t

ESTIMABLE_TOL = 1e-7


def _null_space(X_full: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(X_full, axis=0)
    norms = np.where(norms > 0, norms, 1.0)
    w, v = np.linalg.eigh((X_full / norms).T @ (X_full / norms))
    return (v[:, w <= 1e-9 * max(w.max(), 1e-300)].T / norms).T


def lsmeans(design, fixed, effects: list, df, beta, C, effect_df: Callable, row_df: Callable | None,
            diff: bool) -> tuple[list[dict], list[dict]]:
    """LSMeans and Diffs rows. effect_df(e) → the effect's DF; row_df(l) → a row's Satterthwaite DF."""
    null = _null_space(fixed.X_full)
    slices = design.slices()
    labels = [design.effect_labels(e) for e in design.effects]
    cov_means = {}
    for e in design.effects:
        prod = tuple(v for v in e.variables if v not in design.classes)
        if prod and prod not in cov_means:
            cov_means[prod] = float(np.mean(np.prod([df[v].to_numpy(dtype=float) for v in prod], axis=0)))
    out, diffs = [], []
    for e in effects:
        if e not in design.effects:
            raise StatgridError(f"LSMEANS effect {e.name!r} is not in the MODEL statement.")
        if any(v not in design.classes for v in e.variables):
            raise StatgridError(f"LSMEANS effect {e.name!r} has a variable that is not in CLASS; LS-means are of "
                                "CLASS effects.")
        target = design.effect_classes(e)
        Ls, rows = [], []
        for chosen in labels[design.effects.index(e)]:
            L = np.zeros(design.width)
            L[0] = 1.0
            for f, sl, lab in zip(design.effects, slices, labels):
                prod = tuple(v for v in f.variables if v not in design.classes)
                L[sl] = (cov_means[prod] if prod else 1.0) * design.average_weights(f, chosen, lab)
            ok = not null.size or np.max(np.abs(L @ null)) <= ESTIMABLE_TOL * max(1.0, np.abs(L).max())
            levels = {v: format_value(chosen[v]) for v in target}
            rows.append(_row(e.name, levels, L[fixed.kept] if ok else None, beta, C,
                             effect_df(e) if row_df is None or not ok else row_df(L[fixed.kept])))
            Ls.append((levels, L[fixed.kept] if ok else None))
        out += rows
        if diff:
            for i in range(len(Ls)):
                for j in range(i + 1, len(Ls)):
                    (li, a), (lj, b) = Ls[i], Ls[j]
                    d = None if a is None or b is None else a - b
                    lev = {**li, **{"_" + k: v for k, v in lj.items()}}
                    dfv = effect_df(e) if row_df is None or d is None else row_df(d)
                    diffs.append(_row(e.name, lev, d, beta, C, dfv))
    return out, diffs


def _row(name: str, levels: dict, L, beta, C, dfv) -> dict:
    if L is None:
        return {"Effect": name, **levels, "Estimate": None, "StdErr": None, "DF": None, "tValue": None,
                "Probt": None}
    est = float(L @ beta)
    se = math.sqrt(max(float(L @ C @ L), 0.0))
    t = est / se if se > 0 else float("nan")
    return {"Effect": name, **levels, "Estimate": est, "StdErr": se, "DF": dfv, "tValue": t, "Probt": _p_t(t, dfv)}
