"""The master's parts that were its last mixins (statgrid/grid/master/: flows.py, subtasks.py, usage.py,
loads.py), each through a real Master on a recording engine (tests/support/harness.py) — no grid:
flows and arrays (all or none, a failed job ending its dependents, the throttle), sub-tasks (their
parent's end, and the restart's restored and reconciled hooks), fairshare usage (charged when an
attempt ends, `shares`, a reconfig's half-life), load thresholds (a busy host closed to the dispatch
the part's loads plan, opened again when they fall)."""
from __future__ import annotations

import asyncio
import json
import os
import time

import pytest

from statgrid.errors import UsageError
from statgrid.grid.master.flows import KeyConflict
from statgrid.grid.master.jobspec import JobRequest
from statgrid.grid.master.parts import HOOKS, Part
from statgrid.job.record import JobState
from tests.support.harness import MasterHarness


def _settle(h: MasterHarness) -> None:
    """Let what the master scheduled with call_soon or create_task (sub-tasks' end, kills) run."""
    for _ in range(4):
        h.run(asyncio.sleep(0))


def _req(h: MasterHarness, *argv: str, **kw) -> JobRequest:
    return JobRequest(argv=list(argv), cwd=str(h.root), env={"PATH": os.environ["PATH"]}, **kw)


async def _call(fn, *args, **kw):
    return fn(*args, **kw)


def test_the_master_registers_every_part_in_the_order_their_hooks_run(tmp_path):
    with MasterHarness(tmp_path) as h:
        m = h.master
        assert [p.name for p in m.parts] == ["subtasks", "dependencies", "runlimits", "suspensions", "calendars",
                                             "flows", "usage", "loads", "kernels"]
        assert (m.parts["subtasks"], m.parts["flows"], m.parts["usage"], m.parts["loads"], m.parts["kernels"]) == \
            (m.subtasks, m.flows_part, m.usage, m.thresholds, m.kernels)
        assert {"restored", "submitted", "changed", "planning", "reconfigured"} == set(HOOKS)
        assert not hasattr(m, "children") and not hasattr(m, "throttles") and not hasattr(m, "loads")


# -- flows and arrays ---------------------------------------------------------------------------------------------
def test_a_flow_with_one_bad_job_submits_none_of_its_jobs(tmp_path):
    with MasterHarness(tmp_path, slots=2) as h:
        jobs = [("a", _req(h, "true"), ""), ("b", _req(h, "true", queue="nope"), "done(a)")]
        with pytest.raises(UsageError):
            h.run(_call(h.master.submit_flow, "pair", jobs, h.caller))
        assert h.master.flows(None) == [] and h.engine.launched == []
        assert h.master.store.con.execute("SELECT count(*) FROM jobs").fetchone()[0] == 0


def test_a_flow_job_that_fails_ends_its_dependents_and_the_flow_exit(tmp_path):
    with MasterHarness(tmp_path, slots=2) as h:
        jobs = [("a", _req(h, "false"), ""), ("b", _req(h, "true"), "done(a)"), ("c", _req(h, "true"), "done(b)")]
        rec = h.run(_call(h.master.submit_flow, "chain", jobs, h.caller))
        ids = {j["name"]: j["id"] for j in rec["jobs"]}
        assert rec["state"] == "RUN" and [r.job_id for r in h.engine.launched] == [ids["a"]]
        assert rec["jobs"][1]["pend_reason"].startswith("dependency not met")
        a = h.job(ids["a"])
        h.event(h.started(a))
        h.event(h.finished(a, exit_code=1))
        _settle(h)
        flow = h.master.flow(rec["id"])
        assert {j["name"]: j["state"] for j in flow["jobs"]} == {"a": "EXIT", "b": "EXIT", "c": "EXIT"}
        assert flow["state"] == "EXIT" and flow["counts"] == {"EXIT": 3}
        assert h.job(ids["c"]).exit_reason.startswith("dependency can never be met")
        assert [r.job_id for r in h.engine.launched] == [ids["a"]]          # neither dependent ever ran
        assert [f["id"] for f in h.master.flows(None)] == [rec["id"]]


