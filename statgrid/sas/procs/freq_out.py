"""PROC FREQ's OUT= data set computed in the engine, for a table request that is not printed.

The listing needs the cells in Python (freq.py's _counts); OUT= alone does not: one query counts the levels,
takes the percentages as window sums and writes the data set in SAS's order, so a table with millions of
levels (TABLES id / OUT=) costs what the Python API's freq costs, not a Python loop per level (measured by
benchmarks/sas_procs.py). The rules are freq.py's _write's, from Base SAS Procedures, FREQ "Output Data
Sets": COUNT per level combination; PERCENT of the BY group's total; missing levels (a missing number, a
blank string) kept as rows with COUNT and a missing PERCENT, and out of every total, unless MISSING;
OUTPCT adds PCT_ROW, PCT_COL (and PCT_TABL for a multiway table) within the table's strata. Rows are
ordered by the BY values (BY … NOTSORTED: each run of equal BY values a group, in data order), then by each table variable's levels in ORDER='s order (INTERNAL: the values,
missing first; FREQ: the variable's descending marginal count, missing levels first; DATA: the variable's first
appearance), row-major.
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.procs.byruns import RUN, runs_on
from statgrid.sas.procs.common import write_select


def out_columns(byc, varc, outpct: bool, outcum: bool = False) -> list[ColumnInfo]:
    """OUT='s columns: the BY and table variables with their attributes, COUNT, PERCENT (, PCT_* for OUTPCT on a
    multiway table; CUM_FREQ, CUM_PCT for OUTCUM on a one-way table)."""
    n = len(varc)
    cols = [ColumnInfo(c.name, c.type, c.length, c.format, c.informat, c.label) for c in byc + varc]
    cols += [ColumnInfo("COUNT", "num", 8, label="Frequency Count"),
             ColumnInfo("PERCENT", "num", 8, label="Percent of Total Frequency")]
    if outpct:
        cols += [ColumnInfo("PCT_ROW", "num", 8, label="Percent of Row Frequency"),
                 ColumnInfo("PCT_COL", "num", 8, label="Percent of Column Frequency")]
        if n > 2:
            cols.append(ColumnInfo("PCT_TABL", "num", 8, label="Percent of Two-Way Table Frequency"))
    if outcum and n == 1:
        cols += [ColumnInfo("CUM_FREQ", "num", 8, label="Cumulative Frequency Count"),
                 ColumnInfo("CUM_PCT", "num", 8, label="Cumulative Percent of Total Frequency")]
    return cols


def outcum(topts: dict, varc) -> bool:
    """OUTCUM (Base SAS FREQ, TABLES): cumulative frequencies and percents in OUT=, for a one-way table."""
    return bool(topts.get("OUTCUM")) and len(varc) == 1


def _level(c) -> str:
    """A level as a group key: a blank string is SAS's missing character value (NULL here)."""
    q = sql_ident(c.name)
    return f"CASE WHEN trim({q}) = '' THEN NULL ELSE {q} END" if c.type == "char" else f"CAST({q} AS DOUBLE)"


