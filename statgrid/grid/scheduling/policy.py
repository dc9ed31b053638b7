"""Dispatch policy: which pending job goes to which host now, and why every other job waits.
Pure: no I/O, no clock (the master passes what it knows, "now" included, as data).

LSF's rules as configured in the papers (seed 000, "Platform LSF configuration"), and issue 18's:
- queues in order of PRIORITY (higher first);
- inside a queue with `fairshare`, the user (or group of users) with the highest dynamic priority
  goes first (fairshare.py: shares over running jobs and decayed usage), recomputed after every
  job placed; inside a queue without it, first come, first served. A user's own jobs go in their
  order: job priority (`modify --priority`), then position (submit order; `top`/`bottom` move it);
- running limits: a queue's user_limit (one user, UJOB_LIMIT), job_limit (the queue, QJOB_LIMIT)
  and host_limit (the queue per host, HJOB_LIMIT); [limits] per user and per group over all
  queues (lsb.users MAX_JOBS); an array's throttle (`-J "a[1-100]%10"`);
- a job only goes to a host of its queue's HOSTS list (and of its -m list), open, up, not busy
  (its load over max_load, LSF's load thresholds: closed_Busy), with a free slot (MXJ) and, where
  the host declares memory, enough memory left for the job's reservation;
- among those, the highest preference weight (`node1+1 others+2` prefers the others), then the
  host with the fewest running jobs, then the host that started a job least recently, then the
  host's order in grid.toml ("recently" is a dispatch sequence number passed in as data,
  `HostView.last_start`, so plan() stays pure: issue 14, item 7);
- a job that cannot start now does not hold back later jobs that can (as LSF does).

Every pending job the plan does not start gets a reason (`Plan.reason`), LSF's bjobs -p: from the
job itself (memory, requested hosts, array throttle), else from its user in its queue (limits,
no share, lower fairshare priority), else from its queue (no free slot, job limit, no open host).
A job held by a dependency is not in the backlog; the master says why it waits.

Cost: the master keeps the backlog as sorted lists per queue and user, so a dispatch costs about
(users with pending jobs × jobs placed + jobs examined + hosts), not a sort of every pending job
(benchmarks/scheduling.py: 10,000 pending jobs of 50 users).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from statgrid.config import HostConfig, LimitsConfig, QueueConfig, SchedulingConfig, format_size
from statgrid.grid.scheduling import fairshare
from statgrid.job.record import Job

# `statgrid hosts` states of a host that is up and open (full or not): it can take a job once a slot frees.
RUNNABLE_STATES = ("ok", "closed_Full", "closed_Busy")
HOSTS_SHOWN = 6                          # hosts named in a reason; the rest are counted


@dataclass
class HostView:
    """A host as the dispatcher sees it: configured slots and what runs there now.

    running: jobs running there now.
    last_start: the dispatcher's sequence number of the latest job started there (0 = none yet);
        larger means more recent. plan() raises it as it places jobs.
    memory_bytes: memory its jobs may reserve together (0: not tracked); reserved_bytes: what the
        jobs running there reserved. load_1m: the monitor's latest 1-minute load average (None:
        unknown); max_load: the threshold over which the host takes no new job (0: none).
    """

    name: str
    slots: int
    open: bool
    up: bool
    running: int = 0
    last_start: int = 0
    memory_bytes: int = 0
    reserved_bytes: int = 0
    load_1m: float | None = None
    max_load: float = 0.0

    @property
    def busy(self) -> bool:
        return self.max_load > 0 and self.load_1m is not None and self.load_1m > self.max_load

    @property
    def free(self) -> int:
        return self.slots - self.running if self.open and self.up and not self.busy else 0

    @property
    def free_memory_bytes(self) -> float:
        return float("inf") if not self.memory_bytes else self.memory_bytes - self.reserved_bytes

    @property
    def state(self) -> str:
        """LSF bhosts-like: ok, closed (by an administrator, full, or busy), unavail (no worker)."""
        if not self.up:
            return "unavail"
        if not self.open:
            return "closed_Adm"
        if self.running >= self.slots:
            return "closed_Full"
        return "closed_Busy" if self.busy else "ok"

    def describe(self) -> str:
        """The host in a pending reason: 'node1 2/2', 'node2 closed_Adm', 'node3 busy (load 5.1 > 4)'."""
        state = self.state
        if state == "closed_Busy":
            return f"{self.name} busy (load {self.load_1m:g} > {self.max_load:g})"
        if state in ("ok", "closed_Full"):
            mem = "" if not self.memory_bytes else f", {format_size(max(0, int(self.free_memory_bytes)))} free"
            return f"{self.name} {self.running}/{self.slots}{mem}"
        return f"{self.name} {state}"


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
               last_start: Mapping[str, int] | None = None, closed: Iterable[str] = (),
               reserved: Mapping[str, int] | None = None, loads: Mapping[str, float] | None = None,
               worker_slots: Mapping[str, int] | None = None) -> dict[str, HostView]:
    """`closed`: hosts an administrator closed (`statgrid host close`), on top of grid.toml's open = false.
    `reserved`: host → memory reserved by its running jobs; `loads`: host → 1-minute load average.
    `worker_slots`: host → its worker's threads, the slots of a host that sets none (0 until its worker joined)."""
    up, closed = set(up), set(closed)
    last_start, reserved, loads, worker_slots = last_start or {}, reserved or {}, loads or {}, worker_slots or {}
    return {name: HostView(name, h.slots if h.slots is not None else worker_slots.get(name, 0),
                           h.open and name not in closed, name in up, running.get(name, 0),
                           last_start.get(name, 0), h.memory_bytes, reserved.get(name, 0), loads.get(name),
                           h.max_load)
            for name, h in hosts.items()}


