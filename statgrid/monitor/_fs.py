"""Parsers for the per-library I/O sources that are not a block device: text in, raw counters out
(no rates, no clock: libio.py takes the deltas, as sampler.py does for diskstats).

- NFS: /proc/self/mountstats (fs/nfs/super.c nfs_show_stats, net/sunrpc/stats.c rpc_clnt_show_stats;
  format described in nfs(5)'s "mountstats" and the kernel's Documentation/filesystems/nfs):
      device srv:/export mounted on /mnt/x with fstype nfs4 statvers=1.1
          bytes:  normal_read normal_write direct_read direct_write server_read server_write
                  read_pages write_pages
          per-op statistics
                  READ: ops transmissions major_timeouts bytes_sent bytes_recv queue_ms rtt_ms execute_ms [errors]
- GPFS: `mmpmon -p` answering `fs_io_s` (IBM Spectrum Scale, "fs_io_s and io_s output - how to
  aggregate and analyze the results"): one line per mounted file system, "_key_ value" pairs:
      _fs_io_s_ _n_ 192.168.1.8 _nn_ node1 _rc_ 0 _t_ 1066660148 _tu_ 407431 _cl_ c1 _fs_ gpfs1
      _d_ 1 _br_ 6291456 _bw_ 314572800 _oc_ 10 _cc_ 16 _rdc_ 101 _wc_ 300 _dir_ 7 _iu_ 2
  _br_/_bw_ bytes read/written by applications, _rdc_/_wc_ read/write calls, _t_/_tu_ the time.
- Processes: /proc/<pid>/io (Documentation/filesystems/proc.rst 3.3): rchar/wchar every byte
  read()/written by the process (page cache, tmpfs, pipes: logical), syscr/syscw the calls,
  read_bytes/write_bytes what it made the storage layer fetch/send, cancelled_write_bytes the
  dirty pages it truncated before they were written. /proc/<pid>/task/<tid>/children (proc.rst 3.7)
  lists a thread's children; /proc/<pid>/fd/* and cwd are links to the files.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from statgrid.monitor._linux import _unescape


@dataclass(frozen=True)
class NfsOp:
    """One op's line of a mount's per-op statistics (cumulative since the mount)."""

    ops: int
    transmissions: int
    timeouts: int
    bytes_sent: int
    bytes_recv: int
    queue_ms: int
    rtt_ms: int
    execute_ms: int         # from the request's creation to its reply: queue + RTT (what the caller waited)


@dataclass(frozen=True)
class NfsMount:
    """A mount's counters in /proc/self/mountstats (cumulative since the mount)."""

    source: str
    mount_point: str
    fstype: str
    server_read_bytes: int          # read from the server by READ (the wire, as a disk's sectors are the device)
    server_write_bytes: int         # written to the server by WRITE
    app_read_bytes: int             # read() by applications: normal + O_DIRECT (page cache hits included)
    app_write_bytes: int
    read: NfsOp | None
    write: NfsOp | None


def parse_mountstats(text: str) -> dict[str, NfsMount]:
    """mount point → its NFS counters; mounts of other types (no `bytes:` line) are left out."""
    out: dict[str, NfsMount] = {}
    head: list[str] | None = None
    byte_fields: list[int] | None = None
    ops: dict[str, NfsOp] = {}

    def close() -> None:
        if head is not None and byte_fields is not None:
            b = byte_fields + [0] * (6 - len(byte_fields))
            out[head[1]] = NfsMount(head[0], head[1], head[2], b[4], b[5], b[0] + b[2], b[1] + b[3],
                                    ops.get("READ"), ops.get("WRITE"))

    for line in text.splitlines():
        if line.startswith("device "):
            close()
            f = line.split()
            # "device SRC mounted on MP with fstype T ..."; the kernel escapes spaces in SRC and MP
            head = ([_unescape(f[1]), _unescape(f[4]), f[7]] if len(f) >= 8 and f[2:4] == ["mounted", "on"]
                    and f[5:7] == ["with", "fstype"] else None)
            byte_fields, ops = None, {}
            continue
        s = line.strip()
        if head is None or not s:
            continue
        key, sep, rest = s.partition(":")
        if not sep:
            continue
        if key == "bytes":
            byte_fields = [int(v) for v in rest.split()]
        elif key in ("READ", "WRITE"):
            v = [int(x) for x in rest.split()]
            if len(v) >= 8:
                ops[key] = NfsOp(*v[:8])
    close()
    return out


