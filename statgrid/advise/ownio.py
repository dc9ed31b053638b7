"""The jobs' own I/O beside the machine-wide figures (issue 29's review, item 3).

The monitor's device rows, PSI and iowait are the machine's: on a shared disk another user's I/O counts in
them as if the grid's jobs had done it. A bundle also holds what the jobs themselves did: each job's
read_bytes + write_bytes (the bytes its processes made the storage layer read and write, /proc/<pid>/io,
kept in the job record's rusage by the launcher, and in the session's STIMER total). Where the jobs have
them, MB/s per core is computed from the jobs' own bytes, and the evidence says which figure was used
(`io_figure`); where they do not (bundles from before the launcher read /proc/<pid>/io), the machine-wide
figure stays, labelled as such.

PSI and iowait have no per-job counterpart in a bundle (no per-job cgroup pressure is recorded), so they
stay machine-wide, labelled (`pressure_figure`), with the jobs' share of the devices' bytes beside them
(`jobs_io_share_pct`): a small share says the wait was mostly other processes'.

The jobs' sustained MB/s is defined as the report's device figure is (report.tables: the best mean over
any SUSTAINED_WINDOW_S seconds, the whole span when shorter), over the workload clock in 1 s bins, each
job's bytes spread evenly over its run.
"""
from __future__ import annotations

import math
from typing import Any

from statgrid.monitor.store import moving_max

SUSTAINED_WINDOW_S = 60          # as report.tables.SUSTAINED_WINDOW_S (the report stands above advise)
JOBS_OWN = "the jobs' own bytes read and written, from their records' read_bytes + write_bytes"
MACHINE_WIDE = ("machine-wide: the devices' bytes, every process on the machine, a shared disk's other traffic "
                "included")
PRESSURE_MACHINE_WIDE = ("machine-wide: PSI and iowait of every process on the machine, no per-job pressure "
                         "recorded")


def job_io_bytes(job: dict) -> int | None:
    """A job's own physical bytes read + written: its rusage (the whole job, children included), else its
    session's STIMER total; None when neither has them."""
    from statgrid.job.accounting import JobRusage

    ru = JobRusage.parse(job.get("rusage"))
    if ru is not None and (ru.read_bytes is not None or ru.write_bytes is not None):
        return (ru.read_bytes or 0) + (ru.write_bytes or 0)
    st = job.get("stimer_total") or {}
    if st.get("read_bytes") is not None or st.get("write_bytes") is not None:
        return (st.get("read_bytes") or 0) + (st.get("write_bytes") or 0)
    return None


def spread_per_s(jobs: list[dict], t0: float) -> dict[int, float]:
    """Second k after t0 → the jobs' own bytes in it, each job's bytes spread evenly over [start, end]."""
    out: dict[int, float] = {}
    for j in jobs:
        n = job_io_bytes(j)
        start, end = j.get("start_ts"), j.get("end_ts")
        if not n or start is None or end is None:
            continue
        a, b = start - t0, max(end - t0, start - t0)
        if b - a <= 0:
            k = math.floor(a)
            out[k] = out.get(k, 0.0) + n
            continue
        rate = n / (b - a)
        for k in range(math.floor(a), math.ceil(b)):
            overlap = min(b, k + 1) - max(a, k)
            if overlap > 0:
                out[k] = out.get(k, 0.0) + rate * overlap
    return out


def best_window_mean(per_s: dict[int, float], window: int) -> float | None:
    """The highest mean per second over `window` consecutive seconds (the whole span when shorter)."""
    return moving_max(per_s, window)


def devices_bytes(series) -> float | None:
    """The bytes the machines' devices moved over the run (each device counted once, as the report counts)."""
    if series is None or not series.device_rows:
        return None
    iv = series.intervals
    return sum(((r.get("read_bytes_per_s") or 0) + (r.get("write_bytes_per_s") or 0))
               * iv.get(r["host"], series.interval_s) for r in series.device_rows)


def run_io(meta: dict, jobs: list[dict], series, summary: dict) -> dict[str, Any]:
    """The run's I/O figures: the jobs' own, the machine-wide ones, and which one MB/s per core uses."""
    own = [b for j in jobs if (b := job_io_bytes(j)) is not None]
    cpus = summary.get("cpus") or (meta.get("host") or {}).get("cpus")
    t0 = meta.get("workload_start_ts") or min((j["start_ts"] for j in jobs if j.get("start_ts")), default=0.0)
    out: dict[str, Any] = {"jobs_io_bytes": sum(own) if own else None, "jobs_mb_s_sustained": None,
                           "jobs_mb_s_per_core": None, "devices_mb_s_per_core": summary.get("mb_s_per_core"),
                           "jobs_io_share_pct": None, "pressure_figure": PRESSURE_MACHINE_WIDE}
    if own:
        per_s = spread_per_s(jobs, t0)
        clock_s = (meta.get("end_ts") or t0) - t0
        for k in range(0, math.ceil(clock_s)):          # the whole workload clock, seconds without I/O included
            per_s.setdefault(k, 0.0)
        sustained = best_window_mean(per_s, SUSTAINED_WINDOW_S)
        out["jobs_mb_s_sustained"] = sustained / 1e6 if sustained is not None else 0.0
        out["jobs_mb_s_per_core"] = out["jobs_mb_s_sustained"] / cpus if cpus else None
    dev = devices_bytes(series)
    if own and dev:
        out["jobs_io_share_pct"] = sum(own) / dev * 100
    if out["jobs_mb_s_per_core"] is not None:
        out["io_mb_s_per_core"], out["io_figure"] = out["jobs_mb_s_per_core"], JOBS_OWN
    elif out["devices_mb_s_per_core"] is not None:
        out["io_mb_s_per_core"], out["io_figure"] = out["devices_mb_s_per_core"], MACHINE_WIDE
    else:
        out["io_mb_s_per_core"], out["io_figure"] = None, None
    return out
