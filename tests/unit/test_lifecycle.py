"""The job lifecycle (statgrid/job/lifecycle.py): its table alone, then each transition replayed
through a real Master on a recording engine (tests/support/harness.py) — no Dask, no node, no launcher."""
from __future__ import annotations

import json
import logging

import pytest

from statgrid.job import lifecycle
from statgrid.job.accounting import JobRusage
from statgrid.job.jobdir import JobDir
from statgrid.job.lifecycle import IllegalTransition, JobState, change, shown_state
from statgrid.job.protocol import IoCounters, Rusage
from statgrid.job.record import Job
from tests.support.harness import MasterHarness


def _job(**kw) -> Job:
    return Job(id=7, user="ann", queue="normal", name="j", kind="command", argv=["true"], cwd="/", **kw)


# -- the table ----------------------------------------------------------------------------------------------
def test_dispatch_starts_a_new_attempt_and_forgets_the_last_run():
    old = _job(state=JobState.PEND, attempt=2, start_ts=5.0, end_ts=6.0, pid=9, suspend_ts=1.0, suspended_s=3.0,
               kill_as="EXIT")
    new = change(old, "dispatch", host="node1", dispatch_ts=10.0)
    assert (new.state, new.attempt, new.host, new.dispatch_ts) == (JobState.RUN, 3, "node1", 10.0)
    assert (new.start_ts, new.end_ts, new.pid, new.suspend_ts, new.suspended_s, new.kill_as) == \
           (None, None, None, None, 0.0, None)
    assert old.state is JobState.PEND and old.attempt == 2                 # the old record is left alone


def test_requeue_of_an_ended_job_clears_its_end():
    ended = _job(state=JobState.KILLED, attempt=1, host="node1", pid=9, dispatch_ts=1.0, start_ts=2.0, end_ts=3.0,
                 exit_code=None, signal=15, exit_reason="grid down", kill_requested=True, kill_as="EXIT", requeues=4)
    new = change(ended, "requeue")
    assert new.state is JobState.PEND and new.requeues == 5 and new.attempt == 1
    assert [getattr(new, f) for f in ("host", "pid", "dispatch_ts", "start_ts", "end_ts", "exit_code", "signal",
                                      "exit_reason", "kill_as", "suspend_ts")] == [None] * 10
    assert new.kill_requested is False and new.suspended_s == 0.0


@pytest.mark.parametrize("state, event", [
    (JobState.DONE, "dispatch"), (JobState.PEND, "start"), (JobState.PEND, "finish"), (JobState.EXIT, "kill"),
    (JobState.RUN, "modify"), (JobState.RUN, "dependency"), (JobState.KILLED, "suspend"), (JobState.PEND, "lost"),
])
def test_an_event_from_a_state_that_does_not_allow_it_is_refused_and_logged(state, event, caplog):
    with caplog.at_level(logging.ERROR, logger="statgrid.lifecycle"):
        with pytest.raises(IllegalTransition, match=f"'{event}' is not allowed from state {state.value}"):
            change(_job(state=state), event, to=JobState.EXIT)
    assert f"'{event}' is not allowed from state {state.value}" in caplog.text


def test_a_next_state_the_event_cannot_reach_is_refused():
    with pytest.raises(IllegalTransition, match="cannot take a RUN job to DONE"):
        change(_job(state=JobState.RUN), "lost", to=JobState.DONE)
    with pytest.raises(IllegalTransition, match="needs a next state"):
        change(_job(state=JobState.RUN), "finish")
    with pytest.raises(IllegalTransition, match="unknown event 'explode'"):
        change(_job(state=JobState.RUN), "explode")
    with pytest.raises(IllegalTransition, match="sets attempt itself"):
        change(_job(state=JobState.PEND), "dispatch", attempt=9)


def test_ususp_is_shown_for_a_suspended_run_job_only():
    assert shown_state(JobState.RUN, 12.0) == "USUSP"
    assert shown_state("RUN", None) == "RUN"
    assert shown_state(JobState.DONE, 12.0) == "DONE"                     # a stale suspend_ts shows nothing
    assert _job(state=JobState.RUN, suspend_ts=1.0).to_dict()["state"] == "USUSP"
    assert Job.from_dict({**_job().to_dict(), "state": "USUSP"}).state is JobState.RUN
    assert lifecycle.FINISHED_NAMES == ("DONE", "EXIT", "KILLED")


