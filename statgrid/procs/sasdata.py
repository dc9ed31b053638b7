"""SAS data sets in and out: `.sas7bdat` and `.xpt` → a statgrid data set (Parquet), and a
data set → `.xpt` (SAS transport, what SAS reads everywhere). Reading and writing use
pyreadstat (ReadStat), the library made for these formats.

Variable labels, SAS formats and value labels (from a `.sas7bcat` catalog) travel with the
data: they are kept in the Parquet file's key-value metadata under `statgrid.columns` (JSON:
{column: {"label", "format", "value_labels"}}), with the file label under `statgrid.label`,
and `sas_metadata(data)` reads them back. Dates, datetimes and times become DATE, TIMESTAMP and
TIME columns; SAS missing values (., .A–.Z, ._) become NULL.
"""
from __future__ import annotations

import json
from pathlib import Path

from statgrid.errors import StatgridError
from statgrid.procs._base import procedure

COLUMNS_KEY = "statgrid.columns"
LABEL_KEY = "statgrid.label"


def _read(path: Path, catalog: Path | None, encoding: str | None):
    import pyreadstat

    kwargs = {"encoding": encoding} if encoding else {}
    suffix = path.suffix.lower()
    try:
        if suffix == ".sas7bdat":
            if catalog is not None:
                kwargs["catalog_file"] = str(catalog)
            return pyreadstat.read_sas7bdat(str(path), **kwargs)
        if suffix in (".xpt", ".xport"):
            return pyreadstat.read_xport(str(path), **kwargs)
    except pyreadstat.ReadstatError as exc:
        raise StatgridError(f"cannot read {str(path)!r} as SAS data: {exc}; check the file is a complete "
                            f"{suffix} file (and give encoding= if its text is not UTF-8).") from None
    raise StatgridError(f"{str(path)!r} is neither .sas7bdat nor .xpt; statgrid imports those SAS formats "
                        "(convert others to one of them in SAS, or import CSV with import_csv).")


@procedure("PROCEDURE IMPORT (SAS)")
def import_sas(s, path: str, out: str, catalog: str | None = None, encoding: str | None = None):
    """Import a .sas7bdat or .xpt file as data set `out`, keeping labels, formats and (with a
    .sas7bcat `catalog`) value labels. Returns the DatasetRef written."""
    import pyarrow as pa

    src = Path(path)
    if not src.is_file():
        raise StatgridError(f"SAS file {path!r} does not exist; give the path of a .sas7bdat or .xpt file.")
    cat = Path(catalog) if catalog else None
    if cat is not None and not cat.is_file():
        raise StatgridError(f"format catalog {catalog!r} does not exist; give a .sas7bcat file or leave it out.")
    df, meta = _read(src, cat, encoding)
    table = pa.Table.from_pandas(df, preserve_index=False)
    columns = {}
    value_labels = getattr(meta, "variable_to_label", {}) or {}
    label_sets = getattr(meta, "value_labels", {}) or {}
    for name in df.columns:
        info = {"label": meta.column_names_to_labels.get(name),
                "format": meta.original_variable_types.get(name)}
        if name in value_labels and value_labels[name] in label_sets:
            info["value_labels"] = {str(k): v for k, v in label_sets[value_labels[name]].items()}
        columns[name] = {k: v for k, v in info.items() if v}
    kv = {COLUMNS_KEY: json.dumps(columns)}
    if meta.file_label:
        kv[LABEL_KEY] = meta.file_label
    ref = s.write_table(out, table, kv_metadata=kv)
    s.log.note(f"Imported {src.name} ({meta.table_name or 'no member name'}"
               f"{', label ' + repr(meta.file_label) if meta.file_label else ''}): {len(df)} observations, "
               f"{len(df.columns)} variables, {sum(1 for c in columns.values() if c.get('label'))} labels, "
               f"{sum(1 for c in columns.values() if c.get('format'))} formats.")
    return ref


def sas_metadata(s, data: str) -> dict:
    """{"label": file label or None, "columns": {name: {"label", "format", "value_labels"}}} of a data set."""
    import pyarrow.parquet as pq

    ref = s.dataset(data)
    kv = pq.read_metadata(ref.path).metadata or {}
    cols = kv.get(COLUMNS_KEY.encode())
    label = kv.get(LABEL_KEY.encode())
    return {"label": label.decode() if label else None, "columns": json.loads(cols) if cols else {}}


@procedure("PROCEDURE EXPORT (XPT)")
def export_xpt(s, data: str, path: str, table_name: str | None = None) -> Path:
    """Write data set `data` as a SAS transport (.xpt, version 5) file, with the labels and
    formats it carries. SAS v5 transport limits names to 8 characters and labels to 40."""
    import pyreadstat

    ref = s.dataset(data)
    meta = sas_metadata(s, data)
    df = s.fetch_arrow(f"SELECT * FROM {ref.scan_sql()}").to_pandas()
    long = [c for c in df.columns if len(c) > 8]
    if long:
        raise StatgridError(f"variable {long[0]!r} has more than 8 characters, which SAS transport v5 does not "
                            "allow; rename it first with data(..., rename={...}).")
    labels = {c: (meta["columns"].get(c, {}).get("label") or "")[:40] for c in df.columns}
    formats = {c: f for c in df.columns if (f := meta["columns"].get(c, {}).get("format"))}
    dest = Path(path)
    try:
        pyreadstat.write_xport(df, str(dest), file_label=(meta["label"] or "")[:40],
                               column_labels=[labels[c] for c in df.columns],
                               table_name=(table_name or ref.name.split(".")[-1])[:8].upper(),
                               variable_format=formats or None)
    except OSError as exc:
        raise StatgridError(f"cannot write {path!r}: {exc.strerror}; choose a writable path.") from None
    s.log.note(f"Wrote {len(df)} observations and {len(df.columns)} variables of {ref} to {dest}.")
    return dest
