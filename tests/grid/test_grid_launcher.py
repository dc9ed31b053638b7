"""The node launcher (fork server) as a real process: accounting, process groups, liveness."""
from __future__ import annotations

import json
import os
import pwd
import socket
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest

import statgrid.grid.execution.launcher as launcher_mod
from statgrid.grid.execution import cgroups
from statgrid.grid.execution import node
from statgrid.grid.master.core import identity_of
from statgrid.job.protocol import AttemptLost, AttemptStarted, Identity, LaunchExited, LaunchRequest, LaunchStarted
from tests.conftest import WAIT_S, pgid_of, wait_for, wait_gone

SCRIPT = Path(launcher_mod.__file__)


@pytest.fixture
def launcher(tmp_path):
    path = str(tmp_path / "l.sock")
    proc = subprocess.Popen([sys.executable, "-I", "-S", str(SCRIPT), path], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    yield proc, path
    if proc.poll() is None:
        proc.stdin.close()
        proc.wait(timeout=WAIT_S)


def own_identity(uid: int | None = None) -> Identity:
    """The identity of the account `uid` (default: the one running the tests), as the master makes it."""
    return identity_of(pwd.getpwuid(os.getuid() if uid is None else uid).pw_name)


def request(argv, cwd, out, job_id=1, identity: Identity | None = None) -> LaunchRequest:
    return LaunchRequest(job_id=job_id, attempt=1, host="node9", argv=tuple(argv), env={"PATH": os.environ["PATH"]},
                         cwd=str(cwd), job_dir=str(cwd), work_roots=(), stdout=str(out), stderr=str(out),
                         identity=identity or own_identity(), attempt_file=str(Path(cwd) / f"{job_id}.1.json"))


def start(path, argv, out, identity: Identity | None = None) -> tuple[socket.socket, object, LaunchStarted]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall((json.dumps(request(argv, Path(out).parent, out, identity=identity).to_dict()) + "\n").encode())
    reader = sock.makefile("rb")
    return sock, reader, LaunchStarted.from_dict(json.loads(reader.readline()))


def exited(reader) -> LaunchExited:
    return LaunchExited.from_dict(json.loads(reader.readline()))


def on_block_device(path: Path) -> bool:
    from statgrid.monitor.sampler import map_libraries

    return map_libraries({"d": path})[0].device is not None


def test_exit_code_rusage_and_io_are_the_jobs_own(launcher, tmp_path):
    _, path = launcher
    target = tmp_path / "data.bin"
    # 8 MiB written and fsynced by a child of the job: /proc io and wait4 count reaped children too.
    code = (f"import os; f = open({str(target)!r}, 'wb'); f.write(os.urandom(8 << 20)); f.flush(); "
            "os.fsync(f.fileno()); x = bytearray(64 << 20); print('ok'); raise SystemExit(3)")
    _, reader, started = start(path, ["sh", "-c", f"{sys.executable} -c \"{code}\"; exit $?"], tmp_path / "out.txt")
    assert started.pgid == started.pid
    done = exited(reader)
    assert done.exit_code == 3 and done.signal is None
    ru, io = done.rusage, done.io
    assert ru.max_rss_bytes >= 64 << 20                         # the 64 MiB bytearray
    assert ru.max_rss_bytes < 200 << 20                         # ... not a big parent's RSS
    assert ru.user_cpu_s + ru.sys_cpu_s > 0
    assert io.logical_write_bytes >= 8 << 20
    if on_block_device(tmp_path):                                 # tmpfs writes reach no storage layer
        assert io.write_bytes >= 8 << 20
    assert (tmp_path / "out.txt").read_text() == "ok\n"


def _runs_as(python: str, as_user: dict) -> bool:
    """Can this user run `python` (3.11+) and read the launcher script?"""
    check = f"import sys; assert sys.version_info >= (3, 11); open({str(SCRIPT)!r}).close()"
    try:
        return subprocess.run([python, "-I", "-S", "-c", check], capture_output=True, **as_user).returncode == 0
    except OSError:
        return False


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start the launcher as another user (as an ordinary "
                    "user the test above already runs this path)")
def test_io_is_counted_when_the_launcher_is_not_root(tmp_path):
    """A personal grid runs its launcher as an ordinary user, which the kernel refuses a zombie's
    /proc/<pid>/io: the job's I/O then comes from the launcher's own counters across the reap (it
    was silently {}: every job of a non-root grid had no I/O figures)."""
    import tempfile

    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody' to run the launcher as")
    # The launcher needs only the standard library (it runs with -I -S): any Python 3.11+ that
    # 'nobody' may run will do (a virtualenv's interpreter may sit under root's 0700 home).
    as_nobody = dict(user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[])
    python = next((p for p in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3")
                   if _runs_as(p, as_nobody)), None)
    if python is None:
        pytest.skip(f"no Python 3.11+ that 'nobody' may run with {SCRIPT} readable to it")
    shared = Path(tempfile.mkdtemp(prefix="statgrid-launcher-test-"))
    try:
        shared.chmod(0o777)
        path = str(shared / "l.sock")
        proc = subprocess.Popen([python, "-I", "-S", str(SCRIPT), path, "--no-cgroup"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, **as_nobody)
        try:
            assert proc.stdout.readline() == b"ready\n"
            target = shared / "data.bin"
            code = (f"import os; f = open({str(target)!r}, 'wb'); f.write(os.urandom(8 << 20)); f.flush(); "
                    "os.fsync(f.fileno())")
            _, reader, started = start(path, ["sh", "-c", f"{python} -c \"{code}\""], shared / "out.txt",
                                       identity=own_identity(nobody.pw_uid))
            done = exited(reader)
            assert done.exit_code == 0, (shared / "out.txt").read_text()
            io = done.io
            # wchar counts every write call: the 8 MiB and nothing of the launcher's
            assert 8 << 20 <= io.logical_write_bytes < (8 << 20) + (1 << 20), io
            if on_block_device(shared):                       # tmpfs writes reach no storage layer
                assert io.write_bytes >= 8 << 20, io
        finally:
            proc.stdin.close()
            proc.wait(timeout=WAIT_S)
    finally:
        import shutil

        shutil.rmtree(shared, ignore_errors=True)


def test_signal_and_own_process_group(launcher, tmp_path):
    _, path = launcher
    _, reader, started = start(path, ["sh", "-c", "sleep 600 & sleep 600; wait"], tmp_path / "out.txt")
    pid = started.pid
    # the shell and its sleeps share the group (once the shell has started both)
    group = wait_for(lambda: (g := [p for p in psutil.process_iter(["pid"]) if pgid_of(p.pid) == pid]) and
                     len(g) >= 3 and g, f"the shell {pid} and its two sleeps in its process group")
    os.killpg(pid, 15)
    done = exited(reader)
    assert done.signal == 15 and done.exit_code is None
    wait_gone([p.pid for p in group])


def test_background_children_end_with_the_job(launcher, tmp_path):
    _, path = launcher
    _, reader, started = start(path, ["sh", "-c", "sleep 123 & echo $! > bg.pid; exit 0"], tmp_path / "out.txt")
    done = exited(reader)
    assert done.exit_code == 0
    wait_gone([int((tmp_path / "bg.pid").read_text())])


def test_missing_command_reports_like_a_shell(launcher, tmp_path):
    _, path = launcher
    _, reader, _ = start(path, ["no-such-command-xyz"], tmp_path / "out.txt")
    done = exited(reader)
    assert done.exit_code == 127
    assert "cannot run 'no-such-command-xyz'" in (tmp_path / "out.txt").read_text()


def test_jobs_die_when_the_worker_side_goes(launcher, tmp_path):
    proc, path = launcher
    _, _, a = start(path, ["sleep", "30"], tmp_path / "a.txt")
    _, _, b = start(path, ["sleep", "30"], tmp_path / "b.txt")
    proc.stdin.close()                                            # the worker died: its pipe closes
    proc.wait(timeout=WAIT_S)
    wait_gone([a.pid, b.pid])
    assert not os.path.exists(path)
    if a.cgroup:                                               # its cgroups are removed too
        assert not os.path.exists(os.path.dirname(a.cgroup))


def test_dropped_connection_kills_its_job(launcher, tmp_path):
    _, path = launcher
    sock, reader, started = start(path, ["sleep", "30"], tmp_path / "a.txt")
    reader.close()
    sock.close()
    wait_gone([started.pid])


# -- cgroups and the launcher's own death (issue 14, item 10) ------------------------------------------

def _pid_in(path: Path) -> int:
    def pid():
        try:
            return int(path.read_text())
        except (FileNotFoundError, ValueError):
            return None
    return wait_for(pid, f"a pid in {path}", every_s=0.02)


def _text_of(path: Path) -> str:
    """A file another process writes (whole: written beside, then renamed), once it is there."""
    wait_for(path.exists, f"{path} to be written", every_s=0.02)
    return path.read_text()


def _wait_dir_gone(path: str, timeout_s: float = WAIT_S) -> None:
    wait_for(lambda: not os.path.exists(path), f"{path} to be removed", timeout_s)


@pytest.mark.parametrize("cgroup_text, mountinfo_text, expected", [
    # cgroup v2 only (systemd): the hierarchy's root mounted at /sys/fs/cgroup
    ("0::/user.slice/user-1000.slice/session-3.scope\n",
     "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
     "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope"),
    # hybrid: v1 controllers beside a v2 hierarchy at .../unified; the process in its root
    ("4:memory:/x\n0::/\n",
     "30 24 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
     "31 24 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
     "/sys/fs/cgroup/unified"),
    # a container: its cgroup's subtree bind-mounted, a mount point with a space (octal escape)
    ("0::/docker/abc/jobs\n",
     "40 30 0:30 /docker/abc /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw\n",
     "/sys/fs/my cgroup/jobs"),
    # cgroup v1 only: no v2 path, or no v2 mount showing it
    ("4:memory:/x\n1:cpu:/\n", "30 24 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", None),
    ("0::/elsewhere\n", "40 30 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", None),
])
def test_cgroup2_dir_from_proc_texts(cgroup_text, mountinfo_text, expected):
    assert cgroups.cgroup2_dir(cgroup_text, mountinfo_text) == expected


def test_a_setsid_leftover_ends_with_the_job(launcher, tmp_path):
    _, path = launcher
    _, reader, started = start(path, ["sh", "-c", "setsid sleep 123 & echo $! > bg.pid; exit 0"],
                               tmp_path / "out.txt")
    if started.cgroup is None:
        pytest.skip("no cgroup v2 this launcher may write to: a process group cannot hold a setsid child")
    done = exited(reader)
    assert done.exit_code == 0
    wait_gone([_pid_in(tmp_path / "bg.pid")])
    _wait_dir_gone(started.cgroup)


def test_jobs_of_a_killed_launcher_are_ended_by_the_next_one(launcher, tmp_path):
    # The launcher and its worker both gone (nobody read the job's connection): the next
    # launcher on this machine finds the dead one's cgroups and ends what runs there.
    proc, path = launcher
    _, _, started = start(path, ["sh", "-c", "setsid sleep 300 & echo $! > bg.pid; sleep 300"], tmp_path / "a.txt")
    if started.cgroup is None:
        pytest.skip("no cgroup v2 this launcher may write to")
    bg = _pid_in(tmp_path / "bg.pid")
    proc.kill()
    proc.wait(timeout=WAIT_S)
    wait_gone([started.pid])                                   # PR_SET_PDEATHSIG
    assert psutil.Process(bg).status() != psutil.STATUS_ZOMBIE    # ... reaches the job's first process only
    nxt = subprocess.Popen([sys.executable, "-I", "-S", str(SCRIPT), str(tmp_path / "b.sock")],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert nxt.stdout.readline() == b"ready\n"
        wait_gone([bg])
        _wait_dir_gone(os.path.dirname(started.cgroup))
    finally:
        nxt.stdin.close()
        nxt.wait(timeout=WAIT_S)


@pytest.fixture(params=[True, False], ids=["cgroup", "process-group"])
def node_launcher(request, monkeypatch):
    """node.py's own launcher, started by run_job in this process, with or without cgroups."""
    monkeypatch.setattr(node, "LAUNCHER_CGROUPS", request.param, raising=False)
    monkeypatch.setattr(node, "_server", {})
    yield request.param
    proc = node._server.get("proc")
    if proc is not None and proc.poll() is None:
        proc.stdin.close()
        proc.wait(timeout=WAIT_S)


def test_run_job_whose_launcher_is_killed_ends_every_process_and_says_host_lost(node_launcher, tmp_path):
    # The job's children: one in its process group, and (with cgroups) one that left it with setsid.
    script = "sleep 300 & echo $! > bg.pid; " + ("setsid sleep 300 & echo $! > sid.pid; " if node_launcher else "")
    spec = request(["sh", "-c", script + "sleep 300"], tmp_path, tmp_path / "output.txt", job_id=7).to_dict()
    result: list = []
    thread = threading.Thread(target=lambda: result.append(node.run_job(spec)))
    thread.start()
    children = [_pid_in(tmp_path / "bg.pid")] + ([_pid_in(tmp_path / "sid.pid")] if node_launcher else [])
    started = AttemptStarted.from_dict(json.loads(_text_of(tmp_path / "7.1.json")))
    if not node_launcher:
        assert started.cgroup is None                          # --no-cgroup
    elif started.cgroup is None:
        os.killpg(started.pgid, 9)
        thread.join(WAIT_S)
        pytest.skip("no cgroup v2 this launcher may write to")
    sock_path = node._server["path"]
    os.kill(node.launcher_pid(), 9)
    thread.join(WAIT_S)
    wait_gone([started.pid, *children])
    (outcome,) = result
    assert isinstance(outcome, AttemptLost) and outcome.reason == "host lost: the launcher of node9 died"
    assert AttemptLost.from_dict(json.loads((tmp_path / "7.1.json").read_text())) == outcome
    if started.cgroup:
        assert not os.path.exists(started.cgroup)
    assert node.launcher_pid() is None                            # the next job starts a new one
    # the dead launcher's socket directory is gone now (one was left in /tmp per killed launcher)
    assert not os.path.exists(os.path.dirname(sock_path))


def test_a_group_of_zombies_is_not_alive(tmp_path):
    """After its launcher died, a job's first process may stay a zombie (PID 1 need not reap): the
    worker must not wait for it (killpg(pgid, 0) still answers for a zombie)."""
    def stat(pid, comm, state, pgrp):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} ({comm}) {state} 1 {pgrp} {pgrp} 0 -1 4194560 0 0\n")

    from statgrid.host.procfs import process_group_alive

    stat(10, "sh", "Z", 10)
    stat(11, "odd ) name", "Z", 10)              # a command name may hold ') '
    stat(12, "sleep", "S", 12)
    (tmp_path / "self").mkdir()
    assert not process_group_alive(10, str(tmp_path)) and process_group_alive(12, str(tmp_path))
    stat(13, "x", "R", 10)
    assert process_group_alive(10, str(tmp_path))
    # and on this kernel: a real zombie alone in its group
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os._exit(0)
    try:
        wait_for(lambda: open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[0] == "Z", f"{pid} a zombie",
                 every_s=0.01)
        os.killpg(pid, 0)                        # the kernel still counts the zombie as the group
        assert not process_group_alive(pid)
    finally:
        os.waitpid(pid, 0)
