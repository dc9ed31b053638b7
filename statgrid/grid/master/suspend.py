"""Suspend and resume (LSF's bstop/bresume), a part of the master (parts.py): the node stops or
continues the job's processes; the job stays RUN (shown USUSP while suspended) and its suspended
time does not count against its run limit. Changes go through the lifecycle (`Master._change`).

Its own state: the jobs a suspend or resume is under way for (one request at a time per job).
"""
from __future__ import annotations

import time

from statgrid.errors import StatgridError, UsageError
from statgrid.grid.security.auth import Caller
from statgrid.grid.master.parts import Part
from statgrid.job.record import Job


class Suspensions(Part):
    name = "suspensions"

    def __init__(self, master):
        # the Master (core.py) holding this part; not imported here: core.py imports this module
        self.master = master
        self.suspending: set[int] = set()          # jobs a suspend or resume is under way for (one at a time)

    async def suspend(self, job_id: int, caller: Caller) -> Job:
        """Stop a running job's whole process tree (its cgroup frozen, else SIGSTOP to its process
        group); it keeps its slot and memory, and suspended time counts neither as run time for
        its run limit nor as fairshare usage (its CPU time stops by itself). Owner or admin."""
        job = self.master.get(job_id)
        self.master.rights.require_owner(caller, job.user, "suspend", f"job {job_id}")
        current = self.master.running.get(job_id)
        if current is None or current.suspend_ts is not None:
            if current is not None:
                return current                                   # already suspended
            raise UsageError(f"job {job_id} is {job.state.value}: only a running job can be suspended.")
        if current.kill_requested:
            raise UsageError(f"job {job_id} is being killed ({current.exit_reason}); it cannot be suspended.")
        if current.start_ts is None:
            raise UsageError(f"job {job_id} is on its way to {current.host} and has not started yet; suspend it once "
                             f"it runs (`statgrid job {job_id}` shows its start).")
        current = await self._on_node(current, self.master.engine.suspend, f"job {job_id} is no longer running on "
                                      f"{current.host} (it is ending); nothing was suspended.")
        if current is None:
            return self.master.get(job_id)
        new = self.master._change(current, "suspend", {"by": caller.user}, suspend_ts=time.time())
        if new is not None:
            self.master.running[job_id] = new
        return self.master.get(job_id)

    async def _on_node(self, job: Job, call, failure: str) -> Job | None:
        """engine.suspend or engine.resume of a job, one such request at a time per job (each may wait
        on its node); the job's record afterwards, None if it ended meanwhile."""
        if job.id in self.suspending:
            raise UsageError(f"job {job.id} is being suspended or resumed by another request; try again.")
        self.suspending.add(job.id)
        try:
            if not await call(job.host, job.task_key):
                raise StatgridError(failure)
        finally:
            self.suspending.discard(job.id)
        return self.master.running.get(job.id)

    async def resume(self, job_id: int, caller: Caller) -> Job:
        """Continue a job `suspend` stopped. Owner or admin."""
        job = self.master.get(job_id)
        self.master.rights.require_owner(caller, job.user, "resume", f"job {job_id}")
        current = self.master.running.get(job_id)
        if current is None or current.suspend_ts is None:
            raise UsageError(f"job {job_id} is {job.state.value}, not suspended: nothing to resume.")
        current = await self._on_node(current, self.master.engine.resume, f"job {job_id} is no longer running on "
                                      f"{current.host}; it stays shown suspended until it ends.")
        if current is None:
            return self.master.get(job_id)
        now = time.time()
        new = self.master._change(current, "resume", {"by": caller.user}, suspend_ts=None,
                                  suspended_s=current.suspended_s + max(0.0, now - (current.suspend_ts or now)))
        if new is not None:
            self.master.running[job_id] = new
            self.master.runlimits.arm(new)
        return self.master.get(job_id)
