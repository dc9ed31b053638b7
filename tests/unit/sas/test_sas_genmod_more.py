"""GENMOD's TYPE3, CONTRAST and ESTIMATE, GLM's MEANS with multiple comparisons and LOGISTIC's OUTPUT statement
(and LACKFIT tables) in SAS programs: the ODS OUTPUT data sets hold what statsmodels computes independently;
statements statgrid does not build are ERRORs naming them."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from patsy import dmatrices
from scipy import special
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multicomp import pairwise_tukeyhsd

from tests.unit.sas.standins import run_sas, work_frame


table = work_frame


def load(session, d: pd.DataFrame, member: str, chars=("a", "b", "g")):
    spec = " ".join(f"{c} $" if c in chars else c for c in d.columns)
    lines = "\n".join(" ".join("." if isinstance(v, float) and math.isnan(v) else str(v) for v in row)
                      for row in d.itertuples(index=False))
    code, log, _ = run_sas(session, f"data work.{member}; input {spec}; datalines;\n{lines}\n;\nrun;\n")
    assert code == 0, log


@pytest.fixture
def counts(session):
    rng = np.random.default_rng(3)
    n = 200
    d = pd.DataFrame({"a": rng.choice(["p", "q", "r"], n), "b": rng.choice(["u", "v"], n),
                      "x": np.round(rng.normal(size=n), 4)})
    eta = 0.5 + 0.4 * (d.a == "q") - 0.4 * (d.a == "r") + 0.3 * (d.b == "v") + 0.3 * d.x
    d["cnt"] = rng.poisson(np.exp(eta))
    d["y"] = np.round(eta + rng.normal(scale=0.8, size=n), 6)
    load(session, d, "c")
    return session, d


def test_genmod_type3_contrast_and_estimate_reach_ods_output(counts):
    session, d = counts
    code, log, lst = run_sas(session, """
ods output Type3=work.t3 Contrasts=work.con Estimates=work.est;
proc genmod data=work.c;
  class a b;
  model cnt = a b a*b x / dist=poisson link=log type3;
  contrast 'a*b' a*b 1 -1 -1 1 0 0, a*b 1 -1 0 0 -1 1;
  contrast 'x wald' x 1 / wald;
  estimate 'x' x 1 / exp;
run;
""")
    assert code == 0, log
    assert "LR Statistics For Type 3 Analysis" in lst and "Contrast Results" in lst
    y, X = dmatrices("cnt ~ C(a, Sum) * C(b, Sum) + x", d, return_type="dataframe")
    full = sm.GLM(y, X, family=sm.families.Poisson()).fit()
    t3 = table(session, "t3").set_index("Source")
    assert list(t3.columns) == ["DF", "ChiSq", "ProbChiSq"]
    for term, sl in X.design_info.term_slices.items():
        if term.name() == "Intercept":
            continue
        keep = [c for i, c in enumerate(X.columns) if not sl.start <= i < sl.stop]
        lr = 2 * (full.llf - sm.GLM(y, X[keep], family=sm.families.Poisson()).fit().llf)
        name = {"C(a, Sum)": "a", "C(b, Sum)": "b", "C(a, Sum):C(b, Sum)": "a*b", "x": "x"}[term.name()]
        assert t3.loc[name, "DF"] == sl.stop - sl.start and t3.loc[name, "ChiSq"] == pytest.approx(lr, rel=1e-6)
    con = table(session, "con").set_index("Contrast")
    assert list(con.columns) == ["DF", "ChiSq", "ProbChiSq", "Type"]
    # the two a*b rows span the interaction: the LR test equals Type 3's a*b
    assert con.loc["a*b", "DF"] == 2 and con.loc["a*b", "ChiSq"] == pytest.approx(t3.loc["a*b", "ChiSq"], rel=1e-6)
    assert con.loc["a*b", "Type"] == "LR" and con.loc["x wald", "Type"] == "Wald"
    assert con.loc["x wald", "ChiSq"] == pytest.approx((full.params["x"] / full.bse["x"]) ** 2, rel=1e-6)
    est = table(session, "est").set_index("Label")
    assert est.loc["x", "LBetaEstimate"] == pytest.approx(full.params["x"], rel=1e-6)
    assert est.loc["x", "StdErr"] == pytest.approx(full.bse["x"], rel=1e-6)
    assert est.loc["Exp(x)", "LBetaEstimate"] == pytest.approx(math.exp(full.params["x"]), rel=1e-6)
    assert est.loc["x", "Alpha"] == 0.05


def test_genmod_dscale_gives_f_tests_equal_to_glm_type3(counts):
    session, d = counts
    code, log, _ = run_sas(session, """
