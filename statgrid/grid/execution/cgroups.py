"""cgroup v2 for the node launcher's jobs: find this process's cgroup, make the server's own
(`<own cgroup>/statgrid-launcher-<pid>`, the server in its `launcher` leaf, each job in a `job-<n>`
beside it), kill, freeze and remove a job's, and sweep what dead servers left (launcher.py says
why each job gets one). The node uses the same functions on a job's cgroup (node.py).

Documentation/admin-guide/cgroup-v2.rst: a process moves by writing "0" (itself) to a cgroup's
cgroup.procs, which needs write access to cgroup.procs of the common ancestor of both cgroups;
cgroup.kill (Linux 5.14) SIGKILLs every process of a cgroup in one write, forks racing with it
included, frozen ones too; cgroup.freeze (Linux 5.2) stops and resumes them all (node.suspend_job);
cgroup.events says "populated 0" once none is left; rmdir removes an empty cgroup.

Standard library only: the launcher (`python -I -S`) loads this file by its path (launcher.py),
after procfs.py and memlimit.py.
"""
from __future__ import annotations

import errno
import os
import signal

# Standard library only too; under the launcher they are loaded by path before this file (launcher.py).
from statgrid.grid.execution.memlimit import write_cgroup_file as _write
from statgrid.host.procfs import PROCFS_PATH

CGROUP_PREFIX = "statgrid-launcher-"     # + the server's pid; the cgroup of one server and its jobs
CGROUP_SERVER_LEAF = "launcher"          # the server's own leaf: populated while the server lives
SERVER_SCRIPT = "launcher.py"            # the server's script, as its command line names it


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

def _event(path: str, line: str) -> bool:
    """True when the cgroup's cgroup.events holds this line; False when not, or the cgroup is gone."""
    try:
        with open(os.path.join(path, "cgroup.events")) as f:
            return line in f.read().split("\n")
    except OSError:
        return False


def cgroup_populated(path: str) -> bool:
    """True while a process (not a zombie) is in the cgroup or below; False once it is gone."""
    return _event(path, "populated 1")


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
    return _event(path, "frozen 1")


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
            return SERVER_SCRIPT.encode() in f.read()
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

