"""Report → CSV: one file per table, named after its id, header = the columns' keys (units in the
names), raw values (numbers unrounded)."""
from __future__ import annotations

import csv
import io

from statgrid.report.model import Report, Table


def table_csv(t: Table) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([c.key for c in t.columns])
    for r in t.rows:
        w.writerow(["" if r.get(c.key) is None else (repr(r[c.key]) if isinstance(r[c.key], float) else r[c.key])
                    for c in t.columns])
    return buf.getvalue()


def serialize(report: Report) -> dict[str, str]:
    """file name → text."""
    return {f"{t.id}.csv": table_csv(t) for t in report.tables}
