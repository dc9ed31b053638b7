"""A grid on an existing Dask scheduler: `dask scheduler` started by hand with the grid's TLS
files (`statgrid grid tls` makes them and says how), a node joined with
`statgrid worker --master ADDR --name HOST --slots N`, and `[master] scheduler` in grid.toml."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import psutil

from statgrid.config import load_config
from statgrid.grid.interface.client import GridClient
from tests.conftest import WAIT_S, run_cli, wait_for
from tests.support.gridtest import free_port


def _start(argv, env, log):
    return subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def test_existing_scheduler_and_statgrid_worker(tmp_path, grid_toml):
    port, api = free_port(), free_port()
    address = f"tls://127.0.0.1:{port}"
    toml = tmp_path / "grid.toml"
    grid_toml({"nodeA": 1}, path=toml, port=api, master={"scheduler": address}, monitor=True)
    env = {**os.environ, "STATGRID_HOME": str(tmp_path / "home"), "STATGRID_CONFIG": str(toml)}
    keys = run_cli("grid", "tls", env=env)
    assert keys.returncode == 0, keys.stderr
    tls_args = keys.stdout.split("dask scheduler ", 1)[1].split()          # the command it says to run
    assert tls_args[:2] == ["--protocol", "tls"] and "--tls-key" in tls_args, keys.stdout
    log = open(tmp_path / "cluster.log", "wb")
    scheduler = _start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                        str(port), "--no-dashboard", *tls_args], env, log)
    worker = None
    try:
        worker = _start([sys.executable, "-m", "statgrid", "worker", "--master", address, "--name", "nodeA",
                         "--slots", "1"], env, log)
        up = run_cli("grid", "up", "--detach", env=env, timeout=240)
        assert up.returncode == 0, up.stderr + (tmp_path / "cluster.log").read_text()
        grid = GridClient(load_config(toml, env))
        wait_for(lambda: grid.hosts()[0]["state"] == "ok", "nodeA ok", state=grid.hosts)
        ids = [grid.submit(["sh", "-c", "echo $STATGRID_HOST"], cwd=str(tmp_path))["id"] for _ in range(2)]
        jobs = grid.wait(ids, timeout_s=WAIT_S)
        assert [j["state"] for j in jobs] == ["DONE", "DONE"] and {j["host"] for j in jobs} == {"nodeA"}
        assert jobs[1]["start_ts"] >= jobs[0]["end_ts"]                  # one slot: one after the other
        assert (tmp_path / "home" / "jobs" / str(ids[0]) / "output.txt").read_text() == "nodeA\n"
        down = run_cli("grid", "down", env=env, timeout=120)
        assert down.returncode == 0
        # The scheduler and worker are the user's: `grid down` leaves them running.
        assert scheduler.poll() is None and worker.poll() is None
    finally:
        for proc in (worker, scheduler):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=WAIT_S)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
        log.close()

    def left() -> list[list[str]]:
        out = []
        for p in psutil.process_iter():
            try:
                if p.environ().get("STATGRID_HOME") == str(tmp_path / "home") and p.status() != psutil.STATUS_ZOMBIE:
                    out.append(p.cmdline())
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return out
    wait_for(lambda: not left(), "no process of the grid left: the worker's launcher goes with it", state=left)
