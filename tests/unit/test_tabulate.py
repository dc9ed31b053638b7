"""tabulate against pandas (groupby, pivot_table with margins): 1-, 2- and 3-way tables with
missing values in class and analysis variables, ALL margins, percents of the grand total, a
single group, empty input, the exact listing text, and the errors. Statistics agree with pandas
to 1e-12 relative (std with ddof=1); counts exactly."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from statgrid.errors import StatgridError
from statgrid.procs import tabulate as tab

RTOL = 1e-12


@pytest.fixture
def data(session):
    """600 sales rows: region and product with ~5% missing, quarter 1–4 (Int64, a few missing),
    North never sells in quarter 4 (an empty cell), sales with ~8% missing, a constant column."""
    rng = np.random.default_rng(11)
    n = 600
    region = rng.choice(["East", "North", "South", "West"], n).astype(object)
    quarter = rng.integers(1, 5, n)
    quarter[(region == "North") & (quarter == 4)] = 3
    region[rng.random(n) < 0.05] = None
    product = rng.choice(["A", "B", "C"], n).astype(object)
    product[rng.random(n) < 0.05] = None
    sales = rng.gamma(3.0, 120.0, n)
    sales[rng.random(n) < 0.08] = np.nan
    df = pd.DataFrame({"region": region, "product": product,
                       "quarter": pd.array(np.where(rng.random(n) < 0.03, None, quarter), dtype="Int64"),
                       "sales": sales, "units": rng.integers(1, 50, n).astype(float), "const": 5.0})
    session.write_table("work.sales", pa.Table.from_pandas(df, preserve_index=False))   # NaN/None → missing
    return df


def by_type(result) -> dict:
    """{(_TYPE_, class values…): row as a dict}."""
    classes = result.columns[:result.columns.index("_TYPE_")]
    return {(r["_TYPE_"], *(r[c] for c in classes)): r for r in result.to_dicts()}


def check(got, want) -> None:
    if want is None or (isinstance(want, float) and math.isnan(want)):
        assert got is None
    else:
        assert got == pytest.approx(float(want), rel=RTOL, abs=0)


def test_one_way_every_statistic(session, data):
    stats = "n nmiss sum mean std min max median range pctn pctsum"
    r = tab.tabulate(session, "work.sales", rows="region", var=["sales", "const"], stats=stats)
    d = data.dropna(subset=["region"])                 # a missing class value leaves the table
    cells = by_type(r)
    assert len(cells) == d["region"].nunique() + 1
    parts = [(("1", g), part) for g, part in d.groupby("region")] + [(("0", None), d)]
    for key, part in parts:
        rec = cells[key]
        for v in ("sales", "const"):
            x = part[v]
            want = {"N": x.count(), "NMiss": x.isna().sum(), "Sum": x.sum(), "Mean": x.mean(), "Std": x.std(ddof=1),
                    "Min": x.min(), "Max": x.max(), "Median": x.median(), "Range": x.max() - x.min(),
                    "PctN": 100 * x.count() / d[v].count(), "PctSum": 100 * x.sum() / d[v].sum()}
            for stat, w in want.items():
                check(rec[f"{v}_{stat}"], w)
        assert rec["const_Std"] == 0.0 and rec["const_Range"] == 0.0
    assert r.columns[:2] == ["region", "_TYPE_"] and r.columns[2] == "sales_N"
    assert [row[1] for row in r.rows] == ["0", "1", "1", "1", "1"]            # sorted by _TYPE_, then level
    assert r.column("region") == [None, "East", "North", "South", "West"]


def test_two_way_matches_pivot_table_with_margins(session, data, captured):
    r = tab.tabulate(session, "work.sales", rows="region", cols="quarter", var="sales",
                     stats="n mean sum std min max pctn", out="work.tab")
    d = data.dropna(subset=["region", "quarter"])[["region", "quarter", "sales"]]
    pv = d.pivot_table(values="sales", index="region", columns="quarter", margins=True, margins_name="All",
                       aggfunc=["count", "mean", "sum", "std", "min", "max"])
    cells = by_type(r)
    present = set(d.groupby(["region", "quarter"]).size().index)
    assert {(k[1], k[2]) for k in cells if k[0] == "11"} == present
    assert ("North", 4) not in present                                        # an empty cell: no row
    total_n = d["sales"].count()
    for (typ, reg, q), rec in cells.items():
        row, col = reg if typ[0] == "1" else "All", q if typ[1] == "1" else "All"
        for stat, agg in [("N", "count"), ("Mean", "mean"), ("Sum", "sum"), ("Std", "std"), ("Min", "min"),
                          ("Max", "max")]:
            check(rec[f"sales_{stat}"], pv.loc[row, (agg, col)])
        check(rec["sales_PctN"], 100 * pv.loc[row, ("count", col)] / total_n)
    assert cells[("00", None, None)]["sales_PctN"] == pytest.approx(100.0, rel=RTOL)
    written = session.fetch_arrow("SELECT * FROM " + session.dataset("work.tab").scan_sql())
    assert written.column_names == r.columns and written.to_pylist() == r.to_dicts()
    text = captured.listing.getvalue()
    assert "quarter" in text and "sales Mean" in text and "\nAll " in text


def test_three_way_counts_and_percents(session, data):
    r = tab.tabulate(session, "work.sales", rows=["region", "product"], cols="quarter", stats="n pctn")
    d = data.dropna(subset=["region", "product", "quarter"])
    want = {("111", *k): v for k, v in d.groupby(["region", "product", "quarter"]).size().items()}
    want.update({("110", *k, None): v for k, v in d.groupby(["region", "product"]).size().items()})
    want.update({("001", None, None, k): v for k, v in d.groupby("quarter").size().items()})
    want[("000", None, None, None)] = len(d)
    cells = by_type(r)
    assert set(cells) == set(want)
    for key, n in want.items():
        assert cells[key]["N"] == n
        check(cells[key]["PctN"], 100 * n / len(d))
    assert r.columns == ["region", "product", "quarter", "_TYPE_", "N", "PctN"]

    m = tab.tabulate(session, "work.sales", rows="region product", cols="quarter", var="sales", stats="mean std",
                     all=False, print=False)
    cells = by_type(m)
    assert {k[0] for k in cells} == {"111"}                                   # no margins without all
    for (reg, prod, q), part in d.groupby(["region", "product", "quarter"]):
        check(cells[("111", reg, prod, q)]["sales_Mean"], part["sales"].mean())
        check(cells[("111", reg, prod, q)]["sales_Std"], part["sales"].std(ddof=1))


def test_missing_true_makes_missing_a_level(session, data):
    r = tab.tabulate(session, "work.sales", rows="region", cols="product", var="sales", stats="n sum pctsum",
                     missing=True, print=False)
    cells = by_type(r)
    for (reg, prod), part in data.groupby(["region", "product"], dropna=False):
        reg, prod = (None if pd.isna(v) else v for v in (reg, prod))
        rec = cells[("11", reg, prod)]
        assert rec["sales_N"] == part["sales"].count()
        check(rec["sales_Sum"], part["sales"].sum())
        check(rec["sales_PctSum"], 100 * part["sales"].sum() / data["sales"].sum())
    check(cells[("00", None, None)]["sales_Sum"], data["sales"].sum())      # every row is in the table
    assert cells[("10", None, None)]["sales_N"] == data.loc[data["region"].isna(), "sales"].count()


def test_single_group(session, captured):
    session.write_table("work.one", pa.table({"g": ["x"] * 4, "v": [1.0, 2.0, None, 4.0]}))
    r = tab.tabulate(session, "work.one", rows="g", var="v", stats="n mean std")
    assert r.rows == [[None, "0", 3, pytest.approx(7 / 3, rel=RTOL), pytest.approx(np.std([1, 2, 4], ddof=1))],
                      ["x", "1", 3, pytest.approx(7 / 3, rel=RTOL), pytest.approx(np.std([1, 2, 4], ddof=1))]]
    lines = captured.listing.getvalue().strip().splitlines()
    assert lines[-2].startswith("x ") and lines[-1].startswith("All ")


def test_empty_input(session, captured):
    session.write_table("work.e", pa.table({"g": pa.array([], pa.string()), "v": pa.array([], pa.float64())}))
    r = tab.tabulate(session, "work.e", rows="g", var="v", stats="sum pctsum", out="work.eo")
    assert r.rows == [] and r.columns == ["g", "_TYPE_", "v_Sum", "v_PctSum"]
    written = session.fetch_arrow("SELECT * FROM " + session.dataset("work.eo").scan_sql())
    assert written.num_rows == 0 and written.column_names == r.columns
    assert "NOTE: No observations in WORK.E: the table is empty." in captured.text.getvalue()
    assert captured.listing.getvalue().endswith("No observations.\n\n")

    session.write_table("work.m", pa.table({"g": pa.array([None, None], pa.string()), "v": [1.0, 2.0]}))
    assert tab.tabulate(session, "work.m", rows="g").rows == []
    assert "after dropping rows with a missing class value (missing=True keeps them)" in captured.text.getvalue()
    assert tab.tabulate(session, "work.m", rows="g", missing=True).rows == [[None, "0", 2], [None, "1", 2]]


def test_listing_text(session, captured):
    session.write_table("work.s", pa.table({
        "region": ["East", "East", "West", "West", "West", None],
        "quarter": [1, 2, 1, 1, 2, 1],
        "sales": [10.0, 20.5, 5.0, None, 7.25, 100.0]}))
    tab.tabulate(session, "work.s", rows="region", cols="quarter", var="sales", stats="n sum")
    tab.tabulate(session, "work.s", rows="region", stats="n pctn", format="6.1")
    assert captured.listing.getvalue() == (
        "The TABULATE Procedure\n"
        "\n"
        "        quarter\n"
        "                1                   2                  All\n"
        "region  sales N  sales Sum  sales N  sales Sum  sales N  sales Sum\n"
        "------  -------  ---------  -------  ---------  -------  ---------\n"
        "East          1         10        1       20.5        2       30.5\n"
        "West          1          5        1       7.25        2      12.25\n"
        "All           2         15        2      27.75        4      42.75\n"
        "\n"
        "The TABULATE Procedure\n"
        "\n"
        "region       N    PctN\n"
        "------  ------  ------\n"
        "East       2.0    40.0\n"
        "West       3.0    60.0\n"
        "All        5.0   100.0\n"
        "\n")


def test_errors(session, data):
    def fails(match, **kw):
        with pytest.raises(StatgridError, match=match):
            tab.tabulate(session, "work.sales", **{"rows": "region", **kw})

    fails(r"statistic 'mode' is not known; choose from: n, nmiss, sum, mean", var="sales", stats="n mode")
    fails(r"statistic 'mean' needs an analysis variable: name one with var=.*n or pctn", stats="n mean")
    fails(r"VAR variable 'region' .* is VARCHAR, not numeric", rows="quarter", var="region", stats="sum")
    fails(r"CLASS variable 'nation' is not in WORK.SALES; its variables are: region, product", rows="nation")
    fails(r"VAR variable 'profit' is not in WORK.SALES", var="profit", stats="sum")
    fails(r"'sales' is both a class variable and an analysis variable", cols="sales", var="sales")
    fails(r"class variable 'region' is used twice", cols="REGION")
    fails(r"rows= names no class variable", rows=[])
    fails(r"format='8,2' is not a w.d format", format="8,2")
    session.write_table("work.bad", pa.table({"N": ["a"], "x": [1.0]}))
    with pytest.raises(StatgridError, match=r"class variable 'n' has the name of a result column"):
        tab.tabulate(session, "work.bad", rows="N")
