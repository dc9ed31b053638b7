"""PROC MIXED's CONTRAST/ESTIMATE with random-effect coefficients (after |) and its Non-est rows. Expected values:
Henderson's mixed model equations built and inverted here with numpy from the data, the fit's variance components
(its CovParms, held against R elsewhere) and the design written out by hand — estimate = Kβ̂ + Mû, variance
[K M] C [K M]ᵀ with C the inverse of the equations' matrix; the BLUP-based estimate also against R's lme4
(fixef + ranef; relative 1e-6). Non-estimable rows: missing in the data set, "Non-est" in the listing."""
from __future__ import annotations

import csv
import re

import numpy as np
import pytest
from scipy import stats as st

from tests.support.rscript import r_numbers
from tests.unit.sas.standins import assert_errors, rows, run_sas

DATA = """data sp; do id = 1 to 12; u = mod(id * 7, 5) / 2; trt = ifc(id <= 6, 'A', 'B');
  do time = 1 to 3; y = 10 + (trt = 'B') + 0.3 * time + u + mod(id * time * 3, 7) / 3;
  if not (id = 3 and time = 2) and not (id = 8 and time = 3) then output; end; end; run;
"""
FIT = "proc mixed data=sp; class id trt time; model y = trt time; random intercept / subject=id;\n"


def _henderson(session):
    """(β̂, û, C) from the mixed model equations with the fit's σ²_u, σ²_e; X: intercept, trt A, time 1, time 2."""
    d = rows(session, "work.sp")
    cp = {r["CovParm"]: r["Estimate"] for r in rows(session, "work.cp")}
    y = np.array([r["y"] for r in d])
    X = np.array([[1.0, r["trt"] == "A", r["time"] == 1, r["time"] == 2] for r in d], dtype=float)
    Z = np.array([[float(r["id"] == i) for i in range(1, 13)] for r in d])
    s_u, s_e = cp["Intercept"], cp["Residual"]
    M = np.block([[X.T @ X, X.T @ Z], [Z.T @ X, Z.T @ Z + np.eye(12) * s_e / s_u]]) / s_e
    C = np.linalg.inv(M)
    sol = C @ np.r_[X.T @ y, Z.T @ y] / s_e
    return sol[:4], sol[4:], C


def _pe(C, k, m):
    lm = np.r_[k, m]
    return float(lm @ C @ lm)


def test_estimates_and_contrasts_with_random_parts_match_the_mixed_model_equations(session):
    code, log, lst = run_sas(session, DATA + "ods output Estimates=ee Contrasts=cc CovParms=cp Tests3=t3;\n" + FIT + """
  estimate 'subj 1' intercept 1 trt 1 0 time 0 0 1 | intercept 1 / subject 1 cl;
  estimate 'avg' intercept 1 trt 1 0 time 0 0 1 | intercept 1;
  estimate 'half' intercept 2 trt 2 0 time 0 0 2 | intercept 2 / subject 0 0 1 divisor=2;
  contrast 'one' intercept 1 trt 1 0 time 0 0 1 | intercept 1 / subject 1 0 -1;
  contrast 'two' trt 1 -1 | intercept 1, time 1 0 -1 | intercept 1 / subject 1 -1;
run;""")
    assert code == 0, log
    beta, u, C = _henderson(session)
    ee = {r["Label"]: r for r in rows(session, "work.ee")}
    cc = {r["Label"]: r for r in rows(session, "work.cc")}
    t3 = {r["Effect"]: r for r in rows(session, "work.t3")}
    k = np.array([1.0, 1, 0, 0])
    e1, avg, e3 = np.eye(12)[0], np.full(12, 1 / 12), np.eye(12)[2]
    for label, m in (("subj 1", e1), ("avg", avg), ("half", e3)):
        got = ee[label]
        assert got["Estimate"] == pytest.approx(k @ beta + m @ u, rel=1e-7)
        assert got["StdErr"] == pytest.approx(np.sqrt(_pe(C, k, m)), rel=1e-6)
        assert got["DF"] == t3["time"]["DenDF"]            # the DF of the final fixed effect listed
    s1 = ee["subj 1"]
    half = st.t.ppf(0.975, s1["DF"]) * s1["StdErr"]
    assert (s1["Lower"], s1["Upper"]) == pytest.approx((s1["Estimate"] - half, s1["Estimate"] + half), rel=1e-9)
    m = e1 - e3
    assert cc["one"]["FValue"] == pytest.approx((k @ beta + m @ u) ** 2 / _pe(C, k, m), rel=1e-6)
    # two rows, both with subject 1 minus subject 2: F = bᵀ Var⁻¹ b / 2
    m = np.eye(12)[0] - np.eye(12)[1]
    K = np.array([[0.0, 1, 0, 0], [0, 0, 1, 0]])
    Lm = np.hstack([K, np.vstack([m, m])])
    b = K @ beta + Lm[:, 4:] @ u
    want = float(b @ np.linalg.solve(Lm @ C @ Lm.T, b)) / 2
    assert (cc["two"]["NumDF"], cc["two"]["FValue"]) == (2, pytest.approx(want, rel=1e-6))
    assert cc["two"]["DenDF"] == t3["time"]["DenDF"]


