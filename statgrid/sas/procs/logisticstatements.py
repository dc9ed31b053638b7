"""PROC LOGISTIC's CONTRAST, ODDSRATIO, UNITS and EXACT statements and the MODEL options LINK=, CLODDS=, RISKLIMITS,
ALPHA= (SAS/STAT User's Guide, The LOGISTIC Procedure), read into the engine's arguments (procs/logistic.py,
procs/logistic_tests.py) and their tables as SAS's ODS names them:

    CONTRAST 'label' effect values <, effect values …> </ ESTIMATE=PARM|EXP|BOTH ALPHA= E>;
        → ContrastTest ("Contrast Test Results"), ContrastEstimate ("Contrast Estimation and Testing Results by Row"),
          ContrastCoeff (E: "Coefficients of Contrast label", one column per row of L)
    ODDSRATIO <'label'> var </ AT(v=values|ALL|REF …) DIFF=ALL|REF CL=WALD ALPHA=>;
        → OddsRatiosWald ("Odds Ratio Estimates and Wald Confidence Intervals")
    UNITS var=list … </ DEFAULT=list>;   list items: number, SD, -SD, number*SD
    MODEL … / CLODDS=WALD (or RISKLIMITS) ALPHA=;   → CLOddsWald ("Odds Ratio Estimates and Wald Confidence
        Intervals", UNITS honoured; UNITS alone gives it too, as statgrid shows the limits always)
    MODEL … / LINK=LOGIT|PROBIT|NORMIT|CLOGLOG;   CLASS … / PARAM=EFFECT|REF|REFERENCE|GLM;
    EXACT <'label'> <INTERCEPT> <effects> </ JOINT JOINTONLY>;   → ExactTests ("Conditional Exact Tests": Score and
        Probability tests, exact and mid p-values; procs/logistic_exact.py)
CONTRAST coefficients follow the PARAM= coding (SAS's rule for LOGISTIC). EXACT's ESTIMATE=, OUTDIST=, ONESIDED and
MIDPFACTOR= are ERRORs, as is CLODDS=PL/BOTH (profile likelihood).
The column names statgrid gives where SAS's documentation names none: ContrastTest Contrast, DF, WaldChiSq,
ProbChiSq; ContrastEstimate Contrast, Type, Row, Estimate, StdErr, Alpha, LowerLimit, UpperLimit, WaldChiSq,
ProbChiSq; OddsRatiosWald Label, Effect, OddsRatioEst, LowerCL, UpperCL; CLOddsWald Effect, Unit, OddsRatioEst,
LowerCL, UpperCL; ExactTests Label, Effect, Test, Statistic, ExactPValue, MidPValue.
"""
from __future__ import annotations

from typing import Any

from statgrid.errors import StatgridError
from statgrid.sas.cursor import TokenCursor
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM, STR
from statgrid.sas.ods import OdsColumn as Col, OdsTable
from statgrid.sas.procs.glmstatements import _label, _rows

PARAMS = {"EFFECT": "effect", "REF": "ref", "REFERENCE": "ref", "GLM": "glm"}
LINKS = {"LOGIT": "logit", "LOGISTIC": "logit", "PROBIT": "probit", "NORMIT": "probit", "CLOGLOG": "cloglog",
         "CLL": "cloglog"}


def parse(kw: str, c, spec: dict, stmt) -> None:
    """One LOGISTIC statement of this module onto spec (logistic_contrasts, logistic_oddsratios, logistic_units)."""
    if kw == "CONTRAST":
        spec.setdefault("logistic_contrasts", []).append(contrast(c))
    elif kw == "ODDSRATIO":
        spec.setdefault("logistic_oddsratios", []).append(oddsratio(c))
    elif kw == "UNITS":
        spec["logistic_units"] = units(c)                  # SAS: the last UNITS statement is used
    else:
        spec.setdefault("logistic_exact", []).append(exact(c))


def exact(c) -> tuple[str | None, list[str], dict]:
    """EXACT <'label'> <INTERCEPT> <effects> </ JOINT JOINTONLY>."""
    from statgrid.sas.procs.glmstatements import _effect
    label = str(c.next().value) if c.peek().kind == STR else None
    names: list[str] = []
    while not c.at_end() and not c.at("/"):
        if c.accept(","):
            continue
        if c.peek().kind != NAME:
            t = c.peek()
            raise SasError("Syntax error in EXACT", t.line, t.col, t.text, "INTERCEPT or effects of the MODEL")
        names.append(_effect(c))
    opts: dict[str, Any] = {}
    if c.accept("/"):
        while not c.at_end():
            t = c.next()
            if t.kind == NAME and t.upper in ("JOINT", "JOINTONLY"):
                opts[t.upper.lower()] = True
            else:
                raise SasError(f"The option {t.text} of the EXACT statement is not supported by statgrid (exact "
                               "tests only: no ESTIMATE=, OUTDIST=, ONESIDED, MIDPFACTOR=)", t.line, t.col, t.text,
                               "JOINT or JOINTONLY")
    return label, names, opts


