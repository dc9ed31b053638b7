"""GENMOD's Type 3 likelihood-ratio tests, CONTRAST (LR and Wald) and ESTIMATE against statsmodels fits made
independently (sum-to-zero designs with an effect's columns dropped, models with levels merged, the ML scale
found by scipy), and against R's car::Anova(type=3, test="LR") where R is installed."""
from __future__ import annotations

import math
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from patsy import dmatrices
from scipy import optimize, special, stats

from tests.support.rscript import rscript


@pytest.fixture
def data(session):
    rng = np.random.default_rng(27)
    n = 240
    d = pd.DataFrame({"a": rng.choice(["p", "q", "r"], n), "b": rng.choice(["u", "v"], n),
                      "x": rng.normal(size=n)})
    eta = 0.4 + 0.5 * (d.a == "q") - 0.3 * (d.a == "r") + 0.2 * (d.b == "v") + 0.3 * (d.a == "r") * (d.b == "v") \
        + 0.25 * d.x
    d["cnt"] = rng.poisson(np.exp(eta)).astype(float)
    d["ev"] = (rng.random(n) < special.expit(eta - 0.5)).astype(float)
    d["y"] = eta + rng.normal(scale=0.7, size=n)
    d["pos"] = rng.gamma(3.0, np.exp(eta) / 3.0)
    session.write_table("work.g", pa.Table.from_pandas(d, preserve_index=False))
    return d


def _drop_term_fits(formula: str, d: pd.DataFrame, family):
    """Full fit and, per term, the fit without that term's columns (sum-to-zero coding): statsmodels GLMs."""
    y, X = dmatrices(formula, d, return_type="dataframe")
    full = sm.GLM(y, X, family=family).fit()
    out = {}
    for term, sl in X.design_info.term_slices.items():
        if term.name() == "Intercept":
            continue
        keep = [c for i, c in enumerate(X.columns) if not sl.start <= i < sl.stop]
        out[term.name()] = (sm.GLM(y, X[keep], family=family).fit(), sl.stop - sl.start)
    return full, out


NAMES = {"C(a, Sum)": "a", "C(b, Sum)": "b", "C(a, Sum):C(b, Sum)": "a*b", "x": "x"}


@pytest.mark.parametrize("dist,y,family", [("poisson", "cnt", sm.families.Poisson()),
                                           ("binomial", "ev", sm.families.Binomial())])
def test_type3_lr_of_poisson_and_binomial_is_the_deviance_drop(session, data, dist, y, family):
    r = session.genmod("work.g", f"{y} = a b a*b x", dist=dist, class_="a b", type3=True, descending=True,
                       print=False)
    full, drops = _drop_term_fits(f"{y} ~ C(a, Sum) * C(b, Sum) + x", data, family)
    got = {row[0]: row for row in r.stats["type3"]}
    assert list(got) == ["a", "b", "a*b", "x"]
    for term, (fit, df) in drops.items():
        row = got[NAMES[term]]
        lr = 2 * (full.llf - fit.llf)
        assert row[1] == df
        assert row[2] == pytest.approx(lr, rel=1e-6, abs=1e-8)
        assert row[3] == pytest.approx(stats.chi2.sf(lr, df), rel=1e-5, abs=1e-12)


def test_type3_of_the_normal_with_ml_scale_and_with_dscale(session, data):
    r = session.genmod("work.g", "y = a b x", dist="normal", class_="a b", type3=True, print=False)
    ols = smf.ols("y ~ C(a, Sum) + C(b, Sum) + x", data).fit()
    n = len(data)
    for term, name in (("C(a, Sum) + x", "b"), ("C(b, Sum) + x", "a"), ("C(a, Sum) + C(b, Sum)", "x")):
        reduced = smf.ols(f"y ~ {term}", data).fit()
        row = next(x for x in r.stats["type3"] if x[0] == name)
        assert row[2] == pytest.approx(2 * (ols.llf - reduced.llf), rel=1e-7)     # ML σ in each fit
        assert row[2] == pytest.approx(n * math.log(reduced.ssr / ols.ssr), rel=1e-7)
    r = session.genmod("work.g", "y = a b x", dist="normal", class_="a b", type3=True, scale="deviance", print=False)
    from statsmodels.stats.anova import anova_lm
    aov = anova_lm(ols, typ=3)
    for key, name in (("C(a, Sum)", "a"), ("C(b, Sum)", "b"), ("x", "x")):
        row = next(x for x in r.stats["type3"] if x[0] == name)
        src, df, dendf, f, pf, chi, pchi = row
        assert (df, dendf) == (aov.loc[key, "df"], ols.df_resid)
        assert f == pytest.approx(aov.loc[key, "F"], rel=1e-7)
        assert pf == pytest.approx(aov.loc[key, "PR(>F)"], rel=1e-6)
        assert chi == pytest.approx(df * f, rel=1e-9)


