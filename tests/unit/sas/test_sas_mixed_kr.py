"""PROC MIXED's DDFM=KR (Kenward-Roger). Expected values: on a balanced split plot, the classical ANOVA F tests
computed by hand with numpy from the data's sums of squares (Kenward and Roger's method reproduces them exactly:
trt over subjects within trt on 10 DF, time over the subject × time error on 22 DF); on unbalanced data, R's
pbkrtest (vcovAdj, get_Lb_ddf, KRmodcomp on an lme4 REML fit) with the expected information (pbkrtest's choice;
SAS's default, the observed information, is statgrid's SAS default). Tolerance against R: relative 1e-5 (the two
REML optimisers agree to about 1e-7 in θ)."""
from __future__ import annotations

import csv

import numpy as np
import pytest
from scipy import stats as st

from statgrid.procs.mixed import mixed
from tests.support.rscript import r_numbers
from tests.unit.sas.standins import rows, run_sas

BALANCED = """data sp; do id = 1 to 12; u = mod(id * 7, 5) / 2; trt = ifc(id <= 6, 'A', 'B');
  do time = 1 to 3; y = 10 + (trt = 'B') + 0.3 * time + u + mod(id * time * 3, 7) / 3; output; end; end; run;
"""
UNBALANCED = BALANCED.replace("output;", "if not (id = 3 and time = 2) and not (id = 8 and time = 3) and "
                                         "not (id = 11 and time = 1) then output;")
FIT = "proc mixed data=sp; class id trt time; model y = trt time / ddfm={ddfm} solution; random intercept / subject=id;"


def _anova(session):
    """Split-plot ANOVA by hand: (F trt, F time) with 1/10 and 2/22 DF."""
    d = rows(session, "work.sp")
    y = np.array([[r["y"] for r in d if r["id"] == i] for i in range(1, 13)])       # 12 × 3
    trt = np.array([0] * 6 + [1] * 6)
    g = y.mean()
    m_trt = np.array([y[trt == k].mean() for k in (0, 1)])
    ss_trt = 18 * np.sum((m_trt - g) ** 2)
    ss_subj = 3 * np.sum((y.mean(axis=1) - m_trt[trt]) ** 2)
    ss_time = 12 * np.sum((y.mean(axis=0) - g) ** 2)
    ss_err = np.sum((y - y.mean(axis=1, keepdims=True) - y.mean(axis=0, keepdims=True) + g) ** 2)
    return (ss_trt / 1) / (ss_subj / 10), (ss_time / 2) / (ss_err / 22)


def test_kr_reproduces_the_exact_split_plot_f_tests(session):
    code, log, lst = run_sas(session, BALANCED + "ods output Tests3=t3 SolutionF=sf Estimates=ee;\n"
                             + FIT.format(ddfm="kenwardroger") + " estimate 'A-B' trt 1 -1; run;")
    assert code == 0, log
    f_trt, f_time = _anova(session)
    t3 = {r["Effect"]: r for r in rows(session, "work.t3")}
    assert (t3["trt"]["NumDF"], t3["time"]["NumDF"]) == (1, 2)
    assert t3["trt"]["DenDF"] == pytest.approx(10, rel=1e-6)
    assert t3["time"]["DenDF"] == pytest.approx(22, rel=1e-6)
    assert t3["trt"]["FValue"] == pytest.approx(f_trt, rel=1e-6)
    assert t3["time"]["FValue"] == pytest.approx(f_time, rel=1e-6)
    assert t3["trt"]["ProbF"] == pytest.approx(st.f.sf(f_trt, 1, 10), rel=1e-5)
    e = rows(session, "work.ee")[0]
    assert e["DF"] == pytest.approx(10, rel=1e-6) and e["tValue"] ** 2 == pytest.approx(f_trt, rel=1e-6)
    sf = {(r["Effect"], r["trt"], r["time"]): r for r in rows(session, "work.sf")}
    assert sf[("trt", "A", "")]["DF"] == pytest.approx(10, rel=1e-6)
    assert "ERROR" not in log


def _write_csv(session, path):
    d = rows(session, "work.sp")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(d[0]))
        w.writeheader()
        w.writerows(d)


