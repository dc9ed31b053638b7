"""SAS's five quantile definitions (QNTLDEF= in MEANS/SUMMARY/TABULATE, PCTLDEF= in UNIVARIATE)
as engine aggregates — the one place every procedure gets its quantiles from.

With n non-missing values sorted x(1) ≤ … ≤ x(n) and the t-th percentile, p = t/100, write
np = j + g (j the integer part, g the fraction); definition 4 uses (n+1)p = j + g instead:

  1  weighted average at x(np):            (1-g)·x(j) + g·x(j+1), x(0) taken as x(1)
  2  observation numbered closest to np:   x(j) if g < ½, x(j+1) if g > ½; at g = ½ x(j) when j
                                           is even, x(j+1) when j is odd
  3  empirical distribution function:      x(j) if g = 0, else x(j+1)
  4  weighted average aimed at x((n+1)p):  (1-g)·x(j) + g·x(j+1), x(n+1) taken as x(n)
  5  EDF with averaging (SAS's default):   (x(j) + x(j+1))/2 if g = 0, else x(j+1)

Sources: SAS/STAT User's Guide, PROC BOXPLOT "Percentile Definitions", and Base SAS Procedures
Guide: Statistical Procedures, PROC UNIVARIATE "Calculating Percentiles" (the table PROC MEANS
"Keywords and Formulas" refers to). They are Hyndman & Fan's (1996) types 4, 3, 1, 6 and 2, i.e.
numpy.percentile's methods 'interpolated_inverted_cdf', 'closest_observation', 'inverted_cdf',
'weibull' and 'averaged_inverted_cdf'; tests/unit/test_quantiles.py checks against those.

Ranks are exact: the percentiles are whole numbers t, so j and g come from n·t // 100 and
n·t % 100 in integer arithmetic (in floating point n·0.29 is 28.999…). Ranks below 1 or above n
are clamped (x(0) = x(1), x(n+1) = x(n)), so t = 0 gives the minimum and t = 100 the maximum under
every definition. Two order statistics are combined as numpy's lerp does (a + (b-a)·w, or
b - (b-a)·(1-w) when w ≥ ½), so definition 5 agrees with numpy to the bit.

How, and why two ways (timed by benchmarks/quantiles.py; like DuckDB's quantile_cont, used
before, both hold a group's values in memory):
- Definitions 3 and 5 (the default) come from DuckDB's selection aggregate quantile_disc, which
  picks x(max(1, ⌈n·q⌉)) (Interpolator<true>::Index in DuckDB's
  src/core_functions/aggregate/holistic/quantile.cpp). np is a multiple of 1/100, so at
  q = p − ε it picks x(⌈np⌉) and at q = p + ε x(⌊np⌋+1) whenever n·ε < 1/100: with ε = 10⁻¹²
  that holds for groups of up to 10⁹ values, and the floating-point error of n·q (about
  10⁻¹⁶·n) stays far inside the nudge — without it quantile_disc(x, 0.55::DOUBLE) over 1 … 100
  picks 56, not 55, as 100·0.55 is 55.00000000000001 in floating point. Definition 3 is
  x(⌈np⌉), definition 5 the mean of the two (equal unless np is whole). One aggregate state per
  variable and group, no sort: as fast as the quantile_cont it replaces.
- Definitions 1, 2 and 4 need x(⌊np⌋) or x(⌊(n+1)p⌋), which no fixed probability selects for
  every n: they take ranks from each group's sorted list of values (list(x ORDER BY x)), about
  3–4× the time.
A variable's quantiles are one expression, a list (list_transform over the percentiles; DuckDB
≥ 1.3 lambda syntax), not one expression per percentile: each refers to the aggregate several
times, and DuckDB's planning time grows with the size of the expressions — 50 variables × 11
percentiles as separate expressions took 0.4–2 s to plan, as lists 0.05–0.3 s.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Sequence

from statgrid.errors import StatgridError

QNTLDEFS = (1, 2, 3, 4, 5)
DEFAULT_QNTLDEF = 5     # SAS's default in MEANS, SUMMARY, TABULATE and UNIVARIATE
EPSILON = Decimal("1e-12")     # the nudge of q around p for quantile_disc (see above)


def check_qntldef(qntldef: object) -> int:
    """The definition number, or a StatgridError naming the bad value and the allowed ones."""
    if isinstance(qntldef, bool) or not isinstance(qntldef, int) or qntldef not in QNTLDEFS:
        raise StatgridError(f"qntldef={qntldef!r} is not a quantile definition; use qntldef=1, 2, 3, 4 or 5 "
                            f"(as SAS QNTLDEF=; {DEFAULT_QNTLDEF}, the default, is the empirical distribution "
                            "function with averaging).")
    return qntldef


def _check_percent(t: object) -> int:
    if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= 100:
        raise StatgridError(f"percentile {t!r} must be a whole number from 0 to 100.")
    return t


def _ranks(qntldef: int, t: str, n: str) -> tuple[str, str, str | None]:
    """SQL for (rank of the lower order statistic, rank of the upper one, weight of the upper one)
    of percentile `t` under definition 1, 2 or 4, in a group of `n` values (t and n SQL
    expressions). The weight is None when the definition picks one order statistic."""
    m = f"({n} + 1) * {t}" if qntldef == 4 else f"{n} * {t}"
    j, r = f"({m} // 100)", f"({m} % 100)"

    def clamp(rank: str) -> str:
        return f"least(greatest({rank}, 1), {n})"

    if qntldef == 2:
        rank = clamp(f"CASE WHEN {r} < 50 OR ({r} = 50 AND {j} % 2 = 0) THEN {j} ELSE {j} + 1 END")
        return rank, rank, None
    return clamp(j), clamp(f"{j} + 1"), f"({r} / 100.0)"


def _lerp(lo: str, hi: str, w: str) -> str:
    """(1-w)·lo + w·hi in SQL, written as numpy's lerp; equal order statistics give lo exactly
    (also when they are infinite)."""
    return (f"CASE WHEN {lo} = {hi} OR {w} = 0 THEN {lo} WHEN {w} >= 0.5 THEN {hi} - ({hi} - {lo}) * (1 - {w}) "
            f"ELSE {lo} + ({hi} - {lo}) * {w} END")


def _nudged(percents: Sequence[int]) -> str:
    """[p₁ − ε, p₁ + ε, p₂ − ε, …] as exact decimal literals, clamped to [0, 1]."""
    probs = [min(max(Decimal(t) / 100 + d, Decimal(0)), Decimal(1)) for t in percents for d in (-EPSILON, EPSILON)]
    return "[" + ", ".join(f"{q:f}" for q in probs) + "]"


def quantiles_sql(c: str, percents: Sequence[int], qntldef: int = DEFAULT_QNTLDEF) -> str:
    """One SQL aggregate expression for the select list of a GROUP BY query: the list of the
    quantiles at `percents` (whole numbers 0–100, in that order) of the DOUBLE expression `c` over
    the group's non-missing values under SAS definition `qntldef`; an element is NULL when the
    group has none (see the module docstring for how)."""
    qntldef = check_qntldef(qntldef)
    percents = [_check_percent(t) for t in percents]
    if not percents:
        return "CAST([] AS DOUBLE[])"
    # lambda parameters are named so that no column of the data (which `c` reads) is shadowed
    if qntldef in (3, 5):
        disc = f"quantile_disc({c}, {_nudged(percents)})"       # x(⌈np⌉), x(⌊np⌋+1) for each p in turn
        lo, hi = f"{disc}[2 * __qi + 1]", f"{disc}[2 * __qi + 2]"
        # definition 5: _lerp at w = ½, written out as it has half the references to the aggregate
        pick = lo if qntldef == 3 else f"CASE WHEN {lo} = {hi} THEN {lo} ELSE {hi} - ({hi} - {lo}) * 0.5 END"
        return f"list_transform(range({len(percents)}), lambda __qi: {pick})"
    ordered, n = f"list({c} ORDER BY {c}) FILTER (WHERE {c} IS NOT NULL)", f"count({c})"
    lo, hi, w = _ranks(qntldef, "__qt", n)
    pick = f"{ordered}[{lo}]" if w is None else _lerp(f"{ordered}[{lo}]", f"{ordered}[{hi}]", w)
    return f"list_transform([{', '.join(map(str, percents))}], lambda __qt: {pick})"
