"""The DATA step access patterns of the Mixed Analytics I/O tests:

- `lookup`: a fact table joined to a dimension held in memory by key — the SAS hash object
  (`h.find()`) of star-schema ETL. The engine builds a hash table of the dimension and streams
  the fact table past it; a dimension key that occurs twice is an error (a hash object keeps one
  entry per key), a fact row without a match keeps missing dimension columns (or is dropped with
  inner=True, like `if h.find() = 0 then output`).
- `point`: random access by observation number (`set big point=i`): only the Parquet row groups
  holding the wanted rows are read, so the cost follows the rows asked for, not the table size.
"""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import as_list, check_columns, procedure, qi


@procedure("DATA STEP (hash lookup)")
def lookup(s, fact: str, dim: str, key: str | Sequence[str], out: str, keep: str | Sequence[str] | None = None,
           inner: bool = False):
    """out = fact rows with the dimension's `keep` columns (default: all but the key) added by key."""
    f, d = s.dataset(fact), s.dataset(dim)
    fcols = [c for c, _ in s.columns(f.scan_sql())]
    dcols = [c for c, _ in s.columns(d.scan_sql())]
    keys = as_list(key)
    fk = check_columns(keys, fcols, "KEY", str(f))
    dk = check_columns(keys, dcols, "KEY", str(d))
    adds = check_columns(as_list(keep), dcols, "KEEP", str(d)) if keep else [c for c in dcols if c not in dk]
    clash = [c for c in adds if c.lower() in {x.lower() for x in fcols}]
    if clash:
        raise StatgridError(f"{d} column {clash[0]!r} is also in {f}; keep= other columns, or rename one first.")
    dup = s.con.sql(f"SELECT {', '.join(qi(k) for k in dk)}, count(*) AS n FROM {d.scan_sql()} "
                    f"GROUP BY ALL HAVING count(*) > 1 LIMIT 1").fetchall()
    if dup:
        raise StatgridError(f"key {dict(zip(dk, dup[0][:-1]))} occurs {dup[0][-1]} times in {d}; a hash lookup needs "
                            "one row per key (deduplicate with sort(..., nodupkey=True)).")
    on = " AND ".join(f"f.{qi(a)} = d.{qi(b)}" for a, b in zip(fk, dk))
    numbered = f.scan_sql(row_numbers=True)
    sql = (f"SELECT f.* EXCLUDE (file_row_number), {', '.join('d.' + qi(c) for c in adds)} FROM {numbered} AS f "
           f"{'JOIN' if inner else 'LEFT JOIN'} {d.scan_sql()} AS d ON {on} ORDER BY f.file_row_number")
    ref = s.write(out, sql)
    return ref


@procedure("DATA STEP (point=)")
def point(s, data: str, rows: Sequence[int], out: str | None = None):
    """Read the observations numbered `rows` (1-based, any order, repeats allowed) as SAS's
    SET POINT= does; returns an Arrow table (and writes `out` if given). `stats` of the session
    log note: rows read per second."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = s.dataset(data)
    wanted = np.asarray(rows, dtype=np.int64)
    pf = pq.ParquetFile(src.path)
    n = pf.metadata.num_rows
    if wanted.size and (wanted.min() < 1 or wanted.max() > n):
        bad = int(wanted[(wanted < 1) | (wanted > n)][0])
        raise StatgridError(f"point={bad} is outside {src}, which has observations 1 to {n}.")
    t0 = time.perf_counter()
    starts = np.cumsum([0] + [pf.metadata.row_group(i).num_rows for i in range(pf.num_row_groups)])
    zero = wanted - 1
    group_of = np.searchsorted(starts, zero, side="right") - 1
    # One row group in memory at a time: take its rows, then put every row back in the order asked.
    taken, positions = [], []
    groups = np.unique(group_of)
    for g in groups:
        idx = np.flatnonzero(group_of == g)
        taken.append(pf.read_row_group(int(g)).take(pa.array(zero[idx] - starts[g])))
        positions.append(idx)
    if taken:
        table = pa.concat_tables(taken)
        table = table.take(pa.array(np.argsort(np.concatenate(positions), kind="stable")))
    else:
        table = pf.schema_arrow.empty_table()
    secs = time.perf_counter() - t0
    s.log.note(f"POINT=: {wanted.size} observations read from {src} in {secs:.3f} s "
               f"({wanted.size / secs if secs else 0:,.0f} rows/s; {groups.size} of {pf.num_row_groups} row groups).")
    if out:
        s.write_table(out, table)
    return table
