"""The INFILE's file as DuckDB reads it: one VARCHAR column per record, the records the Python engine
would read (records.file_records, LineSource) — or a refusal where DuckDB's CSV reader would see other
records than Python does.

DuckDB's reader (one column, no quote, no escape, no compression) splits records at a newline as Python
does, keeps the text as it is and gives an empty record as NULL (read as ''). It differs in three places,
found by one pass over the bytes before anything is read: a carriage return (DuckDB ends a record there,
Python keeps it inside a record and drops it only at a record's end), the unit separator 0x1F (the
reader's column delimiter: the rest of the record would be lost) and a UTF-8 byte order mark (Python keeps
it as the first character). A record that is not UTF-8 (Python reads it as Latin-1) makes DuckDB fail,
which refuses the step as well."""
from __future__ import annotations

import os
from pathlib import Path

from statgrid.libraries import sql_literal
from statgrid.sas.datastep.sqlplan.exprsql import Refuse
from statgrid.sas.datastep.textplan.plan import Infile

SCAN_CHUNK_BYTES = 1 << 24
UTF8_BOM = b"\xef\xbb\xbf"
DIFFERING_BYTES = (b"\r", b"\x1f")
GLOB_CHARS = "*?[]{}"


def infile_path(step, inf: Infile) -> Path:
    """The one file the INFILE reads (a fileref of several files is refused)."""
    try:
        paths = step.textio._paths_of(inf.stmt)
    except Exception as exc:  # noqa: BLE001 - an unassigned fileref: the Python engine reports it
        raise Refuse(f"the INFILE's file: {exc}") from None
    if len(paths) != 1:
        raise Refuse("a fileref of several files")
    path = paths[0]
    if not path.is_file():
        raise Refuse(f"{path} is not a file")
    if any(c in str(path) for c in GLOB_CHARS):
        raise Refuse(f"{path}: DuckDB would read it as a pattern")
    return path


def check_bytes(path: Path) -> None:
    """Refuse a file whose records DuckDB would split or cut otherwise than Python (module doc)."""
    with open(path, "rb") as fh:
        first = True
        while True:
            chunk = fh.read(SCAN_CHUNK_BYTES)
            if not chunk:
                return
            if first and chunk.startswith(UTF8_BOM):
                raise Refuse("a UTF-8 byte order mark")
            first = False
            for b in DIFFERING_BYTES:
                if b in chunk:
                    raise Refuse(f"the byte {b!r} in the file")


def records_sql(path: Path, inf: Infile) -> str:
    """The records after FIRSTOBS= and OBS=, in file order, as column __rec (LRECL= cuts each)."""
    reader = (f"read_csv({sql_literal(os.path.abspath(path))}, columns={{'line': 'VARCHAR'}}, header=false, "
              f"delim='\x1f', quote='', escape='', auto_detect=false, strict_mode=false, compression='none')")
    rec = "coalesce(line, '')"
    if inf.lrecl:
        rec = f"substr({rec}, 1, {inf.lrecl})"
    sql = f"SELECT {rec} AS __rec FROM {reader}"
    if inf.records is not None:
        sql += f" LIMIT {inf.records}"
    if inf.firstobs > 1:
        sql += f" OFFSET {inf.firstobs - 1}"
    return sql


def line_sql(inf: Infile) -> str:
    """The line INPUT reads from record __rec: padded with blanks to LRECL under PAD."""
    return f"rpad(__rec, {inf.lrecl}, ' ')" if inf.pad and inf.lrecl else "__rec"
