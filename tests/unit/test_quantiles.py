"""SAS's five quantile definitions (QNTLDEF= / PCTLDEF=) in means, summary, tabulate and
univariate: exact hand-computed values, numpy.percentile's matching methods as an independent
check on groups of every size from 1 to 40 (with ties and missing values), every whole
percentile 0–100 against the definitions written out in integer arithmetic, the default 5, and
the error for a bad qntldef=.

numpy's methods select order statistics exactly (no BLAS), so the selecting definitions 2, 3 and
5 must agree to the bit; the interpolating ones 1 and 4 compute the fraction g differently
(n·p in floating point vs n·t % 100 here), hence a 1e-12 relative tolerance for them.
"""
from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from statgrid.errors import StatgridError
from statgrid.procs._quantile import quantiles_sql

# SAS definition → numpy.percentile method (Hyndman & Fan types 4, 3, 1, 6, 2)
NUMPY_METHOD = {1: "interpolated_inverted_cdf", 2: "closest_observation", 3: "inverted_cdf", 4: "weibull",
                5: "averaged_inverted_cdf"}
MEANS_PCT = {"p1": 1, "p5": 5, "p10": 10, "q1": 25, "median": 50, "q3": 75, "p90": 90, "p95": 95, "p99": 99}
TAB_NAMES = {"p1": "P1", "p5": "P5", "p10": "P10", "q1": "Q1", "median": "Median", "q3": "Q3", "p90": "P90",
             "p95": "P95", "p99": "P99"}

# x = 10, 20, …, 100 (n = 10), worked by hand from the definitions (np = j + g; (n+1)p for 4):
#   t=25: np=2.5 → 1: ½x2+½x3 = 25; 2: g=½, j=2 even → x2; 3: x3; 4: 2.75 → x2+.75(x3-x2); 5: x3
#   t=50: np=5   → 1,2,3: x5;  4: 5.5 → 55;  5: (x5+x6)/2 = 55
#   t=75: np=7.5 → 1: 75; 2: g=½, j=7 odd → x8; 3: x8; 4: 8.25 → 82.5; 5: x8
#   t=90: np=9   → 1,2,3: x9;  4: 9.9 → 99;  5: (x9+x10)/2 = 95
#   t=99: np=9.9 → 1: 99; 2: g>½ → x10; 3, 5: x10; 4: 10.89 → x10 (x11 taken as x10)
#   t=1:  np=0.1 → 1: x0 taken as x1; 2: i=0 → x1; 3, 5: x1; 4: 0.11 → x1
BY_HAND = {  # definition → {percentile: value}
    1: {1: 10, 25: 25, 50: 50, 75: 75, 90: 90, 99: 99},
    2: {1: 10, 25: 20, 50: 50, 75: 80, 90: 90, 99: 100},
    3: {1: 10, 25: 30, 50: 50, 75: 80, 90: 90, 99: 100},
    4: {1: 10, 25: 27.5, 50: 55, 75: 82.5, 90: 99, 99: 100},
    5: {1: 10, 25: 30, 50: 55, 75: 80, 90: 95, 99: 100},
}


def tens(session):
    """x = 10 … 100 shuffled, plus a missing value (left out, as SAS does)."""
    x = [70.0, None, 10.0, 100.0, 40.0, 20.0, 90.0, 30.0, 60.0, 50.0, 80.0]
    session.write_table("work.tens", pa.table({"g": ["a"] * len(x), "x": x}))


