"""The master's verbs on pending jobs (issue 18): the backlog's admission and holds, LSF's verbs on
one job — modify (bmod), top/bottom (btop/bbot) — and the public doors of the parts that have verbs of
their own (parts.py: suspend/resume, run limits, fairshare shares). Sub-tasks, dependencies, run
limits, suspend/resume, fairshare usage and load thresholds are parts: subtasks.py, dependencies.py,
runlimits.py, suspend.py, usage.py, loads.py.

The core's own verbs split over files, a mixin of Master: the methods use the Master's state
(store, pending backlog, running jobs, engine, rights) and run on its loop, as the rest of the
master does; core.py keeps the life cycle, submit, dispatch and the engine's events.
"""
from __future__ import annotations

import logging
import math
import time

from statgrid.errors import UsageError
from statgrid.grid.scheduling import depend
from statgrid.grid.security.auth import Caller
from statgrid.grid.master.jobspec import JobRequest, check_bounds, parse_array, validate
from statgrid.job.record import Job

log = logging.getLogger("statgrid.master")


class QueueControl:
    def _enqueue(self, job: Job, verdict: depend.Verdict | None = None) -> None:
        """A PEND job joins the backlog — held out of dispatch while its dependency is not met (ended
        EXIT when it can never be met), or while its parent job has ended (it is being killed).
        `verdict`: its dependency's, when the caller evaluated it already (the elements of an array)."""
        hold = self.subtasks.hold_reason(job)
        if hold is not None:
            self.pending.add(job, held=hold)
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

    def _end_unmeetable(self, job: Job, reason: str) -> None:
        """A dependency that can never be met ends the job (EXIT), rather than leave it pending forever."""
        self.pending.remove(job.id)
        new = self._change(job, "dependency", {"reason": reason}, end_ts=time.time(),
                           exit_reason=f"dependency can never be met: {reason}")
        if new is not None:
            self.metrics.on_end(new)
            self._wake(new)

    def runlimit_s(self, job: Job) -> float:
        """The job's wall-time limit: its own (-W) or its queue's RUNLIMIT, the lower; 0: none."""
        return self.runlimits.limit_s(job)

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
        kernel = pending.kind == "kernel"                # a kernel is checked as a kernel (argv [language])
        req = JobRequest(argv=[] if kernel else list(pending.argv), kernel=pending.argv[0] if kernel else "",
                         cwd=pending.cwd, user=pending.user,
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
        """`statgrid shares` (usage.py, a part)."""
        return self.usage.shares(queue)
