"""PROC GLM's CONTRAST, ESTIMATE and TEST statements (SAS/STAT User's Guide, The GLM Procedure), read into
the engine's arguments (procs/glm.py: contrasts=, estimates=, tests=), and their tables as SAS's ODS names
them: Contrasts, Estimates, AltErrTests (TEST H= E=), and ModelANOVA of Type IV (MODEL / SS4).

    CONTRAST 'label' effect values <… effect values> <, effect values …> </ options>;   rows split by commas
    ESTIMATE 'label' effect values <… effect values> </ DIVISOR=n>;
    TEST H=effects E=effect </ HTYPE=n ETYPE=n>;
A row that is not estimable has missing values (SAS prints 'Non-est').
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM, OP, STR
from statgrid.sas.ods import OdsColumn as Col, OdsTable

CONTRAST_OPTIONS = {"E", "SINGULAR", "ETYPE", "E1", "E2", "E3", "E4"}
ESTIMATE_OPTIONS = {"DIVISOR", "E", "SINGULAR"}


def _label(c, kw: str) -> str:
    t = c.next()
    if t.kind != STR:
        raise SasError(f"{kw} needs a quoted label first", t.line, t.col, t.text, f"{kw} 'label' effect values")
    return str(t.value)


def _effect(c) -> str:
    """An effect name as written: a, a*b, b(a)."""
    parts = [c.next().text]
    while not c.at_end() and (c.at("*") or c.at("(") or c.at(")")):
        parts.append(c.next().text)
        if parts[-1] in ("*", "(") and not c.at_end():
            parts.append(c.next().text)
    return "".join(parts)


def _rows(c, kw: str, allowed: set[str]) -> tuple[list[dict], dict]:
    """effect values … <, effect values …> </ options> → rows of {effect: [values]}, options."""
    rows: list[dict] = [{}]
    current = None
    while not c.at_end() and not c.at("/"):
        t = c.peek()
        if t.kind == OP and t.text == ",":
            c.next()
            rows.append({})
            current = None
            continue
        if t.kind == NUM or (t.kind == OP and t.text in ("-", "+")):
            sign = -1.0 if c.accept("-") else 1.0
            c.accept("+")
            v = c.next()
            if v.kind != NUM or current is None:
                raise SasError(f"{kw}: a coefficient must follow an effect name", v.line, v.col, v.text,
                               "effect values, e.g. a 1 -1 0")
            rows[-1].setdefault(current, []).append(sign * float(v.value))
            continue
        if t.kind == OP and t.text == "|":
            raise SasError(f"Random-effect coefficients (after |) in {kw} are not supported by statgrid yet", t.line,
                           t.col, t.text, "fixed-effect coefficients only (the broad inference space)")
        if t.kind != NAME:
            raise SasError(f"Syntax error in {kw}", t.line, t.col, t.text, "effect values")
        current = _effect(c)
        rows[-1].setdefault(current, [])
    opts: dict[str, Any] = {}
    if c.accept("/"):
        while not c.at_end():
            t = c.next()
            if t.kind != NAME or t.upper not in allowed:
                raise SasError(f"The option {t.text} is not recognized in the {kw} statement", t.line, t.col,
                               t.text, ", ".join(sorted(allowed)))
            opts[t.upper] = float(c.next().value) if c.accept("=") else True
    if not any(rows):
        raise SasError(f"{kw} needs at least one effect and its coefficients", 0, 0, kw, "effect values")
    return rows, opts


def contrast(c) -> tuple[str, list[dict]]:
    label = _label(c, "CONTRAST")
    rows, _ = _rows(c, "CONTRAST", CONTRAST_OPTIONS)
    return label, rows


def estimate(c) -> tuple[str, dict, float]:
    label, row, divisor, _ = _estimate(c, ESTIMATE_OPTIONS, " here")
    return label, row, divisor


def _estimate(c, allowed: set[str], where: str) -> tuple[str, dict, float, dict]:
    label = _label(c, "ESTIMATE")
    rows, opts = _rows(c, "ESTIMATE", allowed)
    if len(rows) > 1:
        raise SasError(f"ESTIMATE takes one row of coefficients (no commas){where}", 0, 0, ",", "one row")
    divisor = float(opts.get("DIVISOR", 1.0))
    if divisor == 0:
        raise SasError("DIVISOR= must not be 0", 0, 0, "DIVISOR=0", "a non-zero divisor")
    return label, rows[0], divisor, opts


def test(c) -> tuple[list[str], str, dict]:
    """TEST H=effects E=effect </ HTYPE=n ETYPE=n>: (H effects, E effect, {"htype": "4", "etype": "1"} as given)."""
    h, e = [], None
    while not c.at_end() and not c.at("/"):
        t = c.next()
        if t.kind == NAME and t.upper in ("H", "E") and c.accept("="):
            target = h if t.upper == "H" else None
            while not c.at_end() and not c.at("/") and not (c.peek().kind == NAME and c.peek().upper in ("H", "E")
                                                             and _next_is_eq(c)):
                name = _effect(c)
                if target is None:
                    if e is not None:
                        raise SasError("TEST takes one E= effect", t.line, t.col, name, "E=effect")
                    e = name
                else:
                    target.append(name)
        else:
            raise SasError("Syntax error in TEST", t.line, t.col, t.text, "TEST H=effects E=effect")
    types: dict[str, str] = {}
    if c.accept("/"):
        while not c.at_end():
            t = c.next()
            if t.kind == NAME and t.upper in ("HTYPE", "ETYPE") and c.accept("="):
                v = c.next()
                if v.text not in ("1", "2", "3", "4"):
                    raise SasError(f"{t.upper}={v.text} in TEST is not a type of sum of squares", v.line, v.col,
                                   v.text, f"{t.upper}=1, 2, 3 or 4")
                types[t.upper.lower()] = v.text
            else:
                raise SasError(f"The option {t.text} is not recognized in the TEST statement of PROC GLM", t.line,
                               t.col, t.text, "HTYPE=n ETYPE=n")
    if not h or e is None:
        raise SasError("TEST needs H=effects and E=effect", 0, 0, "TEST", "TEST H=a b E=a*b")
    return h, e, types


def _next_is_eq(c) -> bool:
    toks, i = c.tokens, c.i
    return i + 1 < len(toks) and toks[i + 1].text == "="


def tables(result: Any) -> list[OdsTable]:
    """Type IV ModelANOVA, Contrasts, Estimates and AltErrTests of each response."""
    out = []
    dep = Col("Dependent", type="char", hidden=True)
    for y in dict.fromkeys(row[0] for row in result.rows):
        st = result.stats[y]

        def t(name, title, cols, rows):
            return OdsTable(name, title, [dep, *cols], [[y, *r] for r in rows], "Glm")
        if st.get("type4"):
            out.append(OdsTable("ModelANOVA", "", [
                dep, Col("HypothesisType", fmt="int", hidden=True), Col("Source", type="char"), Col("DF", fmt="int"),
                Col("SS", "Type IV SS", fmt="d7"), Col("MS", "Mean Square", fmt="d7"),
                Col("FValue", "F Value", fmt="d2"), Col("ProbF", "Pr > F", fmt="p")],
                [[y, 4, *r] for r in st["type4"]], "Glm"))
        if st.get("contrasts"):
            out.append(t("Contrasts", "", [
                Col("Contrast", type="char"), Col("DF", fmt="int"), Col("SS", "Contrast SS", fmt="d7"),
                Col("MS", "Mean Square", fmt="d7"), Col("FValue", "F Value", fmt="d2"),
                Col("ProbF", "Pr > F", fmt="p")], st["contrasts"]))
        if st.get("estimates"):
            out.append(t("Estimates", "", [
                Col("Parameter", type="char"), Col("Estimate", fmt="d8"), Col("StdErr", "Standard Error", fmt="d8"),
                Col("tValue", "t Value", fmt="d2"), Col("Probt", "Pr > |t|", fmt="p")],
                st["estimates"]))
        for test_ in st.get("tests") or []:
            out.append(t("AltErrTests", test_["title"], [
                Col("Source", type="char"), Col("DF", fmt="int"), Col("SS", test_["label"], fmt="d7"),
                Col("MS", "Mean Square", fmt="d7"), Col("FValue", "F Value", fmt="d2"),
                Col("ProbF", "Pr > F", fmt="p")], test_["rows"]))
    return out

