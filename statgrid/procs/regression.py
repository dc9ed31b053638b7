"""PROC REG: ordinary least squares by a numerically stable method, out of core.

Never X'X: the data stream through DuckDB in row chunks sized from MEMSIZE, and each chunk is
folded into the triangular factor R of [X | y] (tall-skinny QR: R ← qr([R; chunk])). R alone
answers everything afterwards — estimates (R b = Q'y), SSE (the last diagonal element squared,
no cancellation), standard errors (rows of R⁻¹), VIF, collinearity diagnostics (SVD of R with
unit-length columns) and every model of a selection (QR of R's selected columns) — so model
selection needs no further pass over the data. Forming X'X squares the condition number and
loses every digit on designs like NIST's Wampler or high-degree polynomials (DESIGN.md, Models).
With an intercept each column is shifted by its mean over the first chunk before the QR (and R
mapped back exactly afterwards, see accumulate): a response like 1e12 + 0.4 keeps its 15 digits
of sums of squares (NIST SmLs07-09) instead of the 2-4 the unshifted QR leaves.

A column that is (numerically) a linear combination of the columns before it is aliased, as SAS
does it (the rule: statgrid.procs._aliasing): its estimate is 0 with 0 DF, and the note says which
columns it equals a combination of.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._aliasing import split_aliased
from statgrid.procs._stepwise import stepwise
from statgrid.procs._base import (ResultTable, as_list, check_columns, dataset_types, is_numeric, procedure, qi,
                                  render_table)

MAX_ALL_SUBSETS = 20      # SELECTION=ADJRSQ looks at every subset: 2^20 models is the most we allow


def _p_t(t: float, df: float) -> float:
    from scipy.special import stdtr
    return float(2 * stdtr(df, -abs(t))) if df > 0 else float("nan")


def _p_f(f: float, df1: float, df2: float) -> float:
    from scipy.special import fdtrc
    return float(fdtrc(df1, df2, f)) if df1 > 0 and df2 > 0 else float("nan")


@dataclass
class Factor:
    """What one pass over the data leaves: R of [1? | X | y], row count, column means and spreads."""

    R: np.ndarray
    n: int
    names: list[str]                      # regressor names, 'Intercept' first if present
    intercept: bool
    mean: np.ndarray
    m2: np.ndarray                        # sums of squared deviations (Welford/Chan), per column incl. y


def accumulate(batches, n_cols: int, intercept: bool, ones_first: bool = False
               ) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Fold chunks (rows × n_cols arrays, y last) into R, with per-column mean and M2.

    intercept: a column of ones goes before the chunk's columns; ones_first: the chunk's first
    column is that column of ones already (glm's design). With an intercept every other column is
    shifted by its mean over the first chunk before the QR, and R's first row shifted back after
    it (below). Without the shift, the QR works on values like 1e12 + 0.4 and keeps only what is
    left of ‖y‖·ε after the ones column takes the mean out: NIST's SmLs07–09 (13 constant leading
    digits) gave 2–4 correct digits of the sums of squares, 15 with the shift. The shift is a
    change of variables inside the span (x − c = x − c·1), so every fit that keeps the intercept
    is the same model; x − c is exact for the data near c (Sterbenz), and no second pass is needed.
    R of the unshifted columns follows from R of the shifted ones exactly: X = X_c·(I + e₀cᵀ), and
    R_c·(I + e₀cᵀ) differs from R_c in row 0 only (R_c's first column is R₀₀·e₀), by R₀₀·cᵀ. So
    rows 1… keep the accuracy of the shifted QR, and R stays the factor of [1 | X | y] that every
    caller expects (estimates, aliasing against ‖x_j‖, COLLIN, subsets of columns)."""
    R = None
    n = 0
    mean = np.zeros(n_cols)
    m2 = np.zeros(n_cols)
    shift = None
    centre = intercept or ones_first
    for chunk in batches:
        m = chunk.shape[0]
        if m == 0:
            continue
        cm = chunk.mean(axis=0)
        cm2 = ((chunk - cm) ** 2).sum(axis=0)
        delta = cm - mean
        tot = n + m
        mean = mean + delta * m / tot
        m2 = m2 + cm2 + delta ** 2 * n * m / tot
        n = tot
        if centre:
            if shift is None:
                shift = np.where(np.isfinite(cm), cm, 0.0)
                if ones_first:
                    shift[0] = 0.0
            chunk = chunk - shift
        a = np.hstack([np.ones((m, 1)), chunk]) if intercept else chunk
        R = np.linalg.qr(a if R is None else np.vstack([R, a]), mode="r")
    if R is not None and shift is not None:
        R[0, 1 if intercept else 0:] += R[0, 0] * shift
    return R, n, mean, m2


