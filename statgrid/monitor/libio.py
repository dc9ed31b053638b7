"""Per-library I/O where the library is not on a local block device, so that no library is blank:
each library row says which `source` gave it.

    block    the library's mount is on a block device: its diskstats figures (sampler.disk_metrics)
    nfs      an NFS mount: /proc/self/mountstats — bytes to/from the server (the `bytes:` line's
             server fields), READ/WRITE ops, and their execute time (request to reply) as latency
    gpfs     a GPFS (Spectrum Scale) file system and `mmpmon` on PATH: its fs_io_s answer — bytes
             and read/write calls of the applications on this node (no latency in fs_io_s)
    process  any other file system (tmpfs, overlay, zfs, an NFS mount without mountstats, GPFS
             without mmpmon …): the grid jobs' own I/O, /proc/<pid>/io of each running job

Which library a job's I/O belongs to. A job's process is charged to the file systems (mounts) its
open files are on, read from /proc/<pid>/fd at each sample: that is where it reads and writes now,
whatever it declared. The session's declared libraries (its DATA, WORK, UTIL) were the other
choice, but a session declares all of them at once and reads one while it writes another, so the
declaration cannot split its bytes; its open files can. The interval's bytes go to the mounts seen
at either end of it (split evenly when there are several); a job with no file open on a library's
mount at either end is charged to the mounts it was last seen on (a step that opens, writes and
closes between two samples), and failing that to its working directory's — weaker evidence, so it
never takes a share from a mount an open file shows. Libraries on one mount share its
row, as libraries on one disk share the disk's. What this misses, and says in README: the last
interval of a job that ended between two samples (its counters go with it), I/O of a job's
children before they are reaped (a parent's /proc/<pid>/io counts its children when it reaps
them, kernel/exit.c), and jobs the monitor may not read (another user's, unless it runs as root).

Which processes are jobs: the children of the node's launcher, which is a child of the node's Dask
worker, as the monitor is — so the monitor started by a node (--stdin-liveness) takes the children
of its siblings. A monitor started by hand sees no jobs: its `process` rows read null.
"""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from statgrid.monitor import _fs, _linux

log = logging.getLogger("statgrid.monitor")

SOURCES = ("block", "nfs", "gpfs", "process")
MMPMON_TIMEOUT_S = 5.0
RESCAN_EVERY = 10                   # samples between two reads of the node worker's children
PATH_CACHE_MAX = 4096
FS_METRIC_NAMES = ("read_bytes_per_s", "write_bytes_per_s", "read_iops", "write_iops", "avg_request_bytes",
                   "await_ms", "read_await_ms", "write_await_ms", "util_pct", "avg_queue_size",
                   "storage_read_bytes_per_s", "storage_write_bytes_per_s")


@dataclass
class FsSnapshot:
    mono_s: float
    nfs: dict[str, _fs.NfsMount] = field(default_factory=dict)          # mount point → counters
    gpfs: dict[str, _fs.GpfsFs] | None = None                          # fs → counters; None: mmpmon failed
    # job pid → (io, mounts of its open files, mounts to charge if none: libio.FsSources._read_jobs)
    procs: dict[int, tuple[_fs.ProcIo, frozenset[str], frozenset[str]]] = field(default_factory=dict)
    jobs_known: bool = False                                            # whether job processes could be looked for


def node_job_parents(procfs: str | None = None, me: int | None = None) -> Callable[[], list[int]]:
    """Where jobs hang for a monitor that a grid node started: its siblings (the launcher, a child
    of the node's worker as this monitor is); their children are the jobs."""
    proc = procfs or _linux.PROCFS_PATH
    me = os.getpid() if me is None else me
    parent = os.getppid()
    known: list[int] = []
    calls = [0]

    def parents() -> list[int]:
        # The worker has many threads, each with a children file: read them again when a sibling
        # seen before is gone (a launcher restarted), none was seen yet (it starts lazily), and
        # every RESCAN_EVERY calls (a sibling started after the others).
        calls[0] += 1
        if not known or calls[0] % RESCAN_EVERY == 0 or not all(os.path.exists(f"{proc}/{p}") for p in known):
            known[:] = [p for p in _fs.children(parent, proc) if p != me]
        return known
    return parents


