"""PROC GLM: least squares with CLASS variables, several responses, Type I/III SS and LS-means.

One pass over the data (statgrid.procs.design streams the over-parameterized design in chunks)
folds [X | y1 … yq] into a triangular factor R by the same tall-skinny QR as REG — never X'X.
Everything afterwards comes from R:
  - each response's fit is the QR of R's design columns and that response's column;
  - estimates are SAS's: over-parameterized columns, later columns of an effect aliased to 0 and
    flagged as biased ('B'), as the G2 inverse gives them;
  - Type I SS: the error SS drop as effects enter in model order;
  - Type III SS: the error SS rise when an effect's columns leave the full model written in
    sum-to-zero coding (R·T, T from design.coding('effect')). With every cell of the crossings
    filled this is SAS's Type III; with empty cells SAS's Type III (and Type IV) differ and the
    log says so. A nested effect b(a) has columns for the combinations present only (as SAS) and
    sums to zero over the b levels present within each a, so each a may have its own b labels;
  - LS-means: L·b with L averaging each effect over the levels of the class variables not in it
    and covariates at their means, SE from R⁻¹; non-estimable ones are reported as such.
Rows with a missing value in any MODEL or CLASS variable are left out. Unlike SAS (which analyses
each response on its own rows unless MANOVA), a row missing any response is left out for all of
them: the responses share one factor R.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import _glm_type3
from statgrid.procs import design as _design
from statgrid.procs import glm_means
from statgrid.procs._base import ResultTable, as_list, procedure, qi, render_table
from statgrid.procs.regression import _p_f, _p_t, accumulate, fit_from_r

ESTIMABLE_TOL = 1e-7


def _sse(R, n, names, cols, p) -> tuple[float, int]:
    if not cols:
        y = R[:, p]
        return float(y @ y), 0
    f = fit_from_r(R, n, names + ["_y"], False, cols)
    return f.sse, f.rank


@procedure("PROCEDURE GLM")
def glm(s, data: str, model: str, class_: str | Sequence[str] | None = None, noint: bool = False,
        lsmeans: str | Sequence[str] | None = None, ss: str = "1 3", outstat: str | None = None,
        print: bool = True, contrasts: Sequence | None = None, estimates: Sequence | None = None,
        tests: Sequence | None = None, means: Sequence | None = None, output: dict | None = None,
        output_alpha: float = 0.05, ref: dict | None = None, order: str | None = None) -> ResultTable:
    """Least squares of 'y1 y2 = a b a*b x' (A|B|C, @n and nesting B(A) as in SAS) with class_ variables.
    Returns the parameter estimates of every response (Dependent, Parameter, Estimate, Biased,
    StdErr, tValue, Probt); `stats[response]` holds the ANOVA, fit, Type I/III/IV tables and LS-means.
    outstat= writes the SS table (_NAME_, _SOURCE_, _TYPE_ SS1/SS3/SS4/ERROR, DF, SS, F, PROB) as OUTSTAT=.

    ss: any of 1, 3, 4 (Type IV equals Type III when every cell of the crossings has data, as SAS
    documents; with empty cells it is refused). SAS's CONTRAST, ESTIMATE and TEST statements:
      contrasts = [(label, [row, …])], a row {effect: [coefficients…]} ('intercept' too; fewer
                  coefficients than the effect's columns are padded with zeros): F test of L·b = 0;
      estimates = [(label, row, divisor)]: L·b / divisor with its standard error and t test;
      tests     = [([h effects…], e effect, {"htype": "n", "etype": "n"} optional)]: each H effect's mean square
                  over E's, of the types given, else the highest type computed (SAS's default).
    A row that is not estimable is reported so (None values), as SAS prints 'Non-est'.
    means = [glm_means.MeansRequest, …]: SAS's MEANS statement → stats['means'] (glm_means.py).
    ref: {CLASS variable: REF= level | 'FIRST' | 'LAST'}: that level last among the variable's levels (SAS's
    CLASS var(REF=)).
    order: SAS's ORDER= of the CLASS levels ('data': first appearance, 'freq': descending count; else sorted)."""
    src = s.dataset(data)
    names_all = [c for c, _ in s.columns(src.scan_sql())]
    responses, effects = _design.parse_model(model, names_all, str(src))
    if not effects and noint:
        raise StatgridError("a model with noint=True needs at least one effect.")
    want_ss = {t for t in str(ss).replace(",", " ").split()}
    if not want_ss <= {"1", "3", "4"}:
        raise StatgridError(f"ss={ss!r}: GLM gives Type I, III and IV sums of squares; write e.g. ss='1 3' or '4'.")
    design, sql, _, n_missing = _design.prepare(s, src, effects, responses, class_, intercept=not noint, ref=ref,
                                                order=order)
    lsm_effects = _design.parse_effects(" ".join(as_list(lsmeans)), names_all, "lsmeans")
    for e in lsm_effects:
        if e not in effects:
            raise StatgridError(f"lsmeans effect {e.name!r} is not in the model {model!r}.")
        if any(v not in design.classes for v in e.variables):
            raise StatgridError(f"lsmeans effect {e.name!r} has a variable that is not in class=; LS-means are "
                                "for classification effects.")
    p = design.width
    q = len(responses)
    rows = _design.chunk_rows(s.options.memsize_bytes, p + q)
    R, n, mean, _ = accumulate(_design.chunks(s, design, sql, rows, responses), p + q, False,
                              ones_first=design.intercept)
    if R is None or n == 0:
        raise StatgridError(f"{src} has no observation with every MODEL variable present "
                            f"({n_missing} with a missing value); nothing to fit.")
    if R.shape[0] < R.shape[1]:
        R = np.vstack([R, np.zeros((R.shape[1] - R.shape[0], R.shape[1]))])
    names = design.column_names()
    slices = design.slices()
    T, eff_names, eff_slices = design.coding("effect")
    cov_means = {v: float(x) for v, x in _covariate_means(s, design, sql).items()}
    empty = np.linalg.norm(R[:, :p], axis=0) == 0           # design columns no row has
    empty_cells = [e.name for i, (e, sl) in enumerate(zip(effects, slices))
                   if len(design.effect_classes(e)) > 1 and not design.present_coded(i)
                   and (empty[sl].any() or design.effect_width(e) < design.grid_size(e))]
    if empty_cells and "4" in want_ss:
        raise StatgridError(f"Type IV sums of squares with empty cells ({', '.join(empty_cells)}) are not built: "
                            "statgrid's Type IV equals Type III when every cell has data; use ss='1 3'.")
    if empty_cells and "3" in want_ss:
        s.log.note(f"Some cells of {', '.join(empty_cells)} have no observations: the Type III sums of squares "
                   "here test sum-to-zero hypotheses, which differ from SAS's Type III/IV with empty cells.")

    null = _null_space(R[:, :p])       # of the design columns: the same for every response
    # a model not closed under marginality (a b a*b*c …): SAS's Type III from the estimable functions
    hyp3 = _glm_type3.hypotheses(R, p, design) if want_ss & {"3", "4"} and _glm_type3.needed(design) else None
    out_rows, ss_rows, per_response, fits = [], [], {}, []
    for i, y in enumerate(responses):
        Ry = R[:, [*range(p), p + i]]
        fit = fit_from_r(Ry, n, names, not noint)
        fits.append((y, fit))
        if fit.df_error <= 0:
            raise StatgridError(f"{n} observation(s) for {fit.rank} parameters leave no degrees of freedom for "
                                "error; use fewer effects or more data.")
        # 'B': the estimate is not estimable on its own (it moves along the design's null space)
        biased = (np.any(np.abs(null) > ESTIMABLE_TOL, axis=1) if fit.aliased and null.size
                  else np.zeros(p, dtype=bool))
        for j, nm in enumerate(names):
            est = float(fit.estimate[j])
            if fit.df[j]:
                t = est / fit.stderr[j] if fit.stderr[j] > 0 else float("nan")
                out_rows.append([y, nm, est, "B" if biased[j] else "",
                                 float(fit.stderr[j]), t, _p_t(t, fit.df_error)])
            else:
                out_rows.append([y, nm, 0.0, "B", None, None, None])
        # Type I: sequential; Type III: drop each effect from the sum-to-zero full model
        base = [0] if not noint else []
        type1, type3 = [], []
        prev_sse, prev_rank = _sse(Ry, n, names, base, p)
        for e, sl in zip(effects, slices):
            cols = base + list(range(base[-1] + 1 if base else 0, sl.stop))
            sse, rank = _sse(Ry, n, names, cols, p)
            type1.append([e.name, rank - prev_rank, max(prev_sse - sse, 0.0)])
            prev_sse, prev_rank = sse, rank
        if want_ss & {"3", "4"}:
            Re = np.hstack([R[:, :p] @ T, R[:, [p + i]]])
            enames = list(eff_names)
            full_sse, full_rank = _sse(Re, n, enames, list(range(len(enames))), len(enames))
            general = _glm_type3.sums_of_squares(hyp3, R, p, i) if hyp3 is not None else {}
            for e, sl in zip(effects, eff_slices):
                if e.name in general:
                    df3, ss3 = general[e.name]
                    type3.append([e.name, df3, max(ss3, 0.0)])
                    continue
                keep = [c for c in range(len(enames)) if not sl.start <= c < sl.stop]
                sse, rank = _sse(Re, n, enames, keep, len(enames))
                type3.append([e.name, full_rank - rank, max(sse - full_sse, 0.0)])
        mse = fit.mse
        tables = {}
        for label, rows_ss in (("1", type1), ("3", type3), ("4", type3)):
            if label not in want_ss:
                continue
            tables[label] = [[src_, df, ssv, ssv / df if df else None,
                              (ssv / df) / mse if df and mse > 0 else None,
                              _p_f((ssv / df) / mse, df, fit.df_error) if df and mse > 0 else None]
                             for src_, df, ssv in rows_ss]
            nan = float("nan")
            ss_rows += [[y, src_, f"SS{label}", df, ssv, nan if f is None else f, nan if pv is None else pv]
                        for src_, df, ssv, _, f, pv in tables[label]]
        ss_rows.append([y, "ERROR", "ERROR", fit.df_error, fit.sse, float("nan"), float("nan")])
        ssm = fit.sst - fit.sse
        f_model = (ssm / fit.df_model) / mse if fit.df_model > 0 and mse > 0 else float("nan")
        lsm = {e.name: _lsmeans(design, e, fit, null, cov_means, mse) for e in lsm_effects}
        highest = max(tables)               # SAS: HTYPE=/ETYPE= default to the highest type computed
        extra = {"contrasts": [_contrast(design, label, spec, fit, null, mse) for label, spec in contrasts or []],
                 "estimates": [_estimate(design, label, spec, div, fit, null, mse)
                               for label, spec, div in estimates or []],
                 "tests": [_test(tables, h, e, *_test_types(test_opts, highest))
                           for h, e, *test_opts in tests or []]}
        per_response[y] = {"n": n, "n_missing": n_missing, "df_model": fit.df_model, "df_error": fit.df_error,
                           "ssm": ssm, "sse": fit.sse, "sst": fit.sst, "mse": mse, "rmse": math.sqrt(mse),
                           "f_value": f_model, "prob_f": _p_f(f_model, fit.df_model, fit.df_error),
                           "rsquare": fit.rsquare, "dep_mean": fit.dep_mean,
                           "coeff_var": 100 * math.sqrt(mse) / fit.dep_mean if fit.dep_mean else float("nan"),
                           "type1": tables.get("1", []), "type3": tables.get("3", []),
                           "type4": tables.get("4", []), "lsmeans": lsm, "aliased": fit.aliased, **extra}
    result = ResultTable(["Dependent", "Parameter", "Estimate", "Biased", "StdErr", "tValue", "Probt"], out_rows)
    result.stats = per_response
    result.stats["class_levels"] = {c: [_design.level_text(x) for x in design.levels[c]] for c in design.classes}
    if means:
        errors = {y: (per_response[y]["mse"], per_response[y]["df_error"]) for y in responses}
        result.stats["means"] = glm_means.means_tables(s, sql, design, responses, errors, means)
    if output:       # SAS's OUTPUT statement: statistic → a name per response (model_output.GLM_STATISTICS)
        from statgrid.procs import model_output
        result.stats["output"] = model_output.glm_scores(s, f"SELECT * FROM ({src.scan_sql()})", design, fits, output,
                                                         output_alpha)
    if print:
        s.log.listing(_listing(result, design, responses, n, n_missing))
    if outstat:
        result.out = s.write_table(outstat, ResultTable(["_NAME_", "_SOURCE_", "_TYPE_", "DF", "SS", "F", "PROB"],
                                                        ss_rows).to_arrow())
    return result


