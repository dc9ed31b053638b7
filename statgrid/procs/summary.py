"""PROC MEANS / PROC SUMMARY: descriptive statistics by BY and CLASS groups.

Statistics are computed in one aggregate query. Variance and standard deviation use the
divisor n − 1 (SAS VARDEF=DF). Quantiles (median, q1, q3, p1 … p99) follow SAS's QNTLDEF=
definition 1–5, default 5 (the empirical distribution function with averaging); procs/_quantile.py
gives their aggregate, one list per variable and group.

Output data set (out=): one row per group and analysis variable — the BY/CLASS columns,
`_type_` (which CLASS variables define the row, as SAS _TYPE_), `_freq_` (rows in the group),
`variable`, then one column per statistic.
"""
from __future__ import annotations

import itertools
from typing import Sequence

from statgrid.errors import StatgridError
from statgrid.procs._base import (ResultTable, as_list, check_columns, dataset_types, is_numeric, procedure, qi,
                                  render_table)
from statgrid.procs._quantile import DEFAULT_QNTLDEF, check_qntldef, quantiles_sql

# name → (SQL aggregate over {c}, listing label). {c} is the column cast to DOUBLE.
STATISTICS: dict[str, tuple[str, str]] = {
    "n": ("count({c})", "N"),
    "nmiss": ("count(*) - count({c})", "N Miss"),
    "mean": ("avg({c})", "Mean"),
    "std": ("stddev_samp({c})", "Std Dev"),
    "var": ("var_samp({c})", "Variance"),
    "stderr": ("stddev_samp({c}) / sqrt(count({c}))", "Std Error"),
    "min": ("min({c})", "Minimum"),
    "max": ("max({c})", "Maximum"),
    "range": ("max({c}) - min({c})", "Range"),
    "sum": ("sum({c})", "Sum"),
    "uss": ("sum({c} * {c})", "USS"),
    "css": ("var_samp({c}) * (count({c}) - 1)", "CSS"),
    "cv": ("100 * stddev_samp({c}) / avg({c})", "Coeff of Variation"),
    "skewness": ("skewness({c})", "Skewness"),
    "kurtosis": ("kurtosis({c})", "Kurtosis"),
}
# name → (percentile, listing label)
QUANTILES: dict[str, tuple[int, str]] = {
    "p1": (1, "1st Pctl"), "p5": (5, "5th Pctl"), "p10": (10, "10th Pctl"),
    "q1": (25, "Lower Quartile"), "median": (50, "Median"), "q3": (75, "Upper Quartile"),
    "p90": (90, "90th Pctl"), "p95": (95, "95th Pctl"), "p99": (99, "99th Pctl"),
}
DEFAULT_STATS = ("n", "mean", "std", "min", "max")   # PROC MEANS default
ALL_STATS = tuple(STATISTICS) + tuple(QUANTILES)


def _stat_list(stats: str | Sequence[str] | None) -> list[str]:
    chosen = [st.lower() for st in as_list(stats)] or list(DEFAULT_STATS)
    bad = [st for st in chosen if st not in ALL_STATS]
    if bad:
        raise StatgridError(f"statistic {bad[0]!r} is not known; choose from: {', '.join(ALL_STATS)}.")
    return chosen


def summary_sql(scan: str, var: list[str], groups: list[str], classes: list[str], stats: list[str],
                nway: bool, qntldef: int = DEFAULT_QNTLDEF) -> str:
    """One aggregate query: per group, one column `<var>__<stat>` per variable and statistic."""
    aggs = []
    qstats = [st for st in stats if st in QUANTILES]
    for v in var:
        c = f"CAST({qi(v)} AS DOUBLE)"
        aggs += [f"{STATISTICS[st][0].format(c=c)} AS {qi(f'{v}__{st}')}" for st in stats if st in STATISTICS]
        if qstats:
            aggs.append(f"{quantiles_sql(c, [QUANTILES[st][0] for st in qstats], qntldef)} AS {qi(f'{v}__quantiles')}")
    keys = groups + classes
    k = len(classes)
    if classes and not nway:
        # SAS _TYPE_: bit i (from the right, last CLASS variable = bit 0) set when that variable
        # defines the row. DuckDB's GROUPING() sets the bit when a column is *not* grouped.
        type_expr = f"{(1 << k) - 1} - GROUPING({', '.join(qi(c) for c in classes)})"
        sets = ", ".join("(" + ", ".join(qi(c) for c in groups + [cl for i, cl in enumerate(classes)
                                                                   if mask >> (k - 1 - i) & 1]) + ")"
                         for mask in range((1 << k) - 1, -1, -1))
        group_by = f"GROUP BY GROUPING SETS ({sets})"
    else:
        type_expr = str((1 << k) - 1)
        group_by = f"GROUP BY {', '.join(qi(c) for c in keys)}" if keys else ""
    select = [qi(c) for c in keys] + [f"{type_expr} AS _type_", "count(*) AS _freq_"] + aggs
    # SAS orders missing values first in every BY and CLASS variable
    order = "ORDER BY " + ", ".join([f"{qi(c)} NULLS FIRST" for c in groups] + ["_type_"]
                                    + [f"{qi(c)} NULLS FIRST" for c in classes])
    return f"SELECT {', '.join(select)} FROM {scan} {group_by} {order}"


