"""PROC MIXED (linear mixed models) and a GLIMMIX-like binomial model with a random intercept.

Model. y = Xβ + Σ_j Z_j u_j + e, V = Σ_j S_j ∘ (Z_j G_j Z_jᵀ) + R: one G_j per RANDOM statement
(random='intercept x' with subject=, or randoms=[…] for several; effects may be CLASS effects and
nested, b(a); subjects may be nested, 'b(c)'; TYPE=VC or UN) and R from REPEATED (TYPE=VC, CS, AR(1),
UN, SP(SPH)/SP(EXP) with coordinates and LOCAL) — statgrid.procs._mixed_cov has the structures and
their CovParm names. The covariance parameters maximise the REML (default) or ML likelihood
(statgrid.procs._mixed_reml: analytic gradient and information, Fisher scoring for SCORING= steps,
L-BFGS-B within the bounds, Newton-Raphson to a vanishing gradient); METHOD=MIVQUE0 solves the
MIVQUE0 equations for linear structures. PARMS gives start values (HOLD= fixes some, NOITER all).
β = (XᵀV⁻¹X)⁻¹XᵀV⁻¹y with covariance (XᵀV⁻¹X)⁻¹; out= predictions are Xβ + Zû. COVTEST: standard
errors from 2H⁻¹, H the observed Hessian of −2ℓ (central differences of its analytic gradient); Wald
Z, one-sided p for a variance, two-sided otherwise. A variance at its bound 0 is reported as 0 with
SAS's note "Estimated G matrix is not positive definite" (G side). MODEL: statgrid.procs.design
(GLM parameterization, aliased columns estimate 0, as SAS). LSMEANS: statgrid.procs._mixed_lsmeans.

Fit Statistics follow SAS: −2 (Res) Log Likelihood is −2ℓ with every constant
(REML: log|V| + log|XᵀV⁻¹X| + rᵀV⁻¹r + (n−p) log 2π; ML: log|V| + rᵀV⁻¹r + n log 2π, p = rank X);
AIC = −2ℓ + 2d, AICC = −2ℓ + 2d·n*/(n*−d−1), BIC = −2ℓ + d·log(s), where d counts the covariance
parameters not on the boundary (REML) or those plus p (ML), n* = n − p (REML) or n (ML), raised to
d+2 if smaller, and s is the number of subjects (without random effects: n* for REML, n for ML).

Degrees of freedom (DF): ddfm= contain|residual|betwithin|satterthwaite|kenwardroger (statgrid.procs._mixed_ddf
for Satterthwaite's rule; statgrid.procs._mixed_kr for Kenward–Roger, whose adjusted Cov(β̂) then feeds the
standard errors, Type 3 F (scaled by λ), LSMEANS, CONTRAST and ESTIMATE); SAS's defaults otherwise. With RANDOM: containment (DDFM=CONTAIN) — for a fixed
effect A, the random effects (each random term × subject) whose variables include all of A's
variables (so the intercept is contained in every one); A gets the smallest of their rank
contributions to [X Z] (taken in order: rank[X Z₁…Z_k] − rank[X Z₁…Z_{k−1}]), or the residual
DF n − rank[X Z] if none contains it. So a between-subject factor gets the residual DF unless the
subject is written as nested in it (subject='id(trt)'), exactly as in SAS. With repeated= only:
between-within (DDFM=BW) — the residual DF n − rank X split into between-subject DF
s − rank(X_between) (X_between: the columns constant within every subject, intercept included) and
within-subject DF (the rest); an effect that changes within any subject gets the within DF
(SAS's further partition of the within DF among several within-subject CLASS effects is not
done). With neither: residual DF n − rank X. Type 3 Tests of Fixed Effects are Wald F tests,
F = b_Aᵀ Cov(b_A)⁻¹ b_A / rank, of each effect's columns in an effect-coded (sum-to-zero)
reparameterization of the same model (design.coding('effect'), glm's Type III coding), which are
SAS's Type III hypotheses when every cell of the CLASS effects is filled (a nested effect's
contrasts are among the levels present); if some cell is empty the test is of the effect's
columns in the GLM parameterization and a note says so.

CONTRAST/ESTIMATE: statgrid.procs._mixed_contrasts over the fixed effects; rows with random-effect
coefficients (SAS's | part) are predictable functions of the mixed model equations (statgrid.procs._mixed_predictable).
A non-estimable row or LS-mean has missing values (SAS prints Non-est).

GLIMMIX: statgrid.procs.glimmix (the same set-up, another model).

Data come from DuckDB into pandas in memory; rows × variables × 8 bytes above MEMSIZE is an error.
Observations with a missing value in any variable the model uses are not used (as in SAS).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import ResultTable, as_list, check_columns, procedure, render_table
from statgrid.procs import _mixed_ddf as _ddf, _mixed_kr as _kr, _mixed_lsmeans, _mixed_spec as _mspec, design as _design
from statgrid.procs._mixed_gls import _blocks, _df_between_within, _p_f, _p_t
from statgrid.procs._mixed_reml import Model, maximise
from statgrid.procs._mixed_setup import Fixed, Setup, _class_table, _fixed, _kv, _setup, _solution_rows

BOUNDARY_TOL = 1e-8     # a variance ≤ this · Var(y) is on its bound 0 (reported as 0)
DDFMS = ("contain", "residual", "betwithin", "satterthwaite", "kenwardroger")
DDFM_ALIASES = {"con": "contain", "res": "residual", "bw": "betwithin", "satterth": "satterthwaite",
                "sat": "satterthwaite", "satterthwaite": "satterthwaite", "contain": "contain",
                "residual": "residual", "betwithin": "betwithin", "kr": "kenwardroger",
                "kenwardroger": "kenwardroger", "kenward-roger": "kenwardroger"}
DDFM_LABELS = {"contain": "Containment", "residual": "Residual", "betwithin": "Between-Within",
               "satterthwaite": "Satterthwaite", "kenwardroger": "Kenward-Roger"}


def _specs(s, data, class_, random, subject, repeated, type, random_type, randoms, repeated_subject, local,
           coords) -> tuple[list, Any]:
    """RANDOM and REPEATED statements from the arguments (the old one-statement form included)."""
    src_cols = [c for c, _ in s.columns(s.dataset(data).scan_sql())]
    rep = repeated is not None and repeated is not False
    specs = list(randoms or [])
    if random:
        specs.append({"effects": random, "subject": subject, "type": random_type})
    class_list = check_columns(as_list(class_), src_cols, "CLASS", data)
    parsed = [_mspec.parse_random(sp, src_cols, data) for sp in specs]
    for r in parsed:
        for e in r.effects:
            for v in e.variables:
                if v not in class_list and v not in src_cols:
                    raise StatgridError(f"RANDOM effect variable {v!r} is not in {data}.")
    rsub = repeated_subject if repeated_subject is not None else (subject if rep and not random else None)
    if rep and rsub is None and type.lower() not in ("vc",) and not str(type).lower().startswith("sp"):
        raise StatgridError("repeated= needs subject= (the unit whose observations are correlated), e.g. "
                            "subject='id'.")
    rspec = _mspec.parse_repeated(repeated if isinstance(repeated, str) else None, rsub, type, coords, local,
                                  src_cols, data) if rep else None
    return parsed, rspec


def _check_args(method, maxiter, ddfm, subject, random, randoms, repeated) -> tuple[str, str | None]:
    method_l = method.lower()
    if method_l not in ("reml", "ml", "mivque0"):
        raise StatgridError(f"method={method!r} is not one of reml, ml, mivque0.")
    if not isinstance(maxiter, int) or maxiter < 1:
        raise StatgridError(f"maxiter={maxiter!r} must be a whole number ≥ 1.")
    dd = None
    if ddfm is not None:
        dd = DDFM_ALIASES.get(str(ddfm).lower())
        if dd is None:
            raise StatgridError(f"DDFM={str(ddfm).upper()} is not built; statgrid's PROC MIXED takes DDFM=CONTAIN, RESIDUAL, "
                                "BETWITHIN, SATTERTHWAITE or KENWARDROGER (KR).")
    if subject is not None and not (random or randoms or (repeated is not None and repeated is not False)):
        raise StatgridError("subject= needs random= or repeated=; name the random effects, e.g. random='intercept'.")
    return method_l, dd


def _start(model, parms, y_scale2: float) -> np.ndarray:
    params = model.params
    start = np.array([p.start for p in params], dtype=float)
    for i, p in enumerate(params):
        if p.name.startswith("SP("):
            start[i] = model.rside.typical_distance
    if parms is not None:
        vals = np.asarray(parms, dtype=float)
        if len(vals) != len(params):
            raise StatgridError(f"PARMS gives {len(vals)} value(s) for {len(params)} covariance parameters "
                                f"({', '.join(p.name for p in params)}); give one per parameter, in that order.")
        start = np.array([v / p.factor / y_scale2 if p.variance else v for v, p in zip(vals, params)])
    return start


def _mivque0(model: Model) -> np.ndarray:
    """MIVQUE0 (V = I in the quadratic forms): Σ_l tr(Q V_k Q V_l) θ_l = yᵀQ V_k Q y, linear structures."""
    if not all(getattr(x, "linear", False) for x in [*model.gsides, model.rside]):
        raise StatgridError("METHOD=MIVQUE0 is built for linear covariance structures (VC, CS, UN) only.")
    K = len(model.params)
    theta_i = np.array([1.0 if p.name == "Residual" or (p.name.startswith("UN(") and p.lower == 0.0
                                                        and model.rside.type == "un") else 0.0
                        for p in model.params])
    ev = model.evaluate(theta_i, 2)
    rhs = np.array([float(sum(np.einsum("bi,bij,bj->", py, d, py) for py, d in zip(ev.py, dk)))
                    for dk in _dlists(model, theta_i)])
    return np.linalg.lstsq(ev.info, rhs, rcond=None)[0][:K]


def _dlists(model, theta):
    per_k = None
    for g in model.groups:
        _, D, _ = model._v(theta, g)
        per_k = [[d] for d in D] if per_k is None else [a + [d] for a, d in zip(per_k, D)]
    return per_k


def _scaled_fit(model: Model, y_scale: float, parms, hold, noiter, scoring, maxiter, mivque0) -> tuple:
    """θ̂ in the data's units (the fit runs on y / y_scale), the history and converged."""
    sm = model.with_y(model.y / y_scale)
    s2 = y_scale ** 2
    if mivque0:
        th = _mivque0(sm)
        return np.array([t * s2 if p.variance else t for t, p in zip(th, model.params)]), [], True
    start = _start(sm, parms, s2)
    theta, hist, conv = maximise(sm, start, hold, scoring, maxiter, noiter)
    for h in hist:
        h["Objective"] += 2 * (model.n - (model.p if model.reml else 0)) * math.log(y_scale)
    return np.array([t * s2 if p.variance else t for t, p in zip(theta, model.params)]), hist, conv