def job_key(job: Job) -> tuple:
    """A user's jobs in a queue go in this order: job priority (higher first), position, id."""
    return (-job.priority, job.position, job.id)


@dataclass
class Running:
    """Running jobs counted the ways the limits need. Keys: (queue, user), user, group, queue,
    (queue, host), flow (an array's id)."""

    queue_user: dict[tuple[str, str], int] = field(default_factory=dict)
    user: dict[str, int] = field(default_factory=dict)
    group: dict[str, int] = field(default_factory=dict)
    queue: dict[str, int] = field(default_factory=dict)
    queue_host: dict[tuple[str, str], int] = field(default_factory=dict)
    flow: dict[int, int] = field(default_factory=dict)

    def _keys(self, job: Job, host: str, of_user):
        """(counter, key) for every count a job running on `host` takes part in."""
        return ((self.queue_user, (job.queue, job.user)), (self.user, job.user),
                (self.queue, job.queue), (self.queue_host, (job.queue, host)),
                *((self.group, g) for g in of_user(job.user)),
                *(((self.flow, job.flow_id),) if job.flow_id is not None else ()))

    def add(self, job: Job, host: str, of_user) -> None:
        """Count a job that started on `host`; of_user: user → its groups (groups_of(limits.groups))."""
        for counter, key in self._keys(job, host, of_user):
            counter[key] = counter.get(key, 0) + 1

    def remove(self, job: Job, host: str, of_user) -> None:
        """Undo add() for a job that ended on `host` (a count that reaches 0 is dropped, as if never added).
        Raises ValueError for a job these counts do not hold, leaving them unchanged."""
        keys = self._keys(job, host, of_user)
        missing = [key for counter, key in keys if counter.get(key, 0) < 1]
        if missing:
            raise ValueError(f"job {job.id} on {host!r} is not counted as running ({missing[0]!r} has no job)")
        for counter, key in keys:
            counter[key] -= 1
            if not counter[key]:
                del counter[key]

    def copy(self) -> "Running":
        return Running(dict(self.queue_user), dict(self.user), dict(self.group), dict(self.queue),
                       dict(self.queue_host), dict(self.flow))


def count_running(jobs: Iterable[Job], groups: Mapping[str, tuple[str, ...]]) -> Running:
    """The counts of the jobs running now (each on its job.host)."""
    of_user = groups_of(groups)
    running = Running()
    for job in jobs:
        running.add(job, job.host, of_user)
    return running


