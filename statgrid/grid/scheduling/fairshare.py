"""Fairshare: who owns a share of a queue, their dynamic priority, and usage that decays.

As LSF's queue-level fairshare (lsb.queues FAIRSHARE = USER_SHARES[[groupA, 40] [groupB, 60]
[default, 1]]): a queue's `fairshare` table gives shares to users and to [groups]. A group's share
is the group's as a whole (its members' running jobs and usage add up); inside the group every
member has an equal share. A user named directly takes that entry, before any group; "default"
gives every other user a share of their own. A user with no entry and no default has no share:
their jobs wait in that queue (policy.py says why).

Dynamic priority, as LSF's (lsb.params), with CPU time and committed run time left out:

    priority = shares / (1 + RUN_JOB_FACTOR × running jobs + RUN_TIME_FACTOR × decayed slot-hours)

Decayed usage: every slot-second a job of the queue ran, halved every `half_life_s` (LSF's
HIST_HOURS, Slurm's PriorityDecayHalfLife). The master keeps one (usage, as-of time) pair per
queue and user in the store (kept across restarts) and adds each job's run time when it ends;
jobs still running count with their run time so far. Pure functions: the caller passes "now".
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

from statgrid.config import QueueConfig, SchedulingConfig

DEFAULT = "default"


@dataclass(frozen=True)
class Entity:
    """Who holds a share of a queue: a user ("user") or a group of [groups] ("group")."""

    kind: str
    name: str
    shares: int

    @property
    def label(self) -> str:
        return self.name if self.kind == "user" else f"group {self.name}"


def entity_of(queue: QueueConfig, user: str, groups: Mapping[str, tuple[str, ...]]) -> Entity | None:
    """The share `user`'s jobs in `queue` count against; None: the queue has fairshare and the user
    no share in it. (A queue without fairshare: every user their own entity, one share.)"""
    if not queue.fairshare:
        return Entity("user", user, 1)
    default = None
    for name, shares in queue.fairshare:
        if name == user and name not in groups:
            return Entity("user", user, shares)
        if name == DEFAULT:
            default = shares
    for name, shares in queue.fairshare:
        if name in groups and user in groups[name]:
            return Entity("group", name, shares)
    return None if default is None else Entity("user", user, default)


def priority(shares: float, running: int, usage_s: float, sched: SchedulingConfig) -> float:
    """LSF's dynamic priority (see the module's docstring). usage_s: decayed slot-seconds."""
    return shares / (1.0 + sched.run_job_factor * running + sched.run_time_factor * usage_s / 3600.0)


def decayed(usage_s: float, as_of_ts: float, now_ts: float, half_life_s: float) -> float:
    """usage_s recorded at as_of_ts, as it stands at now_ts (halved every half_life_s)."""
    if now_ts <= as_of_ts:
        return usage_s
    return usage_s * math.pow(0.5, (now_ts - as_of_ts) / half_life_s)


@dataclass
class ShareRow:
    """One line of `statgrid shares`: an entity of a queue, or a member of a group entity.

    shares: its shares (a member: its group's, shown for reference); running: jobs running now;
    usage_h: decayed usage in slot-hours (running jobs' time so far included); priority: the
    dynamic priority (a member: its priority among the group's members, equal shares)."""

    queue: str
    kind: str                 # "user", "group" or "member"
    name: str
    group: str | None
    shares: int
    running: int
    pending: int
    usage_h: float
    priority: float

    def to_dict(self) -> dict:
        return {"queue": self.queue, "kind": self.kind, "name": self.name, "group": self.group,
                "shares": self.shares, "running": self.running, "pending": self.pending,
                "usage_h": round(self.usage_h, 4), "priority": round(self.priority, 6)}


def share_rows(queue: QueueConfig, users: set[str], running: Mapping[tuple[str, str], int],
               pending: Mapping[tuple[str, str], int], usage: Mapping[tuple[str, str], float],
               groups: Mapping[str, tuple[str, ...]], sched: SchedulingConfig) -> list[ShareRow]:
    """The queue's entities with their figures, highest priority first; a group's members follow it.
    `users`: every user to show (with jobs or usage in the queue, and those named in the table)."""
    q = queue.name
    entities: dict[tuple[str, str], tuple[Entity, list[str]]] = {}
    for name, _ in queue.fairshare:
        if name in groups:
            entity = Entity("group", name, dict(queue.fairshare)[name])
            entities[("group", name)] = (entity, [])
    for user in sorted(users):
        entity = entity_of(queue, user, groups)
        if entity is None:
            continue
        entities.setdefault((entity.kind, entity.name), (entity, []))[1].append(user)
    rows: list[tuple[ShareRow, list[ShareRow]]] = []
    for entity, members in entities.values():
        run = sum(running.get((q, m), 0) for m in members)
        pend = sum(pending.get((q, m), 0) for m in members)
        used = sum(usage.get((q, m), 0.0) for m in members)
        row = ShareRow(q, entity.kind, entity.name, None, entity.shares, run, pend, used / 3600.0,
                       priority(entity.shares, run, used, sched))
        subs = [] if entity.kind == "user" else sorted(
            (ShareRow(q, "member", m, entity.name, entity.shares, running.get((q, m), 0), pending.get((q, m), 0),
                      usage.get((q, m), 0.0) / 3600.0,
                      priority(1, running.get((q, m), 0), usage.get((q, m), 0.0), sched)) for m in members),
            key=lambda r: (-r.priority, r.name))
        rows.append((row, subs))
    rows.sort(key=lambda pair: (-pair[0].priority, pair[0].name))
    return [r for row, subs in rows for r in (row, *subs)]


class UsageBook:
    """Each (queue, user)'s decayed usage: slot-seconds as of a time. The master's copy of the
    store's `usage` table (it writes each charge through); pure arithmetic, the caller passes now."""

    def __init__(self, rows: Mapping[tuple[str, str], tuple[float, float]], half_life_s: float):
        self.rows = dict(rows)
        self.half_life_s = half_life_s

    def charge(self, queue: str, user: str, slot_s: float, now_ts: float) -> tuple[float, float]:
        """Add a finished job's run time; returns the (usage_s, as_of_ts) to store."""
        usage_s, as_of_ts = self.rows.get((queue, user), (0.0, now_ts))
        row = (decayed(usage_s, as_of_ts, now_ts, self.half_life_s) + max(0.0, slot_s), now_ts)
        self.rows[(queue, user)] = row
        return row

    def at(self, now_ts: float, running: Iterable | None = None) -> dict[tuple[str, str], float]:
        """Usage as of now_ts, in slot-seconds; `running`: jobs running now (model.Job), whose run
        time so far counts too (not decayed: it is recent)."""
        out = {key: decayed(u, ts, now_ts, self.half_life_s) for key, (u, ts) in self.rows.items()}
        for job in running or ():
            if job.start_ts is not None:
                key = (job.queue, job.user)
                out[key] = out.get(key, 0.0) + run_so_far_s(job, now_ts)
        return out


def run_so_far_s(job, now_ts: float) -> float:
    """Wall time a job has run, suspensions left out (model.Job: start_ts, suspended_s, suspend_ts)."""
    if job.start_ts is None:
        return 0.0
    end = job.end_ts if job.end_ts is not None else now_ts
    paused = job.suspended_s + (max(0.0, end - job.suspend_ts) if job.suspend_ts is not None else 0.0)
    return max(0.0, end - job.start_ts - paused)
