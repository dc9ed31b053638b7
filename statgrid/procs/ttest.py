"""PROC TTEST's statistics (SAS/STAT: TTEST, "Computational Methods") from each group's summary figures.

A group's figures (N, mean, std with divisor N - 1, min, max) come from one DuckDB pass per group column and a
centred second pass for the sum of squares (`group_stats`); everything else is arithmetic on them:
- one sample / paired differences: t = (x̄ - H0) / (s/√n) on n - 1 df; CL for the mean x̄ ± t(1-α/2, n-1) s/√n;
- two samples, Pooled: s_p² = ((n1-1)s1² + (n2-1)s2²)/(n1+n2-2), SE = s_p √(1/n1 + 1/n2), df n1+n2-2;
  Satterthwaite: SE = √(s1²/n1 + s2²/n2), df = SE⁴ / ((s1²/n1)²/(n1-1) + (s2²/n2)²/(n2-1));
- CL for a standard deviation (equal-tailed): s √(df/χ²(1-α/2, df)) … s √(df/χ²(α/2, df));
- Folded F = max(s1², s2²)/min(s1², s2²), its p-value 2·P(F > f) on (n_big - 1, n_small - 1) df (capped at 1).
SIDES=U (L): the upper (lower) tail p-value and the one-sided CL [x̄ - t(1-α) SE, ∞) ((-∞, x̄ + t(1-α) SE]).
WEIGHT w (rows with w ≤ 0 or missing left out): x̄ = Σwx/Σw, s² = Σw(x - x̄)²/(n - 1) with n the rows, and W = Σw
in place of n in the standard errors (SE = s/√W; Pooled s_p √(1/W1 + 1/W2); Satterthwaite with s_i²/W_i) — the
weighted least squares fit of the mean (and of the two-group difference), as SAS computes it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from statgrid.errors import StatgridError
from statgrid.libraries import sql_ident


@dataclass
class GroupStats:
    """A sample's summary: n observations, mean, std (divisor n - 1; None when n < 2), min, max."""
    n: int
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    wsum: float | None = None   # Σ weights (WEIGHT statement), else None: the standard error divides by √n

    @property
    def w(self) -> float:
        return self.wsum if self.wsum is not None else self.n

    @property
    def stderr(self) -> float | None:
        return self.std / math.sqrt(self.w) if self.std is not None and self.w > 0 else None


@dataclass
class TTestRow:
    """One row of TTests: Method ('' one sample, Pooled, Satterthwaite), Variances, DF, t value, p-value."""
    method: str
    variances: str
    df: float | None
    t: float | None
    p: float | None


@dataclass
class MeanCL:
    """One row of ConfLimits: the mean (or difference) and its CL, the std and its CL (None: not shown)."""
    method: str
    mean: float | None
    lower: float | None
    upper: float | None
    std: float | None
    std_lower: float | None
    std_upper: float | None


def group_stats(execute, base: str, expr: str, group: str | None = None,
                freq: str | None = None, weight: str | None = None) -> list[tuple[object, GroupStats]]:
    """[(group value, GroupStats)] of the numeric SQL `expr` over the rows of `base` where it is present, per
    value of column `group` (one entry, key None, without); groups in ascending order, missing first. `freq`: a
    FREQ variable, each row counted its whole part times (rows below 1 or missing left out, as SAS). `weight`: a
    WEIGHT variable (rows with a weight ≤ 0 or missing left out): the weighted mean and sum of squares, and Σ weights
    in GroupStats.wsum."""
    g = sql_ident(group) if group else "NULL"
    f = f"floor(CAST({sql_ident(freq)} AS DOUBLE))" if freq else "CAST(1 AS DOUBLE)"
    w = f"CAST({sql_ident(weight)} AS DOUBLE)" if weight else "CAST(1 AS DOUBLE)"
    keep = f" AND CAST({sql_ident(freq)} AS DOUBLE) >= 1" if freq else ""
    keep += f" AND {w} > 0" if weight else ""
    rows = execute(f"WITH t AS (SELECT {g} AS g, CAST({expr} AS DOUBLE) AS x, {f} AS f, {w} AS w FROM ({base}) "
                   f"WHERE ({expr}) IS NOT NULL{keep}),"
                   f" m AS (SELECT g, sum(f * w * x) / sum(f * w) AS mean FROM t GROUP BY g)"
                   f" SELECT t.g, sum(t.f), any_value(m.mean), sum(t.f * t.w * (t.x - m.mean) * (t.x - m.mean)),"
                   f" min(t.x), max(t.x), sum(t.f * t.w) FROM t JOIN m ON t.g IS NOT DISTINCT FROM m.g GROUP BY t.g"
                   f" ORDER BY t.g NULLS FIRST")
    out = []
    for key, n, mean, css, lo, hi, wsum in rows:
        std = math.sqrt(css / (n - 1)) if n > 1 else None
        out.append((key, GroupStats(int(n), mean, std, lo, hi, float(wsum) if weight else None)))
    return out


