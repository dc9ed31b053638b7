"""Files the grid's processes write and others read while they may be half written: each appears
whole (written beside, then renamed) — attempt records, master.json, engine.json, the TLS keys.
And files the grid (root) reads from a directory a user owns — a job's output, its STIMER
records, old attempt records: `read_untrusted`."""
from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path


def write_atomic(path: Path, data: bytes, private: bool = False) -> None:
    """Write `path` whole or not at all. private: readable by its owner only, 0600 from the start
    whatever the umask (keys; engine.json, whose address alone lets a peer run code without TLS).
    The temporary name carries pid and thread: workers write attempt files from several threads."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o666)
    try:
        if private:
            os.fchmod(fd, 0o600)
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def write_json_atomic(path: Path, data: dict, private: bool = False) -> None:
    write_atomic(path, json.dumps(data).encode(), private)


class NotTrusted(OSError):
    """A file put where the grid reads from a user's directory that it must not read: a link, a
    FIFO or device, or a file of another account (a hard link to it)."""


def read_untrusted(path: Path, max_bytes: int, owner_uid: int | None = None, tail: bool = False,
                   offset: int = 0) -> bytes:
    """Up to max_bytes of a regular file in a directory a user may write to (the first, from
    offset, or with tail the last): opened without following a link and without blocking (a FIFO would hang the
    reader), and, with owner_uid, only if that account owns it. Raises FileNotFoundError,
    NotTrusted (saying why), or OSError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise NotTrusted(exc.errno, f"{path} cannot be opened without following a link ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotTrusted(f"{path} is not a regular file (a FIFO, a device or a directory was put in its place)")
        if owner_uid is not None and st.st_uid != owner_uid:
            raise NotTrusted(f"{path} belongs to uid {st.st_uid}, not to uid {owner_uid} (another account's file was "
                             "put in its place)")
        if tail:
            offset = max(0, st.st_size - max_bytes)
        return os.pread(fd, max_bytes, offset)
    finally:
        os.close(fd)
