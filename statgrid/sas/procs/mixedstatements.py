"""PROC MIXED's RANDOM, REPEATED, PARMS and LSMEANS statements (SAS/STAT User's Guide, The MIXED
Procedure), read into the engine's arguments (procs/mixed.py: randoms=, repeated=, parms=, lsmeans=),
and the tables they add as SAS's ODS names them: LSMeans and Diffs.

    RANDOM effects </ SUBJECT=effect TYPE=VC|UN G GCORR SOLUTION V VCORR>;      several allowed
    REPEATED <effect> </ SUBJECT=effect TYPE=VC|CS|AR(1)|UN|SP(SPH)(coords)|SP(EXP)(coords) LOCAL R RCORR>;
    PARMS (value) (value) … </ HOLD=list NOITER>;                               in CovParms order
    LSMEANS effects </ DIFF>;
    CONTRAST 'label' <fixed-effect values …> <| random-effect values …>, … </ DF= CHISQ SUBJECT coeffs E SINGULAR=>;
    ESTIMATE 'label' <fixed-effect values …> <| random-effect values …> </ DIVISOR= DF= CL ALPHA= SUBJECT coeffs>;
Display-only options (G, V, R, SOLUTION, …) are accepted; anything else is an ERROR naming it. A non-estimable
ESTIMATE, CONTRAST or LS-mean is missing in the data set and shows "Non-est" in the listing (listing_text).
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM, OP, STR
from statgrid.sas.ods import OdsColumn as Col, OdsTable
from statgrid.sas.odstable import render

RANDOM_OPTIONS = {"SUBJECT", "SUB", "TYPE", "G", "GCORR", "GI", "SOLUTION", "S", "V", "VCORR", "CL"}
REPEATED_OPTIONS = {"SUBJECT", "SUB", "TYPE", "LOCAL", "R", "RCORR", "RI"}
DISPLAY_ONLY = {"G", "GCORR", "GI", "SOLUTION", "S", "V", "VCORR", "CL", "R", "RCORR", "RI"}
CONTRAST_OPTIONS = {"E", "SINGULAR", "DF", "CHISQ", "SUBJECT"}
ESTIMATE_OPTIONS = {"DIVISOR", "E", "SINGULAR", "DF", "CL", "ALPHA", "SUBJECT"}
NON_EST = "Non-est"


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


# ---------------------------------------------------------------------------- CONTRAST, ESTIMATE
def _coefficient(c, kw: str, current: str | None) -> float:
    sign = -1.0 if c.accept("-") else 1.0
    c.accept("+")
    v = c.next()
    if v.kind != NUM or current is None:
        raise SasError(f"{kw}: a coefficient must follow an effect name", v.line, v.col, v.text,
                       "effect values, e.g. a 1 -1 0 | intercept 1")
    return sign * float(v.value)


def _contrast_rows(c, kw: str, allowed: set[str]) -> tuple[list[dict], list[dict], dict]:
    """fixed-effect values <| random-effect values> <, …> </ options> → fixed rows, random rows, options
    (SUBJECT: a list of coefficients; DF=, ALPHA=, DIVISOR=: numbers; the rest flags)."""
    from statgrid.sas.procs.glmstatements import _effect
    fixed: list[dict] = [{}]
    rand: list[dict] = [{}]
    side, current = fixed, None
    while not c.at_end() and not c.at("/"):
        t = c.peek()
        if t.kind == OP and t.text == ",":
            c.next()
            fixed.append({})
            rand.append({})
            side, current = fixed, None
        elif t.kind == OP and t.text == "|":
            c.next()
            if side is rand:
                raise SasError(f"{kw}: one | per row", t.line, t.col, t.text, "fixed part | random part")
            side, current = rand, None
        elif t.kind == NUM or (t.kind == OP and t.text in ("-", "+")):
            side[-1][current].append(_coefficient(c, kw, current))
        elif t.kind == NAME:
            current = _effect(c)
            side[-1].setdefault(current, [])
        else:
            raise SasError(f"Syntax error in {kw}", t.line, t.col, t.text, "effect values <| random-effect values>")
    opts: dict[str, Any] = {}
    if c.accept("/"):
        while not c.at_end():
            t = c.next()
            if t.kind != NAME or t.upper not in allowed:
                raise SasError(f"The option {t.text} is not recognized in the {kw} statement of PROC MIXED", t.line,
                               t.col, t.text, ", ".join(sorted(allowed)))
            if t.upper == "SUBJECT":
                opts["SUBJECT"] = []
                while not c.at_end() and (c.peek().kind == NUM or c.at("-") or c.at("+")):
                    opts["SUBJECT"].append(_coefficient(c, kw, "SUBJECT"))
                if not opts["SUBJECT"]:
                    raise SasError(f"{kw}: SUBJECT needs the subjects' coefficients", t.line, t.col, t.text,
                                   "SUBJECT 1 -1")
            elif c.accept("="):
                v = c.next()
                try:
                    opts[t.upper] = float(v.value)
                except (TypeError, ValueError):
                    raise SasError(f"{kw}: {t.upper}= needs a number", v.line, v.col, v.text, "a number") from None
            else:
                opts[t.upper] = True
    if not any(fixed) and not any(rand):
        raise SasError(f"{kw} needs at least one effect and its coefficients", 0, 0, kw, "effect values")
    return fixed, rand, opts


def contrast(c) -> tuple[str, list[dict], dict]:
    """CONTRAST → (label, fixed rows, options with RANDOM: the random rows when any is given)."""
    from statgrid.sas.procs.glmstatements import _label
    label = _label(c, "CONTRAST")
    fixed, rand, opts = _contrast_rows(c, "CONTRAST", CONTRAST_OPTIONS)
    if any(rand):
        opts["RANDOM"] = rand
    return label, fixed, opts


def estimate(c) -> tuple[str, dict, float, dict]:
    """ESTIMATE → (label, fixed row, divisor, options with RANDOM: the random row when given)."""
    from statgrid.sas.procs.glmstatements import _label
    t0 = c.peek()
    label = _label(c, "ESTIMATE")
    fixed, rand, opts = _contrast_rows(c, "ESTIMATE", ESTIMATE_OPTIONS)
    if len(fixed) > 1:
        raise SasError("ESTIMATE takes one row of coefficients (no commas) in PROC MIXED", t0.line, t0.col, ",",
                       "one row")
    divisor = float(opts.get("DIVISOR", 1.0))
    if divisor == 0:
        raise SasError("DIVISOR= must not be 0", t0.line, t0.col, "DIVISOR=0", "a non-zero divisor")
    if rand[0]:
        opts["RANDOM"] = rand[0]
    return label, fixed[0], divisor, opts


def listing_text(table: OdsTable) -> list[str] | None:
    """The listing lines of a MIXED table with a non-estimable row ("Non-est" in its Estimate or F Value column,
    the rest blank, as SAS prints it), or None when no row is (the table's usual rendering)."""
    if table.name not in ("Estimates", "Contrasts", "LSMeans", "Diffs"):
        return None
    names = [col.name for col in table.columns]
    target = names.index("Estimate" if "Estimate" in names else "FValue")
    probe = [k for k in ("StdErr", "DenDF") if k in names]
    rows = [list(r) for r in table.rows]
    hit = False
    for r in rows:
        if r[target] is None and all(r[names.index(k)] is None for k in probe):
            r[target] = NON_EST
            hit = True
    if not hit:
        return None
    shown = OdsTable(table.name, table.title, table.columns, rows, table.proc, table.path, table.by,
                     table.headings, table.footer)
    return render(shown)
