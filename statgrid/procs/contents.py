"""PROC CONTENTS (a data set's variables and attributes) and PROC PRINT (its first rows)."""
from __future__ import annotations

from datetime import datetime
from typing import Sequence

import pyarrow.parquet as pq

from statgrid.procs._base import ResultTable, as_list, check_columns, procedure, qi, render_table


@procedure("PROCEDURE CONTENTS")
def contents(s, data: str, out: str | None = None, print: bool = True) -> ResultTable:
    """Variables (#, name, type) of `data`; `stats` hold rows, row_groups, file_bytes, modified."""
    src = s.dataset(data)
    meta = pq.read_metadata(src.path)
    cols = s.columns(src.scan_sql())
    res = ResultTable(["num", "variable", "type"], [[i + 1, n, t] for i, (n, t) in enumerate(cols)])
    st = src.path.stat()
    codecs = sorted({meta.row_group(i).column(j).compression for i in range(meta.num_row_groups)
                     for j in range(meta.num_columns)}) if meta.num_row_groups else []
    res.stats.update(rows=meta.num_rows, variables=len(cols), row_groups=meta.num_row_groups,
                     file_bytes=st.st_size, modified=datetime.fromtimestamp(st.st_mtime).isoformat(timespec="seconds"),
                     compression=",".join(codecs) or "none", path=str(src.path))
    if print:
        head = render_table(["Attribute", "Value"], [
            ["Data Set Name", str(src)], ["Observations", meta.num_rows], ["Variables", len(cols)],
            ["Row Groups", meta.num_row_groups], ["File Size (bytes)", st.st_size],
            ["Compression", res.stats["compression"]], ["Last Modified", res.stats["modified"]],
            ["File", str(src.path)]], title="The CONTENTS Procedure", right_align=[False, False])
        body = render_table(["#", "Variable", "Type"], res.rows, title="Variables in Creation Order")
        s.log.listing(head + "\n" + body)
    if out:
        res.out = s.write_table(out, res.to_arrow())
    return res


@procedure("PROCEDURE PRINT")
def print_rows(s, data: str, obs: int = 10, var: str | Sequence[str] | None = None, where: str | None = None,
               title: str | None = None) -> ResultTable:
    """List the first `obs` rows (of `var`, matching `where`) with an Obs column, like PROC PRINT."""
    src = s.dataset(data)
    names = [c for c, _ in s.columns(src.scan_sql())]
    cols = check_columns(as_list(var), names, "VAR", str(src)) if var else names
    sql = f"SELECT {', '.join(qi(c) for c in cols)} FROM {src.scan_sql()}"
    if where:
        sql += f" WHERE {where}"
    rows = [list(r) for r in s.execute(f"{sql} LIMIT {int(obs)}").fetchall()]
    res = ResultTable(cols, rows)
    s.log.listing(render_table(["Obs"] + cols, [[i + 1] + r for i, r in enumerate(rows)],
                               title=title or f"Data set {src}"))
    return res
