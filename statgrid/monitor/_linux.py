"""Linux /proc parsers for the monitor: text in, raw counters out. No rates, no clock here —
the sampler (sampler.py) takes deltas. Field meanings cite the kernel's documentation:
Documentation/admin-guide/iostats.rst (diskstats), filesystems/proc.rst (stat, meminfo),
accounting/psi.rst (pressure), and for /sys/block the sysfs ABI (Documentation/ABI/stable/sysfs-block,
testing/sysfs-block).

PROCFS_PATH and SYSFS_PATH are settings so tests can point the monitor at fake trees (psutil's way).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from statgrid.host.procfs import PROCFS_PATH  # noqa: F401  (a setting of this module too: tests point it elsewhere)

SYSFS_PATH = "/sys"
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


@dataclass(frozen=True)
class BlockDevice:
    """A block device's place in the stack, from /sys/block (names as /proc/diskstats spells them)."""

    name: str
    parent: str | None              # the whole disk of a partition, else None
    holders: tuple[str, ...]        # devices built on it (dm: LVM, multipath, crypt; md; bcache), sorted
    layer: str                      # "disk", "partition", "LVM <vg-lv>", "multipath <name>", "dm <name>", "md <level>"


def _sys_name(name: str) -> str:
    # sysfs spells a '/' in a device name as '!' (cciss!c0d0 is /proc/diskstats' cciss/c0d0)
    return name.replace("!", "/")


def _list(path: Path) -> list[str]:
    try:
        return sorted(_sys_name(p.name) for p in path.iterdir())
    except OSError:
        return []


def _text(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _dm_layer(d: Path) -> str:
    """dm/name is the mapping's name; dm/uuid's prefix says which tool made it (LVM-…, mpath-…,
    CRYPT-…, part1-mpath-… for a partition of a multipath device)."""
    name, uuid = _text(d / "dm" / "name"), _text(d / "dm" / "uuid")
    kind = ("LVM" if uuid.startswith("LVM-") else "multipath" if uuid.startswith("mpath-") else
            "crypt" if uuid.startswith("CRYPT-") else "dm")
    return f"{kind} {name}".strip()


def read_block_topology(sysfs: str | None = None) -> dict[str, BlockDevice] | None:
    """Every block device under <sysfs>/block: whole disks there, their partitions as
    subdirectories holding a `partition` file (sysfs-block: /sys/block/<disk>/<part>/partition),
    holders/ and slaves/ as the links bd_link_disk_holder (block/holder.c) makes between a dm or md
    device and the devices under it. Both directions are read, so a device is held if either side
    says so. None when there is no <sysfs>/block (no sysfs in this container; a fake /proc alone)."""
    root = Path(sysfs or SYSFS_PATH) / "block"
    if not root.is_dir():
        return None
    holders: dict[str, set[str]] = {}
    parent: dict[str, str | None] = {}
    layer: dict[str, str] = {}
    for d in sorted(root.iterdir()):
        disk = _sys_name(d.name)
        parent[disk] = None
        layer[disk] = (_dm_layer(d) if (d / "dm").is_dir() else
                       f"md {_text(d / 'md' / 'level') or '?'}" if (d / "md").is_dir() else "disk")
        holders.setdefault(disk, set()).update(_list(d / "holders"))
        for lower in _list(d / "slaves"):
            holders.setdefault(lower, set()).add(disk)
        for p in sorted(d.iterdir()) if d.is_dir() else []:
            if p.name.startswith(d.name) and (p / "partition").is_file():    # sda1, nvme0n1p1 under their disk
                part = _sys_name(p.name)
                parent[part], layer[part] = disk, "partition"
                holders.setdefault(part, set()).update(_list(p / "holders"))
    return {name: BlockDevice(name, parent.get(name), tuple(sorted(holders.get(name, ()))), layer.get(name, "disk"))
            for name in parent}