def test_an_array_keeps_its_throttle_in_the_flows_part_and_runs_no_more_at_once(tmp_path):
    with MasterHarness(tmp_path, slots=4) as h:
        first = h.submit("true", name="arr[1-4]%2")
        assert h.master.flows_part.throttles == {first.flow_id: 2}
        assert sorted(r.job_id for r in h.engine.launched) == [first.id, first.id + 1]
        assert "array throttle" in h.master.pend_reason(h.job(first.id + 2))
        h.event(h.started(first))
        h.event(h.finished(first, exit_code=0))
        assert len(h.engine.launched) == 3                                   # one ended, one more starts
        flow = h.master.flow(first.flow_id)
        assert flow["kind"] == "array" and flow["throttle"] == 2 and flow["counts"] == {"DONE": 1, "RUN": 2, "PEND": 1}
        killed = h.run(h.master.kill_flow(first.flow_id, h.caller))
        assert killed["counts"] == {"DONE": 1, "RUN": 2, "KILLED": 1}        # the pending one at once
        assert h.job(first.id + 3).state is JobState.KILLED and len(h.engine.killed) == 2
        # a new master reads the throttle back from the store
        assert h.restart().flows_part.throttles == {first.flow_id: 2}


def test_a_submit_key_sent_again_answers_the_first_submit_through_the_flows_part(tmp_path):
    with MasterHarness(tmp_path, slots=2) as h:
        req = _req(h, "true")
        first = h.run(_call(h.master.submit, req, h.caller, key="k-1"))
        again = h.run(_call(h.master.submit, req, h.caller, key="k-1"))
        assert again.id == first.id and len(h.engine.launched) == 1
        with pytest.raises(KeyConflict, match="Idempotency-Key 'k-1' was used at"):
            h.run(_call(h.master.submit, _req(h, "false"), h.caller, key="k-1"))


# -- sub-tasks ----------------------------------------------------------------------------------------------------
def test_a_parent_that_ends_holds_its_pending_sub_task_and_kills_its_running_one(tmp_path):
    with MasterHarness(tmp_path, slots=2) as h:
        parent = h.submit("sleep", "60")
        h.event(h.started(parent))
        running = h.submit("true", parent_id=parent.id)
        pending = h.submit("true", parent_id=parent.id)
        assert h.master.subtasks.children == {parent.id: {running.id, pending.id}}
        assert h.job(pending.id).state is JobState.PEND                      # both slots taken
        h.event(h.finished(parent, exit_code=0))                             # frees a slot: not for its sub-task
        assert [r.job_id for r in h.engine.launched] == [parent.id, running.id]
        _settle(h)
        assert h.job(pending.id).state is JobState.KILLED and h.job(pending.id).attempt == 0
        assert [e["event"] for e in h.master.store.events(pending.id)] == ["submit", "kill"]
        assert h.engine.killed == [("node1", h.job(running.id).task_key)]
        assert h.master.subtasks.children == {} and h.master.subtasks.ended_parents == {parent.id}


def test_a_sub_task_needs_a_running_parent_of_the_callers_own(tmp_path):
    with MasterHarness(tmp_path) as h:
        with pytest.raises(UsageError, match="parent job 99 does not exist"):
            h.submit("true", parent_id=99)
        done = h.submit("true")
        h.event(h.started(done))
        h.event(h.finished(done))
        with pytest.raises(UsageError, match=f"parent job {done.id} is DONE, not running"):
            h.submit("true", parent_id=done.id)