R_KR = """
suppressMessages({{library(lme4); library(pbkrtest)}})
d <- read.csv("{csv}"); d$id <- factor(d$id); d$trt <- factor(d$trt); d$time <- factor(d$time)
contrasts(d$trt) <- contr.treatment(2, base = 2); contrasts(d$time) <- contr.treatment(3, base = 3)
m <- lmer(y ~ trt + time + (1 | id), data = d, REML = TRUE,
          control = lmerControl(optimizer = "bobyqa", optCtrl = list(rhobeg = 0.2, rhoend = 1e-12)))
Va <- as.matrix(vcovAdj(m))
L <- diag(4)
dfs <- sapply(1:4, function(k) get_Lb_ddf(m, L[k, , drop = FALSE]))
lsA <- matrix(c(1, 1, 1/3, 1/3), 1)        # LS-mean of trt A: intercept + trtA + time averaged
t_trt <- KRmodcomp(m, update(m, . ~ . - trt))$test; t_time <- KRmodcomp(m, update(m, . ~ . - time))$test
cat(sprintf("%.12g", c(sqrt(diag(Va)), dfs, t_trt["Ftest", "stat"], t_trt["Ftest", "ddf"],
    t_time["Ftest", "stat"], t_time["Ftest", "ddf"], lsA %*% fixef(m), sqrt(lsA %*% Va %*% t(lsA)),
    get_Lb_ddf(m, lsA))), "\\n")
"""


def test_kr_expected_information_matches_pbkrtest(session, tmp_path):
    code, log, _ = run_sas(session, UNBALANCED)
    assert code == 0, log
    _write_csv(session, tmp_path / "d.csv")
    want = r_numbers(R_KR.format(csv=tmp_path / "d.csv"), ("lme4", "pbkrtest"))
    fn = getattr(mixed, "__wrapped__", mixed)
    r = fn(session, "work.sp", "y = trt time", class_="id trt time", print=False, ddfm="kr", lsmeans="trt",
           randoms=[{"effects": "intercept", "subject": "id", "type": "vc"}], kr_information="expected")
    kept = [row for row in r.rows if row[4] is not None]          # Intercept, trt A, time 1, time 2
    assert [row[4] for row in kept] == pytest.approx(want[0:4], rel=1e-5)      # KR-adjusted standard errors
    assert [row[5] for row in kept] == pytest.approx(want[4:8], rel=1e-5)      # get_Lb_ddf per coefficient
    t3 = {t["Effect"]: t for t in r.stats["type3"]}
    assert (t3["trt"]["FValue"], t3["trt"]["DenDF"]) == pytest.approx(want[8:10], rel=1e-5)
    assert (t3["time"]["FValue"], t3["time"]["DenDF"]) == pytest.approx(want[10:12], rel=1e-5)
    ls_a = r.stats["lsmeans"][0]
    assert (ls_a["Estimate"], ls_a["StdErr"], ls_a["DF"]) == pytest.approx(want[12:15], rel=1e-5)
    assert r.stats["ddfm"] == "Kenward-Roger"


def test_kr_in_a_sas_program_uses_the_observed_information(session):
    """SAS's default W is the observed information's inverse — the COVTEST table's asymptotic covariance — so
    DDFM=KR through a SAS program differs (a little) from the expected-information (pbkrtest) version on
    unbalanced data, and the adjusted SEs exceed the model-based ones (Φ_A − Φ is positive semi-definite here)."""
    code, log, _ = run_sas(session, UNBALANCED + "ods output Tests3=kr SolutionF=skr;\n" + FIT.format(ddfm="kr")
                           + " run;\nods output Tests3=mb SolutionF=smb;\n" + FIT.format(ddfm="residual") + " run;")
    assert code == 0, log
    fn = getattr(mixed, "__wrapped__", mixed)
    exp = fn(session, "work.sp", "y = trt time", class_="id trt time", print=False, ddfm="kr",
             randoms=[{"effects": "intercept", "subject": "id", "type": "vc"}], kr_information="expected")
    kr = {r["Effect"]: r for r in rows(session, "work.kr")}
    e = {t["Effect"]: t for t in exp.stats["type3"]}
    assert kr["trt"]["DenDF"] != pytest.approx(e["trt"]["DenDF"], rel=1e-4)
    assert kr["trt"]["DenDF"] == pytest.approx(e["trt"]["DenDF"], rel=0.1)
    se_kr = [r["StdErr"] for r in rows(session, "work.skr") if r["StdErr"] is not None]
    se_mb = [r["StdErr"] for r in rows(session, "work.smb") if r["StdErr"] is not None]
    assert all(a >= b - 1e-12 for a, b in zip(se_kr, se_mb)) and any(a > b * (1 + 1e-6) for a, b in zip(se_kr, se_mb))