def _type3_l(design: Fixed) -> tuple[list[tuple[int, np.ndarray]], bool]:
    """Per effect (not the intercept), the rows L of its Type 3 hypothesis on the kept β."""
    Xk = design.X
    Xs = design.X_full @ design.T
    B, *_ = np.linalg.lstsq(Xs, Xk, rcond=None)
    same = (Xs.shape[1] == Xk.shape[1] and np.linalg.matrix_rank(Xs) == Xs.shape[1]
            and np.linalg.norm(Xs @ B - Xk) <= 1e-8 * max(np.linalg.norm(Xk), 1e-300))
    M, col_eff = (B, design.coded_effect) if same else (np.eye(Xk.shape[1]), [design.col_effect[j]
                                                                              for j in design.kept])
    out = []
    for i, e in enumerate(design.effects):
        if e.variables:
            idx = [k for k, ce in enumerate(col_eff) if ce == i]
            out.append((i, M[idx]))
    return out, same


def _wald_f(L: np.ndarray, beta, C) -> tuple[float, int]:
    if L.shape[0] == 0:
        return float("nan"), 0
    b, Cl = L @ beta, L @ C @ L.T
    w, v = np.linalg.eigh((Cl + Cl.T) / 2)
    keep = w > 1e-10 * max(w.max(initial=0.0), 1e-300)
    if not keep.any():
        return float("nan"), 0
    z = v[:, keep].T @ b
    r = int(keep.sum())
    return float(np.sum(z ** 2 / w[keep])) / r, r


