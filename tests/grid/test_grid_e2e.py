"""End to end on a real grid: `statgrid grid up --detach` (embedded Dask engine, 5 hosts of which
one closed), the real CLI and HTTP API, real session processes. The tests share one grid and
stand alone, in any order: a test that breaks a worker or kills the master leaves the grid up again.

Times are printed, never asserted (the machine is shared); what is asserted comes from the job
records: states, hosts, attempts, the order of dispatches, overlaps of run intervals. No test
counts on a job still running after a fixed time: a job that must hold its slot while the test
does something waits for a gate file the test creates (`gated`), however slow the machine.
"""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import psutil
import pytest

from statgrid.grid.master.core import identity_of
from statgrid.job.protocol import AttemptFinished, attempt_from_dict
from tests.conftest import pgid_of, run_cli, wait_for, wait_gone
from tests.support.gridtest import Grid, free_port, running
from tests.support.gridtoml import toml_text

GRID_TOML = toml_text(
    {"node1": 2, "node2": {"slots": 2, "cpus": "{first_cpu}"}, "node3": 2, "node4": 2,
     "node5": {"slots": 1, "open": False}},
    {"normal": {"priority": 30, "hosts": "node1+1 others+2"}, "high": {"priority": 50},
     "night": {"priority": 10, "user_limit": 1}}, monitor=True)


# A CPU this run may use: a machine (or a container's cpuset, or taskset) need not offer CPU 0.
FIRST_CPU = min(os.sched_getaffinity(0))


OPEN_HOSTS = ["node1", "node2", "node3", "node4"]    # node5 is closed


@pytest.fixture(scope="module")
def shared_grid(tmp_path_factory):
    toml = GRID_TOML.replace("{first_cpu}", str(FIRST_CPU))
    with running(Grid(tmp_path_factory.mktemp("grid"), toml)) as g:
        yield g
    # Every node's monitor wrote its samples when its worker went.
    from statgrid.monitor.store import load

    node = load(g.home / "monitor", "node")
    assert set(node.column("host").to_pylist()) == {"node1", "node2", "node3", "node4", "node5"}
    assert load(g.home / "monitor", "library").num_rows > 0


def _master_answers(g: Grid) -> bool:
    try:
        g.client.health()
        return True
    except Exception:                              # refused, or the old master's socket half gone
        return False


@pytest.fixture
def grid(shared_grid):
    """The shared grid as each test needs it, whatever ran before: its master answers, every open
    host is ok with all its slots free, and no job of an earlier test is left waiting or running.
    (The tests that kill the master or a worker bring the grid up again themselves; one that fails
    before it did would otherwise leave every later test a broken grid.)"""
    g = shared_grid
    if not _master_answers(g):
        g.up()
    left = [j["id"] for j in g.client.jobs(user=None)]
    if left:
        g.client.kill(left)

    def ready():
        hosts = {h["host"]: h for h in g.client.hosts()}
        return (all(hosts.get(n, {}).get("state") == "ok" and hosts[n]["running"] == 0 for n in OPEN_HOSTS)
                and not g.client.jobs(user=None))

    wait_for(ready, "the shared grid's open hosts ok and idle, no job left",
             state=lambda: (g.client.hosts(), g.client.jobs(user=None)))
    return g


class Gate:
    """A file a job waits for: `argv` runs until the test opens the gate (or the job is killed)."""

    def __init__(self, directory: Path, name: str):
        self.path = directory / f"gate-{name}"
        self.path.unlink(missing_ok=True)
        self.argv = ["sh", "-c", f"while [ ! -e '{self.path}' ]; do sleep 0.05; done"]

    def open(self) -> None:
        self.path.touch()


