"""PROC MIXED's CONTRAST and ESTIMATE rows with random-effect coefficients (SAS: the part after |): predictable
functions Kβ + Mu of the mixed model equations (Henderson; SAS/STAT MIXED, CONTRAST statement: L' = (K' M'),
φ' = (β' γ')). Rows without a random part go to statgrid.procs._mixed_contrasts unchanged.

The coefficients of a random effect follow the order of its levels in its RANDOM statement's Z (as the fixed
part's follow the MODEL's); too many is an error, too few are padded with 0. With SUBJECT= on that RANDOM
statement, M repeats the coefficients for each subject weighted by the SUBJECT option's coefficients (in the
subjects' sorted order, missing trailing ones 0), or by 1/s for each of the s subjects without it (SAS: the
coefficients are distributed equally across subjects).

With z = Z G Mᵀ (n × r, one column per row), V⁻¹r the GLS residuals' V⁻¹ (r = y − Xβ̂), Φ = Cov(β̂) (the
KR-adjusted one under DDFM=KR) and H = XᵀV⁻¹z:
    estimate     Kβ̂ + Mû = Kβ̂ + zᵀV⁻¹r                                  (û = G ZᵀV⁻¹r, the BLUP)
    Var(L'φ̂ − L'φ) = KΦKᵀ − KΦH − (KΦH)ᵀ + MGMᵀ − zᵀV⁻¹z + HᵀΦH             (the prediction error variance:
                                                                        [K M] C [K M]ᵀ, C the inverse of the
                                                                        mixed model equations' matrix)
The DF: DF= when given; under DDFM=SATTERTHWAITE Satterthwaite's rule on the prediction error variance (its
gradient in θ by central differences); under DDFM=KENWARDROGER DF= is needed (not built); else the Tests of Fixed
Effects' for the final fixed effect listed (the intercept's if none).
Non-estimable fixed part: no values (the listing shows Non-est).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
from scipy import stats as sst

from statgrid.errors import StatgridError
from statgrid.procs import _mixed_contrasts as _mc

INTERCEPT_NAMES = ("INTERCEPT", "INT")


@dataclass
class Fit:
    """What the CONTRAST/ESTIMATE rows of one fit need."""
    design: Any                  # statgrid.procs.design.Design of the MODEL
    fixed: Any                   # _mixed_setup.Fixed
    null: np.ndarray             # null space of the GLM columns (estimability)
    beta: np.ndarray
    C: np.ndarray                # Cov(β̂) used by the tables (KR-adjusted under DDFM=KR)
    dfs: dict
    row_df: Callable | None      # Satterthwaite's or KR's DF of an L (None: the effects' DF)
    wald: Callable               # (L, β, C) → (F, rank)
    model: Any                   # _mixed_reml.Model
    theta: np.ndarray
    ev: Any                      # model.evaluate(θ̂, 2)
    randoms: list                # _mixed_spec.RandomSpec per RANDOM statement
    ddfm: str
    A: np.ndarray | None = None  # asymptotic covariance of θ̂ (DDFM=SATTERTHWAITE)


def _l_row(fit: Fit, row: dict) -> np.ndarray:
    """The fixed part's L row over the GLM columns (PROC GLM's rules)."""
    return glm_l()(fit.design, row)


def contrast(fit: Fit, spec) -> dict:
    label, rows, opts = spec
    rand = opts.get("RANDOM")
    if not rand or not any(rand):
        return _mc.contrasts(fit.design, fit.fixed, glm_l(), fit.null, fit.beta, fit.C, fit.dfs, fit.row_df,
                             fit.wald, [spec])[0]
    _check(fit, rand, opts.get("SUBJECT"))
    L_full = np.array([_l_row(fit, r) for r in rows])
    out = {"Label": label, "NumDF": None, "DenDF": None, "FValue": None, "ProbF": None}
    if not all(_mc._estimable(r, fit.null) for r in L_full):
        return out
    est, var = _predict(fit, L_full[:, fit.fixed.kept], rand, opts.get("SUBJECT"))
    w, v = np.linalg.eigh((var + var.T) / 2)
    keep = w > 1e-10 * max(w.max(initial=0.0), 1e-300)
    rank = int(keep.sum())
    f = float(np.sum((v[:, keep].T @ est) ** 2 / w[keep])) / rank if rank else float("nan")
    den = _df(fit, opts, rows[-1], lambda f: _predict(f, L_full[:, fit.fixed.kept], rand, opts.get("SUBJECT"))[1])
    p = float(sst.f.sf(f, rank, den)) if rank and f == f and den > 0 else None
    out.update({"NumDF": rank, "DenDF": den, "FValue": f, "ProbF": p})
    return out


def estimate(fit: Fit, spec) -> dict:
    label, row, divisor, opts = spec
    rand = opts.get("RANDOM")
    if not rand:
        return _mc.estimates(fit.design, fit.fixed, glm_l(), fit.null, fit.beta, fit.C, fit.dfs, fit.row_df,
                             [spec])[0]
    _check(fit, [rand], opts.get("SUBJECT"))
    d = float(divisor or 1.0)
    L_full = _l_row(fit, row) / d
    rec: dict[str, Any] = {"Label": label, "Estimate": None, "StdErr": None, "DF": None, "tValue": None,
                           "Probt": None}
    if opts.get("CL"):
        rec.update({"Alpha": float(opts.get("ALPHA", 0.05)), "Lower": None, "Upper": None})
    if not _mc._estimable(L_full, fit.null):
        return rec
    scaled = {k: [x / d for x in v] for k, v in rand.items()}
    est_v, var = _predict(fit, L_full[fit.fixed.kept][None, :], [scaled], opts.get("SUBJECT"))
    est, se = float(est_v[0]), float(np.sqrt(max(float(var[0, 0]), 0.0)))
    df = _df(fit, opts, row, lambda f: _predict(f, L_full[fit.fixed.kept][None, :], [scaled], opts.get("SUBJECT"))[1])
    t = est / se if se > 0 else float("nan")
    rec.update({"Estimate": est, "StdErr": se, "DF": df, "tValue": t,
                "Probt": float(2 * sst.t.sf(abs(t), df)) if t == t and df > 0 else None})
    if opts.get("CL"):
        half = float(sst.t.ppf(1 - rec["Alpha"] / 2, df)) * se
        rec.update({"Lower": est - half, "Upper": est + half})
    return rec


def glm_l() -> Callable:
    from statgrid.procs.glm import _l_row as glm_l_row
    return glm_l_row


def _df(fit: Fit, opts: dict, fixed_row: dict, variance: Callable) -> float:
    if "DF" in opts:
        return float(opts["DF"])
    if fit.ddfm == "satterthwaite" and fit.A is not None:
        return _satterthwaite(fit, variance)
    if fit.ddfm == "kenwardroger":
        raise StatgridError("DDFM=KENWARDROGER: the DF of a CONTRAST/ESTIMATE with random-effect coefficients "
                            "(after |) is not built; give it with the DF= option (e.g. / DF=10), or use "
                            "DDFM=SATTERTHWAITE, CONTAIN or RESIDUAL.")
    return _mc._final_effect_df(fit.design, fixed_row, fit.dfs)


def _satterthwaite(fit: Fit, variance: Callable) -> float:
    """Satterthwaite's DF of the rows' prediction error variance Var(θ) (r × r): its gradient in θ by central
    differences (each free θ_k moved by 10⁻⁴ of itself), then _mixed_ddf's rule — ν_m = 2 w_m²/(g_mᵀ A g_m) per
    eigenvalue w_m of Var, combined as E = Σ ν_m/(ν_m − 2), DF = 2E/(E − q)."""
    var0 = variance(fit)
    w, U = np.linalg.eigh((var0 + var0.T) / 2)
    keep = w > 1e-10 * max(w.max(initial=0.0), 1e-300)
    w, U = w[keep], U[:, keep]
    K = len(fit.theta)
    dvar = [np.zeros_like(var0) for _ in range(K)]
    for k in np.flatnonzero(np.diag(fit.A) > 0):
        h = 1e-4 * abs(fit.theta[k]) or 1e-8
        sides = []
        for sign in (1, -1):
            th = fit.theta.copy()
            th[k] += sign * h
            ev = fit.model.evaluate(th, 2)
            sides.append(variance(replace(fit, theta=th, ev=ev, beta=ev.beta, C=ev.C)))
        dvar[k] = (sides[0] - sides[1]) / (2 * h)
    nus = []
    for m in range(len(w)):
        g = np.array([float(U[:, m] @ d @ U[:, m]) for d in dvar])
        v = float(g @ fit.A @ g)
        nus.append(2 * w[m] ** 2 / v if v > 0 else float("inf"))
    if len(nus) == 1:
        return float(nus[0])
    E = sum(v / (v - 2) for v in nus if v > 2)
    q = len(nus)
    return float(2 * E / (E - q)) if E > q else float("nan")


# ---------------------------------------------------------------------------- the random part
def _locate(fit: Fit, name: str) -> tuple[int, list[int]]:
    """(RANDOM statement index, its Z columns) of random effect `name`."""
    key = name.upper()
    for j, r in enumerate(fit.randoms):
        for e, cols in zip(r.effects, fit.model.gsides[j].effect_cols):
            if (not e.variables and key in INTERCEPT_NAMES) or (e.variables and e.name.upper() == key):
                return j, cols
    known = [("Intercept" if not e.variables else e.name) for r in fit.randoms for e in r.effects]
    raise StatgridError(f"random effect {name!r} after | is not in a RANDOM statement (those: "
                        f"{', '.join(known) or 'none — add a RANDOM statement'}).")


def _check(fit: Fit, rows: list[dict], subject: list[float] | None) -> None:
    """Each random effect named is in a RANDOM statement and has no more coefficients than levels; SUBJECT no
    more coefficients than its statement has subjects."""
    for row in rows:
        for name, vals in row.items():
            j, cols = _locate(fit, name)
            if len(vals) > len(cols):
                raise StatgridError(f"random effect {name!r} has {len(cols)} levels; {len(vals)} coefficients "
                                    "were given after |.")
            s = int(fit.model.gsides[j].subject.max()) + 1
            if subject is not None and len(subject) > s:
                raise StatgridError(f"SUBJECT gives {len(subject)} coefficients; the RANDOM statement of "
                                    f"{name!r} has {s} subjects.")


def _z_columns(fit: Fit, rows: list[dict], subject: list[float] | None) -> tuple[np.ndarray, np.ndarray]:
    """z = Z G Mᵀ (n × r) and MGMᵀ (r × r) of the random parts `rows`."""
    model = fit.model
    n, r_count = model.n, len(rows)
    z = np.zeros((n, r_count))
    mgm = np.zeros((r_count, r_count))
    pos = np.cumsum([0] + model.k_g)
    for j, gs in enumerate(model.gsides):
        q = gs.Z.shape[1]
        c = np.zeros((q, r_count))
        for k, row in enumerate(rows):
            for name, vals in row.items():
                jj, cols = _locate(fit, name)
                if jj == j:
                    c[cols[:len(vals)], k] += vals
        if not c.any():
            continue
        G = gs.G(fit.theta[pos[j]:pos[j + 1]])
        s = int(gs.subject.max()) + 1
        if subject is None:
            w = np.full(s, 1.0 / s)
        else:
            w = np.zeros(s)
            w[:len(subject)] = subject
        Zu = gs.Z * gs.scale                        # the data's Z (GSide keeps it scaled)
        z += w[gs.subject][:, None] * (Zu @ (G @ c))
        mgm += float(np.sum(w ** 2)) * (c.T @ G @ c)
    return z, mgm


def _predict(fit: Fit, K: np.ndarray, rand_rows: list[dict], subject) -> tuple[np.ndarray, np.ndarray]:
    """(Kβ̂ + Mû, Var of the prediction error) for the rows."""
    z, mgm = _z_columns(fit, rand_rows, subject)
    model = fit.model
    y_z = np.zeros_like(z)                          # V⁻¹ z
    v_r = np.zeros(model.n)                         # V⁻¹ r
    for g, py in zip(model.groups, fit.ev.py):
        V, _, _ = model._v(fit.theta, g)
        y_z[g.idx] = np.linalg.solve(V, z[g.idx])
        v_r[g.idx] = py
    H = model.X.T @ y_z
    est = K @ fit.beta + z.T @ v_r
    KPH = K @ fit.C @ H
    var = K @ fit.C @ K.T - KPH - KPH.T + mgm - z.T @ y_z + H.T @ fit.C @ H
    return est, var
