"""PROC DATASETS: list a library's members, copy and delete data sets."""
from __future__ import annotations

import shutil
from datetime import datetime

import pyarrow.parquet as pq

from statgrid.procs._base import ResultTable, procedure, render_table
from statgrid.libraries import atomic_output


@procedure("PROCEDURE DATASETS")
def datasets(s, library: str = "work", print: bool = True) -> ResultTable:
    """Members of `library`: member, rows, variables, file_bytes, modified."""
    lib = s.libraries.get(library)
    rows = []
    for member in lib.members():
        path = lib.member_path(member)
        meta = pq.read_metadata(path)
        st = path.stat()
        rows.append([member, meta.num_rows, meta.num_columns, st.st_size,
                     datetime.fromtimestamp(st.st_mtime).isoformat(timespec="seconds")])
    res = ResultTable(["member", "rows", "variables", "file_bytes", "modified"], rows)
    if print:
        s.log.listing(render_table(["Member", "Rows", "Variables", "File Size", "Last Modified"], rows,
                                   title=f"Directory of library {lib.name.upper()}: {lib.path}"))
    return res


@procedure("PROCEDURE DATASETS")
def copy(s, data: str, out: str):
    """Copy data set `data` to `out` (e.g. 'work.sales' → 'data.sales'); returns the new DatasetRef."""
    src = s.dataset(data)
    dst = s.libraries.for_write(out)
    with atomic_output(dst) as tmp:
        shutil.copyfile(src.path, tmp)
    rows = s.nrows(dst)
    s.record_output(dst, rows)
    s.log.note(f"Copying {src} to {dst} ({rows} observations).")
    return dst


@procedure("PROCEDURE DATASETS")
def delete(s, *names: str) -> list[str]:
    """Delete data sets; a name that does not exist is an error (nothing else is deleted then)."""
    refs = [s.dataset(n) for n in names]
    for ref in refs:
        s.libraries.for_write(ref.name)        # read-only libraries refuse
    for ref in refs:
        ref.path.unlink()
        s.log.note(f"Deleting {ref}.")
    return [r.name for r in refs]
