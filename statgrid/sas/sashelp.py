"""SASHELP, the read-only library every SAS session has: here its member CLASS (19 students: Name, Sex, Age,
Height, Weight — the data set SAS's manuals use in their examples; data label "Student Data"). Written when a
SAS session starts into the session's UTIL directory (removed with it), assigned read-only, so a program that
reads SASHELP.CLASS runs as in SAS and a program that writes to SASHELP gets the read-only library's ERROR."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from statgrid.sas.dataset import COLUMNS_KEY, LABEL_KEY, ColumnInfo, columns_metadata

CLASS_COLUMNS = [ColumnInfo("Name", "char", 8), ColumnInfo("Sex", "char", 1), ColumnInfo("Age", "num"),
                 ColumnInfo("Height", "num"), ColumnInfo("Weight", "num")]
CLASS_ROWS = [
    ("Alfred", "M", 14, 69.0, 112.5), ("Alice", "F", 13, 56.5, 84.0), ("Barbara", "F", 13, 65.3, 98.0),
    ("Carol", "F", 14, 62.8, 102.5), ("Henry", "M", 14, 63.5, 102.5), ("James", "M", 12, 57.3, 83.0),
    ("Jane", "F", 12, 59.8, 84.5), ("Janet", "F", 15, 62.5, 112.5), ("Jeffrey", "M", 13, 62.5, 84.0),
    ("John", "M", 12, 59.0, 99.5), ("Joyce", "F", 11, 51.3, 50.5), ("Judy", "F", 14, 64.3, 90.0),
    ("Louise", "F", 12, 56.3, 77.0), ("Mary", "F", 15, 66.5, 112.0), ("Philip", "M", 16, 72.0, 150.0),
    ("Robert", "M", 12, 64.8, 128.0), ("Ronald", "M", 15, 67.0, 133.0), ("Thomas", "M", 11, 57.5, 85.0),
    ("William", "M", 15, 66.5, 112.0)]
MEMBERS = {"class": (CLASS_COLUMNS, CLASS_ROWS, "Student Data")}


def assign(session: Any) -> None:
    """Write SASHELP's members under the session's UTIL (else WORK) directory and assign SASHELP read-only;
    a session that already has a SASHELP libref keeps it."""
    if "sashelp" in session.libraries:
        return
    scratch = session.util or session.work
    if scratch is None:
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = Path(scratch.path) / "sashelp"
    base.mkdir(exist_ok=True)
    for member, (cols, rows, label) in MEMBERS.items():
        path = base / f"{member}.parquet"
        if path.exists():
            continue
        fields = [pa.field(c.name, pa.string() if c.type == "char" else pa.float64()) for c in cols]
        schema = pa.schema(fields, metadata={COLUMNS_KEY: json.dumps(columns_metadata(cols)), LABEL_KEY: label})
        arrays = [pa.array([r[i] if c.type == "char" else float(r[i]) for r in rows], f.type)
                  for i, (c, f) in enumerate(zip(cols, fields))]
        pq.write_table(pa.Table.from_arrays(arrays, schema=schema), path)
    session.libraries.assign("sashelp", base, True)
