"""Running the master: `statgrid grid up` (foreground or --detach) and `grid down`.

`grid/master.json` in the grid home names the running master (pid, port); it is removed on a
clean stop. A master killed with -9 leaves it behind, and the next `grid up` sees the pid is
gone and starts over (reconciling the store against the still-running engine).

The API is served twice, by one app (auth.py says who may do what):
- on the local socket `grid/master.sock` (mode 0666: any local user may connect; the master asks
  the kernel who they are, SO_PEERCRED) — the CLI on this machine;
- on TCP `[master] listen`:`port`, HTTPS with a certificate of the grid's CA unless api_tls =
  false (loopback only) — remote clients, each with a token.

Files of the grid home (DESIGN: a shared grid runs as root): the master runs with umask 077, so
everything it makes is its own alone (jobs.db, master.log, audit.log, engine.json, tls/); the
exceptions are made explicitly: `grid/` 0711 (others reach the socket and ca.pem by name, list
nothing), master.sock 0666, ca.pem and master.json 0644, `jobs/` 0755 (each job's directory is
its owner's, 0700).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from statgrid.config import Config
from statgrid.errors import StatgridError
from statgrid.grid.interface import localsock
from statgrid.grid.security import auth
from statgrid.grid.interface.address import api_url  # noqa: F401  (callers name it here too)
from statgrid.grid.master.core import Master, grid_dir, make_grid_dirs
from statgrid.host.files import write_json_atomic
from statgrid.host.procfs import process_running

MASTER_FILE = "master.json"
DETACH_TIMEOUT_S = 180


def master_file(cfg: Config) -> Path:
    return grid_dir(cfg) / MASTER_FILE


def running_master(cfg: Config) -> dict | None:
    """The master.json of a live master, else None."""
    try:
        info = json.loads(master_file(cfg).read_text())
        return info if process_running(info["pid"], b"statgrid") else None
    except (OSError, ValueError, KeyError):
        return None


def socket_path(cfg: Config) -> Path:
    return localsock.socket_path(cfg.home)


API_MAX_CONNECTIONS = 2048
HEADER_TIMEOUT_S = 10.0                 # a connection's request headers must arrive within this
OPEN_FILES_WANTED = 65536
AUDIT_FLUSH_EVERY_S = 5.0


def _raise_open_files() -> None:
    """RLIMIT_NOFILE's soft limit up to OPEN_FILES_WANTED (within the hard limit)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = OPEN_FILES_WANTED if hard == resource.RLIM_INFINITY else min(OPEN_FILES_WANTED, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def _bind_tcp(cfg: Config) -> socket.socket:
    address, port = cfg.master.listen, cfg.master.port
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    # proto named: asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP (base_events.
    # _set_nodelay), and accepted ones inherit it; with proto 0 each answer waited ~40 ms for the
    # client's delayed ACK (Nagle's algorithm), every HTTPS call 44 ms instead of ~1.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
    except OSError as exc:
        sock.close()
        raise StatgridError(f"cannot listen on {address} port {port} ({exc.strerror}): another program uses it, or "
                            "the address is not this machine's; set another [master] port or listen in grid.toml.") \
            from None
    sock.listen(512)
    sock.setblocking(False)
    return sock


def _refuse_if_running(cfg: Config) -> None:
    info = running_master(cfg)
    if info:
        raise StatgridError(f"a master is already running for {cfg.home} (pid {info['pid']}); stop it with "
                            "`statgrid grid down`.")


def _check_port_free(cfg: Config) -> None:
    _bind_tcp(cfg).close()


