"""PROC TABULATE: multi-way summary tables — class variables crossed down the rows and across
the columns, each cell holding counts or statistics of analysis variables.

`tabulate(s, data, rows="region product", cols="quarter", var="sales", stats="sum mean")` is
SAS's `TABLE region*product ALL, (quarter ALL)*sales*(SUM MEAN);` with `CLASS region product
quarter; VAR sales;`. The row class variables are crossed with each other, so are the column
ones; all=True adds the ALL margins: a row total (the row classes collapsed), a column total (the
column classes collapsed) and the grand total.

Method: one aggregate query in the engine. GROUP BY GROUPING SETS computes every cell type at
once — (rows + cols), (rows), (cols) and () — and window functions over those aggregates give
each cell the grand total that PCTN and PCTSUM divide by. The data never leave the engine; only
the cells do.

Choices (where SAS leaves room):
- Missing class values: as SAS, a row with a missing value in ANY class variable is left out of
  the whole table (every cell, margin and denominator) unless missing=True, which makes missing
  a level of its own (shown as '.').
- Statistics: n nmiss sum mean std min max range pctn pctsum and the quantiles median q1 q3
  p1 p5 p10 p90 p95 p99. Std has divisor n − 1 (VARDEF=DF) and is missing when n < 2.
  Quantiles follow SAS's QNTLDEF= definition 1–5 (qntldef=, default 5: the empirical
  distribution function with averaging), as in MEANS (procs/_quantile.py). Without var= only n
  (rows in the cell) and pctn are allowed; with var=, n and pctn count the variable's
  non-missing values, as `sales*n` does in SAS.
- PCTN / PCTSUM denominator: the grand total of the whole table — all rows used in the table
  (for pctsum, the sum of the variable over them) — SAS's default denominator for a table
  without a <denominator> definition. So the grand-total cell is 100 and the column margin
  gives each row's share. A zero denominator gives a missing percent.
- Empty input (no rows, or none left after dropping missing class values): no table. The log
  has a NOTE saying why, the listing says 'No observations.', and the result (and out=) has the
  columns with no rows.
- Listing: row class levels down the left (crossed variables side by side), column levels —
  'a / b' when crossed — and All across the top, one sub-column per statistic. A combination
  absent from the data prints '.' in every statistic (N too, as SAS prints an empty cell) and
  has no row in the result.
- format='w.d' (SAS FORMAT=w.d) prints every cell with d decimals in at least w characters; it
  changes the listing only, never the result's values.

Result (as SAS's OUT=, in long form): one row per cell with the class variables (None where
ALL collapsed them), `_TYPE_` — a string of 0/1, one character per class variable in the order
rows + cols, 1 when that variable defines the cell — and one column per statistic: `N`, `PctN`
without var=, `<var>_<Stat>` (e.g. `sales_Mean`, `sales_PctSum`) with it. Rows are sorted by
_TYPE_ then the class values, missing first, as SAS sorts OUT= data sets.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from statgrid.errors import StatgridError
from statgrid.procs import summary as _summary
from statgrid.procs._quantile import DEFAULT_QNTLDEF, check_qntldef, quantiles_sql
from statgrid.procs._base import (ResultTable, as_list, check_columns, dataset_types, format_value, is_numeric,
                                  procedure, qi, render_table)

# statistic → (SQL aggregate of the DOUBLE column {c}, name in result columns and headings); the
# aggregates MEANS also has come from summary.STATISTICS, so both procedures compute them alike
_NAMES = {"n": "N", "nmiss": "NMiss", "sum": "Sum", "mean": "Mean", "std": "Std", "min": "Min", "max": "Max",
          "range": "Range"}
STATISTICS: dict[str, tuple[str, str]] = {
    **{k: (_summary.STATISTICS[k][0], name) for k, name in _NAMES.items()},
    "pctn": (_summary.STATISTICS["n"][0], "PctN"),          # divided by the grand total below
    "pctsum": (_summary.STATISTICS["sum"][0], "PctSum"),
}
# quantile statistic → (percentile, name): the ones MEANS has (summary.QUANTILES), named as SAS's
# TABULATE keywords (MEDIAN, Q1, P90, …)
QUANTILE_STATS: dict[str, tuple[int, str]] = {k: (pct, k.capitalize()) for k, (pct, _) in _summary.QUANTILES.items()}
STAT_NAMES = {k: name for k, (_, name) in {**STATISTICS, **QUANTILE_STATS}.items()}
COUNT_STATS = ("n", "pctn")                 # the statistics a table without var= can show


def _stat_list(stats: str | Sequence[str] | None, has_var: bool) -> list[str]:
    chosen = list(dict.fromkeys(st.lower() for st in as_list(stats))) or ["n"]
    for st in chosen:
        if st not in STAT_NAMES:
            raise StatgridError(f"statistic {st!r} is not known; choose from: {', '.join(STAT_NAMES)}.")
        if not has_var and st not in COUNT_STATS:
            raise StatgridError(f"statistic {st!r} needs an analysis variable: name one with var=..., "
                                f"or use {' or '.join(COUNT_STATS)} (the only statistics without var=).")
    return chosen


def _cell_format(fmt: str | None) -> Callable[[Any], str]:
    if fmt is None:
        return format_value
    m = re.fullmatch(r"\s*(\d+)\.(\d*)\s*", str(fmt))
    if not m or int(m.group(1)) < 1:
        raise StatgridError(f"format={fmt!r} is not a w.d format; use e.g. format='8.2' (width 8, 2 decimals) "
                            "or format='6.' (whole numbers).")
    width, dec = int(m.group(1)), int(m.group(2) or 0)
    return lambda v: ("." if v is None or math.isnan(v) else f"{float(v):.{dec}f}").rjust(width)


def tabulate_sql(scan: str, rows: list[str], cols: list[str], var: list[str], stats: list[str],
                 all_margins: bool, missing: bool, qntldef: int = DEFAULT_QNTLDEF) -> tuple[str, list[str]]:
    """The one query that computes every cell, and its statistic column names."""
    classes = rows + cols
    k = len(classes)
    keys = ", ".join(qi(c) for c in classes)
    # DuckDB's GROUPING(a, b, …) sets a bit (first variable = highest) for each variable *collapsed*
    grand = (1 << k) - 1
    sets = [classes, rows, cols, []] if all_margins else [classes, []]     # () always: the denominators
    unique = list(dict.fromkeys(tuple(st) for st in sets))
    group_by = "GROUPING SETS (" + ", ".join("(" + ", ".join(qi(c) for c in st) + ")" for st in unique) + ")"
    type_expr = " || ".join(f"CASE WHEN GROUPING({qi(c)}) = 0 THEN '1' ELSE '0' END" for c in classes)

    def total(agg: str) -> str:
        return f"max({agg}) FILTER (WHERE GROUPING({keys}) = {grand}) OVER ()"

    select, names, outer = [], [], []
    targets = [(None, "count(*)")] if not var else [(v, f"CAST({qi(v)} AS DOUBLE)") for v in var]
    qstats = [st for st in stats if st in QUANTILE_STATS]
    for i, (v, c) in enumerate(targets):
        # a variable's quantiles: one list per cell in the inner query, its elements in the outer one
        if qstats:                  # (_stat_list allows them only with var=)
            select.append(f"{quantiles_sql(c, [QUANTILE_STATS[st][0] for st in qstats], qntldef)} AS __q{i}")
        quantiles = {st: f"__q{i}[{j + 1}]" for j, st in enumerate(qstats)}
        for st in stats:
            name = STAT_NAMES[st] if v is None else f"{v}_{STAT_NAMES[st]}"
            names.append(name)
            if st in quantiles:
                outer.append(f"{quantiles[st]} AS {qi(name)}")
                continue
            agg = STATISTICS[st][0].format(c=c) if v else "count(*)"
            if st in ("pctn", "pctsum"):
                agg = f"100.0 * {agg} / nullif({total(agg)}, 0)"
            select.append(f"{agg} AS {qi(name)}")
            outer.append(qi(name))
    where = "" if missing else " WHERE " + " AND ".join(f"{qi(c)} IS NOT NULL" for c in classes)
    keep = "TRUE" if all_margins else f"GROUPING({keys}) < {grand}"
    inner = (f"SELECT {keys}, {type_expr} AS _TYPE_, {keep} AS __keep, {total('count(*)')} AS __rows, "
             f"{', '.join(select)} FROM {scan}{where} GROUP BY {group_by}")
    out_cols = ", ".join([qi(c) for c in classes] + ["_TYPE_"] + outer)
    order = ", ".join(["_TYPE_"] + [f"{qi(c)} NULLS FIRST" for c in classes])
    return f"SELECT {out_cols} FROM ({inner}) WHERE __keep AND __rows > 0 ORDER BY {order}", names


@procedure("PROCEDURE TABULATE")
def tabulate(s, data: str, rows: str | Sequence[str], cols: str | Sequence[str] | None = None,
             var: str | Sequence[str] | None = None, stats: str | Sequence[str] = "n", all: bool = True,
             missing: bool = False, format: str | None = None, out: str | None = None,
             print: bool = True, qntldef: int = DEFAULT_QNTLDEF) -> ResultTable:
    """A table of `rows` (class variables crossed down) by `cols` (crossed across) whose cells hold
    `stats` — any of n nmiss sum mean std min max range pctn pctsum median q1 q3 p1 p5 p10 p90 p95
    p99; without var= only n and pctn — of the numeric analysis variables `var`. all=True adds the
    ALL margins; missing=True makes missing class values a level; format='w.d' formats the printed
    cells; qntldef= is SAS's quantile definition 1–5 (QNTLDEF=, default 5); out= writes the
    long-form result (see the module docstring) as a data set."""
    qntldef = check_qntldef(qntldef)
    src, types = dataset_types(s, data)
    names = list(types)
    row_cls = check_columns(as_list(rows), names, "CLASS", str(src))
    col_cls = check_columns(as_list(cols), names, "CLASS", str(src))
    variables = list(dict.fromkeys(check_columns(as_list(var), names, "VAR", str(src))))
    if not row_cls:
        raise StatgridError("rows= names no class variable; e.g. rows='region' or rows=['region', 'product'].")
    classes = row_cls + col_cls
    twice = sorted({c for c in classes if classes.count(c) > 1})
    if twice:
        raise StatgridError(f"class variable {twice[0]!r} is used twice in rows=/cols=; cross each variable once.")
    both = [v for v in variables if v in classes]
    if both:
        raise StatgridError(f"{both[0]!r} is both a class variable and an analysis variable (var=); "
                            "use each variable in one role.")
    char = [v for v in variables if not is_numeric(types[v])]
    if char:
        raise StatgridError(f"VAR variable {char[0]!r} in {src} is {types[char[0]]}, not numeric; "
                            "analyse numeric variables, or count its values by making it a class variable.")
    stat_names = _stat_list(stats, bool(variables))
    fmt = _cell_format(format)
    sql, stat_cols = tabulate_sql(src.scan_sql(), row_cls, col_cls, variables, stat_names, all, missing,
                                   qntldef)
    taken = {c.lower() for c in classes} & {n.lower() for n in ["_TYPE_", *stat_cols]}
    if taken:
        raise StatgridError(f"class variable {min(taken)!r} has the name of a result column; "
                            "rename it first with data(..., rename=...).")

    table = s.fetch_arrow(sql)
    result = ResultTable(table.column_names, [list(r.values()) for r in table.to_pylist()],
                         stats={"rows": row_cls, "cols": col_cls, "statistics": stat_cols})
    if not result.rows:
        dropped = ""
        if not missing and s.execute(f"SELECT count(*) FROM {src.scan_sql()}").fetchall()[0][0]:
            dropped = " left after dropping rows with a missing class value (missing=True keeps them)"
        s.log.note(f"No observations in {src}{dropped}: the table is empty.")
    if print:
        s.log.listing(_listing(result, row_cls, col_cls, variables, stat_names, stat_cols, all, fmt))
    if out:
        result.out = s.write_table(out, table)
    return result


def _listing(t: ResultTable, rows: list[str], cols: list[str], var: list[str], stats: list[str],
             stat_cols: list[str], all_margins: bool, fmt: Callable[[Any], str]) -> str:
    title = "The TABULATE Procedure"
    if not t.rows:
        return f"{title}\n\nNo observations.\n"
    nr, nc = len(rows), len(cols)
    full = "1" * (nr + nc)
    cells: dict[tuple, dict] = {}
    for rec in t.to_dicts():
        typ = rec["_TYPE_"]
        rkey = tuple(rec[c] for c in rows) if typ[:nr] == "1" * nr else None      # None = ALL
        ckey = tuple(rec[c] for c in cols) if typ[nr:] == "1" * nc else None
        cells[(rkey, ckey)] = rec

    def level_order(keys):
        return sorted(set(keys), key=lambda key: tuple((v is not None, v) for v in key))

    full_keys = [k for k, rec in cells.items() if rec["_TYPE_"] == full]
    row_keys = level_order(rk for rk, _ in full_keys) + ([None] if all_margins else [])
    col_keys = (level_order(ck for _, ck in full_keys) + ([None] if all_margins else [])) if cols else [()]
    sub = [STAT_NAMES[st] if not var else f"{v} {STAT_NAMES[st]}" for v in var or [None] for st in stats]

    body = []
    for rk in row_keys:
        line = [format_value(v) for v in rk] if rk is not None else ["All"] + [""] * (nr - 1)
        for ck in col_keys:
            rec = cells.get((rk, ck))
            line += [fmt(rec[c]) if rec is not None else fmt(None) for c in stat_cols]
        body.append(line)
    headers = list(rows) + sub * len(col_keys)
    if not cols:
        return render_table(headers, body, title=title, right_align=[False] * nr + [True] * len(headers[nr:]))

    # column class levels (and All) span their statistics: widen a level's first statistic when
    # the level's label is wider than its statistics together
    labels = [" / ".join(format_value(v) for v in ck) if ck is not None else "All" for ck in col_keys]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(headers)]
    m = len(sub)
    for j, label in enumerate(labels):
        first = nr + j * m
        span = sum(widths[first:first + m]) + 2 * (m - 1)
        if len(label) > span:
            widths[first] += len(label) - span
            headers[first] = headers[first].rjust(widths[first])
    lead = sum(widths[:nr]) + 2 * nr
    level_line = " " * lead + "  ".join(
        label.center(sum(widths[nr + j * m:nr + (j + 1) * m]) + 2 * (m - 1)) for j, label in enumerate(labels))
    grid = render_table(headers, body, right_align=[False] * nr + [True] * (len(headers) - nr))
    return "\n".join([title, "", " " * lead + " / ".join(cols), level_line.rstrip()]) + "\n" + grid
