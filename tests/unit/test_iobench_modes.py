"""iobench's time mode (ndisk64 -t) and raw-device mode (ndisk64 -f): the request loop's offsets and
stopping rule driven by an injected clock and fake pread/pwrite (no disk, no sleeping), the record,
the grid job's command line, and the refusals of a raw device (fake /proc and /sys trees)."""
from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest

from statgrid.bench import iobench_device, iobench_out
from statgrid.bench.iobench import Direction, Interrupted, IOSpec, NodeRun, request_loop, request_plan
from statgrid.bench.iobench_grid import job_argv
from statgrid.errors import StatgridError, UsageError

BS = 4096


class FakeDisk:
    """pread/pwrite stand-ins that record (kind, offset) and move a whole block each."""

    def __init__(self, stop_after: int | None = None, stop: threading.Event | None = None):
        self.calls: list[tuple[str, int]] = []
        self.stop_after, self.stop = stop_after, stop

    def _note(self, kind: str, off: int, n: int) -> int:
        self.calls.append((kind, off))
        if self.stop_after is not None and len(self.calls) == self.stop_after:
            self.stop.set()
        return n

    def pread(self, fd, views, off):
        return self._note("r", off, len(views[0]))

    def pwrite(self, fd, view, off):
        return self._note("w", off, len(view))


def ticking(step_ns: int):
    """A clock that moves step_ns at every reading: request k (from 0) is read at 2k·step and ends at (2k+1)·step."""
    t = [-step_ns]

    def clock() -> int:
        t[0] += step_ns
        return t[0]
    return clock


def loop(plans, disk, deadline_ns, clock, base=0, stop=None, between_passes=None):
    return request_loop(plans, -1, bytearray(BS), BS, base, deadline_ns, clock=clock, pread=disk.pread,
                        pwrite=disk.pwrite, stop=stop or threading.Event(), between_passes=between_passes)


def take(plans, n_passes):
    out = [next(plans) for _ in range(n_passes)]
    return [b for blocks, _ in out for b in blocks], [k for _, kinds in out for k in kinds]


# -- the plan: wrap-around ---------------------------------------------------------------------------
def test_sequential_passes_start_again_at_block_0():
    blocks, kinds = take(request_plan(4, "seq", 100, seed=1), 3)
    assert blocks == [0, 1, 2, 3] * 3 and kinds == [True] * 12
    blocks, kinds = take(request_plan(3, "seq", 0, seed=1), 2)
    assert blocks == [0, 1, 2, 0, 1, 2] and kinds == [False] * 6


def test_a_sequential_mix_keeps_one_position_per_direction_wrapping_at_the_region_end():
    blocks, kinds = take(request_plan(5, "seq", 50, seed=3), 4)
    assert 0 < sum(kinds) < 20                                  # both directions occur
    reads = [b for b, k in zip(blocks, kinds) if k]
    writes = [b for b, k in zip(blocks, kinds) if not k]
    assert reads == [i % 5 for i in range(len(reads))]          # 0 1 2 3 4 0 1 … across pass boundaries
    assert writes == [i % 5 for i in range(len(writes))]


def test_random_passes_repeat_one_permutation():
    plans = request_plan(64, "rand", 100, seed=2)
    first, _ = next(plans)
    second, _ = next(plans)
    assert sorted(first) == list(range(64)) and first == second and first != list(range(64))


# -- the loop: stops on time, wraps, size mode is one pass -----------------------------------------
def test_time_mode_stops_at_the_first_request_ending_at_the_deadline_and_wraps_round_the_region():
    disk = FakeDisk()
    # requests end at 10, 30, 50, 70, 90, 110 ns: the sixth is the first to end at or after 95
    moved = loop(request_plan(4, "seq", 0, seed=1), disk, deadline_ns=95, clock=ticking(10), base=8 * BS)
    assert disk.calls == [("w", (8 + b) * BS) for b in (0, 1, 2, 3, 0, 1)]
    assert moved.write_bytes == 6 * BS and moved.read_bytes == 0
    assert moved.lat_ns.tolist() == [10] * 6 and moved.is_read.tolist() == [False] * 6


def test_time_mode_reads_loop_for_several_passes_with_a_hook_at_each_wrap():
    disk = FakeDisk()
    # 2-block region; deadline 150: requests end at 10, 30, …, 150 → 8 requests, 4 passes, 3 wraps
    moved = loop(request_plan(2, "seq", 100, seed=1), disk, deadline_ns=150, clock=ticking(10),
                 between_passes=lambda: disk.calls.append(("wrap", -1)))
    assert disk.calls == [("r", 0), ("r", BS)] + [("wrap", -1), ("r", 0), ("r", BS)] * 3
    assert moved.read_bytes == 8 * BS and moved.is_read.all() and moved.lat_ns.size == 8
    disk = FakeDisk()
    loop(request_plan(2, "seq", 100, seed=1), disk, deadline_ns=None, clock=ticking(10),
         between_passes=lambda: disk.calls.append(("wrap", -1)))
    assert disk.calls == [("r", 0), ("r", BS)]                     # size mode: one pass, no wrap


