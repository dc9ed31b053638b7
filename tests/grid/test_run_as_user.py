"""Jobs run as the person who submitted them (issue 15, part 3), with real OS users and the real
launcher: a node run as root switches each job to its user (looked up by name here, refused when
unknown or when its ids differ from the master's), gives it the job's directory and its output;
a node run as an ordinary user runs only that user's jobs. Attempt records stay the grid's.

Needs root (to create users with useradd and to run a root launcher); skipped otherwise. Every
user made here is removed (userdel -r) and its processes killed when the module ends.
"""
from __future__ import annotations

import dataclasses
import grp
import json
import logging
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from statgrid.grid.master import core as master
from statgrid.grid.execution import node
from statgrid.grid.master.core import identity_of
from statgrid.job.protocol import AttemptFinished, Identity, LaunchRequest, attempt_from_dict
from statgrid.host.scratch import clean_stale
from statgrid.grid.interface.client import GridClient
from tests.support.gridtest import Grid, running
from tests.conftest import WAIT_S, wait_for
from tests.support.gridtoml import toml_text
from tests.support.multiuser import known

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: to create users (useradd) and run jobs as them"),
    pytest.mark.skipif(shutil.which("useradd") is None or shutil.which("userdel") is None,
                       reason="needs useradd and userdel to create and remove test users"),
]

LAUNCHER = Path(node.__file__).with_name("launcher.py")
WORKTREE = str(Path(__file__).resolve().parents[2])
PATH = "/usr/local/bin:/usr/bin:/bin"
# The grid's interpreter may sit under root's 0700 home (a virtualenv's base): other users run the
# system's Python (3.11, with this worktree and the same site-packages on their path for sessions).
SYSTEM_PYTHON = "/usr/bin/python3"
USER_PYTHONPATH = f"{WORKTREE}:{sysconfig.get_paths()['purelib']}"
# How the launcher names where it runs: the grid's host name, and the machine's if it differs.
WHERE = "host node1" if socket.gethostname() == "node1" else f"host node1 (machine {socket.gethostname()})"


def _kill_processes_of(uid: int) -> None:
    for p in psutil.process_iter():
        try:
            if p.uids().real == uid:
                p.kill()
        except psutil.NoSuchProcess:
            pass


@pytest.fixture(scope="module")
def user():
    """A fresh OS user (its own group, and the 'users' group besides if there is one)."""
    name = f"sgj{secrets.token_hex(2)}"
    extra = ["-G", "users"] if known(grp.getgrnam, "users") else []
    made = subprocess.run(["useradd", "-m", "-s", "/bin/sh", *extra, name], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"useradd {name} failed: {made.stderr.strip()}")
    entry = pwd.getpwnam(name)
    try:
        yield entry
    finally:
        _kill_processes_of(entry.pw_uid)
        subprocess.run(["userdel", "-r", name], capture_output=True)


