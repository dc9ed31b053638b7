"""PROC EXPORT to delimited text."""
from __future__ import annotations

import os
from pathlib import Path

from statgrid.errors import StatgridError
from statgrid.procs._base import procedure
from statgrid.libraries import atomic_output, sql_literal


@procedure("PROCEDURE EXPORT")
def export_csv(s, data: str, path: str | os.PathLike, delimiter: str = ",", header: bool = True) -> Path:
    """Write `data` to a delimited text file at `path` (replaced in one rename); returns the path."""
    src = s.dataset(data)
    target = Path(path).absolute()
    if not target.parent.is_dir():
        raise StatgridError(f"export path {str(target)!r}: directory {str(target.parent)!r} does not exist; "
                            "create it or choose another path.")
    if len(delimiter) != 1:
        raise StatgridError(f"delimiter {delimiter!r} must be one character, e.g. ',' or '|'.")
    with atomic_output(target) as tmp:
        rows = s.execute(f"COPY (SELECT * FROM {src.scan_sql()}) TO {sql_literal(str(tmp))} "
                         f"(FORMAT csv, HEADER {str(header).lower()}, DELIMITER {sql_literal(delimiter)})"
                         ).fetchone()[0]
    s.log.note(f"{rows} records were written to the file {str(target)!r}.")
    return target
