"""The node sampler: reads /proc counters (via _linux), and turns two snapshots into rates, once,
here — like psutil's front modules. Rows are dicts keyed by metrics.KEYS + metric names.

Formulas follow iostat/sar (sysstat) so the numbers can be held against them:
r/s = Δreads/Δt, rB/s = Δsectors·512/Δt, await = Δ(ms)/Δ(requests), %util = Δio_ms/Δt_ms,
aqu-sz = Δweighted_ms/Δt_ms; CPU shares over the Δ of the `cpu` line's ticks; PSI shares as
Δtotal_µs/Δt_µs (exact for the interval, unlike the kernel's avg10). A counter that went
backwards (device re-attached, wrap) gives no rate for that interval rather than a wrong one.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

from statgrid.monitor import _fs, _linux, libio
from statgrid.errors import UsageError
from statgrid.monitor._linux import SECTOR_BYTES, DiskCounters

VIRTUAL_PREFIXES = ("loop", "ram", "zram", "nbd")
PSI_RESOURCES = ("cpu", "io", "memory")


@dataclass
class Snapshot:
    mono_s: float                           # monotonic clock: deltas
    ts: float                               # wall clock: the row's time
    cpu: dict[str, int]
    load_1m: float
    mem: dict[str, int]
    disks: dict[str, DiskCounters]
    psi: dict[str, dict[str, int]] = field(default_factory=dict)
    net: dict[str, tuple[int, int]] = field(default_factory=dict)


def read_snapshot(procfs: str | None = None) -> Snapshot:
    mono, ts = time.monotonic(), time.time()
    psi = {}
    for res in PSI_RESOURCES:
        try:
            psi[res] = _linux.parse_pressure(_linux.read(f"pressure/{res}", procfs))
        except OSError:
            pass                            # no PSI (kernel < 4.20 or psi=0): those metrics stay empty
    try:
        net = _linux.parse_net_dev(_linux.read("net/dev", procfs))
    except OSError:
        net = {}
    return Snapshot(mono, ts, _linux.parse_stat_cpu(_linux.read("stat", procfs)),
                    _linux.parse_loadavg(_linux.read("loadavg", procfs)),
                    _linux.parse_meminfo(_linux.read("meminfo", procfs)),
                    _linux.parse_diskstats(_linux.read("diskstats", procfs)), psi, net)


def _d(a: int, b: int) -> int | None:
    d = b - a
    return d if d >= 0 else None


def _div(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    return a / b if b else 0.0


def node_row(prev: Snapshot, cur: Snapshot, host: str) -> dict:
    dt = cur.mono_s - prev.mono_s
    ticks = {k: _d(prev.cpu[k], cur.cpu[k]) for k in cur.cpu}
    total = sum(v for v in ticks.values() if v is not None) or None

    def pct(*keys: str) -> float | None:
        parts = [ticks[k] for k in keys]
        return None if total is None or None in parts else 100.0 * sum(parts) / total

    mem = cur.mem
    row = {"ts": cur.ts, "host": host, "interval_s": dt,
           "cpu_user_pct": pct("user", "nice"), "cpu_system_pct": pct("system", "irq", "softirq"),
           "cpu_iowait_pct": pct("iowait"), "cpu_idle_pct": pct("idle"), "cpu_steal_pct": pct("steal"),
           "load_1m": cur.load_1m,
           "mem_used_bytes": mem["MemTotal"] - mem["MemFree"] - mem.get("Buffers", 0) - mem.get("Cached", 0)
           - mem.get("SReclaimable", 0),
           "mem_cached_bytes": mem.get("Buffers", 0) + mem.get("Cached", 0) + mem.get("SReclaimable", 0),
           "mem_available_bytes": mem.get("MemAvailable"),
           "swap_used_bytes": mem.get("SwapTotal", 0) - mem.get("SwapFree", 0)}
    busy = pct("user", "nice", "system", "irq", "softirq")
    # cores busy = busy share × cores seen, and cores seen = ticks per second / USER_HZ
    row["cpu_busy_cores"] = (None if busy is None or total is None or not dt
                             else busy / 100.0 * total / (dt * _user_hz()))
    for res, kinds in (("cpu", ("some",)), ("io", ("some", "full")), ("memory", ("some", "full"))):
        for kind in kinds:
            a, b = prev.psi.get(res, {}).get(kind), cur.psi.get(res, {}).get(kind)
            row[f"psi_{res}_{kind}_pct"] = (None if a is None or b is None or not dt
                                            else _div(100.0 * (_d(a, b) or 0) / 1e6, dt))
    rx = tx = 0
    for name, (r, t) in cur.net.items():
        if name == "lo" or name not in prev.net:
            continue
        rx += max(0, r - prev.net[name][0])
        tx += max(0, t - prev.net[name][1])
    row["net_rx_bytes_per_s"] = _div(rx, dt) if cur.net else None
    row["net_tx_bytes_per_s"] = _div(tx, dt) if cur.net else None
    return row


DISK_METRIC_NAMES = ("read_bytes_per_s", "write_bytes_per_s", "read_iops", "write_iops", "avg_request_bytes",
                     "await_ms", "read_await_ms", "write_await_ms", "util_pct", "avg_queue_size")


def _d_ms(a: int, b: int) -> int:
    """The kernel prints diskstats' millisecond fields as 32-bit unsigned (part_stat_show): a
    backwards step is a wrap, unwrapped as sysstat does."""
    return (b - a) % (1 << 32)


def disk_metrics(a: DiskCounters, b: DiskCounters, dt: float) -> dict:
    """iostat -x for one device over dt seconds. await and areq-sz count discards as sysstat ≥ 12
    does. A request or sector counter that went backwards (device reset) gives no figures."""
    counts = [_d(getattr(a, f), getattr(b, f)) for f in
              ("reads", "writes", "discards", "read_sectors", "write_sectors", "discard_sectors")]
    if None in counts or not dt:
        return dict.fromkeys(DISK_METRIC_NAMES)
    reads, writes, discards, rsec, wsec, dsec = counts
    rms, wms, dms = _d_ms(a.read_ms, b.read_ms), _d_ms(a.write_ms, b.write_ms), _d_ms(a.discard_ms, b.discard_ms)
    io_ms, wt_ms = _d_ms(a.io_ms, b.io_ms), _d_ms(a.weighted_ms, b.weighted_ms)
    ios = reads + writes + discards
    return {"read_bytes_per_s": rsec * SECTOR_BYTES / dt, "write_bytes_per_s": wsec * SECTOR_BYTES / dt,
            "read_iops": reads / dt, "write_iops": writes / dt,
            "avg_request_bytes": (rsec + wsec + dsec) * SECTOR_BYTES / ios if ios else 0.0,
            "await_ms": (rms + wms + dms) / ios if ios else 0.0,
            "read_await_ms": rms / reads if reads else 0.0, "write_await_ms": wms / writes if writes else 0.0,
            "util_pct": min(100.0, io_ms / (dt * 1000) * 100), "avg_queue_size": wt_ms / (dt * 1000)}


def _user_hz() -> int:
    return os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class LibraryDevice:
    library: str
    path: str
    mount_point: str | None
    device: str | None              # diskstats name, None if the file system has no block device (tmpfs, NFS)
    fstype: str | None = None       # the mount's file system type (mountinfo), None if no mount matched
    source: str | None = None       # block | nfs | gpfs | process (libio.py); None: not measured
    where: str | None = None        # its rows' `device`: the diskstats name (block), the mount's source
                                    # (nfs), the file system (gpfs), "<fstype> <mount point>" (process)

    def unmeasured_note(self) -> str | None:
        """Why this library gets no per-library I/O rows, or how they are measured when not by its
        block device; None for a library on a block device."""
        if self.source == "block":
            return None
        if self.source in ("nfs", "gpfs"):
            return None
        if not self.mount_point:
            why = "on no mount this node can see"
        elif self.fstype in MEMORY_FS:
            why = f"on {self.fstype} at {self.mount_point!r}, which is memory, not a block device"
        elif self.fstype in NETWORK_FS or (self.fstype or "").startswith("fuse."):
            why = (f"on {self.fstype} at {self.mount_point!r}, a network or cluster file system with no "
                   "counters here (no NFS mountstats entry, or GPFS without mmpmon)")
        else:                                    # zfs, overlay, a btrfs whose source is not a device node …
            why = f"on {self.fstype} at {self.mount_point!r}, which statgrid cannot map to a block device"
        if self.source == "process":
            return (f"library {self.library!r} ({self.path}) is {why}: its rows (source 'process') are the grid "
                    "jobs' own I/O to that mount, from /proc/<pid>/io")
        return (f"library {self.library!r} ({self.path}) is {why}: no per-library I/O rows for it; node CPU, "
                "memory and network figures still cover it")


# File system types whose I/O no local block device carries (mountinfo's fstype field).
MEMORY_FS = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs"})
NETWORK_FS = frozenset({"nfs", "nfs4", "cifs", "smb3", "gpfs", "ceph", "lustre", "glusterfs", "beegfs", "9p",
                        "virtiofs", "afs", "ocfs2", "gfs2"})


def mount_device(m: _linux.Mount, by_dev: Mapping[tuple[int, int], str]) -> str | None:
    """The diskstats name of the block device a mount reads and writes. btrfs (and others that keep
    several devices) report an anonymous 0:N device in mountinfo; their source names the device node,
    whose st_rdev is the real major:minor (for a multi-device btrfs: the device it was mounted by)."""
    name = by_dev.get((m.major, m.minor))
    if name is None and m.major == 0 and m.source.startswith("/dev/"):
        try:
            rdev = os.stat(m.source).st_rdev
        except OSError:
            return None
        name = by_dev.get((os.major(rdev), os.minor(rdev)))
    return name


def map_libraries(libraries: Mapping[str, Path | str], procfs: str | None = None,
                  sources: Iterable[str] = libio.SOURCES, mmpmon: str | None = None) -> list[LibraryDevice]:
    """Library root → its mount, and the source of its rows (libio.choose_source): the block device
    (major:minor of the mount matched in diskstats), else the mount's NFS or GPFS counters, else
    the jobs' own I/O. The device a file system is mounted from is never held by another (the
    kernel claims a held device exclusively), so it is a counted device of top_devices() below."""
    mounts = _linux.parse_mountinfo(_linux.read("self/mountinfo", procfs))
    disks = _linux.parse_diskstats(_linux.read("diskstats", procfs))
    by_dev = {(d.major, d.minor): name for name, d in disks.items()}
    nfs_mounts: set[str] = set()
    if "nfs" in sources and any(m.fstype in ("nfs", "nfs4") for m in mounts):
        try:
            nfs_mounts = set(_fs.parse_mountstats(_linux.read("self/mountstats", procfs)))
        except OSError:
            pass
    out = []
    for lib, path in libraries.items():
        # realpath resolves the symlinks of the part that exists; a library not created yet
        # lives on the mount of its nearest existing parent, which the prefix match finds.
        m = _linux.mount_of(os.path.realpath(path), mounts)
        device = mount_device(m, by_dev) if m else None
        source = libio.choose_source(m.fstype if m else None, device is not None, m.mount_point if m else None,
                                     sources, nfs_mounts, mmpmon)
        where = {"block": device, "nfs": m.source if m else None, "gpfs": libio.gpfs_fs_name(m.source) if m else None,
                 "process": f"{m.fstype} {m.mount_point}" if m else None}.get(source or "")
        out.append(LibraryDevice(lib, str(path), m.mount_point if m else None, device, m.fstype if m else None,
                                 source, where))
    return out


# -- which devices the totals count --------------------------------------------------------------------
# One byte written through a stack passes every layer, and each layer's diskstats line counts it:
# a partition's I/O is in its disk's line too (iostats.rst, "Disks vs Partitions"), an LVM volume's
# in the partition under it, a multipath device's in one of its paths, an md RAID1's in each mirror.
# Summing every line counted 100 MB/s through sda1 + LVM as ~300 MB/s (issue 14, item 3). The rule:
# totals count the top-most devices — those no other device holds (sysfs holders/, empty) and, for a
# whole disk, with no partitions — so every logical byte counts once, as the file systems (and the
# library lines, which follow the mount's device) see it. What this leaves out is physical I/O that
# no layer above shows: RAID1's second copy, RAID5/6 parity, a multipath path's share. Those rows
# stay in the saved disk table (per-device figures); totals are the logical load, which is what the
# papers' MB/s per core compares (and what fio and the jobs' bytes measure).
def top_devices(topology: Mapping[str, _linux.BlockDevice]) -> dict[str, tuple[str, ...]]:
    """device → the top-most devices its bytes are counted in (itself when nothing sits on it)."""
    above: dict[str, set[str]] = {name: set(b.holders) for name, b in topology.items()}
    for name, b in topology.items():
        if b.parent:
            above.setdefault(b.parent, set()).add(name)
    memo: dict[str, frozenset[str]] = {}

    def tops(name: str, path: frozenset[str]) -> frozenset[str]:
        if name not in memo:
            ups = [u for u in above.get(name, ()) if u not in path]      # a cycle cannot happen; never loop on one
            memo[name] = (frozenset().union(*(tops(u, path | {name}) for u in ups)) if ups
                          else frozenset({name}))
        return memo[name]

    return {name: tuple(sorted(tops(name, frozenset()))) for name in topology}


NO_STACK = {"counted_in": None, "layer": None}


def stack_keys(topology: Mapping[str, _linux.BlockDevice] | None, names) -> dict[str, dict]:
    """Each device's disk-row keys: counted_in (space-separated top-most devices; the device itself
    when it is counted) and layer; {} without sysfs, so rows keep NO_STACK (every device summed)."""
    if topology is None:
        return {}
    tops = top_devices(topology)
    return {n: {"counted_in": " ".join(tops.get(n, (n,))), "layer": topology[n].layer if n in topology else None}
            for n in names}


def is_counted(row: Mapping) -> bool:
    """Whether a disk row goes into device totals: a top-most device, or any device of a capture
    with no record of the stack (counted_in None: saved before statgrid read sysfs, or no /sys)."""
    counted_in = row.get("counted_in")
    return counted_in is None or row["device"] in counted_in.split()


class Sampler:
    """Call sample() once per interval; the first call only primes the counters (returns None)."""

    def __init__(self, host: str, libraries: Mapping[str, Path | str] | None = None, procfs: str | None = None,
                 sysfs: str | None = None, sources: Iterable[str] = libio.SOURCES,
                 job_parents: Callable[[], list[int]] | None = None, mmpmon: str | None = None):
        """sources: which library sources to use (libio.SOURCES; ("block",) is the monitor before
        them); job_parents: the processes whose children are grid jobs (libio.node_job_parents), None
        when this monitor knows no jobs; mmpmon: its path (default: looked for when a library is on GPFS)."""
        self.host = host
        self.procfs = procfs
        self.sysfs = sysfs
        sources = tuple(sources)
        bad = [s for s in sources if s not in libio.SOURCES]
        if bad:
            raise UsageError(f"library source {bad[0]!r} is not one of {', '.join(libio.SOURCES)}; "
                             "e.g. --sources block,nfs,gpfs,process")
        if mmpmon is None and "gpfs" in sources:
            mmpmon = libio.find_mmpmon()
        self.libraries = map_libraries(libraries or {}, procfs, sources, mmpmon)
        self.fs = libio.FsSources(self.libraries, procfs, job_parents, mmpmon)
        self.prev: Snapshot | None = None
        self.prev_fs: libio.FsSnapshot | None = None
        self.stack: dict[str, dict] = {}
        self._names: frozenset[str] | None = None

    def _restack(self, snap: Snapshot) -> None:
        """Read the device stack again when the set of devices changed (hot-plug, a volume activated)."""
        names = frozenset(snap.disks)
        if names != self._names:
            self._names = names
            self.stack = stack_keys(_linux.read_block_topology(self.sysfs), names)

    def devices(self, snap: Snapshot) -> list[str]:
        wanted = {lib.device for lib in self.libraries if lib.source == "block"}
        for name, d in snap.disks.items():
            if not name.startswith(VIRTUAL_PREFIXES) and (d.reads or d.writes):
                wanted.add(name)
        for name in list(wanted):                        # the devices that count a sampled device's bytes
            wanted.update(n for n in (self.stack.get(name, NO_STACK)["counted_in"] or "").split() if n in snap.disks)
        return sorted(wanted)

    def sample(self, snap: Snapshot | None = None, fs: libio.FsSnapshot | None = None) -> dict[str, list[dict]] | None:
        """Rows for the interval since the previous call (snap, fs: snapshots read elsewhere; default now)."""
        cur = snap or read_snapshot(self.procfs)
        cur_fs = fs or self.fs.snapshot()
        self._restack(cur)
        prev, self.prev = self.prev, cur
        prev_fs, self.prev_fs = self.prev_fs, cur_fs
        if prev is None or prev_fs is None:
            return None
        out = rows(prev, cur, self.host, self.libraries, self.devices(cur), self.stack)
        out["library"] += self.fs.rows(prev_fs, cur_fs, cur.ts, self.host, cur.mono_s - prev.mono_s)
        order = {lib.library: i for i, lib in enumerate(self.libraries)}
        out["library"].sort(key=lambda r: order.get(r["library"], len(order)))
        return out


def rows(prev: Snapshot, cur: Snapshot, host: str, libraries: list[LibraryDevice], devices: list[str],
         stack: Mapping[str, dict] | None = None) -> dict[str, list[dict]]:
    dt = cur.mono_s - prev.mono_s
    disk_rows = {}
    for dev in devices:
        if dev in prev.disks and dev in cur.disks:
            disk_rows[dev] = {"ts": cur.ts, "host": host, "device": dev, **(stack or {}).get(dev, NO_STACK),
                              **disk_metrics(prev.disks[dev], cur.disks[dev], dt)}
    lib_rows = [{**disk_rows[lib.device], "library": lib.library, "path": lib.path, "source": "block",
                 "storage_read_bytes_per_s": None, "storage_write_bytes_per_s": None}
                for lib in libraries if lib.source == "block" and lib.device in disk_rows]
    return {"node": [node_row(prev, cur, host)], "disk": list(disk_rows.values()), "library": lib_rows}
