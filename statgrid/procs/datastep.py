"""A DATA step equivalent: SET one or more data sets, WHERE, derived columns, KEEP/DROP/RENAME.

Order as in SAS: WHERE filters input rows, computed columns are assigned in the order given
(each may use the ones before it), then DROP, KEEP and RENAME shape the output. Expressions are
SQL expressions.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from statgrid.procs._base import as_list, check_columns, procedure, qi
from statgrid.libraries import check_name


@procedure("DATA STEP")
def data(s, out: str, set: str | Sequence[str], where: str | None = None,
         compute: Mapping[str, str] | None = None, keep: str | Sequence[str] | None = None,
         drop: str | Sequence[str] | None = None, rename: Mapping[str, str] | None = None,
         obs: int | None = None):
    """Write `out` from `set` (several data sets are stacked by column name, like SET a b).

    compute: {'new_or_existing_column': 'SQL expression'}; rename: {'old': 'new'};
    obs: stop after this many output rows. Returns the output DatasetRef.
    """
    sources = [s.dataset(d) for d in as_list(set)]
    for src in sources:
        s.log.note(f"Reading data set {src} ({s.nrows(src)} observations).")
    query = " UNION ALL BY NAME ".join(f"SELECT * FROM {src.scan_sql()}" for src in sources)
    if len(sources) > 1:
        query = f"SELECT * FROM ({query})"
    if where:
        query = f"SELECT * FROM ({query}) WHERE {where}"
    for name, expr in (compute or {}).items():
        check_name("variable", name)
        cols = [c for c, _ in s.columns(f"({query})")]
        existing = {c.lower(): c for c in cols}
        if name.lower() in existing:
            query = f"SELECT * REPLACE (({expr}) AS {qi(existing[name.lower()])}) FROM ({query})"
        else:
            query = f"SELECT *, ({expr}) AS {qi(name)} FROM ({query})"
    cols = [c for c, _ in s.columns(f"({query})")]
    label = " + ".join(str(src) for src in sources) + (" (after compute)" if compute else "")
    if drop:
        dropped = frozenset(check_columns(as_list(drop), cols, "DROP", label))
        cols = [c for c in cols if c not in dropped]
    if keep:
        cols = check_columns(as_list(keep), cols, "KEEP", label)
    renames = {k.lower(): v for k, v in (rename or {}).items()}
    if renames:
        check_columns(list(rename or {}), cols, "RENAME", label)
        for new in renames.values():
            check_name("variable", new)
    select = ", ".join(f"{qi(c)} AS {qi(renames[c.lower()])}" if c.lower() in renames else qi(c) for c in cols)
    query = f"SELECT {select} FROM ({query})"
    if obs is not None:
        query += f" LIMIT {int(obs)}"
    return s.write(out, query)
