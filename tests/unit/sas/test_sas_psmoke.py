"""Defects found by running realistic analyst programs through the PROC steps (helper "psmoke"): each test is
the smallest program that showed one, with expected figures computed independently — numpy least squares,
statsmodels, or by hand — never by the code under test."""
from __future__ import annotations

import numpy as np
import pytest

from tests.unit.sas.standins import rows, run_sas


# ------------------------------------------------------------------------------------------ GLM TEST H= E=
def _glm_data() -> tuple[str, list[tuple[int, int, float]]]:
    """A balanced 3 × 2 layout, 2 replicates: (a, b, y) with y made by hand."""
    data = []
    for a in (1, 2, 3):
        for b in (1, 2):
            for r in (1, 2):
                data.append((a, b, float(a * 2 + b + (0.5 if r == 1 else -0.5) * (a + b) / 3 + (a == 2) * b)))
    text = "data g; input a b y; datalines;\n" + "\n".join(f"{a} {b} {y!r}" for a, b, y in data) + "\n;\nrun;\n"
    return text, data


def _ss_by_hand(data):
    """Balanced data: the main-effect and interaction sums of squares from the cell and marginal means."""
    y = np.array([d[2] for d in data])
    grand = y.mean()
    a_means = {a: np.mean([d[2] for d in data if d[0] == a]) for a in (1, 2, 3)}
    b_means = {b: np.mean([d[2] for d in data if d[1] == b]) for b in (1, 2)}
    cell = {(a, b): np.mean([d[2] for d in data if d[:2] == (a, b)]) for a in (1, 2, 3) for b in (1, 2)}
    ss_a = 4 * sum((m - grand) ** 2 for m in a_means.values())
    ss_ab = 2 * sum((cell[a, b] - a_means[a] - b_means[b] + grand) ** 2 for a, b in cell)
    return ss_a, ss_ab


def test_glm_test_statement_with_ss1_ss4_uses_type_iv(session):
    """SS1 SS4 without SS3 made TEST H= E= fail with "KeyError: '3'"; SAS uses the highest type computed."""
    text, data = _glm_data()
    code, log, lst = run_sas(session, text + """ods output AltErrTests=t;
proc glm data=g; class a b; model y = a b a*b / ss1 ss4; test h=a e=a*b; run; quit;""")
    assert code == 0, log
    assert "Tests of Hypotheses Using the Type IV MS for a*b as an Error Term" in lst
    ss_a, ss_ab = _ss_by_hand(data)
    got = rows(session, "work.t")
    assert len(got) == 1 and got[0]["Source"] == "a" and got[0]["DF"] == 2
    assert got[0]["SS"] == pytest.approx(ss_a, rel=1e-10)
    assert got[0]["FValue"] == pytest.approx((ss_a / 2) / (ss_ab / 2), rel=1e-10)


def test_glm_test_htype_etype_honoured_and_refused_when_not_computed(session):
    text, data = _glm_data()
    code, log, lst = run_sas(session, text + """proc glm data=g; class a b; model y = a b a*b / ss1 ss3;
test h=a e=a*b / htype=1 etype=1; run; quit;""")
    assert code == 0, log
    assert "Tests of Hypotheses Using the Type I MS for a*b as an Error Term" in lst
    code, log, _ = run_sas(session, text + """proc glm data=g; class a b; model y = a b a*b / ss1;
test h=a e=a*b / htype=3; run; quit;""")
    assert code != 0 and "HTYPE=3" in log and "SS3" in log


# ------------------------------------------------------------------------------------------ REF= of CLASS
def _logistic_data():
    rng = np.random.default_rng(7)
    n = 240
    grp = rng.integers(1, 4, n)
    sex = np.where(rng.random(n) < 0.5, "M", "F")
    x = np.round(rng.normal(size=n), 3)
    eta = -0.3 + 0.9 * x + 0.5 * (grp == 2) - 0.4 * (grp == 3) + 0.6 * (sex == "M")
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    text = "data b; input grp sex $ x y; datalines;\n" + "\n".join(
        f"{g} {s} {float(v)!r} {t}" for g, s, v, t in zip(grp, sex, x, y)) + "\n;\nrun;\n"
    return text, grp, sex, x, y


