"""Files the grid's processes write and others read while they may be half written: each appears
whole (written beside, then renamed) — attempt records, master.json, engine.json, the TLS keys."""
from __future__ import annotations

import json
import os
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