def out_sql(base: str, byc, varc, wc, topts: dict, order: str) -> str:
    n = len(varc)
    shown = [sql_ident(c.name) for c in byc]
    # BY … NOTSORTED (byruns.py): each run of `base`'s RUN column is a group, the groups in data order
    by = ([RUN] if runs_on(byc) else []) + shown
    lv = [sql_ident(c.name) for c in varc]
    count = "sum(CAST(__w AS DOUBLE))" if wc else "count(*)"
    where = f" WHERE {sql_ident(wc.name)} > 0" if wc else ""
    weight = [f"{sql_ident(wc.name)} AS __w"] if wc else []
    inner = ", ".join([*by, *(f"{_level(c)} AS {q}" for c, q in zip(varc, lv)), *weight, "row_number() OVER () AS __r"])
    grouped = (f"SELECT {', '.join(by + lv)}, CAST({count} AS DOUBLE) AS COUNT, min(__r) AS __first "
               f"FROM (SELECT {inner} FROM ({base}){where}) GROUP BY ALL")
    present = "TRUE" if topts.get("MISSING") else " AND ".join(f"{q} IS NOT NULL" for q in lv)

    def share(keys: list[str]) -> str:
        part = f"PARTITION BY {', '.join(keys)}" if keys else ""
        total = f"sum(CASE WHEN {present} THEN COUNT END) OVER ({part})"
        return f"CASE WHEN {present} AND {total} > 0 THEN 100.0 * COUNT / {total} END"

    pct = [f"{share(by)} AS PERCENT"]
    if topts.get("OUTPCT") and n >= 2:
        strata = by + lv[:n - 2]
        pct += [f"{share(strata + [lv[n - 2]])} AS PCT_ROW", f"{share(strata + [lv[n - 1]])} AS PCT_COL"]
        if n > 2:
            pct.append(f"{share(strata)} AS PCT_TABL")
    # each variable's levels in their own order (ORDER=DATA: the variable's first appearance; FREQ: its own
    # marginal count, descending, missing first; INTERNAL: the values), the cells row-major in those orders
    ranks, within = [], []
    for i, q in enumerate(lv):
        part = ", ".join(by + [q])
        if order == "DATA":
            ranks.append(f"min(__first) OVER (PARTITION BY {part}) AS __o{i}")
            within.append(f"t.__o{i}")
        elif order == "FREQ":
            ranks.append(f"sum(COUNT) OVER (PARTITION BY {part}) AS __o{i}")
            within += [f"(t.{q} IS NULL) DESC", f"t.__o{i} DESC", f"t.{q} NULLS FIRST"]
        else:
            within.append(f"t.{q} NULLS FIRST")       # t.: the level as counted, before blanks fill it
    sorted_by = [f"t.{q} NULLS FIRST" for q in by] + within
    blank = [f"coalesce({q}, '') AS {q}" if c.type == "char" else q for c, q in zip(varc, lv)]
    shares = [p.rsplit(' AS ', 1)[1] for p in pct]
    if not outcum(topts, varc):
        return (f"SELECT {', '.join(shown + blank)}, COUNT, {', '.join(shares)} FROM "
                f"(SELECT *, {', '.join(pct + ranks)} FROM ({grouped})) t ORDER BY {', '.join(sorted_by)}")
    # OUTCUM: running sums over the levels in their order within each BY group; a missing level has none
    part = f"PARTITION BY {', '.join(by)} " if by else ""
    run = f"sum(CASE WHEN {present} THEN COUNT END) OVER ({part}ORDER BY __pos ROWS UNBOUNDED PRECEDING)"
    total = f"sum(CASE WHEN {present} THEN COUNT END) OVER ({part[:-1] if part else ''})"
    cum = (f"CASE WHEN {present} THEN {run} END AS CUM_FREQ, "
           f"CASE WHEN {present} AND {total} > 0 THEN 100.0 * {run} / {total} END AS CUM_PCT")
    middle = (f"SELECT t.*, row_number() OVER (ORDER BY {', '.join(sorted_by)}) AS __pos FROM "
              f"(SELECT *, {', '.join(pct + ranks)} FROM ({grouped})) t")
    return (f"SELECT {', '.join(shown + blank)}, COUNT, {', '.join(shares)}, {cum} FROM ({middle}) ORDER BY __pos")


def write_out(program: Any, spec, base: str, byc, varc, wc, topts: dict, order: str) -> None:
    """Write OUT= for one table request straight from the engine."""
    outpct = bool(topts.get("OUTPCT")) and len(varc) >= 2
    write_select(program, spec, out_sql(base, byc, varc, wc, topts, order),
                 out_columns(byc, varc, outpct, outcum(topts, varc)))
