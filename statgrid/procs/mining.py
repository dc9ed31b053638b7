"""Data mining: PROC HPFOREST (random forests) and PROC FASTCLUS (k-means), with scikit-learn.

forest: a random forest classifier (categorical target, or kind="classification") or regressor
(numeric target). Each tree grows on a bootstrap sample of the rows used and tries vars_to_try
design columns at each split (default √ of their number, as SAS's VARS_TO_TRY; scikit-learn's
regressor would otherwise try all). Categorical inputs — named in class_ or of a non-numeric
type — are one-hot encoded in place (one 0/1 column per level seen in training, levels sorted;
a missing value is a level of its own; a level met only when scoring gets all zeros). Missing
numeric inputs stay NaN: scikit-learn's trees (≥ 1.4) learn at every split which side missing
values go to (infinite ones are an error). Rows with a missing target (NULL, or NaN for a
number) are not used to train, but are scored in out=.
Fit statistics: training and out-of-bag (OOB: each row predicted by the trees whose bootstrap
sample left it out; rows that no tree left out are skipped and counted) average squared error
(for a class target the mean over rows and levels of (1{y = level} − p)², as SAS's ASE) with
misclassification rate or R². Variable importance per input (a categorical input's one-hot
columns together): impurity importance (mean decrease in Gini or squared error, summed over the
input's columns; sums to 1) and permutation importance (scikit-learn's permutation_importance:
the drop in accuracy or R² when the input's values are shuffled, 5 repeats, computed on the
TRAINING rows — it shows what the fitted forest relies on, not how well it generalises; the OOB
figures do that). SAS's defaults differ (LEAFSIZE=5, MAXDEPTH=20, 60 % subsamples drawn without
replacement); statgrid uses scikit-learn's (min_leaf=1, unlimited depth, bootstrap).

fastclus: k-means (Lloyd). Rows with a missing value in any VAR variable are left out (SAS's
NOMISS; statgrid imputes nothing and has no partial distances) and get a missing CLUSTER in out=;
NaN and ±infinity count as missing.
standardize=True clusters z-scores (mean 0, sample std 1 over the rows used; a constant variable
is only centred): distances, RMS std and R² are then in standard units, means in data units.
When the rows × variables × 8 bytes fit in MEMSIZE, scikit-learn's KMeans runs on them in memory
(k-means++ seeds, n_init=10 restarts, the fit of least inertia kept — not SAS's seed selection).
Otherwise the data stream: KMeans on a deterministic sample of the rows (as much as fits, picked
by a hash of the row number and the seed) gives the seeds, MiniBatchKMeans.partial_fit on every
chunk of the data (one pass) refines them, and full Lloyd passes in the engine (assign each row
to its nearest centre, average per cluster) run until the centres stop moving — so the result
is a true k-means fixed point like the in-memory one. Either way the final assignment, the
cluster statistics and out= are computed in the engine from the centres, and clusters are
numbered by their first observation (the cluster of the first row used is 1), so numbering does
not depend on the path or the seed's labels.
"""
from __future__ import annotations

import math
import warnings
from typing import Sequence

import numpy as np

from statgrid.config import format_size
from statgrid.errors import StatgridError
from statgrid.procs._base import (ResultTable, as_list, check_columns, dataset_types, format_value, is_numeric,
                                  procedure, qi, render_table)

PERMUTATION_REPEATS = 5
KMEANS_RESTARTS = 10
SAMPLE_ROWS_MAX = 100_000          # streamed k-means: most rows the seed sample takes
_PRED = "__statgrid_mining_pred"


def _size_text(n_bytes: int) -> str:
    for unit, size in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n_bytes >= size:
            return f"{n_bytes / size:.1f}{unit}"
    return f"{n_bytes}B"


def _lit(x: float) -> str:
    """A float as SQL that reads back to exactly the same double."""
    return f"CAST('{float(x)!r}' AS DOUBLE)"


def _too_big(src, rows: int, cols: int, memsize: int) -> StatgridError:
    need = rows * cols * 8
    return StatgridError(
        f"{src} needs about {_size_text(need)} in memory ({rows} rows × {cols} columns × 8 bytes), more than "
        f"memsize={format_size(memsize)}; draw a sample with surveyselect "
        f"(e.g. rate={max(0.01, memsize / need / 2):.2f}) and fit on it, or raise memsize.")


