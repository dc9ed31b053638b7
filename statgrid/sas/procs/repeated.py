"""PROC GENMOD's REPEATED statement (GEE), read as SAS writes it and fitted by statgrid.procs.gee:

    REPEATED SUBJECT=subject-effect </ TYPE=IND|EXCH|CS|AR(1)|UN CORRW WITHINSUBJECT=var MAXITER=n
                                       CONVERGE=x MODELSE SORTED PRINTMLE>;

The subject effect is a variable, a crossing a*b or a nesting b(a) of CLASS variables (their value
combinations are the clusters). CORR= is TYPE='s other name, WITHIN= WITHINSUBJECT='s, MAXIT= MAXITER='s.
SORTED and PRINTMLE are accepted (statgrid never needs the data sorted and always prints the initial
estimates). Another option of SAS's REPEATED statement is an ERROR naming it.
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM
from statgrid.sas.procs.modeltables import parameter_level

ALIASES = {"CORR": "TYPE", "WITHIN": "WITHINSUBJECT", "MAXIT": "MAXITER", "SUBJECT": "SUBJECT", "SUB": "SUBJECT"}
FLAGS = {"CORRW", "MODELSE", "SORTED", "PRINTMLE"}
VALUES = {"TYPE", "WITHINSUBJECT", "MAXITER", "CONVERGE"}
NOT_BUILT = {"ALPHAINIT", "CORRB", "COVB", "ECORRB", "ECOVB", "INITIAL", "INTERCEPT", "LOGOR", "MCORRB", "MCOVB",
             "SUBCLUSTER", "V6CORR", "YPAIR", "ZDATA", "ZROW", "ZPAIR", "CONVERGEPARM", "MAXITERPARM"}
VALID = "SUBJECT=, TYPE=, CORRW, WITHINSUBJECT=, MAXITER=, CONVERGE=, MODELSE, SORTED, PRINTMLE"


def parse(c, stmt) -> dict[str, Any]:
    """The REPEATED statement after its keyword → {"SUBJECT": [vars], "TYPE": "EXCH", "CORRW": True, …}."""
    out: dict[str, Any] = {}
    while not c.at_end():
        if c.accept("/"):
            continue
        t = c.next()
        if t.kind != NAME:
            raise c.error("Syntax error in the REPEATED statement of PROC GENMOD", VALID, t)
        name = ALIASES.get(t.upper, t.upper)
        if name in NOT_BUILT:
            raise SasError(f"The {t.upper} option of the REPEATED statement of PROC GENMOD is not supported by "
                           "statgrid yet", t.line, t.col, t.text, VALID, stmt.source)
        if name == "SUBJECT":
            c.expect("=", expected="= after SUBJECT")
            out["SUBJECT"] = _effect_variables(c)
        elif name in FLAGS:
            out[name] = True
        elif name in VALUES:
            c.expect("=", expected=f"= after {name}")
            out[name] = _value(c)
        else:
            raise SasError(f"The option or parameter {t.text.upper()} is not recognized in the REPEATED statement "
                           "of PROC GENMOD", t.line, t.col, t.text, VALID, stmt.source)
    if "SUBJECT" not in out:
        t = stmt.tokens[0]
        raise SasError("The REPEATED statement of PROC GENMOD needs SUBJECT=", t.line, t.col, t.text,
                       "SUBJECT=subject-effect", stmt.source)
    return out


def _effect_variables(c) -> list[str]:
    """`id`, `a*b`, `b(a)`: the variables of the subject effect, in order, each once."""
    names: list[str] = []
    while not c.at_end() and not c.at("/"):
        t = c.next()
        if t.kind == NAME:
            if t.text.lower() not in {n.lower() for n in names}:
                names.append(t.text)
            if not c.at("*", "(", ")"):
                break
        elif t.text not in ("*", "(", ")"):
            raise c.error("Syntax error in SUBJECT=", "a CLASS variable, a*b or b(a)", t)
    if not names:
        raise c.error("Syntax error in SUBJECT=", "a CLASS variable")
    while c.accept(")"):
        pass
    return names


def _value(c) -> str:
    t = c.next()
    text = str(t.value) if t.kind == NUM else t.text
    if c.at("(") and t.kind == NAME:                      # AR(1), MDEP(2)
        c.next()
        inner = []
        while not c.accept(")"):
            if c.at_end():
                raise c.error("Syntax error in the REPEATED statement", ")")
            inner.append(c.next().text)
        text += "(" + "".join(inner) + ")"
    return text


def fit(program, data: str, dep: str, effects: str, classes, mopts: dict, opts, rep: dict, printing: bool,
        contrasts=(), estimates=(), data_label: str | None = None, ref: dict | None = None):
    """GENMOD with a REPEATED statement: the GEE fit (statgrid.procs.gee) of one BY group's rows, with MODEL /
    TYPE3 <WALD> and the CONTRAST and ESTIMATE statements (genmodstatements.py) as GEE's tests."""
    from statgrid.procs.gee import gee
    trials = None
    if "/" in dep:
        dep, trials = [x.strip() for x in dep.split("/", 1)]
    fn = getattr(gee, "__wrapped__", gee)
    return fn(program.session, data, f"{dep} = {effects}", subject=rep["SUBJECT"], type=str(rep.get("TYPE", "IND")),
       within=rep.get("WITHINSUBJECT"), dist=str(mopts.get("DIST", mopts.get("D", "normal"))).lower(),
       link=str(mopts["LINK"]).lower() if "LINK" in mopts else None, class_=classes, trials=trials,
       offset=mopts.get("OFFSET"), noint=bool(mopts.get("NOINT")),
       scale=str(mopts["SCALE"]).lower() if "SCALE" in mopts else None,
       glm_maxiter=int(float(mopts.get("MAXITER", 50))), maxiter=int(float(rep.get("MAXITER", 50))),
       converge=float(rep.get("CONVERGE", 1e-4)), descending=bool(opts.get("DESCENDING")),
       corrw=bool(rep.get("CORRW")), modelse=bool(rep.get("MODELSE")), print=printing,
       type3=bool(mopts.get("TYPE3")), type3_wald=bool(mopts.get("WALD")), contrasts=contrasts, estimates=estimates,
       data_label=data_label, ref=ref)