def _covariate_means(s, design, sql) -> dict[tuple, float]:
    """Mean of each effect's product of continuous variables (x, x*x, x*z) over the rows used: LS-means
    set covariates to these, as SAS does by default (the mean of x*x, not the square of the mean)."""
    products = list(dict.fromkeys(tuple(v for v in e.variables if v not in design.classes)
                                  for e in design.effects))
    products = [p for p in products if p]
    if not products:
        return {}
    q = ", ".join("avg(" + " * ".join(qi(v) for v in p) + ")" for p in products)
    return dict(zip(products, s.con.sql(f"SELECT {q} FROM ({sql})").fetchall()[0]))


def _lsmeans(design, effect, fit, null, cov_means, mse) -> list[list]:
    """Rows: levels of `effect` (the combinations it has columns for), LSMean, StdErr, tValue, Probt
    (None where not estimable); `null` spans the null space of the design columns."""
    p = design.width
    target = design.effect_classes(effect)
    slices = design.slices()
    labels = [design.effect_labels(e) for e in design.effects]
    rows = []
    for chosen in labels[design.effects.index(effect)]:
        combo = [chosen[v] for v in target]
        L = np.zeros(p)
        if design.intercept:
            L[0] = 1.0
        for e, sl, lab in zip(design.effects, slices, labels):
            prod = tuple(v for v in e.variables if v not in design.classes)
            L[sl] = (cov_means[prod] if prod else 1.0) * design.average_weights(e, chosen, lab)
        if null.size and np.max(np.abs(L @ null)) > ESTIMABLE_TOL * max(1.0, np.abs(L).max()):
            rows.append([*combo, None, None, None, None])
            continue
        est = float(L @ fit.estimate)
        se = math.sqrt(mse) * float(np.linalg.norm(fit.rinv.T @ L[fit.kept]))
        t = est / se if se > 0 else float("nan")
        rows.append([*combo, est, se, t, _p_t(t, fit.df_error)])
    return rows


