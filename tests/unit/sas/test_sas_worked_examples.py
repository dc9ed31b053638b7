"""SAS's documented worked examples run through statgrid's SAS front end (issue 27, item 2): the data are the
pages' (facts, typed in: tests/unit/sas/worked/), the programs are written here, and every expected figure is one a
page prints, with the page's address beside it. Most pages are SAS's manuals; where no manual page could be read
with its output (GLM on Hald's data, REG selection steps, a FREQ 2×2 table), the page is a published SAS listing
of the same procedure (said so at the figure). Figures worked out by hand from printed ones say "by hand".
Tolerance: half a unit of the last printed digit (`printed(x)` below), so a figure printed as 0.8487 passes for
anything in [0.84865, 0.84875]; a printed "<.0001" is checked as < 0.0001. A strict xfail marks each place where
statgrid differs from the page (reason: what differs); it starts passing, and so failing, when that is fixed."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from tests.unit.sas.standins import rows, run_sas

WORKED = Path(__file__).parent / "worked"


def printed(text: str):
    """pytest.approx of a figure as the manual prints it: within half a unit of its last digit."""
    exponent = Decimal(text).as_tuple().exponent
    return pytest.approx(float(text), abs=0.5 * 10.0 ** exponent, rel=0)


def datalines(name: str) -> str:
    return (WORKED / name).read_text()


def run_ok(session, text: str) -> str:
    code, log, _ = run_sas(session, text)
    assert code == 0, log
    return log


def listing_lines(session, text: str) -> list[list[str]]:
    """The listing of `text`, each line as its blank-separated words (a printed row of a table, compared word
    for word with the row the manual prints)."""
    code, log, lst = run_sas(session, text)
    assert code == 0, log
    return [line.split() for line in lst.splitlines()]


def missing_rows(lines: list[list[str]], printed_rows: list[str]) -> list[str]:
    """The rows of `printed_rows` (as a page prints them) that no listing line shows word for word."""
    return [row for row in printed_rows if row.split() not in lines]


def test_printed_tolerance_is_half_the_last_digit():
    assert 0.84874 == printed("0.8487") and 0.84876 != printed("0.8487")
    assert 722.543614 == printed("722.54361") and 722.54362 != printed("722.54361")
    assert 102.94 == printed("102.9") and 103.0 != printed("102.9")


# ------------------------------------------------------------------------------------------------ REG
FITNESS = ("data fitness; input Age Weight Oxygen RunTime RestPulse RunPulse MaxPulse; datalines;\n"
           + datalines("fitness.txt") + ";\n")


def test_reg_fitness_full_model_anova_and_fit_statistics(session):
    run_ok(session, FITNESS + """ods output ANOVA=anova FitStatistics=fit ParameterEstimates=pe;
