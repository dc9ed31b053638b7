"""BY NOTSORTED in the PROC steps (SAS 9.4 Base Procedures, "Statements with the Same Function in Multiple
Procedures", BY): with NOTSORTED the data need not be sorted; "the procedure defines a BY group as a set of
contiguous observations that have the same values for all BY variables. If observations with the same values
for the BY variables are not contiguous, then the procedure treats each contiguous set as a separate BY group."
DESCENDING is accepted with it and changes nothing (no order is checked).

Here each run of equal BY values is numbered once in SQL, over the input's row order (a new run where any BY
value differs from the row before; a missing value equals a missing value, a character value compared without
its trailing blanks): the hidden column RUN. A PROC then groups by RUN first and keeps the groups in RUN order
(the data's order); RUN never reaches an output data set, a listing or an ODS table. Sorted data give the same
groups with and without NOTSORTED.

- `ByColumns`: a PROC's BY columns, with `notsorted` (by_keys and by_condition in common.py look at it).
- `ByKey`: one group's BY values (a list, in BY order) with `run`, its run number (None without NOTSORTED).
- `with_runs(sql, byc)`: `sql` with RUN added; `run_column()` RUN as a column for a PROC's own GROUP BY.
- `group_id(key)`: a group's identity as a dict key — (run, values…); two runs of the same values differ.
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident

RUN = "__sg_by_run"
_ROW, _NEW = "__sg_by_row", "__sg_by_new"


class ByColumns(list):
    """The BY variables' ColumnInfos, and whether the BY statement said NOTSORTED."""
    notsorted = False


class ByKey(list):
    """One BY group's values in BY order; `run`: its run number when the BY statement said NOTSORTED."""
    run: int | None = None


def is_notsorted(by: Any) -> bool:
    """True when `by` (a BY list from by_list, or ByColumns) said NOTSORTED."""
    return bool(getattr(by, "notsorted", False))


def by_columns(byc: list, by: Any) -> ByColumns:
    """`byc` (resolved BY columns) marked with the NOTSORTED of `by` (the BY statement's list)."""
    out = ByColumns(byc)
    out.notsorted = bool(byc) and is_notsorted(by)
    return out


def runs_on(byc: Any) -> bool:
    """Whether a PROC groups `byc` as NOTSORTED runs."""
    return bool(byc) and is_notsorted(byc)


def _same(c) -> str:
    """SQL: this row's value of BY column `c` equals the previous row's (missing = missing; characters compared
    without trailing blanks, and a blank string is missing, as SAS compares them)."""
    q = sql_ident(c.name)
    if c.type == "char":
        return f"rtrim(coalesce({q}, '')) = rtrim(coalesce(lag({q}) OVER __w, ''))"
    return f"{q} IS NOT DISTINCT FROM lag({q}) OVER __w"


def with_runs(sql: str, byc: list, order: str = "") -> str:
    """`sql` with column RUN (BIGINT, from 1): the number of each row's run of equal BY values, in row order —
    `order` (a column of `sql` holding the row order), else the order the rows come in (row_number() OVER ():
    DuckDB's streaming window keeps a scan's order)."""
    row = order or _ROW
    numbered = sql if order else f"SELECT *, row_number() OVER () AS {_ROW} FROM ({sql})"
    same = " AND ".join(f"coalesce({_same(c)}, FALSE)" for c in byc) or "TRUE"
    flagged = (f"SELECT *, CASE WHEN lag({row}) OVER __w IS NOT NULL AND {same} THEN 0 ELSE 1 END AS {_NEW} "
               f"FROM ({numbered}) WINDOW __w AS (ORDER BY {row})")
    drop = f"{_NEW}" + ("" if order else f", {_ROW}")
    return (f"SELECT * EXCLUDE ({drop}), CAST(sum({_NEW}) OVER (ORDER BY {row} ROWS BETWEEN UNBOUNDED PRECEDING "
            f"AND CURRENT ROW) AS BIGINT) AS {RUN} FROM ({flagged})")


def run_column():
    """RUN as a numeric ColumnInfo: put first among a PROC's BY columns for its GROUP BY and ORDER BY."""
    from statgrid.sas.dataset import ColumnInfo
    return ColumnInfo(RUN, "num", 8)


def runs_keys_sql(byc: list, sql: str) -> str:
    """The runs of `sql` (which has RUN) in order: RUN, then the run's BY values."""
    values = ", ".join(f"min({sql_ident(c.name)}) AS {sql_ident(c.name)}" for c in byc)
    return f"SELECT {RUN}, {values} FROM ({sql}) GROUP BY {RUN} ORDER BY {RUN}"


def by_key(values, run: int | None = None) -> ByKey:
    key = ByKey(values)
    key.run = run
    return key


def group_id(key) -> tuple:
    """A BY group's identity, for a dict: its run (None without NOTSORTED) and its values."""
    return (getattr(key, "run", None), *key)
