"""PROC RANK and PROC STDIZE: per-variable ranks and standardisation, within BY groups, in SQL
(window functions), so they run in the engine under MEMSIZE on data of any size.

RANK follows SAS's definitions: missing values get a missing rank and do not count in n;
TIES=MEAN (default) gives tied values the mean of their ranks, LOW the smallest, HIGH the
largest, DENSE consecutive integers; GROUPS=g gives floor(rank·g/(n+1)); FRACTION rank/n and
PERCENT 100·rank/n.
"""
from __future__ import annotations

from typing import Sequence

from statgrid.errors import StatgridError
from statgrid.procs._base import as_list, check_columns, dataset_types, is_numeric, procedure, qi

TIES = ("mean", "low", "high", "dense")
STDIZE = {   # method → (location SQL, scale SQL) over the window w
    "std": ("avg({v}) OVER w", "stddev_samp({v}) OVER w"),
    "range": ("min({v}) OVER w", "max({v}) OVER w - min({v}) OVER w"),
    "mean": ("avg({v}) OVER w", "1"),
    "median": ("median({v}) OVER w", "1"),
    "maxabs": ("0", "max(abs({v})) OVER w"),
    "iqr": ("median({v}) OVER w", "quantile_cont({v}, 0.75) OVER w - quantile_cont({v}, 0.25) OVER w"),
    "mad": ("median({v}) OVER w", "mad({v}) OVER w"),
}


def _check(s, data, var, by, role="VAR"):
    src, types = dataset_types(s, data)
    names = list(types)
    groups = check_columns(as_list(by), names, "BY", str(src))
    variables = check_columns(as_list(var), names, role, str(src)) if var else \
        [c for c, t in types.items() if is_numeric(t) and c not in groups]
    if not variables:
        raise StatgridError(f"{src} has no numeric variables; name them with var=[...].")
    for v in variables:
        if not is_numeric(types[v]):
            raise StatgridError(f"{role} variable {v!r} in {src} is {types[v]}, not numeric.")
    return src, names, groups, variables


@procedure("PROCEDURE RANK")
def rank(s, data: str, out: str, var: str | Sequence[str] | None = None, ranks: str | Sequence[str] | None = None,
         by: str | Sequence[str] | None = None, ties: str = "mean", groups: int | None = None,
         descending: bool = False, fraction: bool = False, percent: bool = False):
    """Rank `var` within BY groups into `out`. Without ranks=, the variables' values are replaced
    by their ranks (as SAS does); ranks=[...] names new columns instead. Returns the DatasetRef."""
    src, names, by_cols, variables = _check(s, data, var, by)
    ties = ties.lower()
    if ties not in TIES:
        raise StatgridError(f"ties={ties!r} is not one of {', '.join(TIES)}.")
    if groups is not None and groups < 1:
        raise StatgridError(f"groups={groups} is not allowed: use 1 or more quantile groups.")
    if sum(bool(x) for x in (groups, fraction, percent)) > 1:
        raise StatgridError("use one of groups=, fraction=True, percent=True.")
    targets = as_list(ranks) or variables
    if len(targets) != len(variables):
        raise StatgridError(f"ranks={as_list(ranks)} names {len(targets)} columns for {len(variables)} variables; "
                            "give one rank name per variable.")
    exprs = {}
    order = "DESC" if descending else "ASC"
    for v, t in zip(variables, targets):
        part = ", ".join([*(qi(b) for b in by_cols), f"{qi(v)} IS NULL"])
        w = f"(PARTITION BY {part} ORDER BY {qi(v)} {order})"
        low = f"rank() OVER {w}"
        tie_n = f"count(*) OVER (PARTITION BY {', '.join([*(qi(b) for b in by_cols), qi(v)])})"
        r = {"low": low, "high": f"({low} + {tie_n} - 1)", "mean": f"({low} + ({tie_n} - 1) / 2.0)",
             "dense": f"dense_rank() OVER {w}"}[ties]
        n = f"count({qi(v)}) OVER (PARTITION BY {', '.join(qi(b) for b in by_cols) or '1'})"
        if groups:
            r = f"floor(({r}) * {groups} / ({n} + 1))"
        elif fraction:
            r = f"({r}) / {n}"
        elif percent:
            r = f"100.0 * ({r}) / {n}"
        exprs[t] = f"CASE WHEN {qi(v)} IS NULL THEN NULL ELSE CAST({r} AS DOUBLE) END AS {qi(t)}"
    numbered = src.scan_sql(row_numbers=True)
    select = [exprs.pop(c) if c in exprs else qi(c) for c in names] + list(exprs.values())
    return s.write(out, f"SELECT {', '.join(select)} FROM {numbered} ORDER BY file_row_number")


@procedure("PROCEDURE STDIZE")
def standardize(s, data: str, out: str, var: str | Sequence[str] | None = None,
                by: str | Sequence[str] | None = None, method: str = "std", replace: bool = False,
                pctldef: int = 5):
    """Standardise `var` within BY groups: (x − location) / scale, with SAS STDIZE's methods
    std (mean, std), range (min, range), mean, median, maxabs, iqr (quartiles by SAS's PCTLDEF=, default
    5 as STDIZE's), mad. replace=True puts 0 (the location) where a value is missing. A scale of 0 (a
    constant group) leaves x − location."""
    src, names, by_cols, variables = _check(s, data, var, by)
    method = method.lower()
    if method not in STDIZE:
        raise StatgridError(f"method={method!r} is not one of {', '.join(STDIZE)}.")
    loc_t, scale_t = STDIZE[method]
    w = f"w AS (PARTITION BY {', '.join(qi(b) for b in by_cols) or '1'})"
    numbered = src.scan_sql(row_numbers=True)
    exprs = {}
    source = f"{numbered} AS t"
    if method == "iqr":
        # the quartiles by SAS's PCTLDEF= (STDIZE's default 5), one aggregate per BY group joined back
        from statgrid.procs._quantile import quantiles_sql
        qs = ", ".join(f"{quantiles_sql(f'CAST({qi(v)} AS DOUBLE)', [25, 50, 75], pctldef)} AS {qi('__q_' + v)}"
                       for v in variables)
        keys = ", ".join(qi(b) for b in by_cols)
        grouped = f"SELECT {keys + ', ' if keys else ''}{qs} FROM {numbered}" + (f" GROUP BY {keys}" if keys else "")
        on = " AND ".join(f"t.{qi(b)} IS NOT DISTINCT FROM q.{qi(b)}" for b in by_cols) or "TRUE"
        source = f"{numbered} AS t JOIN ({grouped}) AS q ON {on}"
    for v in variables:
        if method == "iqr":
            qv = f"q.{qi('__q_' + v)}"
            loc, scale = f"{qv}[2]", f"({qv}[3] - {qv}[1])"
        else:
            loc, scale = loc_t.format(v=f"t.{qi(v)}"), scale_t.format(v=f"t.{qi(v)}")
        z = f"(CAST(t.{qi(v)} AS DOUBLE) - ({loc})) / coalesce(nullif({scale}, 0), 1)"
        exprs[v] = f"{'coalesce(' + z + ', 0)' if replace else z} AS {qi(v)}"
    select = [exprs.get(c, f"t.{qi(c)}") for c in names]
    return s.write(out, f"SELECT {', '.join(select)} FROM {source} WINDOW {w} ORDER BY t.file_row_number")