def _slash_index(c) -> int:
    j = c.i
    while c.tokens[j].kind not in ("SEMI", "EOF") and not (c.tokens[j].text == "/" and c.tokens[j].kind != STR):
        j += 1
    return j


def _value(c) -> str:
    t = c.next()
    return str(t.value) if t.kind == STR else t.text


def contrast(c) -> tuple[str, list[dict], dict]:
    label = _label(c, "CONTRAST")
    j = _slash_index(c)
    rows, _ = _rows(TokenCursor(c.tokens[c.i:j], c.source), "CONTRAST", set())
    c.i = j
    opts: dict[str, Any] = {}
    if c.accept("/"):
        while not c.at_end():
            t = c.next()
            key = t.upper if t.kind == NAME else t.text
            if key == "ESTIMATE":
                if not c.accept("="):
                    raise SasError("ESTIMATE in CONTRAST needs a keyword", t.line, t.col, t.text,
                                   "ESTIMATE=PARM, ESTIMATE=EXP or ESTIMATE=BOTH")
                v = c.next()
                if v.upper not in ("PARM", "EXP", "BOTH"):
                    raise SasError(f"ESTIMATE={v.text} in CONTRAST is not one of PARM, EXP, BOTH", v.line, v.col,
                                   v.text, "ESTIMATE=PARM, ESTIMATE=EXP or ESTIMATE=BOTH")
                opts["estimate"] = v.upper.lower()
            elif key == "ALPHA" and c.accept("="):
                v = c.next()
                if v.kind != NUM or not 0 < float(v.value) < 1:
                    raise SasError(f"ALPHA={v.text} in CONTRAST must be a number between 0 and 1", v.line, v.col,
                                   v.text, "ALPHA=0.05")
                opts["alpha"] = float(v.value)
            elif key == "E":
                opts["e"] = True
            else:
                raise SasError(f"The option {t.text} is not recognized in the CONTRAST statement of PROC LOGISTIC "
                               "(statgrid)", t.line, t.col, t.text, "ESTIMATE=PARM|EXP|BOTH, ALPHA=, E")
    return label, rows, opts


def _at(c) -> dict[str, list[str]]:
    """AT (v=value … v=ALL|REF …) after AT: {variable: [values as written]}."""
    c.expect("(", expected="( after AT")
    out: dict[str, list[str]] = {}
    while not c.accept(")"):
        if c.at_end():
            raise c.error("Syntax error in AT(…) of ODDSRATIO", ")")
        name = c.expect_name("a variable name in AT(…)")
        c.expect("=", expected=f"= after {name} in AT(…)")
        vals: list[str] = []
        while not c.at(")") and not c.at_end() and not (c.peek().kind == NAME and c.peek(1).is_("=")):
            sign = "-" if c.accept("-") else ""
            vals.append(sign + _value(c))
        if not vals:
            raise c.error(f"AT {name}= needs a value", "a value, ALL or REF")
        out[name] = vals
    return out


def oddsratio(c) -> tuple[str | None, str, dict]:
    label = str(c.next().value) if c.peek().kind == STR else None
    var = c.expect_name("the variable of the odds ratios")
    opts: dict[str, Any] = {}
    if c.accept("/"):
        while not c.at_end():
            t = c.next()
            key = t.upper if t.kind == NAME else t.text
            if key == "AT":
                opts["at"] = _at(c)
            elif key == "DIFF" and c.accept("="):
                v = c.next()
                if v.upper not in ("ALL", "REF"):
                    raise SasError(f"DIFF={v.text} in ODDSRATIO is not one of ALL, REF", v.line, v.col, v.text,
                                   "DIFF=ALL or DIFF=REF")
                opts["diff"] = v.upper.lower()
            elif key == "CL" and c.accept("="):
                v = c.next()
                if v.upper != "WALD":
                    raise SasError(f"CL={v.text} in ODDSRATIO is not supported by statgrid (Wald limits only)",
                                   v.line, v.col, v.text, "CL=WALD")
            elif key == "ALPHA" and c.accept("="):
                v = c.next()
                if v.kind != NUM or not 0 < float(v.value) < 1:
                    raise SasError(f"ALPHA={v.text} in ODDSRATIO must be a number between 0 and 1", v.line, v.col,
                                   v.text, "ALPHA=0.05")
                opts["alpha"] = float(v.value)
            else:
                raise SasError(f"The option {t.text} is not recognized in the ODDSRATIO statement of PROC LOGISTIC "
                               "(statgrid)", t.line, t.col, t.text, "AT(…), DIFF=ALL|REF, CL=WALD, ALPHA=")
    return label, var, opts