def _l_row(design, spec: dict) -> np.ndarray:
    """One row of L over the over-parameterized columns from {effect: coefficients} (SAS's CONTRAST and
    ESTIMATE syntax: an effect's coefficients in the order of its levels, missing trailing ones 0)."""
    L = np.zeros(design.width)
    for name, e, sl, coeffs in design.contrast_terms(spec):
        if e is None:
            if not design.intercept or len(coeffs) != 1:
                raise StatgridError("INTERCEPT takes one coefficient, in a model with an intercept.")
            L[0] = coeffs[0]
            continue
        width = sl.stop - sl.start
        if len(coeffs) > width:
            raise StatgridError(f"effect {name!r} has {width} levels; {len(coeffs)} coefficients were given.")
        L[sl.start:sl.start + len(coeffs)] = coeffs
    _fill_containing(design, L, {n.upper() for n in spec})
    return L


def _fill_containing(design, L: np.ndarray, given: set[str]) -> None:
    """SAS GLM's CONTRAST/ESTIMATE rule (as rule 4 of its LS-means): an effect not given that contains a given
    classification effect (a*b contains a) gets the given effect's coefficients divided equally among its
    columns at each level. When it contains two given effects that are not inside each other (a and b in
    a*b), each is spread so and their common part (the intercept, or the effect of their shared variables)
    taken off once, so that the filled effect has both as its margins (the LS-mean of a level: intercept 1,
    a 1 0 0, b .5 .5 fills a*b with .5 at that level); with more than two, nothing is filled."""
    slices = dict(zip(design.effects, design.slices()))
    pure = [e for e in design.effects if len(design.effect_classes(e)) == len(e.variables)]
    by_vars = {frozenset(design.effect_classes(e)): e for e in pure}
    for f in pure:
        if f.name.upper() in given:
            continue
        f_cls = design.effect_classes(f)
        inside = [e for e in pure if e.name.upper() in given and set(design.effect_classes(e)) < set(f_cls)]
        top = [e for e in inside if not any(set(design.effect_classes(e)) < set(design.effect_classes(o))
                                            for o in inside)]
        if not top or len(top) > 2:
            continue
        terms = [(e, 1.0) for e in top]
        if len(top) == 2:
            common = frozenset(design.effect_classes(top[0])) & frozenset(design.effect_classes(top[1]))
            base = by_vars.get(common) if common else None
            if common and (base is None or base.name.upper() not in given):
                continue
            terms.append((base, -1.0))          # base None: the intercept
        f_labels = design.effect_labels(f)
        for e, sign in terms:
            _spread(design, L, slices, f, f_labels, e, sign)


