"""PROC GLM's Type III hypotheses built from the general form of estimable functions (SAS/STAT User's Guide, "The
Four Types of Estimable Functions", Type III), for models that are not closed under marginality — `a b c d
a*b*c*d`, where a*b*c*d contains a but a*b, a*b*c … are absent. There the sum-to-zero shortcut glm.py uses (drop
the effect's columns from the effect-coded model) tests nothing (0 DF), while SAS's construction gives the
equal-weights hypothesis. The steps, over the over-parameterized columns:

  1. the estimable functions are the row space of X (here of R, X = QR);
  2. for effect F, the coefficients of every effect other than F and those containing F (the intercept too) are 0;
  3. F's functions are orthogonal to the Type III functions of every effect containing F (built first: effects with
     more CLASS variables before those they contain).

An effect F is contained in G when G has every CLASS variable of F and more, and the same continuous variables
(SAS's definition, Type II section). The sum of squares of a basis L (rows) is (Lb)'(L G L')⁻¹(Lb), b any
solution and G a generalized inverse of X'X — the same for every choice as L is estimable.
"""
from __future__ import annotations

import numpy as np


def needed(design) -> bool:
    """Whether the model has an effect coded with all its indicators beside an intercept, outside the nested
    effects glm.py codes by their own contrasts: the sum-to-zero shortcut does not give SAS's Type III there."""
    if not design.intercept:
        return False
    return any(any(full.values()) and not design.present_coded(i)
               for i, full in enumerate(design._full_coded()))


def _contains(design, big, small) -> bool:
    cb, cs = set(design.effect_classes(big)), set(design.effect_classes(small))
    cont = (lambda e: sorted(v for v in e.variables if v not in design.classes))
    return cs < cb and cont(big) == cont(small)


def _null(m: np.ndarray, tol: float) -> np.ndarray:
    """An orthonormal basis (columns) of the null space of m."""
    if m.shape[0] == 0:
        return np.eye(m.shape[1])
    _, sv, vt = np.linalg.svd(m, full_matrices=True)
    rank = int(np.sum(sv > tol))
    return vt[rank:].T


def hypotheses(R: np.ndarray, p: int, design) -> dict:
    """{effect name: (L: d × p rows of the Type III functions, G-form inverse (L G L')⁻¹)} from the R factor of
    [X | responses] (its first p columns)."""
    A = R[:, :p]
    _, sv, vt = np.linalg.svd(A, full_matrices=False)
    tol = max(A.shape) * np.finfo(float).eps * (sv[0] if sv.size else 0.0) * 1e3
    r = int(np.sum(sv > tol))
    V = vt[:r].T                                   # p × r: the estimable functions' space
    G = V @ np.diag(1.0 / sv[:r] ** 2) @ V.T       # a generalized inverse of X'X
    effects, slices = design.effects, design.slices()
    order = sorted(range(len(effects)), key=lambda i: -len(design.effect_classes(effects[i])))
    spaces: dict[int, np.ndarray] = {}
    out = {}
    for i in order:
        f = effects[i]
        zero = [0] if design.intercept else []
        for j, (e, sl) in enumerate(zip(effects, slices)):
            if j != i and not _contains(design, e, f):
                zero += list(range(sl.start, sl.stop))
        blocks = [V[zero, :]] + [spaces[j].T @ V for j in spaces if _contains(design, effects[j], f)]
        m = np.vstack(blocks) if blocks else np.zeros((0, r))
        scale = max(1.0, float(np.abs(m).max())) if m.size else 1.0
        n = _null(m, 1e-9 * scale)
        L = V @ n                                   # p × d
        if L.shape[1]:
            L, _ = np.linalg.qr(L)
        spaces[i] = L
        lg = L.T @ G @ L
        out[f.name] = (L.T, np.linalg.pinv(lg) if L.shape[1] else np.zeros((0, 0)))
    return out


def sums_of_squares(hyp: dict, R: np.ndarray, p: int, column: int) -> dict:
    """{effect name: (DF, SS)} of response `column` (its index in R after the p design columns)."""
    A = R[:, :p]
    b = np.linalg.lstsq(A, R[:, p + column], rcond=None)[0]
    out = {}
    for name, (L, inv) in hyp.items():
        h = L @ b
        out[name] = (L.shape[0], float(h @ inv @ h) if L.shape[0] else 0.0)
    return out
