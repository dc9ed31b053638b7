"""`statgrid demo`: a small Mixed Analytics workload on an embedded grid, end to end."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from statgrid.cli.common import call, config, fail
from statgrid.errors import UsageError


def demo(ctx: typer.Context,
         sessions: int = typer.Option(10, "--sessions", help="Simulated users (36 jobs per 10 sessions)."),
         nodes: int = typer.Option(4, "--nodes", help="Hosts of the embedded grid."),
         scale: Optional[float] = typer.Option(None, "--scale", help="Data scale (default 0.0005 ≈ 70 MB of "
                                               "input)."),
         out: Optional[Path] = typer.Option(None, "--out", help="Results bundle directory (default: "
                                            "<home>/demo/ma<N>-…).")) -> None:
    """The demo: a small Mixed Analytics workload (MA10: 10 users, 36 I/O, CPU and memory jobs, every
    user starting at once) on an embedded 4-node grid — data generation, live progress, a results
    bundle, its summary and its HTML report."""
    import time as _time

    from statgrid.bench import mixed, workload as wl

    cfg = config(ctx)
    scale = wl.DEMO_SCALE if scale is None else scale
    if sessions < 1 or nodes < 1 or not scale > 0:
        fail(ctx, UsageError(f"--sessions {sessions}, --nodes {nodes}, --scale {scale!r}: sessions and nodes must "
                             "be at least 1, scale positive."))
    w = call(ctx, wl.demo, sessions, scale)
    bundle = out or cfg.home / "demo" / f"ma{sessions}-{_time.strftime('%Y%m%d-%H%M%S')}"
    typer.echo(f"statgrid demo: {w.name}, {w.sessions} sessions, {w.n_jobs} jobs, on an embedded grid of {nodes} "
               f"hosts × 2 slots; data scale {scale:g}", err=True)
    bundle = call(ctx, mixed.run, cfg, w, nodes, 2, bundle, False, None, lambda m: typer.echo(m, err=True))
    meta, jobs = mixed.load_bundle(bundle)
    typer.echo(mixed.summary(meta, jobs))
    typer.echo(f"bundle: {bundle}")
    from statgrid.report import build, write

    html = call(ctx, write.write, call(ctx, build.build, bundle), bundle / "report", ["html"])[0]
    typer.echo(f"report: {html}")
    failed = [j for j in jobs if j["state"] != "DONE"]
    if failed:
        typer.echo(f"{len(failed)} job(s) did not finish DONE: " + ", ".join(
            f"{j['id']} {j['template']} {j['state']} ({j.get('exit_reason') or 'see its job log'})"
            for j in failed[:5]), err=True)
        raise typer.Exit(1)