@dataclass(frozen=True)
class GpfsFs:
    """One file system's line of mmpmon's fs_io_s answer (cumulative since mmpmon's last reset)."""

    fs: str
    t_s: float | None           # mmpmon's own clock (_t_ + _tu_/1e6): the deltas' time base
    read_bytes: int
    write_bytes: int
    reads: int                  # read calls (_rdc_), the application's, not disk I/Os
    writes: int                 # write calls (_wc_)


def parse_mmpmon_fs_io_s(text: str) -> dict[str, GpfsFs]:
    """fs name → its counters, from `mmpmon -p` output; lines with a non-zero _rc_ are left out."""
    out: dict[str, GpfsFs] = {}
    for line in text.splitlines():
        f = line.split()
        if not f or f[0] != "_fs_io_s_":
            continue
        kv = dict(zip(f[1::2], f[2::2]))
        try:
            if int(kv.get("_rc_", "0")) != 0 or "_fs_" not in kv:
                continue
            t = float(kv["_t_"]) + float(kv.get("_tu_", 0)) / 1e6 if "_t_" in kv else None
            out[kv["_fs_"]] = GpfsFs(kv["_fs_"], t, int(kv["_br_"]), int(kv["_bw_"]), int(kv["_rdc_"]),
                                     int(kv["_wc_"]))
        except (KeyError, ValueError):
            continue
    return out


@dataclass(frozen=True)
class ProcIo:
    """/proc/<pid>/io (cumulative; a parent's include the children it reaped: kernel/exit.c)."""

    rchar: int
    wchar: int
    syscr: int
    syscw: int
    read_bytes: int
    write_bytes: int            # less cancelled_write_bytes, as usage.parse_proc_io does


def parse_proc_io(text: str) -> ProcIo:
    v: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            v[key.strip()] = int(value)
    return ProcIo(v["rchar"], v["wchar"], v["syscr"], v["syscw"], v.get("read_bytes", 0),
                  max(0, v.get("write_bytes", 0) - v.get("cancelled_write_bytes", 0)))


def children(pid: int, procfs: str) -> list[int]:
    """The children of every thread of pid ([] when it is gone or the kernel lacks CONFIG_PROC_CHILDREN)."""
    out: list[int] = []
    task = Path(procfs) / str(pid) / "task"
    try:
        tids = os.listdir(task)
    except OSError:
        return out
    for tid in tids:
        try:
            out += [int(x) for x in (task / tid / "children").read_text().split()]
        except (OSError, ValueError):
            pass
    return out


def open_paths(pid: int, procfs: str) -> tuple[list[str], str | None]:
    """(the absolute paths of the files pid has open, its cwd); sockets, pipes and anonymous inodes
    are left out (/dev files stay: /dev/shm is a tmpfs libraries live on; the caller keeps only
    paths on a library's mount). ([], None) when it is gone or not ours to read. The fd links are
    read relative to the fd directory's descriptor: a few µs each, at every sample."""
    out: list[str] = []
    try:
        dfd = os.open(f"{procfs}/{pid}/fd", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return out, None
    try:
        for fd in os.listdir(dfd):
            try:
                target = os.readlink(fd, dir_fd=dfd)
            except OSError:
                continue
            if target[:1] == "/":                   # not "pipe:[…]", "socket:[…]", "anon_inode:[…]"
                out.append(target[:-10] if target.endswith(" (deleted)") else target)
    finally:
        os.close(dfd)
    try:
        cwd = os.readlink(f"{procfs}/{pid}/cwd")
    except OSError:
        cwd = None
    return out, cwd
