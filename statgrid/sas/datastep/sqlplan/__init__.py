"""The SQL engine (engines.py): a DATA step whose rows do not depend on each other as one DuckDB query
written by COPY straight to the output's Parquet file (adopted by the step's DatasetWriter: the same
schema, key-value metadata, atomic rename and NOTE as the Python engine's).

Two patterns: the row-wise step (rowwise.py: SET, assignments, IF, subsetting IF, DELETE) and the hash
lookup (hashjoin.py: a join). Whether a step fits is decided before anything is done; the one look at the
data before the write — counts, missing values and the largest |value| of the input columns the
expressions read — may still refuse it, and it leaves no trace. When a step is refused, `reason` says why.

The log is the Python engine's, line for line: the hash object's load NOTE, the "observations read"
NOTE of each SET's data set in the order of the SET statements, then the output's "has N observations and
M variables" (the run-time NOTE counters stay empty: nothing these steps do can make one)."""
from __future__ import annotations

from typing import Any

from statgrid.sas.datastep.sqlplan.exprsql import Refuse

reason = ""          # why the last step offered was refused ("" when it was taken)


def try_run(step: Any, forced: bool = False) -> bool:
    """Run `step` as SQL if it can be; False (nothing done) if not. No size threshold: the query costs less
    than the Python engine's set-up whatever the row count."""
    global reason
    from statgrid.sas.datastep.sqlplan import runner
    try:
        job = runner.prepare(step)
        job.check_data()
    except Refuse as exc:
        reason = str(exc)
        return False
    import duckdb
    try:
        job.run()
    except (duckdb.Error, Refuse) as exc:
        # the COPY failed, or wrote another schema: before any NOTE, its file removed; Python runs the step
        reason = f"the write: {exc}"
        return False
    reason = ""
    return True