def backlog_of(jobs: Iterable[Job]) -> dict[str, dict[str, list[Job]]]:
    """queue → user → that user's pending jobs in order (job_key): what plan() takes. The master
    keeps this structure up to date as jobs come and go; tests build it with this."""
    out: dict[str, dict[str, list[Job]]] = {}
    for job in jobs:
        out.setdefault(job.queue, {}).setdefault(job.user, []).append(job)
    for users in out.values():
        for jobs_ in users.values():
            jobs_.sort(key=job_key)
    return out


@dataclass
class Plan:
    """What plan() decided: the jobs to start now (job, host), and why each other job waits.
    reason(job) looks up the most specific: the job's own, its array's, its user's in its queue,
    its queue's."""

    starts: list[tuple[Job, str]] = field(default_factory=list)
    job_reasons: dict[int, str] = field(default_factory=dict)
    flow_reasons: dict[int, str] = field(default_factory=dict)
    user_reasons: dict[tuple[str, str], str] = field(default_factory=dict)
    queue_reasons: dict[str, str] = field(default_factory=dict)

    def reason(self, job: Job) -> str:
        return (self.job_reasons.get(job.id) or (self.flow_reasons.get(job.flow_id) if job.flow_id is not None
                                                 else None)
                or self.user_reasons.get((job.queue, job.user)) or self.queue_reasons.get(job.queue)
                or "waiting for the next dispatch")


@dataclass(frozen=True)
class Limits:
    """Everything besides queues and hosts that plan() obeys: [groups], [limits], [scheduling]; each
    array's throttle (flow id → running jobs at most); decayed usage per (queue, user) in slot-seconds
    as of now, running jobs' time so far included."""

    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    limits: LimitsConfig = LimitsConfig()
    scheduling: SchedulingConfig = SchedulingConfig()
    throttles: Mapping[int, int] = field(default_factory=dict)
    usage: Mapping[tuple[str, str], float] = field(default_factory=dict)


def groups_of(groups: Mapping[str, tuple[str, ...]]):
    """user → the groups (of [groups]: group → members) the user belongs to, as a function (cached per user):
    the `groups_of` that Running.add and Running.remove take."""
    cache: dict[str, tuple[str, ...]] = {}

    def of(user: str) -> tuple[str, ...]:
        hit = cache.get(user)
        if hit is None:
            hit = cache[user] = tuple(g for g, members in groups.items() if user in members)
        return hit
    return of


