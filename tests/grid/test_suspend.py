"""Suspending and resuming a running job on its node (node.suspend_job, node.resume_job: LSF's
bstop and bresume), on real jobs that node.run_job starts through the node's own launcher: with a
cgroup v2 per job where this host allows one (frozen), and with process groups alone (SIGSTOP).

Nothing here asserts how long anything took: a suspended job's CPU time is read twice and must not
have grown; a resumed one's must grow (polled until it does).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import types
from pathlib import Path

import pytest

from statgrid.grid.execution import cgroups, node, usage
from statgrid.job.jobdir import usage_path
from statgrid.grid.execution.engine import Engine
from statgrid.job.protocol import AttemptFinished, AttemptLost, AttemptStarted
from statgrid.host.procfs import parse_stat_state, process_group_alive, process_group_running
from tests.grid import test_grid_launcher as launcher_tests
from tests.conftest import WAIT_S, wait_for, wait_gone

node_launcher = launcher_tests.node_launcher        # node.py's own launcher, with and without cgroups

# The job: its first process handles SIGTERM (as a session does, to remove its WORK) and sleeps; a
# child burns CPU in its process group and, with "setsid", another in a session of its own.
JOB = textwrap.dedent("""
    import os, signal, subprocess, sys, time

    def on_term(signum, frame):
        open("term.txt", "w").write("handled")
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_term)

    def burner(name, **kw):
        pid = subprocess.Popen([sys.executable, "-c", "while True: pass"], **kw).pid
        open(name + ".tmp", "w").write(str(pid))
        os.rename(name + ".tmp", name)

    burner("burn.pid")
    if sys.argv[1] == "setsid":
        burner("sid.pid", start_new_session=True)
    while True:
        time.sleep(0.05)
