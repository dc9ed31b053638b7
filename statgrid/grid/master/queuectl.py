"""The master's scheduling verbs and rules beyond dispatch (issue 18), as a part of `Master`:
the backlog's holds (dependencies, run limits and suspend/resume are parts: dependencies.py,
runlimits.py, suspend.py), sub-tasks of a session (MP CONNECT), fairshare usage charged at each
attempt's end and `statgrid shares`, load thresholds from the hosts' monitors (closed_Busy), and
LSF's verbs on one job: modify (bmod), top/bottom (btop/bbot).

A mixin: the methods use the Master's state (store, pending backlog, running jobs, engine,
rights) and run on its loop, as the rest of the master does; core.py keeps the life cycle,
submit, dispatch and the engine's events.
"""
from __future__ import annotations

import asyncio
import logging
import math
import time
from pathlib import Path

from statgrid.errors import NotFound, UsageError
from statgrid.grid.security import auth
from statgrid.grid.scheduling import depend, fairshare
from statgrid.grid.security.auth import Caller
from statgrid.grid.master.jobspec import JobRequest, check_bounds, parse_array, validate
from statgrid.job.record import JOB_ID_MAX, Job

log = logging.getLogger("statgrid.master")


class QueueControl:
    def _enqueue(self, job: Job, verdict: depend.Verdict | None = None) -> None:
        """A PEND job joins the backlog — held out of dispatch while its dependency is not met (ended
        EXIT when it can never be met), or while its parent job has ended (it is being killed).
        `verdict`: its dependency's, when the caller evaluated it already (the elements of an array)."""
        if job.parent_id is not None and job.parent_id in self.ended_parents:
            self.pending.add(job, held=f"its parent job {job.parent_id} ended")
            return
        if not job.depend:
            self.pending.add(job)
            return
        verdict = verdict or self.dependencies.verdict(job)
        if verdict.outcome == depend.NEVER:
            self.pending.add(job, held=verdict.reason)
            self._end_unmeetable(job, verdict.reason)
        elif verdict.outcome == depend.WAIT:
            self.pending.add(job, held=f"dependency not met: {verdict.reason}")
            self.dependencies.watch(job)
        else:
            self.pending.add(job)

    def _check_parent(self, parent_id: int, caller: Caller) -> None:
        """A sub-task (MP CONNECT) belongs to a running job of the caller's own."""
        parent = self.running.get(parent_id)
        if parent is None:
            job = self.store.get(parent_id) if 0 < parent_id <= JOB_ID_MAX else None
            raise UsageError(f"parent job {parent_id} " + ("does not exist" if job is None else
                                                           f"is {job.shown_state}, not running")
                             + ": sub-tasks are handed to the grid by a running session job.")
        if parent.user != caller.user:
            raise auth.Forbidden(f"job {parent_id} belongs to {parent.user!r}; you ({caller.user!r}) cannot add "
                                 "sub-tasks to it.")

    def _end_children(self, parent: Job) -> None:
        """A session's sub-tasks end with it (MP CONNECT's remote sessions end at the parent's SIGNOFF)."""
        self.ended_parents.add(parent.id)
        for job_id in sorted(self.children.pop(parent.id, ())):
            if job_id not in self.pending and job_id not in self.running:
                continue
            if job_id in self.pending:
                self.pending.hold(job_id, f"its parent job {parent.id} ended")
            self._spawn(self.kill(job_id, reason=f"its parent job {parent.id} ended ({parent.shown_state})"))

    def _has_children(self, job_id: int) -> bool:
        return bool(self.children.get(job_id))

    def _end_unmeetable(self, job: Job, reason: str) -> None:
        """A dependency that can never be met ends the job (EXIT), rather than leave it pending forever."""
        self.pending.remove(job.id)
        new = self._change(job, "dependency", {"reason": reason}, end_ts=time.time(),
                           exit_reason=f"dependency can never be met: {reason}")
        if new is not None:
            self.metrics.on_end(new)
            self._wake(new)

    def _charge(self, job: Job) -> None:
        """Fairshare: the slot-seconds an attempt ran count against its user in its queue."""
        if job.start_ts is None:
            return
        now = time.time()
        usage_s, as_of = self.usage.charge(job.queue, job.user, fairshare.run_so_far_s(job, now), now)
        self.store.set_usage(job.queue, job.user, usage_s, as_of)

    def runlimit_s(self, job: Job) -> float:
        """The job's wall-time limit: its own (-W) or its queue's RUNLIMIT, the lower; 0: none."""
        return self.runlimits.limit_s(job)

    async def _watch_loads(self) -> None:
        """Hosts with max_load take no new job while their monitor's 1-minute load is over it (LSF's
        load thresholds, closed_Busy). The loads come from each host's monitor (latest.json), read
        once per monitor interval while any host has a threshold; a host that turns busy or idle
        again is announced, and an idle one gets jobs at once."""
        from statgrid.monitor.store import read_latest

        root = self.cfg.home / "monitor"
        while True:
            await asyncio.sleep(max(0.5, self.cfg.monitor.interval_s))
            watched = [h.name for h in self.cfg.hosts.values() if h.max_load > 0]
            if not watched:
                self.loads = {}
                continue
            try:
                loads = await asyncio.to_thread(_read_loads, root, watched, read_latest)
            except Exception as exc:                         # a monitor file half written: next time
                log.debug("loads: %r", exc)
                continue
            before = {n for n, v in self.host_views().items() if v.busy}
            self.loads = loads
            views = self.host_views()
            after = {n for n, v in views.items() if v.busy}
            for host in sorted(before ^ after):
                self._publish_host(host, "busy" if host in after else "idle")
            if before - after:
                self.dispatch()

    async def suspend(self, job_id: int, caller: Caller) -> Job:
        """LSF's bstop (suspend.py, a part)."""
        return await self.suspensions.suspend(job_id, caller)

    async def resume(self, job_id: int, caller: Caller) -> Job:
        """LSF's bresume (suspend.py, a part)."""
        return await self.suspensions.resume(job_id, caller)

    def modify(self, job_id: int, caller: Caller, changes: dict) -> Job:
        """LSF's bmod of a pending job: queue, job priority, run limit (-W), memory (--mem), name.
        The same checks as a submit; an array's element keeps its array. Owner or admin."""
        job = self.get(job_id)
        self.rights.require_owner(caller, job.user, "modify", f"job {job_id}")
        pending = self.pending.get(job_id)
        if pending is None:
            raise UsageError(f"job {job_id} is {job.state.value}: only a pending job can be modified.")
        unknown = set(changes) - {"queue", "priority", "runlimit_s", "mem_bytes", "name"}
        if unknown:
            raise UsageError(f"cannot modify {', '.join(sorted(unknown))}: a pending job's queue, priority, runlimit_s, "
                             "mem_bytes and name can change.")
        req = JobRequest(argv=list(pending.argv), cwd=pending.cwd, user=pending.user,
                         queue=changes.get("queue", pending.queue), name=changes.get("name", pending.name),
                         options=dict(pending.options), rerunnable=pending.rerunnable,
                         hosts=list(pending.requested_hosts), env={},
                         runlimit_s=changes.get("runlimit_s", pending.runlimit_s or 0.0),
                         mem_bytes=changes.get("mem_bytes", pending.mem_bytes),
                         priority=changes.get("priority", pending.priority))
        check_bounds(req)
        if "name" in changes and parse_array(req.name) is not None:
            raise UsageError(f"name {req.name!r} would make an array; a pending job's name cannot.")
        checked = validate(req, self.cfg, pending.submit_ts, check_files=False)
        new = self._change(pending, "modify", {"by": caller.user, **changes}, queue=checked.queue, name=req.name,
                           priority=checked.priority, runlimit_s=checked.runlimit_s, mem_bytes=checked.mem_bytes)
        if new is not None:
            self._enqueue(new)
            self.dispatch()
        return self.get(job_id)

    def move(self, job_id: int, caller: Caller, to: str) -> Job:
        """LSF's btop/bbot: a pending job goes first (`to` = "top") or last ("bottom") among its
        user's pending jobs of its queue; an administrator moves it among everyone's (in a queue
        without fairshare that is the queue's order; with fairshare, users' priorities still come first)."""
        job = self.get(job_id)
        self.rights.require_owner(caller, job.user, f"move to the {to} of its queue", f"job {job_id}")
        pending = self.pending.get(job_id)
        if pending is None:
            raise UsageError(f"job {job_id} is {job.state.value}: only a pending job can be moved.")
        ends = self.pending.ends(pending.queue, None if caller.admin else pending.user)
        position = math.nextafter(ends[0], -math.inf) if to == "top" else math.nextafter(ends[1], math.inf)
        # and the job priority of the user's first (last) job, which orders a user's jobs before position
        own = [j.priority for j in self.pending.values() if j.queue == pending.queue and j.user == pending.user]
        new = self._change(pending, to, {"by": caller.user}, position=position,
                           priority=max(own) if to == "top" else min(own))
        if new is not None:
            self._enqueue(new)
            self.dispatch()
        return self.get(job_id)

    def shares(self, queue: str | None = None) -> dict:
        """`statgrid shares`: {"queues": [{"queue", "fairshare", "rows": [fairshare.ShareRow dicts]}]}
        for every queue with fairshare (or the one asked for)."""
        if queue is not None and queue not in self.cfg.queues:
            raise NotFound(f"queue {queue!r} does not exist; queues: {', '.join(self.cfg.queues)} (see `statgrid queues`).")
        now = time.time()
        usage = self.usage.at(now, self.running.values())
        running: dict[tuple[str, str], int] = {}
        pending: dict[tuple[str, str], int] = {}
        for job in self.running.values():
            running[(job.queue, job.user)] = running.get((job.queue, job.user), 0) + 1
        for job in self.pending.values():
            pending[(job.queue, job.user)] = pending.get((job.queue, job.user), 0) + 1
        out = []
        for q in self.cfg.queues.values():
            if (queue is not None and q.name != queue) or not q.fairshare:
                continue
            users = {u for (qn, u) in [*running, *pending, *usage] if qn == q.name}
            users |= {n for n, _ in q.fairshare if n != fairshare.DEFAULT and n not in self.cfg.groups}
            rows = fairshare.share_rows(q, users, running, pending, usage, self.cfg.groups, self.cfg.scheduling)
            out.append({"queue": q.name, "fairshare": [list(p) for p in q.fairshare],
                        "rows": [r.to_dict() for r in rows]})
        return {"queues": out, "half_life_s": self.cfg.scheduling.half_life_s}


def _read_loads(root: Path, hosts: list[str], read_latest) -> dict[str, float]:
    """host → the 1-minute load average of its monitor's latest sample (hosts without one left out)."""
    out = {}
    for host in hosts:
        rows = read_latest(root / host) or {}
        node = (rows.get("node") or [None])[-1]
        if isinstance(node, dict) and isinstance(node.get("load_1m"), (int, float)):
            out[host] = float(node["load_1m"])
    return out
