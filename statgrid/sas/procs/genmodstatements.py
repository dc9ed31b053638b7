"""PROC GENMOD's CONTRAST and ESTIMATE statements and MODEL / TYPE3 (SAS/STAT User's Guide, The GENMOD
Procedure), read into the engine's arguments (procs/genmod.py: contrasts=, estimates=, type3=;
procs/genmod_tests.py computes them), and their tables as SAS's ODS names them:

    CONTRAST 'label' effect values <, effect values …> </ WALD E SINGULAR=>;  → Contrasts ("Contrast Results")
    ESTIMATE 'label' effect values … </ ALPHA= EXP E>;                         → Estimates ("Contrast Estimate
                                                                                  Results")
    MODEL … / TYPE3;                                                            → Type3 ("LR Statistics For
                                                                                  Type 3 Analysis")
A CONTRAST is by default the likelihood-ratio test (WALD: the Wald χ²). With SCALE=DEVIANCE/PEARSON (DSCALE,
PSCALE) the Type3 and Contrasts tables carry the F test beside the χ² (Num DF, Den DF, F Value, Pr > F).
With a REPEATED statement (GEE) the same statements are GEE's tests (procs/gee_tests.py, tables in repeated.py):
TYPE3 and CONTRAST generalized score statistics (WALD: Wald with the empirical covariance), ESTIMATE with the
empirical standard error.
The column names statgrid gives where SAS's documentation names none: Type3 Source, DF, DenDF, FValue, ProbF,
ChiSq, ProbChiSq; Contrasts Contrast, DF, (DenDF, FValue, ProbF,) ChiSq, ProbChiSq, Type.
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.ods import OdsColumn as Col, OdsTable
from statgrid.sas.procs.glmstatements import _label, _rows

CONTRAST_OPTIONS = {"WALD", "E", "SINGULAR", "LR"}
ESTIMATE_OPTIONS = {"ALPHA", "EXP", "E", "SINGULAR"}


def contrast(c) -> tuple[str, list[dict], bool]:
    label = _label(c, "CONTRAST")
    rows, opts = _rows(c, "CONTRAST", CONTRAST_OPTIONS)
    return label, rows, bool(opts.get("WALD"))


def estimate(c) -> tuple[str, dict, float, bool]:
    label = _label(c, "ESTIMATE")
    t = c.peek() if not c.at_end() else None
    rows, opts = _rows(c, "ESTIMATE", ESTIMATE_OPTIONS)
    if len(rows) > 1:
        raise SasError("ESTIMATE takes one row of coefficients (no commas)", t.line if t else 0, t.col if t else 0,
                       ",", "one row: effect values …")
    alpha = float(opts.get("ALPHA", 0.05))
    if not 0 < alpha < 1:
        raise SasError(f"ALPHA={alpha:g} in ESTIMATE must be between 0 and 1", t.line if t else 0,
                       t.col if t else 0, "ALPHA=", "ALPHA=0.05")
    return label, rows[0], alpha, bool(opts.get("EXP"))


def _tests_cols(fixed: bool) -> list[Col]:
    f = [Col("DenDF", "Den DF", fmt="int"), Col("FValue", "F Value", fmt="d2"), Col("ProbF", "Pr > F", fmt="p")]
    return [Col("DF", "Num DF" if fixed else "DF", fmt="int"), *(f if fixed else []),
            Col("ChiSq", "Chi-Square", fmt="d2"), Col("ProbChiSq", "Pr > ChiSq", fmt="p")]


def tables(result: Any) -> list[OdsTable]:
    """Type3, Contrasts and Estimates of a GENMOD fit (those it has)."""
    st = getattr(result, "stats", None) or {}
    fixed = bool(st.get("fixed_scale"))
    out = []
    if st.get("type3"):
        out.append(OdsTable("Type3", "LR Statistics For Type 3 Analysis",
                            [Col("Source", type="char"), *_tests_cols(fixed)], st["type3"], "Genmod"))
    if st.get("contrasts"):
        out.append(OdsTable("Contrasts", "Contrast Results",
                            [Col("Contrast", type="char"), *_tests_cols(fixed), Col("Type", type="char")],
                            st["contrasts"], "Genmod"))
    if st.get("estimates"):
        out.append(OdsTable("Estimates", "Contrast Estimate Results", [
            Col("Label", type="char"), Col("MeanEstimate", "Mean Estimate", fmt="d4"),
            Col("MeanLowerCL", "Mean Lower CL", fmt="d4"), Col("MeanUpperCL", "Mean Upper CL", fmt="d4"),
            Col("LBetaEstimate", "L'Beta Estimate", fmt="d4"), Col("StdErr", "Standard Error", fmt="d4"),
            Col("Alpha", fmt="d2"), Col("LBetaLowerCL", "L'Beta Lower CL", fmt="d4"),
            Col("LBetaUpperCL", "L'Beta Upper CL", fmt="d4"), Col("ChiSq", "Chi-Square", fmt="d2"),
            Col("ProbChiSq", "Pr > ChiSq", fmt="p")], st["estimates"], "Genmod"))
    return out
