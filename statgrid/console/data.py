"""The records behind each console view: one dict per view, the page's template and its JSON
(`/console/api/...`) are both made from it. All from the master's memory except the jobs
listing (one SQL page, in a thread) and a job's history and files.

Rights are auth.Rights's: everyone sees every job's metadata, hosts and queues; a job's output,
STIMER steps and usage are its owner's and administrators'.
"""
from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statgrid.errors import UsageError
from statgrid.grid.security.auth import Caller
from statgrid.host.files import NotTrusted, read_untrusted
from statgrid.job.jobdir import STIMER_LOG, JobDir, usage_path
from statgrid.job.lifecycle import RUNNING_NAMES, UNFINISHED_NAMES
from statgrid.job.record import JobState

if TYPE_CHECKING:
    from statgrid.console.live import Console
    from statgrid.grid.master.core import Master

UNFINISHED = UNFINISHED_NAMES
STIMER_MAX_BYTES = 1 << 20
RESULT_ROOTS = ("bench", "demo", "iobench")      # under the grid home: where bench, demo and iobench save
RESULT_MAX_ENTRIES = 200

# Charts: (id, title, unit, stacked, [(series key, label, scale)]); "{lib}" and "{dev}" expand per library/device.
CPU_SERIES = [("node.cpu_user_pct", "user", 1), ("node.cpu_system_pct", "system", 1),
              ("node.cpu_iowait_pct", "iowait", 1), ("node.cpu_steal_pct", "steal", 1)]
MEM_SERIES = [("node.mem_used_bytes", "used", 2**-30), ("node.mem_cached_bytes", "cache", 2**-30)]
PSI_SERIES = [("node.psi_cpu_some_pct", "cpu some", 1), ("node.psi_io_some_pct", "io some", 1),
              ("node.psi_io_full_pct", "io full", 1), ("node.psi_memory_some_pct", "memory some", 1)]
MB = 1e-6


def can_act(who: Caller, user: str) -> bool:
    """Kill and see the detail of a job of `user`: its owner and administrators."""
    return who.admin or who.user == user


# -- grid and hosts -----------------------------------------------------------------------------------
def host_rows(master: "Master", console: "Console") -> list[dict[str, Any]]:
    rows = []
    for view in master.host_views().values():
        closed = master.closed.get(view.name, {})
        latest = console.ring.latest(view.name)
        values = latest["values"] if latest else {}
        rows.append({"host": view.name, "state": view.state, "slots": view.slots, "running": view.running,
                     "closed_by": closed.get("closed_by") or (None if master.cfg.hosts[view.name].open else "grid.toml"),
                     "closed_reason": closed.get("reason"), "address": master.engine.workers.get(view.name),
                     "cpu_busy_pct": _pct(values.get("node.cpu_user_pct"), values.get("node.cpu_system_pct")),
                     "mem_used_bytes": values.get("node.mem_used_bytes"),
                     "load_1m": values.get("node.load_1m")})
    return rows


def _pct(*parts: float | None) -> float | None:
    return None if any(p is None for p in parts) else round(sum(parts), 1)


def _names(console: "Console", host: str | None, table: str) -> list[str]:
    """Libraries or devices seen in the ring's latest samples (of one host, or any)."""
    names: set[str] = set()
    for h, ring in console.ring.samples.items():
        if (host is None or h == host) and ring:
            names |= {k.split(".")[1] for k in ring[-1]["values"] if k.startswith(table + ".")}
    return sorted(names)


def chart(console: "Console", host: str, chart_id: str, title: str, unit: str, series: list[tuple[str, str, float]],
          stacked: bool = False) -> dict[str, Any]:
    """A chart's spec with its history from the ring: the page draws it, the live samples extend it."""
    ring = console.ring.samples.get(host, [])
    data = [[s["ts"] for s in ring]]
    for key, _, scale in series:
        data.append([None if s["values"].get(key) is None else s["values"][key] * scale for s in ring])
    return {"id": chart_id, "host": host, "title": title, "unit": unit, "stacked": stacked,
            "series": [{"key": k, "label": label, "scale": scale} for k, label, scale in series], "data": data}