def _run(s, data, var, by, class_, stats, out, nway, print_, proc_label, qntldef):
    qntldef = check_qntldef(qntldef)
    src, types = dataset_types(s, data)
    names = list(types)
    groups = check_columns(as_list(by), names, "BY", str(src))
    classes = check_columns(as_list(class_), names, "CLASS", str(src))
    if var is None:
        var_cols = [c for c, t in types.items() if is_numeric(t) and c not in groups + classes]
        if not var_cols:
            raise StatgridError(f"{src} has no numeric variables to analyse; name them with var=[...].")
    else:
        var_cols = check_columns(as_list(var), names, "VAR", str(src))
        char = [v for v in var_cols if not is_numeric(types[v])]
        if char:
            raise StatgridError(f"VAR variable {char[0]!r} in {src} is {types[char[0]]}, not numeric; "
                                "analyse numeric variables, or count values with freq().")
    stat_names = _stat_list(stats)
    overlap = set(groups) & set(classes)
    taken = {c.lower() for c in groups + classes} & ({"_type_", "_freq_", "variable"} | set(stat_names))
    if overlap or taken:
        what = (f"{sorted(overlap)[0]!r} is both a BY and a CLASS variable" if overlap else
                f"BY/CLASS variable {sorted(taken)[0]!r} has the name of a result column")
        raise StatgridError(f"{what}; use each variable in one role, or rename it first with data(..., rename=...).")
    wide = s.fetch_arrow(summary_sql(src.scan_sql(), var_cols, groups, classes, stat_names, nway, qntldef))
    long_rows = _to_long(wide.to_pylist(), groups + classes, var_cols, stat_names)
    result = ResultTable(groups + classes + ["_type_", "_freq_", "variable"] + stat_names, long_rows)
    if print_:
        s.log.listing(_listing(result, groups, classes, stat_names, proc_label))
    if out:
        result.out = s.write_table(out, result.to_arrow())
    return result


def _to_long(rows: list[dict], keys: list[str], var: list[str], stats: list[str]) -> list[list]:
    out = []
    qstats = [st for st in stats if st in QUANTILES]
    for row in rows:
        for v in var:
            qvals = row.get(f"{v}__quantiles") or [None] * len(qstats)
            qmap = dict(zip(qstats, qvals))
            values = [qmap[st] if st in QUANTILES else row[f"{v}__{st}"] for st in stats]
            out.append([row[k] for k in keys] + [row["_type_"], row["_freq_"], v] + values)
    return out


def _listing(t: ResultTable, groups, classes, stats, proc_label) -> str:
    labels = [STATISTICS[st][1] if st in STATISTICS else QUANTILES[st][1] for st in stats]
    idx = {c: i for i, c in enumerate(t.columns)}
    cols = classes + (["N Obs"] if classes else []) + ["Variable"] + labels
    parts = []
    # rows arrive ordered by the BY variables, so each BY group is one run of rows
    for key, run in itertools.groupby(t.rows, key=lambda r: tuple(r[idx[g]] for g in groups)):
        rows = list(run)
        title = f"The {proc_label} Procedure"
        if groups:
            title += "\n\n" + " ".join(f"{g}={v}" for g, v in zip(groups, key))
        body = [[r[idx[c]] for c in classes] + ([r[idx["_freq_"]]] if classes else []) + [r[idx["variable"]]]
                + [r[idx[st]] for st in stats] for r in rows]
        parts.append(render_table(cols, body, title=title))
    return "\n".join(parts) if parts else f"The {proc_label} Procedure\n\nNo observations.\n"


@procedure("PROCEDURE MEANS")
def means(s, data: str, var: str | Sequence[str] | None = None, by: str | Sequence[str] | None = None,
          class_: str | Sequence[str] | None = None, stats: str | Sequence[str] | None = None,
          out: str | None = None, nway: bool = True, print: bool = True,
          qntldef: int = DEFAULT_QNTLDEF) -> ResultTable:
    """Statistics of numeric `var` (default: all numeric) per BY/CLASS group; prints a listing.

    stats: any of n nmiss mean std var stderr min max range sum uss css cv skewness kurtosis
    median q1 q3 p1 p5 p10 p90 p95 p99 (default n mean std min max). nway=False adds the
    rows of every CLASS combination (and the overall row), marked by `_type_`. qntldef: SAS's
    quantile definition 1–5 (QNTLDEF=, default 5; see procs/_quantile.py).
    """
    return _run(s, data, var, by, class_, stats, out, nway, print, "MEANS", qntldef)


@procedure("PROCEDURE SUMMARY")
def summary(s, data: str, var: str | Sequence[str] | None = None, by: str | Sequence[str] | None = None,
            class_: str | Sequence[str] | None = None, stats: str | Sequence[str] | None = None,
            out: str | None = None, nway: bool = False, print: bool = False,
            qntldef: int = DEFAULT_QNTLDEF) -> ResultTable:
    """Like `means`, with SAS PROC SUMMARY defaults: every CLASS combination, no listing."""
    return _run(s, data, var, by, class_, stats, out, nway, print, "SUMMARY", qntldef)