# ---------------------------------------------------------------------------- PROC MIXED
@procedure("PROCEDURE MIXED")
def mixed(s, data: str, model: str, class_: str | Sequence[str] | None = None, random: str | None = None,
          subject: str | Sequence[str] | None = None, repeated: str | bool | None = None, type: str = "cs",
          method: str = "reml", maxiter: int = 200, out: str | None = None, print: bool = True,
          random_type: str = "vc", *, randoms: Sequence[dict] | None = None,
          repeated_subject: str | None = None, local: bool = False, coords: str | None = None,
          ddfm: str | None = None, covtest: bool = False, parms: Sequence[float] | None = None,
          hold: Sequence[int] = (), noiter: bool = False, scoring: int = 0,
          lsmeans: str | Sequence[str] | None = None, lsmeans_diff: bool = False,
          contrasts: Sequence | None = None, estimates: Sequence | None = None,
          kr_information: str = "observed", ref: dict | None = None) -> ResultTable:
    """Linear mixed model. Returns the Solution for Fixed Effects (Effect, CLASS levels, Estimate,
    StdErr, DF, tValue, Probt; aliased columns have Estimate 0 and missing values) with `stats`:
    covparms [{CovParm, Subject, Estimate, and with covtest StdErr, ZValue, ProbZ}], fit, d, type3,
    ddfm, lsmeans, diffs, history, n_read, n_used, subjects, G (first RANDOM's G), sigma2, g_not_pd,
    method, cov_beta, notes. RANDOM statements: random='intercept x' with subject= and random_type=,
    or randoms=[{'effects': 'intercept', 'subject': 'b(c)', 'type': 'vc'|'un'}, …] (several);
    REPEATED: repeated=True or the repeated effect, with subject= (or repeated_subject=) and
    type='vc'|'cs'|'ar(1)'|'un'|'sp(sph)'|'sp(exp)' (coords='x y' or type='sp(sph)(x y)', local=True
    for a nugget). ddfm= contain|residual|betwithin|satterthwaite|kenwardroger (SAS's default: contain with
    RANDOM, betwithin with REPEATED only, else residual); with kenwardroger the standard errors, tests, LSMEANS,
    CONTRAST and ESTIMATE use the adjusted covariance (statgrid.procs._mixed_kr; kr_information='observed' as
    SAS, or 'expected' as R's pbkrtest). CONTRAST/ESTIMATE rows may carry random-effect coefficients (after |
    in SAS): statgrid.procs._mixed_predictable. parms= start values in CovParms order, hold= their
    1-based positions kept fixed, noiter: no iterations. scoring=n: Fisher scoring for the first n
    iterations. lsmeans='a a*b' (CLASS effects), lsmeans_diff: their pairwise differences.
    out= writes the observations used with Pred (Xβ + Zû) and Resid. ref: {CLASS variable: REF= level}, that
    level last (SAS's CLASS var(REF=)). See the module docstring."""
    method_l, dd = _check_args(method, maxiter, ddfm, subject, random, randoms, repeated)
    rnd, rspec = _specs(s, data, class_, random, subject, repeated, type, random_type, randoms,
                        repeated_subject, local, coords)
    class_list = as_list(class_)
    numeric, raw = _mspec.variables(rnd, rspec, class_list)
    st = _setup(s, data, model, class_, None, numeric, "PROC MIXED", numeric_dep=True, repeated=raw, ref=ref)
    df = st.df
    n = len(df)
    for r in rnd:
        if r.subject and df.groupby(r.subject).ngroups < 2 and not any(e.variables for e in r.effects):
            raise StatgridError(f"subject {r.subject_name!r} has 1 level among the {n} observations used; random "
                                "effects per subject need at least 2 subjects.")
    block, gsides, rside, contain = _mspec.build(df, rnd, rspec, class_list, s.options.memsize_bytes)
    design = _fixed(st, s.options.memsize_bytes)
    X = design.X
    y = df[st.dep].to_numpy(dtype=float)
    if n <= X.shape[1]:
        raise StatgridError(f"{n} observation(s) for {X.shape[1]} fixed-effect parameters leave no degrees of "
                            "freedom for the residual; use fewer effects or more data.")
    if np.ptp(y) == 0:
        raise StatgridError(f"dependent variable {st.dep!r} is constant ({y[0]:g}) in the observations used; "
                            "there is no variance to model.")
    reml = method_l != "ml"
    mdl = Model(X, y, block, gsides, rside, reml)
    rside.typical_distance = _typical_distance(mdl)
    K = len(mdl.params)
    hold_mask = np.zeros(K, dtype=bool)
    for h in hold:
        if not 1 <= int(h) <= K:
            raise StatgridError(f"HOLD={h} is not a covariance parameter's position (1 to {K}).")
        hold_mask[int(h) - 1] = True
    if (len(hold) or noiter) and parms is None:
        raise StatgridError("HOLD= and NOITER need the PARMS statement's values.")
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    y_scale = float(np.sqrt(np.sum(resid ** 2) / (n - X.shape[1]))) or 1.0
    theta, history, converged = _scaled_fit(mdl, y_scale, parms, hold_mask, noiter, scoring, maxiter,
                                            method_l == "mivque0")
    notes: list[str] = []
    if not converged:
        raise StatgridError(f"the {method_l.upper()} fit did not converge within maxiter={maxiter} iterations; "
                            "raise MAXITER=, give starting values in PARMS, or simplify the covariance structure.")
    zero = np.array([p.lower == 0.0 and p.variance and t <= BOUNDARY_TOL * y_scale ** 2
                     for t, p in zip(theta, mdl.params)])
    theta[zero] = 0.0
    ev = mdl.evaluate(theta, 2)
    if not math.isfinite(ev.m2ll):
        raise StatgridError("V is not positive definite at the estimates; give other starting values in PARMS.")
    k_g = sum(mdl.k_g)
    g_not_pd = bool(zero[:k_g].any()) or any(np.linalg.eigvalsh(g.G(theta[sum(mdl.k_g[:i]):sum(mdl.k_g[:i + 1])])
                                                                ).min() < -1e-10 for i, g in enumerate(gsides))
    free = ~zero & ~hold_mask
    factor = np.array([p.factor for p in mdl.params])
    need_h = covtest or dd in ("satterthwaite", "kenwardroger")
    H = mdl.hessian(theta, free) if need_h and free.any() else np.full((K, K), np.nan)
    A = _ddf.asymptotic_cov(np.nan_to_num(H), free) if need_h else None
    covparms = [{"CovParm": p.name, "Subject": p.subject, "Estimate": float(t * f)}
                for p, t, f in zip(mdl.params, theta, factor)]
    if covtest:
        _covtest(covparms, mdl.params, None if A is None else A * np.outer(factor, factor), free)
    p = X.shape[1]
    n_subj = len(np.unique(block)) if (gsides or rside.type != "vc") else 1
    fit_stats, d = _fit_statistics(ev.m2ll, covparms, n, p, n_subj, reml)
    if dd is None:
        dd = "contain" if gsides else ("betwithin" if rspec is not None and rspec.subject else "residual")
    dfs, resid_df = _dfs(dd, design, contain, mdl, block, df, rspec, rnd, s.options.memsize_bytes)
    dC = [ev.C @ Qk @ ev.C for Qk in ev.Q]
    row_df = (lambda L: _ddf.satterthwaite(L, ev.C, dC, A)) if dd == "satterthwaite" else None
    kr = _kr.kenward_roger(mdl, theta, ev, free, A, kr_information) if dd == "kenwardroger" else None
    C = ev.C if kr is None else kr.phi_a          # the fixed effects' covariance every table uses
    if kr is not None:
        row_df = lambda L: kr.ddf(L)[0]            # noqa: E731
    wald = _wald_f if kr is None else (lambda L, beta, _C: kr.wald_f(L, beta)[:2])
    se = np.sqrt(np.diag(C))
    sat_dfs = [row_df(np.eye(p)[k]) for k in range(p)] if row_df else None
    columns, rows = _solution_rows(st, design, ev.beta, se, dfs, "tValue", _p_t)
    if sat_dfs is not None:
        _satterthwaite_rows(rows, columns, design, sat_dfs)
    t3_l, type3_ok = _type3_l(design)
    type3 = []
    for i, L in t3_l:
        if kr is not None:
            f, rank, den = kr.wald_f(L, ev.beta)
        else:
            f, rank = _wald_f(L, ev.beta, C)
            den = row_df(L) if row_df else dfs[i]
        type3.append({"Effect": st.effects[i].name, "NumDF": rank, "DenDF": _intish(den), "FValue": f,
                      "ProbF": _p_f(f, rank, den)})
    if not type3_ok and len(st.effects) > 1:
        notes.append("Some CLASS cells are empty: Type 3 tests are of each effect's columns in the GLM "
                     "parameterization, not SAS's Type III estimable functions.")
    lsm, diffs = [], []
    if lsmeans:
        lsm_eff = _design.parse_effects(" ".join(as_list(lsmeans)), list(df.columns), "LSMEANS")
        model_effects = st.design.effects
        lsm, diffs = _mixed_lsmeans.lsmeans(st.design, design, lsm_eff, df, ev.beta, C,
                                            lambda e: dfs[model_effects.index(e) + 1], row_df, lsmeans_diff)
    con_rows, est_rows = [], []
    if contrasts or estimates:      # [(label, rows, options)], [(label, row, divisor, options)]: _mixed_contrasts
        from statgrid.procs import _mixed_predictable as _mp
        fit = _mp.Fit(st.design, design, _mixed_lsmeans._null_space(design.X_full), ev.beta, C, dfs, row_df, wald,
                      mdl, theta, ev, rnd, dd, A)
        con_rows = [_mp.contrast(fit, spec) for spec in contrasts or ()]
        est_rows = [_mp.estimate(fit, spec) for spec in estimates or ()]
    if g_not_pd:
        notes.append("Estimated G matrix is not positive definite.")
    if scoring:
        notes.append(f"SCORING={scoring}: Fisher scoring ran for the first {scoring} iteration(s), then "
                     "quasi-Newton and Newton-Raphson steps.")
    for nt in notes:
        s.log.note(nt)

    result = ResultTable(columns, rows)
    G0 = gsides[0].G(theta[:mdl.k_g[0]]) if gsides else np.zeros((0, 0))
    result.stats = {
        "covparms": covparms, "fit": fit_stats, "d": d, "type3": type3, "ddfm": DDFM_LABELS[dd],
        "residual_df": resid_df, "n_read": st.n_read, "n_used": n, "subjects": n_subj, "G": G0.tolist(),
        "sigma2": float(theta[-1] * factor[-1]), "g_not_pd": g_not_pd, "method": method_l.upper(), "cov_beta": C.tolist(),
        "notes": notes, "dependent": st.dep, "lsmeans": lsm, "diffs": diffs, "history": history,
        "contrasts": con_rows, "estimates": est_rows,
        "asycov": None if A is None else (A * np.outer(factor, factor)).tolist(), "max_obs_per_subject": int(np.bincount(block).max()),
        "columns_in_x": design.n_full, "columns_in_z": sum(g.Z.shape[1] for g in gsides),
        "columns_in_z_per_subject": gsides[0].Z.shape[1] if gsides else 0,
        "covariance_parameters": K, "se_method": "Kenward-Roger" if kr is not None else "Model-Based", "structure": _structure_name(rnd, rspec),
        "subject_effect": (rnd[0].subject_name if rnd else (rspec.subject_name if rspec else "")),
    }
    if print:
        s.log.listing(_mixed_listing(st, result))
    if out:
        _write_out(s, out, df, st.dep, mdl, ev)
    return result