@dataclass
class Fit:
    names: list[str]
    estimate: np.ndarray
    stderr: np.ndarray
    df: list[int]                          # 1, or 0 for an aliased column
    aliased: dict[str, str] = field(default_factory=dict)
    sse: float = 0.0
    sst: float = 0.0
    n: int = 0
    rank: int = 0
    intercept: bool = True
    dep_mean: float = 0.0
    rinv: np.ndarray | None = None         # R⁻¹ of the kept columns (for VIF)
    kept: list[int] = field(default_factory=list)

    @property
    def df_model(self) -> int:
        return self.rank - (1 if self.intercept else 0)

    @property
    def df_error(self) -> int:
        return self.n - self.rank

    @property
    def mse(self) -> float:
        return self.sse / self.df_error if self.df_error > 0 else float("nan")

    @property
    def rsquare(self) -> float:
        return 1 - self.sse / self.sst if self.sst > 0 else float("nan")

    @property
    def adj_rsquare(self) -> float:
        i = 1 if self.intercept else 0
        if self.df_error <= 0 or self.sst <= 0:
            return float("nan")
        return 1 - (1 - self.rsquare) * (self.n - i) / self.df_error


def fit_from_r(R: np.ndarray, n: int, names: list[str], intercept: bool, cols: Sequence[int] | None = None) -> Fit:
    """OLS of y (R's last column) on the regressor columns `cols` (default all) of R."""
    p_all = R.shape[1] - 1
    cols = list(range(p_all)) if cols is None else list(cols)
    sub = np.linalg.qr(R[:, [*cols, p_all]], mode="r")
    k = len(cols)
    kept, positions = split_aliased(sub, k)
    aliased = {names[cols[j]]: "" for j in positions}
    if aliased:
        # what each aliased column equals, in terms of the kept columns before it (SAS's note)
        for j in range(k):
            name = names[cols[j]]
            if name in aliased:
                prev = [i for i in kept if i < j]
                if prev:
                    coef = np.linalg.lstsq(sub[:, prev], sub[:, j], rcond=None)[0]
                    terms = [(c, names[cols[i]]) for c, i in zip(coef, prev) if abs(c) > 1e-10]
                    text = " ".join(f"{'-' if c < 0 else '+'} " + (nm if abs(abs(c) - 1) < 1e-9 else f"{abs(c):.6g} * {nm}")
                                    for c, nm in terms)
                    aliased[name] = (text[2:] if text.startswith("+ ") else text) or "0"
                else:
                    aliased[name] = "0"
        sub = np.linalg.qr(sub[:, [*kept, k]], mode="r")
    r = len(kept)
    Rk = sub[:r, :r]
    qty = sub[:r, r] if sub.shape[0] >= r else np.zeros(r)
    sse = float(sub[r, r] ** 2) if sub.shape[0] > r else 0.0
    from scipy.linalg import solve_triangular
    b = solve_triangular(Rk, qty) if r else np.zeros(0)
    rinv = solve_triangular(Rk, np.eye(r)) if r else np.zeros((0, 0))
    df_error = n - r
    sigma = math.sqrt(sse / df_error) if df_error > 0 else float("nan")
    se = sigma * np.linalg.norm(rinv, axis=1) if r else np.zeros(0)
    has_int = intercept and 0 in cols and 0 in [cols[i] for i in kept]
    if has_int:
        sst = sse + float(np.sum(qty[1:] ** 2))
        dep_mean = float(qty[0] / Rk[0, 0])
    else:
        sst = sse + float(np.sum(qty ** 2))
        dep_mean = float("nan")
    est = np.zeros(k)
    ses = np.full(k, np.nan)
    est[kept] = b
    ses[kept] = se
    return Fit([names[c] for c in cols], est, ses, [1 if j in kept else 0 for j in range(k)], aliased, sse, sst, n,
               r, has_int, dep_mean, rinv, kept)


