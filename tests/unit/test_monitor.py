"""The node monitor: parsers and rates over a fake /proc (exact expected values), the declared
metrics driving storage and CSV, and a cross-check against iostat while a real write runs."""
from __future__ import annotations

import csv
import dataclasses
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from statgrid.monitor import _linux
from statgrid.monitor.metrics import KEYS, LIBRARY_METRICS, METRICS, NODE_METRICS, label
from statgrid.monitor.sampler import Sampler, map_libraries, read_snapshot, rows
from statgrid.monitor.store import MonitorWriter, export_csv, load
from tests.conftest import WAIT_S, run_cli, wait_for

STAT = "cpu  {u} 0 {s} {i} {w} 0 0 {st} 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1\n"
MEMINFO = ("MemTotal:       16000000 kB\nMemFree:         4000000 kB\nMemAvailable:   10000000 kB\n"
           "Buffers:          100000 kB\nCached:          3000000 kB\nSwapTotal:       2000000 kB\n"
           "SwapFree:        1500000 kB\nSReclaimable:     400000 kB\n")
# major minor name | reads merges sectors ms | writes merges sectors ms | inflight io_ms weighted_ms | discards...
DISK = "   8       0 sda {r} 0 {rs} {rms} {w} 0 {ws} {wms} 0 {io} {wt} 0 0 0 0 0 0\n" \
       "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n" \
       "   8       1 sda1 {r} 0 {rs} {rms} {w} 0 {ws} {wms} 0 {io} {wt}\n"
PSI = "some avg10=1.00 avg60=0.50 avg300=0.10 total={some}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total={full}\n"
NETDEV = ("Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n"
          "    lo: {lo} 1 0 0 0 0 0 0 {lo} 1 0 0 0 0 0 0\n"
          "  eth0: {rx} 10 0 0 0 0 0 0 {tx} 10 0 0 0 0 0 0\n")
MOUNTINFO = ("22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
             "23 22 0:30 / /scratch rw - tmpfs tmpfs rw\n"
             "24 22 8:0 / /data\\040lake rw - xfs /dev/sda rw\n")


def fake_proc(root: Path, *, cpu, disk, psi_io, net, load="0.50 0.40 0.30 1/100 999") -> str:
    (root / "pressure").mkdir(parents=True, exist_ok=True)
    (root / "net").mkdir(exist_ok=True)
    (root / "self").mkdir(exist_ok=True)
    (root / "stat").write_text(STAT.format(**cpu))
    (root / "loadavg").write_text(load)
    (root / "meminfo").write_text(MEMINFO)
    (root / "diskstats").write_text(DISK.format(**disk))
    (root / "pressure" / "io").write_text(PSI.format(**psi_io))
    (root / "pressure" / "cpu").write_text(PSI.format(some=0, full=0))
    (root / "pressure" / "memory").write_text(PSI.format(some=0, full=0))
    (root / "net" / "dev").write_text(NETDEV.format(**net))
    (root / "self" / "mountinfo").write_text(MOUNTINFO)
    return str(root)


def test_parsers_read_the_kernel_formats(tmp_path):
    root = fake_proc(tmp_path, cpu=dict(u=100, s=50, i=800, w=40, st=10),
                     disk=dict(r=10, rs=80, rms=5, w=20, ws=400, wms=30, io=100, wt=200),
                     psi_io=dict(some=1000, full=400), net=dict(lo=5, rx=1000, tx=2000))
    assert _linux.parse_stat_cpu(_linux.read("stat", root)) == {
        "user": 100, "nice": 0, "system": 50, "idle": 800, "iowait": 40, "irq": 0, "softirq": 0, "steal": 10}
    mem = _linux.parse_meminfo(_linux.read("meminfo", root))
    assert mem["MemTotal"] == 16000000 * 1024 and mem["SwapFree"] == 1500000 * 1024
    disks = _linux.parse_diskstats(_linux.read("diskstats", root))
    assert disks["sda"].write_sectors == 400 and disks["sda"].weighted_ms == 200 and disks["loop0"].reads == 0
    assert disks["sda1"].discards == 0 and disks["sda1"].io_ms == 100      # the 11-field form (old kernels)
    assert _linux.parse_pressure(_linux.read("pressure/io", root)) == {"some": 1000, "full": 400}
    assert _linux.parse_net_dev(_linux.read("net/dev", root)) == {"lo": (5, 5), "eth0": (1000, 2000)}
    mounts = _linux.parse_mountinfo(_linux.read("self/mountinfo", root))
    assert [m.mount_point for m in mounts] == ["/", "/scratch", "/data lake"]
    assert _linux.mount_of("/data lake/x/y", mounts).major == 8
    assert _linux.mount_of("/scratch", mounts).fstype == "tmpfs"
    assert _linux.mount_of("/etc/hosts", mounts).mount_point == "/"