def _peercred_protocol():
    """uvicorn's HTTP protocol, which for a connection on the local socket hands the app the peer's
    uid (auth.peer_uid) in the ASGI scope; nothing a client sends can set that key."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class PeerCredProtocol(AutoHTTPProtocol):
        """Also: a connection must send a request's headers within HEADER_TIMEOUT_S of connecting (or
        of its previous response). uvicorn times out only idle connections after a response: one
        that never sends a request, or sends half a header line by line (slowloris), was held open
        for ever — 2048 of them (API_MAX_CONNECTIONS) shut everyone else out."""

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._header_timer = None
            self._await_headers()
            sock = transport.get_extra_info("socket")
            if sock is not None and sock.family == socket.AF_UNIX:
                app, uid = self.app, auth.peer_uid(sock)

                async def with_peer(scope, receive, send):
                    scope[auth.PEER_UID_KEY] = uid
                    await app(scope, receive, send)
                self.app = with_peer

        def _waiting_for_headers(self) -> bool:
            cycle = getattr(self, "cycle", None)
            return cycle is None or cycle.response_complete

        def _await_headers(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(HEADER_TIMEOUT_S, self._header_deadline)

        def _header_deadline(self) -> None:
            self._header_timer = None
            if self._waiting_for_headers() and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self._waiting_for_headers():
                self._await_headers()
            super().data_received(data)

        def on_response_complete(self) -> None:
            # The next request's headers are due HEADER_TIMEOUT_S after this response, not after
            # the connection's first byte: a timer left from then closed busy keep-alive
            # connections every 10 s, between two requests (benchmarks/console.py saw it).
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().on_response_complete()
            if not self.transport.is_closing():
                self._await_headers()

        def connection_lost(self, exc) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

    return PeerCredProtocol


def serve(cfg: Config, create_app, ready_message: bool = True) -> None:
    """Run the master in this process until `grid down` or Ctrl-C (both stop the grid) or SIGTERM
    (stops this master only: the engine and running jobs go on for the next `grid up`).
    create_app(master, on_down=, on_stopped=, stop_engine=) builds the web app it serves: the caller
    (statgrid.webapp) assembles it, so the server knows neither the API's routes nor the console."""
    import uvicorn

    _refuse_if_running(cfg)
    os.umask(0o077)
    make_grid_dirs(cfg)
    tcp = _bind_tcp(cfg)
    ssl_files: dict[str, str] = {}
    if cfg.master.api_tls:
        from statgrid.grid.security import tls

        cert, key, _ = tls.ensure_api_cert(grid_dir(cfg), tls.api_names(cfg.master.listen, cfg.master.names))
        ssl_files = {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}
    local_sock = localsock.bind(socket_path(cfg))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    master = Master(cfg)
    local: uvicorn.Server
    network: uvicorn.Server

    # `grid down` and Ctrl-C stop the grid; SIGTERM (systemctl stop/restart, kill) stops this master
    # only: the engine and the running jobs go on, as LSF's do when mbatchd restarts, and the next
    # `grid up` adopts them (reconcile).
    whole_grid = {"stop": True}

    def down() -> None:
        whole_grid["stop"] = True
        master.begin_shutdown()                  # releases long-polling `wait`s so uvicorn can close
        local.should_exit = network.should_exit = True

    def started() -> None:
        write_json_atomic(master_file(cfg), {"pid": os.getpid(), "port": cfg.master.port, "started_ts": time.time(),
                                             "socket": str(socket_path(cfg)), "url": api_url(cfg)})
        os.chmod(master_file(cfg), 0o644)
        if ready_message:
            print(f"statgrid master ready: {socket_path(cfg)} (this machine) and {api_url(cfg)} (remote clients, "
                  f"with a token) (pid {os.getpid()}), hosts {', '.join(sorted(master.engine.workers))}; Ctrl-C or "
                  "`statgrid grid down` stops the grid.", flush=True)
            print(f"console: {api_url(cfg)}/console/ (sign in with a token: `statgrid token create --print`)", flush=True)

    def stopped() -> None:
        master_file(cfg).unlink(missing_ok=True)
        socket_path(cfg).unlink(missing_ok=True)
        if ready_message:
            print("statgrid master stopped." if whole_grid["stop"] else "statgrid master stopped; the engine and "
                  "the running jobs go on (`statgrid grid up` adopts them, `statgrid grid down` stops them).",
                  flush=True)

    app = create_app(master, on_down=down, on_stopped=stopped, stop_engine=lambda: whole_grid["stop"])
    # Connections: a cap well below the descriptors the master may hold (raised to its hard limit),
    # so a flood of idle connections gets 503s instead of starving the store and the engine of fds.
    _raise_open_files()
    common = dict(log_level="warning", access_log=False, timeout_graceful_shutdown=5, proxy_headers=False,
                  http=_peercred_protocol(), limit_concurrency=API_MAX_CONNECTIONS)
    # The local server owns the lifespan (its end stops the grid) and the signals; the network one
    # follows it.
    local = _signalled(uvicorn.Config(app, lifespan="on", **common), whole_grid)
    network = _follower(uvicorn.Config(app, lifespan="off", **common, **ssl_files))

    async def follow() -> None:
        flushed = time.monotonic()
        while not local.should_exit:
            await asyncio.sleep(0.1)
            if time.monotonic() - flushed >= AUDIT_FLUSH_EVERY_S:     # coalesced refusals' counts (auth.Audit)
                master.audit.flush_due()
                flushed = time.monotonic()
        network.should_exit = True

    async def run() -> None:
        # Started before uvicorn, so that a failure is a clear StatgridError, not a lifespan traceback.
        try:
            await master.start()
        except BaseException:
            socket_path(cfg).unlink(missing_ok=True)
            raise
        started()
        await asyncio.gather(local.serve(sockets=[local_sock]), network.serve(sockets=[tcp]), follow())

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass                                     # Ctrl-C: the lifespan has already stopped the grid


