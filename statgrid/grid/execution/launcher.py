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
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import pwd
import selectors
import signal
import socket
import sys
import time


def _load_stdlib_module(full: str):
    """A statgrid module of the standard library only (statgrid.job.protocol, statgrid.host.procfs,
    statgrid.grid.execution.memlimit). Run as a script with -I -S, statgrid is not importable: the file
    is loaded by its path under the package root, under the same module name, so there is one
    definition of the contract. (protocol's imports, dataclasses and typing, add ~10 ms to this
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
procfs = _load_stdlib_module("statgrid.host.procfs")      # before memlimit, which imports it
memlimit = _load_stdlib_module("statgrid.grid.execution.memlimit")
PR_SET_PDEATHSIG = 1
PROCFS_PATH = procfs.PROCFS_PATH
CGROUP_PREFIX = "statgrid-launcher-"     # + the server's pid; the cgroup of one server and its jobs
CGROUP_SERVER_LEAF = "launcher"          # the server's own leaf: populated while the server lives
CGROUP_RETRY_S = 0.2                     # how often removal of a killed job's cgroup is retried
STATUS_MAX_BYTES = 4000                  # a child's set-up error: one write, under PIPE_BUF, so it arrives whole
_libc = None


class LaunchError(Exception):
    """A job this server will not run, or whose set-up failed: its text is the job's exit reason
    (LaunchFailed.error) as it stands, naming the bad value and the fix."""


class RunAs:
    """The account a job runs as: its ids from this machine's user database, and the environment
    variables that name it."""
    __slots__ = ("name", "uid", "gid", "groups", "home")

    def __init__(self, name: str, uid: int, gid: int, groups: tuple[int, ...], home: str):
        self.name, self.uid, self.gid, self.groups, self.home = name, uid, gid, groups, home


def _account_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _where(host: str) -> str:
    """'host node1', with the machine's own name if the grid calls it otherwise."""
    machine = socket.gethostname()
    return f"host {host}" if machine == host else f"host {host} (machine {machine})"


def run_as(identity, host: str, as_root: bool, own_uid: int) -> RunAs | None:
    """The account the job of `identity` (a protocol.Identity) runs as on this machine; None: as
    this server's own user, unchanged. Raises LaunchError if this server must not run it."""
    if not as_root:
        if identity.uid is None or identity.uid != own_uid:
            me = _account_name(own_uid)
            whose = f"{identity.user!r} (uid {identity.uid})" if identity.uid is not None else \
                f"{identity.user!r}, whom the master does not know (no uid)"
            raise LaunchError(f"this node runs as {me!r} (uid {own_uid}), not root, so it runs only {me}'s jobs, "
                              f"and this is a job of {whose}; submit it as {me!r}, or run the grid's nodes as root "
                              "to run each user's jobs as that user")
        return None
    where = _where(host)
    try:
        entry = pwd.getpwnam(identity.user)
    except KeyError:
        raise LaunchError(f"user {identity.user!r} is unknown on {where}: no such account in this machine's user "
                          "database; the account must exist, with the same uid and gid, on the master and on every "
                          "host (a directory service such as LDAP, or the same /etc/passwd entry)") from None
    if identity.uid is None or (entry.pw_uid, entry.pw_gid) != (identity.uid, identity.gid):
        on_master = "unknown on the master (it has no uid for them)" if identity.uid is None else \
            f"uid {identity.uid} gid {identity.gid} on the master"
        raise LaunchError(f"user {identity.user!r} is {on_master} but uid {entry.pw_uid} gid {entry.pw_gid} on "
                          f"{where}: the user databases disagree; give the account the same uid and gid on the "
                          "master and on every host")
    try:
        groups = os.getgrouplist(entry.pw_name, entry.pw_gid)
    except OSError as exc:
        raise LaunchError(f"cannot list the groups of user {identity.user!r} on {where} ({exc}); check this "
                          "machine's group database") from None
    return RunAs(entry.pw_name, entry.pw_uid, entry.pw_gid, tuple(dict.fromkeys([entry.pw_gid, *groups])),
                 entry.pw_dir)