ods output Type3=work.t3f;
proc genmod data=work.c;
  class a b;
  model y = a b x / dist=normal dscale type3;
run;
""")
    assert code == 0, log
    t3 = table(session, "t3f").set_index("Source")
    assert list(t3.columns) == ["DF", "DenDF", "FValue", "ProbF", "ChiSq", "ProbChiSq"]
    fit = smf.ols("y ~ C(a, Sum) + C(b, Sum) + x", d).fit()
    aov = anova_lm(fit, typ=3)
    for key, name in (("C(a, Sum)", "a"), ("C(b, Sum)", "b"), ("x", "x")):
        assert t3.loc[name, "FValue"] == pytest.approx(aov.loc[key, "F"], rel=1e-6)
        assert t3.loc[name, "DenDF"] == fit.df_resid


@pytest.mark.parametrize("stmt,message", [
    ("model cnt = a x / dist=poisson; repeated subject=b; output out=work.o p=p;",
     "The OUTPUT statement of PROC GENMOD with a REPEATED statement"),
    ("model cnt = a x / dist=poisson; contrast 'x' a 1 -1 / bogus;",
     "The option bogus is not recognized in the CONTRAST statement"),
    ("model cnt = a x / dist=poisson; estimate 'x' x 1 / alpha=2;", "ALPHA=2 in ESTIMATE must be between 0 and 1"),
    ("model cnt = a x / dist=poisson; estimate 'x' c 1;", "effect 'c' of a CONTRAST or ESTIMATE is not in the model"),
])
def test_genmod_statement_errors(counts, stmt, message):
    session, _ = counts
    code, log, _ = run_sas(session, f"proc genmod data=work.c; class a b; {stmt} run;\n")
    assert code != 0 and message in log


@pytest.fixture
def groups(session):
    rng = np.random.default_rng(9)
    sizes = {"g1": 5, "g2": 8, "g3": 6, "g4": 7}
    d = pd.DataFrame({"g": [k for k, n in sizes.items() for _ in range(n)]})
    d["y"] = np.round(d.g.map({"g1": 1.0, "g2": 1.2, "g3": 2.4, "g4": 3.1}) + rng.normal(scale=0.6, size=len(d)), 6)
    load(session, d, "u")
    bal = pd.DataFrame({"g": np.repeat(["g1", "g2", "g3", "g4"], 5)})
    bal["y"] = np.round(bal.g.map({"g1": 1.0, "g2": 1.2, "g3": 2.4, "g4": 3.1}) + rng.normal(scale=0.5, size=20), 6)
    load(session, bal, "bal")
    return session, d, bal


def test_glm_means_duncan_tukey_lines_and_cldiff(groups):
    session, d, bal = groups
    code, log, lst = run_sas(session, """
ods output Means=work.m MCLines=work.l;
proc glm data=work.bal;
  class g;
  model y = g;
  means g / duncan tukey;
run;
ods output Means=work.m2 CLDiffs=work.cl;
proc glm data=work.u;
  class g;
  model y = g;
  means g / tukey;
