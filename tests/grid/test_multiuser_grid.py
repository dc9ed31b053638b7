"""A shared grid as a site runs it (issue 15): installed under /opt from the system's Python, run by
root, used by real OS users through the real CLI and the HTTP API.

alice's jobs run as alice; bob cannot read her output, environment or WORK, cannot kill her job
or stop the grid; carol, a grid administrator, may; the store is root's alone; a remote client
with a token submits over HTTPS and without one is refused; a personal grid serves only its own
account. Skipped with the reason where users cannot be made (not root, no useradd/setpriv) or the
site install cannot be built.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest

from statgrid.bench.mixed import free_port
from tests.conftest import WAIT_S, wait_for
from tests.support.multiuser import (create_user, mkdir_as, remove_user, run_as, site_install,
                             skip_unless_users_can_be_made, write_as)
from tests.support.gridtoml import SHARED_SECTIONS, toml_text

__all__ = ["site_install"]   # a fixture, used by name

GRID_TOML = toml_text({"node1": 2, "node2": 2}, **SHARED_SECTIONS)
SECRET = "s3cret-of-alice"


class SharedGrid:
    def __init__(self, site, root: Path, people: dict, toml: str = GRID_TOML):
        self.site, self.root, self.people = site, root, people
        self.home = root / "home"
        self.home.mkdir()
        for lib in ("data", "work", "util"):
            (root / lib).mkdir(mode=0o1777)
            os.chmod(root / lib, 0o1777)
        self.port = free_port()
        self.toml = root / "grid.toml"
        self.toml.write_text(toml.format(admin=people["carol"].name, root=root, port=self.port))
        os.chmod(self.toml, 0o644)
        self.env = {"STATGRID_HOME": str(self.home), "STATGRID_CONFIG": str(self.toml)}

    def root_cli(self, *args, timeout=300) -> subprocess.CompletedProcess:
        env = {"PATH": f"{self.site.bin_dir}:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8", **self.env}
        return subprocess.run([str(self.site.statgrid), *args], env=env, capture_output=True, text=True,
                              timeout=timeout, cwd=self.root)

    def cli(self, who: str, *args, env=None, timeout=120) -> subprocess.CompletedProcess:
        return run_as(self.people[who], ["statgrid", *args], env={**self.env, **(env or {})}, timeout=timeout,
                      site=self.site)

    def submit(self, who: str, *argv, env=None) -> int:
        done = self.cli(who, "submit", *argv, env=env)
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[-1])

    def job(self, who: str, job_id: int) -> dict:
        done = self.cli(who, "job", str(job_id), "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def wait(self, who: str, job_id: int) -> dict:
        self.cli(who, "wait", str(job_id), "--timeout", str(int(WAIT_S)), timeout=WAIT_S + 60)
        return self.job(who, job_id)

    def wait_started(self, who: str, job_id: int) -> dict:
        return wait_for(lambda: (job := self.job(who, job_id))["pid"] is not None and job["start_ts"] is not None
                        and job, f"job {job_id} to start", state=lambda: self.job(who, job_id), every_s=0.1)


@contextlib.contextmanager
def made_people(roles=("alice", "bob", "carol")):
    """Real users for the roles (removed at the end, with everything they still run)."""
    skip_unless_users_can_be_made()
    made = {}
    try:
        for role in roles:
            made[role] = create_user(role)
        yield made
    finally:
        for user in made.values():
            remove_user(user.name)


@contextlib.contextmanager
def shared_grid(site, people: dict, toml: str = GRID_TOML, prefix: str = "sgmu-"):
    """A SharedGrid up (`grid up --detach` as root) for the block; down after it, with no process left."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(root, 0o755)
    g = SharedGrid(site, root, people, toml)
    g.up = g.root_cli("grid", "up", "--detach")
    assert g.up.returncode == 0, g.up.stderr + g.up.stdout
    try:
        yield g
    finally:
        down = g.root_cli("grid", "down")
        leftover = subprocess.run(["pgrep", "-f", str(g.home)], capture_output=True, text=True).stdout.split()
        shutil.rmtree(root, ignore_errors=True)
        assert down.returncode == 0, down.stderr
        assert not leftover, f"processes of the grid left: {leftover}"


@pytest.fixture(scope="module")
def people():
    with made_people() as made:
        yield made