def test_logistic_class_ref_level_is_the_reference(session):
    """CLASS grp(REF='1') sex(REF='F') / PARAM=EFFECT: the per-variable REF= was passed over (grp 3 and sex M
    stayed the references). Expected: statsmodels on effect coding built by hand with 1 and F coded −1."""
    sm = pytest.importorskip("statsmodels.api")
    text, grp, sex, x, y = _logistic_data()
    code, log, lst = run_sas(session, text + """ods output ParameterEstimates=pe OddsRatios=orat;
proc logistic data=b; class grp(ref='1') sex(ref='F') / param=effect;
  model y(event='1') = x grp sex; run;""")
    assert code == 0, log
    X = np.column_stack([np.ones(len(y)), x, (grp == 2) * 1.0 - (grp == 1), (grp == 3) * 1.0 - (grp == 1),
                         (sex == "M") * 1.0 - (sex == "F")])
    fit = sm.Logit(y, X).fit(disp=0, tol=1e-12)
    got = [(r["Variable"], r["ClassVal0"], r["Estimate"], r["StdErr"]) for r in rows(session, "work.pe")]
    assert [(v, c) for v, c, _, _ in got] == [("Intercept", ""), ("x", ""), ("grp", "2"), ("grp", "3"),
                                              ("sex", "M")]
    assert [e for *_, e, _ in got] == pytest.approx(list(fit.params), abs=1e-6)
    assert [s for *_, s in got] == pytest.approx(list(fit.bse), rel=1e-5)
    effects = [r["Effect"] for r in rows(session, "work.orat")]
    assert effects == ["x", "grp 2 vs 1", "grp 3 vs 1", "sex M vs F"]


def test_class_ref_first_global_and_unknown_level(session):
    """/ REF=FIRST for every CLASS variable (PARAM=REF); a REF= value that is not a level is an ERROR naming
    the levels."""
    sm = pytest.importorskip("statsmodels.api")
    text, grp, sex, x, y = _logistic_data()
    code, log, _ = run_sas(session, text + """ods output ParameterEstimates=pe;
proc logistic data=b; class grp sex / param=ref ref=first; model y(event='1') = x grp sex; run;""")
    assert code == 0, log
    X = np.column_stack([np.ones(len(y)), x, (grp == 2) * 1.0, (grp == 3) * 1.0, (sex == "M") * 1.0])
    fit = sm.Logit(y, X).fit(disp=0, tol=1e-12)
    got = rows(session, "work.pe")
    assert [r["ClassVal0"] for r in got] == ["", "", "2", "3", "M"]
    assert [r["Estimate"] for r in got] == pytest.approx(list(fit.params), abs=1e-6)
    code, log, _ = run_sas(session, text + "proc logistic data=b; class grp(ref='9'); model y = grp; run;")
    assert code != 0 and "REF='9' is not a level of CLASS variable 'grp'" in log and "1, 2, 3" in log


def test_glm_class_ref_moves_the_level_last(session):
    """PROC GLM CLASS a(REF='1'): level 1 becomes the last, aliased one (SAS 9.3+: REF= puts the level at the end
    of the list); the other estimates are differences from level 1's cell mean (one-way layout, by hand)."""
    text = "data g; input a y; datalines;\n1 3\n1 5\n2 10\n2 12\n3 7\n3 8\n;\nrun;\n"
    code, log, _ = run_sas(session, text + """ods output ParameterEstimates=pe;
proc glm data=g; class a(ref='1'); model y = a / solution; run; quit;""")
    assert code == 0, log
    got = {r["Parameter"].strip(): r["Estimate"] for r in rows(session, "work.pe")}
    # cell means: a=1 → 4, a=2 → 11, a=3 → 7.5
    assert got["Intercept"] == pytest.approx(4.0) and got["a 2"] == pytest.approx(7.0)
    assert got["a 3"] == pytest.approx(3.5) and got["a 1"] == 0