def _level_text(level) -> str:
    return format_value(float(level)) if isinstance(level, (float, np.floating)) else str(level)


# ---------------------------------------------------------------------------- forest
@procedure("PROCEDURE HPFOREST")
def forest(s, data: str, target: str, inputs: str | Sequence[str], kind: str | None = None,
           class_: str | Sequence[str] | None = None, ntrees: int = 100, max_depth: int | None = None,
           min_leaf: int = 1, seed: int = 1, oob: bool = True, out: str | None = None,
           outimportance: str | None = None, print: bool = True, vars_to_try: int | None = None) -> ResultTable:
    """Random forest of `target` on `inputs`. Returns the variable importance table (Variable,
    Columns, ImpurityImportance, PermutationImportance, PermutationStd; by impurity importance,
    descending) with `stats`: kind, levels, n_read, n_used, n_oob, fit (ase/misclass/rsquare
    _train and _oob), model (the fitted scikit-learn Pipeline, to score other data). out= holds
    every input row with P_<target><level> per level and I_<target> (classification) or
    P_<target> (regression); outimportance= the importance table."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.inspection import permutation_importance
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    src, types = dataset_types(s, data)
    names = list(types)
    if not isinstance(target, str) or len(target.split()) != 1:
        raise StatgridError(f"target={target!r} must name one variable.")
    tgt = check_columns([target], names, "TARGET", str(src))[0]
    ins = list(dict.fromkeys(check_columns(as_list(inputs), names, "INPUT", str(src))))
    cls = check_columns(as_list(class_), names, "CLASS", str(src))
    if not ins:
        raise StatgridError("inputs= names no variable; give the input variables, e.g. inputs=['x1', 'x2'].")
    if tgt in ins:
        raise StatgridError(f"TARGET variable {tgt!r} is also an input; remove it from inputs=.")
    for c in cls:
        if c != tgt and c not in ins:
            raise StatgridError(f"CLASS variable {c!r} is neither the target nor an input; add it to inputs= "
                                "or remove it from class_=.")
    numeric_target = is_numeric(types[tgt])
    if kind is None:
        kind = "classification" if (not numeric_target or tgt in cls) else "regression"
    kind = kind.lower()
    if kind not in ("classification", "regression"):
        raise StatgridError(f"kind={kind!r} is not one of classification, regression.")
    if kind == "regression" and (not numeric_target or tgt in cls):
        raise StatgridError(f"kind='regression' needs a numeric, non-CLASS target; {tgt!r} is "
                            f"{types[tgt] if not numeric_target else 'in class_='}. Use kind='classification'.")
    for label, value, low in (("ntrees", ntrees, 1), ("min_leaf", min_leaf, 1), ("max_depth", max_depth, 1),
                              ("vars_to_try", vars_to_try, 1)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
            raise StatgridError(f"{label}={value!r} is not allowed: use a whole number ≥ {low}.")
    categorical = [v for v in ins if v in cls or not is_numeric(types[v])]

    # The fetch holds every row, the target and each input's design columns (its levels among
    # the rows used to train; a missing value is a level).
    has_t = f"isfinite(CAST({qi(tgt)} AS DOUBLE))" if numeric_target else f"{qi(tgt)} IS NOT NULL"   # NaN: missing
    levels_sql = [f"count(DISTINCT {qi(v)}) FILTER (WHERE {has_t}) + "
                  f"CAST(count(*) FILTER (WHERE {has_t} AND {qi(v)} IS NULL) > 0 AS INTEGER)" for v in categorical]
    t_sql = f"CAST({qi(tgt)} AS VARCHAR)" if not numeric_target else f"CAST({qi(tgt)} AS DOUBLE)"
    first = s.con.sql(f"SELECT count(*), count(*) FILTER (WHERE {has_t}), count(DISTINCT {qi(tgt)}) FILTER "
                      f"(WHERE {has_t}), min({t_sql}) FILTER (WHERE {has_t})"
                      f"{''.join(', ' + x for x in levels_sql)} FROM {src.scan_sql()}").fetchall()[0]
    n_read, n_used, n_target_levels, min_level = first[:4]
    if n_read == 0:
        raise StatgridError(f"{src} has no observations; nothing to fit.")
    if n_used == 0:
        raise StatgridError(f"TARGET variable {tgt!r} is missing in all {n_read} observations of {src}; "
                            "nothing to fit.")
    if kind == "classification" and n_target_levels < 2:
        raise StatgridError(f"TARGET variable {tgt!r} has one level ({_level_text(min_level)!r}) in the {n_used} "
                            "observations used; a classification needs at least two levels.")
    n_design = len(ins) - len(categorical) + sum(int(x) for x in first[4:])
    if vars_to_try is not None and vars_to_try > n_design:
        raise StatgridError(f"vars_to_try={vars_to_try} is more than the {n_design} design columns of the inputs; "
                            f"use 1 to {n_design}.")
    if n_read * (n_design + 1) * 8 > s.options.memsize_bytes:
        raise _too_big(src, n_read, n_design + 1, s.options.memsize_bytes)

    in_sql = [f"CAST({qi(v)} AS DOUBLE)" if v not in categorical or is_numeric(types[v])
              else f"CAST({qi(v)} AS VARCHAR)" for v in ins]
    numbered = src.scan_sql(row_numbers=True)
    table = s.fetch_arrow(f"SELECT file_row_number AS __row, CASE WHEN {has_t} THEN {t_sql} END AS __y, "
                          + ", ".join(f"{e} AS {qi(v)}" for e, v in zip(in_sql, ins))
                          + f" FROM {numbered} ORDER BY file_row_number")
    frame = table.select(ins).to_pandas()
    for v in ins:
        if v not in categorical and np.isinf(frame[v].to_numpy()).any():
            raise StatgridError(f"INPUT variable {v!r} in {src} holds infinite values; the forest cannot split on "
                                "them: set them missing or to a finite value first.")
    y_all = table.column("__y").to_numpy(zero_copy_only=False)
    used = ~table.column("__y").is_null().to_numpy(zero_copy_only=False)
    X_tr, y_tr = frame[used].reset_index(drop=True), y_all[used]
    if kind == "regression" or numeric_target:
        y_tr = y_tr.astype(np.float64)

    encode = ColumnTransformer(
        [(f"in{i}", OneHotEncoder(handle_unknown="ignore", sparse_output=False) if v in categorical
          else "passthrough", [v]) for i, v in enumerate(ins)], remainder="drop", sparse_threshold=0.0)
    Forest = RandomForestClassifier if kind == "classification" else RandomForestRegressor
    rf = Forest(n_estimators=ntrees, max_depth=max_depth, min_samples_leaf=min_leaf,
                max_features=vars_to_try or "sqrt", bootstrap=True, oob_score=oob, random_state=seed,
                n_jobs=s.options.effective_threads)
    model = Pipeline([("encode", encode), ("forest", rf)])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Some inputs do not have OOB scores")
        model.fit(X_tr, y_tr)
    # Trees grow in parallel (each from its own seed, so the forest does not depend on threads);
    # predictions sum the trees in a fixed order, so a rerun gives the same bits.
    rf.set_params(n_jobs=1)

    n = len(y_tr)
    fit: dict[str, float | None] = {}
    n_oob = None
    if oob:
        left_out = np.full(n, ntrees, dtype=np.int64)
        for inbag in rf.estimators_samples_:
            left_out[np.unique(inbag)] -= 1
        has = left_out > 0
        n_oob = int(has.sum())
        if n_oob < n:
            s.log.note(f"{n - n_oob} of the {n} observations used were in every tree's bootstrap sample; "
                       "the OOB statistics leave them out (more trees make this rare).")
    new_cols: dict[str, object] = {}
    texts = None
    if kind == "classification":
        classes = rf.classes_
        proba = model.predict_proba(frame)
        onehot_tr = (y_tr[:, None] == classes[None, :]).astype(float)
        p_tr = proba[used]
        fit["ase_train"] = float(np.mean((onehot_tr - p_tr) ** 2))
        fit["misclass_train"] = float(np.mean(classes[p_tr.argmax(axis=1)] != y_tr))
        if oob and n_oob:
            p_oob = rf.oob_decision_function_[has]
            fit["ase_oob"] = float(np.mean((onehot_tr[has] - p_oob) ** 2))
            fit["misclass_oob"] = float(np.mean(classes[p_oob.argmax(axis=1)] != y_tr[has]))
        texts = [_level_text(c) for c in classes]
        if len(set(texts)) < len(texts):           # levels that print alike (1.000000001, 1.000000002)
            texts = [repr(c) for c in classes]
        for j, text in enumerate(texts):
            new_cols[f"P_{tgt}{text}"] = proba[:, j]
        new_cols[f"I_{tgt}"] = classes[proba.argmax(axis=1)]
    else:
        pred = model.predict(frame)
        sst = float(np.sum((y_tr - y_tr.mean()) ** 2))
        sse = float(np.sum((y_tr - pred[used]) ** 2))
        fit["ase_train"] = sse / n
        fit["rsquare_train"] = 1 - sse / sst if sst > 0 else None
        if oob and n_oob:
            y_h, p_h = y_tr[has], rf.oob_prediction_[has]
            sst_h = float(np.sum((y_h - y_h.mean()) ** 2))
            sse_h = float(np.sum((y_h - p_h) ** 2))
            fit["ase_oob"] = sse_h / n_oob
            fit["rsquare_oob"] = 1 - sse_h / sst_h if sst_h > 0 else None
        new_cols[f"P_{tgt}"] = pred

    # Importance per input: impurity summed over its design columns; permutation on the training rows.
    slices = encode.output_indices_
    impurity = [float(rf.feature_importances_[slices[f"in{i}"]].sum()) for i in range(len(ins))]
    width = [slices[f"in{i}"].stop - slices[f"in{i}"].start for i in range(len(ins))]
    perm = permutation_importance(model, X_tr, y_tr, n_repeats=PERMUTATION_REPEATS, random_state=seed, n_jobs=1)
    order = sorted(range(len(ins)), key=lambda i: -impurity[i])
    rows = [[ins[i], width[i], impurity[i], float(perm.importances_mean[i]), float(perm.importances_std[i])]
            for i in order]
    result = ResultTable(["Variable", "Columns", "ImpurityImportance", "PermutationImportance", "PermutationStd"],
                         rows, stats={"kind": kind, "target": tgt, "n_read": n_read, "n_used": int(n),
                                      "n_oob": n_oob, "fit": fit, "model": model,
                                      "levels": texts})
    if out:
        result.out = _write_scored(s, out, numbered, names, table.column("__row"), new_cols)
    if outimportance:
        s.write_table(outimportance, result.to_arrow())
    if print:
        s.log.listing(_forest_listing(result, ntrees, vars_to_try, n_design, max_depth, min_leaf, seed))
    return result


def _write_scored(s, out: str, numbered: str, names: list[str], row_numbers, new_cols: dict):
    """out=: every input column (a column named like a new one is replaced) plus `new_cols`."""
    import pyarrow as pa

    arrays = [row_numbers] + [pa.array(v) for v in new_cols.values()]
    pred = pa.Table.from_arrays(arrays, names=["__row", *new_cols])
    lower = {c.lower() for c in new_cols}
    replaced = [c for c in names if c.lower() in lower]
    if replaced:
        s.log.note(f"out= replaces the input column(s) {', '.join(replaced)} with the procedure's own.")
    select = [f"d.{qi(c)}" for c in names if c.lower() not in lower] + [f"p.{qi(c)}" for c in new_cols]
    s.con.register(_PRED, pred)
    try:
        return s.write(out, f"SELECT {', '.join(select)} FROM {numbered} AS d LEFT JOIN temp.main.{_PRED} AS p "
                            "ON d.file_row_number = p.__row ORDER BY d.file_row_number")
    finally:
        s.con.unregister(_PRED)


def _forest_listing(t: ResultTable, ntrees, vars_to_try, n_design, max_depth, min_leaf, seed) -> str:
    st = t.stats
    fit = st["fit"]
    info = [["Target", st["target"]], ["Kind", st["kind"]],
            ["Levels", " ".join(st["levels"]) if st["levels"] else "."], ["Number of trees", ntrees],
            ["Variables to try", vars_to_try or max(1, int(math.sqrt(n_design)))], ["Design columns", n_design],
            ["Maximum depth", max_depth if max_depth is not None else "none"], ["Minimum leaf size", min_leaf],
            ["Seed", seed]]
    nobs = [["Number of observations read", st["n_read"]], ["Number of observations used", st["n_used"]]]
    if st["n_oob"] is not None:
        nobs.append(["Number with an out-of-bag prediction", st["n_oob"]])
    second = ("misclass", "Misclassification Rate") if st["kind"] == "classification" else ("rsquare", "R-Square")
    stats = [["Average Square Error", fit.get("ase_train"), fit.get("ase_oob")],
             [second[1], fit.get(f"{second[0]}_train"), fit.get(f"{second[0]}_oob")]]
    imp = render_table(["Variable", "Columns", "Impurity Importance", "Permutation Importance (training)",
                        "Std"], t.rows, title="Variable Importance")
    return "\n".join(["The HPFOREST Procedure", render_table(["Description", "Value"], info, title="Model Information",
                                                             right_align=[False, False]),
                      render_table(["Description", "N"], nobs, title="Number of Observations"),
                      render_table(["Statistic", "Training", "Out-of-Bag"], stats, title="Fit Statistics"), imp])


# ---------------------------------------------------------------------------- fastclus
@procedure("PROCEDURE FASTCLUS")
def fastclus(s, data: str, var: str | Sequence[str] | None, maxclusters: int, seed: int = 1, maxiter: int = 100,
             standardize: bool = False, out: str | None = None, outstat: str | None = None,
             print: bool = True, proc_title: str = "FASTCLUS") -> ResultTable:
    """k-means with `maxclusters` clusters on the numeric `var` variables (default: all numeric).
    Returns the cluster summary (Cluster, Frequency, RMSStd, MaxDistance, NearestCluster,
    CentroidDistance) with `stats`: means (ResultTable: Cluster and each variable's mean),
    variables (ResultTable: Variable, TotalStd, WithinStd, RSquare, RSqRatio), overall_rsquare,
    pseudo_f, centers (k × p, the space clustered in), n_read, n_used, iterations, converged,
    streamed. out= adds CLUSTER (1-based) and DISTANCE (to the cluster's centre) to every row;
    outstat= one row per cluster: CLUSTER, _FREQ_, _RMSSTD_, _RADIUS_, _NEAR_, _GAP_, the means. proc_title: the
    procedure the listing names ("HPCLUS" when PROC HPCLUS asked)."""
    src, types = dataset_types(s, data)
    names = list(types)
    variables = list(dict.fromkeys(check_columns(as_list(var), names, "VAR", str(src)))) if var else \
        [c for c, t in types.items() if is_numeric(t)]
    if not variables:
        raise StatgridError(f"{src} has no numeric variables; name them with var=[...].")
    for v in variables:
        if not is_numeric(types[v]):
            raise StatgridError(f"VAR variable {v!r} in {src} is {types[v]}, not numeric; k-means needs numbers "
                                "(code a category as 0/1 columns).")
    k = maxclusters
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise StatgridError(f"maxclusters={k!r} is not allowed: use a whole number ≥ 1.")
    if not isinstance(maxiter, int) or isinstance(maxiter, bool) or maxiter < 1:
        raise StatgridError(f"maxiter={maxiter!r} is not allowed: use a whole number ≥ 1.")
    p = len(variables)
    complete = " AND ".join(f"isfinite(CAST({qi(v)} AS DOUBLE))" for v in variables)   # NULL, NaN, ±inf: missing
    n_read, n_used = s.con.sql(f"SELECT count(*), count(*) FILTER (WHERE {complete}) "
                               f"FROM {src.scan_sql()}").fetchall()[0]
    if n_read == 0:
        raise StatgridError(f"{src} has no observations; nothing to cluster.")
    if n_used == 0:
        raise StatgridError(f"every one of the {n_read} observations of {src} has a missing value in "
                            f"{', '.join(variables)}; nothing to cluster.")
    if k > n_used:
        raise StatgridError(f"maxclusters={k} is more than the {n_used} observations used (of {n_read}); "
                            f"use maxclusters ≤ {n_used}.")
    distinct = s.con.sql(f"SELECT count(*) FROM (SELECT DISTINCT {', '.join(qi(v) for v in variables)} "
                         f"FROM {src.scan_sql()} WHERE {complete} LIMIT {k})").fetchall()[0][0]
    if distinct < k:
        raise StatgridError(f"the observations used have only {distinct} distinct points in "
                            f"{', '.join(variables)}; use maxclusters ≤ {distinct}.")
    if n_used < n_read:
        s.log.note(f"{n_read - n_used} observation(s) with a missing value in a VAR variable are not clustered.")

    loc, scale = np.zeros(p), np.ones(p)
    if standardize:
        r = s.con.sql("SELECT " + ", ".join(f"avg(CAST({qi(v)} AS DOUBLE)), stddev_samp(CAST({qi(v)} AS DOUBLE))"
                                            for v in variables)
                      + f" FROM {src.scan_sql()} WHERE {complete}").fetchall()[0]
        loc = np.array(r[0::2], dtype=float)
        scale = np.array([x if x else 1.0 for x in r[1::2]], dtype=float)
        z_sql = [f"(CAST({qi(v)} AS DOUBLE) - {_lit(loc[j])}) / {_lit(scale[j])}" for j, v in enumerate(variables)]
    else:
        z_sql = [f"CAST({qi(v)} AS DOUBLE)" for v in variables]
    numbered = src.scan_sql(row_numbers=True)
    base = ("SELECT file_row_number AS __row, "
            + ", ".join(f"{e} AS __z{j}" for j, e in enumerate(z_sql))
            + "".join(f", CAST({qi(v)} AS DOUBLE) AS __x{j}" for j, v in enumerate(variables))
            + f" FROM {numbered} WHERE {complete}")
    z_cols = ", ".join(f"__z{j}" for j in range(p))

    from threadpoolctl import threadpool_limits

    memsize = s.options.memsize_bytes
    streamed = n_used * p * 8 > memsize
    with threadpool_limits(limits=s.options.effective_threads), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Number of distinct clusters")
        if not streamed:
            from sklearn.cluster import KMeans

            X = _matrix(s.fetch_arrow(f"SELECT {z_cols} FROM ({base}) ORDER BY __row"))
            km = KMeans(n_clusters=k, n_init=KMEANS_RESTARTS, max_iter=maxiter, random_state=seed).fit(X)
            centers, iterations = km.cluster_centers_, int(km.n_iter_)
            converged = iterations < maxiter
        else:
            centers, iterations, converged = _streamed_kmeans(s, base, z_cols, p, k, n_used, seed, maxiter)
    if not converged:
        s.log.note(f"k-means did not converge in maxiter={maxiter} iterations; the clusters are those of the last "
                   "iteration. Raise maxiter.")

    # Final assignment and statistics in the engine, one pass.
    assign = _assign_sql(base, centers)
    aggs = ["count(*)", "min(__row)", "max(__dist)"] + [f"avg(__z{j})" for j in range(p)] + \
        [f"var_pop(__z{j}) * count(*)" for j in range(p)] + [f"avg(__x{j})" for j in range(p)]
    got = s.con.sql(f"SELECT __c, {', '.join(aggs)} FROM ({assign}) GROUP BY GROUPING SETS ((__c), ()) "
                    "ORDER BY __c NULLS LAST").fetchall()
    total = got[-1]
    per = {r[0]: r for r in got[:-1]}
    # Number clusters by their first observation; a cluster with no member (possible only when
    # the centres leave one empty) comes last.
    old_order = sorted(per, key=lambda c: per[c][2]) + [c for c in range(1, k + 1) if c not in per]
    new_of_old = {old: new for new, old in enumerate(old_order, 1)}
    freq = np.array([per[c][1] if c in per else 0 for c in old_order], dtype=np.int64)
    radius = [per[c][3] if c in per else None for c in old_order]
    zmean = np.array([per[c][4:4 + p] if c in per else centers[c - 1] for c in old_order], dtype=float)
    within = np.array([per[c][4 + p:4 + 2 * p] if c in per else [0.0] * p for c in old_order], dtype=float)
    xmean = [list(per[c][4 + 2 * p:]) if c in per else [None] * p for c in old_order]
    if len(per) < k:
        s.log.note(f"{k - len(per)} cluster(s) have no observations.")
    rms = [math.sqrt(within[i].sum() / (p * (freq[i] - 1))) if freq[i] > 1 else None for i in range(k)]
    gaps = np.sqrt(((zmean[:, None, :] - zmean[None, :, :]) ** 2).sum(axis=2))
    np.fill_diagonal(gaps, np.inf)
    near = [int(np.argmin(gaps[i])) + 1 if k > 1 else None for i in range(k)]
    gap = [float(gaps[i, near[i] - 1]) if k > 1 else None for i in range(k)]
    summary_rows = [[i + 1, int(freq[i]), rms[i], radius[i], near[i], gap[i]] for i in range(k)]

    tss = np.array(total[4 + p:4 + 2 * p], dtype=float)
    wss = within.sum(axis=0)
    var_rows = []
    for j, v in enumerate(variables):
        rsq = 1 - wss[j] / tss[j] if tss[j] > 0 else None
        var_rows.append([v, math.sqrt(tss[j] / (n_used - 1)) if n_used > 1 else None,
                         math.sqrt(wss[j] / (n_used - k)) if n_used > k else None, rsq,
                         rsq / (1 - rsq) if rsq is not None and rsq < 1 else None])
    overall = 1 - wss.sum() / tss.sum() if tss.sum() > 0 else None
    pseudo_f = ((overall / (k - 1)) / ((1 - overall) / (n_used - k))
                if overall is not None and k > 1 and n_used > k and overall < 1 else None)
    means = ResultTable(["Cluster", *variables], [[i + 1, *xmean[i]] for i in range(k)])
    result = ResultTable(["Cluster", "Frequency", "RMSStd", "MaxDistance", "NearestCluster", "CentroidDistance"],
                         summary_rows, stats={
                             "means": means,
                             "variables": ResultTable(["Variable", "TotalStd", "WithinStd", "RSquare", "RSqRatio"],
                                                      var_rows),
                             "overall_rsquare": overall, "pseudo_f": pseudo_f,
                             "centers": np.array([centers[c - 1] for c in old_order]), "n_read": n_read,
                             "n_used": n_used, "iterations": iterations, "converged": converged,
                             "streamed": streamed, "standardize": standardize})
    if out:
        mapping = "[" + ", ".join(str(new_of_old[c]) for c in range(1, k + 1)) + "]"
        replaced = [c for c in names if c.lower() in ("cluster", "distance")]
        if replaced:
            s.log.note(f"out= replaces the input column(s) {', '.join(replaced)} with the procedure's own.")
        select = [qi(c) for c in names if c not in replaced]
        inner = f"SELECT *, {', '.join(f'{e} AS __z{j}' for j, e in enumerate(z_sql))} FROM {numbered}"
        sql = (f"SELECT {', '.join(select)}, "
               f"CASE WHEN {complete} THEN list_extract({mapping}, list_position(__dl, list_min(__dl))) END "
               f"AS CLUSTER, CASE WHEN {complete} THEN sqrt(list_min(__dl)) END AS DISTANCE "
               f"FROM (SELECT *, {_distances_sql(centers)} AS __dl FROM ({inner})) ORDER BY file_row_number")
        result.out = s.write(out, sql)
    if outstat:
        import pyarrow as pa

        stat = pa.table({"CLUSTER": pa.array(range(1, k + 1), pa.int64()),
                         "_FREQ_": pa.array(freq.tolist(), pa.int64()),
                         "_RMSSTD_": pa.array(rms, pa.float64()), "_RADIUS_": pa.array(radius, pa.float64()),
                         "_NEAR_": pa.array(near, pa.int64()), "_GAP_": pa.array(gap, pa.float64()),
                         **{v: pa.array([xmean[i][j] for i in range(k)], pa.float64())
                            for j, v in enumerate(variables)}})
        s.write_table(outstat, stat)
    if print:
        s.log.listing(_fastclus_listing(result, k, maxiter, streamed, proc_title))
    return result


def _matrix(table) -> np.ndarray:
    if table.num_rows == 0:
        return np.empty((0, table.num_columns))
    return np.column_stack([c.to_numpy(zero_copy_only=False).astype(np.float64, copy=False) for c in table.columns])


def _distances_sql(centers: np.ndarray) -> str:
    """SQL list of the squared distances from (__z0, __z1, …) to each centre."""
    terms = [" + ".join(f"(__z{j} - {_lit(x)}) * (__z{j} - {_lit(x)})" for j, x in enumerate(c)) for c in centers]
    return f"list_value({', '.join(f'({x})' for x in terms)})"


def _assign_sql(base: str, centers: np.ndarray) -> str:
    """Rows of `base` with __c, the 1-based index of the nearest centre (ties: the lowest), and
    __dist, the Euclidean distance to it."""
    mid = f"SELECT *, {_distances_sql(centers)} AS __dl FROM ({base})"
    return f"SELECT *, list_position(__dl, list_min(__dl)) AS __c, sqrt(list_min(__dl)) AS __dist FROM ({mid})"


def _streamed_kmeans(s, base: str, z_cols: str, p: int, k: int, n_used: int, seed: int, maxiter: int):
    """Seeds from KMeans on a hashed sample, one MiniBatchKMeans pass over every chunk, then
    Lloyd passes in the engine until no centre moves. Returns (centres, Lloyd passes, converged)."""
    from sklearn.cluster import KMeans, MiniBatchKMeans

    budget_rows = s.options.memsize_bytes // (8 * p)
    m = max(k, min(n_used, SAMPLE_ROWS_MAX, budget_rows // 2))
    sample = _matrix(s.fetch_arrow(f"SELECT {z_cols} FROM ({base}) "
                                   f"ORDER BY hash(__row, {int(seed)}), __row LIMIT {m}"))
    init = KMeans(n_clusters=k, n_init=KMEANS_RESTARTS, max_iter=maxiter, random_state=seed).fit(sample)
    mbk = MiniBatchKMeans(n_clusters=k, init=init.cluster_centers_, n_init=1, random_state=seed)
    # Chunks of about memsize/16 bytes (as reg's): Arrow, numpy and scikit-learn copies live at once.
    chunk_rows = max(4 * k, 256, min(1 << 20, budget_rows // 16))
    fitted = False
    reader = s.con.sql(f"SELECT {z_cols} FROM ({base})").to_arrow_reader(chunk_rows)
    for batch in reader:
        if batch.num_rows >= k:             # partial_fit needs at least k rows; the Lloyd passes see the rest
            mbk.partial_fit(_matrix(batch))
            fitted = True
    centers = mbk.cluster_centers_.copy() if fitted else init.cluster_centers_.copy()
    tol = 1e-12 * (1 + float(np.abs(centers).max()))
    for it in range(1, maxiter + 1):
        rows = s.con.sql(f"SELECT __c, {', '.join(f'avg(__z{j})' for j in range(p))} FROM "
                         f"({_assign_sql(base, centers)}) GROUP BY __c").fetchall()
        new = centers.copy()
        for r in rows:
            new[r[0] - 1] = r[1:]
        shift = float(np.abs(new - centers).max())
        centers = new
        if shift <= tol:
            return centers, it, True
    return centers, maxiter, False


def _fastclus_listing(t: ResultTable, k: int, maxiter: int, streamed: bool, proc_title: str = "FASTCLUS") -> str:
    st = t.stats
    method = ("streamed: sample seeds, MiniBatchKMeans, Lloyd passes in the engine" if streamed
              else f"in memory: KMeans, k-means++ seeds, {KMEANS_RESTARTS} restarts")
    head = (f"The {proc_title} Procedure\nMaxclusters={k} Maxiter={maxiter} "
            f"{'Standardize=STD ' if st['standardize'] else ''}({method}; "
            f"{st['iterations']} iterations, {'converged' if st['converged'] else 'not converged'})\n"
            f"Observations read {st['n_read']}, used {st['n_used']}\n")
    summary = render_table(["Cluster", "Frequency", "RMS Std Deviation", "Maximum Distance from Seed to Observation",
                            "Nearest Cluster", "Distance Between Cluster Centroids"], t.rows, title="Cluster Summary")
    var = render_table(["Variable", "Total STD", "Within STD", "R-Square", "RSQ/(1-RSQ)"], st["variables"].rows,
                       title="Statistics for Variables")
    tail = (f"Pseudo F Statistic = {format_value(st['pseudo_f'])}\n"
            f"Overall R-Square = {format_value(st['overall_rsquare'])}\n")
    means = render_table(st["means"].columns, st["means"].rows, title="Cluster Means")
    return f"{head}\n{summary}\n{var}\n{tail}\n{means}"
