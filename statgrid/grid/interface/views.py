"""Plain-text views of job, host and queue records, laid out like LSF's bjobs/bhosts/bqueues.

Whatever a record holds is shown on its own line: control characters are escaped (a newline
in a job name once forged a row of `statgrid jobs`) and table cells are cut to CELL_MAX_CHARS
(a 10 MB name padded every row to 10 MB). Stores written before names were checked can still
hold such values; the full value is in `statgrid job ID --json`.
"""
from __future__ import annotations

import time
from typing import Any, Iterable, Sequence

from statgrid.job.accounting import JobRusage
from statgrid.job.lifecycle import FINISHED_NAMES
from statgrid.job.stimer import StepRecord


def _ts(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%b %d %H:%M:%S", time.localtime(ts))


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


CELL_MAX_CHARS = 40


def printable(value: Any) -> str:
    """str(value) on one line: each non-printable character as Python escapes it (\\n, \\x1b)."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def cell(value: Any, max_chars: int | None = CELL_MAX_CHARS) -> str:
    """A table cell: '-' for None, printable, cut to max_chars (ending in '…')."""
    text = "-" if value is None else printable(value)
    return text if max_chars is None or len(text) <= max_chars else text[:max_chars - 1] + "…"


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], max_chars: int | None = None) -> str:
    rows = [[cell(v, max_chars) for v in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def jobs_table(records: list[dict]) -> str:
    if not records:
        return "No unfinished job found (use -a for finished ones, -u all for everyone's)."
    idle = any(r.get("kind") == "kernel" for r in records)     # interactive sessions: their idle time too
    return table(["JOBID", "USER", "STAT", "QUEUE", "EXEC_HOST", "JOB_NAME", "SUBMIT_TIME", "WAIT_S", "RUN_S"]
                 + (["IDLE_S"] if idle else []),
                 [[r["id"], r["user"], r["state"], r["queue"], r["host"], r["name"], _ts(r["submit_ts"]),
                   _s(r["wait_s"]), _s(r["run_s"])] + ([_s(r.get("idle_s"))] if idle else []) for r in records],
                 max_chars=CELL_MAX_CHARS)


def pending_table(records: list[dict]) -> str:
    """`statgrid jobs -p` (bjobs -p): each pending job and why it waits."""
    pend = [r for r in records if r["state"] == "PEND"]
    if not pend:
        return "No pending job found (-u all for everyone's)."
    return table(["JOBID", "USER", "QUEUE", "JOB_NAME", "SUBMIT_TIME", "PENDING REASON"],
                 [[r["id"], r["user"], r["queue"], cell(r["name"]), _ts(r["submit_ts"]), r.get("pend_reason") or "-"]
                  for r in pend])


def flows_table(rows: list[dict]) -> str:
    if not rows:
        return "No flow or array found (-u all for everyone's)."
    return table(["FLOW", "KIND", "USER", "NAME", "STAT", "JOBS", "SUBMIT_TIME"],
                 [[r["id"], r["kind"], r["user"], cell(r["name"]), r["state"],
                   " ".join(f"{s}:{n}" for s, n in sorted(r["counts"].items())), _ts(r["submit_ts"])] for r in rows])


def flow_detail(r: dict) -> str:
    head = (f"{r['kind'].capitalize()} <{r['id']}>, Name <{printable(r['name'])}>, User <{printable(r['user'])}>, "
            f"Status <{r['state']}>, submitted {_ts(r['submit_ts'])}"
            + (f", at most {r['throttle']} running" if r.get("throttle") else ""))
    counts = "  Jobs: " + ", ".join(f"{n} {s}" for s, n in sorted(r["counts"].items()))
    rows = [[j["id"], cell(j["name"]), j["state"], j.get("host") or "-",
             j.get("pend_reason") or j.get("exit_reason") or "-", j.get("depend") or "-"] for j in r["jobs"]]
    return "\n".join([head, counts, table(["JOBID", "NAME", "STAT", "HOST", "REASON", "DEPENDENCY"], rows)])


def schedules_table(rows: list[dict]) -> str:
    if not rows:
        return "No calendar (add one with `statgrid schedule add --cron SPEC -- JOB`)."
    return table(["ID", "USER", "CRON", "TZ", "WHAT", "NEXT", "LAST", "LAST_RESULT"],
                 [[r["id"], r["user"], r["cron"], r["tz"], cell(r["what"]), _ts(r["next_ts"]), _ts(r["last_ts"]),
                   cell(r["last_result"] or "-")] for r in rows])


def shares_table(rec: dict) -> str:
    """`statgrid shares` (bqueues -r): per fairshare queue, its users and groups by priority."""
    if not rec["queues"]:
        return "No queue has fairshare (give a queue `fairshare = { default = 1 }` in grid.toml)."
    out = []
    for q in rec["queues"]:
        out.append(f"Queue {q['queue']}: fairshare " + ", ".join(f"{n} = {s}" for n, s in q["fairshare"])
                   + f"; usage halves every {rec['half_life_s'] / 3600:g} h")
        out.append(table(["USER/GROUP", "SHARES", "PRIORITY", "RUN", "PEND", "USAGE_H"],
                         [[("  " + r["name"]) if r["kind"] == "member" else
                           (f"{r['name']}/" if r["kind"] == "group" else r["name"]),
                           "-" if r["kind"] == "member" else r["shares"], f"{r['priority']:.4g}", r["running"],
                           r["pending"], f"{r['usage_h']:.3f}"] for r in q["rows"]]))
    return "\n\n".join(out)


def hosts_table(rows: list[dict]) -> str:
    return table(["HOST_NAME", "STATUS", "MAX", "RUN", "LOAD_1M", "CPUS", "ADDRESS", "CLOSED_BY"],
                 [[r["host"], r["state"], r["slots"], r["running"], r["load_1m"], r.get("cpus", "all"), r["address"],
                   _closed(r)] for r in rows])


def _closed(row: dict) -> str:
    """Who closed a host and why (`statgrid host close`), or "grid.toml" (open = false); "-" if open."""
    by = row.get("closed_by")
    if not by:
        return "-"
    reason = row.get("closed_reason")
    return f"{by}: {reason}" if reason else by


def tokens_table(rows: list[dict]) -> str:
    return table(["ID", "USER", "NAME", "CREATED", "REVOKED"],
                 [[r["id"], r["user"], r["name"], _ts(r["created_ts"]),
                   "-" if r["revoked_ts"] is None else f"{_ts(r['revoked_ts'])} by {r['revoked_by']}"] for r in rows])


def queues_table(rows: list[dict]) -> str:
    return table(["QUEUE_NAME", "PRIO", "HOSTS", "USER_LIMIT", "PEND", "RUN"],
                 [[r["queue"], r["priority"], r["hosts"], r["user_limit"] or "-", r["pending"], r["running"]]
                  for r in rows])


RUSAGE_ROWS = [("user CPU", "user_cpu_s", "s"), ("system CPU", "sys_cpu_s", "s"),
               ("max RSS", "max_rss_bytes", "MiB"), ("page faults", "page_faults", ""),
               ("page reclaims", "page_reclaims", ""), ("voluntary ctx switches", "voluntary_ctx_switches", ""),
               ("involuntary ctx switches", "involuntary_ctx_switches", ""),
               ("block input ops", "block_input_ops", ""), ("block output ops", "block_output_ops", ""),
               ("bytes read (disk)", "read_bytes", "MiB"), ("bytes written (disk)", "write_bytes", "MiB"),
               ("bytes read (logical)", "logical_read_bytes", "MiB"),
               ("bytes written (logical)", "logical_write_bytes", "MiB")]
STIMER_ROWS = [("real time", "real_s", "s"), ("user CPU", "user_cpu_s", "s"), ("system CPU", "sys_cpu_s", "s"),
               ("memory", "memory_bytes", "MiB"), ("OS memory", "os_memory_bytes", "MiB"),
               ("rows out", "rows_out", "")]


def _fmt(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "MiB":
        return f"{value / 2**20:.1f} MiB"
    if unit == "s":
        return f"{value:.3f} s"
    return str(value)


def job_detail(r: dict) -> str:
    p = printable
    lines = [f"Job <{r['id']}>, Job Name <{p(r['name'])}>, User <{p(r['user'])}>, Queue <{p(r['queue'])}>, "
             f"Status <{r['state']}>, Attempt <{r['attempt']}>",
             f"  Command: {p(' '.join(r['argv']))}  ({r['kind']}{', rerunnable' if r['rerunnable'] else ''})",
             f"  Submitted: {_ts(r['submit_ts'])}   Started: {_ts(r['start_ts'])} on <{p(r['host'] or '-')}>   "
             f"Ended: {_ts(r['end_ts'])}",
             f"  Wait: {_s(r['wait_s'])} s   Run: {_s(r['run_s'])} s   PID: {r['pid'] or '-'}"
             + (f"   Requeued: {r['requeues']}x" if r.get("requeues") else "")]
    if r.get("pend_reason"):
        lines.append(f"  Pending reason: {p(r['pend_reason'])}")
    if r.get("idle_s") is not None:
        lines.append(f"  Interactive session: idle {_s(r['idle_s'])} s (since its last cell)")
    if r.get("depend"):
        lines.append(f"  Dependency: {p(r['depend'])}")
    sched = [f"{label} {value}" for label, value in (
        ("array", f"{r['flow_id']}[{r['array_index']}]" if r.get("array_index") is not None else None),
        ("flow", r.get("flow_id") if r.get("array_index") is None else None),
        ("run limit", f"{r['runlimit_s']:g} s" if r.get("runlimit_s") else None),
        ("memory reserved", f"{r['mem_bytes'] / 2**20:.0f} MiB" if r.get("mem_bytes") else None),
        ("job priority", r.get("priority") or None)) if value is not None]
    if sched:
        lines.append("  Scheduling: " + ", ".join(sched))
    if r["state"] in FINISHED_NAMES:
        how = (f"exit code {r['exit_code']}" if r["exit_code"] is not None else
               f"signal {r['signal']}" if r["signal"] is not None else "no exit status")
        lines.append(f"  Ended with {how}" + (f": {p(r['exit_reason'])}" if r.get("exit_reason") else ""))
    if r.get("options"):
        lines.append("  Options: " + p(" ".join(f"{k}={v}" for k, v in r["options"].items())))
    rusage, stimer = JobRusage.parse(r.get("rusage")), StepRecord.parse(r.get("stimer"))
    if rusage is not None:
        lines.append("  Resource usage (wait4 and /proc/<pid>/io of the job):")
        lines += [f"    {label:<26}{_fmt(getattr(rusage, name), unit)}" for label, name, unit in RUSAGE_ROWS]
    if stimer is not None:
        lines.append("  Session STIMER totals:")
        lines += [f"    {label:<26}{_fmt(getattr(stimer, name), unit)}" for label, name, unit in STIMER_ROWS]
    if r.get("job_dir"):
        lines.append(f"  Output and log: {r['job_dir']}")
    return "\n".join(lines)


ACCT_FIGURES = ["JOBS", "DONE", "EXIT", "KILLED", "STARTED", "WAIT_MEAN_S", "WAIT_P95_S", "RUN_SUM_S", "RUN_MEAN_S",
                "CPU_SUM_S"]


def acct_text(report) -> str:
    """`statgrid acct`: what was asked, then a table per user, per group and per queue, and the
    total (a statgrid.grid.master.acct.AcctReport; the definitions are in acct.py)."""
    scope = [f"user {printable(report.user)}" if report.user else "all users"]
    if report.queue:
        scope.append(f"queue {printable(report.queue)}")
    if report.since_ts is not None:
        scope.append(f"ended since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(report.since_ts))}")
    head = (f"Finished jobs (DONE, EXIT, KILLED) of {', '.join(scope)}.\n"
            "Seconds; wait = start − submit and run = end − start, of the jobs that started; p95 by nearest rank; "
            "CPU = user + system; a user in two groups counts in both.")
    if not report.total.jobs:
        return f"{head}\n\nNo finished job found."

    def rows(rs) -> list[list]:
        return [[r.name, r.jobs, r.done, r.exit, r.killed, r.started, _s(r.wait_mean_s), _s(r.wait_p95_s),
                 _s(r.run_sum_s), _s(r.run_mean_s), _s(r.cpu_sum_s)] for r in rs]

    parts = [head]
    for title, rs in (("USER", report.by_user), ("GROUP", report.by_group), ("QUEUE", report.by_queue),
                      ("", [report.total])):
        parts.append(table([title, *ACCT_FIGURES], rows(rs), max_chars=CELL_MAX_CHARS))
    if report.sessions_by_day:
        parts.append("Interactive sessions (notebook kernels) by the day they started:\n"
                     + table(["DAY", "SESSIONS", "USERS"], [list(d) for d in report.sessions_by_day]))
    return "\n\n".join(parts)
