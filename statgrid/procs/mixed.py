"""PROC MIXED (linear mixed models) and a GLIMMIX-like binomial model with a random intercept.

Model. y = Xβ + Zu + e with one block of random effects per subject: u_i ~ N(0, G), e ~ N(0, σ²I),
so V_i = Z_i G Z_iᵀ + σ²I. The covariance parameters (G, σ²) come from statsmodels' MixedLM
(REML by default, as SAS; method='ml' for maximum likelihood) on X and Z with columns scaled to unit
root-mean-square (G is scaled back), optimised with BFGS (L-BFGS and CG tried in turn if it fails),
then polished from that point with a tight gradient tolerance (gtol 1e-8), kept if its likelihood
is no worse: the optimiser's default tolerance leaves variance components off by ~1e-5 relative.
A fit that statsmodels reports as not converged is an error naming maxiter, never a result;
statsmodels' warnings are caught (warnings.catch_warnings) and judged: non-convergence is that
error, boundary/singular-covariance warnings become SAS's G-matrix note, any other becomes a NOTE.

Everything after the covariance parameters is computed here, per subject and in closed form,
from (G, σ²) as SAS does it: the GLS estimate β = (XᵀV⁻¹X)⁻¹XᵀV⁻¹y, its model-based covariance
(XᵀV⁻¹X)⁻¹ (statsmodels' own standard errors come from the joint Hessian and differ slightly),
the EBLUPs û_i = G Z_iᵀV_i⁻¹(y_i − X_iβ) and the likelihood. V_i⁻¹ is never formed: with
M_i = σ²I + G Z_iᵀZ_i, V_i⁻¹ = σ⁻²(I − Z_i M_i⁻¹ G Z_iᵀ) and |V_i| = σ^(2n_i) |M_i| / σ^(2q),
valid for a singular G, and batched over subjects with numpy (no loop over subjects in Python;
statsmodels' own optimisation does loop, and is the slow part on many subjects).

Statements. model='y = x a a*b' (fixed effects; A*B is the interaction, A|B expands to A B A*B,
@n keeps crossings of at most n variables, B(A) is B nested in A — statgrid.procs.design, the
MODEL layer glm uses too); class_ variables are classification variables, coded as SAS's GLM
parameterization: one column per level and per combination of levels (for a nested effect, per
combination present), a column that is a linear combination of the columns before it is aliased
(statgrid.procs._aliasing: estimate 0, no standard error, shown as in SAS; for a main effect that
is its last level). random='intercept x' with subject='id' (or 'id(trt)', 'id*site') gives each
subject a random intercept and slopes; random_type='vc' (SAS's default for RANDOM: independent
effects, one variance each) or 'un' (unstructured G, parameters UN(i,j)).
random='batch' without subject= (a CLASS variable) is the classic random effect of PROC MIXED's
`random batch;`, fitted as a random intercept per batch. Random effects of a CLASS variable within
subjects, several RANDOM statements and crossed effects are not supported (an error says so).
repeated= (with subject=) and type='cs' is compound symmetry, Cov(y_ij, y_ik) = CS, Var = CS +
Residual. That is the same model as a random intercept per subject when CS ≥ 0, and it is fitted
that way; SAS lets the CS estimate go negative, this implementation cannot, and a CS estimate of 0
is reported with a note saying so. Other types (ar(1), un, …) raise an error.

Covariance Parameter Estimates are named as SAS names them: the random effect ('Intercept', 'x')
with its subject for TYPE=VC, UN(i,j) for TYPE=UN, CS for REPEATED TYPE=CS, and Residual. A
variance component at the boundary (G_jj·mean(z_j²) ≤ 1e-6·σ²) is reported as 0 with SAS's note
"Estimated G matrix is not positive definite."

Fit Statistics follow SAS: −2 (Res) Log Likelihood is −2ℓ with every constant
(REML: log|V| + log|XᵀV⁻¹X| + rᵀV⁻¹r + (n−p) log 2π; ML: log|V| + rᵀV⁻¹r + n log 2π, p = rank X);
AIC = −2ℓ + 2d, AICC = −2ℓ + 2d·n*/(n*−d−1), BIC = −2ℓ + d·log(s), where d counts the covariance
parameters not on the boundary (REML) or those plus p (ML), n* = n − p (REML) or n (ML), raised to
d+2 if smaller, and s is the number of subjects (without random effects: n* for REML, n for ML).

Degrees of freedom (DF) are SAS's defaults. With random=: containment (DDFM=CONTAIN) — for a fixed
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
from statgrid.procs._mixed_gls import (_blocks, _df_between_within, _df_containment, _fit_mixedlm, _gls, _p_f, _p_t,
                                       _type3)
from statgrid.procs._mixed_setup import Setup, _class_table, _fixed, _kv, _setup, _solution_rows

BOUNDARY_TOL = 1e-6     # a variance component ≤ this · σ² is on the boundary (reported as 0)
RANDOM_TYPES = ("vc", "un")
REPEATED_TYPES = ("cs",)


def _random_spec(s, data, class_, random, subject, repeated) -> tuple[list[str], list[str], Any, bool]:
    """Random terms ('Intercept' or numeric columns), the REPEATED effect's columns, the subject=
    to use, and whether random= named a lone CLASS variable (SAS's `random batch;`)."""
    src_cols = [c for c, _ in s.columns(s.dataset(data).scan_sql())]
    re_terms: list[str] = []
    rep_var: list[str] = []
    if random:
        for t in as_list(random):
            re_terms.append("Intercept" if t.lower() in ("intercept", "int") else
                            check_columns([t], src_cols, "RANDOM", data)[0])
    if isinstance(repeated, str) and repeated.strip():
        rep_var = check_columns(as_list(repeated), src_cols, "REPEATED", data)
    class_list = check_columns(as_list(class_), src_cols, "CLASS", data)
    if random and subject is None:
        cls_terms = [t for t in re_terms if t in class_list]
        if len(re_terms) == 1 and cls_terms:
            return ["Intercept"], rep_var, cls_terms[0], True
        raise StatgridError(f"random={random!r} without subject= is supported for one CLASS variable only "
                            "(random='batch'); for random intercepts or slopes name subject=.")
    for t in re_terms:
        if t in class_list:
            raise StatgridError(f"random effect {t!r} is a CLASS variable; random effects of CLASS variables within "
                                "a subject are not supported (use random='intercept' with subject= the "
                                "combination, e.g. subject='id*" + t + "').")
    if repeated is not None and repeated is not False:
        re_terms = ["Intercept"]
    return re_terms, rep_var, subject, False


def _covparms(G: np.ndarray, s2: float, re_terms: list[str], subject_name: str, rep: bool, rtype: str,
              random_as_subject: bool) -> list[dict]:
    """Covariance Parameter Estimates with SAS's names."""
    q = G.shape[0]
    out = []
    if rep:
        out.append({"CovParm": "CS", "Subject": subject_name, "Estimate": float(G[0, 0])})
    elif q and (rtype == "vc" or q == 1):
        for j, t in enumerate(re_terms):
            out.append({"CovParm": subject_name if random_as_subject else t,
                        "Subject": "" if random_as_subject else subject_name, "Estimate": float(G[j, j])})
    elif q:
        out += [{"CovParm": f"UN({i + 1},{j + 1})", "Subject": subject_name, "Estimate": float(G[i, j])}
                for i in range(q) for j in range(i + 1)]
    out.append({"CovParm": "Residual", "Subject": "", "Estimate": s2})
    return out


def _fit_statistics(m2ll: float, covparms: list[dict], n: int, p: int, n_subjects: int, reml: bool
                    ) -> tuple[dict[str, float], int]:
    """SAS's Fit Statistics and d (see the module docstring)."""
    d_cov = sum(1 for c in covparms if c["Estimate"] != 0.0)       # those on the boundary do not count
    d = d_cov if reml else d_cov + p
    n_star = max(n - p if reml else n, d + 2)
    n_bic = n_subjects if n_subjects > 1 else (n - p if reml else n)
    return {("-2 Res Log Likelihood" if reml else "-2 Log Likelihood"): m2ll, "AIC": m2ll + 2 * d,
            "AICC": m2ll + 2 * d * n_star / (n_star - d - 1), "BIC": m2ll + d * math.log(n_bic)}, d


# ---------------------------------------------------------------------------- PROC MIXED
@procedure("PROCEDURE MIXED")
def mixed(s, data: str, model: str, class_: str | Sequence[str] | None = None, random: str | None = None,
          subject: str | Sequence[str] | None = None, repeated: str | bool | None = None, type: str = "cs",
          method: str = "reml", maxiter: int = 200, out: str | None = None, print: bool = True,
          random_type: str = "vc") -> ResultTable:
    """Linear mixed model. Returns the Solution for Fixed Effects (Effect, CLASS levels, Estimate,
    StdErr, DF, tValue, Probt; aliased columns have Estimate 0 and missing values) with `stats`:
    covparms [{CovParm, Subject, Estimate}], fit {'-2 Res Log Likelihood' (or '-2 Log Likelihood'),
    AIC, AICC, BIC}, d (parameters counted in them), type3 [{Effect, NumDF, DenDF, FValue, ProbF}],
    ddfm, n_read, n_used, subjects, G (matrix), sigma2, g_not_pd, method, cov_beta, notes.
    random='intercept x' with subject='id' (random_type 'vc' or 'un'); repeated (True or the repeated
    effect's name) with subject= and type='cs' — fitted as the equivalent random intercept (CS ≥ 0);
    random='batch' (a CLASS variable) without subject= is a random intercept per batch.
    out= writes the observations used with Pred (Xβ + Zû) and Resid. See the module docstring."""
    method_l = method.lower()
    if method_l not in ("reml", "ml"):
        raise StatgridError(f"method={method!r} is not one of reml, ml.")
    rtype = random_type.lower()
    if rtype not in RANDOM_TYPES:
        raise StatgridError(f"random_type={random_type!r} is not supported; use one of {', '.join(RANDOM_TYPES)}.")
    if not isinstance(maxiter, int) or maxiter < 1:
        raise StatgridError(f"maxiter={maxiter!r} must be a whole number ≥ 1.")
    rep = repeated is not None and repeated is not False
    if rep and type.lower() not in REPEATED_TYPES:
        raise StatgridError(f"repeated type={type!r} is not supported; supported: {', '.join(REPEATED_TYPES)} "
                            "(compound symmetry). ar(1), un and the other SAS types are not available.")
    if rep and random:
        raise StatgridError("random= and repeated= together are not supported: REPEATED TYPE=CS with a random "
                            "intercept for the same subject is not identifiable; use one of them.")
    if subject is not None and not (random or rep):
        raise StatgridError("subject= needs random= or repeated=; name the random effects, e.g. random='intercept'.")
    if rep and subject is None:
        raise StatgridError("repeated= needs subject= (the unit whose observations are correlated), e.g. subject='id'.")

    re_terms, rep_var, subj_arg, random_as_subject = _random_spec(s, data, class_, random, subject, repeated)
    st = _setup(s, data, model, class_, subj_arg, [t for t in re_terms if t != "Intercept"], "PROC MIXED",
                numeric_dep=True, repeated=rep_var)
    df = st.df
    n = len(df)
    b = _blocks(df, st.subject)
    if st.subject and b.g < 2:
        raise StatgridError(f"subject {st.subject_name!r} has {b.g} level among the {n} observations used; random "
                            "effects per subject need at least 2 subjects.")
    design = _fixed(st, s.options.memsize_bytes)
    design_sorted = design.reordered(b.order)
    X = design_sorted.X
    y = df[st.dep].to_numpy(dtype=float)[b.order]
    if n <= X.shape[1]:
        raise StatgridError(f"{n} observation(s) for {X.shape[1]} fixed-effect parameters leave no degrees of "
                            "freedom for the residual; use fewer effects or more data.")
    if np.ptp(y) == 0:
        raise StatgridError(f"dependent variable {st.dep!r} is constant ({y[0]:g}) in the observations used; "
                            "there is no variance to model.")
    Z = np.column_stack([np.ones(n) if t == "Intercept" else df[t].to_numpy(dtype=float) for t in re_terms]
                        )[b.order] if re_terms else np.zeros((n, 0))
    q = Z.shape[1]
    notes: list[str] = []
    reml = method_l == "reml"

    if q:
        G, s2, messages = _fit_mixedlm(y, X, Z, b, reml, maxiter, diagonal=(rtype == "vc" and not rep))
    else:
        messages = []
        beta0, *_ = np.linalg.lstsq(X, y, rcond=None)
        sse = float(np.sum((y - X @ beta0) ** 2))
        s2 = sse / (n - X.shape[1]) if reml else sse / n
        G = np.zeros((0, 0))
    if q and s2 <= 0:
        raise StatgridError("the residual variance is estimated as 0: the random effects fit the data exactly; "
                            "simplify the random effects.")
    # On the boundary: a component whose share of the variance, G_jj·mean(z_j²)/σ², is ≤ BOUNDARY_TOL
    # (statsmodels optimises square roots, so a zero component ends as a tiny positive number).
    zs = np.sqrt(np.mean(Z ** 2, axis=0)) if q else np.zeros(0)
    rel = G * zs[:, None] * zs[None, :] / s2
    zeroed = [j for j in range(q) if rel[j, j] <= BOUNDARY_TOL]
    for j in zeroed:
        G[j, :] = G[:, j] = rel[j, :] = rel[:, j] = 0.0
    g_not_pd = bool(q) and (bool(zeroed) or float(np.linalg.eigvalsh(rel).min()) <= BOUNDARY_TOL)
    fit = _gls(y, X, Z, b, G, s2, reml)

    covparms = _covparms(G, s2, re_terms, st.subject_name, rep, rtype, random_as_subject)
    p = X.shape[1]
    fit_stats, d = _fit_statistics(fit.m2ll, covparms, n, p, b.g if q else 1, reml)

    # degrees of freedom
    if random:
        re_vars = [set(st.subject) | ({t} if t != "Intercept" else set()) for t in re_terms]
        dfs, resid_df = _df_containment(design_sorted, Z, re_vars, b)
        ddfm = "Containment"
    elif rep:
        dfs, resid_df = _df_between_within(design_sorted, b)
        ddfm = "Between-Within"
    else:
        resid_df = n - p
        dfs = {i: float(resid_df) for i in range(len(st.effects))}
        ddfm = "Residual"
    dfs = {i: (int(v) if float(v).is_integer() else v) for i, v in dfs.items()}

    se = np.sqrt(np.diag(fit.cov))
    columns, rows = _solution_rows(st, design, fit.beta, se, dfs, "tValue", _p_t)
    t3, type3_ok = _type3(design_sorted, fit.beta, fit.cov)
    type3 = []
    for i, chi, rank in t3:
        f = chi / rank if rank else float("nan")
        type3.append({"Effect": st.effects[i].name, "NumDF": rank, "DenDF": dfs[i], "FValue": f,
                      "ProbF": _p_f(f, rank, dfs[i])})
    if not type3_ok and len(st.effects) > 1:
        notes.append("Some CLASS cells are empty: Type 3 tests are of each effect's columns in the GLM "
                      "parameterization, not SAS's Type III estimable functions.")
    if g_not_pd:
        notes.append("Estimated G matrix is not positive definite.")
        if rep:
            notes.append("The CS covariance is estimated at its bound 0: SAS's REPEATED TYPE=CS allows a negative "
                         "within-subject covariance, which this random-intercept fit cannot; SAS may differ here.")
    for msg in messages:
        low = msg.lower()
        if any(k in low for k in ("boundary", "singular", "not positive definite", "retrying", "optimization failed",
                                  "converge", "keyword arguments")):
            continue        # judged above from the estimates and the converged flag
        notes.append(f"warning during the fit: {msg}")
    for nt in notes:
        s.log.note(nt)

    result = ResultTable(columns, rows)
    result.stats = {
        "covparms": covparms, "fit": fit_stats, "d": d, "type3": type3, "ddfm": ddfm, "residual_df": resid_df,
        "n_read": st.n_read, "n_used": n, "subjects": b.g if st.subject else 1, "G": G.tolist(), "sigma2": s2,
        "g_not_pd": g_not_pd, "method": method_l.upper(), "cov_beta": fit.cov.tolist(), "notes": notes,
        "dependent": st.dep, "max_obs_per_subject": int(np.max(np.diff(np.r_[b.starts, n]))),
        "columns_in_x": design.n_full, "columns_in_z_per_subject": q, "covariance_parameters": len(covparms),
    }
    if print:
        s.log.listing(_mixed_listing(st, result, rep, rtype, q, random_as_subject))
    if out:
        import pandas as pd
        import pyarrow as pa
        pred = np.empty(n)
        pred[b.order] = fit.pred
        frame = df.copy()
        frame["Pred"] = pred
        frame["Resid"] = frame[st.dep].astype(float) - pred
        result.out = s.write_table(out, pa.Table.from_pandas(pd.DataFrame(frame), preserve_index=False))
    return result


def _mixed_listing(st: Setup, r: ResultTable, rep: bool, rtype: str, q: int, random_as_subject: bool) -> str:
    x = r.stats
    if rep:
        structure = "Compound Symmetry (fitted as a random intercept, CS >= 0)"
    elif not q:
        structure = "Diagonal (residual only)"
    elif rtype == "un" and q > 1:
        structure = "Unstructured"
    else:
        structure = "Variance Components"
    info = [["Data Set", str(st.src)], ["Dependent Variable", st.dep], ["Covariance Structure", structure]]
    if st.subject and not random_as_subject:
        info.append(["Subject Effect", st.subject_name])
    info += [["Estimation Method", x["method"]], ["Residual Variance Method", "Profile"],
             ["Fixed Effects SE Method", "Model-Based"], ["Degrees of Freedom Method", x["ddfm"]],
             ["Fitting Software", "statsmodels MixedLM (covariance parameters); GLS here"]]
    parts = ["The Mixed Procedure", _kv(info, title="Model Information")]
    cls = _class_table(st)
    if cls:
        parts.append(cls)
    dims = [["Covariance Parameters", x["covariance_parameters"]], ["Columns in X", x["columns_in_x"]],
            ["Columns in Z per Subject", x["columns_in_z_per_subject"]], ["Subjects", x["subjects"]],
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
    cp_cols = ["Cov Parm", *(["Subject"] if show_subject else []), "Estimate"]
    cp_rows = [[c["CovParm"], *([c["Subject"]] if show_subject else []), c["Estimate"]] for c in x["covparms"]]
    parts.append(render_table(cp_cols, cp_rows, title="Covariance Parameter Estimates"))
    parts.append(_kv([[f"{k} (Smaller is Better)" if k != next(iter(x["fit"])) else k, v]
                                         for k, v in x["fit"].items()], title="Fit Statistics"))
    parts.append(render_table(r.columns, r.rows, title="Solution for Fixed Effects"))
    if x["type3"]:
        parts.append(render_table(["Effect", "Num DF", "Den DF", "F Value", "Pr > F"],
                                  [[t["Effect"], t["NumDF"], t["DenDF"], t["FValue"], t["ProbF"]] for t in x["type3"]],
                                  title="Type 3 Tests of Fixed Effects"))
    return "\n".join(parts)