def test_bad_input_is_refused_and_nothing_is_stored(grid, tmp_path):
    (grid.root / "ok.py").write_text("pass\n")
    cases = [
        (["submit", "-q", "nope", "ok.py"], "queue 'nope' does not exist"),
        (["submit", "-m", "node9", "ok.py"], "host 'node9' does not exist"),
        (["submit", "-m", "node5", "ok.py"], "host 'node5' is closed"),
        (["submit", "missing.py"], "missing.py' does not exist"),
        (["submit", "-o", "memsize=lots", "ok.py"], "memsize"),
        (["submit", "-o", "memsize", "ok.py"], "is not KEY=VALUE"),
        (["submit", "no-such-command-xyz"], "neither a job file"),
    ]
    def ids():
        return [j["id"] for j in grid.client.jobs(all_states=True, user=None)]
    before = ids()
    for args, message in cases:
        r = grid.cli(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert message in r.stderr, (args, r.stderr)
    assert ids() == before
    # The API refuses the same, with the usage flag, when called directly.
    with pytest.raises(Exception, match="queue 'nope' does not exist"):
        grid.client.submit(["ok.py"], queue="nope", cwd=str(grid.root))
    assert ids() == before
    # No master at all: exit 1, and the message says how to start one.
    other = tmp_path / "other.toml"
    other.write_text(f"[master]\nport = {free_port()}\n")
    r = run_cli("submit", "true", env={"STATGRID_CONFIG": str(other), "STATGRID_HOME": str(tmp_path)})
    assert r.returncode == 1 and "no master answers" in r.stderr and "statgrid grid up" in r.stderr
    r = grid.cli("grid", "up")
    assert r.returncode == 1 and "a master is already running" in r.stderr


def test_hosts_and_queues(grid):
    r = grid.cli("hosts")
    assert r.returncode == 0
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[1:]}
    assert sorted(rows) == ["node1", "node2", "node3", "node4", "node5"]
    assert rows["node1"][1:4] == ["ok", "2", "0"] and rows["node5"][1] == "closed_Adm"
    assert rows["node2"][5] == "0" and rows["node1"][5] == "all"
    monitors = [p for p in grid.descendants_alive() if "statgrid.monitor" in " ".join(p.cmdline())]
    assert sorted(p.cmdline()[p.cmdline().index("--host") + 1] for p in monitors) == sorted(rows)
    r = grid.cli("queues")
    assert [line.split()[0] for line in r.stdout.splitlines()[1:]] == ["high", "normal", "night"]
    assert "node1+1 others+2" in r.stdout


def test_host_cpus_confine_its_jobs(grid, tmp_path):
    # node2 has cpus = "FIRST_CPU": its jobs run on that CPU alone (like an LSF host's cpuset); node3's on all.
    out = {h: tmp_path / f"{h}.txt" for h in ("node2", "node3")}
    ids = [grid.client.submit(["sh", "-c", f"grep Cpus_allowed_list /proc/self/status > {out[h]}"], hosts=[h],
                              cwd=str(tmp_path), env={"PATH": os.environ["PATH"]})["id"] for h in out]
    assert [j["state"] for j in grid.wait(ids)] == ["DONE", "DONE"]
    allowed = {h: p.read_text().split()[-1] for h, p in out.items()}
    assert allowed["node2"] == str(FIRST_CPU)
    assert allowed["node3"] == Path("/proc/self/status").read_text().split("Cpus_allowed_list:")[1].split()[0]


def overlap_max(jobs: list[dict]) -> int:
    events = sorted([(j["start_ts"], 1) for j in jobs] + [(j["end_ts"], -1) for j in jobs])
    level = worst = 0
    for _, d in events:
        level += d
        worst = max(worst, level)
    return worst


def test_slots_preference_and_fifo(grid):
    ids = [grid.submit("sleep", "0.3") for _ in range(28)]
    jobs = grid.wait(ids)
    assert {j["state"] for j in jobs} == {"DONE"}
    per_host: dict[str, list[dict]] = {}
    for j in jobs:
        per_host.setdefault(j["host"], []).append(j)
    assert "node5" not in per_host                                    # closed
    for host, hjobs in per_host.items():
        assert overlap_max(hjobs) <= 2, host                          # never more than its slots
    by_dispatch = sorted(jobs, key=lambda j: j["dispatch_ts"])
    assert [j["id"] for j in by_dispatch] == sorted(ids)              # FIFO within the queue
    waits = sorted(j["wait_s"] for j in jobs[:8])
    print(f"submit→start of the first 8 jobs: median {waits[4] * 1000:.1f} ms")


def test_host_preference_puts_fewer_jobs_on_node1(grid):
    # Waves of 7 jobs on 8 slots: the 6 slots of the preferred hosts fill first, node1 takes one.
    # (A saturated grid refills every freed slot, node1's too: preference decides among free hosts.)
    # Each wave's jobs hold their slots until all 7 run, however slowly they were submitted.
    counts: dict[str, int] = {}
    for wave in range(3):
        gate = Gate(grid.root, f"wave{wave}")
        ids = [grid.submit(*gate.argv) for _ in range(7)]
        for i in ids:
            grid.wait_started(i)
        gate.open()
        for j in grid.wait(ids):
            counts[j["host"]] = counts.get(j["host"], 0) + 1
    print("jobs per host with node1+1 others+2:", counts)
    assert counts == {"node1": 3, "node2": 6, "node3": 6, "node4": 6}


def test_priority_across_queues(grid):
    gate = Gate(grid.root, "priority")                              # every slot taken until all are queued
    blockers = [grid.submit(*gate.argv, queue="high") for _ in range(8)]
    for b in blockers:
        grid.wait_started(b)
    normal = [grid.submit("true") for _ in range(3)]
    high = [grid.submit("true", queue="high") for _ in range(3)]
    gate.open()
    jobs = {j["id"]: j for j in grid.wait(blockers + normal + high)}
    assert max(jobs[i]["dispatch_ts"] for i in high) < min(jobs[i]["dispatch_ts"] for i in normal)