def plan(backlog: Mapping[str, Mapping[str, Sequence[Job]]], hosts: Mapping[str, HostView],
         queues: Mapping[str, QueueConfig], running: Running, limits: Limits = Limits()) -> Plan:
    """Decide the starts of this dispatch and every waiting job's reason.

    backlog: queue → user → pending jobs in job_key order (backlog_of), only jobs whose
    dependencies are met. hosts: updated in place as slots are taken (`running`, `reserved_bytes`,
    `last_start`: the dispatcher keeps the latter for its next call). running: not changed."""
    out = Plan()
    counts = running.copy()
    of_user = groups_of(limits.groups)
    order = {name: i for i, name in enumerate(hosts)}
    seq = [max((h.last_start for h in hosts.values()), default=0)]
    user_caps = dict(limits.limits.users)
    group_caps = dict(limits.limits.groups)

    def place(job: Job, host: HostView) -> None:
        seq[0] += 1
        host.running += 1
        host.reserved_bytes += job.mem_bytes
        host.last_start = seq[0]
        counts.add(job, host.name, of_user)
        out.starts.append((job, host.name))

    for qname in sorted(backlog, key=lambda q: (-queues[q].priority if q in queues else 0, q)):
        users = {u: jobs for u, jobs in backlog[qname].items() if jobs}
        if not users:
            continue
        queue = queues.get(qname)
        if queue is None:
            out.queue_reasons[qname] = (f"queue {qname!r} is no longer in grid.toml: the job cannot start; kill it, "
                                        "or move it to another queue (`statgrid modify ID -q QUEUE`)")
            continue
        weights = host_weights(queue, hosts)

        def usable(h: HostView) -> bool:
            return h.free > 0 and not (queue.host_limit and counts.queue_host.get((qname, h.name), 0)
                                       >= queue.host_limit)

        def queue_block() -> str | None:
            if queue.job_limit and counts.queue.get(qname, 0) >= queue.job_limit:
                return (f"queue {qname}'s job limit reached: {counts.queue.get(qname, 0)} running "
                        f"(job_limit = {queue.job_limit})")
            if any(usable(hosts[h]) for h in weights):
                return None
            return f"no free slot on queue {qname}'s hosts: " + _hosts_text(
                [hosts[h] for h in weights], qname, queue.host_limit, counts)

        entities: dict[str, fairshare.Entity | None] = {u: fairshare.entity_of(queue, u, limits.groups)
                                                        for u in users}
        # Each entity's running jobs and usage in this queue (a group's: its members' together).
        ent_running: dict[tuple[str, str], int] = {}
        ent_usage: dict[tuple[str, str], float] = {}
        if queue.fairshare:
            for (q, u), n in counts.queue_user.items():
                if q == qname:
                    e = fairshare.entity_of(queue, u, limits.groups)
                    if e is not None:
                        ent_running[(e.kind, e.name)] = ent_running.get((e.kind, e.name), 0) + n
            for (q, u), used in limits.usage.items():
                if q == qname:
                    e = fairshare.entity_of(queue, u, limits.groups)
                    if e is not None:
                        ent_usage[(e.kind, e.name)] = ent_usage.get((e.kind, e.name), 0.0) + used

        def user_priority(u: str) -> tuple[float, float]:
            """(its entity's dynamic priority, its own among a group's members); higher first."""
            e = entities[u]
            key = (e.kind, e.name)
            p = fairshare.priority(e.shares, ent_running.get(key, 0), ent_usage.get(key, 0.0), limits.scheduling)
            if e.kind == "user":
                return p, 0.0
            return p, fairshare.priority(1, counts.queue_user.get((qname, u), 0),
                                         limits.usage.get((qname, u), 0.0), limits.scheduling)

        def user_block(u: str) -> str | None:
            if entities[u] is None:
                return (f"{u} has no share in queue {qname}'s fairshare ({_shares_text(queue)}); ask a grid "
                        "administrator for one, or use another queue")
            n = counts.queue_user.get((qname, u), 0)
            if queue.user_limit and n >= queue.user_limit:
                return f"user limit of queue {qname} reached: {u} runs {n} there (user_limit = {queue.user_limit})"
            cap = user_caps.get(u, limits.limits.user_jobs)
            if cap and counts.user.get(u, 0) >= cap:
                where = f"users.{u}" if u in user_caps else "user_jobs"
                return f"{u}'s job limit reached: {counts.user.get(u, 0)} running in all queues ([limits] {where} = {cap})"
            for g in of_user(u):
                if group_caps.get(g) and counts.group.get(g, 0) >= group_caps[g]:
                    return (f"group {g}'s job limit reached: its members run {counts.group.get(g, 0)} "
                            f"([limits] groups.{g} = {group_caps[g]})")
            return None

        def select_key(u: str, head: Job) -> tuple:
            """Which user's next job goes first. A job's priority orders only its own user's jobs:
            across users, fairshare decides, else submit order (position) — a user cannot jump the
            queue with --priority."""
            if queue.fairshare:
                p, member = user_priority(u)
                return (-p, -member, head.position, head.id, u)
            return (head.position, head.id, u)

        pos = dict.fromkeys(users, 0)
        active = list(users)
        memory_short: int | None = None          # the smallest reservation no host could take this dispatch
        blocked = None
        while active:
            blocked = queue_block()
            if blocked:
                break
            best = second = None
            for u in list(active):
                why = user_block(u)
                if why:
                    out.user_reasons[(qname, u)] = why
                    active.remove(u)
                    continue
                key = select_key(u, users[u][pos[u]])
                if best is None or key < best[0]:
                    best, second = (key, u), best
                elif second is None or key < second[0]:
                    second = (key, u)
            if best is None:
                break
            u = best[1]
            jobs = users[u]
            while pos[u] < len(jobs):
                job = jobs[pos[u]]
                if second is not None and select_key(u, job) > second[0]:
                    break                          # another user's job comes first now
                pos[u] += 1
                if memory_short is not None and job.mem_bytes >= memory_short and not job.requested_hosts:
                    out.job_reasons[job.id] = _memory_text(job, [hosts[h] for h in weights if usable(hosts[h])])
                    continue
                throttle = limits.throttles.get(job.flow_id) if job.flow_id is not None else None
                if throttle and counts.flow.get(job.flow_id, 0) >= throttle:
                    out.flow_reasons[job.flow_id] = (f"array throttle: {counts.flow.get(job.flow_id, 0)} of array "
                                                     f"{job.flow_id}'s jobs run (at most {throttle} at once)")
                    continue
                allowed = weights
                if job.requested_hosts:            # bsub -m: only these, still within the queue's list
                    allowed = {h: w for h, w in weights.items() if h in job.requested_hosts}
                slots = [hosts[h] for h in allowed if usable(hosts[h])]
                fits = [h for h in slots if h.free_memory_bytes >= job.mem_bytes]
                if not fits:
                    if not slots:
                        out.job_reasons[job.id] = ("no free slot on the requested host(s): "
                                                   + _hosts_text([hosts[h] for h in allowed], qname, queue.host_limit,
                                                                 counts))
                    else:
                        out.job_reasons[job.id] = _memory_text(job, slots)
                        if not job.requested_hosts:
                            memory_short = job.mem_bytes if memory_short is None else min(memory_short, job.mem_bytes)
                    continue
                host = min(fits, key=lambda h: (-allowed[h.name], h.running, h.last_start, order[h.name]))
                place(job, host)
                if queue.fairshare:
                    e = entities[u]
                    ent_running[(e.kind, e.name)] = ent_running.get((e.kind, e.name), 0) + 1
                break
            if pos[u] >= len(jobs):
                active.remove(u)
        if blocked:
            out.queue_reasons[qname] = blocked
            if queue.fairshare and active:
                _rank_reasons(out, qname, active, user_priority, entities)
    return out


