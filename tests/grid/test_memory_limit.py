"""A job's memory reservation: read from its job file at submit, enforced on its node (issue 24, item 6).

End to end through the real CLI on a real grid: a job file with statgrid.session(memsize="256M")
reserves 256M plus the margin (not grid.toml's default), and one that allocates 1 GiB beyond that
ends EXIT with a reason naming its reservation while another job on the same host runs on; no
process and no cgroup is left. Both ways of enforcing run where this machine has them: the cgroup
v2 memory controller (memory.max), and the launcher's RSS watch, forced with
$STATGRID_MEMORY_LIMIT=watch. Below those, the pieces on their own: the static reading of
memsize, the precedence of --mem, -o and the file, and memlimit's parsers over fake /proc and
cgroup files.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import psutil
import pytest

from statgrid.config import load_config
from statgrid.errors import UsageError
from statgrid.grid.execution import memlimit
from statgrid.job import protocol
from statgrid.grid.master.jobspec import JobRequest, validate
from statgrid.grid.master.core import attempt_file
from statgrid.job.kinds import declared_memsizes
from tests.conftest import scratch_dirs, wait_for
from tests.support.gridtest import Grid, running
from tests.support.multiuser import site_install  # noqa: F401 — a fixture, used by name
from tests.support.gridtoml import SHARED_SECTIONS, toml_text

MIB = 2**20
MEMSIZE_BYTES = 256 * MIB
MARGIN = 0.1                                           # grid.toml below leaves [scheduling] memory_margin alone
ENGINE_BYTES = 128 * MIB                               # what a session holds besides memsize (README, "Memory")
RESERVED_BYTES = int(MEMSIZE_BYTES * (1 + MARGIN)) + ENGINE_BYTES     # 429,496,729 bytes
RESERVED_TEXT = f"{RESERVED_BYTES / MIB:,.0f} MiB"     # "410 MiB"

GRID_TOML = toml_text({"node1": {"slots": 3, "memory": "2G"}})

# Holds 1 GiB (zero-filled, so resident) for two minutes, then ends 0: without enforcement it ends DONE.
HOG_PY = """\
import time
import statgrid

with statgrid.session(memsize="256M") as s:
    hog = bytearray(1 << 30)
    time.sleep(120)
"""
# Runs beside the hog on the same host until the test lets it go (the file `release`), then ends 0.
CALM_PY = """\
import os
import time
import statgrid

with statgrid.session(memsize="256M") as s:
    s.sql("CREATE TABLE work.t AS SELECT range AS x FROM range(1000)")
    deadline = time.monotonic() + 600
    while not os.path.exists("release") and time.monotonic() < deadline:
        time.sleep(0.1)
"""

# Uses all of its memsize: a sort past it, which spills. Measured here: 194 MiB of anonymous memory
# at memsize=128M (memsize + 10 % alone, 141 MiB, would kill it); its reservation is 269 MiB.
SORT_PY = """\
import statgrid

with statgrid.session(memsize="128M") as s:
    s.sql("CREATE TABLE work.big AS SELECT (random() * 1e9)::BIGINT AS k, md5(range::VARCHAR) AS label "
          "FROM range(3000000)")
    s.sort("work.big", by="label k", out="work.sorted")
