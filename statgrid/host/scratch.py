"""WORK and UTIL directories: one fresh directory per session, gone when the session ends.

Each directory holds a marker file that the session keeps open with an exclusive flock for its
whole life. The kernel drops the lock when the process dies however it dies (even SIGKILL), so
`cleanwork` can tell a dead session's directory from a live one without trusting pid numbers,
and it works across hosts on file systems with working locks (GPFS, Lustre, NFS v4). On the
same host the pid and its start time are checked as well.
"""
from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import pwd
import re
import shutil
import socket
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from statgrid.errors import StatgridError
from statgrid.host import procfs as _procfs

_log = logging.getLogger("statgrid.scratch")

MARKER = ".statgrid-session"
_DIR_RE = re.compile(r"^SG(work|util)_[0-9a-f]+_[0-9a-z]+$")
_GRACE_S = 60.0  # a directory without a marker may be a session being born


def _user_name() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


def _denied_error(root: Path, kind: str, path: Path | None, exc: OSError) -> StatgridError:
    """Permission denied: on a grid whose nodes run as root each session runs as its user, who
    must be able to create directories in the root."""
    try:
        st = os.stat(root)
        try:
            owner = pwd.getpwuid(st.st_uid).pw_name
        except KeyError:
            owner = f"uid {st.st_uid}"
        where = f"{str(root)!r} is mode {stat.S_IMODE(st.st_mode):04o}, owned by {owner}"
    except OSError:
        where = f"{str(root)!r} does not exist and cannot be created"
    what = str(path) if path is not None else f"SG{kind}_* under {root}"
    return StatgridError(f"cannot create the {kind.upper()} directory {what!r} as user {_user_name()!r}: "
                         f"{exc.strerror}; {where}. Every user who runs sessions must be able to create directories "
                         f"there: make it like /tmp (`chmod 1777 {root}`, as a grid node run as root does when it "
                         f"creates it), or point [libraries] {kind} in grid.toml at such a directory.")


def _create_error(root: Path, kind: str, exc: OSError, path: Path | None = None) -> StatgridError:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return _denied_error(root, kind, path, exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StatgridError(f"no space left on device for the {kind.upper()} directory under {str(root)!r}; "
                             f"free space there or point [libraries] {kind} in grid.toml at a larger file system.")
    if exc.errno in (errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP):
        return StatgridError(f"the file system of {str(root)!r} does not support file locks ({exc.strerror}), "
                             f"which {kind.upper()} directories need; mount it with locking (e.g. NFS with lockd, "
                             f"Lustre -o flock) or point [libraries] {kind} in grid.toml at a local file system.")
    return StatgridError(f"cannot create the {kind.upper()} directory under {str(root)!r}: {exc.strerror}; "
                         f"check [libraries] {kind} in grid.toml and the directory's permissions.")


@dataclass
class ScratchDir:
    path: Path
    kind: str
    _lock_fd: int | None

    @classmethod
    def create(cls, root: Path, kind: str, session_id: str) -> "ScratchDir":
        """Make `<root>/SG<kind>_<session_id>` with mode 0700, locked by this process.

        The marker is written under a temporary name, locked, then renamed into place (the lock
        belongs to the inode and survives the rename), so `cleanwork` never sees an unlocked,
        empty marker of a session that is starting.
        """
        path, fd = root / f"SG{kind}_{session_id}", None
        try:
            root.mkdir(parents=True, exist_ok=True)
            path.mkdir(mode=0o700)
            tmp = path / (MARKER + ".new")
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            info = {"pid": os.getpid(), "host": socket.gethostname(), "starttime": _procfs.read_starttime(),
                    "created": time.time()}
            os.write(fd, json.dumps(info).encode())
            os.rename(tmp, path / MARKER)
        except OSError as exc:
            if fd is not None:
                os.close(fd)
            shutil.rmtree(path, ignore_errors=True)
            raise _create_error(root, kind, exc, path) from None
        return cls(path, kind, fd)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


@dataclass(frozen=True)
class CleanResult:
    path: Path
    action: str   # removed | live | skipped
    reason: str


def _same_host_alive(info: dict) -> bool:
    if info.get("host") != socket.gethostname():
        return False
    pid = info.get("pid")
    if not isinstance(pid, int):
        return False
    start = _procfs.read_starttime(pid=pid)
    # A zombie holds no file and runs no code: its WORK is free to go (after a launcher died, the
    # session's zombie may wait long for PID 1 to reap it).
    return start is not None and start == info.get("starttime") and _procfs.process_running(pid)


def clean_stale(roots: list[Path], dry_run: bool = False, all_hosts: bool = False) -> list[CleanResult]:
    """Remove WORK/UTIL directories whose session no longer exists; never touch a live one.

    Directories of sessions on other hosts are left alone unless all_hosts is set: there only
    the lock tells live from dead, and on file systems whose locks are local to a host
    (Lustre -o localflock, NFS without lockd) a live remote session's lock is invisible here.
    """
    results = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.iterdir()):
            if not (path.is_dir() and _DIR_RE.match(path.name)):
                continue
            results.append(_clean_one(path, dry_run, all_hosts))
    return results


