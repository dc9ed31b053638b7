"""Private /proc parsers for the step timer: text in, integers out, nothing computed.

The /proc root is a setting (`PROCFS_PATH`, or the `procfs` argument) so tests can point it at a fake tree, as psutil's
PROCFS_PATH does. Field meanings: Documentation/filesystems/proc.rst in the kernel tree.

PROCFS_PATH is defined here only (the monitor, the nodes' usage and memory watch, the launcher import
it). Standard library only: the launcher (`python -I -S`) loads this file by its path.
"""
from __future__ import annotations

import os

PROCFS_PATH = "/proc"


def parse_io(text: str) -> dict[str, int]:
    """/proc/<pid>/io → {'rchar': …, 'wchar': …, 'read_bytes': …, 'write_bytes': …, 'cancelled_write_bytes': …}."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = int(value)
    return out


def parse_status_memory(text: str) -> dict[str, int]:
    """/proc/<pid>/status → {'VmHWM': bytes, 'VmRSS': bytes} (the file reports kB = KiB)."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key in ("VmHWM", "VmRSS"):
            number, _, unit = value.strip().partition(" ")
            out[key] = int(number) * (1024 if unit.strip() == "kB" else 1)
    return out


def parse_stat_starttime(text: str) -> int:
    """/proc/<pid>/stat → field 22, start time in clock ticks since boot.

    The command name (field 2) may hold spaces and parentheses, so split after the last ')'.
    """
    rest = text[text.rindex(")") + 2:].split()
    return int(rest[22 - 3])


def _read(procfs: str, pid: int | str, name: str) -> str:
    with open(os.path.join(procfs, str(pid), name)) as f:
        return f.read()


def read_io(procfs: str = PROCFS_PATH, pid: int | str = "self") -> dict[str, int]:
    try:
        return parse_io(_read(procfs, pid, "io"))
    except (PermissionError, FileNotFoundError):
        # /proc/<pid>/io needs ptrace access; without it the I/O fields read 0.
        return {}


def read_status_memory(procfs: str = PROCFS_PATH, pid: int | str = "self") -> dict[str, int]:
    return parse_status_memory(_read(procfs, pid, "status"))


def read_starttime(procfs: str = PROCFS_PATH, pid: int | str = "self") -> int | None:
    try:
        return parse_stat_starttime(_read(procfs, pid, "stat"))
    except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
        return None


def process_running(pid: int, cmdline_has: bytes | None = None, procfs: str = PROCFS_PATH) -> bool:
    """pid runs and is not a zombie (an unreaped child does not count as running), and its
    command line contains cmdline_has if given (a pid reused by another program does not count)."""
    try:
        if parse_stat_state(_read(procfs, pid, "stat")) == "Z":
            return False
        return cmdline_has is None or cmdline_has in open(os.path.join(procfs, str(pid), "cmdline"), "rb").read()
    except (OSError, ValueError, IndexError):
        return False


def parse_stat_state(text: str) -> str:
    """/proc/<pid>/stat → field 3, the state letter (R, S, D, Z, ...)."""
    return text[text.rindex(")") + 2:].split()[0]


def parse_stat_pgrp(text: str) -> int:
    """/proc/<pid>/stat → field 5, the process group id."""
    return int(text[text.rindex(")") + 2:].split()[5 - 3])


def process_group_alive(pgid: int, procfs: str = PROCFS_PATH) -> bool:
    """True while the process group has a member that is not a zombie (killpg(pgid, 0) answers for
    zombies too: an unreaped member keeps the group)."""
    return _group_has_member(pgid, ("Z", "X"), procfs)


def process_group_running(pgid: int, procfs: str = PROCFS_PATH) -> bool:
    """True while the process group has a member that is neither stopped (T; t: stopped by a
    tracer) nor a zombie: after a SIGSTOP to the group, False once the kernel has stopped each."""
    return _group_has_member(pgid, ("Z", "X", "T", "t"), procfs)


def _group_has_member(pgid: int, but_states: tuple[str, ...], procfs: str) -> bool:
    """Has the process group a member whose state is none of but_states?"""
    for entry in os.scandir(procfs):
        if not entry.name.isdigit():
            continue
        try:
            text = _read(procfs, entry.name, "stat")
            if parse_stat_pgrp(text) == pgid and parse_stat_state(text) not in but_states:
                return True
        except (OSError, ValueError, IndexError):
            continue                              # gone meanwhile
    return False


def reset_hwm(procfs: str = PROCFS_PATH) -> bool:
    """Reset VmHWM to the current RSS (write '5' to clear_refs, Linux ≥ 4.0). False where refused."""
    try:
        fd = os.open(os.path.join(procfs, "self", "clear_refs"), os.O_WRONLY)   # never create it
    except OSError:
        return False
    try:
        os.write(fd, b"5")
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