def test_kr_bad_input(session):
    code, log, _ = run_sas(session, BALANCED + """proc mixed data=sp; class id trt time; model y = trt time / ddfm=kr;
  repeated time / subject=id type=ar(1); run;""")
    assert code == 1 and "DDFM=KENWARDROGER is built for covariance structures linear in their parameters" in log
    code, log, _ = run_sas(session, BALANCED + FIT.format(ddfm="kr3") + " run;")
    assert code == 1 and "DDFM=KR3 is not built" in log and "KENWARDROGER (KR)" in log


SLOPES = """data rs; do id = 1 to 10; a = mod(id * 3, 7); b = mod(id * 5, 4) / 2 + mod(id, 3) / 5; g = ifc(id <= 5, 'P', 'Q');
  do x = 0 to 4; y = 5 + a + (1 + b) * x + (g = 'Q') + mod(id * x * 7, 9) / 4;
  if not (id = 2 and x = 3) and not (id = 7 and x = 0) then output; end; end; run;
"""


def test_kr_random_slopes_type_un_match_pbkrtest(session, tmp_path):
    """RANDOM intercept x / TYPE=UN (lme4's (1 + x | id)): G's elements are linear parameters in both."""
    code, log, _ = run_sas(session, SLOPES)
    assert code == 0, log
    d = rows(session, "work.rs")
    with open(tmp_path / "rs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(d[0]))
        w.writeheader()
        w.writerows(d)
    want = r_numbers(f"""suppressMessages({{library(lme4); library(pbkrtest)}})
d <- read.csv("{tmp_path / 'rs.csv'}"); d$id <- factor(d$id); d$g <- factor(d$g, levels = c("Q", "P"))
m <- lmer(y ~ g + x + (1 + x | id), data = d, REML = TRUE,
          control = lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-12)))
L <- diag(3)
cat(sprintf("%.12g", c(sqrt(diag(as.matrix(vcovAdj(m)))), sapply(1:3, function(k) get_Lb_ddf(m, L[k, , drop = FALSE])))),
    "\\n")""", ("lme4", "pbkrtest"))
    fn = getattr(mixed, "__wrapped__", mixed)
    r = fn(session, "work.rs", "y = g x", class_="id g", print=False, ddfm="kr", kr_information="expected",
           randoms=[{"effects": "intercept x", "subject": "id", "type": "un"}])
    kept = [row for row in r.rows if row[3] is not None]          # Intercept, g P, x
    assert [row[3] for row in kept] == pytest.approx(want[0:3], rel=1e-5)
    assert [row[4] for row in kept] == pytest.approx(want[3:6], rel=1e-5)


def test_method_ml_with_kr_matches_lme4_ml(session, tmp_path):
    """METHOD=ML on these data once stopped with 'LinAlgError: Singular matrix' (a trial V that passed Cholesky but
    not inversion); the ML variance components are lme4's (REML = FALSE)."""
    code, log, _ = run_sas(session, UNBALANCED + "ods output CovParms=cp Tests3=t3;\n"
                           + FIT.replace("proc mixed data=sp;", "proc mixed data=sp method=ml;").format(ddfm="kr")
                           + " run;")
    assert code == 0, log
    _write_csv(session, tmp_path / "d.csv")
    want = r_numbers(f"""suppressMessages(library(lme4))
d <- read.csv("{tmp_path / 'd.csv'}"); d$id <- factor(d$id); d$trt <- factor(d$trt); d$time <- factor(d$time)
m <- lmer(y ~ trt + time + (1 | id), data = d, REML = FALSE)
cat(sprintf("%.12g", as.data.frame(VarCorr(m))$vcov), "\\n")""", ("lme4", "pbkrtest"))
    assert [r["Estimate"] for r in rows(session, "work.cp")] == pytest.approx(want, rel=1e-6)
    assert all(r["DenDF"] > 0 for r in rows(session, "work.t3"))
