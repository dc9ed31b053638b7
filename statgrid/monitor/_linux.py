"""Linux /proc parsers for the monitor: text in, raw counters out. No rates, no clock here —
the sampler (sampler.py) takes deltas. Field meanings cite the kernel's documentation:
Documentation/admin-guide/iostats.rst (diskstats), filesystems/proc.rst (stat, meminfo),
accounting/psi.rst (pressure).

PROCFS_PATH is a setting so tests can point the monitor at a fake tree.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PROCFS_PATH = "/proc"
SECTOR_BYTES = 512                  # diskstats counts 512-byte sectors whatever the device's block size

CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def read(name: str, procfs: str | None = None) -> str:
    return (Path(procfs or PROCFS_PATH) / name).read_text()


def parse_stat_cpu(text: str) -> dict[str, int]:
    """The aggregate `cpu` line of /proc/stat, in clock ticks (guest time is already in user)."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            values = [int(v) for v in line.split()[1:]]
            values += [0] * (len(CPU_FIELDS) - len(values))
            return dict(zip(CPU_FIELDS, values))
    raise ValueError("no 'cpu' line in /proc/stat")


def parse_loadavg(text: str) -> float:
    return float(text.split()[0])


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo → {key: bytes} (the file says kB, meaning KiB)."""
    out = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts:
            out[key.strip()] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
    return out


@dataclass(frozen=True)
class DiskCounters:
    """One line of /proc/diskstats (iostats.rst fields 1–11, plus flushes where present)."""

    major: int
    minor: int
    name: str
    reads: int
    read_merges: int
    read_sectors: int
    read_ms: int
    writes: int
    write_merges: int
    write_sectors: int
    write_ms: int
    in_flight: int
    io_ms: int              # time the device had I/O in flight: basis of %util
    weighted_ms: int        # time in queue summed over requests: basis of average queue size
    discards: int = 0
    discard_sectors: int = 0
    discard_ms: int = 0
    flushes: int = 0
    flush_ms: int = 0


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 14:
            continue
        v = [int(x) for x in f[3:]]
        extra = {}
        if len(v) >= 15:                      # kernel 4.18+: discards
            extra.update(discards=v[11], discard_sectors=v[13], discard_ms=v[14])
        if len(v) >= 17:                      # kernel 5.5+: flushes
            extra.update(flushes=v[15], flush_ms=v[16])
        out[f[2]] = DiskCounters(int(f[0]), int(f[1]), f[2], *v[:11], **extra)
    return out


def parse_pressure(text: str) -> dict[str, int]:
    """/proc/pressure/<resource> → {'some': total_us, 'full': total_us} (cumulative stall time)."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        if "total" in fields:
            out[parts[0]] = int(fields["total"])
    return out


def parse_net_dev(text: str) -> dict[str, tuple[int, int]]:
    """/proc/net/dev → {interface: (rx_bytes, tx_bytes)}."""
    out = {}
    for line in text.splitlines()[2:]:
        name, sep, rest = line.partition(":")
        if not sep:
            continue
        f = rest.split()
        out[name.strip()] = (int(f[0]), int(f[8]))
    return out


@dataclass(frozen=True)
class Mount:
    mount_point: str
    major: int
    minor: int
    fstype: str
    source: str


def _unescape(path: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal (\\040 ...); nothing else
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), path)


def parse_mountinfo(text: str) -> list[Mount]:
    """/proc/self/mountinfo (proc.rst 3.5): mount point is field 5, major:minor field 3,
    filesystem type and source follow the ' - ' separator."""
    out = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        f, r = left.split(), right.split()
        major, _, minor = f[2].partition(":")
        out.append(Mount(_unescape(f[4]), int(major), int(minor), r[0], r[1] if len(r) > 1 else ""))
    return out


def mount_of(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount a path lives on: the longest mount point that is a prefix (the last one mounted
    wins when several share a mount point)."""
    best: Mount | None = None
    for m in mounts:
        mp = m.mount_point.rstrip("/") or "/"
        if path == mp or path.startswith(mp + "/") or mp == "/":
            if best is None or len(mp) >= len(best.mount_point.rstrip("/") or "/"):
                best = m
    return best