@pytest.fixture
def base():
    """A directory every user may reach (pytest's own tmp is under a 0700 directory of root's)."""
    path = Path(tempfile.mkdtemp(prefix="statgrid-runas-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)



def _job(base: Path, identity: Identity, argv, job_id: int = 1, env: dict | None = None, cwd: Path | None = None,
         work_roots=()) -> tuple[LaunchRequest, Path]:
    """A request as the master makes it: its job directory under <home>/jobs, its attempt file in
    <home>/grid/attempts (master.make_grid_dirs makes both, as the master does)."""
    cfg = SimpleNamespace(home=base / "home")
    master.make_grid_dirs(cfg)
    jdir = master.job_dir(cfg, job_id)
    jdir.mkdir(exist_ok=True)
    out = str(jdir / "output.txt")
    request = LaunchRequest(job_id=job_id, attempt=1, host="node1", argv=tuple(argv),
                            env={"PATH": PATH, **(env or {})}, cwd=str(cwd or base), job_dir=str(jdir),
                            work_roots=tuple(work_roots), stdout=out, stderr=out, identity=identity,
                            attempt_file=str(master.attempt_file(cfg, job_id, 1)))
    return request, jdir


def _run(request: LaunchRequest) -> AttemptFinished:
    outcome = node.run_job(request.to_dict())
    assert isinstance(outcome, AttemptFinished), outcome
    # The record the master reconciles from is the grid's: root's, 0600, in grid/attempts.
    path = Path(request.attempt_file)
    st = path.stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o600) and path.parent.name == "attempts"
    assert attempt_from_dict(json.loads(path.read_text())) == outcome
    assert not (Path(request.job_dir) / "attempt-1.json").exists()
    return outcome


def _groups_of(entry) -> set[int]:
    return {entry.pw_gid, *os.getgrouplist(entry.pw_name, entry.pw_gid)}


# -- a node run as root ------------------------------------------------------------------------------

@pytest.mark.root
def test_a_job_runs_as_its_user_with_their_groups_home_and_files(own_launcher, base, user):
    script = ('id -u; id -G; echo "$HOME"; echo "$USER $LOGNAME"; pwd; '
              'grep -E "^(Uid|Gid|CapEff):" /proc/self/status; touch mine.txt')
    # The submitter's shell said root's HOME and name: the account's own win.
    request, jdir = _job(base, identity_of(user.pw_name), ["sh", "-c", script], cwd=base / "home" / "jobs" / "1",
                         env={"HOME": "/root", "USER": "root", "LOGNAME": "root"})
    outcome = _run(request)
    text = (jdir / "output.txt").read_text()
    assert (outcome.exit_code, outcome.launch_error) == (0, None), text
    lines = text.splitlines()
    assert int(lines[0]) == user.pw_uid
    assert {int(g) for g in lines[1].split()} == _groups_of(user)
    assert lines[2:5] == [user.pw_dir, f"{user.pw_name} {user.pw_name}", str(jdir)]
    # Real, effective, saved and file-system ids all the user's; no capability left.
    assert lines[5].split()[1:] == [str(user.pw_uid)] * 4 and lines[6].split()[1:] == [str(user.pw_gid)] * 4
    assert int(lines[7].split()[1], 16) == 0
    # The job's directory and its files are the user's; the output private to them.
    for path, mode in ((jdir, 0o700), (jdir / "output.txt", 0o600), (jdir / "mine.txt", None)):
        st = path.stat()
        assert (st.st_uid, st.st_gid) == (user.pw_uid, user.pw_gid), path
        if mode is not None:
            assert stat.S_IMODE(st.st_mode) == mode, path
    jobs = (base / "home" / "jobs").stat()
    assert (jobs.st_uid, stat.S_IMODE(jobs.st_mode)) == (0, 0o755)     # <home>/jobs stays the grid's


@pytest.mark.root
def test_a_job_of_root_runs_as_root(own_launcher, base):
    request, jdir = _job(base, identity_of("root"), ["sh", "-c", "id -u"])
    assert _run(request).exit_code == 0
    assert (jdir / "output.txt").read_text() == "0\n"
    assert jdir.stat().st_uid == 0


@pytest.mark.root
@pytest.mark.parametrize("change, reason", [
    (dict(uid=None, gid=None, groups=()), "user {name!r} is unknown on the master (it has no uid for them) but uid "
                                          "{uid} gid {gid} on {where}: the user databases disagree"),
    ("uid", "user {name!r} is uid {uid2} gid {gid} on the master but uid {uid} gid {gid} on {where}: the user "
            "databases disagree; give the account the same uid and gid on the master and on every host"),
    ("gid", "user {name!r} is uid {uid} gid {gid2} on the master but uid {uid} gid {gid} on {where}"),
], ids=["unknown-to-master", "uid-differs", "gid-differs"])
def test_a_job_whose_ids_differ_here_is_refused_naming_both(own_launcher, base, user, change, reason):
    ident = identity_of(user.pw_name)
    if change == "uid":
        ident = dataclasses.replace(ident, uid=user.pw_uid + 1000)
    elif change == "gid":
        ident = dataclasses.replace(ident, gid=user.pw_gid + 1000)
    else:
        ident = dataclasses.replace(ident, **change)
    request, jdir = _job(base, ident, ["sh", "-c", "echo ran > /tmp/never"])
    outcome = _run(request)
    expected = reason.format(name=user.pw_name, uid=user.pw_uid, gid=user.pw_gid, uid2=user.pw_uid + 1000,
                             gid2=user.pw_gid + 1000, where=WHERE)
    assert outcome.pid is None and outcome.launch_error.startswith(expected), outcome.launch_error
    assert not (jdir / "output.txt").exists() and jdir.stat().st_uid == 0      # nothing given, nothing run


@pytest.mark.root
def test_a_job_of_a_user_unknown_here_is_refused(own_launcher, base):
    name = f"sgjno{secrets.token_hex(2)}"
    request, jdir = _job(base, Identity(user=name, uid=4242, gid=4242, groups=(4242,)), ["true"])
    outcome = _run(request)
    assert outcome.launch_error.startswith(
        f"user {name!r} is unknown on {WHERE}: no such account in this machine's user database; the account "
        "must exist, with the same uid and gid, on the master and on every host"), outcome.launch_error
    assert not (jdir / "output.txt").exists()


@pytest.mark.root
def test_an_output_file_planted_as_a_link_is_not_followed(own_launcher, base, user):
    """The job's directory is its user's: an output.txt they left there as a link to a file of
    root's is opened as the user, without following it, and the job does not start."""
    secret = base / "root-only.txt"
    secret.write_text("root's\n")
    secret.chmod(0o600)
    request, jdir = _job(base, identity_of(user.pw_name), ["sh", "-c", "echo ran"])
    (jdir / "output.txt").symlink_to(secret)
    outcome = _run(request)
    assert outcome.pid is None and outcome.launch_error.startswith(
        f"user {user.pw_name!r} cannot open the job's output file {str(jdir / 'output.txt')!r}: "), outcome
    assert "must not be a symbolic link" in outcome.launch_error
    assert secret.read_text() == "root's\n" and secret.stat().st_uid == 0


@pytest.mark.root
def test_a_job_directory_that_is_a_link_is_not_given_away(own_launcher, base, user):
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    request, jdir = _job(base, identity_of(user.pw_name), ["true"], job_id=2)
    jdir.rmdir()
    jdir.symlink_to(elsewhere)
    outcome = _run(request)
    assert outcome.launch_error.startswith(f"cannot give the job directory {str(jdir)!r} to user "
                                           f"{user.pw_name!r} on {WHERE}: "), outcome.launch_error
    assert elsewhere.stat().st_uid == 0


@pytest.mark.root
def test_a_job_directory_the_user_cannot_reach_fails_with_the_reason(own_launcher, base, user):
    """A grid home under a directory only root may enter (root's own 0700 tmp): the job's process
    cannot open its output as the user. That comes back as the launch error, not a silent exit 127."""
    (base / "locked").mkdir(mode=0o700)
    request, jdir = _job(base / "locked", identity_of(user.pw_name), ["true"])
    outcome = _run(request)
    assert outcome.pid is None and outcome.launch_error.startswith(
        f"user {user.pw_name!r} cannot open the job's output file {str(jdir / 'output.txt')!r}: Permission denied; "
        f"the job directory must be reachable by {user.pw_name!r}"), outcome.launch_error


@pytest.mark.root
def test_a_working_directory_the_user_cannot_enter_fails_with_the_reason(own_launcher, base, user):
    private = base / "private"
    private.mkdir(mode=0o700)
    request, jdir = _job(base, identity_of(user.pw_name), ["true"], cwd=private)
    outcome = _run(request)
    assert outcome.launch_error == (f"user {user.pw_name!r} cannot enter the working directory {str(private)!r}: "
                                    f"Permission denied; submit from a directory {user.pw_name!r} may enter")


@pytest.mark.root
def test_a_command_that_cannot_run_still_ends_like_a_shell(own_launcher, base, user):
    request, jdir = _job(base, identity_of(user.pw_name), ["no-such-command-xyz"])
    outcome = _run(request)
    assert (outcome.exit_code, outcome.launch_error) == (127, None)
    assert "cannot run 'no-such-command-xyz'" in (jdir / "output.txt").read_text()


@pytest.mark.root
def test_a_users_job_ends_with_its_killed_launcher(own_launcher, base, user):
    """The parent-death signal is set after the switch to the user (a change of uid clears it): a
    user's job, and what it started, end when the launcher is killed."""
    import threading

    from statgrid.job.protocol import AttemptLost
    from tests.conftest import wait_gone

    request, jdir = _job(base, identity_of(user.pw_name), ["sh", "-c", "sleep 300 & echo $! > bg.pid; sleep 300"],
                         cwd=base / "home" / "jobs" / "1")
    result: list = []
    thread = threading.Thread(target=lambda: result.append(node.run_job(request.to_dict())))
    thread.start()
    started = json.loads(_wait_for_file(Path(request.attempt_file)))
    bg = int(_wait_for_file(jdir / "bg.pid"))
    assert psutil.Process(started["pid"]).uids().real == user.pw_uid
    os.kill(node.launcher_pid(), signal.SIGKILL)
    thread.join(WAIT_S)
    wait_gone([started["pid"], bg])
    (outcome,) = result
    assert isinstance(outcome, AttemptLost) and outcome.reason == "host lost: the launcher of node1 died"


def _wait_for_file(path: Path) -> str:
    def text():
        try:
            got = path.read_text()
        except FileNotFoundError:
            return None
        return got if got.strip() else None
    return wait_for(text, f"{path} to be written", every_s=0.02)


# -- sessions as their user: WORK and UTIL ----------------------------------------------------------------

def _as_user(entry) -> dict:
    return dict(user=entry.pw_uid, group=entry.pw_gid, extra_groups=sorted(_groups_of(entry) - {entry.pw_gid}))


def _system_python_for(entry) -> None:
    check = subprocess.run([SYSTEM_PYTHON, "-c", "import sys, duckdb, statgrid.host.scratch; "
                                                 "assert sys.version_info[:2] == (3, 11)"],
                           env={"PATH": PATH, "PYTHONPATH": USER_PYTHONPATH}, capture_output=True, **_as_user(entry))
    if check.returncode != 0:
        pytest.skip(f"{SYSTEM_PYTHON} cannot run statgrid as another user here: {check.stderr.decode()[-300:]}")


@pytest.mark.root
def test_a_session_job_runs_as_its_user_in_work_roots_the_node_made(own_launcher, base, user):
    _system_python_for(user)
    home = base / "home"
    roots = [str(home / "work"), str(home / "util")]
    node.prepare(work_roots=roots)                          # as root: makes the roots like /tmp
    (home / "data").mkdir(mode=0o755)                       # the shared DATA library, as an administrator makes it
    for root in roots:
        st = os.stat(root)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o1777)
    (base / "job.py").write_text(
        "import os, statgrid\n"
        "with statgrid.session() as s:\n"
        "    s.execute('create table work.t as select range as x from range(1000)')\n"
        "    print('rows', s.fetch_arrow('select count(*) from work.t').column(0)[0].as_py(), 'uid', os.getuid())\n"
        "    print('work', oct(os.stat(s.work.path).st_mode & 0o777), os.stat(s.work.path).st_uid)\n")
    request, jdir = _job(base, identity_of(user.pw_name), [], work_roots=roots)
    request = dataclasses.replace(request, argv=(SYSTEM_PYTHON, "-m", "statgrid", "run", str(base / "job.py"),
                                                 "--log-dir", str(jdir)),
                                  env={**request.env, "PYTHONPATH": USER_PYTHONPATH, "STATGRID_HOME": str(home)})
    outcome = _run(request)
    text = (jdir / "output.txt").read_text()
    assert outcome.exit_code == 0, text
    assert f"rows 1000 uid {user.pw_uid}" in text and f"work 0o700 {user.pw_uid}" in text
    assert outcome.stimer is not None and outcome.stimer["record"] == "total"
    for name in ("session.log", "session.stimer.jsonl"):
        assert (jdir / name).stat().st_uid == user.pw_uid
    assert [list(Path(r).iterdir()) for r in roots] == [[], []]     # the session removed its WORK and UTIL


