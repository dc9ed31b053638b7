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
  before it is seen. A page shared by several of its processes (copy-on-write after fork, shared
  memory) counts once in all: each process counts its share of it (PSS).

Either way the job ends EXIT with `limit_reason`, naming the reservation and how it was enforced.
$STATGRID_MEMORY_LIMIT in the node's environment chooses: `auto` (the default: cgroup v2 where
available, else watch), `watch` (always watch), `off` (reservations place jobs only).

Standard library only: the launcher (`python -I -S`) loads this file by its path.
"""
from __future__ import annotations

import os

# Standard library only too; under the launcher it is loaded by path before this file (launcher.py).
from statgrid.host.procfs import PROCFS_PATH

MODE_ENV = "STATGRID_MEMORY_LIMIT"
MODES = ("auto", "watch", "off")
WATCH_INTERVAL_S = 0.5                   # how often a watched job's RSS is summed


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


def system_oom_reason(limit_bytes: int) -> str:
    return (f"killed by the system's OOM killer while within its memory reservation {size_text(limit_bytes)}: its "
            "host ran short of memory (jobs or other programs there use more than the hosts' `memory` in grid.toml "
            "allows for); run it again, and lower that host's `memory` or stop what else uses its memory")


def watch_reason(limit_bytes: int, used_bytes: int) -> str:
    return (f"exceeded its memory reservation {size_text(limit_bytes)}: its processes' memory reached "
            f"{size_text(used_bytes)} and its node killed it (anonymous and shared memory, shared pages counted "
            f"once, watched every "
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


def parse_memory_events(text: str) -> dict[str, int]:
    """memory.events ("key count" lines) → {key: count}; a line that is not one is skipped."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        try:
            counts[key] = int(value)
        except ValueError:
            continue
    return counts


def oom_verdict(counts: dict[str, int]) -> str:
    """What memory.events says ended a job: 'limit' if its own memory.max did (`oom`: the cgroup hit
    its limit and the OOM killer was invoked for it; `oom_kill`: a process of it was killed), 'system'
    if a process of it was killed by an OOM kill it did not cause (the host short of memory: that too
    counts in oom_kill), '' if none was killed."""
    if counts.get("oom_kill", 0) <= 0:
        return ""
    return "limit" if counts.get("oom", 0) > 0 else "system"


def oom_kill_reason(path: str, limit_bytes: int) -> str | None:
    """The job's limit_reason from its cgroup's memory.events, None if no OOM kill (or unreadable)."""
    try:
        with open(os.path.join(path, "memory.events")) as f:
            verdict = oom_verdict(parse_memory_events(f.read()))
    except OSError:
        return None
    if verdict == "limit":
        return cgroup_reason(limit_bytes)
    return system_oom_reason(limit_bytes) if verdict == "system" else None


# -- watch ----------------------------------------------------------------------------------------
# What is counted: each process's anonymous and shared-memory pages that are resident, a page
# shared by N processes counted 1/N in each (proc(5), /proc/<pid>/smaps_rollup Pss_Anon +
# Pss_Shmem) — what memory.max would have to keep, not the pages of files it maps (a
# session's Python, DuckDB and Arrow libraries are ~85 MiB of those, shared with every other
# session and dropped by the kernel when memory is short). Not RssAnon + RssShmem of each (status):
# after fork a parent's pages are its children's too until written, and a 300 MiB process with 3
# forked children summed 1,219 MiB so; status is read only where smaps_rollup has no Pss_Anon
# (older kernels) or cannot be read. Measured on a session with memsize=256M sorting past it
# (spilling): RssAnon peaked at 330 MiB, VmRSS at 416 MiB.

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


def parse_smaps_rollup_bytes(text: str) -> int | None:
    """/proc/<pid>/smaps_rollup → Pss_Anon + Pss_Shmem in bytes; None if it has no Pss_Anon line
    (an older kernel, whose smaps_rollup has Pss alone; or a zombie's empty file: read status instead)."""
    total, seen = 0, False
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("Pss_Anon", "Pss_Shmem"):
            total += int(value.split()[0]) * 1024          # "  1234 kB"
            seen = seen or key == "Pss_Anon"
    return total if seen else None


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


def process_bytes(pid: int, procfs: str = PROCFS_PATH) -> int:
    """One process's Pss_Anon + Pss_Shmem (its share of pages it shares); RssAnon + RssShmem where
    smaps_rollup lacks them or cannot be read; 0 if it is gone."""
    try:
        with open(os.path.join(procfs, str(pid), "smaps_rollup")) as f:
            pss = parse_smaps_rollup_bytes(f.read())
        if pss is not None:
            return pss
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(os.path.join(procfs, str(pid), "status")) as f:
            return parse_status_bytes(f.read())
    except (OSError, ValueError, IndexError):
        return 0                                 # gone meanwhile


def memory_bytes(pids, procfs: str = PROCFS_PATH) -> int:
    """The memory of `pids` together: each one's process_bytes, so a page they share counts once."""
    return sum(process_bytes(pid, procfs) for pid in pids)