""")

NO_CGROUP = ("this host cannot create a cgroup v2 for a job (no cgroup2 mount shows this process's cgroup, or it "
             "may not be written): only the process group is suspended, which a setsid child has left")


@dataclasses.dataclass
class RunningJob:
    started: AttemptStarted
    children: list[int]                  # pids of its burners: [in its group, in a session of its own]
    result: list                         # run_job's outcome, once it returned
    thread: threading.Thread

    @property
    def tree(self) -> list[int]:
        return [self.started.pid, *self.children]


@contextlib.contextmanager
def running_job(tmp_path: Path, job_id: int, setsid: bool):
    """The job of JOB run by node.run_job in a thread; with setsid (node's own launcher) its children
    leave the job's process group, and only a cgroup holds them all: the test is skipped without one."""
    spec = launcher_tests.request([sys.executable, "-c", JOB, "setsid" if setsid else "group"], tmp_path,
                                  tmp_path / "output.txt", job_id=job_id).to_dict()
    result: list = []
    thread = threading.Thread(target=lambda: result.append(node.run_job(spec)))
    thread.start()
    started = AttemptStarted.from_dict(json.loads(launcher_tests._text_of(tmp_path / f"{job_id}.1.json")))
    try:
        if setsid and started.cgroup is None:
            pytest.skip(NO_CGROUP)
        children = [launcher_tests._pid_in(tmp_path / name) for name in ["burn.pid", "sid.pid"][:1 + setsid]]
        yield RunningJob(started, children, result, thread)
    finally:
        if thread.is_alive():
            node._kill_all_of(started)
            thread.join(WAIT_S)


def cpu_ticks(pids: list[int]) -> int:
    """The processes' CPU time (/proc/<pid>/stat utime+stime+cutime+cstime), in clock ticks."""
    return sum(usage.parse_proc_stat_cpu_ticks(Path(f"/proc/{pid}/stat").read_text()) for pid in pids)


def state(pid: int) -> str:
    return parse_stat_state(Path(f"/proc/{pid}/stat").read_text())


@pytest.mark.root
def test_suspend_stops_every_process_of_the_job_and_resume_lets_them_run(node_launcher, tmp_path):
    # With a cgroup, a child that called setsid (outside the job's process group) is stopped too.
    with running_job(tmp_path, 11, setsid=node_launcher) as job:
        key, cgroup = job.started.key, job.started.cgroup
        if node_launcher:
            assert os.getpgid(job.children[1]) != job.started.pgid
        assert node.suspend_job(key) and node.suspend_job(key)          # a second time changes nothing
        assert node.suspended_jobs() == [key]
        if cgroup:
            assert cgroups.cgroup_frozen(cgroup)
        else:
            assert [state(pid) for pid in job.tree] == ["T"] * len(job.tree)
        ticks, sampled = cpu_ticks(job.tree), usage.sample(job.started.pid, cgroup)
        usage_file = usage_path(tmp_path, 11, 1)
        samples = len(usage.read_series(usage_file))
        time.sleep(0.5)
        node.sample_running()                                          # the node samples it as before ...
        assert len(usage.read_series(usage_file)) > samples
        assert cpu_ticks(job.tree) == ticks                            # ... and its CPU time does not grow
        assert usage.sample(job.started.pid, cgroup)["cpu_s"] == sampled["cpu_s"]

        assert node.resume_job(key) and node.resume_job(key)
        assert node.suspended_jobs() == []
        if cgroup:
            assert not cgroups.cgroup_frozen(cgroup)
        frozen = {pid: cpu_ticks([pid]) for pid in job.children}
        wait_for(lambda: all(cpu_ticks([pid]) > frozen[pid] for pid in job.children), "every burner to run again")
        # The launcher did not take its stopped child for an ended one: the job runs on.
        assert job.thread.is_alive() and job.result == []


@pytest.mark.root
def test_a_suspended_job_is_killed_after_handling_its_sigterm(node_launcher, tmp_path):
    with running_job(tmp_path, 12, setsid=node_launcher) as job:
        key, cgroup = job.started.key, job.started.cgroup
        assert node.suspend_job(key)
        # A grace far longer than the test may wait: only a SIGTERM acted on at once ends the job in time.
        assert node.kill_job(key, grace_s=600)
        job.thread.join(WAIT_S)
        assert not job.thread.is_alive(), "the suspended job did not act on its SIGTERM"
        (outcome,) = job.result
    assert isinstance(outcome, AttemptFinished) and outcome.signal == signal.SIGTERM, outcome
    assert (tmp_path / "term.txt").read_text() == "handled"
    wait_gone(job.tree)
    if cgroup:
        launcher_tests._wait_dir_gone(cgroup)
    assert not node.suspend_job(key) and not node.resume_job(key)      # no longer known here
    assert node.suspended_jobs() == []


@pytest.mark.root
@pytest.mark.parametrize("cleanup", ["fence", "launcher-died"])
def test_the_nodes_cleanup_ends_a_suspended_job(node_launcher, tmp_path, cleanup):
    # Fencing SIGKILLs the job's group and cgroup (node._kill_all_of); when the launcher dies, the
    # kernel SIGKILLs the job's first process and the worker the rest (node._end_orphaned_job).
    with running_job(tmp_path, 13, setsid=node_launcher) as job:
        key, cgroup = job.started.key, job.started.cgroup
        assert node.suspend_job(key)
        if cleanup == "fence":
            node._kill_all_of(job.started)
        else:
            os.kill(node.launcher_pid(), signal.SIGKILL)
        job.thread.join(WAIT_S)
        (outcome,) = job.result
    if cleanup == "fence":
        assert isinstance(outcome, AttemptFinished) and outcome.signal == signal.SIGKILL, outcome
    else:
        assert isinstance(outcome, AttemptLost), outcome
    wait_gone(job.tree)
    if cgroup:
        launcher_tests._wait_dir_gone(cgroup)


def test_suspend_and_resume_of_a_job_not_running_here(tmp_path):
    assert not node.suspend_job("statgrid-job-999-1")
    assert not node.resume_job("statgrid-job-999-1")
    assert node.suspended_jobs() == []
    # The master's handle: a host without a worker answers nothing, which is False.
    engine = Engine(tmp_path, {"node1": 1})
    assert asyncio.run(engine.suspend("node1", "statgrid-job-999-1")) is False
    assert asyncio.run(engine.resume("node1", "statgrid-job-999-1")) is False


def test_a_cgroup_without_freeze_falls_back_to_sigstop(tmp_path):
    """Linux < 5.2 has no cgroup.freeze: the job's process group is stopped instead. (A directory
    stands for such a cgroup; the process group is real.)"""
    key = "statgrid-job-14-1"
    old_cgroup = tmp_path / "cgroup-without-freeze"
    old_cgroup.mkdir()
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    node._running[key] = types.SimpleNamespace(job_id=14, pid=proc.pid, pgid=proc.pid, cgroup=str(old_cgroup))
    try:
        assert node.suspend_job(key)
        assert state(proc.pid) == "T"
        assert node.resume_job(key)
        wait_for(lambda: state(proc.pid) != "T", "the process to continue")
        old_cgroup.rmdir()                           # the launcher removes a job's cgroup once it has ended:
        assert not node.suspend_job(key)             # ... the job is taken for ended, and left alone
        assert state(proc.pid) != "T"
    finally:
        node._running.pop(key, None)
        node._suspended.pop(key, None)
        proc.kill()
        proc.wait()


def test_process_group_running_over_fake_proc(tmp_path):
    def stat(pid, state_letter, pgrp):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a ) b) {state_letter} 1 {pgrp} {pgrp} 0 -1 4194560 0 0\n")

    stat(20, "T", 20)                                # stopped
    stat(21, "t", 20)                                # stopped by a tracer
    stat(22, "Z", 20)                                # a zombie
    stat(23, "R", 30)                                # another group
    assert not process_group_running(20, str(tmp_path)) and process_group_alive(20, str(tmp_path))
    stat(24, "D", 20)                                # in uninterruptible I/O: not stopped yet
    assert process_group_running(20, str(tmp_path))
