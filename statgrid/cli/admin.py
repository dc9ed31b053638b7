"""Running the grid (administrators): the master (`grid up|tls|down|status`), API tokens
(`token`), `reconfig`, `whoami`, and closing and opening hosts (`host`)."""
from __future__ import annotations

from typing import Optional

import typer

from statgrid.cli.common import call, config, fail, grid_client, show
from statgrid.errors import StatgridError
from statgrid.job.record import JOB_ID_MAX

grid_app = typer.Typer(help="Start and stop the grid master (job store, dispatcher, API, engine).",
                       no_args_is_help=True)
@grid_app.command("up")
def grid_up(ctx: typer.Context, detach: bool = typer.Option(False, "--detach", "-d", help="Run the master in the "
                                                            "background; its log goes to <home>/grid/master.log.")) -> None:
    """Start the master (and the embedded engine, unless [master] scheduler names one)."""
    from statgrid.grid.interface import server

    cfg = config(ctx)
    if detach:
        info = call(ctx, server.start_detached, cfg)
        typer.echo(f"statgrid master started (pid {info['pid']}): {info['socket']} for this machine's users, "
                   f"{info['url']} for remote clients with a token; log: {cfg.home / 'grid' / 'master.log'}\n"
                   f"console: {info['url']}/console/ (sign in with a token: `statgrid token create --print`)")
        return
    from statgrid import webapp

    call(ctx, webapp.serve, cfg)


@grid_app.command("tls")
def grid_tls(ctx: typer.Context) -> None:
    """Make the grid's CA and certificate if missing (as `grid up` does) and say where they are and
    how to start a Dask scheduler of your own with them ([master] scheduler)."""
    from statgrid.grid.security import tls
    from statgrid.grid.master.core import grid_dir

    files = tls.ensure(grid_dir(config(ctx)), renew=False)
    typer.echo(f"the grid's TLS files (0600; copy the directory to every node that runs `statgrid worker`): "
               f"{files.dir}\nstart a scheduler of your own with:\n  dask scheduler --protocol tls "
               + " ".join(tls.dask_cli_args(files)))


@grid_app.command("down")
def grid_down(ctx: typer.Context) -> None:
    """Stop the grid: running jobs are killed (rerunnable ones wait as PEND for the next `grid up`)."""
    from statgrid.grid.interface import server

    pid = call(ctx, server.stop, config(ctx))
    typer.echo("no master is running." if pid is None else f"statgrid grid stopped (pid {pid}).")


@grid_app.command("status")
def grid_status(ctx: typer.Context) -> None:
    """Say whether a master answers, and where."""
    info = call(ctx, grid_client(ctx).health)
    typer.echo(f"master: {grid_client(ctx).base}  scheduler: {info['scheduler']}  hosts: {', '.join(info['hosts'])}  "
               f"running jobs: {info['running']}")


token_app = typer.Typer(help="API tokens, for using the grid from other machines over HTTPS.", no_args_is_help=True)


@token_app.command("create")
def token_create(ctx: typer.Context,
                 name: str = typer.Option("", "--name", help="A name to tell your tokens apart (default: the date)."),
                 write: bool = typer.Option(True, "--write/--print", help="Write it to ~/.config/statgrid/client.toml "
                                            "(0600) with the master's address and CA, or only print it.")) -> None:
    """Make a token for you (on the master's machine: through its local socket, no password).
    A client machine with the written file (or a home directory shared with this one) reaches the
    grid as you: `statgrid --master URL submit ...`, or just `statgrid submit ...`."""
    from statgrid.config import toml_string
    from statgrid.grid.interface.client import client_config_path
    from statgrid.host.files import write_atomic

    client = grid_client(ctx)
    if client.remote is not None:
        fail(ctx, StatgridError("tokens are made on the master's machine through its local socket; run "
                                "`statgrid token create` there (a token cannot make another)."))
    rec = call(ctx, client.token_create, name)
    if not write:
        typer.echo(rec["token"])
        return
    path = client_config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lines = [f"url = {toml_string(rec['url'])}", f"token = {toml_string(rec['token'])}"]
    if rec.get("ca_pem"):
        ca = path.with_name("grid-ca.pem")
        write_atomic(ca, rec["ca_pem"].encode(), private=True)
        lines.append(f"ca = {toml_string(str(ca))}")
    write_atomic(path, ("# statgrid client: written by `statgrid token create`; keep it 0600\n" + "\n".join(lines)
                        + "\n").encode(), private=True)
    typer.echo(f"token {rec['id']} ({rec['name']!r}) for {rec['user']} written to {path} (0600), with the master's "
               f"address {rec['url']}; revoke it with `statgrid token revoke {rec['id']}`.")


