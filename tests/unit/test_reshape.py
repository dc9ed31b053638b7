"""transpose against pandas pivots; surveyselect sample sizes, probabilities and reproducibility."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from statgrid.errors import StatgridError


def out(session, name):
    return session.fetch_arrow("SELECT * FROM " + session.dataset(name).scan_sql()).to_pandas()


def test_transpose_by_id_matches_pandas(session):
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"region": np.repeat(["n", "s", "w"], 4), "q": ["q1", "q2", "q3", "q4"] * 3,
                       "sales": rng.normal(size=12), "cost": rng.normal(size=12)})
    df = df.drop(index=[5])                                            # region s has no q2
    session.write_table("work.d", pa.Table.from_pandas(df, preserve_index=False))
    session.transpose("work.d", "work.t", by="region", id="q", var=["sales", "cost"])
    got = out(session, "work.t")
    want = (df.melt(id_vars=["region", "q"], value_vars=["sales", "cost"], var_name="_NAME_")
              .pivot_table(index=["region", "_NAME_"], columns="q", values="value", dropna=False).reset_index())
    got = got.sort_values(["region", "_NAME_"]).reset_index(drop=True)
    want = want.sort_values(["region", "_NAME_"]).reset_index(drop=True)
    assert list(got.columns) == ["region", "_NAME_", "q1", "q2", "q3", "q4"]
    for c in ("q1", "q2", "q3", "q4"):
        np.testing.assert_allclose(got[c].to_numpy(dtype=float), want[c].to_numpy(dtype=float))
    assert got.loc[got.region == "s", "q2"].isna().all()


def test_transpose_without_id_and_errors(session):
    session.write_table("work.d", pa.table({"k": ["a", "a", "b"], "x": [1.0, 2.0, 3.0]}))
    session.transpose("work.d", "work.t", var="x", by="k", prefix="V")
    got = out(session, "work.t")
    assert got.to_dict("records")[0] == {"k": "a", "_NAME_": "x", "V1": 1.0, "V2": 2.0}
    assert math.isnan(got.to_dict("records")[1]["V2"])
    session.write_table("work.dup", pa.table({"i": ["p", "p"], "x": [1.0, 2.0]}))
    with pytest.raises(StatgridError, match="ID value 'p' occurs more than once"):
        session.transpose("work.dup", "work.t", var="x", id="i")


def test_surveyselect_sizes_probabilities_and_seed(session):
    strata = np.repeat(["a", "b", "c"], [50, 30, 20])
    session.write_table("work.pop", pa.table({"s": strata, "v": np.arange(100.0)}))
    session.surveyselect("work.pop", "work.s1", n=5, strata="s", seed=42)
    s1 = out(session, "work.s1")
    assert s1.groupby("s").size().to_dict() == {"a": 5, "b": 5, "c": 5}
    assert dict(zip(s1.s, s1.SelectionProb)) == {"a": 5 / 50, "b": 5 / 30, "c": 5 / 20}
    np.testing.assert_allclose(s1.SamplingWeight, 1 / s1.SelectionProb)
    assert list(s1.v) == sorted(s1.v) and s1.v.is_unique                 # input order, no repeats
    session.surveyselect("work.pop", "work.s2", n=5, strata="s", seed=42)
    assert out(session, "work.s2").v.tolist() == s1.v.tolist()           # same seed, same sample
    session.surveyselect("work.pop", "work.s3", n=5, strata="s", seed=43)
    assert out(session, "work.s3").v.tolist() != s1.v.tolist()
    session.surveyselect("work.pop", "work.r", rate=0.1, strata="s", seed=1)
    assert out(session, "work.r").groupby("s").size().to_dict() == {"a": 5, "b": 3, "c": 2}
    with pytest.raises(StatgridError, match="n=25 is more than the 20 rows of stratum"):
        session.surveyselect("work.pop", "work.x", n=25, strata="s", seed=1)
    with pytest.raises(StatgridError, match="exactly one of n="):
        session.surveyselect("work.pop", "work.x", seed=1)
    with pytest.raises(StatgridError, match="method='pps' is not supported"):
        session.surveyselect("work.pop", "work.x", n=1, method="pps")


def test_surveyselect_is_uniform(session):
    session.write_table("work.pop", pa.table({"v": np.arange(20.0)}))
    counts = np.zeros(20)
    for seed in range(200):
        session.surveyselect("work.pop", "work.s", n=5, seed=seed)
        counts[out(session, "work.s").v.astype(int)] += 1
    # each unit is chosen with probability 1/4: 50 of 200 expected, binomial sd ≈ 6.1 (seeds fixed)
    assert counts.min() > 25 and counts.max() < 75
