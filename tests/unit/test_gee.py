"""GEE (PROC GENMOD's REPEATED statement) against statsmodels' GEE and R's geepack::geeglm.

Tolerances: estimates, empirical standard errors and working correlations to 1e-6 relative (both
sides iterated to 1e-10 or tighter; the printed figures of SAS have 4 decimals).
Where SAS and the references differ: SAS's dispersion is Σe²/(N − p) and its correlation estimators
subtract p from the pair counts (GENMOD's documented moment estimators); statsmodels' Exchangeable
uses the same formulas (its ddof_scale = p), so EXCH and IND are compared with it end to end. geepack
divides by N and the pair counts without − p and statsmodels' AR and Unstructured estimators are others
again, so for EXCH, AR(1) and UN geepack is given statgrid's working correlation as a fixed matrix
(corstr="fixed"): the estimates and sandwich standard errors must then agree, and the correlation
itself is recomputed here with numpy from SAS's formulas at the final estimates.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from statgrid.errors import StatgridError
from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog
from tests.support.rscript import r_numbers

K, M = 40, 4
TIGHT = 1e-10


@pytest.fixture
def panel(session):
    rng = np.random.default_rng(11)
    n = K * M
    d = pd.DataFrame({"id": np.repeat(np.arange(1, K + 1), M), "t": np.tile(np.arange(1, M + 1), K),
                      "x": rng.normal(size=n), "g": rng.choice(["a", "b", "c"], n)})
    u = np.repeat(rng.normal(size=K), M)
    d["y"] = 1 + 0.5 * d.x + 0.7 * (d.g == "b") + u + rng.normal(size=n)
    d["cnt"] = rng.poisson(np.exp(0.2 + 0.4 * d.x + 0.5 * u))
    d["b"] = (rng.random(n) < 1 / (1 + np.exp(-(-0.3 + 0.8 * d.x + u)))).astype(int)
    ragged = d[rng.random(n) > 0.2].reset_index(drop=True)       # unbalanced clusters, positions missing
    session.write_table("work.p", pa.Table.from_pandas(d, preserve_index=False))
    session.write_table("work.r", pa.Table.from_pandas(ragged, preserve_index=False))
    return d, ragged


def _by_name(result) -> dict[str, list]:
    return {r[0]: r for r in result.rows}


def _sm(formula, frame, family, cov):
    model = smf.gee(formula, "id", frame, family=family, cov_struct=cov)
    return model.fit(maxiter=500, ctol=1e-13)


@pytest.mark.parametrize("dist, y, family", [("normal", "y", sm.families.Gaussian()),
                                             ("poisson", "cnt", sm.families.Poisson()),
                                             ("binomial", "b", sm.families.Binomial())])
@pytest.mark.parametrize("kind", ["exch", "ind"])
@pytest.mark.parametrize("member", ["p", "r"])
def test_exchangeable_and_independent_match_statsmodels(session, panel, dist, y, family, kind, member):
    frame = panel[0] if member == "p" else panel[1]
    r = session.gee(f"work.{member}", f"{y} = x g", subject="id", type=kind, dist=dist, class_="g id",
                    descending=True, converge=TIGHT, print=False)
    cov = sm.cov_struct.Exchangeable() if kind == "exch" else sm.cov_struct.Independence()
    f = _sm(f"{y} ~ x + C(g, Treatment('c'))", frame, family, cov)
    got = _by_name(r)
    names = {"Intercept": "Intercept", "x": "x", "g a": "C(g, Treatment('c'))[T.a]",
             "g b": "C(g, Treatment('c'))[T.b]"}
    for mine, theirs in names.items():
        np.testing.assert_allclose(got[mine][1], f.params[theirs], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(got[mine][2], f.bse[theirs], rtol=1e-6)
    assert got["g c"][1:5] == [0.0, 0.0, 0.0, 0.0]
    if dist == "normal":                   # statsmodels reports 1 for Poisson/binomial (SAS estimates φ for R)
        np.testing.assert_allclose(r.stats["phi"], f.scale, rtol=1e-6)
    if kind == "exch":
        np.testing.assert_allclose(r.stats["alpha"], f.model.cov_struct.dep_params, rtol=1e-6)
    # Wald Z, p and limits from the estimate and its standard error
    b, se = got["x"][1], got["x"][2]
    from scipy.stats import norm
    np.testing.assert_allclose([got["x"][3], got["x"][4], got["x"][5], got["x"][6]],
                               [b - norm.ppf(0.975) * se, b + norm.ppf(0.975) * se, b / se, 2 * norm.sf(abs(b / se))],
                               rtol=1e-10)


def _sas_correlation(kind: str, frame: pd.DataFrame, mu: np.ndarray, var: np.ndarray, p: int) -> np.ndarray:
    """SAS's moment estimators, written out from GENMOD's documentation, at the given means."""
    e = (frame[frame.columns[-1]].to_numpy() - mu) / np.sqrt(var)
    phi = np.sum(e ** 2) / (len(e) - p)
    res = {(i, t): v for i, t, v in zip(frame.id, frame.t, e)}
    ids, ts = sorted(set(frame.id)), range(1, M + 1)
    if kind == "ar":
        pairs = [(res[i, t], res[i, t + 1]) for i in ids for t in ts if (i, t) in res and (i, t + 1) in res]
        a = sum(u * v for u, v in pairs) / ((len(pairs) - p) * phi)
        return np.array([[a ** abs(j - k) for k in range(M)] for j in range(M)])
    if kind == "exch":
        tot = cnt = 0.0
        for i in ids:
            vals = [res[i, t] for t in ts if (i, t) in res]
            tot += sum(vals[j] * vals[k] for j in range(len(vals)) for k in range(j + 1, len(vals)))
            cnt += len(vals) * (len(vals) - 1) / 2
        a = tot / ((cnt - p) * phi)
        return np.full((M, M), a) + (1 - a) * np.eye(M)
    R = np.eye(M)
    for j in range(M):
        for k in range(M):
            if j != k:
                R[j, k] = sum(res[i, j + 1] * res[i, k + 1] for i in ids if (i, j + 1) in res and (i, k + 1) in res) \
                    / ((len(ids) - p) * phi)
    return R


def rscript(code: str) -> list[float]:
    return r_numbers(code, packages=("geepack",))


@pytest.mark.parametrize("kind", ["exch", "ar", "un"])
@pytest.mark.parametrize("dist, y, family", [("normal", "y", "gaussian"), ("poisson", "cnt", "poisson")])
@pytest.mark.parametrize("member", ["p", "r"])
def test_working_correlations_match_sas_formulas_and_geepack(session, panel, tmp_path, kind, dist, y, family, member):
    """Balanced (p) and ragged (r) clusters; geepack 1.3 crashes (segfault) on a fixed correlation with
    clusters of unequal size, so R checks the balanced panel only."""
    frame = panel[0] if member == "p" else panel[1]
    r = session.gee(f"work.{member}", f"{y} = x g", subject="id", type=kind, within="t", dist=dist, class_="g id t",
                    converge=TIGHT, print=False)
    got = _by_name(r)
    R = r.stats["working_correlation"]
    beta = np.array([got["Intercept"][1], got["x"][1], got["g a"][1], got["g b"][1]])
    X = np.column_stack([np.ones(len(frame)), frame.x, frame.g == "a", frame.g == "b"]).astype(float)
    mu = X @ beta if dist == "normal" else np.exp(X @ beta)
    var = np.ones_like(mu) if dist == "normal" else mu
    np.testing.assert_allclose(R, _sas_correlation(kind, frame[["id", "t", y]], mu, var, 4), rtol=1e-6, atol=1e-12)
    if member == "r":
        return
    csv = tmp_path / "d.csv"
    frame.to_csv(csv, index=False)
    rvals = ", ".join(f"{v:.17g}" for v in R.T.ravel())
    out = rscript(f"""suppressMessages(library(geepack))
