"""A partitioned node's jobs are given away only once the node has certainly fenced them (issue 24,
item 1), on a grid of network namespaces (tests/support/netns.py, as tests/grid/test_netgrid.py starts it).

Each job here records every attempt in a file of the shared file system: a "start" line, an
"alive" line every 0.2 s, an "end" line, each with its attempt, host and time (one kernel: one
clock). A killed attempt stops writing. So "no two attempts of a job overlap" is read from what
the attempts themselves wrote, not from statgrid's records: every line of attempt 1 comes before
the first line of attempt 2.

Two grids, cut off node2's link while a rerunnable job runs there:
- a fence grace shorter than the engine's timeouts (the embedded engine: Dask's TCP timeout and
  worker-ttl both above it): the link back before the fence, the job runs on and ends once; back
  after the fence, the attempt was fenced and the job runs exactly once more elsewhere.
- a fence grace longer than the engine's timeouts (a scheduler of one's own whose Dask TCP timeout
  is 11 s, [master] scheduler): the engine drops node2 long before its grace; the master must not
  take that for a dead host. Back before the fence: node2 learns it was dropped and kills the job
  at once; back after it: fenced. Either way exactly one more attempt, after the first is dead.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.netns import Network, skip_unless_possible
from tests.grid.test_netgrid import NetGrid, _attempts, _job, _until
from tests.support.gridtoml import toml_text

NODES = ("node1", "node2", "node3")
SHORT_GRACE_S = 15          # < the embedded engine's worker-ttl (grace + 10 s) and TCP timeout (≥ 30 s)
LONG_GRACE_S = 20           # > the own scheduler's TCP timeout below
ENGINE_TCP_TIMEOUT_S = 11   # the least Dask accepts (10 keep-alive probes + 1 s)
def fence_toml(scheduler: str | None) -> str:
    """The grid's grid.toml (a template of master_ip, root and grace); `scheduler`: the engine's own
    scheduler address, or None for the master's embedded one."""
    return toml_text({"node1": {"slots": 2, "joins": True}, "node2": {"slots": 2, "joins": True},
                      "node3": {"slots": 2, "joins": True}},
                     port=8642, master={"listen": "{master_ip}", "names": ["{master_ip}"], "fence_grace": "{grace}s",
                                        "engine_port": 8786, **({"scheduler": scheduler} if scheduler else {})},
                     libraries={"data": "{root}/data", "work": "{root}/work", "util": "{root}/util"})
# Attempt 1 runs long enough to be running through the partition; a later attempt ends soon.
JOB = """
import os, sys, time
log, first_s = sys.argv[1], float(sys.argv[2])
attempt, host = os.environ["STATGRID_JOB_ATTEMPT"], os.environ["STATGRID_HOST"]
def line(what):
    with open(log, "a") as f:
        f.write(f"{what} {attempt} {host} {time.time():.3f}\\n")
line("start")
end = time.monotonic() + (first_s if attempt == "1" else 2.0)
while time.monotonic() < end:
    line("alive")
    time.sleep(0.2)
line("end")
"""


def _grid(grace_s: int, own_scheduler: bool):
    skip_unless_possible()
    root = Path(tempfile.mkdtemp(prefix="sgfence-", dir="/tmp"))
    for lib in ("data", "work", "util"):
        (root / lib).mkdir()
    (root / "job.py").write_text(JOB)
    with Network(["grid1", *NODES]) as net:
        g = NetGrid(net, root)
        address = f"tls://{net.ip('grid1')}:8786"
        g.toml.write_text(fence_toml(address if own_scheduler else None).format(master_ip=net.ip("grid1"), root=root,
                                                                                grace=grace_s))
        scheduler = None
        if own_scheduler:
            made = g.on("grid1", "grid", "tls")
            assert made.returncode == 0, made.stderr
            tls_args = made.stdout.split("dask scheduler ", 1)[1].split()
            log = open(root / "scheduler.log", "ab")
            scheduler = net.popen("grid1", [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                                            net.ip("grid1"), "--port", "8786", "--no-dashboard", *tls_args],
                                  env={**g.env, "DASK_DISTRIBUTED__COMM__TIMEOUTS__TCP": f"{ENGINE_TCP_TIMEOUT_S}s"},
                                  stdout=log, stderr=log, start_new_session=True)
            log.close()
        try:
            up = g.on("grid1", "grid", "up", "--detach", timeout=300)
            assert up.returncode == 0, up.stderr + up.stdout
            for name in NODES:
                g.node_up(name)
            g.wait_hosts({n: "ok" for n in NODES})
            yield g
        finally:
            down = g.on("grid1", "grid", "down", timeout=300)
            for name in list(g.nodes):
                g.node_down(name)
            if scheduler is not None:
                os.killpg(scheduler.pid, signal.SIGTERM)
                try:
                    scheduler.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(scheduler.pid, signal.SIGKILL)
            net.close()
            shutil.rmtree(root, ignore_errors=True)
        assert down.returncode == 0, down.stderr


