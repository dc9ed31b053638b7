"""PROC MIXED's CONTRAST and ESTIMATE statements over the fixed effects (SAS/STAT MIXED: CONTRAST, ESTIMATE).

The L rows are PROC GLM's (glm.l_row: an effect's coefficients in the order of its levels, effects containing a
given one filled in), over the GLM parameterization, then taken on the columns MIXED estimates. A row with a part
in the null space of X is not estimable ("Non-est": missing values). The denominator degrees of freedom: DF= when
given; with DDFM=SATTERTHWAITE the row's (ESTIMATE) or the L matrix's (CONTRAST) own; otherwise, as SAS says,
those of the Tests of Fixed Effects for the final effect listed in the statement (the intercept's: the residual
DF of the method). CONTRAST: F = (Lβ)'(LCL')⁻(Lβ)/rank; ESTIMATE: Lβ/divisor, its standard error √(LCL')/divisor,
t, and with CL the (1−ALPHA) limits.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from scipy import stats as st

ESTIMABLE_TOL = 1e-6


def _final_effect_df(design, row: dict, dfs: list) -> float:
    """The DF of the Tests of Fixed Effects for the last effect named in the row (dfs[0]: the intercept's)."""
    names = [e.name.upper() for e in design.effects]
    last = list(row)[-1].upper() if row else "INTERCEPT"
    return float(dfs[names.index(last) + 1]) if last in names else float(dfs[0])


def _estimable(L_full: np.ndarray, null: np.ndarray) -> bool:
    return not null.size or float(np.max(np.abs(L_full @ null))) <= ESTIMABLE_TOL * max(1.0, float(np.abs(L_full).max()))


def contrasts(design, fixed, l_row: Callable, null: np.ndarray, beta: np.ndarray, C: np.ndarray, dfs: list,
              row_df: Callable | None, wald: Callable, specs: Sequence) -> list[dict]:
    out = []
    for label, rows, opts in specs:
        L_full = np.array([l_row(design, r) for r in rows])
        if not all(_estimable(r, null) for r in L_full):
            out.append({"Label": label, "NumDF": None, "DenDF": None, "FValue": None, "ProbF": None})
            continue
        L = L_full[:, fixed.kept]
        f, rank = wald(L, beta, C)
        den = float(opts["DF"]) if "DF" in opts else (row_df(L) if row_df else _final_effect_df(design, rows[-1], dfs))
        p = float(st.f.sf(f, rank, den)) if rank and f == f and den > 0 else None
        out.append({"Label": label, "NumDF": rank, "DenDF": den, "FValue": f, "ProbF": p})
    return out


def estimates(design, fixed, l_row: Callable, null: np.ndarray, beta: np.ndarray, C: np.ndarray, dfs: list,
              row_df: Callable | None, specs: Sequence) -> list[dict]:
    out = []
    for label, row, divisor, opts in specs:
        L_full = l_row(design, row) / float(divisor or 1.0)
        rec: dict[str, Any] = {"Label": label, "Estimate": None, "StdErr": None, "DF": None, "tValue": None,
                               "Probt": None}
        if opts.get("CL"):
            rec.update({"Alpha": float(opts.get("ALPHA", 0.05)), "Lower": None, "Upper": None})
        if not _estimable(L_full, null):
            out.append(rec)
            continue
        L = L_full[fixed.kept]
        est, se = float(L @ beta), float(np.sqrt(max(float(L @ C @ L), 0.0)))
        df = float(opts["DF"]) if "DF" in opts else (row_df(L) if row_df else _final_effect_df(design, row, dfs))
        t = est / se if se > 0 else float("nan")
        rec.update({"Estimate": est, "StdErr": se, "DF": df, "tValue": t,
                    "Probt": float(2 * st.t.sf(abs(t), df)) if t == t and df > 0 else None})
        if opts.get("CL"):
            half = float(st.t.ppf(1 - rec["Alpha"] / 2, df)) * se
            rec.update({"Lower": est - half, "Upper": est + half})
        out.append(rec)
    return out