@token_app.command("list")
def token_list(ctx: typer.Context, all_users: bool = typer.Option(False, "--all", help="Everyone's (administrators)."),
               as_json: bool = typer.Option(False, "--json")) -> None:
    """Your tokens (the secret is never shown again: only its id, name and dates)."""
    show(ctx, as_json, "tokens_table", "tokens", all_users)


@token_app.command("revoke")
def token_revoke(ctx: typer.Context, token_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Revoke a token (yours; administrators: anyone's). Requests with it get 401 from then on."""
    rec = call(ctx, grid_client(ctx).token_revoke, token_id)
    typer.echo(f"token {rec['id']} of {rec['user']} revoked.")

def reconfig(ctx: typer.Context) -> None:
    """Re-read grid.toml into the running master (LSF badmin reconfig): queues, host slots and open,
    admins; running jobs are not touched. A bad file, or a change that needs a restart, changes
    nothing and names the key. Grid administrators only."""
    rec = call(ctx, grid_client(ctx).reconfig)
    typer.echo("\n".join(rec["changes"]) if rec["changes"] else "grid.toml re-read: nothing changed.")


def whoami(ctx: typer.Context) -> None:
    """Who the master takes you for, and whether you administer the grid."""
    rec = call(ctx, grid_client(ctx).whoami)
    grid = f"a personal grid of {rec['grid_user']}" if rec["personal"] else "a shared grid (runs as root)"
    typer.echo(f"{rec['user']} (uid {rec['uid']}, via {rec['via']}){' — grid administrator' if rec['admin'] else ''}; "
               f"{grid}")

host_app = typer.Typer(help="Close and open hosts (grid administrators), like LSF's badmin hclose/hopen.",
                       no_args_is_help=True)


@host_app.command("close")
def host_close(ctx: typer.Context, name: str = typer.Argument(..., metavar="NAME", help="A host of grid.toml."),
               reason: str = typer.Option("", "--reason", "-C", help="Why; `statgrid hosts` shows it.")) -> None:
    """Close a host: it takes no new jobs, its running jobs go on. Kept across master restarts."""
    rec = call(ctx, grid_client(ctx).close_host, name, reason)
    typer.echo(f"host {name} closed by {rec['closed_by']}" + (f": {rec['reason']}" if rec["reason"] else ""))


@host_app.command("drain")
def host_drain(ctx: typer.Context, name: str = typer.Argument(..., metavar="NAME", help="A host of grid.toml."),
               reason: str = typer.Option("drain", "--reason", "-C", help="Why; `statgrid hosts` shows it."),
               timeout: Optional[float] = typer.Option(None, "--timeout", help="Give up waiting after this many "
                                                       "seconds (the host stays closed).")) -> None:
    """Close a host and wait until the jobs running there have ended (finish its jobs, take none);
    `host open` gives it work again."""
    import time as _time

    client = grid_client(ctx)
    call(ctx, client.close_host, name, reason)
    deadline = None if timeout is None else _time.monotonic() + timeout
    said = None
    while True:
        row = next(h for h in call(ctx, client.hosts) if h["host"] == name)
        if row["running"] == 0:
            typer.echo(f"host {name} drained: closed, no job running")
            return
        if row["running"] != said:
            typer.echo(f"host {name} closed; waiting for its {row['running']} running job(s)", err=True)
            said = row["running"]
        if deadline is not None and _time.monotonic() > deadline:
            fail(ctx, StatgridError(f"host {name} still runs {row['running']} job(s) after {timeout:g} s; it stays "
                                    "closed (`statgrid host open` reopens it)."))
        _time.sleep(1.0)


@host_app.command("open")
def host_open(ctx: typer.Context, name: str = typer.Argument(..., metavar="NAME", help="A host of grid.toml.")) -> None:
    """Open a host an administrator closed: it takes jobs at once."""
    rec = call(ctx, grid_client(ctx).open_host, name)
    typer.echo(f"host {name} opened ({rec['state']})")

