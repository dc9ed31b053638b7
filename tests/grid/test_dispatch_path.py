"""The slot refill path (issue 24, item 9) hands a job on without helper threads: the engine's
scheduler materializes a job's one-task graph in its own loop (not in Dask's offload thread), and
the master answers API requests in its loop (no FastAPI worker thread per request). Each such
hand-off is a wait for a CPU on a busy machine; benchmarks/dispatch.py --before measures what
they cost. Real grid, real CLI and client; nothing here depends on timing."""
from __future__ import annotations

import asyncio
import json

import psutil
import pytest

from statgrid.grid.security import tls as grid_tls
from statgrid.grid.execution.engine import ENGINE_FILE
from tests.support.gridtest import Grid, running
from tests.support.gridtoml import toml_text

TOML = toml_text({"node1": 2, "node2": 2})


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    with running(Grid(tmp_path_factory.mktemp("dispatch-path"), TOML)) as g:
        yield g


def scheduler_threads(grid: Grid) -> list[str]:
    """The names of the engine's scheduler's Python threads, asked of it over the grid's TLS."""
    from distributed import Client

    grid_dir = grid.home / "grid"
    address = json.loads((grid_dir / ENGINE_FILE).read_text())["address"]
    security = grid_tls.security(grid_tls.require(grid_dir))

    async def ask() -> list[str]:
        async with Client(address, security=security, asynchronous=True, timeout="60s") as client:
            return await client.run_on_scheduler(lambda: [t.name for t in __import__("threading").enumerate()])

    return asyncio.run(ask())


def master_threads(grid: Grid) -> int:
    pid = json.loads((grid.home / "grid" / "master.json").read_text())["pid"]
    return psutil.Process(pid).num_threads()


def test_jobs_reach_their_nodes_without_helper_threads(grid):
    threads_before = master_threads(grid)
    ids = [grid.submit("true") for _ in range(6)]
    jobs = grid.wait(ids)
    assert [j["state"] for j in jobs] == ["DONE"] * 6
    for job_id in ids:                         # more requests through the API's whole stack
        assert grid.client.job(job_id)["state"] == "DONE"
    # Dask's scheduler starts its offload thread ("Dask-Offload") the first time it materializes a
    # graph in it; statgrid's scheduler materializes the jobs' graphs in its loop.
    offload = [name for name in scheduler_threads(grid) if name.startswith("Dask-Offload")]
    assert offload == [], f"the scheduler handed job graphs to a thread: {offload}"
    # A plain-def dependency would have made FastAPI start its worker threads for these requests.
    assert master_threads(grid) == threads_before
