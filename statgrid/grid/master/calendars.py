"""Calendars (Platform Process Manager's), a part of the master (parts.py): kept in the store, each
submits a job or a flow as its user at cron-like times (cron.py) and survives restarts (a time
missed while the master was down fires once when it is back).

Its own state is the task that fires calendars and the event that wakes it when one is added or
removed; it submits through the master's public `submit` and `submit_flow`, as a user would.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import time

from statgrid.errors import NotFound, StatgridError, UsageError
from statgrid.grid.security import auth
from statgrid.grid.security.auth import Caller
from statgrid.grid.master.jobspec import JobRequest, check_bounds, validate
from statgrid.grid.master.parts import Part
from statgrid.job.record import JOB_ID_MAX

log = logging.getLogger("statgrid.master")

CALENDARS_MAX_PER_USER = 100
FIRINGS_KEEP_S = 30 * 86400.0              # a calendar's firings are kept this long (schedule_firings)


class Calendars(Part):
    name = "calendars"

    def __init__(self, master):
        # the Master (core.py) holding this part; not imported here: core.py imports this module
        self.master = master
        self._task: asyncio.Task | None = None
        self._changed = asyncio.Event()    # a calendar was added or removed: the next time may be sooner

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def add(self, caller: Caller, cron_text: str, tz_name: str, request: JobRequest | None = None,
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
        mine = self.master.store.con.execute("SELECT count(*) FROM schedules WHERE user = ?", (caller.user,)).fetchone()[0]
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
            validate(req, self.master.cfg, now, check_files=caller.uid == os.geteuid())
            self.master.dependencies.check(req.depend, caller.user)
            payload = {"kind": "job", "request": dataclasses.asdict(req)}
        else:
            payload = {"kind": "flow", "flow": {"name": flow["name"], "jobs": [
                [n, dataclasses.asdict(dataclasses.replace(r, user=caller.user)), a] for n, r, a in flow["jobs"]]}}
            self.master.flows_part.check(flow["name"], flow["jobs"], caller)
        next_ts = cron.next_after(spec, now, zone)
        what = (f"flow {flow['name']} ({len(flow['jobs'])} jobs)" if flow is not None else " ".join(request.argv))
        queue = None if flow is not None else request.queue or None
        with self.master.store.transaction():
            sched_id = self.master.store.con.execute(
                "INSERT INTO schedules (user, cron, tz, kind, what, queue, token_id, spec, created_ts, next_ts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (caller.user, spec.text, tz_name, payload["kind"], what[:500], queue, caller.token_id,
                 json.dumps(payload), now, next_ts)).lastrowid
        self._changed.set()
        return self.get(sched_id)

    COLUMNS = "id, user, cron, tz, kind, what, queue, token_id, created_ts, next_ts, last_ts, last_result"

    def get(self, sched_id: int) -> dict:
        row = self.master.store.con.execute(f"SELECT {self.COLUMNS} FROM schedules WHERE id = ?",
                                     (sched_id,)).fetchone() if 0 < sched_id <= JOB_ID_MAX else None
        if row is None:
            raise NotFound(f"calendar {sched_id} does not exist; see `statgrid schedule list`.")
        return dict(row)

    def list(self, user: str | None) -> list[dict]:
        sql = f"SELECT {self.COLUMNS} FROM schedules" + (" WHERE user = ?" if user else "") + " ORDER BY id"
        return [dict(r) for r in self.master.store.con.execute(sql, (user,) if user else ())]

    def remove(self, sched_id: int, caller: Caller) -> dict:
        rec = self.get(sched_id)
        self.master.rights.require_owner(caller, rec["user"], "remove", f"calendar {sched_id}")
        with self.master.store.transaction():
            self.master.store.con.execute("DELETE FROM schedules WHERE id = ?", (sched_id,))
            self.master.store.con.execute("DELETE FROM schedule_firings WHERE schedule_id = ?", (sched_id,))
        self._changed.set()
        return rec

    async def _run(self) -> None:
        """Fire every calendar whose time has come, then sleep until the next one (at most a minute,
        or until a calendar is added or removed)."""
        while True:
            now = time.time()
            due = [r[0] for r in self.master.store.con.execute("SELECT id FROM schedules WHERE next_ts <= ? ORDER BY next_ts",
                                                        (now,))]
            for sched_id in due:
                try:
                    self._fire(sched_id, now)
                except Exception:                          # one calendar's fault must not stop the others
                    log.exception("calendar %s", sched_id)
                await asyncio.sleep(0)                     # requests are served between calendars
            row = self.master.store.con.execute("SELECT min(next_ts) FROM schedules").fetchone()
            wait_s = 60.0 if row[0] is None else min(60.0, max(0.0, row[0] - time.time()))
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), wait_s)
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

        row = self.master.store.con.execute("SELECT user, cron, tz, spec, token_id, next_ts FROM schedules WHERE id = ?",
                                     (sched_id,)).fetchone()
        if row is None or row[5] is None or not self.master.accepting:
            return
        user, cron_text, tz_name, spec, token_id, due_ts = row
        try:
            next_ts = cron.next_after(cron.parse(cron_text), max(now, time.time()), ZoneInfo(tz_name))
        except Exception as exc:
            next_ts = None
            log.error("calendar %s: %r: disabled", sched_id, exc)
        payload = json.loads(spec)
        job_ids: list[int] = []
        with self.master.store.transaction():
            if self.master.store.con.execute("SELECT 1 FROM schedule_firings WHERE schedule_id = ? AND due_ts = ?",
                                      (sched_id, due_ts)).fetchone() is not None:
                # fired already (its next time was set back by hand): not again, and not due at once
                self.master.store.con.execute("UPDATE schedules SET next_ts = ? WHERE id = ?", (next_ts, sched_id))
                return
            try:
                with self.master.store.transaction():             # a failed submit leaves none of its rows
                    if token_id is not None:
                        token = self.master.tokens.get(token_id)
                        if token is None or token["revoked_ts"] is not None:
                            raise StatgridError(f"token {token_id}, with which the calendar was made, was revoked: "
                                                "nothing submitted; make the calendar again")
                    uid = auth.uid_of(user)
                    if uid is None:
                        raise StatgridError(f"user {user!r} no longer has an account here")
                    caller = self.master.rights.caller(uid, "calendar", user=user)
                    if payload["kind"] == "job":
                        job = self.master.submit(JobRequest(**payload["request"]), caller)
                        job_ids = [r[0] for r in self.master.store.con.execute(
                            "SELECT id FROM jobs WHERE flow_id = ? ORDER BY id", (job.flow_id,))] \
                            if job.flow_id is not None else [job.id]
                        result = f"job {job.id}"
                    else:
                        flow = payload["flow"]
                        rec = self.master.submit_flow(flow["name"], [(n, JobRequest(**r), a) for n, r, a in flow["jobs"]],
                                               caller)
                        job_ids = [j["id"] for j in rec["jobs"]]
                        result = f"flow {rec['id']}"
            except Exception as exc:                       # said in the calendar; the master goes on
                if not self.master.store.con.in_transaction:      # SQLite rolled all back (a full disk): not fired,
                    raise                                  # still due; nothing written in autocommit
                result, job_ids = f"failed: {exc}", []
            self.master.store.con.execute("UPDATE schedules SET next_ts = ?, last_ts = ?, last_result = ? WHERE id = ?",
                                   (next_ts, now, result[:1000], sched_id))
            # (schedule_id, due_ts) is the key: the same time can never be recorded as fired twice
            self.master.store.con.execute("INSERT INTO schedule_firings VALUES (?, ?, ?, ?, ?)",
                                   (sched_id, due_ts, now, result[:1000], json.dumps(job_ids)))
            self.master.store.con.execute("DELETE FROM schedule_firings WHERE schedule_id = ? AND due_ts < ?",
                                   (sched_id, now - FIRINGS_KEEP_S))
        self.master.audit.record(None, "calendar", f"calendar {sched_id}", detail=f"of {user}: {result}")
