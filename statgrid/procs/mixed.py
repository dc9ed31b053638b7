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

GLIMMIX. glimmix() fits a logistic model with a random intercept per subject with statsmodels'
BinomialBayesMixedGLM: method='vb' (variational Bayes, mean-field Gaussian approximation to the
posterior) or 'map' (posterior mode with a Laplace approximation). SAS GLIMMIX's default,
residual pseudo-likelihood (RSPL), is not available in statsmodels: the listing and the log say
which method was used and that it is not RSPL. The priors are N(0, 10²) on each fixed effect and
N(0, 1) on the log of the random-intercept standard deviation. Estimates are posterior means, their
standard errors posterior standard deviations, with normal (z) tests. The random-intercept variance
reported is exp(2m), m the posterior mean (VB) or mode (MAP) of the log standard deviation. With
MAP the joint posterior mode often collapses that variance to ~0 (a known degenerate mode, not an
estimate): that, or an optimiser that does not converge, is an error. As in SAS, the probability
modelled is that of the first ordered response level unless event= names the level ('first',
'last' or a value). The variance's standard error is the delta-method 2·v·sd(log SD). No Type 3
tests are given: VB's mean-field posterior has no correlations between fixed effects to test with.

Data come from DuckDB into pandas in memory; rows × variables × 8 bytes above MEMSIZE is an error.
Observations with a missing value in any variable the model uses are not used (as in SAS).
"""
from __future__ import annotations

import dataclasses
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import design as _design
from statgrid.procs._aliasing import split_aliased
from statgrid.procs._base import (
    ResultTable,
    as_list,
    check_columns,
    format_value,
    is_numeric,
    procedure,
    render_table,
)
from statgrid.procs.design import Effect

RANK_TOL = 1e-9         # singular values of unit-scaled columns below this count as zero (containment ranks)
BOUNDARY_TOL = 1e-6     # a variance component ≤ this · σ² is on the boundary (reported as 0)
POLISH_GTOL = 1e-8      # gradient tolerance of the polishing fit
FE_PRIOR_SD = 10.0      # GLIMMIX: prior SD of each fixed effect (logit scale)
VC_PRIOR_SD = 1.0       # GLIMMIX: prior SD of log(random-intercept SD)
SEED = 0                # GLIMMIX: statsmodels draws starting values; fixed for reproducible results
RANDOM_TYPES = ("vc", "un")
REPEATED_TYPES = ("cs",)


# ---------------------------------------------------------------------------- model specification
INTERCEPT = Effect(())                 # mixed lists the intercept as an effect (its DF, its row)


def _parse_subject(text: str | Sequence[str] | None, names: Sequence[str], dsname: str) -> tuple[list[str], str]:
    """'id', 'id(trt)', 'id*site' or a list → (columns, the name SAS would print)."""
    if text is None:
        return [], ""
    if not isinstance(text, str):
        cols = check_columns(list(text), names, "SUBJECT", dsname)
        return cols, "*".join(cols)
    token = text.strip()
    cols = check_columns([p for p in re.split(r"[*()\s]+", token) if p], names, "SUBJECT", dsname)
    if not cols:
        raise StatgridError("subject= is empty; name the subject variable, e.g. subject='id'.")
    return cols, token


# ---------------------------------------------------------------------------- design matrices
@dataclass
class Fixed:
    """The fixed-effects design of the rows used: PROC GLM's over-parameterized columns (design.py),
    those aliased (_aliasing) left out of X, and the effect coding of the Type 3 tests."""

    effects: list[Effect]               # INTERCEPT first, then the MODEL's effects
    X: np.ndarray                       # kept (non-aliased) columns of the GLM parameterization
    X_full: np.ndarray                  # every column of the GLM parameterization
    col_effect: list[int]               # per GLM column: index of its effect
    col_levels: list[dict[str, Any]]    # per GLM column: CLASS variable → level
    kept: list[int]                     # GLM columns estimated (the others are aliased, estimate 0)
    T: np.ndarray                       # GLM columns → sum-to-zero (Type III) columns
    coded_effect: list[int]             # per sum-to-zero column: index of its effect

    @property
    def n_full(self) -> int:
        return self.X_full.shape[1]

    def reordered(self, order: np.ndarray) -> Fixed:
        """The same design with its rows in `order`."""
        return dataclasses.replace(self, X=self.X[order], X_full=self.X_full[order])


def _fixed(st: Setup, memsize: int) -> Fixed:
    d = st.design
    n = len(st.df)
    if n * d.width * 8 * 3 > memsize:
        raise StatgridError(f"the fixed-effects design has {d.width} columns × {n} rows, above memsize; "
                            "drop CLASS effects with many levels or raise memsize.")
    X = d.matrix(st.table)
    kept, _ = split_aliased(np.linalg.qr(X, mode="r"))
    labels = d.column_labels()
    T, _, slices = d.coding("effect")
    coded = [0] + [i + 1 for i, sl in enumerate(slices) for _ in range(sl.start, sl.stop)]
    return Fixed([INTERCEPT, *d.effects], X[:, kept], X, [0 if i is None else i + 1 for i, _ in labels],
                 [lab for _, lab in labels], kept, T, coded)


def _rank_scaled(A: np.ndarray, ref: np.ndarray) -> int:
    """Rank of A whose columns are residuals of ref's columns: each is scaled by ‖ref_j‖ first."""
    norms = np.linalg.norm(ref, axis=0)
    ok = norms > 0
    if not ok.any() or A.shape[0] == 0:
        return 0
    sv = np.linalg.svd(A[:, ok] / norms[ok], compute_uv=False)
    return int(np.sum(sv > RANK_TOL))


