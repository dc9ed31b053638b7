"""forest and fastclus against scikit-learn and numpy used directly on the same data."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from sklearn.cluster import KMeans
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.inspection import permutation_importance
from sklearn.metrics import accuracy_score, adjusted_rand_score, r2_score

from statgrid.errors import StatgridError
from statgrid.procs import mining

TOL = 1e-12        # forest: same trees, so importances and OOB figures agree to rounding
CTOL = 1e-9        # k-means: centroids and distances against numpy group means


def read(session, name) -> pd.DataFrame:
    return session.fetch_arrow("SELECT * FROM " + session.dataset(name).scan_sql()).to_pandas()


def put(session, name, df) -> None:
    session.write_table(name, pa.Table.from_pandas(df, preserve_index=False))


def small_budget(session, n_bytes: int) -> None:
    """Lower the memory budget the procedures read, not the engine's limit: the engine needs at
    least 64M to run a step (the config minimum), and data bigger than that would make slow tests."""
    session.options = dataclasses.replace(session.options, memsize_bytes=n_bytes)


class Encoded:
    """The forest fitted by the test on a design the test builds itself (pandas one-hot), scored
    as scikit-learn's default scorer would (accuracy or R²), for permutation_importance."""

    def __init__(self, rf, design, metric):
        self.rf, self.design, self.metric = rf, design, metric

    def fit(self, X, y):          # permutation_importance checks that the estimator has one
        return self

    def score(self, X, y):
        return self.metric(y, self.rf.predict(self.design(X)))


def one_hot(frame: pd.DataFrame, categorical: dict[str, list]) -> pd.DataFrame:
    """Each input in order; a categorical one as 0/1 columns for its training levels (sorted, a
    missing value last as a level of its own)."""
    parts = []
    for col in frame.columns:
        if col in categorical:
            for level in categorical[col]:
                hit = frame[col].isna() if level is None else frame[col] == level
                parts.append(hit.astype(float).rename(f"{col}={level}"))
        else:
            parts.append(frame[col].astype(float))
    return pd.concat(parts, axis=1)


@pytest.fixture
def cls_data(session):
    rng = np.random.default_rng(11)
    n = 240
    g = rng.choice(["b", "a", "c"], n).astype(object)
    g[rng.random(n) < 0.08] = None
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    score = x1 + 0.8 * (g == "a") - 0.6 * (g == "c") + 0.3 * rng.normal(size=n)
    y = np.where(score > 0.2, "yes", np.where(score < -0.8, "maybe", "no")).astype(object)
    x2[rng.random(n) < 0.1] = np.nan
    y[[3, 50, 51]] = None
    df = pd.DataFrame({"id": np.arange(n), "x1": x1, "g": g, "x2": x2, "y": y})
    put(session, "work.c", df)
    return df


def test_forest_classification_matches_sklearn(session, cls_data, captured):
    res = mining.forest(session, "work.c", "y", ["x1", "g", "x2"], ntrees=40, seed=7, out="work.o",
                        outimportance="work.imp")
    train = cls_data[cls_data["y"].notna()]
    levels = {"g": sorted(train["g"].dropna().unique()) + [None]}
    X = one_hot(cls_data[["x1", "g", "x2"]], levels)
    rf = RandomForestClassifier(n_estimators=40, max_features="sqrt", random_state=7, oob_score=True)
    rf.fit(X[cls_data["y"].notna()].to_numpy(), train["y"].to_numpy())
    got = read(session, "work.o")
    assert list(got.columns) == ["id", "x1", "g", "x2", "y", "P_ymaybe", "P_yno", "P_yyes", "I_y"]
    assert len(got) == len(cls_data)                      # rows with a missing target are scored too
    np.testing.assert_array_equal(got[["P_ymaybe", "P_yno", "P_yyes"]].to_numpy(), rf.predict_proba(X.to_numpy()))
    np.testing.assert_array_equal(got["I_y"].to_numpy(), rf.predict(X.to_numpy()))
    # impurity importance: the one-hot columns of g summed
    cols = {"x1": [0], "g": [1, 2, 3, 4], "x2": [5]}
    imp = {r[0]: r for r in res.rows}
    for v, idx in cols.items():
        assert imp[v][1] == len(idx)
        assert abs(imp[v][2] - rf.feature_importances_[idx].sum()) <= TOL
    assert [r[2] for r in res.rows] == sorted((r[2] for r in res.rows), reverse=True)
    perm = permutation_importance(Encoded(rf, lambda f: one_hot(f, levels).to_numpy(), accuracy_score),
                                  train[["x1", "g", "x2"]].reset_index(drop=True), train["y"].to_numpy(),
                                  n_repeats=5, random_state=7)
    for j, v in enumerate(["x1", "g", "x2"]):
        assert abs(imp[v][3] - perm.importances_mean[j]) <= TOL
        assert abs(imp[v][4] - perm.importances_std[j]) <= TOL
    fit = res.stats["fit"]
    assert res.stats["n_used"] == len(train) and res.stats["n_oob"] == len(train)
    assert abs(fit["misclass_oob"] - (1 - rf.oob_score_)) <= TOL
    onehot = (train["y"].to_numpy()[:, None] == rf.classes_[None, :]).astype(float)
    assert abs(fit["ase_oob"] - np.mean((onehot - rf.oob_decision_function_) ** 2)) <= TOL
    assert abs(fit["misclass_train"] - np.mean(rf.predict(X[cls_data["y"].notna()].to_numpy()) != train["y"])) <= TOL
    assert read(session, "work.imp")["Variable"].tolist() == [r[0] for r in res.rows]
    text = captured.listing.getvalue()
    assert "The HPFOREST Procedure" in text and "Misclassification Rate" in text and "Variable Importance" in text


