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
LaunchStarted (which echoes the request's identity as it read it) once the job's process has
exec'd its command, then LaunchExited; or LaunchFailed for a request it cannot read, will not run
or could not start. If the job's connection closes early, nobody can account for the job: it is
killed.

Whose job (issue 15): a job runs as the person who submitted it (the request's identity). Run as
root, this server looks the user up BY NAME on this machine and refuses the job (LaunchFailed) if
the account is unknown here or its uid/gid differ from the master's; otherwise it gives the job's
directory to the user (fchown, 0700) before the fork, and the child sets the user's groups, gid and
uid (in that order, checking that root cannot be regained), HOME, USER and LOGNAME, then opens the
output files (0600, O_NOFOLLOW) and enters the working directory as the user. Jobs of root run as
root. Run as an ordinary user, it runs only jobs whose uid is its own. It never runs one user's job
as another. A failure of the child before exec comes back to the server on a close-on-exec pipe
(EOF alone: the exec succeeded) and is answered with LaunchFailed; a command that cannot be exec'd
ends like a shell's, exit 127 and the reason in its output.

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

Memory (memlimit.py): a request's mem_limit_bytes (the job's reservation) is enforced here — by
memory.max on the job's cgroup where the memory controller can be enabled below this server,
else by summing the memory of the job's processes every 0.5 s and killing the job once it is
over, as LSF does for MEMLIMIT. Either way LaunchExited.limit_reason says so, naming the limit.

Pieces, each loaded by this server from its file (standard library only): runas.py (whose job,
and the switch to that user), cgroups.py (the server's and each job's cgroup v2), jobio.py (a
reaped job's I/O counters), memlimit.py, hoptrace.py (an optional trace of each job's hops); this file is the server itself: its socket, the job's
fork and set-up, the reap.
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


def _load_stdlib_module(full: str):
    """A statgrid module of the standard library only (statgrid.job.protocol, statgrid.host.procfs,
    and this server's pieces beside it: memlimit, cgroups, jobio, runas). Run as a script with -I -S,
    statgrid is not importable: the file is loaded by its path under the package root, under the
    same module name, so there is one definition of the contract. (protocol's imports, dataclasses and typing, add ~10 ms to this
    server's start, paid once per worker: benchmarks/launcher_start.py.)"""
    if __spec__ is not None and __spec__.parent:          # imported as statgrid.grid.execution.launcher
        import importlib
        return importlib.import_module(full)
    import importlib.util

    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(package_root, *full.split(".")[1:]) + ".py"
    spec = importlib.util.spec_from_file_location(full, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module                           # dataclasses and typing look the module up by name
    spec.loader.exec_module(module)
    return module


protocol = _load_stdlib_module("statgrid.job.protocol")
procfs = _load_stdlib_module("statgrid.host.procfs")      # before memlimit and cgroups, which import it
memlimit = _load_stdlib_module("statgrid.grid.execution.memlimit")    # before cgroups, which imports it
cgroups = _load_stdlib_module("statgrid.grid.execution.cgroups")
jobio = _load_stdlib_module("statgrid.grid.execution.jobio")          # after protocol, which it imports
runas = _load_stdlib_module("statgrid.grid.execution.runas")
hoptrace = _load_stdlib_module("statgrid.grid.execution.hoptrace")   # off unless $STATGRID_HOP_TRACE is set
LaunchError = runas.LaunchError
PR_SET_PDEATHSIG = 1
CGROUP_RETRY_S = 0.2                     # how often removal of a killed job's cgroup is retried
STATUS_MAX_BYTES = 4000                  # a child's set-up error: one write, under PIPE_BUF, so it arrives whole
_libc = None


def _prctl_pdeathsig(signum: int) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


def _kill_job(pid: int, cgroup: str | None = None) -> None:
    """SIGKILL a job: its process group, its cgroup if it has one, and the job itself in case its
    group is not set yet."""
    for kill, target in ((os.killpg, pid), (os.kill, pid)):
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if cgroup:
        cgroups.kill_cgroup(cgroup)


class Job:
    def __init__(self, conn: socket.socket, pid: int, cgroup: str | None, status_fd: int, start_ts: float,
                 identity):
        self.conn = conn
        self.pid = pid
        self.cgroup = cgroup                    # its cgroup v2 directory, or None
        self.status_fd: int | None = status_fd  # the child's set-up pipe until it closes (exec, or exit)
        self.status = b""                       # what the child wrote there: why its set-up failed
        self.start_ts = start_ts
        self.identity = identity
        self.failed = False                     # its set-up failed: answered with LaunchFailed
        self.mem_limit_bytes = 0                # its memory reservation, enforced (memlimit.py); 0: none
        self.mem_by_cgroup = False              # enforced by its cgroup's memory.max, else watched
        self.limit_reason: str | None = None    # why it was killed over its limit (LaunchExited.limit_reason)
        self.key = ""                           # its task key (protocol.task_key), for hoptrace


class Server:
    def __init__(self, path: str, use_cgroups: bool = True):
        self.path = path
        self.pid = os.getpid()
        self.as_root = os.geteuid() == 0        # runs each job as its user; else only its own user's jobs
        self.uid = os.getuid()
        self.user_name = runas.account_name(self.uid)
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
        self.cgroup_top, why_not, left = cgroups.make_server_cgroup() if use_cgroups else (None, "--no-cgroup", [])
        if use_cgroups and self.cgroup_top is None:  # the worker's log says once why
            sys.stderr.write(f"statgrid launcher: jobs are tracked by process group only: {why_not}\n")
        self.cgroup_seq = 0
        self.memory_mode, warning = memlimit.mode_from_env(os.environ)
        if self.memory_mode == "watch":
            why_watch = "the node set $STATGRID_MEMORY_LIMIT=watch"
        else:
            why_watch = "no cgroup v2 for its jobs" if self.cgroup_top is None else \
                memlimit.enable_memory_controller(self.cgroup_top)
        self.cgroup_memory = self.memory_mode == "auto" and not why_watch
        if warning:
            sys.stderr.write(f"statgrid launcher: {warning}\n")
        if self.memory_mode == "auto" and why_watch:
            sys.stderr.write("statgrid launcher: memory reservations are enforced by watching each job's processes "
                             f"(memlimit.py), not by memory.max: {why_watch}\n")
        self.next_watch = 0.0
        # Of ended jobs (and of dead servers), until their last process is gone.
        self.cgroups_to_remove: set[str] = set(left)

    # -- main loop ----------------------------------------------------------------------------
    def serve(self) -> None:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        while True:
            waits = [CGROUP_RETRY_S] if self.cgroups_to_remove else []
            if any(self._watched()):
                waits.append(max(0.0, self.next_watch - time.monotonic()))
            events = self.sel.select(min(waits) if waits else None)
            self.cgroups_to_remove = {c for c in self.cgroups_to_remove if not cgroups.remove_cgroup(c)}
            if time.monotonic() >= self.next_watch and any(self._watched()):
                self._watch_memory()
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
                elif isinstance(what, Job):
                    self._read_status(what)
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
            req = protocol.LaunchRequest.from_dict(json.loads(line))
            hoptrace.mark("L.request", req.task_key)
            self._start(conn, req)
        except Exception as exc:                 # a bad request must not stop the server
            error = str(exc) if isinstance(exc, LaunchError) else f"{type(exc).__name__}: {exc}"
            self._send(conn, protocol.LaunchFailed(error=error))
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
        """Start the job of `req` (a protocol.LaunchRequest, checked by from_dict). Raises
        LaunchError, before anything is made, for a job this server must not run."""
        argv, env, cwd = list(req.argv), dict(req.env), req.cwd or "/"
        out_path, err_path = req.stdout, req.stderr
        user = runas.run_as(req.identity, req.host, self.as_root, self.uid)
        if user is not None:
            runas.give_job_dir(req.job_dir, user, req.host)
            env.update(HOME=user.home, USER=user.name, LOGNAME=user.name)    # the account's, not the submitter's shell's
        start_ts = time.time()
        limit = req.mem_limit_bytes if self.memory_mode != "off" else 0
        cgroup = self._new_job_cgroup()
        by_cgroup = bool(limit and cgroup and self.cgroup_memory and memlimit.limit_cgroup(cgroup, limit))
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            os.close(status_r)
            self._child(argv, env, cwd, out_path, err_path, cgroup, user, status_w)     # never returns
        os.close(status_w)
        try:
            # Both sides set the group (as shells do): a kill right after the fork must find it.
            os.setpgid(pid, pid)
        except OSError:
            pass                                 # the child did it first, or has exec'd already
        os.set_blocking(status_r, False)
        job = Job(conn, pid, cgroup, status_r, start_ts, req.identity)
        job.mem_limit_bytes, job.mem_by_cgroup = limit, by_cgroup
        job.key = req.task_key
        hoptrace.mark("L.start", job.key)
        self.jobs[pid] = job
        self.by_conn[conn.fileno()] = job
        self.sel.register(status_r, selectors.EVENT_READ, job)     # LaunchStarted once it closes empty

    def _read_status(self, job: Job, final: bool = False) -> None:
        """Read the child's set-up pipe; at its end, answer: LaunchStarted if it closed empty (the
        exec succeeded), else LaunchFailed with what the child wrote. final: the child is gone, so
        the pipe is at its end."""
        while job.status_fd is not None:
            try:
                data = os.read(job.status_fd, 4096)
            except BlockingIOError:
                if not final:
                    return
                data = b""
            if data:
                job.status += data
                continue
            self.sel.unregister(job.status_fd)
            os.close(job.status_fd)
            job.status_fd = None
        if job.status:
            job.failed = True
            self._send(job.conn, protocol.LaunchFailed(error=job.status.decode(errors="replace")))
            if job.conn is not None:
                self._drop(job.conn)             # the child is leaving: nothing more to say
        else:
            self._send(job.conn, protocol.LaunchStarted(pid=job.pid, pgid=job.pid, cgroup=job.cgroup,
                                                        start_ts=job.start_ts, identity=job.identity))
            hoptrace.mark("L.started_sent", job.key)

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

    def _child(self, argv, env, cwd, out_path, err_path, cgroup, user: runas.RunAs | None, status_w: int) -> None:
        """The job's process: set up, then exec. A set-up failure is written to status_w (the
        server answers LaunchFailed); a failed exec is reported like a shell's (exit 127)."""
        try:
            os.setpgid(0, 0)                     # own process group: kill reaches the job and its children
            if cgroup:
                try:                             # before exec: every process of the job starts inside
                    memlimit.write_cgroup_file(os.path.join(cgroup, "cgroup.procs"), "0")
                except OSError:
                    pass                         # its process group still holds it
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            # The grid's daemons run with umask 077 (their files are theirs alone); a job gets the
            # usual 022, so what it writes to shared libraries others may read, as at a login.
            os.umask(0o022)
            name = self.user_name
            if user is not None:
                runas.become(user)
                name = user.name
            # After the switch: a change of uid or gid clears the parent-death signal (prctl(2)).
            _prctl_pdeathsig(signal.SIGKILL)
            if os.getppid() != self.pid:         # the server died between fork and prctl
                os._exit(1)
            fd_in = os.open("/dev/null", os.O_RDONLY)
            # Opened as the job's user: its files, private, and never through a link.
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
            try:
                fd_out = os.open(out_path, flags, 0o600)
                fd_err = fd_out if err_path == out_path else os.open(err_path, flags, 0o600)
            except OSError as exc:
                raise LaunchError(f"user {name!r} cannot open the job's output file {exc.filename!r}: "
                                  f"{exc.strerror}; the job directory must be reachable by {name!r} (every "
                                  "directory above it searchable by them, e.g. chmod o+x) and the file must not be "
                                  "a symbolic link") from None
            try:
                os.chdir(cwd)
            except OSError as exc:
                raise LaunchError(f"user {name!r} cannot enter the working directory {cwd!r}: {exc.strerror}; "
                                  f"submit from a directory {name!r} may enter") from None
            os.dup2(fd_in, 0)
            os.dup2(fd_out, 1)
            os.dup2(fd_err, 2)
            os.closerange(3, status_w)
            os.closerange(status_w + 1, max(65536, os.sysconf("SC_OPEN_MAX")))   # no fd of the server leaks in
        except BaseException as exc:             # noqa: BLE001 — the job never ran: tell the server, leave
            error = str(exc) if isinstance(exc, LaunchError) else f"cannot start the job: {type(exc).__name__}: {exc}"
            try:
                os.write(status_w, error.encode(errors="replace")[:STATUS_MAX_BYTES])
            finally:
                os._exit(127)
        try:
            os.execvpe(argv[0], argv, env)       # closes status_w (close-on-exec): the server's "started"
        except BaseException as exc:             # noqa: BLE001 — report like a shell, then leave
            try:
                os.write(2, f"statgrid launcher: cannot run {argv[0]!r}: {exc}\n".encode())
            finally:
                os._exit(127)

    def _reap(self) -> None:
        while self.jobs:
            # WEXITED alone (no WSTOPPED, WCONTINUED): a job suspended with SIGSTOP (node.suspend_job)
            # sends SIGCHLD, which wakes this loop, but is not reported as ended; nor by wait4(pid, 0).
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None:
                return
            pid = info.si_pid
            io = jobio.read_proc_io(pid)               # before reaping: the zombie still has its counters
            # What the job left in its process group (or, having left the group, in its cgroup) in
            # the background ends with it: it would hold a slot the master has freed. The zombie
            # still owns the pgid: no reuse yet.
            job = self.jobs.get(pid)
            if job is not None and job.status_fd is not None:
                self._read_status(job, final=True)       # "started" (or "failed") before "exited"
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if job is not None and job.cgroup:
                cgroups.kill_cgroup(job.cgroup)
            before = None if io is not None else jobio.own_io()    # the zombie's counters were refused: see own_io
            _, status, ru = os.wait4(pid, 0)
            if before is not None:
                io = jobio.reaped_io(before, jobio.own_io())
            end_ts = time.time()
            job = self.jobs.pop(pid, None)
            if job is None:
                continue
            hoptrace.mark("L.reaped", job.key)
            if job.mem_by_cgroup and job.limit_reason is None:
                job.limit_reason = memlimit.oom_kill_reason(job.cgroup, job.mem_limit_bytes)
            if job.cgroup and not cgroups.remove_cgroup(job.cgroup):
                self.cgroups_to_remove.add(job.cgroup)
            msg = protocol.LaunchExited(pid=pid, end_ts=end_ts, rusage=protocol.Rusage.from_wait4(ru), io=io,
                                        exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                                        signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                                        limit_reason=job.limit_reason)
            if job.conn is not None and not job.failed:
                self.by_conn.pop(job.conn.fileno(), None)
                self._send(job.conn, msg)
                hoptrace.mark("L.exited_sent", job.key)
                self._drop(job.conn)

    # -- memory limits watched (memlimit.py) ---------------------------------------------------------
    def _watched(self):
        """Running jobs whose memory limit this server enforces by looking (no memory.max)."""
        return (job for job in self.jobs.values()
                if job.mem_limit_bytes and not job.mem_by_cgroup and job.limit_reason is None)

    def _watch_memory(self) -> None:
        """Kill each watched job whose processes' memory is past its limit (LSF MEMLIMIT)."""
        self.next_watch = time.monotonic() + memlimit.WATCH_INTERVAL_S
        table = None
        for job in list(self._watched()):
            pids = memlimit.cgroup_pids(job.cgroup) if job.cgroup else None
            by_tree = pids is None
            if by_tree:
                if table is None:
                    table = memlimit.process_table()
                pids = memlimit.tree_pids(job.pid, table)
            used = memlimit.memory_bytes(pids)
            if used > job.mem_limit_bytes:
                job.limit_reason = memlimit.watch_reason(job.mem_limit_bytes, used)
                _kill_job(job.pid, job.cgroup)
                if by_tree:                      # no cgroup: what left the group (setsid) was counted, so ends too
                    for pid in pids:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass

    def _shutdown(self) -> None:
        left = self.cgroups_to_remove | {job.cgroup for job in self.jobs.values() if job.cgroup}
        for job in list(self.jobs.values()):
            _kill_job(job.pid, job.cgroup)
        deadline = time.monotonic() + 5
        while self.jobs and time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            self.jobs.pop(pid, None)
        while left and time.monotonic() < deadline:
            left = {c for c in left if not cgroups.remove_cgroup(c)}
            if left:
                time.sleep(0.05)
        if self.cgroup_top is not None:
            cgroups.leave_server_cgroup(self.cgroup_top)
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
    Server(argv[1], use_cgroups=argv[2:] != ["--no-cgroup"]).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