def test_rates_match_iostat_formulas_exactly(tmp_path):
    a = fake_proc(tmp_path / "a", cpu=dict(u=1000, s=200, i=8000, w=100, st=0),
                  disk=dict(r=100, rs=8000, rms=50, w=200, ws=40000, wms=400, io=1000, wt=3000),
                  psi_io=dict(some=5_000_000, full=1_000_000), net=dict(lo=0, rx=1_000_000, tx=0))
    b = fake_proc(tmp_path / "b", cpu=dict(u=1150, s=250, i=8250, w=150, st=0),         # Δ = 500 ticks
                  disk=dict(r=150, rs=10048, rms=75, w=250, ws=60480, wms=700, io=1500, wt=4000),
                  psi_io=dict(some=5_500_000, full=1_200_000), net=dict(lo=99, rx=3_000_000, tx=4096))
    prev = dataclasses.replace(read_snapshot(a), mono_s=100.0)
    cur = dataclasses.replace(read_snapshot(b), mono_s=102.0, ts=1_700_000_000.0)
    libs = map_libraries({"data": "/data lake/sales", "work": "/scratch/w", "util": "/var/u"}, a,
                         sources=("block",))                  # the block source alone: test_fs_sources has the rest
    assert [(x.library, x.mount_point, x.device) for x in libs] == [
        ("data", "/data lake", "sda"), ("work", "/scratch", None), ("util", "/", "sda1")]
    assert [x.unmeasured_note() for x in libs] == [
        None, "library 'work' (/scratch/w) is on tmpfs at '/scratch', which is memory, not a block device: no "
        "per-library I/O rows for it; node CPU, memory and network figures still cover it", None]
    out = rows(prev, cur, "n1", libs, ["sda"])
    node = out["node"][0]
    assert node["cpu_user_pct"] == pytest.approx(30.0) and node["cpu_system_pct"] == pytest.approx(10.0)
    assert node["cpu_idle_pct"] == pytest.approx(50.0) and node["cpu_iowait_pct"] == pytest.approx(10.0)
    hz = os.sysconf("SC_CLK_TCK")                                          # 500 ticks in 2 s
    assert node["cpu_busy_cores"] == pytest.approx(0.4 * 500 / (2 * hz))
    assert node["mem_used_bytes"] == (16000000 - 4000000 - 100000 - 3000000 - 400000) * 1024
    assert node["mem_cached_bytes"] == 3500000 * 1024 and node["swap_used_bytes"] == 500000 * 1024
    assert node["psi_io_some_pct"] == pytest.approx(25.0) and node["psi_io_full_pct"] == pytest.approx(10.0)
    assert node["net_rx_bytes_per_s"] == 1_000_000 and node["net_tx_bytes_per_s"] == 2048   # lo left out
    assert node["load_1m"] == 0.5 and node["interval_s"] == 2.0
    disk = out["disk"][0]
    assert disk == {"ts": 1_700_000_000.0, "host": "n1", "device": "sda", "counted_in": None, "layer": None,
                    "read_bytes_per_s": 2048 * 512 / 2, "write_bytes_per_s": 20480 * 512 / 2,
                    "read_iops": 25.0, "write_iops": 25.0,
                    "avg_request_bytes": (2048 + 20480) * 512 / 100, "await_ms": 325 / 100,
                    "read_await_ms": 0.5, "write_await_ms": 6.0, "util_pct": 25.0, "avg_queue_size": 0.5}
    assert [r["library"] for r in out["library"]] == ["data"]             # util's sda1 was not sampled
    # A counter that went backwards gives no rate, not a huge or negative one.
    back = dataclasses.replace(cur, disks={"sda": dataclasses.replace(cur.disks["sda"], write_sectors=1)})
    assert rows(prev, back, "n1", libs, ["sda"])["disk"][0]["write_bytes_per_s"] is None