@pytest.mark.root
def test_the_node_says_what_to_do_with_a_work_root_users_cannot_write(base, caplog):
    closed, open_ = base / "closed", base / "open"
    closed.mkdir(mode=0o755)
    open_.mkdir()
    open_.chmod(0o777)
    with caplog.at_level(logging.WARNING, logger="statgrid.node"):
        node.prepare_work_roots([str(closed), str(open_)])
    assert f"[libraries] root {closed} is mode 0755: jobs run as their users, who cannot create their WORK/UTIL " \
           f"directories there; make it like /tmp: chmod 1777 {closed}" in caplog.text
    assert f"[libraries] root {open_} is mode 0777, writable by all without the sticky bit" in caplog.text
    assert stat.S_IMODE(closed.stat().st_mode) == 0o755                # said, not changed


@pytest.mark.root
def test_a_session_that_cannot_create_work_names_the_path_and_the_fix(base, user):
    _system_python_for(user)
    root = base / "work"
    root.mkdir(mode=0o755)
    code = (f"from pathlib import Path; from statgrid.host.scratch import ScratchDir; "
            f"ScratchDir.create(Path({str(root)!r}), 'work', '1a_deadbeef')")
    run = subprocess.run([SYSTEM_PYTHON, "-c", code], env={"PATH": PATH, "PYTHONPATH": USER_PYTHONPATH},
                         capture_output=True, text=True, **_as_user(user))
    assert run.returncode != 0
    assert (f"StatgridError: cannot create the WORK directory {str(root / 'SGwork_1a_deadbeef')!r} as user "
            f"{user.pw_name!r}: Permission denied; {str(root)!r} is mode 0755, owned by root. Every user who runs "
            f"sessions must be able to create directories there: make it like /tmp (`chmod 1777 {root}`") in run.stderr