def _unit_list(c, name: str) -> list[str]:
    """number, SD, -SD, number*SD … up to the next `name=`, `/` or the end."""
    out: list[str] = []
    while not c.at_end() and not c.at("/") and not (c.peek().kind == NAME and c.peek(1).is_("=")):
        text = "-" if c.accept("-") else ""
        t = c.next()
        if t.kind == NUM and c.accept("*"):
            sd = c.next()
            if not sd.is_("SD"):
                raise SasError(f"UNITS {name}: {t.text}* must be followed by SD", sd.line, sd.col, sd.text,
                               f"{name}={t.text}*SD")
            out.append(f"{text}{t.text}*SD")
        elif t.kind == NUM or t.is_("SD"):
            out.append(text + t.text.upper())
        else:
            raise SasError(f"UNITS {name}: {t.text} is not a unit of change", t.line, t.col, t.text,
                           "a number, SD, -SD or number*SD")
    if not out:
        raise c.error(f"UNITS {name}= needs a list of units", "a number, SD, -SD or number*SD")
    return out


def units(c) -> dict:
    """{'units': {var: [texts]}, 'default': [texts] | None}."""
    out: dict[str, Any] = {"units": {}, "default": None}
    while not c.at_end() and not c.at("/"):
        name = c.expect_name("a variable name")
        c.expect("=", expected=f"= after {name}")
        out["units"][name] = _unit_list(c, name)
    if c.accept("/"):
        t = c.next()
        if not t.is_("DEFAULT") or not c.accept("="):
            raise SasError(f"The option {t.text} is not recognized in the UNITS statement", t.line, t.col, t.text,
                           "DEFAULT=list")
        out["default"] = _unit_list(c, "DEFAULT")
    return out


# ------------------------------------------------------------------------------------------------ the fit
def fit(s: Any, data: str, dep: str, effects: str, dep_opts: dict, mopts: dict, opts: dict, spec: dict,
        classes: list | None, outest: str | None) -> Any:
    """The engine's logistic() on the statements read."""
    from statgrid.procs.logistic import logistic

    link = str(mopts.get("LINK", "LOGIT")).upper()
    if link not in LINKS:
        raise StatgridError(f"LINK={mopts['LINK']} is not supported by statgrid's PROC LOGISTIC; use LOGIT, PROBIT "
                            "(NORMIT) or CLOGLOG (GLOGIT/ALOGIT are for responses of more than two levels).")
    param = str(spec["class_opts"].get("PARAM", "EFFECT")).upper()
    if param not in PARAMS:
        raise StatgridError(f"PARAM={param} of the CLASS statement is not supported by statgrid's PROC LOGISTIC; "
                            "use EFFECT, REF (REFERENCE) or GLM.")
    if spec.get("strata"):
        return _conditional(s, data, dep, effects, dep_opts, mopts, opts, spec, classes, PARAMS[param])
    cl = str(mopts.get("CLODDS", "WALD" if mopts.get("RISKLIMITS") else "")).upper()
    if cl not in ("", "WALD", "TRUE"):
        raise StatgridError(f"CLODDS={cl} (profile-likelihood limits) is not supported by statgrid's PROC LOGISTIC; "
                            "use CLODDS=WALD.")
    alpha = float(mopts.get("ALPHA", 0.05))
    if not 0 < alpha < 1:
        raise StatgridError(f"ALPHA={mopts['ALPHA']} of the MODEL statement must be between 0 and 1 (ALPHA=0.05).")
    selection = {"S": "stepwise", "F": "forward", "B": "backward"}.get(
        str(mopts.get("SELECTION", "")).upper(), str(mopts.get("SELECTION", "")).lower() or None)
    u = spec.get("logistic_units") or {}
    out = spec.get("output")
    fn = getattr(logistic, "__wrapped__", logistic)
    return fn(s, data, f"{dep} = {effects}", class_=classes, param=PARAMS[param], event=dep_opts.get("EVENT"),
              descending=bool(opts.get("DESCENDING") or dep_opts.get("DESCENDING")),
              selection=selection if selection != "none" else None,
              sle=float(mopts.get("SLE", mopts.get("SLENTRY", 0.05))),
              sls=float(mopts.get("SLS", mopts.get("SLSTAY", 0.05))), include=int(float(mopts.get("INCLUDE", 0))),
              lackfit=bool(mopts.get("LACKFIT")), maxiter=int(float(mopts.get("MAXITER", 25))),
              noint=bool(mopts.get("NOINT")), outest=outest, print=False,
              output=out["names"] if out else None, alpha=out["alpha"] if out else 0.05, link=LINKS[link],
              contrasts=spec.get("logistic_contrasts"), oddsratios=spec.get("logistic_oddsratios"),
              units=u.get("units"), units_default=u.get("default"), clodds=bool(cl), model_alpha=alpha,
              exact=spec.get("logistic_exact"), ref=spec.get("class_ref") or None,
              order=str(opts.get("ORDER")).lower() if opts.get("ORDER") else None)


