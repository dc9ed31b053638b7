"""Part A of benchmarks/scheduling.py: the policy alone, in this process (statgrid.grid.scheduling
policy, backlog and fairshare; no store, no engine). scheduling.py's docstring says what is measured.
"""
from __future__ import annotations

import dataclasses
import gc
import statistics
import time

from _common import fmt_stat, percentile, render_rows, rotated, stat_dict
from statgrid.config import HostConfig, LimitsConfig, QueueConfig, SchedulingConfig, parse_host_preferences
from statgrid.grid.scheduling import fairshare
from statgrid.grid.scheduling.backlog import Backlog
from statgrid.job.record import Job, JobState
from statgrid.grid.scheduling.policy import Limits, count_running, host_views, plan

GOAL_POLICY_JOBS_S = 500.0
A_HOSTS, A_SLOTS = 16, 8
A_USERS, A_PER_USER = 50, 200
A_RUN_S = 60.0                      # each job runs a minute of simulated time: an end every 60/128 s
VARIANTS = ("fifo", "fair", "groups")
VARIANT_LABELS = {"fifo": "FIFO (no fairshare)", "fair": "fairshare default=1", "groups": "fairshare 5 groups"}


def a_users() -> list[str]:
    return [f"user{i:02d}" for i in range(A_USERS)]


def a_setup(variant: str) -> tuple[dict[str, HostConfig], dict[str, QueueConfig], dict[str, tuple[str, ...]]]:
    """(hosts, queues, groups) of a variant: one queue `normal` on every host."""
    hosts = {f"node{i:02d}": HostConfig(f"node{i:02d}", slots=A_SLOTS) for i in range(1, A_HOSTS + 1)}
    prefs = parse_host_preferences("all", hosts, "benchmark")
    users = a_users()
    groups: dict[str, tuple[str, ...]] = {}
    if variant == "fifo":
        shares: tuple[tuple[str, int], ...] = ()
    elif variant == "fair":
        shares = (("default", 1),)
    else:
        groups = {f"g{k}": tuple(users[10 * k:10 * k + 10]) for k in range(5)}
        shares = tuple((f"g{k}", k + 1) for k in range(5))
    return hosts, {"normal": QueueConfig("normal", 30, prefs, fairshare=shares)}, groups


class PolicyMaster:
    """The master's in-memory dispatch (master.py: host_views, limits, dispatch, _start_attempt,
    _finish's _charge) without the store and the engine: the part the policy costs."""

    def __init__(self, variant: str):
        self.hosts, self.queues, self.groups = a_setup(variant)
        self.limits_cfg, self.sched = LimitsConfig(), SchedulingConfig()
        self.pending = Backlog()
        self.running: dict[int, Job] = {}            # insertion order = start order: the oldest first
        self.usage = fairshare.UsageBook({}, self.sched.half_life_s)
        self.last_start: dict[str, int] = {}
        self.now = 1_000_000.0
        self.next_id = 1
        self.fairshare = any(q.fairshare for q in self.queues.values())

    def new_job(self, user: str) -> Job:
        i = self.next_id
        self.next_id += 1
        return Job(id=i, user=user, queue="normal", name=f"j{i}", kind="command", argv=["true"], cwd="/tmp",
                   submit_ts=self.now, position=float(i))

    def prepare(self) -> tuple[dict, object, Limits]:
        """Master.host_views + count_running + Master.limits: what dispatch() builds before plan()."""
        running: dict[str, int] = {}
        reserved: dict[str, int] = {}
        for job in self.running.values():
            running[job.host] = running.get(job.host, 0) + 1
            reserved[job.host] = reserved.get(job.host, 0) + job.mem_bytes
        views = host_views(self.hosts, self.hosts, running, self.last_start, (), reserved, {})
        counts = count_running(self.running.values(), self.groups)
        usage = self.usage.at(self.now, self.running.values()) if self.fairshare else {}
        return views, counts, Limits(self.groups, self.limits_cfg, self.sched, {}, usage)

    def apply(self, chosen, views) -> None:
        """Master.dispatch's end and _start_attempt without the store and the engine."""
        self.last_start = {name: h.last_start for name, h in views.items()}
        for job, host in chosen.starts:
            self.pending.remove(job.id)
            self.running[job.id] = dataclasses.replace(job, state=JobState.RUN, attempt=job.attempt + 1, host=host,
                                                       dispatch_ts=self.now, start_ts=self.now)

    def end_oldest(self) -> None:
        """A job ends (Master._finish): out of running, its run time charged (Master._charge)."""
        self.now += A_RUN_S / (A_HOSTS * A_SLOTS)
        job_id = next(iter(self.running))
        job = self.running.pop(job_id)
        self.usage.charge(job.queue, job.user, fairshare.run_so_far_s(job, self.now), self.now)


