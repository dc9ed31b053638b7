"""The lifecycle's other transitions replayed through a real Master on a recording engine
(tests/support/harness.py): dependencies, modify and top/bottom, kills that end EXIT (a run limit),
`grid down` of a rerunnable job, a task lost before its job started. test_lifecycle.py has the
table alone and the run/finish/kill/requeue/suspend paths. No Dask, no node, no launcher."""
from __future__ import annotations

import asyncio

import pytest

from statgrid.errors import UsageError
from statgrid.job.lifecycle import FINISHED_STATES, IllegalTransition, JobState, change, killed_state
from tests.support.harness import MasterHarness


def _events(h: MasterHarness, job_id: int) -> list[str]:
    return [e["event"] for e in h.master.store.events(job_id)]


def _settle(h: MasterHarness) -> None:
    """Let what the master scheduled with call_soon or create_task (dependents' re-check, engine calls) run."""
    for _ in range(3):
        h.run(asyncio.sleep(0))


# -- dependencies ---------------------------------------------------------------------------------------------
def test_a_dependency_that_can_never_be_met_ends_the_pending_job_exit(tmp_path):
    with MasterHarness(tmp_path) as h:
        first = h.submit("false")
        waiting = h.submit("true", depend=f"done({first.id})")
        assert h.job(waiting.id).state is JobState.PEND and len(h.engine.launched) == 1
        h.event(h.started(first))
        h.event(h.finished(first, exit_code=3))
        _settle(h)
        ended = h.job(waiting.id)
        assert ended.state is JobState.EXIT and ended.exit_reason.startswith("dependency can never be met")
        assert ended.end_ts is not None and ended.attempt == 0                  # it never ran
        assert _events(h, waiting.id) == ["submit", "dependency"]
        assert [r.job_id for r in h.engine.launched] == [first.id]


def test_a_met_dependency_releases_the_job_to_a_dispatch(tmp_path):
    with MasterHarness(tmp_path) as h:
        first = h.submit("true")
        waiting = h.submit("true", depend=f"done({first.id})")
        h.event(h.started(first))
        h.event(h.finished(first, exit_code=0))
        _settle(h)
        assert (h.job(waiting.id).state, h.job(waiting.id).attempt) == (JobState.RUN, 1)
        assert [r.job_id for r in h.engine.launched] == [first.id, waiting.id]
        assert _events(h, waiting.id) == ["submit", "dispatch"]


def test_the_table_refuses_a_dependency_end_of_a_job_that_runs():
    from tests.unit.test_lifecycle import _job
    with pytest.raises(IllegalTransition, match="'dependency' is not allowed from state RUN"):
        change(_job(state=JobState.RUN), "dependency")


# -- modify, top, bottom: pending jobs only ------------------------------------------------------------------------
def test_modify_and_move_change_a_pending_job_and_refuse_a_running_one(tmp_path):
    with MasterHarness(tmp_path, slots=1) as h:
        running, second, third = h.submit("sleep", "60"), h.submit("sleep", "60"), h.submit("sleep", "60")
        assert [h.job(j.id).state for j in (running, second, third)] == [JobState.RUN, JobState.PEND, JobState.PEND]
        modified = h.master.modify(second.id, h.caller, {"priority": 5, "name": "renamed"})
        assert (modified.state, modified.priority, modified.name) == (JobState.PEND, 5, "renamed")
        assert _events(h, second.id) == ["submit", "modify"]
        before = h.job(third.id).position
        moved = h.master.move(third.id, h.caller, "top")
        assert moved.state is JobState.PEND and moved.position < before
        assert _events(h, third.id) == ["submit", "top"]
        h.master.move(third.id, h.caller, "bottom")
        assert _events(h, third.id) == ["submit", "top", "bottom"]
        with pytest.raises(UsageError, match=f"job {running.id} is RUN: only a pending job can be modified"):
            h.master.modify(running.id, h.caller, {"priority": 1})
        with pytest.raises(UsageError, match=f"job {running.id} is RUN: only a pending job can be moved"):
            h.master.move(running.id, h.caller, "top")
        with pytest.raises(IllegalTransition, match="'top' is not allowed from state RUN"):
            h.master._change(h.job(running.id), "top", position=0.0)
        assert _events(h, running.id) == ["submit", "dispatch"]
        assert len(h.engine.launched) == 1                               # the one slot stays taken


