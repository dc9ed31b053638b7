"""Flows and arrays (Platform Process Manager's), a part of the master (parts.py): a flow file's
jobs submitted as one (all or none) with their dependencies resolved to ids, shown and killed as
one; an array from `-J "name[1-100]%10"` is shown and killed the same way, and its throttle (at
most 10 of its jobs run at once) is kept here for the policy. Calendars are a part of their own
(calendars.py). Also the submits' idempotency keys (a retried submit answers what the first made).

Its own state: the arrays' throttles (array id → how many of its jobs may run at once). It adds
jobs to the store in one transaction and hands them to the master's backlog (`_enqueue`) and
dispatch once committed, as the core's submit does; it kills through the master's public `kill`.
"""
from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import time

from statgrid.errors import NotFound, StatgridError, UsageError
from statgrid.grid.security import auth
from statgrid.grid.scheduling import depend
from statgrid.grid.security.auth import Caller
from statgrid.grid.master.jobspec import JobRequest, check_bounds, validate
from statgrid.grid.master.parts import Part
from statgrid.job.lifecycle import JobState, shown_state
from statgrid.job.record import Job

FLOW_MAX_JOBS = 1000
KILL_YIELD_EVERY = 100                     # a flow's kill lets the loop serve others this often
SUBMIT_KEY_MAX_CHARS = 128


class KeyConflict(StatgridError):
    """An idempotency key sent again with another request (the API answers 409)."""


def check_submit_key(key: str | None) -> str | None:
    """A submit's idempotency key (the Idempotency-Key header): 1 to SUBMIT_KEY_MAX_CHARS printable
    ASCII characters, no spaces (a UUID fits). None: the submit has none."""
    if key is None:
        return None
    if not 0 < len(key) <= SUBMIT_KEY_MAX_CHARS or not all(33 <= ord(c) < 127 for c in key):
        from statgrid.grid.master.jobspec import shown

        raise UsageError(f"Idempotency-Key {shown(key, 60)} is not valid: give 1 to {SUBMIT_KEY_MAX_CHARS} printable "
                         "ASCII characters without spaces, e.g. a UUID (uuidgen), one per submit.")
    return key