run;
quit;
""")
    assert code == 0, log
    assert "Duncan's Multiple Range Test for y" in lst and "Means with the same letter" in lst
    lines = table(session, "l")
    tukey = lines[lines.Method.str.startswith("Tukey")]
    hsd = pairwise_tukeyhsd(bal.y, bal.g)
    letters = {r.g: set(r.Group.split()) for r in tukey.itertuples()}
    for (g1, g2), reject in zip(itertools.combinations(hsd.groupsunique, 2), hsd.reject):
        assert bool(letters[g1] & letters[g2]) == (not reject)
    duncan = lines[lines.Method.str.startswith("Duncan")]
    assert list(duncan.Mean) == pytest.approx(sorted(bal.groupby("g").y.mean(), reverse=True))
    cl = table(session, "cl")
    hsd = pairwise_tukeyhsd(d.y, d.g)
    rows = cl.set_index("Comparison")
    for (g1, g2), diff, (lo, hi) in zip(itertools.combinations(hsd.groupsunique, 2), hsd.meandiffs, hsd.confint):
        assert list(rows.loc[f"{g2} - {g1}", ["Difference", "LowerCL", "UpperCL"]]) == pytest.approx([diff, lo, hi],
                                                                                                      rel=1e-6)
    m = table(session, "m")
    assert list(m.columns) == ["Effect", "g", "N", "Mean_y", "SD_y"]
    assert list(m.N) == [5, 5, 5, 5] and list(table(session, "m2").N) == [5, 8, 6, 7]
    assert list(m.Mean_y) == pytest.approx(list(bal.groupby("g").y.mean()), rel=1e-12)


@pytest.mark.parametrize("opt,message", [("dunnett", "The DUNNETT option of GLM's MEANS statement is not supported"),
                                         ("zork", "The option zork is not recognized in the MEANS statement")])
def test_glm_means_options_not_built_are_errors(groups, opt, message):
    session, _, _ = groups
    code, log, _ = run_sas(session, f"proc glm data=work.u; class g; model y = g; means g / {opt}; run; quit;\n")
    assert code != 0 and message in log


@pytest.fixture
def binary(session):
    rng = np.random.default_rng(21)
    n = 160
    d = pd.DataFrame({"grp": np.repeat([1, 2], n // 2), "a": rng.choice(["p", "q", "r"], n),
                      "x": np.round(rng.normal(size=n), 4)})
    eta = -0.3 + 0.7 * (d.a == "q") - 0.5 * (d.a == "r") + 1.1 * d.x
    d["y"] = (rng.random(n) < special.expit(eta)).astype(float)
    d.loc[5, "x"] = np.nan            # not scored
    d.loc[9, "y"] = np.nan            # scored, not fitted
    load(session, d, "bin")
    return session, d


def test_logistic_output_matches_statsmodels_predictions_by_group(binary):
    session, d = binary
    code, log, lst = run_sas(session, """
proc logistic data=work.bin descending;
  by grp;
  class a;
  model y = a x / lackfit;
  output out=work.scored p=phat xbeta=xb stdxbeta=sxb lower=lo upper=hi / alpha=0.1;
run;
""")
    assert code == 0, log
    assert "Hosmer and Lemeshow Goodness-of-Fit Test" in lst
    out = table(session, "scored")
    assert list(out.columns) == ["grp", "a", "x", "y", "phat", "xb", "sxb", "lo", "hi", "_LEVEL_"]
    assert len(out) == len(d) and set(out._LEVEL_) == {1.0}
    for g, part in d.groupby("grp"):
        fit = smf.logit("y ~ C(a) + x", part.dropna()).fit(disp=0)
        got = out[out.grp == g].reset_index(drop=True)
        scorable = part.x.notna().to_numpy()
        lin = fit.get_prediction(part[scorable], which="linear").summary_frame(alpha=0.1)
        assert got.phat[scorable].to_numpy() == pytest.approx(fit.predict(part[scorable]).to_numpy(), rel=1e-6)
        assert got.xb[scorable].to_numpy() == pytest.approx(lin["predicted"].to_numpy(), rel=1e-6, abs=1e-9)
        assert got.sxb[scorable].to_numpy() == pytest.approx(lin["se"].to_numpy(), rel=1e-5)
        assert got.lo[scorable].to_numpy() == pytest.approx(special.expit(lin["ci_lower"].to_numpy()), rel=1e-5)
        assert got.hi[scorable].to_numpy() == pytest.approx(special.expit(lin["ci_upper"].to_numpy()), rel=1e-5)
        assert got.phat[~scorable].isna().all() and got.phat.notna().sum() == scorable.sum()


def test_logistic_output_keyword_not_built_is_an_error(binary):
    session, _ = binary
    code, log, _ = run_sas(session, "proc logistic data=work.bin; class a; model y = a x; output out=work.o "
                                    "reschi=r; run;\n")
    assert code != 0 and "The OUTPUT statistic RESCHI= of PROC LOGISTIC is not supported" in log