def _sources(console: "Console", host: str | None) -> dict[str, str]:
    """library → the source of its figures in the ring's latest samples (block, nfs, gpfs, process)."""
    out: dict[str, str] = {}
    for h, ring in console.ring.samples.items():
        if (host is None or h == host) and ring:
            out.update(ring[-1].get("sources") or {})
    return out


def library_series(console: "Console", host: str | None) -> list[tuple[str, str, float]]:
    """Each library's read and write MB/s; a library not measured on its block device says where
    its figures come from ("work read (process)": the jobs' own I/O, monitor/libio.py)."""
    out = []
    sources = _sources(console, host)
    for lib in _names(console, host, "library"):
        src = sources.get(lib)
        tag = f" ({src})" if src and src != "block" else ""
        out += [(f"library.{lib}.read_bytes_per_s", f"{lib} read{tag}", MB),
                (f"library.{lib}.write_bytes_per_s", f"{lib} write{tag}", MB)]
    return out


def grid_summary(master: "Master") -> dict[str, Any]:
    views = master.host_views().values()
    return {"slots": sum(v.slots for v in views), "running": sum(v.running for v in views),
            "pending": len(master.pending), "hosts": [v.name for v in views]}


def grid_view(master: "Master", console: "Console") -> dict[str, Any]:
    rows = host_rows(master, console)
    libs = library_series(console, None)
    charts = {}
    for row in rows:
        h = row["host"]
        charts[h] = [chart(console, h, f"{h}-cpu", "CPU %", "%", CPU_SERIES[:3], stacked=True),
                     chart(console, h, f"{h}-mem", "memory GiB", "GiB", MEM_SERIES, stacked=True),
                     chart(console, h, f"{h}-lib", "libraries MB/s", "MB/s", libs)]
    return {"hosts": rows, "charts": charts, "slots": sum(r["slots"] for r in rows),
            "running": sum(r["running"] for r in rows), "pending": len(master.pending)}


def host_view(master: "Master", console: "Console", host: str) -> dict[str, Any]:
    row = next(r for r in host_rows(master, console) if r["host"] == host)
    devices = _names(console, host, "disk")
    charts = [chart(console, host, f"{host}-cpu", "CPU % (stacked)", "%", CPU_SERIES, stacked=True),
              chart(console, host, f"{host}-mem", "memory GiB", "GiB", MEM_SERIES, stacked=True),
              chart(console, host, f"{host}-lib", "libraries MB/s", "MB/s", library_series(console, host)),
              chart(console, host, f"{host}-dev", "devices MB/s", "MB/s",
                    [s for d in devices for s in ((f"disk.{d}.read_bytes_per_s", f"{d} read", MB),
                                                  (f"disk.{d}.write_bytes_per_s", f"{d} write", MB))]),
              chart(console, host, f"{host}-await", "await ms", "ms",
                    [(f"disk.{d}.await_ms", d, 1) for d in devices]),
              chart(console, host, f"{host}-psi", "pressure (PSI) %", "%", PSI_SERIES)]
    running = sorted((j.to_dict() for j in master.running.values() if j.host == host), key=lambda r: r["id"])
    return {"host": row, "charts": charts, "running": running}


# -- queues ---------------------------------------------------------------------------------------------
def queues_view(master: "Master", now: float | None = None) -> dict[str, Any]:
    """Per queue: pending and running, per user, limits, and who has waited longest."""
    now = time.time() if now is None else now
    per_user: dict[tuple[str, str], dict[str, int]] = {}
    oldest: dict[str, Any] = {}
    for state, table in (("pending", master.pending), ("running", master.running)):
        for job in table.values():
            counts = per_user.setdefault((job.queue, job.user), {"pending": 0, "running": 0})
            counts[state] += 1
            if state == "pending" and (job.queue not in oldest or job.submit_ts < oldest[job.queue].submit_ts):
                oldest[job.queue] = job
    queues = []
    for q in master.queues():
        users = sorted(({"user": u, **c} for (qn, u), c in per_user.items() if qn == q["queue"]),
                       key=lambda r: (-r["running"] - r["pending"], r["user"]))
        job = oldest.get(q["queue"])
        queues.append({**q, "users": users, "longest_wait": None if job is None else
                       {"id": job.id, "user": job.user, "wait_s": round(max(0.0, now - job.submit_ts), 1)}})
    return {"queues": queues}


