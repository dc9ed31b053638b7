"""GLM's MEANS statement: the means table against pandas, Tukey against statsmodels' pairwise_tukeyhsd (lines
for balanced data, Tukey–Kramer CLDIFF intervals for unbalanced), Duncan's and SNK's critical ranges and groups
by hand from scipy's studentized range, the t-based methods against statsmodels' contrast intervals."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import statsmodels.formula.api as smf
from scipy.stats import studentized_range
from statsmodels.stats.multicomp import pairwise_tukeyhsd

from statgrid.procs.glm_means import MeansRequest


@pytest.fixture
def balanced(session):
    rng = np.random.default_rng(5)
    shift = {"a1": 0.0, "a2": 0.4, "a3": 1.3, "a4": 1.6, "a5": 3.0}
    d = pd.DataFrame({"g": np.repeat(list(shift), 6), "b": np.tile(["u", "v"], 15)})
    d["y"] = d.g.map(shift) + rng.normal(scale=0.6, size=len(d))
    d["x"] = rng.normal(size=len(d))
    session.write_table("work.bal", pa.Table.from_pandas(d, preserve_index=False))
    return d


@pytest.fixture
def unbalanced(session):
    rng = np.random.default_rng(11)
    sizes = {"p": 4, "q": 9, "r": 6, "s": 12}
    d = pd.DataFrame({"g": [k for k, n in sizes.items() for _ in range(n)]})
    d["y"] = d.g.map({"p": 1.0, "q": 1.5, "r": 2.6, "s": 2.8}) + rng.normal(scale=0.5, size=len(d))
    session.write_table("work.unb", pa.Table.from_pandas(d, preserve_index=False))
    return d


def _blocks(r, kind, method=None):
    return [b for b in r.stats["means"] if b["kind"] == kind and (method is None or method in b["method"])]


def _share_letter(rows) -> dict:
    by_level = {row[3]: set(row[0].split()) for row in rows}
    return {frozenset((a, b)): bool(by_level[a] & by_level[b]) for a, b in itertools.combinations(by_level, 2)}


def test_means_table_is_the_group_means_and_sds(session, balanced):
    r = session.glm("work.bal", "y = g b g*b x", class_="g b", print=False,
                    means=[MeansRequest(["g", "g*b"]), MeansRequest(["b"], deponly=True)])
    (m_g, m_gb, m_b) = _blocks(r, "means")
    ref = balanced.groupby("g").agg(n=("y", "size"), my=("y", "mean"), sy=("y", "std"), mx=("x", "mean"),
                                    sx=("x", "std"))
    assert m_g["variables"] == ["y", "x"] and [row[0] for row in m_g["rows"]] == list(ref.index)
    assert np.array([row[1:] for row in m_g["rows"]], float) == pytest.approx(ref.to_numpy(), rel=1e-12)
    assert len(m_gb["rows"]) == 10 and m_gb["classes"] == ["g", "b"]
    assert m_b["variables"] == ["y"] and len(m_b["rows"][0]) == 4


def test_tukey_balanced_lines_agree_with_pairwise_tukeyhsd(session, balanced):
    r = session.glm("work.bal", "y = g", class_="g", print=False, means=[MeansRequest(["g"], ["TUKEY"])])
    (b,) = _blocks(r, "lines", "Tukey")
    hsd = pairwise_tukeyhsd(balanced.y, balanced.g, alpha=0.05)
    share = _share_letter(b["rows"])
    for (g1, g2), reject in zip(itertools.combinations(sorted(balanced.g.unique()), 2), hsd.reject):
        assert share[frozenset((g1, g2))] == (not reject), (g1, g2)
    info = dict(b["info"])
    mse = smf.ols("y ~ C(g)", balanced).fit().mse_resid
    q = studentized_range.ppf(0.95, 5, 25)
    assert info["Critical Value of Studentized Range"] == pytest.approx(q, rel=1e-9)
    assert info["Minimum Significant Difference"] == pytest.approx(q * math.sqrt(mse / 6), rel=1e-9)
    assert [row[1] for row in b["rows"]] == pytest.approx(sorted(balanced.groupby("g").y.mean(), reverse=True))


def test_tukey_unbalanced_gives_tukey_kramer_intervals(session, unbalanced):
    r = session.glm("work.unb", "y = g", class_="g", print=False, means=[MeansRequest(["g"], ["TUKEY"])])
    (b,) = _blocks(r, "cldiff", "Tukey")
    rows = {row[0]: row for row in b["rows"]}
    assert len(rows) == 12
    hsd = pairwise_tukeyhsd(unbalanced.y, unbalanced.g, alpha=0.05)
    for (g1, g2), diff, (lo, hi), reject in zip(itertools.combinations(hsd.groupsunique, 2), hsd.meandiffs,
                                                hsd.confint, hsd.reject):
        row = rows[f"{g2} - {g1}"]                 # statsmodels: mean(g2) − mean(g1)
        assert row[1:4] == pytest.approx([diff, lo, hi], rel=1e-6)
        assert (row[4] == "***") == bool(reject)
        assert rows[f"{g1} - {g2}"][1:4] == pytest.approx([-diff, -hi, -lo], rel=1e-6)


def _hand_range_groups(means: pd.Series, n: float, mse: float, df: float, alpha_p) -> tuple[dict, dict]:
    """Critical ranges and, per pair, 'different' by the multiple-stage rule (every containing range
    significant too), computed directly from the definitions."""
    ms = means.sort_values(ascending=False)
    k = len(ms)
    crit = {p: studentized_range.ppf(1 - alpha_p(p), p, df) * math.sqrt(mse / n) for p in range(2, k + 1)}
    sig = lambda i, j: ms.iloc[i] - ms.iloc[j] > crit[j - i + 1]  # noqa: E731
    different = {}
    for i, j in itertools.combinations(range(k), 2):
        different[(ms.index[i], ms.index[j])] = all(sig(a, b) for a in range(0, i + 1) for b in range(j, k))
    return crit, different


@pytest.mark.parametrize("method,alpha_p", [("DUNCAN", lambda p: 1 - 0.95 ** (p - 1)), ("SNK", lambda p: 0.05)])
def test_duncan_and_snk_ranges_and_groups_by_hand(session, balanced, method, alpha_p):
    r = session.glm("work.bal", "y = g", class_="g", print=False, means=[MeansRequest(["g"], [method])])
    (b,) = _blocks(r, "lines", method[:3].title() if method == "DUNCAN" else "Newman")
    mse = smf.ols("y ~ C(g)", balanced).fit().mse_resid
    crit, different = _hand_range_groups(balanced.groupby("g").y.mean(), 6, mse, 25, alpha_p)
    assert [p for p, _ in b["ranges"]] == [2, 3, 4, 5]
    assert [v for _, v in b["ranges"]] == pytest.approx([crit[p] for p in range(2, 6)], rel=1e-9)
    letters = {row[3]: set(row[0].split()) for row in b["rows"]}
    for (g1, g2), diff in different.items():
        assert bool(letters[g1] & letters[g2]) == (not diff), (g1, g2)
    assert b["rows"][0][0].endswith("A")          # the highest mean is in group A


def test_duncan_unbalanced_uses_the_harmonic_mean(session, unbalanced):
    r = session.glm("work.unb", "y = g", class_="g", print=False, means=[MeansRequest(["g"], ["DUNCAN"])])
    (b,) = _blocks(r, "lines", "Duncan")
    nh = 4 / sum(1 / n for n in (4, 9, 6, 12))
    assert dict(b["info"])["Harmonic Mean of Cell Sizes"] == pytest.approx(nh, rel=1e-12)
    mse = smf.ols("y ~ C(g)", unbalanced).fit().mse_resid
    df = len(unbalanced) - 4
    assert b["ranges"][0][1] == pytest.approx(studentized_range.ppf(0.95, 2, df) * math.sqrt(mse / nh), rel=1e-9)


@pytest.mark.parametrize("method,level", [("LSD", lambda a, c: a), ("BON", lambda a, c: a / c),
                                          ("SIDAK", lambda a, c: 1 - (1 - a) ** (1 / c))])
def test_t_methods_intervals_match_statsmodels_contrasts(session, unbalanced, method, level):
    r = session.glm("work.unb", "y = g", class_="g", print=False,
                    means=[MeansRequest(["g"], [method], alpha=0.1)])
    (b,) = _blocks(r, "cldiff")
    fit = smf.ols("y ~ C(g) - 1", unbalanced).fit()
    names = list(fit.params.index)
    rows = {row[0]: row for row in b["rows"]}
    for g1, g2 in itertools.permutations("pqrs", 2):
        L = np.zeros(len(names))
        L[names.index(f"C(g)[{g1}]")], L[names.index(f"C(g)[{g2}]")] = 1, -1
        t = fit.t_test(L)
        lo, hi = t.conf_int(alpha=level(0.1, 6))[0]
        assert rows[f"{g1} - {g2}"][1:4] == pytest.approx([float(t.effect[0]), lo, hi], rel=1e-9)


def test_scheffe_lines_with_the_lines_option_on_unbalanced_data(session, unbalanced):
    from scipy import stats
    r = session.glm("work.unb", "y = g", class_="g", print=False,
                    means=[MeansRequest(["g"], ["SCHEFFE"], lines=True)])
    (b,) = _blocks(r, "lines")
    info = dict(b["info"])
    mse = smf.ols("y ~ C(g)", unbalanced).fit().mse_resid
    nh = 4 / sum(1 / n for n in (4, 9, 6, 12))
    f = stats.f.ppf(0.95, 3, 27)
    assert info["Minimum Significant Difference"] == pytest.approx(math.sqrt(3 * f) * math.sqrt(2 * mse / nh),
                                                                   rel=1e-9)


def test_means_of_an_effect_not_in_the_model_or_with_a_covariate_is_an_error(session, balanced):
    from statgrid.errors import StatgridError
    with pytest.raises(StatgridError, match="MEANS effect 'b' is not in the model"):
        session.glm("work.bal", "y = g", class_="g b", print=False, means=[MeansRequest(["b"])])
    with pytest.raises(StatgridError, match="classification effects only"):
        session.glm("work.bal", "y = g x", class_="g", print=False, means=[MeansRequest(["x"])])
