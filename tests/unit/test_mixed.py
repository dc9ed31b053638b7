"""mixed and glimmix against independent computations: the ANOVA (method-of-moments) estimates of
a balanced one-way random design, a dense numpy GLS solve and REML/ML likelihood with the
estimated covariance, simulated variance components, repeated CS ≡ random intercept, SAS's
degrees-of-freedom rules, and the hard cases: missing values, a single subject, a variance
component at the boundary, non-convergence, non-binary responses, memsize."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

pytest.importorskip("statsmodels")

from statgrid.errors import StatgridError
from statgrid.procs import glimmix as gx
from statgrid.procs import mixed as mx
from statgrid.procs.design import parse_effects


def write(session, name, **cols):
    session.write_table(name, pa.Table.from_pandas(pd.DataFrame(cols), preserve_index=False))


def oneway(seed=3, a=8, n=6, sd_a=2.0, sd_e=1.0):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(a), n)
    y = 10 + rng.normal(size=a)[g] * sd_a + rng.normal(size=a * n) * sd_e
    return g, y


def anova_components(g, y, a, n):
    """σ²_e = MSE, σ²_a = (MSA − MSE)/n for a balanced one-way layout."""
    ym = y.reshape(a, n)
    means = ym.mean(axis=1)
    msa = n * np.sum((means - y.mean()) ** 2) / (a - 1)
    mse = np.sum((ym - means[:, None]) ** 2) / (a * (n - 1))
    return mse, (msa - mse) / n


def dense_v(groups, Z, G, s2):
    """V = Z G Zᵀ (within subject) + σ² I, as a dense matrix."""
    same = groups[:, None] == groups[None, :]
    return same * (Z @ G @ Z.T) + s2 * np.eye(len(groups))


def dense_m2ll(y, X, V, reml):
    """−2 (restricted) log-likelihood with every constant, SAS's definition."""
    Vi = np.linalg.inv(V)
    xtvx = X.T @ Vi @ X
    b = np.linalg.solve(xtvx, X.T @ Vi @ y)
    r = y - X @ b
    n, p = X.shape
    out = np.linalg.slogdet(V)[1] + r @ Vi @ r
    if reml:
        return out + np.linalg.slogdet(xtvx)[1] + (n - p) * math.log(2 * math.pi)
    return out + n * math.log(2 * math.pi)


def covparm(r, name):
    return next(c["Estimate"] for c in r.stats["covparms"] if c["CovParm"] == name)


def sol(r):
    """Solution rows keyed by (Effect, CLASS levels…) → the statistics after them."""
    k = 5 if "DF" in r.columns else 4
    return {(row[0], *row[1:-k]): row[-k:] for row in r.rows}


# ---------------------------------------------------------------------------- variance components
def test_oneway_reml_equals_anova_estimates(session, captured):
    a, n = 8, 6
    g, y = oneway(a=a, n=n)
    write(session, "work.ow", batch=g, y=y)
    mse, va = anova_components(g, y, a, n)
    assert va > 0
    r = mx.mixed(session, "work.ow", "y =", class_="batch", random="batch")        # SAS: random batch;
    assert covparm(r, "Residual") == pytest.approx(mse, rel=1e-5)
    assert covparm(r, "batch") == pytest.approx(va, rel=1e-5)
    r2 = mx.mixed(session, "work.ow", "y =", class_="batch", random="intercept", subject="batch")
    assert covparm(r2, "Intercept") == pytest.approx(va, rel=1e-5)
    # intercept: the grand mean, SE² = MSA/(a n), containment DF = a − 1 (the classic F test)
    (est, se, dfv, _t, _p), = sol(r).values()
    assert est == pytest.approx(y.mean(), rel=1e-9)
    assert se == pytest.approx(math.sqrt((n * va + mse) / (a * n)), rel=1e-5) and dfv == a - 1
    # fit statistics: −2RLL against the dense formula, and SAS's criteria with d = 2, n* = N − 1, s = a
    V = dense_v(g, np.ones((a * n, 1)), np.array([[va]]), mse)
    m2 = dense_m2ll(y, np.ones((a * n, 1)), V, reml=True)
    fs = r.stats["fit"]
    assert fs["-2 Res Log Likelihood"] == pytest.approx(m2, rel=1e-9)
    nstar = a * n - 1
    assert fs["AIC"] == pytest.approx(m2 + 4, rel=1e-9)
    assert fs["AICC"] == pytest.approx(m2 + 4 * nstar / (nstar - 3), rel=1e-9)
    assert fs["BIC"] == pytest.approx(m2 + 2 * math.log(a), rel=1e-9)
    text = captured.listing.getvalue()
    for part in ("Covariance Parameter Estimates", "Fit Statistics", "Solution for Fixed Effects",
                 "-2 Res Log Likelihood", "Containment"):
        assert part in text


