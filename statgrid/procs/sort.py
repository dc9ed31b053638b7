"""PROC SORT: order a data set by keys; descending keys, NODUPKEY, stable (SAS EQUALS).

The sort runs in the engine under memsize and spills to UTIL when it does not fit
(DuckDB temp_directory); the output replaces `out` (or the input, as SAS sorts in place) in
one rename, so a failed sort never damages the input.
"""
from __future__ import annotations

from typing import Sequence

from statgrid.errors import StatgridError
from statgrid.procs._base import check_columns, procedure, qi

_ROWNUM = "file_row_number"   # the read_parquet(file_row_number=true) column: input order


def parse_keys(by: str | Sequence[str]) -> list[tuple[str, bool]]:
    """['region', 'amount desc'] or 'region descending amount' → [(name, descending)]."""
    tokens = by.split() if isinstance(by, str) else [t for item in by for t in str(item).split()]
    keys: list[tuple[str, bool]] = []
    pending_desc = False
    for tok in tokens:
        low = tok.lower()
        if low in ("descending", "desc"):
            if keys and not pending_desc and low == "desc":
                keys[-1] = (keys[-1][0], True)       # SQL style: name DESC
            else:
                pending_desc = True                   # SAS style: DESCENDING name
            continue
        if low == "asc":
            continue
        keys.append((tok, pending_desc))
        pending_desc = False
    if not keys or pending_desc:
        raise StatgridError(f"by={by!r} names no key; give variables like by=['region', 'amount desc'].")
    return keys


def sort_sql(src, keys: list[tuple[str, bool]], nodupkey: bool, equals: bool) -> str:
    # SAS: a missing value is smaller than any other, so first ascending and last descending
    order = ", ".join(f"{qi(k)} DESC NULLS LAST" if d else f"{qi(k)} NULLS FIRST" for k, d in keys)
    if not (equals or nodupkey):
        return f"SELECT * FROM {src.scan_sql()} ORDER BY {order}"
    numbered = src.scan_sql(row_numbers=True)
    if nodupkey:
        return (f"SELECT DISTINCT ON ({', '.join(qi(k) for k, _ in keys)}) * EXCLUDE ({_ROWNUM}) "
                f"FROM {numbered} ORDER BY {order}, {_ROWNUM}")
    return f"SELECT * EXCLUDE ({_ROWNUM}) FROM {numbered} ORDER BY {order}, {_ROWNUM}"


@procedure("PROCEDURE SORT")
def sort(s, data: str, by: str | Sequence[str], out: str | None = None, nodupkey: bool = False,
         equals: bool = True):
    """Sort `data` by `by` into `out` (default: replace `data`).

    nodupkey keeps the first row (in input order) of each key; equals=True (SAS default) keeps
    rows with equal keys in input order; equals=False lets the engine order ties freely (faster).
    Returns the output DatasetRef.
    """
    src = s.dataset(data)
    cols = [c for c, _ in s.columns(src.scan_sql())]
    keys = parse_keys(by)
    names = check_columns([k for k, _ in keys], cols, "BY", str(src))
    keys = [(n, d) for n, (_, d) in zip(names, keys)]
    if _ROWNUM in cols and (equals or nodupkey):
        raise StatgridError(f"{src} has a column named {_ROWNUM!r}, which the stable sort needs; "
                            "rename it or pass equals=False.")
    rows_in = s.nrows(src)
    s.log.note(f"There were {rows_in} observations read from the data set {src}.")
    ref = s.write(out or data, sort_sql(src, keys, nodupkey, equals))
    if nodupkey:
        s.log.note(f"{rows_in - s.nrows(ref)} observations with duplicate key values were deleted.")
    return ref
