"""Monitor time series of a run, as the report needs them: inside the workload's window, one
series per machine and device (not per library or grid host when they share one), aligned on
sample intervals so machines add up.

Why not sum what every grid host sampled: hosts of an embedded grid are processes of one machine,
and libraries on one file system sit on one device — summing them would count the same bytes 4×
or 3×. Hosts whose monitors saw the same kernel (machine.json's boot id) are one machine, and
the first of them stands for it; a capture without machine.json counts each host as a machine,
or the whole grid as one when the caller knows it was embedded.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from statgrid.monitor import store


@dataclass
class Series:
    """Samples inside [t0, t1], keyed by sample slot k = round((ts − t0) / interval_s)."""
    t0: float
    interval_s: float
    machines: list[str]                                   # the hosts whose samples stand for a machine
    cpus: dict[str, int]                                  # machine → CPUs
    device_rows: list[dict] = field(default_factory=list)   # disk table rows of those machines
    node_rows: list[dict] = field(default_factory=list)
    library_rows: list[dict] = field(default_factory=list)
    hosts_of: dict[str, list[str]] = field(default_factory=dict)   # machine → every host sampled on it

    def slot(self, ts: float) -> int:
        return round((ts - self.t0) / self.interval_s)

    def per_slot(self, rows: list[dict], value) -> dict[int, float]:
        """Σ value(row) per sample slot (machines and devices add up)."""
        out: dict[int, float] = {}
        for r in rows:
            v = value(r)
            if v is not None:
                k = self.slot(r["ts"])
                out[k] = out.get(k, 0.0) + v
        return out

    def library_rows_of(self, machine: str, library: str) -> list[dict]:
        return [r for r in self.library_rows if r["host"] == machine and r["library"] == library]

    def libraries_by_device(self) -> dict[tuple[str, str], list[str]]:
        """(machine, device) → the libraries on it, in first-seen order."""
        out: dict[tuple[str, str], list[str]] = {}
        for r in self.library_rows:
            libs = out.setdefault((r["host"], r["device"] or "?"), [])
            if r["library"] not in libs:
                libs.append(r["library"])
        return out


def mb_s(row: dict) -> float:
    """A disk or library sample's reads + writes in MB/s."""
    return ((row["read_bytes_per_s"] or 0) + (row["write_bytes_per_s"] or 0)) / 1e6


def _rows(root: Path, table: str, hosts: list[str], t0: float, t1: float) -> list[dict]:
    try:
        t = store.load(root, table)
    except (FileNotFoundError, OSError, ValueError):
        return []
    return [r for r in t.to_pylist() if r["host"] in hosts and t0 - 0.5 <= r["ts"] <= t1 + 0.5]


def group_machines(monitor_dir: Path, embedded: bool) -> dict[str, list[str]]:
    """The first host of each machine → every host sampled on that machine."""
    out: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for host, machine_id in store.machines(monitor_dir).items():
        key = machine_id or ("embedded grid" if embedded else "host " + host)
        first.setdefault(key, host)
        out.setdefault(first[key], []).append(host)
    return out


def cpus_seen(node_rows: list[dict]) -> int | None:
    """The CPUs a host's samples counted: busy cores ÷ busy share (the median over samples)."""
    seen = sorted(r["cpu_busy_cores"] * 100 / busy for r in node_rows
                  if r.get("cpu_busy_cores") and (busy := (r["cpu_user_pct"] or 0) + (r["cpu_system_pct"] or 0)) > 1)
    return round(seen[len(seen) // 2]) or None if seen else None


def load(monitor_dir: Path, t0: float, t1: float, embedded: bool, default_cpus: int) -> Series | None:
    """The series of monitor_dir/<host>/ inside the window, or None when there are none."""
    monitor_dir = Path(monitor_dir)
    hosts_of = group_machines(monitor_dir, embedded)
    if not hosts_of:
        return None
    machines = sorted(hosts_of)
    node_rows = _rows(monitor_dir, "node", machines, t0, t1)
    intervals = sorted(r["interval_s"] for r in node_rows if r.get("interval_s"))
    interval_s = intervals[len(intervals) // 2] if intervals else 1.0
    cpus = {m: cpus_seen([r for r in node_rows if r["host"] == m]) or default_cpus for m in machines}
    return Series(t0, interval_s, machines, cpus, _rows(monitor_dir, "disk", machines, t0, t1), node_rows,
                  _rows(monitor_dir, "library", machines, t0, t1), hosts_of)


def span(monitor_dir: Path) -> tuple[float, float] | None:
    """First and last sample time of a capture (every host), or None when it has none."""
    try:
        t = store.load(monitor_dir, "node")
    except (OSError, ValueError):                      # a file cut short or not Parquet
        return None
    if t.num_rows == 0:
        return None
    ts = t.column("ts").to_pylist()
    return min(ts), max(ts)


def moving_max(values: dict[int, float], window: int) -> float | None:
    """The highest mean over `window` consecutive slots (missing slots count as 0)."""
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