proc reg data=fitness; model Oxygen = RunTime Age Weight RunPulse MaxPulse RestPulse; run;""")
    # SAS/STAT User's Guide, REG, "Parameter Estimates and Associated Statistics", Figure 30 (ANOVA table):
    # https://go.documentation.sas.com/api/docsets/statug/v_023/content/statug_reg_details21.htm
    # (the same figures: https://support.sas.com/documentation/cdl/en/statug/63962/HTML/default/statug_reg_sect033.htm)
    model, error, total = rows(session, "work.anova")
    assert [model["Source"], error["Source"], total["Source"]] == ["Model", "Error", "Corrected Total"]
    assert [model["DF"], error["DF"], total["DF"]] == [6, 24, 30]
    assert model["SS"] == printed("722.54361") and model["MS"] == printed("120.42393")
    assert model["FValue"] == printed("22.43") and model["ProbF"] < 0.0001            # printed "<.0001"
    assert error["SS"] == printed("128.83794") and error["MS"] == printed("5.36825")
    assert total["SS"] == printed("851.38154")
    fit = {r["Label1"]: r["nValue1"] for r in rows(session, "work.fit")}
    fit.update({r["Label2"]: r["nValue2"] for r in rows(session, "work.fit") if r["Label2"]})
    assert fit["Root MSE"] == printed("2.31695") and fit["R-Square"] == printed("0.8487")
    assert fit["Dependent Mean"] == printed("47.37581") and fit["Adj R-Sq"] == printed("0.8108")
    assert fit["Coeff Var"] == printed("4.89057")
    # the same page, in its text: "the Intercept term in the model is estimated to be 102.9"
    pe = {r["Variable"]: r for r in rows(session, "work.pe")}
    assert pe["Intercept"]["Estimate"] == printed("102.9")


# Hald's cement data (Hald 1952; Draper and Smith), the classic 13 rows, and a published SAS REG run on them:
# "Example 13. Variable selection in multiple regression: Hald data" (HALD_PAGE below)
# (SAS's listing: R-Square selection, BEST=2, with C(p); then forward selection step by step). The data check
# themselves: numpy's least squares on them give every R-square that listing prints (X4 alone 0.6745, all four 0.9824).
HALD = "data hald; input X1 X2 X3 X4 Y; datalines;\n" + datalines("hald.txt") + ";\n"
HALD_PAGE = "http://merlot.stat.uconn.edu/~nalini/fcilmweb/ex13.txt"


def test_reg_hald_forward_selection_order(session):
    run_ok(session, HALD + """ods output SelectionSummary=steps;
proc reg data=hald; model Y = X1 X2 X3 X4 / selection=forward; run;""")
    steps = rows(session, "work.steps")
    # HALD_PAGE: "Forward Selection: Step 1 Variable X4 Entered", "Step 2 Variable X1 Entered"; step 1's F 22.80,
    # Pr > F 0.0006 (the one-variable model's F); step 2's X1 F 108.22, Pr > F <.0001
    assert [s["VarEntered"] for s in steps[:2]] == ["X4", "X1"]
    assert steps[0]["ProbF"] == printed("0.0006") and steps[1]["ProbF"] < 0.0001


@pytest.mark.parametrize("model, anova, estimates", [
    # HALD_PAGE, Forward Selection Step 1 (X4 entered): Model 1 1831.89616 1831.89616 22.80; Error 11 883.86692
    # 80.35154; Intercept 117.56793 (5.26221), X4 -0.73816 (0.15460)
    ("X4", ("1831.89616", "883.86692", "80.35154", "22.80"),
     {"Intercept": ("117.56793", "5.26221"), "X4": ("-0.73816", "0.15460")}),
    # HALD_PAGE, Step 2 (X1 entered): Model 2 2641.00096 1320.50048 176.63; Error 10 74.76211 7.47621;
    # Intercept 103.09738 (2.12398), X1 1.43996 (0.13842), X4 -0.61395 (0.04864)
    ("X1 X4", ("2641.00096", "74.76211", "7.47621", "176.63"),
     {"Intercept": ("103.09738", "2.12398"), "X1": ("1.43996", "0.13842"), "X4": ("-0.61395", "0.04864")}),
])
def test_reg_hald_forward_step_models(session, model, anova, estimates):
    run_ok(session, HALD + f"""ods output ANOVA=anova ParameterEstimates=pe;
proc reg data=hald; model Y = {model}; run;""")
    m, e, _ = rows(session, "work.anova")
    assert (m["SS"], e["SS"], e["MS"], m["FValue"]) == tuple(printed(x) for x in anova)
    pe = {r["Variable"]: (r["Estimate"], r["StdErr"]) for r in rows(session, "work.pe")}
    assert pe == {k: (printed(a), printed(b)) for k, (a, b) in estimates.items()}


def test_reg_hald_forward_selection_summary_r_square_and_cp(session):
    run_ok(session, HALD + """ods output SelectionSummary=steps;
