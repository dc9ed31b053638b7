"""What the grid holds and who used it: `hosts`, `shares`, `queues`, `acct`."""
from __future__ import annotations

import json
from typing import Optional

import typer

from statgrid.cli.common import call, grid_client, show


def hosts(ctx: typer.Context, as_json: bool = typer.Option(False, "--json")) -> None:
    """Hosts: state, slots, running jobs, load (bhosts)."""
    show(ctx, as_json, "hosts_table", "hosts")

def shares(ctx: typer.Context, queue: Optional[str] = typer.Option(None, "--queue", "-q", help="Only this queue."),
           as_json: bool = typer.Option(False, "--json")) -> None:
    """Fairshare: each user's and group's shares, running and pending jobs, decayed usage and
    dynamic priority, per queue with fairshare (bqueues -r)."""
    show(ctx, as_json, "shares_table", "shares", queue)


def queues(ctx: typer.Context, as_json: bool = typer.Option(False, "--json")) -> None:
    """Queues: priority, hosts and weights, user limit, pending and running jobs (bqueues)."""
    show(ctx, as_json, "queues_table", "queues")


def acct(ctx: typer.Context,
         user: Optional[str] = typer.Option(None, "--user", "-u", help="This user's jobs; 'all' for everyone's "
                                            "(administrators; default: yours)."),
         queue: Optional[str] = typer.Option(None, "--queue", "-q", help="Only this queue's jobs."),
         since: Optional[str] = typer.Option(None, "--since", metavar="WHEN", help="Jobs that ended since WHEN: "
                                             "2026-11-01 or 2026-11-01T08:00 (this machine's time zone), or how "
                                             "long ago, e.g. 24h or 7d."),
         as_json: bool = typer.Option(False, "--json", help="The JSON record instead of the tables.")) -> None:
    """Accounting of finished jobs (DONE, EXIT, KILLED), like bacct: jobs, wait, run and CPU time per
    user, per group of [groups], per queue, and in total."""
    from statgrid.grid.interface import views
    from statgrid.grid.master.acct import AcctReport, parse_since

    since_ts = None if since is None else call(ctx, parse_since, since)
    rec = call(ctx, grid_client(ctx).acct, user=user, queue=queue, since_ts=since_ts)
    typer.echo(json.dumps(rec, indent=1) if as_json else views.acct_text(call(ctx, AcctReport.from_dict, rec)))

