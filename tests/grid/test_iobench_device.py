"""iobench on a raw block device, for real: a loop device over a file in tmp_path, through the real
CLI. The bytes iobench says it moved are held against the kernel's own count of the device's
I/O (/sys/block/loopN/stat: sectors read, field 3; sectors written, field 7 — 512-byte sectors
whatever the device's block size, Documentation/block/stat.rst)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(os.geteuid() != 0, reason="a raw device and losetup need root")]

DEVICE_BYTES = 32 << 20


def sectors(dev: str) -> tuple[int, int]:
    """(sectors read, sectors written) of /dev/<dev>, from /sys/block/<dev>/stat."""
    f = Path("/sys/block") / Path(dev).name / "stat"
    fields = f.read_text().split()
    return int(fields[2]), int(fields[6])


@pytest.fixture
def loop_dev(tmp_path):
    """A 32 MiB loop device over a file of known bytes (0x5A), detached at the end."""
    if shutil.which("losetup") is None:
        pytest.skip("losetup is not installed (util-linux)")
    backing = tmp_path / "disk.img"
    backing.write_bytes(b"\x5a" * DEVICE_BYTES)
    r = subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"no loop device here: losetup said {r.stderr.strip()!r}")
    dev = r.stdout.strip()
    try:
        yield dev, backing
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)


def moved(path: Path) -> tuple[int, int]:
    """(read bytes, write bytes) over every run of an iobench --json result."""
    runs = json.loads(path.read_text())["runs"]
    return (sum(r["total"]["read"]["io_bytes"] for r in runs), sum(r["total"]["write"]["io_bytes"] for r in runs))


def test_reads_of_a_raw_device_by_size_and_by_time_match_the_kernels_count(home, tmp_path, loop_dev):
    dev, _ = loop_dev
    before = sectors(dev)
    out = tmp_path / "size.json"
    r = run_cli("iobench", "--device", dev, "--mode", "read", "--threads", "2", "--bs", "1M", "--runs", "1",
                "--json", str(out))
    assert r.returncode == 0, r.stderr
    after = sectors(dev)
    # no --size-per-thread: the device split between the 2 threads, read once → all 32 MiB
    assert moved(out) == (DEVICE_BYTES, 0)
    assert ((after[0] - before[0]) * 512, after[1] - before[1]) == (DEVICE_BYTES, 0)
    spec = json.loads(out.read_text())["spec"]
    assert (spec["run_mode"], spec["device"], spec["dir"], spec["direct"]) == ("size", True, dev, True)
    assert f"on device {dev}" in r.stdout

    out = tmp_path / "time.json"
    r = run_cli("iobench", "--device", dev, "--mode", "read", "--pattern", "rand", "--bs", "64K", "--threads", "2",
                "--size-per-thread", "1M", "--time", "1s", "--runs", "1", "--json", str(out))
    assert r.returncode == 0, r.stderr
    again = sectors(dev)
    read_bytes, _ = moved(out)
    assert read_bytes == (again[0] - after[0]) * 512 and again[1] == after[1]
    # each thread loops over its 1 MiB slice for 1 s: more than one pass in all (16 blocks of 64K a pass)
    res = json.loads(out.read_text())
    assert res["spec"]["run_mode"] == "time" and res["spec"]["duration_s"] == 1.0
    assert read_bytes % (64 << 10) == 0 and res["runs"][0]["total"]["read"]["total_ios"] == read_bytes // (64 << 10)
    assert res["runs"][0]["total"]["read"]["runtime"] >= 1000.0            # ms: a run lasts at least its --time


def test_writes_need_destructive_and_then_move_what_the_kernel_counts(home, tmp_path, loop_dev):
    dev, backing = loop_dev
    before = sectors(dev)
    r = run_cli("iobench", "--device", dev, "--mode", "write", "--runs", "1", "--size-per-thread", "1M")
    assert r.returncode == 2 and "add --destructive to mean it" in r.stderr and repr(dev) in r.stderr
    assert sectors(dev)[1] == before[1]
    out = tmp_path / "w.json"
    r = run_cli("iobench", "--device", dev, "--mode", "write", "--destructive", "--threads", "2", "--bs", "256K",
                "--size-per-thread", "4M", "--time", "1s", "--runs", "1", "--json", str(out))
    assert r.returncode == 0, r.stderr
    after = sectors(dev)
    _, write_bytes = moved(out)
    assert write_bytes > 0 and write_bytes == (after[1] - before[1]) * 512
    # thread 0 wrote [0, 4M), thread 1 [4M, 8M); past 8 MiB the device is as it was
    subprocess.run(["losetup", "-d", dev], check=True)          # flush the loop device into its file
    data = backing.read_bytes()
    assert data[:256 << 10] != b"\x5a" * (256 << 10) and data[4 << 20:(4 << 20) + (256 << 10)] != b"\x5a" * (256 << 10)
    assert data[8 << 20:] == b"\x5a" * (DEVICE_BYTES - (8 << 20))


def test_a_mounted_device_is_refused_for_writes_and_a_file_is_no_device(home, tmp_path, loop_dev):
    dev, backing = loop_dev
    r = run_cli("iobench", "--device", str(backing), "--mode", "read")
    assert r.returncode == 2 and "is a regular file, not a block device" in r.stderr
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 is not installed (e2fsprogs)")
    subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    m = subprocess.run(["mount", dev, str(mnt)], capture_output=True, text=True)
    if m.returncode != 0:
        pytest.skip(f"cannot mount here: {m.stderr.strip()!r}")
    try:
        r = run_cli("iobench", "--device", dev, "--mode", "write", "--destructive", "--size-per-thread", "1M",
                    "--runs", "1")
        assert r.returncode == 1 and f"is in use ({dev} mounted on {mnt} (ext4))" in r.stderr, r.stderr
        r = run_cli("iobench", "--device", dev, "--mode", "read", "--size-per-thread", "1M", "--runs", "1")
        assert r.returncode == 0, r.stderr                    # reading a mounted device harms nothing
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_time_and_device_modes_on_the_grid_reach_every_node(tmp_path, loop_dev):
    """--nodes passes --time and --device through: two hosts (one machine here) each loop over
    their slices for 1 s; the device's counter holds what both nodes say they read. (One grid run
    covers both options: a grid's start and stop cost most of this file's time budget.)"""
    from tests.support.gridtest import Grid, running
    from tests.support.gridtoml import toml_text

    dev, _ = loop_dev
    with running(Grid(tmp_path, toml_text({"node1": 1, "node2": 1}))) as grid:
        before = sectors(dev)
        out = tmp_path / "dev.json"
        r = grid.cli("iobench", "--nodes", "all", "--device", dev, "--mode", "read", "--bs", "64K",
                     "--size-per-thread", "2M", "--time", "1s", "--runs", "1", "--json", str(out), timeout=120)
        assert r.returncode == 0, r.stderr
        after = sectors(dev)
        res = json.loads(out.read_text())
        assert (res["spec"]["device"], res["spec"]["dir"], res["spec"]["run_mode"]) == (True, dev, "time")
        assert [n["node"] for n in res["runs"][0]["nodes"]] == ["node1", "node2"]
        for n in res["runs"][0]["nodes"]:
            assert n["read"]["runtime"] >= 1000.0 and n["read"]["io_bytes"] > 0      # ms: each lasted its 1 s
        assert moved(out)[0] == (after[0] - before[0]) * 512
