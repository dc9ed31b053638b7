"""A job's usage over time (statgrid.grid.execution.usage, node.py's sampler): the parsers over fake kernel
files (exact values), reading a series back and turning it into rates, sampling real processes
(and a real cgroup v2 where this process may make one), the node's sampler, and one job on a
real grid whose usage file the node wrote.

Nothing here asserts how long anything took: processes burn CPU until a sample shows it, and
assertions are about counters that grew, not by how much per second.
"""
from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

from statgrid.grid.execution import cgroups, node, usage
from statgrid.job.jobdir import usage_path
from tests.conftest import wait_for
from tests.support.gridtest import Grid, running
from tests.support.gridtoml import toml_text

MiB = 1 << 20




# -- parsers ------------------------------------------------------------------------------------------

PROC_STAT = ("4242 (my (odd) job) S 1 4242 4242 0 -1 4194560 1200 0 0 0 "
             "150 30 7 3 20 0 1 0 123456 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0")
PROC_STATUS = "Name:\tpython\nState:\tR (running)\nVmPeak:\t  300000 kB\nVmHWM:\t  120000 kB\nVmRSS:\t   51234 kB\n"
PROC_IO = ("rchar: 9000\nwchar: 8000\nsyscr: 10\nsyscw: 20\nread_bytes: 4096\nwrite_bytes: 12288\n"
           "cancelled_write_bytes: 4096\n")
CPU_STAT = "usage_usec 2500001\nuser_usec 2000000\nsystem_usec 500001\nnr_periods 0\n"
MEMORY_STAT = "anon 52428800\nfile 1048576\nkernel 65536\nanon_thp 0\n"
IO_STAT = ("8:16 rbytes=1000 wbytes=2000 rios=1 wios=2 dbytes=0 dios=0\n"
           "259:0 rbytes=24 wbytes=48 rios=3 wios=4 dbytes=0 dios=0\n")


def test_proc_parsers():
    assert usage.parse_proc_stat_cpu_ticks(PROC_STAT) == 150 + 30 + 7 + 3
    assert usage.parse_status_rss_bytes(PROC_STATUS) == 51234 * 1024
    assert usage.parse_status_rss_bytes("Name:\tzombie\nState:\tZ (zombie)\n") is None
    assert usage.parse_proc_io(PROC_IO) == (4096, 12288 - 4096)
    assert usage.parse_proc_io("rchar: 1\n") == (None, None)


def test_cgroup_parsers():
    assert usage.parse_cpu_stat_usec(CPU_STAT) == 2500001
    assert usage.parse_memory_stat_anon_bytes(MEMORY_STAT) == 52428800
    assert usage.parse_memory_stat_anon_bytes("file 1\n") is None
    assert usage.parse_memory_current_bytes("73400320\n") == 73400320
    assert usage.parse_io_stat(IO_STAT) == (1024, 2048)
    assert usage.parse_io_stat("") == (0, 0)                     # the io controller, nothing done yet


def _fake_proc(root: Path, pid: int, io: bool = True) -> str:
    d = root / "proc" / str(pid)
    d.mkdir(parents=True)
    (d / "stat").write_text(PROC_STAT)
    (d / "status").write_text(PROC_STATUS)
    if io:
        (d / "io").write_text(PROC_IO)
    return str(root / "proc")


def test_sample_from_fake_files(tmp_path):
    ticks = os.sysconf("SC_CLK_TCK")
    procfs = _fake_proc(tmp_path, 4242, io=False)                 # io refused: null
    s = usage.sample(4242, None, procfs=procfs)
    assert s["cpu_s"] == round(190 / ticks, 6) and s["rss_bytes"] == 51234 * 1024
    assert s["read_bytes"] is None and s["write_bytes"] is None
    assert abs(s["ts"] - time.time()) < 3600

    full = tmp_path / "cg-full"
    full.mkdir()
    (full / "cpu.stat").write_text(CPU_STAT)
    (full / "memory.stat").write_text(MEMORY_STAT)
    (full / "io.stat").write_text(IO_STAT)
    s = usage.sample(4242, str(full), procfs=procfs)
    assert {k: s[k] for k in usage.FIELDS} == {"cpu_s": 2.500001, "rss_bytes": 52428800, "read_bytes": 1024,
                                               "write_bytes": 2048}
    # A cgroup without the memory and io controllers (a hybrid v1/v2 host): those from /proc.
    bare = tmp_path / "cg-bare"
    bare.mkdir()
    (bare / "cpu.stat").write_text(CPU_STAT)
    (bare / "memory.current").write_text("73400320\n")
    s = usage.sample(4242, str(bare), procfs=procfs)
    assert {k: s[k] for k in usage.FIELDS} == {"cpu_s": 2.500001, "rss_bytes": 73400320, "read_bytes": None,
                                               "write_bytes": None}
    (bare / "memory.current").unlink()
    assert usage.sample(4242, str(bare), procfs=procfs)["rss_bytes"] == 51234 * 1024
    # The first process gone, the cgroup still there: the cgroup's numbers stand.
    assert usage.sample(999, str(full), procfs=procfs)["cpu_s"] == 2.500001