@pytest.fixture(scope="module")
def grid(site_install, people):
    with shared_grid(site_install, people) as g:
        yield g


@pytest.mark.root
def test_a_job_runs_as_its_submitter_with_her_home_and_her_files(grid, people):
    alice = people["alice"]
    job_id = grid.submit("alice", "sh", "-c", "id -u; id -g; echo HOME=$HOME; echo USER=$USER")
    job = grid.wait("alice", job_id)
    assert job["state"] == "DONE", job
    out = grid.cli("alice", "peek", str(job_id))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(alice.uid), str(alice.gid), f"HOME={alice.home}", f"USER={alice.name}"]
    job_dir = grid.home / "jobs" / str(job_id)
    st = job_dir.stat()
    assert (st.st_uid, st.st_mode & 0o777) == (alice.uid, 0o700)
    st = (job_dir / "output.txt").stat()
    assert (st.st_uid, st.st_mode & 0o777) == (alice.uid, 0o600)
    # the grid's record of the attempt is not hers to change
    attempts = list((grid.home / "grid" / "attempts").glob(f"{job_id}.*.json"))
    assert attempts and all(a.stat().st_uid == 0 and a.stat().st_mode & 0o077 == 0 for a in attempts)


@pytest.mark.root
def test_a_session_job_has_work_and_util_of_her_own(grid, people):
    alice = people["alice"]
    job = write_as(alice, alice.home / "work_owner.py", textwrap.dedent("""\
        import os
        import statgrid

        with statgrid.session(memsize="256M", threads=1) as s:
            for d in (s.work.path, s.util.path):
                st = os.stat(d)
                print("owner", st.st_uid, oct(st.st_mode & 0o7777))
            s.sql("CREATE TABLE work.t AS SELECT range AS x FROM range(10)")
        """))
    job_id = grid.submit("alice", str(job))
    rec = grid.wait("alice", job_id)
    out = grid.cli("alice", "peek", str(job_id)).stdout
    assert rec["state"] == "DONE", (rec, out)
    assert out.count(f"owner {alice.uid} 0o700") == 2, out
    assert rec["stimer"] is not None                          # hers to see
    # WORK went with the session; the roots stay everyone's (sticky)
    assert list((grid.root / "work").iterdir()) == []
    assert (grid.root / "work").stat().st_mode & 0o7777 == 0o1777


@pytest.mark.root
def test_bob_cannot_read_or_kill_alices_job_nor_stop_the_grid(grid, people):
    alice, bob = people["alice"], people["bob"]
    job_id = grid.submit("alice", "sh", "-c", 'echo "$SECRET_TOKEN-in-output"; sleep 3600', env={"SECRET_TOKEN": SECRET})
    job = grid.wait_started("alice", job_id)

    peek = grid.cli("bob", "peek", str(job_id))
    assert peek.returncode == 1 and f"belongs to {alice.name!r}" in peek.stderr and SECRET not in peek.stdout, peek
    assert "grid administrator" in peek.stderr
    killed = grid.cli("bob", "kill", str(job_id))
    assert killed.returncode == 1 and f"only {alice.name!r} or a grid administrator" in killed.stderr, killed
    down = grid.cli("bob", "grid", "down")
    assert down.returncode == 1 and "may stop the grid" in down.stderr, down
    assert grid.job("alice", job_id)["state"] == "RUN"        # all refused: still running, grid up

    # the metadata is everyone's; her environment and STIMER records are not
    seen = grid.cli("bob", "job", str(job_id), "--json")
    assert seen.returncode == 0 and SECRET not in seen.stdout
    listed = grid.cli("bob", "jobs", "-u", "all", "--json")
    assert str(job_id) in listed.stdout and SECRET not in listed.stdout

    # nor through the files: her job's directory, its process, the grid's store and log
    job_dir = grid.home / "jobs" / str(job_id)
    for argv in (["cat", str(job_dir / "output.txt")], ["ls", str(job_dir)],
                 ["cat", f"/proc/{job['pid']}/environ"], ["cat", str(grid.home / "grid" / "jobs.db")],
                 ["cat", str(grid.home / "grid" / "engine.json")], ["ls", str(grid.home / "grid" / "tls")]):
        read = run_as(bob, argv)
        assert read.returncode != 0 and "Permission denied" in read.stderr, (argv, read)
    found = run_as(bob, ["grep", "-r", "-l", SECRET, str(grid.home), str(grid.root / "work")])
    assert found.stdout == "", found.stdout                    # nothing bob can read holds it

    done = grid.cli("alice", "kill", str(job_id))
    assert done.returncode == 0, done.stderr
    assert grid.wait("alice", job_id)["state"] == "KILLED"
    audit = [json.loads(line) for line in (grid.home / "grid" / "audit.log").read_text().splitlines()]
    assert {"user": bob.name, "action": "kill", "target": f"job {job_id}", "outcome": "refused"}.items() \
        <= next(a for a in audit if a["user"] == bob.name and a["action"] == "kill").items()
    assert any(a["user"] == bob.name and a["action"] == "POST /grid/down" and a["outcome"] == "refused" for a in audit)
    assert any(a["user"] == alice.name and a["action"] == "kill" and a["outcome"] == "ok" for a in audit)
    assert (grid.home / "grid" / "audit.log").stat().st_mode & 0o077 == 0


