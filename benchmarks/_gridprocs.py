"""The processes of a benchmark's grid, found in /proc by its home (in their environment or
command line), and the CPU they use: for benchmarks/scheduling.py and benchmarks/console.py.
"""
from __future__ import annotations

import os
import time
from pathlib import Path


def grid_processes(home: Path, skip: str) -> dict[int, str]:
    """pid → kind (master, scheduler, workers, launchers, other) of every process with this grid's
    home in its environment (the embedded engine: statgrid.grid.execution.cluster, its worker processes, and
    each worker's launcher, whose waited-for children are the jobs)."""
    key = f"STATGRID_HOME={home}".encode()
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if key not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if skip in cmd:
            continue                                      # the benchmark's own (scheduling.py's probe)
        out[int(entry)] = ("master" if " grid up" in cmd else "scheduler" if "statgrid.grid.execution.cluster" in cmd
                           else "workers" if "multiprocessing.spawn" in cmd else "launchers" if "launcher.py" in cmd
                           else "other")
    return out


def cpu_ticks_with_children(pid: int) -> int | None:
    """The process's CPU and that of its reaped children, in clock ticks; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(int(x) for x in fields[11:15])          # utime, stime, cutime, cstime (proc(5) fields 14–17)


def cpu_snapshot(home: Path, skip: str) -> dict[int, tuple[str, int]]:
    """pid → (kind, CPU ticks) of the grid's processes (grid_processes)."""
    return {pid: (kind, t) for pid, kind in grid_processes(home, skip).items() if (t := cpu_ticks_with_children(pid)) is not None}


def cpu_share(before: dict, after: dict, seconds: float) -> dict[str, float]:
    """kind → CPU used between the snapshots, in cores (1.0 = one core busy all the time)."""
    hz = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for pid, (kind, t) in after.items():
        t0 = before.get(pid, (kind, 0))[1]
        out[kind] = out.get(kind, 0.0) + (t - t0) / hz / seconds
    return out


def cpu_ticks(pid: int) -> int:
    """The process's own CPU (not its children's), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])           # utime, stime (fields 14 and 15 of proc(5))


def cpu_pct(pid: int, seconds: float) -> float:
    hz = os.sysconf("SC_CLK_TCK")
    c0, t0 = cpu_ticks(pid), time.monotonic()
    time.sleep(seconds)
    c1, t1 = cpu_ticks(pid), time.monotonic()
    return (c1 - c0) / hz / (t1 - t0) * 100


def leftovers(home: Path, skip: set[int]) -> list[str]:
    """Processes that still name the grid home in their environment or command line."""
    needle = str(home).encode()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in skip:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in cmd or needle in env:
            shown = cmd.replace(b"\0", b" ").decode(errors="replace")[:120]
            out.append(f"{entry}: {shown}")
    return out