@pytest.mark.root
def test_root_cleans_the_work_of_a_dead_session_of_another_user(base, user):
    _system_python_for(user)
    root = base / "work"
    node.prepare_work_roots([str(root)])
    code = (f"import os, signal; from pathlib import Path; from statgrid.host.scratch import ScratchDir; "
            f"d = ScratchDir.create(Path({str(root)!r}), 'work', '1a_0000beef'); "
            f"os.kill(os.getpid(), signal.SIGKILL)")
    run = subprocess.run([SYSTEM_PYTHON, "-c", code], env={"PATH": PATH, "PYTHONPATH": USER_PYTHONPATH},
                         capture_output=True, text=True, **_as_user(user))
    assert run.returncode == -signal.SIGKILL, run.stderr
    (left,) = root.iterdir()
    assert left.stat().st_uid == user.pw_uid
    (result,) = clean_stale([root])
    assert result.action == "removed" and not left.exists(), result


# -- a node run as an ordinary user -------------------------------------------------------------------------

@pytest.fixture
def nobody_launcher(base):
    """launcher.py run as 'nobody' (setpriv), its socket in a directory of nobody's."""
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv to run the launcher as another user")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody' to run the launcher as")
    sock_dir = base / "sock"
    sock_dir.mkdir(mode=0o700)
    os.chown(sock_dir, nobody.pw_uid, nobody.pw_gid)
    path = str(sock_dir / "l.sock")
    argv = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
            SYSTEM_PYTHON, "-I", "-S", str(LAUNCHER), path, "--no-cgroup"]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        line = proc.stdout.readline()
        if line != b"ready\n":
            pytest.skip(f"the launcher did not start as nobody ({line!r}, exit {proc.poll()})")
        yield nobody, path
    finally:
        proc.stdin.close()
        proc.wait(timeout=WAIT_S)