def _clean_one(path: Path, dry_run: bool, all_hosts: bool = False) -> CleanResult:
    """Judge one WORK/UTIL directory by its marker and remove it if its session is gone.

    Run as root (a node, `cleanwork`), this reads a directory its user owns under a 1777 root: so
    the directory must be a directory (not a link), the marker a regular file of the directory's
    owner opened without following a link or blocking (a FIFO would hang the node; a link to a
    device would have root open it), and the removal runs as the owner (`_remove`)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return CleanResult(path, "skipped", "already removed")
    if not stat.S_ISDIR(st.st_mode):
        return CleanResult(path, "skipped", "not a directory (a link?): left alone")
    try:
        dfd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return CleanResult(path, "skipped", "already removed")
    except PermissionError:
        return CleanResult(path, "skipped", f"owned by uid {st.st_uid}; run cleanwork as that user or as root")
    except OSError as exc:
        return CleanResult(path, "skipped", f"cannot open it ({exc.strerror})")
    try:
        if not os.path.samestat(os.fstat(dfd), st):
            return CleanResult(path, "skipped", "replaced while being read: left alone")
        try:
            fd = os.open(MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
        except FileNotFoundError:
            age_s = time.time() - st.st_mtime
            if age_s < _GRACE_S:
                return CleanResult(path, "skipped", f"no marker yet, {age_s:.0f} s old (may be starting)")
            if not dry_run:
                _remove(path, st)
            return CleanResult(path, "removed", "no session marker")
        except PermissionError:
            return CleanResult(path, "skipped", f"owned by uid {st.st_uid}; run cleanwork as that user or as root")
        except OSError as exc:
            return CleanResult(path, "skipped", f"its session marker cannot be opened ({exc.strerror}): a link? "
                                                "Left alone")
    finally:
        os.close(dfd)
    try:
        mst = os.fstat(fd)
        if not stat.S_ISREG(mst.st_mode) or mst.st_uid != st.st_uid:
            return CleanResult(path, "skipped", "its session marker is not a regular file of the directory's owner: "
                                                "left alone")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return CleanResult(path, "live", "session holds its lock")
        try:
            info = json.loads(os.read(fd, 4096))
        except ValueError:
            return CleanResult(path, "skipped", "unreadable session marker; remove it by hand if the session is gone")
        if _same_host_alive(info):
            return CleanResult(path, "live", f"pid {info['pid']} is running")
        host = info.get("host")
        if host != socket.gethostname() and not all_hosts:
            return CleanResult(path, "skipped", f"session of host {host!r}; run cleanwork there, or pass --all-hosts "
                                                "if this file system's locks work across hosts")
        if not dry_run:
            _remove(path, st)
        return CleanResult(path, "removed", f"pid {info.get('pid')} on {info.get('host')} has ended")
    finally:
        os.close(fd)


REMOVE_AS_OWNER_TIMEOUT_S = 120.0


def _remove(path: Path, st: os.stat_result) -> None:
    """rmtree the directory; as root, in a child that has become the directory's owner first, so
    whatever the owner put there (links, a FIFO swapped in mid-way) can do no more than the owner
    could, and a hang ends with the child (killed after REMOVE_AS_OWNER_TIMEOUT_S)."""
    if os.geteuid() != 0 or st.st_uid == 0:
        shutil.rmtree(path, ignore_errors=True)
        return
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(st.st_gid)
            os.setuid(st.st_uid)
            shutil.rmtree(path, ignore_errors=True)
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + REMOVE_AS_OWNER_TIMEOUT_S
    while True:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return
        time.sleep(0.02)


def prepare_work_roots(roots: list[str]) -> None:
    """A node run as root runs sessions as their users, and each creates its SGwork_/SGutil_
    directory (0700) under the [libraries] work and util roots: make a missing root like /tmp
    (1777: anyone may create there, only an entry's owner may remove it); say in the log what to
    do with one that exists and is not. Before jobs are dispatched here (the master waits for
    prepare), so no session creates a root as its own."""
    for root in roots:
        try:
            os.makedirs(root)
        except FileExistsError:
            try:
                mode = os.stat(root).st_mode
            except OSError as exc:
                _log.warning("[libraries] root %s: %s", root, exc.strerror)
                continue
            if not stat.S_ISDIR(mode):
                _log.warning("[libraries] root %s is not a directory: sessions cannot create WORK/UTIL there; "
                               "remove it or point [libraries] work/util in grid.toml elsewhere", root)
            elif not mode & stat.S_IWOTH:
                _log.warning("[libraries] root %s is mode %04o: jobs run as their users, who cannot create their "
                               "WORK/UTIL directories there; make it like /tmp: chmod 1777 %s",
                               root, stat.S_IMODE(mode), root)
            elif not mode & stat.S_ISVTX:
                _log.warning("[libraries] root %s is mode %04o, writable by all without the sticky bit: any user "
                               "may remove another's WORK/UTIL there; chmod +t %s", root, stat.S_IMODE(mode), root)
            continue
        except OSError as exc:
            _log.warning("[libraries] root %s cannot be created (%s): sessions will fail to create WORK/UTIL "
                           "there; create it with mode 1777 or fix [libraries] in grid.toml", root, exc.strerror)
            continue
        # chmod: mkdir's mode is cut by the umask. Through the directory just made, never a link
        # swapped in for it (a user who may write the parent could aim a path chmod anywhere).
        try:
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            _log.warning("[libraries] root %s changed while being made (%s): left alone", root, exc.strerror)
            continue
        try:
            os.fchmod(fd, 0o1777)
        finally:
            os.close(fd)