def _intish(v):
    return int(v) if isinstance(v, (int, float)) and math.isfinite(v) and float(v).is_integer() else v


def _typical_distance(mdl: Model) -> float:
    """Start value of an SP range: the median distance between rows of one subject."""
    r = mdl.rside
    if r.coords is None:
        return 1.0
    ds = [g.r_cache["d"][g.r_cache["S"] > 0] for g in mdl.groups]
    d = np.concatenate([x.ravel() for x in ds]) if ds else np.zeros(0)
    d = d[d > 0]
    return float(np.median(d)) if d.size else 1.0


def _covtest(covparms, params, A, free) -> None:
    """StdErr, ZValue and ProbZ (one-sided for a variance, two-sided otherwise) from A = 2H⁻¹."""
    from scipy.stats import norm
    for i, (c, p) in enumerate(zip(covparms, params)):
        if not free[i] or A is None or A[i, i] <= 0:
            c.update(StdErr=None, ZValue=None, ProbZ=None)
            continue
        se = math.sqrt(A[i, i])
        z = c["Estimate"] / se
        pz = float(norm.sf(z)) if (p.lower == 0.0 and p.variance) else float(2 * norm.sf(abs(z)))
        c.update(StdErr=se, ZValue=z, ProbZ=pz)


def _dfs(dd, design, contain, mdl, block, df, rspec, rnd, memsize) -> tuple[dict, int]:
    n, p = design.X.shape
    if dd == "contain" and contain:
        blocks = [np.flatnonzero(block == b) for b in range(int(block.max()) + 1)]
        return _ddf.containment(design.X, design.effects, contain, blocks, memsize)
    if dd == "betwithin" or (dd == "contain" and rspec is not None and rspec.subject):
        subj = rspec.subject if rspec is not None and rspec.subject else (rnd[0].subject if rnd else [])
        if subj:
            b = _blocks(df, subj)
            out, resid = _df_between_within(design.reordered(b.order), b)
            return out, resid
    resid_df = n - p
    return {i: float(resid_df) for i in range(len(design.effects))}, resid_df


