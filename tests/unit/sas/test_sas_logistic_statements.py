"""PROC LOGISTIC's LINK=, CONTRAST, ODDSRATIO, UNITS and CLODDS= in SAS programs (SAS/STAT LOGISTIC). Expected values
come from R's glm(binomial(link=…)) on the same rows (one R process, tests/support/rscript.py): LINK=PROBIT/CLOGLOG
estimates, standard errors, −2 Log L and predicted probabilities; CONTRASTs as (Lb)'(LVL')⁻¹(Lb) computed here with
numpy from R's coefficients and covariance, L written over R's coding of the same parameterization (contr.sum is
SAS's PARAM=EFFECT, contr.treatment with the last level first is PARAM=REF); odds ratios as exp(l'b) with Wald
limits from R's fit. EXACT's conditional tests against a brute-force enumeration of every response vector (2^14)
written here from SAS's definitions. Plus the ERRORs of what is not there (profile limits, odds ratios of a
probit, EXACT's ESTIMATE=, the size limit of the enumeration)."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from tests.support.rscript import r_numbers
from tests.unit.sas.standins import assert_errors, rows, run_sas

Z95 = 1.959963984540054


def _data() -> dict:
    i = np.arange(1, 61)
    x = (i * 7 % 11) / 2.0
    a = 1 + i % 3
    b = np.where(i * 5 % 7 < 3, "p", "q")
    y = ((i * 13 % 17) + 2 * x + 4 * (a == 2) - 3 * (b == "p") > 12).astype(float)
    return {"i": i.astype(float), "x": x, "a": a.astype(float), "b": b, "y": y}


DATA = _data()


@pytest.fixture
def d(session, tmp_path):
    session.write_table("work.d", pa.table(DATA))
    path = tmp_path / "d.csv"
    with open(path, "w") as f:
        f.write("i,x,a,b,y\n")
        for k in range(len(DATA["i"])):
            f.write(",".join(str(DATA[c][k]) for c in ("i", "x", "a", "b", "y")) + "\n")
    return path


def r_fit(path, formula: str, link: str, coding: str) -> dict:
    """R's glm on the rows: coef, vcov (row-major), deviance, fitted. coding 'ref' (last level the reference,
    as SAS's PARAM=REF) or 'effect' (contr.sum, as SAS's PARAM=EFFECT)."""
    levels = ("levels = c(3, 1, 2)", "levels = c('q', 'p')") if coding == "ref" else ("", "")
    code = f"""d <- read.csv("{path}"); d$a <- factor(d$a, {levels[0] or 'levels = c(1, 2, 3)'})
d$b <- factor(d$b, {levels[1] or "levels = c('p', 'q')"})
{'options(contrasts = c("contr.sum", "contr.poly"))' if coding == 'effect' else ''}
m <- glm({formula}, family = binomial(link = "{link}"), data = d, control = glm.control(epsilon = 1e-12, maxit = 100))
k <- length(coef(m))
cat(k, sprintf("%.15g", c(coef(m), as.vector(vcov(m)), deviance(m), fitted(m))))"""
    v = r_numbers(code)
    k = int(v[0])
    return {"coef": np.array(v[1:1 + k]), "vcov": np.array(v[1 + k:1 + k + k * k]).reshape(k, k),
            "dev": v[1 + k + k * k], "fitted": np.array(v[2 + k + k * k:])}


def run(session, text):
    code, log, lst = run_sas(session, text)
    assert code == 0, log
    return log, lst


@pytest.mark.parametrize("link,r_link", [("normit", "probit"), ("cloglog", "cloglog")])
def test_link_fits_agree_with_r_glm(session, d, link, r_link):
    """NORMIT is PROBIT's other name; neither link has odds ratios."""
    _, lst = run(session, f"""ods output ParameterEstimates=pe FitStatistics=fs;
proc logistic data=d descending; class a b / param=ref; model y = a b x / link={link};
  output out=o p=phat; run;""")
    ref = r_fit(d, "y ~ a + b + x", r_link, "ref")
    pe = rows(session, "work.pe")
    assert [r["Estimate"] for r in pe] == pytest.approx(ref["coef"], rel=1e-6, abs=1e-6)   # Fisher scoring: linear
    assert [r["StdErr"] for r in pe] == pytest.approx(np.sqrt(np.diag(ref["vcov"])), rel=1e-5)
    m2ll = next(r for r in rows(session, "work.fs") if r["Criterion"] == "-2 Log L")
    assert m2ll["InterceptAndCovariates"] == pytest.approx(ref["dev"], rel=1e-8)     # binary y: deviance = −2 log L
    assert [r["phat"] for r in rows(session, "work.o")] == pytest.approx(ref["fitted"], rel=1e-6)
    assert "Analysis of Maximum Likelihood Estimates" in lst and "Odds Ratio Estimates" not in lst