def _ask(path: str, request: LaunchRequest) -> list[dict]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall((json.dumps(request.to_dict()) + "\n").encode())
        return [json.loads(line) for line in sock.makefile("rb")]


@pytest.mark.root
def test_a_launcher_run_as_an_ordinary_user_runs_only_its_own_users_jobs(nobody_launcher, base, user):
    nobody, path = nobody_launcher
    for job_id, ident in ((1, identity_of(user.pw_name)), (2, Identity(user=user.pw_name, uid=None, gid=None, groups=())),
                          (3, identity_of("root"))):
        request, jdir = _job(base, ident, ["sh", "-c", "echo ran"], job_id=job_id)
        (reply,) = _ask(path, request)
        whose = f"{ident.user!r} (uid {ident.uid})" if ident.uid is not None else \
            f"{ident.user!r}, whom the master does not know (no uid)"
        assert reply["type"] == "launch.failed" and reply["error"] == (
            f"this node runs as 'nobody' (uid {nobody.pw_uid}), not root, so it runs only nobody's jobs, and this is "
            f"a job of {whose}; submit it as 'nobody', or run the grid's nodes as root to run each user's jobs as "
            "that user"), reply
        assert not (jdir / "output.txt").exists()
    # Its own user's job runs, as that user.
    request, jdir = _job(base, identity_of("nobody"), ["sh", "-c", "id -u"], job_id=4)
    os.chown(jdir, nobody.pw_uid, nobody.pw_gid)               # a grid of nobody's makes its own directories
    started, exited = _ask(path, request)
    assert (started["type"], exited["type"], exited["exit_code"]) == ("launch.started", "launch.exited", 0)
    assert (jdir / "output.txt").read_text() == f"{nobody.pw_uid}\n"


