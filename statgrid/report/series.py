"""Monitor time series of a run, as the report needs them: inside the workload's window, one
series per machine and device (not per library or grid host when they share one), aligned on
sample intervals so machines add up.

Why not sum what every grid host sampled: hosts of an embedded grid are processes of one machine,
and libraries on one file system sit on one device — summing them would count the same bytes 4×
or 3×. Hosts whose monitors saw the same kernel (machine.json's boot id) are one machine, and
the first of them stands for it; a capture without machine.json counts each host as a machine,
or the whole grid as one when the caller knows it was embedded. Likewise a byte passes every layer
of a device stack (partition, LVM, md, multipath): device_rows hold only the devices the monitor
marked as counted (sampler.is_counted: the top-most ones), the rest are kept in stacked_rows to
say what was left out.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path

from statgrid.monitor import store
from statgrid.monitor.sampler import is_counted


@dataclass
class Series:
    """Samples inside [t0, t1], keyed by sample slot k = round((ts − t0) / interval_s), where
    interval_s is the coarsest machine's sample interval (machines sampled at different rates
    line up on it). Rows carry their machine's name as host."""
    t0: float
    interval_s: float
    machines: list[str]                                   # one name per machine: its first host
    cpus: dict[str, int]                                  # machine → CPUs
    device_rows: list[dict] = field(default_factory=list)   # disk rows of those machines that totals count
    node_rows: list[dict] = field(default_factory=list)
    library_rows: list[dict] = field(default_factory=list)
    hosts_of: dict[str, list[str]] = field(default_factory=dict)   # machine → every host sampled on it
    intervals: dict[str, float] = field(default_factory=dict)      # machine → its own sample interval
    stacked_rows: list[dict] = field(default_factory=list)  # disk rows under a counted device (not summed)

    def slot(self, ts: float) -> int:
        return round((ts - self.t0) / self.interval_s)

    def per_slot(self, rows: list[dict], value) -> dict[int, float]:
        """value(row) per slot: summed over a sample's devices and over machines, averaged over a
        machine's samples that fall in one slot (a machine sampled faster than the slot width)."""
        per_sample: dict[tuple[str, float], float] = {}
        for r in rows:
            v = value(r)
            if v is not None:
                key = (r["host"], r["ts"])
                per_sample[key] = per_sample.get(key, 0.0) + v
        per_machine: dict[tuple[str, int], list[float]] = {}
        for (host, ts), v in per_sample.items():
            per_machine.setdefault((host, self.slot(ts)), []).append(v)
        out: dict[int, float] = {}
        for (_, k), vs in per_machine.items():
            out[k] = out.get(k, 0.0) + sum(vs) / len(vs)
        return out

    def span_s(self) -> float:
        """From the start of the first sample's interval to the last sample."""
        if not self.node_rows:
            return 0.0
        start = min(r["ts"] - self.intervals.get(r["host"], self.interval_s) for r in self.node_rows)
        return max(r["ts"] for r in self.node_rows) - start

    def mean(self, rows: list[dict], value) -> float | None:
        """The time mean of a rate: Σ value(row) × its machine's interval ÷ the span (so machines
        sampled at different rates weigh by the time each sample covers)."""
        span = self.span_s()
        if not span:
            return None
        total = 0.0
        for r in rows:
            v = value(r)
            if v is not None:
                total += v * self.intervals.get(r["host"], self.interval_s)
        return total / span

    def only(self, machine: str) -> "Series":
        """The same series with one machine."""
        def mine(rows):
            return [r for r in rows if r["host"] == machine]
        return replace(self, machines=[machine], cpus={machine: self.cpus[machine]},
                       device_rows=mine(self.device_rows), node_rows=mine(self.node_rows),
                       library_rows=mine(self.library_rows), hosts_of={machine: self.hosts_of.get(machine, [machine])},
                       intervals={machine: self.intervals.get(machine, self.interval_s)},
                       stacked_rows=mine(self.stacked_rows))

    def library_rows_of(self, machine: str, library: str) -> list[dict]:
        return [r for r in self.library_rows if r["host"] == machine and r["library"] == library]

    def libraries_by_device(self) -> dict[tuple[str, str], list[str]]:
        """(machine, where) → the libraries there, in first-seen order. where names the device, or
        for a library not on a block device the source of its rows (source_label): libraries on one
        device or mount share its figures (the jobs' I/O is charged per mount: monitor/libio.py)."""
        out: dict[tuple[str, str], list[str]] = {}
        for r in self.library_rows:
            libs = out.setdefault((r["host"], source_label(r)), [])
            if r["library"] not in libs:
                libs.append(r["library"])
        return out


SOURCE_WORDS = {"nfs": "NFS mountstats", "gpfs": "GPFS mmpmon", "process": "the jobs' own I/O"}


