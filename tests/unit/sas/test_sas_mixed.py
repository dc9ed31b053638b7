"""PROC MIXED as real programs write it (COVTEST UPDATE ITDETAILS SCORING=, DDFM=SATTERTH, RANDOM with
SUBJECT= and nested subjects, REPEATED / TYPE=SP(SPH)(t) LOCAL, PARMS, LSMEANS / DIFF): the ODS OUTPUT
data sets hold what lmerTest computes (Satterthwaite F tests) or what statgrid's Python API computes
for the same model (itself checked against R in tests/unit/test_mixed_more.py); errors name the statement."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from statgrid.procs import mixed as mx
from tests.unit.sas.standins import run_sas, work_frame

from tests.unit.test_mixed_more import r_json


table = work_frame


@pytest.fixture
def split_plot(session):
    rng = np.random.default_rng(17)
    g, m = 20, 4
    id_ = np.repeat(np.arange(g), m)
    d = pd.DataFrame(dict(id=id_, trt=np.where(id_ < 10, "A", "B"), time=np.tile(np.arange(1, m + 1), g),
                          x=rng.normal(size=g * m)))
    d["y"] = 3 + (d.trt == "B") * 0.8 + 0.2 * d.time + 0.5 * d.x + rng.normal(size=g)[id_] + rng.normal(size=g * m)
    session.write_table("work.sp", pa.Table.from_pandas(d, preserve_index=False))
    return d


def test_real_program_options_satterthwaite_covtest_lsmeans(session, split_plot, tmp_path):
    code, log, lst = run_sas(session, """
ods output Tests3=work.t3 CovParms=work.cp LSMeans=work.lsm Diffs=work.dif SolutionF=work.sf;
proc mixed data=work.sp covtest update itdetails scoring=7 method=reml;
  class id trt time;
  model y = trt time trt*time x / ddfm=satterth solution;
  random intercept / subject=id;
  lsmeans trt / diff;
run;
""")
    assert code == 0, log
    want = r_json(tmp_path, split_plot, """
        d$id <- factor(d$id); d$trt <- factor(d$trt); d$time <- factor(d$time)
        m <- lmer(y ~ trt * time + x + (1 | id), data = d, REML = TRUE)
        a <- anova(m, type = 3, ddf = "Satterthwaite")
        out <- list(F = setNames(as.list(a[["F value"]]), rownames(a)), den = setNames(as.list(a$DenDF), rownames(a)),
                    v = as.data.frame(VarCorr(m))$vcov)""")
    t3 = table(session, "t3").set_index("Effect")
    for sas, rn in (("trt", "trt"), ("time", "time"), ("x", "x"), ("trt*time", "trt:time")):
        assert t3.loc[sas, "FValue"] == pytest.approx(want["F"][rn], rel=1e-5)
        assert t3.loc[sas, "DenDF"] == pytest.approx(want["den"][rn], rel=1e-4)
    cp = table(session, "cp")
    assert list(cp["CovParm"]) == ["Intercept", "Residual"]
    np.testing.assert_allclose(cp["Estimate"], want["v"], rtol=1e-5)
    py = mx.mixed(session, "work.sp", "y = trt time trt*time x", class_="id trt time", random="intercept",
                  subject="id", covtest=True, ddfm="satterth", lsmeans="trt", lsmeans_diff=True, print=False)
    lsm = table(session, "lsm")
    np.testing.assert_allclose(lsm["Estimate"], [r["Estimate"] for r in py.stats["lsmeans"]], rtol=1e-9)
    dif = table(session, "dif")
    assert list(dif["trt"]) == ["A"] and list(dif["_trt"]) == ["B"]
    assert dif["Estimate"][0] == pytest.approx(lsm["Estimate"][0] - lsm["Estimate"][1], rel=1e-9)
    assert "SCORING=7" in log and "Differences of Least Squares Means" in lst


def test_covtest_columns_in_ods_covparms(session, split_plot):
    code, log, _ = run_sas(session, "ods output CovParms=work.cp;\nproc mixed data=work.sp covtest; class id;"
                                    " model y = x; random intercept / subject=id; run;\n")
    assert code == 0, log
    py = mx.mixed(session, "work.sp", "y = x", random="intercept", subject="id", covtest=True, print=False)
    cp = table(session, "cp")
    np.testing.assert_allclose(cp["StdErr"], [c["StdErr"] for c in py.stats["covparms"]], rtol=1e-9)
    np.testing.assert_allclose(cp["ProbZ"], [c["ProbZ"] for c in py.stats["covparms"]], rtol=1e-9)


def test_nested_random_and_spatial_repeated_with_parms(session):
    rng = np.random.default_rng(2)
    g, m = 30, 6
    d = pd.DataFrame(dict(c=np.repeat(np.arange(g), m) // 10, b=np.repeat(np.arange(g), m) % 10,
                          t=np.sort(rng.uniform(0, 10, size=(g, m)), axis=1).ravel()))
    dist = np.abs(d.t.to_numpy().reshape(g, m)[:, :, None] - d.t.to_numpy().reshape(g, m)[:, None, :])
    C = np.where(dist < 5, 1 - 1.5 * dist / 5 + 0.5 * (dist / 5) ** 3, 0)
    e = np.concatenate([np.linalg.cholesky(2.0 * Ci + 0.5 * np.eye(m)) @ rng.normal(size=m) for Ci in C])
    d["y"] = 1 + 0.3 * d.t + rng.normal(size=3)[d.c] + e
    session.write_table("work.s", pa.Table.from_pandas(d, preserve_index=False))
    code, log, _ = run_sas(session, """
