"""The master's parts (statgrid/grid/master/parts.py): the registry, the hooks the core calls, and
the calendars part, on a master with a recording engine (tests/harness.py) — no grid."""
from __future__ import annotations

import logging
import time

import pytest

from statgrid.errors import NotFound
from statgrid.grid.master.parts import Part, Parts
from statgrid.job.record import JobState
from tests.support.harness import MasterHarness


class Recorder(Part):
    name = "recorder"

    def __init__(self):
        self.heard: list[tuple] = []

    def submitted(self, job):
        self.heard.append(("submitted", job.id, job.state.value))

    def changed(self, job, event):
        self.heard.append(("changed", job.id, event, job.state.value))

    def planning(self):
        self.heard.append(("planning",))

    def reconfigured(self, cfg):
        self.heard.append(("reconfigured",))


def test_a_part_hears_a_job_submitted_dispatched_started_and_finished(tmp_path):
    with MasterHarness(tmp_path) as h:
        rec = h.master.parts.add(Recorder())
        job = h.submit("true")
        h.event(h.started(job))
        h.event(h.finished(job, exit_code=0))
        changes = [e for e in rec.heard if e[0] == "changed"]
        assert changes == [("changed", job.id, "submit", "PEND"), ("changed", job.id, "dispatch", "RUN"),
                           ("changed", job.id, "start", "RUN"), ("changed", job.id, "finish", "DONE")]
        # admitted once, before the dispatch that planned it
        assert rec.heard.index(("submitted", job.id, "PEND")) < rec.heard.index(("planning",)) \
            < rec.heard.index(("changed", job.id, "dispatch", "RUN"))


def test_a_part_hears_a_waiting_job_released_when_its_parent_finishes(tmp_path):
    with MasterHarness(tmp_path, slots=2) as h:
        rec = h.master.parts.add(Recorder())
        parent = h.submit("true")
        child = h.submit("true", depend=f"done({parent.id})")
        assert h.job(child.id).state is JobState.PEND
        assert h.master.dependencies.dependents == {parent.id: {child.id}}
        assert h.master.pend_reason(h.job(child.id)).startswith("dependency not met")
        h.event(h.started(parent))
        h.event(h.finished(parent, exit_code=0))
        h.run(__import__("asyncio").sleep(0))          # the dependents' re-check runs soon after the change
        assert h.job(child.id).state is JobState.RUN
        assert ("changed", child.id, "dispatch", "RUN") in rec.heard
        assert h.master.dependencies.dependents == {}          # the part's own state: no one waits now
        assert rec.heard.index(("changed", parent.id, "finish", "DONE")) < \
            rec.heard.index(("changed", child.id, "dispatch", "RUN"))


def test_a_dependency_that_can_never_be_met_ends_the_waiting_job_exit(tmp_path):
    with MasterHarness(tmp_path, slots=2) as h:
        parent = h.submit("false")
        child = h.submit("true", depend=f"done({parent.id})")
        h.event(h.started(parent))
        h.event(h.finished(parent, exit_code=1))
        h.run(__import__("asyncio").sleep(0))
        ended = h.job(child.id)
        assert ended.state is JobState.EXIT and ended.exit_reason.startswith("dependency can never be met")
        assert [e["event"] for e in h.master.store.events(child.id)] == ["submit", "dependency"]


def test_a_failing_hook_is_logged_and_neither_the_core_nor_other_parts_stop(tmp_path, caplog):
    class Broken(Part):
        name = "broken"

        def changed(self, job, event):
            raise RuntimeError("boom")

    with MasterHarness(tmp_path) as h:
        h.master.parts.add(Broken())
        rec = h.master.parts.add(Recorder())
        with caplog.at_level(logging.ERROR, logger="statgrid.master"):
            job = h.submit("true")
        assert h.job(job.id).state is JobState.RUN
        assert ("changed", job.id, "dispatch", "RUN") in rec.heard
        assert "part broken: hook changed failed" in caplog.text


