"""PROC MIXED's RANDOM, REPEATED, PARMS and LSMEANS statements (SAS/STAT User's Guide, The MIXED
Procedure), read into the engine's arguments (procs/mixed.py: randoms=, repeated=, parms=, lsmeans=),
and the tables they add as SAS's ODS names them: LSMeans and Diffs.

    RANDOM effects </ SUBJECT=effect TYPE=VC|UN G GCORR SOLUTION V VCORR>;      several allowed
    REPEATED <effect> </ SUBJECT=effect TYPE=VC|CS|AR(1)|UN|SP(SPH)(coords)|SP(EXP)(coords) LOCAL R RCORR>;
    PARMS (value) (value) … </ HOLD=list NOITER>;                               in CovParms order
    LSMEANS effects </ DIFF>;
Display-only options (G, V, R, SOLUTION, …) are accepted; anything else is an ERROR naming it.
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NUM, STR
from statgrid.sas.ods import OdsColumn as Col, OdsTable

RANDOM_OPTIONS = {"SUBJECT", "SUB", "TYPE", "G", "GCORR", "GI", "SOLUTION", "S", "V", "VCORR", "CL"}
REPEATED_OPTIONS = {"SUBJECT", "SUB", "TYPE", "LOCAL", "R", "RCORR", "RI"}
DISPLAY_ONLY = {"G", "GCORR", "GI", "SOLUTION", "S", "V", "VCORR", "CL", "R", "RCORR", "RI"}


def _group(c) -> str:
    """'(' … ')' (nested parentheses kept) → the text inside, words separated by spaces."""
    depth, words = 1, []
    while depth:
        if c.at_end():
            t = c.tokens[-1]
            raise SasError("A parenthesis is not closed", t.line, t.col, t.text, ")")
        t = c.next()
        depth += (t.text == "(") - (t.text == ")")
        if depth:
            words.append(str(t.value) if t.kind == STR else t.text)
    return " ".join(words).replace("( ", "(").replace(" )", ")")


def _value(c) -> str:
    """An option's value: a name with any parenthesised parts (b(c), AR(1), SP(SPH)(x y))."""
    t = c.next()
    text = str(t.value) if t.kind == STR else t.text
    while not c.at_end() and c.accept("("):
        text += f"({_group(c)})"
    while not c.at_end() and c.at("*"):
        c.next()
        text += "*" + _value(c)
    return text


def _effects(c) -> str:
    words = []
    while not c.at_end() and not c.at("/"):
        t = c.next()
        words.append(f"({_group(c)})" if t.text == "(" else t.text)
    return " ".join(words).replace(" (", "(").replace(" * ", "*")