@pytest.mark.parametrize("qntldef", [1, 2, 3, 4, 5])
def test_hand_computed_values_in_every_procedure(session, qntldef):
    tens(session)
    want = BY_HAND[qntldef]
    stats = [st for st, t in MEANS_PCT.items() if t in want]
    m = session.means("work.tens", var="x", stats=stats, qntldef=qntldef, print=False).to_dicts()[0]
    s = session.summary("work.tens", var="x", class_="g", stats=stats, qntldef=qntldef).to_dicts()
    u = session.univariate("work.tens", var="x", qntldef=qntldef, print=False).to_dicts()[0]
    t = session.tabulate("work.tens", rows="g", var="x", stats=stats, qntldef=qntldef, print=False).to_dicts()
    for st in stats:
        pct = MEANS_PCT[st]
        assert m[st] == pytest.approx(want[pct], rel=1e-12), (st, "means")
        assert [r[st] for r in s] == pytest.approx([want[pct]] * 2, rel=1e-12), (st, "summary")   # all, g=a
        assert [r[f"x_{TAB_NAMES[st]}"] for r in t] == pytest.approx([want[pct]] * 2, rel=1e-12), (st, "tabulate")
        if pct in (1, 25, 50, 75, 90, 99):
            assert u[f"q{pct}"] == pytest.approx(want[pct], rel=1e-12), (st, "univariate")
    assert (u["q0"], u["q100"]) == (10.0, 100.0)            # minimum and maximum under every definition


def groups_of_every_size(session, sizes=range(1, 41)):
    """Group g = k holds k non-missing values (integers 0–19, so ties) and one missing value."""
    rng = np.random.default_rng(14)
    g, x = [], []
    for k in sizes:
        g += [k] * (k + 1)
        x += list(rng.integers(0, 20, k).astype(float)) + [None]
    order = rng.permutation(len(g))
    session.write_table("work.sizes", pa.table({"g": [g[i] for i in order], "x": [x[i] for i in order]}))
    gs, xs = np.array(g), np.array([np.nan if v is None else v for v in x])
    return {k: xs[(gs == k) & ~np.isnan(xs)] for k in sizes}


def agrees(got, want, qntldef):
    if qntldef in (2, 3, 5):
        assert got == want
    else:
        assert got == pytest.approx(want, rel=1e-12, abs=0)


@pytest.mark.parametrize("qntldef", [1, 2, 3, 4, 5])
def test_matches_numpy_for_groups_of_every_size(session, qntldef):
    values = groups_of_every_size(session)
    method = NUMPY_METHOD[qntldef]
    stats = list(MEANS_PCT)
    means = session.means("work.sizes", var="x", class_="g", stats=stats, qntldef=qntldef, print=False)
    for r in means.to_dicts():
        for st in stats:
            agrees(r[st], float(np.percentile(values[r["g"]], MEANS_PCT[st], method=method)), qntldef)
    uni = session.univariate("work.sizes", var="x", by="g", qntldef=qntldef, print=False)
    for r in uni.to_dicts():
        for p in (0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100):
            agrees(r[f"q{p}"], float(np.percentile(values[r["g"]], p, method=method)), qntldef)
    # the overall row of summary and the ALL row of tabulate: every value at once
    everything = np.concatenate(list(values.values()))
    overall = [r for r in session.summary("work.sizes", var="x", class_="g", stats=stats,
                                          qntldef=qntldef).to_dicts() if r["_type_"] == 0]
    cells = session.tabulate("work.sizes", rows="g", var="x", stats=stats, qntldef=qntldef, print=False).to_dicts()
    assert len(overall) == 1 and len(cells) == len(values) + 1
    for st in stats:
        want = float(np.percentile(everything, MEANS_PCT[st], method=method))
        agrees(overall[0][st], want, qntldef)
        for c in cells:
            part = everything if c["_TYPE_"] == "0" else values[c["g"]]
            agrees(c[f"x_{TAB_NAMES[st]}"], float(np.percentile(part, MEANS_PCT[st], method=method)), qntldef)


def sas_quantile(x: list[float], t: int, qntldef: int) -> float:
    """SAS's definition, straight from the table in procs/_quantile.py, in integer arithmetic
    (numpy's methods compute n·p in floating point, which misplaces a few percentiles such as
    55 or 56 — so this, not numpy, is the reference for every whole percentile)."""
    x, n = sorted(x), len(x)
    j, r = divmod((n + 1 if qntldef == 4 else n) * t, 100)
    at = lambda i: x[min(max(i, 1), n) - 1]                 # noqa: E731  x(0) = x(1), x(n+1) = x(n)
    if qntldef in (1, 4):
        g = r / 100
        return at(j) if g == 0 else (at(j + 1) - (at(j + 1) - at(j)) * (1 - g) if g >= 0.5
                                     else at(j) + (at(j + 1) - at(j)) * g)
    if qntldef == 2:
        return at(j if r < 50 or (r == 50 and j % 2 == 0) else j + 1)
    if qntldef == 3:
        return at(j if r == 0 else j + 1)
    return (at(j) + at(j + 1)) / 2 if r == 0 else at(j + 1)


