"""A real grid for tests: `statgrid grid up --detach` with a grid.toml of the test's own (an embedded
Dask engine, real workers and launchers), the real CLI and the client, and a stop that proves no
process of the grid is left behind. One definition for every test module that needs a grid."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

import psutil

from statgrid.bench.mixed import free_port  # noqa: F401 — the tests' free port, from here
from statgrid.config import load_config
from statgrid.grid.interface.client import GridClient
from tests.conftest import WAIT_S, run_cli, wait_for
from tests.support.gridtoml import ONE_SLOT_TOML  # noqa: F401 — the API tests' grid, from here




class Grid:
    """A grid's files under `root`: home/, grid.toml (`toml` with {port} filled in by a free port)."""

    def __init__(self, root: Path, toml: str):
        self.root = root
        self.home = root / "home"
        self.home.mkdir(exist_ok=True)
        self.toml = root / "grid.toml"
        self.toml.write_text(toml.format(port=free_port()))
        self.env = {"STATGRID_HOME": str(self.home), "STATGRID_CONFIG": str(self.toml)}
        self.cfg = load_config(self.toml, self.env)
        self.client = GridClient(self.cfg)

    def cli(self, *args, **kw):
        return run_cli(*args, cwd=self.root, env=self.env, **kw)

    def up(self) -> None:
        """`grid up --detach`: the grid's start, and its master's start again after a test killed it."""
        up = self.cli("grid", "up", "--detach", timeout=240)
        assert up.returncode == 0, up.stderr + up.stdout

    def submit(self, *argv, **kw) -> int:
        return self.client.submit(list(argv), cwd=str(self.root), env={"PATH": os.environ["PATH"]}, **kw)["id"]

    def wait(self, ids, timeout_s=WAIT_S) -> list[dict]:
        jobs = self.client.wait(ids, timeout_s=timeout_s)
        assert all(j["state"] in ("DONE", "EXIT", "KILLED") for j in jobs), jobs
        return jobs

    def wait_started(self, job_id, timeout_s=WAIT_S) -> dict:
        return wait_for(lambda: (job := self.client.job(job_id))["start_ts"] is not None and job,
                        f"job {job_id} to start", timeout_s, state=lambda: self.client.job(job_id))

    def descendants_alive(self) -> list[psutil.Process]:
        """Processes that carry this grid's home in their environment (master, engine, workers, jobs)."""
        out = []
        for p in psutil.process_iter():
            try:
                if p.environ().get("STATGRID_HOME") == str(self.home) and p.status() != psutil.STATUS_ZOMBIE:
                    out.append(p)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return out


@contextlib.contextmanager
def running(grid: Grid) -> Iterator[Grid]:
    """`grid up --detach`, the test, then `grid down`: it must succeed and leave no process of the
    grid behind (any left are killed so the next test starts clean, and the test fails)."""
    grid.up()
    try:
        yield grid
    finally:
        down = grid.cli("grid", "down", timeout=240)
        left: list[psutil.Process] = []
        with contextlib.suppress(AssertionError):      # said below, with what is left
            wait_for(lambda: not grid.descendants_alive(), "the grid's processes to end", every_s=0.1)
        left = grid.descendants_alive()
        for p in left:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
    assert down.returncode == 0, down.stderr
    assert not left, f"processes left behind after grid down: {[p.cmdline() for p in left]}"
