"""GLM's CONTRAST, ESTIMATE and TEST H= E= and Type IV sums of squares, against statsmodels (an
independent implementation): a two-way layout with every cell filled, fitted by statsmodels as a cell-means
model (one parameter per cell). An estimable function of the over-parameterized model is a weighted sum of
cell means, so each CONTRAST/ESTIMATE is checked as that sum with its variance from the cell-means fit;
Type III SS come from statsmodels' anova_lm(typ=3) with sum-to-zero coding, and TEST H= E= is their
mean-square ratio. Tolerance 1e-8 relative."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm

from statgrid.errors import StatgridError

A, B = ["p", "q", "r"], [1, 2]


@pytest.fixture
def two_way(session):
    rng = np.random.default_rng(3)
    n = 240
    d = pd.DataFrame({"a": rng.choice(A, n), "b": rng.choice(B, n)})
    d["y"] = 1.0 + (d.a == "q") * 0.7 - (d.a == "r") * 0.4 + (d.b == 2) * 0.3 + (d.a == "r") * (d.b == 2) * 0.5 \
        + rng.normal(size=n)
    session.write_table("work.t", pa.Table.from_pandas(d, preserve_index=False))
    cells = smf.ols("y ~ C(a):C(b) - 1", d).fit()
    return session, d, cells


def cell_weights(cells, w: dict) -> tuple[float, float, float]:
    """Σ w[(a, b)] · mean(a, b), its standard error and the error df, from the cell-means fit."""
    names = list(cells.params.index)
    vec = np.zeros(len(names))
    for (a, b), x in w.items():
        vec[names.index(f"C(a)[{a}]:C(b)[{b}]")] = x
    est = float(vec @ cells.params.values)
    se = float(np.sqrt(vec @ cells.cov_params().values @ vec))
    return est, se, cells.df_resid


def test_estimate_of_a_main_effect_difference_averaged_over_b(two_way):
    session, d, cells = two_way
    r = session.glm("work.t", "y = a b a*b", class_="a b", print=False,
                    estimates=[("p - q", {"a": [1, -1, 0], "a*b": [0.5, 0.5, -0.5, -0.5]}, 1),
                               ("mean of cell r2", {"intercept": [1], "a": [0, 0, 1], "b": [0, 1],
                                                    "a*b": [0, 0, 0, 0, 0, 1]}, 1),
                               ("halved", {"a": [2, -2, 0], "a*b": [1, 1, -1, -1]}, 4)])
    got = {row[0]: row for row in r.stats["y"]["estimates"]}
    w = {("p", 1): 0.5, ("p", 2): 0.5, ("q", 1): -0.5, ("q", 2): -0.5}
    est, se, df = cell_weights(cells, w)
    label, e, s, t, p = got["p - q"]
    assert e == pytest.approx(est, rel=1e-8) and s == pytest.approx(se, rel=1e-8)
    assert p == pytest.approx(2 * stats.t.sf(abs(est / se), df), rel=1e-6)
    est, se, _ = cell_weights(cells, {("r", 2): 1.0})
    assert got["mean of cell r2"][1] == pytest.approx(est, rel=1e-8)
    assert got["mean of cell r2"][1] == pytest.approx(d[(d.a == "r") & (d.b == 2)].y.mean(), rel=1e-10)
    assert got["mean of cell r2"][2] == pytest.approx(se, rel=1e-8)
    est, se, _ = cell_weights(cells, {k: v / 2 for k, v in w.items()})
    assert got["halved"][1] == pytest.approx(est, rel=1e-8) and got["halved"][2] == pytest.approx(se, rel=1e-8)


def test_a_non_estimable_estimate_is_reported_so(two_way):
    session, _, _ = two_way
    r = session.glm("work.t", "y = a b a*b", class_="a b", print=False, estimates=[("a p alone", {"a": [1]}, 1)])
    assert r.stats["y"]["estimates"][0][1:] == [None, None, None, None]


def test_two_row_contrast_is_the_joint_f_test(two_way):
    session, d, cells = two_way
    rows = [{"a": [1, -1, 0], "a*b": [0.5, 0.5, -0.5, -0.5]}, {"a": [1, 0, -1], "a*b": [0.5, 0.5, 0, 0, -0.5, -0.5]}]
    r = session.glm("work.t", "y = a b a*b", class_="a b", print=False, contrasts=[("a", rows)])
    label, df, ssv, ms, f, p = r.stats["y"]["contrasts"][0]
    # the same hypothesis through the cell-means fit: a Wald F test of two rows
    names = list(cells.params.index)
    L = np.zeros((2, len(names)))
    for k, other in enumerate(["q", "r"]):
        for b in B:
            L[k, names.index(f"C(a)[p]:C(b)[{b}]")] = 0.5
            L[k, names.index(f"C(a)[{other}]:C(b)[{b}]")] = -0.5
    want = cells.f_test(L)
    assert df == 2
    assert f == pytest.approx(float(np.squeeze(want.fvalue)), rel=1e-8)
    assert p == pytest.approx(float(want.pvalue), rel=1e-6)
    # with every cell filled and balanced weights this is the Type III test of a
    typ3 = anova_lm(smf.ols("y ~ C(a, Sum) * C(b, Sum)", d).fit(), typ=3)
    assert ssv == pytest.approx(typ3.loc["C(a, Sum)", "sum_sq"], rel=1e-8)


def test_test_h_e_uses_type_iii_mean_squares(two_way):
    session, d, _ = two_way
    # SS3 SS4 computed: the default would be the highest, Type IV (SAS GLM TEST); HTYPE=3 ETYPE=3 asked here
    r = session.glm("work.t", "y = a b a*b", class_="a b", ss="3 4", print=False,
                    tests=[(["a", "b"], "a*b", {"htype": "3", "etype": "3"})])
    typ3 = anova_lm(smf.ols("y ~ C(a, Sum) * C(b, Sum)", d).fit(), typ=3)
    ms = {k: typ3.loc[k, "sum_sq"] / typ3.loc[k, "df"] for k in ("C(a, Sum)", "C(b, Sum)", "C(a, Sum):C(b, Sum)")}
    test = r.stats["y"]["tests"][0]
    assert test["title"] == "Tests of Hypotheses Using the Type III MS for a*b as an Error Term"
    rows = {row[0]: row for row in test["rows"]}
    for eff, key in (("a", "C(a, Sum)"), ("b", "C(b, Sum)")):
        f = ms[key] / ms["C(a, Sum):C(b, Sum)"]
        assert rows[eff][4] == pytest.approx(f, rel=1e-8)
        assert rows[eff][5] == pytest.approx(stats.f.sf(f, typ3.loc[key, "df"], 2), rel=1e-6)
    # Type IV = Type III with every cell filled
    assert r.stats["y"]["type4"] == r.stats["y"]["type3"]


def test_type_iv_with_an_empty_cell_is_refused(session):
    d = pd.DataFrame({"a": ["p", "p", "q", "q", "r", "r", "p", "q"], "b": [1, 2, 1, 2, 1, 1, 1, 2],
                      "y": [1.0, 2.0, 3.0, 2.5, 4.0, 4.5, 1.5, 2.0]})
    session.write_table("work.e", pa.Table.from_pandas(d, preserve_index=False))
    with pytest.raises(StatgridError, match="Type IV .* empty cells"):
        session.glm("work.e", "y = a b a*b", class_="a b", ss="4", print=False)


def test_bad_contrast_effects_are_named(two_way):
    session, _, _ = two_way
    with pytest.raises(StatgridError, match="'c'.* not in the model"):
        session.glm("work.t", "y = a b", class_="a b", print=False, contrasts=[("x", [{"c": [1, -1]}])])
    with pytest.raises(StatgridError, match="3 levels; 4 coefficients"):
        session.glm("work.t", "y = a b", class_="a b", print=False, estimates=[("x", {"a": [1, -1, 0, 0]}, 1)])
    with pytest.raises(StatgridError, match="TEST: effect 'c'"):
        session.glm("work.t", "y = a b", class_="a b", print=False, tests=[(["a"], "c")])


def test_containing_effects_are_filled_in_as_sas_glm_does(two_way):
    """`contrast 'p-q' a 1 -1 0;` in a model with a*b: GLM spreads each a coefficient equally over the a*b
    columns at that level, so it is the same contrast as the one written out in full."""
    session, _, cells = two_way
    r = session.glm("work.t", "y = a b a*b", class_="a b", print=False,
                    contrasts=[("short", [{"a": [1, -1, 0]}]),
                               ("full", [{"a": [1, -1, 0], "a*b": [0.5, 0.5, -0.5, -0.5]}])],
                    estimates=[("lsmean p", {"intercept": [1], "a": [1, 0, 0], "b": [0.5, 0.5]}, 1)])
    short, full = r.stats["y"]["contrasts"]
    assert short[1:] == pytest.approx(full[1:], rel=1e-12)
    est, se, _ = cell_weights(cells, {("p", 1): 0.5, ("p", 2): 0.5})
    assert r.stats["y"]["estimates"][0][1] == pytest.approx(est, rel=1e-8)
    assert r.stats["y"]["estimates"][0][2] == pytest.approx(se, rel=1e-8)