# ---------------------------------------------------------------------------- selection
def _entry_p(R, n, names, intercept, current: list[int], j: int) -> float:
    base = fit_from_r(R, n, names, intercept, current)
    new = fit_from_r(R, n, names, intercept, current + [j])
    if new.rank == base.rank or new.df_error <= 0:
        return 1.0
    f = (base.sse - new.sse) / (new.sse / new.df_error) if new.sse > 0 else float("inf")
    return _p_f(f, 1, new.df_error)


def select(R, n, names, intercept, method: str, sle: float, sls: float, include: int) -> tuple[list[int], list[list]]:
    """FORWARD, BACKWARD, STEPWISE (SLENTRY/SLSTAY) or ADJRSQ; returns chosen columns and the steps.
    The first `include` regressors (and the intercept) are always in the model (SAS INCLUDE=)."""
    fixed = ([0] if intercept else []) + list(range(1 if intercept else 0, (1 if intercept else 0) + include))
    candidates = [j for j in range(len(names)) if j not in fixed]
    steps: list[list] = []
    if method in SUBSET_METHODS:
        return _all_subsets(R, n, names, intercept, method, fixed, candidates, include)
    def enter(current: list[int]) -> int | None:          # the smallest partial-F p-value, at SLE
        outside = [j for j in candidates if j not in current]
        if not outside:
            return None
        p, j = min((_entry_p(R, n, names, intercept, current, j), j) for j in outside)
        if not p <= sle:
            return None
        if steps and steps[-1][:2] == ["removed", names[j]]:
            return None          # SAS REG: stepwise ends when the variable to add is the one just deleted
        steps.append(["entered", names[j], p])
        return j

    # STEPWISE, after an entry, removes every variable that no longer stays at SLS (the least significant
    # first) before the next may enter (SAS REG, "Stepwise")
    def remove(current: list[int]) -> int | None:
        removable = [j for j in current if j not in fixed]
        if not removable:
            return None
        p, j = max((_entry_p(R, n, names, intercept, [c for c in current if c != j], j), j) for j in removable)
        if p <= sls:
            return None
        steps.append(["removed", names[j], p])
        return j

    start = list(fixed) if method != "backward" else fixed + candidates
    return stepwise(method, start, enter, remove), steps


SUBSET_METHODS = ("adjrsq", "rsquare", "cp")


def _all_subsets(R, n, names, intercept, method: str, fixed: list[int], candidates: list[int], include: int,
                 ) -> tuple[list[int], list[list]]:
    """SELECTION=RSQUARE | ADJRSQ | CP: every subset of the candidates (after INCLUDE='s), each as [Number in
    Model, R-Square, Adjusted R-Square, C(p), Variables in Model]; C(p) = SSE_p / MSE_full − (n − 2p), p the
    parameters with the intercept (SAS REG, "Criteria Used in Model-Selection Methods"). The chosen model is the
    best by the method's criterion."""
    if len(candidates) > MAX_ALL_SUBSETS:
        raise StatgridError(f"selection={method!r} looks at every subset of {len(candidates)} regressors "
                            f"(2^{len(candidates)} models); use 'stepwise' or at most {MAX_ALL_SUBSETS}.")
    mse_full = fit_from_r(R, n, names, intercept, fixed + candidates).mse
    subsets, cols_of = [], []
    for size in range(1, len(candidates) + 1):
        for combo in itertools.combinations(candidates, size):
            cols = fixed + list(combo)
            f = fit_from_r(R, n, names, intercept, cols)
            cp = f.sse / mse_full - (n - 2 * f.rank) if mse_full > 0 else float("nan")
            subsets.append([len(combo) + include, f.rsquare, f.adj_rsquare, cp,
                            " ".join(names[c] for c in cols if names[c] != "Intercept")])
            cols_of.append(cols)
    key = {"rsquare": lambda k: -subsets[k][1], "adjrsq": lambda k: -subsets[k][2],
           "cp": lambda k: subsets[k][3]}[method]
    best = min(range(len(subsets)), key=key)
    return cols_of[best], [["best", " ".join(names[c] for c in cols_of[best] if c not in fixed), subsets[best][1]],
                           ["subsets", subsets, None]]