def test_sample_of_a_gone_job_raises(tmp_path):
    procfs = _fake_proc(tmp_path, 4242)
    with pytest.raises(ProcessLookupError):
        usage.sample(999, None, procfs=procfs)
    with pytest.raises(ProcessLookupError):
        usage.sample(4242, str(tmp_path / "removed-cgroup"), procfs=procfs)


# -- the file, read back --------------------------------------------------------------------------------

def test_usage_path_and_append(tmp_path):
    path = usage_path(tmp_path, 17, 2)
    assert path == tmp_path / "17.2.usage.jsonl"
    old = os.umask(0)                                              # whatever the umask: 0600
    try:
        usage.append(path, usage.record(1.23456, 0.5, 10, None, 3))
        usage.append(path, usage.record(2.0, 1.0, 20, 1, 4))
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"ts": 1.235, "cpu_s": 0.5, "rss_bytes": 10, "read_bytes": None, "write_bytes": 3},
        {"ts": 2.0, "cpu_s": 1.0, "rss_bytes": 20, "read_bytes": 1, "write_bytes": 4}]
    link = tmp_path / "link.usage.jsonl"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        usage.append(link, usage.record(3.0, 1.0, 20, 1, 4))
    assert not (tmp_path / "elsewhere").exists()


def _line(ts: float, cpu_s: float = 1.0) -> str:
    return json.dumps(usage.record(ts, cpu_s, 100, 0, 0), separators=(",", ":")) + "\n"


def test_read_series_skips_junk_and_a_half_line(tmp_path):
    path = tmp_path / "1.1.usage.jsonl"
    path.write_text(_line(1) + "not json\n" + "[1, 2]\n" + '{"ts": "x"}\n' + "\n" + _line(2)
                    + '{"ts": 3, "cpu_s": "lots", "rss_bytes": true}\n' + '{"ts": 4, "cpu_s": 9')
    series = usage.read_series(path)
    assert [s["ts"] for s in series] == [1, 2, 3]
    assert series[2] == {"ts": 3, "cpu_s": None, "rss_bytes": None, "read_bytes": None, "write_bytes": None}
    assert usage.read_series(tmp_path / "none.usage.jsonl") == []
    assert usage.read_series(path, max_points=0) == []


def test_read_series_reads_only_the_tail(tmp_path):
    path = tmp_path / "1.1.usage.jsonl"
    path.write_text("".join(_line(1000 + n, n / 10) for n in range(5000)))
    series = usage.read_series(path, max_points=600)
    assert [s["ts"] for s in series] == [1000 + n for n in range(4400, 5000)]
    assert series[-1]["cpu_s"] == 499.9
    assert [s["ts"] for s in usage.read_series(path, max_points=3)] == [5997, 5998, 5999]
    # Few lines: all of them, the first one whole.
    path.write_text(_line(1) + _line(2))
    assert [s["ts"] for s in usage.read_series(path, max_points=600)] == [1, 2]


def test_rates():
    samples = [
        {"ts": 10.0, "cpu_s": 1.0, "rss_bytes": 100, "read_bytes": 0, "write_bytes": 1000},
        {"ts": 12.0, "cpu_s": 4.0, "rss_bytes": 200, "read_bytes": 4096, "write_bytes": 1000},
        {"ts": 12.0, "cpu_s": 9.0, "rss_bytes": 300, "read_bytes": 0, "write_bytes": 0},        # no later: skipped
        {"ts": 13.0, "cpu_s": 0.5, "rss_bytes": 150, "read_bytes": 5096, "write_bytes": None},  # cpu reset
        {"ts": 14.0, "cpu_s": 1.0, "rss_bytes": None, "read_bytes": 5096, "write_bytes": 10},
    ]
    assert usage.rates(samples) == [
        {"ts": 12.0, "cpu_cores": 1.5, "rss_bytes": 200, "read_bytes_per_s": 2048, "write_bytes_per_s": 0},
        {"ts": 13.0, "cpu_cores": None, "rss_bytes": 150, "read_bytes_per_s": 1000, "write_bytes_per_s": None},
        {"ts": 14.0, "cpu_cores": 0.5, "rss_bytes": None, "read_bytes_per_s": 0, "write_bytes_per_s": None},
    ]
    assert usage.rates(samples[:1]) == [] and usage.rates([]) == []


