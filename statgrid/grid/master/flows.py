"""Flows, arrays and calendars (Platform Process Manager's), as a part of `Master`: a flow file's
jobs submitted as one with their dependencies resolved to ids, shown and killed as one (an array
from `-J "name[1-100]%10"` is shown the same way); calendars in the store that submit a job or a
flow at cron-like times (cron.py) and survive restarts.

A mixin: the methods use the Master's state and run on its loop (see queuectl.py).
"""
from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
import time

from statgrid.errors import NotFound, StatgridError, UsageError
from statgrid.grid.security import auth
from statgrid.grid.scheduling import depend
from statgrid.grid.security.auth import Caller
from statgrid.grid.master.jobspec import JobRequest, check_bounds, validate
from statgrid.job.lifecycle import JobState, shown_state
from statgrid.job.record import JOB_ID_MAX, Job

log = logging.getLogger("statgrid.master")

FLOW_MAX_JOBS = 1000
CALENDARS_MAX_PER_USER = 100
KILL_YIELD_EVERY = 100                     # a flow's kill lets the loop serve others this often
SUBMIT_KEY_MAX_CHARS = 128
FIRINGS_KEEP_S = 30 * 86400.0              # a calendar's firings are kept this long (schedule_firings)


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


class Flows:
    def _replayed(self, caller: Caller, key: str | None, kind: str, digest: str) -> dict | None:
        """What the caller's earlier submit with `key` made ({"job_ids": [...], "flow_id": …}), or
        None if there is none. The same key with another request is refused (KeyConflict): a
        client reusing a key by mistake must not get the jobs of another submit back. Keys are
        the caller's own: another user's same key is another key."""
        if key is None:
            return None
        known = self.store.submit_key(caller.user, key)
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
        if not self.accepting:
            raise StatgridError("the master is shutting down; submit again after `statgrid grid up`.")
        from statgrid.grid.master.jobspec import check_name

        check_name("flow name", name, "give a shorter name with printable characters", allow_empty=False)
        key = check_submit_key(key)
        digest = request_digest("flow", [name, [[n, dataclasses.asdict(r), a] for n, r, a in jobs]]) if key else ""
        replay = self._replayed(caller, key, "flow", digest)
        if replay is not None:
            return self.flow(replay["flow_id"])
        prepared = self._check_flow(name, jobs, caller)
        now = time.time()
        ids: dict[str, int] = {}
        with self.store.transaction():                 # the flow and all its jobs, or nothing
            flow_id = self.store.add_flow("flow", caller.user, name, 0, now, {"jobs": [n for n, _, _ in prepared]})

            def resolve(i: int, job: Job, inserted: list[Job]) -> Job:
                if i:
                    ids[prepared[i - 1][0]] = inserted[-1].id
                expr = prepared[i][2]
                return dataclasses.replace(job, flow_id=flow_id, submit_ts=now, position=now,
                                           depend=None if expr is None else depend.format_expr(depend.resolve(expr, ids)))

            added = self.store.add_many([j for _, j, _ in prepared], prepare=resolve)
            if key is not None:
                self.store.record_submit_key(caller.user, key, digest, "flow",
                                             {"flow_id": flow_id, "job_ids": [j.id for j in added]})

            def admit() -> None:
                for j in added:
                    self.metrics.on_submit(j)
                    self._enqueue(j)
                self.dispatch()
            self.store.after_commit(admit)
        return self.flow(flow_id)

    def _check_flow(self, name: str, jobs: list[tuple[str, JobRequest, str]], caller: Caller) -> list:
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
            job = validate(req, self.cfg, now, check_files=caller.uid == os.geteuid())
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
        flow = self.store.flow(flow_id)
        if flow is None:
            raise NotFound(f"flow {flow_id} does not exist; see `statgrid flow list`.")
        rows = self.store.con.execute("SELECT id, name, state, suspend_ts, depend, exit_reason, host FROM jobs "
                                      "WHERE flow_id = ? ORDER BY id LIMIT ?", (flow_id, FLOW_MAX_JOBS)).fetchall()
        counts = dict(self.store.con.execute("SELECT state, count(*) FROM jobs WHERE flow_id = ? GROUP BY state",
                                             (flow_id,)).fetchall())
        jobs = [{"id": r[0], "name": r[1], "state": shown_state(r[2], r[3]),
                 "depend": r[4], "exit_reason": r[5], "host": r[6]} for r in rows]
        for rec in jobs:
            if rec["state"] == "PEND":
                p = self.pending.get(rec["id"])
                rec["pend_reason"] = self.pend_reason(p) if p is not None else None
        spec_jobs = flow["spec"].get("jobs")
        expected = len(spec_jobs) if isinstance(spec_jobs, list) else spec_jobs
        return {**{k: flow[k] for k in ("id", "kind", "user", "name", "throttle", "submit_ts")},
                "state": _flow_state(counts, expected), "counts": counts, "jobs": jobs}

    def flows(self, user: str | None, limit: int = 100) -> list[dict]:
        """The newest flows and arrays (of `user`; None: everyone's), each with its state and counts."""
        # expected: how many jobs the flow was made with (SQLite reads it out of the spec)
        sql = ("SELECT id, kind, user, name, throttle, submit_ts, CASE kind WHEN 'flow' THEN "
               "json_array_length(spec, '$.jobs') ELSE json_extract(spec, '$.jobs') END AS expected FROM flows"
               + (" WHERE user = ?" if user else "") + " ORDER BY id DESC LIMIT ?")
        rows = [dict(r) for r in self.store.con.execute(sql, ((user,) if user else ()) + (limit,))]
        counts: dict[int, dict[str, int]] = {r["id"]: {} for r in rows}
        if rows:                                   # one grouped count for the page (jobs_flow index)
            marks = ", ".join("?" * len(rows))
            for flow_id, state, n in self.store.con.execute(
                    f"SELECT flow_id, state, count(*) FROM jobs WHERE flow_id IN ({marks}) GROUP BY flow_id, state",
                    [r["id"] for r in rows]):
                counts[flow_id][state] = n
        return [{**{k: v for k, v in r.items() if k != "expected"},
                 "state": _flow_state(counts[r["id"]], r["expected"]), "counts": counts[r["id"]]} for r in rows]

    async def kill_flow(self, flow_id: int, caller: Caller) -> dict:
        """Kill every unfinished job of a flow or array: pending ones first (none of them starts in the
        gaps a running one leaves), then running ones. Owner or admin."""
        flow = self.store.flow(flow_id)
        if flow is None:
            raise NotFound(f"flow {flow_id} does not exist; see `statgrid flow list`.")
        self.rights.require_owner(caller, flow["user"], "kill", f"flow {flow_id}")
        ids = [r[0] for r in self.store.con.execute("SELECT id FROM jobs WHERE flow_id = ? AND state IN ('PEND', 'RUN') "
                                                    "ORDER BY state = 'RUN', id", (flow_id,))]
        for i, job_id in enumerate(ids):
            await self.kill(job_id, caller, reason=f"flow {flow_id} killed by {caller.user}")
            if i % KILL_YIELD_EVERY == KILL_YIELD_EVERY - 1:
                await asyncio.sleep(0)
        return self.flow(flow_id)

    def schedule_add(self, caller: Caller, cron_text: str, tz_name: str, request: JobRequest | None = None,
                     flow: dict | None = None) -> dict:
        """A calendar: submit `request` (a job) or `flow` ({"name", "jobs": [(name, request, after)]})
        as `caller` at every time of the cron-like `cron_text`, in time zone `tz_name`. Kept in the
        store: it survives master restarts (a time missed while the master was down fires once when
        it is back). Checked now as a submit would be."""
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        from statgrid.grid.scheduling import cron

        spec = cron.parse(cron_text)
        try:
            zone = ZoneInfo(tz_name)
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"time zone {tz_name!r} is not known here; give an IANA name such as UTC or "
                             "Europe/Berlin (--tz).") from None
        if (request is None) == (flow is None):
            raise UsageError("a calendar submits one job or one flow.")
        mine = self.store.con.execute("SELECT count(*) FROM schedules WHERE user = ?", (caller.user,)).fetchone()[0]
        if mine >= CALENDARS_MAX_PER_USER:
            raise UsageError(f"you have {mine} calendars, the most one user may have; remove some "
                             "(`statgrid schedule list`, `statgrid schedule remove ID`).")
        now = time.time()
        if request is not None:
            check_bounds(request)
            if request.user and request.user != caller.user:      # as POST /jobs answers: 403, not a calendar
                raise auth.Forbidden(f"you are {caller.user!r} and asked for a calendar that submits as "
                                     f"{request.user!r}: a job runs as the person who submits it, so nobody (root "
                                     "included) submits for another user; leave the user out, or log in as them.")
            req = dataclasses.replace(request, user=caller.user)
            validate(req, self.cfg, now, check_files=caller.uid == os.geteuid())
            self._check_dependency(req.depend, caller.user)
            payload = {"kind": "job", "request": dataclasses.asdict(req)}
        else:
            payload = {"kind": "flow", "flow": {"name": flow["name"], "jobs": [
                [n, dataclasses.asdict(dataclasses.replace(r, user=caller.user)), a] for n, r, a in flow["jobs"]]}}
            self._check_flow(flow["name"], flow["jobs"], caller)
        next_ts = cron.next_after(spec, now, zone)
        what = (f"flow {flow['name']} ({len(flow['jobs'])} jobs)" if flow is not None else " ".join(request.argv))
        queue = None if flow is not None else request.queue or None
        with self.store.transaction():
            sched_id = self.store.con.execute(
                "INSERT INTO schedules (user, cron, tz, kind, what, queue, token_id, spec, created_ts, next_ts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (caller.user, spec.text, tz_name, payload["kind"], what[:500], queue, caller.token_id,
                 json.dumps(payload), now, next_ts)).lastrowid
        self._calendar_changed.set()
        return self.schedule(sched_id)

    _SCHEDULE_COLUMNS = "id, user, cron, tz, kind, what, queue, token_id, created_ts, next_ts, last_ts, last_result"

    def schedule(self, sched_id: int) -> dict:
        row = self.store.con.execute(f"SELECT {self._SCHEDULE_COLUMNS} FROM schedules WHERE id = ?",
                                     (sched_id,)).fetchone() if 0 < sched_id <= JOB_ID_MAX else None
        if row is None:
            raise NotFound(f"calendar {sched_id} does not exist; see `statgrid schedule list`.")
        return dict(row)

    def schedules(self, user: str | None) -> list[dict]:
        sql = f"SELECT {self._SCHEDULE_COLUMNS} FROM schedules" + (" WHERE user = ?" if user else "") + " ORDER BY id"
        return [dict(r) for r in self.store.con.execute(sql, (user,) if user else ())]

    def schedule_remove(self, sched_id: int, caller: Caller) -> dict:
        rec = self.schedule(sched_id)
        self.rights.require_owner(caller, rec["user"], "remove", f"calendar {sched_id}")
        with self.store.transaction():
            self.store.con.execute("DELETE FROM schedules WHERE id = ?", (sched_id,))
            self.store.con.execute("DELETE FROM schedule_firings WHERE schedule_id = ?", (sched_id,))
        self._calendar_changed.set()
        return rec

    async def _run_calendars(self) -> None:
        """Fire every calendar whose time has come, then sleep until the next one (at most a minute,
        or until a calendar is added or removed)."""
        while True:
            now = time.time()
            due = [r[0] for r in self.store.con.execute("SELECT id FROM schedules WHERE next_ts <= ? ORDER BY next_ts",
                                                        (now,))]
            for sched_id in due:
                try:
                    self._fire(sched_id, now)
                except Exception:                          # one calendar's fault must not stop the others
                    log.exception("calendar %s", sched_id)
                await asyncio.sleep(0)                     # requests are served between calendars
            row = self.store.con.execute("SELECT min(next_ts) FROM schedules").fetchone()
            wait_s = 60.0 if row[0] is None else min(60.0, max(0.0, row[0] - time.time()))
            self._calendar_changed.clear()
            try:
                await asyncio.wait_for(self._calendar_changed.wait(), wait_s)
            except asyncio.TimeoutError:
                pass

    def _fire(self, sched_id: int, now: float) -> None:
        """One firing of a calendar, exactly once: what it submits, its record in schedule_firings
        (with the job ids), the calendar's last result and its next time are one transaction. A
        master killed before the commit left nothing of it, so the calendar is still due and fires
        at the next start (caught up); killed after, it finds the firing done and its jobs pending.
        A submit that fails (a revoked token, a job file gone) is recorded as the firing's result
        and submits nothing; the next time is set either way, so a failing calendar is not due
        again at once."""
        from zoneinfo import ZoneInfo

        from statgrid.grid.scheduling import cron

        row = self.store.con.execute("SELECT user, cron, tz, spec, token_id, next_ts FROM schedules WHERE id = ?",
                                     (sched_id,)).fetchone()
        if row is None or row[5] is None or not self.accepting:
            return
        user, cron_text, tz_name, spec, token_id, due_ts = row
        try:
            next_ts = cron.next_after(cron.parse(cron_text), max(now, time.time()), ZoneInfo(tz_name))
        except Exception as exc:
            next_ts = None
            log.error("calendar %s: %r: disabled", sched_id, exc)
        payload = json.loads(spec)
        job_ids: list[int] = []
        with self.store.transaction():
            if self.store.con.execute("SELECT 1 FROM schedule_firings WHERE schedule_id = ? AND due_ts = ?",
                                      (sched_id, due_ts)).fetchone() is not None:
                # fired already (its next time was set back by hand): not again, and not due at once
                self.store.con.execute("UPDATE schedules SET next_ts = ? WHERE id = ?", (next_ts, sched_id))
                return
            try:
                with self.store.transaction():             # a failed submit leaves none of its rows
                    if token_id is not None:
                        token = self.tokens.get(token_id)
                        if token is None or token["revoked_ts"] is not None:
                            raise StatgridError(f"token {token_id}, with which the calendar was made, was revoked: "
                                                "nothing submitted; make the calendar again")
                    uid = auth.uid_of(user)
                    if uid is None:
                        raise StatgridError(f"user {user!r} no longer has an account here")
                    caller = self.rights.caller(uid, "calendar", user=user)
                    if payload["kind"] == "job":
                        job = self.submit(JobRequest(**payload["request"]), caller)
                        job_ids = [r[0] for r in self.store.con.execute(
                            "SELECT id FROM jobs WHERE flow_id = ? ORDER BY id", (job.flow_id,))] \
                            if job.flow_id is not None else [job.id]
                        result = f"job {job.id}"
                    else:
                        flow = payload["flow"]
                        rec = self.submit_flow(flow["name"], [(n, JobRequest(**r), a) for n, r, a in flow["jobs"]],
                                               caller)
                        job_ids = [j["id"] for j in rec["jobs"]]
                        result = f"flow {rec['id']}"
            except Exception as exc:                       # said in the calendar; the master goes on
                if not self.store.con.in_transaction:      # SQLite rolled all back (a full disk): not fired,
                    raise                                  # still due; nothing written in autocommit
                result, job_ids = f"failed: {exc}", []
            self.store.con.execute("UPDATE schedules SET next_ts = ?, last_ts = ?, last_result = ? WHERE id = ?",
                                   (next_ts, now, result[:1000], sched_id))
            # (schedule_id, due_ts) is the key: the same time can never be recorded as fired twice
            self.store.con.execute("INSERT INTO schedule_firings VALUES (?, ?, ?, ?, ?)",
                                   (sched_id, due_ts, now, result[:1000], json.dumps(job_ids)))
            self.store.con.execute("DELETE FROM schedule_firings WHERE schedule_id = ? AND due_ts < ?",
                                   (sched_id, now - FIRINGS_KEEP_S))
        self.audit.record(None, "calendar", f"calendar {sched_id}", detail=f"of {user}: {result}")


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