def test_the_registry_refuses_a_second_part_of_the_same_name_and_an_unknown_hook():
    parts = Parts()
    parts.add(Recorder())
    with pytest.raises(ValueError, match="'recorder' is registered already"):
        parts.add(Recorder())
    with pytest.raises(ValueError, match="unknown hook 'exploded'"):
        parts.call("exploded")
    assert [p.name for p in parts] == ["recorder"] and len(parts) == 1


def test_the_master_registers_its_calendars_part(tmp_path):
    with MasterHarness(tmp_path) as h:
        assert h.master.parts["calendars"] is h.master.calendars


def test_a_calendar_fires_through_its_part_and_submits_a_job_as_its_user(tmp_path):
    with MasterHarness(tmp_path) as h:
        from statgrid.grid.master.jobspec import JobRequest
        import os

        req = JobRequest(argv=["true"], cwd=str(tmp_path), env={"PATH": os.environ["PATH"]})
        rec = h.run(_async(h.master.schedule_add, h.caller, "@daily", "UTC", req))
        assert [r["id"] for r in h.master.schedules(None)] == [rec["id"]]
        h.master.store.con.execute("UPDATE schedules SET next_ts = ? WHERE id = ?", (time.time() - 1, rec["id"]))
        h.run(_async(h.master.calendars._fire, rec["id"], time.time()))
        fired = h.master.schedule(rec["id"])
        job_id = int(fired["last_result"].split()[1])
        assert fired["last_result"] == f"job {job_id}" and fired["next_ts"] > time.time()
        assert h.job(job_id).user == h.caller.user and h.job(job_id).argv == ["true"]
        assert h.master.schedule_remove(rec["id"], h.caller)["id"] == rec["id"]
        assert h.master.schedules(None) == []


def test_check_host_is_public_and_names_the_hosts(tmp_path):
    with MasterHarness(tmp_path) as h:
        h.master.check_host("node1")
        with pytest.raises(NotFound, match="host 'nope' does not exist; hosts: node1"):
            h.master.check_host("nope")


async def _async(fn, *args):
    return fn(*args)


def test_the_runlimits_part_kills_a_job_over_its_limit_and_ends_it_exit(tmp_path):
    import asyncio

    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "600", runlimit_s=60.0)
        h.event(h.started(job, start_ts=time.time() - 61.0))      # ran 61 s of its 60 s already
        assert set(h.master.runlimits.timers) == {job.id}
        h.run(asyncio.sleep(0.2))                                 # the timer fires DUE_SLACK_S after the limit
        assert h.engine.killed == [("node1", h.job(job.id).task_key)] and h.master.runlimits.timers == {}
        h.event(h.finished(job, exit_code=None, signal=15))
        ended = h.job(job.id)
        assert ended.state is JobState.EXIT and ended.exit_reason.startswith("run limit reached: ran 1m01s, limit 1m00s (-W)")


def test_the_runlimits_part_does_not_kill_a_job_under_its_limit(tmp_path):
    import asyncio

    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "600", runlimit_s=60.0)
        h.event(h.started(job))
        h.run(asyncio.sleep(0.1))
        assert h.engine.killed == [] and set(h.master.runlimits.timers) == {job.id}
        h.master.runlimits.stop()


def test_the_suspensions_part_refuses_a_second_request_while_one_is_under_way(tmp_path):
    from statgrid.errors import UsageError

    with MasterHarness(tmp_path) as h:
        job = h.submit("sleep", "60")
        h.event(h.started(job))
        part = h.master.parts["suspensions"]
        part.suspending.add(job.id)                               # a suspend waiting on its node
        with pytest.raises(UsageError, match=f"job {job.id} is being suspended or resumed by another request"):
            h.run(h.master.suspend(job.id, h.caller))
        part.suspending.clear()
        assert h.run(h.master.suspend(job.id, h.caller)).shown_state == "USUSP" and part.suspending == set()
