"""Scores of a fitted model for every row of its input: the OUTPUT statement of PROC GLM and PROC GENMOD.

Which rows get values (as SAS): a row with every explanatory variable present and CLASS levels the fit saw is
scored; its residual statistics need the response too (a row with a missing response is scored, not fitted).
Other rows get missing values. The input is held in memory.

GLM (SAS/STAT GLM, OUTPUT statement; the formulas of REG's "Influence Statistics"), with h = x'(X'X)⁻x the
leverage from the kept columns' R⁻¹, s² the error mean square on dfe degrees of freedom and k the rank:
    P = x'b   R = y − P   STDP = s√h   STDI = s√(1+h)   STDR = s√(1−h)   STUDENT = R/STDR   H = h
    COOKD = STUDENT²·h/(k(1−h))   PRESS = R/(1−h)   RSTUDENT = R/(s₍ᵢ₎√(1−h)), s₍ᵢ₎² = ((dfe)s² − R²/(1−h))/(dfe−1)
    DFFITS = RSTUDENT·√(h/(1−h))   LCLM/UCLM = P ∓ t(1−α/2, dfe)·STDP   LCL/UCL = P ∓ t·STDI
GENMOD (SAS/STAT GENMOD, OUTPUT statement), η = x'b + offset, μ = g⁻¹(η), V̂ the estimates' covariance:
    P = μ   XBETA = η   STDXBETA = √(x'V̂x)   LOWER/UPPER = g⁻¹(η ∓ z(1−α/2)·STDXBETA)   RESRAW = y − μ
    RESCHI = √w(y − μ)/√(φV(μ)) with φ = 1 for the Poisson and binomial (the scale otherwise); for events/trials
    y is the proportion and w the trials
"""
from __future__ import annotations

from typing import Any

import numpy as np

GLM_STATISTICS = ("p", "r", "stdp", "stdi", "stdr", "student", "h", "cookd", "press", "rstudent", "dffits",
                  "lclm", "uclm", "lcl", "ucl")
GENMOD_STATISTICS = ("p", "xbeta", "stdxbeta", "lower", "upper", "resraw", "reschi")


def _usable(table, design, also: tuple[str, ...] = ()) -> np.ndarray:
    """Rows with every model variable present (and `also`) and CLASS levels the fit knows."""
    import pyarrow.compute as pc
    ok = np.ones(table.num_rows, dtype=bool)
    for v in [*design.classes, *design.continuous, *also]:
        present = pc.is_valid(table.column(v))
        if v in design.classes:
            present = pc.and_(present, pc.is_in(table.column(v), value_set=design.value_sets[v]))
        ok &= np.asarray(present.to_numpy(zero_copy_only=False), dtype=bool)
    return ok


def _number(table, name: str, rows: np.ndarray) -> np.ndarray:
    col = table.column(name).to_numpy(zero_copy_only=False)
    return np.asarray([np.nan if x is None else float(x) for x in col], dtype=float)[rows] \
        if col.dtype == object else col.astype(float)[rows]


def _append(table, columns: dict[str, np.ndarray]):
    import pyarrow as pa
    for name, values in columns.items():
        if name in table.column_names:                  # the new variable replaces an input one of its name
            table = table.drop_columns([name])
        table = table.append_column(name, pa.array(values, mask=np.isnan(values)))
    return table


def glm_scores(s, sql: str, design: Any, fits: list[tuple[str, Any]], names: dict[str, list[str]],
               alpha: float = 0.05):
    """The rows of `sql` with the statistics named (statistic → output names, one per response in MODEL order)."""
    from scipy import stats as st

    table = s.fetch_arrow(sql)
    n = table.num_rows
    ok = _usable(table, design)
    X = design.matrix(table.filter(ok)) if ok.any() else np.zeros((0, design.width))
    out: dict[str, np.ndarray] = {}
    for i, (y, fit) in enumerate(fits):
        wanted = {k: v[i] for k, v in names.items() if i < len(v)}
        if not wanted:
            continue
        k, dfe = fit.rank, fit.df_error
        s2 = fit.sse / dfe if dfe > 0 else np.nan
        sd = np.sqrt(s2)
        pred = X @ fit.estimate
        h = np.sum((X[:, fit.kept] @ fit.rinv) ** 2, axis=1) if fit.kept else np.zeros(len(pred))
        yv = _number(table, y, ok)
        r = yv - pred
        with np.errstate(divide="ignore", invalid="ignore"):
            stdr = sd * np.sqrt(1 - h)
            student = r / stdr
            s_i2 = (dfe * s2 - r ** 2 / (1 - h)) / (dfe - 1) if dfe > 1 else np.full(len(r), np.nan)
            rstudent = r / (np.sqrt(s_i2) * np.sqrt(1 - h))
            t = st.t.ppf(1 - alpha / 2, dfe) if dfe > 0 else np.nan
            got = {"p": pred, "r": r, "stdp": sd * np.sqrt(h), "stdi": sd * np.sqrt(1 + h), "stdr": stdr,
                   "student": student, "h": h, "cookd": student ** 2 * h / (k * (1 - h)), "press": r / (1 - h),
                   "rstudent": rstudent, "dffits": rstudent * np.sqrt(h / (1 - h)),
                   "lclm": pred - t * sd * np.sqrt(h), "uclm": pred + t * sd * np.sqrt(h),
                   "lcl": pred - t * sd * np.sqrt(1 + h), "ucl": pred + t * sd * np.sqrt(1 + h)}
        for stat, name in wanted.items():
            full = np.full(n, np.nan)
            full[ok] = np.where(np.isfinite(got[stat]), got[stat], np.nan)
            out[name] = full
    return _append(table, out)


def genmod_scores(s, sql: str, design: Any, fit: Any, fam: Any, link: Any, phi: float, y: str,
                  offset: str | None, names: dict[str, str], alpha: float = 0.05, trials: str | None = None,
                  flip: bool = False):
    """The rows of `sql` with GENMOD's statistics named (statistic → output name). The response as the fit saw
    it: events/trials a proportion weighted by the trials; `flip`: a binary response whose level 0 is modelled
    (SAS's default order), so the modelled indicator is 1 − y."""
    from scipy import special

    table = s.fetch_arrow(sql)
    n = table.num_rows
    ok = _usable(table, design, (offset,) if offset else ())
    out = {name: np.full(n, np.nan) for name in names.values()}
    if ok.any():
        Xk = design.matrix(table.filter(ok))[:, fit.kept]
        eta = Xk @ fit.beta[fit.kept] + (_number(table, offset, ok) if offset else 0.0)
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", Xk, fit.cov(phi), Xk), 0.0))
        z = float(special.ndtri(1 - alpha / 2))
        mu = link.inv(eta)
        yv, w = _number(table, y, ok), np.ones(int(ok.sum()))
        if trials:
            w = _number(table, trials, ok)
            with np.errstate(divide="ignore", invalid="ignore"):
                yv = yv / w
        elif flip:
            yv = 1.0 - yv
        disp = 1.0 if fam.name in ("poisson", "binomial") else phi
        with np.errstate(divide="ignore", invalid="ignore"):
            got = {"p": mu, "xbeta": eta, "stdxbeta": se, "lower": link.inv(eta - z * se),
                   "upper": link.inv(eta + z * se), "resraw": yv - mu,
                   "reschi": np.sqrt(w) * (yv - mu) / np.sqrt(disp * fam.variance(mu))}
        for stat, name in names.items():
            out[name][ok] = np.where(np.isfinite(got[stat]), got[stat], np.nan)
    return _append(table, out)
