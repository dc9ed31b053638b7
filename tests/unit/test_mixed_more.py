"""PROC MIXED's DDFM=SATTERTHWAITE, COVTEST, several and nested RANDOM effects, REPEATED structures
(AR(1), UN, SP(SPH)/SP(EXP) with LOCAL), PARMS, LSMEANS and METHOD= — each against R (lme4, lmerTest,
nlme, run by Rscript; skipped with the reason when R or a package is missing) or a dense numpy
computation of the restricted likelihood written here."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from statgrid.errors import StatgridError
from statgrid.procs import mixed as mx
from tests.support.rscript import rscript, skip_if_missing_package


def write(session, name, frame):
    session.write_table(name, pa.Table.from_pandas(frame, preserve_index=False))


def r_json(tmp_path, frame: pd.DataFrame, code: str, packages=("lme4", "lmerTest", "nlme", "jsonlite")) -> dict:
    """Run R code on the data frame `d` (read from CSV); the code leaves its result in `out`."""
    frame.to_csv(tmp_path / "d.csv", index=False)
    libs = "".join(f"suppressMessages(library({p}));" for p in packages)
    script = (f"{libs} d <- read.csv('{tmp_path / 'd.csv'}'); options(contrasts=c('contr.sum','contr.poly'));\n"
              f"{code}\ncat(jsonlite::toJSON(out, digits = NA, auto_unbox = TRUE))")
    res = rscript(script, packages)
    skip_if_missing_package(res)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def covparm(r, name, subject=None):
    return next(c for c in r.stats["covparms"] if c["CovParm"] == name and (subject is None or c["Subject"] == subject))


@pytest.fixture
def split_plot():
    rng = np.random.default_rng(7)
    g, m = 24, 4
    id_ = np.repeat(np.arange(g), m)
    trt = np.where(id_ < 12, "A", "B")
    time = np.tile(np.arange(1, m + 1), g)
    x = rng.normal(size=g * m)
    y = 10 + (trt == "B") * 1.0 + 0.3 * time + 0.5 * x + rng.normal(size=g)[id_] * 1.5 + rng.normal(size=g * m)
    return pd.DataFrame(dict(id=id_, trt=trt, time=time, x=x, y=y))


# ---------------------------------------------------------------------------- DDFM=SATTERTHWAITE
def test_satterthwaite_matches_lmertest(session, split_plot, tmp_path):
    write(session, "work.sp", split_plot)
    r = mx.mixed(session, "work.sp", "y = trt time trt*time x", class_="id trt time", random="intercept",
                 subject="id", ddfm="satterth", print=False)
    want = r_json(tmp_path, split_plot, """
        d$id <- factor(d$id); d$trt <- factor(d$trt); d$time <- factor(d$time)
        m <- lmer(y ~ trt * time + x + (1 | id), data = d, REML = TRUE)
        a <- anova(m, type = 3, ddf = "Satterthwaite")
        vc <- as.data.frame(VarCorr(m))
        out <- list(F = setNames(as.list(a[["F value"]]), rownames(a)), den = setNames(as.list(a$DenDF), rownames(a)),
                    xdf = summary(m)$coefficients["x", "df"], x = fixef(m)[["x"]], reml = REMLcrit(m),
                    vid = vc$vcov[1], vres = vc$vcov[2])""")
    t3 = {t["Effect"]: t for t in r.stats["type3"]}
    for sas, rn in (("trt", "trt"), ("time", "time"), ("x", "x"), ("trt*time", "trt:time")):
        assert t3[sas]["FValue"] == pytest.approx(want["F"][rn], rel=1e-5)
        assert t3[sas]["DenDF"] == pytest.approx(want["den"][rn], rel=1e-4)       # R: Hessian by differences
    xrow = next(row for row in r.rows if row[0] == "x")
    assert xrow[-5] == pytest.approx(want["x"], rel=1e-6) and xrow[-3] == pytest.approx(want["xdf"], rel=1e-4)
    assert covparm(r, "Intercept")["Estimate"] == pytest.approx(want["vid"], rel=1e-5)
    assert covparm(r, "Residual")["Estimate"] == pytest.approx(want["vres"], rel=1e-5)
    # (−2 Res LL is not compared: its log|XᵀV⁻¹X| term depends on the CLASS coding, R's sum-to-zero vs
    # SAS's GLM columns; test_nested_… compares it on a model without CLASS fixed effects)
    assert r.stats["ddfm"] == "Satterthwaite"
    # the default with RANDOM is containment: trt (between subjects, subject not nested) gets n − rank[X Z]
    c = mx.mixed(session, "work.sp", "y = trt time x", class_="id trt time", random="intercept", subject="id",
                 print=False)
    assert {t["Effect"]: t["DenDF"] for t in c.stats["type3"]} == {"trt": 96 - 24 - 4, "time": 68, "x": 68}
    res = mx.mixed(session, "work.sp", "y = trt time x", class_="id trt time", random="intercept", subject="id",
                   ddfm="residual", print=False)
    assert {t["DenDF"] for t in res.stats["type3"]} == {96 - 6}


# ---------------------------------------------------------------------------- COVTEST
def dense_m2ll_reml(y, X, V):
    Vi = np.linalg.inv(V)
    xtvx = X.T @ Vi @ X
    b = np.linalg.solve(xtvx, X.T @ Vi @ y)
    r = y - X @ b
    n, p = X.shape
    return (np.linalg.slogdet(V)[1] + r @ Vi @ r + np.linalg.slogdet(xtvx)[1] + (n - p) * math.log(2 * math.pi))


def test_covtest_standard_errors_are_the_inverse_hessian(session, split_plot):
    write(session, "work.sp", split_plot)
    r = mx.mixed(session, "work.sp", "y = x", random="intercept", subject="id", covtest=True, print=False)
    ids = split_plot["id"].to_numpy()
    same = (ids[:, None] == ids[None, :]).astype(float)
    X = np.column_stack([np.ones(len(ids)), split_plot["x"]])
    y = split_plot["y"].to_numpy()

    def f(t):
        return dense_m2ll_reml(y, X, t[0] * same + t[1] * np.eye(len(ids)))
    th = np.array([covparm(r, "Intercept")["Estimate"], covparm(r, "Residual")["Estimate"]])
    h = 1e-3 * th
    H = np.empty((2, 2))
    for i in range(2):
        for j in range(2):
            ei, ej = np.eye(2)[i] * h[i], np.eye(2)[j] * h[j]
            H[i, j] = (f(th + ei + ej) - f(th + ei - ej) - f(th - ei + ej) + f(th - ei - ej)) / (4 * h[i] * h[j])
    se = np.sqrt(np.diag(2 * np.linalg.inv(H)))
    for name, s_ in zip(("Intercept", "Residual"), se):
        c = covparm(r, name)
        assert c["StdErr"] == pytest.approx(s_, rel=1e-4)
        assert c["ZValue"] == pytest.approx(c["Estimate"] / s_, rel=1e-4)
        assert c["ProbZ"] == pytest.approx(0.5 * math.erfc(c["ZValue"] / math.sqrt(2)), rel=1e-6)   # one-sided
    un = mx.mixed(session, "work.sp", "y = x", random="intercept x", subject="id", random_type="un", covtest=True,
                  print=False)
    c21 = covparm(un, "UN(2,1)")
    assert c21["ProbZ"] == pytest.approx(math.erfc(abs(c21["ZValue"]) / math.sqrt(2)), rel=1e-6)   # two-sided


# ---------------------------------------------------------------------------- several and nested RANDOM effects
@pytest.fixture
def nested():
    rng = np.random.default_rng(11)
    c = np.repeat(np.arange(8), 12)                     # 8 plants
    b = np.tile(np.repeat(np.arange(3), 4), 8)          # 3 batches within each plant
    x = rng.normal(size=96)
    y = 5 + 0.4 * x + rng.normal(size=8)[c] * 1.2 + rng.normal(size=24)[c * 3 + b] * 0.8 + rng.normal(size=96) * 0.6
    return pd.DataFrame(dict(c=c, b=b, x=x, y=y))


def test_nested_random_effects_match_lme4(session, nested, tmp_path):
    write(session, "work.n", nested)
    want = r_json(tmp_path, nested, """
        d$c <- factor(d$c); d$b <- factor(d$b)
        m <- lmer(y ~ x + (1 | c) + (1 | c:b), data = d, REML = TRUE)
        vc <- as.data.frame(VarCorr(m))
        out <- list(v = setNames(as.list(vc$vcov), vc$grp), reml = REMLcrit(m), x = fixef(m)[["x"]])""")
    # two RANDOM statements, one with a nested subject
    r = mx.mixed(session, "work.n", "y = x", class_="b c", print=False,
                 randoms=[{"effects": "intercept", "subject": "c"}, {"effects": "intercept", "subject": "b(c)"}])
    assert covparm(r, "Intercept", "c")["Estimate"] == pytest.approx(want["v"]["c"], rel=1e-5)
    assert covparm(r, "Intercept", "b(c)")["Estimate"] == pytest.approx(want["v"]["c:b"], rel=1e-5)
    assert covparm(r, "Residual")["Estimate"] == pytest.approx(want["v"]["Residual"], rel=1e-5)
    assert r.stats["fit"]["-2 Res Log Likelihood"] == pytest.approx(want["reml"], rel=1e-8)
    # the same model as SAS's `random c b(c);` (CLASS random effects, no subject)
    r2 = mx.mixed(session, "work.n", "y = x", class_="b c", random="c b(c)", print=False)
    assert [c["CovParm"] for c in r2.stats["covparms"]] == ["c", "b(c)", "Residual"]
    assert covparm(r2, "b(c)")["Estimate"] == pytest.approx(want["v"]["c:b"], rel=1e-5)
    assert r2.stats["fit"]["-2 Res Log Likelihood"] == pytest.approx(want["reml"], rel=1e-8)
    # and `random intercept b / subject=c;`: b within the subject
    r3 = mx.mixed(session, "work.n", "y = x", class_="b c", random="intercept b", subject="c", print=False)
    assert covparm(r3, "b")["Estimate"] == pytest.approx(want["v"]["c:b"], rel=1e-5)
    xrow = next(row for row in r3.rows if row[0] == "x")
    assert xrow[1] == pytest.approx(want["x"], rel=1e-6)


def test_ml_matches_lme4(session, nested, tmp_path):
    write(session, "work.n", nested)
    want = r_json(tmp_path, nested, """
        d$c <- factor(d$c)
        m <- lmer(y ~ x + (1 | c), data = d, REML = FALSE)
        out <- list(dev = deviance(m), v = as.data.frame(VarCorr(m))$vcov)""")
    r = mx.mixed(session, "work.n", "y = x", random="intercept", subject="c", method="ml", print=False)
    assert r.stats["fit"]["-2 Log Likelihood"] == pytest.approx(want["dev"], rel=1e-8)
    assert covparm(r, "Intercept")["Estimate"] == pytest.approx(want["v"][0], rel=1e-5)


# ---------------------------------------------------------------------------- REPEATED structures
@pytest.fixture
def longitudinal():
    rng = np.random.default_rng(5)
    g, m = 30, 5
    id_ = np.repeat(np.arange(g), m)
    t = np.tile(np.arange(m, dtype=float), g)
    e = np.zeros(g * m)
    for i in range(g):                                  # AR(1) errors, ρ = 0.6, plus noise
        z = rng.normal(size=m)
        for k in range(m):
            e[i * m + k] = z[k] if k == 0 else 0.6 * e[i * m + k - 1] + math.sqrt(1 - 0.36) * z[k]
    y = 2 + 0.5 * t + 1.5 * e + 0.4 * rng.normal(size=g * m)
    return pd.DataFrame(dict(id=id_, t=t, time=(t + 1).astype(int), y=y))


def test_repeated_ar1_matches_nlme(session, longitudinal, tmp_path):
    write(session, "work.l", longitudinal)
    want = r_json(tmp_path, longitudinal, """
        m <- gls(y ~ t, data = d, correlation = corAR1(form = ~ time | id), method = "REML")
        out <- list(phi = coef(m$modelStruct$corStruct, unconstrained = FALSE)[[1]], s2 = m$sigma^2,
                    b = as.list(coef(m)))""")
    r = mx.mixed(session, "work.l", "y = t", class_="time", repeated="time", subject="id", type="ar(1)",
                 print=False)
    assert covparm(r, "AR(1)")["Estimate"] == pytest.approx(want["phi"], rel=1e-4)
    assert covparm(r, "Residual")["Estimate"] == pytest.approx(want["s2"], rel=1e-4)
    assert r.rows[1][1] == pytest.approx(want["b"]["t"], rel=1e-5)


def test_repeated_un_matches_nlme(session, longitudinal, tmp_path):
    write(session, "work.l", longitudinal)
    want = r_json(tmp_path, longitudinal, """
        m <- gls(y ~ t, data = d, correlation = corSymm(form = ~ time | id),
                 weights = varIdent(form = ~ 1 | time), method = "REML")
        V <- getVarCov(m)
        out <- list(V = as.vector(V), b = as.list(coef(m)))""")
    r = mx.mixed(session, "work.l", "y = t", class_="time", repeated="time", subject="id", type="un",
                 print=False)
    V = np.array(want["V"]).reshape(5, 5)
    for i in range(5):
        for j in range(i + 1):
            assert covparm(r, f"UN({i + 1},{j + 1})")["Estimate"] == pytest.approx(V[i, j], rel=1e-3, abs=1e-4)
    assert r.rows[1][1] == pytest.approx(want["b"]["t"], rel=1e-4)


@pytest.mark.parametrize("kind,rfun", [("sph", "corSpher"), ("exp", "corExp")])
def test_repeated_spatial_local_matches_nlme(session, kind, rfun, tmp_path):
    rng = np.random.default_rng(3 if kind == "sph" else 4)
    g, m = 25, 6
    id_ = np.repeat(np.arange(g), m)
    t = np.sort(rng.uniform(0, 10, size=(g, m)), axis=1).ravel()
    d = np.abs(t.reshape(g, m)[:, :, None] - t.reshape(g, m)[:, None, :])
    rho = 6.0
    C = np.where(d < rho, 1 - 1.5 * d / rho + 0.5 * (d / rho) ** 3, 0) if kind == "sph" else np.exp(-d / 3.0)
    e = np.concatenate([np.linalg.cholesky(2.0 * Ci + 0.5 * np.eye(m)) @ rng.normal(size=m) for Ci in C])
    frame = pd.DataFrame(dict(id=id_, t=t, y=1 + 0.3 * t + e))
    write(session, "work.s", frame)
    want = r_json(tmp_path, frame, f"""
        m <- gls(y ~ t, data = d, correlation = {rfun}(form = ~ t | id, nugget = TRUE), method = "REML")
        cs <- coef(m$modelStruct$corStruct, unconstrained = FALSE)
        out <- list(range = cs[["range"]], nugget = cs[["nugget"]], s2 = m$sigma^2, b = as.list(coef(m)))""")
    r = mx.mixed(session, "work.s", "y = t", repeated=True, subject="id", type=f"sp({kind})(t)", local=True,
                 print=False)
    assert [c["CovParm"] for c in r.stats["covparms"]] == ["Variance", f"SP({kind.upper()})", "Residual"]
    s2, nug = want["s2"], want["nugget"]
    assert covparm(r, f"SP({kind.upper()})")["Estimate"] == pytest.approx(want["range"], rel=1e-3)
    assert covparm(r, "Variance")["Estimate"] == pytest.approx(s2 * (1 - nug), rel=1e-3)
    assert covparm(r, "Residual")["Estimate"] == pytest.approx(s2 * nug, rel=1e-3)
    assert r.rows[1][1] == pytest.approx(want["b"]["t"], rel=1e-4)


# ---------------------------------------------------------------------------- PARMS, LSMEANS, errors
def test_parms_hold_noiter_and_lsmeans(session, split_plot):
    write(session, "work.sp", split_plot)
    r = mx.mixed(session, "work.sp", "y = trt time", class_="id trt time", random="intercept", subject="id",
                 lsmeans="trt", lsmeans_diff=True, print=False)
    cp = [c["Estimate"] for c in r.stats["covparms"]]
    # PARMS at the estimates with NOITER reproduces the fit; HOLD= keeps a value
    r0 = mx.mixed(session, "work.sp", "y = trt time", class_="id trt time", random="intercept", subject="id",
                  parms=cp, noiter=True, print=False)
    assert r0.stats["fit"]["-2 Res Log Likelihood"] == pytest.approx(r.stats["fit"]["-2 Res Log Likelihood"],
                                                                       rel=1e-12)
    rh = mx.mixed(session, "work.sp", "y = trt time", class_="id trt time", random="intercept", subject="id",
                  parms=[2.0, 1.0], hold=[1], print=False)
    assert covparm(rh, "Intercept")["Estimate"] == 2.0
    # LS-means of trt: the intercept + trt level + the average of the time levels, from the solution
    sol = {(row[0], row[1], row[2]): row[3] for row in r.rows}
    tm = np.mean([sol[("time", "", str(k))] for k in range(1, 5)])
    lsm = {row["trt"]: row for row in r.stats["lsmeans"]}
    for lev in ("A", "B"):
        assert lsm[lev]["Estimate"] == pytest.approx(sol[("Intercept", "", "")] + sol[("trt", lev, "")] + tm,
                                                     rel=1e-10)
        assert lsm[lev]["DF"] == 96 - 24 - 3           # containment: n − rank[X Z] (trt is in no random effect)
    d = r.stats["diffs"][0]
    assert d["Estimate"] == pytest.approx(lsm["A"]["Estimate"] - lsm["B"]["Estimate"], rel=1e-10)
    assert d["Estimate"] == pytest.approx(sol[("trt", "A", "")], rel=1e-10)
    with pytest.raises(StatgridError, match="PARMS gives 1 value"):
        mx.mixed(session, "work.sp", "y = trt", class_="trt", random="intercept", subject="id", parms=[1.0])
    with pytest.raises(StatgridError, match="LOCAL .* SP types only"):
        mx.mixed(session, "work.sp", "y = trt", class_="trt", repeated=True, subject="id", type="ar(1)", local=True)
    with pytest.raises(StatgridError, match=r"TYPE=SP\(SPH\) needs its coordinates"):
        mx.mixed(session, "work.sp", "y = trt", class_="trt", repeated=True, subject="id", type="sp(sph)")
