"""An optional trace of a job's path through the grid's processes, for measuring where a slot
refill's time goes (benchmarks/dispatch.py --trace). Off unless $STATGRID_HOP_TRACE names a
file when the grid starts: then the master, the engine's scheduler, each worker and each node
launcher append one line per hop to it, `<epoch s> <pid> <hop> <task key>`, written with
O_APPEND in one write (the lines of several processes do not mix). All of a grid's processes on
one machine read the same clock, so the hops of one job line up across processes. Off, a hop
costs a test of a module global.

Hops: M. the master (engine.py), S. the scheduler (engine.GridEvents), W. the worker (node.py),
L. the node launcher (launcher.py). `refill_hops` reads a trace into the hops of each slot refill.

Standard library only: the node launcher loads it by its path (launcher.py)."""
from __future__ import annotations

import os
import time

ENV = "STATGRID_HOP_TRACE"
_fd: int | None = None
PATH = os.environ.get(ENV) or None


def mark(hop: str, key: str) -> None:
    """Append `hop` of task `key` with the time now (nothing when tracing is off)."""
    global _fd
    if PATH is None:
        return
    if _fd is None:
        _fd = os.open(PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    os.write(_fd, f"{time.time():.6f} {os.getpid()} {hop} {key}\n".encode())


def read(path: str) -> dict[str, dict[str, float]]:
    """task key → hop → its (first) time, from a trace file."""
    out: dict[str, dict[str, float]] = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 4:
                continue
            ts, _, hop, key = parts
            out.setdefault(key, {}).setdefault(hop, float(ts))
    return out


# A slot refill, hop by hop: job 1 ends, and the master, handling that end, dispatches job 2.
# (which job, hop) points in their order; each step is named after the stretch it covers.
REFILL = (
    ("1", "L.reaped", None),
    ("1", "W.exited", "launcher reaps job 1 → its node reads LaunchExited"),
    ("1", "W.attempt_written", "node: usage totals, STIMER, attempt file"),
    ("1", "S.event_attempt.finished", "node → scheduler: the end event"),
    ("1", "M.recv_attempt.finished", "scheduler → master: the end event"),
    ("2", "M.submit", "master: job 1's end stored, plan, job 2's dispatch stored"),
    ("2", "M.submitted", "master: job 2's task made (Client.submit)"),
    ("2", "S.waiting>processing", "master → scheduler: job 2's task"),
    ("2", "W.ready>executing", "scheduler → worker: job 2's task"),
    ("2", "W.run", "worker: its thread starts run_job"),
    ("2", "L.request", "node → launcher: the request (start_ts)"),
    ("2", "L.start", "launcher: user checks, job directory, fork (or a spare told to go)"),
    ("2", "L.started_sent", "job 2's process: set-up until exec"),
)


def refill_hops(path: str) -> dict[str, list[float]]:
    """Each slot refill of a trace in steps (REFILL's names → ms, one value per refill): a job 2
    whose M.submit lies within the master's handling of job 1's end (M.event_AttemptFinished …
    M.handled_AttemptFinished). Refills missing a hop (a job of another kind) are left out.
    Also "gap (end_ts → start_ts)": job 1's L.reaped → job 2's L.request, what the benchmark's
    refill gap measures."""
    trace = read(path)
    handling = sorted((hops["M.event_AttemptFinished"], hops.get("M.handled_AttemptFinished", float("inf")), key)
                      for key, hops in trace.items() if "M.event_AttemptFinished" in hops)
    out: dict[str, list[float]] = {name: [] for _, _, name in REFILL if name}
    out["gap (end_ts → start_ts)"] = []
    for key2, hops2 in trace.items():
        submit = hops2.get("M.submit")
        ended = [key1 for t0, t1, key1 in handling if t0 <= (submit or -1.0) <= t1]
        if not ended:
            continue
        jobs = {"1": trace[ended[-1]], "2": hops2}
        points = [jobs[which].get(hop) for which, hop, _ in REFILL]
        if None in points:
            continue
        for (_, _, name), before, after in zip(REFILL, [None, *points], points):
            if name:
                out[name].append((after - before) * 1000)
        out["gap (end_ts → start_ts)"].append((jobs["2"]["L.request"] - jobs["1"]["L.reaped"]) * 1000)
    return out
