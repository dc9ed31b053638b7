"""Whether the user running statgrid may read a whole results bundle, checked before anything of it is read.

`statgrid advise`, `size` and `inventory --bundle` read several files of a bundle (bundle.json, jobs.jsonl,
inventory.json, workload.toml, the monitor's series). A bundle of another user with mode 0700 (or one file of
it kept private) would otherwise end in a traceback part-way, possibly after some of it was printed. This walks
the bundle first (directories need read and search, files read: os.access, the real user's rights) and
refuses with the first path that cannot be read, its owner and mode, and what to do — reading no file.
"""
from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

from statgrid.errors import StatgridError


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _me() -> str:
    return _owner(os.getuid())


def first_unreadable(root: Path) -> Path | None:
    """The first directory under root (root included) this user may not list and enter, or file it may not
    read; None when every part can be read."""
    if not os.access(root, os.R_OK | os.X_OK):
        return root
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append):
        for d in sorted(dirnames):
            p = Path(dirpath) / d
            if not os.access(p, os.R_OK | os.X_OK):
                return p
        for f in sorted(filenames):
            p = Path(dirpath) / f
            if not os.access(p, os.R_OK) and os.path.exists(p):    # a dangling symlink is not unreadable
                return p
    if errors:
        return Path(errors[0].filename) if errors[0].filename else root
    return None


def _refusal(option: str, root: Path, bad: Path) -> StatgridError:
    try:
        st = bad.stat()
        what = (f"{'the directory' if stat.S_ISDIR(st.st_mode) else 'the file'} {str(bad)!r} belongs to "
                f"{_owner(st.st_uid)} with mode {stat.S_IMODE(st.st_mode):04o} ({stat.filemode(st.st_mode)})")
    except OSError:
        what = f"{str(bad)!r} cannot be looked at (a directory above it is closed to {_me()})"
    return StatgridError(f"{option} {str(root)!r} cannot be read by {_me()}: {what}; nothing of it was read. Ask its "
                         f"owner to share it (e.g. `chmod -R g+rX` with a group you are in) or to copy it for you.")


def readable_bundle(path: str | os.PathLike, option: str = "BUNDLE") -> Path:
    """path, when it does not exist, is not a directory, or can be read whole by this user (the callers say
    what a missing or wrong path is); else a StatgridError naming the first part that cannot be read."""
    root = Path(path)
    try:
        st = root.stat()
    except FileNotFoundError:
        return root
    except PermissionError:
        raise _refusal(option, root, root) from None
    if not stat.S_ISDIR(st.st_mode):
        return root
    bad = first_unreadable(root)
    if bad is not None:
        raise _refusal(option, root, bad)
    return root