def give_job_dir(path: str, user: RunAs, host: str) -> None:
    """Make the job's directory the user's (0700), so the files the job writes there are its
    user's alone. Opened without following a link: a link planted there is refused, not followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fchown(fd, user.uid, user.gid)
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)
    except OSError as exc:
        raise LaunchError(f"cannot give the job directory {path!r} to user {user.name!r} on {_where(host)}: "
                          f"{exc.strerror}; it must be a directory (not a symbolic link) that root may chown here "
                          "(a grid home on NFS needs no_root_squash for a node run as root)") from None


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
# included, frozen ones too; cgroup.freeze (Linux 5.2) stops and resumes them all (node.suspend_job);
# cgroup.events says "populated 0" once none is left; rmdir removes an empty cgroup.

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


_write = memlimit.write_cgroup_file


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


def freeze_cgroup(path: str, frozen: bool) -> bool:
    """Write the cgroup's cgroup.freeze (Linux 5.2): 1 stops every process in it and below (those
    that called setsid included, and children they fork meanwhile) until 0 lets them run again.
    The kernel completes a freeze asynchronously: cgroup_frozen says when it has. A frozen process
    still dies of SIGKILL (and of a signal whose default action ends it); a signal it handles
    waits until the thaw. False if the file cannot be written (an older kernel, the cgroup gone)."""
    try:
        _write(os.path.join(path, "cgroup.freeze"), "1" if frozen else "0")
    except OSError:
        return False
    return True


def cgroup_frozen(path: str) -> bool:
    """True once cgroup.events says "frozen 1": every process of the cgroup has stopped."""
    try:
        with open(os.path.join(path, "cgroup.events")) as f:
            return "frozen 1" in f.read().split("\n")
    except OSError:
        return False


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


def _become(user: RunAs) -> None:
    """Switch this (child) process to the user for good: groups, gid, then uid (setuid as root
    sets the real, effective and saved ids: none is left to regain root with)."""
    try:
        os.setgroups(list(user.groups))
        os.setgid(user.gid)
        os.setuid(user.uid)
    except OSError as exc:
        raise LaunchError(f"cannot switch to user {user.name!r} (uid {user.uid}, gid {user.gid}): {exc}; the node "
                          "must run as root to run jobs as their users") from None
    if os.getresuid() != (user.uid,) * 3 or os.getresgid() != (user.gid,) * 3:
        raise LaunchError(f"switching to user {user.name!r} left ids {os.getresuid()}/{os.getresgid()}, not "
                          f"{user.uid}/{user.gid}: the job was not run")
    if user.uid != 0:
        try:
            os.setuid(0)
        except PermissionError:
            return
        raise LaunchError(f"after switching to user {user.name!r} the process could become root again: the job "
                          "was not run")


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


class Server:
    def __init__(self, path: str, cgroups: bool = True):
        self.path = path
        self.pid = os.getpid()
        self.as_root = os.geteuid() == 0        # runs each job as its user; else only its own user's jobs
        self.uid = os.getuid()
        self.user_name = _account_name(self.uid)
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
            self.cgroups_to_remove = {c for c in self.cgroups_to_remove if not remove_cgroup(c)}
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
            self._start(conn, protocol.LaunchRequest.from_dict(json.loads(line)))
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
        user = run_as(req.identity, req.host, self.as_root, self.uid)
        if user is not None:
            give_job_dir(req.job_dir, user, req.host)
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

    def _child(self, argv, env, cwd, out_path, err_path, cgroup, user: RunAs | None, status_w: int) -> None:
        """The job's process: set up, then exec. A set-up failure is written to status_w (the
        server answers LaunchFailed); a failed exec is reported like a shell's (exit 127)."""
        try:
            os.setpgid(0, 0)                     # own process group: kill reaches the job and its children
            if cgroup:
                try:                             # before exec: every process of the job starts inside
                    _write(os.path.join(cgroup, "cgroup.procs"), "0")
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
                _become(user)
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
            io = read_proc_io(pid)               # before reaping: the zombie still has its counters
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
                kill_cgroup(job.cgroup)
            before = None if io is not None else own_io()    # the zombie's counters were refused: see own_io
            _, status, ru = os.wait4(pid, 0)
            if before is not None:
                io = reaped_io(before, own_io())
            end_ts = time.time()
            job = self.jobs.pop(pid, None)
            if job is None:
                continue
            if job.mem_by_cgroup and job.limit_reason is None:
                job.limit_reason = memlimit.oom_kill_reason(job.cgroup, job.mem_limit_bytes)
            if job.cgroup and not remove_cgroup(job.cgroup):
                self.cgroups_to_remove.add(job.cgroup)
            msg = protocol.LaunchExited(pid=pid, end_ts=end_ts, rusage=protocol.Rusage.from_wait4(ru), io=io,
                                        exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                                        signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                                        limit_reason=job.limit_reason)
            if job.conn is not None and not job.failed:
                self.by_conn.pop(job.conn.fileno(), None)
                self._send(job.conn, msg)
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
