"""Dispatch policy (pure), the job store (real SQLite), and the policy on a real embedded grid."""
from __future__ import annotations

import dataclasses

import pytest

from statgrid.config import HostConfig, QueueConfig, parse_host_preferences
from statgrid.grid.master.jobspec import JobRequest, validate
from statgrid.job.record import Job, JobState
from statgrid.grid.scheduling.policy import Limits, Running, backlog_of, host_views, host_weights
from statgrid.grid.scheduling.policy import plan as policy_plan
from statgrid.grid.master.store import JobStore
from statgrid.errors import UsageError

HOSTS = {f"node{i}": HostConfig(f"node{i}", slots=2) for i in range(1, 5)}


def queue(name="normal", priority=30, hosts="all", user_limit=0) -> QueueConfig:
    return QueueConfig(name, priority, parse_host_preferences(hosts, HOSTS, "test"), user_limit)


def job(i, q="normal", user="ann", hosts=()) -> Job:
    return Job(id=i, user=user, queue=q, name=f"j{i}", kind="command", argv=["true"], cwd="/",
               submit_ts=float(i), requested_hosts=list(hosts))


def plan(pending, hosts, queues, per_user, limits=Limits()):
    """The policy's starts for a list of pending jobs; per_user: (queue, user) → running jobs."""
    return policy_plan(backlog_of(pending), hosts, queues, Running(queue_user=dict(per_user)), limits).starts


def views(running=None, up=None, hosts=HOSTS):
    return host_views(hosts, up if up is not None else hosts, running or {})


def test_weights_lsf_syntax():
    assert host_weights(queue(hosts="node1+1 others+2"), HOSTS) == {"node1": 1, "node2": 2, "node3": 2, "node4": 2}
    assert host_weights(queue(hosts="node2 node3"), HOSTS) == {"node2": 0, "node3": 0}
    assert host_weights(queue(hosts="all"), HOSTS) == dict.fromkeys(HOSTS, 0)


def test_slots_never_exceeded_and_spread_by_fewest_running():
    hv = views()
    chosen = plan([job(i) for i in range(1, 21)], hv, {"normal": queue()}, {})
    assert len(chosen) == 8                                       # 4 hosts × 2 slots
    per_host = {h: sum(1 for _, c in chosen if c == h) for h in HOSTS}
    assert per_host == dict.fromkeys(HOSTS, 2)
    assert [j.id for j, _ in chosen] == list(range(1, 9))         # FIFO
    assert [c for _, c in chosen[:4]] == ["node1", "node2", "node3", "node4"]   # fewest running first


def test_ties_rotate_over_an_idle_grid():
    # Issue 14 item 7: one job at a time on an idle grid (each ends before the next) went to node1
    # every time. The dispatcher keeps each host's last_start between plan() calls, as here.
    last: dict[str, int] = {}
    hosts = []
    for i in range(1, 9):
        hv = views()
        for name, seq in last.items():
            hv[name].last_start = seq
        (chosen,) = plan([job(i)], hv, {"normal": queue()}, {})
        hosts.append(chosen[1])
        last = {name: h.last_start for name, h in hv.items()}
    assert hosts == ["node1", "node2", "node3", "node4"] * 2


def test_tie_order_weight_then_running_then_least_recent_then_file_order():
    hv = views(running={"node2": 1})
    for name, seq in {"node1": 5, "node2": 0, "node3": 3, "node4": 3}.items():
        hv[name].last_start = seq
    # node2 started least recently but runs a job; node3 and node4 tie on both: file order.
    assert plan([job(1)], hv, {"normal": queue()}, {})[0][1] == "node3"
    assert (hv["node3"].last_start, hv["node3"].running) == (6, 1)       # the next call sees it as the latest
    # The preference weight still comes first: node1+2 wins however recently it started a job.
    hv = views()
    hv["node1"].last_start = 9
    assert plan([job(2)], hv, {"normal": queue(hosts="node1+2 others+1")}, {})[0][1] == "node1"


def test_preference_weight_fills_preferred_hosts_first():
    hv = views()
    chosen = plan([job(i) for i in range(1, 8)], hv, {"normal": queue(hosts="node1+1 others+2")}, {})
    assert [h for _, h in chosen].count("node1") == 1            # only the 7th job, when the others are full
    assert chosen[-1][1] == "node1"


def test_priority_before_fifo():
    qs = {"normal": queue(), "high": queue("high", 50)}
    pending = [job(1), job(2), job(3, "high"), job(4, "high")]
    chosen = plan(pending, views(running={"node1": 2, "node2": 2, "node3": 2, "node4": 1}), qs, {})
    assert [j.id for j, _ in chosen] == [3]                       # one free slot: the older high-priority job


def test_user_limit_skips_without_blocking_others():
    qs = {"normal": queue(user_limit=1)}
    chosen = plan([job(1, user="ann"), job(2, user="ann"), job(3, user="bob")], views(), qs,
                  {("normal", "ann"): 0})
    assert [j.id for j, _ in chosen] == [1, 3]
    assert plan([job(4, user="ann")], views(), qs, {("normal", "ann"): 1}) == []


def test_requested_closed_and_unavailable_hosts():
    hosts = {**HOSTS, "node4": HostConfig("node4", slots=2, open=False)}
    qs = {"normal": queue()}
    chosen = plan([job(1, hosts=["node3"]), job(2, hosts=["node3"]), job(3, hosts=["node3"])],
                  views(hosts=hosts), qs, {})
    assert [(j.id, h) for j, h in chosen] == [(1, "node3"), (2, "node3")]
    chosen = plan([job(i) for i in range(10)], views(up=["node1", "node4"], hosts=hosts), qs, {})
    assert {h for _, h in chosen} == {"node1"}                    # node4 closed, node2/3 without a worker
    hv = views(up=["node1"], hosts=hosts)
    assert (hv["node1"].state, hv["node2"].state, hv["node4"].state) == ("ok", "unavail", "unavail")


