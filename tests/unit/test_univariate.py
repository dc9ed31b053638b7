"""univariate against scipy/numpy: moments with SAS's bias corrections, PCTLDEF=5 quantiles,
extremes with observation numbers, normality statistics, BY groups and missing values."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy import stats


def test_moments_quantiles_extremes_normality(session):
    rng = np.random.default_rng(9)
    x = rng.gamma(2.0, size=400)
    x[[3, 50]] = np.nan
    g = np.where(np.arange(400) < 150, "a", "b")
    session.write_table("work.d", pa.table({"g": g, "x": pa.array(x, from_pandas=True)}))   # NaN → missing
    r = session.univariate("work.d", var="x", by="g", normal=True)
    for rec, ext in zip(r.to_dicts(), r.stats["extremes"]):
        part = x[g == rec["g"]]
        v = part[~np.isnan(part)]
        assert (rec["n"], rec["nmiss"]) == (v.size, np.isnan(part).sum())
        assert rec["mean"] == pytest.approx(v.mean(), rel=1e-12)
        assert rec["std"] == pytest.approx(v.std(ddof=1), rel=1e-12)
        assert rec["skewness"] == pytest.approx(stats.skew(v, bias=False), rel=1e-9)
        assert rec["kurtosis"] == pytest.approx(stats.kurtosis(v, bias=False), rel=1e-9)
        assert rec["css"] == pytest.approx(((v - v.mean()) ** 2).sum(), rel=1e-12)
        assert rec["uss"] == pytest.approx((v ** 2).sum(), rel=1e-12)
        for p in (0, 1, 5, 25, 50, 75, 99, 100):
            assert rec[f"q{p}"] == pytest.approx(np.percentile(v, p, method="averaged_inverted_cdf"), rel=1e-12)
        w, pval = stats.shapiro(v)
        assert (rec["shapiro_w"], rec["shapiro_p"]) == pytest.approx((w, pval), rel=1e-9)
        assert rec["shapiro_p"] < 0.01                                   # gamma(2) is not normal
        ad = stats.anderson(v, "norm", method="interpolate")
        assert (rec["ad_a2"], rec["ad_p"]) == pytest.approx((ad.statistic, ad.pvalue), rel=1e-9)
        idx = np.flatnonzero(g == rec["g"])
        order = idx[np.argsort(x[idx])]
        order = order[~np.isnan(x[order])]
        assert [o for _, o in ext["lowest"]] == list(order[:5] + 1)      # 1-based input positions
        assert [o for _, o in ext["highest"]] == list(order[-5:] + 1)


def test_sas_definition_5_on_a_small_sample(session):
    session.write_table("work.s", pa.table({"x": [1.0, 2.0, 3.0, 4.0]}))
    rec = session.univariate("work.s", var="x", print=False).to_dicts()[0]
    # PCTLDEF=5: n·p = 2 is a whole number, so the median averages the 2nd and 3rd values
    assert (rec["q50"], rec["q25"], rec["q75"], rec["q100"], rec["q0"]) == (2.5, 1.5, 3.5, 4.0, 1.0)
    df = pd.DataFrame({"x": [5.0]})
    session.write_table("work.one", pa.Table.from_pandas(df, preserve_index=False))
    one = session.univariate("work.one", var="x", normal=True, print=False).to_dicts()[0]
    assert one["n"] == 1 and one["std"] is None and one["q50"] == 5.0 and one["shapiro_w"] is None
