"""A grid of several machines (issue 16), on Linux network namespaces (tests/support/netns.py): a master
host, three node hosts that join with `statgrid node up`, and a client host that uses the grid only
over HTTPS with a token. Each host runs only its own daemons; they talk only over that network; the
file system (grid home, libraries) is shared, as GPFS would be. Skipped with the reason where
namespaces cannot be made."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import WAIT_S, wait_for
from tests.support.netns import Network, skip_unless_possible
from tests.support.gridtoml import toml_text

NODES = ("node1", "node2", "node3")
# Long enough that the master's short link-down (test_the_masters_link_down_...) stays under it however
# long observing "all three unavail" through the CLI takes on a loaded machine (over 15 s was seen);
# the happy paths never wait for it, only the fencing case does.
FENCE_GRACE_S = 40
GRID_TOML = toml_text({"node1": {"slots": 2, "joins": True}, "node2": {"slots": 2, "joins": True},
                       "node3": {"slots": 2, "joins": True}},
                      port=8642, master={"listen": "{master_ip}", "names": ["{master_ip}"], "fence_grace": f"{FENCE_GRACE_S}s",
                                         "engine_port": 8786},
                      libraries={"data": "{root}/data", "work": "{root}/work", "util": "{root}/util"},
                      monitor={"enabled": True, "interval": "1s"})
STATGRID = [sys.executable, "-m", "statgrid"]


class NetGrid:
    def __init__(self, net: Network, root: Path):
        self.net, self.root = net, root
        self.home = root / "home"
        self.home.mkdir()
        self.toml = root / "grid.toml"
        self.toml.write_text(GRID_TOML.format(master_ip=net.ip("grid1"), root=root))
        self.env = {**os.environ, "STATGRID_HOME": str(self.home), "STATGRID_CONFIG": str(self.toml)}
        self.nodes: dict[str, subprocess.Popen] = {}
        # The client host: no grid home, no grid.toml, its own config (url, token, CA) only.
        self.client_config = root / "client-config"
        self.client_env = {k: v for k, v in os.environ.items() if not k.startswith("STATGRID_")}
        self.client_env.update({"STATGRID_HOME": str(root / "client-has-no-grid-home"),
                                "XDG_CONFIG_HOME": str(self.client_config)})

    def on(self, host: str, *args, env=None, timeout=120) -> subprocess.CompletedProcess:
        return self.net.run(host, [*STATGRID, *args], env=env or self.env, timeout=timeout, cwd=self.root)

    def client(self, *args, timeout=120) -> subprocess.CompletedProcess:
        done = self.on("client", *args, env=self.client_env, timeout=timeout)
        return done

    def node_up(self, name: str) -> None:
        log = open(self.root / f"{name}.log", "ab")
        self.nodes[name] = self.net.popen(name, [*STATGRID, "node", "up", "--name", name], env=self.env,
                                          stdout=log, stderr=log, cwd=self.root, start_new_session=True)

    def node_down(self, name: str) -> None:
        proc = self.nodes.pop(name)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=WAIT_S)

    def hosts(self) -> dict[str, dict]:
        done = self.on("grid1", "hosts", "--json")
        assert done.returncode == 0, done.stderr
        return {h["host"]: h for h in json.loads(done.stdout)}

    def wait_hosts(self, want: dict[str, str], timeout_s=WAIT_S) -> dict[str, dict]:
        def reached():
            hosts = self.hosts()
            return all(hosts[h]["state"] == s for h, s in want.items()) and hosts

        def seen():
            return ({h: r["state"] for h, r in self.hosts().items()},
                    {n: (self.root / f"{n}.log").read_text()[-800:] for n in self.nodes})
        return wait_for(reached, f"hosts {want}", timeout_s, state=seen, every_s=0.5)

    def master_log(self) -> Path:
        return self.home / "grid" / "master.log"

    def wait_master_logged(self, lines: list[str], since: int, timeout_s=WAIT_S) -> None:
        """Wait until the master's log, past byte `since`, holds every one of `lines`. Read in this
        process: no CLI started per poll, so a loaded machine does not stretch what the test waits for."""
        def text():
            with open(self.master_log(), "rb") as f:
                f.seek(since)
                return f.read().decode(errors="replace")
        wait_for(lambda: all(line in text() for line in lines), f"the master to log {lines}", timeout_s,
                 state=lambda: text()[-1500:], every_s=0.05)


@pytest.fixture(scope="module")
def grid():
    skip_unless_possible()
    root = Path(tempfile.mkdtemp(prefix="sgnet-", dir="/tmp"))
    for lib in ("data", "work", "util"):
        (root / lib).mkdir()
    with Network(["grid1", *NODES, "client"]) as net:
        g = NetGrid(net, root)
        up = g.on("grid1", "grid", "up", "--detach", timeout=300)
        assert up.returncode == 0, up.stderr + up.stdout
        try:
            for name in NODES:
                g.node_up(name)
            g.wait_hosts({n: "ok" for n in NODES})
            made = g.on("grid1", "token", "create", "--name", "client host", env={**g.env, "XDG_CONFIG_HOME":
                                                                                   str(g.client_config)})
            assert made.returncode == 0, made.stderr
            yield g
        finally:
            down = g.on("grid1", "grid", "down", timeout=300)
            for name in list(g.nodes):
                g.node_down(name)
            left = net.close()
            shutil.rmtree(root, ignore_errors=True)
        assert down.returncode == 0, down.stderr
        assert not left, f"processes left in the hosts' namespaces: {left}"


@pytest.mark.netns
def test_the_nodes_joined_the_engine_on_its_configured_port(grid):
    engine = json.loads((grid.home / "grid" / "engine.json").read_text())
    assert engine["address"] == f"tls://{grid.net.ip('grid1')}:8786"
    hosts = grid.hosts()
    for n in NODES:
        assert hosts[n]["address"].startswith(f"tls://{grid.net.ip(n)}:"), hosts[n]   # each from its own host


@pytest.mark.netns
def test_the_client_host_reaches_only_the_https_api(grid):
    conf = (grid.client_config / "statgrid" / "client.toml").read_text()
    assert f'url = "https://{grid.net.ip("grid1")}:8642"' in conf
    who = grid.client("whoami")
    assert who.returncode == 0 and "via token" in who.stdout, who
    # the master's local socket is a file of the shared file system, but the client host does not use it
    assert "no master answers" in grid.on("client", "jobs", env={**grid.client_env, "XDG_CONFIG_HOME": "/nonexistent"}
                                          ).stderr


@pytest.mark.netns
def test_thirty_jobs_from_the_client_spread_over_the_three_nodes(grid):
    ids = []
    for _ in range(30):
        done = grid.client("submit", "sh", "-c", "sleep 1; echo ran on $STATGRID_HOST")
        assert done.returncode == 0, done.stderr
        ids.append(done.stdout.split()[-1])
    waited = grid.client("wait", *ids, timeout=600)
    assert waited.returncode == 0, waited.stdout + waited.stderr
    jobs = {j["id"]: j for j in json.loads(grid.client("jobs", "-a", "-u", "all", "--json").stdout)}
    mine = [jobs[int(i)] for i in ids]
    assert all(j["state"] == "DONE" for j in mine)
    per_host = {n: sum(j["host"] == n for j in mine) for n in NODES}
    assert all(per_host[n] >= 5 for n in NODES), per_host        # every node took its share
    # each ran once: one attempt record per job, on the host the store names
    for j in mine:
        attempts = sorted((grid.home / "grid" / "attempts").glob(f"{j['id']}.*.json"))
        assert len(attempts) == 1, attempts
        assert json.loads(attempts[0].read_text())["host"] == j["host"]
    out = grid.client("peek", ids[0])
    assert f"ran on {mine[0]['host']}" in out.stdout


@pytest.mark.netns
def test_kill_from_the_client_host(grid):
    done = grid.client("submit", "sleep", "300")
    job_id = done.stdout.split()[-1]
    rec = _started(grid, job_id)
    host = rec["host"]
    assert rec["pid"] in grid.net.pids(host)                      # the job runs in its node's namespace
    killed = grid.client("kill", job_id)
    assert killed.returncode == 0, killed.stderr
    waited = grid.client("wait", job_id, timeout=120)
    assert "KILLED" in waited.stdout, waited.stdout
    assert not any(_cmdline(p).startswith("sleep 300") for p in grid.net.pids(host))


@pytest.mark.root
@pytest.mark.netns
def test_every_nodes_samples_reach_the_shared_grid_home(grid, tmp_path):
    """Each node's monitor runs in its namespace and writes to the grid home they share; the samples
    name their host, and machine.json says all three saw one kernel (namespaces of one machine),
    which reports count as one machine."""
    monitor = grid.home / "monitor"
    _until("samples of every node", lambda: all(list((monitor / n).glob("*.parquet")) for n in NODES))
    machines = {n: json.loads((monitor / n / "machine.json").read_text())["machine_id"] for n in NODES}
    assert len(set(machines.values())) == 1, machines
    out = tmp_path / "csv"
    exported = grid.on("grid1", "monitor", "export", "--csv", str(out))
    assert exported.returncode == 0, exported.stderr
    header, *rows = (out / "node.csv").read_text().splitlines()
    host_col = header.split(",").index("host")
    assert {r.split(",")[host_col] for r in rows} >= set(NODES)
    for n in NODES:                                       # the monitor ran in its node's namespace
        assert any("statgrid.monitor" in _cmdline(p) and f"--host {n}" in _cmdline(p) for p in grid.net.pids(n))


@pytest.mark.netns
def test_drain_and_reconfig_on_the_running_grid(grid):
    for other in ("node2", "node3"):
        grid.on("grid1", "host", "close", other)
    job_id = grid.client("submit", "sleep", "3").stdout.split()[-1]
    assert _started(grid, job_id)["host"] == "node1"
    for other in ("node2", "node3"):
        grid.on("grid1", "host", "open", other)
    drained = grid.on("grid1", "host", "drain", "node1", "--reason", "firmware")
    assert drained.returncode == 0 and "drained" in drained.stdout, drained
    assert _job(grid, job_id)["state"] == "DONE"
    later = [grid.client("submit", "true").stdout.split()[-1] for _ in range(4)]
    assert grid.client("wait", *later, timeout=120).returncode == 0
    assert {_job(grid, j)["host"] for j in later} <= {"node2", "node3"}
    assert "firmware" in grid.client("hosts").stdout                 # the client host sees who and why
    assert grid.on("grid1", "host", "open", "node1").returncode == 0

    text = grid.toml.read_text()
    try:
        grid.toml.write_text(text.replace("[hosts.node2]\nslots = 2", "[hosts.node2]\nslots = 1")
                             + '\n[queues.normal]\npriority = 30\n\n[queues.night]\npriority = 5\nhosts = "node3"\n')
        applied = grid.on("grid1", "reconfig")
        assert applied.returncode == 0, applied.stderr
        queues = json.loads(grid.client("queues", "--json").stdout)
        assert {q["queue"] for q in queues} == {"normal", "night"}
        assert grid.hosts()["node2"]["slots"] == 1
        night = grid.client("submit", "-q", "night", "true").stdout.split()[-1]
        assert grid.client("wait", night).returncode == 0 and _job(grid, night)["host"] == "node3"
        again = grid.client("reconfig")                               # from the client host too (the token is
        assert again.returncode == 0 and "nothing changed" in again.stdout   # root's, an administrator's)
    finally:
        grid.toml.write_text(text)
        grid.on("grid1", "reconfig")


def _job(grid, job_id) -> dict:
    done = grid.on("grid1", "job", str(job_id), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _attempts(grid, job_id) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((grid.home / "grid" / "attempts").glob(f"{job_id}.*.json"))]


def _until(what, check, timeout_s=WAIT_S, every_s=0.5):
    return wait_for(check, what, timeout_s, every_s=every_s)


def _started(grid, job_id) -> dict:
    return _until(f"job {job_id} started", lambda: (lambda j: j if j["start_ts"] else None)(_job(grid, job_id)))


def _sleeps_on(grid, host: str, marker: str) -> list[int]:
    return [p for p in grid.net.pids(host) if marker in _cmdline(p)]


@pytest.mark.netns
def test_a_node_whose_link_goes_down_fences_its_jobs_before_they_run_elsewhere(grid):
    """node3's link goes down mid-job: it is unavail within seconds (its jobs left alone), kills its
    jobs after the fence grace (FENCE_GRACE_S here), and only after that does the master requeue the
    rerunnable job (on another host) and end the other EXIT "host lost". The attempt records prove
    no job ran twice at once. Its link back, node3 rejoins (restarted, as systemd would)."""
    for other in ("node1", "node2"):                      # both jobs go to node3
        assert grid.on("grid1", "host", "close", other).returncode == 0
    # both run past the fence however slow the machine (the rerun's second attempt is killed below)
    rerun = grid.on("grid1", "submit", "-r", "sh", "-c", "sleep 600; echo rerun-done").stdout.split()[-1]
    plain = grid.on("grid1", "submit", "sleep", "601").stdout.split()[-1]
    for job_id in (rerun, plain):
        assert _started(grid, job_id)["host"] == "node3"
    for other in ("node1", "node2"):
        assert grid.on("grid1", "host", "open", other).returncode == 0
    down_at = time.time()
    grid.net.link_down("node3")
    try:
        _until("node3 unavail", lambda: grid.hosts()["node3"]["state"] == "unavail")
        unavail_s = time.time() - down_at
        assert _job(grid, plain)["state"] == "RUN"        # unavail is not lost: nothing decided yet
        ended = _until("the plain job ends", lambda: (lambda j: j if j["state"] == "EXIT" else None)(
            _job(grid, plain)))
        assert ended["exit_reason"].startswith("host lost"), ended
        assert not _sleeps_on(grid, "node3", "sleep 6")   # fenced: none of node3's jobs runs on
        second = _until("the rerunnable job starts again", lambda: (lambda j: j if j["attempt"] == 2 and
                                                                    j["start_ts"] else None)(_job(grid, rerun)))
        assert second["host"] in ("node1", "node2")
    finally:
        grid.net.link_up("node3")
    first, again = _attempts(grid, rerun)[:2]
    assert first["type"] == "attempt.lost" and "fenced" in first["reason"], first
    assert first["end_ts"] < again["start_ts"], (first, again)                 # never two at once
    assert first["end_ts"] - down_at >= FENCE_GRACE_S - 1                                 # not before the grace
    # unavail came before the fence: the plain job still ran when node3 was seen unavail (asserted
    # above); how long that took is the machine's load, printed, not asserted
    print(f"node3 unavail {unavail_s:.1f} s after its link went down")
    grid.on("grid1", "kill", rerun)
    # node3 back. Its worker may outlive the outage (the master sees it in contact again) and still be
    # dropped by the engine seconds later, when a connection broken during the outage is found dead:
    # its node daemon then exits, for its service manager to restart it (seen on a loaded machine,
    # just as the next test's job reached node3). So node3 is restarted here, as an operator would
    # after a fence, and the next test starts with three workers whose connections are new.
    grid.node_down("node3")
    grid.wait_hosts({"node3": "unavail"})
    grid.node_up("node3")
    grid.wait_hosts({"node3": "ok"})


@pytest.mark.netns
def test_the_masters_link_down_for_less_than_the_grace_costs_no_job(grid):
    ids = [grid.client("submit", "sh", "-c", "sleep 25; echo survived").stdout.split()[-1] for _ in range(3)]
    for job_id in ids:
        _started(grid, job_id)
    since = grid.master_log().stat().st_size
    down_at = time.monotonic()
    grid.net.link_down("grid1")
    try:                                                  # the master sees every node go silent (its log says
        grid.wait_master_logged([f"host {n}: no word from its node" for n in NODES], since)  # so: read here,
    finally:                                              # no CLI per poll); up again at once, well before the
        grid.net.link_up("grid1")                         # fence grace: nodes keep their jobs
    down_s = time.monotonic() - down_at
    print(f"the master's link was down {down_s:.1f} s (fence grace {FENCE_GRACE_S} s)")
    grid.wait_hosts({n: "ok" for n in NODES})
    done = grid.client("wait", *ids, timeout=180)
    assert done.returncode == 0, done.stdout
    for job_id in ids:
        rec = _job(grid, job_id)
        assert (rec["state"], rec["attempt"]) == ("DONE", 1), rec
        assert len(_attempts(grid, job_id)) == 1
        assert "survived" in grid.client("peek", job_id).stdout


@pytest.mark.netns
def test_a_node_rejoining_after_its_daemons_were_killed_is_reconciled(grid):
    grid.on("grid1", "host", "close", "node1")
    grid.on("grid1", "host", "close", "node3")
    gate = grid.root / "gate-second-life"             # the first attempt runs until node2 dies, however slow
    job_id = grid.on("grid1", "submit", "-r", "sh", "-c",
                     f"while [ ! -e {gate} ]; do sleep 0.1; done; echo second-life").stdout.split()[-1]
    assert _started(grid, job_id)["host"] == "node2"
    grid.on("grid1", "host", "open", "node1")
    grid.on("grid1", "host", "open", "node3")
    grid.nodes["node2"].kill()                            # a reboot: the node's daemons die at once
    grid.nodes.pop("node2").wait(WAIT_S)
    _until("node2's jobs gone", lambda: not _sleeps_on(grid, "node2", str(gate)))
    again = _until("requeued and started elsewhere", lambda: (lambda j: j if j["attempt"] == 2 and j["start_ts"]
                                                              else None)(_job(grid, job_id)))
    assert again["host"] in ("node1", "node3")
    gate.touch()
    grid.node_up("node2")
    grid.wait_hosts({"node2": "ok"})
    done = grid.client("wait", job_id, timeout=180)
    assert done.returncode == 0, done.stdout
    first, second = _attempts(grid, job_id)
    # The first attempt's node died under it (its launcher killed the job when its worker went): no
    # end was recorded there, and the job's work was done once — by the second attempt.
    assert first["type"] == "attempt.started" and second["type"] == "attempt.finished", (first, second)
    assert grid.client("peek", job_id).stdout.count("second-life") == 1
    events = [e for e in _job(grid, job_id)["events"] if e["event"] == "requeue"]
    assert len(events) == 1 and "host lost" in events[0]["detail"], events


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


KERNEL_OWNER = """
import asyncio, json, sys
from jupyter_client.manager import AsyncKernelManager