# -- replayed through a master --------------------------------------------------------------------------------
def test_a_job_runs_to_done_with_its_usage_typed(tmp_path):
    with MasterHarness(tmp_path) as h:
        job = h.submit("true")
        assert h.job(job.id).state is JobState.RUN and h.job(job.id).attempt == 1
        (request,) = h.engine.launched
        directory = JobDir.of(h.cfg.home, job.id)
        assert (request.job_dir, request.stdout, request.host) == (str(directory.path), str(directory.output), "node1")
        h.event(h.started(job, pid=4321, start_ts=100.0))
        assert (h.job(job.id).pid, h.job(job.id).start_ts) == (4321, 100.0)
        ru = Rusage(user_cpu_s=1.5, sys_cpu_s=0.25, max_rss_bytes=2**20, page_faults=1, page_reclaims=2,
                    voluntary_ctx_switches=3, involuntary_ctx_switches=4, block_input_ops=5, block_output_ops=6)
        io = IoCounters(logical_read_bytes=10, logical_write_bytes=20, read_bytes=30, write_bytes=40)
        h.event(h.finished(job, exit_code=0, rusage=ru, io=io))
        done = h.job(job.id)
        assert done.state is JobState.DONE and done.exit_reason is None
        assert isinstance(done.rusage, JobRusage) and done.rusage.cpu_s == 1.75 and done.rusage.write_bytes == 40
        # the API's JSON keys are the ones it always had: rusage's and io's fields, flat
        assert json.loads(json.dumps(done.to_dict()))["rusage"] == {**ru.to_dict(), **io.to_dict()}
        assert [e["event"] for e in h.master.store.events(job.id)] == ["submit", "dispatch", "start", "finish"]


def test_a_non_zero_exit_ends_exit_and_a_late_event_of_an_old_attempt_is_ignored(tmp_path):
    with MasterHarness(tmp_path) as h:
        job = h.submit("false")
        h.event(h.started(job))
        start = h.started(job)
        h.event(h.finished(job, exit_code=3))
        assert (h.job(job.id).state, h.job(job.id).exit_reason) == (JobState.EXIT, "exit code 3")
        h.event(start)                                                    # late news: the job is no longer RUN
        assert h.job(job.id).state is JobState.EXIT


def test_kill_of_a_pending_job_ends_it_killed_at_once(tmp_path):
    with MasterHarness(tmp_path, slots=1) as h:
        first, second = h.submit("sleep", "60"), h.submit("sleep", "60")
        assert h.job(second.id).state is JobState.PEND and len(h.engine.launched) == 1
        killed = h.kill(second.id)
        assert (killed.state, killed.kill_requested, killed.exit_reason) == \
               (JobState.KILLED, True, "killed by user while pending")
        assert h.job(first.id).state is JobState.RUN and len(h.engine.launched) == 1


def test_kill_of_a_running_job_marks_it_and_its_end_makes_it_killed(tmp_path):
    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "60")
        h.event(h.started(job))
        marked = h.kill(job.id)
        assert (marked.state, marked.kill_requested) == (JobState.RUN, True)
        assert h.engine.killed == [("node1", marked.task_key)]
        h.event(h.finished(job, exit_code=None, signal=15))
        assert (h.job(job.id).state, h.job(job.id).exit_reason) == (JobState.KILLED, "killed by user")


def test_a_rerunnable_job_whose_host_was_lost_is_requeued_and_dispatched_again(tmp_path):
    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "60", rerunnable=True)
        h.event(h.started(job))
        h.event(h.lost(job))
        again = h.job(job.id)
        assert (again.state, again.attempt, again.requeues) == (JobState.RUN, 2, 1)     # requeued, then dispatched
        assert [r.attempt for r in h.engine.launched] == [1, 2]
        assert [e["event"] for e in h.master.store.events(job.id)][-2:] == ["requeue", "dispatch"]


def test_a_job_whose_host_was_lost_ends_exit_unless_rerunnable(tmp_path):
    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "60")
        h.event(h.started(job))
        h.event(h.lost(job, reason="host lost: the launcher of node1 died"))
        ended = h.job(job.id)
        assert (ended.state, ended.exit_reason) == (JobState.EXIT, "host lost: the launcher of node1 died")


def test_suspend_and_resume_go_through_the_table(tmp_path):
    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "60")
        h.event(h.started(job))
        assert h.run(h.master.suspend(job.id, h.caller)).shown_state == "USUSP"
        assert h.run(h.master.resume(job.id, h.caller)).shown_state == "RUN"
        assert h.engine.suspended == h.engine.resumed == [h.job(job.id).task_key]


def test_the_master_refuses_a_change_the_table_does_not_allow_and_writes_nothing(tmp_path):
    with MasterHarness(tmp_path) as h:
        done = h.done()
        with pytest.raises(IllegalTransition, match="'start' is not allowed from state DONE"):
            h.master._change(done, "start", pid=1, start_ts=1.0)
        assert h.job(done.id) == done
        assert [e["event"] for e in h.master.store.events(done.id)][-1] == "finish"
