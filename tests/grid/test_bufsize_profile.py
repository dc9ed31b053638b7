"""`bench mixed -o bufsize=… -o compress=no`: two tiny runs through the real grid on the same data (seed,
scale) at 16k and 256k. The session options reach every job and datagen, the data sets are written in
row groups of bufsize/8 rows uncompressed (so a column chunk — one read or write request — is bufsize
bytes), and the I/O job's cold reads reach the device (the monitor counts read requests and their size
in each run's window). Device IOPS are not compared here: this machine's disk is shared with other
processes, so a test asserting on its counts would fail on their I/O; benchmarks/io_profile.py measures
them, interleaved."""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from conftest import run_cli
from statgrid.bench import mixed

pytestmark = pytest.mark.grid

WORKLOAD = """# one I/O job of one session
[global]
name = "IO1"
sessions = 1
ramp_s = 0
concurrency = 1
scale = 0.0001
seed = 1

[io_datastep_big]
count = 1
"""


def device_reads(bundle) -> tuple[float, float]:
    """(read requests, bytes read) of the counted devices in the workload's window, from the monitor."""
    from statgrid.monitor import store
    from statgrid.monitor.sampler import is_counted

    meta = json.loads((bundle / "bundle.json").read_text())
    rows = [r for r in store.load(bundle / "grid" / "monitor", "disk").to_pylist()
            if is_counted(r) and meta["workload_start_ts"] - 1 <= r["ts"] <= meta["end_ts"] + 1]
    return (sum(r["read_iops"] or 0 for r in rows), sum(r["read_bytes_per_s"] or 0 for r in rows))


def test_bufsize_and_compress_reach_jobs_data_and_device(home, tmp_path):
    (tmp_path / "io1.toml").write_text(WORKLOAD)
    groups = {}
    for buf, rows in (("16k", 2048), ("256k", 32768)):
        bundle = tmp_path / f"b-{buf}"
        r = run_cli("bench", "mixed", "--workload", str(tmp_path / "io1.toml"), "--nodes", "1", "--slots", "1",
                    "-o", f"bufsize={buf}", "-o", "compress=no", "--out", str(bundle), timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        meta, jobs = mixed.load_bundle(bundle)
        assert [j["state"] for j in jobs] == ["DONE"], [(j["state"], j["exit_reason"]) for j in jobs]
        assert (meta["session_options"]["bufsize"], meta["session_options"]["compress"]) == (buf.upper(), "no")
        assert f'bufsize = "{buf}"' in (bundle / "grid.toml").read_text()
        # the data the job read: written by this run's datagen with its bufsize (the other run's are remade)
        md = pq.read_metadata(home / "data" / "messy55.parquet")
        entry = meta["datagen"]["messy55"]
        assert (entry["bufsize_bytes"], entry["compress"]) == ({"16k": 16384, "256k": 262144}[buf], "no")
        assert md.row_group(0).num_rows == min(rows, md.num_rows)
        assert {md.row_group(0).column(i).compression for i in range(md.num_columns)} == {"UNCOMPRESSED"}
        groups[buf] = md.num_row_groups
        requests, nbytes = device_reads(bundle)
        assert requests > 0 and nbytes > 0, "the job's inputs were evicted: its reads must reach the device"
    # by hand: messy55 at this scale has more rows than one 2,048-row group, so 16k makes more row groups
    assert groups["16k"] > groups["256k"] >= 1
    # a bad size is refused before anything starts (an old grid.toml's row count, a TOML number, is refused by
    # the config: test_io_options; digits typed on the command line are bytes, as in SAS)
    bad = run_cli("bench", "mixed", "--workload", str(tmp_path / "io1.toml"), "-o", "bufsize=1k",
                  "--out", str(tmp_path / "bad"))
    assert bad.returncode != 0 and "bufsize = '1k' is not allowed" in bad.stderr and "from 4K to 64M" in bad.stderr
    assert not (tmp_path / "bad").exists()
