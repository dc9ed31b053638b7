"""A workload's figures that its job records alone give: each job's times (its STIMER total, else its
rusage), the response time, the mean CPU/real by kind. `bench mixed` prints them at the end of a run,
`bench scale` puts them in scale.json, `advise` reads them, and the report (report/tables.py) shows them beside the monitor
series' figures: defined here, below both, so the two agree without bench importing the report.
"""
from __future__ import annotations

from statgrid.job.accounting import JobRusage
from statgrid.job.stimer import StepRecord


# -- one job's figures ------------------------------------------------------------------------------
def job_times(j: dict) -> dict:
    """real_s, user_cpu_s, sys_cpu_s, memory_bytes of a job: its session's STIMER total (SAS's
    FULLSTIMER view) when it has one, else the job process's rusage over its wall time."""
    st = StepRecord.parse(j.get("stimer_total"))
    ru = JobRusage.parse(j.get("rusage")) or JobRusage()
    if st is not None and st.real_s:
        return {"real_s": st.real_s, "user_cpu_s": st.user_cpu_s, "sys_cpu_s": st.sys_cpu_s,
                "memory_bytes": st.memory_bytes or 0}
    return {"real_s": wall_s(j), "user_cpu_s": ru.user_cpu_s, "sys_cpu_s": ru.sys_cpu_s,
            "memory_bytes": ru.max_rss_bytes or 0}


def wall_s(j: dict) -> float | None:
    """A job's process wall time, start to end (None if it never ran)."""
    return (j["end_ts"] - j["start_ts"]) if j.get("end_ts") and j.get("start_ts") else None


def response_time_s(jobs: list[dict]) -> float:
    """Seed 000's response time: the cumulative real time of all the jobs — their wall times summed
    (EXIT jobs included: they held a slot as long as they ran)."""
    return sum(w for j in jobs if (w := wall_s(j)) is not None)


def stimer_real_s(jobs: list[dict]) -> float:
    """The jobs' STIMER real time summed (job_times: a job without a STIMER total counts its wall time,
    as in the per-node FULLSTIMER table; the report's note says so)."""
    return sum(job_times(j)["real_s"] or 0 for j in jobs)


def cpu_real(j: dict) -> float | None:
    t = job_times(j)
    return (t["user_cpu_s"] + t["sys_cpu_s"]) / t["real_s"] if t["real_s"] else None


def mean_present(xs: list[float | None]) -> float | None:
    """The mean of the values that are not None (None if none is)."""
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def job_figures(meta: dict, jobs: list[dict]) -> dict:
    """The workload summary's figures that the job records alone give (the report adds the monitor
    series' figures: report.tables.summary_figures), under the keys --compare lines up."""
    clock_s = meta["end_ts"] - meta["workload_start_ts"]
    done = [j for j in jobs if j["state"] == "DONE"]
    logical = sum((JobRusage.parse(j.get("rusage")) or JobRusage()).logical_io_bytes for j in jobs)
    f: dict = {"jobs": len(jobs), "jobs_done": len(done), "jobs_exit": sum(j["state"] == "EXIT" for j in jobs),
               "clock_s": clock_s, "summed_real_s": response_time_s(jobs), "stimer_real_s": stimer_real_s(jobs),
               "cpu_real_mean": mean_present([cpu_real(j) for j in done]),
               "jobs_logical_mb_s": logical / 1e6 / clock_s if clock_s > 0 else None}
    for kind in ("io", "cpu", "memory"):
        f[f"cpu_real_{kind}"] = mean_present([cpu_real(j) for j in done if j.get("kind") == kind])
    return f


# key, section, figure, unit: the report's summary rows of the workload section (report.tables.SUMMARY_ROWS)
WORKLOAD_ROWS = [
    ("clock_s", "workload", "clock time", "s"),
    ("summed_real_s", "workload", "response time (summed wall time of the jobs)", "s"),
    ("stimer_real_s", "workload", "summed step real time (STIMER)", "s"),
    ("jobs", "workload", "jobs", ""),
    ("jobs_done", "workload", "jobs DONE", ""),
    ("jobs_exit", "workload", "jobs EXIT", ""),
    ("cpu_real_mean", "workload", "mean CPU/real of the jobs", ""),
    ("cpu_real_io", "workload", "mean CPU/real, I/O jobs", ""),
    ("cpu_real_cpu", "workload", "mean CPU/real, CPU jobs", ""),
    ("cpu_real_memory", "workload", "mean CPU/real, memory jobs", ""),
]
FIGURE_NAMES = {k: name for k, _, name, _ in WORKLOAD_ROWS}