# ------------------------------------------------------------------------------------------ listings
def test_model_information_names_the_data_set_not_the_staged_member(session):
    """GENMOD with REPEATED (GEE), GLIMMIX and SURVEYLOGISTIC showed WORK._SGMODEL_GROUP, WORK._SGPROC_INPUT and
    WORK._SGSURVEY_GROUP as their Data Set."""
    text = "data c; do id = 1 to 40; u = rannor(5); do t = 1 to 3; x = ranuni(5); " \
           "y = ranuni(5) < 1 / (1 + exp(-(u + x - 0.5))); output; end; end; run;\n"
    code, log, lst = run_sas(session, text + """proc genmod data=c descending; class id;
  model y = x / dist=binomial; repeated subject=id / type=exch; run;
proc glimmix data=c; class id; model y(event='1') = x / dist=binomial s; random intercept / subject=id; run;
proc surveylogistic data=c; cluster id; model y(event='1') = x; run;""")
    assert code == 0, log
    data_set_lines = [ln.split() for ln in lst.splitlines() if ln.strip().startswith("Data Set")]
    assert len(data_set_lines) == 3 and all(words[-1] == "WORK.C" for words in data_set_lines), data_set_lines
    assert "_SG" not in lst


def test_surveyselect_prints_method_and_summary(session):
    """SURVEYSELECT printed nothing; SAS shows the Sample Selection Method and Summary tables (selection
    probability n/N = 10/40, sampling weight N/n = 4, by hand)."""
    code, log, lst = run_sas(session, """data p; do i = 1 to 40; s = mod(i, 2); output; end; run;
ods output Summary=sm;
proc surveyselect data=p out=smp method=srs n=10 seed=7; run;
proc surveyselect data=p out=smp2 method=srs samprate=0.25 seed=7; strata s; run;
proc surveyselect data=p out=smp3 method=srs n=5 seed=7 noprint; run;""")
    assert code == 0, log
    assert lst.count("The SURVEYSELECT Procedure") == 2
    assert "Simple Random Sampling" in lst and "Strata Variable" in lst
    got = {r["Label1"]: r["cValue1"] for r in rows(session, "work.sm")}
    assert got == {"Input Data Set": "P", "Random Number Seed": "7", "Sample Size": "10",
                   "Selection Probability": "0.25", "Sampling Weight": "4", "Output Data Set": "SMP"}
    assert "Number of Strata" in lst and "Total Sample Size" in lst


def test_hpclus_listing_is_titled_hpclus(session):
    code, log, lst = run_sas(session, """data p; do i = 1 to 30; x = mod(i, 3) * 10 + i / 100; output; end; run;
proc hpclus data=p maxclusters=3; input x; run;""")
    assert code == 0, log
    assert "The HPCLUS Procedure" in lst and "FASTCLUS" not in lst


def test_export_counts_the_header_record(session, tmp_path):
    """SAS's PROC EXPORT log: the header line is a record written (4 records for 3 observations)."""
    path = tmp_path / "o.csv"
    code, log, _ = run_sas(session, f"""data p; do i = 1 to 3; output; end; run;
proc export data=p outfile='{path}' dbms=csv replace; run;""")
    assert code == 0, log
    assert len(path.read_text().splitlines()) == 4
    assert f"NOTE: 4 records were written to the file '{path}'." in log
    assert f"3 records created in {path} from P." in log


def test_glm_solution_only_on_request_with_class_and_tables_per_response(session):
    """With CLASS variables SAS's GLM prints the solution only under SOLUTION (it printed it always), and each
    response's Type IV and TEST tables follow its own ANOVA (they came after every response's)."""
    text, data = _glm_data()
    text += "data g; set g; y2 = y * 2; run;\n"
    code, log, lst = run_sas(session, text + """ods output ParameterEstimates=pe;
proc glm data=g; class a b; model y y2 = a b a*b / ss1 ss4; test h=a e=a*b; run; quit;""")
    assert code == 0, log
    assert "Parameter" not in lst and "WARNING: Output 'ParameterEstimates' was not created" in log
    order = [ln.strip() for ln in lst.splitlines() if ln.strip().startswith(("Dependent Variable", "Tests of"))
             or "Type IV SS" in ln]
    assert [ln.split()[0] for ln in order] == ["Dependent", "Source", "Tests", "Source",
                                              "Dependent", "Source", "Tests", "Source"]
    code, log, lst = run_sas(session, text + "proc glm data=g; class a b; model y = a b / solution; run; quit;")
    assert code == 0 and "Parameter" in lst, log
    code, log, lst = run_sas(session, text + "proc glm data=g; model y = a b; run; quit;")
    assert code == 0 and "Parameter" in lst, log