def test_a_deadline_exactly_at_a_pass_end_stops_there():
    disk = FakeDisk()
    moved = loop(request_plan(3, "seq", 100, seed=1), disk, deadline_ns=50, clock=ticking(10))
    assert len(disk.calls) == 3 and moved.lat_ns.size == 3


def test_size_mode_is_one_pass_whatever_the_clock():
    disk = FakeDisk()
    moved = loop(request_plan(4, "rand", 25, seed=9), disk, deadline_ns=None, clock=ticking(10 ** 12))
    assert sorted(off // BS for _, off in disk.calls) == [0, 1, 2, 3]
    n_reads = sum(1 for kind, _ in disk.calls if kind == "r")
    assert moved.read_bytes == n_reads * BS and moved.write_bytes == (4 - n_reads) * BS
    assert moved.is_read.tolist() == [kind == "r" for kind, _ in disk.calls]


def test_a_mixed_time_run_splits_bytes_and_latencies_by_direction():
    disk = FakeDisk()
    # requests end at 10, 30, …, 390: the 20th is the first to end at or after 390
    moved = loop(request_plan(3, "seq", 50, seed=5), disk, deadline_ns=390, clock=ticking(10))
    kinds = [k for k, _ in disk.calls]
    assert len(kinds) == 20 and 0 < kinds.count("r") < 20
    assert moved.read_bytes == kinds.count("r") * BS and moved.write_bytes == kinds.count("w") * BS
    assert moved.is_read.sum() == kinds.count("r")


def test_ctrl_c_ends_the_loop_at_the_next_request():
    stop = threading.Event()
    disk = FakeDisk(stop_after=3, stop=stop)
    with pytest.raises(Interrupted):
        loop(request_plan(100, "seq", 0, seed=1), disk, deadline_ns=None, clock=ticking(1), stop=stop)
    assert len(disk.calls) == 3


# -- the record and the grid job --------------------------------------------------------------------
def test_the_record_says_time_mode_and_computes_rates_from_the_runtime(tmp_path):
    spec = IOSpec(tmp_path, "read", bs_bytes=BS, size_per_thread_bytes=8 * BS, runs=1, duration_s=2.0)
    lat = np.array([100, 200, 300, 400, 500, 600], dtype=np.int64)
    run = NodeRun("n1", 1, 2_100_000_000, Direction(6 * BS, 2_000_000_000, lat), Direction())
    res = iobench_out.summarize(spec, [[run]])
    assert res["spec"]["run_mode"] == "time" and res["spec"]["duration_s"] == 2.0 and res["spec"]["device"] is False
    r = res["runs"][0]["total"]["read"]
    assert r["bw_bytes"] == 6 * BS / 2.0 and r["iops"] == 3.0 and r["runtime"] == 2000.0
    assert r["lat_ns"]["percentile"]["50.000000"] == 350            # median of 100 … 600
    assert "for 2 s per run (looping)" in iobench_out.terminal(res)
    size = IOSpec(tmp_path, "read", bs_bytes=BS, size_per_thread_bytes=8 * BS, runs=1)
    assert iobench_out.summarize(size, [[run]])["spec"]["run_mode"] == "size"


def test_the_grid_job_gets_the_time_and_the_device(tmp_path):
    spec = IOSpec(tmp_path, "write", bs_bytes=BS, size_per_thread_bytes=8 * BS, runs=1, duration_s=1.5)
    argv = job_argv(spec, tmp_path, 2)
    assert argv[argv.index("--time") + 1] == "1.5s" and "--device" not in argv and "--dir" in argv
    dev = IOSpec(tmp_path, "write", bs_bytes=BS, size_per_thread_bytes=8 * BS, direct=True, runs=1,
                 device=Path("/dev/sdz"), destructive=True)
    argv = job_argv(dev, tmp_path, 2)
    assert argv[argv.index("--device") + 1] == "/dev/sdz" and "--destructive" in argv and "--dir" not in argv
    assert "--time" not in argv


def test_spec_refusals_name_the_value(tmp_path):
    with pytest.raises(UsageError, match="--time -1"):
        IOSpec(tmp_path, "read", duration_s=-1.0).check()
    with pytest.raises(UsageError, match="--destructive applies to a raw --device only"):
        IOSpec(tmp_path, "write", destructive=True).check()
    with pytest.raises(UsageError, match="O_DIRECT only"):
        IOSpec(tmp_path, "read", device=Path("/dev/sdz")).check()


# -- raw device refusals ----------------------------------------------------------------------------
def test_a_path_that_is_not_a_block_device_is_refused(tmp_path):
    f = tmp_path / "disk.img"
    f.write_bytes(b"x" * 4096)
    for path, words in ((f, "is a regular file, not a block device"), (tmp_path, "is a directory, not a block"),
                        (tmp_path / "nope", "does not exist")):
        with pytest.raises(UsageError, match=words) as e:
            iobench_device.open_device(path, writes=False, destructive=False, euid=0)
        assert repr(str(path)) in str(e.value)


def fake_trees(tmp_path, mountinfo: str = "", swaps: str = "", holders: dict | None = None,
               parts: dict | None = None, disk=("sdz", "8:240")) -> tuple[str, str]:
    proc, sys_ = tmp_path / "proc", tmp_path / "sys"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "mountinfo").write_text(mountinfo)
    (proc / "swaps").write_text("Filename Type Size Used Priority\n" + swaps)
    d = sys_ / "block" / disk[0]
    (d / "holders").mkdir(parents=True)
    (d / "dev").write_text(disk[1] + "\n")
    for name, dev in (parts or {}).items():
        (d / name / "holders").mkdir(parents=True)
        (d / name / "partition").write_text("1\n")
        (d / name / "dev").write_text(dev + "\n")
    for owner, held in (holders or {}).items():
        (d / owner / "holders" if owner != disk[0] else d / "holders").joinpath(held).mkdir(parents=True)
    return str(proc), str(sys_)


