"""The embedded engine: a Dask cluster on this machine with one worker per configured host,
named after the host, `nthreads = slots`.

It runs in its own process (`python -m statgrid.grid.execution.cluster`), started by `grid up`, so that
jobs outlive a master that is killed: as LSF's sbatchd keeps running jobs while mbatchd
restarts, a restarted master finds the engine (address in `engine.json` in the grid home) and
its running jobs again. `grid down` stops it with SIGTERM. It speaks TLS with the grid's
certificates (tls.py): only the grid's daemons may connect.

Dask settings that make Dask an executor and leave the policy to statgrid (DESIGN.md):
allowed-failures 0 (statgrid decides requeues), no work stealing, a short worker-ttl, no
worker memory limit (jobs are separate processes; the worker's own RSS says nothing of them).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from pathlib import Path

DASK_SETTINGS = {
    "distributed.scheduler.allowed-failures": 0,
    "distributed.scheduler.work-stealing": False,
    "distributed.scheduler.worker-ttl": "5s",
    "distributed.worker.daemon": False,
    "distributed.logging.distributed": "warning",
    "distributed.admin.tick.limit": "10s",
    # A job task blocks for the job's whole run; sampling its stack every 10 ms (the profiler) and
    # checking the event loop every 20 ms cost each idle worker ~12 % of a core on this machine.
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "500ms",
}


def dask_settings(fence_grace_s: float | None = None) -> dict[str, object]:
    """DASK_SETTINGS, and with a fence grace a TCP timeout that never drops a silent node before the
    master's own deadline for its jobs (fence.engine_tcp_timeout_s)."""
    import dask
    from dask.utils import parse_timedelta

    from statgrid.grid.execution.fence import engine_tcp_timeout_s

    settings: dict[str, object] = dict(DASK_SETTINGS)
    if fence_grace_s:
        configured = parse_timedelta(dask.config.get("distributed.comm.timeouts.tcp"), default="seconds")
        settings["distributed.comm.timeouts.tcp"] = f"{engine_tcp_timeout_s(fence_grace_s, configured)}s"
    return settings


def configure_dask(fence_grace_s: float | None = None) -> None:
    import dask

    dask.config.set(dask_settings(fence_grace_s))


async def serve(hosts: dict[str, int], host: str, tls_dir: Path | None = None, port: int = 0,
                fence_grace_s: float | None = None) -> None:
    """tls_dir: the grid's TLS files (tls.py); the scheduler and workers then speak only TLS, to
    peers with a certificate of the grid's CA. None: plain TCP, open to anyone who reaches the port."""
    from distributed import Nanny, Scheduler, SpecCluster

    configure_dask(fence_grace_s)
    secure: dict = {}
    if tls_dir is not None:
        from statgrid.grid.security import tls

        secure = {"security": tls.security(tls.require(tls_dir.parent)), "protocol": "tls://"}
    workers = {name: {"cls": Nanny, "options": {"name": name, "nthreads": slots, "memory_limit": 0,
                                               "dashboard": False, "host": host, **secure}}
               for name, slots in hosts.items()}
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": None, "host": host, "port": port, **secure}}
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with SpecCluster(workers=workers, scheduler=scheduler, asynchronous=True,
                           security=secure.get("security")) as cluster:
        sys.stdout.write(json.dumps({"address": cluster.scheduler_address}) + "\n")
        sys.stdout.flush()
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m statgrid.grid.execution.cluster",
                                 description="Embedded statgrid engine (started by `statgrid grid up`).")
    ap.add_argument("--hosts", required=True, help='JSON {"node1": slots, ...}')
    ap.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    ap.add_argument("--port", type=int, default=0, help="the scheduler's port (0: any free one)")
    ap.add_argument("--tls-dir", type=Path, default=None, help="the grid's TLS directory (<home>/grid/tls); "
                    "without it the engine is open to anyone who reaches its port")
    ap.add_argument("--fence-grace", type=float, default=None, help="[master] fence_grace in seconds: Dask's TCP "
                    "timeout is kept above the master's deadline for a silent node's jobs")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(json.loads(args.hosts), args.host, args.tls_dir, args.port, args.fence_grace))
    return 0


if __name__ == "__main__":
    sys.exit(main())