def test_logistic_model_information_class_design_convergence_and_selection_summary(session):
    """LOGISTIC printed no Model Information, Class Level Information, Model Convergence Status nor the Summary of
    Stepwise Selection (ODS ModelInfo, ClassLevelInfo, ConvergenceStatus, ModelBuildingSummary). The entry score
    chi-square of x into the intercept-only model is U²/I with U = Σ x(y − ȳ), I = ȳ(1 − ȳ) Σ (x − x̄)², by hand."""
    text, grp, sex, x, y = _logistic_data()
    code, log, lst = run_sas(session, text + """ods output ModelInfo=mi ClassLevelInfo=cl ConvergenceStatus=cs
  ModelBuildingSummary=mb;
proc logistic data=b; class grp / param=ref;
  model y(event='1') = x grp / selection=stepwise sle=0.0001 sls=0.0001; run;""")
    assert code == 0, log
    for title in ("Model Information", "Class Level Information", "Model Convergence Status",
                  "Summary of Stepwise Selection"):
        assert title in lst
    info = {r["Label1"]: r["cValue1"] for r in rows(session, "work.mi")}
    assert info["Data Set"] == "WORK.B" and info["Response Variable"] == "y" and info["Model"] == "binary logit"
    design = [(r["Class"], r["Value"], r["X1"], r["X2"]) for r in rows(session, "work.cl")]
    assert design == [("grp", "1", 1, 0), ("", "2", 0, 1), ("", "3", 0, 0)]
    assert rows(session, "work.cs")[0]["Reason"] == "Convergence criterion (GCONV=1E-8) satisfied."
    ybar = y.mean()
    score = float((x * (y - ybar)).sum()) ** 2 / (ybar * (1 - ybar) * float(((x - x.mean()) ** 2).sum()))
    steps = rows(session, "work.mb")
    assert steps[0]["EffectEntered"] == "x" and steps[0]["DF"] == 1 and steps[0]["NumberInModel"] == 1
    assert steps[0]["ScoreChiSq"] == pytest.approx(score, rel=1e-8)


def test_glm_type3_in_a_model_without_its_marginal_effects(session):
    """MODEL y = a b c a*b*c (a*b, a*c, b*c absent), unbalanced, every cell filled: Type III/IV of a had 0 DF.
    SAS builds it from the estimable functions: a's hypothesis is then the equality of a's unweighted marginal
    means (the cell means averaged over b and c). Expected: statsmodels' cell-means fit and that contrast."""
    sm = pytest.importorskip("statsmodels.api")
    recs = []
    for a in (1, 2, 3):
        for b in (1, 2):
            for c in (1, 2):
                for r in range(1 + (a * b + c) % 3):
                    recs.append((a, b, c, float(a * 1.5 + b * c + ((r * 7 + a) % 5) * 0.3 - (a == 2) * c)))
    text = "data u; input a b c y; datalines;\n" + "\n".join(f"{a} {b} {c} {y!r}" for a, b, c, y in recs) + \
        "\n;\nrun;\n"
    code, log, _ = run_sas(session, text + """ods output ModelANOVA=m OverallANOVA=o;
proc glm data=u; class a b c; model y = a b c a*b*c / ss3 ss4; run; quit;""")
    assert code == 0, log
    got = {(r["HypothesisType"], r["Source"]): (r["DF"], r["SS"]) for r in rows(session, "work.m")}
    cells = sorted({(a, b, c) for a, b, c, _ in recs})
    X = np.array([[float((a, b, c) == cell) for cell in cells] for a, b, c, _ in recs])
    y = np.array([v for *_, v in recs])
    fit = sm.OLS(y, X).fit()
    L = np.zeros((2, len(cells)))
    for k, other in enumerate((2, 3)):
        for j, (a, b, c) in enumerate(cells):
            L[k, j] = (a == 1) / 4 - (a == other) / 4
    f = float(np.squeeze(fit.f_test(L).fvalue))
    ss_a = f * 2 * fit.mse_resid
    for typ in (3, 4):
        assert got[(typ, "a")][0] == 2 and got[(typ, "a")][1] == pytest.approx(ss_a, rel=1e-8)
    # the top effect: its Type III is the reduction after every other effect, 12 cells − 1 − 2 − 1 − 1 = 7 DF
    assert got[(3, "a*b*c")][0] == 7