# -- real processes -----------------------------------------------------------------------------------

BURN = """
import sys, time
memory = bytearray(50 << 20)                 # written: resident
for i in range(0, len(memory), 4096):
    memory[i] = 1
print("ready", flush=True)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    pass
"""


@contextlib.contextmanager
def _process(argv: list[str], **kw):
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, **kw)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_sample_of_a_real_process():
    with _process([sys.executable, "-c", BURN, "60"]) as proc:
        assert proc.stdout.readline() == "ready\n"
        first = usage.sample(proc.pid, None)
        grown = wait_for(lambda: (s := usage.sample(proc.pid, None))["cpu_s"] > first["cpu_s"] + 0.2 and s,
                          "the process's CPU time to grow")
    assert grown["ts"] > first["ts"]
    assert first["rss_bytes"] >= 40 * MiB and grown["rss_bytes"] >= 40 * MiB
    assert grown["read_bytes"] is not None and grown["write_bytes"] is not None      # root, or our own child
    with pytest.raises(ProcessLookupError):
        usage.sample(proc.pid, None)                           # reaped


def _own_cgroup2_dir() -> str | None:
    try:
        return cgroups.cgroup2_dir(Path("/proc/self/cgroup").read_text(), Path("/proc/self/mountinfo").read_text())
    except OSError:
        return None


@pytest.fixture
def cgroup():
    """A cgroup v2 of the test's own under this process's (as the launcher makes a job's), or a skip."""
    base = _own_cgroup2_dir()
    if base is None:
        pytest.skip("no cgroup v2 mount shows this process's cgroup")
    path = os.path.join(base, f"statgrid-test-usage-{os.getpid()}")
    try:
        os.mkdir(path)
    except OSError as exc:
        pytest.skip(f"cannot create a cgroup under {base} ({exc.strerror})")
    try:
        yield path
    finally:
        cgroups.kill_cgroup(path)
        wait_for(lambda: cgroups.remove_cgroup(path), f"cgroup {path} to be removed")