"""


def v2_memory_controller_here() -> bool:
    """Would the grid's launchers get the memory controller? They make their cgroups below the one
    this test runs in (the grid's processes inherit it), so: does this cgroup v2's
    cgroup.subtree_control list memory? (Read apart from the code under test.)"""
    with open("/proc/self/cgroup") as f:
        path = next((line.strip()[3:] for line in f if line.startswith("0::")), None)
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split()[4] for line in f if " - cgroup2 " in line and line.split()[3] == "/"]
    for mount in mounts if path else []:
        try:
            with open(os.path.join(mount, path.lstrip("/"), "cgroup.subtree_control")) as f:
                return "memory" in f.read().split()
        except OSError:
            continue
    return False


MODES = [pytest.param("watch", id="rss-watch"),
         pytest.param("auto", id="cgroup-v2", marks=pytest.mark.skipif(
             not v2_memory_controller_here(),
             reason="no cgroup v2 memory controller on this machine (cgroup v1 or hybrid): 'auto' watches RSS "
                    "here, as the rss-watch case does"))]


@pytest.mark.parametrize("mode", MODES)
def test_a_job_over_its_reservation_ends_exit_naming_it_and_its_neighbour_runs_on(tmp_path, mode):
    grid = Grid(tmp_path, GRID_TOML)
    grid.env["STATGRID_MEMORY_LIMIT"] = mode               # the nodes' launchers read it
    (tmp_path / "hog.py").write_text(HOG_PY)
    (tmp_path / "calm.py").write_text(CALM_PY)
    (tmp_path / "sort.py").write_text(SORT_PY)
    with running(grid):
        ids = {}
        for name in ("calm", "hog", "sort"):
            out = grid.cli("submit", "-m", "node1", f"{name}.py")
            assert out.returncode == 0, out.stderr
            ids[name] = int(out.stdout.strip())
        listed = grid.cli("jobs", "--all", "--json")
        assert listed.returncode == 0, listed.stderr
        reserved = {j["id"]: j["mem_bytes"] for j in json.loads(listed.stdout)}
        # Both reserve their file's memsize plus the margin and the engine, not grid.toml's 2G's.
        assert reserved == {ids["calm"]: RESERVED_BYTES, ids["hog"]: RESERVED_BYTES,
                            ids["sort"]: int(128 * MIB * (1 + MARGIN)) + ENGINE_BYTES}

        calm = grid.wait_started(ids["calm"])
        hog = grid.wait([ids["hog"]], timeout_s=240)[0]
        assert hog["state"] == "EXIT", hog
        assert hog["exit_reason"].startswith(f"exceeded its memory reservation {RESERVED_TEXT}"), hog["exit_reason"]
        how = "(memory.max)" if mode == "auto" else "its processes' memory reached"
        assert how in hog["exit_reason"], hog["exit_reason"]

        # The neighbour on the same host was left alone: still running, and it ends DONE.
        assert grid.client.job(ids["calm"])["state"] == "RUN"
        assert calm["host"] == hog["host"] == "node1"
        (tmp_path / "release").touch()
        assert grid.wait([ids["calm"]], timeout_s=240)[0]["state"] == "DONE"
        # A session that uses all of its memsize stays within its reservation.
        sort = grid.wait([ids["sort"]], timeout_s=300)[0]
        assert (sort["state"], sort["exit_reason"]) == ("DONE", None), sort
        # The killed session could not remove its WORK and UTIL: its node did.
        wait_for(lambda: not scratch_dirs(grid.home), "no WORK or UTIL left")

        # Nothing of the hog is left: no process, no cgroup.
        assert not psutil.pid_exists(hog["pid"]) or psutil.Process(hog["pid"]).status() == psutil.STATUS_ZOMBIE
        started = json.loads(attempt_file(grid.cfg, ids["hog"], 1).read_text())
        if started["cgroup"]:
            wait_for(lambda: not os.path.exists(started["cgroup"]), f"the hog's cgroup {started['cgroup']} removed")


# -- the reservation at submit ---------------------------------------------------------------------

def test_the_job_files_memsize_is_read_without_running_it(tmp_path):
    job = tmp_path / "job.py"
    job.write_text('import statgrid\n'
                   'from statgrid.session import Session\n'
                   'size = "8G"\n'
                   'with statgrid.session(memsize="256M", threads=2) as s:\n'
                   '    s.set_options({"memsize": 512 * 1024 * 1024})\n'          # not a literal: not seen
                   '    s.set_options({"MEMSIZE": "768M"})\n'
                   'other = Session(options={"memsize": "1G"})\n'
                   'statgrid.session(memsize=size)\n'                             # a variable: not seen
                   'print(dict(memsize="9G"))\n')                                  # not a session call
    assert declared_memsizes(job) == [(4, "256M"), (6, "768M"), (7, "1G")]
    (tmp_path / "broken.py").write_text("statgrid.session(memsize='1G'\n")
    assert declared_memsizes(tmp_path / "broken.py") == []            # fails when it runs, not here
    (tmp_path / "job.sql").write_text("SELECT 1;\n")
    assert declared_memsizes(tmp_path / "job.sql") == []


@pytest.fixture
def cfg(tmp_path, grid_toml):
    toml = grid_toml({"node1": 2}, port=None, monitor=True, session={"memsize": "2G"})
    return load_config(toml, {"STATGRID_HOME": str(tmp_path / "home")})


def _reserved(cfg, tmp_path, body: str, options=None, mem_bytes=0, check_files=True) -> int:
    (tmp_path / "job.py").write_text(body)
    req = JobRequest(["job.py"], str(tmp_path), options=dict(options or {}), mem_bytes=mem_bytes)
    return validate(req, cfg, time.time(), check_files=check_files).mem_bytes


def test_precedence_mem_then_option_then_job_file_then_grid_toml(cfg, tmp_path):
    body = 'import statgrid\nwith statgrid.session(memsize="256M"): pass\n'
    engine = ENGINE_BYTES
    assert _reserved(cfg, tmp_path, "import statgrid\n") == int(2 * 2**30 * 1.1) + engine           # grid.toml
    assert _reserved(cfg, tmp_path, body) == int(256 * MIB * 1.1) + engine                         # the job file
    assert _reserved(cfg, tmp_path, body, options={"memsize": "1G"}) == int(2**30 * 1.1) + engine  # -o wins
    assert _reserved(cfg, tmp_path, body, options={"memsize": "1G"}, mem_bytes=100 * MIB) == 100 * MIB   # --mem
    # The master does not read the user's file (check_files=False): the CLI sends what it read.
    assert _reserved(cfg, tmp_path, body, check_files=False) == int(2 * 2**30 * 1.1) + engine


def test_a_bad_memsize_in_the_job_file_is_refused_naming_the_line(cfg, tmp_path):
    with pytest.raises(UsageError, match=r"job\.py' line 2: .*memsize"):
        _reserved(cfg, tmp_path, 'import statgrid\nstatgrid.session(memsize="12Q")\n')
    (tmp_path / "job.py").write_text('import statgrid\nstatgrid.session(memsize="12Q")\n')
    grid_toml = tmp_path / "grid.toml"
    from tests.conftest import run_cli
    out = run_cli("submit", "job.py", cwd=tmp_path, env={"STATGRID_CONFIG": str(grid_toml),
                                                         "STATGRID_HOME": str(tmp_path / "home")})
    assert out.returncode == 2, out.stderr
    assert "job.py' line 2" in out.stderr and "12Q" in out.stderr


# -- the protocol ------------------------------------------------------------------------------------

def test_an_attempt_file_of_version_3_is_read_with_no_limit_reason():
    rusage = protocol.Rusage(1.0, 0.5, 2**20, 0, 10, 1, 1, 0, 0)
    io = protocol.IoCounters(1, 2, 3, 4)
    finished = protocol.AttemptFinished(
        key=protocol.task_key(7, 1), job_id=7, attempt=1, host="node1", identity=None, pid=10, pgid=10, cgroup=None,
        start_ts=1.0, end_ts=2.0, exit_code=0, signal=None, rusage=rusage, io=io, stimer=None, launch_error=None,
        attempt_file_error=None)
    old = {k: v for k, v in finished.to_dict().items() if k != "limit_reason"} | {"version": 3}
    assert protocol.attempt_from_dict(old) == finished


# -- memlimit over fake /proc and cgroup files --------------------------------------------------------

def test_parse_stat_counts_fields_after_the_last_parenthesis():
    line = "42 (a) b) c) S 7 42 42 0 -1 4194560 " + " ".join(["0"] * 14) + " 1234 0 0\n"
    assert memlimit.parse_stat(line) == (7, 42)


def test_parse_status_counts_anonymous_and_shared_memory_not_mapped_files():
    text = "Name:\tpython3\nVmRSS:\t  426000 kB\nRssAnon:\t  338000 kB\nRssFile:\t   86000 kB\n" \
           "RssShmem:\t    2000 kB\nThreads:\t4\n"
    assert memlimit.parse_status_bytes(text) == (338000 + 2000) * 1024
    assert memlimit.parse_status_bytes("Name:\tzombie\nState:\tZ (zombie)\n") == 0


def test_tree_pids_are_the_process_group_and_every_descendant():
    table = {100: (1, 100),      # the job's first process
             101: (100, 100),    # its child, same group
             102: (100, 102),    # a child that called setsid
             103: (102, 102),    # ... and its child
             104: (1, 100),      # re-parented to init, still in the job's group
             200: (1, 200)}      # someone else's
    assert memlimit.tree_pids(100, table) == {100, 101, 102, 103, 104}


def test_memory_of_real_processes_matches_their_smaps_rollup(tmp_path):
    """Cross-check against the kernel's own figure: a child holding 64 MiB (zero-filled, so
    resident) counts at least that, and its smaps_rollup gives the rest."""
    import subprocess
    import sys
    child = subprocess.Popen([sys.executable, "-c", "import sys; b = bytearray(64 << 20); print(1, flush=True); "
                              "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"1\n"
        table = memlimit.process_table()
        assert memlimit.tree_pids(child.pid, table) == {child.pid}
        used = memlimit.memory_bytes([child.pid])
        with open(f"/proc/{child.pid}/smaps_rollup") as f:
            fields = dict(line.split(":", 1) for line in f.read().splitlines()[1:])
        if "Pss_Anon" not in fields:
            pytest.skip("this kernel's smaps_rollup has no Pss_Anon: the watch reads status (tested above)")
        # Read twice around the count: the child's memory is still, but the count and this read are apart.
        assert used == pytest.approx(sum(int(fields[k].split()[0]) * 1024 for k in ("Pss_Anon", "Pss_Shmem")),
                                     abs=MIB)
        assert used >= 64 * MIB
    finally:
        child.stdin.close()
        child.wait(30)


def test_cgroup_files(tmp_path):
    cg = tmp_path / "job-1"
    cg.mkdir()
    for name in ("memory.max", "memory.swap.max", "memory.oom.group"):
        (cg / name).write_text("")          # the kernel's files take a write of the value alone
    assert memlimit.limit_cgroup(str(cg), RESERVED_BYTES)
    assert [(cg / n).read_text() for n in ("memory.max", "memory.swap.max", "memory.oom.group")] == \
        [str(RESERVED_BYTES), "0", "1"]
    assert not memlimit.limit_cgroup(str(tmp_path / "gone"), RESERVED_BYTES)
    (cg / "memory.events").write_text("low 0\nhigh 0\nmax 31\noom 2\noom_kill 1\noom_group_kill 1\n")
    assert memlimit.oom_kill_reason(str(cg), RESERVED_BYTES).startswith(
        f"exceeded its memory reservation {RESERVED_TEXT} (memory.max)")
    assert memlimit.oom_kill_reason(str(tmp_path / "gone"), RESERVED_BYTES) is None
    top = tmp_path / "statgrid-launcher-1"
    top.mkdir()
    (top / "cgroup.controllers").write_text("cpu io pids\n")
    (top / "cgroup.subtree_control").write_text("")
    assert "memory controller is not enabled for the children of" in memlimit.enable_memory_controller(str(top))
    (top / "cgroup.controllers").write_text("cpu io memory pids\n")
    assert memlimit.enable_memory_controller(str(top)) == ""
    assert (top / "cgroup.subtree_control").read_text() == "+memory"


def test_an_oom_kill_the_job_did_not_cause_is_not_blamed_on_its_reservation(tmp_path):
    """memory.events' oom_kill also counts kills by the machine-wide OOM killer (the host short of
    memory); only `oom` > 0 (the cgroup hit memory.max and the OOM killer ran for it) says its
    reservation did it (Documentation/admin-guide/cgroup-v2.rst, memory.events)."""
    cg = tmp_path / "job-1"
    cg.mkdir()
    cases = [("low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\noom_group_kill 0\n", "system"),   # the host's OOM killer
             ("low 0\nhigh 0\nmax 12\noom 1\noom_kill 3\noom_group_kill 1\n", "limit"),   # its own memory.max
             ("low 0\nhigh 0\nmax 40\noom 0\noom_kill 0\noom_group_kill 0\n", ""),         # reclaimed, not killed
             ("", ""), ("oom_kill x\noom 1\n", "")]
    for text, verdict in cases:
        assert memlimit.oom_verdict(memlimit.parse_memory_events(text)) == verdict, text
        (cg / "memory.events").write_text(text)
        reason = memlimit.oom_kill_reason(str(cg), RESERVED_BYTES)
        if verdict == "system":
            assert reason.startswith(f"killed by the system's OOM killer while within its memory reservation "
                                     f"{RESERVED_TEXT}: its host ran short of memory"), reason
            assert "exceeded" not in reason
        elif verdict == "limit":
            assert reason.startswith(f"exceeded its memory reservation {RESERVED_TEXT} (memory.max)"), reason
        else:
            assert reason is None


SMAPS_ROLLUP = """55d0c0a3e000-7ffc5a1f1000 ---p 00000000 00:00 0                          [rollup]
Rss:              316900 kB
Pss:               80100 kB
Pss_Dirty:         76800 kB
Pss_Anon:          76500 kB
Pss_File:           3300 kB
Pss_Shmem:           300 kB
Shared_Clean:       4000 kB
Anonymous:        307200 kB
Swap:                  0 kB
"""


def test_parse_smaps_rollup_counts_the_share_of_anonymous_and_shared_memory():
    assert memlimit.parse_smaps_rollup_bytes(SMAPS_ROLLUP) == (76500 + 300) * 1024
    assert memlimit.parse_smaps_rollup_bytes("") is None                               # a zombie
    old_kernel = "\n".join(line for line in SMAPS_ROLLUP.splitlines() if not line.startswith("Pss_"))
    assert memlimit.parse_smaps_rollup_bytes(old_kernel) is None                       # status is read instead


def test_memory_falls_back_to_status_where_smaps_rollup_lacks_pss_anon(tmp_path):
    proc = tmp_path / "proc"
    for pid, rollup in ((10, SMAPS_ROLLUP), (11, "7f-7f ---p 0 00:00 0 [rollup]\nRss: 5000 kB\nPss: 4000 kB\n"),
                        (12, None)):
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "status").write_text("Name:\tx\nRssAnon:\t  1000 kB\nRssShmem:\t  24 kB\n")
        if rollup is not None:
            (proc / str(pid) / "smaps_rollup").write_text(rollup)
    assert memlimit.memory_bytes([10, 11, 12, 99], procfs=str(proc)) == ((76500 + 300) + 2 * (1000 + 24)) * 1024


FORKER_PY = """
import os, sys, time
held = bytearray(b"\\x01") * (200 << 20)     # 200 MiB, every page written
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        sys.stdin.read()                     # the children share held's pages (copy-on-write), never write them
        os._exit(0)
    children.append(pid)
