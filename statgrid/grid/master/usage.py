"""Fairshare usage (LSF's), a part of the master (parts.py): the slot-seconds each attempt ran,
charged to its user in its queue when the attempt ends, decayed with [scheduling] half_life
(fairshare.UsageBook), kept in the store; what the policy's fairshare priorities and `statgrid
shares` read.

Its own state is the usage book. The core charges an attempt's end with `charge` inside the
transaction that ends it (finish, lost, requeue), so its end and its usage are stored together —
a hook would come after the commit, and a requeue's hook would see the attempt's start already
reset. The `reconfigured` hook takes a new half-life.
"""
from __future__ import annotations

import time

from statgrid.errors import NotFound
from statgrid.grid.master.parts import Part
from statgrid.grid.scheduling import fairshare
from statgrid.job.record import Job


class FairshareUsage(Part):
    name = "usage"

    def __init__(self, master):
        # the Master (core.py) holding this part; not imported here: core.py imports this module
        self.master = master
        self.book = fairshare.UsageBook(master.store.usage(), master.cfg.scheduling.half_life_s)

    def charge(self, job: Job) -> None:
        """Fairshare: the slot-seconds an attempt ran count against its user in its queue."""
        if job.start_ts is None:
            return
        now = time.time()
        usage_s, as_of = self.book.charge(job.queue, job.user, fairshare.run_so_far_s(job, now), now)
        self.master.store.set_usage(job.queue, job.user, usage_s, as_of)

    def at(self, now_ts: float, running) -> dict[tuple[str, str], float]:
        """(queue, user) → decayed usage as of now_ts, the running jobs' time so far included."""
        return self.book.at(now_ts, running)

    def reconfigured(self, cfg) -> None:
        self.book.half_life_s = cfg.scheduling.half_life_s

    def shares(self, queue: str | None = None) -> dict:
        """`statgrid shares`: {"queues": [{"queue", "fairshare", "rows": [fairshare.ShareRow dicts]}]}
        for every queue with fairshare (or the one asked for)."""
        m = self.master
        cfg = m.cfg
        if queue is not None and queue not in cfg.queues:
            raise NotFound(f"queue {queue!r} does not exist; queues: {', '.join(cfg.queues)} (see `statgrid queues`).")
        now = time.time()
        usage = self.book.at(now, m.running.values())
        running: dict[tuple[str, str], int] = {}
        pending: dict[tuple[str, str], int] = {}
        for job in m.running.values():
            running[(job.queue, job.user)] = running.get((job.queue, job.user), 0) + 1
        for job in m.pending.values():
            pending[(job.queue, job.user)] = pending.get((job.queue, job.user), 0) + 1
        out = []
        for q in cfg.queues.values():
            if (queue is not None and q.name != queue) or not q.fairshare:
                continue
            users = {u for (qn, u) in [*running, *pending, *usage] if qn == q.name}
            users |= {n for n, _ in q.fairshare if n != fairshare.DEFAULT and n not in cfg.groups}
            rows = fairshare.share_rows(q, users, running, pending, usage, cfg.groups, cfg.scheduling)
            out.append({"queue": q.name, "fairshare": [list(p) for p in q.fairshare],
                        "rows": [r.to_dict() for r in rows]})
        return {"queues": out, "half_life_s": cfg.scheduling.half_life_s}