# The job's first process joins the cgroup, starts a child that burns CPU and holds memory, and
# sleeps: its own /proc counters hardly move (the child is not reaped), the cgroup's do.
CGROUP_JOB = """
import subprocess, sys, time
with open(sys.argv[1] + "/cgroup.procs", "w") as f:
    f.write("0")
child = subprocess.Popen([sys.executable, "-c", sys.argv[2], "600"], stdout=subprocess.PIPE, text=True)
assert child.stdout.readline() == "ready\\n"
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.root
def test_sample_reads_the_jobs_cgroup(cgroup):
    assert usage.parse_cpu_stat_usec(Path(cgroup, "cpu.stat").read_text()) is not None   # the real file parses
    with _process([sys.executable, "-c", CGROUP_JOB, cgroup, BURN]) as proc:
        assert proc.stdout.readline() == "ready\n"
        assert len(Path(cgroup, "cgroup.procs").read_text().split()) == 2
        first_cg, first_proc = usage.sample(proc.pid, cgroup), usage.sample(proc.pid, None)
        grown_cg = wait_for(lambda: (s := usage.sample(proc.pid, cgroup))["cpu_s"] > first_cg["cpu_s"] + 0.5 and s,
                             "the cgroup's CPU time to grow")
        grown_proc = usage.sample(proc.pid, None)
        if Path(cgroup, "memory.stat").exists():
            assert grown_cg["rss_bytes"] >= 40 * MiB           # the child's memory is the cgroup's
    # The child's CPU counts for the cgroup; for the first process only once the child is reaped.
    assert grown_proc["cpu_s"] - first_proc["cpu_s"] < (grown_cg["cpu_s"] - first_cg["cpu_s"]) / 2
    cgroups.kill_cgroup(cgroup)                               # the child, left when its parent was killed
    wait_for(lambda: not cgroups.cgroup_populated(cgroup), "the cgroup to empty")
    assert usage.sample(proc.pid, cgroup)["cpu_s"] >= grown_cg["cpu_s"]    # the cgroup keeps its total
    os.rmdir(cgroup)
    with pytest.raises(ProcessLookupError):
        usage.sample(proc.pid, cgroup)


@pytest.mark.root
def test_cgroup_memory_and_io_files(cgroup):
    if not Path(cgroup, "memory.stat").exists() or not Path(cgroup, "io.stat").exists():
        pytest.skip("the memory and io controllers are not enabled for this cgroup v2 (a hybrid v1/v2 host?): "
                    "its memory and io come from /proc, as test_sample_from_fake_files checks")
    assert usage.parse_memory_stat_anon_bytes(Path(cgroup, "memory.stat").read_text()) is not None
    assert usage.parse_io_stat(Path(cgroup, "io.stat").read_text()) is not None


# -- the node's sampler ---------------------------------------------------------------------------------

def test_node_sampler_appends_until_the_last_sample(tmp_path):
    key = "statgrid-job-1-1"
    path = usage_path(tmp_path, 1, 1)
    with _process([sys.executable, "-c", BURN, "600"]) as proc:
        assert proc.stdout.readline() == "ready\n"
        node._running[key] = types.SimpleNamespace(job_id=1, pid=proc.pid, cgroup=None)
        node._usage_paths[key] = path
        try:
            node.sample_running()
            node.sample_running()
            node._end_usage(key, usage.record(time.time(), 99.0, None, 1, 2))
            node.sample_running()                                  # no longer kept: nothing appended
        finally:
            node._running.pop(key, None)
            node._usage_paths.pop(key, None)
    series = usage.read_series(path)
    assert len(series) == 3 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert all(s["rss_bytes"] >= 40 * MiB for s in series[:2])
    assert series[2]["cpu_s"] == 99.0 and series[2]["rss_bytes"] is None


def test_node_sampler_skips_a_gone_job(tmp_path):
    key = "statgrid-job-2-1"
    proc = subprocess.Popen(["true"])
    proc.wait()
    node._running[key] = types.SimpleNamespace(job_id=2, pid=proc.pid, cgroup=None)
    node._usage_paths[key] = usage_path(tmp_path, 2, 1)
    try:
        node.sample_running()
    finally:
        node._running.pop(key, None)
        node._usage_paths.pop(key, None)
    assert not usage_path(tmp_path, 2, 1).exists()


# -- on a real grid ----------------------------------------------------------------------------------

GRID_TOML = toml_text({"node1": 1}, monitor=True)

# Burns CPU for 2.5 s, and on until the node has sampled it twice (read from its usage file, so
# that a slow machine only makes it run longer).
GRID_JOB = textwrap.dedent("""
    import os, time
    path = os.path.join(os.environ["STATGRID_HOME"], "grid", "attempts",
                        f"{os.environ['STATGRID_JOB_ID']}.{os.environ['STATGRID_JOB_ATTEMPT']}.usage.jsonl")
    def lines():
        try:
            with open(path, "rb") as f:
                return f.read().count(b"\\n")
        except OSError:
            return 0
    start = time.monotonic()
    while time.monotonic() - start < 2.5 or (lines() < 2 and time.monotonic() - start < 120):
        sum(range(100000))
""")


def test_a_grid_job_has_a_usage_series(tmp_path_factory):
    with running(Grid(tmp_path_factory.mktemp("grid"), GRID_TOML)) as grid:
        job_id = grid.submit(sys.executable, "-c", GRID_JOB)
        [job] = grid.wait([job_id])
    assert job["state"] == "DONE", job
    path = grid.home / "grid" / "attempts" / f"{job_id}.1.usage.jsonl"
    assert path == usage_path(grid.home / "grid" / "attempts", job_id, 1)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    series = usage.read_series(path)
    assert any(s["cpu_s"] > 0 for s in series)
    # Samples while it ran (its memory now), then its totals when it was reaped (no memory).
    during, last = series[:-1], series[-1]
    assert len(during) >= 2 and all(s["rss_bytes"] > 0 for s in during)
    assert last["rss_bytes"] is None and last["cpu_s"] > 0
    assert [s["ts"] for s in series] == sorted(s["ts"] for s in series)
    assert all(p["cpu_cores"] is None or p["cpu_cores"] >= 0 for p in usage.rates(series))