@pytest.mark.parametrize("qntldef", [1, 2, 3, 4, 5])
def test_every_whole_percentile_in_the_engine(qntldef):
    rng = np.random.default_rng(5)
    sizes = range(1, 121)
    g = np.repeat(list(sizes), list(sizes))
    x = rng.integers(0, 30, g.size).astype(float)             # ties
    con = duckdb.connect()
    con.register("t", pa.table({"g": g, "x": x}))
    percents = list(range(101))
    rows = con.sql(f"SELECT g, {quantiles_sql('x', percents, qntldef)} FROM t GROUP BY g ORDER BY g").fetchall()
    assert [r[0] for r in rows] == list(sizes)
    for k, got in rows:
        part = sorted(x[g == k].tolist())
        want = [sas_quantile(part, t, qntldef) for t in percents]
        if qntldef in (1, 4):
            assert got == pytest.approx(want, rel=1e-12, abs=0), k
        else:
            assert got == want, k


def test_default_is_definition_5(session, captured):
    """np = 2 (n = 4, t = 50) is a whole number: definition 5 averages x(2) and x(3), where
    linear interpolation (the old default, Hyndman–Fan 7) gives 1.75 for the lower quartile."""
    session.write_table("work.four", pa.table({"c": ["a"] * 4, "x": [1.0, 2.0, 3.0, 4.0]}))
    m = session.means("work.four", var="x", stats="q1 median q3 p90").to_dicts()[0]
    assert (m["q1"], m["median"], m["q3"], m["p90"]) == (1.5, 2.5, 3.5, 4.0)
    t = session.tabulate("work.four", rows="c", var="x", stats="q1 median q3").to_dicts()
    assert [(r["x_Q1"], r["x_Median"], r["x_Q3"]) for r in t] == [(1.5, 2.5, 3.5)] * 2
    u = session.univariate("work.four", var="x").to_dicts()[0]
    assert (u["q25"], u["q50"], u["q75"]) == (1.5, 2.5, 3.5)
    assert "Quantiles (Definition 5)" in captured.listing.getvalue()
    session.univariate("work.four", var="x", qntldef=2)
    assert "Quantiles (Definition 2)" in captured.listing.getvalue()


def test_all_missing_group_has_missing_quantiles(session):
    session.write_table("work.gap", pa.table({"g": ["a", "a", "b"], "x": [1.0, 3.0, None], "y": [5.0, None, 6.0]}))
    rows = {r["g"]: r for r in session.means("work.gap", var="x y", class_="g", stats="n median", print=False)
            .to_dicts() if r["variable"] == "x"}
    assert rows["a"]["median"] == 2.0 and rows["b"]["median"] is None and rows["b"]["n"] == 0
    u = {r["g"]: r for r in session.univariate("work.gap", var="x", by="g", print=False).to_dicts()}
    assert u["b"]["q50"] is None and u["a"]["q50"] == 2.0


@pytest.mark.parametrize("bad", [0, 6, -1, "5", 2.0, True, None])
def test_bad_qntldef_names_the_value_and_the_choices(session, bad):
    tens(session)
    calls = [lambda: session.means("work.tens", var="x", stats="median", qntldef=bad),
             lambda: session.summary("work.tens", var="x", qntldef=bad),
             lambda: session.tabulate("work.tens", rows="g", var="x", stats="median", qntldef=bad),
             lambda: session.univariate("work.tens", var="x", qntldef=bad)]
    for call in calls:
        with pytest.raises(StatgridError, match=rf"qntldef={bad!r} .*use qntldef=1, 2, 3, 4 or 5"):
            call()
