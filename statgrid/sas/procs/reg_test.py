"""PROC REG's TEST statement (SAS/STAT REG, TEST statement): linear hypotheses on the parameters of the MODEL
before it,

    <label:> TEST equation <, equation …>;      equation: linear terms = linear terms, or terms alone (= 0),
                                                 a term: <number *> variable | number (INTERCEPT names the intercept)

F = (Lb − c)'(L (X'X)⁻¹ L')⁻¹(Lb − c) / q over the MSE, on q (the rank of L) and the error degrees of freedom;
table TestANOVA ("Test label Results for Dependent Variable y": Numerator and Denominator rows, DF, Mean Square,
F Value, Pr > F).
"""
from __future__ import annotations

import numpy as np

from statgrid.errors import StatgridError
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM
from statgrid.sas.ods import OdsColumn as Col


def parse(c, label: str | None) -> dict:
    """The equations after TEST: {"label", "rows": [({variable: coefficient}, constant)]}."""
    rows, side, coefs, const = [], 1.0, {}, 0.0
    sign, factor, pending = 1.0, None, False

    def flush_number():
        nonlocal const, factor, pending
        if factor is not None:
            const -= side * sign * factor          # a number term: moved to the right-hand side
        factor, pending = None, False

    while True:
        t = c.peek()
        if c.at_end() or t.text == ",":
            flush_number()
            if not coefs:
                raise SasError("An equation of the TEST statement names no variable", t.line, t.col, t.text,
                               "TEST x1 = 0, x2 = x3")
            rows.append((coefs, const))
            if c.at_end():
                break
            c.next()
            side, coefs, const, sign = 1.0, {}, 0.0, 1.0
            continue
        c.next()
        if t.text in ("+", "-"):
            flush_number()
            sign = -1.0 if t.text == "-" else 1.0
        elif t.text == "=":
            flush_number()
            side, sign = -1.0, 1.0
        elif t.kind == NUM:
            factor, pending = float(t.value), True
        elif t.text == "*" and pending:
            pending = False
        elif t.kind == NAME:
            k = factor if factor is not None else 1.0
            name = "Intercept" if t.upper == "INTERCEPT" else t.text
            coefs[name] = coefs.get(name, 0.0) + side * sign * k
            factor, pending, sign = None, False, 1.0
        else:
            raise SasError("Syntax error in the TEST statement", t.line, t.col, t.text,
                           "linear equations such as x1 = 0, 2*x2 - x3 = 1")
    return {"label": label, "rows": rows}


def result(test: dict, fit, number: int) -> tuple[str, list[list]]:
    """(title, rows [Source, DF, MS, F, p]) of one TEST on a REG fit (procs/regression.py's ResultTable)."""
    from scipy.stats import f as fdist
    st = fit.stats
    names = st.get("xtx_names") or []
    upper = {n.upper(): i for i, n in enumerate(names)}
    est = {str(r[0]).upper(): float(r[2]) for r in fit.rows}
    L = np.zeros((len(test["rows"]), len(names)))
    c = np.zeros(len(test["rows"]))
    for i, (coefs, const) in enumerate(test["rows"]):
        for v, k in coefs.items():
            if v.upper() not in upper:
                raise StatgridError(f"TEST: {v} is not a parameter of the model of {st.get('dependent')} (its "
                                    f"parameters: {', '.join(names)}).")
            L[i, upper[v.upper()]] += k
        c[i] = const
    b = np.array([est.get(n.upper(), 0.0) for n in names])
    d = L @ b - c
    m = L @ st["xtx_inv"] @ L.T
    q = int(np.linalg.matrix_rank(m))
    ss = float(d @ np.linalg.pinv(m) @ d)
    mse, dfe = st["mse"], st["df_error"]
    fval = ss / q / mse if q and mse > 0 else float("nan")
    p = float(fdist.sf(fval, q, dfe)) if q and mse > 0 else float("nan")
    label = test["label"] or str(number)
    title = f"Test {label} Results for Dependent Variable {st.get('dependent')}"
    return title, [["Numerator", q, ss / q if q else float("nan"), fval, p],
                   ["Denominator", dfe, mse, None, None]]


COLUMNS = [Col("Source", type="char"), Col("DF", fmt="int"), Col("MS", "Mean Square", fmt="d5"),
           Col("FValue", "F Value", fmt="d2"), Col("ProbF", "Pr > F", fmt="p")]
