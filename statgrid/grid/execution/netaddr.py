"""Addresses of a grid spread over machines: where a node finds the engine, and which of its own
addresses the engine can reach it at."""
from __future__ import annotations

import json
import socket
import urllib.parse

from statgrid.config import Config
from statgrid.errors import StatgridError


def engine_address(cfg: Config) -> str:
    """The engine's scheduler address from `<home>/grid/engine.json` (the shared grid home;
    readable by the grid's account only), or [master] scheduler for an engine of one's own."""
    if cfg.master.scheduler:
        return cfg.master.scheduler
    path = cfg.home / "grid" / "engine.json"
    try:
        address = json.loads(path.read_text())["address"]
    except FileNotFoundError:
        raise StatgridError(f"{path} does not exist: no master has started the grid's engine (run `statgrid grid "
                            "up` on the master's machine first), or this machine does not share the grid home "
                            "(give the engine's address with --master tls://HOST:PORT).") from None
    except PermissionError:
        raise StatgridError(f"{path} is the grid's account's alone: run `statgrid node up` as that account (root for "
                            "a shared grid).") from None
    except (OSError, ValueError, KeyError) as exc:
        raise StatgridError(f"{path} cannot be read ({exc}); give the engine's address with --master.") from None
    host = urllib.parse.urlsplit(address).hostname or ""
    if host in ("0.0.0.0", "::", "127.0.0.1", "::1", "localhost"):
        raise StatgridError(f"the engine listens on {address}, which other machines cannot reach: set [master] "
                            "listen to the master's address on the grid's network in grid.toml and restart the "
                            "master, or give --master tls://HOST:PORT.")
    return address


def address_towards(address: str) -> str:
    """This machine's own IP address on the route to `address` (a URL such as tls://10.0.0.1:8786):
    what the engine connects back to. No packet is sent (a UDP socket's connect only picks the route)."""
    parts = urllib.parse.urlsplit(address)
    if not parts.hostname:
        raise StatgridError(f"{address!r} is not an address such as tls://grid1:8786.")
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 8786, type=socket.SOCK_DGRAM)
    except socket.gaierror as exc:
        raise StatgridError(f"host {parts.hostname!r} of {address!r} cannot be resolved here ({exc.strerror}).") from None
    family, _, _, _, sockaddr = infos[0]
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        try:
            s.connect(sockaddr)
        except OSError as exc:
            raise StatgridError(f"no route from this machine to {address} ({exc.strerror}): check the network.") \
                from None
        return s.getsockname()[0]
