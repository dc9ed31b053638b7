"""PROC FREQ counts every table of a step in one scan of the data (issue 24, item 9).

The scan count is read from the step's own STIMER record (bytes the process read: the engine's
pread calls on the Parquet file), so it does not depend on the machine's speed or load. The
counts of mixed one- and two-way requests, in both variable orders, with missing levels and
weights, are checked against pandas.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest


def _data(session, rows: int = 400_000) -> pd.DataFrame:
    # a, b: categories with missing values; pad: a wide column no table reads (it must not be read)
    rng = np.random.default_rng(24)
    a = rng.choice(np.array(["north", "south", "east", "west"], dtype=object), rows)
    a[rng.random(rows) < 0.03] = None
    b = rng.integers(0, 7, rows).astype(float)
    b[rng.random(rows) < 0.05] = np.nan
    w = rng.uniform(-0.5, 3.0, rows)
    w[rng.random(rows) < 0.02] = np.nan
    df = pd.DataFrame({"a": a, "b": pd.array(b, dtype="Int64").astype(object), "w": w,
                       "pad": [f"row {i:09d}" for i in range(rows)]})
    df["b"] = df["b"].where(pd.notna(df["b"]), None)
    table = pa.table({"a": pa.array(df["a"], pa.string()), "b": pa.array(df["b"], pa.int64()),
                      "w": pa.array(df["w"], pa.float64()), "pad": pa.array(df["pad"], pa.string())})
    pq.write_table(table, session.ref("work.d").path, row_group_size=50_000)
    return df


def test_freq_reads_the_data_once_for_all_tables(session):
    _data(session)
    session.freq("work.d", tables="a*b", print=False)
    one = session.steps[-1].logical_read_bytes
    session.freq("work.d", tables=["a", "b", "a*b", "b*a"], print=False)
    many = session.steps[-1].logical_read_bytes
    assert one > 200_000           # the columns a and b themselves were read
    # before: one scan per table (b*a another one still: GROUPING SETS cannot tell a*b from b*a),
    # i.e. 4 × one; now a, b, a*b share one scan and b*a has its own: 2 × one, plus the footer reads
    assert many < 2.3 * one, (one, many)
    session.freq("work.d", tables=["a", "b", "a*b"], print=False)
    assert session.steps[-1].logical_read_bytes < 1.2 * one, (one, session.steps[-1].logical_read_bytes)


def _expected(df: pd.DataFrame, cols: list[str], weight: str | None, missing: bool) -> tuple[list[tuple], float]:
    """[(levels..., count)] ordered with missing first, and the missing frequency, by pandas."""
    d = df
    if weight:
        d = d[d[weight] > 0]        # NaN > 0 is False: missing weights are left out too
    keys = d[cols].astype(object).where(d[cols].notna(), None)
    val = d[weight] if weight else pd.Series(1, index=d.index)
    grouped: dict[tuple, float] = {}
    for key, v in zip(map(tuple, keys.to_numpy()), val.to_numpy()):
        grouped[key] = grouped.get(key, 0) + v
    order = sorted(grouped, key=lambda k: tuple((v is not None, v if v is not None else 0) for v in k))
    cells = [(*k, grouped[k]) for k in order]
    if missing:
        return cells, 0.0
    return [c for c in cells if None not in c[:-1]], float(sum(c[-1] for c in cells if None in c[:-1]))


@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.parametrize("missing", [False, True])
def test_freq_tables_of_one_scan_match_pandas(session, weight, missing):
    df = _data(session, rows=20_000)
    requests = [["b"], ["a", "b"], ["b", "a"], ["a"], ["a", "b"]]
    res = session.freq("work.d", tables=["*".join(r) for r in requests], weight=weight, missing=missing,
                       print=False)
    assert len(res) == len(requests)
    for cols, table in zip(requests, res):
        want, n_missing = _expected(df, cols, weight, missing)
        got = [tuple(r[:len(cols) + 1]) for r in table.rows]
        assert [g[:-1] for g in got] == [w[:-1] for w in want], cols
        assert [g[-1] for g in got] == pytest.approx([w[-1] for w in want], rel=1e-12), cols
        assert table.stats["n_missing"] == pytest.approx(n_missing, rel=1e-12), cols
        assert table.stats["n"] == pytest.approx(sum(w[-1] for w in want), rel=1e-12), cols


def test_freq_names_as_the_engine_sees_them(session):
    """A file with 'A' and 'a' (written by another tool): the engine calls the second 'a_1', and so
    does FREQ, which takes the names from the Parquet footer only when the engine would keep them."""
    pq.write_table(pa.table([pa.array([1, 2, 2]), pa.array(["x", "y", "y"])], names=["A", "a"]),
                   session.ref("work.dup").path)
    (res,) = session.freq("work.dup", tables="a_1", print=False)
    assert res.column("a_1") == ["x", "y"] and res.column("count") == [1, 2]
    (res,) = session.freq("work.dup", tables="A", print=False)
    assert res.column("A") == [1, 2] and res.column("count") == [1, 2]
