"""PROC GLM's CONTRAST, ESTIMATE, TEST H= E= and MODEL / SS4 in a SAS program: the ODS OUTPUT data sets
(Contrasts, Estimates, AltErrTests, ModelANOVA) hold what statsmodels computes independently (a cell-means
fit for the estimable functions, anova_lm(typ=3) with sum-to-zero coding for the tests); bad statements are
ERRORs naming what is wrong."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from tests.unit.sas.standins import run_sas, work_frame


table = work_frame


@pytest.fixture
def data(session):
    rng = np.random.default_rng(8)
    n = 180
    d = pd.DataFrame({"a": rng.choice(["p", "q", "r"], n), "b": rng.choice(["u", "v"], n)})
    d["y"] = 2.0 + (d.a == "q") * 0.8 + (d.b == "v") * 0.3 + (d.a == "r") * (d.b == "v") * 0.6 + rng.normal(size=n)
    lines = "\n".join(f"{a} {b} {y!r}" for a, b, y in d.itertuples(index=False))
    code, log, _ = run_sas(session, f"data work.t; input a $ b $ y; datalines;\n{lines}\n;\nrun;\n")
    assert code == 0, log
    return session, d


def test_contrast_estimate_and_test_reach_ods_output_and_the_listing(data):
    session, d = data
    code, log, lst = run_sas(session, """
ods output Contrasts=work.c Estimates=work.e AltErrTests=work.t ModelANOVA=work.m;
proc glm data=work.t;
  class a b;
  model y = a b a*b / ss3 ss4;
  contrast 'p vs q' a 1 -1 0;
  contrast 'a' a 1 -1 0, a 1 0 -1;
  estimate 'LS-mean(p)' intercept 1 a 1 0 0 b 0.5 0.5;
  estimate 'q-r /2' a 0 2 -2 / divisor=2;
  test h=a b e=a*b;
run;
quit;
""")
    assert code == 0, log
    cells = smf.ols("y ~ C(a):C(b) - 1", d).fit()
    names = list(cells.params.index)

    def wsum(w):
        v = np.zeros(len(names))
        for (a, b), x in w.items():
            v[names.index(f"C(a)[{a}]:C(b)[{b}]")] = x
        return float(v @ cells.params.values), float(np.sqrt(v @ cells.cov_params().values @ v))

    c, e = table(session, "c"), table(session, "e")
    assert list(c.columns) == ["Dependent", "Contrast", "DF", "SS", "MS", "FValue", "ProbF"]
    assert list(e.columns) == ["Dependent", "Parameter", "Estimate", "StdErr", "tValue", "Probt"]
    est, se = wsum({("p", "u"): .5, ("p", "v"): .5, ("q", "u"): -.5, ("q", "v"): -.5})
    row = c[c.Contrast == "p vs q"].iloc[0]
    assert row.DF == 1 and row.FValue == pytest.approx((est / se) ** 2, rel=1e-8)
    typ3 = anova_lm(smf.ols("y ~ C(a, Sum) * C(b, Sum)", d).fit(), typ=3)
    assert c[c.Contrast == "a"].iloc[0].SS == pytest.approx(typ3.loc["C(a, Sum)", "sum_sq"], rel=1e-8)
    est, se = wsum({("p", "u"): .5, ("p", "v"): .5})
    row = e[e.Parameter == "LS-mean(p)"].iloc[0]
    assert row.Estimate == pytest.approx(est, rel=1e-8) and row.StdErr == pytest.approx(se, rel=1e-8)
    est, se = wsum({("q", "u"): .5, ("q", "v"): .5, ("r", "u"): -.5, ("r", "v"): -.5})
    row = e[e.Parameter == "q-r /2"].iloc[0]
    assert row.Estimate == pytest.approx(est, rel=1e-8) and row.StdErr == pytest.approx(se, rel=1e-8)
    t = table(session, "t")
    ms = lambda k: typ3.loc[k, "sum_sq"] / typ3.loc[k, "df"]  # noqa: E731
    assert t.set_index("Source").loc["a", "FValue"] == pytest.approx(ms("C(a, Sum)") / ms("C(a, Sum):C(b, Sum)"),
                                                                      rel=1e-8)
    m = table(session, "m")
    assert sorted(set(m.HypothesisType)) == [3, 4]
    assert list(m[m.HypothesisType == 4].SS) == pytest.approx(list(m[m.HypothesisType == 3].SS), rel=1e-12)
    # SS3 SS4: TEST uses the highest type computed (SAS GLM TEST statement), Type IV (equal to III: no empty cell)
    assert "Tests of Hypotheses Using the Type IV MS for a*b as an Error Term" in lst
    assert "Contrast SS" in lst and "LS-mean(p)" in lst


@pytest.mark.parametrize("stmt,message", [
    ("contrast a 1 -1;", "CONTRAST needs a quoted label"),
    ("contrast 'x' c 1 -1;", "effect 'c' of a CONTRAST or ESTIMATE is not in the model"),
    ("estimate 'x' a 1 -1 0 / divisor=0;", "DIVISOR= must not be 0"),
    ("test h=a;", "TEST needs H=effects and E=effect"),
    ("contrast 'x' a 1 -1 / bogus;", "The option bogus is not recognized in the CONTRAST statement"),
])
def test_bad_statements_are_errors_naming_the_fault(data, stmt, message):
    session, _ = data
    code, log, _ = run_sas(session, f"proc glm data=work.t; class a b; model y = a b; {stmt} run; quit;\n")
    assert code != 0
    assert message in log
