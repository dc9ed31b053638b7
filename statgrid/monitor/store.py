"""Monitor time series on disk: Parquet per node, consolidated across nodes on read.

Layout: <dir>/<host>/<table>-<first ts>-<pid>.parquet, one file per flush (every
`flush_every` samples and at the end), so a crash loses at most one flush and several
monitors never write the same file. <dir>/<host>/machine.json says which machine the host's
samples came from (the kernel's boot id): hosts of one machine (an embedded grid, containers on
one server) see the same /proc/stat and /proc/diskstats, so a report counts them once.
`load(dir, table)` reads every node's files as one table sorted by time and host — what nmon's
consolidator does for a set of nmon files. The schema comes from metrics.py.

Every file carries its format version in the Parquet key-value metadata (FORMAT_KEY), which the
reader checks: 1 (no version written) lacks the disk table's counted_in and layer, read as null
(the report then sums every device, as it did, and says so); 2 has them; 3 adds the library
table's source and storage_*_bytes_per_s (libio.py) — a library row of format 1 or 2 is a block row.
"""
from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from statgrid.errors import StatgridError, UsageError
from statgrid.monitor.metrics import KEYS, TABLE_METRICS

TABLES = ("node", "disk", "library")
_KEY_TYPES = {"ts": pa.float64(), "interval_s": pa.float64()}
FORMAT_VERSION = 3
FORMAT_KEY = b"statgrid.monitor.format"


def schema(table: str) -> pa.Schema:
    keys = [pa.field(k, _KEY_TYPES.get(k, pa.string())) for k in KEYS[table]]
    return pa.schema(keys + [pa.field(m.name, pa.float64()) for m in TABLE_METRICS[table]])


def host_dir(out_dir: Path, host: str) -> Path:
    """`out_dir/host`, the directory of one host's samples: the host name must be one file name
    (`hosts` reads `*/node-*.parquet`), so "a/b", "..", "" or a control character are refused."""
    if (not host or host in (".", "..") or "/" in host or "\0" in host or not host.isprintable()
            or len(host.encode()) > 255):
        raise UsageError(f"host name {host!r} cannot name a directory of samples: give one name of printable "
                         "characters without '/' (at most 255 bytes, not '.' or '..'), e.g. --host node1.")
    return Path(out_dir) / host


class MonitorWriter:
    def __init__(self, out_dir: Path, host: str, flush_every: int = 60):
        self.dir = host_dir(out_dir, host)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.flush_every = flush_every
        self.buffers: dict[str, list[dict]] = {t: [] for t in TABLES}
        self.samples = 0

    def append(self, rows: dict[str, list[dict]]) -> None:
        for table, rs in rows.items():
            self.buffers[table].extend(rs)
        self.samples += 1
        write_latest(self.dir, rows)
        if self.samples % self.flush_every == 0:
            self.flush()

    def flush(self) -> None:
        for table, rs in self.buffers.items():
            if not rs:
                continue
            sch = schema(table)
            # Column by column: Table.from_pylist imports pandas on first use (~0.4 s of CPU).
            data = pa.Table.from_arrays([pa.array([r.get(f.name) for r in rs], type=f.type) for f in sch],
                                        schema=sch)
            path = self.dir / f"{table}-{rs[0]['ts']:.3f}-{os.getpid()}.parquet"
            tmp = path.with_suffix(".tmp")
            pq.write_table(data.replace_schema_metadata({FORMAT_KEY: str(FORMAT_VERSION).encode()}), tmp,
                           compression="zstd")
            os.replace(tmp, path)
            rs.clear()


MACHINE_FILE = "machine.json"
LATEST_FILE = "latest.json"     # the newest sample of every table, replaced at each sample (the live view)


def write_latest(host_dir: Path, rows: dict[str, list[dict]]) -> None:
    """<dir>/<host>/latest.json: this sample's rows, written beside and renamed (readers see a
    whole one) — what /metrics and live views read between the Parquet flushes."""
    tmp = host_dir / f".{LATEST_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(rows))
    os.replace(tmp, host_dir / LATEST_FILE)


