"""A job's memory reservation, enforced on its node (LSF's MEMLIMIT): the launcher's half.

The master hands each attempt its reservation (LaunchRequest.mem_limit_bytes: `--mem`, else a
session's memsize plus `memory_margin`; 0 for a command without `--mem`). The launcher enforces
it in one of two ways, chosen per job:

- **cgroup v2** (`memory.max`) where the job's own cgroup (launcher.py) can have the memory
  controller: the job's cgroup gets memory.max = the reservation, memory.swap.max = 0 (a job must
  not page its excess out: the reservation is of memory) and memory.oom.group = 1 (the OOM killer
  ends the whole job, not its largest process alone). Past the limit the kernel reclaims the job's
  page cache, then kills; memory.events' `oom_kill` count, read at the reap, says it did
  (Documentation/admin-guide/cgroup-v2.rst, "Memory Interface Files"). The controller must be
  enabled for the launcher's `statgrid-launcher-<pid>` group, which is made in the cgroup the
  node runs in: that cgroup's cgroup.subtree_control must list memory. cgroup v2's "no internal
  process" rule allows that only for the root cgroup or a cgroup whose own processes all live in
  child cgroups — not for contrib/systemd/statgrid-node.service as it stands (Delegate=yes, but
  the node's processes in the service's cgroup itself): such a node watches.
- **watch** everywhere else (cgroup v1 or hybrid hosts, whose memory controller is bound to the
  v1 hierarchy; a node whose cgroup does not delegate memory; no cgroups at all): the launcher
  sums the memory of the job's processes (its cgroup's processes if it has one, else its process
  group and every descendant of its first process; see "What is counted" below) every
  WATCH_INTERVAL_S and SIGKILLs the job once the sum exceeds the reservation — what LSF's sbatchd
  does for MEMLIMIT. Coarser than the kernel: a job may pass the limit for up to an interval
  before it is seen, and a page shared by several of its processes counts in each (as in LSF's sum).

Either way the job ends EXIT with `limit_reason`, naming the reservation and how it was enforced.
$STATGRID_MEMORY_LIMIT in the node's environment chooses: `auto` (the default: cgroup v2 where
available, else watch), `watch` (always watch), `off` (reservations place jobs only).

Standard library only: the launcher (`python -I -S`) loads this file by its path.
"""
from __future__ import annotations

import os

MODE_ENV = "STATGRID_MEMORY_LIMIT"
MODES = ("auto", "watch", "off")
WATCH_INTERVAL_S = 0.5                   # how often a watched job's RSS is summed
PROCFS_PATH = "/proc"


def mode_from_env(env) -> tuple[str, str]:
    """($STATGRID_MEMORY_LIMIT or 'auto', a warning if its value is none of MODES; '' if fine)."""
    value = env.get(MODE_ENV, "").strip().lower() or "auto"
    if value in MODES:
        return value, ""
    return "auto", (f"${MODE_ENV}={env.get(MODE_ENV)!r} is none of {', '.join(MODES)}; memory limits are "
                    "enforced as for 'auto'. Set it to auto, watch or off.")


def size_text(n_bytes: int) -> str:
    """Bytes as MiB for messages, e.g. 295279001 → '282 MiB' (binary, as sizes elsewhere)."""
    return f"{n_bytes / 2**20:,.0f} MiB"


def cgroup_reason(limit_bytes: int) -> str:
    return (f"exceeded its memory reservation {size_text(limit_bytes)} (memory.max): the kernel's OOM killer ended "
            "it; reserve more (--mem, or a larger memsize) or use less memory")


def watch_reason(limit_bytes: int, used_bytes: int) -> str:
    return (f"exceeded its memory reservation {size_text(limit_bytes)}: its processes' memory reached "
            f"{size_text(used_bytes)} and its node killed it (resident anonymous and shared memory, watched every "
            f"{WATCH_INTERVAL_S:g} s: no cgroup v2 memory controller for its jobs); reserve more (--mem, or a larger "
            "memsize) or use less memory")


# -- cgroup v2 ------------------------------------------------------------------------------------

