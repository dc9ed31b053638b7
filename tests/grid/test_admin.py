"""Administering a running grid (issue 16, LSF's badmin): the master restarted under running jobs,
grid.toml re-read (`statgrid reconfig`), a host drained. On one machine; the same across machines
in tests/grid/test_netgrid.py."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from statgrid.errors import UsageError
from statgrid.host.procfs import process_running
from tests.support import gridtest
from tests.conftest import WAIT_S, wait_for
from tests.support.gridtoml import toml_text

GRID_TOML = toml_text({"node1": 2, "node2": 2}, {"normal": {"priority": 30}})


def _master_pid(g) -> int:
    return json.loads((g.home / "grid" / "master.json").read_text())["pid"]


def test_a_master_stopped_by_sigterm_leaves_its_jobs_running_and_the_next_adopts_them(tmp_path):
    g = gridtest.Grid(tmp_path, GRID_TOML)
    with gridtest.running(g):
        gate = g.root / "gate"                                   # the job runs until the next master is up
        job = g.submit("sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.05; done; echo finished")
        started = g.wait_started(job)
        pid = _master_pid(g)
        os.kill(pid, signal.SIGTERM)                             # systemctl restart / stop of the master
        wait_for(lambda: not process_running(pid), f"the master (pid {pid}) to stop")
        assert process_running(started["pid"])                   # the job runs on without a master
        g.up()
        gate.touch()
        done = g.wait([job])[0]
        assert done["state"] == "DONE" and done["attempt"] == 1, done
        assert "finished" in g.client.peek(job)["text"]
        assert len(list((g.home / "grid" / "attempts").glob(f"{job}.*.json"))) == 1


def test_reconfig_applies_queues_and_slots_and_a_bad_file_changes_nothing(tmp_path):
    g = gridtest.Grid(tmp_path, GRID_TOML)
    with gridtest.running(g):
        running = g.submit("sleep", "600")                       # killed below
        g.wait_started(running)
        text = g.toml.read_text()
        g.toml.write_text(text + '\n[queues.night]\npriority = 5\nhostz = "node1"\n')
        bad = g.cli("reconfig")                                  # the CLI reads the file first: the key named
        assert bad.returncode == 2 and "queues.night.hostz" in bad.stderr
        with pytest.raises(UsageError, match=r"queues\.night\.hostz.*Nothing was changed"):
            g.client.reconfig()                                  # the master's own check of the same file
        assert [q["queue"] for q in g.client.queues()] == ["normal"]
        g.toml.write_text(text.replace("[hosts.node1]\nslots = 2", "[hosts.node1]\nslots = 4"))
        more = g.cli("reconfig")
        assert more.returncode == 2 and "hosts.node1.slots 2 → 4" in more.stderr and "nothing was changed" in more.stderr
        g.toml.write_text(text.replace("[hosts.node2]\nslots = 2", "[hosts.node2]\nslots = 1")
                          + '\n[queues.night]\npriority = 5\nhosts = "node2"\n')
        ok = g.cli("reconfig")
        assert ok.returncode == 0, ok.stderr
        assert "[hosts.node2] changed" in ok.stdout and "[queues.night] added" in ok.stdout
        assert {q["queue"] for q in g.client.queues()} == {"normal", "night"}
        assert {h["host"]: h["slots"] for h in g.client.hosts()} == {"node1": 2, "node2": 1}
        night = g.client.submit(["true"], queue="night", cwd=str(g.root), env={"PATH": os.environ["PATH"]})
        assert g.wait([night["id"]])[0]["host"] == "node2"
        assert g.client.job(running)["state"] == "RUN"           # untouched throughout
        g.client.kill([running])
        g.wait([running])
    audit = (g.home / "grid" / "audit.log").read_text()
    assert '"action": "reconfig"' in audit and '"outcome": "refused"' in audit


def test_drain_waits_for_the_hosts_jobs_and_sends_it_no_more(tmp_path):
    g = gridtest.Grid(tmp_path, GRID_TOML)
    with gridtest.running(g):
        gate = g.root / "gate"                                   # the job runs until drain says it waits for it
        first = g.client.submit(["sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.05; done"], hosts=["node1"],
                                cwd=str(g.root), env={"PATH": os.environ["PATH"]})
        g.wait_started(first["id"])
        drain = subprocess.Popen([sys.executable, "-m", "statgrid", "host", "drain", "node1", "--reason",
                                  "kernel update"], env={**os.environ, **g.env}, cwd=g.root,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        said = [drain.stderr.readline()]                         # blocks until it says so (or ends)
        gate.touch()
        out, err = drain.communicate(timeout=WAIT_S)
        assert drain.returncode == 0, said + [err]
        assert "drained" in out and "waiting for its 1 running job" in said[0], (said, err)
        assert g.client.job(first["id"])["state"] == "DONE"     # it finished: drain kills nothing
        later = [g.submit("true") for _ in range(3)]
        assert {j["host"] for j in g.wait(later)} == {"node2"}
        row = next(h for h in g.client.hosts() if h["host"] == "node1")
        assert (row["state"], row["closed_reason"]) == ("closed_Adm", "kernel update")


def test_the_systemd_units_start_commands_that_exist():
    """contrib/systemd: each ExecStart is a statgrid command this release has."""
    import subprocess
    import sys
    from pathlib import Path

    units = sorted((Path(__file__).resolve().parents[2] / "contrib" / "systemd").glob("*.service"))
    assert [u.name for u in units] == ["statgrid-master.service", "statgrid-node.service"]
    for unit in units:
        text = unit.read_text()
        start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
        args = start.split("statgrid", 2)[-1].split()              # after /opt/statgrid/bin/statgrid
        helped = subprocess.run([sys.executable, "-m", "statgrid", *args, "--help"], capture_output=True, text=True)
        assert helped.returncode == 0, (unit.name, helped.stderr)
        assert "Environment=STATGRID_HOME=" in text and "[Install]" in text
