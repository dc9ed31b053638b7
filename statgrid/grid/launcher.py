"""The node launcher: a small fork server that starts each job in its own process group and
reaps it with wait4, so the job's accounting is its own.

Why a separate, small process (DESIGN.md, "Accounting"): a child's ru_maxrss starts at its
parent's RSS at fork (exec keeps the old mm's high-water mark), so a job forked from a Dask
worker (100+ MiB) would report the worker's memory. This server imports only the standard
library (run as a script with -I -S, ~10 MiB), and forking it costs about a millisecond, where
starting a fresh Python launcher per job costs ~40 ms — which would alone take the dispatch
benchmark past its makespan goal.

Protocol (protocol.py, loaded from its file: see below), one JSON object per line on a Unix
stream socket, one connection per job: the node sends a LaunchRequest; the server answers
LaunchStarted (which echoes the request's identity as it read it), then LaunchExited; or
LaunchFailed for a request it cannot read or start. If the job's connection closes early, nobody
can account for the job: it is killed.

Liveness: stdin is a pipe from the worker. EOF means the worker is gone; every job's process
group is killed with SIGKILL (a job must not outlive its node, and a rerunnable job may already
be requeued elsewhere) and the server exits.

If this server itself is killed (kill -9, the OOM killer), PR_SET_PDEATHSIG=SIGKILL ends each
job's first process only; what that process started is re-parented and would run on. So the
worker, which reads every job's connection, sees it close without an "exited" reply and kills the
job's process group and cgroup (node.run_job, `_end_orphaned_job`). A process group misses what calls
setsid() or setpgid() (`setsid cmd`, a daemon's double fork); a cgroup v2 keeps every
descendant, so where this server may create cgroups below its own each job gets one
(`<own cgroup>/statgrid-launcher-<pid>/job-<n>`, the server itself in `.../launcher`).
Background leftovers of a job that ended are killed through both as well. Where cgroups are not
available (no cgroup2 mount, no write access), jobs are tracked by process group alone.
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import selectors
import signal
import socket
import sys
import time


def _load_protocol():
    """statgrid.grid.protocol (standard library only). Run as a script with -I -S, statgrid is not
    importable: the sibling file is loaded by its path, under the same module name, so there is
    one definition of the contract. (Its imports, dataclasses and typing, add ~10 ms to this
    server's start, paid once per worker: benchmarks/launcher_start.py.)"""
    if __spec__ is not None and __spec__.parent:          # imported as statgrid.grid.launcher
        from statgrid.grid import protocol
        return protocol
    import importlib.util

    name = "statgrid.grid.protocol"
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(__file__), "protocol.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module                           # dataclasses and typing look the module up by name
    spec.loader.exec_module(module)
    return module


protocol = _load_protocol()
PR_SET_PDEATHSIG = 1
PROCFS_PATH = "/proc"
CGROUP_PREFIX = "statgrid-launcher-"     # + the server's pid; the cgroup of one server and its jobs
CGROUP_SERVER_LEAF = "launcher"          # the server's own leaf: populated while the server lives
CGROUP_RETRY_S = 0.2                     # how often removal of a killed job's cgroup is retried
_libc = None


def _prctl_pdeathsig(signum: int) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


def _parse_io(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        out[key.strip()] = int(value)
    return out


def _io_record(raw: dict[str, int]):
    """proc(5) /proc/<pid>/io counters as a protocol.IoCounters: rchar/wchar are logical I/O (every
    read and write call, page cache and sockets included), read_bytes/write_bytes the storage
    layer's (write_bytes less cancelled_write_bytes: pages truncated before they reached disk)."""
    return protocol.IoCounters(
        logical_read_bytes=raw.get("rchar", 0), logical_write_bytes=raw.get("wchar", 0),
        read_bytes=raw.get("read_bytes", 0),
        write_bytes=max(0, raw.get("write_bytes", 0) - raw.get("cancelled_write_bytes", 0)))


def read_proc_io(pid: int):
    """/proc/<pid>/io of a zombie still holds the totals of the process and its reaped children
    (a protocol.IoCounters). The kernel lets only a privileged reader see a zombie's: None when
    refused (see own_io)."""
    try:
        with open(f"/proc/{pid}/io") as f:
            return _io_record(_parse_io(f.read()))
    except (OSError, ValueError):
        return None


def own_io() -> tuple[dict[str, int], int]:
    """This process's /proc/self/io counters, and the bytes this read of them adds to rchar.

    For a launcher that is not root: the kernel refuses it a zombie's /proc/<pid>/io (a ptrace-mode
    check that a zombie, having no mm, fails — EACCES even for one's own child), but reaping a child
    adds the child's counters, its reaped children's included, to its parent's (kernel/exit.c,
    wait_task_zombie: psig->ioac += p->ioac + p->signal->ioac). So the launcher's own counters just
    before and just after wait4 differ by the job's — less this read's own bytes, and within ~1 KiB
    of logical reads (measured here against the zombie's file as root: 832 bytes, one call)."""
    with open("/proc/self/io", "rb", buffering=0) as f:
        raw = f.read(4096)                       # one read call: the file is ~100 bytes
    return _parse_io(raw.decode()), len(raw)


def reaped_io(before: tuple[dict[str, int], int], after: tuple[dict[str, int], int]):
    """The I/O of the child reaped between two own_io() reads."""
    (a, nbytes), (b, _) = before, after
    delta = {k: b.get(k, 0) - a.get(k, 0) for k in b}
    delta["rchar"] = max(0, delta.get("rchar", 0) - nbytes)
    return _io_record(delta)


# -- cgroup v2 ------------------------------------------------------------------------------------
# Documentation/admin-guide/cgroup-v2.rst: a process moves by writing "0" (itself) to a cgroup's
# cgroup.procs, which needs write access to cgroup.procs of the common ancestor of both cgroups;
# cgroup.kill (Linux 5.14) SIGKILLs every process of a cgroup in one write, forks racing with it
# included; cgroup.events says "populated 0" once none is left; rmdir removes an empty cgroup.

def parse_cgroup2_path(cgroup_text: str) -> str | None:
    """/proc/<pid>/cgroup → the path in the cgroup v2 hierarchy (its "0::" line), or None."""
    for line in cgroup_text.splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":
            return path
    return None


def cgroup2_dir(cgroup_text: str, mountinfo_text: str) -> str | None:
    """The directory of a process's cgroup v2 from its /proc/<pid>/cgroup and mountinfo (proc(5):
    field 4 is the mount's root in its file system, field 5 the mount point, octal-escaped),
    or None if no cgroup2 mount shows that cgroup."""
    path = parse_cgroup2_path(cgroup_text)
    if path is None or not path.startswith("/"):
        return None
    for line in mountinfo_text.splitlines():
        fields, _, fs = line.partition(" - ")
        fields = fields.split()
        if len(fields) < 5 or fs.split()[:1] != ["cgroup2"]:
            continue
        root, mount = (_unescape_mount(f) for f in fields[3:5])
        root = root.rstrip("/")
        if path == root or path.startswith(root + "/"):
            return os.path.normpath(os.path.join(mount, path[len(root):].lstrip("/")))
    return None


def _unescape_mount(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def cgroup_populated(path: str) -> bool:
    """True while a process (not a zombie) is in the cgroup or below; False once it is gone."""
    try:
        with open(os.path.join(path, "cgroup.events")) as f:
            return "populated 1" in f.read().split("\n")
    except OSError:
        return False


def kill_cgroup(path: str) -> None:
    """SIGKILL every process in the cgroup. Before Linux 5.14 (no cgroup.kill) its processes are
    killed one by one, a few rounds to catch children forked meanwhile."""
    try:
        _write(os.path.join(path, "cgroup.kill"), "1")
        return
    except OSError:
        if not os.path.isdir(path):
            return
    for _ in range(5):
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                pids = [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            return
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def remove_cgroup(path: str) -> bool:
    """rmdir the cgroup; True when it is gone (False while processes are still in it)."""
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def _server_alive(top: str) -> bool:
    """Is the server of `top` (a CGROUP_PREFIX directory) still running? Its leaf is populated
    while it runs; while it sets up, its pid (in the name) runs this script."""
    if cgroup_populated(os.path.join(top, CGROUP_SERVER_LEAF)):
        return True
    pid = os.path.basename(top)[len(CGROUP_PREFIX):].partition("-")[0]
    try:
        with open(os.path.join(PROCFS_PATH, pid, "cmdline"), "rb") as f:
            return os.path.basename(__file__).encode() in f.read()
    except OSError:
        return False


def sweep_dead_servers(base: str) -> list[str]:
    """Kill and remove what servers that died (kill -9, or together with their worker) left in
    cgroups under `base`. Returns the cgroups not removed yet: their killed processes are still
    dying (a later removal, or the next sweep, takes them)."""
    left: list[str] = []
    try:
        names = [n for n in os.listdir(base) if n.startswith(CGROUP_PREFIX)]
    except OSError:
        return left
    for name in names:
        top = os.path.join(base, name)
        if _server_alive(top):
            continue
        try:
            children = [os.path.join(top, n) for n in os.listdir(top)
                        if os.path.isfile(os.path.join(top, n, "cgroup.procs"))]
        except OSError:
            continue
        for child in children:
            kill_cgroup(child)
        left += [c for c in [*children, top] if not remove_cgroup(c)]
    return left


def make_server_cgroup(procfs: str = PROCFS_PATH) -> tuple[str | None, str, list[str]]:
    """Move this server into `<own cgroup>/statgrid-launcher-<pid>/launcher` after sweeping what
    dead servers left there. Returns (the statgrid-launcher-<pid> directory, "", cgroups the
    sweep left to remove) or (None, why not, [])."""
    try:
        with open(os.path.join(procfs, "self", "cgroup")) as f:
            cgroup_text = f.read()
        with open(os.path.join(procfs, "self", "mountinfo")) as f:
            mountinfo_text = f.read()
    except OSError as exc:
        return None, f"cannot read /proc/self/cgroup or mountinfo ({exc.strerror})", []
    base = cgroup2_dir(cgroup_text, mountinfo_text)
    if base is None:
        return None, "no cgroup v2 mount shows this process's cgroup (cgroup v1 only?)", []
    left = sweep_dead_servers(base)
    top = None
    try:
        for n in range(100):                     # a dead server of the same pid may still be swept
            try:
                top = os.path.join(base, f"{CGROUP_PREFIX}{os.getpid()}" + (f"-{n}" if n else ""))
                os.mkdir(top)
                break
            except FileExistsError:
                top = None
        if top is None:
            return None, f"cannot name a cgroup under {base!r}", left
        os.mkdir(os.path.join(top, CGROUP_SERVER_LEAF))
        _write(os.path.join(top, CGROUP_SERVER_LEAF, "cgroup.procs"), "0")
    except OSError as exc:
        if top is not None:
            remove_cgroup(os.path.join(top, CGROUP_SERVER_LEAF))
            remove_cgroup(top)
        return None, f"cannot create cgroups under {base!r} ({errno.errorcode.get(exc.errno, exc.errno)}: " \
                     f"{exc.strerror})", left
    return top, "", left


def leave_server_cgroup(top: str) -> None:
    """Move this server back to the cgroup it came from and remove its (then empty) cgroups."""
    try:
        _write(os.path.join(os.path.dirname(top), "cgroup.procs"), "0")
    except OSError:
        return
    remove_cgroup(os.path.join(top, CGROUP_SERVER_LEAF))
    remove_cgroup(top)


def _kill_job(pid: int, cgroup: str | None = None) -> None:
    """SIGKILL a job: its process group, its cgroup if it has one, and the job itself in case its
    group is not set yet."""
    for kill, target in ((os.killpg, pid), (os.kill, pid)):
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if cgroup:
        kill_cgroup(cgroup)


class Job:
    def __init__(self, conn: socket.socket, pid: int, cgroup: str | None):
        self.conn = conn
        self.pid = pid
        self.cgroup = cgroup                    # its cgroup v2 directory, or None


class Server:
    def __init__(self, path: str, cgroups: bool = True):
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
        self.cgroup_top, why_not, left = make_server_cgroup() if cgroups else (None, "--no-cgroup", [])
        if cgroups and self.cgroup_top is None:  # the worker's log says once why
            sys.stderr.write(f"statgrid launcher: jobs are tracked by process group only: {why_not}\n")
        self.cgroup_seq = 0
        # Of ended jobs (and of dead servers), until their last process is gone.
        self.cgroups_to_remove: set[str] = set(left)

    # -- main loop ----------------------------------------------------------------------------
    def serve(self) -> None:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        while True:
            events = self.sel.select(CGROUP_RETRY_S if self.cgroups_to_remove else None)
            self.cgroups_to_remove = {c for c in self.cgroups_to_remove if not remove_cgroup(c)}
            for key, _ in events:
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
            self._start(conn, protocol.LaunchRequest.from_dict(json.loads(line)))
        except Exception as exc:                 # a bad request must not stop the server
            self._send(conn, protocol.LaunchFailed(error=f"{type(exc).__name__}: {exc}"))
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
            _kill_job(job.pid, job.cgroup)
            job.conn = None

    @staticmethod
    def _send(conn: socket.socket | None, msg) -> None:
        """Send one protocol record as a JSON line."""
        if conn is None:
            return
        try:
            conn.setblocking(True)
            conn.sendall((json.dumps(msg.to_dict()) + "\n").encode())
            conn.setblocking(False)
        except OSError:
            pass

    # -- starting and reaping jobs ----------------------------------------------------------------
    def _start(self, conn: socket.socket, req) -> None:
        """Start the job of `req` (a protocol.LaunchRequest, checked by from_dict)."""
        argv, env, cwd = list(req.argv), dict(req.env), req.cwd or "/"
        out_path, err_path = req.stdout, req.stderr
        start_ts = time.time()
        cgroup = self._new_job_cgroup()
        pid = os.fork()
        if pid == 0:
            self._child(argv, env, cwd, out_path, err_path, cgroup)     # never returns
        try:
            # Both sides set the group (as shells do): a kill right after the fork must find it.
            os.setpgid(pid, pid)
        except OSError:
            pass                                 # the child did it first, or has exec'd already
        job = Job(conn, pid, cgroup)
        self.jobs[pid] = job
        self.by_conn[conn.fileno()] = job
        self._send(conn, protocol.LaunchStarted(pid=pid, pgid=pid, cgroup=cgroup, start_ts=start_ts,
                                                identity=req.identity))

    def _new_job_cgroup(self) -> str | None:
        if self.cgroup_top is None:
            return None
        self.cgroup_seq += 1
        path = os.path.join(self.cgroup_top, f"job-{self.cgroup_seq}")
        try:
            os.mkdir(path)
        except OSError:
            return None                          # this job is tracked by its process group alone
        return path

    def _child(self, argv, env, cwd, out_path, err_path, cgroup) -> None:
        try:
            os.setpgid(0, 0)                     # own process group: kill reaches the job and its children
            if cgroup:
                try:                             # before exec: every process of the job starts inside
                    _write(os.path.join(cgroup, "cgroup.procs"), "0")
                except OSError:
                    pass                         # its process group still holds it
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
            # What the job left in its process group (or, having left the group, in its cgroup) in
            # the background ends with it: it would hold a slot the master has freed. The zombie
            # still owns the pgid: no reuse yet.
            job = self.jobs.get(pid)
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if job is not None and job.cgroup:
                kill_cgroup(job.cgroup)
            before = None if io is not None else own_io()    # the zombie's counters were refused: see own_io
            _, status, ru = os.wait4(pid, 0)
            if before is not None:
                io = reaped_io(before, own_io())
            end_ts = time.time()
            job = self.jobs.pop(pid, None)
            if job is None:
                continue
            if job.cgroup and not remove_cgroup(job.cgroup):
                self.cgroups_to_remove.add(job.cgroup)
            msg = protocol.LaunchExited(pid=pid, end_ts=end_ts, rusage=protocol.Rusage.from_wait4(ru), io=io,
                                        exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                                        signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)
            if job.conn is not None:
                self.by_conn.pop(job.conn.fileno(), None)
                self._send(job.conn, msg)
                self._drop(job.conn)

    def _shutdown(self) -> None:
        cgroups = self.cgroups_to_remove | {job.cgroup for job in self.jobs.values() if job.cgroup}
        for job in list(self.jobs.values()):
            _kill_job(job.pid, job.cgroup)
        deadline = time.monotonic() + 5
        while self.jobs and time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            self.jobs.pop(pid, None)
        while cgroups and time.monotonic() < deadline:
            cgroups = {c for c in cgroups if not remove_cgroup(c)}
            if cgroups:
                time.sleep(0.05)
        if self.cgroup_top is not None:
            leave_server_cgroup(self.cgroup_top)
        try:
            os.unlink(self.path)
            os.rmdir(os.path.dirname(self.path))       # node.py made this directory for the socket alone
        except OSError:
            pass


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or argv[2:] not in ([], ["--no-cgroup"]):
        sys.stderr.write("usage: launcher.py SOCKET_PATH [--no-cgroup]  (started by a statgrid node, "
                         "stdin = liveness pipe)\n")
        return 2
    Server(argv[1], cgroups=argv[2:] != ["--no-cgroup"]).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