def test_store_compare_and_set_and_history(tmp_path):
    store = JobStore(tmp_path / "jobs.db")
    j = store.add(job(0))
    assert j.id == 1 and store.get(1).state == JobState.PEND
    run = dataclasses.replace(j, state=JobState.RUN, attempt=1, host="node2")
    assert store.update(run, JobState.PEND, 0, "dispatch")
    assert not store.update(run, JobState.PEND, 0, "dispatch")    # a second dispatch of the same attempt
    stale = dataclasses.replace(run, state=JobState.DONE)
    assert not store.update(stale, JobState.RUN, 7, "finish")     # an old attempt's late news
    store.close()
    again = JobStore(tmp_path / "jobs.db")                         # survives a reopen
    got = again.get(1)
    assert (got.state, got.attempt, got.host, got.requested_hosts) == (JobState.RUN, 1, "node2", [])
    assert [e["event"] for e in again.events(1)] == ["submit", "dispatch"]
    assert again.con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_validate_names_the_bad_value(tmp_path, home):
    from statgrid.config import load_config

    cfg = load_config()
    (tmp_path / "grid2.toml").write_text('[queues.night]\nhosts = "node2 node3"\n')
    cfg2 = load_config(tmp_path / "grid2.toml")
    (tmp_path / "j.py").write_text("pass\n")

    def req(argv, **kw):
        return JobRequest(argv=argv, cwd=str(tmp_path), user="ann", **kw)

    with pytest.raises(UsageError, match="queue 'nope' does not exist"):
        validate(req(["j.py"], queue="nope"), cfg, 0)
    with pytest.raises(UsageError, match="host 'node9' does not exist"):
        validate(req(["j.py"], hosts=["node9"]), cfg, 0)
    with pytest.raises(UsageError, match="host 'node1' is not used by queue 'night'"):
        validate(req(["j.py"], queue="night", hosts=["node1"]), cfg2, 0)
    with pytest.raises(UsageError, match="missing.py' does not exist"):
        validate(req(["missing.py"]), cfg, 0)
    with pytest.raises(UsageError, match="memsize"):
        validate(req(["j.py"], options={"memsize": "lots"}), cfg, 0)
    with pytest.raises(UsageError, match="neither a job file"):
        validate(req(["no-such-command-xyz"]), cfg, 0)
    with pytest.raises(UsageError, match="session options apply to job files"):
        validate(req(["true"], options={"memsize": "1G"}), cfg, 0)
    ok = validate(req(["j.py"], options={"memsize": "1G"}), cfg, 5.0)
    assert (ok.kind, ok.queue, ok.argv, ok.submit_ts) == ("session", "normal", [str(tmp_path / "j.py")], 5.0)


def test_one_job_at_a_time_on_an_idle_real_grid_touches_every_host(tmp_path):
    """End to end (issue 14 item 7): `grid up --detach` with 4 hosts, 8 short jobs submitted and
    waited one after another: every host takes two (ties rotate; they all went to node1)."""
    from tests.support.gridtest import Grid, running

    toml = "[master]\nport = {port}\n\n[monitor]\nenabled = false\n\n" + "".join(
        f"[hosts.node{i}]\nslots = 2\n\n" for i in range(1, 5))
    hosts = []
    with running(Grid(tmp_path, toml)) as grid:
        for _ in range(8):
            (done,) = grid.wait([grid.submit("true")])
            assert done["state"] == "DONE", done
            hosts.append(done["host"])
    assert sorted(hosts) == ["node1", "node1", "node2", "node2", "node3", "node3", "node4", "node4"], hosts


def test_an_older_store_gains_the_scheduling_columns(tmp_path):
    """A grid home of an earlier release (its jobs table without issue 18's columns) opens: the columns
    are added with a plain job's values, and the job reads back as it was."""
    import sqlite3

    con = sqlite3.connect(tmp_path / "jobs.db")
    con.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT, queue TEXT, name TEXT, kind TEXT, "
                "argv TEXT, cwd TEXT, options TEXT, rerunnable INTEGER, requested_hosts TEXT, state TEXT, attempt "
                "INTEGER, host TEXT, submit_ts REAL, dispatch_ts REAL, start_ts REAL, end_ts REAL, pid INTEGER, "
                "exit_code INTEGER, signal INTEGER, exit_reason TEXT, kill_requested INTEGER, rusage TEXT, stimer TEXT, "
                "requeues INTEGER, env TEXT)")
    con.execute("INSERT INTO jobs (user, queue, name, kind, argv, cwd, options, rerunnable, requested_hosts, state, "
                "attempt, submit_ts, kill_requested, requeues, env) VALUES ('ann', 'normal', 'x', 'command', "
                "'[\"true\"]', '/', '{}', 0, '[]', 'PEND', 0, 123.5, 0, 0, '{}')")
    con.commit()
    con.close()
    store = JobStore(tmp_path / "jobs.db")
    got = store.get(1)
    assert (got.user, got.argv, got.state) == ("ann", ["true"], JobState.PEND)
    assert (got.position, got.mem_bytes, got.priority, got.suspended_s, got.flow_id, got.depend) == \
        (123.5, 0, 0, 0.0, None, None)
    assert store.state_of(1) == ("PEND", False) and store.usage() == {}