@pytest.mark.root
def test_bob_cannot_change_alices_queue_work(grid, people):
    """Issue 18's verbs on another user's jobs, flows and calendars: each refused, naming the owner,
    and nothing changed; an administrator may; an anonymous client gets 401."""
    import urllib.error
    import urllib.request

    alice = people["alice"]
    running = grid.submit("alice", "sleep", "3600")          # killed at the end, however long the test takes
    grid.wait_started("alice", running)
    waiting = grid.submit("alice", "-w", f"done({running})", "true")
    flow_file = write_as(alice, alice.home / "f.toml", 'name = "mine"\n[jobs.a]\ncommand = ["sleep", "3600"]\n')
    flow = grid.cli("alice", "flow", "submit", str(flow_file))
    assert flow.returncode == 0, flow.stderr
    cal = grid.cli("alice", "schedule", "add", "--cron", "0 3 * * *", "--tz", "UTC", "--", "true")
    assert cal.returncode == 0, cal.stderr
    flow_id, cal_id = int(flow.stdout), int(cal.stdout)
    for argv in (["suspend", str(running)], ["resume", str(running)], ["modify", str(waiting), "-sp", "9"],
                 ["top", str(waiting)], ["bottom", str(waiting)], ["flow", "kill", str(flow_id)],
                 ["schedule", "remove", str(cal_id)]):
        refused = grid.cli("bob", *argv)
        assert refused.returncode == 1 and f"belongs to {alice.name!r}" in refused.stderr, (argv, refused)
    listed = grid.cli("bob", "schedule", "list", "--all")
    assert listed.returncode == 1 and "may list everyone's calendars" in listed.stderr
    assert grid.cli("bob", "schedule", "list").stdout.startswith("No calendar")
    assert grid.job("alice", running)["state"] == "RUN" and grid.job("alice", waiting)["priority"] == 0
    assert "true" in grid.cli("alice", "schedule", "list").stdout
    # a sub-task of her job, handed in by bob, is refused (the API's check; the CLI has no option for it)
    body = json.dumps({"argv": ["true"], "cwd": str(people["bob"].home), "parent_id": running})
    sock = grid.home / "grid" / "master.sock"
    sent = run_as(people["bob"], ["curl", "-s", "--unix-socket", str(sock), "-H", "Content-Type: application/json",
                                  "-d", body, "http://localhost/jobs"])
    assert f"job {running} belongs to {alice.name!r}; you ({people['bob'].name!r}) cannot add sub-tasks" in sent.stdout
    for path in ("/shares", "/flows", "/schedules", f"/flows/{flow_id}"):
        try:
            urllib.request.urlopen(f"https://127.0.0.1:{grid.port}{path}", timeout=10,
                                   context=__import__("ssl")._create_unverified_context())
            raise AssertionError(f"{path} answered an anonymous client")
        except urllib.error.HTTPError as exc:
            assert exc.code == 401, (path, exc.code)
    # carol administers the grid: she may
    for argv in (["suspend", str(running)], ["resume", str(running)], ["top", str(waiting)],
                 ["flow", "kill", str(flow_id)], ["schedule", "remove", str(cal_id)]):
        done = grid.cli("carol", *argv)
        assert done.returncode == 0, (argv, done.stderr)
    grid.cli("alice", "kill", str(running), str(waiting))


