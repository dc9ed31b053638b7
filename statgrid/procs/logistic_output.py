"""PROC LOGISTIC's OUTPUT statement for a binary response (SAS/STAT User's Guide, LOGISTIC: OUTPUT statement,
"Linear Predictor, Predicted Probability, and Confidence Limits"): every observation of the input with

    P=         the predicted probability of the event modelled, π̂ = g⁻¹(x'b) (the logit's: 1/(1 + e^(−x'b)))
    XBETA=     the linear predictor x'b
    STDXBETA=  its standard error √(x'V̂x), V̂ the covariance of the estimates
    LOWER=, UPPER=  the confidence limits of π̂: the inverse link of x'b ∓ z(1−α/2)·√(x'V̂x) (ALPHA=, 0.05)
and _LEVEL_, the response level whose probability P= is. As SAS, an observation with a missing response but
every explanatory variable present gets its values (it is scored, not fitted); one with a missing explanatory
variable, or a CLASS level the fit did not see, gets missing values.
The input is held in memory (one BY group at a time).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from statgrid.procs._irls import special

STATISTICS = ("p", "xbeta", "stdxbeta", "lower", "upper")


def scored(s, sql: str, design: Any, T: np.ndarray, fit: Any, event: Any, names: dict, alpha: float = 0.05,
           inv: Any = None):
    """The rows of `sql` as an Arrow table with the requested statistics appended (names: statistic →
    output variable) and _LEVEL_ (the event level); `inv` the inverse link (the logit's by default: LINK=PROBIT
    and CLOGLOG score through their own)."""
    inv = inv or special.expit
    import pyarrow as pa
    import pyarrow.compute as pc

    table = s.fetch_arrow(sql)
    n = table.num_rows
    ok = np.ones(n, dtype=bool)
    for v in [*design.classes, *design.continuous]:
        col = table.column(v)
        present = pc.is_valid(col)
        if v in design.classes:
            present = pc.and_(present, pc.is_in(col, value_set=design.value_sets[v]))
        ok &= np.asarray(present.to_numpy(zero_copy_only=False), dtype=bool)
    values = {k: np.full(n, np.nan) for k in STATISTICS}
    if ok.any():
        sub = table.filter(pa.array(ok))
        Xk = (design.matrix(sub) @ T)[:, fit.kept]
        eta = Xk @ fit.beta[fit.kept]
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", Xk, fit.cov(), Xk), 0.0))
        z = float(special.ndtri(1 - alpha / 2))
        got = {"p": inv(eta), "xbeta": eta, "stdxbeta": se, "lower": inv(eta - z * se), "upper": inv(eta + z * se)}
        for k in STATISTICS:
            values[k][ok] = got[k]
    for k, name in names.items():
        if name in table.column_names:                 # the new variable replaces an input one of its name
            table = table.drop_columns([name])
        table = table.append_column(name, pa.array(values[k], mask=np.isnan(values[k])))
    if "_LEVEL_" in table.column_names:
        table = table.drop_columns(["_LEVEL_"])
    return table.append_column("_LEVEL_", pa.array([event] * n))