# -- through a real grid -----------------------------------------------------------------------------------

GRID_TOML = toml_text({"node1": 2}, monitor=True)


def submit_as(grid: Grid, user: pwd.struct_passwd, *argv: str) -> int:
    """Submit a command as `user`: the master takes the user from the local socket's peer, so the
    request is sent by a child of this process that has become the user (the grid's python, under
    /root, is not theirs to run)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                  # the child: become the user, submit, report the id
        code = 1
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            job = GridClient(grid.cfg).submit(list(argv), cwd=str(grid.root), env={"PATH": PATH})
            os.write(w, str(job["id"]).encode())
            code = 0
        except BaseException as exc:             # noqa: BLE001 — said to the parent
            os.write(w, f"error: {exc}".encode())
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        said = f.read()
    os.waitpid(pid, 0)
    assert said.isdigit(), said
    return int(said)


@pytest.mark.root
def test_a_grid_run_as_root_runs_each_job_as_its_submitter(base, user):
    with running(Grid(base, GRID_TOML)) as grid:
        mine = submit_as(grid, user, "sh", "-c", 'id -u; id -G; echo "$HOME"')
        done, = grid.wait([mine])
    jdir = grid.home / "jobs" / str(mine)
    assert done["state"] == "DONE", done
    uid, groups, home = (jdir / "output.txt").read_text().splitlines()
    assert (int(uid), {int(g) for g in groups.split()}, home) == (user.pw_uid, _groups_of(user), user.pw_dir)
    for path, mode in ((jdir, 0o700), (jdir / "output.txt", 0o600)):
        st = path.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (user.pw_uid, mode), path
    attempts = grid.home / "grid" / "attempts"
    assert (attempts.stat().st_uid, stat.S_IMODE(attempts.stat().st_mode)) == (0, 0o700)
    record = attempt_from_dict(json.loads((attempts / f"{mine}.1.json").read_text()))
    assert isinstance(record, AttemptFinished) and record.identity == identity_of(user.pw_name)
    assert stat.S_IMODE((grid.home / "jobs").stat().st_mode) == 0o755
    for root in ("work", "util"):                              # made by the node, for every user's sessions
        assert stat.S_IMODE((grid.home / root).stat().st_mode) == 0o1777
    assert done["user"] == user.pw_name                        # the socket's peer, not a name it sent


@pytest.mark.root
def test_a_job_whose_user_is_gone_from_the_node_ends_exit_with_the_reason(base):
    """An account removed while its job waited: the master sends the job with no uid, the node's
    launcher refuses it, and the job EXITs with the node's reason — end to end."""
    name = f"sgjgo{secrets.token_hex(2)}"
    made = subprocess.run(["useradd", "-M", "-s", "/bin/sh", name], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"useradd {name} failed: {made.stderr.strip()}")
    gone = pwd.getpwnam(name)
    try:
        toml = GRID_TOML.replace("slots = 2", "slots = 1")
        with running(Grid(base, toml)) as grid:
            blocker = grid.client.submit(["sleep", "3600"], cwd=str(grid.root), env={"PATH": PATH})["id"]
            grid.wait_started(blocker)
            waiting = submit_as(grid, gone, "true")              # PEND: the only slot is taken
            assert grid.client.job(waiting)["state"] == "PEND"
            subprocess.run(["userdel", name], check=True, capture_output=True)
            grid.client.kill([blocker])                          # frees the slot: the job is dispatched now
            refused = grid.wait([waiting])[0]
    finally:
        subprocess.run(["userdel", name], capture_output=True)
    assert refused["state"] == "EXIT", refused
    assert refused["exit_reason"].startswith(f"user {name!r} is unknown on "), refused
    assert not (grid.home / "jobs" / str(waiting) / "output.txt").exists()
