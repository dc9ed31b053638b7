"""Hash lookup joins, SQL semi-joins and SET POINT= access, against pandas."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from statgrid.errors import StatgridError


def out(session, name):
    return session.fetch_arrow("SELECT * FROM " + session.dataset(name).scan_sql()).to_pandas()


@pytest.fixture
def star(session):
    rng = np.random.default_rng(8)
    fact = pd.DataFrame({"cust": rng.integers(0, 120, 5000), "amount": rng.normal(100, 20, 5000)})
    dim = pd.DataFrame({"cust": np.arange(100), "segment": rng.choice(["gold", "silver"], 100),
                        "region": rng.choice(["n", "s"], 100)})
    session.write_table("work.fact", pa.Table.from_pandas(fact, preserve_index=False))
    session.write_table("work.dim", pa.Table.from_pandas(dim, preserve_index=False))
    return fact, dim


def test_lookup_matches_a_pandas_merge_in_fact_order(session, star):
    fact, dim = star
    session.lookup("work.fact", "work.dim", key="cust", out="work.j", keep="segment")
    got = out(session, "work.j")
    want = fact.merge(dim[["cust", "segment"]], on="cust", how="left")
    assert got["cust"].tolist() == fact["cust"].tolist()                 # fact order kept
    assert got["segment"].fillna("").tolist() == want["segment"].fillna("").tolist()
    session.lookup("work.fact", "work.dim", key="cust", out="work.k", inner=True)
    assert len(out(session, "work.k")) == int((fact.cust < 100).sum())


def test_lookup_refuses_duplicate_keys_and_clashes(session, star):
    session.write_table("work.dup", pa.table({"cust": [1, 1], "segment": ["a", "b"]}))
    with pytest.raises(StatgridError, match="occurs 2 times in WORK.DUP"):
        session.lookup("work.fact", "work.dup", key="cust", out="work.x")
    session.write_table("work.clash", pa.table({"cust": [1], "amount": [2.0]}))
    with pytest.raises(StatgridError, match="column 'amount' is also in WORK.FACT"):
        session.lookup("work.fact", "work.clash", key="cust", out="work.x")


def test_sql_semi_join(session, star):
    fact, dim = star
    session.sql("CREATE TABLE work.gold AS SELECT * FROM fact WHERE cust IN "
                "(SELECT cust FROM dim WHERE segment = 'gold')")
    got = out(session, "work.gold")
    gold = set(dim.loc[dim.segment == "gold", "cust"])
    assert len(got) == int(fact.cust.isin(gold).sum()) and set(got.cust) <= gold


def test_point_reads_only_the_wanted_rows(home, captured):
    from statgrid.config import load_config
    from statgrid.session import Session

    n = 50_000
    with Session(load_config(), {"bufsize": "16k"}, log=captured.log()) as s:      # 2,048-row groups
        s.write_table("work.big", pa.table({"i": np.arange(1, n + 1), "v": np.arange(n) * 0.5}))
        rows = [7, 49_999, 1, 7, 25_000]
        t = s.point("work.big", rows)
        assert t.column("i").to_pylist() == rows and t.column("v").to_pylist() == [(r - 1) * 0.5 for r in rows]
        assert "POINT=: 5 observations read" in captured.text.getvalue()
        m = re.search(r"3 of (\d+) row groups", captured.text.getvalue())
        assert m and int(m.group(1)) >= 20                               # only the groups holding them
        with pytest.raises(StatgridError, match="point=50001 is outside WORK.BIG, which has observations 1 to 50000"):
            s.point("work.big", [50_001])