def write_cgroup_file(path: str, text: str) -> None:
    """One write(2) of `text`, as cgroup files want it (no buffering, no partial rewrites)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enable_memory_controller(top: str) -> str:
    """Enable the memory controller for the cgroups below `top` (the launcher's group, which holds
    no process itself: cgroup v2's "no internal process" rule allows it). Returns '' on success,
    else why not (for the node's log)."""
    try:
        with open(os.path.join(top, "cgroup.controllers")) as f:
            available = f.read().split()
    except OSError as exc:
        return f"cannot read {top}/cgroup.controllers ({exc.strerror})"
    if "memory" not in available:
        return (f"the memory controller is not enabled for the children of {os.path.dirname(top)} (not in its "
                "cgroup.subtree_control: a cgroup v1 or hybrid host, where memory belongs to v1; or that cgroup "
                "holds processes itself, and cgroup v2 enables memory only below a cgroup without any, the root "
                "excepted)")
    try:
        write_cgroup_file(os.path.join(top, "cgroup.subtree_control"), "+memory")
    except OSError as exc:
        return f"cannot enable the memory controller in {top}/cgroup.subtree_control ({exc.strerror})"
    return ""


def limit_cgroup(path: str, limit_bytes: int) -> bool:
    """Set a job's cgroup (made, still empty) to `limit_bytes` of memory, no swap, and a whole-job
    OOM kill. False if memory.max cannot be written (the job is then watched)."""
    try:
        write_cgroup_file(os.path.join(path, "memory.max"), str(limit_bytes))
    except OSError:
        return False
    for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
        try:                                 # no swap accounting (swapaccount=0), or Linux < 4.19
            write_cgroup_file(os.path.join(path, name), value)
        except OSError:
            pass
    return True


def parse_oom_kills(text: str) -> int:
    """memory.events → its `oom_kill` count: processes of the cgroup (and below) the OOM killer ended."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


def oom_kills(path: str) -> int:
    """The job's cgroup's oom_kill count (0 if it cannot be read)."""
    try:
        with open(os.path.join(path, "memory.events")) as f:
            return parse_oom_kills(f.read())
    except OSError:
        return 0


# -- watch ----------------------------------------------------------------------------------------
# What is counted: each process's anonymous and shared-memory pages that are resident (proc(5),
# /proc/<pid>/status RssAnon + RssShmem) — what memory.max would have to keep, not the pages of
# files it maps (a session's Python, DuckDB and Arrow libraries are ~85 MiB of those, shared with
# every other session and dropped by the kernel when memory is short). Measured on a session with
# memsize=256M sorting past it (spilling): RssAnon peaked at 330 MiB, VmRSS at 416 MiB.

def parse_stat(text: str) -> tuple[int, int]:
    """/proc/<pid>/stat → (ppid, pgrp). The command name (field 2) is in parentheses and may hold
    spaces or ')': fields are counted from its last ')' (proc(5))."""
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[2])          # fields[0] is field 3 (state): ppid is 4, pgrp 5


def parse_status_bytes(text: str) -> int:
    """/proc/<pid>/status → RssAnon + RssShmem in bytes (0 for a zombie, which has neither)."""
    total = 0
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("RssAnon", "RssShmem"):
            total += int(value.split()[0]) * 1024          # "  1234 kB"
    return total


def process_table(procfs: str = PROCFS_PATH) -> dict[int, tuple[int, int]]:
    """pid → (ppid, pgrp) of every process now (one read of each /proc/<pid>/stat)."""
    table: dict[int, tuple[int, int]] = {}
    for name in os.listdir(procfs):
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(procfs, name, "stat")) as f:
                table[int(name)] = parse_stat(f.read())
        except (OSError, ValueError, IndexError):
            continue                             # gone meanwhile
    return table


def tree_pids(pid: int, table: dict[int, tuple[int, int]]) -> set[int]:
    """The processes of a job without a cgroup: its process group (= its first pid) and every
    descendant of its first process (those that left the group with setsid included)."""
    children: dict[int, list[int]] = {}
    for p, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(p)
    descendants: set[int] = set()
    stack = [pid]
    while stack:
        p = stack.pop()
        if p not in descendants:
            descendants.add(p)
            stack.extend(children.get(p, ()))
    return (descendants & table.keys()) | {p for p, (_, pgrp) in table.items() if pgrp == pid}


def cgroup_pids(path: str) -> list[int] | None:
    """The processes in a job's cgroup (its cgroup.procs); None if it cannot be read."""
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return None


def memory_bytes(pids, procfs: str = PROCFS_PATH) -> int:
    """RssAnon + RssShmem summed over `pids` (a page shared by several counts in each, as in LSF)."""
    total = 0
    for pid in pids:
        try:
            with open(os.path.join(procfs, str(pid), "status")) as f:
                total += parse_status_bytes(f.read())
        except (OSError, ValueError, IndexError):
            continue                             # gone meanwhile
    return total