# -- kills that end EXIT, kills of what has ended ------------------------------------------------------------------
def test_killed_state_is_exit_for_a_limit_and_killed_otherwise():
    assert killed_state(None) is JobState.KILLED
    assert killed_state("EXIT") is JobState.EXIT
    assert killed_state("KILLED") is JobState.KILLED


def test_a_run_limit_kill_ends_the_job_exit_with_its_reason(tmp_path):
    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "60")
        h.event(h.started(job))
        reason = "run limit reached: ran 1m0s, limit 1m0s (-W); killed"
        marked = h.run(h.master.kill(job.id, reason=reason, kill_as=JobState.EXIT))
        assert (marked.state, marked.kill_requested, marked.kill_as) == (JobState.RUN, True, "EXIT")
        h.event(h.finished(job, exit_code=None, signal=15))
        ended = h.job(job.id)
        assert (ended.state, ended.exit_reason, ended.signal) == (JobState.EXIT, reason, 15)
        assert _events(h, job.id)[-2:] == ["kill", "finish"]


@pytest.mark.parametrize("kill_as, expected", [(JobState.EXIT, JobState.EXIT), (JobState.KILLED, JobState.KILLED)])
def test_a_killed_job_whose_host_is_lost_ends_as_its_kill_said(tmp_path, kill_as, expected):
    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "60", rerunnable=True)                  # a requested kill is never requeued
        h.event(h.started(job))
        h.run(h.master.kill(job.id, reason="stop it", kill_as=kill_as))
        h.event(h.lost(job))
        ended = h.job(job.id)
        assert (ended.state, ended.exit_reason, ended.requeues) == (expected, "stop it", 0)
        assert _events(h, job.id)[-2:] == ["kill", "lost"]


def test_a_kill_of_an_ended_job_changes_nothing(tmp_path):
    with MasterHarness(tmp_path) as h:
        done = h.done()
        assert h.kill(done.id) == done
        assert _events(h, done.id) == ["submit", "dispatch", "start", "finish"] and h.engine.killed == []


@pytest.mark.parametrize("ended", FINISHED_STATES)
def test_the_table_allows_only_a_requeue_of_an_ended_job(ended):
    from statgrid.job.lifecycle import TRANSITIONS
    allowed = {name for name, t in TRANSITIONS.items() if ended in t.moves}
    assert allowed == {"requeue"}


# -- grid down, lost tasks -----------------------------------------------------------------------------------------
def test_grid_down_ends_a_rerunnable_job_and_requeues_it_in_the_same_transaction(tmp_path):
    with MasterHarness(tmp_path) as h:
        rerun = h.submit("sleep", "60", rerunnable=True)
        h.event(h.started(rerun))
        h.master.begin_shutdown()                                        # no dispatch from here on
        h.run(h.master.kill(rerun.id, reason="grid down"))
        h.event(h.finished(rerun, exit_code=None, signal=15))
        again = h.job(rerun.id)
        assert (again.state, again.requeues, again.attempt) == (JobState.PEND, 1, 1)
        assert (again.host, again.end_ts, again.exit_reason, again.kill_requested, again.signal) == \
               (None, None, None, False, None)
        assert _events(h, rerun.id)[-3:] == ["kill", "finish", "requeue"]
        assert len(h.engine.launched) == 1                               # not dispatched again while going down


def test_grid_down_ends_a_job_that_is_not_rerunnable_killed(tmp_path):
    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "60")
        h.event(h.started(job))
        h.master.begin_shutdown()
        h.run(h.master.kill(job.id, reason="grid down"))
        h.event(h.finished(job, exit_code=None, signal=15))
        assert (h.job(job.id).state, h.job(job.id).exit_reason) == (JobState.KILLED, "grid down")
        assert _events(h, job.id)[-2:] == ["kill", "finish"]


def test_a_task_lost_before_its_job_started_is_cancelled_and_requeued(tmp_path):
    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "60")
        h.master.begin_shutdown()                                        # so the requeued job stays PEND to look at
        sent = h.job(job.id)

        async def lose() -> None:
            h.master._settle_lost_task(sent, "its worker went away")
        h.run(lose())
        _settle(h)
        again = h.job(job.id)
        assert (again.state, again.requeues, again.attempt, again.host) == (JobState.PEND, 1, 1, None)
        assert h.engine.cancelled == [sent.task_key]
        assert _events(h, job.id) == ["submit", "dispatch", "requeue"]