def tables(result, classes) -> list:
    """GEE's ODS tables, for ODS OUTPUT (the listing is the GEE listing's own): GEEFitCriteria (GEE Fit Criteria:
    Criterion, Value), GEEEmpPEst (Analysis Of GEE Parameter Estimates, empirical standard errors: Parm, Level1,
    Estimate, StdErr, LowerCL, UpperCL, Z, ProbZ), and those asked for — Type3 (Score or Wald Statistics For
    Type 3 GEE Analysis: Source, DF, ChiSq, ProbChiSq), Contrasts (Contrast Results for GEE Analysis: Contrast,
    DF, ChiSq, ProbChiSq, Type) and Estimates (Contrast Estimate Results, as genmodstatements.tables)."""
    from statgrid.procs import gee_listing
    from statgrid.sas.ods import OdsColumn as Col, OdsTable
    from statgrid.sas.procs import genmodstatements
    st = result.stats
    out = []
    if st.get("qic"):
        out.append(OdsTable("GEEFitCriteria", "GEE Fit Criteria", [Col("Criterion", type="char"),
                            Col("Value", fmt="d4")], [["QIC", st["qic"]["qic"]], ["QICu", st["qic"]["qicu"]]],
                            "Genmod"))
    rows = []
    for r in result.rows:
        head, level = parameter_level(r[0])
        rows.append([head, level if classes else "", *r[1:]])
    cols = [Col("Parm", "Parameter", "char"), Col("Level1", "", "char"), Col("Estimate", fmt="d4"),
            Col("StdErr", "Standard Error", fmt="d4"), Col("LowerCL", "95% Confidence Limits", fmt="d4"),
            Col("UpperCL", "", fmt="d4"), Col("Z", fmt="d2"), Col("ProbZ", "Pr > |Z|", fmt="p")]
    out.append(OdsTable("GEEEmpPEst", "Analysis Of GEE Parameter Estimates", cols, rows, "Genmod"))
    chi = [Col("DF", fmt="int"), Col("ChiSq", "Chi-Square", fmt="d2"), Col("ProbChiSq", "Pr > ChiSq", fmt="p")]
    if st.get("type3"):
        out.append(OdsTable("Type3", gee_listing.type3_title(st), [Col("Source", type="char"), *chi], st["type3"],
                            "Genmod"))
    if st.get("contrasts"):
        out.append(OdsTable("Contrasts", "Contrast Results for GEE Analysis",
                            [Col("Contrast", type="char"), *chi, Col("Type", type="char")], st["contrasts"], "Genmod"))
    if st.get("estimates"):
        out += [t for t in genmodstatements.tables(result) if t.name == "Estimates"]
    return out
