"""The workload's make-up from a run: seed 000's Table 1 (jobs by SAS user type and data size) and seed 004's
workload profile (Figure 1: percent of the work by user type).

A job's data size is what it read (its logical read bytes: the data it works through, page-cache hits
included), put in seed 000's classes: less than 1 GB, 1 to 10 GB, more than 10 GB. The work of a user type is
its jobs' share of the summed job wall time (seed 004 counts work, not jobs), with the shares of jobs and of
CPU time beside it.
"""
from __future__ import annotations

from statgrid.job.accounting import JobRusage
from statgrid.report.model import Column, Table
from statgrid.job.figures import wall_s

GB = 1e9
SIZE_CLASSES = (("less than 1 GB", 0.0, 1 * GB), ("1 to 10 GB", 1 * GB, 10 * GB), ("more than 10 GB", 10 * GB, None))


def _size_class(read_bytes: float) -> str:
    for name, lo, hi in SIZE_CLASSES:
        if read_bytes >= lo and (hi is None or read_bytes < hi):
            return name
    return SIZE_CLASSES[-1][0]


def _user_type(job: dict) -> str:
    return job.get("user_type") or job.get("kind") or "other"


def jobs_by_type_and_size(jobs: list[dict]) -> Table:
    """Seed 000 Table 1: per user type and data-size class, the number of jobs (and their mean data read)."""
    cells: dict[tuple[str, str], list[float]] = {}
    for j in jobs:
        ru = JobRusage.parse(j.get("rusage")) or JobRusage()
        read = float(ru.logical_read_bytes or 0)
        cells.setdefault((_user_type(j), _size_class(read)), []).append(read)
    order = {name: i for i, (name, _, _) in enumerate(SIZE_CLASSES)}
    rows = [{"user_type": t, "data_size": size, "jobs": len(v), "mean_read_mb": sum(v) / len(v) / 1e6}
            for (t, size), v in sorted(cells.items(), key=lambda kv: (kv[0][0], order[kv[0][1]]))]
    cols = [Column("user_type", "SAS user type", align="left"), Column("data_size", "data size", align="left"),
            Column("jobs", "jobs"), Column("mean_read_mb", "mean read MB", 1)]
    return Table("workload_table1", "Jobs by user type and data size (seed 000 Table 1)", cols, rows,
                 [f"{len(jobs)} jobs. Data size: the data a job read (logical read bytes), in seed 000's classes."])


def work_profile(jobs: list[dict]) -> Table:
    """Seed 004 Figure 1: percent of the work (summed job wall time) by user type, with jobs and CPU beside."""
    per: dict[str, dict[str, float]] = {}
    for j in jobs:
        ru = JobRusage.parse(j.get("rusage")) or JobRusage()
        d = per.setdefault(_user_type(j), {"jobs": 0, "wall_s": 0.0, "cpu_s": 0.0})
        d["jobs"] += 1
        d["wall_s"] += wall_s(j) or 0.0
        d["cpu_s"] += float(ru.user_cpu_s or 0.0) + float(ru.sys_cpu_s or 0.0)
    tot = {k: sum(d[k] for d in per.values()) for k in ("jobs", "wall_s", "cpu_s")}

    def pct(x: float, total: float) -> float | None:
        return 100.0 * x / total if total else None
    rows = [{"user_type": t, "work_pct": pct(d["wall_s"], tot["wall_s"]), "jobs_pct": pct(d["jobs"], tot["jobs"]),
             "cpu_pct": pct(d["cpu_s"], tot["cpu_s"]), "wall_s": d["wall_s"], "cpu_s": d["cpu_s"]}
            for t, d in sorted(per.items(), key=lambda kv: kv[1]["wall_s"])]
    if rows:
        rows.append({"user_type": "Total", "work_pct": 100.0 if tot["wall_s"] else None,
                     "jobs_pct": 100.0 if tot["jobs"] else None, "cpu_pct": 100.0 if tot["cpu_s"] else None,
                     "wall_s": tot["wall_s"], "cpu_s": tot["cpu_s"]})
    cols = [Column("user_type", "workload description", align="left"), Column("work_pct", "% of work", 2),
            Column("jobs_pct", "% of jobs", 2), Column("cpu_pct", "% of CPU", 2), Column("wall_s", "job wall s", 1),
            Column("cpu_s", "CPU s", 1)]
    return Table("workload_profile", "Workload profile (seed 004 Figure 1)", cols, rows,
                 ["Work: the summed wall time of a user type's jobs, as a share of all jobs' (seed 004 sizes by "
                  "work, not job counts); CPU: user + system time of the jobs' processes."])
