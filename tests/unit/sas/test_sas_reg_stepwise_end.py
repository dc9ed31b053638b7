"""PROC REG SELECTION=STEPWISE ends "when the variable to be added to the model is the one just deleted from it"
(SAS/STAT User's Guide, REG, "Model-Selection Methods"): with SLE above a variable's p-value and SLS below it,
the variable enters, leaves, and the selection stops — it used to enter and leave again before a cycle check
ended it. The p-value is computed here by scipy, apart from statgrid."""
from __future__ import annotations

import re

from scipy.stats import linregress

from tests.unit.sas.standins import run_sas

X = list(range(1, 11))
Y = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]


def test_stepwise_stops_when_the_variable_to_enter_was_just_removed(session):
    p = linregress(X, Y).pvalue
    assert 0.3 < p <= 0.5                      # enters at SLE=.5, cannot stay at SLS=.3
    rows = "\n".join(f"{x} {y}" for x, y in zip(X, Y))
    code, log, lst = run_sas(session, f"""data d; input x y; datalines;
{rows}
;
proc reg data=d; model y = x / selection=stepwise sle=.5 sls=.3; run; quit;
""")
    assert code == 0, log
    summary = lst[lst.index("Summary of Stepwise Selection"):]
    steps = [ln.split() for ln in summary.split("\n") if re.match(r"\s+\d+\s+x\b", ln)]
    assert [s[:2] for s in steps] == [["1", "x"], ["2", "x"]]
    assert all(abs(float(s[-1]) - p) < 5e-5 for s in steps)      # the listing's 4 decimals
