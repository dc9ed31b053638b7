"""The text engine (engines.py, under DSENGINE=SQL or AUTO): a DATA step that only reads a fixed-width file —
INFILE 'path' or a fileref of one file (LRECL=, PAD, MISSOVER, TRUNCOVER, FIRSTOBS=, OBS=), one INPUT
statement of column input and formatted input at fixed positions (w.d, BESTw., $w., $CHARw.), LENGTH,
KEEP, DROP, RENAME, FORMAT, INFORMAT, LABEL, ATTRIB, MISSING — as one DuckDB query over the file (read_csv
of one column, substr per field, the informat as SQL) written by COPY through the step's DatasetWriter.

The result is the Python engine's to the bit, NOTEs included; whatever that engine treats specially makes
this one step aside before anything is written or logged, and the Python engine runs the step:
- invalid data (its NOTE, the record and the PDV in the log, _ERROR_): a field the query finds invalid
  stops it (fieldsql.py);
- a record shorter than the INPUT statement reads, without MISSOVER or TRUNCOVER (FLOWOVER);
- a file whose records DuckDB would split otherwise (a carriage return, the byte 0x1F, a byte order
  mark, a record that is not UTF-8: source.py);
- anything else in the step (plan.py says what is taken).
When a step is refused, `reason` says why."""
from __future__ import annotations

from typing import Any

from statgrid.sas.datastep.sqlplan.exprsql import Refuse

reason = ""          # why the last step offered was refused ("" when it was taken)


def try_run(step: Any, forced: bool = False) -> bool:
    """Run `step` as one query over its file if it can be; False (nothing done, nothing logged) if not."""
    global reason
    import duckdb

    from statgrid.sas.datastep.textplan import job
    try:
        j = job.prepare(step)
        j.check_data()
        j.run()
    except Refuse as exc:
        reason = str(exc)
        return False
    except duckdb.Error as exc:
        # invalid data (fieldsql.INVALID_MARK), a record that is not UTF-8, …: the Python engine runs the step
        reason = f"DuckDB: {exc}"
        return False
    reason = ""
    return True
