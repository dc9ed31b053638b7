"""Dependencies (LSF's -w), a part of the master (parts.py): which pending jobs wait for which,
checked at submit, evaluated when a job joins the backlog, and re-checked when a job they name
changes state (the `changed` hook).

Its own state: job id → the pending jobs whose dependency names it, and the jobs whose dependents
are re-checked soon. It changes no job itself: a released or never-met job goes back through the
master's backlog (`Master._enqueue`), which ends a never-met one through the lifecycle.
"""
from __future__ import annotations

import asyncio
import functools
import logging

from statgrid.errors import UsageError
from statgrid.grid.master.parts import Part
from statgrid.grid.scheduling import depend
from statgrid.job.record import Job, JobState

log = logging.getLogger("statgrid.master")

# Store events after which a job's dependents are re-checked: its state or start changed.
STATE_EVENTS = ("dispatch", "start", "finish", "lost", "kill", "requeue", "dependency")


@functools.lru_cache(maxsize=4096)
def parsed(text: str) -> depend.Expr:
    """A stored dependency's expression (parsed once per text: an array's jobs share theirs)."""
    return depend.parse(text)


class Dependencies(Part):
    name = "dependencies"

    def __init__(self, master):
        # the Master (core.py) holding this part; not imported here: core.py imports this module
        self.master = master
        self.dependents: dict[int, set[int]] = {}     # job id → pending jobs whose dependency names it
        self._recheck: set[int] = set()               # jobs whose dependents are re-checked soon

    def check(self, text: str, user: str) -> str | None:
        """The canonical text of a -w expression (None: none): every job it names must exist.
        Anyone may wait for anyone's job (its state is no secret: `statgrid jobs -u all`)."""
        if not text.strip():
            return None
        expr = depend.parse(text)
        m = self.master
        for ref in depend.refs(expr):
            if isinstance(ref, str):
                raise UsageError(f"-w {text!r} names the job {ref!r}: outside a flow, name jobs by id, e.g. done(12) "
                                 "(names are for a flow file's jobs).")
            if ref not in m.pending and ref not in m.running and m.store.get(ref) is None:
                raise UsageError(f"-w {text!r}: job {ref} does not exist; see `statgrid jobs -a -u all`.")
        return depend.format_expr(expr)

    def verdict(self, job: Job) -> depend.Verdict:
        expr = parsed(job.depend)
        m = self.master
        views: dict[int, depend.JobView] = {}
        for ref in depend.refs(expr):
            other = m.pending.get(ref) or m.running.get(ref)
            if other is not None:
                views[ref] = depend.JobView(other.shown_state, other.start_ts is not None or other.state == JobState.RUN)
                continue
            found = m.store.state_of(ref)            # a finished job: its state alone, not its whole row
            if found is not None:
                views[ref] = depend.JobView(found[0], found[1])
        return depend.evaluate(expr, views)

    def watch(self, job: Job) -> None:
        """`job` waits: re-check it when any job it names changes state."""
        for ref in depend.refs(parsed(job.depend)):
            self.dependents.setdefault(ref, set()).add(job.id)

    def changed(self, job: Job, event: str) -> None:
        if job.id in self.dependents and event in STATE_EVENTS:
            # After the change is applied (the store calls this from inside it): the master's own
            # state (pending, running) is updated by the caller right after.
            if not self._recheck:
                asyncio.get_running_loop().call_soon(self._recheck_dependents)
            self._recheck.add(job.id)

    def _recheck_dependents(self) -> None:
        """The jobs in _recheck changed state: their dependents may start now, or never."""
        changed, self._recheck = self._recheck, set()
        m = self.master
        released = False
        try:
            for ref in changed:
                for job_id in sorted(self.dependents.pop(ref, ())):
                    job = m.pending.get(job_id)
                    if job is None or job_id not in m.pending.held:
                        continue
                    try:
                        m._enqueue(job)            # held again (WAIT), released (MET) or ended (NEVER)
                    except Exception:              # one job's fault must not strand the others held
                        log.exception("dependency re-check of job %s", job_id)
                        self.dependents.setdefault(ref, set()).add(job_id)
                        continue
                    released = released or job_id not in m.pending.held
        finally:
            if released:
                m.dispatch()
