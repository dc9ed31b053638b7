"""A machine joining the grid: `worker` (a Dask worker for a host) and `node up`."""
from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from statgrid.cli.common import call, config, fail
from statgrid.config import Config
from statgrid.errors import UsageError


def worker(ctx: typer.Context,
           master: str = typer.Option(..., "--master", help="Address of the grid's Dask scheduler, "
                                      "e.g. tls://grid1:8786 ([master] scheduler in grid.toml)."),
           name: str = typer.Option(..., "--name", help="Host name as in grid.toml's [hosts.NAME]."),
           slots: int = typer.Option(..., "--slots", min=1, help="Job slots (LSF MXJ): the worker's threads.")) -> None:
    """Join this machine to a grid as host NAME (a thin wrapper on `dask worker`). It presents the
    grid's certificate from <home>/grid/tls (copied from the master's grid home, kept 0600)."""
    _exec_worker(ctx, config(ctx), master, name, slots)


def _exec_worker(ctx: typer.Context, cfg: Config, master: str, name: str, slots: int,
                 listen: str | None = None, nanny: bool = True) -> None:
    """Become `dask worker` for host `name` of the grid whose scheduler is at `master`."""
    from statgrid.grid.security import tls
    from statgrid.grid.execution.cluster import dask_settings
    from statgrid.grid.master.core import grid_dir

    tls_args: list[str] = []
    if cfg.master.engine_tls:
        if not master.startswith("tls://"):
            fail(ctx, UsageError(f"--master {master!r}: the grid's engine speaks TLS only; give its tls:// "
                                 "address (or set [master] engine_tls = false on a trusted single-user machine)."))
        tls_args = tls.dask_cli_args(call(ctx, tls.require, grid_dir(cfg)))
    env = dict(os.environ)
    for key, value in dask_settings(cfg.master.fence_grace_s).items():
        env["DASK_" + key.upper().replace(".", "__").replace("-", "_")] = str(value)
    argv = [sys.executable, "-m", "distributed.cli.dask_worker", master, "--name", name, "--nthreads", str(slots),
            "--nworkers", "1", "--memory-limit", "0", "--no-dashboard", *tls_args]
    if listen:
        argv += ["--host", listen]
    if not nanny:
        argv += ["--no-nanny"]
    os.execve(sys.executable, argv, env)


node_app = typer.Typer(help="A grid node on its own machine: `node up` joins it to the master.", no_args_is_help=True)


@node_app.command("up")
def node_up(ctx: typer.Context,
            name: Optional[str] = typer.Option(None, "--name", help="The host's name in grid.toml [hosts.NAME] "
                                               "(default: this machine's short host name)."),
            master: Optional[str] = typer.Option(None, "--master", metavar="ADDRESS", help="The engine's tls:// "
                                                 "address (default: from <home>/grid/engine.json on the shared grid "
                                                 "home, written by `grid up`).")) -> None:
    """Run this machine's node of the grid: a worker that joins the master's engine over TLS under
    the host's name, with the host's slots from grid.toml (default: the CPUs it sees here); the
    master then starts the node's launcher and monitor there. Runs in the foreground (a systemd
    unit: contrib/systemd/statgrid-node.service in the source tree) until stopped or the grid goes
    down. Needs root for a shared grid (jobs run as their users)."""
    import socket as _socket

    from statgrid.grid.execution import netaddr

    cfg = config(ctx)
    name = name or _socket.gethostname().split(".")[0]
    host = cfg.hosts.get(name)
    if host is None:
        fail(ctx, UsageError(f"host {name!r} is not in grid.toml (hosts: {', '.join(cfg.hosts)}); give --name, or "
                             f"add [hosts.{name}] with joins = true."))
    if not host.joins:
        fail(ctx, UsageError(f"host {name!r} has no joins = true in grid.toml: its worker is run by the master's "
                             f"embedded engine; set joins = true under [hosts.{name}] (and restart the master) to "
                             "run it here."))
    address = master or call(ctx, netaddr.engine_address, cfg)
    listen = call(ctx, netaddr.address_towards, address)
    from statgrid.grid.execution.node import cpus_seen

    slots = host.slots if host.slots is not None else cpus_seen(host.cpus)    # resolved here, where it runs
    typer.echo(f"statgrid node {name}: joining {address} from {listen} with {slots} slot{'' if slots == 1 else 's'}"
               + (" (the CPUs it sees)" if host.slots is None else ""), err=True)
    # No nanny: a node is restarted by its service manager; Dask's nanny would instead try to restart
    # a silent worker through the same dead link and hold up its removal by 30 s.
    _exec_worker(ctx, cfg, address, name, slots, listen=listen, nanny=False)

