"""Sub-tasks of a session job (MP CONNECT: Session.parallel), a part of the master (parts.py): a
running session job of a user's hands jobs of that user's to the grid, and they end with it (MP
CONNECT's remote sessions end at the parent's SIGNOFF).

Its own state: each parent's sub-tasks, and the parents whose sub-tasks are being ended (a
sub-task of such a parent joins the backlog held, never to start). It changes no job itself: a
sub-task of an ended parent is held in the master's backlog and killed through the master's
public `kill`.

Hooks: `submitted` (a sub-task joins its parent's), `restored` (after a restart: the sub-tasks of
the jobs read back from the store, before the reconcile, which may end a parent), `changed` (a
parent ended: its pending sub-tasks are held at once, so the dispatch that follows cannot start
one in the slot the parent freed, and killed soon after), `reconciled` (a parent that ended while
the master was away ends its sub-tasks).
"""
from __future__ import annotations

import asyncio

from statgrid.errors import UsageError
from statgrid.grid.master.parts import Part
from statgrid.grid.security import auth
from statgrid.grid.security.auth import Caller
from statgrid.job.record import JOB_ID_MAX, Job


class SubTasks(Part):
    name = "subtasks"

    def __init__(self, master):
        # the Master (core.py) holding this part; not imported here: core.py imports this module
        self.master = master
        self.children: dict[int, set[int]] = {}    # session job → its sub-tasks (Session.parallel)
        self.ended_parents: set[int] = set()       # parents whose sub-tasks are being ended (held, not started)

    # -- verbs the core asks ------------------------------------------------------------------------------
    def check_parent(self, parent_id: int, caller: Caller) -> None:
        """A sub-task (MP CONNECT) belongs to a running job of the caller's own."""
        m = self.master
        parent = m.running.get(parent_id)
        if parent is None:
            job = m.store.get(parent_id) if 0 < parent_id <= JOB_ID_MAX else None
            raise UsageError(f"parent job {parent_id} " + ("does not exist" if job is None else
                                                           f"is {job.shown_state}, not running")
                             + ": sub-tasks are handed to the grid by a running session job.")
        if parent.user != caller.user:
            raise auth.Forbidden(f"job {parent_id} belongs to {parent.user!r}; you ({caller.user!r}) cannot add "
                                 "sub-tasks to it.")

    def hold_reason(self, job: Job) -> str | None:
        """Why a pending job joins the backlog held, if it is a sub-task of a parent that has ended."""
        if job.parent_id is not None and job.parent_id in self.ended_parents:
            return f"its parent job {job.parent_id} ended"
        return None

    def has_children(self, job_id: int) -> bool:
        return bool(self.children.get(job_id))

    def end_children(self, parent: Job) -> None:
        """A session's sub-tasks end with it (MP CONNECT's remote sessions end at the parent's SIGNOFF)."""
        m = self.master
        self.ended_parents.add(parent.id)
        for job_id in sorted(self.children.pop(parent.id, ())):
            if job_id not in m.pending and job_id not in m.running:
                continue
            if job_id in m.pending:
                m.pending.hold(job_id, f"its parent job {parent.id} ended")
            m._spawn(m.kill(job_id, reason=f"its parent job {parent.id} ended ({parent.shown_state})"))

    # -- hooks --------------------------------------------------------------------------------------------
    def submitted(self, job: Job) -> None:
        if job.parent_id is not None:
            self.children.setdefault(job.parent_id, set()).add(job.id)

    def restored(self) -> None:
        # Before the reconcile: a parent it finds ended while the master was away ends its sub-tasks.
        m = self.master
        for job in [*m.running.values(), *m.pending.values()]:
            if job.parent_id is not None:
                self.children.setdefault(job.parent_id, set()).add(job.id)

    async def reconciled(self) -> None:
        m = self.master
        for parent_id in [p for p in self.children if p not in m.running]:
            parent = m.store.get(parent_id)            # ended while the master was down
            if parent is not None and parent.state.finished:
                self.end_children(parent)

    def changed(self, job: Job, event: str) -> None:
        if job.state.finished and self.has_children(job.id):
            # Held now, killed soon: the dispatch that follows this change must not start a
            # pending sub-task in the slot its parent has just freed.
            for child_id in self.children[job.id]:
                self.master.pending.hold(child_id, f"its parent job {job.id} ended")
            asyncio.get_running_loop().call_soon(self.end_children, job)