@pytest.mark.root
def test_an_administrator_may_kill_anyones_job(grid, people):
    job_id = grid.submit("bob", "sleep", "3600")
    grid.wait_started("bob", job_id)
    killed = grid.cli("carol", "kill", str(job_id))
    assert killed.returncode == 0, killed.stderr
    rec = grid.wait("bob", job_id)
    assert rec["state"] == "KILLED" and rec["user"] == people["bob"].name
    who = grid.cli("carol", "whoami")
    assert "grid administrator" in who.stdout, who


@pytest.mark.root
def test_only_an_administrator_closes_and_opens_hosts(grid, people):
    refused = grid.cli("bob", "host", "close", "node2", "--reason", "mine now")
    assert refused.returncode == 1 and "only a grid administrator (root, or" in refused.stderr, refused
    closed = grid.cli("carol", "host", "close", "node2", "--reason", "memory test")
    assert closed.returncode == 0, closed.stderr
    shown = grid.cli("bob", "hosts")
    assert f"{people['carol'].name}: memory test" in shown.stdout, shown.stdout
    reopen = grid.cli("bob", "host", "open", "node2")
    assert reopen.returncode == 1 and "may open host 'node2'" in reopen.stderr
    opened = grid.cli("carol", "host", "open", "node2")
    assert opened.returncode == 0, opened.stderr


@pytest.mark.root
def test_nobody_submits_as_another_user(grid, people):
    """The API takes the user from the kernel or the token, never from what the client says."""
    body = json.dumps({"argv": ["true"], "cwd": str(people["bob"].home), "user": people["alice"].name})
    sock = grid.home / "grid" / "master.sock"
    sent = run_as(people["bob"], ["curl", "-s", "--unix-socket", str(sock), "-H", "Content-Type: application/json",
                                  "-d", body, "http://localhost/jobs"])
    assert "nobody (root included) submits for another user" in sent.stdout, sent


@pytest.mark.root
def test_the_master_is_no_oracle_for_paths_bob_cannot_read(grid, people):
    """The master (root) does not look at a job's files for another account: bob gets the same answer
    for a file that exists in alice's private directory and one that does not, and the node, as bob,
    ends both jobs EXIT because he cannot enter that directory."""
    alice, bob = people["alice"], people["bob"]
    private = mkdir_as(alice, alice.home / "private", mode=0o700)
    write_as(alice, private / "plan.py", "print('secret plan')\n", mode=0o600)
    sock = grid.home / "grid" / "master.sock"
    answers = []
    for name in ("plan.py", "nope.py"):
        body = json.dumps({"argv": [name], "cwd": str(private), "env": {"PATH": "/usr/bin:/bin"}})
        sent = run_as(bob, ["curl", "-s", "--unix-socket", str(sock), "-H", "Content-Type: application/json",
                            "-d", body, "http://localhost/jobs"])
        answers.append(json.loads(sent.stdout))
    assert all("id" in a and "error" not in a for a in answers), answers      # the same answer for both
    for rec in answers:
        done = grid.wait("bob", rec["id"])
        assert done["state"] == "EXIT" and "cannot enter the working directory" in done["exit_reason"], done


@pytest.mark.root
def test_a_process_without_the_grids_key_cannot_reach_the_engine(grid, people):
    status = grid.cli("bob", "grid", "status")
    scheduler = status.stdout.split("scheduler: ")[1].split()[0]
    assert scheduler.startswith("tls://"), status.stdout
    probe = run_as(people["bob"], ["python", "-c", textwrap.dedent(f"""\
        from distributed import Client
        try:
            Client({scheduler.replace('tls://', 'tcp://')!r}, timeout=5)
            print("plain: connected")
        except Exception as exc:
            print("plain: refused", type(exc).__name__)
        try:
            Client({scheduler!r}, timeout=5)
            print("tls without a certificate: connected")
        except Exception as exc:
            print("tls without a certificate: refused", type(exc).__name__)
        """)], site=grid.site, timeout=120)
    assert "plain: refused" in probe.stdout and "tls without a certificate: refused" in probe.stdout, probe