def test_restart_a_parent_found_finished_by_the_reconcile_never_starts_its_sub_task(tmp_path):
    """The restored hook rebuilds the parents' sub-tasks before the reconcile: the parent's end it
    finds holds the pending sub-task, so the dispatch after the parent's end cannot start it."""
    with MasterHarness(tmp_path, slots=1) as h:
        parent = h.submit("sleep", "60")
        h.event(h.started(parent))
        child = h.submit("true", parent_id=parent.id)                        # the only slot is the parent's
        h.attempt_file(h.finished(parent, exit_code=0))                       # it ended while the master was down
        m = h.restart()
        assert h.job(parent.id).state is JobState.DONE
        assert m.engine.launched == []                                       # the freed slot stayed empty
        _settle(h)
        assert h.job(child.id).state is JobState.KILLED and h.job(child.id).attempt == 0
        assert m.subtasks.ended_parents == {parent.id}


def test_restart_a_parent_that_ended_while_the_master_was_down_ends_its_sub_task_when_reconciled(tmp_path):
    """Its end committed, the master killed before it ended the sub-task (that comes on call_soon):
    the reconciled hook ends it before the first dispatch could start it in the parent's slot."""
    import dataclasses

    with MasterHarness(tmp_path, slots=1) as h:
        parent = h.submit("sleep", "60")
        h.event(h.started(parent))
        child = h.submit("true", parent_id=parent.id)
        h.master.store.on_change = None                                      # the old master hears nothing more
        run = h.job(parent.id)
        done = dataclasses.replace(run, state=JobState.DONE, end_ts=time.time(), exit_code=0)
        assert h.master.store.update(done, JobState.RUN, run.attempt, "finish")
        m = h.restart()
        assert m.subtasks.children == {} and m.subtasks.ended_parents == {parent.id}
        assert m.engine.launched == []                                       # held before the first dispatch
        _settle(h)
        ended = h.job(child.id)
        assert ended.state is JobState.KILLED and ended.attempt == 0
        assert ended.exit_reason == f"its parent job {parent.id} ended (DONE) while pending"


# -- fairshare usage ------------------------------------------------------------------------------------------------
FAIR = """
[queues.fair]
fairshare = { default = 1 }
"""


def test_an_attempts_end_is_charged_to_its_user_in_its_queue(tmp_path):
    with MasterHarness(tmp_path, extra=FAIR) as h:
        job = h.submit("sleep", "600", queue="fair")
        h.event(h.started(job, start_ts=time.time() - 100.0))
        assert h.master.store.usage() == {}                                  # nothing charged while it runs
        h.event(h.finished(job, exit_code=0))
        (key, (usage_s, as_of)), = h.master.store.usage().items()
        assert key == ("fair", h.caller.user) and 99.0 < usage_s < 102.0 and as_of <= time.time()
        assert h.master.usage.book.rows == {key: (usage_s, as_of)}
        shares = h.master.shares("fair")
        assert [q["queue"] for q in shares["queues"]] == ["fair"]
        row, = [r for r in shares["queues"][0]["rows"] if r["name"] == h.caller.user]
        assert 0.027 < row["usage_h"] < 0.029
        assert h.master.limits().usage[key] == pytest.approx(usage_s, rel=0.01)


def test_a_requeued_attempt_is_charged_and_a_lost_one_too(tmp_path):
    with MasterHarness(tmp_path, slots=2) as h:
        rerun = h.submit("sleep", "600", rerunnable=True)
        once = h.submit("sleep", "600")
        for job in (rerun, once):
            h.event(h.started(job, start_ts=time.time() - 50.0))
            h.event(h.lost(job))
        _settle(h)
        assert h.job(rerun.id).state in (JobState.PEND, JobState.RUN) and h.job(once.id).state is JobState.EXIT
        (key, (usage_s, _)), = h.master.store.usage().items()
        assert key == ("normal", h.caller.user) and 99.0 < usage_s < 102.0


def test_the_usage_part_takes_a_new_half_life_at_a_reconfig(tmp_path):
    with MasterHarness(tmp_path) as h:
        assert h.master.usage.book.half_life_s == h.cfg.scheduling.half_life_s
        text = (tmp_path / "grid.toml").read_text()
        (tmp_path / "grid.toml").write_text(text + "\n[scheduling]\nhalf_life = \"2h\"\n")
        admin = h.master.rights.caller(os.getuid(), "socket")
        if not admin.admin:
            pytest.skip("the harness's caller is not an administrator here")
        changes = h.run(h.master.reconfig(admin))
        assert any(c.startswith("scheduling") for c in changes)
        assert h.master.usage.book.half_life_s == 7200.0