proc reg data=hald; model Y = X1 X2 X3 X4 / selection=forward; run;""")
    steps = [{k.lower(): v for k, v in s.items()} for s in rows(session, "work.steps")]
    # HALD_PAGE: "Step 1 Variable X4 Entered: R-Square = 0.6745 and C(p) = 138.7308",
    #            "Step 2 Variable X1 Entered: R-Square = 0.9725 and C(p) = 5.4959"
    assert steps[0]["modelrsquare"] == printed("0.6745") and steps[0]["cp"] == printed("138.7308")
    assert steps[1]["modelrsquare"] == printed("0.9725") and steps[1]["cp"] == printed("5.4959")


def test_reg_hald_rsquare_selection_best_two(session):
    run_ok(session, HALD + """ods output SubsetSelSummary=subsets;
proc reg data=hald; model Y = X1 X2 X3 X4 / selection=rsquare best=2 cp; run;""")
    got = [(r["NumInModel"], r["RSquare"], r["Cp"], r["VarsInModel"]) for r in rows(session, "work.subsets")]
    # HALD_PAGE, "R-Square Selection Method" (Number in Model, R-Square, C(p), Variables in Model)
    want = [(1, "0.6745", "138.7308", "X4"), (1, "0.6663", "142.4864", "X2"),
            (2, "0.9787", "2.6782", "X1 X2"), (2, "0.9725", "5.4959", "X1 X4"),
            (3, "0.9823", "3.0182", "X1 X2 X4"), (3, "0.9823", "3.0413", "X1 X2 X3"),
            (4, "0.9824", "5.0000", "X1 X2 X3 X4")]
    assert got == [(k, printed(r2), printed(cp), v) for k, r2, cp, v in want]


def test_reg_hald_listing_prints_the_published_rows(session):
    lines = listing_lines(session, HALD + "proc reg data=hald; model Y = X4; run;")
    # HALD_PAGE, Forward Selection Step 1's Analysis of Variance: the same model's table, printed with the same
    # formats (the step's parameter table has Type II SS and F columns, not REG's t tests, so it is not compared)
    assert missing_rows(lines, ["Model 1 1831.89616 1831.89616 22.80 0.0006", "Error 11 883.86692 80.35154",
                                "Corrected Total 12 2715.76308"]) == []


def test_reg_fitness_listing_prints_the_published_anova(session):
    lines = listing_lines(session, FITNESS + """proc reg data=fitness;
  model Oxygen = RunTime Age Weight RunPulse MaxPulse RestPulse; run;""")
    # https://go.documentation.sas.com/api/docsets/statug/v_023/content/statug_reg_details21.htm, Figure 30
    assert missing_rows(lines, ["Model 6 722.54361 120.42393 22.43 <.0001", "Error 24 128.83794 5.36825",
                                "Corrected Total 30 851.38154", "Root MSE 2.31695 R-Square 0.8487",
                                "Dependent Mean 47.37581 Adj R-Sq 0.8108", "Coeff Var 4.89057"]) == []


# ------------------------------------------------------------------------------------------------ GLM
# Hald's cement data as a published SAS GLM run lists them (rows 14 and 15 have no Y: read, not used), and the
# figures that run printed. This is SAS's output published on a course page, not SAS's manual:
# http://asellus.cee.odu.edu/expdesign/src/m_reg_l.php ("Multiple Least-Square Regression Example 1-3")
CEMENT = "data cement; input Y X1 X2 X3 X4; datalines;\n" + datalines("cement.txt") + ";\n"
CEMENT_PAGE = "http://asellus.cee.odu.edu/expdesign/src/m_reg_l.php"


def test_glm_cement_anova_type1_type3_and_solution(session):
    run_ok(session, CEMENT + """ods output NObs=nobs OverallANOVA=anova FitStatistics=fit ModelANOVA=ss
  ParameterEstimates=pe;
