"""PROC REG's SELECTION=ADJRSQ subset table and COLLIN's Collinearity Diagnostics (SAS/STAT REG: "Model-Selection
Methods", "Collinearity Diagnostics"), through ODS OUTPUT; expected figures from numpy on the data read back:
every subset's R-square by least squares, the diagnostics from the eigen-decomposition of X'X with unit-length
columns (not the SVD of R the procedure uses)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from tests.unit.sas.standins import rows, run_sas


DATA = """data d; do i = 1 to 60; x1 = mod(i * 7, 13) / 3; x2 = mod(i * 5, 11) - 4; x3 = x1 + mod(i, 4) / 5;
  y = 1 + 2 * x1 - 0.7 * x2 + mod(i * 3, 7) / 2; output; end; drop i; run;
"""


def run(session, text):
    code, log, _ = run_sas(session, DATA + text)
    return code, log


def _xy(session):
    d = rows(session, "work.d")
    X = np.array([[r["x1"], r["x2"], r["x3"]] for r in d])
    return X, np.array([r["y"] for r in d])


def test_adjrsq_lists_every_subset_best_first(session):
    code, log = run(session, "ods output SubsetSelSummary=ss;\nproc reg data=d; model y = x1 x2 x3 / selection=adjrsq; run;")
    assert code == 0, log
    X, y = _xy(session)
    n, want = len(y), []
    for k in (1, 2, 3):
        for c in itertools.combinations(range(3), k):
            A = np.column_stack([np.ones(n), X[:, c]])
            resid = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
            r2 = 1 - resid @ resid / ((y - y.mean()) @ (y - y.mean()))
            want.append((1 - (1 - r2) * (n - 1) / (n - k - 1), r2, k, " ".join(f"x{j + 1}" for j in c)))
    want.sort(key=lambda w: (-w[0], w[2]))
    got = rows(session, "work.ss")
    assert [r["VarsInModel"] for r in got] == [w[3] for w in want]
    assert [r["NumInModel"] for r in got] == [w[2] for w in want]
    assert [r["AdjRsq"] for r in got] == pytest.approx([w[0] for w in want], rel=1e-9)
    assert [r["RSquare"] for r in got] == pytest.approx([w[1] for w in want], rel=1e-9)


def test_collin_eigenvalues_condition_indices_and_proportions(session):
    code, log = run(session, "ods output CollinDiag=cd;\nproc reg data=d; model y = x1 x2 x3 / collin; run;")
    assert code == 0, log
    X, _ = _xy(session)
    A = np.column_stack([np.ones(len(X)), X])
    A = A / np.linalg.norm(A, axis=0)
    lam, V = np.linalg.eigh(A.T @ A)
    order = np.argsort(lam)[::-1]
    lam, V = lam[order], V[:, order]
    phi = V ** 2 / lam
    prop = phi / phi.sum(axis=1, keepdims=True)          # prop[j, k]: variable j's share in dimension k
    got = rows(session, "work.cd")
    assert [r["Number"] for r in got] == [1, 2, 3, 4]
    assert [r["Eigenvalue"] for r in got] == pytest.approx(lam, rel=1e-8)
    assert [r["ConditionIndex"] for r in got] == pytest.approx(np.sqrt(lam[0] / lam), rel=1e-8)
    for j, name in enumerate(("Intercept", "x1", "x2", "x3")):
        assert [r[f"Proportion{name}"] for r in got] == pytest.approx(prop[j], rel=1e-6, abs=1e-10)
