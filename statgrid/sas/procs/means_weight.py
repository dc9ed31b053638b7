"""PROC MEANS/SUMMARY's FREQ and WEIGHT statements and the MODE statistic (SAS 9.4 Base Procedures: MEANS,
FREQ Statement, WEIGHT Statement; "Keywords and Formulas").

- FREQ f: an observation stands for floor(f) observations; one with f missing or below 1 is left out. The
  rows are repeated in SQL (a lateral `range`), so every statistic — quantiles, skewness, MODE — and _FREQ_
  (the sum of the frequencies) are those of the repeated data.
- WEIGHT w: an observation with w missing is left out; w < 0 counts as 0; 0 counts in N (EXCLNPWGT leaves
  out w <= 0). SUMWGT = Σw, SUM = Σwx, MEAN = Σwx/Σw, USS = Σwx², CSS = Σw(x − x̄w)², VAR = CSS/d with
  d = n − 1 (VARDEF=DF), n (N), Σw − 1 (WDF), Σw (WEIGHT|WGT); STDERR = s/√Σw; CV = 100·s/x̄w; N and the
  extremes are unweighted. SAS computes neither SKEWNESS, KURTOSIS nor MODE with a WEIGHT statement;
  weighted quantiles are not built here: each is an ERROR naming the statistic.
- MODE: the most frequent value, the lowest of several (no WEIGHT).
"""
from __future__ import annotations

from statgrid.libraries import sql_ident

WEIGHT_REFUSED = ("SKEWNESS", "KURTOSIS", "MODE")        # SAS: not available with a WEIGHT statement
VARDEFS = ("DF", "N", "WDF", "WEIGHT", "WGT")


def weighted_input(filtered: str, freq: str | None, weight: str | None, exclnpwgt: bool) -> str:
    """The rows the statistics are computed over: FREQ's repeated rows, WEIGHT's column __w (>= 0)."""
    sql = filtered
    if weight is not None:
        w = f"CAST({sql_ident(weight)} AS DOUBLE)"
        keep = f"{w} > 0" if exclnpwgt else f"{w} IS NOT NULL"
        sql = f"SELECT *, greatest({w}, 0.0) AS __w FROM ({sql}) WHERE {keep}"
    if freq is not None:
        f = f"CAST({sql_ident(freq)} AS DOUBLE)"
        sql = (f"SELECT __fr.* EXCLUDE (__fn) FROM (SELECT *, CAST(floor({f}) AS BIGINT) AS __fn FROM ({sql}) "
               f"WHERE {f} >= 1) __fr, range(__fr.__fn) __rep")
    return sql


def weighted_aggs(i: int, c: str, stats: set[str], vardef: str, shift: str) -> list[str]:
    """The weighted aggregates of analysis variable i (column expression c) named __v{i}_{STAT}; `shift` is a
    constant near the values (the variable's overall mean) that keeps CSS's one-pass sums from cancelling."""
    has = f"{c} IS NOT NULL"
    sw = f"sum(__w) FILTER (WHERE {has})"
    n = f"count({c})"
    d = f"({c} - {shift})"
    css = f"(sum(__w * {d} * {d}) FILTER (WHERE {has}) - sum(__w * {d}) FILTER (WHERE {has}) ^ 2 / nullif({sw}, 0))"
    div = {"DF": f"nullif({n} - 1, 0)", "N": f"nullif({n}, 0)", "WDF": f"nullif({sw} - 1, 0)"}.get(
        vardef, f"nullif({sw}, 0)")
    var = f"greatest({css}, 0.0) / {div}"
    mean = f"sum(__w * {c}) / nullif({sw}, 0)"
    expr = {"N": n, "NMISS": f"count(*) - {n}", "SUMWGT": sw, "SUM": f"sum(__w * {c})", "MEAN": mean,
            "USS": f"sum(__w * {c} * {c})", "CSS": f"greatest({css}, 0.0)", "VAR": var, "STD": f"sqrt({var})",
            "STDERR": f"sqrt({var} / nullif({sw}, 0))" if vardef == "DF" else "CAST(NULL AS DOUBLE)",
            "CV": f"100 * sqrt({var}) / nullif({mean}, 0)", "MIN": f"min({c})", "MAX": f"max({c})",
            "RANGE": f"max({c}) - min({c})"}
    need = set(stats) | ({"SUMWGT"} if {"T", "PROBT", "LCLM", "UCLM"} & set(stats) else set())
    return [f"{expr[s]} AS __v{i}_{s}" for s in expr if s in need]


def mode_agg(i: int, c: str) -> str:
    """The variable's values and their counts (DuckDB's histogram); mode_of picks SAS's MODE from them."""
    return f"histogram({c}) AS __v{i}_MODE"


def mode_of(hist) -> float | None:
    """The most frequent value, the lowest of several; missing when there is no value."""
    if not hist:
        return None
    items = list(hist.items()) if isinstance(hist, dict) else list(hist)
    items = [(k, n) for k, n in items if k is not None]
    if not items:
        return None
    top = max(n for _, n in items)
    return min(k for k, n in items if n == top)
