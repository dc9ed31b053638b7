"""PROC FREQ: one-way and two-way frequency tables, percents and chi-square tests.

Counting runs in the engine, every table of a step in one scan of the data (GROUPING SETS; a
scan per table took up to 1.5× as long on 10 M rows, benchmarks/procs.py); the tables are small,
so percents and the tests are computed from the cell counts in numpy. Rows with a missing value in any table variable are
left out of percents and tests, and counted as 'Frequency Missing', unless missing=True makes
missing a level, as in SAS.

Two-way statistics (chisq=True) follow the SAS definitions: Pearson chi-square
Σ(O−E)²/E with (r−1)(c−1) degrees of freedom, likelihood-ratio chi-square 2·ΣO·ln(O/E),
phi = √(χ²/n) (signed for 2×2), contingency coefficient √(χ²/(χ²+n)), Cramér's V
√(χ²/(n·min(r−1, c−1))).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import ResultTable, check_columns, column_names, procedure, qi, render_table


def _parse_tables(tables: str | Sequence[str]) -> list[list[str]]:
    requests = [tables] if isinstance(tables, str) else list(tables)
    out = []
    for req in requests:
        for item in str(req).split():
            parts = [p.strip() for p in item.split("*")]
            if not 1 <= len(parts) <= 2 or not all(parts):
                raise StatgridError(f"table request {item!r} is not supported; use 'a' (one-way) or 'a*b' "
                                    "(two-way).")
            out.append(parts)
    if not out:
        raise StatgridError("tables= names no variable; e.g. tables=['region', 'region*product'].")
    return out


def counts_sql(scan: str, cols: list[str], weight: str | None = None) -> str:
    """Cell counts (or weight sums) per level combination of one table, missing levels first as in SAS.

    As in SAS, rows whose weight is missing or not positive are left out.
    """
    return tables_sql(scan, [cols], weight)


def _count_expr(weight: str | None) -> tuple[str, str]:
    """The count (or weight sum) and the WHERE clause: rows with a missing or non-positive weight are
    left out, as in SAS."""
    if weight:
        return f"sum(CAST({qi(weight)} AS DOUBLE))", f" WHERE {qi(weight)} > 0"
    return "count(*)", ""


def tables_sql(scan: str, tables: list[list[str]], weight: str | None = None) -> str:
    """The cell counts of several tables in ONE scan of the data (GROUPING SETS), missing levels first.

    One table: rows (level..., n), as counts_sql. Several: rows (set, v1, …, vk, n) over the distinct
    variables v of all tables in order of first use; `set` is GROUPING(v1, …, vk), a bit set per
    variable NOT in the row's table (v1 the highest bit) — a table's rows come together, each table's
    ordered by its own variables. The tables must be distinct sets of variables (plan_scans).
    """
    n, where = _count_expr(weight)
    if len(tables) == 1:
        keys = ", ".join(qi(c) for c in tables[0])
        return (f"SELECT {keys}, {n} AS n FROM {scan}{where} GROUP BY {keys} "
                f"ORDER BY {', '.join(qi(c) + ' NULLS FIRST' for c in tables[0])}")
    variables = list(dict.fromkeys(c for cols in tables for c in cols))
    keys = ", ".join(qi(c) for c in variables)
    sets = ", ".join("(" + ", ".join(qi(c) for c in cols) + ")" for cols in tables)
    # Positional names for the grouped result, so no user variable can shadow them in ORDER BY.
    names = ["s"] + [f"v{i}" for i in range(len(variables))] + ["n"]
    order = ["s"]
    for cols in tables:
        gid = grouping_id(variables, cols)
        order += [f"CASE WHEN s = {gid} THEN v{variables.index(c)} END NULLS FIRST" for c in cols]
    return (f"SELECT * FROM (SELECT GROUPING({keys}), {keys}, {n} FROM {scan}{where} "
            f"GROUP BY GROUPING SETS ({sets})) AS t({', '.join(names)}) ORDER BY {', '.join(order)}")


def grouping_id(variables: list[str], cols: list[str]) -> int:
    """GROUPING(variables...) of the rows grouped by `cols`: bit set for each variable not in `cols`,
    the first variable the highest bit (SQL's GROUPING / DuckDB's grouping_id)."""
    k = len(variables)
    return sum(1 << (k - 1 - i) for i, v in enumerate(variables) if v not in cols)


def plan_scans(tables: list[list[str]]) -> list[list[list[str]]]:
    """The distinct tables grouped into scans: every table goes into the first scan, except one whose
    variables another table there already has in another order (a*b and b*a: GROUPING SETS cannot tell
    them apart), which starts a scan of its own."""
    scans: list[list[list[str]]] = []
    for cols in tables:
        for scan in scans:
            if cols in scan:
                break
            if all(set(cols) != set(other) for other in scan):
                scan.append(cols)
                break
        else:
            scans.append([cols])
    return scans


def _counts_all(s, scan: str, tables: list[list[str]], weight: str | None, missing: bool
                ) -> dict[tuple[str, ...], tuple[list[tuple], float]]:
    """{table's variables: ([(level..., count)] with non-missing levels, the missing frequency)},
    the tables counted in as few scans of the data as plan_scans allows (one, as a rule)."""
    out = {}
    for group in plan_scans(tables):
        rows = s.execute(tables_sql(scan, group, weight)).fetchall()
        if len(group) == 1:
            per_table = {tuple(group[0]): rows}
        else:
            variables = list(dict.fromkeys(c for cols in group for c in cols))
            at = {grouping_id(variables, cols): ([1 + variables.index(c) for c in cols], tuple(cols))
                  for cols in group}
            per_table = {key: [] for _, key in at.values()}
            for r in rows:
                idx, key = at[r[0]]
                per_table[key].append(tuple(r[i] for i in idx) + (r[-1],))
        for key, cells in per_table.items():
            out[key] = _split_missing(cells, missing)
    return out


def _split_missing(rows: list, missing: bool) -> tuple[list[tuple], float]:
    """[(level..., count)] with non-missing levels, and the missing frequency (missing=True: all rows,
    missing a level as in SAS)."""
    if missing:
        return [tuple(r) for r in rows], 0.0
    kept = [tuple(r) for r in rows if all(v is not None for v in r[:-1])]
    n_missing = sum(r[-1] or 0 for r in rows if any(v is None for v in r[:-1]))
    return kept, float(n_missing)


def one_way(var: str, counts: list[tuple]) -> ResultTable:
    total = sum(c for *_, c in counts) or float("nan")
    rows, cum = [], 0.0
    for level, c in counts:
        cum += c
        rows.append([level, c, 100.0 * c / total, cum, 100.0 * cum / total])
    return ResultTable([var, "count", "percent", "cum_freq", "cum_pct"], rows)


def two_way(a: str, b: str, counts: list[tuple]) -> tuple[ResultTable, np.ndarray, list, list]:
    rlev = list(dict.fromkeys(r[0] for r in counts))
    clev = list(dict.fromkeys(sorted({r[1] for r in counts}, key=lambda v: (v is not None, v))))
    ri, ci = {v: i for i, v in enumerate(rlev)}, {v: i for i, v in enumerate(clev)}
    m = np.zeros((len(rlev), len(clev)))
    for x, y, c in counts:
        m[ri[x], ci[y]] = c
    with np.errstate(divide="ignore", invalid="ignore"):
        total, rsum, csum = m.sum(), m.sum(axis=1), m.sum(axis=0)
    rows = [[x, y, c, 100.0 * c / total, 100.0 * c / rsum[ri[x]], 100.0 * c / csum[ci[y]]]
            for x, y, c in counts]
    return ResultTable([a, b, "count", "percent", "pct_row", "pct_col"], rows), m, rlev, clev


def chi_square(m: np.ndarray) -> dict[str, float]:
    """Tests of independence for an r×c table of counts (rows/columns of zeros dropped)."""
    m = m[m.sum(axis=1) > 0][:, m.sum(axis=0) > 0]
    n = m.sum()
    r, c = m.shape
    if r < 2 or c < 2:
        return {"df": 0, "chisq": math.nan, "chisq_p": math.nan, "lr_chisq": math.nan, "lr_chisq_p": math.nan,
                "phi": math.nan, "contingency": math.nan, "cramers_v": math.nan, "cells_expected_lt5_pct": math.nan}
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    chisq = float(((m - expected) ** 2 / expected).sum())
    nz = m > 0
    lr = float(2.0 * (m[nz] * np.log(m[nz] / expected[nz])).sum())
    df = (r - 1) * (c - 1)
    phi = math.sqrt(chisq / n)
    if (r, c) == (2, 2):
        phi = float((m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]) / math.sqrt(np.prod(m.sum(axis=1)) * np.prod(m.sum(axis=0))))
    # Imported here: scipy.stats costs ~1 s of start-up that every session would pay.
    from scipy.special import chdtrc

    return {"df": df, "chisq": chisq, "chisq_p": float(chdtrc(df, chisq)),
            "lr_chisq": lr, "lr_chisq_p": float(chdtrc(df, lr)), "phi": phi,
            "contingency": math.sqrt(chisq / (chisq + n)), "cramers_v": math.sqrt(chisq / (n * min(r - 1, c - 1))),
            "cells_expected_lt5_pct": float(100.0 * (expected < 5).sum() / expected.size)}


def _chisq_listing(st: dict[str, float], a: str, b: str) -> str:
    rows = [["Chi-Square", st["df"], st["chisq"], st["chisq_p"]],
            ["Likelihood Ratio Chi-Square", st["df"], st["lr_chisq"], st["lr_chisq_p"]],
            ["Phi Coefficient", None, st["phi"], None],
            ["Contingency Coefficient", None, st["contingency"], None],
            ["Cramer's V", None, st["cramers_v"], None]]
    text = render_table(["Statistic", "DF", "Value", "Prob"], rows,
                        title=f"Statistics for Table of {a} by {b}", right_align=[False, True, True, True])
    if st["cells_expected_lt5_pct"] > 20:
        text += (f"WARNING: {st['cells_expected_lt5_pct']:.0f}% of the cells have expected counts less than 5. "
                 "Chi-Square may not be a valid test.\n")
    return text


@procedure("PROCEDURE FREQ")
def freq(s, data: str, tables: str | Sequence[str], weight: str | None = None, missing: bool = False,
         chisq: bool = False, out: str | None = None, print: bool = True) -> list[ResultTable]:
    """Frequency tables for each request in `tables` ('a' or 'a*b'); one ResultTable each.

    One-way columns: <var>, count, percent, cum_freq, cum_pct. Two-way: <a>, <b>, count, percent,
    pct_row, pct_col; with chisq=True its `stats` hold df, chisq, chisq_p, lr_chisq, lr_chisq_p,
    phi, contingency, cramers_v. Every table's `stats` has n (used) and n_missing. out= writes
    the last table (as SAS OUT= does).
    """
    src = s.dataset(data)
    names = column_names(s, src)
    w = check_columns([weight], names, "WEIGHT", str(src))[0] if weight else None
    requests = []
    for req in _parse_tables(tables):
        cols = check_columns(req, names, "TABLES", str(src))
        taken = {"count", "percent", "cum_freq", "cum_pct", "pct_row", "pct_col"} & {c.lower() for c in cols}
        if taken or len({c.lower() for c in cols}) < len(cols):
            raise StatgridError(f"table {'*'.join(cols)!r}: a variable named like a result column "
                                f"({', '.join(sorted(taken)) or 'the same variable twice'}) cannot be tabulated "
                                "here; rename it first, e.g. data(..., rename={...}).")
        requests.append(cols)
    counted = _counts_all(s, src.scan_sql(), requests, w, missing)
    results = []
    for cols in requests:
        counts, n_missing = counted[tuple(cols)]
        title = f"The FREQ Procedure\n\nTable of {' by '.join(cols)}"
        if len(cols) == 1:
            res = one_way(cols[0], counts)
            if print:
                listing = render_table([cols[0], "Frequency", "Percent", "Cumulative Frequency",
                                        "Cumulative Percent"], res.rows, title=title)
        else:
            res, matrix, _, _ = two_way(cols[0], cols[1], counts)
            if chisq:
                res.stats.update(chi_square(matrix))
            if print:
                listing = render_table([cols[0], cols[1], "Frequency", "Percent", "Row Pct", "Col Pct"],
                                       res.rows, title=title)
                if chisq:
                    listing += "\n" + _chisq_listing(res.stats, cols[0], cols[1])
        res.stats.update(n=float(sum(r[-1] for r in counts)), n_missing=n_missing)
        if print:
            if n_missing:
                listing += f"\nFrequency Missing = {n_missing:g}\n"
            s.log.listing(listing)
        results.append(res)
    if out:
        results[-1].out = s.write_table(out, results[-1].to_arrow())
    return results