def _satterthwaite_rows(rows, columns, design, sat_dfs) -> None:
    k_df = columns.index("DF")
    pos = {j: k for k, j in enumerate(design.kept)}
    for j, row in enumerate(rows):
        if j in pos and row[k_df] is not None:
            v = sat_dfs[pos[j]]
            row[k_df] = v
            row[k_df + 2] = _p_t(row[k_df + 1], v) if row[k_df + 1] is not None else None


def _structure_name(rnd, rspec) -> str:
    names = {"vc": "Variance Components", "un": "Unstructured", "cs": "Compound Symmetry",
             "ar(1)": "Autoregressive", "sp(exp)": "Spatial Exponential", "sp(sph)": "Spatial Spherical"}
    parts = [names[r.type] for r in rnd]
    if rspec is not None:
        parts.append(names[rspec.type] + (" with nugget (LOCAL)" if rspec.local else ""))
    return ", ".join(dict.fromkeys(parts)) or "Diagonal (residual only)"


def _write_out(s, out, df, dep, mdl, ev) -> None:
    import pandas as pd
    import pyarrow as pa
    pred = mdl.X @ ev.beta
    for g, vg in zip(mdl.groups, ev.vg_py):
        pred[g.idx.ravel()] += vg.ravel()
    frame = df.copy()
    frame["Pred"] = pred
    frame["Resid"] = frame[dep].astype(float) - pred
    s.write_table(out, pa.Table.from_pandas(pd.DataFrame(frame), preserve_index=False))


