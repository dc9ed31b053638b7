"""The master's local socket, `<home>/grid/master.sock`: binding and connecting by path.

A Unix socket's path must fit sun_path (108 bytes, unix(7)); a grid home deep in a file system
(a test's temporary directory) can pass that. Then the directory is opened and the socket named
through /proc/self/fd/N/<name>, which the kernel resolves like any path: short, and the same
socket.
"""
from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import Iterator

SOCKET_NAME = "master.sock"
SUN_PATH_MAX = 107                      # 108 bytes with the NUL


def socket_path(home: Path) -> Path:
    """The master's local socket of the grid home `home`."""
    return home / "grid" / SOCKET_NAME


@contextlib.contextmanager
def _short(path: Path) -> Iterator[str]:
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def bind(path: Path, mode: int = 0o666) -> socket.socket:
    """A listening AF_UNIX socket at `path` (a stale file left by a killed master is replaced),
    with `mode`: 0666 lets every local user connect; the master asks the kernel who they are."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        with _short(path) as name:
            sock.bind(name)
        os.chmod(path, mode)
        sock.listen(512)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def connect(path: Path, timeout_s: float | None) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        with _short(path) as name:
            sock.connect(name)
    except BaseException:
        sock.close()
        raise
    return sock