d <- read.csv('{csv}'); d <- d[order(d$id, d$t), ]; d$g <- relevel(factor(d$g), ref = 'c')
R <- matrix(c({rvals}), {M}, {M})
z <- fixed2Zcor(R, id = d$id, waves = d$t)
f <- geeglm({y} ~ x + g, id = id, waves = t, data = d, family = {family}, corstr = 'fixed', zcor = z,
            control = geese.control(epsilon = 1e-13, maxit = 200))
cat(sprintf('%.15g', c(coef(f), summary(f)$coefficients[, 2])))""")
    np.testing.assert_allclose(beta, out[:4], rtol=1e-6)
    np.testing.assert_allclose([got[k][2] for k in ("Intercept", "x", "g a", "g b")], out[4:], rtol=1e-6)


def test_unstructured_needs_more_clusters_than_positions(session):
    rows = pa.table({"id": [1, 1, 1, 2, 2, 2, 3, 3, 3], "x": [1.0, 2, 3, 4, 5, 6, 7, 8, 2],
                     "y": [1.0, 3, 2, 5, 4, 6, 8, 7, 3]})
    session.write_table("work.few", rows)
    with pytest.raises(StatgridError, match=r"TYPE=UN has 3 within-subject positions for 3 clusters"):
        session.gee("work.few", "y = x", subject="id", type="un", class_="id", print=False)


def test_bad_subject_and_type_are_named(session, panel):
    with pytest.raises(StatgridError, match=r"SUBJECT= variable 'patient' is not in WORK.P"):
        session.gee("work.p", "y = x", subject="patient", class_="id", print=False)
    with pytest.raises(StatgridError, match=r"SUBJECT= variable 'id' must be listed in CLASS"):
        session.gee("work.p", "y = x", subject="id", print=False)
    with pytest.raises(StatgridError, match=r"TYPE=toep is not a working correlation"):
        session.gee("work.p", "y = x", subject="id", type="toep", class_="id", print=False)


def run_sas(session, text):
    t, lst = io.StringIO(), io.StringIO()
    code = run_program(text, session, SasLog(SessionLog(text=t, jsonl=io.StringIO(), listing=lst)))
    return code, t.getvalue(), lst.getvalue()


def test_sas_repeated_statement_listing_and_errors(session, panel):
    code, log, lst = run_sas(session, """