@pytest.fixture(scope="class")
def short_grace():
    yield from _grid(SHORT_GRACE_S, own_scheduler=False)


@pytest.fixture(scope="class")
def long_grace():
    yield from _grid(LONG_GRACE_S, own_scheduler=True)


# -- helpers ------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _node2_cut_off(grid):
    """node2's link down for the block, and up again after it whatever happens; yields when it went down."""
    cut_at = time.time()
    grid.net.link_down("node2")
    try:
        yield cut_at
    finally:
        grid.net.link_up("node2")


def _run_on_node2(grid, name: str, first_s: float) -> tuple[str, Path]:
    """A rerunnable job started on node2 (the others closed meanwhile); returns its id and log."""
    log = grid.root / f"{name}.log"
    for other in ("node1", "node3"):
        assert grid.on("grid1", "host", "close", other).returncode == 0
    try:
        done = grid.on("grid1", "submit", "-r", "-J", name, sys.executable, str(grid.root / "job.py"), str(log),
                       str(first_s))
        assert done.returncode == 0, done.stderr
        job_id = done.stdout.split()[-1]
        started = _until(f"job {job_id} started", lambda: (lambda j: j if j["start_ts"] else None)(_job(grid, job_id)))
        assert started["host"] == "node2", started
        _until("its first line", lambda: log.exists() and "start 1 node2" in log.read_text())
    finally:
        for other in ("node1", "node3"):
            assert grid.on("grid1", "host", "open", other).returncode == 0
    return job_id, log


def _lines(log: Path) -> dict[int, list[tuple[str, str, float]]]:
    """attempt → its lines (what, host, Unix time), in the order written."""
    out: dict[int, list[tuple[str, str, float]]] = {}
    for text in log.read_text().splitlines():
        what, attempt, host, ts = text.split()
        out.setdefault(int(attempt), []).append((what, host, float(ts)))
    return out


def _assert_never_two_at_once(log: Path) -> dict[int, list[tuple[str, str, float]]]:
    attempts = _lines(log)
    numbers = sorted(attempts)
    assert numbers == list(range(1, len(numbers) + 1)), attempts.keys()
    for a, b in zip(numbers, numbers[1:]):
        last_of_a = max(ts for _, _, ts in attempts[a])
        first_of_b = min(ts for _, _, ts in attempts[b])
        assert last_of_a < first_of_b, (f"attempt {a} still wrote at {last_of_a:.3f}, after attempt {b} started at "
                                        f"{first_of_b:.3f}")
    return attempts


def _ended(grid, job_id: str, timeout_s=240) -> dict:
    return _until(f"job {job_id} ends", lambda: (lambda j: j if j["state"] in ("DONE", "EXIT", "KILLED") else None)(
        _job(grid, job_id)), timeout_s=timeout_s)


def _attempt_says(grid, job_id: str, attempt: int, type_: str):
    def check():
        recs = [r for r in _attempts(grid, job_id) if r["attempt"] == attempt]
        return recs[0] if recs and recs[0]["type"] == type_ else None
    return check


def _node2_back(grid) -> None:
    """node2's link is up: if the engine dropped it, its node daemon exits; restarted (systemd's
    Restart=always), it joins again."""
    _until("node2 rejoined or exited", lambda: grid.nodes["node2"].poll() is not None
           or grid.hosts()["node2"]["state"] == "ok", timeout_s=120)
    if grid.nodes["node2"].poll() is not None:
        grid.nodes.pop("node2")
        grid.node_up("node2")
    grid.wait_hosts({n: "ok" for n in NODES})


def _assert_fenced_then_once_more(grid, job_id: str, log: Path, cut_at: float, *why: str) -> None:
    job = _ended(grid, job_id)
    assert (job["state"], job["attempt"], job["requeues"]) == ("DONE", 2, 1), job
    assert job["host"] in ("node1", "node3"), job
    first, second = _attempts(grid, job_id)
    assert first["type"] == "attempt.lost" and "fenced" in first["reason"], first
    assert any(w in first["reason"] for w in why), (first, why)
    assert second["type"] == "attempt.finished" and second["exit_code"] == 0, second
    attempts = _assert_never_two_at_once(log)
    assert [w for w, _, _ in attempts[1]].count("end") == 0          # attempt 1 was killed
    assert [w for w, _, _ in attempts[2]].count("end") == 1
    assert first["end_ts"] <= min(ts for _, _, ts in attempts[2])   # dispatched after node2 said it was dead
    assert first["end_ts"] > cut_at