def _t_test(diff: float, se: float | None, df: float, h0: float, sides: str) -> tuple[float | None, float | None]:
    from scipy.stats import t as tdist
    if se is None or se == 0 or df <= 0:
        return None, None
    tval = (diff - h0) / se
    if sides == "U":
        p = tdist.sf(tval, df)
    elif sides == "L":
        p = tdist.cdf(tval, df)
    else:
        p = 2 * tdist.sf(abs(tval), df)
    return tval, float(p)


def _mean_cl(mean: float | None, se: float | None, df: float, alpha: float, sides: str):
    from scipy.stats import t as tdist
    if mean is None or se is None or df <= 0:
        return None, None
    if sides == "2":
        q = tdist.ppf(1 - alpha / 2, df)
        return mean - q * se, mean + q * se
    q = tdist.ppf(1 - alpha, df)
    return (mean - q * se, math.inf) if sides == "U" else (-math.inf, mean + q * se)


def _std_cl(std: float | None, df: float, alpha: float, sides: str):
    from scipy.stats import chi2
    if std is None or df <= 0:
        return None, None
    if sides == "2":
        return std * math.sqrt(df / chi2.ppf(1 - alpha / 2, df)), std * math.sqrt(df / chi2.ppf(alpha / 2, df))
    if sides == "U":
        return std * math.sqrt(df / chi2.ppf(1 - alpha, df)), math.inf
    return 0.0, std * math.sqrt(df / chi2.ppf(alpha, df))


def check_options(alpha: float, sides: str) -> None:
    if not 0 < alpha < 1:
        raise StatgridError(f"ALPHA={alpha:g} is not valid: give a value between 0 and 1, such as ALPHA=0.05")
    if sides not in ("2", "U", "L"):
        raise StatgridError(f"SIDES={sides!r} is not valid: give SIDES=2, SIDES=L or SIDES=U")


def one_sample(s: GroupStats, h0: float = 0.0, alpha: float = 0.05, sides: str = "2") -> tuple[MeanCL, TTestRow]:
    """ConfLimits and TTests rows of a one-sample (or paired-difference) test."""
    df = s.n - 1
    lo, hi = _mean_cl(s.mean, s.stderr, df, alpha, sides)
    slo, shi = _std_cl(s.std, df, alpha, sides)
    tval, p = _t_test(s.mean if s.mean is not None else 0.0, s.stderr, df, h0, sides)
    return MeanCL("", s.mean, lo, hi, s.std, slo, shi), TTestRow("", "", df if df > 0 else None, tval, p)


@dataclass
class TwoSample:
    """The difference rows of a two-sample test (first group minus second)."""
    diff: float | None
    pooled_std: float | None
    pooled_se: float | None
    cl: list[MeanCL]            # each group's, then Pooled and Satterthwaite
    tests: list[TTestRow]       # Pooled, Satterthwaite
    folded_f: tuple[float, float, float, float] | None   # num df, den df, F, p


def two_sample(s1: GroupStats, s2: GroupStats, h0: float = 0.0, alpha: float = 0.05, sides: str = "2") -> TwoSample:
    from scipy.stats import f as fdist
    cls = [one_sample(s, 0.0, alpha, sides)[0] for s in (s1, s2)]
    n1, n2 = s1.n, s2.n
    w1, w2 = s1.w, s2.w                      # Σ weights (the counts without a WEIGHT statement)
    diff = s1.mean - s2.mean if s1.mean is not None and s2.mean is not None else None
    v1 = s1.std ** 2 if s1.std is not None else None
    v2 = s2.std ** 2 if s2.std is not None else None
    df_p = n1 + n2 - 2
    sp = se_p = se_s = df_s = None
    if diff is not None and df_p > 0:
        sp = math.sqrt(((n1 - 1) * (v1 or 0.0) + (n2 - 1) * (v2 or 0.0)) / df_p)
        se_p = sp * math.sqrt(1 / w1 + 1 / w2)
    if v1 is not None and v2 is not None:
        a, b = v1 / w1, v2 / w2
        se_s = math.sqrt(a + b)
        df_s = (a + b) ** 2 / (a * a / (n1 - 1) + b * b / (n2 - 1)) if a + b > 0 else None
    lo_p, hi_p = _mean_cl(diff, se_p, df_p, alpha, sides)
    slo, shi = _std_cl(sp, df_p, alpha, sides)
    cls.append(MeanCL("Pooled", diff, lo_p, hi_p, sp, slo, shi))
    lo_s, hi_s = _mean_cl(diff, se_s, df_s or 0, alpha, sides)
    cls.append(MeanCL("Satterthwaite", diff, lo_s, hi_s, None, None, None))
    tests = []
    for method, var, se, df in (("Pooled", "Equal", se_p, df_p), ("Satterthwaite", "Unequal", se_s, df_s)):
        tval, p = _t_test(diff, se, df, h0, sides) if diff is not None and df else (None, None)
        tests.append(TTestRow(method, var, df, tval, p))
    folded = None
    if v1 and v2:
        (vb, nb), (vs, ns) = sorted([(v1, n1), (v2, n2)], reverse=True)
        fval = vb / vs
        folded = (nb - 1, ns - 1, fval, float(min(1.0, 2 * fdist.sf(fval, nb - 1, ns - 1))))
    return TwoSample(diff, sp, se_p, cls, tests, folded)
