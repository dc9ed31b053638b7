"""Report → JSON: every table (columns, raw rows, notes) and every chart's data."""
from __future__ import annotations

import json

from statgrid.report.model import Report


def serialize(report: Report) -> str:
    return json.dumps({
        "title": report.title, "subtitle": report.subtitle, "notes": report.notes,
        "tables": [{"id": t.id, "title": t.title, "columns": [{"key": c.key, "header": c.header} for c in t.columns],
                    "rows": t.rows, "notes": t.notes} for t in report.tables],
        "charts": [{"id": c.id, "title": c.title, "kind": c.kind, "caption": c.caption, "data": c.data}
                   for c in report.charts],
    }, indent=1)
