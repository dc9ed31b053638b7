"""iobench on a raw block device (ndisk64's `-f /dev/rhdisk24`, seed 000 Appendix): the checks
before any request, and the exclusive claim a write run holds.

Refusals, in this order (each a clear error naming the value and the fix):
- the path is not a block device (a file, a directory, nothing);
- writes without --destructive (they destroy what the device holds);
- not root (a raw device is root's);
- writes to a device that is in use: mounted (itself or a partition of it, /proc/self/mountinfo by
  major:minor or by source path), held by a device built on it (dm: LVM, crypt, multipath; md —
  /sys/block/*/holders), or used as swap (/proc/swaps). The kernel has the last word: a write
  run opens the device O_EXCL for its whole length, which fails with EBUSY while anything has
  claimed it (a mount, a holder: open(2), "O_EXCL … block device") and keeps it from being mounted
  meanwhile.
The requests are O_DIRECT from page-aligned (mmap) buffers (DESIGN.md, I/O measurement), each
thread on its own slice of the device, all slices inside the device.
"""
from __future__ import annotations

import fcntl
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

from statgrid.errors import StatgridError, UsageError
from statgrid.host.procfs import PROCFS_PATH
from statgrid.monitor import _linux

BLKSSZGET = 0x1268              # linux/fs.h: the logical block size (int)


@dataclass(frozen=True)
class Device:
    """A raw block device as iobench uses it."""

    path: Path
    name: str                   # as /sys/block spells it (loop0, sda1, dm-0)
    major: int
    minor: int
    size_bytes: int             # the whole device, in bytes
    logical_block_bytes: int    # the smallest request O_DIRECT accepts, in bytes


