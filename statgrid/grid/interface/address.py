"""The address remote clients use for the master's API: the server announces it, the API hands it
out with a new token. Below both, so neither imports the other for it."""
from __future__ import annotations

import socket

from statgrid.config import Config, is_loopback


def api_url(cfg: Config) -> str:
    """The address remote clients use: the first configured name, else this machine's name."""
    scheme = "https" if cfg.master.api_tls else "http"
    host = cfg.master.names[0] if cfg.master.names else (
        socket.getfqdn() if not is_loopback(cfg.master.listen) else cfg.master.listen)
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{cfg.master.port}"