def _conditional(s, data, dep, effects, dep_opts, mopts, opts, spec, classes, param):
    """STRATA: the conditional model (procs/logistic_strata.py); selection, EXACT and the OUTPUT, CONTRAST and
    ODDSRATIO statements are not built for it (an ERROR, not a silent unconditional fit)."""
    from statgrid.procs.logistic_strata import conditional_logistic
    other = [k for k in ("logistic_contrasts", "logistic_oddsratios", "logistic_exact", "output") if spec.get(k)]
    if str(mopts.get("SELECTION", "NONE")).upper() not in ("NONE", "N") or other:
        raise StatgridError("statgrid's conditional logistic regression (STRATA) fits the model as written: "
                            "SELECTION=, EXACT, OUTPUT, CONTRAST and ODDSRATIO are not supported with STRATA yet.")
    fn = getattr(conditional_logistic, "__wrapped__", conditional_logistic)
    return fn(s, data, f"{dep} = {effects}", spec["strata"], class_=classes, param=param,
              event=dep_opts.get("EVENT"), descending=bool(opts.get("DESCENDING") or dep_opts.get("DESCENDING")),
              ref=spec.get("class_ref") or None, maxiter=int(float(mopts.get("MAXITER", 25))))


# ------------------------------------------------------------------------------------------------ tables
def tables(result: Any) -> list[OdsTable]:
    st = getattr(result, "stats", None) or {}
    out = []
    for label, rows in st.get("contrast_coeffs", ()):
        out.append(OdsTable("ContrastCoeff", f"Coefficients of Contrast {label}", [
            Col("Contrast", type="char", hidden=True), Col("Parameter", type="char"),
            *[Col(f"Row{i}", fmt="best") for i in range(1, len(rows[0]))]], [[label, *r] for r in rows], "Logistic"))
    if st.get("contrast_tests"):
        out.append(OdsTable("ContrastTest", "Contrast Test Results", [
            Col("Contrast", type="char"), Col("DF", fmt="int"), Col("WaldChiSq", "Wald Chi-Square", fmt="d4"),
            Col("ProbChiSq", "Pr > ChiSq", fmt="p")], [list(r) for r in st["contrast_tests"]], "Logistic"))
    if st.get("contrast_estimates"):
        out.append(OdsTable("ContrastEstimate", "Contrast Estimation and Testing Results by Row", [
            Col("Contrast", type="char"), Col("Type", type="char"), Col("Row", fmt="int"),
            Col("Estimate", fmt="d4"), Col("StdErr", "Standard Error", fmt="d4"), Col("Alpha", fmt="d2"),
            Col("LowerLimit", "Lower Limit", fmt="d4"), Col("UpperLimit", "Upper Limit", fmt="d4"),
            Col("WaldChiSq", "Wald Chi-Square", fmt="d4"), Col("ProbChiSq", "Pr > ChiSq", fmt="p")],
            [list(r) for r in st["contrast_estimates"]], "Logistic"))
    if st.get("oddsratios_wald"):
        out.append(OdsTable("OddsRatiosWald", "Odds Ratio Estimates and Wald Confidence Intervals", [
            Col("Label", type="char", hidden=True), Col("Effect", "Odds Ratio", "char"),
            Col("OddsRatioEst", "Estimate", fmt="d4"), Col("LowerCL", "Lower CL", fmt="d4"),
            Col("UpperCL", "Upper CL", fmt="d4")], [list(r) for r in st["oddsratios_wald"]], "Logistic"))
    if st.get("clodds_wald"):
        out.append(OdsTable("CLOddsWald", "Odds Ratio Estimates and Wald Confidence Intervals", [
            Col("Effect", type="char"), Col("Unit", fmt="d4"), Col("OddsRatioEst", "Estimate", fmt="d4"),
            Col("LowerCL", "Lower CL", fmt="d4"), Col("UpperCL", "Upper CL", fmt="d4")],
            [list(r) for r in st["clodds_wald"]], "Logistic"))
    if st.get("exact_tests"):
        out.append(OdsTable("ExactTests", "Exact Conditional Analysis: Conditional Exact Tests", [
            Col("Label", "Exact", "char"), Col("Effect", type="char"), Col("Test", type="char"),
            Col("Statistic", fmt="d4"), Col("ExactPValue", "Exact p-Value", fmt="p"),
            Col("MidPValue", "Mid p-Value", fmt="p")], [list(r) for r in st["exact_tests"]], "Logistic"))
    return out
