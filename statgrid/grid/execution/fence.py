"""Fencing: when the jobs of a node cut off from the grid may be given to other hosts.

A node and the master count the same silence, each on its own monotonic clock; only durations
cross machines, no two clocks are ever compared:

- The node (node.py, "fencing") asks the scheduler every second whether its worker is still a
  member of the grid (engine.GridEvents' contact handler). Its last contact is the moment it SENT
  the last question answered "member". It kills every job it runs once `fence_grace` has passed
  since then, and at once when the answer is "not a member" or its worker closes (a worker the
  engine dropped never gets its tasks back).
- The scheduler keeps the moment it RECEIVED each such question: its last contact with the node,
  never earlier than the node's own. Every host event says how long ago that was
  (HostEvent.silent_s), and the master puts the last contact at its own clock's reading when the
  event arrived minus that: later still. It gives the node's jobs away only FENCE_MARGIN_S after
  `fence_grace` has run from there — whenever and for whatever reason the engine itself dropped
  the worker (its TCP timeouts, worker-ttl, a closed connection) — unless the node reports first:
  a node in contact again keeps what it still runs, and an attempt it recorded as ended (fenced,
  finished) is settled as it says.

So the node's count starts no later than the master's and ends FENCE_MARGIN_S sooner: the node's
check every FENCE_CHECK_S and its SIGKILL fit well inside the margin. (One gap is bounded by the
margin, not closed: a worker cut off between its registration and its first answered question
counts from its start, a network latency after the scheduler registered it.)
"""
from __future__ import annotations

import asyncio
import dataclasses
import math
from typing import Callable

FENCE_MARGIN_S = 10.0           # the master gives a silent node's jobs away this long after the node fenced them
FENCE_PROBE_S = 1.0             # the node asks the scheduler this often whether it is still a member
FENCE_PROBE_TIMEOUT_S = 3.0     # a question not answered within this counts as no answer
FENCE_CHECK_S = 0.2             # the node checks its grace this often (its fence fires at most this late)
ENGINE_TIMEOUT_SLACK_S = 10.0   # Dask's own TCP timeout ends this long after the master's deadline
CONTACT_HANDLER = "statgrid_contact"   # the scheduler's handler the node's question goes to


def engine_tcp_timeout_s(fence_grace_s: float, configured_s: float) -> int:
    """Dask's TCP timeout (distributed.comm.timeouts.tcp: a connection without an answer this long is
    dead, and the worker on it dropped) for the engines statgrid runs: never below the master's own
    deadline plus a slack, so a link back before the fence costs no job; a longer one configured
    stays. (Correctness does not rest on it: the master waits for its own deadline whatever Dask
    does; this is for availability.)"""
    return int(math.ceil(max(configured_s, fence_grace_s + FENCE_MARGIN_S + ENGINE_TIMEOUT_SLACK_S)))


@dataclasses.dataclass
class Silence:
    """A host the master has lost contact with."""
    since_s: float                              # the master's loop clock (monotonic, s) at its last contact, at the latest
    jobs: set[tuple[int, int]]                  # (job id, attempt) it ran then: settled at the deadline
    timer: asyncio.TimerHandle | None = None


class Silences:
    """host → its Silence, while the master has no contact with it. The deadline (since_s + grace +
    FENCE_MARGIN_S) calls `on_due(host, silence)` once, unless `found(host)` came first."""

    def __init__(self, fence_grace_s: float, on_due: Callable[[str, Silence], None]):
        self.fence_grace_s = fence_grace_s
        self.on_due = on_due
        self.hosts: dict[str, Silence] = {}

    def lost(self, host: str, silent_s: float, jobs: set[tuple[int, int]]) -> Silence:
        """The host has been silent for silent_s seconds (as the scheduler counts it, from its last
        contact) as of now. A later report of the same silence never moves its start later."""
        loop = asyncio.get_running_loop()
        since = loop.time() - max(0.0, silent_s)
        silence = self.hosts.get(host)
        if silence is None:
            silence = self.hosts[host] = Silence(since_s=since, jobs=set(jobs))
        else:
            silence.jobs |= jobs
            if since >= silence.since_s:
                return silence
            silence.since_s = since
        if silence.timer is not None:
            silence.timer.cancel()
        silence.timer = loop.call_at(self.deadline(silence), self._due, host, silence)
        return silence

    def deadline(self, silence: Silence) -> float:
        return silence.since_s + self.fence_grace_s + FENCE_MARGIN_S

    def found(self, host: str) -> Silence | None:
        """The host is in contact again: no deadline for it. Returns the silence that ended."""
        silence = self.hosts.pop(host, None)
        if silence is not None and silence.timer is not None:
            silence.timer.cancel()
        return silence

    def silent_for_s(self, host: str) -> float | None:
        silence = self.hosts.get(host)
        return None if silence is None else asyncio.get_running_loop().time() - silence.since_s

    def _due(self, host: str, silence: Silence) -> None:
        if self.hosts.get(host) is silence:
            del self.hosts[host]
            self.on_due(host, silence)