# -- the master's clock ----------------------------------------------------------------------------------------
def test_the_masters_deadline_counts_from_the_earliest_report_of_the_last_contact():
    """fence.Silences on a real event loop: the deadline is the last contact (the event's arrival
    minus silent_s) + grace + 10 s; a later report of the same silence never moves it later, an
    earlier last contact moves it earlier; contact again cancels it."""
    import asyncio

    from statgrid.grid.execution.fence import FENCE_MARGIN_S, Silences

    async def scenario():
        loop = asyncio.get_running_loop()
        due: list[tuple[str, set, float]] = []
        book = Silences(30.0, lambda host, s: due.append((host, s.jobs, loop.time())))
        t0 = loop.time()
        first = book.lost("node2", 5.0, {(1, 1)})                     # stale: 5 s since the last contact
        assert abs(book.deadline(first) - (t0 - 5.0 + 30.0 + FENCE_MARGIN_S)) < 0.05
        book.lost("node2", 0.0, {(2, 1)})                             # KilledWorker: "now" is later: kept
        assert abs(book.deadline(first) - (t0 - 5.0 + 30.0 + FENCE_MARGIN_S)) < 0.05 and first.jobs == {(1, 1), (2, 1)}
        book.lost("node2", 39.9, set())                               # dropped: last heard 39.9 s ago
        assert book.deadline(first) - loop.time() < 0.2
        book.lost("node3", 1.0, {(3, 1)})
        assert book.found("node3") is not None                        # in contact again: no deadline
        await asyncio.sleep(0.5)
        assert due == [("node2", {(1, 1), (2, 1)}, due[0][2])] and "node2" not in book.hosts
        assert due[0][2] >= t0 - 39.9 + 30.0 + FENCE_MARGIN_S - 0.01

    asyncio.run(scenario())


# -- a grace shorter than the engine's timeouts ---------------------------------------------------------------
class TestGraceShorterThanTheEngines:
    def test_link_back_before_the_fence_the_job_runs_on_and_ends_once(self, short_grace):
        grid = short_grace
        job_id, log = _run_on_node2(grid, "runs-on", first_s=30)
        with _node2_cut_off(grid):
            _until("node2 unavail", lambda: grid.hosts()["node2"]["state"] == "unavail", timeout_s=SHORT_GRACE_S)
            assert _job(grid, job_id)["state"] == "RUN"
        grid.wait_hosts({"node2": "ok"}, timeout_s=60)
        job = _ended(grid, job_id)
        assert (job["state"], job["attempt"], job["requeues"], job["host"]) == ("DONE", 1, 0, "node2"), job
        attempts = _assert_never_two_at_once(log)
        assert list(attempts) == [1] and [w for w, _, _ in attempts[1]].count("end") == 1
        assert [r["type"] for r in _attempts(grid, job_id)] == ["attempt.finished"]

    def test_link_back_after_the_fence_one_more_attempt_elsewhere(self, short_grace):
        grid = short_grace
        job_id, log = _run_on_node2(grid, "fenced", first_s=120)
        with _node2_cut_off(grid) as cut_at:
            # node2 fences at its grace; the link comes back before the master's deadline (grace + 10 s).
            fenced = _until("node2 fenced the job", _attempt_says(grid, job_id, 1, "attempt.lost"), timeout_s=120)
        assert fenced["end_ts"] - cut_at >= SHORT_GRACE_S - 1.5, fenced    # not before its grace (a question a second)
        _assert_fenced_then_once_more(grid, job_id, log, cut_at, "had no answer from the grid")
        _node2_back(grid)