def _wald(L, b, V):
    lb = L @ b
    return float(lb @ np.linalg.solve(L @ V @ L.T, lb))


def test_contrasts_over_effect_coding_agree_with_numpy_on_r_fit(session, d):
    run(session, """ods output ContrastTest=ct ContrastEstimate=ce ContrastCoeff=cc;
proc logistic data=d descending; class a b; model y = a b x;
  contrast 'a1 vs a2' a 1 -1 / estimate=both alpha=0.1;
  contrast 'a both' a 1 0, a 0 1 / e;
  contrast 'at x=2' intercept 1 x 2 / estimate=parm;
  contrast 'repeated row' b 1, b 2;
run;""")
    ref = r_fit(d, "y ~ a + b + x", "logit", "effect")        # (Intercept) a1 a2 b1 x
    b, V = ref["coef"], ref["vcov"]
    ct = {r["Contrast"]: r for r in rows(session, "work.ct")}
    L1 = np.array([[0, 1, -1, 0, 0.0]])
    L2 = np.array([[0, 1, 0, 0, 0.0], [0, 0, 1, 0, 0]])
    L3 = np.array([[1, 0, 0, 0, 2.0]])
    for name, L in (("a1 vs a2", L1), ("a both", L2), ("at x=2", L3)):
        chi = _wald(L, b, V)
        assert ct[name]["DF"] == L.shape[0] and ct[name]["WaldChiSq"] == pytest.approx(chi, rel=1e-6)
        assert ct[name]["ProbChiSq"] == pytest.approx(
            math.exp(-chi / 2) if L.shape[0] == 2 else math.erfc(math.sqrt(chi / 2)), rel=1e-6)
    # two proportional rows: rank 1, the test of b alone
    assert ct["repeated row"]["DF"] == 1
    assert ct["repeated row"]["WaldChiSq"] == pytest.approx(b[3] ** 2 / V[3, 3], rel=1e-6)
    ce = rows(session, "work.ce")
    assert [(r["Contrast"], r["Type"], r["Row"]) for r in ce] == [
        ("a1 vs a2", "PARM", 1), ("a1 vs a2", "EXP", 1), ("at x=2", "PARM", 1)]
    est, se = float(L1[0] @ b), math.sqrt(float(L1[0] @ V @ L1[0]))
    z90 = 1.6448536269514722
    parm, exp_, x2 = ce
    assert (parm["Estimate"], parm["StdErr"], parm["Alpha"]) == pytest.approx((est, se, 0.1), rel=1e-6)
    assert (parm["LowerLimit"], parm["UpperLimit"]) == pytest.approx((est - z90 * se, est + z90 * se), rel=1e-6)
    assert parm["WaldChiSq"] == pytest.approx((est / se) ** 2, rel=1e-6)
    assert (exp_["Estimate"], exp_["StdErr"]) == pytest.approx((math.exp(est), math.exp(est) * se), rel=1e-6)
    assert (exp_["LowerLimit"], exp_["UpperLimit"]) == pytest.approx(
        (math.exp(est - z90 * se), math.exp(est + z90 * se)), rel=1e-6)
    assert x2["Estimate"] == pytest.approx(b[0] + 2 * b[4], rel=1e-6)
    assert [(r["Parameter"], r["Row1"], r["Row2"]) for r in rows(session, "work.cc")] == [
        ("Intercept", 0, 0), ("a 1", 1, 0), ("a 2", 0, 1), ("b p", 0, 0), ("x", 0, 0)]          # L' (E option)