proc glm data=cement; model Y = X1 X2 X3 X4 / solution; run; quit;""")
    # all figures below: CEMENT_PAGE
    assert [r["N"] for r in rows(session, "work.nobs")] == [15, 13]
    model, error, total = rows(session, "work.anova")
    assert (model["DF"], error["DF"], total["DF"]) == (4, 8, 12)
    assert model["SS"] == printed("2670.365050") and model["MS"] == printed("667.591263")
    assert model["FValue"] == printed("117.64")
    assert error["SS"] == printed("45.398026") and error["MS"] == printed("5.674753")
    assert total["SS"] == printed("2715.763077")
    (fit,) = rows(session, "work.fit")
    assert fit["RSquare"] == printed("0.983284") and fit["CV"] == printed("2.496434")
    assert fit["RootMSE"] == printed("2.382174") and fit["DepMean"] == printed("95.42308")
    ss = {(r["HypothesisType"], r["Source"]): r for r in rows(session, "work.ss")}
    for source, ss1, f1, ss3, f3 in [("X1", "1450.076328", "255.53", "281.3174755", "49.57"),
                                     ("X2", "1207.782266", "212.83", "163.2592552", "28.77"),
                                     ("X3", "9.793869", "1.73", "3.1459775", "0.55"),
                                     ("X4", "2.712588", "0.48", "2.7125876", "0.48")]:
        assert ss[(1, source)]["SS"] == printed(ss1) and ss[(1, source)]["FValue"] == printed(f1)
        assert ss[(3, source)]["SS"] == printed(ss3) and ss[(3, source)]["FValue"] == printed(f3)
    assert ss[(1, "X3")]["ProbF"] == printed("0.2254") and ss[(3, "X2")]["ProbF"] == printed("0.0007")
    pe = {r["Parameter"]: r for r in rows(session, "work.pe")}
    for name, est, se, t, p in [("Intercept", "55.28234314", "11.01724868", "5.02", "0.0010"),
                                ("X1", "1.62976040", "0.23147223", "7.04", "0.0001"),
                                ("X2", "0.58798438", "0.10962267", "5.36", "0.0007"),
                                ("X3", "0.16734770", "0.22475814", "0.74", "0.4778"),
                                ("X4", "-0.07179770", "0.10384657", "-0.69", "0.5089")]:
        assert pe[name]["Estimate"] == printed(est) and pe[name]["StdErr"] == printed(se)
        assert pe[name]["tValue"] == printed(t) and pe[name]["Probt"] == printed(p)


def test_glm_cement_listing_prints_the_published_rows(session):
    lines = listing_lines(session, CEMENT + "proc glm data=cement; model Y = X1 X2 X3 X4 / solution; run; quit;")
    # CEMENT_PAGE, "Multiple Least-Square Regression Example 3" (the GLM listing, row by row)
    assert missing_rows(lines, [
        "Model 4 2670.365050 667.591263 117.64 <.0001", "Error 8 45.398026 5.674753",
        "Corrected Total 12 2715.763077", "0.983284 2.496434 2.382174 95.42308",
        "X1 1 1450.076328 1450.076328 255.53 <.0001", "X3 1 9.793869 9.793869 1.73 0.2254",
        "X1 1 281.3174755 281.3174755 49.57 0.0001", "X4 1 2.7125876 2.7125876 0.48 0.5089",
        "Intercept 55.28234314 11.01724868 5.02 0.0010", "X4 -0.07179770 0.10384657 -0.69 0.5089"]) == []


# ------------------------------------------------------------------------------------- MEANS/UNIVARIATE
# No page found prints MEANS or UNIVARIATE output for these data, but the model pages above print the response's
# mean and corrected sum of squares (the ANOVA's Corrected Total): the descriptive PROCs must give the same.
def test_means_and_univariate_agree_with_the_published_mean_and_corrected_ss(session):
    run_ok(session, FITNESS + CEMENT + """ods output Summary=fit_sum;
