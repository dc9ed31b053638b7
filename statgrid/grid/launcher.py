"""The node launcher: a small fork server that starts each job in its own process group and
reaps it with wait4, so the job's accounting is its own.

Why a separate, small process (DESIGN.md, "Accounting"): a child's ru_maxrss starts at its
parent's RSS at fork (exec keeps the old mm's high-water mark), so a job forked from a Dask
worker (100+ MiB) would report the worker's memory. This server imports only the standard
library (run as a script with -I -S, ~10 MiB), and forking it costs about a millisecond, where
starting a fresh Python launcher per job costs ~40 ms — which would alone take the dispatch
benchmark past its makespan goal.

Protocol, one JSON object per line on a Unix stream socket, one connection per job:
  request  {"argv": [...], "env": {...}, "cwd": "...", "stdout": path, "stderr": path}
  replies  {"event": "started", "pid": N, "start_ts": T}
           {"event": "exited", "pid": N, "exit_code": C|null, "signal": S|null, "end_ts": T,
            "rusage": {...}, "io": {...}}
If the job's connection closes early, nobody can account for the job: it is killed.

Liveness: stdin is a pipe from the worker. EOF means the worker is gone; every job's process
group is killed with SIGKILL (a job must not outlive its node, and a rerunnable job may already
be requeued elsewhere) and the server exits. Each job also gets PR_SET_PDEATHSIG=SIGKILL
against this (single-threaded) server in case the server itself is killed.
"""
from __future__ import annotations

import ctypes
import json
import os
import selectors
import signal
import socket
import sys
import time

PR_SET_PDEATHSIG = 1
# Fields of wait4's rusage worth keeping, under names that carry their unit.
RUSAGE_FIELDS = {
    "user_cpu_s": "ru_utime", "sys_cpu_s": "ru_stime", "max_rss_bytes": "ru_maxrss",
    "page_faults": "ru_majflt", "page_reclaims": "ru_minflt",
    "voluntary_ctx_switches": "ru_nvcsw", "involuntary_ctx_switches": "ru_nivcsw",
    "block_input_ops": "ru_inblock", "block_output_ops": "ru_oublock",
}
_libc = None


def _prctl_pdeathsig(signum: int) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


