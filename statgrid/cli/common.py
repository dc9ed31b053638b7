"""What every command module shares: the global options, the configuration, the master, and the
one place where errors become exit codes — 2 for usage errors (bad option, missing job file), 1
for runtime errors (a job's own exit code for `run`)."""
from __future__ import annotations

import json
from typing import Any, Optional

import typer

from statgrid.config import Config, load_config
from statgrid.errors import StatgridError, UsageError

# The root callback's options (--config, --master), for the command that runs after it.
state: dict[str, Optional[str]] = {"config": None}

IDEMPOTENCY_HELP = ("This submit's idempotency key (default: a new one each time): sent again with the same "
                    "request it answers what was stored first, never submits twice (a retry after a lost answer).")


def config(ctx: typer.Context) -> Config:
    try:
        return load_config(state["config"])
    except UsageError as exc:
        fail(ctx, exc)


def fail(ctx: typer.Context, exc: StatgridError) -> None:
    """Usage errors exit 2 with the usage line and 'Try --help' (as click prints them); others exit 1."""
    if isinstance(exc, UsageError):
        typer.echo(f"{ctx.get_usage()}\nTry '{ctx.command_path} --help' for help.\n\nError: {exc}", err=True)
        raise typer.Exit(2)
    typer.echo(f"Error: {exc}", err=True)
    raise typer.Exit(1)


def call(ctx: typer.Context, fn, *args, **kwargs):
    """fn(*args, **kwargs); a StatgridError from it ends the command (fail)."""
    try:
        return fn(*args, **kwargs)
    except StatgridError as exc:
        fail(ctx, exc)


def grid_client(ctx: typer.Context):
    """The master: --master/$STATGRID_MASTER; else this machine's local socket; else, when that
    does not exist, the url of the client config (a client machine)."""
    from statgrid.grid.interface.client import default_client

    return call(ctx, default_client, config(ctx), state.get("master"))


def parsed(parser, value: str, option: str, example: str):
    """parser(value); its ValueError as a UsageError naming the option and an example."""
    try:
        return parser(value)
    except ValueError as exc:
        raise UsageError(f"{option} {value!r} is not valid: expected {exc}; e.g. {option} {example}.") from None


def show(ctx: typer.Context, as_json: bool, view: str, method: str, *args: Any, **kwargs: Any) -> Any:
    """Ask the master (the client's `method`) and print its answer: as JSON with --json, else as the text of
    `views.<view>` (the one rendering every reader of that record shares). Returns the record."""
    from statgrid.grid.interface import views

    rec = call(ctx, getattr(grid_client(ctx), method), *args, **kwargs)
    typer.echo(json.dumps(rec, indent=1) if as_json else getattr(views, view)(rec))
    return rec