proc means data=fitness n mean css std; var Oxygen; run;
ods output Summary=cem_sum;
proc means data=cement n nmiss mean css; var Y; run;
ods output Moments=moments;
proc univariate data=cement; var Y; run;""")
    (f,) = rows(session, "work.fit_sum")
    # the REG Fitness page (statug_reg_details21): Dependent Mean 47.37581, Corrected Total 30 851.38154
    assert f["Oxygen_N"] == 31 and f["Oxygen_Mean"] == printed("47.37581") and f["Oxygen_CSS"] == printed("851.38154")
    # by hand from those: Std Dev = sqrt(851.38154 / 30) = 5.32722 (the printed CSS's rounding moves it < 1e-6)
    assert f["Oxygen_StdDev"] == pytest.approx((851.38154 / 30) ** 0.5, abs=1e-6)
    (c,) = rows(session, "work.cem_sum")
    # CEMENT_PAGE: 15 read, 13 used (2 missing Y), Y Mean 95.42308, Corrected Total 12 2715.763077
    assert (c["Y_N"], c["Y_NMiss"]) == (13, 2)
    assert c["Y_Mean"] == printed("95.42308") and c["Y_CSS"] == printed("2715.763077")
    mo = {r["Label1"]: r["nValue1"] for r in rows(session, "work.moments")}
    mo.update({r["Label2"]: r["nValue2"] for r in rows(session, "work.moments")})
    assert mo["N"] == 13 and mo["Mean"] == printed("95.42308") and mo["Corrected SS"] == printed("2715.763077")
    # by hand from the page's Y column: sum = 1240.5 (the 13 values add to it exactly)
    assert mo["Sum Observations"] == pytest.approx(1240.5, abs=1e-9)


# ----------------------------------------------------------------------------------------------- FREQ
# The 2×2 table of Stokes, Davis and Koch, "Categorical Data Analysis Using the SAS System" (SAS Press), with the
# Fisher's Exact Test table SAS printed for it, as quoted on
# http://tj211.com/forum.php?action=printable&mod=viewthread&tid=2744
SEVERE = """data severe; input treat $ outcome $ count; datalines;
Test f 10
Test u 2
Control f 2
Control u 4
;
ods output FishersExact=fe ChiSq=chisq;
proc freq data=severe order=data; weight count; tables treat*outcome / chisq nocol; run;
"""


def test_freq_fisher_exact_2x2(session):
    run_ok(session, SEVERE)
    fe = {r["Name1"]: r["nValue1"] for r in rows(session, "work.fe")}
    # http://tj211.com/forum.php?action=printable&mod=viewthread&tid=2744 (SAS's listing, quoted)
    assert fe["FREQ11"] == 10
    assert fe["XPL_FISH"] == printed("0.9961") and fe["XPR_FISH"] == printed("0.0573")
    assert fe["P_TABLE"] == printed("0.0533") and fe["XP2_FISH"] == printed("0.1070")
    # by hand: phi = (10·4 − 2·2)/√(12·6·12·6) = 36/72 = 0.5; Pearson chi-square = n·phi² = 18·0.25 = 4.5
    chisq = {r["Statistic"]: r for r in rows(session, "work.chisq")}
    assert chisq["Chi-Square"]["Value"] == pytest.approx(4.5, rel=1e-12)
    assert chisq["Phi Coefficient"]["Value"] == pytest.approx(0.5, rel=1e-12)


def test_freq_fisher_exact_listing(session):
    lines = listing_lines(session, SEVERE)
    # http://tj211.com/forum.php?action=printable&mod=viewthread&tid=2744 (SAS's "Fisher's Exact Test" table)
    assert missing_rows(lines, ["Cell (1,1) Frequency (F) 10", "Left-sided Pr <= F 0.9961",
                                "Right-sided Pr >= F 0.0573", "Table Probability (P) 0.0533",
                                "Two-sided Pr <= P 0.1070"]) == []


def test_freq_mantel_haenszel_with_character_levels(session):
    # SAS/STAT FREQ, "Definitions and Notation: Scores": "The default score type is TABLE ... For character
    # variables, table scores are defined as the row numbers and column numbers":
    # https://support.sas.com/documentation/cdl/en/statug/63033/HTML/default/statug_freq_a0000000639.htm
    run_ok(session, SEVERE)
    chisq = {r["Statistic"]: r for r in rows(session, "work.chisq")}
    # by hand, scores 1, 2 on both margins: Q_MH = (n − 1)·r² = 17·0.5² = 4.25
    assert chisq["Mantel-Haenszel Chi-Square"]["Value"] == pytest.approx(4.25, rel=1e-12)


# --------------------------------------------------------------------------------------------- GENMOD
# A published SAS GENMOD listing (course notes "loglinear models for contingency tables", SAS 9 output of 2009):
# https://docest.com/doc/347714/loglinear-models-for-contigency-tables — the 8-row table and the Poisson model
# count = trtmnt|response (sex left out, so each fitted count is its trtmnt×response total / 2: a closed form).
NEWDRUG = """data newdrug; input sex $ trtmnt $ response $ count; datalines;
1 1 1 950
1 1 2 50
1 2 1 9000
1 2 2 1000
2 1 1 5000
2 1 2 5000
2 2 1 5
2 2 2 95
;
ods output ModelFit=fit ParameterEstimates=pe;
proc genmod data=newdrug; class trtmnt response; model count = trtmnt|response / dist=poisson link=log; run;
"""
NEWDRUG_PAGE = "https://docest.com/doc/347714/loglinear-models-for-contigency-tables"


def test_genmod_poisson_loglinear_fit_and_estimates(session):
    run_ok(session, NEWDRUG)
    fit = {r["Criterion"]: r for r in rows(session, "work.fit")}
    # NEWDRUG_PAGE: Deviance 4 22733.4149 5683.3537 (scaled the same: scale 1)
    for name in ("Deviance", "Scaled Deviance"):
        assert fit[name]["DF"] == 4 and fit[name]["Value"] == printed("22733.4149")
        assert fit[name]["ValueDF"] == printed("5683.3537")
    # NEWDRUG_PAGE prints Pearson Chi-Square 4 17341.6819 4335.4205; by hand (fitted = margins/2, exact
    # fractions) it is 17341.682029: SAS's printed last digit is where its iterations stopped, so this one
    # figure is compared at 2e-4 (one unit and a bit), not half a unit
    assert fit["Pearson Chi-Square"]["Value"] == pytest.approx(17341.6819, abs=2e-4)
    assert fit["Pearson Chi-Square"]["ValueDF"] == printed("4335.4205")
    pe = {(r["Parameter"], r["Level1"]): r for r in rows(session, "work.pe")}
    # NEWDRUG_PAGE, Analysis Of Parameter Estimates: estimate, standard error, Wald 95% limits, chi-square
    for key, est, se, lo, hi, chisq in [(("Intercept", ""), "6.3054", "0.0302", "6.2461", "6.3646", "43534.6"),
                                        (("trtmnt", "1"), "1.5286", "0.0333", "1.4633", "1.5940", "2102.76"),
                                        (("response", "1"), "2.1070", "0.0320", "2.0443", "2.1698", "4334.27")]:
        r = pe[key]
        assert (r["Estimate"], r["StdErr"], r["LowerWaldCL"], r["UpperWaldCL"], r["ChiSq"]) == tuple(
            printed(x) for x in (est, se, lo, hi, chisq)), key
    assert pe[("trtmnt", "2")]["Estimate"] == 0 and pe[("trtmnt", "2")]["DF"] == 0


def test_genmod_poisson_log_likelihood_is_the_kernel(session):
    run_ok(session, NEWDRUG)
    fit = {r["Criterion"]: r["Value"] for r in rows(session, "work.fit")}
    # NEWDRUG_PAGE: "Log Likelihood 148707.7040"; by hand, sum(y*log(mu) - mu) with mu = margins/2: 148707.70400
    assert fit["Log Likelihood"] == printed("148707.7040")


# ---------------------------------------------------------------------------------------------- MIXED
HEIGHTS = "data heights; input Family Gender $ Height @@; datalines;\n" + datalines("heights.txt") + ";\n"


def test_mixed_heights_random_family_reml_fit(session):
    run_ok(session, HEIGHTS + """ods output FitStatistics=fit;