def test_metrics_table_drives_storage_and_csv(tmp_path):
    names = [m.name for m in METRICS]
    assert len(names) == len(set(names)) and all(re.search(r"_(pct|bytes|per_s|iops|ms|1m|size|cores)$", n)
                                                  for n in names)
    assert label("read_bytes_per_s") == "read bytes per s [B/s]"
    root = fake_proc(tmp_path / "p", cpu=dict(u=1, s=1, i=1, w=1, st=0),
                     disk=dict(r=1, rs=1, rms=1, w=1, ws=1, wms=1, io=1, wt=1),
                     psi_io=dict(some=1, full=1), net=dict(lo=0, rx=0, tx=0))
    writer = MonitorWriter(tmp_path / "mon", "n1", flush_every=2)
    sampler = Sampler("n1", {"data": "/data lake"}, root)
    sampler.sample()
    for _ in range(3):
        writer.append(sampler.sample())
    writer.flush()
    node = load(tmp_path / "mon", "node")
    assert node.num_rows == 3 and node.column_names == [*KEYS["node"], *(m.name for m in NODE_METRICS)]
    assert load(tmp_path / "mon", "library").column_names == [*KEYS["library"], *(m.name for m in LIBRARY_METRICS)]
    written = export_csv(tmp_path / "mon", tmp_path / "csv")
    assert [p.name for p in written] == ["node.csv", "disk.csv", "library.csv"]
    header = next(csv.reader(open(tmp_path / "csv" / "library.csv")))
    assert header == ["time_utc", *KEYS["library"], *(m.name for m in LIBRARY_METRICS)]


