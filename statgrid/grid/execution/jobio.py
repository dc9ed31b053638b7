"""A job's I/O counters (protocol.IoCounters), read by the node launcher when it reaps the job:
from the zombie's /proc/<pid>/io, or, where the kernel refuses that, from the launcher's own
counters across the reap (own_io says why that works).

Standard library only: the launcher (`python -I -S`) loads this file by its path (launcher.py),
after protocol.py.
"""
from __future__ import annotations

# Standard library only too; under the launcher it is loaded by path before this file (launcher.py).
from statgrid.job.protocol import IoCounters


def _parse_io(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        out[key.strip()] = int(value)
    return out


def _io_record(raw: dict[str, int]):
    """proc(5) /proc/<pid>/io counters as a protocol.IoCounters: rchar/wchar are logical I/O (every
    read and write call, page cache and sockets included), read_bytes/write_bytes the storage
    layer's (write_bytes less cancelled_write_bytes: pages truncated before they reached disk)."""
    return IoCounters(
        logical_read_bytes=raw.get("rchar", 0), logical_write_bytes=raw.get("wchar", 0),
        read_bytes=raw.get("read_bytes", 0),
        write_bytes=max(0, raw.get("write_bytes", 0) - raw.get("cancelled_write_bytes", 0)))


def read_proc_io(pid: int):
    """/proc/<pid>/io of a zombie still holds the totals of the process and its reaped children
    (a protocol.IoCounters). The kernel lets only a privileged reader see a zombie's: None when
    refused (see own_io)."""
    try:
        with open(f"/proc/{pid}/io") as f:
            return _io_record(_parse_io(f.read()))
    except (OSError, ValueError):
        return None


def own_io() -> tuple[dict[str, int], int]:
    """This process's /proc/self/io counters, and the bytes this read of them adds to rchar.

    For a launcher that is not root: the kernel refuses it a zombie's /proc/<pid>/io (a ptrace-mode
    check that a zombie, having no mm, fails — EACCES even for one's own child), but reaping a child
    adds the child's counters, its reaped children's included, to its parent's (kernel/exit.c,
    wait_task_zombie: psig->ioac += p->ioac + p->signal->ioac). So the launcher's own counters just
    before and just after wait4 differ by the job's — less this read's own bytes, and within ~1 KiB
    of logical reads (measured here against the zombie's file as root: 832 bytes, one call)."""
    with open("/proc/self/io", "rb", buffering=0) as f:
        raw = f.read(4096)                       # one read call: the file is ~100 bytes
    return _parse_io(raw.decode()), len(raw)


def reaped_io(before: tuple[dict[str, int], int], after: tuple[dict[str, int], int]):
    """The I/O of the child reaped between two own_io() reads."""
    (a, nbytes), (b, _) = before, after
    delta = {k: b.get(k, 0) - a.get(k, 0) for k in b}
    delta["rchar"] = max(0, delta.get("rchar", 0) - nbytes)
    return _io_record(delta)

