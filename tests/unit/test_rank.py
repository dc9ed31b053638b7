"""rank and standardize against scipy/pandas on data with ties, missing values and BY groups."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy.stats import rankdata

from statgrid.errors import StatgridError


@pytest.fixture
def data(session):
    rng = np.random.default_rng(2)
    n = 600
    x = rng.integers(0, 40, n).astype(float)
    x[rng.random(n) < 0.1] = np.nan
    df = pd.DataFrame({"g": rng.choice(["a", "b", "c"], n), "x": x, "y": rng.normal(size=n)})
    session.write_table("work.d", pa.Table.from_pandas(df, preserve_index=False))
    return df


def out(session, name):
    return session.fetch_arrow("SELECT * FROM " + session.dataset(name).scan_sql()).to_pandas()


@pytest.mark.parametrize("ties,method", [("mean", "average"), ("low", "min"), ("high", "max"), ("dense", "dense")])
def test_ranks_match_scipy_per_by_group(session, data, ties, method):
    session.rank("work.d", "work.r", var="x", by="g", ranks="rx", ties=ties)
    got = out(session, "work.r")
    assert got["x"].equals(data["x"]) and got["g"].equals(data["g"])     # input order kept
    for g, part in data.groupby("g"):
        mask = part["x"].notna()
        want = rankdata(part.loc[mask, "x"], method=method)
        np.testing.assert_array_equal(got.loc[part.index[mask], "rx"].to_numpy(), want)
        assert got.loc[part.index[~mask], "rx"].isna().all()


def test_groups_fraction_percent_descending(session, data):
    x = data["x"].dropna()
    n = len(x)
    session.rank("work.d", "work.q", var="x", groups=4)
    q = out(session, "work.q")["x"].dropna().to_numpy()
    np.testing.assert_array_equal(q, np.floor(rankdata(x) * 4 / (n + 1)))
    session.rank("work.d", "work.f", var="x", fraction=True, descending=True)
    f = out(session, "work.f")["x"].dropna().to_numpy()
    np.testing.assert_allclose(f, rankdata(-x) / n)
    with pytest.raises(StatgridError, match="ties='random' is not one of"):
        session.rank("work.d", "work.e", var="x", ties="random")
    with pytest.raises(StatgridError, match="one rank name per variable"):
        session.rank("work.d", "work.e", var=["x", "y"], ranks="rx")


@pytest.mark.parametrize("method", ["std", "range", "median", "maxabs", "iqr"])
def test_standardize_methods(session, data, method):
    session.standardize("work.d", "work.z", var=["x", "y"], by="g", method=method)
    got = out(session, "work.z")
    for g, part in data.groupby("g"):
        for v in ("x", "y"):
            col = part[v].dropna()
            loc, scale = {"std": (col.mean(), col.std()), "range": (col.min(), col.max() - col.min()),
                          "median": (col.median(), 1.0), "maxabs": (0.0, col.abs().max()),
                          # SAS STDIZE's quartiles: PCTLDEF=5, numpy's averaged_inverted_cdf (H&F type 2)
                          "iqr": (col.median(), np.percentile(col, 75, method="averaged_inverted_cdf")
                                  - np.percentile(col, 25, method="averaged_inverted_cdf"))}[method]
            want = (part[v] - loc) / scale
            np.testing.assert_allclose(got.loc[part.index, v].to_numpy(), want.to_numpy(), rtol=1e-12)


def test_standardize_replace_and_constant_group(session):
    session.write_table("work.c", pa.table({"g": ["a", "a", "b"], "x": [2.0, None, 7.0]}))
    session.standardize("work.c", "work.cz", var="x", by="g", replace=True)
    got = out(session, "work.cz")["x"].tolist()
    assert got[1] == 0.0 and got[2] == 0.0 and not math.isnan(got[0])
    with pytest.raises(StatgridError, match="method='zscore' is not one of"):
        session.standardize("work.c", "work.cz", var="x", method="zscore")