def gpfs_fs_name(source: str) -> str:
    """mountinfo gives a GPFS mount's source as its device, /dev/gpfs1 or gpfs1; mmpmon as gpfs1."""
    return source.removeprefix("/dev/")


class FsSources:
    """Counters of the nfs, gpfs and process sources for a set of libraries (sampler.LibraryDevice)."""

    def __init__(self, libraries: list, procfs: str | None = None,
                 job_parents: Callable[[], list[int]] | None = None, mmpmon: str | None = None):
        self.procfs = procfs or _linux.PROCFS_PATH
        self.libraries = libraries
        self.job_parents = job_parents
        self.mmpmon = mmpmon
        self.mounts = _linux.parse_mountinfo(_linux.read("self/mountinfo", procfs))
        self.process_mounts = frozenset(lib.mount_point for lib in libraries if lib.source == "process")
        self.nfs_mounts = frozenset(lib.mount_point for lib in libraries if lib.source == "nfs")
        self.gpfs_names = frozenset(lib.where for lib in libraries if lib.source == "gpfs")
        self._mount_of: dict[str, str | None] = {}
        self._last_mounts: dict[int, frozenset[str]] = {}
        self._mmpmon_failed = False
        self._denied_said = False

    # -- reading --------------------------------------------------------------------------------------
    def snapshot(self) -> FsSnapshot:
        snap = FsSnapshot(time.monotonic())
        if self.nfs_mounts:
            try:
                stats = _fs.parse_mountstats(_linux.read("self/mountstats", self.procfs))
            except OSError:
                stats = {}
            snap.nfs = {mp: s for mp, s in stats.items() if mp in self.nfs_mounts}
        if self.gpfs_names:
            snap.gpfs = self._read_mmpmon()
        if self.process_mounts and self.job_parents is not None:
            try:
                snap.procs = self._read_jobs()
                snap.jobs_known = True
            except PermissionError:
                pass                                     # every job is another user's: the rows say null, not 0
        return snap

    def _read_mmpmon(self) -> dict[str, _fs.GpfsFs] | None:
        try:
            out = subprocess.run([self.mmpmon, "-p", "-s"], input="fs_io_s\n", capture_output=True, text=True,
                                 timeout=MMPMON_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return self._mmpmon_error(f"{exc}")
        if out.returncode != 0:
            return self._mmpmon_error(f"exit code {out.returncode}: {out.stderr.strip()[:200]}")
        self._mmpmon_failed = False
        return _fs.parse_mmpmon_fs_io_s(out.stdout)

    def _mmpmon_error(self, why: str) -> None:
        if not self._mmpmon_failed:                      # once per failure streak, not every second
            log.warning("mmpmon fs_io_s failed (%s): GPFS library rows are empty until it answers", why)
        self._mmpmon_failed = True
        return None

    def _mount(self, path: str) -> str | None:
        """The process-source mount a path is on (None: on another mount), cached per path."""
        if path not in self._mount_of:
            if len(self._mount_of) >= PATH_CACHE_MAX:
                self._mount_of.clear()
            m = _linux.mount_of(path, self.mounts)
            self._mount_of[path] = m.mount_point if m and m.mount_point in self.process_mounts else None
        return self._mount_of[path]

    def _read_jobs(self) -> dict[int, tuple[_fs.ProcIo, frozenset[str], frozenset[str]]]:
        """job pid → (its io, the mounts of its open files, the mounts to charge when no end of an
        interval saw an open file: those it was last seen with, else its working directory's)."""
        out = {}
        denied = 0
        jobs = [c for p in self.job_parents() for c in _fs.children(p, self.procfs)]
        for pid in jobs:
            try:
                io = _fs.parse_proc_io(_linux.read(f"{pid}/io", self.procfs))
            except PermissionError:                      # another user's job and we are not root
                denied += 1
                continue
            except (OSError, KeyError, ValueError):
                continue                                 # gone
            paths, cwd = _fs.open_paths(pid, self.procfs)
            seen = frozenset(filter(None, map(self._mount, paths)))
            fallback = self._last_mounts.get(pid) or frozenset(filter(None, [cwd and self._mount(cwd)]))
            out[pid] = (io, seen, fallback)
        self._last_mounts = {pid: seen or fallback for pid, (_, seen, fallback) in out.items() if seen or fallback}
        if denied and not self._denied_said:
            log.warning("cannot read /proc/<pid>/io of %d job process(es) of another user: the library rows of source "
                        "'process' leave them out; run the node's monitor as root (as the launcher) to count them",
                        denied)
            self._denied_said = True
        if denied and not out:
            raise PermissionError("no job process readable")
        return out

    # -- rates ----------------------------------------------------------------------------------------
    def rows(self, prev: FsSnapshot, cur: FsSnapshot, ts: float, host: str, dt: float | None = None) -> list[dict]:
        """One row per nfs/gpfs/process library for the interval between two snapshots. dt: the
        interval to divide by (the sampler gives its node row's, read just before these, so that
        rate × the row's interval_s is the bytes, as the report sums them); default their own."""
        dt = cur.mono_s - prev.mono_s if dt is None else dt
        known = cur.jobs_known and prev.jobs_known       # deltas need both ends (else a job's whole past counts)
        per_mount = _process_rates(prev, cur, dt) if known else {}
        out = []
        for lib in self.libraries:
            if lib.source == "nfs":
                a, b = prev.nfs.get(lib.mount_point), cur.nfs.get(lib.mount_point)
                values = nfs_metrics(a, b, dt) if a and b else None
            elif lib.source == "gpfs":
                a = (prev.gpfs or {}).get(lib.where)
                b = (cur.gpfs or {}).get(lib.where)
                values = gpfs_metrics(a, b, dt) if a and b else None
            elif lib.source == "process":
                values = per_mount.get(lib.mount_point, _zero_process()) if known else None
            else:
                continue
            out.append({"ts": ts, "host": host, "library": lib.library, "path": lib.path, "device": lib.where,
                        "source": lib.source, **(values or dict.fromkeys(FS_METRIC_NAMES))})
        return out


def _delta(a: int, b: int) -> int | None:
    return b - a if b >= a else None


def _per_s(n: float | None, dt: float) -> float | None:
    return None if n is None or not dt else n / dt


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def nfs_metrics(a: _fs.NfsMount, b: _fs.NfsMount, dt: float) -> dict:
    """iostat's figures for an NFS mount (what nfsiostat prints): bytes to/from the server per s,
    READ/WRITE ops per s, bytes per op, execute ms per op; queue = Σ execute time ÷ interval
    (Little's law, as iostat's aqu-sz from the weighted time). A counter that went backwards (a
    remount) gives no figures."""
    out = dict.fromkeys(FS_METRIC_NAMES)
    rb, wb = _delta(a.server_read_bytes, b.server_read_bytes), _delta(a.server_write_bytes, b.server_write_bytes)
    if rb is None or wb is None or not dt:
        return out
    zero = _fs.NfsOp(0, 0, 0, 0, 0, 0, 0, 0)
    ra, rb_, wa, wb_ = a.read or zero, b.read or zero, a.write or zero, b.write or zero
    rops, wops = _delta(ra.ops, rb_.ops), _delta(wa.ops, wb_.ops)
    rms, wms = _delta(ra.execute_ms, rb_.execute_ms), _delta(wa.execute_ms, wb_.execute_ms)
    if None in (rops, wops, rms, wms):
        return out
    out.update(read_bytes_per_s=rb / dt, write_bytes_per_s=wb / dt, read_iops=rops / dt, write_iops=wops / dt,
               avg_request_bytes=_ratio(rb + wb, rops + wops), await_ms=_ratio(rms + wms, rops + wops),
               read_await_ms=_ratio(rms, rops), write_await_ms=_ratio(wms, wops),
               avg_queue_size=(rms + wms) / (dt * 1000))
    return out


def gpfs_metrics(a: _fs.GpfsFs, b: _fs.GpfsFs, dt: float) -> dict:
    """Bytes and calls per second of one GPFS file system over mmpmon's own clock when both answers
    carry it (mmpmon takes a while to answer; its timestamps are when it read the counters).
    A counter that went backwards (`mmpmon reset`) gives no figures."""
    out = dict.fromkeys(FS_METRIC_NAMES)
    if a.t_s is not None and b.t_s is not None and b.t_s > a.t_s:
        dt = b.t_s - a.t_s
    d = [_delta(x, y) for x, y in ((a.read_bytes, b.read_bytes), (a.write_bytes, b.write_bytes),
                                   (a.reads, b.reads), (a.writes, b.writes))]
    if None in d or not dt:
        return out
    br, bw, rc, wc = d
    out.update(read_bytes_per_s=br / dt, write_bytes_per_s=bw / dt, read_iops=rc / dt, write_iops=wc / dt,
               avg_request_bytes=_ratio(br + bw, rc + wc))
    return out


def _zero_process() -> dict:
    return {**dict.fromkeys(FS_METRIC_NAMES), "read_bytes_per_s": 0.0, "write_bytes_per_s": 0.0, "read_iops": 0.0,
            "write_iops": 0.0, "avg_request_bytes": 0.0, "storage_read_bytes_per_s": 0.0,
            "storage_write_bytes_per_s": 0.0}


def _process_rates(prev: FsSnapshot, cur: FsSnapshot, dt: float) -> dict[str, dict]:
    """mount point → the jobs' rates there. A job's delta from the previous sample (from zero when it
    started in the interval, or its pid was reused: counters lower than before), split evenly among
    the mounts of the files it had open at either end of the interval, or if none, its fallback."""
    sums: dict[str, list[float]] = {}
    for pid, (io, seen, fallback) in cur.procs.items():
        old = prev.procs.get(pid)
        base = old[0] if old and io.rchar >= old[0].rchar and io.wchar >= old[0].wchar else None
        fields = _io_fields(io)
        d = [x - y for x, y in zip(fields, _io_fields(base))] if base else fields
        d = [max(0, x) for x in d]
        targets = seen | (old[1] if old else frozenset()) or fallback
        for mp in targets:
            acc = sums.setdefault(mp, [0.0] * 6)
            for i, x in enumerate(d):
                acc[i] += x / len(targets)
    out = {}
    for mp, (rc, wc, sr, sw, rb, wb) in sums.items():
        out[mp] = {**dict.fromkeys(FS_METRIC_NAMES), "read_bytes_per_s": _per_s(rc, dt),
                   "write_bytes_per_s": _per_s(wc, dt), "read_iops": _per_s(sr, dt), "write_iops": _per_s(sw, dt),
                   "avg_request_bytes": _ratio(rc + wc, sr + sw), "storage_read_bytes_per_s": _per_s(rb, dt),
                   "storage_write_bytes_per_s": _per_s(wb, dt)}
    return out


def _io_fields(io: _fs.ProcIo) -> tuple[int, ...]:
    return (io.rchar, io.wchar, io.syscr, io.syscw, io.read_bytes, io.write_bytes)


def choose_source(fstype: str | None, has_device: bool, mount_point: str | None, enabled: Iterable[str],
                  nfs_mounts: Iterable[str], mmpmon: str | None) -> str | None:
    """The source of a library's rows: block if its mount has a block device, nfs if mountstats has
    the mount, gpfs if mmpmon is on PATH, else the jobs' own I/O (None: every source is off)."""
    enabled = set(enabled)
    if has_device and "block" in enabled:
        return "block"
    if fstype in ("nfs", "nfs4") and "nfs" in enabled and mount_point in set(nfs_mounts):
        return "nfs"
    if fstype == "gpfs" and "gpfs" in enabled and mmpmon:
        return "gpfs"
    return "process" if "process" in enabled and mount_point else None


def find_mmpmon() -> str | None:
    """mmpmon on PATH or where GPFS installs it (/usr/lpp/mmfs/bin is not on PATH by default)."""
    return shutil.which("mmpmon") or shutil.which("mmpmon", path="/usr/lpp/mmfs/bin")
