"""A full file system under the grid home, told apart from the master's faults (issue 24).

SQLite reports SQLITE_FULL as "database or disk is full" (sqlite3.OperationalError, error code 13,
https://www.sqlite.org/rescode.html#full); a write of our own reports ENOSPC, or EDQUOT over a quota
(write(2)). The API answers either with 503 naming the file system, its mount point and its free
bytes: the master is sound, the disk is not, and the request can be sent again once there is room.
"""
from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

SQLITE_FULL = 13
RETRY_AFTER_S = 60


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether `exc`, or an exception it was raised from, is a full file system."""
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL
                                               or "database or disk is full" in str(exc)):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def mount_point(path: Path) -> Path:
    """The mount point of the file system holding `path` (the highest directory on its device)."""
    path = Path(os.path.abspath(path))
    dev = os.stat(path).st_dev
    while path.parent != path and os.stat(path.parent).st_dev == dev:
        path = path.parent
    return path


def message(home: Path, what: str) -> str:
    """'the file system of the grid home … is full: …' with its mount point, free and total bytes."""
    try:
        st = os.statvfs(home)
        free_bytes, total_bytes = st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize
        where = (f"the file system mounted at {str(mount_point(home))!r} has {free_bytes:,} bytes free of "
                 f"{total_bytes:,}")
    except OSError as exc:
        where = f"its file system cannot be examined ({exc.strerror})"
    return (f"{what} was not done: the grid home {str(home)!r} is on a full file system ({where}). Free space there (or give the grid home more), then send it again; the master "
            "itself is running.")