def block_numbers(path: Path) -> tuple[int, int]:
    """(major, minor) of a block device; UsageError when the path is something else."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"--device {str(path)!r} does not exist; give a block device such as /dev/sdb "
                         "(`lsblk` lists them).") from None
    if not stat.S_ISBLK(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a regular file" if stat.S_ISREG(st.st_mode) else \
            "a character device" if stat.S_ISCHR(st.st_mode) else "not a block device"
        raise UsageError(f"--device {str(path)!r} is {kind}, not a block device; give one such as /dev/sdb "
                         "(`lsblk` lists them), or test files in a directory with --dir.")
    return os.major(st.st_rdev), os.minor(st.st_rdev)


def users(name: str, major: int, minor: int, procfs: str | None = None, sysfs: str | None = None) -> list[str]:
    """What uses the device or a partition of it, in words ('/dev/sdb1 mounted on /data (ext4)',
    'held by dm-0', 'swap'); [] when nothing does."""
    procfs = procfs or PROCFS_PATH
    sysfs = sysfs or _linux.SYSFS_PATH
    from statgrid.monitor._sysfs import device_numbers

    by_number = device_numbers(sysfs)
    topology = _linux.read_block_topology(sysfs) or {}
    parts = [d.name for d in topology.values() if d.parent == name]
    mine = {name, *parts}
    numbers = {(major, minor), *(k for k, v in by_number.items() if v in parts)}
    out = []
    try:
        mounts = _linux.parse_mountinfo(_linux.read("self/mountinfo", procfs))
    except OSError:
        mounts = []
    for m in mounts:
        source = _source_number(m.source)
        if (m.major, m.minor) in numbers or source in numbers:
            what = by_number.get((m.major, m.minor)) or by_number.get(source) or m.source
            out.append(f"/dev/{what} mounted on {m.mount_point} ({m.fstype})")
    for dev in sorted(mine):
        held = topology.get(dev)
        if held is not None and held.holders:
            out.append(f"/dev/{dev} held by {', '.join(held.holders)}")
    try:
        swaps = _linux.read("swaps", procfs).splitlines()[1:]
    except OSError:
        swaps = []
    for line in swaps:
        src = line.split()[0] if line.split() else ""
        if Path(src).name in mine or _source_number(src) in numbers:
            out.append(f"{src} used as swap")
    return out


def _source_number(source: str) -> tuple[int, int] | None:
    """A mount's or swap's source path → its (major, minor) when it is a block device here."""
    if not source.startswith("/"):
        return None
    try:
        st = os.stat(source)
    except OSError:
        return None
    return (os.major(st.st_rdev), os.minor(st.st_rdev)) if stat.S_ISBLK(st.st_mode) else None


def open_device(path: Path, writes: bool, destructive: bool, euid: int | None = None,
                procfs: str | None = None, sysfs: str | None = None) -> Device:
    """Check that iobench may use `path` (the refusals in the module's docstring, in that order)
    and read its size. euid/procfs/sysfs are parameters for tests (fake trees, another user)."""
    major, minor = block_numbers(path)
    if writes and not destructive:
        raise UsageError(f"writing to --device {str(path)!r} destroys what it holds: add --destructive to mean "
                         "it, or use --mode read.")
    if (os.geteuid() if euid is None else euid) != 0:
        raise StatgridError(f"--device {str(path)!r} needs root: raw devices are root's; run it as root "
                            "(e.g. sudo statgrid iobench …), or test files in a directory with --dir.")
    from statgrid.monitor._sysfs import device_numbers

    name = device_numbers(sysfs or _linux.SYSFS_PATH).get((major, minor)) or Path(path).name
    if writes:
        used = users(name, major, minor, procfs, sysfs)
        if used:
            raise StatgridError(f"--device {str(path)!r} is in use ({'; '.join(used)}): iobench will not write "
                                "to it; unmount it / stop what holds it first, or use --mode read.")
    fd = os.open(path, os.O_RDONLY)
    try:
        size_bytes = os.lseek(fd, 0, os.SEEK_END)
        logical = struct.unpack("i", fcntl.ioctl(fd, BLKSSZGET, struct.pack("i", 0)))[0]
    finally:
        os.close(fd)
    return Device(Path(path), name, major, minor, size_bytes, logical)


def region_bytes(dev: Device, threads: int, bs_bytes: int, size_per_thread_bytes: int | None) -> int:
    """Each thread's slice of the device: as asked (all slices must fit), or the device split
    evenly between the threads, in whole blocks."""
    if bs_bytes % dev.logical_block_bytes or bs_bytes % 4096:
        raise UsageError(f"--bs {bs_bytes} bytes: on --device {str(dev.path)!r} use a multiple of 4 KiB (and of its "
                         f"{dev.logical_block_bytes}-byte logical block), e.g. --bs 1M.")
    if size_per_thread_bytes is None:
        size_per_thread_bytes = dev.size_bytes // threads // bs_bytes * bs_bytes
        if size_per_thread_bytes < bs_bytes:
            raise UsageError(f"--device {str(dev.path)!r} holds {dev.size_bytes} bytes: too small for {threads} "
                             f"thread(s) of one {bs_bytes}-byte block; use fewer --threads or a smaller --bs.")
        return size_per_thread_bytes
    if threads * size_per_thread_bytes > dev.size_bytes:
        raise UsageError(f"--threads {threads} × --size-per-thread {size_per_thread_bytes} bytes = "
                         f"{threads * size_per_thread_bytes} bytes goes past the end of --device {str(dev.path)!r} "
                         f"({dev.size_bytes} bytes); leave --size-per-thread out to split the device between the "
                         "threads, or give a smaller one.")
    return size_per_thread_bytes


def claim(spec) -> int | None:
    """For a run that writes: the device opened O_EXCL (close it when the run ends). The kernel
    refuses with EBUSY while the device is mounted or held, and nothing can mount it meanwhile.
    None for a read-only run."""
    if spec.mode == "read":
        return None
    try:
        return os.open(spec.device, os.O_RDONLY | os.O_EXCL)
    except OSError as exc:
        if exc.errno == 16:                     # EBUSY
            raise StatgridError(f"--device {str(spec.device)!r} is in use (the kernel refuses an exclusive open: "
                                "mounted, or held by LVM/md/swap/another program): iobench will not write to it; "
                                "free it first, or use --mode read.") from None
        raise