ods output CovParms=work.cp1;
proc mixed data=work.s;
  class b c;
  model y = t / solution;
  random intercept / subject=c;
  random intercept / subject=b(c);
run;
ods output CovParms=work.cp2;
proc mixed data=work.s;
  class b c;
  model y = t;
  repeated / subject=b(c) type=sp(sph)(t) local;
  parms (1.5) (4) (0.5);
run;
""")
    assert code == 0, log
    py1 = mx.mixed(session, "work.s", "y = t", class_="b c", print=False,
                   randoms=[{"effects": "intercept", "subject": "c"}, {"effects": "intercept", "subject": "b(c)"}])
    cp1 = table(session, "cp1")
    assert list(cp1["Subject"]) == ["c", "b(c)", ""]
    np.testing.assert_allclose(cp1["Estimate"], [c["Estimate"] for c in py1.stats["covparms"]], rtol=1e-9)
    py2 = mx.mixed(session, "work.s", "y = t", class_="b c", repeated=True, subject="b(c)", type="sp(sph)(t)",
                   local=True, parms=[1.5, 4, 0.5], print=False)
    cp2 = table(session, "cp2")
    assert list(cp2["CovParm"]) == ["Variance", "SP(SPH)", "Residual"]
    np.testing.assert_allclose(cp2["Estimate"], [c["Estimate"] for c in py2.stats["covparms"]], rtol=1e-9)


def test_errors_name_what_is_not_built(session, split_plot):
    for stmt, msg in (("repeated / subject=id type=toep;", "TYPE=TOEP is not built"),
                      ("random intercept / subject=id type=ar(1);", r"RANDOM TYPE=AR\(1\) is not built"),
                      ("random intercept / subject=id nofullz;", "option NOFULLZ of the RANDOM statement"),
                      ("parms (1 2) (3);", "PARMS grids")):
        code, log, _ = run_sas(session, f"proc mixed data=work.sp; class id trt; model y = trt; {stmt} run;\n")
        assert code != 0 and pytest.importorskip("re").search(msg, log, flags=2), (stmt, log)
    code, log, _ = run_sas(session, "proc mixed data=work.sp; class id trt; model y = trt / ddfm=kr3;"
                                    " random intercept / subject=id; run;\n")
    assert code != 0 and "DDFM=KR3 is not built" in log      # KR and the `|` part are built (h-mixed)
