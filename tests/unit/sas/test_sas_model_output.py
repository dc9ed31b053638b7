"""The OUTPUT statement of PROC GLM and PROC GENMOD (SAS/STAT GLM and GENMOD: OUTPUT statement) through ODS-free
data sets; expected values from statsmodels on the same rows read back (OLS influence measures and prediction
limits; a Poisson GLM's mean, linear predictor and its standard error), never from statgrid's engines."""
from __future__ import annotations


import numpy as np
import pytest
import statsmodels.api as sm
from tests.unit.sas.standins import rows, run_sas


# 31 rows: row 31 has a missing response (scored, not fitted), row 30 a missing x (not scored)
DATA = """data d; do i = 1 to 31; x = mod(i * 7, 11); c = mod(i, 3); y = 2 + 0.5 * x + c + mod(i * 3, 5) / 4;
  k = mod(i * 5, 7); if i = 31 then y = .; if i = 30 then x = .; output; end; run;
"""


def run(session, text):
    code, log, _ = run_sas(session, DATA + text)
    return code, log


def _design(rs):
    # intercept, x, c=1, c=2 (c=0 the reference: the same fitted values as SAS's over-parameterized coding)
    return np.array([[1.0, r["x"], float(r["c"] == 1), float(r["c"] == 2)] for r in rs])


def test_glm_output_matches_ols_influence_and_limits(session):
    code, log = run(session, """proc glm data=d; class c; model y = x c;
  output out=go p=pred r=res stdp=sp stdi=si stdr=sr student=st h=lev cookd=cd press=pr rstudent=rs dffits=df
         lclm=lm uclm=um lcl=li ucl=ui / alpha=0.1; run;""")
    assert code == 0, log
    got = rows(session, "work.go")
    assert len(got) == 31
    fitted = [r for r in got if r["x"] is not None and r["y"] is not None]
    fit = sm.OLS(np.array([r["y"] for r in fitted]), _design(fitted)).fit()
    infl = fit.get_influence()
    frame = fit.get_prediction(_design(fitted)).summary_frame(alpha=0.1)
    pick = lambda k: [r[k] for r in fitted]                                       # noqa: E731
    assert pick("pred") == pytest.approx(fit.fittedvalues, rel=1e-9)
    assert pick("res") == pytest.approx(fit.resid, abs=1e-9)
    assert pick("lev") == pytest.approx(infl.hat_matrix_diag, rel=1e-8)
    assert pick("st") == pytest.approx(infl.resid_studentized_internal, rel=1e-8)
    assert pick("rs") == pytest.approx(infl.resid_studentized_external, rel=1e-8)
    assert pick("cd") == pytest.approx(infl.cooks_distance[0], rel=1e-8)
    assert pick("df") == pytest.approx(infl.dffits[0], rel=1e-8)
    assert pick("pr") == pytest.approx(fit.resid / (1 - infl.hat_matrix_diag), rel=1e-8)
    assert pick("sp") == pytest.approx(frame["mean_se"], rel=1e-8)
    assert pick("lm") == pytest.approx(frame["mean_ci_lower"], rel=1e-8)
    assert pick("ui") == pytest.approx(frame["obs_ci_upper"], rel=1e-8)
    s2 = fit.mse_resid
    assert pick("si") == pytest.approx(np.sqrt(s2 * (1 + infl.hat_matrix_diag)), rel=1e-8)
    assert pick("sr") == pytest.approx(np.sqrt(s2 * (1 - infl.hat_matrix_diag)), rel=1e-8)
    last = got[30]                                  # y missing: predicted, no residual
    assert last["pred"] == pytest.approx(float(fit.predict(_design([last]))[0]), rel=1e-9)
    assert last["res"] is None and last["st"] is None
    assert got[29]["pred"] is None                  # x missing: nothing


def test_genmod_output_matches_a_poisson_glm(session):
    code, log = run(session, """proc genmod data=d; class c; model k = x c / dist=poisson link=log;
  output out=gm p=mu xbeta=eta stdxbeta=se lower=lo upper=hi resraw=rr reschi=rc; run;""")
    assert code == 0, log
    got = rows(session, "work.gm")
    fitted = [r for r in got if r["x"] is not None]
    X = _design(fitted)
    fit = sm.GLM(np.array([r["k"] for r in fitted]), X, family=sm.families.Poisson()).fit(tol=1e-12)
    eta = X @ fit.params
    se = np.sqrt(np.einsum("ij,jk,ik->i", X, fit.cov_params(), X))
    mu = np.exp(eta)
    pick = lambda k: [r[k] for r in fitted]                                       # noqa: E731
    assert pick("eta") == pytest.approx(eta, rel=1e-6)
    assert pick("mu") == pytest.approx(mu, rel=1e-6)
    assert pick("se") == pytest.approx(se, rel=1e-5)
    assert pick("lo") == pytest.approx(np.exp(eta - 1.959963984540054 * se), rel=1e-5)
    k = np.array(pick("k"))
    assert pick("rr") == pytest.approx(k - mu, rel=1e-6, abs=1e-9)
    assert pick("rc") == pytest.approx((k - mu) / np.sqrt(mu), rel=1e-6, abs=1e-9)
    assert got[29]["mu"] is None


def test_output_errors_name_the_keyword(session):
    code, log = run(session, "proc genmod data=d; model k = x / dist=poisson; output out=o resdev=rd; run;")
    assert code != 0 and "The OUTPUT statistic RESDEV= of PROC GENMOD is not supported by statgrid yet" in log
    code, log = run(session, "proc glm data=d; model y = x; output out=o nosuch=z; run;")
    assert code != 0 and "The keyword nosuch is not recognized in the OUTPUT statement of PROC GLM" in log