def _rank_reasons(out: Plan, qname: str, waiting: list[str], user_priority, entities) -> None:
    """Users still waiting in a full fairshare queue: the first in line waits for a slot; every other
    user for a lower fairshare priority (LSF's bjobs -p reason)."""
    ranked = sorted(waiting, key=lambda u: (tuple(-p for p in user_priority(u)), u))
    first = ranked[0]
    p_first = user_priority(first)[0]
    for u in ranked[1:]:
        p = user_priority(u)[0]
        if entities[u] == entities[first]:
            mine = user_priority(u)[1]
            out.user_reasons[(qname, u)] = (f"lower fairshare priority within {entities[u].label} "
                                            f"({mine:.3g} < {first}'s {user_priority(first)[1]:.3g}); "
                                            + out.queue_reasons[qname])
        else:
            out.user_reasons[(qname, u)] = (f"lower fairshare priority: {entities[u].label} {p:.3g} < "
                                            f"{entities[first].label} {p_first:.3g}, next in line; "
                                            + out.queue_reasons[qname])


def _hosts_text(views: list[HostView], qname: str, host_limit: int, counts: Running) -> str:
    parts = []
    for h in views[:HOSTS_SHOWN]:
        text = h.describe()
        if h.free > 0 and host_limit and counts.queue_host.get((qname, h.name), 0) >= host_limit:
            text += f" (host_limit = {host_limit} of queue {qname} reached)"
        parts.append(text)
    more = len(views) - HOSTS_SHOWN
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "") if parts else "the queue has no host"


def _memory_text(job: Job, slots: list[HostView]) -> str:
    if not slots:
        return "no free slot with enough memory on the queue's hosts"
    most = max(slots, key=lambda h: h.free_memory_bytes)
    return (f"needs {format_size(job.mem_bytes)} of memory; the most free on a host with a free slot: "
            f"{format_size(max(0, int(most.free_memory_bytes)))} ({most.name})")


def _shares_text(queue: QueueConfig) -> str:
    return ", ".join(f"{n} = {s}" for n, s in queue.fairshare)
