"""The node launcher (fork server) as a real process: accounting, process groups, liveness."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

import statgrid.grid.launcher as launcher_mod
from tests.conftest import pgid_of, wait_gone

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
        proc.wait(10)


def start(path, argv, out, **extra):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall((json.dumps({"argv": argv, "env": {"PATH": os.environ["PATH"]}, "cwd": str(Path(out).parent),
                              "stdout": str(out), **extra}) + "\n").encode())
    reader = sock.makefile("rb")
    return sock, reader, json.loads(reader.readline())


def test_exit_code_rusage_and_io_are_the_jobs_own(launcher, tmp_path):
    _, path = launcher
    target = tmp_path / "data.bin"
    # 8 MiB written and fsynced by a child of the job: /proc io and wait4 count reaped children too.
    code = (f"import os; f = open({str(target)!r}, 'wb'); f.write(os.urandom(8 << 20)); f.flush(); "
            "os.fsync(f.fileno()); x = bytearray(64 << 20); print('ok'); raise SystemExit(3)")
    _, reader, started = start(path, ["sh", "-c", f"{sys.executable} -c \"{code}\"; exit $?"], tmp_path / "out.txt")
    assert started["event"] == "started" and started["pgid"] == started["pid"]
    done = json.loads(reader.readline())
    assert done["event"] == "exited" and done["exit_code"] == 3 and done["signal"] is None
    ru, io = done["rusage"], done["io"]
    assert ru["max_rss_bytes"] >= 64 << 20                         # the 64 MiB bytearray
    assert ru["max_rss_bytes"] < 200 << 20                         # ... not a big parent's RSS
    assert ru["user_cpu_s"] + ru["sys_cpu_s"] > 0
    assert io["logical_write_bytes"] >= 8 << 20 and io["write_bytes"] >= 8 << 20
    assert (tmp_path / "out.txt").read_text() == "ok\n"


def test_signal_and_own_process_group(launcher, tmp_path):
    _, path = launcher
    _, reader, started = start(path, ["sh", "-c", "sleep 30 & sleep 30; wait"], tmp_path / "out.txt")
    pid = started["pid"]
    time.sleep(0.2)
    group = [p for p in psutil.process_iter(["pid"]) if pgid_of(p.pid) == pid]
    assert len(group) >= 2                                         # the shell and its sleeps share the group
    os.killpg(pid, 15)
    done = json.loads(reader.readline())
    assert done["signal"] == 15 and done["exit_code"] is None
    wait_gone([p.pid for p in group])


def test_background_children_end_with_the_job(launcher, tmp_path):
    _, path = launcher
    _, reader, started = start(path, ["sh", "-c", "sleep 123 & echo $! > bg.pid; exit 0"], tmp_path / "out.txt")
    done = json.loads(reader.readline())
    assert done["exit_code"] == 0
    wait_gone([int((tmp_path / "bg.pid").read_text())])


def test_missing_command_reports_like_a_shell(launcher, tmp_path):
    _, path = launcher
    _, reader, _ = start(path, ["no-such-command-xyz"], tmp_path / "out.txt")
    done = json.loads(reader.readline())
    assert done["exit_code"] == 127
    assert "cannot run 'no-such-command-xyz'" in (tmp_path / "out.txt").read_text()


def test_jobs_die_when_the_worker_side_goes(launcher, tmp_path):
    proc, path = launcher
    _, _, a = start(path, ["sleep", "30"], tmp_path / "a.txt")
    _, _, b = start(path, ["sleep", "30"], tmp_path / "b.txt")
    proc.stdin.close()                                            # the worker died: its pipe closes
    proc.wait(10)
    wait_gone([a["pid"], b["pid"]])
    assert not os.path.exists(path)


def test_dropped_connection_kills_its_job(launcher, tmp_path):
    _, path = launcher
    sock, reader, started = start(path, ["sleep", "30"], tmp_path / "a.txt")
    reader.close()
    sock.close()
    wait_gone([started["pid"]])
