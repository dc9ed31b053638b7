"""The node monitor: parsers and rates over a fake /proc (exact expected values), the declared
metrics driving storage and CSV, and a cross-check against iostat while a real write runs."""
from __future__ import annotations

import csv
import dataclasses
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from statgrid.monitor import _linux
from statgrid.monitor.metrics import DISK_METRICS, KEYS, METRICS, NODE_METRICS, label
from statgrid.monitor.sampler import Sampler, map_libraries, read_snapshot, rows
from statgrid.monitor.store import MonitorWriter, export_csv, load
from tests.conftest import run_cli

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
    libs = map_libraries({"data": "/data lake/sales", "work": "/scratch/w", "util": "/var/u"}, a)
    assert [(x.library, x.mount_point, x.device) for x in libs] == [
        ("data", "/data lake", "sda"), ("work", "/scratch", None), ("util", "/", "sda1")]
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
    assert disk == {"ts": 1_700_000_000.0, "host": "n1", "device": "sda",
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
    assert load(tmp_path / "mon", "library").column_names == [*KEYS["library"], *(m.name for m in DISK_METRICS)]
    written = export_csv(tmp_path / "mon", tmp_path / "csv")
    assert [p.name for p in written] == ["node.csv", "disk.csv", "library.csv"]
    header = next(csv.reader(open(tmp_path / "csv" / "library.csv")))
    assert header == ["time_utc", *KEYS["library"], *(m.name for m in DISK_METRICS)]


def test_monitor_cli_runs_for_a_duration_and_exports(home, tmp_path):
    r = run_cli("monitor", "--interval", "200ms", "--duration", "1s", "--out", str(tmp_path / "mon"))
    assert r.returncode == 0, r.stderr
    assert len([line for line in r.stdout.splitlines() if "cpu usr" in line]) == 5
    assert "5 samples written" in r.stderr
    e = run_cli("monitor", "export", "--in", str(tmp_path / "mon"), "--csv", str(tmp_path / "csv"))
    assert e.returncode == 0 and (tmp_path / "csv" / "node.csv").is_file()
    bad = run_cli("monitor", "--interval", "soon")
    assert bad.returncode == 2 and "--interval 'soon' is not allowed" in bad.stderr


@pytest.mark.skipif(shutil.which("iostat") is None, reason="needs iostat (Debian package sysstat)")
def test_device_write_rate_agrees_with_iostat(tmp_path):
    libs = map_libraries({"data": tmp_path})
    device = libs[0].device
    if device is None:
        pytest.skip(f"{tmp_path} is not on a block device")
    seconds = 6
    sampler = Sampler("n1", {"data": tmp_path})
    samples: list[dict] = []

    def sample_loop():
        sampler.sample()
        t = time.monotonic()
        for i in range(1, seconds + 1):
            time.sleep(max(0.0, t + i - time.monotonic()))
            samples.append(sampler.sample()["library"][0])

    iostat = subprocess.Popen(["iostat", "-d", "-k", "-y", device, "1", str(seconds)], stdout=subprocess.PIPE,
                              text=True)
    thread = threading.Thread(target=sample_loop)
    thread.start()
    time.sleep(1.2)
    chunk = os.urandom(4 << 20)
    with open(tmp_path / "w.bin", "wb") as f:                              # ~3 s of fsync'd writes
        end = time.monotonic() + 3
        while time.monotonic() < end:
            f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
            time.sleep(0.02)
    thread.join()
    out, _ = iostat.communicate(timeout=30)
    iostat_kb = sum(float(line.split()[6]) for line in out.splitlines() if line.startswith(device + " "))
    ours = sum(s["write_bytes_per_s"] * 1.0 for s in samples)             # 1-s intervals
    print(f"written per iostat {iostat_kb / 1024:.1f} MiB, per statgrid {ours / 2**20:.1f} MiB")
    assert iostat_kb > 20 * 1024                                           # the write really happened
    assert ours == pytest.approx(iostat_kb * 1024, rel=0.15)