def order_subsets(subsets: list[list], method: str, best: int | None = None, start: int | None = None,
                  stop: int | None = None) -> list[list]:
    """The subsets as SAS REG lists them: RSQUARE by size, the largest R-square first in each size (BEST=n of each
    size); ADJRSQ by adjusted R-square, CP by C(p), over all sizes (BEST=n models in all). START=/STOP=: the
    smallest and largest Number in Model listed."""
    rows = [r for r in subsets if (start is None or r[0] >= start) and (stop is None or r[0] <= stop)]
    if method == "rsquare":
        out = []
        for k in sorted({r[0] for r in rows}):
            size = sorted((r for r in rows if r[0] == k), key=lambda r: -r[1])
            out += size[:best] if best else size
        return out
    rows = sorted(rows, key=(lambda r: (-r[2], r[0])) if method == "adjrsq" else (lambda r: (r[3], r[0])))
    return rows[:best] if best else rows


def step_statistics(R, n, names, intercept, method: str, include: int, steps: list[list]) -> list[dict]:
    """For each FORWARD/BACKWARD/STEPWISE step (SAS's "Summary of … Selection"): Number Vars In, Partial R-Square
    (the step's change in R-square), Model R-Square, C(p) and the variable's partial F Value."""
    fixed = ([0] if intercept else []) + list(range(1 if intercept else 0, (1 if intercept else 0) + include))
    index = {nm: j for j, nm in enumerate(names)}
    current = fixed if method != "backward" else list(range(len(names)))
    full = fit_from_r(R, n, names, intercept, list(range(len(names))))
    before = fit_from_r(R, n, names, intercept, current)
    out = []
    for action, name, _ in (s for s in steps if s[0] in ("entered", "removed")):
        j = index[name]
        current = current + [j] if action == "entered" else [c for c in current if c != j]
        after = fit_from_r(R, n, names, intercept, current)
        big = after if action == "entered" else before
        f = abs(before.sse - after.sse) / big.mse if big.mse > 0 else float("inf")
        out.append({"num_in": len([c for c in current if names[c] != "Intercept"]),
                    "partial_rsquare": abs(after.rsquare - before.rsquare), "model_rsquare": after.rsquare,
                    "cp": after.sse / full.mse - (n - 2 * after.rank) if full.mse > 0 else float("nan"),
                    "f_value": f})
        before = after
    return out


# ---------------------------------------------------------------------------- the procedure
def _batches(s, sql: str, rows: int):
    reader = s.con.sql(sql).to_arrow_reader(rows)
    for batch in reader:
        yield np.column_stack([c.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
                               for c in batch.columns]) if batch.num_rows else np.empty((0, batch.num_columns))