def _gamma_ml_loglik(y: np.ndarray, mu: np.ndarray) -> float:
    """max over the shape ν of the gamma log-likelihood at the means μ (scipy, not statgrid's brentq)."""
    def nll(log_nu):
        nu = math.exp(log_nu)
        return -float(np.sum(nu * np.log(nu * y / mu) - nu * y / mu - np.log(y) - special.gammaln(nu)))
    return -optimize.minimize_scalar(nll, bounds=(-5, 8), method="bounded", options={"xatol": 1e-12}).fun


def test_type3_of_the_gamma_takes_the_ml_shape_of_each_fit(session, data):
    r = session.genmod("work.g", "pos = a x", dist="gamma", link="log", class_="a", type3=True, print=False)
    fam = sm.families.Gamma(sm.families.links.Log())
    full, drops = _drop_term_fits("pos ~ C(a, Sum) + x", data, fam)
    y = data.pos.to_numpy()
    ll_full = _gamma_ml_loglik(y, full.fittedvalues.to_numpy())
    for term, (fit, df) in drops.items():
        row = next(x for x in r.stats["type3"] if x[0] == NAMES[term])
        assert row[2] == pytest.approx(2 * (ll_full - _gamma_ml_loglik(y, fit.fittedvalues.to_numpy())), rel=1e-5)


def test_contrast_lr_is_the_fit_with_levels_merged_and_wald_the_quadratic_form(session, data):
    d = data.assign(ab=np.where(data.a == "r", "r", "pq"))
    r = session.genmod("work.g", "cnt = a x", dist="poisson", class_="a", print=False,
                       contrasts=[("p=q", [{"a": [1, -1, 0]}], False), ("p=q wald", [{"a": [1, -1]}], True),
                                  ("all a", [{"a": [1, -1, 0]}, {"a": [1, 0, -1]}], False)])
    full = smf.glm("cnt ~ C(a) + x", data, family=sm.families.Poisson()).fit()
    merged = smf.glm("cnt ~ C(ab) + x", d, family=sm.families.Poisson()).fit()
    no_a = smf.glm("cnt ~ x", data, family=sm.families.Poisson()).fit()
    c = {row[0]: row for row in r.stats["contrasts"]}
    assert c["p=q"][1] == 1 and c["p=q"][4] == "LR"
    assert c["p=q"][2] == pytest.approx(2 * (full.llf - merged.llf), rel=1e-6)
    assert c["p=q"][3] == pytest.approx(stats.chi2.sf(2 * (full.llf - merged.llf), 1), rel=1e-5)
    wald = full.wald_test("C(a)[T.q] = 0", scalar=True)        # p is the reference: a_p − a_q = −a_q
    assert c["p=q wald"][2] == pytest.approx(float(wald.statistic), rel=1e-6) and c["p=q wald"][4] == "Wald"
    assert c["all a"][1] == 2 and c["all a"][2] == pytest.approx(2 * (full.llf - no_a.llf), rel=1e-6)


