"""The performance lab: `datagen`, `bench mixed`, `bench scale` and `report`."""
from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from statgrid.cli.common import call, config, fail
from statgrid.config import parse_option_pairs
from statgrid.errors import UsageError


def datagen(ctx: typer.Context,
            scale: float = typer.Option(..., "--scale", help="Size: 1.0 ≈ the papers' data (rows up to 90 M); "
                                        "the demo uses 0.0002."),
            library: str = typer.Option("data", "--library", help="Permanent library to fill (data or a "
                                        "[libname.*])."),
            seed: int = typer.Option(1, "--seed", help="Same seed, same files."),
            only: List[str] = typer.Option([], "--only", help="Make only this data set; repeatable."),
            local: bool = typer.Option(False, "--local", help="Run here, even if a grid master answers."),
            dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan (rows and estimated GB per data set) only.")) -> None:
    """Generate the Mixed Analytics data (deterministic; one grid job per data set when a grid is up;
    data sets already made with this seed and scale are kept)."""
    from statgrid.bench import datagen as dg

    cfg = config(ctx)
    if not scale > 0 or scale != scale or scale == float("inf"):
        fail(ctx, UsageError(f"--scale {scale!r} must be a positive number (1.0 ≈ the papers' sizes; try 0.0002)."))
    bad = [n for n in only if n not in dg.SPECS]
    if bad:
        fail(ctx, UsageError(f"--only {bad[0]!r} is not a data set; they are: {', '.join(dg.SPECS)}."))
    if dry_run:
        size = dg.estimated_bytes(scale)
        for name, rows in dg.plan(scale).items():
            typer.echo(f"{name:<13} {rows:>12,} rows ≈ {size[name] / 1e9:>9.3f} GB  {dg.SPECS[name].description}")
        typer.echo(f"{'total':<13} {'':>12}      ≈ {sum(size.values()) / 1e9:>9.3f} GB  (estimated from the bytes per "
                   "row as written; the jobs write more into WORK, UTIL and DATA)")
        return
    entries = call(ctx, dg.run_all, cfg, scale, seed, library, local, list(only) or None,
                   lambda m: typer.echo(m, err=True))
    total = sum(e["bytes"] for e in entries.values())
    for name, e in entries.items():
        typer.echo(f"{name:<13} {e['rows']:>12,} rows {e['bytes'] / 2**20:>10.1f} MiB  seed {e['seed']}  "
                   f"scale {e['scale']:g}")
    typer.echo(f"{'total':<13} {'':>12}      {total / 2**20:>10.1f} MiB in {dg._library_dir(cfg, library)}")


bench_app = typer.Typer(help="The performance lab: Mixed Analytics workload and scalability test.",
                        no_args_is_help=True)


@bench_app.command("mixed")
def bench_mixed(ctx: typer.Context,
                sessions: int = typer.Option(10, "--sessions", help="Simulated users (shipped files: 10, 20, 30, "
                                             "40, 80)."),
                scale: Optional[float] = typer.Option(None, "--scale", help="Data scale (default: the workload's)."),
                nodes: int = typer.Option(4, "--nodes", help="Hosts of the embedded grid."),
                slots: int = typer.Option(2, "--slots", help="Slots per host of the embedded grid."),
                workload_file: Optional[Path] = typer.Option(None, "--workload", help="Workload TOML (default: "
                                                             "the shipped one for --sessions)."),
                out: Optional[Path] = typer.Option(None, "--out", help="Bundle directory (default: "
                                                   "<home>/bench/mixed-…)."),
                use_running: bool = typer.Option(False, "--use-running", help="Use the running grid master "
                                                 "instead of an embedded grid."),
                memsize: Optional[str] = typer.Option(None, "--memsize", help="Session memsize of the jobs."),
                cpus_per_node: int = typer.Option(0, "--cpus-per-node", help="Give each embedded host this many "
                                                  "CPUs of its own (0: all hosts share every CPU)."),
                lang: str = typer.Option("python", "--lang", help="The jobs' language: python (jobs/<name>.py) "
                                         "or sas (each template's SAS twin, jobs/<name>.sas)."),
                option: List[str] = typer.Option([], "-o", "--option", metavar="NAME=VALUE", help="Session option "
                                                 "of every job and of datagen (bufsize=8k, compress=no, sortsize=256M, "
                                                 "memsize, threads); repeatable."),
                repeat: int = typer.Option(1, "--repeat", help="Run the workload this many times (<out>/run-k) "
                                           "and report each figure's mean and spread.")) -> None:
    """Run a Mixed Analytics workload through the grid and save a results bundle."""
    from statgrid.bench import mixed, workload as wl

    cfg = config(ctx)
    if nodes < 1 or slots < 1:
        fail(ctx, UsageError(f"--nodes {nodes} / --slots {slots}: both must be at least 1."))
    if cpus_per_node < 0:
        fail(ctx, UsageError(f"--cpus-per-node {cpus_per_node} must be ≥ 0 (0: hosts share every CPU)."))
    if lang.lower() not in wl.LANGS:
        fail(ctx, UsageError(f"--lang {lang!r} is not a job language; use one of {', '.join(wl.LANGS)}."))
    opts = call(ctx, parse_option_pairs, option)
    w = call(ctx, wl.load, workload_file, sessions)
    if scale is not None:
        if not (scale > 0 and scale != float("inf")):
            fail(ctx, UsageError(f"--scale {scale!r} must be a positive number (try 0.0002)."))
        w = w.with_globals(scale=scale)
    if repeat != 1:
        from statgrid.bench import repeat as rp
        from statgrid.report.build import mixed_report
        if repeat < 1:
            fail(ctx, UsageError(f"--repeat {repeat} must be at least 1."))
        root = out or cfg.home / "bench" / f"mixed-{w.sessions}s-x{repeat}-{time.strftime('%Y%m%d-%H%M%S')}"
        done = call(ctx, rp.run, repeat, root,
                    lambda d: mixed.run(cfg, w, nodes, slots, d, use_running, memsize,
                                        lambda m: typer.echo(m, err=True), cpus_per_node, lang.lower(), opts),
                    lambda b: mixed_report(b)[1], lambda m: typer.echo(m, err=True))
        typer.echo(f"{repeat} runs: {done} (statgrid report {done}: each figure's mean and spread)")
        return
    bundle = call(ctx, mixed.run, cfg, w, nodes, slots, out, use_running, memsize,
                  lambda m: typer.echo(m, err=True), cpus_per_node, lang.lower(), opts)
    typer.echo(mixed.summary(*mixed.load_bundle(bundle)))
    typer.echo(f"bundle: {bundle}")


@bench_app.command("scale")
def bench_scale(ctx: typer.Context,
                max_nodes: int = typer.Option(4, "--max-nodes", help="Steps 1, 2, … this many nodes."),
                sessions_per_node: int = typer.Option(10, "--sessions-per-node", help="Sessions per node (36 jobs "
                                                      "per 10 sessions)."),
                scale: Optional[float] = typer.Option(None, "--scale", help="Data scale (default 0.0002)."),
                slots: int = typer.Option(2, "--slots", help="Slots per node."),
                cpus_per_node: Optional[int] = typer.Option(None, "--cpus-per-node", help="CPUs of its own per "
                                                            "node (default: this machine's CPUs ÷ max nodes, "
                                                            "0 = shared)."),
                out: Optional[Path] = typer.Option(None, "--out", help="Directory for scale.json and the steps' "
                                                   "bundles (default: <home>/bench/scale-…)."),
                memsize: Optional[str] = typer.Option(None, "--memsize", help="Session memsize of the jobs.")) -> None:
    """Scalability test (seed 000 Table 4): 1 … K nodes with sessions growing with the nodes."""
    from statgrid.bench import scale as sc

    cfg = config(ctx)
    if scale is not None and not scale > 0:
        fail(ctx, UsageError(f"--scale {scale!r} must be a positive number."))
    if cpus_per_node is not None and cpus_per_node < 0:
        fail(ctx, UsageError(f"--cpus-per-node {cpus_per_node} must be ≥ 0 (0: nodes share every CPU)."))
    root = call(ctx, sc.run, cfg, max_nodes, sessions_per_node, scale, slots, cpus_per_node, out, memsize,
                lambda m: typer.echo(m, err=True))
    meta = sc.load(root)
    typer.echo(sc.table_text(meta["steps"]))
    typer.echo(f"({meta['note']})\nresults: {root}")


def report(ctx: typer.Context,
           sources: list[Path] = typer.Argument(..., metavar="RESULTS", help="A bench mixed bundle, a bench "
                                                "scale directory, a monitor --out directory, or one or more iobench "
                                                "--json files (several: one table of operations × configurations)."),
           compare: Optional[Path] = typer.Option(None, "--compare", help="Another result of the same sort (bench "
                                                  "mixed bundle or monitor capture; or two bench scale directories): "
                                                  "every figure side by side, with difference and ratio."),
           formats: str = typer.Option("html,md,json,csv", "--format", help="Comma list of html, md, json, csv."),
           out: Optional[Path] = typer.Option(None, "--out", help="Directory for the report (default: "
                                              "RESULTS/report, or RESULTS-report for a file).")) -> None:
    """Build the report (tables and charts) from saved results; nothing is re-run."""
    from statgrid.report import build, write

    fmts = call(ctx, write.parse_formats, formats)
    rep = call(ctx, build.build, sources, compare)
    source = sources[0]
    target = out or (source / ("compare-" + compare.name if compare else "report") if source.is_dir()
                     else source.with_name(source.stem + "-report") if len(sources) == 1
                     else source.with_name("iobench-report"))
    files = call(ctx, write.write, rep, target, fmts)
    for f in files:
        if f.suffix in (".html", ".md", ".json") or f.parent == target:
            typer.echo(str(f))