def test_boundary_variance_gives_zero_and_sas_note(session, captured):
    a, n = 6, 5
    rng = np.random.default_rng(11)
    g = np.repeat(np.arange(a), n)
    y = rng.normal(size=a * n)
    y -= np.repeat(y.reshape(a, n).mean(axis=1), n) * 0.9          # group means pulled together: MSA < MSE
    write(session, "work.bd", id=g, y=y)
    _, va = anova_components(g, y, a, n)
    assert va < 0
    r = mx.mixed(session, "work.bd", "y =", random="intercept", subject="id")
    assert covparm(r, "Intercept") == 0.0
    assert covparm(r, "Residual") == pytest.approx(np.var(y, ddof=1), rel=1e-5)    # REML with G = 0
    assert r.stats["g_not_pd"] and r.stats["d"] == 1                                # d counts no boundary parameter
    assert "Estimated G matrix is not positive definite" in captured.text.getvalue()
    assert "Estimated G matrix is not positive definite" in captured.listing.getvalue()
    cs = mx.mixed(session, "work.bd", "y =", repeated=True, subject="id", print=False)
    # REPEATED TYPE=CS lets the covariance go negative, as SAS: REML's CS is then the ANOVA estimate
    mse, _ = anova_components(g, y, a, n)
    assert covparm(cs, "CS") == pytest.approx(va, rel=1e-5) and covparm(cs, "Residual") == pytest.approx(mse, rel=1e-5)


def test_effect_syntax():
    """mixed reads MODEL with the design layer glm uses (statgrid.procs.design)."""
    names = ["y", "A", "b", "c", "x"]
    got = [(e.name, e.variables) for e in parse_effects("x a|B c(a) a*x", names, "model")]
    assert got == [("x", ("x",)), ("A", ("A",)), ("b", ("b",)), ("A*b", ("A", "b")), ("c(A)", ("c", "A")),
                   ("A*x", ("A", "x"))]
    with pytest.raises(StatgridError, match="effect variable 'z' in model is not in the data"):
        parse_effects("x z", names, "model")