def test_forest_regression_matches_sklearn(session):
    rng = np.random.default_rng(5)
    n = 200
    k = rng.integers(1, 4, n).astype(float)          # numeric, but a CLASS input
    x = rng.normal(size=n)
    x[rng.random(n) < 0.1] = np.nan
    r = 2 * np.nan_to_num(x) + k ** 2 + rng.normal(size=n)
    r[[0, 9]] = np.nan
    df = pd.DataFrame({"x": x, "k": k, "r": r})
    put(session, "work.r", df)
    res = mining.forest(session, "work.r", "r", "x k", class_="k", ntrees=30, max_depth=6, min_leaf=3, seed=3,
                        out="work.ro", print=False)
    used = df["r"].notna()
    levels = {"k": [1.0, 2.0, 3.0]}
    X = one_hot(df[["x", "k"]], levels).to_numpy()
    rf = RandomForestRegressor(n_estimators=30, max_depth=6, min_samples_leaf=3, max_features="sqrt",
                               random_state=3, oob_score=True).fit(X[used], df.loc[used, "r"])
    got = read(session, "work.ro")
    np.testing.assert_array_equal(got["P_r"].to_numpy(), rf.predict(X))
    fit = res.stats["fit"]
    assert abs(fit["rsquare_oob"] - rf.oob_score_) <= TOL
    assert abs(fit["ase_oob"] - np.mean((df.loc[used, "r"] - rf.oob_prediction_) ** 2)) <= TOL
    assert abs(fit["rsquare_train"] - r2_score(df.loc[used, "r"], rf.predict(X[used]))) <= TOL
    imp = {row[0]: row for row in res.rows}
    assert abs(imp["x"][2] - rf.feature_importances_[0]) <= TOL
    assert abs(imp["k"][2] - rf.feature_importances_[1:].sum()) <= TOL
    perm = permutation_importance(Encoded(rf, lambda f: one_hot(f, levels).to_numpy(), r2_score),
                                  df.loc[used, ["x", "k"]].reset_index(drop=True), df.loc[used, "r"].to_numpy(),
                                  n_repeats=5, random_state=3)
    assert abs(imp["x"][3] - perm.importances_mean[0]) <= TOL and abs(imp["k"][3] - perm.importances_mean[1]) <= TOL


def test_forest_numeric_target_as_classification(session):
    rng = np.random.default_rng(2)
    x = rng.normal(size=120)
    put(session, "work.n", pd.DataFrame({"x": x, "z": rng.normal(size=120), "bad": (x > 0).astype(float)}))
    res = mining.forest(session, "work.n", "bad", ["x", "z"], kind="classification", ntrees=20, out="work.no",
                        oob=False, vars_to_try=2, print=False)
    got = read(session, "work.no")
    rf = RandomForestClassifier(n_estimators=20, max_features=2, random_state=1).fit(np.column_stack(
        [got["x"], got["z"]]), got["bad"])
    np.testing.assert_array_equal(got["P_bad1"], rf.predict_proba(np.column_stack([got["x"], got["z"]]))[:, 1])
    assert res.stats["n_oob"] is None and set(res.stats["fit"]) == {"ase_train", "misclass_train"}
    assert res.stats["levels"] == ["0", "1"] and {"P_bad0", "P_bad1", "I_bad"} <= set(got.columns)
    np.testing.assert_allclose(got["P_bad0"] + got["P_bad1"], 1.0, rtol=0, atol=1e-12)
    assert set(got["I_bad"]) <= {0.0, 1.0} and res.rows[0][0] == "x"