def test_blup_estimate_matches_lme4(session, tmp_path):
    code, log, _ = run_sas(session, DATA + "ods output Estimates=ee;\n" + FIT
                           + "  estimate 'subj 3 at A, time 3' intercept 1 trt 1 0 time 0 0 1 | intercept 1 / subject 0 0 1;\n"
                           + "  estimate 'subj 8 - subj 2' | intercept 1 / subject 0 -1 0 0 0 0 0 1;\nrun;")
    assert code == 0, log
    d = rows(session, "work.sp")
    with open(tmp_path / "d.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(d[0]))
        w.writeheader()
        w.writerows(d)
    want = r_numbers(f"""suppressMessages(library(lme4))
d <- read.csv("{tmp_path / 'd.csv'}"); d$id <- factor(d$id); d$trt <- factor(d$trt, levels = c("B", "A"))
d$time <- factor(d$time, levels = c(3, 1, 2))
m <- lmer(y ~ trt + time + (1 | id), data = d, REML = TRUE,
          control = lmerControl(optimizer = "bobyqa", optCtrl = list(rhobeg = 0.2, rhoend = 1e-12)))
re <- ranef(m)$id[, 1]
cat(sprintf("%.12g", c(fixef(m)[1] + fixef(m)[2] + re[3], re[8] - re[2])), "\\n")""", ("lme4",))
    ee = rows(session, "work.ee")
    assert ee[0]["Estimate"] == pytest.approx(want[0], rel=1e-6)
    assert ee[1]["Estimate"] == pytest.approx(want[1], rel=1e-5, abs=1e-6)


CELLS = """data cells; do id = 1 to 8; do a = 1 to 2; do b = 1 to 2;
  if not (a = 2 and b = 2) then do; y = id / 3 + a + 2 * b + mod(id * a * b, 5) / 4; output; end; end; end; end; run;
"""


def test_non_estimable_rows_print_non_est(session):
    code, log, lst = run_sas(session, CELLS + """ods output Estimates=ee Contrasts=cc LSMeans=lm;
proc mixed data=cells; class id a b; model y = a b a*b; random intercept / subject=id;
  lsmeans a;
  estimate 'a alone' a 1 -1;
  estimate 'cell 11' intercept 1 a 1 0 b 1 0 a*b 1 0 0 0;
  contrast 'b alone' b 1 -1;
run;""")
    assert code == 0, log
    ee = {r["Label"]: r for r in rows(session, "work.ee")}
    assert all(ee["a alone"][k] is None for k in ("Estimate", "StdErr", "DF", "tValue", "Probt"))
    assert ee["cell 11"]["Estimate"] is not None
    cc = rows(session, "work.cc")[0]
    assert all(cc[k] is None for k in ("NumDF", "DenDF", "FValue", "ProbF"))
    lm = {r["a"]: r for r in rows(session, "work.lm")}
    assert lm["1"]["Estimate"] is not None and lm["2"]["Estimate"] is None
    assert re.search(r"^\s*a alone\s+Non-est\s*$", lst, re.M), lst
    assert re.search(r"^\s*b alone\s+Non-est\s*$", lst, re.M), lst
    assert re.search(r"^\s*a\s+2\s+Non-est\s*$", lst, re.M), lst
    assert not re.search(r"cell 11\s+Non-est", lst)


def test_random_part_bad_input(session):
    def run(s, text):
        return run_sas(s, DATA + text)
    assert_errors(run, session, [
        (FIT + "estimate 'x' intercept 1 | time 1; run;",
         "random effect 'time' after | is not in a RANDOM statement (those: Intercept)"),
        (FIT + "estimate 'x' intercept 1 | intercept 1 1; run;",
         "random effect 'intercept' has 1 levels; 2 coefficients were given after |"),
        (FIT + "estimate 'x' intercept 1 | intercept 1 | intercept 1; run;", "ESTIMATE: one | per row"),
        (FIT + "estimate 'x' intercept 1 | intercept 1 / subject; run;", "SUBJECT needs the subjects' coefficients"),
        (FIT.replace("model y = trt time;", "model y = trt time / ddfm=kr;")
         + "estimate 'x' intercept 1 trt 1 0 time 0 0 1 | intercept 1 / subject 1; run;",
         "DDFM=KENWARDROGER: the DF of a CONTRAST/ESTIMATE with random-effect coefficients (after |) is not built"),
        (FIT + "estimate 'x' intercept 1 | intercept 1 / subject 1 0 0 0 0 0 0 0 0 0 0 0 1; run;",
         "SUBJECT gives 13 coefficients; the RANDOM statement of 'intercept' has 12 subjects"),
        ("proc mixed data=sp; class id trt; model y = trt; repeated / subject=id type=cs;\n"
         "estimate 'x' intercept 1 | intercept 1; run;",
         "random effect 'intercept' after | is not in a RANDOM statement (those: none — add a RANDOM statement)"),
    ])
    code, log, _ = run(session, "ods output Estimates=ee;\n" + FIT.replace("model y = trt time;", "model y = trt time / ddfm=kr;")
                       + "estimate 'x' intercept 1 trt 1 0 time 0 0 1 | intercept 1 / subject 1 df=7; run;")
    assert code == 0, log
    e = rows(session, "work.ee")[0]
    assert e["DF"] == 7 and e["Estimate"] is not None


def test_satterthwaite_df_of_a_random_part(session):
    """DDFM=SATTERTHWAITE: ν = 2 PEV² / (gᵀ A g), g the gradient of the prediction error variance in (σ²_u, σ²_e)
    — here from Henderson's equations by central differences in the test — and A the fit's asymptotic covariance
    of the variance components (COVTEST's). A zero random part gives the fixed row's own Satterthwaite DF."""
    from statgrid.procs.mixed import mixed
    code, log, _ = run_sas(session, DATA + "ods output Estimates=ee CovParms=cp;\n"
                           + FIT.replace("model y = trt time;", "model y = trt time / ddfm=satterth;") + """
  estimate 'fixed' intercept 1 trt 1 0 time 0 0 1;
  estimate 'zero random part' intercept 1 trt 1 0 time 0 0 1 | intercept 0;
  estimate 'subj 1' intercept 1 trt 1 0 time 0 0 1 | intercept 1 / subject 1;
run;""")
    assert code == 0, log
    ee = {r["Label"]: r for r in rows(session, "work.ee")}
    assert ee["zero random part"]["DF"] == pytest.approx(ee["fixed"]["DF"], rel=1e-4)
    assert ee["zero random part"]["StdErr"] == pytest.approx(ee["fixed"]["StdErr"], rel=1e-9)
    fn = getattr(mixed, "__wrapped__", mixed)
    fit = fn(session, "work.sp", "y = trt time", class_="id trt time", print=False, ddfm="satterth", covtest=True,
             randoms=[{"effects": "intercept", "subject": "id", "type": "vc"}])
    A = np.array(fit.stats["asycov"])
    d = rows(session, "work.sp")
    X = np.array([[1.0, r["trt"] == "A", r["time"] == 1, r["time"] == 2] for r in d], dtype=float)
    Z = np.array([[float(r["id"] == i) for i in range(1, 13)] for r in d])
    lm = np.r_[1.0, 1, 0, 0, np.eye(12)[0]]

    def pev(s_u, s_e):
        M = np.block([[X.T @ X, X.T @ Z], [Z.T @ X, Z.T @ Z + np.eye(12) * s_e / s_u]]) / s_e
        return float(lm @ np.linalg.solve(M, lm))
    cp = [r["Estimate"] for r in rows(session, "work.cp")]
    g = np.array([(pev(*(cp + h * np.eye(2)[k])) - pev(*(cp - h * np.eye(2)[k]))) / (2 * h)
                  for k, h in enumerate(np.array(cp) * 1e-5)])
    want = 2 * pev(*cp) ** 2 / float(g @ A @ g)
    assert ee["subj 1"]["DF"] == pytest.approx(want, rel=1e-4)
    assert ee["subj 1"]["StdErr"] == pytest.approx(np.sqrt(pev(*cp)), rel=1e-6)


SPLIT = """data spl; do block = 1 to 4; do a = 1 to 3; do b = 1 to 2;
  y = 10 + a + 2 * b + mod(block * 7, 5) + mod(block * a * 3, 4) / 2 + mod(block * a * b * 5, 7) / 3; output;
  end; end; end; run;
"""


def test_inference_spaces_of_the_sas_documentation_split_plot(session):
    """SAS's ESTIMATE example (random block a*block, no SUBJECT=): on balanced data the A1 mean's prediction error
    variance is, by hand from the variance components, σ²_e/8 (narrow), σ²_ab/4 + σ²_e/8 (intermediate) and
    (σ²_block + σ²_ab)/4 + σ²_e/8 (broad), and the three estimates are equal (block and a*block BLUPs sum to 0)."""
    code, log, _ = run_sas(session, SPLIT + """ods output Estimates=ee CovParms=cp;
proc mixed data=spl; class a b block; model y = a b a*b; random block a*block;
  estimate 'narrow' intercept 1 a 1 b .5 .5 a*b .5 .5 | block .25 .25 .25 .25 a*block .25 .25 .25 .25 0 0 0 0 0 0 0 0;
  estimate 'intermediate' intercept 1 a 1 b .5 .5 a*b .5 .5 | block .25 .25 .25 .25;
  estimate 'broad' intercept 1 a 1 b .5 .5 a*b .5 .5;
run;""")
    assert code == 0, log
    cp = {r["CovParm"]: r["Estimate"] for r in rows(session, "work.cp")}
    ee = {r["Label"]: r for r in rows(session, "work.ee")}
    s_b, s_ab, s_e = cp["block"], cp["a*block"], cp["Residual"]
    assert ee["narrow"]["StdErr"] == pytest.approx(np.sqrt(s_e / 8), rel=1e-6)
    assert ee["intermediate"]["StdErr"] == pytest.approx(np.sqrt(s_ab / 4 + s_e / 8), rel=1e-6)
    assert ee["broad"]["StdErr"] == pytest.approx(np.sqrt((s_b + s_ab) / 4 + s_e / 8), rel=1e-6)
    a1 = np.mean([r["y"] for r in rows(session, "work.spl") if r["a"] == 1])
    assert [ee[k]["Estimate"] for k in ("narrow", "intermediate", "broad")] == pytest.approx([a1] * 3, rel=1e-9)