def test_contrast_coefficients_follow_param_ref_and_glm(session, d):
    run(session, """ods output ContrastTest=cr;
proc logistic data=d descending; class a b / param=reference; model y = a b x;
  contrast 'a1' a 1 0; contrast 'a1-a2' a 1 -1; run;
ods output ContrastTest=cg ParameterEstimates=pg;
proc logistic data=d descending; class a b / param=glm; model y = a b x;
  contrast 'a1-a3' a 1 0 -1; contrast 'a1-a2' a 1 -1 0; contrast 'a3 alone' a 0 0 1; run;""")
    ref = r_fit(d, "y ~ a + b + x", "logit", "ref")            # (Intercept) a1 a2 bp x, a 3 the reference
    b, V = ref["coef"], ref["vcov"]
    cr = {r["Contrast"]: r for r in rows(session, "work.cr")}
    cg = {r["Contrast"]: r for r in rows(session, "work.cg")}
    a1 = b[1] ** 2 / V[1, 1]
    d12 = _wald(np.array([[0, 1, -1, 0, 0.0]]), b, V)
    assert cr["a1"]["WaldChiSq"] == pytest.approx(a1, rel=1e-6)
    assert cr["a1-a2"]["WaldChiSq"] == pytest.approx(d12, rel=1e-6)
    assert cg["a1-a3"]["WaldChiSq"] == pytest.approx(a1, rel=1e-6)        # GLM: a 3's column is aliased (0)
    assert cg["a1-a2"]["WaldChiSq"] == pytest.approx(d12, rel=1e-6)
    assert cg["a3 alone"]["DF"] is None and cg["a3 alone"]["WaldChiSq"] is None     # not estimable
    pg = rows(session, "work.pg")
    assert [(r["Variable"], r["ClassVal0"], r["DF"]) for r in pg] == [
        ("Intercept", "", 1), ("a", "1", 1), ("a", "2", 1), ("a", "3", 0), ("b", "p", 1), ("b", "q", 0), ("x", "", 1)]


def test_oddsratio_units_and_clodds_agree_with_r(session, d):
    log, lst = run(session, """ods output OddsRatiosWald=orw CLOddsWald=clw;
proc logistic data=d descending; class a b; model y = a b x / clodds=wald alpha=0.1;
  units x=2 -1 2*sd;
  oddsratio 'all pairs' a;
  oddsratio x / alpha=0.05;
run;""")
    ref = r_fit(d, "y ~ a + b + x", "logit", "ref")               # (Intercept) a1 a2 bp x
    b, V = ref["coef"], ref["vcov"]
    sd = float(np.std(DATA["x"], ddof=1))
    z90 = 1.6448536269514722

    def ors(l, z):
        l = np.asarray(l, dtype=float)
        e, se = float(l @ b), math.sqrt(float(l @ V @ l))
        return [math.exp(e), math.exp(e - z * se), math.exp(e + z * se)]

    orw = rows(session, "work.orw")
    got = {r["Effect"]: [r["OddsRatioEst"], r["LowerCL"], r["UpperCL"]] for r in orw}
    assert list(got) == ["a 1 vs 2", "a 1 vs 3", "a 2 vs 3", "x Units=2", "x Units=-1", f"x Units={2 * sd:.6g}"]
    assert orw[0]["Label"] == "all pairs"
    assert got["a 1 vs 2"] == pytest.approx(ors([0, 1, -1, 0, 0], z90), rel=1e-6)    # model ALPHA=0.1
    assert got["a 2 vs 3"] == pytest.approx(ors([0, 0, 1, 0, 0], z90), rel=1e-6)
    assert got["x Units=2"] == pytest.approx(ors([0, 0, 0, 0, 2], Z95), rel=1e-6)
    assert got[f"x Units={2 * sd:.6g}"] == pytest.approx(ors([0, 0, 0, 0, 2 * sd], Z95), rel=1e-6)
    clw = rows(session, "work.clw")
    assert [r["Effect"] for r in clw] == ["a 1 vs 3", "a 2 vs 3", "b p vs q", "x", "x", "x"]
    assert [r["Unit"] for r in clw] == pytest.approx([1.0, 1.0, 1.0, 2.0, -1.0, 2 * sd])
    assert [r["OddsRatioEst"] for r in clw] == pytest.approx(
        [ors(l, z90)[0] for l in ([0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 2],
                                  [0, 0, 0, 0, -1], [0, 0, 0, 0, 2 * sd])], rel=1e-6)
    assert [clw[3]["LowerCL"], clw[3]["UpperCL"]] == pytest.approx(ors([0, 0, 0, 0, 2], z90)[1:], rel=1e-6)
    assert "Odds Ratio Estimates and Wald Confidence Intervals" in lst


