"""Issue 18's policy (pure): fairshare, running limits, memory, load thresholds, array throttles and
the pending reason of every waiting job. The master's side is in tests/grid/test_scheduling.py."""
from __future__ import annotations

import dataclasses

from statgrid.config import HostConfig, LimitsConfig, QueueConfig, SchedulingConfig, parse_host_preferences
from statgrid.grid.scheduling import fairshare
from statgrid.grid.scheduling.backlog import Backlog
from statgrid.job.record import Job
from statgrid.grid.scheduling.policy import Limits, backlog_of, count_running, host_views, plan

GIB = 2**30


def hosts_cfg(n=3, slots=2, **kw):
    return {f"node{i}": HostConfig(f"node{i}", slots=slots, **kw) for i in range(1, n + 1)}


def queue(name="normal", hosts=None, **kw) -> QueueConfig:
    prefs = parse_host_preferences("all", hosts or hosts_cfg(), "test")
    return QueueConfig(name, kw.pop("priority", 30), prefs, **kw)


_ids = iter(range(1, 10**6))


def job(user, q="normal", **kw) -> Job:
    i = next(_ids)
    return Job(id=i, user=user, queue=q, name=f"j{i}", kind="command", argv=["true"], cwd="/", submit_ts=float(i),
               position=float(i), **kw)


class Sim:
    """The master's loop in miniature: a backlog, running jobs, usage charged at each end. Jobs end
    oldest first, one per step (deterministic), and each end is followed by a dispatch."""

    def __init__(self, hosts, queues, groups=None, limits=LimitsConfig(), sched=SchedulingConfig()):
        self.hosts, self.queues, self.groups = hosts, queues, groups or {}
        self.limits, self.sched = limits, sched
        self.backlog = Backlog()
        self.running: list[Job] = []
        self.usage = fairshare.UsageBook({}, sched.half_life_s)
        self.now = 1000.0
        self.last = None

    def submit(self, *jobs):
        for j in jobs:
            self.backlog.add(j)

    def dispatch(self):
        views = host_views(self.hosts, self.hosts, {h: sum(j.host == h for j in self.running) for h in self.hosts})
        limits = Limits(self.groups, self.limits, self.sched, {}, self.usage.at(self.now, self.running))
        self.last = plan(self.backlog.lists, views, self.queues, count_running(self.running, self.groups), limits)
        for j, h in self.last.starts:
            self.backlog.remove(j.id)
            self.running.append(dataclasses.replace(j, host=h, start_ts=self.now))
        return self.last

    def end_oldest(self, after_s=60.0):
        self.now += after_s
        j = self.running.pop(0)
        self.usage.charge(j.queue, j.user, self.now - j.start_ts, self.now)

    def per_user(self):
        out: dict[str, int] = {}
        for j in self.running:
            out[j.user] = out.get(j.user, 0) + 1
        return out


def flood(sim, users, n=200):
    sim.submit(*[job(u) for _ in range(n) for u in users])


def test_equal_shares_converge_to_one_to_one():
    hosts = hosts_cfg(3, 2)
    sim = Sim(hosts, {"normal": queue(fairshare=(("default", 1),))})
    flood(sim, ["ann"], 100)                     # ann floods first: FIFO would give her every slot
    flood(sim, ["bob"], 100)
    sim.dispatch()
    assert sim.per_user() == {"ann": 3, "bob": 3}
    for _ in range(60):
        sim.end_oldest()
        sim.dispatch()
        assert sim.per_user() == {"ann": 3, "bob": 3}


def test_fifo_without_fairshare_gives_the_first_flood_everything():
    sim = Sim(hosts_cfg(3, 2), {"normal": queue()})
    flood(sim, ["ann"], 100)
    flood(sim, ["bob"], 100)
    sim.dispatch()
    assert sim.per_user() == {"ann": 6}


def test_shares_two_to_one_converge_to_two_to_one():
    sim = Sim(hosts_cfg(3, 2), {"normal": queue(fairshare=(("ann", 2), ("bob", 1)))})
    flood(sim, ["ann", "bob"], 200)
    sim.dispatch()
    assert sim.per_user() == {"ann": 4, "bob": 2}
    counts = []
    for _ in range(120):
        sim.end_oldest()
        sim.dispatch()
        counts.append(sim.per_user())
    # Usage charged at each end keeps it there: over the last 60 steps ann holds twice bob's slots.
    late = counts[60:]
    assert sum(c["ann"] for c in late) == 2 * sum(c["bob"] for c in late)


def test_newcomer_starts_ahead_of_the_heavy_user():
    sim = Sim(hosts_cfg(3, 2), {"normal": queue(fairshare=(("default", 1),))})
    flood(sim, ["heavy"], 300)
    sim.dispatch()
    for _ in range(30):                          # heavy runs alone for a while: usage builds up
        sim.end_oldest()
        sim.dispatch()
    assert sim.per_user() == {"heavy": 6}
    late = job("newcomer")
    sim.submit(late)
    assert sim.dispatch().starts == []           # full: nothing starts at submit
    assert sim.last.reason(late).startswith("no free slot on queue normal's hosts: node1 2/2")
    heavy_next = sim.backlog.lists["normal"]["heavy"][0]
    assert sim.last.reason(heavy_next).startswith("lower fairshare priority: heavy ")
    sim.end_oldest()
    starts = sim.dispatch().starts
    assert [j.user for j, _ in starts] == ["newcomer"]          # the first slot that frees is the newcomer's