def _options(c, allowed: set[str], stmt: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not c.accept("/"):
        return out
    while not c.at_end():
        t = c.next()
        if t.upper not in allowed:
            raise SasError(f"The option {t.text} of the {stmt} statement is not supported by statgrid's PROC MIXED",
                           t.line, t.col, t.text, ", ".join(sorted(allowed)))
        out[t.upper] = _value(c) if c.accept("=") else True
    return out


def random(c) -> dict:
    effects = _effects(c)
    opts = _options(c, RANDOM_OPTIONS, "RANDOM")
    return {"effects": effects, "subject": opts.get("SUBJECT", opts.get("SUB")),
            "type": str(opts.get("TYPE", "VC")).lower()}


def repeated(c) -> dict:
    effect = _effects(c)
    opts = _options(c, REPEATED_OPTIONS, "REPEATED")
    return {"effect": effect or None, "subject": opts.get("SUBJECT", opts.get("SUB")),
            "type": str(opts.get("TYPE", "VC")).lower(), "local": bool(opts.get("LOCAL"))}


def parms(c) -> dict:
    """PARMS (v) (v) … </ HOLD=1,2 NOITER> → {'values': [...], 'hold': [...], 'noiter': bool}."""
    values = []
    while not c.at_end() and not c.at("/"):
        t = c.next()
        if t.text != "(":
            raise SasError("PARMS takes each covariance parameter's value in parentheses", t.line, t.col, t.text,
                           "PARMS (1.5) (0.8);")
        inside = [x for x in _group(c).replace(",", " ").split()]
        if len(inside) != 1:
            raise SasError("PARMS grids (several values for a parameter) are not built by statgrid; give one "
                           "value per parameter", t.line, t.col, " ".join(inside), "PARMS (1.5) (0.8);")
        try:
            values.append(float(inside[0]))
        except ValueError:
            raise SasError("A PARMS value is not a number", t.line, t.col, inside[0], "a number") from None
    out = {"values": values, "hold": [], "noiter": False}
    if c.accept("/"):
        while not c.at_end():
            t = c.next()
            if t.upper == "NOITER":
                out["noiter"] = True
            elif t.upper == "HOLD" and c.accept("="):
                while not c.at_end() and (c.peek().kind == NUM or c.at(",")):
                    v = c.next()
                    if v.kind == NUM:
                        out["hold"].append(int(float(v.value)))
            else:
                raise SasError(f"The option {t.text} of the PARMS statement is not supported by statgrid", t.line,
                               t.col, t.text, "HOLD=, NOITER")
    return out


def lsmeans(c) -> tuple[list[str], bool]:
    effects = _effects(c).split()
    diff = False
    if c.accept("/"):
        while not c.at_end():
            t = c.next()
            if t.upper in ("DIFF", "PDIFF"):
                diff = True
            elif t.upper in ("CL", "E"):
                continue
            else:
                raise SasError(f"The LSMEANS option {t.text} is not supported by statgrid's PROC MIXED", t.line,
                               t.col, t.text, "DIFF")
    return effects, diff


def engine_args(spec: dict) -> dict:
    """The MIXED statements of the step → procs.mixed arguments."""
    rep = spec.get("mixed_repeated")
    parms_ = spec.get("mixed_parms")
    lsm = spec.get("mixed_lsmeans") or []
    return {"randoms": spec.get("mixed_randoms") or None,
            "repeated": (rep["effect"] or True) if rep else None,
            "repeated_subject": rep["subject"] if rep else None,
            "type": rep["type"] if rep else "vc", "local": rep["local"] if rep else False,
            "parms": parms_["values"] if parms_ else None, "hold": parms_["hold"] if parms_ else (),
            "noiter": parms_["noiter"] if parms_ else False,
            "lsmeans": " ".join(e for effs, _ in lsm for e in effs) or None,
            "lsmeans_diff": any(d for _, d in lsm),
            "contrasts": spec.get("contrasts") or None, "estimates": spec.get("estimates") or None}


def tables(result: Any) -> list[OdsTable]:
    """Contrasts, Estimates, LSMeans and Diffs."""
    st = result.stats
    out = []
    if st.get("contrasts"):
        out.append(OdsTable("Contrasts", "Contrasts", [
            Col("Label", type="char"), Col("NumDF", "Num DF", fmt="int"), Col("DenDF", "Den DF", fmt="best"),
            Col("FValue", "F Value", fmt="d2"), Col("ProbF", "Pr > F", fmt="p")],
            [[r[k] for k in ("Label", "NumDF", "DenDF", "FValue", "ProbF")] for r in st["contrasts"]], "Mixed"))
    if st.get("estimates"):
        keys = ["Label", "Estimate", "StdErr", "DF", "tValue", "Probt"] + (
            ["Alpha", "Lower", "Upper"] if any("Alpha" in r for r in st["estimates"]) else [])
        cols = {"Label": Col("Label", type="char"), "Estimate": Col("Estimate", fmt="d4"),
                "StdErr": Col("StdErr", "Standard Error", fmt="d4"), "DF": Col("DF", fmt="best"),
                "tValue": Col("tValue", "t Value", fmt="d2"), "Probt": Col("Probt", "Pr > |t|", fmt="p"),
                "Alpha": Col("Alpha", fmt="d2"), "Lower": Col("Lower", fmt="d4"), "Upper": Col("Upper", fmt="d4")}
        out.append(OdsTable("Estimates", "Estimates", [cols[k] for k in keys],
                            [[r.get(k) for k in keys] for r in st["estimates"]], "Mixed"))
    stats_cols = [Col("Estimate", fmt="d4"), Col("StdErr", "Standard Error", fmt="d4"), Col("DF", fmt="best"),
                  Col("tValue", "t Value", fmt="d2"), Col("Probt", "Pr > |t|", fmt="p")]
    for name, title, rows in (("LSMeans", "Least Squares Means", st.get("lsmeans")),
                              ("Diffs", "Differences of Least Squares Means", st.get("diffs"))):
        if not rows:
            continue
        keys = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in
                ("Estimate", "StdErr", "DF", "tValue", "Probt")]
        out.append(OdsTable(name, title, [Col(k, type="char") for k in keys] + stats_cols,
                            [[r.get(k, "") for k in keys] + [r[k] for k in ("Estimate", "StdErr", "DF", "tValue",
                                                                           "Probt")] for r in rows], "Mixed"))
    return out
