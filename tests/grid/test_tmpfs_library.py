"""A library on tmpfs (no block device) end to end: a real grid whose DATA library is a tmpfs this
test mounts, a real job that writes and reads 8 MiB there, and its bytes in the node monitor's
library rows (source "process": the job's own /proc/<pid>/io) and in /metrics."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from statgrid.console.live import flatten
from statgrid.monitor.store import load
from tests.conftest import wait_for
from tests.grid.test_metrics import samples
from tests.support import gridtest
from tests.support.gridtoml import toml_text

pytestmark = pytest.mark.root

MIB = 1 << 20
# The job: write 8 MiB to the library, read them back, then keep the file open until the test has
# seen the bytes (a marker file), so the monitor samples it while it runs.
JOB = """import os, sys, time
lib, marker = sys.argv[1], sys.argv[2]
with open(os.path.join(lib, "big.bin"), "wb+") as f:
    chunk = b"x" * (1 << 20)
    for _ in range(8):
        f.write(chunk)
    f.flush()
    f.seek(0)
    while f.read(1 << 20):
        pass
    deadline = time.monotonic() + 300
    while not os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
"""


@pytest.fixture
def tmpfs(tmp_path):
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "statgrid-test", str(mnt)], capture_output=True,
                       text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (mount said: {r.stderr.strip() or r.returncode}): needs root and "
                    "CAP_SYS_ADMIN")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def _data_row(grid) -> dict | None:
    try:
        latest = json.loads((grid.home / "monitor" / "node1" / "latest.json").read_text())
    except (OSError, ValueError):
        return None
    return next((r for r in latest.get("library", []) if r["library"] == "data"), None)


def test_a_job_writing_to_a_tmpfs_library_shows_in_its_rows_and_metrics(tmp_path, tmpfs):
    (tmpfs / "data").mkdir()
    job, marker = tmp_path / "job.py", tmp_path / "seen"
    job.write_text(JOB)
    toml = toml_text({"node1": 1}, monitor={"interval": "500ms"},
                     libraries={"data": str(tmpfs / "data"), "work": str(tmp_path / "work"),
                                "util": str(tmp_path / "util")})
    grid = gridtest.Grid(tmp_path, toml)
    with gridtest.running(grid):
        wait_for(lambda: _data_row(grid), "node1's monitor's first library row")
        assert _data_row(grid)["source"] == "process" and _data_row(grid)["device"] == f"tmpfs {tmpfs}"
        job_id = grid.submit(sys.executable, str(job), str(tmpfs / "data"), str(marker))
        row = wait_for(lambda: (r := _data_row(grid)) and (r["write_bytes_per_s"] or 0) > 0 and r,
                       "the job's writes in the data library's row", state=lambda: _data_row(grid))
        got = samples(grid.client.metrics())
        labels = (("host", "node1"), ("library", "data"), ("source", "process"))
        assert ("statgrid_library_write_bytes_per_second", labels) in got
        assert ("statgrid_library_request_bytes", labels) in got
        assert row["write_iops"] > 0 and row["avg_request_bytes"] > 0
        # the console's live sample names the library's source, which its chart labels show
        latest = json.loads((grid.home / "monitor" / "node1" / "latest.json").read_text())
        assert flatten(latest)["sources"]["data"] == "process"
        marker.touch()
        (done,) = grid.wait([job_id])
        assert done["state"] == "DONE", done
    # After grid down every sample is in Parquet: the job's 8 MiB written, and read back, are in
    # the data library's rows (its start-up reads may fall in the interval it opened the file in).
    rows = [r for r in load(grid.home / "monitor", "library").to_pylist() if r["library"] == "data"]
    assert {r["source"] for r in rows} == {"process"}
    node = {r["ts"]: r["interval_s"] for r in load(grid.home / "monitor", "node").to_pylist()}
    written = sum((r["write_bytes_per_s"] or 0) * node[r["ts"]] for r in rows)
    read = sum((r["read_bytes_per_s"] or 0) * node[r["ts"]] for r in rows)
    assert 8 * MIB - 1 <= written < 8 * MIB + 64 * 1024 and read >= 8 * MIB, (written, read)
