"""PROC REG's selection tables as SAS prints them (issue 26/27): the steps' Number Vars In, Partial R-Square,
Model R-Square, C(p), F Value (Summary of Backward Elimination / Stepwise Selection) and SELECTION=RSQUARE / CP
with BEST=, START=, STOP= and the CP / ADJRSQ column options. Expected figures from numpy's least squares on the
data read back (not the procedure's QR updates)."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from tests.unit.sas.standins import rows, run_sas

HALD = ("data hald; input X1 X2 X3 X4 Y; datalines;\n" + (Path(__file__).parent / "worked" / "hald.txt").read_text()
        + ";\n")
NAMES = ("X1", "X2", "X3", "X4")


def run_ok(session, text: str) -> str:
    code, log, lst = run_sas(session, HALD + text)
    assert code == 0, log
    return lst


def _sse(session, names) -> tuple[float, float, int]:
    """(SSE, SST, n) of Y on an intercept and `names`, by numpy."""
    d = rows(session, "work.hald")
    y = np.array([r["Y"] for r in d])
    A = np.column_stack([np.ones(len(d))] + [[r[v] for r in d] for v in names])
    resid = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
    return float(resid @ resid), float((y - y.mean()) @ (y - y.mean())), len(d)


def test_backward_summary_columns(session):
    lst = run_ok(session, "ods output SelectionSummary=steps;\n"
                          "proc reg data=hald; model Y = X1 X2 X3 X4 / selection=backward; run;")
    steps = rows(session, "work.steps")
    sse_full, sst, n = _sse(session, NAMES)
    mse_full = sse_full / (n - 5)
    current, prev = list(NAMES), sse_full
    assert steps and all(s["VarEntered"] == "" for s in steps)
    for k, s in enumerate(steps, 1):
        current.remove(s["VarRemoved"])
        sse, _, _ = _sse(session, current)
        assert s["Step"] == k and s["NumInModel"] == len(current)
        assert s["PartialRSquare"] == pytest.approx((sse - prev) / sst, rel=1e-9)
        assert s["ModelRSquare"] == pytest.approx(1 - sse / sst, rel=1e-9)
        assert s["Cp"] == pytest.approx(sse / mse_full - (n - 2 * (len(current) + 1)), rel=1e-9)
        # the variable's F: its extra SS over the MSE of the model that still had it
        assert s["FValue"] == pytest.approx((sse - prev) / (prev / (n - len(current) - 2)), rel=1e-9)
        prev = sse
    # the listing: SAS's title and column headings (SAS/STAT REG, "Summary of Backward Elimination")
    assert "Summary of Backward Elimination" in lst
    assert ("Step  Variable Entered  Variable Removed  Number Vars In  Partial R-Square  Model R-Square    C(p)  "
            "F Value  Pr > F") in lst


def test_rsquare_best_start_stop_and_adjrsq_column(session):
    run_ok(session, "ods output SubsetSelSummary=ss;\n"
                    "proc reg data=hald; model Y = X1 X2 X3 X4 / selection=rsquare best=1 start=2 stop=3 adjrsq; run;")
    got = rows(session, "work.ss")
    want = []
    for k in (2, 3):
        scored = []
        for c in itertools.combinations(NAMES, k):
            sse, sst, n = _sse(session, c)
            r2 = 1 - sse / sst
            scored.append((r2, 1 - (1 - r2) * (n - 1) / (n - k - 1), " ".join(c)))
        want.append(max(scored))
    assert [r["NumInModel"] for r in got] == [2, 3]
    assert [r["VarsInModel"] for r in got] == [w[2] for w in want]
    assert [r["RSquare"] for r in got] == pytest.approx([w[0] for w in want], rel=1e-9)
    assert [r["AdjRsq"] for r in got] == pytest.approx([w[1] for w in want], rel=1e-9)
    assert "Cp" not in got[0]


def test_cp_selection_lists_smallest_cp_first(session):
    run_ok(session, "ods output SubsetSelSummary=ss;\nproc reg data=hald; model Y = X1 X2 X3 X4 / selection=cp best=3; run;")
    got = rows(session, "work.ss")
    sse_full, sst, n = _sse(session, NAMES)
    cps = sorted((_sse(session, c)[0] / (sse_full / (n - 5)) - (n - 2 * (len(c) + 1)), " ".join(c))
                 for k in (1, 2, 3, 4) for c in itertools.combinations(NAMES, k))
    assert [r["VarsInModel"] for r in got] == [c[1] for c in cps[:3]]
    assert [r["Cp"] for r in got] == pytest.approx([c[0] for c in cps[:3]], rel=1e-9)
    assert list(got[0])[-3:] == ["Cp", "RSquare", "VarsInModel"]


@pytest.mark.parametrize("option", ["best=0", "best=1.5", "start=x"])
def test_bad_count_options_are_errors(session, option):
    code, log, _ = run_sas(session, HALD + f"proc reg data=hald; model Y = X1 X2 / selection=rsquare {option}; run;")
    assert code != 0
    assert f"ERROR: {option.split('=')[0].upper()}=" in log and "whole number of at least 1" in log