# ---------------------------------------------------------------------------- subjects
@dataclass
class Blocks:
    """Rows sorted by subject: order (input row of each sorted row), group index, group starts."""
    order: np.ndarray
    gidx: np.ndarray
    starts: np.ndarray
    keys: list

    @property
    def g(self) -> int:
        return len(self.starts)

    def sums(self, a: np.ndarray) -> np.ndarray:
        return np.add.reduceat(a, self.starts, axis=0)


def _blocks(df, subject: list[str]) -> Blocks:
    if not subject:
        n = len(df)
        return Blocks(np.arange(n), np.zeros(n, dtype=int), np.array([0]), [()])
    codes = df.groupby(subject, sort=True, dropna=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
    gidx = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(sc)]))
    return Blocks(order, gidx, starts, list(range(len(starts))))


def _outer_sums(b: Blocks, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Per subject, A_iᵀB_i (g × a × b)."""
    return b.sums(A[:, :, None] * B[:, None, :])


# ---------------------------------------------------------------------------- GLS given (G, σ²)
@dataclass
class Gls:
    beta: np.ndarray
    cov: np.ndarray
    m2ll: float
    pred: np.ndarray      # conditional: Xβ + Zû (sorted order)
    blup: np.ndarray      # g × q


def _gls(y, X, Z, b: Blocks, G: np.ndarray, s2: float, reml: bool) -> Gls:
    n, p = X.shape
    q = Z.shape[1]
    Xy = np.column_stack([X, y])
    if q:
        ZtZ = _outer_sums(b, Z, Z)
        ZtXy = _outer_sums(b, Z, Xy)
        M = s2 * np.eye(q) + G @ ZtZ
        A = np.linalg.solve(M, G @ ZtXy)
        S = (Xy.T @ Xy - np.einsum("gqi,gqj->ij", ZtXy, A)) / s2
        _, logdet_m = np.linalg.slogdet(M)
        logdet_v = n * math.log(s2) + float(np.sum(logdet_m)) - b.g * q * math.log(s2)
    else:
        S = Xy.T @ Xy / s2
        logdet_v = n * math.log(s2)
    xtvx = S[:p, :p]
    L = np.linalg.cholesky(xtvx)
    cov = np.linalg.inv(L).T @ np.linalg.inv(L)
    beta = cov @ S[:p, p]
    r = y - X @ beta
    if q:
        Ztr = b.sums(Z * r[:, None])
        c = np.linalg.solve(M, (G @ Ztr[:, :, None]))[:, :, 0]
        rvr = (r @ r - float(np.sum(Ztr * c))) / s2
        u = (G @ (Ztr - (ZtZ @ c[:, :, None])[:, :, 0])[:, :, None])[:, :, 0] / s2
        pred = X @ beta + np.sum(Z * u[b.gidx], axis=1)
    else:
        rvr = (r @ r) / s2
        u = np.zeros((b.g, 0))
        pred = X @ beta
    if reml:
        m2ll = logdet_v + 2 * float(np.sum(np.log(np.diag(L)))) + rvr + (n - p) * math.log(2 * math.pi)
    else:
        m2ll = logdet_v + rvr + n * math.log(2 * math.pi)
    return Gls(beta, cov, m2ll, pred, u)


# ---------------------------------------------------------------------------- statsmodels fit
def _fit_mixedlm(y, X, Z, b: Blocks, reml: bool, maxiter: int, diagonal: bool) -> tuple[np.ndarray, float, list[str]]:
    """(G, σ²) by statsmodels MixedLM, and the warnings it gave. The columns of X and Z are scaled
    to unit root-mean-square first (G is scaled back after): the optimiser works on G/σ², and a
    slope in thousandths would otherwise leave it a badly scaled problem it may not solve. The
    optimum is unchanged (a reparameterization; REML's log|XᵀV⁻¹X| moves by a constant only)."""
    from statsmodels.regression.mixed_linear_model import MixedLM, MixedLMParams

    def rms(a):
        r = np.sqrt(np.mean(a ** 2, axis=0))
        return np.where(r > 0, r, 1.0)

    xs, zs = rms(X), rms(Z)
    q = Z.shape[1]
    free = MixedLMParams.from_components(np.ones(X.shape[1]), np.eye(q)) if diagonal and q > 1 else None
    methods = ["bfgs", "lbfgs"] if free is not None else ["bfgs", "lbfgs", "cg"]   # cg ignores free=
    model = MixedLM(y, X / xs, groups=b.gidx, exog_re=Z / zs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = model.fit(reml=reml, method=methods, maxiter=maxiter, free=free)
        except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, FloatingPointError) as exc:
            raise StatgridError(f"the mixed-model fit failed numerically ({exc}); check for a response or "
                                "random-effect variable that is constant, or too few subjects.") from None
        if not res.converged:
            raise StatgridError(f"the {'REML' if reml else 'ML'} fit did not converge within maxiter={maxiter} "
                                f"iterations of each optimiser tried ({', '.join(methods)}); raise maxiter=, "
                                "rescale the variables, or simplify the random effects.")
        # Polish: restart BFGS from the optimum with a tight tolerance and keep it if the likelihood is no
        # worse. It often stops on "precision loss" (nothing left to gain in floating point): that is
        # fine, as the first fit already met statsmodels' convergence test.
        try:
            tight = model.fit(reml=reml, method="bfgs", maxiter=max(maxiter, 50), gtol=POLISH_GTOL,
                              start_params=res.params_object, free=free)
            if np.isfinite(tight.llf) and tight.llf >= res.llf:
                tight.converged = True
                res = tight
        except (np.linalg.LinAlgError, ValueError, ZeroDivisionError, FloatingPointError):
            pass
    messages = list(dict.fromkeys(str(w.message) for w in caught))
    G = np.array(res.cov_re, dtype=float).reshape(q, q) / np.outer(zs, zs)
    return G, float(res.scale), messages


# ---------------------------------------------------------------------------- degrees of freedom
def _rank_xz(X: np.ndarray, Z: np.ndarray, b: Blocks) -> int:
    """rank [X Z] for Z block-diagonal by subject: rank Z + rank((I − P_Z) X), per subject."""
    if Z.shape[1] == 0:
        return _rank_scaled(X, X)
    ZtZ = _outer_sums(b, Z, Z)
    ZtX = _outer_sums(b, Z, X)
    ev = np.linalg.eigvalsh(ZtZ)
    rank_z = int(np.sum(ev > 1e-10 * np.maximum(ev[:, -1:], 1e-300)))
    coef = np.linalg.pinv(ZtZ, rcond=1e-10, hermitian=True) @ ZtX
    resid = X - np.einsum("nq,nqp->np", Z, coef[b.gidx])
    return rank_z + _rank_scaled(resid, X)


def _df_containment(design: Fixed, Z: np.ndarray, re_vars: list[set], b: Blocks) -> tuple[dict[int, float], int]:
    X = design.X
    ranks = [_rank_scaled(X, X)] + [_rank_xz(X, Z[:, :k + 1], b) for k in range(Z.shape[1])]
    contrib = [ranks[k + 1] - ranks[k] for k in range(Z.shape[1])]
    resid_df = X.shape[0] - ranks[-1]
    out = {}
    for i, e in enumerate(design.effects):
        found = [contrib[k] for k, vs in enumerate(re_vars) if set(e.variables) <= vs]
        out[i] = float(min(found)) if found else float(resid_df)
    return out, resid_df


def _df_between_within(design: Fixed, b: Blocks) -> tuple[dict[int, float], int]:
    X = design.X
    n = X.shape[0]
    spread = np.maximum.reduceat(X, b.starts, axis=0) - np.minimum.reduceat(X, b.starts, axis=0)
    scale = np.max(np.abs(X), axis=0)
    varies = np.any(spread > 1e-12 * np.maximum(scale, 1e-300), axis=0)        # per kept column
    kept_effect = [design.col_effect[j] for j in design.kept]
    within = {e for e, v in zip(kept_effect, varies) if v}
    between_cols = [k for k, e in enumerate(kept_effect) if e not in within]
    rank_x = _rank_scaled(X, X)
    df_between = b.g - (_rank_scaled(X[:, between_cols], X[:, between_cols]) if between_cols else 0)
    df_within = n - rank_x - df_between
    return {i: float(df_within if i in within else df_between) for i in range(len(design.effects))}, n - rank_x


# ---------------------------------------------------------------------------- tests
def _p_t(t: float, df: float) -> float:
    from scipy.special import stdtr
    return float(2 * stdtr(df, -abs(t))) if df > 0 and math.isfinite(t) else float("nan")


def _p_f(f: float, df1: float, df2: float) -> float:
    from scipy.special import fdtrc
    return float(fdtrc(df1, df2, f)) if df1 > 0 and df2 > 0 and math.isfinite(f) else float("nan")


def _wald(b: np.ndarray, C: np.ndarray) -> tuple[float, int]:
    """bᵀC⁻b and rank C (pseudo-inverse over C's non-negligible eigenvalues)."""
    w, v = np.linalg.eigh((C + C.T) / 2)
    keep = w > 1e-10 * max(w.max(initial=0.0), 1e-300)
    if not keep.any():
        return float("nan"), 0
    z = v[:, keep].T @ b
    return float(np.sum(z ** 2 / w[keep])), int(keep.sum())


def _type3(design: Fixed, beta, cov) -> tuple[list[tuple[int, float, int]], bool]:
    """[(effect index, Wald chi-square, rank)] per effect but the intercept; and whether the
    effect-coded (Type III) hypotheses could be used."""
    Xk = design.X
    Xs = design.X_full @ design.T
    s_effect = design.coded_effect
    B, *_ = np.linalg.lstsq(Xs, Xk, rcond=None)
    same_space = (Xs.shape[1] == Xk.shape[1] and _rank_scaled(Xs, Xs) == Xs.shape[1]
                  and np.linalg.norm(Xs @ B - Xk) <= 1e-8 * max(np.linalg.norm(Xk), 1e-300))
    if same_space:
        bb, C, col_eff = B @ beta, B @ cov @ B.T, s_effect
    else:
        bb, C, col_eff = beta, cov, [design.col_effect[j] for j in design.kept]
    out = []
    for i, e in enumerate(design.effects):
        if not e.variables:
            continue
        idx = [k for k, ce in enumerate(col_eff) if ce == i]
        if not idx:
            out.append((i, float("nan"), 0))
            continue
        chi, rank = _wald(bb[idx], C[np.ix_(idx, idx)])
        out.append((i, chi, rank))
    return out, same_space


# ---------------------------------------------------------------------------- shared set-up
@dataclass
class Setup:
    src: Any
    dep: str
    effects: list[Effect]
    class_vars: list[str]
    subject: list[str]
    subject_name: str
    design: Any = None        # statgrid.procs.design.Design of the MODEL effects
    sql: str = ""             # the SELECT of the rows used (design.prepare)
    table: Any = None         # those rows (Arrow)
    df: Any = None            # and as pandas
    n_read: int = 0
    levels: dict[str, list] = field(default_factory=dict)     # every CLASS variable's levels


def _setup(s, data, model, class_, subject, extra: list[str], role: str, numeric_dep: bool,
           repeated: Sequence[str] = ()) -> Setup:
    """Check the statements, and read the rows used (no missing value in any variable named, as SAS)
    into memory: rows × variables × 8 bytes above MEMSIZE is an error. extra: numeric RANDOM
    variables; repeated: the REPEATED effect's variables (any type)."""
    src = s.dataset(data)
    cols = s.columns(src.scan_sql())
    names = [c for c, _ in cols]
    types = dict(cols)
    (dep,), effects = _design.parse_model(model, names, str(src), many_responses=False)
    class_vars = check_columns(as_list(class_), names, "CLASS", str(src))
    subj, subj_name = _parse_subject(subject, names, str(src))
    extra = check_columns(extra, names, "RANDOM", str(src))
    repeated = check_columns(list(repeated), names, "REPEATED", str(src))
    if numeric_dep and not is_numeric(types[dep]):
        raise StatgridError(f"dependent variable {dep!r} in {src} is {types[dep]}, not numeric.")
    if dep in {v for e in effects for v in e.variables}:
        raise StatgridError(f"dependent variable {dep!r} is also a fixed effect in model {model!r}.")
    used = list(dict.fromkeys([dep, *[v for e in effects for v in e.variables], *class_vars, *subj, *extra,
                               *repeated]))
    n_read = s.con.sql(f"SELECT count(*) FROM ({src.scan_sql()})").fetchall()[0][0]
    need = n_read * len(used) * 8
    if need > s.options.memsize_bytes:
        raise StatgridError(f"{role} holds its data in memory: {n_read} rows × {len(used)} variables × 8 bytes = "
                            f"{need / 2**20:.1f} MiB, above memsize={s.options.memsize_bytes / 2**20:.1f} MiB; "
                            "raise memsize or fit a sample or subset of the data.")
    design, sql, where, _ = _design.prepare(s, src, effects, [dep] if numeric_dep else [], class_vars, extra=extra,
                                            raw=[*subj, *repeated, *([] if numeric_dep else [dep])])
    st = Setup(src, dep, [INTERCEPT, *effects], class_vars, subj, subj_name, design, sql)
    st.table = s.fetch_arrow(sql)
    st.df = st.table.to_pandas()[[c for c in used if c in st.table.column_names]]
    st.n_read = n_read
    if st.df.empty:
        raise StatgridError(f"{src} has no observation with every variable of the model present "
                            f"({st.n_read} read, all with a missing value); nothing to fit.")
    others = _design.levels_of(s, f"SELECT * FROM ({src.scan_sql()}) WHERE {where}",
                               [c for c in class_vars if c not in design.classes])
    st.levels = {c: design.levels[c] if c in design.levels else others[c].to_pylist() for c in class_vars}
    return st


def _solution_rows(st: Setup, design: Fixed, est, se, dfs, stat_name: str, dist) -> tuple[list[str], list[list]]:
    class_in = [v for v in st.class_vars if any(v in e.variables for e in design.effects)]
    columns = ["Effect", *class_in, "Estimate", "StdErr", *(["DF"] if dfs is not None else []), stat_name,
               "Probt" if dfs is not None else "Probz"]
    pos = {j: k for k, j in enumerate(design.kept)}
    rows = []
    for j, (ei, lab) in enumerate(zip(design.col_effect, design.col_levels)):
        e = design.effects[ei]
        levels = [format_value(lab[v]) if v in lab else "" for v in class_in]
        if j in pos:
            k = pos[j]
            t = float(est[k] / se[k]) if se[k] > 0 else float("nan")
            df_e = dfs[ei] if dfs is not None else None
            p = dist(t, df_e)
            rows.append([e.name, *levels, float(est[k]), float(se[k]), *([df_e] if dfs is not None else []), t, p])
        else:       # aliased: SAS shows 0 and missing values
            rows.append([e.name, *levels, 0.0, None, *([None] if dfs is not None else []), None, None])
    return columns, rows


def _kv(pairs: Sequence[Sequence[Any]], title: str) -> str:
    """A SAS-like two-column table without a header: label, value."""
    w = max(len(str(k)) for k, _ in pairs)
    return "\n".join([title, ""] + [f"{str(k).ljust(w)}  {format_value(v)}" for k, v in pairs]) + "\n"


def _class_table(st: Setup) -> str:
    if not st.class_vars:
        return ""
    rows = [[v, len(st.levels[v]), " ".join(format_value(x) for x in st.levels[v][:30])
             + (" ..." if len(st.levels[v]) > 30 else "")] for v in st.class_vars]
    return render_table(["Class", "Levels", "Values"], rows, title="Class Level Information")


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


# ---------------------------------------------------------------------------- GLIMMIX (binomial)
GLIMMIX_METHODS = {
    "vb": "Variational Bayes (mean-field Gaussian), statsmodels BinomialBayesMixedGLM.fit_vb",
    "map": "Posterior mode with Laplace approximation, statsmodels BinomialBayesMixedGLM.fit_map",
}


@procedure("PROCEDURE GLIMMIX")
def glimmix(s, data: str, model: str, random: str, subject: str | Sequence[str], class_: str | Sequence[str] | None = None,
            event: Any = None, method: str = "vb", print: bool = True) -> ResultTable:
    """Logistic model for a binary response with a random intercept per subject (random='intercept').
    Returns the Solution for Fixed Effects (Effect, CLASS levels, Estimate, StdErr, zValue, Probz;
    posterior mean and SD, normal tests) with `stats`: covparms, method, method_description,
    event, response_levels, n_read, n_used, subjects, iterations. event= is 'first' (SAS's default:
    the lowest ordered level), 'last' or a response value. method 'vb' or 'map' — not SAS's RSPL
    (see the module docstring)."""
    meth = method.lower()
    if meth not in GLIMMIX_METHODS:
        raise StatgridError(f"method={method!r} is not one of {', '.join(GLIMMIX_METHODS)} (SAS's RSPL "
                            "pseudo-likelihood is not available).")
    terms = as_list(random)
    if [t.lower() for t in terms] not in (["intercept"], ["int"]):
        raise StatgridError(f"random={random!r} is not supported: glimmix fits a random intercept per subject only "
                            "(random='intercept').")
    if subject is None:
        raise StatgridError("glimmix needs subject= (the unit that gets a random intercept), e.g. subject='id'.")
    st = _setup(s, data, model, class_, subject, [], "PROC GLIMMIX", numeric_dep=False)
    df = st.df
    n = len(df)
    resp = df[st.dep]
    values = _design.levels_of(s, st.sql, [st.dep])[st.dep].to_pylist()
    if len(values) != 2:
        shown = ", ".join(format_value(v) for v in values[:10]) + (" ..." if len(values) > 10 else "")
        raise StatgridError(f"response {st.dep!r} must be binary (two values) for the binomial model; found "
                            f"{len(values)} value(s): {shown}.")
    if event is None or (isinstance(event, str) and event.lower() == "first"):
        ev = values[0]
    elif isinstance(event, str) and event.lower() == "last":
        ev = values[1]
    else:
        match = [v for v in values if v == event or format_value(v) == str(event)]
        if not match:
            raise StatgridError(f"event={event!r} is not a value of {st.dep!r}; its values are "
                                f"{', '.join(format_value(v) for v in values)} (or use 'first' / 'last').")
        ev = match[0]
    b = _blocks(df, st.subject)
    if b.g < 2:
        raise StatgridError(f"subject {st.subject_name!r} has {b.g} level among the {n} observations used; a random "
                            "intercept per subject needs at least 2 subjects.")
    design = _fixed(st, s.options.memsize_bytes)
    y = (resp == ev).to_numpy(dtype=float)

    from scipy import sparse
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    codes = np.empty(n, dtype=int)
    codes[b.order] = b.gidx
    Zs = sparse.csr_array((np.ones(n), (np.arange(n), codes)), shape=(n, b.g))
    bm = BinomialBayesMixedGLM(y, design.X, Zs, np.zeros(b.g, dtype=int), vcp_p=VC_PRIOR_SD, fe_p=FE_PRIOR_SD)
    rng = np.random.default_rng(SEED)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            fit = bm.fit_vb(rng=rng) if meth == "vb" else bm.fit_map(rng=rng)
        except (np.linalg.LinAlgError, ValueError, FloatingPointError) as exc:
            raise StatgridError(f"the GLIMMIX fit ({meth}) failed numerically ({exc}); try method='vb' or check "
                                "for separation (a covariate that predicts the response perfectly).") from None
    ret = fit.optim_retvals
    nit = int(getattr(ret, "nit", 0) or 0)
    if not getattr(ret, "success", True):
        raise StatgridError(f"the GLIMMIX {meth.upper()} optimisation did not converge after {nit} iterations "
                            f"({getattr(ret, 'message', '')}); " +
                            ("use method='vb'." if meth == "map" else "rescale the covariates or simplify the model."))
    var = float(np.exp(2 * fit.vcp_mean[0]))
    var_se = float(2 * var * fit.vcp_sd[0]) if np.isfinite(fit.vcp_sd[0]) else float("nan")
    if meth == "map" and var < 1e-8:
        raise StatgridError(f"the posterior mode collapsed the random-intercept variance to {var:.3g}: the joint "
                            "mode of statsmodels' fit_map is degenerate for variance components, not an estimate; "
                            "use method='vb'.")
    est = np.asarray(fit.fe_mean, dtype=float)
    se = np.asarray(fit.fe_sd, dtype=float)
    columns, rows = _solution_rows(st, design, est, se, None, "zValue", lambda z, _df: _p_z(z))
    covparms = [{"CovParm": "Intercept", "Subject": st.subject_name, "Estimate": var, "StdErr": var_se}]
    note = (f"GLIMMIX estimation: {GLIMMIX_METHODS[meth]}; this is not SAS's default RSPL (residual "
            f"pseudo-likelihood). Priors: N(0, {FE_PRIOR_SD:g}^2) on fixed effects, N(0, {VC_PRIOR_SD:g}^2) on the "
            "log random-intercept SD.")
    s.log.note(note)
    result = ResultTable(columns, rows)
    result.stats = {"covparms": covparms, "method": meth, "method_description": GLIMMIX_METHODS[meth],
                    "event": ev, "response_levels": values, "n_read": st.n_read, "n_used": n, "subjects": b.g,
                    "iterations": nit, "dependent": st.dep, "note": note}
    if print:
        s.log.listing(_glimmix_listing(st, result, resp, note))
    return result


def _p_z(z: float) -> float:
    from scipy.special import ndtr
    return float(2 * ndtr(-abs(z))) if math.isfinite(z) else float("nan")


def _glimmix_listing(st: Setup, r: ResultTable, resp, note: str) -> str:
    x = r.stats
    info = [["Data Set", str(st.src)], ["Response Variable", st.dep], ["Response Distribution", "Binomial"],
            ["Link Function", "Logit"], ["Variance Function", "Default"], ["Variance Matrix Blocked By", st.subject_name],
            ["Estimation Technique", x["method_description"]], ["Degrees of Freedom Method", "None (z tests)"]]
    parts = ["The GLIMMIX Procedure", _kv(info, title="Model Information"), f"NOTE: {note}\n"]
    cls = _class_table(st)
    if cls:
        parts.append(cls)
    parts.append(_kv([["Number of Observations Read", x["n_read"]],
                                         ["Number of Observations Used", x["n_used"]]], title="Number of Observations"))
    counts = resp.value_counts()
    parts.append(render_table(["Ordered Value", st.dep, "Total Frequency"],
                              [[i + 1, format_value(v), int(counts.get(v, 0))] for i, v in enumerate(x["response_levels"])],
                              title="Response Profile"))
    parts.append(f"The GLIMMIX procedure is modeling the probability that {st.dep}='{format_value(x['event'])}'.\n")
    parts.append(_kv([["Subjects (Blocks in V)", x["subjects"]],
                                         ["Iterations", x["iterations"]]], title="Dimensions"))
    parts.append(render_table(["Cov Parm", "Subject", "Estimate", "Standard Error"],
                              [[c["CovParm"], c["Subject"], c["Estimate"], c["StdErr"]] for c in x["covparms"]],
                              title="Covariance Parameter Estimates"))
    parts.append(render_table(r.columns, r.rows, title="Solution for Fixed Effects (posterior mean and SD)"))
    return "\n".join(parts)
