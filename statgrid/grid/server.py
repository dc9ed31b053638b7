"""Running the master: `statgrid grid up` (foreground or --detach) and `grid down`.

`grid/master.json` in the grid home names the running master (pid, port); it is removed on a
clean stop. A master killed with -9 leaves it behind, and the next `grid up` sees the pid is
gone and starts over (reconciling the store against the still-running engine).
"""
from __future__ import annotations

import asyncio
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
from statgrid.grid.master import Master, grid_dir
from statgrid.grid.files import write_json_atomic
from statgrid.session._procfs import process_running

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


def _check_port_free(port: int) -> None:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            raise StatgridError(f"port {port} on 127.0.0.1 is in use by another program; set another "
                                "[master] port in grid.toml.") from None


def serve(cfg: Config, ready_message: bool = True) -> None:
    """Run the master in this process until `grid down`, SIGTERM or Ctrl-C (all stop the grid)."""
    import uvicorn

    from statgrid.grid.api import create_app

    info = running_master(cfg)
    if info:
        raise StatgridError(f"a master is already running for {cfg.home} (pid {info['pid']}, "
                            f"http://127.0.0.1:{info['port']}); stop it with `statgrid grid down`.")
    _check_port_free(cfg.master.port)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    master = Master(cfg)
    server: uvicorn.Server

    def down() -> None:
        master.begin_shutdown()                  # releases long-polling `wait`s so uvicorn can close
        server.should_exit = True

    def started() -> None:
        write_json_atomic(master_file(cfg), {"pid": os.getpid(), "port": cfg.master.port, "started_ts": time.time(),
                                             "scheduler": master.engine.address})
        if ready_message:
            print(f"statgrid master ready: http://127.0.0.1:{cfg.master.port} (pid {os.getpid()}), hosts "
                  f"{', '.join(sorted(master.engine.workers))}; Ctrl-C or `statgrid grid down` stops the grid.",
                  flush=True)

    def stopped() -> None:
        master_file(cfg).unlink(missing_ok=True)
        if ready_message:
            print("statgrid master stopped.", flush=True)

    app = create_app(master, on_down=down, on_stopped=stopped)
    config = uvicorn.Config(app, host="127.0.0.1", port=cfg.master.port, log_level="warning",
                            lifespan="on", access_log=False, timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)

    async def run() -> None:
        # Started before uvicorn, so that a failure is a clear StatgridError, not a lifespan traceback.
        await master.start()
        started()
        await server.serve()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass                                     # Ctrl-C: the lifespan has already stopped the grid


def start_detached(cfg: Config) -> dict:
    """Start `statgrid grid up` in the background; return its master.json once it serves."""
    info = running_master(cfg)
    if info:
        raise StatgridError(f"a master is already running for {cfg.home} (pid {info['pid']}, "
                            f"http://127.0.0.1:{info['port']}); stop it with `statgrid grid down`.")
    _check_port_free(cfg.master.port)
    grid_dir(cfg).mkdir(parents=True, exist_ok=True)
    log_path = grid_dir(cfg) / "master.log"
    argv = [sys.executable, "-m", "statgrid"]
    if cfg.source is not None:
        argv += ["--config", str(cfg.source)]
    argv += ["grid", "up"]
    env = {**os.environ, "STATGRID_HOME": str(cfg.home)}
    with open(log_path, "ab") as log:
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
    proc.send_signal(signal.SIGTERM)
    raise StatgridError(f"the master did not become ready in {DETACH_TIMEOUT_S} s; see {log_path}.")


def stop(cfg: Config, timeout_s: float = 120) -> int | None:
    """Ask the running master to stop the grid; wait until its process is gone. Returns its pid."""
    from statgrid.grid.client import GridClient

    info = running_master(cfg)
    if info is None:
        # A master killed with -9 leaves its embedded engine (and the jobs on it) running.
        from statgrid.grid.engine import running_engine, stop_engine_process

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
    from statgrid.grid.client import GridClient

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
