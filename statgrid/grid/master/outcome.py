"""The master's side of a job's end: how each attempt is settled (its node's outcome, a lost host
or task, a requeue) and the restart's sort of RUN jobs (reconcile). A mixin of Master (core.py):
the methods use its state and run on its loop, as queuectl.py's do.

Every change of a job's state here goes through `_change`, i.e. statgrid.job.lifecycle.change
(the table of allowed transitions) and then the store's compare-and-set update: a change the
table refuses raises IllegalTransition; one the store refuses (the job changed meanwhile, e.g. a
late event of an old attempt) answers None and changes nothing.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from statgrid.config import Config
from statgrid.host.files import NotTrusted, read_untrusted
from statgrid.job import lifecycle
from statgrid.job.accounting import JobRusage
from statgrid.job.jobdir import JobDir, attempt_path, attempts_root
from statgrid.job.protocol import (AttemptFinished, AttemptLost, AttemptStarted, ProtocolError, attempt_from_dict)
from statgrid.job.record import Job, JobState
from statgrid.job.stimer import StepRecord

log = logging.getLogger("statgrid.master")

ALIVE_TASK_STATES = ("waiting", "queued", "processing")


class Outcomes:
    def _change(self, job: Job, event: str, detail: dict[str, Any] | None = None, to: JobState | None = None,
                **fields: Any) -> Job | None:
        """`job` after `event` (lifecycle.change), written if the store still has it in the state and
        attempt it is in here. Returns the new record, or None if the store had moved on."""
        new = lifecycle.change(job, event, to, **fields)
        return new if self.store.update(new, job.state, job.attempt, event, detail) else None

    def _settle_lost_task(self, job: Job, reason: str) -> None:
        """The job's task can no longer run or report: decide from its attempt file."""
        attempt = _read_attempt(self.cfg, job.id, job.attempt)
        if attempt is None:                                  # it never started
            self._spawn(self.engine.cancel(job.task_key))    # so that it never can
            if job.kill_requested:
                self._end(job, JobState.KILLED, job.exit_reason or "killed by user")
            else:
                self._back_to_pending(job, "its task was lost before the job started")
        elif isinstance(attempt, AttemptFinished):
            self._finish(job, attempt)
        else:                                                # started, or lost with the node's reason
            self._host_lost(job, attempt.reason if isinstance(attempt, AttemptLost) else reason)

    def _finish(self, job: Job, outcome: AttemptFinished) -> None:
        exit_code, sig = outcome.exit_code, outcome.signal
        if job.kill_requested:
            state, reason = lifecycle.killed_state(job.kill_as), job.exit_reason or "killed by user"
        elif outcome.launch_error:
            state, reason = JobState.EXIT, outcome.launch_error
        elif outcome.limit_reason:                           # its node killed it over its memory reservation
            state, reason = JobState.EXIT, outcome.limit_reason
        elif exit_code == 0:
            state, reason = JobState.DONE, None
        else:
            state = JobState.EXIT
            reason = f"killed by signal {sig}" if sig is not None else f"exit code {exit_code}"
        # One typed record of both (accounting.JobRusage), as the store, the API and reports keep it.
        rusage = None if outcome.rusage is None else JobRusage.of(outcome.rusage, outcome.io)
        rerun = job.kill_requested and job.rerunnable and reason == "grid down"     # it waits for the next grid up
        with self.store.transaction():             # its end, its usage (and its requeue) together
            new = self._change(job, "finish", {"state": state.value, "reason": reason}, to=state, exit_code=exit_code,
                               signal=sig, exit_reason=reason, end_ts=outcome.end_ts or time.time(), rusage=rusage,
                               stimer=StepRecord.parse(outcome.stimer), start_ts=outcome.start_ts or job.start_ts,
                               pid=outcome.pid or job.pid)
            if new is None:
                return
            self.usage.charge(new)
            if rerun:
                self._back_to_pending(new, "grid down")
        self.running.pop(job.id, None)
        if not rerun:
            self.metrics.on_end(new)
        self._dispatch_then_wake(new)

    def _host_lost(self, job: Job, reason: str) -> None:
        # The job may have ended just before its host went: its attempt file then says so.
        outcome = _read_attempt(self.cfg, job.id, job.attempt)
        if isinstance(outcome, AttemptFinished):
            self._finish(job, outcome)
        elif job.rerunnable and not job.kill_requested:
            self._back_to_pending(job, reason)
            self.dispatch()
        elif job.kill_requested:
            self._end(job, lifecycle.killed_state(job.kill_as), job.exit_reason or "killed by user")
        else:
            self._end(job, JobState.EXIT, reason)

    def _end(self, job: Job, state: JobState, reason: str) -> None:
        """A RUN job ends without an outcome from its node (host lost, task lost)."""
        with self.store.transaction():
            new = self._change(job, "lost", {"reason": reason}, to=state, exit_reason=reason, end_ts=time.time())
            if new is not None:
                self.usage.charge(new)
        if new is not None:
            self.running.pop(job.id, None)
            self.metrics.on_end(new)
            self._dispatch_then_wake(new)

    def _back_to_pending(self, job: Job, reason: str) -> None:
        """Requeue a RUN job, or one that has just ended (a rerunnable job's end at `grid down`)."""
        with self.store.transaction():             # the requeue and the usage of the attempt together
            new = self._change(job, "requeue", {"reason": reason})
            if new is None:
                return
            if job.state == JobState.RUN:
                self.usage.charge(dataclasses.replace(job, end_ts=time.time()))

            def requeued() -> None:                # in memory once committed (_finish may hold it open)
                self.running.pop(job.id, None)
                self._enqueue(new)
            self.store.after_commit(requeued)

    def _dispatch_then_wake(self, ended: Job) -> None:
        """After a job's end: its slot's next job first, then whoever waits for the ended one. Each
        of both goes out on a later turn of the loop (the engine's message, the waiter's answer), in
        the order asked: a waiter first put its HTTP answer ahead of the refill."""
        try:
            self.dispatch()
        finally:
            self._wake(ended)

    def _wake(self, job: Job) -> None:
        for fut in self.waiters.pop(job.id, []):
            if not fut.done():
                fut.set_result(job)

    # -- restart ------------------------------------------------------------------------------------------
    async def reconcile(self, min_age_s: float = 0.0) -> dict[str, list[int]]:
        """Sort every RUN job of the store after a (re)start. Returns {verdict: [job ids]}."""
        verdicts: dict[str, list[int]] = {"finished": [], "running": [], "requeued": [], "lost": [], "pending": []}
        if not self.running:
            return verdicts
        tasks = await self.engine.task_states()
        on_node: dict[str, dict | None] = {}
        silent_s: dict[str, float] | None = None
        for job_id in list(self.running):
            job = self.running.get(job_id)                   # fresh: the awaits below let events in
            if job is None or (min_age_s and time.time() - (job.dispatch_ts or 0) < min_age_s):
                continue
            attempt = _read_attempt(self.cfg, job.id, job.attempt)
            if isinstance(attempt, AttemptFinished):
                self._finish(job, attempt)
                verdicts["finished"].append(job.id)
                continue
            if job.host not in on_node:
                on_node[job.host] = await self.engine.running(job.host)
                job = self.running.get(job_id)
                if job is None:
                    continue
            node_jobs = on_node[job.host] or {}
            if tasks.get(job.task_key) in ALIVE_TASK_STATES or job.task_key in node_jobs:
                if isinstance(attempt, AttemptStarted) and job.start_ts is None:
                    new = self._change(job, "start", {"pid": attempt.pid, "found": "reconcile"}, pid=attempt.pid,
                                       start_ts=attempt.start_ts)
                    if new is not None:
                        self.running[job.id] = new
                        self.metrics.on_start(new)
                        self.runlimits.arm(new)
                verdicts["running"].append(job.id)
            elif on_node[job.host] is None and not isinstance(attempt, AttemptLost):
                # No live task, and no word from its node: settled at the host's deadline (fence.py),
                # counted from its last contact with the scheduler (0: from now, if it never had one).
                # A host that has a worker and did not answer is asked again at the next sweep.
                if job.host not in self.engine.workers:
                    if silent_s is None:
                        silent_s = await self.engine.silences()
                    self._host_silent(job.host, silent_s.get(job.host, 0.0))
            else:
                # No live task (gone, erred, or waiting for a worker that no longer exists), and its
                # node says it does not run it, or recorded how it ended.
                verdicts["pending" if attempt is None else "requeued" if job.rerunnable else "lost"].append(job.id)
                self._settle_lost_task(job, "host lost while the master was not watching")
        if not min_age_s or any(v for k, v in verdicts.items() if k != "running"):
            log.info("reconciled: %s", {k: len(v) for k, v in verdicts.items()})
        return verdicts


