"""Issue 24, item 2, on a real grid: a master killed with SIGKILL while a 5-job flow or a 20-job
array is being submitted keeps all of it or none; after the restart no empty or partial flow is
listed, let alone DONE; a retry with the same Idempotency-Key answers the same ids (or submits it
then), and every job runs exactly once. Also the key's rules through the API: another request
with a used key is refused (409), and keys are per user (two real OS users, same key).

The kill points: the moment another connection first sees the flow's (or array's) row or one of
its jobs in the store — where the old store, committing each INSERT alone, had written part of
it — and uniformly random delays over the time a submit takes. The store-level tests are in
tests/unit/test_store_atomic.py."""
from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from statgrid.errors import StatgridError
from statgrid.grid.interface import flowfile
from statgrid.grid.interface.client import GridClient
from tests.support import gridtest
from tests.support.multiuser import make_users, site_install  # noqa: F401 — fixtures, used by name
from tests.conftest import wait_gone
from tests.support.gridtoml import toml_text

GRID_TOML = toml_text({"node1": 4})
FLOW_TRIALS = 10
ARRAY_TRIALS = 8
ARRAY_SIZE = 20
# A large environment makes each job row large (as a real user's often is), so a submit spends
# its time writing rows: the old store's window between the first and the last commit.
BIG_ENV = {"PATH": os.environ["PATH"], "PADDING": "x" * 40_000}


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    g = gridtest.Grid(tmp_path_factory.mktemp("kill9"), GRID_TOML)
    (g.root / "runs").mkdir()
    with gridtest.running(g):
        yield g


def master_pid(grid) -> int:
    return json.loads((grid.home / "grid" / "master.json").read_text())["pid"]


def restart(grid) -> None:
    up = grid.cli("grid", "up", "--detach", timeout=240)
    assert up.returncode == 0, up.stderr + up.stdout


def flow_rows(grid, name: str) -> list[tuple[int, int]]:
    """(flow id, number of its jobs) of every flow or array named `name`, read from the store file."""
    con = sqlite3.connect(grid.home / "grid" / "jobs.db")
    try:
        return con.execute("SELECT f.id, (SELECT count(*) FROM jobs j WHERE j.flow_id = f.id) FROM flows f "
                           "WHERE f.name = ? ORDER BY f.id", (name,)).fetchall()
    finally:
        con.close()


def kill_when_seen(grid, pid: int, name: str, stop: threading.Event, seen: dict) -> None:
    """SIGKILL the master the moment a reader sees the flow's row or any job of it."""
    con = sqlite3.connect(grid.home / "grid" / "jobs.db")
    try:
        while not stop.is_set():
            row = con.execute("SELECT f.id, (SELECT count(*) FROM jobs j WHERE j.flow_id = f.id) FROM flows f "
                              "WHERE f.name = ?", (name,)).fetchone()
            if row is not None:
                os.kill(pid, signal.SIGKILL)
                seen["at_kill"] = row[1]
                return
    finally:
        con.close()


def kill_trial(grid, name: str, submit, strategy: str, delay_s: float) -> dict:
    """Run submit() (which sends the request) while the master is killed; restart it. Returns
    {"answer": what submit returned or None, "error": str or None, "at_kill": jobs seen}."""
    pid = master_pid(grid)
    out: dict = {"answer": None, "error": None}
    stop = threading.Event()

    def send() -> None:
        try:
            out["answer"] = submit()
        except StatgridError as exc:
            out["error"] = str(exc)
        except BaseException as exc:            # anything else is the client's fault: the test fails
            out["crash"] = repr(exc)

    sender = threading.Thread(target=send)
    if strategy == "seen":
        watcher = threading.Thread(target=kill_when_seen, args=(grid, pid, name, stop, out))
        watcher.start()
        sender.start()
        sender.join(120)
        watcher.join(5)                         # the submit answered before any row was seen?
        stop.set()
        watcher.join()
        if "at_kill" not in out:
            os.kill(pid, signal.SIGKILL)
    else:
        sender.start()
        time.sleep(delay_s)                     # a random kill point, not a wait for an outcome
        os.kill(pid, signal.SIGKILL)
        sender.join(120)
    assert not sender.is_alive() and "crash" not in out, out
    wait_gone([pid])
    restart(grid)
    return out


def no_retry_client(grid) -> GridClient:
    return GridClient(grid.cfg, submit_retry_s=0)


