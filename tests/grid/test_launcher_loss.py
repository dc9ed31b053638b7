"""A node's launcher killed with SIGKILL while jobs run (issue 14, item 10), on a real grid.

The launcher is the parent of every job of its node. When it dies, no process of its jobs may
outlive it (grandchildren included: those are what survived, re-parented to PID 1), and the
jobs end as on the loss of the worker: a rerunnable job is requeued and runs again on the
node's next launcher, any other job ends EXIT "host lost"; WORK is removed and slots are freed.
"""
from __future__ import annotations

import json
import os
import signal

import psutil
import pytest

from tests.conftest import scratch_dirs, wait_for, wait_gone
from tests.support.gridtest import Grid, running
from tests.support.gridtoml import toml_text

GRID_TOML = toml_text({"node1": 2}, monitor=True)


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    # one host of 2 slots: one launcher for both jobs
    with running(Grid(tmp_path_factory.mktemp("grid"), GRID_TOML)) as g:
        yield g


HOLD_JOB = """
import subprocess, time
import statgrid
with statgrid.session() as s:
    child = subprocess.Popen(["sleep", "300"])      # a grandchild of the launcher
    open("child.pid", "w").write(str(child.pid))
    time.sleep(300)
"""


def rerun_argv(pid_file: str) -> list[str]:
    """Attempt 1 leaves a background grandchild beside its own sleep; attempt 2 ends at once."""
    return ["sh", "-c", f'[ "$STATGRID_JOB_ATTEMPT" = 1 ] || exit 0; sleep 300 & echo $! > {pid_file}; sleep 300']


def _launchers(grid) -> list[psutil.Process]:
    return [p for p in grid.descendants_alive() if "launcher.py" in " ".join(p.cmdline())]


def _group(pgid: int) -> list[int]:
    out = []
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == pgid:
                out.append(p.pid)
        except ProcessLookupError:
            pass
    return out


def _read(path) -> str:
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return ""




def test_launcher_killed_kills_its_jobs_and_requeues_or_exits(grid):
    (grid.root / "hold.py").write_text(HOLD_JOB)
    plain = grid.submit("hold.py")
    rerun = grid.submit(*rerun_argv("bg.pid"), rerunnable=True)
    jp, jr = grid.wait_started(plain), grid.wait_started(rerun)
    session_child, bg = (int(wait_for(lambda: _read(grid.root / name), name)) for name in ("child.pid", "bg.pid"))
    (launcher,) = _launchers(grid)
    job_processes = set(_group(jp["pid"]) + _group(jr["pid"]) + [p.pid for p in launcher.children(recursive=True)])
    assert {jp["pid"], jr["pid"], session_child, bg} <= job_processes
    assert scratch_dirs(grid.home)                                  # the session's WORK and UTIL

    launcher.send_signal(signal.SIGKILL)
    wait_gone(sorted(job_processes))                                # grandchildren too, not re-parented to PID 1

    done_plain = grid.wait([plain])[0]
    assert done_plain["state"] == "EXIT" and done_plain["exit_reason"] == "host lost: the launcher of node1 died"
    done_rerun = grid.wait([rerun])[0]                              # again, on node1's next launcher
    assert (done_rerun["state"], done_rerun["requeues"], done_rerun["attempt"]) == ("DONE", 1, 2)
    events = [e["event"] for e in grid.client.job(rerun)["events"]]
    assert events == ["submit", "dispatch", "start", "requeue", "dispatch", "start", "finish"]
    assert [p.pid for p in _launchers(grid)] != [launcher.pid]
    assert scratch_dirs(grid.home) == []                            # the killed session's WORK is gone
    assert [h["running"] for h in grid.client.hosts()] == [0]       # both slots are free again
    again = [grid.submit("sleep", "0.2") for _ in range(2)]
    assert [j["state"] for j in grid.wait(again)] == ["DONE", "DONE"]


def test_launcher_lost_while_the_master_is_down_is_settled_at_its_restart(grid):
    # The worker ends the jobs and writes "lost" attempt files; the restarted master reads them.
    plain = grid.submit("sh", "-c", "sleep 300 & echo $! > plain.pid; sleep 300")
    rerun = grid.submit(*rerun_argv("rerun.pid"), rerunnable=True)
    jp, jr = grid.wait_started(plain), grid.wait_started(rerun)
    children = [int(wait_for(lambda: _read(grid.root / name), name)) for name in ("plain.pid", "rerun.pid")]
    (launcher,) = _launchers(grid)
    os.kill(json.loads((grid.home / "grid" / "master.json").read_text())["pid"], signal.SIGKILL)
    launcher.send_signal(signal.SIGKILL)
    wait_gone([jp["pid"], jr["pid"], *children])
    grid.up()
    done_plain, done_rerun = grid.wait([plain, rerun])
    assert (done_plain["state"], done_plain["exit_reason"]) == ("EXIT", "host lost: the launcher of node1 died")
    assert (done_rerun["state"], done_rerun["attempt"]) == ("DONE", 2)