def test_user_limit(grid):
    ids = [grid.submit("sleep", "0.3", queue="night") for _ in range(3)]
    jobs = grid.wait(ids)
    assert overlap_max(jobs) == 1


def test_session_job_with_options_log_and_stimer(grid):
    (grid.root / "job.py").write_text(
        "import statgrid\n"
        "with statgrid.session() as s:\n"
        "    with s.step('make'):\n"
        "        s.execute(\"create table work.t as select range as x from range(50000)\")\n"
        "    print('rows', s.fetch_arrow('select count(*) as n from work.t').column(0)[0].as_py())\n")
    r = grid.cli("submit", "-J", "mk", "-o", "memsize=256M", "job.py")
    assert r.returncode == 0, r.stderr
    job_id = int(r.stdout.strip())
    assert f"Job <{job_id}> is submitted to queue <normal>." in r.stderr
    w = grid.cli("wait", str(job_id))
    assert w.returncode == 0 and f"Job <{job_id}>: DONE" in w.stdout
    rec = grid.client.job(job_id)
    assert rec["name"] == "mk" and rec["options"] == {"memsize": "256M"}
    assert rec["stimer"]["record"] == "total" and rec["stimer"]["status"] == "ok"
    assert rec["rusage"]["max_rss_bytes"] > 10 << 20 and rec["rusage"]["user_cpu_s"] > 0
    detail = grid.cli("job", str(job_id)).stdout
    assert "Session STIMER totals" in detail and "Status <DONE>" in detail
    jdir = Path(rec["job_dir"])
    assert (jdir / "session.log").is_file() and (jdir / "session.stimer.jsonl").is_file()
    # The attempt file says for whom the job ran: the submitter, as the launcher read the master's request.
    # It is the grid's (0600, in grid/attempts), not in the job's directory, which is the user's.
    path = grid.home / "grid" / "attempts" / f"{job_id}.1.json"
    assert path.stat().st_mode & 0o777 == 0o600 and not (jdir / "attempt-1.json").exists()
    last = attempt_from_dict(json.loads(path.read_text()))
    assert isinstance(last, AttemptFinished) and last.identity == identity_of(rec["user"])
    assert last.rusage.max_rss_bytes == rec["rusage"]["max_rss_bytes"]
    assert "rows 50000" in (jdir / "output.txt").read_text()
    assert "ended (ok)" in grid.cli("peek", str(job_id)).stdout
    assert not any((grid.home / "work").iterdir())                    # WORK removed


def test_iobench_on_two_nodes_at_once(grid):
    d = grid.root / "io"
    d.mkdir()
    r = grid.cli("iobench", "--nodes", "node1,node2", "--dir", str(d), "--mode", "write", "--size-per-thread", "4M",
                 "--runs", "2", "--direct", "--json", str(grid.root / "io.json"))
    assert r.returncode == 0, r.stderr
    res = json.loads((grid.root / "io.json").read_text())
    for run in res["runs"]:
        assert [n["node"] for n in run["nodes"]] == ["node1", "node2"]
        assert run["total"]["write"]["io_bytes"] == 2 * 4 << 20
    assert "total" in r.stdout and "node2" in r.stdout
    jobs = [j for j in grid.client.jobs(all_states=True) if j["name"].startswith("iobench-")]
    assert sorted((j["name"], j["host"], j["state"]) for j in jobs) == [
        ("iobench-node1", "node1", "DONE"), ("iobench-node2", "node2", "DONE")]
    assert not [p for p in d.iterdir() if p.name.startswith("sgio.")]
    bad = grid.cli("iobench", "--nodes", "node5", "--dir", str(d))
    assert bad.returncode == 2 and "host 'node5' is closed_Adm" in bad.stderr


def test_failures_are_the_jobs_own(grid):
    (grid.root / "bad.py").write_text("import statgrid\nwith statgrid.session() as s:\n    s.execute('select nope')\n")
    a = grid.submit("sh", "-c", "exit 3")
    b = grid.submit("bad.py")
    c = grid.submit("true")
    ja, jb, jc = grid.wait([a, b, c])
    assert (ja["state"], ja["exit_code"], ja["exit_reason"]) == ("EXIT", 3, "exit code 3")
    assert jb["state"] == "EXIT" and jb["exit_code"] not in (0, None)
    assert jc["state"] == "DONE"
    w = grid.cli("wait", str(a), str(c))
    assert w.returncode == 1 and "exit code 3" in w.stdout