def read_proc_io(pid: int) -> dict[str, int]:
    """/proc/<pid>/io of a zombie still holds the totals of the process and its reaped children."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/io") as f:
            for line in f:
                key, _, value = line.partition(":")
                out[key.strip()] = int(value)
    except (OSError, ValueError):
        return {}
    return {"logical_read_bytes": out.get("rchar", 0), "logical_write_bytes": out.get("wchar", 0),
            "read_bytes": out.get("read_bytes", 0),
            "write_bytes": max(0, out.get("write_bytes", 0) - out.get("cancelled_write_bytes", 0))}


def rusage_dict(ru) -> dict[str, float]:
    out = {name: getattr(ru, field) for name, field in RUSAGE_FIELDS.items()}
    out["max_rss_bytes"] *= 1024          # Linux reports ru_maxrss in KiB
    return out


class Job:
    def __init__(self, conn: socket.socket, pid: int):
        self.conn = conn
        self.pid = pid


class Server:
    def __init__(self, path: str):
        self.path = path
        self.pid = os.getpid()
        self.sel = selectors.DefaultSelector()
        self.jobs: dict[int, Job] = {}          # pid → job
        self.by_conn: dict[int, Job] = {}       # conn fd → job
        self.buffers: dict[int, bytes] = {}
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o600)
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.sel.register(self.listener, selectors.EVENT_READ, "accept")
        self.sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        signal.set_wakeup_fd(w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.sel.register(r, selectors.EVENT_READ, "sigchld")
        self.wake_r = r

    # -- main loop ----------------------------------------------------------------------------
    def serve(self) -> None:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        while True:
            for key, _ in self.sel.select():
                what = key.data
                if what == "accept":
                    self._accept()
                elif what == "stdin":
                    if not os.read(sys.stdin.fileno(), 4096):
                        self._shutdown()
                        return
                elif what == "sigchld":
                    try:
                        while os.read(self.wake_r, 4096):
                            pass
                    except BlockingIOError:
                        pass
                    self._reap()
                else:
                    self._read(key.fileobj)

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return
        conn.setblocking(False)
        self.buffers[conn.fileno()] = b""
        self.sel.register(conn, selectors.EVENT_READ, "conn")

    def _read(self, conn: socket.socket) -> None:
        fd = conn.fileno()
        try:
            data = conn.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(conn)
            return
        if fd in self.by_conn:
            return                              # nothing more is expected from a started job
        buf = self.buffers.get(fd, b"") + data
        if b"\n" not in buf:
            self.buffers[fd] = buf
            return
        line, _, _ = buf.partition(b"\n")
        self.buffers.pop(fd, None)
        try:
            request = json.loads(line)
            self._start(conn, request)
        except Exception as exc:                 # a bad request must not stop the server
            self._send(conn, {"event": "failed", "error": f"{type(exc).__name__}: {exc}"})
            self._drop(conn)

    def _drop(self, conn: socket.socket) -> None:
        job = self.by_conn.pop(conn.fileno(), None)
        self.buffers.pop(conn.fileno(), None)
        try:
            self.sel.unregister(conn)
        except (KeyError, ValueError):
            pass
        conn.close()
        if job is not None and job.pid in self.jobs:
            # The worker side stopped listening: nobody would account for this job.
            _kill_job(job.pid)
            job.conn = None

    @staticmethod
    def _send(conn: socket.socket | None, msg: dict) -> None:
        if conn is None:
            return
        try:
            conn.setblocking(True)
            conn.sendall((json.dumps(msg) + "\n").encode())
            conn.setblocking(False)
        except OSError:
            pass

    # -- starting and reaping jobs ----------------------------------------------------------------
    def _start(self, conn: socket.socket, req: dict) -> None:
        argv = [str(a) for a in req["argv"]]
        env = {str(k): str(v) for k, v in req.get("env", {}).items()}
        cwd = req.get("cwd") or "/"
        out_path, err_path = req["stdout"], req.get("stderr") or req["stdout"]
        start_ts = time.time()
        pid = os.fork()
        if pid == 0:
            self._child(argv, env, cwd, out_path, err_path)     # never returns
        try:
            # Both sides set the group (as shells do): a kill right after the fork must find it.
            os.setpgid(pid, pid)
        except OSError:
            pass                                 # the child did it first, or has exec'd already
        job = Job(conn, pid)
        self.jobs[pid] = job
        self.by_conn[conn.fileno()] = job
        self._send(conn, {"event": "started", "pid": pid, "pgid": pid, "start_ts": start_ts})

    def _child(self, argv, env, cwd, out_path, err_path) -> None:
        try:
            os.setpgid(0, 0)                     # own process group: kill reaches the job and its children
            _prctl_pdeathsig(signal.SIGKILL)
            if os.getppid() != self.pid:         # the server died between fork and prctl
                os._exit(1)
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            fd_in = os.open("/dev/null", os.O_RDONLY)
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
            fd_out = os.open(out_path, flags, 0o644)
            fd_err = fd_out if err_path == out_path else os.open(err_path, flags, 0o644)
            os.dup2(fd_in, 0)
            os.dup2(fd_out, 1)
            os.dup2(fd_err, 2)
            os.closerange(3, 65536)
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        except BaseException as exc:             # noqa: BLE001 — report like a shell, then leave
            try:
                os.write(2, f"statgrid launcher: cannot run {argv[0]!r}: {exc}\n".encode())
            finally:
                os._exit(127)

    def _reap(self) -> None:
        while self.jobs:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None:
                return
            pid = info.si_pid
            io = read_proc_io(pid)               # before reaping: the zombie still has its counters
            # What the job left in its process group in the background ends with it (it would
            # hold a slot the master has freed). The zombie still owns the pgid: no reuse yet.
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            _, status, ru = os.wait4(pid, 0)
            end_ts = time.time()
            job = self.jobs.pop(pid, None)
            if job is None:
                continue
            msg = {"event": "exited", "pid": pid, "end_ts": end_ts, "rusage": rusage_dict(ru), "io": io,
                   "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                   "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}
            if job.conn is not None:
                self.by_conn.pop(job.conn.fileno(), None)
                self._send(job.conn, msg)
                self._drop(job.conn)

    def _shutdown(self) -> None:
        for pid in list(self.jobs):
            _kill_job(pid)
        deadline = time.monotonic() + 5
        while self.jobs and time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            self.jobs.pop(pid, None)
        try:
            os.unlink(self.path)
            os.rmdir(os.path.dirname(self.path))       # node.py made this directory for the socket alone
        except OSError:
            pass


def _kill_job(pid: int) -> None:
    """SIGKILL the job's process group, and the job itself in case its group is not set yet."""
    for kill, target in ((os.killpg, pid), (os.kill, pid)):
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: launcher.py SOCKET_PATH  (started by a statgrid node, stdin = liveness pipe)\n")
        return 2
    Server(argv[1]).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