def test_oddsratio_with_an_interaction_is_at_the_interacting_values(session, d):
    """And PARAM=GLM's Type 3 tests are those of the effect coding (every cell filled): R's contr.sum fit."""
    run(session, """ods output OddsRatiosWald=orw Type3=t3;
proc logistic data=d descending; class a b / param=glm; model y = a x a*x b;
  oddsratio a / diff=ref at(x=2 4);
  oddsratio x;
run;""")
    ref = r_fit(d, "y ~ a * x + b", "logit", "ref")     # (Intercept) a1 a2 x bp a1:x a2:x
    b, V = ref["coef"], ref["vcov"]
    mean_x = float(np.mean(DATA["x"]))

    def log_or(l):
        l = np.asarray(l, dtype=float)
        e, se = float(l @ b), math.sqrt(float(l @ V @ l))
        return [math.exp(e), math.exp(e - Z95 * se), math.exp(e + Z95 * se)]

    got = {r["Effect"]: [r["OddsRatioEst"], r["LowerCL"], r["UpperCL"]] for r in rows(session, "work.orw")}
    assert list(got) == ["a 1 vs 3 at x=2", "a 2 vs 3 at x=2", "a 1 vs 3 at x=4", "a 2 vs 3 at x=4",
                         "x at a=1", "x at a=2", "x at a=3"]
    assert got["a 1 vs 3 at x=4"] == pytest.approx(log_or([0, 1, 0, 0, 0, 4, 0]), rel=1e-5)
    assert got["a 2 vs 3 at x=2"] == pytest.approx(log_or([0, 0, 1, 0, 0, 0, 2]), rel=1e-5)
    assert got["x at a=1"] == pytest.approx(log_or([0, 0, 0, 1, 0, 1, 0]), rel=1e-5)
    assert got["x at a=3"] == pytest.approx(log_or([0, 0, 0, 1, 0, 0, 0]), rel=1e-5)
    assert mean_x > 0                                   # x's own value cancels in a difference of one unit
    eff = r_fit(d, "y ~ a * x + b", "logit", "effect")   # (Intercept) a1 a2 x b1 a1:x a2:x
    t3 = {r["Effect"]: r for r in rows(session, "work.t3")}
    for name, cols in (("a", [1, 2]), ("x", [3]), ("a*x", [5, 6]), ("b", [4])):
        sub = eff["coef"][cols]
        want = float(sub @ np.linalg.solve(eff["vcov"][np.ix_(cols, cols)], sub))
        assert t3[name]["DF"] == len(cols) and t3[name]["WaldChiSq"] == pytest.approx(want, rel=1e-5), name


def test_errors_name_what_to_do(session, d):
    head = "proc logistic data=d descending; class a b;"
    assert_errors(run_sas, session, [
        (f"{head} model y = a x / link=glogit; run;", "LINK=glogit is not supported"),
        (f"{head} model y = a x / link=probit; oddsratio x; run;", "odds ratios (ODDSRATIO, UNITS, CLODDS=) need "
                                                                     "LINK=LOGIT"),
        (f"{head} model y = a x; contrast 'c' z 1; run;", "effect 'z' of CONTRAST 'c' is not in the model"),
        (f"{head} model y = a x; contrast 'c' a 1 -1 / estimate=odds; run;", "ESTIMATE=odds in CONTRAST is not one"),
        (f"{head} model y = a x; contrast 'c' a 1 -1 / alpha=2; run;", "ALPHA=2 in CONTRAST must be"),
        (f"{head} model y = a x; units x=0; run;", "UNITS x=0: a unit of change must be nonzero"),
        (f"{head} model y = a x; units q=2; run;", "UNITS names 'q', which is not a variable of the model"),
        (f"{head} model y = a x; oddsratio z; run;", "ODDSRATIO variable 'z' is not in the model"),
        (f"{head} model y = a x a*x; oddsratio x / at(a='7'); run;", "AT a='7' is not a level of a"),
        (f"{head} model y = a x / clodds=pl; run;", "CLODDS=PL (profile-likelihood limits) is not supported"),
        ("proc logistic data=d; class a / param=orthpoly; model y = a; run;", "PARAM=ORTHPOLY of the CLASS"),
    ])


# ------------------------------------------------------------------------------------------------ EXACT
SMALL = {"x": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 1.0, 2.5],
         "g": ["u", "u", "u", "u", "u", "u", "v", "v", "v", "v", "v", "v", "u", "v"],
         "y": [0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1]}


def brute_force(X: np.ndarray, y: np.ndarray, interest: list[int]) -> list[list]:
    """Every one of the 2^n response vectors: the conditional distribution of T_I given T_N = t_N, then SAS's
    score and probability tests ([Test, Statistic, Exact p, Mid p]) straight from their definitions."""
    n = len(y)
    Y = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(float)
    T = Y @ X
    t = y @ X
    nuis = [j for j in range(X.shape[1]) if j not in interest]
    keep = np.all(np.isclose(T[:, nuis], t[nuis]), axis=1)
    values, counts = np.unique(np.round(T[keep][:, interest], 9), axis=0, return_counts=True)
    f = counts / counts.sum()
    t0 = np.round(t[interest], 9)
    f0 = float(f[np.all(np.isclose(values, t0), axis=1)][0])
    mu = f @ values
    cov = ((values - mu) * f[:, None]).T @ (values - mu)
    inv = np.linalg.inv(cov)
    s = np.array([(v - mu) @ inv @ (v - mu) for v in values])
    s0 = float((t0 - mu) @ inv @ (t0 - mu))
    p_s = float(f[s >= s0 - 1e-9].sum())
    p_f = float(f[f <= f0 + 1e-12].sum())
    return [["Score", s0, p_s, p_s - f0 / 2], ["Probability", f0, p_f, p_f - f0 / 2]]