def run_policy(variant: str, dispatches: int, submits: int) -> dict:
    """One run of one variant; times in µs."""
    m = PolicyMaster(variant)
    users = a_users()
    for _ in range(A_PER_USER):
        for u in users:
            m.pending.add(m.new_job(u))
    clock = time.perf_counter_ns
    t0 = clock()
    views, counts, limits = m.prepare()
    chosen = plan(m.pending.lists, views, m.queues, counts, limits)
    m.apply(chosen, views)
    fill_ms = (clock() - t0) / 1e6
    assert len(m.running) == A_HOSTS * A_SLOTS, f"{variant}: the first dispatch started {len(m.running)} jobs"
    for job, _ in chosen.starts:                                  # their users submit again: 10,000 pending
        m.pending.add(m.new_job(job.user))

    step_us, plan_us, prep_us = [], [], []
    gc.collect()
    for _ in range(dispatches):
        t0 = clock()
        m.end_oldest()
        t1 = clock()
        views, counts, limits = m.prepare()
        t2 = clock()
        chosen = plan(m.pending.lists, views, m.queues, counts, limits)
        t3 = clock()
        m.apply(chosen, views)
        t4 = clock()
        if len(chosen.starts) != 1:
            raise SystemExit(f"{variant}: a dispatch after one end started {len(chosen.starts)} jobs, not 1")
        step_us.append((t4 - t0) / 1e3)
        prep_us.append((t2 - t1) / 1e3)
        plan_us.append((t3 - t2) / 1e3)
        m.pending.add(m.new_job(chosen.starts[0][0].user))       # the user submits again: 10,000 pending
    assert len(m.pending) == A_USERS * A_PER_USER

    # A submit on a full grid: the job joins the backlog, then dispatch() finds no free slot.
    submit_us = []
    for i in range(submits):
        job = m.new_job(users[i % len(users)])
        t0 = clock()
        m.pending.add(job)
        views, counts, limits = m.prepare()
        chosen = plan(m.pending.lists, views, m.queues, counts, limits)
        t1 = clock()
        assert not chosen.starts
        submit_us.append((t1 - t0) / 1e3)
        m.pending.remove(job.id)

    per_user: dict[str, int] = {}
    for job in m.running.values():
        per_user[job.user] = per_user.get(job.user, 0) + 1
    per_group = {g: sum(per_user.get(u, 0) for u in members) for g, members in m.groups.items()}
    return {"step_p50_us": percentile(step_us, 0.5), "step_p99_us": percentile(step_us, 0.99),
            "step_mean_us": statistics.fmean(step_us),
            "plan_p50_us": percentile(plan_us, 0.5), "plan_p99_us": percentile(plan_us, 0.99),
            "prep_p50_us": percentile(prep_us, 0.5),
            "jobs_per_s": 1e6 / statistics.fmean(step_us), "jobs_per_s_at_p50": 1e6 / percentile(step_us, 0.5),
            "submit_p50_us": percentile(submit_us, 0.5), "submit_p99_us": percentile(submit_us, 0.99),
            "fill_ms": fill_ms,
            "running_per_user": (min(per_user.get(u, 0) for u in users), max(per_user.values())),
            "running_per_group": per_group}


A_ROWS = (("dispatch (whole step) p50", "step_p50_us", "µs", 1), ("dispatch (whole step) p99", "step_p99_us", "µs", 1),
          ("  of which views+counts+usage p50", "prep_p50_us", "µs", 1),
          ("  of which plan() p50", "plan_p50_us", "µs", 1), ("  plan() p99", "plan_p99_us", "µs", 1),
          ("jobs/s through the policy (1 / mean step)", "jobs_per_s", "", 0),
          ("  at the median step (1 / p50)", "jobs_per_s_at_p50", "", 0),
          ("submit-time dispatch p50", "submit_p50_us", "µs", 1), ("submit-time dispatch p99", "submit_p99_us", "µs", 1),
          ("first dispatch, 128 starts", "fill_ms", "ms", 2))


def part_a(args) -> dict:
    res: dict[str, dict[str, list]] = {v: {} for v in VARIANTS}
    spread: dict[str, list] = {v: [] for v in VARIANTS}
    print(f"part A: the policy alone: {A_USERS * A_PER_USER:,} pending ({A_USERS} users × {A_PER_USER}), "
          f"{A_HOSTS} hosts × {A_SLOTS} slots busy, {args.dispatches:,} dispatches and {args.submits:,} submits "
          f"per run and variant, {args.runs_a} runs", flush=True)
    for r in range(args.runs_a):
        line = []
        for v in rotated(VARIANTS, r):
            gc.collect()
            out = run_policy(v, args.dispatches, args.submits)
            for k, val in out.items():
                if isinstance(val, (int, float)):
                    res[v].setdefault(k, []).append(val)
            spread[v].append((out["running_per_user"], out["running_per_group"]))
            line.append(f"{v} {out['step_p50_us']:.0f} µs/{out['jobs_per_s']:.0f} jobs/s")
        print(f"run {r + 1}: " + ", ".join(line), flush=True)
    ratio = {v: [a / b for a, b in zip(res[v]["step_mean_us"], res["fifo"]["step_mean_us"])] for v in VARIANTS[1:]}

    rows = [["", *(VARIANT_LABELS[v] for v in VARIANTS)]]
    for label, key, unit, digits in A_ROWS:
        rows.append([f"{label}{' (' + unit + ')' if unit else ''}", *(fmt_stat(res[v][key], digits) for v in VARIANTS)])
    print("\n" + render_rows(rows))
    for v in VARIANTS[1:]:
        print(f"{VARIANT_LABELS[v]} / FIFO, mean dispatch step: {fmt_stat(ratio[v])}")
    print(f"goal: ≥ {GOAL_POLICY_JOBS_S:.0f} jobs/s through the policy")
    (lo, hi), _ = spread["fair"][-1]
    _, groups = spread["groups"][-1]
    print(f"check, at the end of the last run: running jobs per user {lo}–{hi} with fairshare default=1; per group "
          f"with shares 1…5: {', '.join(f'{g} {n}' for g, n in groups.items())}")
    return {v: {k: stat_dict(vals) for k, vals in res[v].items()} for v in VARIANTS} | \
        {f"{v}_over_fifo": stat_dict(ratio[v]) for v in VARIANTS[1:]}

