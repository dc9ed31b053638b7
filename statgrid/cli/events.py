"""`statgrid events`: the grid's changes as they happen."""
from __future__ import annotations

import json

import typer

from statgrid.cli.common import fail, grid_client
from statgrid.errors import StatgridError


def events(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="One JSON object per line.")) -> None:
    """Follow the grid's changes as they happen (jobs, hosts) until Ctrl-C or the master stops."""
    try:
        for event in grid_client(ctx).events(timeout_s=120):
            if as_json:
                typer.echo(json.dumps(event))
            elif event["type"] == "job":
                job = event["job"]
                typer.echo(f"job {job['id']:>6} {event['event']:<9} {job['state']:<6} {job['user']:<12} "
                           f"{job['queue']:<10} {job['host'] or '-'}")
            elif event["type"] == "host":
                typer.echo(f"host {event['host']} {event['action']}")
            elif event["type"] == "resync":
                typer.echo("(fell behind: some changes were not shown)")
    except StatgridError as exc:
        fail(ctx, exc)
    except KeyboardInterrupt:
        pass