def read_latest(host_dir: Path) -> dict[str, list[dict]]:
    """The rows of latest.json ({} when there is none or it cannot be read)."""
    try:
        data = json.loads((host_dir / LATEST_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_machine(out_dir: Path, host: str, info: dict) -> None:
    d = host_dir(out_dir, host)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / (MACHINE_FILE + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"host": host, **info}, sort_keys=True) + "\n")
    os.replace(tmp, d / MACHINE_FILE)


def hosts(root: Path) -> list[str]:
    """The hosts with samples under root, sorted."""
    root = Path(root)
    return sorted({p.parent.name for p in root.glob("*/node-*.parquet")}) if root.is_dir() else []


def machines(root: Path) -> dict[str, dict]:
    """host → its machine.json ({} when its capture predates it): machine_id (the kernel's boot id), cpus."""
    out: dict[str, dict] = {}
    for h in hosts(root):
        try:
            info = json.loads((Path(root) / h / MACHINE_FILE).read_text())
        except (OSError, ValueError):
            info = {}
        out[h] = info if isinstance(info, dict) else {}
    return out


def load(root: Path, table: str) -> pa.Table:
    """Every node's rows of one table, sorted by ts and host (empty table if none)."""
    files = sorted(Path(root).glob(f"*/{table}-*.parquet"))
    if not files:
        return schema(table).empty_table()
    data = pa.concat_tables([read_file(f, table) for f in files])
    return data.sort_by([("ts", "ascending"), ("host", "ascending")])


def read_file(path: Path, table: str) -> pa.Table:
    """One file in this version's schema: columns an older format lacks are null."""
    data = pq.read_table(path)
    raw = (data.schema.metadata or {}).get(FORMAT_KEY, b"1")
    version = int(raw) if raw.isdigit() else None
    if version is None or version > FORMAT_VERSION:
        raise StatgridError(f"{str(path)!r} is monitor format {raw.decode(errors='replace')!r}; this statgrid reads "
                            f"formats 1 to {FORMAT_VERSION}: report on it with the statgrid that wrote it, or upgrade.")
    sch = schema(table)
    cols = [data.column(f.name).cast(f.type) if f.name in data.column_names else pa.nulls(data.num_rows, f.type)
            for f in sch]
    if table == "library" and "source" not in data.column_names:     # before format 3 only devices gave rows
        cols[sch.get_field_index("source")] = pa.array(["block"] * data.num_rows, pa.string())
    return pa.Table.from_arrays(cols, schema=sch)


def export_csv(root: Path, out_dir: Path) -> list[Path]:
    """One CSV per table with rows (node.csv, disk.csv, library.csv); headers are the metric names,
    whose suffixes carry the units. Times are also given as ISO 8601 (UTC)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for table in TABLES:
        data = load(root, table)
        if data.num_rows == 0:
            continue
        path = out_dir / f"{table}.csv"
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            names = data.column_names
            w.writerow(["time_utc", *names])
            for row in data.to_pylist():
                iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(row["ts"])) + f".{int(row['ts'] % 1 * 1000):03d}Z"
                w.writerow([iso, *("" if row[n] is None else f"{row[n]:.3f}" if n == "ts" else _fmt(row[n])
                                   for n in names)])
        written.append(path)
    return written


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.0f}"
    return str(v)


def moving_max(values: dict[int, float], window: int) -> float | None:
    """The highest mean over `window` consecutive slots (missing slots count as 0; the whole span when shorter):
    a series' sustained rate (report tables, advise's jobs' own MB/s)."""
    if not values:
        return None
    lo, hi = min(values), max(values)
    seq = [values.get(k, 0.0) for k in range(lo, hi + 1)]
    if len(seq) <= window:
        return sum(seq) / len(seq)
    run = sum(seq[:window])
    best = run
    for i in range(window, len(seq)):
        run += seq[i] - seq[i - window]
        best = max(best, run)
    return best / window