MOUNT = "36 25 {dev} / {mp} rw,relatime shared:1 - ext4 {src} rw\n"


def test_users_finds_mounts_partitions_holders_and_swap(tmp_path):
    proc, sys_ = fake_trees(tmp_path / "a", MOUNT.format(dev="8:241", mp="/data", src="/dev/sdz1"),
                            parts={"sdz1": "8:241", "sdz2": "8:242"})
    assert iobench_device.users("sdz", 8, 240, proc, sys_) == ["/dev/sdz1 mounted on /data (ext4)"]
    proc, sys_ = fake_trees(tmp_path / "b", MOUNT.format(dev="8:240", mp="/mnt/x\\040y", src="/dev/sdz"))
    assert iobench_device.users("sdz", 8, 240, proc, sys_) == ["/dev/sdz mounted on /mnt/x y (ext4)"]
    proc, sys_ = fake_trees(tmp_path / "c", holders={"sdz": "dm-3"})
    assert iobench_device.users("sdz", 8, 240, proc, sys_) == ["/dev/sdz held by dm-3"]
    proc, sys_ = fake_trees(tmp_path / "d", swaps="/dev/sdz2 partition 1048572 0 -2\n", parts={"sdz2": "8:242"})
    assert iobench_device.users("sdz", 8, 240, proc, sys_) == ["/dev/sdz2 used as swap"]
    # another disk's mount, holder and swap are not this one's
    proc, sys_ = fake_trees(tmp_path / "e", MOUNT.format(dev="8:0", mp="/", src="/dev/sda"),
                            swaps="/dev/sda2 partition 1048572 0 -2\n")
    assert iobench_device.users("sdz", 8, 240, proc, sys_) == []


def some_block_device() -> Path:
    for p in sorted(Path("/dev").iterdir()):
        try:
            if stat.S_ISBLK(p.stat().st_mode):
                return p
        except OSError:
            continue
    pytest.skip("no block device under /dev to point the refusals at")


def test_device_refusals_in_order_destructive_root_in_use(tmp_path):
    dev = some_block_device()
    st = dev.stat()
    major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
    name = "sdz"
    proc, sys_ = fake_trees(tmp_path, MOUNT.format(dev=f"{major}:{minor}", mp="/srv/data", src="none"),
                            disk=(name, f"{major}:{minor}"))
    with pytest.raises(UsageError, match="add --destructive to mean it, or use --mode read"):
        iobench_device.open_device(dev, writes=True, destructive=False, euid=0, procfs=proc, sysfs=sys_)
    for writes in (False, True):
        with pytest.raises(StatgridError, match="needs root") as e:
            iobench_device.open_device(dev, writes=writes, destructive=True, euid=1000, procfs=proc, sysfs=sys_)
        assert not isinstance(e.value, UsageError) and repr(str(dev)) in str(e.value)
    with pytest.raises(StatgridError, match=r"is in use \(/dev/sdz mounted on /srv/data \(ext4\)\)"):
        iobench_device.open_device(dev, writes=True, destructive=True, euid=0, procfs=proc, sysfs=sys_)


def test_region_is_the_device_split_between_threads_and_must_fit(tmp_path):
    dev = iobench_device.Device(Path("/dev/sdz"), "sdz", 8, 240, size_bytes=10 * (1 << 20) + 512,
                                logical_block_bytes=512)
    assert iobench_device.region_bytes(dev, 3, 1 << 20, None) == 3 << 20          # 10 MiB / 3 → 3 whole MiB
    assert iobench_device.region_bytes(dev, 2, 1 << 20, 5 << 20) == 5 << 20
    with pytest.raises(UsageError, match="goes past the end of --device '/dev/sdz'"):
        iobench_device.region_bytes(dev, 2, 1 << 20, 6 << 20)
    with pytest.raises(UsageError, match="too small for 11 thread"):
        iobench_device.region_bytes(dev, 11, 1 << 20, None)
    with pytest.raises(UsageError, match="--bs 6144 bytes"):
        iobench_device.region_bytes(dev, 1, 6144, None)
