"""`statgrid inventory`: what this machine, its libraries' storage, the session options and the grid
are (statgrid/monitor/inventory.py), as text or --json (the record bundles keep as inventory.json)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from statgrid.cli.common import call, config, fail, grid_client
from statgrid.errors import UsageError


def inventory(ctx: typer.Context,
              as_json: bool = typer.Option(False, "--json", help="Print the inventory record as JSON."),
              bundle: Optional[Path] = typer.Option(None, "--bundle", help="Show the inventory.json a bench mixed "
                                                    "bundle saved instead of taking one now."),
              hosts: Optional[str] = typer.Option(None, "--hosts", metavar="all|H1,H2", help="Also inventory the "
                                                  "machines these grid hosts run on, with one short grid job on "
                                                  "each (the grid must be up; waits for a free slot)."),
              library: list[str] = typer.Option([], "--library", metavar="NAME=PATH", help="Inventory this path "
                                                "as library NAME too (repeatable)."),
              machine: bool = typer.Option(False, "--machine", hidden=True, help="This machine's nodes and "
                                           "libraries only, as JSON (what --hosts runs on each host).")) -> None:
    """What the grid runs on: per node CPU, memory, huge pages and VM tunables; per library the file
    system, mount options, device stack, readahead, I/O scheduler, queue limits, NFS and GPFS tunables;
    the session options; the grid's hosts and queues."""
    from statgrid.monitor import inventory as inv_mod

    if bundle is not None and (hosts is not None or library):
        fail(ctx, UsageError("--bundle shows a saved inventory: it takes no --hosts or --library (those take one "
                             "now); give one or the other."))
    extra = {}
    for spec in library:
        name, sep, path = spec.partition("=")
        if not sep or not name.strip() or not path.strip():
            fail(ctx, UsageError(f"--library {spec!r} is not NAME=PATH; e.g. --library SALES=/gpfs/sales."))
        extra[name.strip().upper()] = path.strip()
    if machine:
        inv = call(ctx, inv_mod.collect, None, extra)
        typer.echo(json.dumps({k: inv[k] for k in ("schema", "taken_ts", "nodes", "libraries")}))
        return
    if bundle is not None:
        from statgrid.advise.access import readable_bundle
        call(ctx, readable_bundle, bundle, "--bundle")      # refused whole, naming the path, before any read
        inv = call(ctx, inv_mod.load, bundle)
        if inv is None:
            fail(ctx, UsageError(f"--bundle {str(bundle)!r} holds no {inv_mod.FILE}: give a bundle made by "
                                 "`statgrid bench mixed` (bundles made before statgrid recorded one have none)."))
    elif hosts is not None:
        from statgrid.bench import inventory_hosts

        inv = call(ctx, inventory_hosts.collect_hosts, config(ctx), hosts, echo=lambda m: typer.echo(m, err=True),
                   client=grid_client(ctx))
    else:
        cfg = config(ctx)
        inv = call(ctx, inv_mod.collect, cfg, {**inv_mod.library_paths(cfg), **extra})
    typer.echo(json.dumps(inv, indent=1) if as_json else text(inv))


def text(inv: dict) -> str:
    """The inventory as tables: nodes (a column per machine), libraries (a column per library),
    session options, grid hosts; null shows as '-'."""
    from statgrid.monitor.inventory import LIBRARY_KEYS, NODE_KEYS
    from statgrid.grid.interface.views import table

    def val(v, key: str = ""):
        if key.endswith("_bytes") and isinstance(v, int) and not isinstance(v, bool) and v >= 1024:
            return f"{v} ({_binary(v)})"
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, list):
            return ",".join(map(str, v)) or None
        return v

    parts = []
    nodes = inv.get("nodes") or {}
    parts.append(table(["node", *nodes], [[k, *(val(n.get(k), k) for n in nodes.values())] for k in NODE_KEYS]))
    libs = inv.get("libraries") or {}
    if libs:
        keys = [k for k in LIBRARY_KEYS if k not in ("per_device", "gpfs", "nfs")]
        rows = [[k, *(val(r.get(k), k) for r in libs.values())] for k in keys]
        for sub in ("nfs", "gpfs"):
            subkeys = sorted({kk for r in libs.values() for kk in (r.get(sub) or {})})
            rows += [[f"{sub}.{kk}", *(val((r.get(sub) or {}).get(kk), kk) for r in libs.values())] for kk in subkeys]
        parts.append(table(["library", *libs], rows))
    session = inv.get("session") or {}
    if session:
        parts.append(table(["session option", "value"], [[k, val(v, k)] for k, v in session.items()]))
    grid = inv.get("grid") or {}
    hosts = grid.get("hosts") or {}
    if hosts:
        cols = ["slots", "cpus", "joins", "machine", "open"]
        parts.append(table(["grid host", *cols], [[h, *(val(r.get(c)) or ("all" if c == "cpus" else None)
                                                        for c in cols)] for h, r in hosts.items()]))
        parts.append(f"master on {grid.get('master_host')}; dispatch interval {grid.get('dispatch_interval_s')} s "
                     "(event-driven: a freed slot is refilled at once)")
        if grid.get("note"):
            parts.append(f"note: {grid['note']}")
    return "\n\n".join(parts)


def _binary(n: int) -> str:
    """1536 → '1.5 KiB', 25325268992 → '23.6 GiB'."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"
