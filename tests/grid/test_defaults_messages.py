"""Defaults and messages (issue 24, item 10), through the real CLI on a real grid: a host without
`slots` gets one per CPU its worker sees (its `cpus`, or all its process may use), resolved where
the worker starts — the master's machine for an embedded host, the node's for one that joins with
`node up` — and the master dispatches by it; `node up --help` names the systemd unit where it is;
a host closed in grid.toml is opened by `statgrid reconfig`, and the messages say so. The expected
CPU counts come from coreutils' `nproc` (which counts the CPUs its process may use), run the same
way as the worker."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statgrid.errors import StatgridError
from tests.support import gridtest
from tests.conftest import run_cli
from tests.support.gridtoml import toml_text

REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 120

# node1: no slots, no cpus; node2: no slots, its jobs on CPU 0; node3: explicit slots; node4 joins
# with `node up` (run here under `taskset -c 0`); node5 is closed in grid.toml.
GRID_TOML = toml_text({"node1": {}, "node2": {"cpus": [0]}, "node3": 3, "node4": {"joins": True},
                       "node5": {"slots": 1, "open": False}}, master={"api_tls": False})


def nproc(*prefix: str) -> int:
    return int(subprocess.run([*prefix, "nproc"], capture_output=True, text=True, check=True).stdout)


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    g = gridtest.Grid(tmp_path_factory.mktemp("defaults"), GRID_TOML)
    with gridtest.running(g):
        log = open(g.root / "node4.log", "ab")
        # On loopback, so its address is given (`node up` refuses to find one other machines cannot reach).
        engine = json.loads((g.home / "grid" / "engine.json").read_text())["address"]
        node = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-m", "statgrid", "node", "up", "--name", "node4",
                                 "--master", engine],
                                env={**os.environ, **g.env}, cwd=g.root, stdout=log, stderr=log, start_new_session=True)
        try:
            hosts = wait_hosts(g, lambda h: h["node4"]["state"] == "ok" and h["node4"]["slots"] > 0)
            g.node_log = g.root / "node4.log"
            g.first_hosts = hosts
            yield g
        finally:
            for job in g.client.jobs(user="all"):
                g.client.kill([job["id"]])
            node.send_signal(signal.SIGTERM)
            try:
                node.wait(60)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait(10)
            log.close()


def hosts_of(g) -> dict[str, dict]:
    done = g.cli("hosts", "--json")
    assert done.returncode == 0, done.stderr
    return {h["host"]: h for h in json.loads(done.stdout)}


def wait_hosts(g, predicate, timeout_s: float = DEADLINE_S) -> dict[str, dict]:
    deadline = time.monotonic() + timeout_s
    while True:
        hosts = hosts_of(g)
        if predicate(hosts):
            return hosts
        if time.monotonic() > deadline:
            log = (g.root / "node4.log").read_text()[-2000:] if (g.root / "node4.log").exists() else ""
            raise AssertionError(f"hosts never got there: {hosts}\nnode4's log: {log}")
        time.sleep(0.3)


def test_a_hosts_slots_default_to_the_cpus_its_worker_sees(grid):
    hosts = grid.first_hosts
    assert {h: hosts[h]["slots"] for h in ("node1", "node2", "node3", "node4", "node5")} == {
        "node1": nproc(),                         # the embedded worker: every CPU the grid's processes may use
        "node2": nproc("taskset", "-c", "0"),     # cpus = [0]
        "node3": 3,                               # set in grid.toml: kept
        "node4": nproc("taskset", "-c", "0"),     # joined from a process that sees CPU 0 only
        "node5": 1}
    assert "with 1 slot (the CPUs it sees)" in grid.node_log.read_text()      # taskset -c 0: one CPU, one slot


def test_the_master_dispatches_by_those_slots(grid):
    for host in ("node2", "node4"):                # one slot each: the second job waits
        ids = [grid.submit("sleep", "300", hosts=[host]) for _ in range(2)]
        grid.wait_started(ids[0])
        reason = ""
        deadline = time.monotonic() + DEADLINE_S
        while "no free slot" not in reason and time.monotonic() < deadline:
            job = grid.client.job(ids[1])
            reason = job.get("pend_reason") or ""
            time.sleep(0.1)
        assert job["state"] == "PEND" and f"{host} 1/1" in reason, job
        grid.client.kill(ids)
        grid.wait(ids)


def test_node_up_help_names_the_unit_where_it_is():
    done = run_cli("node", "up", "--help", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "contrib/systemd/statgrid-node.service" in done.stdout and "docs/statgrid-node.service" not in done.stdout
    assert (REPO / "contrib" / "systemd" / "statgrid-node.service").is_file()


def wide_cli(g, *args):
    """The CLI with lines wide enough that no message is wrapped."""
    return run_cli(*args, cwd=g.root, env={**g.env, "COLUMNS": "400"})


def test_a_host_closed_in_grid_toml_is_opened_by_reconfig_and_the_messages_say_so(grid):
    opened = wide_cli(grid, "host", "open", "node5")
    assert opened.returncode == 2 and "`statgrid reconfig`" in opened.stderr, opened.stderr
    assert "restart the master" not in opened.stderr
    submitted = wide_cli(grid, "submit", "-m", "node5", "true")              # the CLI's own check
    assert submitted.returncode == 2 and "`statgrid reconfig`" in submitted.stderr, submitted.stderr
    assert "restart the master" not in submitted.stderr
    with pytest.raises(StatgridError) as refused:                            # the master's check of the same
        grid.client.submit(["true"], hosts=["node5"], cwd=str(grid.root))
    assert "`statgrid reconfig`" in str(refused.value) and "restart the master" not in str(refused.value)

    text = grid.toml.read_text()
    grid.toml.write_text(text.replace("slots = 1\nopen = false", "slots = 1\nopen = true"))
    try:
        done = grid.cli("reconfig")
        assert done.returncode == 0, done.stderr
        assert hosts_of(grid)["node5"]["state"] == "ok"
        submitted = grid.cli("submit", "-m", "node5", "true")
        assert submitted.returncode == 0, submitted.stderr
        job_id = int(submitted.stdout.strip())
        job = grid.wait([job_id])[0]
        assert (job["state"], job["host"]) == ("DONE", "node5")
    finally:
        grid.toml.write_text(text)