def request_digest(kind: str, body) -> str:
    """What a retried submit must repeat to be the same submit: sha256 of its kind and request."""
    text = json.dumps([kind, body], sort_keys=True, default=str, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class Flows(Part):
    name = "flows"

    def __init__(self, master):
        # the Master (core.py) holding this part; not imported here: core.py imports this module
        self.master = master
        self.throttles: dict[int, int] = master.store.throttles()   # array id → its throttle (-J "a[1-100]%10")

    def add_array(self, job: Job, array, spec_name: str) -> list[Job]:
        """An array's jobs (jobspec.parse_array of -J `spec_name`), each a copy of `job`, added in the
        caller's transaction; its throttle is kept once that has committed."""
        store = self.master.store
        flow_id = store.add_flow("array", job.user, array.name, array.throttle, job.submit_ts,
                                 {"name": spec_name, "jobs": len(array.indices)})
        jobs = store.add_many([dataclasses.replace(job, name=f"{array.name}[{i}]", flow_id=flow_id, array_index=i)
                               for i in array.indices])
        if array.throttle:
            store.after_commit(lambda: self.throttles.__setitem__(flow_id, array.throttle))
        return jobs

    def replayed(self, caller: Caller, key: str | None, kind: str, digest: str) -> dict | None:
        """What the caller's earlier submit with `key` made ({"job_ids": [...], "flow_id": …}), or
        None if there is none. The same key with another request is refused (KeyConflict): a
        client reusing a key by mistake must not get the jobs of another submit back. Keys are
        the caller's own: another user's same key is another key."""
        if key is None:
            return None
        known = self.master.store.submit_key(caller.user, key)
        if known is None:
            return None
        if known["kind"] != kind or known["digest"] != digest:
            made = (f"flow {known['result']['flow_id']}" if known["kind"] == "flow"
                    else f"job {known['result']['job_ids'][0]}")
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(known["created_ts"]))
            raise KeyConflict(f"Idempotency-Key {key!r} was used at {when} for another submit ({made}); a retry must "
                              "send the same request (command, options, directory and environment). Give a new key "
                              "for a new submit (the CLI makes one per command).")
        return known["result"]

    def submit_flow(self, name: str, jobs: list[tuple[str, JobRequest, str]], caller: Caller,
                    key: str | None = None) -> dict:
        """A flow: jobs with dependencies over each other's names, submitted as one (all or none),
        shown as one (`flow`), killed as one (`kill_flow`). `jobs`: (name in the flow, request,
        dependency over names or ""), dependencies first (flowfile.py orders them so). `key`: the
        submit's idempotency key: sent again with the same flow, it answers the flow it made."""
        m = self.master
        if not m.accepting:
            raise StatgridError("the master is shutting down; submit again after `statgrid grid up`.")
        from statgrid.grid.master.jobspec import check_name

        check_name("flow name", name, "give a shorter name with printable characters", allow_empty=False)
        key = check_submit_key(key)
        digest = request_digest("flow", [name, [[n, dataclasses.asdict(r), a] for n, r, a in jobs]]) if key else ""
        replay = self.replayed(caller, key, "flow", digest)
        if replay is not None:
            return self.flow(replay["flow_id"])
        prepared = self.check(name, jobs, caller)
        now = time.time()
        ids: dict[str, int] = {}
        with m.store.transaction():                    # the flow and all its jobs, or nothing
            flow_id = m.store.add_flow("flow", caller.user, name, 0, now, {"jobs": [n for n, _, _ in prepared]})

            def resolve(i: int, job: Job, inserted: list[Job]) -> Job:
                if i:
                    ids[prepared[i - 1][0]] = inserted[-1].id
                expr = prepared[i][2]
                return dataclasses.replace(job, flow_id=flow_id, submit_ts=now, position=now,
                                           depend=None if expr is None else depend.format_expr(depend.resolve(expr, ids)))

            added = m.store.add_many([j for _, j, _ in prepared], prepare=resolve)
            if key is not None:
                m.store.record_submit_key(caller.user, key, digest, "flow",
                                          {"flow_id": flow_id, "job_ids": [j.id for j in added]})

            def admit() -> None:
                for j in added:
                    m.metrics.on_submit(j)
                    m._enqueue(j)
                    m.parts.call("submitted", j)
                m.dispatch()
            m.store.after_commit(admit)
        return self.flow(flow_id)

    def check(self, name: str, jobs: list[tuple[str, JobRequest, str]], caller: Caller) -> list:
        """Every job of a flow checked as a submit: [(name, Job to store, its dependency Expr or None)]."""
        from statgrid.grid.master.jobspec import check_name

        check_name("flow name", name, "give a shorter name with printable characters", allow_empty=False)
        if not jobs or len(jobs) > FLOW_MAX_JOBS:
            raise UsageError(f"a flow has 1 to {FLOW_MAX_JOBS} jobs, not {len(jobs)}.")
        now = time.time()
        seen: set[str] = set()
        prepared = []
        for job_name, req, after in jobs:
            check_name("flow job name", job_name, "name it with letters, digits, '_', '-' or '.'", allow_empty=False)
            if req.parent_id is not None:
                raise UsageError(f"flow {name!r}: job {job_name!r} names a parent job: a flow's jobs are not sub-tasks "
                                 "(Session.parallel makes those).")
            if job_name in seen:
                raise UsageError(f"flow {name!r} names the job {job_name!r} twice.")
            check_bounds(req)
            if req.user and req.user != caller.user:
                raise auth.Forbidden(f"you are {caller.user!r} and asked to submit as {req.user!r}: nobody submits for "
                                     "another user.")
            req = dataclasses.replace(req, user=caller.user, name=job_name, depend="")
            job = validate(req, self.master.cfg, now, check_files=caller.uid == os.geteuid())
            expr = depend.parse(after) if after.strip() else None
            for ref in depend.refs(expr) if expr is not None else ():
                if ref not in seen:
                    raise UsageError(f"flow {name!r}: job {job_name!r} waits for {ref!r}, which is not a job of the flow "
                                     "listed before it (jobs come dependencies first; names: "
                                     f"{', '.join(sorted(seen)) or 'none yet'}).")
            seen.add(job_name)
            prepared.append((job_name, job, expr))
        return prepared

    def flow(self, flow_id: int) -> dict:
        """A flow or an array as one: its record, its state (RUN while any job runs, PEND while any
        waits, DONE when all are DONE, else EXIT, or KILLED if any was killed), jobs per state, and
        its jobs' ids, names, states and dependencies (at most FLOW_MAX_JOBS shown)."""
        m = self.master
        flow = m.store.flow(flow_id)
        if flow is None:
            raise NotFound(f"flow {flow_id} does not exist; see `statgrid flow list`.")
        rows = m.store.con.execute("SELECT id, name, state, suspend_ts, depend, exit_reason, host FROM jobs "
                                   "WHERE flow_id = ? ORDER BY id LIMIT ?", (flow_id, FLOW_MAX_JOBS)).fetchall()
        counts = dict(m.store.con.execute("SELECT state, count(*) FROM jobs WHERE flow_id = ? GROUP BY state",
                                          (flow_id,)).fetchall())
        jobs = [{"id": r[0], "name": r[1], "state": shown_state(r[2], r[3]),
                 "depend": r[4], "exit_reason": r[5], "host": r[6]} for r in rows]
        for rec in jobs:
            if rec["state"] == "PEND":
                p = m.pending.get(rec["id"])
                rec["pend_reason"] = m.pend_reason(p) if p is not None else None
        spec_jobs = flow["spec"].get("jobs")
        expected = len(spec_jobs) if isinstance(spec_jobs, list) else spec_jobs
        return {**{k: flow[k] for k in ("id", "kind", "user", "name", "throttle", "submit_ts")},
                "state": _flow_state(counts, expected), "counts": counts, "jobs": jobs}

    def flows(self, user: str | None, limit: int = 100) -> list[dict]:
        """The newest flows and arrays (of `user`; None: everyone's), each with its state and counts."""
        m = self.master
        # expected: how many jobs the flow was made with (SQLite reads it out of the spec)
        sql = ("SELECT id, kind, user, name, throttle, submit_ts, CASE kind WHEN 'flow' THEN "
               "json_array_length(spec, '$.jobs') ELSE json_extract(spec, '$.jobs') END AS expected FROM flows"
               + (" WHERE user = ?" if user else "") + " ORDER BY id DESC LIMIT ?")
        rows = [dict(r) for r in m.store.con.execute(sql, ((user,) if user else ()) + (limit,))]
        counts: dict[int, dict[str, int]] = {r["id"]: {} for r in rows}
        if rows:                                   # one grouped count for the page (jobs_flow index)
            marks = ", ".join("?" * len(rows))
            for flow_id, state, n in m.store.con.execute(
                    f"SELECT flow_id, state, count(*) FROM jobs WHERE flow_id IN ({marks}) GROUP BY flow_id, state",
                    [r["id"] for r in rows]):
                counts[flow_id][state] = n
        return [{**{k: v for k, v in r.items() if k != "expected"},
                 "state": _flow_state(counts[r["id"]], r["expected"]), "counts": counts[r["id"]]} for r in rows]

    async def kill_flow(self, flow_id: int, caller: Caller) -> dict:
        """Kill every unfinished job of a flow or array: pending ones first (none of them starts in the
        gaps a running one leaves), then running ones. Owner or admin."""
        m = self.master
        flow = m.store.flow(flow_id)
        if flow is None:
            raise NotFound(f"flow {flow_id} does not exist; see `statgrid flow list`.")
        m.rights.require_owner(caller, flow["user"], "kill", f"flow {flow_id}")
        ids = [r[0] for r in m.store.con.execute("SELECT id FROM jobs WHERE flow_id = ? AND state IN ('PEND', 'RUN') "
                                                 "ORDER BY state = 'RUN', id", (flow_id,))]
        for i, job_id in enumerate(ids):
            await m.kill(job_id, caller, reason=f"flow {flow_id} killed by {caller.user}")
            if i % KILL_YIELD_EVERY == KILL_YIELD_EVERY - 1:
                await asyncio.sleep(0)
        return self.flow(flow_id)


def _flow_state(counts: dict[str, int], expected: int | None = None) -> str:
    """RUN while any job runs, PEND while any waits, KILLED if any was killed, EXIT if any failed,
    DONE when all are DONE. INCOMPLETE: fewer jobs than the flow was made with — never DONE. (Only
    a store written before flows were one transaction holds such a flow: a master killed during
    its submit kept part of it.)"""
    if expected is not None and sum(counts.values()) < expected:
        return "INCOMPLETE"
    for state in (JobState.RUN, JobState.PEND, JobState.KILLED, JobState.EXIT):     # the first one present wins
        if counts.get(state.value):
            return state.value
    return JobState.DONE.value