def _signalled(config, whole_grid: dict):
    """The local server, which takes SIGINT/SIGTERM for the master: SIGTERM marks the stop as the
    master's alone (whole_grid["stop"] = False) unless `grid down` asked for the grid's."""
    import uvicorn

    class Signalled(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            if sig == signal.SIGTERM and not self.should_exit:
                whole_grid["stop"] = False
            super().handle_exit(sig, frame)

    return Signalled(config)


def _follower(config):
    """A uvicorn.Server that leaves the signals to the one it follows (two servers would each
    install handlers for SIGINT/SIGTERM, and the second's would hide the first's)."""
    import uvicorn

    class Follower(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self):
            yield

    return Follower(config)


def start_detached(cfg: Config) -> dict:
    """Start `statgrid grid up` in the background; return its master.json once it serves."""
    _refuse_if_running(cfg)
    _check_port_free(cfg)
    make_grid_dirs(cfg)
    log_path = grid_dir(cfg) / "master.log"
    argv = [sys.executable, "-m", "statgrid"]
    if cfg.source is not None:
        argv += ["--config", str(cfg.source)]
    argv += ["grid", "up"]
    env = {**os.environ, "STATGRID_HOME": str(cfg.home)}
    with open(os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab") as log:
        os.fchmod(log.fileno(), 0o600)
        proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True, close_fds=True)
    deadline = time.monotonic() + DETACH_TIMEOUT_S
    while time.monotonic() < deadline:
        info = running_master(cfg)
        if info and info["pid"] == proc.pid and _answers(cfg):
            return info
        if proc.poll() is not None:
            raise StatgridError(f"the master stopped while starting (exit code {proc.returncode}); last lines of "
                                f"{log_path}:\n{_tail_lines(log_path, 15)}")
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)            # as Ctrl-C: the whole grid it may have started goes
    raise StatgridError(f"the master did not become ready in {DETACH_TIMEOUT_S} s; see {log_path}.")


def stop(cfg: Config, timeout_s: float = 120) -> int | None:
    """Ask the running master to stop the grid; wait until its process is gone. Returns its pid."""
    from statgrid.grid.interface.client import GridClient

    info = running_master(cfg)
    if info is None:
        # A master killed with -9 leaves its embedded engine (and the jobs on it) running.
        from statgrid.grid.execution.engine import running_engine, stop_engine_process

        engine = running_engine(grid_dir(cfg))
        if engine is not None:
            stop_engine_process(grid_dir(cfg), engine["pid"])
            return engine["pid"]
        return None
    GridClient(cfg).down()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not process_running(info["pid"]):
            return info["pid"]
        time.sleep(0.1)
    raise StatgridError(f"the master (pid {info['pid']}) did not stop in {timeout_s:.0f} s; see "
                        f"{grid_dir(cfg) / 'master.log'}.")


def _answers(cfg: Config) -> bool:
    from statgrid.grid.interface.client import GridClient

    try:
        GridClient(cfg).health()
        return True
    except StatgridError:
        return False


def _tail_lines(path: Path, n: int) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""