def test_anonymous_device_mounts_map_through_their_source_and_notes_say_why(tmp_path):
    """btrfs reports an anonymous 0:N device in mountinfo: its source device node gives the disk (it
    was told 'no local block device'); NFS, ZFS get notes that say what they are."""
    real = next((d for d in ("/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/xvda")
                 if os.path.exists(d) and stat.S_ISBLK(os.stat(d).st_mode)), None)
    if real is None:
        pytest.skip("no block device node under /dev to stand for a btrfs source")
    rdev = os.stat(real).st_rdev
    root = tmp_path / "proc"
    (root / "self").mkdir(parents=True)
    (root / "self" / "mountinfo").write_text(
        f"22 1 0:31 / / rw - btrfs {real} rw\n"
        "23 22 0:40 / /nfs rw - nfs4 srv:/export rw\n"
        "24 22 0:41 / /tank rw - zfs tank/data rw\n")
    (root / "diskstats").write_text(f"{os.major(rdev):4d} {os.minor(rdev):7d} {Path(real).name} "
                                    "1 0 8 1 1 0 8 1 0 2 2 0 0 0 0 0 0\n")
    libs = map_libraries({"data": "/srv/data", "work": "/nfs/w", "util": "/tank/u"}, str(root))
    assert [(x.device, x.source) for x in libs] == [(Path(real).name, "block"), (None, "process"),
                                                    (None, "process")]          # no mountstats: the jobs' I/O
    notes = [x.unmeasured_note() for x in libs]
    assert notes[0] is None
    assert "on nfs4 at '/nfs', a network or cluster file system with no counters here" in notes[1]
    assert "on zfs at '/tank', which statgrid cannot map to a block device: its rows (source 'process')" in notes[2]


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_monitor_says_which_libraries_it_cannot_measure(home, tmp_path):
    """A library on a file system without a local block device gets a note at start, not silence."""
    shm = Path("/dev/shm")
    mounts = _linux.parse_mountinfo(Path("/proc/self/mountinfo").read_text())
    m = _linux.mount_of(str(shm), mounts) if shm.is_dir() else None
    if m is None or m.fstype != "tmpfs" or not os.access(shm, os.W_OK):
        pytest.skip("needs a writable tmpfs at /dev/shm")
    work = Path(tempfile.mkdtemp(dir=shm, prefix="statgrid-test-"))
    try:
        (home / "grid.toml").write_text(f'[libraries]\nwork = "{work}"\n')
        r = run_cli("monitor", "--interval", "200ms", "--duration", "400ms", "-q", "--out", str(tmp_path / "mon"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    assert f"note: library 'work' ({work}) is on tmpfs at '/dev/shm', which is memory, not a block device: its rows (source 'process')" in r.stderr


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_monitor_cli_runs_for_a_duration_and_exports(home, tmp_path):
    r = run_cli("monitor", "--interval", "200ms", "--duration", "1s", "--out", str(tmp_path / "mon"))
    assert r.returncode == 0, r.stderr
    # 5 on schedule; fewer if the machine stalls the sampler past an interval (it re-anchors)
    n = int(re.search(r"(\d+) samples written", r.stderr).group(1))
    assert 1 <= n <= 5 and len([line for line in r.stdout.splitlines() if "cpu usr" in line]) == n
    e = run_cli("monitor", "export", "--in", str(tmp_path / "mon"), "--csv", str(tmp_path / "csv"))
    assert e.returncode == 0 and (tmp_path / "csv" / "node.csv").is_file()
    bad = run_cli("monitor", "--interval", "soon")
    assert bad.returncode == 2 and "--interval 'soon' is not allowed" in bad.stderr


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
@pytest.mark.skipif(shutil.which("iostat") is None, reason="needs iostat (Debian package sysstat)")
def test_device_write_rate_agrees_with_iostat(tmp_path):
    libs = map_libraries({"data": tmp_path})
    device = libs[0].device
    if device is None:
        pytest.skip(f"{tmp_path} is not on a block device")
    if shutil.which("stdbuf") is None:
        pytest.skip("needs stdbuf (coreutils) to read iostat's lines as it prints them")
    sampler = Sampler("n1", {"data": tmp_path})
    samples: list[tuple[float, dict]] = []               # (interval_s, library row)
    stop = threading.Event()

    def sample_loop():
        sampler.sample()
        t = time.monotonic()
        i = 0
        while not stop.is_set():
            i += 1
            time.sleep(max(0.0, t + i - time.monotonic()))
            out = sampler.sample()
            samples.append((out["node"][0]["interval_s"], out["library"][0]))

    # Both sides sample every second from about the same moment until well after the writes: a fixed
    # amount is written (not "for 3 s"), so what is compared does not depend on the disk's speed.
    # Each side's intervals are counted (not times slept): both have closed one before the writes start,
    # and two after they end, however slowly a loaded machine schedules them.
    iostat = subprocess.Popen(["stdbuf", "-oL", "iostat", "-d", "-k", "-y", device, "1"], stdout=subprocess.PIPE,
                              text=True)
    iostat_lines: list[str] = []
    reader = threading.Thread(target=lambda: iostat_lines.extend(
        line for line in iostat.stdout if line.startswith(device + " ")), daemon=True)
    reader.start()
    thread = threading.Thread(target=sample_loop)
    thread.start()
    try:
        wait_for(lambda: samples and iostat_lines, "a first interval of both sides",
                 state=lambda: (len(samples), len(iostat_lines)))
        chunk = os.urandom(4 << 20)
        with open(tmp_path / "w.bin", "wb") as f:                          # 32 MiB, each 4 MiB fsync'd
            for _ in range(8):
                f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
        ours_then, theirs_then = len(samples), len(iostat_lines)
        wait_for(lambda: len(samples) >= ours_then + 2 and len(iostat_lines) >= theirs_then + 2,
                 "both sides to close two intervals after the last write",
                 state=lambda: (len(samples) - ours_then, len(iostat_lines) - theirs_then))
    finally:
        stop.set()
        thread.join()
        iostat.terminate()
    iostat.wait(timeout=WAIT_S)
    reader.join(WAIT_S)
    iostat_kb = sum(float(line.split()[6]) for line in iostat_lines)
    ours = sum(interval_s * row["write_bytes_per_s"] for interval_s, row in samples)
    print(f"written per iostat {iostat_kb / 1024:.1f} MiB, per statgrid {ours / 2**20:.1f} MiB")
    assert iostat_kb >= 32 * 1024 * 0.95                                   # the write really happened
    assert ours == pytest.approx(iostat_kb * 1024, rel=0.15)


# -- stacked block devices: each byte counted once (issue 14, item 3) ---------------------------------
# Four everyday layouts. Each writes one stream of 200,000 sectors/s (102.4 MB/s) in 400 requests/s
# through its top device; the layers under it count the same bytes again (a partition's I/O is in
# its disk's line, RAID1 writes each mirror in full, multipath splits the stream over its paths).
# device: (major, minor, sectors/s, writes/s); sysfs: (name, parent disk, holders, slaves, dm, md level)
STACKS = {
    "partitioned disk": {
        "devices": {"sda": (8, 0, 200_000, 400), "sda1": (8, 1, 200_000, 400), "sda2": (8, 2, 0, 0)},
        "sysfs": [("sda", None, (), (), None, None), ("sda1", "sda", (), (), None, None),
                  ("sda2", "sda", (), (), None, None)],
        "mount": "8:1", "top": "sda1", "counted_in": {"sda": "sda1 sda2", "sda1": "sda1", "sda2": "sda2"},
        "note": "Devices counted: sda1 (partition, over sda), sda2 (partition, over sda)."},
    "LVM on a partition": {
        "devices": {"sda": (8, 0, 200_000, 400), "sda1": (8, 1, 200_000, 400), "dm-0": (253, 0, 200_000, 400)},
        "sysfs": [("sda", None, (), (), None, None), ("sda1", "sda", ("dm-0",), (), None, None),
                  ("dm-0", None, (), ("sda1",), ("vg0-data", "LVM-Jc2x"), None)],
        "mount": "253:0", "top": "dm-0", "counted_in": dict.fromkeys(("sda", "sda1", "dm-0"), "dm-0"),
        "note": "Devices counted: dm-0 (LVM vg0-data, over sda, sda1)."},
    "md RAID1 over two disks": {
        "devices": {"sdb": (8, 16, 200_000, 400), "sdc": (8, 32, 200_000, 400), "md0": (9, 0, 200_000, 400)},
        "sysfs": [("sdb", None, ("md0",), (), None, None), ("sdc", None, ("md0",), (), None, None),
                  ("md0", None, (), ("sdb", "sdc"), None, "raid1")],
        "mount": "9:0", "top": "md0", "counted_in": dict.fromkeys(("sdb", "sdc", "md0"), "md0"),
        "note": "Devices counted: md0 (md raid1, over sdb, sdc)."},
    "multipath over two paths": {
        "devices": {"sdd": (8, 48, 100_000, 200), "sde": (8, 64, 100_000, 200), "dm-1": (253, 1, 200_000, 400)},
        "sysfs": [("sdd", None, ("dm-1",), (), None, None), ("sde", None, ("dm-1",), (), None, None),
                  ("dm-1", None, (), ("sdd", "sde"), ("mpatha", "mpath-3600a0b80"), None)],
        "mount": "253:1", "top": "dm-1", "counted_in": dict.fromkeys(("sdd", "sde", "dm-1"), "dm-1"),
        "note": "Devices counted: dm-1 (multipath mpatha, over sdd, sde)."},
}


def fake_sys(root: Path, entries) -> str:
    """/sys/block as the kernel lays it out: whole disks at block/<disk>, partitions as
    block/<disk>/<part>/ with a `partition` file, holders/ and slaves/ as symlinks."""
    block = root / "block"
    for name, parent, holders, slaves, dm, md_level in entries:
        d = block / parent / name if parent else block / name
        (d / "holders").mkdir(parents=True)
        if parent:
            (d / "partition").write_text(name[-1] + "\n")
        else:
            (d / "slaves").mkdir()
        for h in holders:
            os.symlink(f"../../../{h}" if parent else f"../../{h}", d / "holders" / h)
        for s in slaves:
            os.symlink(f"../../{s}", d / "slaves" / s)
        if dm:
            (d / "dm").mkdir()
            (d / "dm" / "name").write_text(dm[0] + "\n")
            (d / "dm" / "uuid").write_text(dm[1] + "\n")
        if md_level:
            (d / "md").mkdir()
            (d / "md" / "level").write_text(md_level + "\n")
    return str(root)


def fake_stack_proc(root: Path, devices: dict, mount: str, t_s: int) -> str:
    """/proc after t_s seconds of the devices' steady writes (stat does not move: CPUs idle)."""
    (root / "self").mkdir(parents=True, exist_ok=True)
    (root / "stat").write_text(STAT.format(u=0, s=0, i=0, w=0, st=0))
    (root / "loadavg").write_text("0.00 0.00 0.00 1/100 999")
    (root / "meminfo").write_text(MEMINFO)
    lines = []
    for name, (major, minor, sectors_s, writes_s) in devices.items():
        w, ws = 1 + writes_s * t_s, 8 + sectors_s * t_s       # used since boot, even the idle partition
        lines.append(f"{major:4d} {minor:7d} {name} 0 0 0 0 {w} 0 {ws} {w} 0 {w} {w} 0 0 0 0 0 0")
    (root / "diskstats").write_text("\n".join(lines) + "\n")
    (root / "self" / "mountinfo").write_text(f"22 1 {mount} / /data rw - xfs /dev/x rw\n")
    return str(root)


def capture_stack(tmp_path: Path, stack: dict, sysfs: str, seconds: int = 5) -> Path:
    """What `statgrid monitor` saves for `seconds` 1-s samples of the layout (clock set, not read)."""
    cap = tmp_path / "cap"
    procs = [fake_stack_proc(tmp_path / f"proc{t}", stack["devices"], stack["mount"], t) for t in range(seconds + 1)]
    sampler = Sampler("n1", {"data": "/data/sales"}, procs[0], sysfs)
    writer = MonitorWriter(cap, "n1")
    from statgrid.monitor.store import write_machine
    write_machine(cap, "n1", {"machine_id": "k1", "cpus": 4})
    for t, proc in enumerate(procs):
        out = sampler.sample(dataclasses.replace(read_snapshot(proc), mono_s=100.0 + t, ts=1_800_000_000.0 + t))
        if out:
            writer.append(out)
    writer.flush()
    return cap


@pytest.mark.parametrize("layout", list(STACKS))
def test_stacked_devices_count_each_byte_once(tmp_path, layout):
    from statgrid.report import build

    stack = STACKS[layout]
    sysfs = fake_sys(tmp_path / "sys", stack["sysfs"])
    cap = capture_stack(tmp_path, stack, sysfs)
    top = stack["top"]
    assert map_libraries({"data": "/data/sales"}, str(tmp_path / "proc0"))[0].device == top   # the library's line
    disk = load(cap, "disk").to_pylist()
    assert {r["device"] for r in disk} == set(stack["devices"])        # every device still sampled and saved
    assert {r["device"]: r["counted_in"] for r in disk} == stack["counted_in"]
    rep, f = build.monitor_report(cap)
    assert f["mb_s_mean"] == pytest.approx(102.4) and f["mb_s_sustained"] == pytest.approx(102.4)
    assert f["mb_s_peak"] == pytest.approx(102.4) and f["iops_sustained"] == pytest.approx(400)
    assert f["mb_s_per_core"] == pytest.approx(102.4 / 4) and f["latency_ms_mean"] == pytest.approx(1.0)
    assert f[f"lib:data ({top}):sustained"] == pytest.approx(f["mb_s_sustained"])        # library = total
    machine = next(t for t in rep.tables if t.id == "machines").rows[0]
    assert machine["mb_s_mean"] == pytest.approx(102.4) and machine["iops_mean"] == pytest.approx(400)
    sizes = next(t for t in rep.tables if t.id == "io_sizes").rows
    assert sum(r["requests"] for r in sizes) == 5 * 400                 # the top device's requests only
    summary = next(t for t in rep.tables if t.id == "summary")
    assert summary.notes[1] == stack["note"] + " A byte passes every layer of a device stack (partition, LVM, md " \
        "RAID, multipath), so only the top-most devices are summed — those no other device holds (sysfs holders/) " \
        "and, for a disk, without partitions: each logical byte once, without RAID mirror copies or parity."


def test_without_sysfs_every_device_is_summed_and_the_report_says_so(tmp_path):
    """No /sys/block (a container without sysfs, or a capture saved before statgrid read it):
    today's sum of every device, named as such."""
    from statgrid.report import build

    cap = capture_stack(tmp_path, STACKS["LVM on a partition"], str(tmp_path / "no-sys"))
    assert {r["counted_in"] for r in load(cap, "disk").to_pylist()} == {None}
    rep, f = build.monitor_report(cap)
    assert f["mb_s_mean"] == pytest.approx(3 * 102.4)
    assert next(t for t in rep.tables if t.id == "summary").notes[1] == (
        "Devices summed: dm-0, sda, sda1. This capture has no record of how its devices stack (saved before statgrid "
        "read /sys/block, or /sys was not readable): a byte through a partition, LVM, md RAID or multipath is summed "
        "at every layer it passes.")


def test_compare_of_two_stacks_counts_each_once(tmp_path):
    from statgrid.report import build

    caps = []
    for layout in ("LVM on a partition", "multipath over two paths"):
        d = tmp_path / layout.split()[0]
        caps.append(capture_stack(d, STACKS[layout], fake_sys(d / "sys", STACKS[layout]["sysfs"])))
    rep = build.compare_report(*caps)
    rows = {r["figure"]: r for r in rep.tables[0].rows}
    assert rows["sustained throughput (MB/s)"]["a"] == pytest.approx(102.4)
    assert rows["sustained throughput (MB/s)"]["ratio"] == pytest.approx(1.0)
    assert rows["sustained MB/s per core (MB/s)"]["ratio"] == pytest.approx(1.0)
    notes = rep.tables[0].notes[1:]          # definitions, A's devices, B's devices, the inventories' note
    assert len(notes) == 3 and notes[0].startswith("A: " + STACKS["LVM on a partition"]["note"])
    assert notes[1].startswith("B: " + STACKS["multipath over two paths"]["note"])
    overlay = rep.charts[0].data["series"]
    assert [max(s["y"]) for s in overlay] == [pytest.approx(102.4)] * 2


def test_block_topology_of_this_kernel_agrees_with_lsblk():
    """The real /sys/block: every /proc/diskstats device is found, and the devices we count are the
    ones lsblk shows with nothing stacked on them (lsblk -r KNAME PKNAME: one line per parent)."""
    from statgrid.monitor.sampler import top_devices

    topo = _linux.read_block_topology()
    if topo is None:
        pytest.skip("no /sys/block here")
    names = set(_linux.parse_diskstats(_linux.read("diskstats")))
    assert names <= set(topo), names - set(topo)
    if shutil.which("lsblk") is None:
        pytest.skip("needs lsblk (util-linux)")
    out = subprocess.run(["lsblk", "-rno", "KNAME,PKNAME"], capture_output=True, text=True, check=True).stdout
    pairs = [(line.split() + [""])[:2] for line in out.splitlines() if line.strip()]
    listed = {k for k, _ in pairs} & set(topo)
    has_child = {p for _, p in pairs if p}
    tops = top_devices(topo)
    assert {n for n in listed if tops[n] == (n,)} == listed - has_child


def test_store_reads_format_1_and_refuses_a_newer_one(tmp_path):
    """Files saved before the disk table had counted_in/layer (format 1, tests/data/bundle_ma2) read
    with them null; a format this statgrid does not know is named, not misread."""
    import pyarrow.parquet as pq

    from statgrid.errors import StatgridError
    from statgrid.monitor import store

    old = load(Path(__file__).parent.parent / "data" / "bundle_ma2" / "grid" / "monitor", "disk")
    assert old.num_rows == 19 and set(old.column("counted_in").to_pylist()) == {None}
    md = STACKS["md RAID1 over two disks"]
    cap = capture_stack(tmp_path, md, fake_sys(tmp_path / "sys", md["sysfs"]), seconds=1)
    (f,) = (cap / "n1").glob("disk-*.parquet")
    assert pq.read_schema(f).metadata[store.FORMAT_KEY] == str(store.FORMAT_VERSION).encode()
    pq.write_table(pq.read_table(f).replace_schema_metadata({store.FORMAT_KEY: b"4"}), f)
    with pytest.raises(StatgridError, match=r"disk-.*parquet' is monitor format '4'; this statgrid reads formats 1 to 3"):
        load(cap, "disk")
