"""The IRLS passes' R by CholeskyQR2 where that is as accurate as Householder (issue 24, item 9).

Householder QR of the tall chunks was two thirds of a logistic fit's time; tall_r takes the BLAS-3
route on well-conditioned chunks and Householder on the others. These tests check the R against
numpy's Householder QR, the fallback on zero and nearly dependent columns, that a logistic fit no
longer runs Householder on tall chunks (counted by a spy that calls the real numpy function: no
timing), and the estimates against statsmodels at the tolerance of tests/unit/test_models.py.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import statsmodels.api as sm

from statgrid.procs._irls import fold_r, tall_r


def _signed(r: np.ndarray) -> np.ndarray:
    """R with a non-negative diagonal (a QR's R is unique up to the signs of its rows)."""
    return r * np.where(np.diag(r) < 0, -1.0, 1.0)[:, None]


def test_tall_r_equals_householder_on_well_conditioned_columns():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(50_000, 12))
    a[:, 0] = 1.0
    a[:, 3] *= 1e5                    # units far apart: the column scaling keeps this well conditioned
    a[:, 4] = 1e-3 * a[:, 4] + 7.0
    want = _signed(np.linalg.qr(a, mode="r"))
    got = _signed(tall_r(a))
    scale = np.abs(want).max(axis=0)
    assert np.max(np.abs(got - want) / scale) < 1e-12
    # folded over chunks, as the passes do: the same R
    r = None
    for part in np.array_split(a, 7):
        r = fold_r(r, np.ascontiguousarray(part))
    assert np.max(np.abs(_signed(r) - want) / scale) < 1e-12


@pytest.mark.parametrize("case", ["zero column", "nearly dependent", "dependent", "short"])
def test_tall_r_takes_householder_where_cholesky_would_lose_digits(case):
    rng = np.random.default_rng(5)
    a = rng.normal(size=(20_000 if case != "short" else 30, 8))
    if case == "zero column":
        a[:, 5] = 0.0
    elif case == "nearly dependent":
        a[:, 6] = a[:, 1] - 2 * a[:, 2] + 1e-9 * a[:, 6]
    elif case == "dependent":
        a[:, 7] = a[:, 0] + a[:, 3]
    assert np.array_equal(tall_r(a), np.linalg.qr(a, mode="r"))


@pytest.fixture
def logit_data(session):
    rng = np.random.default_rng(11)
    n, k = 30_000, 8
    X = rng.normal(size=(n, k)) * np.array([1, 2, 0.5, 10, 1, 1, 3, 1])
    beta = rng.normal(size=k) * 0.15
    eta = 0.3 + X @ beta
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    d = pd.DataFrame({f"x{j + 1}": X[:, j] for j in range(k)} | {"y": y})
    session.write_table("work.lg", pa.Table.from_pandas(d, preserve_index=False))
    return d


def test_logistic_runs_no_householder_on_tall_chunks(session, logit_data, monkeypatch):
    """Before: every pass (start, each iteration, the report) ran numpy's Householder QR on chunks
    of all rows; now only the small stacks of R factors go through it."""
    real_qr = np.linalg.qr
    tall_rows: list[int] = []

    def spy(a, *args, **kwargs):
        if a.shape[0] > 4 * a.shape[1]:
            tall_rows.append(a.shape[0])
        return real_qr(a, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "qr", spy)
    names = [c for c in logit_data.columns if c != "y"]
    r = session.logistic("work.lg", "y = " + " ".join(names), event=1, print=False)
    assert tall_rows == [], f"Householder QR on tall chunks of {tall_rows} rows"
    m = sm.Logit(logit_data.y, sm.add_constant(logit_data[names])).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose([row[2] for row in r.rows], m.params.to_numpy(), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose([row[3] for row in r.rows], m.bse.to_numpy(), rtol=1e-6)
    assert r.stats["m2loglik"] == pytest.approx(-2 * m.llf, rel=1e-10)


def test_logistic_near_collinear_and_aliased_columns(session, logit_data):
    """Nearly dependent columns take the Householder route and still match statsmodels; an exactly
    dependent one is aliased (DF 0, estimate 0) as before."""
    d = logit_data.copy()
    rng = np.random.default_rng(13)
    d["near"] = d.x1 + d.x2 + 1e-3 * rng.normal(size=len(d))
    d["alias"] = d.x3 - d.x4
    session.write_table("work.lc", pa.Table.from_pandas(d, preserve_index=False))
    base = [f"x{j + 1}" for j in range(8)]
    r = session.logistic("work.lc", "y = " + " ".join(base + ["near", "alias"]), event=1, print=False)
    rows = {row[0]: row for row in r.rows}
    assert rows["alias"][1] == 0 and rows["alias"][2] == 0.0
    m = sm.Logit(d.y, sm.add_constant(d[base + ["near"]])).fit(method="newton", disp=0, tol=1e-10, maxiter=100)
    got = [rows[c][2] for c in ["Intercept"] + base + ["near"]]
    np.testing.assert_allclose(got, m.params.to_numpy(), rtol=1e-5, atol=1e-7)
    assert r.stats["m2loglik"] == pytest.approx(-2 * m.llf, rel=1e-10)
