"""Accounting of finished jobs (issue 18), like LSF's `bacct` and RTM's reports: how many jobs
ended and how (DONE, EXIT, KILLED), how long they waited and ran, and the CPU they used — in
total, per user, per group of grid.toml's `[groups]` and per queue.

One pure function (`account`) over job records — dicts as the API gives them (model.Job.to_dict,
store._RECORD_SQL) or as a `bench mixed` bundle keeps them (jobs.jsonl) — feeds the API
(`GET /acct`), the CLI (`statgrid acct`, views.acct_text) and the bundle report's "Accounting"
table (report/tables.py). `finished_records` reads the records from the store in a worker thread.

Definitions (times in seconds, from the record's Unix timestamps):
    wait   start_ts − submit_ts: from submission to the start of the job's last attempt (a
           requeued job waited through its earlier attempts too, as bacct counts it)
    run    end_ts − start_ts
    cpu    rusage user_cpu_s + sys_cpu_s (wait4 of the job's process and its reaped children)
A job that never started (killed while pending, or its launch failed) counts in `jobs` and in
its state's count, not in wait or run (LSF's bacct leaves such jobs out of its turnaround too).
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any, Iterable, Mapping

from statgrid.errors import StatgridError, UsageError
from statgrid.job.accounting import JobRusage
from statgrid.job.lifecycle import FINISHED_NAMES, JobState

ACCT_VERSION = 1
NO_GROUP = "-"                    # the group row of users in no [groups] group
UNKNOWN = "-"                     # a record that names no user or queue (bundles before they kept them)
_FINISHED = FINISHED_NAMES


@dataclass(frozen=True, slots=True)
class AcctRow:
    """The figures of one user, group, queue or of all the jobs."""

    name: str                     # the user, group ("-": in no group), queue, or "total"
    jobs: int                     # finished jobs, count
    done: int                     # of them DONE (exit code 0), count
    exit: int                     # EXIT (non-zero exit, signal, launch error, host lost), count
    killed: int                   # KILLED (ended by `kill`), count
    started: int                  # of the jobs, those that started: what the wait and run figures are over
    wait_mean_s: float | None     # mean wait, seconds; None if none started
    wait_p95_s: float | None      # 95th percentile of wait, nearest rank (`p95`), seconds
    run_sum_s: float              # run times summed, seconds
    run_mean_s: float | None      # mean run time, seconds; None if none started
    cpu_sum_s: float              # user + system CPU summed, seconds


@dataclass(frozen=True, slots=True)
class AcctReport:
    """The accounting of the jobs one query selected, and the query."""

    user: str | None              # the user asked for; None: every user
    queue: str | None             # the queue asked for; None: every queue
    since_ts: float | None        # jobs that ended at or after this Unix time; None: any time
    total: AcctRow                # all the selected jobs
    by_user: tuple[AcctRow, ...]  # one row per user, by name
    by_group: tuple[AcctRow, ...]  # one per [groups] group with jobs, grid.toml's order, then "-"
    by_queue: tuple[AcctRow, ...]  # one per queue, by name
    # interactive sessions (notebook kernels) by the day they started (this machine's time zone), as seed 004
    # counts them: (YYYY-MM-DD, sessions, distinct users), oldest first
    sessions_by_day: tuple[tuple[str, int, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The API's JSON: {"version", "user", "queue", "since_ts", "total", "by_user", …}."""
        return {"version": ACCT_VERSION, "user": self.user, "queue": self.queue, "since_ts": self.since_ts,
                "total": asdict(self.total), **{k: [asdict(r) for r in getattr(self, k)]
                                                for k in ("by_user", "by_group", "by_queue")},
                "sessions_by_day": [list(d) for d in self.sessions_by_day]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AcctReport":
        if d.get("version") != ACCT_VERSION:
            raise StatgridError(f"the master sent accounting of version {d.get('version')!r}; this statgrid reads "
                                f"version {ACCT_VERSION}: use the same statgrid release on both sides.")
        names = [f.name for f in fields(AcctRow)]

        def row(r: Mapping[str, Any]) -> AcctRow:
            return AcctRow(**{k: r[k] for k in names})
        return cls(user=d["user"], queue=d["queue"], since_ts=d["since_ts"], total=row(d["total"]),
                   **{k: tuple(row(r) for r in d[k]) for k in ("by_user", "by_group", "by_queue")},
                   sessions_by_day=tuple((str(a), int(b), int(c)) for a, b, c in d.get("sessions_by_day", ())))


def p95(values: list[float]) -> float | None:
    """The 95th percentile by the nearest-rank method: the smallest value with at least 95 % of
    the values at or below it, i.e. the ⌈0.95·n⌉-th smallest (1-based). Always one of the values,
    no interpolation: of 20 waits the 19th, of 21 the 20th, of 1–19 the largest. None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    # 95 * n / 100 in integers: 0.95 * 20 is 19.000000000000004 in floats, whose ceil is 20.
    rank = -(-95 * len(ordered) // 100)
    return ordered[rank - 1]


def _row(name: str, records: list[dict]) -> AcctRow:
    waits, runs, cpu = [], [], 0.0
    counts = dict.fromkeys(_FINISHED, 0)
    for r in records:
        counts[r["state"]] += 1
        if r.get("start_ts") is not None and r.get("submit_ts") is not None:
            waits.append(r["start_ts"] - r["submit_ts"])
            if r.get("end_ts") is not None:
                runs.append(r["end_ts"] - r["start_ts"])
        ru = JobRusage.parse(r.get("rusage"))
        cpu += ru.cpu_s if ru is not None else 0.0
    return AcctRow(name=name, jobs=len(records), done=counts[JobState.DONE.value], exit=counts[JobState.EXIT.value],
                   killed=counts[JobState.KILLED.value],
                   started=len(waits), wait_mean_s=sum(waits) / len(waits) if waits else None, wait_p95_s=p95(waits),
                   run_sum_s=float(sum(runs)), run_mean_s=sum(runs) / len(runs) if runs else None, cpu_sum_s=cpu)


def account(records: Iterable[Mapping[str, Any]], groups: Mapping[str, Iterable[str]] | None = None,
            user: str | None = None, queue: str | None = None, since_ts: float | None = None) -> AcctReport:
    """The accounting of the finished records (DONE, EXIT, KILLED; others are left out).

    groups: grid.toml's [groups], group → members (Config.groups). A user in two groups counts in
    both rows (so the group rows may add up to more than the total), a user in none under "-".
    user, queue, since_ts: the query the records answer (kept in the report; not applied here).
    A record without a user or queue (a bundle saved before bench mixed kept them) counts under "-"."""
    done = [r for r in records if r.get("state") in _FINISHED]
    groups = {g: set(members) for g, members in (groups or {}).items()}
    by_user: dict[str, list[dict]] = {}
    by_queue: dict[str, list[dict]] = {}
    by_group: dict[str, list[dict]] = {g: [] for g in [*groups, NO_GROUP]}
    for r in done:
        name = r.get("user") or UNKNOWN
        by_user.setdefault(name, []).append(r)
        by_queue.setdefault(r.get("queue") or UNKNOWN, []).append(r)
        mine = [g for g, members in groups.items() if name in members]
        for g in mine or [NO_GROUP]:
            by_group[g].append(r)
    return AcctReport(user=user, queue=queue, since_ts=since_ts, total=_row("total", done),
                      by_user=tuple(_row(k, by_user[k]) for k in sorted(by_user)),
                      by_group=tuple(_row(k, v) for k, v in by_group.items() if v),
                      by_queue=tuple(_row(k, by_queue[k]) for k in sorted(by_queue)),
                      sessions_by_day=sessions_by_day(done))


def sessions_by_day(records: Iterable[Mapping[str, Any]]) -> tuple[tuple[str, int, int], ...]:
    """Interactive sessions (records of kind "kernel" that started) per day of their start, in this machine's
    time zone: (YYYY-MM-DD, sessions, distinct users), oldest first."""
    days: dict[str, list[str]] = {}
    for r in records:
        if r.get("kind") == "kernel" and r.get("start_ts") is not None:
            day = datetime.fromtimestamp(r["start_ts"]).strftime("%Y-%m-%d")
            days.setdefault(day, []).append(r.get("user") or UNKNOWN)
    return tuple((day, len(users), len(set(users))) for day, users in sorted(days.items()))


def finished_records(store, user: str | None = None, queue: str | None = None,
                     since_ts: float | None = None) -> list[dict]:
    """The records of the store's finished jobs — of `user` and `queue` (None: any) that ended at
    or after since_ts (None: ever) — as the listings build them (store._RECORD_SQL).

    Safe in any thread: the store's own read-only connection (`JobStore._reader`), never the
    master's (the loop's). `state IN (…)` lets SQLite use the (user, state), (queue, state) or
    (state) index, so pending and running jobs are never read; end_ts then filters those rows.
    The records never leave the master (only their sums do), so they are built as an
    administrator sees them (viewer NULL)."""
    import json

    sql, args = finished_sql(user, queue, since_ts)
    with store._reader() as con:
        return [json.loads(text) for (text,) in con.execute(sql, args)]


def finished_sql(user: str | None, queue: str | None, since_ts: float | None) -> tuple[str, list[Any]]:
    """The query of `finished_records` and its parameters (the first, ?1, is _RECORD_SQL's viewer:
    NULL; the plain ?s after it number on from 2, sqlite.org/lang_expr.html#varparam)."""
    from statgrid.grid.master.store import _RECORD_SQL

    where = [f"state IN ({', '.join('?' * len(_FINISHED))})"]
    args: list[Any] = [None, *_FINISHED]
    for column, value in (("user", user), ("queue", queue)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if since_ts is not None:
        where.append("end_ts >= ?")
        args.append(since_ts)
    return f"SELECT {_RECORD_SQL} FROM jobs WHERE {' AND '.join(where)} ORDER BY id", args


_RELATIVE = re.compile(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s|min|m|h|d|w)\s*")
_RELATIVE_S = {"ms": 0.001, "s": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def parse_since(text: str, now_ts: float | None = None) -> float:
    """`--since` → a Unix time: an ISO date or date and time (2026-11-01, 2026-11-01T08:00,
    "2026-11-01 08:00"; this machine's time zone unless the text gives one, e.g. +01:00 or Z), or
    how long ago (24h, 7d, 30m, 2w: that long before now_ts, default now). A bare number is
    refused: 86400 could mean seconds ago or a Unix time."""
    m = _RELATIVE.fullmatch(text)
    if m:
        return (time.time() if now_ts is None else now_ts) - float(m.group(1)) * _RELATIVE_S[m.group(2)]
    try:
        when = datetime.fromisoformat(text.strip())
        ts = when.timestamp()             # a naive datetime is local time (datetime.timestamp)
    except (ValueError, OverflowError, OSError):
        ts = None
    if ts is None or not math.isfinite(ts):
        raise UsageError(f"--since {text!r} is not a time: give a date or a date and time like 2026-11-01 or "
                         "2026-11-01T08:00 (this machine's time zone), or how long ago like 24h or 7d.")
    return ts
