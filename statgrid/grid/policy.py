"""Dispatch policy: which pending job goes to which host now. Pure: no I/O, no clock.

LSF's rules as configured in the papers (seed 000, "Platform LSF configuration"):
- jobs in order of queue PRIORITY (higher first), then submit order (FIFO within a queue);
- a job only goes to a host of its queue's HOSTS list, open, up, with a free slot (MXJ);
- among those, the highest preference weight (`node1+1 others+2` prefers the others), then the
  host with the fewest running jobs, then the host that started a job least recently, then the
  host's order in grid.toml. Without the "least recently" rule a lightly loaded grid (every host
  idle at each submit) sends every job to the first host in grid.toml (issue 14, item 7: 34 of 36
  demo jobs on node1); with it, ties rotate over the hosts. "Recently" is a dispatch sequence
  number kept by the dispatcher and passed in as data (`HostView.last_start`), so plan() stays
  pure and its result does not depend on the clock;
- a queue's user_limit caps one user's running jobs in that queue;
- a job that cannot start now does not hold back later jobs that can (as LSF does).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from statgrid.config import HostConfig, QueueConfig
from statgrid.grid.model import Job


# `statgrid hosts` states of a host that is up and open (full or not): it can take a job once a slot frees.
RUNNABLE_STATES = ("ok", "closed_Full")


@dataclass
class HostView:
    """A host as the dispatcher sees it: configured slots and what runs there now.

    running: jobs running there now.
    last_start: the dispatcher's sequence number of the latest job started there (0 = none yet);
        larger means more recent. plan() raises it as it places jobs.
    """

    name: str
    slots: int
    open: bool
    up: bool
    running: int = 0
    last_start: int = 0

    @property
    def free(self) -> int:
        return self.slots - self.running if self.open and self.up else 0

    @property
    def state(self) -> str:
        """LSF bhosts-like: ok, closed (by config or full), unavail (no worker)."""
        if not self.up:
            return "unavail"
        if not self.open:
            return "closed_Adm"
        return "closed_Full" if self.running >= self.slots else "ok"


def host_weights(queue: QueueConfig, host_names: Iterable[str]) -> dict[str, int]:
    """Queue HOSTS list → {host: weight} for the hosts the queue may use.
    'all' admits every host at its weight; 'others' every host not named explicitly."""
    names = list(host_names)
    named = {p.host: p.weight for p in queue.hosts if p.host not in ("all", "others")}
    weights: dict[str, int] = {}
    for pref in queue.hosts:
        if pref.host == "all":
            for h in names:
                weights.setdefault(h, pref.weight)
        elif pref.host == "others":
            for h in names:
                if h not in named:
                    weights.setdefault(h, pref.weight)
    weights.update({h: w for h, w in named.items() if h in names})
    return weights


def host_views(hosts: Mapping[str, HostConfig], up: Iterable[str], running: Mapping[str, int],
               last_start: Mapping[str, int] | None = None, closed: Iterable[str] = ()) -> dict[str, HostView]:
    """`closed`: hosts an administrator closed (`statgrid host close`), on top of grid.toml's open = false."""
    up, closed = set(up), set(closed)
    last_start = last_start or {}
    return {name: HostView(name, h.slots, h.open and name not in closed, name in up, running.get(name, 0),
                           last_start.get(name, 0))
            for name, h in hosts.items()}


def plan(pending: Iterable[Job], hosts: Mapping[str, HostView], queues: Mapping[str, QueueConfig],
         running_by_user: Mapping[tuple[str, str], int]) -> list[tuple[Job, str]]:
    """Return [(job, host)] to start now. `hosts` is updated in place as slots are taken (`running`
    and `last_start`: the dispatcher keeps the latter for its next call); `running_by_user` maps
    (queue, user) → running jobs."""
    order = {name: i for i, name in enumerate(hosts)}
    seq = max((h.last_start for h in hosts.values()), default=0)
    weights = {q: host_weights(cfg, hosts) for q, cfg in queues.items()}
    per_user = dict(running_by_user)
    ordered = sorted(pending, key=lambda j: (-queues[j.queue].priority if j.queue in queues else 0,
                                             j.submit_ts, j.id))
    chosen: list[tuple[Job, str]] = []
    for job in ordered:
        if not any(h.free > 0 for h in hosts.values()):
            break
        queue = queues.get(job.queue)
        if queue is None:
            continue
        if queue.user_limit and per_user.get((job.queue, job.user), 0) >= queue.user_limit:
            continue
        allowed = weights[job.queue]
        if job.requested_hosts:                  # bsub -m: only these, still within the queue's list
            allowed = {h: w for h, w in allowed.items() if h in job.requested_hosts}
        candidates = [(w, hosts[h]) for h, w in allowed.items() if hosts[h].free > 0]
        if not candidates:
            continue
        _, host = min(candidates, key=lambda c: (-c[0], c[1].running, c[1].last_start, order[c[1].name]))
        seq += 1
        host.running += 1
        host.last_start = seq
        per_user[(job.queue, job.user)] = per_user.get((job.queue, job.user), 0) + 1
        chosen.append((job, host.name))
    return chosen