# -- load thresholds --------------------------------------------------------------------------------------------------
def _load(h: MasterHarness, value: float) -> None:
    d = h.cfg.home / "monitor" / "node1"
    d.mkdir(parents=True, exist_ok=True)
    (d / "latest.json").write_text(json.dumps({"node": [{"ts": time.time(), "load_1m": value}]}))


def test_a_host_over_its_load_threshold_is_closed_to_the_plan_and_opened_when_it_falls(tmp_path):
    with MasterHarness(tmp_path, slots=2, host="max_load = 2.0") as h:
        published: list[tuple[str, str]] = []
        h.master._publish_host = lambda host, action: published.append((host, action))
        _load(h, 5.0)
        h.run(h.master.thresholds.refresh())
        assert h.master.thresholds.loads == {"node1": 5.0} and published == [("node1", "busy")]
        job = h.submit("true")
        assert h.engine.launched == [] and h.job(job.id).state is JobState.PEND
        assert "node1 busy (load 5 > 2)" in h.master.pend_reason(h.job(job.id))
        assert h.master.host_views()["node1"].state == "closed_Busy"
        _load(h, 0.5)
        h.run(h.master.thresholds.refresh())                                 # idle again: a dispatch at once
        assert published == [("node1", "busy"), ("node1", "idle")]
        assert [r.job_id for r in h.engine.launched] == [job.id]


def test_the_loads_are_read_before_the_first_dispatch_of_a_restarted_master(tmp_path):
    with MasterHarness(tmp_path, host="max_load = 2.0") as h:
        _load(h, 9.0)
        h.master.thresholds.loads = {"node1": 9.0}                           # busy: the job waits
        job = h.submit("true")
        assert h.engine.launched == []
        _load(h, 0.25)
        m = h.restart()                                                      # reconciled: loads read, then dispatch
        assert m.thresholds.loads == {"node1": 0.25}
        assert [r.job_id for r in m.engine.launched] == [job.id]
        assert m.thresholds._task is not None and not m.thresholds._task.done()


def test_without_a_threshold_the_part_reads_nothing_and_keeps_no_loads(tmp_path):
    with MasterHarness(tmp_path) as h:
        _load(h, 50.0)
        h.master.thresholds.loads = {"node1": 50.0}
        h.run(h.master.thresholds.refresh())
        assert h.master.thresholds.loads == {} and h.master.thresholds.watched() == []


# -- the new hooks -----------------------------------------------------------------------------------------------------
def test_a_restart_calls_restored_before_the_reconcile_and_reconciled_before_the_first_dispatch(tmp_path):
    heard: list[tuple] = []

    class Recorder(Part):
        name = "recorder"

        def restored(self):
            heard.append(("restored", sorted(self.master.running), sorted(self.master.pending.jobs)))

        async def reconciled(self):
            heard.append(("reconciled", sorted(self.master.running)))

        def planning(self):
            heard.append(("planning",))

        async def start(self):
            heard.append(("start",))

    with MasterHarness(tmp_path) as h:
        running = h.submit("sleep", "60")
        h.event(h.started(running))
        pending = h.submit("true")
        h.attempt_file(h.finished(running, exit_code=0))

        real = h._make

        async def make():
            master = await real()
            rec = Recorder()
            rec.master = master
            master.parts.add(rec)
            return master
        h._make = make
        h.restart()
        assert heard == [("restored", [running.id], [pending.id]),
                         ("planning",),                      # the reconcile's finish of `running` dispatches
                         ("reconciled", [pending.id]),
                         ("start",)]
        assert h.job(running.id).state is JobState.DONE and h.job(pending.id).state is JobState.RUN