@procedure("PROCEDURE REG")
def reg(s, data: str, model: str, noint: bool = False, selection: str | None = None, sle: float = 0.15,
        sls: float = 0.15, include: int = 0, stb: bool = False, vif: bool = False, collin: bool = False,
        outest: str | None = None, print: bool = True) -> ResultTable:
    """OLS of `model` ('y = x1 x2 ...') on `data`. Returns the parameter estimates (Variable,
    DF, Estimate, StdErr, tValue, Probt [, StandardizedEst, VarianceInflation]) with
    `stats`: n, df_model, df_error, sse, ssm, mse, rmse, rsquare, adj_rsquare, f_value, prob_f,
    dep_mean, coeff_var, aliased, selection steps, condition indices. selection: forward,
    backward, stepwise (sle/sls entry and stay levels; selection_stats: each step's R-square, C(p), F) or
    rsquare/adjrsq/cp (every subset: order_subsets lists them as SAS); outest= writes the estimates."""
    src, types = dataset_types(s, data)
    names_all = list(types)
    dep_s, sep, regs_s = model.partition("=")
    if not sep or not dep_s.strip():
        raise StatgridError(f"model {model!r} is not 'y = x1 x2 ...'; name the dependent variable, '=', then "
                            "the regressors.")
    dep = check_columns([dep_s.strip()], names_all, "dependent", str(src))[0]
    regs = check_columns(as_list(regs_s), names_all, "MODEL", str(src))
    for v in [dep, *regs]:
        if not is_numeric(types[v]):
            raise StatgridError(f"MODEL variable {v!r} in {src} is {types[v]}, not numeric; REG needs numeric "
                                "variables (code categories as 0/1 columns, or use glm with class=).")
    if not regs and noint:
        raise StatgridError("a model with noint=True needs at least one regressor.")
    method = (selection or "none").lower()
    if method not in ("none", "forward", "backward", "stepwise", *SUBSET_METHODS):
        raise StatgridError(f"selection {selection!r} is not one of forward, backward, stepwise, "
                            f"{', '.join(SUBSET_METHODS)}.")
    intercept = not noint
    used = [*regs, dep]
    where = " AND ".join(f"{qi(c)} IS NOT NULL" for c in used)
    sql = f"SELECT {', '.join(f'CAST({qi(c)} AS DOUBLE)' for c in used)} FROM ({src.scan_sql()}) WHERE {where}"
    # Chunks of about memsize/16 bytes: several copies live at once during the QR of [R; chunk].
    rows = int(max(1024, min(1 << 20, s.options.memsize_bytes // 16 // (8 * (len(used) + 1)))))
    R, n, mean, m2 = accumulate(_batches(s, sql, rows), len(used), intercept)
    n_missing = s.con.sql(f"SELECT count(*) FROM ({src.scan_sql()}) WHERE NOT ({where})").fetchall()[0][0]
    names = (["Intercept"] if intercept else []) + regs
    if n == 0 or R is None:
        raise StatgridError(f"{src} has no observation with every MODEL variable present "
                            f"({n_missing} with a missing value); nothing to fit.")
    # Rows of R beyond the column count are zero; pad so every slice below has full shape.
    if R.shape[0] < R.shape[1]:
        R = np.vstack([R, np.zeros((R.shape[1] - R.shape[0], R.shape[1]))])
    steps: list[list] = []
    chosen = None
    if method != "none":
        chosen, steps = select(R, n, names, intercept, method, sle, sls, include)
    step_stats = ([] if method in ("none", *SUBSET_METHODS)
                  else step_statistics(R, n, names, intercept, method, include, steps))
    fit = fit_from_r(R, n, names, intercept, chosen)
    if fit.df_error <= 0:
        raise StatgridError(f"{n} observation(s) for {fit.rank} parameters leave no degrees of freedom for error; "
                            "use fewer regressors or more data.")
    ssm = fit.sst - fit.sse
    f_value = (ssm / fit.df_model) / fit.mse if fit.df_model > 0 and fit.mse > 0 else float("nan")
    sd = np.sqrt(m2 / (n - 1)) if n > 1 else np.full(len(used), np.nan)
    columns = ["Variable", "DF", "Estimate", "StdErr", "tValue", "Probt"]
    rows_out = []
    sel_names = fit.names
    idx = {nm: i for i, nm in enumerate(regs)}
    vifs = _vif(fit, sd, n, idx) if vif else {}
    for j, nm in enumerate(sel_names):
        t = float(fit.estimate[j] / fit.stderr[j]) if fit.df[j] and fit.stderr[j] > 0 else float("nan")
        row = [nm, fit.df[j], float(fit.estimate[j]), float(fit.stderr[j]) if fit.df[j] else float("nan"), t,
               _p_t(t, fit.df_error) if fit.df[j] else float("nan")]
        if stb:
            row.append(0.0 if nm == "Intercept" else float(fit.estimate[j] * sd[idx[nm]] / sd[-1]))
        if vif:
            row.append(vifs.get(nm, 0.0))
        rows_out.append(row)
    if stb:
        columns.append("StandardizedEst")
    if vif:
        columns.append("VarianceInflation")
    result = ResultTable(columns, rows_out)
    result.stats = {"n": n, "n_missing": n_missing, "df_model": fit.df_model, "df_error": fit.df_error,
                    "sse": fit.sse, "ssm": ssm, "sst": fit.sst, "mse": fit.mse, "rmse": math.sqrt(fit.mse),
                    "rsquare": fit.rsquare, "adj_rsquare": fit.adj_rsquare, "f_value": f_value,
                    "prob_f": _p_f(f_value, fit.df_model, fit.df_error), "dep_mean": fit.dep_mean,
                    "coeff_var": 100 * math.sqrt(fit.mse) / fit.dep_mean if fit.dep_mean else float("nan"),
                    "aliased": fit.aliased, "selection": steps, "selection_stats": step_stats, "dependent": dep}
    if fit.rinv is not None:           # (X'X)⁻¹ of the kept columns, for the TEST statement (sas/procs/reg_test.py)
        result.stats["xtx_inv"] = fit.rinv @ fit.rinv.T
        result.stats["xtx_names"] = [fit.names[j] for j in fit.kept]
    if collin:
        result.stats["collinearity"] = _collin(R, fit, names)
    for name, combo in fit.aliased.items():
        s.log.note(f"Model is not full rank: {name} = {combo}; its estimate is set to 0 (biased estimates).")
    if print:
        s.log.listing(_listing(result, dep, n, n_missing))
    if outest:
        result.out = s.write_table(outest, result.to_arrow())
    return result


def _vif(fit: Fit, sd: np.ndarray, n: int, idx: dict[str, int]) -> dict[str, float]:
    """VIF_j = (X'X)⁻¹_jj · SS_j (corrected sum of squares of x_j), from R⁻¹ of the fit."""
    out = {}
    kept_names = [fit.names[j] for j in fit.kept]
    diag = np.sum(fit.rinv ** 2, axis=1)
    for pos, nm in enumerate(kept_names):
        if nm == "Intercept":
            out[nm] = 0.0
        else:
            out[nm] = float(diag[pos] * sd[idx[nm]] ** 2 * (n - 1))
    return out


def _collin(R: np.ndarray, fit: Fit, names: list[str]) -> list[dict]:
    """COLLIN: eigenvalues of X'X with columns scaled to unit length (intercept included),
    condition indices and variance proportions, from the SVD of R·D."""
    p = R.shape[1] - 1
    cols = [names.index(nm) for nm in fit.names]
    kept = [cols[j] for j in fit.kept]
    Rk = np.linalg.qr(R[:, kept], mode="r")
    d = 1 / np.linalg.norm(Rk, axis=0)
    _, sv, vt = np.linalg.svd(Rk * d, full_matrices=False)
    lam = sv ** 2
    phi = (vt.T ** 2) / lam                      # phi[j, k] = v_jk² / λ_k
    prop = phi / phi.sum(axis=1, keepdims=True)
    del p
    return [{"number": k + 1, "eigenvalue": float(lam[k]), "condition_index": float(math.sqrt(lam[0] / lam[k])),
             "proportions": {names[kept[j]]: float(prop[j, k]) for j in range(len(kept))}} for k in range(len(lam))]


def _listing(t: ResultTable, dep: str, n: int, n_missing: int) -> str:
    st = t.stats
    head = (f"The REG Procedure\nDependent Variable: {dep}\n\nNumber of Observations Read {n + n_missing}\n"
            f"Number of Observations Used {n}\n")
    if n_missing:
        head += f"Number of Observations with Missing Values {n_missing}\n"
    anova = render_table(["Source", "DF", "Sum of Squares", "Mean Square", "F Value", "Pr > F"], [
        ["Model", st["df_model"], st["ssm"], st["ssm"] / st["df_model"] if st["df_model"] else None,
         st["f_value"], st["prob_f"]],
        ["Error", st["df_error"], st["sse"], st["mse"], None, None],
        ["Corrected Total" if not math.isnan(st["dep_mean"]) else "Uncorrected Total",
         st["df_model"] + st["df_error"], st["sst"], None, None, None]], title="Analysis of Variance")
    fit = render_table(["Root MSE", "Dependent Mean", "Coeff Var", "R-Square", "Adj R-Sq"],
                       [[st["rmse"], st["dep_mean"], st["coeff_var"], st["rsquare"], st["adj_rsquare"]]])
    est = render_table(t.columns, t.rows, title="Parameter Estimates")
    parts = [head, anova, fit, est]
    if st["selection"]:
        parts.insert(1, render_table(["Step", "Variable", "p"], [x[:3] for x in st["selection"] if x[0] != "subsets"],
                                     title="Selection"))
    if st.get("collinearity"):
        rows = [[c["number"], c["eigenvalue"], c["condition_index"], *c["proportions"].values()]
                for c in st["collinearity"]]
        names = list(st["collinearity"][0]["proportions"])
        parts.append(render_table(["Number", "Eigenvalue", "Condition Index", *names], rows,
                                  title="Collinearity Diagnostics"))
    return "\n".join(parts)