def source_label(row: dict) -> str:
    """Where a library row's figures come from: its device ('sda'), or '<mount>, <source>' for the
    other sources ('tmpfs /scratch, the jobs' own I/O'; 'srv:/export, NFS mountstats')."""
    device = row.get("device") or "?"
    source = row.get("source") or "block"
    return device if source == "block" else f"{device}, {SOURCE_WORDS.get(source, source)}"


def mb_s(row: dict) -> float:
    """A disk or library sample's reads + writes in MB/s."""
    return ((row["read_bytes_per_s"] or 0) + (row["write_bytes_per_s"] or 0)) / 1e6


def iops(row: dict) -> float:
    """A disk or library sample's read + write requests per second."""
    return (row["read_iops"] or 0) + (row["write_iops"] or 0)


def _rows(root: Path, table: str, t0: float | None, t1: float | None) -> list[dict]:
    try:
        t = store.load(root, table)
    except (OSError, ValueError):                      # a file cut short or not Parquet
        return []
    return [r for r in t.to_pylist() if (t0 is None or r["ts"] >= t0 - 0.5) and (t1 is None or r["ts"] <= t1 + 0.5)]


def group_machines(infos: dict[str, dict], embedded: bool) -> dict[str, list[str]]:
    """The first host of each machine → every host sampled on it. Hosts whose monitors saw one
    kernel (machine.json's machine_id) are one machine; every host of an embedded grid is."""
    hosts = sorted(infos)
    if embedded:
        return {hosts[0]: hosts} if hosts else {}
    out: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for host in hosts:
        key = infos[host].get("machine_id") or "host " + host
        first.setdefault(key, host)
        out.setdefault(first[key], []).append(host)
    return out


def cpus_seen(node_rows: list[dict]) -> int | None:
    """The CPUs a host's samples counted: busy cores ÷ busy share (the median over samples)."""
    seen = sorted(r["cpu_busy_cores"] * 100 / busy for r in node_rows
                  if r.get("cpu_busy_cores") and (busy := (r["cpu_user_pct"] or 0) + (r["cpu_system_pct"] or 0)) > 1)
    return round(seen[len(seen) // 2]) or None if seen else None


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def load(monitor_dir: Path, t0: float | None = None, t1: float | None = None, embedded: bool = False,
         default_cpus: int = 1) -> Series | None:
    """The series of monitor_dir/<host>/ inside [t0, t1] (default: every sample), or None when
    there are none. A machine sampled by several hosts takes, slot by slot, the samples of its
    first host that has one in that slot: each moment counted once, none dropped."""
    monitor_dir = Path(monitor_dir)
    infos = store.machines(monitor_dir)
    groups = group_machines(infos, embedded)
    node_all = _rows(monitor_dir, "node", t0, t1)
    if not groups or not node_all:
        return None
    host_interval = {h: _median([r["interval_s"] for r in node_all if r["host"] == h and r.get("interval_s")])
                     for h in infos}
    interval_s = max((v for v in host_interval.values() if v), default=1.0)
    t0 = min(r["ts"] for r in node_all) if t0 is None else t0
    machine_of = {h: m for m, hs in groups.items() for h in hs}
    slot = Series(t0, interval_s, [], {}).slot
    chosen: dict[tuple[str, int], str] = {}           # (machine, slot) → the host whose samples stand for it
    for r in sorted(node_all, key=lambda r: groups[machine_of[r["host"]]].index(r["host"])):   # first host first
        chosen.setdefault((machine_of[r["host"]], slot(r["ts"])), r["host"])

    def keep(rows: list[dict]) -> list[dict]:
        out = []
        for r in rows:
            m = machine_of.get(r["host"])
            if m is not None and chosen.get((m, slot(r["ts"]))) == r["host"]:
                out.append({**r, "host": m})
        return out

    node_rows = keep(node_all)
    machines = sorted(groups)
    # machine.json's count (the kernel's, when the monitor started) first: the samples' estimate
    # (busy cores ÷ busy share) is only as good as the few busy samples of a quiet capture, and
    # came out 1 for a 2-CPU machine on a loaded CI run. It stays for captures without machine.json.
    cpus = {m: next((infos[h]["cpus"] for h in groups[m] if infos[h].get("cpus")), None)
            or cpus_seen([r for r in node_rows if r["host"] == m]) or default_cpus
            for m in machines}
    intervals = {m: _median([r["interval_s"] for r in node_rows if r["host"] == m and r.get("interval_s")])
                 or interval_s for m in machines}
    disk = keep(_rows(monitor_dir, "disk", t0, t1))
    return Series(t0, interval_s, machines, cpus, [r for r in disk if is_counted(r)], node_rows,
                  keep(_rows(monitor_dir, "library", t0, t1)), groups, intervals,
                  [r for r in disk if not is_counted(r)])
