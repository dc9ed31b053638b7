"""`statgrid advise [BUNDLE]`: the seeds' tuning rules and the run's own evidence, checked (statgrid.advise)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from statgrid.cli.common import call, config


def advise(ctx: typer.Context,
           bundle: Optional[Path] = typer.Argument(None, help="A `bench mixed` / `demo` results bundle (default: "
                                                   "this machine and grid now, without run figures)."),
           as_json: bool = typer.Option(False, "--json", help="Every check as one JSON list of records."),
           site: List[str] = typer.Option([], "--set", metavar="NAME=VALUE", help="A fact of the site no machine "
                                          "can read: stripe_bytes=1M, required_mb_s=1600 (per node), "
                                          "storage_mb_s=4000 (all nodes); repeatable.")) -> None:
    """Check the seed papers' rules (GPFS, block sizes, BUFSIZE, MB/s per core, slots, dispatch, storage
    layout, kernel tunables) and, on a bundle, the run's evidence per job and per host. Prints one
    `verify: passed|failed` line per check, then each failed check with its evidence, advice, how to
    apply it, the effect its source reports and the source."""
    from statgrid.advise import evidence, rules
    from statgrid.report import build

    facts = call(ctx, evidence.parse_site, site)
    if bundle is not None:
        result = call(ctx, build.advice, bundle, None, facts)
    else:
        result = call(ctx, evidence.advise_live, config(ctx), facts)
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=1, default=str))
        return
    where = f"bundle {result.bundle}" if result.bundle else "this machine and grid, now (no run figures)"
    typer.echo(f"statgrid advise: {where}; inventory from {result.inventory_from}")
    typer.echo(rules.render(result.results))