def test_forest_errors(session, cls_data):
    with pytest.raises(StatgridError, match=r"TARGET variable 'nope' is not in WORK.C"):
        mining.forest(session, "work.c", "nope", ["x1"])
    with pytest.raises(StatgridError, match=r"INPUT variable 'w' is not in WORK.C"):
        mining.forest(session, "work.c", "y", ["x1", "w"])
    with pytest.raises(StatgridError, match=r"kind='regression' needs a numeric, non-CLASS target; 'y' is VARCHAR"):
        mining.forest(session, "work.c", "y", ["x1"], kind="regression")
    with pytest.raises(StatgridError, match=r"TARGET variable 'y' is also an input"):
        mining.forest(session, "work.c", "y", ["x1", "y"])
    with pytest.raises(StatgridError, match=r"ntrees=0 is not allowed"):
        mining.forest(session, "work.c", "y", ["x1"], ntrees=0)
    put(session, "work.one", pd.DataFrame({"x": [1.0, 2.0, 3.0], "t": ["only", None, "only"]}))
    with pytest.raises(StatgridError, match=r"TARGET variable 't' has one level \('only'\) in the 2 observations"):
        mining.forest(session, "work.one", "t", ["x"])
    put(session, "work.none", pd.DataFrame({"x": [1.0, 2.0], "t": pa.array([None, None], pa.float64())}))
    with pytest.raises(StatgridError, match=r"TARGET variable 't' is missing in all 2 observations"):
        mining.forest(session, "work.none", "t", ["x"])
    session.write_table("work.empty", pa.table({"x": pa.array([], pa.float64()), "t": pa.array([], pa.string())}))
    with pytest.raises(StatgridError, match=r"WORK.EMPTY has no observations"):
        mining.forest(session, "work.empty", "t", ["x"])
    small_budget(session, 4096)
    with pytest.raises(StatgridError, match=r"WORK.C needs about 13.1K in memory \(240 rows × 7 columns × 8 bytes\), "
                                            r"more than memsize=4K; draw a sample with surveyselect"):
        mining.forest(session, "work.c", "y", ["x1", "g", "x2"])


# ---------------------------------------------------------------------------- fastclus
CENTRES = np.array([[0.0, 0.0, 0.0], [6.0, 6.0, 0.0], [0.0, 6.0, 6.0], [6.0, 0.0, 6.0]])


def blobs(n_per: int, seed: int = 4) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = np.repeat(np.arange(len(CENTRES)), n_per)
    X = CENTRES[truth] + rng.normal(scale=0.5, size=(len(truth), 3))
    order = rng.permutation(len(truth))
    return pd.DataFrame(X[order], columns=["a", "b", "c"]), truth[order]


def group_stats(X: np.ndarray, labels: np.ndarray):
    """numpy: per label (1..k) its mean, frequency and within sum of squares."""
    k = labels.max()
    means = np.array([X[labels == c].mean(axis=0) for c in range(1, k + 1)])
    freq = np.array([(labels == c).sum() for c in range(1, k + 1)])
    within = np.array([((X[labels == c] - means[c - 1]) ** 2).sum(axis=0) for c in range(1, k + 1)])
    return means, freq, within