def _fit_statistics(m2ll: float, covparms: list[dict], n: int, p: int, n_subjects: int, reml: bool
                    ) -> tuple[dict[str, float], int]:
    """SAS's Fit Statistics and d (see the module docstring)."""
    d_cov = sum(1 for c in covparms if c["Estimate"] != 0.0)       # those on the boundary do not count
    d = d_cov if reml else d_cov + p
    n_star = max(n - p if reml else n, d + 2)
    n_bic = n_subjects if n_subjects > 1 else (n - p if reml else n)
    return {("-2 Res Log Likelihood" if reml else "-2 Log Likelihood"): m2ll, "AIC": m2ll + 2 * d,
            "AICC": m2ll + 2 * d * n_star / (n_star - d - 1), "BIC": m2ll + d * math.log(n_bic)}, d


def _mixed_listing(st: Setup, r: ResultTable) -> str:
    x = r.stats
    info = [["Data Set", str(st.src)], ["Dependent Variable", st.dep], ["Covariance Structure", x["structure"]]]
    if x["subject_effect"]:
        info.append(["Subject Effect", x["subject_effect"]])
    info += [["Estimation Method", x["method"]], ["Residual Variance Method", "Parameter"],
             ["Fixed Effects SE Method", x["se_method"]], ["Degrees of Freedom Method", x["ddfm"]]]
    parts = ["The Mixed Procedure", _kv(info, title="Model Information")]
    cls = _class_table(st)
    if cls:
        parts.append(cls)
    dims = [["Covariance Parameters", x["covariance_parameters"]], ["Columns in X", x["columns_in_x"]],
            ["Columns in Z", x["columns_in_z"]], ["Subjects", x["subjects"]],
            ["Max Obs per Subject", x["max_obs_per_subject"]]]
    parts.append(_kv(dims, title="Dimensions"))
    parts.append(_kv([["Number of Observations Read", x["n_read"]],
                      ["Number of Observations Used", x["n_used"]],
                      ["Number of Observations Not Used", x["n_read"] - x["n_used"]]],
                     title="Number of Observations"))
    parts.append("Convergence criteria met.\n")
    for nt in x["notes"]:
        parts.append(f"NOTE: {nt}\n")
    show_subject = any(c["Subject"] for c in x["covparms"])
    test = "StdErr" in x["covparms"][0]
    cp_cols = ["Cov Parm", *(["Subject"] if show_subject else []), "Estimate",
               *(["Standard Error", "Z Value", "Pr Z"] if test else [])]
    cp_rows = [[c["CovParm"], *([c["Subject"]] if show_subject else []), c["Estimate"],
                *([c["StdErr"], c["ZValue"], c["ProbZ"]] if test else [])] for c in x["covparms"]]
    parts.append(render_table(cp_cols, cp_rows, title="Covariance Parameter Estimates"))
    parts.append(_kv([[f"{k} (Smaller is Better)" if k != next(iter(x["fit"])) else k, v]
                      for k, v in x["fit"].items()], title="Fit Statistics"))
    parts.append(render_table(r.columns, r.rows, title="Solution for Fixed Effects"))
    if x["type3"]:
        parts.append(render_table(["Effect", "Num DF", "Den DF", "F Value", "Pr > F"],
                                  [[t["Effect"], t["NumDF"], t["DenDF"], t["FValue"], t["ProbF"]] for t in x["type3"]],
                                  title="Type 3 Tests of Fixed Effects"))
    for title, rows in (("Least Squares Means", x["lsmeans"]), ("Differences of Least Squares Means", x["diffs"])):
        if rows:
            cols = list(dict.fromkeys(k for row in rows for k in row))
            parts.append(render_table(cols, [[("Non-est" if c == "Estimate" and row.get(c) is None else row.get(c, ""))
                                              for c in cols] for row in rows], title=title))
    return "\n".join(parts)