# -- a grace longer than the engine's timeouts ----------------------------------------------------------------
class TestGraceLongerThanTheEngines:
    def test_dropped_by_the_engine_link_back_before_the_fence(self, long_grace):
        """The engine drops node2 at ~11 s; the link is back before node2's 20 s grace: node2 hears it
        is no longer a member and kills the job at once. The master gave nothing away before that."""
        grid = long_grace
        job_id, log = _run_on_node2(grid, "dropped", first_s=120)
        with _node2_cut_off(grid) as cut_at:
            _until("the engine drops node2", lambda: grid.hosts()["node2"]["address"] is None, timeout_s=60)
            dropped_s = time.time() - cut_at
            job = _job(grid, job_id)
            assert (job["state"], job["attempt"]) == ("RUN", 1), job          # dropped is not dead
        assert dropped_s < LONG_GRACE_S, dropped_s                           # the engine did act first
        fenced = _until("node2 fenced the job", _attempt_says(grid, job_id, 1, "attempt.lost"), timeout_s=120)
        assert fenced["end_ts"] - cut_at < LONG_GRACE_S, fenced               # at once, not at its grace
        # it hears so from the scheduler's answer, or its worker closes on the same news
        _assert_fenced_then_once_more(grid, job_id, log, cut_at, "dropped by the grid's engine", "closed its worker")
        _node2_back(grid)

    def test_dropped_by_the_engine_link_back_after_the_fence(self, long_grace):
        grid = long_grace
        job_id, log = _run_on_node2(grid, "dropped-fenced", first_s=120)
        with _node2_cut_off(grid) as cut_at:
            _until("the engine drops node2", lambda: grid.hosts()["node2"]["address"] is None, timeout_s=60)
            # the master waits for its own deadline (grace + 10 s after the last contact), node2 still cut off
            again = _until("the job runs again", lambda: (lambda j: j if j["attempt"] == 2 and j["start_ts"]
                                                          else None)(_job(grid, job_id)), timeout_s=120)
            assert again["start_ts"] - cut_at >= LONG_GRACE_S - 1.5, again   # its last question: ≤ 1 s before the cut
        _assert_fenced_then_once_more(grid, job_id, log, cut_at, "had no answer from the grid")
        _node2_back(grid)

    def test_a_master_restarted_meanwhile_counts_from_the_engines_last_contact(self, long_grace):
        """The master is killed (kill -9) after the engine dropped node2 and started again while node2
        is still cut off: it learns from the engine when node2 was last heard from, and still gives
        the job away only after node2's grace."""
        grid = long_grace
        job_id, log = _run_on_node2(grid, "master-restarted", first_s=120)
        with _node2_cut_off(grid) as cut_at:
            _until("the engine drops node2", lambda: grid.hosts()["node2"]["address"] is None, timeout_s=60)
            os.kill(json.loads((grid.home / "grid" / "master.json").read_text())["pid"], signal.SIGKILL)
            up = grid.on("grid1", "grid", "up", "--detach", timeout=300)
            assert up.returncode == 0, up.stderr + up.stdout
            again = _until("the job runs again", lambda: (lambda j: j if j["attempt"] == 2 and j["start_ts"]
                                                          else None)(_job(grid, job_id)), timeout_s=120)
            assert again["start_ts"] - cut_at >= LONG_GRACE_S - 1.5, again
        _assert_fenced_then_once_more(grid, job_id, log, cut_at, "had no answer from the grid")
        _node2_back(grid)

    def test_a_node_back_before_the_deadline_says_how_its_jobs_ended(self, long_grace):
        """node2's daemons die (kill -9: its launcher kills the job) and it joins again at once,
        well before the master's deadline (grace + 10 s = 30 s): its word — it runs no such job —
        settles the job then, not the deadline."""
        grid = long_grace
        job_id, log = _run_on_node2(grid, "rejoined", first_s=120)
        grid.nodes["node2"].kill()
        grid.nodes.pop("node2").wait(30)
        grid.node_up("node2")
        job = _ended(grid, job_id)
        assert (job["state"], job["attempt"], job["requeues"]) == ("DONE", 2, 1), job
        requeues = [e for e in job["events"] if e["event"] == "requeue"]
        assert len(requeues) == 1 and "node2 joined again without it" in requeues[0]["detail"], requeues
        attempts = _assert_never_two_at_once(log)
        assert [w for w, _, _ in attempts[1]].count("end") == 0 and [w for w, _, _ in attempts[2]].count("end") == 1
        grid.wait_hosts({n: "ok" for n in NODES})


def test_a_host_whose_silence_is_unsettled_takes_no_new_job():
    """A worker dropped, its host's new worker joined but its node not yet heard on the old jobs: a job
    dispatched there now would be settled at the OLD worker's deadline, before the new worker's node
    could fence it (the review's W1/W2 case). The host is unavail until the silence is settled."""
    import asyncio
    import types

    from statgrid.config import HostConfig
    from statgrid.grid.master.core import Master

    async def scenario():
        from statgrid.grid.execution.fence import Silences

        hosts = {"node1": HostConfig("node1", slots=2), "node2": HostConfig("node2", slots=2)}
        master = types.SimpleNamespace(
            running={}, stale=set(), silences=Silences(30.0, lambda host, s: None), last_start={}, closed={},
            thresholds=types.SimpleNamespace(loads={}), cfg=types.SimpleNamespace(hosts=hosts),
            engine=types.SimpleNamespace(workers={"node1": "tcp://a", "node2": "tcp://b"}, threads_seen={}))
        assert {n: v.up for n, v in Master.host_views(master).items()} == {"node1": True, "node2": True}
        master.silences.lost("node2", 3.0, {(7, 1)})          # its old worker went silent; a new one is in workers
        assert {n: v.up for n, v in Master.host_views(master).items()} == {"node1": True, "node2": False}
        master.silences.found("node2")                         # its node answered for job 7
        assert Master.host_views(master)["node2"].up

    asyncio.run(scenario())