def test_fastclus_blobs_recovered(session, captured):
    df, truth = blobs(60)
    df.loc[[5, 17], "b"] = np.nan                        # missing: left out, CLUSTER missing in out=
    put(session, "work.b", df)
    res = mining.fastclus(session, "work.b", ["a", "b", "c"], 4, out="work.bo", outstat="work.bs")
    got = read(session, "work.bo")
    assert len(got) == len(df) and got.loc[[5, 17], ["CLUSTER", "DISTANCE"]].isna().all().all()
    ok = df.notna().all(axis=1).to_numpy()
    labels = got.loc[ok, "CLUSTER"].astype(int).to_numpy()
    assert adjusted_rand_score(truth[ok], labels) == 1.0
    assert labels[0] == 1                                # numbered by first observation
    X = df[ok].to_numpy()
    means, freq, within = group_stats(X, labels)
    np.testing.assert_allclose(np.array(res.stats["means"].rows)[:, 1:], means, rtol=0, atol=CTOL)
    stat = read(session, "work.bs")
    np.testing.assert_allclose(stat[["a", "b", "c"]].to_numpy(), means, rtol=0, atol=CTOL)
    assert res.column("Frequency") == freq.tolist() and sum(res.column("Frequency")) == ok.sum() == res.stats["n_used"]
    dist = np.sqrt(((X - means[labels - 1]) ** 2).sum(axis=1))
    np.testing.assert_allclose(got.loc[ok, "DISTANCE"].to_numpy(), dist, rtol=0, atol=CTOL)
    np.testing.assert_allclose(res.column("RMSStd"), np.sqrt(within.sum(axis=1) / (3 * (freq - 1))), rtol=1e-9)
    np.testing.assert_allclose(res.column("MaxDistance"), [dist[labels == c].max() for c in range(1, 5)], rtol=1e-9)
    gaps = np.sqrt(((means[:, None] - means[None]) ** 2).sum(axis=2)) + np.diag([np.inf] * 4)
    assert res.column("NearestCluster") == (gaps.argmin(axis=1) + 1).tolist()
    np.testing.assert_allclose(res.column("CentroidDistance"), gaps.min(axis=1), rtol=1e-9)
    tss = ((X - X.mean(axis=0)) ** 2).sum(axis=0)
    np.testing.assert_allclose(res.stats["variables"].column("RSquare"), 1 - within.sum(axis=0) / tss, rtol=1e-9)
    assert stat["_FREQ_"].tolist() == freq.tolist()
    text = captured.listing.getvalue()
    assert "Maximum Distance from Seed to Observation" in text and "Cluster Means" in text


