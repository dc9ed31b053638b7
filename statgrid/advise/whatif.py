"""What-if: replay a workload's measured jobs on a simulated grid of another shape (issue 29 item 4).

An event-driven fluid model, no clock and no sleeping: the simulated time jumps from one event (a
session logging on, a job ending) to the next, and between two events every running job progresses
at a constant rate, recomputed at each event.

- A job needs `cpu_s` seconds of CPU and `io_bytes` bytes through the storage, done together (a job
  that needs both advances as fast as the scarcer of the two lets it: its progress rate, in job
  fractions per second, is min(CPU it gets / cpu_s, bytes/s it gets / io_bytes)). It can use at most
  `threads` cores at once. `launch_s` is the part of a job's time that needs neither (process start,
  dispatch): it passes first, holding the slot.
- The jobs running on a node share its cores, max-min fair (a job that wants less than an equal share
  keeps what it wants; the others split the rest), as a CPU scheduler does for runnable processes.
  Nodes that are one machine's CPUs shared (`GridShape.shared_cores`: an embedded grid without its
  own CPUs per node) share one pool of that many cores instead.
- Every running job shares the storage's bytes/s (`mbps`, in 10⁶ bytes/s), max-min fair too. A job
  short of I/O uses less CPU, which the others on its node then get; the two fillings alternate until
  nothing changes (the demands only fall, so this ends).
- Which job starts where and when is decided by the grid's own policy: the pure `plan()` of
  grid/scheduling/policy.py, called as the master calls it (after every submit and every job end:
  event-driven dispatch), with HostView and Job records built from the simulated state.
- Sessions behave as `bench mixed` drives them: a session logs on at its ramp offset and keeps up to
  `concurrency` of its jobs in the grid, submitting the next one `resubmit_s` after one ends.

Returned (Replay): the makespan (the workload clock, from the first session's start to the last job's
end), and per node its jobs, its busy core-seconds and bytes moved.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from statgrid.config import QueueConfig
from statgrid.config.records import LimitsConfig, SchedulingConfig
from statgrid.errors import UsageError
from statgrid.grid.scheduling.policy import Limits, Running, backlog_of, groups_of, host_views, plan
from statgrid.config.records import HostConfig
from statgrid.job.record import Job, JobState

EPS = 1e-12
ROUNDS = 30            # CPU/storage fillings alternated at most per event (they settle in a few; 1e-9 apart)


@dataclass(frozen=True, slots=True)
class JobDemand:
    """What one job needs. cpu_s: CPU seconds (user + system); io_bytes: bytes through the storage;
    threads: cores it can use at once; memory_bytes: its peak memory; launch_s: seconds of its time
    that need neither CPU nor storage (start-up, dispatch); label: its template, for the reader."""

    cpu_s: float
    io_bytes: float = 0.0
    threads: float = 1.0
    memory_bytes: int = 0
    launch_s: float = 0.0
    label: str = ""


@dataclass(frozen=True, slots=True)
class SessionPlan:
    """One session: when it logs on (start_s, seconds after the workload's start) and its jobs in order."""

    start_s: float
    jobs: tuple[JobDemand, ...]
    user: str = "user"
    queue: str = "normal"


@dataclass(frozen=True)
class GridShape:
    """The simulated grid. nodes × slots (LSF MXJ); cores: CPUs of each node; mbps: the storage's
    sustained 10⁶ bytes/s shared by all (inf: not a limit); shared_cores: when set, the nodes are one
    machine and share that many cores between them (cores is then ignored); background_per_core: runnable
    threads of other work per core (the grid's own daemons, other users' processes), served with the jobs."""

    nodes: int
    slots: int
    cores: float
    mbps: float = math.inf
    shared_cores: float | None = None
    background_per_core: float = 0.0
    queues: Mapping[str, QueueConfig] = field(default_factory=lambda: {"normal": QueueConfig("normal")})
    limits: Limits = Limits()

    def __post_init__(self):
        for name, value in (("nodes", self.nodes), ("slots", self.slots)):
            if not isinstance(value, int) or value < 1:
                raise UsageError(f"what-if {name}={value!r} must be a whole number ≥ 1.")
        for name, value in (("cores", self.cores), ("mbps", self.mbps)):
            if not value > 0:
                raise UsageError(f"what-if {name}={value!r} must be > 0.")
        if not self.background_per_core >= 0:
            raise UsageError(f"what-if background={self.background_per_core!r} must be ≥ 0.")
        if self.shared_cores is not None and not self.shared_cores > 0:
            raise UsageError(f"what-if shared cores {self.shared_cores!r} must be > 0.")

    @property
    def host_names(self) -> list[str]:
        return [f"node{i}" for i in range(1, self.nodes + 1)]

    def pool_of(self, host: str) -> str:
        return "machine" if self.shared_cores is not None else host

    def pool_cores(self, pool: str) -> float:
        return self.shared_cores if pool == "machine" else self.cores


@dataclass
class NodeFigures:
    """One simulated node: jobs run, busy core-seconds (CPU the jobs got), bytes moved."""

    jobs: int = 0
    busy_core_s: float = 0.0
    io_bytes: float = 0.0


@dataclass(frozen=True)
class JobRun:
    """One simulated job: session, order, node, submit/start/end in seconds after the workload's start."""

    session: int
    order: int
    label: str
    host: str
    submit_s: float
    start_s: float
    end_s: float


@dataclass
class Replay:
    """The simulation's answer. makespan_s: the workload clock; nodes: per node figures; jobs: every job."""

    makespan_s: float
    nodes: dict[str, NodeFigures]
    jobs: list[JobRun]
    events: int


# -- the fluid model -----------------------------------------------------------------------------------
def water_fill(capacity: float, wants: Mapping[object, float], background: float = 0.0) -> dict[object, float]:
    """Max-min fair shares of `capacity`: whoever wants less than an equal share gets what it wants,
    the rest split what is left equally. `wants` may hold math.inf (takes whatever it is given).
    background: that many other runnable threads (not ours; may be fractional) each wanting one unit,
    served alongside, as a CPU scheduler serves every runnable thread; their shares are not returned."""
    out: dict[object, float] = {}
    left = capacity
    items = sorted([(w, 1.0, k) for k, w in wants.items()] + ([(1.0, background, None)] if background > 0 else []),
                   key=lambda x: x[0])
    weight = sum(x[1] for x in items)
    while items:
        share = left / weight
        want, wt, k = items[0]
        if want <= share:
            if k is not None:
                out[k] = want
            left -= want * wt
            weight -= wt
            items.pop(0)
        else:
            for _, _, k in items:
                if k is not None:
                    out[k] = share
            break
    return out


def rates(active: Mapping[int, JobDemand], pool_of: Mapping[int, str], pool_cores: Mapping[str, float],
          storage_bps: float, background_per_core: float = 0.0) -> tuple[dict[int, float], dict[int, float]]:
    """Progress rates (job fractions per second) of the jobs doing work now, and the CPU each gets
    (cores). Jobs with neither CPU nor I/O to do are not in `active` (they end at once).
    background_per_core: other runnable threads per core of each pool, sharing its cores with the jobs."""
    cap = {j: (min(d.threads, pool_cores[pool_of[j]]) if d.cpu_s > 0 else 0.0) for j, d in active.items()}
    pools: dict[str, list[int]] = {}
    for j in active:
        pools.setdefault(pool_of[j], []).append(j)
    rate: dict[int, float] = {}
    cpu: dict[int, float] = {}
    for _ in range(ROUNDS):                     # demands only fall: a few rounds settle it
        cpu = {}
        for pool, members in pools.items():
            cpu.update(water_fill(pool_cores[pool], {j: cap[j] for j in members},
                                  background_per_core * pool_cores[pool]))
        r_cpu = {j: (cpu[j] / d.cpu_s if d.cpu_s > 0 else math.inf) for j, d in active.items()}
        wants = {j: (d.io_bytes * r_cpu[j]) for j, d in active.items() if d.io_bytes > 0}
        io = wants if math.isinf(storage_bps) else water_fill(storage_bps, wants)
        rate = {j: min(r_cpu[j], io[j] / d.io_bytes if d.io_bytes > 0 else math.inf) for j, d in active.items()}
        # A job held back by the storage uses only the CPU its I/O lets it: the rest goes to the others.
        new_cap = {j: (min(cap[j], rate[j] * d.cpu_s) if d.cpu_s > 0 and rate[j] < r_cpu[j] else cap[j])
                   for j, d in active.items()}
        if all(cap[j] - new_cap[j] <= 1e-9 * max(1.0, cap[j]) for j in active):
            break
        cap = new_cap
    cpu = {j: (rate[j] * d.cpu_s if d.cpu_s > 0 else 0.0) for j, d in active.items()}
    return rate, cpu


# -- the replay ------------------------------------------------------------------------------------------
@dataclass
class _Run:
    """A running job. Its progress is kept lazily: `left` (fraction of its work still to do) as of `t_mark`,
    advancing at `rate` (and using `cpu` cores) since; settled whenever its rate changes."""

    job: Job
    demand: JobDemand
    session: int
    order: int
    host: str
    pool: str
    submit_s: float
    start_s: float
    working: bool = False
    left: float = 1.0
    t_mark: float = 0.0
    rate: float = 0.0
    cpu: float = 0.0
    version: int = 0


_ARRIVAL, _LAUNCHED, _DONE = 0, 1, 2          # timeline event kinds


def replay(sessions: Sequence[SessionPlan], shape: GridShape, concurrency: int = 1,
           resubmit_s: float = 0.0) -> Replay:
    """Run `sessions` on `shape`; see the module docstring. Pure: no clock, no sleep, no I/O.

    Cost: each event recomputes the rates of the jobs whose share changed (the jobs of the node where a
    job started or ended; every job when the storage is a limit), and the timeline is a heap."""
    if concurrency < 1:
        raise UsageError(f"concurrency {concurrency!r} must be ≥ 1.")
    hosts_cfg = {h: HostConfig(h, slots=shape.slots) for h in shape.host_names}
    pool_cores = {shape.pool_of(h): shape.pool_cores(shape.pool_of(h)) for h in shape.host_names}
    storage_bps = shape.mbps * 1e6
    total_slots = shape.slots * shape.nodes
    of_user = groups_of(shape.limits.groups)
    nodes = {h: NodeFigures() for h in shape.host_names}
    per_host = dict.fromkeys(shape.host_names, 0)
    counts = Running()                                # the running jobs as plan() counts them, kept as they change
    last_start: dict[str, int] = {}
    todo = {i: list(enumerate(s.jobs, start=1)) for i, s in enumerate(sessions)}   # jobs still to submit
    in_grid = [0] * len(sessions)
    timeline: list[tuple[float, int, int, int, int]] = []   # (time, seq, kind, id, version)
    seq = 0
    pending: dict[int, tuple[Job, JobDemand, int, int, float]] = {}
    running: dict[int, _Run] = {}
    working_by_pool: dict[str, dict[int, _Run]] = {}
    dirty: set[str] = set()                           # pools whose working jobs changed since the last rates
    done: list[JobRun] = []
    next_id = 0
    now = 0.0
    events = 0

    def push(t: float, kind: int, ident: int, version: int = 0) -> None:
        nonlocal seq
        heapq.heappush(timeline, (t, seq, kind, ident, version))
        seq += 1

    for i, s in enumerate(sessions):
        push(s.start_s, _ARRIVAL, i)

    def submit(i: int) -> None:
        nonlocal next_id
        while todo[i] and in_grid[i] < concurrency:
            order, demand = todo[i].pop(0)
            next_id += 1
            s = sessions[i]
            job = Job(id=next_id, user=s.user, queue=s.queue, name=f"s{i + 1}-{order}", kind="session", argv=[],
                      cwd="/", submit_ts=now, position=now)
            pending[next_id] = (job, demand, i, order, now)
            in_grid[i] += 1

    def dispatch() -> None:
        if not pending or len(running) >= total_slots:     # nothing to place, or no slot anywhere
            return
        views = host_views(hosts_cfg, shape.host_names, per_host, last_start)
        chosen = plan(backlog_of(p[0] for p in pending.values()), views, shape.queues, counts, shape.limits)
        last_start.update({name: h.last_start for name, h in views.items()})
        for job, host in chosen.starts:
            _, demand, i, order, submit_s = pending.pop(job.id)
            job.host, job.state = host, JobState.RUN
            running[job.id] = _Run(job, demand, i, order, host, shape.pool_of(host), submit_s, now)
            per_host[host] += 1
            counts.add(job, host, of_user)
            nodes[host].jobs += 1
            push(now + demand.launch_s, _LAUNCHED, job.id)

    def settle(r: _Run) -> None:
        """Bring a working job's progress and its node's figures up to now."""
        dt = now - r.t_mark
        if dt > 0 and r.rate > 0:
            r.left -= r.rate * dt
            nodes[r.host].busy_core_s += r.cpu * dt
            nodes[r.host].io_bytes += r.demand.io_bytes * r.rate * dt
        r.t_mark = now

    def end(j: int) -> None:
        r = running.pop(j)
        if working_by_pool.get(r.pool, {}).pop(j, None) is not None:
            dirty.add(r.pool)
        per_host[r.host] -= 1
        counts.remove(r.job, r.host, of_user)
        done.append(JobRun(r.session + 1, r.order, r.demand.label, r.host, r.submit_s, r.start_s, now))
        in_grid[r.session] -= 1
        if todo[r.session]:
            push(now + resubmit_s, _ARRIVAL, r.session)

    while timeline or pending or running:
        events += 1
        if dirty:
            # Rates change only where the working jobs changed: with the storage no limit, a pool's jobs
            # share nothing with other pools; a limited storage ties them all together.
            pools = list(working_by_pool) if not math.isinf(storage_bps) else list(dirty)
            sub = {j: r for pool in pools for j, r in working_by_pool.get(pool, {}).items()}
            if sub:
                rate, cpu = rates({j: r.demand for j, r in sub.items()}, {j: r.pool for j, r in sub.items()},
                                  pool_cores, storage_bps, shape.background_per_core)
                for j, r in sub.items():
                    if rate[j] != r.rate or cpu[j] != r.cpu or r.version == 0:
                        settle(r)
                        r.rate, r.cpu, r.version = rate[j], cpu[j], r.version + 1
                        if r.rate > 0:
                            push(now + max(0.0, r.left) / r.rate, _DONE, j, r.version)
            dirty.clear()
        if not timeline:
            stuck = ", ".join(sorted(p[0].name for p in pending.values())[:5])
            raise UsageError(f"what-if: jobs can never finish on this grid shape ({stuck}); check its slots, "
                             "cores and the queues' hosts.")
        now = timeline[0][0]
        limit = now + EPS * max(1.0, now)
        while timeline and timeline[0][0] <= limit:
            _, _, kind, ident, version = heapq.heappop(timeline)
            if kind == _ARRIVAL:
                submit(ident)
            elif kind == _LAUNCHED:
                r = running[ident]
                if r.demand.cpu_s > 0 or r.demand.io_bytes > 0:
                    r.working, r.t_mark = True, now
                    working_by_pool.setdefault(r.pool, {})[ident] = r
                    dirty.add(r.pool)
                else:
                    end(ident)                   # nothing to do but its launch
            elif ident in running and running[ident].version == version:
                settle(running[ident])
                end(ident)
        dispatch()
    done.sort(key=lambda r: (r.start_s, r.session, r.order))
    makespan = max((r.end_s for r in done), default=0.0)
    return Replay(makespan, nodes, done, events)


def limits_of(cfg) -> Limits:
    """The policy's Limits from a grid's Config ([groups], [limits], [scheduling]); none from None."""
    if cfg is None:
        return Limits()
    return Limits(cfg.groups, cfg.limits or LimitsConfig(), cfg.scheduling or SchedulingConfig())