proc mixed data=heights; class Family Gender; model Height = Gender / s; random Family Family*Gender / s; run;""")
    # SAS/STAT User's Guide, HPMIXED, Example "Comparing Results from PROC HPMIXED and PROC MIXED", Output 46.2.1
    # (PROC MIXED's Iteration History and Fit Statistics for this model):
    # https://support.sas.com/documentation/cdl/en/statug/66103/HTML/default/statug_hpmixed_examples02.htm
    fit = {r["Descr"]: r["Value"] for r in rows(session, "work.fit")}
    assert fit["-2 Res Log Likelihood"] == printed("71.02245869")        # the history's last iteration
    assert fit["AIC (Smaller is Better)"] == printed("77.0")
    assert fit["AICC (Smaller is Better)"] == printed("79.0")
    assert fit["BIC (Smaller is Better)"] == printed("75.2")


def test_mixed_heights_without_random_effects_is_iteration_zero(session):
    # Iteration 0 of the history on the same page is the REML fit with no random effects (G = 0): 74.11074833
    # https://support.sas.com/documentation/cdl/en/statug/66103/HTML/default/statug_hpmixed_examples02.htm
    run_ok(session, HEIGHTS + """ods output FitStatistics=fit;
proc mixed data=heights; class Family Gender; model Height = Gender; run;""")
    fit = {r["Descr"]: r["Value"] for r in rows(session, "work.fit")}
    assert fit["-2 Res Log Likelihood"] == printed("74.11074833")


# SAS/STAT 9.2 User's Guide, MIXED, "Clustered Data Example", Figures 56.9 and 56.10 (the book excerpt's page):
# https://www.yumpu.com/en/document/view/13737171/sas-stat-92-users-guide-the-mixed-procedure-book-excerpt/12
HEIGHTS_RANDOM = HEIGHTS + """ods output NObs=nobs ClassLevels=cl Dimensions=dim;
proc mixed data=heights; class Family Gender; model Height = Gender; random Family Family*Gender; run;"""


def test_mixed_heights_observations_read_and_used(session):
    run_ok(session, HEIGHTS_RANDOM)
    nobs = {r["Label"]: r["N"] for r in rows(session, "work.nobs")}
    # Figure 56.10: "Number of Observations Read 18 / Used 18 / Not Used 0"
    assert nobs == {"Number of Observations Read": 18, "Number of Observations Used": 18,
                    "Number of Observations Not Used": 0}


def test_mixed_heights_class_levels_and_dimensions(session):
    log = run_ok(session, HEIGHTS_RANDOM)
    assert "Output 'ClassLevels' was not created" not in log and "Output 'Dimensions' was not created" not in log
    # Figure 56.9: Family 4 levels "1 2 3 4", Gender 2 levels "F M"
    cl = {r["Class"]: (r["Levels"], r["Values"]) for r in rows(session, "work.cl")}
    assert cl == {"Family": (4, "1 2 3 4"), "Gender": (2, "F M")}
    # Figure 56.10: Covariance Parameters 3, Columns in X 3, Columns in Z 12, Subjects 1, Max Obs Per Subject 18
    dim = {r["Descr"]: r["Value"] for r in rows(session, "work.dim")}
    assert dim == {"Covariance Parameters": 3, "Columns in X": 3, "Columns in Z": 12, "Subjects": 1,
                   "Max Obs Per Subject": 18}