async def main():
    km = AsyncKernelManager(kernel_name="statgrid-sas")
    await km.start_kernel()
    kc = km.client(); kc.start_channels()
    await kc.wait_for_ready(timeout=300)
    info = km.get_connection_info()
    print(json.dumps({"job": km.provisioner.job_id, "ip": info["ip"], "iopub": info["iopub_port"]}), flush=True)
    await asyncio.to_thread(sys.stdin.readline)                 # the sniffer listens: run the cell
    out = []
    reply = await kc.execute_interactive('data _null_; do i = 1 to 5; put "secret-output " i; end; run;',
                                         timeout=300, output_hook=out.append)
    text = " ".join(json.dumps(m["content"]) for m in out)
    seen = all(f"secret-output {i}" in text for i in range(1, 6))         # the PUT lines, not the echoed source
    print(json.dumps({"status": reply["content"]["status"], "seen": seen}), flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    await km.shutdown_kernel(); kc.stop_channels()
asyncio.run(main())
"""

# An anonymous process on the client host: no token, no keys; it knows the kernel's address and iopub port.
SNIFFER = """
import sys, zmq
ip, port = sys.argv[1], int(sys.argv[2])
sock = zmq.Context.instance().socket(zmq.SUB)
sock.setsockopt(zmq.SUBSCRIBE, b"")
sock.connect(f"tcp://{ip}:{port}")
print("listening", flush=True)
sys.stdin.readline()
got = 0
while sock.poll(0):
    sock.recv_multipart(); got += 1
print("received", got, flush=True)
"""


@pytest.mark.netns
def test_a_kernel_on_a_node_serves_the_client_host_and_no_one_else(grid):
    """Issue 28: the kernel runs on a node, bound to the node's address on the grid network; the notebook's client
    on the client host reaches it with the connection the master gave it (by its token); an anonymous process on
    the network gets no connection from the API and reads nothing from the kernel's iopub port (CurveZMQ)."""
    from statgrid.kernels.specs import kernel_json

    specs = grid.root / "jupyter" / "kernels" / "statgrid-sas"
    specs.mkdir(parents=True)
    (specs / "kernel.json").write_text(json.dumps(kernel_json("sas")))
    env = {**grid.client_env, "JUPYTER_PATH": str(grid.root / "jupyter")}
    owner = grid.net.popen("client", [sys.executable, "-c", KERNEL_OWNER], env=env, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=grid.root)
    sniffer = None
    try:
        line = owner.stdout.readline()
        assert line.startswith("{"), line + (owner.stderr.read() if owner.poll() is not None else "")
        started = json.loads(line)
        job = _job(grid, started["job"])
        assert job["host"] in NODES and started["ip"] == grid.net.ip(job["host"]), (job, started)
        assert job["pid"] in grid.net.pids(job["host"])          # the kernel runs in its node's namespace
        # no token: the API says who may have the connection, and gives nothing
        anon = grid.net.run("client", ["curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}",
                                       f"https://{grid.net.ip('grid1')}:8642/jobs/{started['job']}/kernel"])
        assert anon.stdout == "401", anon.stdout + anon.stderr
        sniffer = grid.net.popen("client", [sys.executable, "-c", SNIFFER, started["ip"], str(started["iopub"])],
                                 env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        assert sniffer.stdout.readline().strip() == "listening", sniffer.stderr.read()
        owner.stdin.write("\n")
        owner.stdin.flush()
        ran = json.loads(owner.stdout.readline())
        assert ran == {"status": "ok", "seen": True}, ran            # the owner sees the cell's output
        sniffer.stdin.write("\n")
        sniffer.stdin.flush()
        assert sniffer.stdout.readline().split() == ["received", "0"]   # the anonymous subscriber: nothing
    finally:
        for proc in (sniffer, owner):
            if proc is not None and proc.poll() is None:
                try:
                    proc.stdin.write("\n")
                    proc.stdin.flush()
                    proc.wait(timeout=WAIT_S)
                except (OSError, subprocess.TimeoutExpired):
                    proc.kill()
    waited = grid.client("wait", str(started["job"]), timeout=WAIT_S + 60)
    assert "DONE" in waited.stdout, waited.stdout + waited.stderr      # shut down by its notebook: DONE