def _read_attempt(cfg: Config, job_id: int, attempt: int) -> AttemptStarted | AttemptFinished | AttemptLost | None:
    """The attempt's record (protocol.attempt_from_dict: files of versions 1 and 2 too) from the
    grid's attempts directory; failing that, from the job's directory, where releases before
    protocol version 3 kept it (jobs of a grid upgraded while they ran). None if there is none. A
    file that cannot be read counts as none, as before; one this release cannot read (another
    version), or a record of another job, is said in the log.

    The job's directory is its user's now: a file there is believed only if the grid's own account
    wrote it (its owner), it is a regular file reached without a link, and it is this attempt's
    record — a user could have made or renamed one there to choose how their job ended."""
    path = attempt_path(attempts_root(cfg.home), job_id, attempt)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        path = JobDir.of(cfg.home, job_id).legacy_attempt(attempt)
        data = _read_grid_file(path)
    except OSError:
        return None
    if data is None:
        return None
    try:
        record = attempt_from_dict(json.loads(data))
    except ProtocolError as exc:
        log.error("%s: %s", path, exc)
        return None
    except ValueError:
        return None
    if (record.job_id, record.attempt) != (job_id, attempt):
        log.error("%s: the record of job %s attempt %s, not of job %s attempt %s: ignored", path, record.job_id,
                  record.attempt, job_id, attempt)
        return None
    return record


LEGACY_ATTEMPT_MAX_BYTES = 1 << 20


def _read_grid_file(path: Path) -> bytes | None:
    """A file in a directory a user may write to, if the grid's account owns it (None otherwise)."""
    try:
        return read_untrusted(path, LEGACY_ATTEMPT_MAX_BYTES, owner_uid=os.geteuid())
    except NotTrusted as exc:
        log.warning("%s: ignored", exc)
    except OSError:
        pass
    return None