def test_group_shares_and_members():
    groups = {"risk": ("ann", "bob"), "mkt": ("cy",)}
    sim = Sim(hosts_cfg(3, 2), {"normal": queue(fairshare=(("risk", 1), ("mkt", 1)))}, groups)
    flood(sim, ["ann", "bob", "cy"], 50)
    sim.dispatch()
    # the groups halve the grid; inside risk its two members halve its half
    assert sim.per_user() == {"ann": 2, "bob": 1, "cy": 3} or sim.per_user() == {"ann": 1, "bob": 2, "cy": 3}
    rows = fairshare.share_rows(sim.queues["normal"], {"ann", "bob", "cy"},
                                {("normal", j.user): sum(k.user == j.user for k in sim.running) for j in sim.running},
                                {}, {}, groups, SchedulingConfig())
    assert [(r.kind, r.name, r.running) for r in rows][:1] in ([("group", "risk", 3)], [("group", "mkt", 3)])
    assert {r.name for r in rows if r.kind == "member"} == {"ann", "bob", "cy"}


def test_no_share_waits_with_its_reason():
    q = queue(fairshare=(("ann", 1),))
    sim = Sim(hosts_cfg(1, 2), {"normal": q})
    stranger = job("zed")
    sim.submit(stranger)
    assert sim.dispatch().starts == []
    assert sim.last.reason(stranger) == ("zed has no share in queue normal's fairshare (ann = 1); ask a grid "
                                         "administrator for one, or use another queue")


def test_limits_user_group_queue_and_host():
    groups = {"risk": ("ann", "bob")}
    hosts = hosts_cfg(3, 4)
    limits = LimitsConfig(user_jobs=3, users=(("cy", 1),), groups=(("risk", 4),))
    sim = Sim(hosts, {"normal": queue(hosts=hosts)}, groups, limits)
    a, b, c = [job("ann") for _ in range(5)], [job("bob") for _ in range(5)], [job("cy") for _ in range(3)]
    sim.submit(*a, *b, *c)
    sim.dispatch()
    assert sim.per_user() == {"ann": 3, "bob": 1, "cy": 1}
    assert sim.last.reason(a[3]) == "ann's job limit reached: 3 running in all queues ([limits] user_jobs = 3)"
    assert sim.last.reason(b[1]) == "group risk's job limit reached: its members run 4 ([limits] groups.risk = 4)"
    assert sim.last.reason(c[1]) == "cy's job limit reached: 1 running in all queues ([limits] users.cy = 1)"

    sim = Sim(hosts, {"normal": queue(hosts=hosts, job_limit=5, host_limit=1)})
    many = [job("ann") for _ in range(8)]
    sim.submit(*many)
    sim.dispatch()
    assert sorted(j.host for j in sim.running) == ["node1", "node2", "node3"]    # host_limit 1 each
    assert sim.last.reason(many[3]) == ("no free slot on queue normal's hosts: node1 1/4 (host_limit = 1 of queue "
                                        "normal reached), node2 1/4 (host_limit = 1 of queue normal reached), node3 1/4 "
                                        "(host_limit = 1 of queue normal reached)")
    sim = Sim(hosts, {"normal": queue(hosts=hosts, job_limit=2)})
    sim.submit(*[job("ann") for _ in range(4)])
    sim.dispatch()
    assert len(sim.running) == 2
    assert sim.last.queue_reasons["normal"] == "queue normal's job limit reached: 2 running (job_limit = 2)"


def test_memory_is_reserved_and_never_overcommitted():
    hosts = hosts_cfg(2, 8, memory_bytes=8 * GIB)
    sim = Sim(hosts, {"normal": queue(hosts=hosts)})
    big = [job("ann", mem_bytes=3 * GIB) for _ in range(6)]
    small = job("ann", mem_bytes=1 * GIB)
    sim.submit(*big, small)
    sim.dispatch()
    per_host = {h: sum(j.mem_bytes for j in sim.running if j.host == h) for h in hosts}
    assert all(v <= 8 * GIB for v in per_host.values())
    assert sum(j.mem_bytes == 3 * GIB for j in sim.running) == 4 and small in [dataclasses.replace(
        j, host=None, start_ts=None) for j in sim.running]        # the small job still fits beside them
    assert sim.last.reason(big[4]) == ("needs 3G of memory; the most free on a host with a free slot: 2G (node1)")