print(" ".join(map(str, children)), flush=True)
sys.stdin.read()
for pid in children:
    os.waitpid(pid, 0)
"""


def test_pages_shared_after_fork_count_once(tmp_path):
    """A process holding 200 MiB forks 3 children that never write it: the job holds ~200 MiB (what
    memory.max would charge it), not 4 × 200 MiB (each process's RssAnon summed)."""
    import subprocess
    import sys
    parent = subprocess.Popen([sys.executable, "-c", FORKER_PY], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        children = [int(p) for p in parent.stdout.readline().split()]
        assert len(children) == 3
        pids = memlimit.tree_pids(parent.pid, memlimit.process_table())
        assert pids == {parent.pid, *children}
        with open(f"/proc/{parent.pid}/smaps_rollup") as f:
            if "Pss_Anon" not in f.read():
                pytest.skip("this kernel's smaps_rollup has no Pss_Anon: the watch sums status (each process whole)")
        used = memlimit.memory_bytes(pids)
        # 200 MiB once, plus each interpreter's own few MiB; each process's RssAnon summed was ~800 MiB.
        assert 200 * MIB <= used <= 260 * MIB, f"{used / MIB:.0f} MiB"
    finally:
        parent.stdin.close()
        parent.wait(60)


def test_mode_from_env():
    assert memlimit.mode_from_env({}) == ("auto", "")
    assert memlimit.mode_from_env({"STATGRID_MEMORY_LIMIT": "Watch"}) == ("watch", "")
    mode, warning = memlimit.mode_from_env({"STATGRID_MEMORY_LIMIT": "kernel"})
    assert mode == "auto" and "'kernel'" in warning and "auto, watch or off" in warning


# -- the launcher's watch, without a cgroup ------------------------------------------------------------

def test_the_watch_sums_the_process_tree_and_ends_it_all_without_a_cgroup(tmp_path):
    """A launcher with --no-cgroup (jobs tracked by process group): a job whose two processes hold
    200 MiB each — one of them in a session of its own (setsid), out of the job's process group —
    is over a 300 MiB limit only in sum; it is killed with the reason, and so is the setsid'd one."""
    import dataclasses
    import socket
    import subprocess
    import sys

    from tests.grid.test_grid_launcher import SCRIPT, request

    path = str(tmp_path / "l.sock")
    proc = subprocess.Popen([sys.executable, "-I", "-S", str(SCRIPT), path, "--no-cgroup"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env={**os.environ, "STATGRID_MEMORY_LIMIT": "auto"})
    try:
        assert proc.stdout.readline() == b"ready\n"
        hold = f"{sys.executable} -c 'import time; b = bytearray(200 << 20); time.sleep(120)'"
        script = f"setsid {hold} > setsid.out & echo $! > setsid.pid; {hold} > own.out; wait"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        req = dataclasses.replace(request(["sh", "-c", script], tmp_path, tmp_path / "out.txt"),
                                  mem_limit_bytes=300 * MIB)
        sock.sendall((json.dumps(req.to_dict()) + "\n").encode())
        reader = sock.makefile("rb")
        protocol.LaunchStarted.from_dict(json.loads(reader.readline()))
        line = reader.readline()                 # the end: it holds 400 MiB for two minutes unless killed
        ended = protocol.LaunchExited.from_dict(json.loads(line))
        assert ended.signal == 9 and ended.limit_reason is not None, ended
        assert ended.limit_reason.startswith("exceeded its memory reservation 300 MiB: its processes' memory "
                                             "reached "), ended.limit_reason
        used_mib = int(ended.limit_reason.split("reached ")[1].split(" MiB")[0].replace(",", ""))
        # Over 300 only with both 200 MiB holders counted (each alone is ~210 MiB with Python).
        assert 300 < used_mib < 600, ended.limit_reason
        setsid_pid = int((tmp_path / "setsid.pid").read_text())
        wait_for(lambda: not psutil.pid_exists(setsid_pid) or
                 psutil.Process(setsid_pid).status() == psutil.STATUS_ZOMBIE, "the setsid'd holder ended")
        sock.close()
    finally:
        proc.stdin.close()
        proc.wait(30)


# -- real users on a shared grid ------------------------------------------------------------------------

SHARED_TOML = toml_text({"node1": {"slots": 2, "memory": "1G"}}, **SHARED_SECTIONS)


@pytest.mark.root
def test_alices_file_is_read_as_alice_and_only_her_job_is_killed(site_install):
    """On a grid run by root: alice's job file (mode 0600, hers alone) sets memsize="256M"; her
    `statgrid submit` reads it as her and reserves 410 MiB; her job, running as her, holds 1 GiB
    and is killed with the reason; bob's job on the same host runs on to DONE."""
    from tests.support.multiuser import write_as
    from tests.grid.test_multiuser_grid import made_people, shared_grid

    with made_people() as people, shared_grid(site_install, people, SHARED_TOML) as grid:
        alice, bob = people["alice"], people["bob"]
        write_as(alice, alice.home / "hog.py", HOG_PY, mode=0o600)
        write_as(bob, bob.home / "calm.py", CALM_PY, mode=0o600)
        calm_id = grid.submit("bob", "-m", "node1", "calm.py")
        hog_id = grid.submit("alice", "-m", "node1", "hog.py")
        assert grid.job("alice", hog_id)["mem_bytes"] == RESERVED_BYTES
        assert grid.wait_started("bob", calm_id)["user"] == bob.name
        hog = grid.wait("alice", hog_id)
        assert (hog["state"], hog["user"]) == ("EXIT", alice.name), hog
        assert hog["exit_reason"].startswith(f"exceeded its memory reservation {RESERVED_TEXT}"), hog["exit_reason"]
        assert grid.job("bob", calm_id)["state"] == "RUN"
        (bob.home / "release").touch()
        assert grid.wait("bob", calm_id)["state"] == "DONE"