@pytest.mark.root
def test_a_remote_client_needs_a_token_over_https(grid, people):
    alice = people["alice"]
    url = f"https://localhost:{grid.port}"
    # no token: refused, told how to get one, nothing stored
    before = len(grid.cli("alice", "jobs", "-a", "-u", "all", "--json").stdout)
    anon = run_as(alice, ["statgrid", "--master", url, "submit", "true"], env={"STATGRID_HOME": "/nonexistent"})
    assert anon.returncode == 1, anon
    assert "statgrid token create" in anon.stderr
    assert len(grid.cli("alice", "jobs", "-a", "-u", "all", "--json").stdout) == before
    curl = run_as(alice, ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert",
                          str(grid.home / "grid" / "ca.pem"), f"{url}/jobs"])
    assert curl.stdout == "401", curl

    made = grid.cli("alice", "token", "create", "--name", "laptop")
    assert made.returncode == 0, made.stderr
    conf = alice.home / ".config" / "statgrid" / "client.toml"
    assert conf.stat().st_uid == alice.uid and conf.stat().st_mode & 0o077 == 0
    token_id = int(made.stdout.split()[1])

    remote = {"STATGRID_HOME": "/nonexistent", "STATGRID_CONFIG": ""}   # as on a machine without the grid home
    sent = run_as(alice, ["statgrid", "--master", url, "submit", "sh", "-c", "id -u"], env=remote)
    assert sent.returncode == 0, sent.stderr
    job_id = int(sent.stdout.split()[-1])
    waited = run_as(alice, ["statgrid", "--master", url, "wait", str(job_id)], env=remote, timeout=180)
    assert waited.returncode == 0, waited
    peek = run_as(alice, ["statgrid", "--master", url, "peek", str(job_id)], env=remote)
    assert peek.stdout.split() == [str(alice.uid)], peek
    # a token cannot make another, and bob cannot revoke hers
    again = run_as(alice, ["statgrid", "--master", url, "token", "create"], env=remote)
    assert again.returncode == 1 and "local socket" in again.stderr
    bobs = grid.cli("bob", "token", "revoke", str(token_id))
    assert bobs.returncode == 1 and "belongs to" in bobs.stderr

    revoked = grid.cli("alice", "token", "revoke", str(token_id))
    assert revoked.returncode == 0, revoked.stderr
    after = run_as(alice, ["statgrid", "--master", url, "jobs"], env=remote)
    assert after.returncode == 1 and "revoked" in after.stderr, after


@pytest.mark.root
def test_a_personal_grid_serves_only_its_own_account(site_install, people):
    alice, bob = people["alice"], people["bob"]
    home = mkdir_as(alice, alice.home / "personal", mode=0o755)
    os.chmod(alice.home, 0o755)                 # bob must reach the socket to be told why not
    port = free_port()
    write_as(alice, home / "grid.toml", toml_text({"mine": 1}).format(port=port), mode=0o644)
    env = {"STATGRID_HOME": str(home)}
    os.chmod(home / "grid.toml", 0o600)
    unreadable = run_as(bob, ["statgrid", "jobs"], env=env, site=site_install)     # a clear error, no traceback
    assert unreadable.returncode == 2 and "cannot read the grid's configuration" in unreadable.stderr, unreadable
    os.chmod(home / "grid.toml", 0o644)
    up = run_as(alice, ["statgrid", "grid", "up", "--detach"], env=env, site=site_install, timeout=300)
    assert up.returncode == 0, up.stderr
    try:
        refused = run_as(bob, ["statgrid", "submit", "true"], env=env, site=site_install)
        assert refused.returncode == 1, refused
        assert f"this grid runs as {alice.name!r}, not as root" in refused.stderr
        assert f"accepts requests only from {alice.name!r}" in refused.stderr
        mine = run_as(alice, ["statgrid", "submit", "sh", "-c", "id -u"], env=env, site=site_install)
        assert mine.returncode == 0, mine.stderr
        job_id = mine.stdout.split()[-1]
        run_as(alice, ["statgrid", "wait", job_id], env=env, site=site_install, timeout=180)
        peek = run_as(alice, ["statgrid", "peek", job_id], env=env, site=site_install)
        assert peek.stdout.split() == [str(alice.uid)]
    finally:
        down = run_as(alice, ["statgrid", "grid", "down"], env=env, site=site_install, timeout=180)
    assert down.returncode == 0, down.stderr


