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
import os
import re
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from statgrid.errors import StatgridError
from statgrid.session import _procfs

MARKER = ".statgrid-session"
_DIR_RE = re.compile(r"^SG(work|util)_[0-9a-f]+_[0-9a-z]+$")
_GRACE_S = 60.0  # a directory without a marker may be a session being born


def _disk_full_hint(root: Path, kind: str, exc: OSError) -> StatgridError:
    if exc.errno == errno.ENOSPC:
        return StatgridError(f"no space left on device for the {kind.upper()} directory under {str(root)!r}; "
                             f"free space there or point [libraries] {kind} in grid.toml at a larger file system.")
    return StatgridError(f"cannot create the {kind.upper()} directory under {str(root)!r}: {exc.strerror}; "
                         f"check [libraries] {kind} in grid.toml.")


@dataclass
class ScratchDir:
    path: Path
    kind: str
    _lock_fd: int | None

    @classmethod
    def create(cls, root: Path, kind: str, session_id: str) -> "ScratchDir":
        """Make `<root>/SG<kind>_<session_id>` with mode 0700, locked by this process."""
        try:
            root.mkdir(parents=True, exist_ok=True)
            path = root / f"SG{kind}_{session_id}"
            path.mkdir(mode=0o700)
            fd = os.open(path / MARKER, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise _disk_full_hint(root, kind, exc) from None
        fcntl.flock(fd, fcntl.LOCK_EX)
        info = {"pid": os.getpid(), "host": socket.gethostname(), "starttime": _procfs.read_starttime(),
                "created": time.time()}
        try:
            os.write(fd, json.dumps(info).encode())
        except OSError as exc:
            os.close(fd)
            shutil.rmtree(path, ignore_errors=True)
            raise _disk_full_hint(root, kind, exc) from None
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
    return start is not None and start == info.get("starttime")


def clean_stale(roots: list[Path], dry_run: bool = False) -> list[CleanResult]:
    """Remove WORK/UTIL directories whose session no longer exists; never touch a live one."""
    results = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.iterdir()):
            if not (path.is_dir() and _DIR_RE.match(path.name)):
                continue
            results.append(_clean_one(path, dry_run))
    return results


def _clean_one(path: Path, dry_run: bool) -> CleanResult:
    marker = path / MARKER
    try:
        fd = os.open(marker, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        age_s = time.time() - path.stat().st_mtime
        if age_s < _GRACE_S:
            return CleanResult(path, "skipped", f"no marker yet, {age_s:.0f} s old (may be starting)")
        if not dry_run:
            shutil.rmtree(path, ignore_errors=True)
        return CleanResult(path, "removed", "no session marker")
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return CleanResult(path, "live", "session holds its lock")
        try:
            info = json.loads(os.read(fd, 4096) or b"{}")
        except ValueError:
            info = {}
        if _same_host_alive(info):
            return CleanResult(path, "live", f"pid {info['pid']} is running")
        if not dry_run:
            shutil.rmtree(path, ignore_errors=True)
        who = f"pid {info.get('pid')} on {info.get('host')}" if info else "unknown session"
        return CleanResult(path, "removed", f"{who} has ended")
    finally:
        os.close(fd)