def test_estimate_with_exp_and_a_contrast_that_is_not_estimable(session, data):
    r = session.genmod("work.g", "cnt = a b a*b x", dist="poisson", class_="a b", print=False,
                       contrasts=[("a main", [{"a": [1, -1, 0]}], False)],
                       estimates=[("x", {"x": [1]}, 0.1, True),
                                  ("p,u at 0", {"intercept": [1], "a": [1, 0, 0], "b": [1, 0], "a*b": [1]}, 0.05,
                                   False)])
    assert r.stats["contrasts"][0][1:4] == [None, None, None]           # a*b in the model: a alone is not estimable
    fit = smf.glm("cnt ~ C(a) * C(b) + x", data, family=sm.families.Poisson()).fit()
    b, se = fit.params["x"], fit.bse["x"]
    z = stats.norm.ppf(0.95)
    row, exp_row = r.stats["estimates"][:2]
    assert row[0] == "x" and row[4:6] == pytest.approx([b, se], rel=1e-6)
    assert row[6] == 0.1 and row[7:9] == pytest.approx([b - z * se, b + z * se], rel=1e-6)
    assert row[9] == pytest.approx((b / se) ** 2, rel=1e-6)
    assert row[1:4] == pytest.approx([math.exp(b), math.exp(b - z * se), math.exp(b + z * se)], rel=1e-6)
    assert exp_row[0] == "Exp(x)" and exp_row[4:9:4] == pytest.approx([math.exp(b), math.exp(b + z * se)], rel=1e-6)
    assert exp_row[5] == pytest.approx(math.exp(b) * se, rel=1e-6)
    pred = fit.get_prediction(pd.DataFrame({"a": ["p"], "b": ["u"], "x": [0.0]})).summary_frame(alpha=0.05)
    row = r.stats["estimates"][2]
    assert row[1:4] == pytest.approx([pred["mean"][0], pred["mean_ci_lower"][0], pred["mean_ci_upper"][0]], rel=1e-6)


R_SCRIPT = """
d <- read.csv("{path}"); d$a <- factor(d$a); d$b <- factor(d$b)
options(contrasts = c("contr.sum", "contr.poly"))
m <- glm(cnt ~ a * b + x, family = poisson, data = d)
a <- car::Anova(m, type = 3, test = "LR")
write.csv(data.frame(term = rownames(a), chisq = a[, 1], df = a[, 2]), row.names = FALSE)
"""


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="R (Rscript with car) is not installed")
def test_type3_matches_r_car_anova(session, data, tmp_path):
    path = tmp_path / "g.csv"
    data.to_csv(path, index=False)
    out = rscript(R_SCRIPT.format(path=path), packages=("car",), timeout_s=120)
    if out.returncode != 0 and "there is no package called" in out.stderr:
        pytest.skip("R's car package is not installed")
    assert out.returncode == 0, out.stderr
    import io
    ref = pd.read_csv(io.StringIO(out.stdout)).set_index("term")
    r = session.genmod("work.g", "cnt = a b a*b x", dist="poisson", class_="a b", type3=True, print=False)
    for row in r.stats["type3"]:
        key = row[0].replace("*", ":")
        assert row[1] == ref.loc[key, "df"] and row[2] == pytest.approx(ref.loc[key, "chisq"], rel=1e-6)


def test_type3_of_the_negative_binomial_refits_the_dispersion(session, data):
    rng = np.random.default_rng(4)
    d = data.assign(nb=rng.negative_binomial(2, 2 / (2 + np.exp(0.8 + 0.5 * (data.a == "q") + 0.3 * data.x))))
    session.write_table("work.nb", pa.Table.from_pandas(d, preserve_index=False))
    r = session.genmod("work.nb", "nb = a x", dist="negbin", class_="a", type3=True, print=False)
    y, X = dmatrices("nb ~ C(a, Sum) + x", d, return_type="dataframe")
    full = sm.NegativeBinomial(y, X).fit(disp=0, maxiter=200)           # NB2, α by maximum likelihood
    for name, cols in (("a", ["Intercept", "x"]), ("x", ["Intercept", "C(a, Sum)[S.p]", "C(a, Sum)[S.q]"])):
        reduced = sm.NegativeBinomial(y, X[cols]).fit(disp=0, maxiter=200)
        row = next(x for x in r.stats["type3"] if x[0] == name)
        assert row[2] == pytest.approx(2 * (full.llf - reduced.llf), rel=1e-5)