def _spread(design, L, slices, f, f_labels, e, sign: float) -> None:
    """Add sign × e's coefficients (e None: the intercept's) divided equally over f's columns at each level."""
    start = slices[f].start
    if e is None:
        if design.intercept:
            for j in range(len(f_labels)):
                L[start + j] += sign * L[0] / len(f_labels)
        return
    e_cls = design.effect_classes(e)
    e_index = {tuple(lab[v] for v in e_cls): k for k, lab in enumerate(design.effect_labels(e))}
    keys = [tuple(lab[v] for v in e_cls) for lab in f_labels]
    share = {k: keys.count(k) for k in set(keys)}
    for j, k in enumerate(keys):
        if k in e_index:
            L[start + j] += sign * L[slices[e].start + e_index[k]] / share[k]


def _estimable(L: np.ndarray, null: np.ndarray) -> bool:
    return not (null.size and np.max(np.abs(L @ null)) > ESTIMABLE_TOL * max(1.0, np.abs(L).max()))


def _contrast(design, label: str, rows: Sequence[dict], fit, null, mse) -> list:
    """[label, DF, SS, MS, F, p]: SS = (Lb)' (L G L')⁻ (Lb), G the generalized inverse of X'X from R."""
    L = np.array([_l_row(design, r) for r in rows])
    if not all(_estimable(r, null) for r in L):
        return [label, None, None, None, None, None]
    lb = L @ fit.estimate
    A = L[:, fit.kept] @ fit.rinv
    V = A @ A.T
    df = int(np.linalg.matrix_rank(V))
    if df == 0:
        return [label, 0, 0.0, None, None, None]
    ssv = float(lb @ np.linalg.pinv(V) @ lb)
    f = (ssv / df) / mse if mse > 0 else float("nan")
    return [label, df, ssv, ssv / df, f, _p_f(f, df, fit.df_error)]