def pend_reason(master: "Master", job: dict[str, Any]) -> str | None:
    """Why a pending job waits: the master's reason as of its latest dispatch (LSF's bjobs -p)."""
    if job["state"] != "PEND":
        return None
    pending = master.pending.get(job["id"])
    return None if pending is None else master.pend_reason(pending)


# -- jobs -----------------------------------------------------------------------------------------------
def job_row(master: "Master", record: dict[str, Any], now: float | None = None) -> dict[str, Any]:
    """The record with why it pends and, while it runs, `run_so_far_s`: seconds since its start
    (run_s, its end minus its start, stays None until it ends). Suspensions count, as in run_s."""
    running = record["state"] in RUNNING_NAMES and record.get("start_ts") is not None
    now = time.time() if now is None else now
    so_far = max(0.0, now - record["start_ts"]) if running else None
    idle = master.kernels.idle_s(record["id"], now) if running and record.get("kind") == "kernel" else None
    return {**record, "pend_reason": pend_reason(master, record), "run_so_far_s": so_far, "idle_s": idle}


def job_files(master: "Master", job: dict[str, Any]) -> tuple[Path, int | None]:
    """The job's directory and the uid that must own files read from it."""
    from statgrid.grid.master.core import job_dir

    return job_dir(master.cfg, job["id"]), master.files_uid(job["user"])


def stimer_steps(directory: Path | JobDir, owner_uid: int | None) -> list[dict[str, Any]]:
    """The step records of a session's STIMER log, with its sub-tasks' records (Session.parallel;
    its "total" record left out): jobdir.JobDir.stimer_steps of the job's directory. A path to the
    log itself (as tests/grid/test_connect.py gives it) is read as its directory's."""
    path = Path(directory)
    if path.name == STIMER_LOG:
        path = path.parent
    return JobDir(path).stimer_steps(owner_uid, max_bytes=STIMER_MAX_BYTES)


STEPS_SHOWN_MAX = 500
STEP_NUMBERS = ("real_s", "user_cpu_s", "sys_cpu_s", "memory_bytes", "os_memory_bytes", "read_bytes", "write_bytes",
                "rows_out")


def _step(rec: dict) -> dict | None:
    """A STIMER step record as the page shows it, or None for one that is not (the file is the
    user's: any field may be missing or of another type)."""
    out: dict[str, Any] = {"step": rec.get("step") if isinstance(rec.get("step"), int) else None,
                           "name": str(rec.get("name", "")), "status": str(rec.get("status", ""))}
    for key in STEP_NUMBERS:
        value = rec.get(key)
        out[key] = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return out


def job_view(master: "Master", who: Caller, job_id: int) -> dict[str, Any]:
    """A job as `who` may see it, from memory and the store (on the loop); `detail` False: metadata
    only (its output, STIMER records, steps and usage are the owner's). job_files_view adds the files."""
    job = master.get(job_id).to_dict()
    detail = can_act(who, job["user"])
    if not detail:
        job["stimer"] = None
    return {"job": job_row(master, job), "events": master.store.events(job_id), "detail": detail,
            "can_kill": detail and job["state"] in UNFINISHED, "steps": [], "steps_total": 0, "usage": [],
            "log": "", "log_offset": 0}