def test_kill_running_and_pending(grid):
    ids = [grid.submit("sleep", "600", hosts=["node2"]) for _ in range(3)]   # killed, all three
    first = grid.wait_started(ids[0])
    grid.wait_started(ids[1])
    assert grid.client.job(ids[2])["state"] == "PEND"                # node2 has 2 slots
    r = grid.cli("kill", str(ids[0]))
    assert r.returncode == 0
    killed = grid.wait([ids[0]])[0]
    ev = {e["event"]: e["ts"] for e in grid.client.job(ids[0])["events"]}
    print(f"kill → KILLED in the store: {(ev['finish'] - ev['kill']) * 1000:.1f} ms")
    assert killed["state"] == "KILLED" and killed["exit_reason"] == "killed by user"
    wait_gone([first["pid"]])
    third = grid.wait_started(ids[2])                                 # the freed slot is reused
    assert third["host"] == "node2"
    pend = grid.submit("true", hosts=["node2"])
    r = grid.cli("kill", str(pend), "9999")
    assert r.returncode == 1 and f"Job <{pend}>: KILLED" in r.stdout and "job 9999 does not exist" in r.stderr
    assert grid.client.job(pend)["exit_reason"] == "killed by user while pending"
    grid.client.kill(ids[1:])
    assert {j["state"] for j in grid.wait(ids[1:])} == {"KILLED"}


def _worker_of(job: dict) -> psutil.Process:
    # job process → its node's launcher → the Dask worker process
    return psutil.Process(job["pid"]).parent().parent()


def test_worker_lost_requeues_or_exits_and_leaves_no_process(grid):
    gate = Gate(grid.root, "rerun")                                 # its first attempt runs until the worker goes
    rerun = grid.submit(*gate.argv, hosts=["node3"], rerunnable=True)
    plain = grid.submit("sh", "-c", "sleep 600 & sleep 600; wait", hosts=["node3"])
    jr, jp = grid.wait_started(rerun), grid.wait_started(plain)
    worker = _worker_of(jp)
    assert _worker_of(jr).pid == worker.pid
    group = [p for p in psutil.process_iter() if pgid_of(p.pid) == jp["pid"]]
    assert len(group) >= 2
    worker.kill()
    done_plain = grid.wait([plain])[0]
    assert done_plain["state"] == "EXIT" and "host lost" in done_plain["exit_reason"]
    wait_gone([p.pid for p in group] + [jr["pid"]])
    gate.open()
    done_rerun = grid.wait([rerun])[0]                                # on node3's restarted worker
    assert done_rerun["state"] == "DONE" and done_rerun["requeues"] == 1 and done_rerun["attempt"] == 2
    assert done_rerun["host"] == "node3"
    events = [e["event"] for e in grid.client.job(rerun)["events"]]
    assert events == ["submit", "dispatch", "start", "requeue", "dispatch", "start", "finish"]


def test_master_killed_and_restarted_loses_and_repeats_nothing(grid):
    gate = Gate(grid.root, "long")                                  # the long ones run past the restart
    short = [grid.submit("sleep", "0.5") for _ in range(3)]
    long = [grid.submit(*gate.argv) for _ in range(3)]
    queued = [grid.submit("sleep", "1", hosts=["node4"]) for _ in range(4)]
    started = {i: grid.wait_started(i) for i in short + long}
    before = {i: grid.client.job(i) for i in long}
    master = json.loads((grid.home / "grid" / "master.json").read_text())["pid"]
    os.kill(master, signal.SIGKILL)
    wait_gone([master])
    wait_gone([started[i]["pid"] for i in short])                    # the short ones end while it is down
    grid.up()
    gate.open()
    jobs = {j["id"]: j for j in grid.wait(short + long + queued)}
    assert len(jobs) == 10 and {j["state"] for j in jobs.values()} == {"DONE"}
    for i, j in jobs.items():
        starts = [e for e in grid.client.job(i)["events"] if e["event"] == "start"]
        assert j["attempt"] == 1 and len(starts) == 1, (i, j)         # none ran twice
    for i in long:                                                    # found again, not restarted
        assert jobs[i]["pid"] == before[i]["pid"] and jobs[i]["start_ts"] == before[i]["start_ts"]
    log = (grid.home / "grid" / "master.log").read_text()
    assert "reconciled" in log


def test_grid_down_after_a_master_crash_stops_the_engine(grid):
    job_id = grid.submit("sleep", "600")
    job = grid.wait_started(job_id)
    master = json.loads((grid.home / "grid" / "master.json").read_text())["pid"]
    os.kill(master, signal.SIGKILL)
    wait_gone([master])
    r = grid.cli("grid", "down")
    assert r.returncode == 0 and "statgrid grid stopped" in r.stdout
    wait_gone([job["pid"]])                                          # the engine took its jobs along
    wait_for(lambda: not grid.descendants_alive(), "no process of the grid left",
             state=lambda: [p.cmdline() for p in grid.descendants_alive()])
    grid.up()                                                        # up again for whatever test comes next