def _estimate(design, label: str, spec: dict, divisor: float, fit, null, mse) -> list:
    """[label, estimate, SE, t, p] of L·b / divisor."""
    L = _l_row(design, spec) / float(divisor or 1.0)
    if not _estimable(L, null):
        return [label, None, None, None, None]
    est = float(L @ fit.estimate)
    se = math.sqrt(mse) * float(np.linalg.norm(fit.rinv.T @ L[fit.kept]))
    t = est / se if se > 0 else float("nan")
    return [label, est, se, t, _p_t(t, fit.df_error)]


def _test_types(test_opts: list, highest: str) -> tuple[str, str]:
    """(HTYPE, ETYPE) of a TEST statement: as given, else the highest type of sums of squares computed."""
    types = test_opts[0] if test_opts else {}
    return types.get("htype", highest), types.get("etype", highest)


def _test(tables: dict, h: Sequence[str], e: str, htype: str, etype: str) -> dict:
    """TEST H= E= </ HTYPE= ETYPE=>: each H effect's mean square over E's, from the rows [source, DF, SS, MS, F, p]
    of the Type `htype` (hypotheses) and Type `etype` (error term) tables."""
    for kind, typ in (("HTYPE", htype), ("ETYPE", etype)):
        if typ not in tables:
            raise StatgridError(f"TEST / {kind}={typ}: Type {typ} sums of squares were not computed; add SS{typ} to "
                                f"the MODEL options (computed: {', '.join('SS' + k for k in sorted(tables))}).")
    rows = {r[0].upper(): r for r in tables[htype]}
    erows = {r[0].upper(): r for r in tables[etype]}
    missing = [x for x in h if x.upper() not in rows] + ([e] if e.upper() not in erows else [])
    if missing:
        raise StatgridError(f"TEST: effect {missing[0]!r} is not in the model; its effects: "
                            f"{', '.join(r[0] for r in tables[htype])}.")
    err = erows[e.upper()]
    roman = {"1": "I", "3": "III", "4": "IV"}
    label = f"Type {roman[htype]} SS"
    out = []
    for name in h:
        r = rows[name.upper()]
        f = r[3] / err[3] if r[1] and err[1] and err[3] else None
        out.append([r[0], r[1], r[2], r[3], f, _p_f(f, r[1], err[1]) if f is not None else None])
    return {"rows": out, "label": label, "error": err[0], "error_df": err[1],
            "title": f"Tests of Hypotheses Using the Type {roman[etype]} MS for {err[0]} as an Error Term"}