def job_files_view(master: "Master", view: dict[str, Any]) -> None:
    """The job's steps, usage and the end of its output into `view` (its owner's or an
    administrator's): the user's files, read as read_untrusted does — call off the loop."""
    from statgrid.console.live import LOG_PAGE_BYTES, output_size, read_output
    from statgrid.grid.execution import usage
    from statgrid.grid.master.core import attempts_dir

    job = view["job"]
    directory, owner = job_files(master, job)
    if owner is None:
        view["log"] = f"(job {job['id']}'s user {job['user']!r} has no account here any more: its files are not shown)"
        return
    steps = [s for s in (_step(r) for r in stimer_steps(directory, owner)) if s]
    view["steps_total"], view["steps"] = len(steps), steps[-STEPS_SHOWN_MAX:]
    if job["attempt"]:
        view["usage"] = usage.rates(usage.read_series(usage_path(attempts_dir(master.cfg), job["id"],
                                                                       job["attempt"])))
    output = JobDir(directory).output
    size = output_size(output)
    start = max(0, size - LOG_PAGE_BYTES)
    try:
        view["log"] = read_output(output, start, LOG_PAGE_BYTES, owner).decode(errors="replace")
    except (NotTrusted, OSError) as exc:
        view["log"] = f"(output not shown: {exc})"
    view["log_offset"] = start + len(view["log"].encode()) if not view["log"].startswith("(output") else size


def usage_chart(job_id: int, points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ts = [p["ts"] for p in points]

    def series(key: str, scale: float) -> list:
        return [None if p.get(key) is None else p[key] * scale for p in points]
    return [{"id": f"job{job_id}-cpu", "job": job_id, "title": "CPU cores", "unit": "cores", "stacked": False,
             "series": [{"key": "cpu_cores", "label": "cores", "scale": 1}], "data": [ts, series("cpu_cores", 1)]},
            {"id": f"job{job_id}-mem", "job": job_id, "title": "memory MiB", "unit": "MiB", "stacked": False,
             "series": [{"key": "rss_bytes", "label": "resident", "scale": 2**-20}],
             "data": [ts, series("rss_bytes", 2**-20)]},
            {"id": f"job{job_id}-io", "job": job_id, "title": "I/O MB/s", "unit": "MB/s", "stacked": False,
             "series": [{"key": "read_bytes_per_s", "label": "read", "scale": MB},
                        {"key": "write_bytes_per_s", "label": "write", "scale": MB}],
             "data": [ts, series("read_bytes_per_s", MB), series("write_bytes_per_s", MB)]}]


# -- results --------------------------------------------------------------------------------------------
def results(master: "Master") -> list[dict[str, Any]]:
    """Saved results under the grid home (bench mixed/scale bundles, demo bundles, iobench groups),
    newest first, each with its HTML report if one was built. Only the grid account's own
    directories and files are listed (a user cannot plant a page the console would serve)."""
    home = master.cfg.home
    grid_uid = os.geteuid()
    out = []
    for root in RESULT_ROOTS:
        base = home / root
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != grid_uid:
                continue
            reports = [p for p in (Path(entry.path) / "report" / "report.html",
                                   Path(entry.path) / "report.html") if _own_file(p, grid_uid)]
            out.append({"kind": root, "name": entry.name, "path": f"{root}/{entry.name}",
                        "mtime": entry.stat(follow_symlinks=False).st_mtime,
                        "report": str(reports[0].relative_to(home)) if reports else None})
    out.sort(key=lambda r: -r["mtime"])
    return out[:RESULT_MAX_ENTRIES]


def _own_file(path: Path, uid: int) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == uid


def result_file(master: "Master", relative: str) -> bytes:
    """A report file of `results` (its HTML); raises FileNotFoundError for anything else."""
    parts = Path(relative).parts
    if (len(parts) not in (3, 4) or parts[0] not in RESULT_ROOTS or parts[-1] != "report.html"
            or any(p in ("..", ".", "") for p in parts)):
        raise FileNotFoundError(relative)
    home = master.cfg.home
    for i in range(1, len(parts)):                  # the grid's own directories all the way, no link
        st = os.lstat(home.joinpath(*parts[:i]))
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            raise FileNotFoundError(relative)
    return read_untrusted(home / relative, 64 * 2**20, owner_uid=os.geteuid())


def jobs_query_state(state: str | None) -> tuple[JobState, ...] | None:
    """The jobs view's state filter: one state, "unfinished" (PEND and RUN) or "all" (None)."""
    if not state or state == "all":
        return None
    if state == "unfinished":
        return (JobState.PEND, JobState.RUN)
    try:
        return (JobState(state),)
    except ValueError:
        raise UsageError(f"state {state!r} is not one of {', '.join(s.value for s in JobState)}, unfinished, "
                         "all.") from None