@pytest.mark.root
def test_bob_cannot_enter_alices_work_while_her_session_runs(grid, people):
    alice, bob = people["alice"], people["bob"]
    job = write_as(alice, alice.home / "holds_work.py", textwrap.dedent("""\
        import sys
        import time
        import statgrid

        with statgrid.session(memsize="256M", threads=1) as s:
            s.sql("CREATE TABLE work.secret AS SELECT 42 AS x")
            print("WORK", s.work.path, flush=True)
            sys.stdout.flush()
            time.sleep(3600)                # killed below
        """))
    job_id = grid.submit("alice", str(job))
    out = wait_for(lambda: "WORK " in (text := grid.cli("alice", "peek", str(job_id)).stdout) and text,
                   "her session to print its WORK", state=lambda: grid.job("alice", job_id), every_s=0.1)
    work = out.split("WORK ", 1)[1].split()[0]
    assert Path(work).stat().st_uid == alice.uid
    for argv, says in ((["ls", work], "Permission denied"), (["cat", f"{work}/secret.parquet"], "Permission denied"),
                       (["rm", "-rf", work], "Operation not permitted")):        # the root's sticky bit
        tried = run_as(bob, argv)
        assert tried.returncode != 0 and says in tried.stderr, (argv, tried)
    assert Path(work).is_dir()
    assert grid.cli("alice", "kill", str(job_id)).returncode == 0
    assert grid.wait("alice", job_id)["state"] == "KILLED"
    assert not Path(work).exists()                                # the session removed it on SIGTERM


@pytest.mark.root
def test_peek_never_follows_what_alice_puts_in_her_job_directory(grid, people):
    """The master reads the output as root from a directory alice owns: a link to /etc/shadow, a FIFO
    or another account's file in place of output.txt is refused, and the master does not hang."""
    alice = people["alice"]
    job_id = grid.submit("alice", "echo", "hello")
    assert grid.wait("alice", job_id)["state"] == "DONE"
    output = grid.home / "jobs" / str(job_id) / "output.txt"
    for swap in (f"rm {output} && ln -s /etc/shadow {output}", f"rm {output} && mkfifo {output}"):
        made = run_as(alice, ["sh", "-c", swap])
        assert made.returncode == 0, made
        peek = grid.cli("alice", "peek", str(job_id))
        assert peek.returncode == 1 and "not shown" in peek.stderr and "root:" not in peek.stdout, peek
    assert grid.cli("alice", "jobs").returncode == 0                 # the master still answers


@pytest.mark.root
def test_the_console_shows_bob_the_metadata_of_alices_job_and_nothing_of_hers(grid, people):
    """The console's JSON (the pages are made from it) as bob and as alice, over HTTPS with their tokens."""
    import http.client
    import ssl

    job = write_as(people["alice"], people["alice"].home / "console_steps.py", textwrap.dedent("""\
        import statgrid

        with statgrid.session(memsize="256M", threads=1) as s:
            s.sql("CREATE TABLE work.t AS SELECT range AS x FROM range(10)")
            print("only-for-alice")
        """))
    job_id = grid.submit("alice", str(job))
    assert grid.wait("alice", job_id)["state"] == "DONE"
    tokens = {who: grid.cli(who, "token", "create", "--print").stdout.splitlines()[0] for who in ("alice", "bob")}
    ctx = ssl.create_default_context(cafile=str(grid.home / "grid" / "ca.pem"))

    def get(who: str, path: str) -> dict:
        c = http.client.HTTPSConnection("localhost", grid.port, context=ctx, timeout=30)
        try:
            c.request("GET", path, headers={"Authorization": f"Bearer {tokens[who]}"})
            r = c.getresponse()
            assert r.status == 200, r.read()
            return json.loads(r.read())
        finally:
            c.close()

    hers = get("alice", f"/console/api/jobs/{job_id}")
    assert hers["detail"] and hers["job"]["stimer"] is not None and hers["steps"] and "only-for-alice" in hers["log"]
    his = get("bob", f"/console/api/jobs/{job_id}")
    assert his["job"]["user"] == people["alice"].name and his["job"]["state"] == "DONE"
    assert (his["detail"], his["job"]["stimer"], his["steps"], his["usage"], his["log"]) == (False, None, [], [], "")
    listing = get("bob", "/console/api/jobs?state=all")
    assert [j["stimer"] for j in listing["jobs"] if j["id"] == job_id] == [None]