def _null_space(R: np.ndarray) -> np.ndarray:
    _, sv, vt = np.linalg.svd(R, full_matrices=True)
    tol = max(R.shape) * np.finfo(float).eps * (sv[0] if sv.size else 0.0) * 1e3
    rank = int(np.sum(sv > tol))
    return vt[rank:].T


def _listing(t: ResultTable, design, responses, n, n_missing) -> str:
    parts = ["The GLM Procedure\n"]
    if design.classes:
        parts.append(render_table(["Class", "Levels", "Values"],
                                  [[c, len(design.levels[c]), " ".join(str(v) for v in design.levels[c])]
                                   for c in design.classes], title="Class Level Information"))
    parts.append(f"Number of Observations Read {n + n_missing}\nNumber of Observations Used {n}\n")
    for y in responses:
        st = t.stats[y]
        parts.append(f"Dependent Variable: {y}\n")
        parts.append(render_table(["Source", "DF", "Sum of Squares", "Mean Square", "F Value", "Pr > F"], [
            ["Model", st["df_model"], st["ssm"], st["ssm"] / st["df_model"] if st["df_model"] else None,
             st["f_value"], st["prob_f"]],
            ["Error", st["df_error"], st["sse"], st["mse"], None, None],
            ["Corrected Total", st["df_model"] + st["df_error"], st["sst"], None, None, None]]))
        parts.append(render_table(["R-Square", "Coeff Var", "Root MSE", f"{y} Mean"],
                                  [[st["rsquare"], st["coeff_var"], st["rmse"], st["dep_mean"]]]))
        for key, label in (("type1", "Type I SS"), ("type3", "Type III SS"), ("type4", "Type IV SS")):
            if st[key]:
                parts.append(render_table(["Source", "DF", label, "Mean Square", "F Value", "Pr > F"], st[key]))
        if st["contrasts"]:
            parts.append(render_table(["Contrast", "DF", "Contrast SS", "Mean Square", "F Value", "Pr > F"],
                                      st["contrasts"]))
        if st["estimates"]:
            parts.append(render_table(["Parameter", "Estimate", "Standard Error", "t Value", "Pr > |t|"],
                                      st["estimates"]))
        for test in st["tests"]:
            parts.append(render_table(["Source", "DF", test["label"], "Mean Square", "F Value", "Pr > F"],
                                      test["rows"], title=test["title"]))
        est = [r[1:] for r in t.rows if r[0] == y]
        parts.append(render_table(["Parameter", "Estimate", "", "Standard Error", "t Value", "Pr > |t|"], est))
        if st["aliased"]:
            parts.append("NOTE: The X'X matrix has been found to be singular, and a generalized inverse was used "
                         "to solve the normal equations. Terms whose estimates are followed by the letter 'B' are "
                         "not uniquely estimable.\n")
        for name, rows in st["lsmeans"].items():
            cls = design.effect_classes(next(e for e in design.effects if e.name == name))
            parts.append(render_table([*cls, f"{y} LSMEAN", "Standard Error", "t Value", "Pr > |t|"], rows,
                                      title=f"Least Squares Means: {name}"))
    return "\n".join(parts)
