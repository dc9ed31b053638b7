"""SAS's own documented worked examples run through statgrid's SAS front end (issue 27, item 2): the data are the
manuals' (facts, typed in: tests/unit/sas/worked/), the programs are written here, and every expected figure is the
one the manual prints, with the page's address beside it. Tolerance: half a unit of the last printed digit
(`printed(x)` below), so a figure printed as 0.8487 passes for anything in [0.84865, 0.84875]."""
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
