"""The master's pending jobs, kept in the shape the policy reads (policy.backlog_of): queue → user
→ that user's jobs in order (policy.job_key), plus the jobs held back by a dependency (not in the
lists: the policy never looks at them) with the reason each waits.

Kept up to date as jobs come and go, so that a dispatch with 10,000 pending jobs sorts nothing:
an insert is a bisect into one user's list, a removal a search in it.
"""
from __future__ import annotations

import bisect
from typing import Iterator

from statgrid.job.record import Job
from statgrid.grid.scheduling.policy import job_key


class Backlog:
    def __init__(self) -> None:
        self.jobs: dict[int, Job] = {}                       # every PEND job, held or not
        self.lists: dict[str, dict[str, list[Job]]] = {}     # the dispatchable ones (policy.plan's backlog)
        self._keys: dict[tuple[str, str], list[tuple]] = {}  # job_key of each list's jobs, for bisect
        self.held: dict[int, str] = {}                       # job id → why its dependency holds it

    def __len__(self) -> int:
        return len(self.jobs)

    def __contains__(self, job_id: int) -> bool:
        return job_id in self.jobs

    def get(self, job_id: int) -> Job | None:
        return self.jobs.get(job_id)

    def values(self) -> Iterator[Job]:
        return iter(self.jobs.values())

    def add(self, job: Job, held: str | None = None) -> None:
        """A PEND job; `held`: the reason its dependency keeps it out of dispatch (None: dispatchable)."""
        self.remove(job.id)
        self.jobs[job.id] = job
        if held is not None:
            self.held[job.id] = held
            return
        keys = self._keys.setdefault((job.queue, job.user), [])
        jobs = self.lists.setdefault(job.queue, {}).setdefault(job.user, [])
        key = job_key(job)
        i = bisect.bisect(keys, key)
        keys.insert(i, key)
        jobs.insert(i, job)

    def remove(self, job_id: int) -> Job | None:
        job = self.jobs.pop(job_id, None)
        if job is None:
            return None
        if self.held.pop(job_id, None) is not None:
            return job
        keys = self._keys.get((job.queue, job.user))
        jobs = self.lists.get(job.queue, {}).get(job.user)
        if keys is not None and jobs is not None:
            key = job_key(job)
            i = bisect.bisect_left(keys, key)
            if i < len(keys) and keys[i] == key:
                del keys[i]
                del jobs[i]
            if not jobs:
                del self.lists[job.queue][job.user]
                del self._keys[(job.queue, job.user)]
                if not self.lists[job.queue]:
                    del self.lists[job.queue]
        return job

    def hold(self, job_id: int, reason: str) -> None:
        """Keep a pending job out of dispatch (its dependency is not met), or update why."""
        job = self.jobs.get(job_id)
        if job is not None and (job_id not in self.held or self.held[job_id] != reason):
            self.add(job, held=reason)

    def release(self, job_id: int) -> None:
        """Its dependency is met: the job becomes dispatchable."""
        job = self.jobs.get(job_id)
        if job is not None and job_id in self.held:
            self.add(job)

    def queue_users(self, queue: str) -> dict[str, list[Job]]:
        return self.lists.get(queue, {})

    def ends(self, queue: str, user: str | None) -> tuple[float, float] | None:
        """The lowest and highest position among the pending jobs of `queue` (of `user` only when given)."""
        positions = [j.position for j in self.jobs.values() if j.queue == queue and (user is None or j.user == user)]
        return (min(positions), max(positions)) if positions else None