# ---------------------------------------------------------------------------- fixed effects
@pytest.fixture
def panel(session):
    """30 subjects × 6 visits, a covariate, a 3-level factor, a between-subject treatment; a few
    missing values."""
    rng = np.random.default_rng(1)
    g, m = 30, 6
    sid = np.repeat(np.arange(g), m)
    x = rng.normal(size=g * m)
    visit = np.tile(["v1", "v2", "v3"], g * m // 3)
    trt = np.where(sid % 2 == 0, "A", "B")
    y = (1 + 0.5 * x + (trt == "A") * 0.7 + (visit == "v2") * 0.3 + rng.normal(size=g)[sid] * 1.2
         + rng.normal(size=g * m))
    y[[3, 50]] = np.nan
    x[[7]] = np.nan
    df = pd.DataFrame({"id": sid, "x": x, "visit": visit, "trt": trt, "y": y})
    session.write_table("work.p", pa.Table.from_pandas(df, preserve_index=False))
    return df


def dense_design(df):
    """Reference (last-level) coding, as SAS's GLM parameterization keeps it."""
    return np.column_stack([np.ones(len(df)), df["x"], df["visit"] == "v1", df["visit"] == "v2",
                            df["trt"] == "A"]).astype(float)


def test_fixed_effects_match_numpy_gls(session, panel):
    r = mx.mixed(session, "work.p", "y = x visit trt", class_="id visit trt", random="intercept", subject="id")
    used = panel.dropna().reset_index(drop=True)
    assert r.stats["n_read"] == 180 and r.stats["n_used"] == len(used) == 177
    G, s2 = np.array(r.stats["G"]), r.stats["sigma2"]
    X, y = dense_design(used), used["y"].to_numpy()
    V = dense_v(used["id"].to_numpy(), np.ones((len(used), 1)), G, s2)
    Vi = np.linalg.inv(V)
    cov = np.linalg.inv(X.T @ Vi @ X)
    beta = cov @ X.T @ Vi @ y
    s = sol(r)
    got = [s[("Intercept", "", "")], s[("x", "", "")], s[("visit", "v1", "")], s[("visit", "v2", "")],
           s[("trt", "", "A")]]
    np.testing.assert_allclose([g[0] for g in got], beta, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose([g[1] for g in got], np.sqrt(np.diag(cov)), rtol=1e-6)
    assert s[("visit", "v3", "")][0] == 0 and s[("visit", "v3", "")][1] is None      # aliased last level
    assert s[("trt", "", "B")][0] == 0
    assert r.stats["fit"]["-2 Res Log Likelihood"] == pytest.approx(dense_m2ll(y, X, V, True), rel=1e-9)
    # and the covariance parameters are REML's optimum: statsmodels on the same data agrees
    import statsmodels.api as sm
    ref = sm.MixedLM(y, X, groups=used["id"]).fit(reml=True)
    assert s2 == pytest.approx(ref.scale, rel=1e-3) and G[0, 0] == pytest.approx(np.asarray(ref.cov_re)[0, 0], rel=1e-3)
    # containment DF (SAS): the intercept is contained in the subject effect → rank contribution
    # s − 1 − 1 (trt is constant within subject); x, visit, trt are not → residual n − rank[X Z]
    dfs = {row[0]: row[-3] for row in r.rows if row[-3] is not None}
    assert dfs["Intercept"] == 28 and dfs["x"] == dfs["visit"] == dfs["trt"] == 177 - 30 - 3
    # Type 3 (no interactions): Wald F of each effect's columns, computed here with numpy
    t3 = {t["Effect"]: t for t in r.stats["type3"]}
    b, c = beta[2:4], cov[2:4, 2:4]
    assert t3["visit"]["NumDF"] == 2 and t3["visit"]["FValue"] == pytest.approx(b @ np.linalg.solve(c, b) / 2,
                                                                                rel=1e-6)
    assert t3["x"]["FValue"] == pytest.approx((beta[1] / math.sqrt(cov[1, 1])) ** 2, rel=1e-6)


def test_missing_values_dropped_same_as_clean_data(session, panel):
    clean = panel.dropna().reset_index(drop=True)
    session.write_table("work.clean", pa.Table.from_pandas(clean, preserve_index=False))
    a = mx.mixed(session, "work.p", "y = x trt", class_="trt", random="intercept", subject="id", print=False)
    b = mx.mixed(session, "work.clean", "y = x trt", class_="trt", random="intercept", subject="id", print=False)
    assert a.rows == b.rows and a.stats["covparms"] == b.stats["covparms"]
    assert a.stats["n_read"] - a.stats["n_used"] == 3


def test_type3_with_interaction_is_effect_coded_hypothesis(session, panel):
    """Type III for trt in y = trt visit trt*visit (all cells filled): the test of equal trt
    marginal means averaged over visits — compare with numpy on the cell-means parameterization."""
    r = mx.mixed(session, "work.p", "y = trt|visit", class_="trt visit", random="intercept", subject="id",
                 print=False)
    used = panel.dropna(subset=["y", "trt", "visit"]).reset_index(drop=True)
    G, s2 = np.array(r.stats["G"]), r.stats["sigma2"]
    cells = [(t, v) for t in ("A", "B") for v in ("v1", "v2", "v3")]
    C = np.column_stack([(used["trt"] == t) & (used["visit"] == v) for t, v in cells]).astype(float)
    V = dense_v(used["id"].to_numpy(), np.ones((len(used), 1)), G, s2)
    Vi = np.linalg.inv(V)
    cov = np.linalg.inv(C.T @ Vi @ C)
    mu = cov @ C.T @ Vi @ used["y"].to_numpy()
    L = np.array([[1, 1, 1, -1, -1, -1]]) / 3.0                     # A average − B average
    f = float((L @ mu) @ np.linalg.solve(L @ cov @ L.T, L @ mu))
    t3 = {t["Effect"]: t for t in r.stats["type3"]}
    assert [t["Effect"] for t in r.stats["type3"]] == ["trt", "visit", "trt*visit"]
    assert t3["trt"]["FValue"] == pytest.approx(f, rel=1e-6)
    Lv = np.array([[1, -1, 0, 1, -1, 0], [0, 1, -1, 0, 1, -1]]) / 2.0
    fv = float((Lv @ mu) @ np.linalg.solve(Lv @ cov @ Lv.T, Lv @ mu)) / 2
    assert t3["visit"]["FValue"] == pytest.approx(fv, rel=1e-6) and t3["trt*visit"]["NumDF"] == 2


def test_mixed_and_glm_share_one_model_layer(session, panel):
    """Nesting (visit(trt)) and @n (x|trt@1 = x trt) read the same in mixed and glm: without random
    effects mixed is least squares, so the two give the same columns, the same aliased ones (one
    aliasing rule), the same estimates and the same Type III F tests (one sum-to-zero coding)."""
    model = "y = x|trt@1 visit(trt)"
    m = mx.mixed(session, "work.p", model, class_="trt visit", print=False)
    g = session.glm("work.p", model, class_="trt visit", print=False)
    assert [t["Effect"] for t in m.stats["type3"]] == [row[0] for row in g.stats["y"]["type3"]] == \
        ["x", "trt", "visit(trt)"]
    glm_rows = [row for row in g.rows if row[0] == "y"]
    assert [row[1] for row in glm_rows][:5] == ["Intercept", "x", "trt A", "trt B", "visit(trt) v1 A"]
    assert len(m.rows) == len(glm_rows) == 1 + 1 + 2 + 6
    assert [row[-4] is None for row in m.rows] == [row[4] is None for row in glm_rows]     # aliased: no SE
    np.testing.assert_allclose([row[-5] for row in m.rows], [row[2] for row in glm_rows], rtol=1e-9, atol=1e-12)
    f3 = {row[0]: row[4] for row in g.stats["y"]["type3"]}
    for t in m.stats["type3"]:
        assert t["FValue"] == pytest.approx(f3[t["Effect"]], rel=1e-8) and t["DenDF"] == g.stats["y"]["df_error"]


# ---------------------------------------------------------------------------- random slopes, repeated
def test_random_slopes_recover_simulated_components(session):
    rng = np.random.default_rng(21)
    g, m = 30, 8
    sid = np.repeat(np.arange(g), m)
    t = np.tile(np.arange(m, dtype=float), g) - 3.5
    u0, u1 = rng.normal(size=g) * 2.0, rng.normal(size=g) * 0.7
    y = 5 + 1.0 * t + u0[sid] + u1[sid] * t + rng.normal(size=g * m) * 1.0
    write(session, "work.rs", id=sid, t=t, y=y)
    r = mx.mixed(session, "work.rs", "y = t", random="intercept t", subject="id")
    assert covparm(r, "Intercept") == pytest.approx(4.0, rel=0.5)
    assert covparm(r, "t") == pytest.approx(0.49, rel=0.5)
    assert covparm(r, "Residual") == pytest.approx(1.0, rel=0.35)
    s = sol(r)
    assert s[("t",)][0] == pytest.approx(1.0, abs=0.35)
    assert s[("Intercept",)][2] == s[("t",)][2] == g - 1               # containment: Riesby-style s − 1
    # units: t in thousandths → the slope variance scales by 1e-6 and is not mistaken for a boundary 0
    write(session, "work.rs3", id=sid, t=t * 1000, y=y)
    r3 = mx.mixed(session, "work.rs3", "y = t", random="intercept t", subject="id", print=False)
    assert covparm(r3, "t") == pytest.approx(covparm(r, "t") * 1e-6, rel=1e-4) and not r3.stats["g_not_pd"]
    assert covparm(r3, "Intercept") == pytest.approx(covparm(r, "Intercept"), rel=1e-4)
    un = mx.mixed(session, "work.rs", "y = t", random="intercept t", subject="id", random_type="un", print=False)
    assert [c["CovParm"] for c in un.stats["covparms"]] == ["UN(1,1)", "UN(2,1)", "UN(2,2)", "Residual"]
    assert abs(covparm(un, "UN(2,1)")) < 1.0 and un.stats["d"] == 4
    assert un.stats["fit"]["-2 Res Log Likelihood"] <= r.stats["fit"]["-2 Res Log Likelihood"] + 1e-6
    # ML: −2LL against the dense formula, d = covariance parameters + rank X
    ml = mx.mixed(session, "work.rs", "y = t", random="intercept t", subject="id", method="ml", print=False)
    Z = np.column_stack([np.ones(g * m), t])
    V = dense_v(sid, Z, np.array(ml.stats["G"]), ml.stats["sigma2"])
    m2 = dense_m2ll(y, np.column_stack([np.ones(g * m), t]), V, reml=False)
    assert ml.stats["fit"]["-2 Log Likelihood"] == pytest.approx(m2, rel=1e-9)
    assert ml.stats["fit"]["AIC"] == pytest.approx(m2 + 2 * (3 + 2), rel=1e-9)


def test_repeated_cs_equals_random_intercept(session, panel, captured):
    ri = mx.mixed(session, "work.p", "y = x trt", class_="trt", random="intercept", subject="id", print=False)
    cs = mx.mixed(session, "work.p", "y = x trt", class_="trt", repeated="visit", subject="id", type="cs")
    assert [c["CovParm"] for c in cs.stats["covparms"]] == ["CS", "Residual"]
    assert covparm(cs, "CS") == pytest.approx(covparm(ri, "Intercept"), rel=1e-6)
    assert covparm(cs, "Residual") == pytest.approx(covparm(ri, "Residual"), rel=1e-6)
    for a, b in zip(ri.rows, cs.rows):
        assert a[0] == b[0] and (a[2] == pytest.approx(b[2], rel=1e-6, abs=1e-9))
    assert cs.stats["fit"]["-2 Res Log Likelihood"] == pytest.approx(ri.stats["fit"]["-2 Res Log Likelihood"],
                                                                      rel=1e-9)
    # DF: REPEATED only → between-within; trt is between subjects: s − rank(intercept, trt) = 28
    assert cs.stats["ddfm"] == "Between-Within" and ri.stats["ddfm"] == "Containment"
    df_cs = {row[0]: row[-3] for row in cs.rows if row[-3] is not None}
    assert df_cs == {"Intercept": 28, "x": 177 - 3 - 28, "trt": 28}
    assert "Compound Symmetry" in captured.listing.getvalue()


def test_no_random_effects_is_ols(session, panel):
    r = mx.mixed(session, "work.p", "y = x trt", class_="trt", print=False)
    used = panel.dropna().reset_index(drop=True)
    X = np.column_stack([np.ones(len(used)), used["x"], used["trt"] == "A"]).astype(float)
    b, res, *_ = np.linalg.lstsq(X, used["y"].to_numpy(), rcond=None)
    s = sol(r)
    np.testing.assert_allclose([s[("Intercept", "")][0], s[("x", "")][0], s[("trt", "A")][0]], b, rtol=1e-9)
    assert covparm(r, "Residual") == pytest.approx(res[0] / (len(used) - 3), rel=1e-9)
    assert r.stats["ddfm"] == "Residual" and s[("x", "")][2] == len(used) - 3


def test_out_writes_conditional_predictions(session, panel):
    r = mx.mixed(session, "work.p", "y = x", random="intercept", subject="id", out="work.pred", print=False)
    got = session.fetch_arrow("SELECT * FROM " + session.dataset("work.pred").scan_sql()).to_pandas()
    used = panel.dropna(subset=["y", "x"]).reset_index(drop=True)
    X = np.column_stack([np.ones(len(used)), used["x"]])
    ids = used["id"].to_numpy()
    G, s2 = np.array(r.stats["G"]), r.stats["sigma2"]
    V = dense_v(ids, np.ones((len(used), 1)), G, s2)
    beta = np.array([row[1] for row in r.rows])
    u = G[0, 0] * (ids[:, None] == ids[None, :]) @ np.linalg.solve(V, used["y"].to_numpy() - X @ beta)
    np.testing.assert_allclose(got["Pred"], X @ beta + u, rtol=1e-6)
    np.testing.assert_allclose(got["Resid"], used["y"] - got["Pred"], rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------- errors
def test_errors_are_clear(session, panel, monkeypatch):
    with pytest.raises(StatgridError, match="did not converge within maxiter=1"):
        mx.mixed(session, "work.p", "y = x", random="intercept", subject="id", maxiter=1)
    with pytest.raises(StatgridError, match=r"REPEATED TYPE=toep is not built; .* AR\(1\)"):
        mx.mixed(session, "work.p", "y = x", repeated=True, subject="id", type="toep")
    with pytest.raises(StatgridError, match="repeated= needs subject="):
        mx.mixed(session, "work.p", "y = x", repeated=True)
    with pytest.raises(StatgridError, match="'visit' in .* is VARCHAR.*class_="):
        mx.mixed(session, "work.p", "y = visit")
    with pytest.raises(StatgridError, match="RANDOM TYPE=AR\\(1\\) is not built"):
        mx.mixed(session, "work.p", "y = x", class_="visit", random="visit", subject="id", random_type="ar(1)")
    with pytest.raises(StatgridError, match="DDFM=KR3 is not built"):       # KR itself is built (h-mixed)
        mx.mixed(session, "work.p", "y = x", random="intercept", subject="id", ddfm="kr3")
    write(session, "work.one", id=np.zeros(10), x=np.arange(10.0), y=np.arange(10.0) ** 1.5)
    with pytest.raises(StatgridError, match="has 1 level .* at least 2 subjects"):
        mx.mixed(session, "work.one", "y = x", random="intercept", subject="id")
    write(session, "work.const", id=np.repeat([1, 2, 3], 3), y=np.ones(9))
    with pytest.raises(StatgridError, match="'y' is constant"):
        mx.mixed(session, "work.const", "y =", random="intercept", subject="id")
    write(session, "work.empty", id=[1.0, 2.0], y=[np.nan, np.nan])
    with pytest.raises(StatgridError, match="no observation with every variable"):
        mx.mixed(session, "work.empty", "y =", random="intercept", subject="id")
    monkeypatch.setattr(session, "options", dataclasses.replace(session.options, memsize_bytes=4096))
    with pytest.raises(StatgridError, match=r"180 rows × 3 variables × 8 bytes.*memsize"):
        mx.mixed(session, "work.p", "y = x", random="intercept", subject="id")


# ---------------------------------------------------------------------------- GLIMMIX
def binary_panel(session, g, m, sd, seed, slope=1.0):
    rng = np.random.default_rng(seed)
    sid = np.repeat(np.arange(g), m)
    x = rng.normal(size=g * m)
    eta = -0.5 + slope * x + rng.normal(size=g)[sid] * sd
    y = (rng.random(g * m) < 1 / (1 + np.exp(-eta))).astype(float)
    y[[0, 5]] = np.nan
    write(session, "work.bin", id=sid, x=x, y=y)
    return sid, x, y


def test_glimmix_vb_recovers_slope_and_names_method(session, captured):
    binary_panel(session, g=40, m=15, sd=1.0, seed=5)
    r = gx.glimmix(session, "work.bin", "y = x", random="intercept", subject="id", event=1)
    s = sol(r)
    assert s[("x",)][0] == pytest.approx(1.0, abs=0.3) and s[("x",)][1] > 0
    assert r.stats["n_used"] == 598 and r.stats["covparms"][0]["Estimate"] > 0
    text = captured.listing.getvalue()
    assert "Variational Bayes" in text and "not SAS's default RSPL" in text
    assert "modeling the probability that y='1'" in text
    assert "not SAS's default RSPL" in captured.text.getvalue()
    # SAS's default event is the first ordered level (y = 0): the slope changes sign
    r0 = gx.glimmix(session, "work.bin", "y = x", random="intercept", subject="id", print=False)
    assert r0.stats["event"] == 0 and sol(r0)[("x",)][0] == pytest.approx(-s[("x",)][0], rel=0.05)


def test_glimmix_map(session, captured):
    binary_panel(session, g=8, m=50, sd=1.5, seed=0)
    r = gx.glimmix(session, "work.bin", "y = x", random="intercept", subject="id", event="1", method="map")
    assert sol(r)[("x",)][0] == pytest.approx(1.0, abs=0.3)
    assert "Posterior mode with Laplace approximation" in captured.listing.getvalue()


def test_glimmix_errors(session):
    write(session, "work.tri", id=np.repeat([1, 2, 3], 4), x=np.arange(12.0), y=np.tile([0.0, 1.0, 2.0, 1.0], 3))
    with pytest.raises(StatgridError, match=r"must be binary .* found 3 value\(s\): 0, 1, 2"):
        gx.glimmix(session, "work.tri", "y = x", random="intercept", subject="id")
    with pytest.raises(StatgridError, match="random intercept per subject only"):
        gx.glimmix(session, "work.tri", "y = x", random="intercept x", subject="id")
    with pytest.raises(StatgridError, match="method='pl' is not one of vb, map"):
        gx.glimmix(session, "work.tri", "y = x", random="intercept", subject="id", method="pl")
    write(session, "work.bin1", id=np.ones(6), x=np.arange(6.0), y=np.array([0, 1, 0, 1, 1, 0.0]))
    with pytest.raises(StatgridError, match="at least 2 subjects"):
        gx.glimmix(session, "work.bin1", "y = x", random="intercept", subject="id")
    with pytest.raises(StatgridError, match="event='yes' is not a value"):
        gx.glimmix(session, "work.bin1", "y = x", random="intercept", subject="id", event="yes")