def reference_kmeans(session, X, **kw) -> KMeans:
    """scikit-learn's KMeans with the session's threads, as fastclus runs it: the threads split the
    sums, so a reference with all the machine's cores could differ in the last bits (and a point
    near a boundary change cluster) on a machine with another core count."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=session.options.effective_threads):
        return KMeans(**kw).fit(X)


def test_fastclus_matches_sklearn_kmeans_on_overlapping_data(session):
    """No clear clusters: the partition is k-means' local optimum, which must be scikit-learn's."""
    rng = np.random.default_rng(8)
    X = rng.uniform(size=(150, 2))
    put(session, "work.u", pd.DataFrame(X, columns=["u", "v"]))
    res = mining.fastclus(session, "work.u", "u v", 5, seed=13, out="work.uo", print=False)
    km = reference_kmeans(session, X, n_clusters=5, n_init=10, random_state=13)
    labels = read(session, "work.uo")["CLUSTER"].to_numpy()
    assert adjusted_rand_score(km.labels_, labels) == 1.0 and not res.stats["streamed"]
    means, _, _ = group_stats(X, labels)
    np.testing.assert_allclose(res.stats["centers"], means, rtol=0, atol=CTOL)


def test_fastclus_standardize(session):
    df, truth = blobs(40, seed=9)
    df["c"] = df["c"] * 1000.0                            # a big scale would dominate unstandardised distances
    put(session, "work.s", df)
    res = mining.fastclus(session, "work.s", ["a", "b", "c"], 4, standardize=True, out="work.so", print=False)
    X = df.to_numpy()
    Z = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    km = reference_kmeans(session, Z, n_clusters=4, n_init=10, random_state=1)
    labels = read(session, "work.so")["CLUSTER"].to_numpy()
    assert adjusted_rand_score(km.labels_, labels) == 1.0 == adjusted_rand_score(truth, labels)
    means, _, _ = group_stats(X, labels)                 # means in data units
    np.testing.assert_allclose(np.array(res.stats["means"].rows)[:, 1:], means, rtol=1e-12, atol=CTOL)
    zmeans, _, _ = group_stats(Z, labels)                # centres and distances in standard units
    np.testing.assert_allclose(res.stats["centers"], zmeans, rtol=0, atol=CTOL)


def test_fastclus_streamed_agrees_with_in_memory(session):
    df, truth = blobs(500, seed=6)
    df.loc[[2, 700], "a"] = np.nan
    put(session, "work.big", df)
    whole = mining.fastclus(session, "work.big", ["a", "b", "c"], 4, out="work.m1", print=False)
    in_memory = read(session, "work.m1")
    small_budget(session, 16 * 1024)                     # 1998 rows × 3 × 8 bytes ≈ 47K > 16K
    streamed = mining.fastclus(session, "work.big", ["a", "b", "c"], 4, out="work.m2", print=False)
    chunked = read(session, "work.m2")
    assert streamed.stats["streamed"] and not whole.stats["streamed"] and streamed.stats["converged"]
    ok = in_memory["CLUSTER"].notna()
    assert adjusted_rand_score(in_memory.loc[ok, "CLUSTER"], chunked.loc[ok, "CLUSTER"]) == 1.0
    assert adjusted_rand_score(truth[ok.to_numpy()], chunked.loc[ok, "CLUSTER"]) == 1.0
    # both number clusters by first observation, so the labels themselves agree
    assert in_memory["CLUSTER"].equals(chunked["CLUSTER"])
    np.testing.assert_allclose(streamed.stats["centers"], whole.stats["centers"], rtol=0, atol=CTOL)
    np.testing.assert_allclose(chunked["DISTANCE"], in_memory["DISTANCE"], rtol=0, atol=CTOL)
    assert sum(streamed.column("Frequency")) == len(df) - 2


def test_fastclus_one_cluster_and_constant_column(session):
    put(session, "work.k1", pd.DataFrame({"a": [1.0, 2.0, 3.0, 6.0], "b": [5.0] * 4}))
    res = mining.fastclus(session, "work.k1", ["a", "b"], 1, standardize=True, print=False)
    assert res.rows == [[1, 4, res.rows[0][2], res.rows[0][3], None, None]]
    np.testing.assert_allclose(res.stats["means"].rows[0][1:], [3.0, 5.0], rtol=1e-15)
    assert res.stats["variables"].column("RSquare")[1] is None     # no spread in b: R² undefined


def test_fastclus_errors(session):
    put(session, "work.e", pd.DataFrame({"a": [1.0, None, 3.0, 4.0], "b": [1.0, 2.0, 3.0, 3.0],
                                         "s": ["x", "y", "z", "w"], "d": [1.0, 1.0, 1.0, 2.0]}))
    with pytest.raises(StatgridError, match=r"VAR variable 'q' is not in WORK.E"):
        mining.fastclus(session, "work.e", ["a", "q"], 2)
    with pytest.raises(StatgridError, match=r"VAR variable 's' in WORK.E is VARCHAR, not numeric"):
        mining.fastclus(session, "work.e", ["a", "s"], 2)
    with pytest.raises(StatgridError, match=r"maxclusters=0 is not allowed: use a whole number ≥ 1"):
        mining.fastclus(session, "work.e", ["a", "b"], 0)
    with pytest.raises(StatgridError, match=r"maxclusters=4 is more than the 3 observations used \(of 4\)"):
        mining.fastclus(session, "work.e", ["a", "b"], 4)
    with pytest.raises(StatgridError, match=r"only 2 distinct points in d; use maxclusters ≤ 2"):
        mining.fastclus(session, "work.e", ["d"], 3)
    put(session, "work.allmiss", pd.DataFrame({"a": pa.array([None, None], pa.float64())}))
    with pytest.raises(StatgridError, match=r"every one of the 2 observations of WORK.ALLMISS has a missing value"):
        mining.fastclus(session, "work.allmiss", "a", 1)
    session.write_table("work.none", pa.table({"a": pa.array([], pa.float64())}))
    with pytest.raises(StatgridError, match=r"WORK.NONE has no observations"):
        mining.fastclus(session, "work.none", "a", 1)


def test_nan_and_infinity_count_as_missing(session):
    """Parquet can hold NaN (not NULL); SAS has no NaN, so both procedures treat it as missing."""
    a = [0.0, 0.1, float("nan"), 5.0, 5.1, 0.2, 5.2, float("inf")]
    session.write_table("work.f", pa.table({"a": pa.array(a), "t": pa.array([1.0, float("nan"), 2.0, 3.0, 1.0,
                                                                             2.0, 3.0, 1.0])}))
    res = mining.fastclus(session, "work.f", "a", 2, out="work.fo", print=False)
    got = read(session, "work.fo")
    assert res.stats["n_used"] == 6 and got["CLUSTER"].isna().tolist() == [False, False, True, False, False, False,
                                                                           False, True]
    assert got["CLUSTER"].iloc[[0, 1, 5]].tolist() == [1, 1, 1] and got["CLUSTER"].iloc[[3, 4, 6]].tolist() == [2] * 3
    with pytest.raises(StatgridError, match=r"INPUT variable 'a' in WORK.F holds infinite values"):
        mining.forest(session, "work.f", "t", "a", ntrees=5)
    session.write_table("work.g", pa.table({"a": pa.array(a[:7]), "t": pa.array([1.0, float("nan"), 2.0, 3.0, 1.0,
                                                                                 2.0, 3.0])}))
    res = mining.forest(session, "work.g", "t", "a", ntrees=5, out="work.go", print=False)
    assert res.stats["n_used"] == 6 and read(session, "work.go")["P_t"].notna().all()