proc genmod data=work.p;
  class g id t;
  model y = x g / dist=normal;
  repeated subject=id / type=ar(1) within=t corrw modelse converge=1e-10;
run;
""")
    assert code == 0, log
    r = session.gee("work.p", "y = x g", subject="id", type="ar", within="t", class_="g id t", converge=TIGHT,
                    print=False)
    words = [line.split() for line in lst.splitlines()]
    x = _by_name(r)["x"]
    assert ["x", f"{x[1]:.4f}", f"{x[2]:.4f}", f"{x[3]:.4f}", f"{x[4]:.4f}", f"{x[5]:.2f}", "<.0001"] in words \
        or ["x", f"{x[1]:.4f}", f"{x[2]:.4f}", f"{x[3]:.4f}", f"{x[4]:.4f}", f"{x[5]:.2f}", f"{x[6]:.4f}"] in words
    assert ["Analysis", "Of", "Initial", "Parameter", "Estimates"] in words
    assert ["Correlation", "Structure", "AR(1)"] in words and ["Within-Subject", "Effect", "t", "(4", "levels)"] in words
    assert ["Model-Based", "Standard", "Error", "Estimates"] in words and ["Row1", "1.0000"] == words[
        next(i for i, w in enumerate(words) if w[:1] == ["Row1"])][:2]
    for bad, message in (("repeated subject=id / type=exch ecovb;", "The ECOVB option of the REPEATED statement"),
                         ("repeated subject=id / typ=exch;", "The option or parameter TYP is not recognized"),
                         ("repeated / type=exch;", "needs SUBJECT="),
                         ("repeated subject=nobody;", "SUBJECT= variable 'nobody' is not in")):
        code, log, _ = run_sas(session, f"proc genmod data=work.p; class id; model y = x; {bad} run;")
        assert code == 1 and message in log, log