def test_busy_host_takes_no_job_and_says_so():
    hosts = hosts_cfg(2, 2, max_load=4.0)
    views = host_views(hosts, hosts, {}, loads={"node1": 7.5, "node2": 0.5})
    assert (views["node1"].state, views["node1"].free, views["node2"].state) == ("closed_Busy", 0, "ok")
    jobs = [job("ann") for _ in range(3)]
    p = plan(backlog_of(jobs), views, {"normal": queue(hosts=hosts)}, count_running([], {}))
    assert {h for _, h in p.starts} == {"node2"} and len(p.starts) == 2
    assert p.reason(jobs[2]) == "no free slot on queue normal's hosts: node1 busy (load 7.5 > 4), node2 2/2"


def test_closed_hosts_named_in_the_reason():
    hosts = hosts_cfg(2, 1)
    views = host_views(hosts, ["node1"], {}, closed=["node1"])
    j = job("ann")
    p = plan(backlog_of([j]), views, {"normal": queue(hosts=hosts)}, count_running([], {}))
    assert p.reason(j) == "no free slot on queue normal's hosts: node1 closed_Adm, node2 unavail"


def test_array_throttle():
    hosts = hosts_cfg(3, 2)
    elements = [job("ann", flow_id=77, array_index=i) for i in range(1, 11)]
    views = host_views(hosts, hosts, {})
    p = plan(backlog_of(elements), views, {"normal": queue(hosts=hosts)}, count_running([], {}),
             Limits(throttles={77: 2}))
    assert [j.array_index for j, _ in p.starts] == [1, 2]
    assert p.reason(elements[5]) == "array throttle: 2 of array 77's jobs run (at most 2 at once)"


def test_every_pending_job_has_a_reason_and_priority_queues_first():
    hosts = hosts_cfg(1, 1)
    qs = {"normal": queue(hosts=hosts), "high": queue("high", hosts=hosts, priority=50)}
    jobs = [job("ann"), job("bob", q="high"), job("cy")]
    p = plan(backlog_of(jobs), host_views(hosts, hosts, {}), qs, count_running([], {}))
    assert [j.id for j, _ in p.starts] == [jobs[1].id]
    for j in (jobs[0], jobs[2]):
        assert p.reason(j) == "no free slot on queue normal's hosts: node1 1/1"


def test_job_priority_and_position_order_a_users_jobs():
    hosts = hosts_cfg(1, 1)
    first, urgent = job("ann"), job("ann", priority=10)
    moved = dataclasses.replace(job("ann"), position=-1.0)     # `statgrid top`
    p = plan(backlog_of([first, urgent]), host_views(hosts, hosts, {}), {"normal": queue(hosts=hosts)},
             count_running([], {}))
    assert p.starts[0][0].id == urgent.id
    p = plan(backlog_of([first, moved]), host_views(hosts, hosts, {}), {"normal": queue(hosts=hosts)},
             count_running([], {}))
    assert p.starts[0][0].id == moved.id


def test_backlog_keeps_order_through_adds_and_removes():
    b = Backlog()
    jobs = [job("ann") for _ in range(5)]
    for j in reversed(jobs):
        b.add(j)
    assert [j.id for j in b.lists["normal"]["ann"]] == [j.id for j in jobs]
    b.remove(jobs[2].id)
    b.hold(jobs[0].id, "dependency not met")
    assert [j.id for j in b.lists["normal"]["ann"]] == [jobs[1].id, jobs[3].id, jobs[4].id]
    assert b.held == {jobs[0].id: "dependency not met"} and len(b) == 4
    b.release(jobs[0].id)
    assert b.lists["normal"]["ann"][0].id == jobs[0].id and not b.held
    for j in jobs:
        b.remove(j.id)
    assert b.lists == {} and len(b) == 0


def test_usage_decays_by_half_each_half_life():
    book = fairshare.UsageBook({}, half_life_s=3600)
    book.charge("normal", "ann", 7200, now_ts=0)
    assert book.at(3600)[("normal", "ann")] == 3600
    assert book.at(7200)[("normal", "ann")] == 1800
    running = dataclasses.replace(job("ann"), start_ts=7000.0)
    assert book.at(7200, [running])[("normal", "ann")] == 1800 + 200
    assert fairshare.priority(2, 1, 3600, SchedulingConfig()) == 2 / (1 + 3 + 0.7)


def test_job_priority_orders_only_its_users_jobs():
    """FIFO across users: bob's --priority 1000 puts his job before his own, not before alice's older one."""
    hosts = hosts_cfg(1, 1)
    older = job("alice")
    bobs = [job("bob"), job("bob", priority=1000)]
    p = plan(backlog_of([older, *bobs]), host_views(hosts, hosts, {}), {"normal": queue(hosts=hosts)},
             count_running([], {}))
    assert [j.id for j, _ in p.starts] == [older.id]
    hosts = hosts_cfg(1, 2)
    p = plan(backlog_of([older, *bobs]), host_views(hosts, hosts, {}), {"normal": queue(hosts=hosts)},
             count_running([], {}))
    assert [j.id for j, _ in p.starts] == [older.id, bobs[1].id]