def flow_file(grid, trial: int) -> Path:
    name = f"kf{trial}"
    marker = grid.root / "runs" / f"{name}.txt"
    body = [f'name = "{name}"']
    for job, after in (("a", None), ("b", "done(a)"), ("c", None), ("d", "done(b) && done(c)"), ("e", None)):
        body += [f"[jobs.{job}]", f'command = ["sh", "-c", "echo {job} $STATGRID_JOB_ID >> {marker}"]']
        if after:
            body.append(f'after = "{after}"')
    path = grid.root / f"{name}.toml"
    path.write_text("\n".join(body) + "\n")
    return path


def strategies(n: int, rtt_s: float, seed: int) -> list[tuple[str, float]]:
    """Half the trials kill at first sight of the rows; the others at random delays up to 1.5 times
    a trial's submit round trip, log-uniform (from 1/300 of it on: the master reads and writes a
    submit in a small part of the round trip), so the kill lands before, during or after that."""
    rng = random.Random(seed)
    return [("seen", 0.0) if i % 2 == 0 else ("delay", 1.5 * rtt_s * 10 ** rng.uniform(-2.5, 0)) for i in range(n)]


def trial_rtt_s(submits) -> float:
    """The median round trip of submits sent as a trial sends them (a thread, a fresh client)."""
    times = []
    for submit in submits:
        sender = threading.Thread(target=submit)
        t0 = time.monotonic()
        sender.start()
        sender.join(120)
        times.append(time.monotonic() - t0)
    return sorted(times)[len(times) // 2]


def test_a_flow_submit_killed_at_random_points_is_all_or_none_and_a_retry_never_duplicates(grid):
    flows: dict[int, int] = {}

    def warm_up(trial: int):
        spec = flowfile.load(flow_file(grid, trial))
        return lambda: flows.__setitem__(trial, no_retry_client(grid).submit_flow(spec, cwd=str(grid.root),
                                                                                  env=BIG_ENV)["id"])

    rtt_s = trial_rtt_s([warm_up(t) for t in (0, 1001, 1002)])
    seed = int(os.environ.get("STATGRID_KILL9_SEED", time.time_ns() % 10**6))
    print(f"seed {seed}, submit round trip {rtt_s * 1000:.1f} ms")
    outcomes = []
    for trial, (strategy, delay_s) in enumerate(strategies(FLOW_TRIALS, rtt_s, seed), start=1):
        name = f"kf{trial}"
        spec = flowfile.load(flow_file(grid, trial))
        key = str(uuid.uuid4())
        out = kill_trial(grid, name, lambda: no_retry_client(grid).submit_flow(spec, cwd=str(grid.root), env=BIG_ENV,
                                                                                key=key), strategy, delay_s)
        rows = flow_rows(grid, name)
        # all or none: no flow, or one flow with its five jobs
        assert rows == [] or (len(rows) == 1 and rows[0][1] == 5), (trial, strategy, out, rows)
        listed = {f["name"]: f for f in grid.client.flows()}
        if rows:
            assert listed[name]["state"] != "DONE" or listed[name]["counts"].get("DONE") == 5
        else:
            assert name not in listed
        if out["answer"] is not None:
            assert rows and out["answer"]["id"] == rows[0][0]
        # the retry with the same key: the same flow if it was stored, else it now
        again = grid.client.submit_flow(spec, cwd=str(grid.root), env=BIG_ENV, key=key)
        after = flow_rows(grid, name)
        assert len(after) == 1 and after[0][1] == 5, (trial, after)
        if rows:
            assert again["id"] == rows[0][0]
        assert grid.client.submit_flow(spec, cwd=str(grid.root), env=BIG_ENV, key=key)["id"] == again["id"]
        flows[trial] = again["id"]
        outcomes.append((strategy, "stored" if rows else "absent", out.get("at_kill")))
    print("outcomes:", outcomes)
    ids = [j["id"] for f in flows.values() for j in grid.client.flow(f)["jobs"]]
    assert len(ids) == 5 * (FLOW_TRIALS + 3)
    assert {j["state"] for j in grid.wait(ids, timeout_s=300)} == {"DONE"}
    for trial, flow_id in flows.items():               # every job ran once: one line each in its marker
        lines = (grid.root / "runs" / f"kf{trial}.txt").read_text().split()
        ran = sorted(zip(lines[::2], map(int, lines[1::2])))
        assert ran == sorted((j["name"], j["id"]) for j in grid.client.flow(flow_id)["jobs"]), (trial, ran)
        assert grid.client.flow(flow_id)["state"] == "DONE"


def test_an_array_submit_killed_at_random_points_is_all_or_none_and_a_retry_never_duplicates(grid):
    def submit(client, trial, key=None):
        marker = grid.root / "runs" / f"ka{trial}.txt"
        return client.submit(["sh", "-c", f"echo $STATGRID_ARRAY_INDEX $STATGRID_JOB_ID >> {marker}"],
                             name=f"ka{trial}[1-{ARRAY_SIZE}]", cwd=str(grid.root), env=BIG_ENV, key=key)

    arrays: dict[int, int] = {}

    def warm_up(trial: int):
        return lambda: arrays.__setitem__(trial, submit(no_retry_client(grid), trial)["flow_id"])

    rtt_s = trial_rtt_s([warm_up(t) for t in (0, 1001, 1002)])
    seed = int(os.environ.get("STATGRID_KILL9_SEED", time.time_ns() % 10**6)) + 1
    print(f"seed {seed}, submit round trip {rtt_s * 1000:.1f} ms")
    outcomes = []
    for trial, (strategy, delay_s) in enumerate(strategies(ARRAY_TRIALS, rtt_s, seed), start=1):
        name, key = f"ka{trial}", str(uuid.uuid4())
        out = kill_trial(grid, name, lambda: submit(no_retry_client(grid), trial, key), strategy, delay_s)
        rows = flow_rows(grid, name)
        assert rows == [] or (len(rows) == 1 and rows[0][1] == ARRAY_SIZE), (trial, strategy, out, rows)
        if out["answer"] is not None:
            assert rows and out["answer"]["flow_id"] == rows[0][0]
        again = submit(grid.client, trial, key)
        after = flow_rows(grid, name)
        assert len(after) == 1 and after[0][1] == ARRAY_SIZE, (trial, after)
        if rows:
            assert again["flow_id"] == rows[0][0]
        arrays[trial] = again["flow_id"]
        outcomes.append((strategy, "stored" if rows else "absent", out.get("at_kill")))
    print("outcomes:", outcomes)
    for trial, flow_id in arrays.items():
        jobs = grid.client.flow(flow_id)["jobs"]
        assert len(jobs) == ARRAY_SIZE
        assert {j["state"] for j in grid.wait([j["id"] for j in jobs], timeout_s=300)} == {"DONE"}
        lines = (grid.root / "runs" / f"ka{trial}.txt").read_text().split()
        ran = sorted(zip(map(int, lines[::2]), map(int, lines[1::2])))
        assert ran == sorted((int(j["name"].split("[")[1][:-1]), j["id"]) for j in jobs), (trial, ran)


def test_the_cli_retries_a_lost_flow_submit_with_its_key_and_submits_once(grid):
    """`statgrid flow submit` whose master is killed under it: it sends the flow again with the
    key it made, and gets the flow (stored before the kill, or after the restart) — once."""
    for trial in range(101, 104):
        name = f"kf{trial}"
        path = flow_file(grid, trial)
        pid = master_pid(grid)
        cli = subprocess.Popen([sys.executable, "-m", "statgrid", "flow", "submit", str(path)], cwd=grid.root,
                               env={**os.environ, **grid.env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        stop, seen = threading.Event(), {}
        watcher = threading.Thread(target=kill_when_seen, args=(grid, pid, name, stop, seen))
        watcher.start()
        watcher.join(120)
        assert "at_kill" in seen
        wait_gone([pid])
        restart(grid)
        stdout, stderr = cli.communicate(timeout=120)
        assert cli.returncode == 0, stderr
        rows = flow_rows(grid, name)
        assert len(rows) == 1 and rows[0][1] == 5 and int(stdout) == rows[0][0], (rows, stdout, stderr)
        jobs = grid.client.flow(rows[0][0])["jobs"]
        assert {j["state"] for j in grid.wait([j["id"] for j in jobs], timeout_s=300)} == {"DONE"}
        assert len((grid.root / "runs" / f"{name}.txt").read_text().split()) == 10


def test_a_used_key_with_another_request_is_refused_with_409(grid):
    key = str(uuid.uuid4())
    job = grid.client.submit(["true"], cwd=str(grid.root), env={"PATH": os.environ["PATH"]}, key=key)
    assert grid.client.submit(["true"], cwd=str(grid.root), env={"PATH": os.environ["PATH"]}, key=key)["id"] == job["id"]
    with pytest.raises(StatgridError) as refused:
        grid.client.submit(["false"], cwd=str(grid.root), env={"PATH": os.environ["PATH"]}, key=key)
    assert f"Idempotency-Key {key!r} was used at " in str(refused.value)
    assert f"for another submit (job {job['id']}); a retry must send the same request" in str(refused.value)
    # the status, as a raw HTTP client sees it
    import http.client

    from statgrid.grid.interface import localsock

    conn = http.client.HTTPConnection("localhost")
    conn.sock = localsock.connect(localsock.socket_path(grid.home), 30)
    conn.request("POST", "/jobs", body=json.dumps({"argv": ["false"], "cwd": str(grid.root)}),
                 headers={"Content-Type": "application/json", "Idempotency-Key": key})
    resp = conn.getresponse()
    assert resp.status == 409 and "was used at" in json.loads(resp.read())["error"]
    conn.request("POST", "/jobs", body=json.dumps({"argv": ["true"], "cwd": str(grid.root)}),
                 headers={"Content-Type": "application/json", "Idempotency-Key": "a b"})
    resp = conn.getresponse()
    assert resp.status == 400 and "Idempotency-Key 'a b' is not valid" in json.loads(resp.read())["error"]
    conn.close()
    # the CLI: a key given twice with the same command answers the same job
    a = grid.cli("submit", "--idempotency-key", "cli-key-1", "--", "true")
    b = grid.cli("submit", "--idempotency-key", "cli-key-1", "--", "true")
    assert a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout, (a.stderr, b.stderr)


@pytest.mark.root
def test_keys_are_per_user_one_users_key_never_answers_anothers_jobs(make_users, site_install):
    """alice and bob (real OS users, on a grid run by root) send the same key with the same
    request: each gets a job of their own; each retry answers their own."""
    import shutil
    import tempfile

    from tests.support.multiuser import run_as

    alice, bob = make_users(2)
    root = Path(tempfile.mkdtemp(prefix="statgrid-keys-"))
    os.chmod(root, 0o711)                                 # the users reach the socket and grid.toml by name
    try:
        g = gridtest.Grid(root, GRID_TOML)
        os.chmod(g.toml, 0o644)
        os.chmod(g.home, 0o755)
        script = ("import json, sys\nfrom statgrid.config import load_config\nfrom statgrid.grid.interface.client import "
                  "GridClient\ncfg = load_config(sys.argv[1], {'STATGRID_HOME': sys.argv[2]})\n"
                  "job = GridClient(cfg).submit(['true'], cwd='/tmp', env={'PATH': '/usr/bin:/bin'}, key=sys.argv[3])\n"
                  "print(json.dumps({'id': job['id'], 'user': job['user']}))\n")
        key = str(uuid.uuid4())

        def submit_as(user) -> dict:
            done = run_as(user, [str(site_install.python), "-c", script, str(g.toml), str(g.home), key], cwd="/tmp")
            assert done.returncode == 0, done.stderr
            return json.loads(done.stdout)

        with gridtest.running(g):
            a = submit_as(alice)
            b = submit_as(bob)
            assert a["user"] == alice.name and b["user"] == bob.name and a["id"] != b["id"]
            assert submit_as(alice) == a and submit_as(bob) == b
            # root, an administrator, with the same key: a job of root's own, not theirs
            mine = g.client.submit(["true"], cwd="/tmp", env={"PATH": "/usr/bin:/bin"}, key=key)
            assert mine["id"] not in (a["id"], b["id"]) and mine["user"] == "root"
            g.wait([a["id"], b["id"], mine["id"]])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_client_whose_master_does_not_come_back_says_how_to_retry_safely(grid):
    name = "kf201"
    spec = flowfile.load(flow_file(grid, 201))
    pid = master_pid(grid)
    client = GridClient(grid.cfg, submit_retry_s=2)
    out: dict = {}

    def send() -> None:
        try:
            out["answer"] = client.submit_flow(spec, cwd=str(grid.root), env=BIG_ENV, key="retry-me-201")
        except StatgridError as exc:
            out["error"] = str(exc)

    stop = threading.Event()
    watcher = threading.Thread(target=kill_when_seen, args=(grid, pid, name, stop, out))
    sender = threading.Thread(target=send)
    watcher.start()
    sender.start()
    sender.join(120)
    stop.set()
    watcher.join()
    wait_gone([pid])
    if "answer" not in out:                         # the answer was lost: the client says what to do
        assert "Whether it stored the submit is unknown" in out["error"], out
        assert "statgrid flow submit --idempotency-key retry-me-201 FILE" in out["error"]
    restart(grid)
    rows = flow_rows(grid, name)
    assert len(rows) == 1 and rows[0][1] == 5       # killed once its rows were seen: stored, whole
    again = grid.client.submit_flow(spec, cwd=str(grid.root), env=BIG_ENV, key="retry-me-201")
    assert again["id"] == rows[0][0] and flow_rows(grid, name) == rows
    grid.wait([j["id"] for j in again["jobs"]], timeout_s=300)