def test_exact_tests_agree_with_brute_force_enumeration(session):
    session.write_table("work.s", pa.table({k: np.array(v, dtype=float if k != "g" else None)
                                            for k, v in SMALL.items()}))
    run(session, """ods output ExactTests=ex;
proc logistic data=s descending; class g; model y = g x;
  exact x; exact 'both' g x / joint; exact 'i' intercept;
run;""")
    x = np.array(SMALL["x"])
    g = np.where(np.array(SMALL["g"]) == "u", 1.0, -1.0)            # PARAM=EFFECT: u 1, v −1
    X = np.column_stack([np.ones_like(x), g, x])
    y = np.array(SMALL["y"], dtype=float)
    got = [[r["Label"], r["Effect"], r["Test"], r["Statistic"], r["ExactPValue"], r["MidPValue"]]
           for r in rows(session, "work.ex")]
    want = []
    for label, effects in (("Exact1", [("x", [2])]), ("both", [("g", [1]), ("x", [2]), ("Joint", [1, 2])]),
                           ("i", [("Intercept", [0])])):
        for name, cols in effects:
            want += [[label, name, *row] for row in brute_force(X, y, cols)]
    assert [r[:3] for r in got] == [w[:3] for w in want]
    for g_row, w_row in zip(got, want):
        assert g_row[3:] == pytest.approx(w_row[3:], rel=1e-9, abs=1e-12), g_row[:3]


def test_exact_limit_and_options(session, monkeypatch):
    from statgrid.procs import logistic_exact
    session.write_table("work.d", pa.table(DATA))
    monkeypatch.setattr(logistic_exact, "MAX_POINTS", 50)
    assert_errors(run_sas, session, [
        ("proc logistic data=d descending; model y = x i; exact x i; run;",
         "EXACT: the conditional distribution grew past 50 points (statgrid's limit"),
        ("proc logistic data=d descending; model y = x; exact x / estimate=both; run;",
         "The option estimate of the EXACT statement is not supported"),
        ("proc logistic data=d descending; model y = x / link=probit; exact x; run;", "EXACT (exact conditional "
                                                                                      "logistic tests) needs LINK=LOGIT"),
        ("proc logistic data=d descending; model y = x; exact z; run;", "effect 'z' of EXACT 'Exact1' is not in"),
        ("proc logistic data=d descending; model y = x i / selection=forward; exact x; run;",
         "EXACT is not performed with a model selection method"),
    ])


def test_selection_score_test_at_the_intercept_only_model_is_the_same_for_every_link(session, d):
    """At β = 0 but the intercept every μ is the same, so the score χ² for entering an effect does not depend on the
    link (d/V is one constant that cancels): forward selection's first step must agree across links; later steps
    (at fitted slopes) differ."""
    steps = {}
    for link in ("logit", "probit", "cloglog"):
        r = session.logistic("work.d", "y = a b x", class_="a b", descending=True, selection="forward", link=link,
                             print=False)
        steps[link] = r.stats["selection"]
    first = steps["logit"][0]
    for link in ("probit", "cloglog"):
        assert steps[link][0][1] == first[1] and steps[link][0][4] == pytest.approx(first[4], rel=1e-9)
    assert len(steps["logit"]) > 1 and steps["probit"][1][4] != pytest.approx(steps["logit"][1][4], rel=1e-4)
    # the second step's score χ² of the probit: R's Rao score test of the nested fits
    e1, e2 = steps["probit"][0][1], steps["probit"][1][1]
    rao = r_numbers(f"""d <- read.csv("{d}"); d$a <- factor(d$a); d$b <- factor(d$b)
m0 <- glm(y ~ {e1}, family = binomial(link = "probit"), data = d, control = glm.control(epsilon = 1e-12))
m1 <- glm(y ~ {e1} + {e2}, family = binomial(link = "probit"), data = d, control = glm.control(epsilon = 1e-12))
cat(sprintf("%.15g", anova(m0, m1, test = "Rao")$Rao[2]))""")
    assert steps["probit"][1][4] == pytest.approx(rao[0], rel=1e-6)
