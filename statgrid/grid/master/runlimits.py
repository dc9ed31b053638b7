"""Run limits (LSF's RUNLIMIT and -W), a part of the master (parts.py): one timer per running job,
armed when it starts or resumes, re-armed for every running job at the master's start and at a
reconfig (a queue's RUNLIMIT may have changed). Suspended time does not count.

Its own state is the timers. A job over its limit is killed through the master's public `kill`
(ending EXIT, as LSF's TERM_RUNLIMIT): the lifecycle stays the core's.
"""
from __future__ import annotations

import asyncio
import logging
import time

from statgrid.grid.master.parts import Part
from statgrid.grid.scheduling import fairshare
from statgrid.job.record import Job, JobState

log = logging.getLogger("statgrid.master")

DUE_SLACK_S = 0.05                         # the timer fires this much after the limit, so the check sees it reached


class RunLimits(Part):
    name = "runlimits"

    def __init__(self, master):
        # the Master (core.py) holding this part; not imported here: core.py imports this module
        self.master = master
        self.timers: dict[int, asyncio.TimerHandle] = {}     # job → its run limit's check

    async def start(self) -> None:
        for job in self.master.running.values():
            self.arm(job)

    def stop(self) -> None:
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()

    def reconfigured(self, cfg) -> None:
        for job in self.master.running.values():             # a queue's RUNLIMIT may have changed
            self.arm(job)

    def limit_s(self, job: Job) -> float:
        """The job's wall-time limit: its own (-W) or its queue's RUNLIMIT, the lower; 0: none."""
        queue = self.master.cfg.queues.get(job.queue)
        limits = [x for x in (job.runlimit_s, queue.runlimit_s if queue else 0.0) if x]
        return min(limits) if limits else 0.0

    def arm(self, job: Job) -> None:
        """Check the job's run limit when it may be reached (suspended time does not count, so the
        check re-arms itself until the job has run the whole limit)."""
        limit = self.limit_s(job)
        if not limit or job.start_ts is None:
            return
        left = limit - fairshare.run_so_far_s(job, time.time())
        old = self.timers.pop(job.id, None)
        if old is not None:
            old.cancel()                               # one timer per job: a resume or reconfig re-arms it
        self.timers[job.id] = asyncio.get_running_loop().call_later(
            max(0.0, left) + DUE_SLACK_S, self._due, job.id, job.attempt)

    def _due(self, job_id: int, attempt: int) -> None:
        self.timers.pop(job_id, None)
        m = self.master
        job = m.running.get(job_id)
        if job is None or job.attempt != attempt or job.kill_requested or job.suspend_ts is not None:
            return                                 # ended, requeued, being killed, or suspended (resume re-arms)
        limit = self.limit_s(job)
        ran = fairshare.run_so_far_s(job, time.time())
        if not limit:
            return
        if ran < limit:
            self.arm(job)
            return
        source = "-W" if job.runlimit_s == limit else f"RUNLIMIT of queue {job.queue}"
        reason = f"run limit reached: ran {duration_text(ran)}, limit {duration_text(limit)} ({source}); killed"
        log.info("job %s: %s", job_id, reason)
        m._spawn(m.kill(job_id, reason=reason, kill_as=JobState.EXIT))


def duration_text(seconds: float) -> str:
    """3725 → '1h02m05s'; 42.5 → '42.5s'."""
    if seconds < 60:
        return f"{seconds:.3g}s"
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return (f"{h}h{m:02d}m{sec:02d}s" if h else f"{m}m{sec:02d}s")
