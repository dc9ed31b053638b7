"""Jobs submitted together and watched as one: submit them, wait for them, kill the rest when one
fails or the caller stops. One helper for what the iobench-on-grid run, datagen, the Mixed
Analytics runner and a session's sub-tasks (session/connect.py) each need:

    batch = Batch(GridClient(cfg))
    with batch.guard():                       # Ctrl-C or an error: the unfinished jobs are killed
        for n in names:
            batch.submit(argv + [n], name=f"datagen-{n}")
        records = batch.wait_all(on_end=lambda rec: print(rec["id"], rec["state"]))

The callers differ in what a failed job means (the iobench jobs wait for each other at a barrier,
so the first failure ends them all; a benchmark goes on; sub-tasks are judged once all ended), so
each says it: `wait_all(stop_on_failure=...)`, an `on_end` that raises, or `wait_each` in order.
"""
from __future__ import annotations

import contextlib
import time
from typing import Callable, Iterator

from statgrid.errors import StatgridError
from statgrid.grid.interface.client import GridClient
from statgrid.job.lifecycle import FINISHED_STATES, JobState

POLL_S = 1.0                    # how long one poll waits for the unfinished jobs before it answers


def ended(record: dict) -> bool:
    """The job has finished: DONE, EXIT or KILLED."""
    return record["state"] in FINISHED_STATES


class Batch:
    """Grid jobs of one caller, in submit order (`ids`), with the last record seen of each
    (`records`: the submit's answer, then what each wait answered)."""

    def __init__(self, client: GridClient):
        self.client = client
        self.ids: list[int] = []
        self.records: dict[int, dict] = {}

    def submit(self, argv: list[str], **options) -> dict:
        """client.submit(argv, **options), remembered; returns the job record."""
        rec = self.client.submit(argv, **options)
        job_id = int(rec["id"])
        self.ids.append(job_id)
        self.records[job_id] = rec
        return rec

    def unfinished(self) -> list[int]:
        """The jobs not seen finished yet, in submit order."""
        return [i for i in self.ids if not ended(self.records[i])]

    def poll(self, timeout_s: float = POLL_S) -> list[dict]:
        """Wait up to timeout_s for the unfinished jobs; their records as they are now (those that
        ended among them: `ended(rec)`), in submit order. Nothing to wait for: []."""
        ids = self.unfinished()
        if not ids:
            return []
        records = self.client.wait(ids, timeout_s=timeout_s)
        for rec in records:
            self.records[int(rec["id"])] = rec
        return records

    def kill(self, quiet: bool = False) -> list[int]:
        """Kill the unfinished jobs; returns their ids. quiet: best effort, a master that cannot be
        reached is not an error (it ends a parent's sub-tasks anyway when the parent ends)."""
        ids = self.unfinished()
        if not ids:
            return []
        try:
            self.client.kill(ids)
        except (StatgridError, OSError):
            if not quiet:
                raise
        return ids

    def wait_all(self, poll_s: float = POLL_S, on_end: Callable[[dict], None] | None = None,
                 stop_on_failure: bool = True) -> list[dict]:
        """Wait until every job has ended; their records in submit order. on_end(record) is called
        once for each job as it ends (an exception from it stops the wait: under guard(), the
        unfinished ones are then killed). stop_on_failure: once one ended other than DONE, kill
        the unfinished ones and wait for them to end (jobs that wait for each other, as iobench's
        at its barrier, would otherwise wait for one that will not come)."""
        reported: set[int] = set()
        while True:
            for job_id in self.ids:            # those that ended at submit too
                rec = self.records[job_id]
                if ended(rec) and job_id not in reported:
                    reported.add(job_id)
                    if on_end is not None:
                        on_end(rec)
            if not self.unfinished():
                break
            if stop_on_failure and any(self.records[i]["state"] in (JobState.EXIT, JobState.KILLED) for i in self.ids):
                self.kill()
                for rec in self.client.wait(self.ids):
                    self.records[int(rec["id"])] = rec
                break
            self.poll(poll_s)
        return [self.records[i] for i in self.ids]

    def wait_each(self, timeout_s: float | None = None, kill_wait_s: float = 60.0) -> Iterator[tuple[dict, bool]]:
        """Wait for each job in turn, in submit order, all within timeout_s (None: no limit);
        yield (its record, timed_out) as each ends. One still unfinished at the deadline is
        killed and waited for kill_wait_s more (timed_out True)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for job_id in list(self.ids):
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            rec = self.client.wait([job_id], timeout_s=left)[0]
            timed_out = not ended(rec)
            if timed_out:
                self.client.kill([job_id])
                rec = self.client.wait([job_id], timeout_s=kill_wait_s)[0]
            self.records[job_id] = rec
            yield rec, timed_out

    @contextlib.contextmanager
    def guard(self, spare: tuple[type[BaseException], ...] = (), quiet: bool = False) -> Iterator[Batch]:
        """Within: an exception (Ctrl-C included) kills the unfinished jobs, then goes on. spare:
        exceptions after which they are left alone (a parent job that the master terminates: the
        master ends its sub-tasks too); quiet: as kill()'s."""
        try:
            yield self
        except BaseException as exc:
            if not isinstance(exc, spare):
                self.kill(quiet=quiet)
            raise
