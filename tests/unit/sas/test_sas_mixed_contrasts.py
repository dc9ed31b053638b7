"""PROC MIXED's CONTRAST and ESTIMATE statements (SAS/STAT MIXED). The expected values come from the parts of
the same fit already held against R's lmerTest elsewhere (tests/unit/test_mixed_more.py): an ESTIMATE of a level's
mean is its LS-mean, of a difference the Diffs row (estimate, SE, Satterthwaite DF); a CONTRAST spanning an
effect is its Type 3 test; a one-row CONTRAST's F is the ESTIMATE's t². Limits by hand from t quantiles."""
from __future__ import annotations


import pytest
from scipy import stats as st
from tests.unit.sas.standins import rows, run_sas


DATA = """data sp; do id = 1 to 12; u = mod(id * 7, 5) / 2; trt = ifc(id <= 6, 'A', 'B');
  do time = 1 to 3; y = 10 + (trt = 'B') + 0.3 * time + u + mod(id * time * 3, 7) / 3; output; end; end; run;
"""


def run(session, text):
    code, log, _ = run_sas(session, DATA + text)
    return code, log


@pytest.mark.parametrize("ddfm", ["satterth", "contain"])
def test_contrasts_and_estimates_agree_with_lsmeans_diffs_and_type3(session, ddfm):
    third = "0.3333333333333333"
    code, log = run(session, f"""ods output Contrasts=cc Estimates=ee Diffs=dd LSMeans=lm Tests3=t3;
proc mixed data=sp; class id trt time; model y = trt time / ddfm={ddfm}; random intercept / subject=id;
  lsmeans trt / diff;
  contrast 'A vs B' trt 1 -1;
  contrast 'time' time 1 -1 0, time 0 1 -1;
  estimate 'A mean' intercept 1 trt 1 0 time {third} {third} {third} / cl;
  estimate 'A-B' trt 1 -1 / cl alpha=0.1;
  estimate 'trt alone' trt 1 0;
run;""")
    assert code == 0, log
    cc, ee, dd, lm = (rows(session, f"work.{n}") for n in ("cc", "ee", "dd", "lm"))
    t3 = {r["Effect"]: r for r in rows(session, "work.t3")}
    a_mean, diff, alone = ee
    assert a_mean["Estimate"] == pytest.approx(lm[0]["Estimate"], rel=1e-9)
    assert a_mean["StdErr"] == pytest.approx(lm[0]["StdErr"], rel=1e-9)
    assert (diff["Estimate"], diff["StdErr"], diff["DF"]) == pytest.approx(
        (dd[0]["Estimate"], dd[0]["StdErr"], dd[0]["DF"]), rel=1e-9)
    half = st.t.ppf(0.95, diff["DF"]) * diff["StdErr"]
    assert (diff["Lower"], diff["Upper"]) == pytest.approx((diff["Estimate"] - half, diff["Estimate"] + half))
    assert alone["Estimate"] is None                       # non-estimable without the intercept
    ab, time = cc
    assert ab["NumDF"] == 1 and ab["FValue"] == pytest.approx(diff["tValue"] ** 2, rel=1e-9)
    assert ab["DenDF"] == pytest.approx(t3["trt"]["DenDF"], rel=1e-6)      # the final effect listed: trt
    assert time["NumDF"] == 2 and time["FValue"] == pytest.approx(t3["time"]["FValue"], rel=1e-8)
    assert time["DenDF"] == pytest.approx(t3["time"]["DenDF"], rel=1e-6)


def test_df_option_and_random_coefficients(session):
    code, log = run(session, """ods output Estimates=ee;
proc mixed data=sp; class id trt; model y = trt; random intercept / subject=id;
  estimate 'd' trt 1 -1 / df=5; run;""")
    assert code == 0, log
    e = rows(session, "work.ee")[0]
    assert e["DF"] == 5 and e["Probt"] == pytest.approx(2 * st.t.sf(abs(e["tValue"]), 5))
