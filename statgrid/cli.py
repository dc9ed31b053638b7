"""The `statgrid` command. Library code raises StatgridError; only this module maps errors to
exit codes: 2 for usage errors (bad option, missing job file), 1 for runtime errors, and a job's
own exit code for `run`."""
from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer

from statgrid import __version__
from statgrid.config import Config, load_config, parse_option_pairs
from statgrid.errors import StatgridError, UsageError
from statgrid.job.record import JOB_ID_MAX, PEEK_MAX_BYTES

app = typer.Typer(help="statgrid: an open analytics grid.", no_args_is_help=True, add_completion=False,
                  pretty_exceptions_enable=False, rich_markup_mode=None)

_state: dict[str, Optional[str]] = {"config": None}


def _config(ctx: typer.Context) -> Config:
    try:
        return load_config(_state["config"])
    except UsageError as exc:
        _fail(ctx, exc)


def _fail(ctx: typer.Context, exc: StatgridError) -> None:
    """Usage errors exit 2 with the usage line and 'Try --help' (as click prints them); others exit 1."""
    if isinstance(exc, UsageError):
        typer.echo(f"{ctx.get_usage()}\nTry '{ctx.command_path} --help' for help.\n\nError: {exc}", err=True)
        raise typer.Exit(2)
    typer.echo(f"Error: {exc}", err=True)
    raise typer.Exit(1)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"statgrid {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(config: Optional[Path] = typer.Option(None, "--config", "-c", help="grid.toml to use "
                                                "(default: $STATGRID_CONFIG, $STATGRID_HOME/grid.toml, ./grid.toml)."),
          master: Optional[str] = typer.Option(None, "--master", metavar="URL", help="A master on another machine, "
                                               "e.g. https://grid1:8642 (default: $STATGRID_MASTER, else this "
                                               "machine's master through its local socket, else the url of "
                                               "~/.config/statgrid/client.toml); the token comes from "
                                               "$STATGRID_TOKEN or that file (`statgrid token create`)."),
          version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    _state["config"] = str(config) if config else None
    _state["master"] = master


@app.command()
def run(ctx: typer.Context, job: Path = typer.Argument(..., metavar="JOB", help="Job file: .py (uses statgrid.session()) or .sql."),
        option: List[str] = typer.Option([], "--option", "-o", metavar="KEY=VALUE", help="Session option "
                                         "(memsize, threads, bufsize, utilsize); repeatable."),
        as_json: bool = typer.Option(False, "--json", help="Print the STIMER records as JSON lines on stdout "
                                     "(log and listing go to stderr)."),
        log_dir: Optional[Path] = typer.Option(None, "--log-dir", help="Also write session.log, session.lst "
                                               "and session.stimer.jsonl here.")) -> None:
    """Run one job locally as a session; exit non-zero if it failed."""
    from statgrid.session.jobs import run_job

    cfg = _config(ctx)
    try:
        overrides = parse_option_pairs(option)
    except StatgridError as exc:
        _fail(ctx, exc)
    # With --json, stdout carries only the JSON records: listing, log and the job's own
    # print() output go to stderr.
    out = sys.stdout
    log = _open_log(ctx, log_dir, "session", text=sys.stderr, listing=sys.stderr if as_json else out,
                    jsonl=out if as_json else None)
    try:
        with contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext():
            outcome = run_job(job, cfg, overrides, log)
    except StatgridError as exc:
        _fail(ctx, exc)
    finally:
        log.close()
    raise typer.Exit(outcome.exit_code)


def _open_log(ctx: typer.Context, directory: Optional[Path], stem: str, text, listing, jsonl):
    from statgrid.session.log import SessionLog

    if directory is None:
        return SessionLog(text=text, jsonl=jsonl, listing=listing)
    try:
        return SessionLog.to_directory(directory, stem=stem, text_echo=text, listing_echo=listing, jsonl_echo=jsonl)
    except OSError as exc:
        _fail(ctx, StatgridError(f"cannot write the log to {str(directory)!r}: {exc.strerror}; choose a writable "
                                 "directory."))


@app.command()
def cleanwork(ctx: typer.Context, dry_run: bool = typer.Option(False, "--dry-run", help="Only say what would be removed."),
              all_hosts: bool = typer.Option(False, "--all-hosts", help="Also judge other hosts' sessions by their "
                                             "locks (only on file systems whose locks work across hosts).")) -> None:
    """Remove WORK and UTIL directories of sessions that no longer exist (never a live one)."""
    from statgrid.host.scratch import clean_stale

    cfg = _config(ctx)
    results = clean_stale([cfg.libraries.work, cfg.libraries.util], dry_run=dry_run, all_hosts=all_hosts)
    verb = "would remove" if dry_run else "removed"
    for r in results:
        action = verb if r.action == "removed" else ("kept (live)" if r.action == "live" else "skipped")
        typer.echo(f"{action:<13} {r.path}  ({r.reason})")
    n = sum(r.action == "removed" for r in results)
    typer.echo(f"{n} director{'y' if n == 1 else 'ies'} {verb}; {sum(r.action == 'live' for r in results)} live "
               "session(s) left alone.")


@app.command()
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

    cfg = _config(ctx)
    scale = wl.DEMO_SCALE if scale is None else scale
    if sessions < 1 or nodes < 1 or not scale > 0:
        _fail(ctx, UsageError(f"--sessions {sessions}, --nodes {nodes}, --scale {scale!r}: sessions and nodes must "
                              "be at least 1, scale positive."))
    w = _call(ctx, wl.demo, sessions, scale)
    bundle = out or cfg.home / "demo" / f"ma{sessions}-{_time.strftime('%Y%m%d-%H%M%S')}"
    typer.echo(f"statgrid demo: {w.name}, {w.sessions} sessions, {w.n_jobs} jobs, on an embedded grid of {nodes} "
               f"hosts × 2 slots; data scale {scale:g}", err=True)
    bundle = _call(ctx, mixed.run, cfg, w, nodes, 2, bundle, False, None, lambda m: typer.echo(m, err=True))
    meta, jobs = mixed.load_bundle(bundle)
    typer.echo(mixed.summary(meta, jobs))
    typer.echo(f"bundle: {bundle}")
    from statgrid.report import build, write

    html = _call(ctx, write.write, _call(ctx, build.build, bundle), bundle / "report", ["html"])[0]
    typer.echo(f"report: {html}")
    failed = [j for j in jobs if j["state"] != "DONE"]
    if failed:
        typer.echo(f"{len(failed)} job(s) did not finish DONE: " + ", ".join(
            f"{j['id']} {j['template']} {j['state']} ({j.get('exit_reason') or 'see its job log'})"
            for j in failed[:5]), err=True)
        raise typer.Exit(1)


def _print_step_summary(steps, total) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Steps (STIMER)")
    for col in ("#", "step", "status", "real s", "user s", "sys s", "memory MiB", "written MiB"):
        table.add_column(col, justify="left" if col in ("step", "status") else "right", no_wrap=True)
    for r in steps + ([total] if total else []):
        table.add_row(str(r.step) if r.record == "step" else "", r.name, r.status, f"{r.real_s:.2f}",
                      f"{r.user_cpu_s:.2f}", f"{r.sys_cpu_s:.2f}", f"{r.memory_bytes / 2**20:.1f}",
                      f"{r.logical_write_bytes / 2**20:.1f}")
    # rich assumes 80 columns when stdout is not a terminal, which would squeeze the table
    Console(width=None if sys.stdout.isatty() else 110).print(table)


@app.command("config")
def show_config(ctx: typer.Context) -> None:
    """Print the resolved configuration (grid.toml merged with the defaults) as JSON."""
    import dataclasses

    cfg = _config(ctx)
    typer.echo(json.dumps(dataclasses.asdict(cfg), indent=2, default=str))


@app.command("import")
def import_(ctx: typer.Context, path: Path = typer.Argument(..., metavar="FILE", help=".sas7bdat or .xpt file."),
            out: str = typer.Argument(..., metavar="LIB.MEMBER", help="Data set to write, e.g. data.sales."),
            catalog: Optional[Path] = typer.Option(None, "--catalog", help=".sas7bcat with the value labels."),
            encoding: Optional[str] = typer.Option(None, "--encoding", help="Text encoding if not UTF-8 "
                                                   "(e.g. latin1).")) -> None:
    """Import a SAS data set (.sas7bdat, .xpt) into a library, with its labels and formats."""
    from statgrid.session import Session, SessionLog

    cfg = _config(ctx)
    if not path.is_file():
        _fail(ctx, UsageError(f"FILE {str(path)!r} does not exist; give a .sas7bdat or .xpt file."))
    if "." not in out:
        _fail(ctx, UsageError(f"LIB.MEMBER {out!r} names no library; e.g. data.{out} (WORK would vanish with "
                              "the import's session)."))
    try:
        with Session(cfg, {}, log=SessionLog(text=sys.stderr)) as s:
            s.import_sas(str(path), out, catalog=str(catalog) if catalog else None, encoding=encoding)
    except StatgridError as exc:
        _fail(ctx, exc)


@app.command()
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

    cfg = _config(ctx)
    if not scale > 0 or scale != scale or scale == float("inf"):
        _fail(ctx, UsageError(f"--scale {scale!r} must be a positive number (1.0 ≈ the papers' sizes; try 0.0002)."))
    bad = [n for n in only if n not in dg.SPECS]
    if bad:
        _fail(ctx, UsageError(f"--only {bad[0]!r} is not a data set; they are: {', '.join(dg.SPECS)}."))
    if dry_run:
        size = dg.estimated_bytes(scale)
        for name, rows in dg.plan(scale).items():
            typer.echo(f"{name:<13} {rows:>12,} rows ≈ {size[name] / 1e9:>9.3f} GB  {dg.SPECS[name].description}")
        typer.echo(f"{'total':<13} {'':>12}      ≈ {sum(size.values()) / 1e9:>9.3f} GB  (estimated from the bytes per "
                   "row as written; the jobs write more into WORK, UTIL and DATA)")
        return
    entries = _call(ctx, dg.run_all, cfg, scale, seed, library, local, list(only) or None,
                    lambda m: typer.echo(m, err=True))
    total = sum(e["bytes"] for e in entries.values())
    for name, e in entries.items():
        typer.echo(f"{name:<13} {e['rows']:>12,} rows {e['bytes'] / 2**20:>10.1f} MiB  seed {e['seed']}  "
                   f"scale {e['scale']:g}")
    typer.echo(f"{'total':<13} {'':>12}      {total / 2**20:>10.1f} MiB in {dg._library_dir(cfg, library)}")


bench_app = typer.Typer(help="The performance lab: Mixed Analytics workload and scalability test.",
                        no_args_is_help=True)
app.add_typer(bench_app, name="bench")


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
                                                  "CPUs of its own (0: all hosts share every CPU).")) -> None:
    """Run a Mixed Analytics workload through the grid and save a results bundle."""
    from statgrid.bench import mixed, workload as wl

    cfg = _config(ctx)
    if nodes < 1 or slots < 1:
        _fail(ctx, UsageError(f"--nodes {nodes} / --slots {slots}: both must be at least 1."))
    if cpus_per_node < 0:
        _fail(ctx, UsageError(f"--cpus-per-node {cpus_per_node} must be ≥ 0 (0: hosts share every CPU)."))
    w = _call(ctx, wl.load, workload_file, sessions)
    if scale is not None:
        if not (scale > 0 and scale != float("inf")):
            _fail(ctx, UsageError(f"--scale {scale!r} must be a positive number (try 0.0002)."))
        w = w.with_globals(scale=scale)
    bundle = _call(ctx, mixed.run, cfg, w, nodes, slots, out, use_running, memsize,
                   lambda m: typer.echo(m, err=True), cpus_per_node)
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

    cfg = _config(ctx)
    if scale is not None and not scale > 0:
        _fail(ctx, UsageError(f"--scale {scale!r} must be a positive number."))
    if cpus_per_node is not None and cpus_per_node < 0:
        _fail(ctx, UsageError(f"--cpus-per-node {cpus_per_node} must be ≥ 0 (0: nodes share every CPU)."))
    root = _call(ctx, sc.run, cfg, max_nodes, sessions_per_node, scale, slots, cpus_per_node, out, memsize,
                 lambda m: typer.echo(m, err=True))
    meta = sc.load(root)
    typer.echo(sc.table_text(meta["steps"]))
    typer.echo(f"({meta['note']})\nresults: {root}")


@app.command()
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

    fmts = _call(ctx, write.parse_formats, formats)
    rep = _call(ctx, build.build, sources, compare)
    source = sources[0]
    target = out or (source / ("compare-" + compare.name if compare else "report") if source.is_dir()
                     else source.with_name(source.stem + "-report") if len(sources) == 1
                     else source.with_name("iobench-report"))
    files = _call(ctx, write.write, rep, target, fmts)
    for f in files:
        if f.suffix in (".html", ".md", ".json") or f.parent == target:
            typer.echo(str(f))


# -- the grid: master and LSF-like verbs ------------------------------------------------------------
grid_app = typer.Typer(help="Start and stop the grid master (job store, dispatcher, API, engine).",
                       no_args_is_help=True)
app.add_typer(grid_app, name="grid")


IDEMPOTENCY_HELP = ("This submit's idempotency key (default: a new one each time): sent again with the same "
                    "request it answers what was stored first, never submits twice (a retry after a lost answer).")


def _client(ctx: typer.Context):
    """The master: --master/$STATGRID_MASTER; else this machine's local socket; else, when that
    does not exist, the url of the client config (a client machine)."""
    from statgrid.grid.interface.client import GridClient, Remote, client_config_path, read_client_config

    cfg = _config(ctx)
    if _state.get("master"):
        return GridClient(cfg, remote=Remote(url=_state["master"]))
    client = GridClient(cfg)
    if client.remote is None and not client.socket_path.exists():
        remote = _call(ctx, read_client_config, client_config_path())
        if remote is not None:
            return GridClient(cfg, remote=remote)
    return client


def _call(ctx: typer.Context, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except StatgridError as exc:
        _fail(ctx, exc)


@grid_app.command("up")
def grid_up(ctx: typer.Context, detach: bool = typer.Option(False, "--detach", "-d", help="Run the master in the "
                                                            "background; its log goes to <home>/grid/master.log.")) -> None:
    """Start the master (and the embedded engine, unless [master] scheduler names one)."""
    from statgrid.grid.interface import server

    cfg = _config(ctx)
    if detach:
        info = _call(ctx, server.start_detached, cfg)
        typer.echo(f"statgrid master started (pid {info['pid']}): {info['socket']} for this machine's users, "
                   f"{info['url']} for remote clients with a token; log: {cfg.home / 'grid' / 'master.log'}\n"
                   f"console: {info['url']}/console/ (sign in with a token: `statgrid token create --print`)")
        return
    from statgrid import webapp

    _call(ctx, webapp.serve, cfg)


@grid_app.command("tls")
def grid_tls(ctx: typer.Context) -> None:
    """Make the grid's CA and certificate if missing (as `grid up` does) and say where they are and
    how to start a Dask scheduler of your own with them ([master] scheduler)."""
    from statgrid.grid.security import tls
    from statgrid.grid.master.core import grid_dir

    files = tls.ensure(grid_dir(_config(ctx)), renew=False)
    typer.echo(f"the grid's TLS files (0600; copy the directory to every node that runs `statgrid worker`): "
               f"{files.dir}\nstart a scheduler of your own with:\n  dask scheduler --protocol tls "
               + " ".join(tls.dask_cli_args(files)))


@grid_app.command("down")
def grid_down(ctx: typer.Context) -> None:
    """Stop the grid: running jobs are killed (rerunnable ones wait as PEND for the next `grid up`)."""
    from statgrid.grid.interface import server

    pid = _call(ctx, server.stop, _config(ctx))
    typer.echo("no master is running." if pid is None else f"statgrid grid stopped (pid {pid}).")


@grid_app.command("status")
def grid_status(ctx: typer.Context) -> None:
    """Say whether a master answers, and where."""
    info = _call(ctx, _client(ctx).health)
    typer.echo(f"master: {_client(ctx).base}  scheduler: {info['scheduler']}  hosts: {', '.join(info['hosts'])}  "
               f"running jobs: {info['running']}")


token_app = typer.Typer(help="API tokens, for using the grid from other machines over HTTPS.", no_args_is_help=True)
app.add_typer(token_app, name="token")


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

    client = _client(ctx)
    if client.remote is not None:
        _fail(ctx, StatgridError("tokens are made on the master's machine through its local socket; run "
                                 "`statgrid token create` there (a token cannot make another)."))
    rec = _call(ctx, client.token_create, name)
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
    from statgrid.grid.interface import views

    rows = _call(ctx, _client(ctx).tokens, all_users)
    typer.echo(json.dumps(rows, indent=1) if as_json else views.tokens_table(rows))


@token_app.command("revoke")
def token_revoke(ctx: typer.Context, token_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Revoke a token (yours; administrators: anyone's). Requests with it get 401 from then on."""
    rec = _call(ctx, _client(ctx).token_revoke, token_id)
    typer.echo(f"token {rec['id']} of {rec['user']} revoked.")


@app.command()
def events(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="One JSON object per line.")) -> None:
    """Follow the grid's changes as they happen (jobs, hosts) until Ctrl-C or the master stops."""
    try:
        for event in _client(ctx).events(timeout_s=120):
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
        _fail(ctx, exc)
    except KeyboardInterrupt:
        pass


@app.command()
def reconfig(ctx: typer.Context) -> None:
    """Re-read grid.toml into the running master (LSF badmin reconfig): queues, host slots and open,
    admins; running jobs are not touched. A bad file, or a change that needs a restart, changes
    nothing and names the key. Grid administrators only."""
    rec = _call(ctx, _client(ctx).reconfig)
    typer.echo("\n".join(rec["changes"]) if rec["changes"] else "grid.toml re-read: nothing changed.")


@app.command()
def whoami(ctx: typer.Context) -> None:
    """Who the master takes you for, and whether you administer the grid."""
    rec = _call(ctx, _client(ctx).whoami)
    grid = f"a personal grid of {rec['grid_user']}" if rec["personal"] else "a shared grid (runs as root)"
    typer.echo(f"{rec['user']} (uid {rec['uid']}, via {rec['via']}){' — grid administrator' if rec['admin'] else ''}; "
               f"{grid}")


@app.command(context_settings={"allow_interspersed_args": False})
def submit(ctx: typer.Context,
           job: List[str] = typer.Argument(..., metavar="JOB [ARGS]...", help="A job file (.py/.sql: one session) "
                                           "or a command and its arguments."),
           queue: str = typer.Option("", "--queue", "-q", help="Queue (default: 'normal' or the first in grid.toml)."),
           name: str = typer.Option("", "--name", "-J", help="Job name (default: the file or command name)."),
           hosts: List[str] = typer.Option([], "--host", "-m", help="Run only on this host; repeatable (LSF -m)."),
           rerunnable: bool = typer.Option(False, "--rerunnable", "-r", help="Requeue if its host is lost."),
           option: List[str] = typer.Option([], "--option", "-o", metavar="KEY=VALUE", help="Session option "
                                            "(memsize, threads, bufsize, utilsize); repeatable."),
           depend: str = typer.Option("", "--depend", "-w", metavar="EXPR", help="Start only when this holds, e.g. "
                                      "\"done(12) && ended(13)\" (done, ended, exit, started; &&, ||, parentheses)."),
           runlimit: Optional[str] = typer.Option(None, "--runlimit", "-W", metavar="TIME", help="Kill the job (EXIT) "
                                                  "after it ran this long, e.g. 30m, 2h (LSF -W)."),
           mem: Optional[str] = typer.Option(None, "--mem", metavar="SIZE", help="Memory to reserve on its host, and "
                                             "its limit there, e.g. 4G (default: a session's memsize plus the margin "
                                             "and 128M; a command none)."),
           priority: int = typer.Option(0, "--priority", "-sp", min=0, max=1000, help="Order among your own jobs of the "
                                        "queue, 0-1000, higher first."),
           key: Optional[str] = typer.Option(None, "--idempotency-key", metavar="KEY", help=IDEMPOTENCY_HELP)) -> None:
    """Submit a job to the grid; prints its id. An array: -J "name[1-100]%10" (100 jobs, at most 10 at
    once; each gets its index in $STATGRID_ARRAY_INDEX)."""
    from statgrid.config import parse_duration_s, parse_size_bytes
    from statgrid.grid.master.jobspec import JobRequest, parse_array, validate, with_declared_memsize

    cfg = _config(ctx)
    try:
        options = parse_option_pairs(option)
        host_list = [h for spec in hosts for h in spec.replace(",", " ").split()]
        runlimit_s = _parsed(parse_duration_s, runlimit, "-W", "30m or 2h") if runlimit else 0.0
        mem_bytes = _parsed(parse_size_bytes, mem, "--mem", "4G or 512M") if mem else 0
        array = parse_array(name) if name else None
        # The same checks the master makes, here first for a usage error without a round trip.
        import time as _time

        # A session reserves the memsize its job file sets: read here, as you (the master may not
        # read your files), and sent as what the file declares; the master makes the reservation
        # of it with its own grid.toml (memsize default, memory_margin), under which the job runs.
        req = with_declared_memsize(JobRequest(list(job), os.getcwd(), "", queue, name, options, rerunnable,
                                               host_list, dict(os.environ), depend, runlimit_s, mem_bytes, priority),
                                    cfg)
        validate(req, cfg, _time.time())
        rec = _client(ctx).submit(list(job), queue=queue, name=name, options=options, rerunnable=rerunnable,
                                  hosts=host_list, depend=depend, runlimit_s=runlimit_s, mem_bytes=mem_bytes,
                                  priority=priority, key=key, memsize_bytes=req.memsize_bytes,
                                  memsize_default_too=req.memsize_default_too)
    except StatgridError as exc:
        _fail(ctx, exc)
    if array is not None:
        # The elements' job ids on stdout (`kill $(...)`, `wait $(...)` take them all); the array's
        # own id (a flow's: `flow show|kill`) is another id space, so it goes to stderr only.
        first, n = rec["id"], len(array.indices)
        typer.echo(f"Job array <{rec['flow_id']}> of {n} jobs (<{first}> … <{first + n - 1}>) is submitted to queue "
                   f"<{rec['queue']}>; `statgrid flow show {rec['flow_id']}` shows it.", err=True)
        typer.echo(" ".join(str(i) for i in range(first, first + n)))
        return
    typer.echo(f"Job <{rec['id']}> is submitted to queue <{rec['queue']}>.", err=True)
    typer.echo(rec["id"])


def _parsed(parser, value: str, option: str, example: str):
    try:
        return parser(value)
    except ValueError as exc:
        raise UsageError(f"{option} {value!r} is not valid: expected {exc}; e.g. {option} {example}.") from None


@app.command()
def jobs(ctx: typer.Context, all_states: bool = typer.Option(False, "--all", "-a", help="Also finished jobs."),
         user: Optional[str] = typer.Option(None, "--user", "-u", help="This user's jobs; 'all' for everyone's."),
         queue: Optional[str] = typer.Option(None, "--queue", "-q", help="Only this queue's jobs."),
         host: Optional[str] = typer.Option(None, "--host", "-m", help="Only jobs on this host."),
         state: Optional[str] = typer.Option(None, "--state", "-s", metavar="STATE[,STATE]",
                                             help="Only jobs in these states (PEND RUN DONE EXIT KILLED)."),
         pending: bool = typer.Option(False, "--pending", "-p", help="Pending jobs and why each waits (bjobs -p)."),
         as_json: bool = typer.Option(False, "--json", help="JSON records instead of the table.")) -> None:
    """List jobs (default: yours, not finished), like bjobs; every match, fetched page by page.
    Long names are cut to 40 characters and control characters escaped; `job ID` shows them whole."""
    from statgrid.grid.interface import views

    states = ["PEND"] if pending else [s for s in state.split(",") if s.strip()] if state else None
    records = _call(ctx, _client(ctx).jobs, user=None if user in (None, "all") else user, mine=user is None,
                    all_states=all_states, states=states, queue=queue, host=host)
    typer.echo(json.dumps(records, indent=1) if as_json else
               views.pending_table(records) if pending else views.jobs_table(records))


@app.command("job")
def job_detail(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX),
               as_json: bool = typer.Option(False, "--json", help="The JSON record.")) -> None:
    """One job in detail: host, times, wait, rusage, STIMER totals, exit reason (bjobs -l)."""
    from statgrid.grid.interface import views

    rec = _call(ctx, _client(ctx).job, job_id)
    typer.echo(json.dumps(rec, indent=1) if as_json else views.job_detail(rec))


@app.command()
def hosts(ctx: typer.Context, as_json: bool = typer.Option(False, "--json")) -> None:
    """Hosts: state, slots, running jobs, load (bhosts)."""
    from statgrid.grid.interface import views

    rows = _call(ctx, _client(ctx).hosts)
    typer.echo(json.dumps(rows, indent=1) if as_json else views.hosts_table(rows))


host_app = typer.Typer(help="Close and open hosts (grid administrators), like LSF's badmin hclose/hopen.",
                       no_args_is_help=True)
app.add_typer(host_app, name="host")


@host_app.command("close")
def host_close(ctx: typer.Context, name: str = typer.Argument(..., metavar="NAME", help="A host of grid.toml."),
               reason: str = typer.Option("", "--reason", "-C", help="Why; `statgrid hosts` shows it.")) -> None:
    """Close a host: it takes no new jobs, its running jobs go on. Kept across master restarts."""
    rec = _call(ctx, _client(ctx).close_host, name, reason)
    typer.echo(f"host {name} closed by {rec['closed_by']}" + (f": {rec['reason']}" if rec["reason"] else ""))


@host_app.command("drain")
def host_drain(ctx: typer.Context, name: str = typer.Argument(..., metavar="NAME", help="A host of grid.toml."),
               reason: str = typer.Option("drain", "--reason", "-C", help="Why; `statgrid hosts` shows it."),
               timeout: Optional[float] = typer.Option(None, "--timeout", help="Give up waiting after this many "
                                                       "seconds (the host stays closed).")) -> None:
    """Close a host and wait until the jobs running there have ended (finish its jobs, take none);
    `host open` gives it work again."""
    import time as _time

    client = _client(ctx)
    _call(ctx, client.close_host, name, reason)
    deadline = None if timeout is None else _time.monotonic() + timeout
    said = None
    while True:
        row = next(h for h in _call(ctx, client.hosts) if h["host"] == name)
        if row["running"] == 0:
            typer.echo(f"host {name} drained: closed, no job running")
            return
        if row["running"] != said:
            typer.echo(f"host {name} closed; waiting for its {row['running']} running job(s)", err=True)
            said = row["running"]
        if deadline is not None and _time.monotonic() > deadline:
            _fail(ctx, StatgridError(f"host {name} still runs {row['running']} job(s) after {timeout:g} s; it stays "
                                     "closed (`statgrid host open` reopens it)."))
        _time.sleep(1.0)


@host_app.command("open")
def host_open(ctx: typer.Context, name: str = typer.Argument(..., metavar="NAME", help="A host of grid.toml.")) -> None:
    """Open a host an administrator closed: it takes jobs at once."""
    rec = _call(ctx, _client(ctx).open_host, name)
    typer.echo(f"host {name} opened ({rec['state']})")


@app.command()
def suspend(ctx: typer.Context, job_ids: List[int] = typer.Argument(..., metavar="ID...", min=1, max=JOB_ID_MAX)) -> None:
    """Suspend running jobs (bstop): their processes stop, keep their slot and memory; suspended
    time counts neither against their run limit nor as fairshare usage."""
    _each(ctx, job_ids, lambda c, i: c.suspend(i))


@app.command()
def resume(ctx: typer.Context, job_ids: List[int] = typer.Argument(..., metavar="ID...", min=1, max=JOB_ID_MAX)) -> None:
    """Resume suspended jobs (bresume)."""
    _each(ctx, job_ids, lambda c, i: c.resume(i))


@app.command()
def top(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Move a pending job to the top of its queue (btop): first among your own jobs there (an
    administrator's move: among everyone's)."""
    _each(ctx, [job_id], lambda c, i: c.move(i, "top"))


@app.command()
def bottom(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Move a pending job to the bottom of its queue (bbot)."""
    _each(ctx, [job_id], lambda c, i: c.move(i, "bottom"))


@app.command()
def modify(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX),
           queue: Optional[str] = typer.Option(None, "--queue", "-q", help="Another queue."),
           name: Optional[str] = typer.Option(None, "--name", "-J", help="Another name."),
           priority: Optional[int] = typer.Option(None, "--priority", "-sp", min=0, max=1000, help="Job priority."),
           runlimit: Optional[str] = typer.Option(None, "--runlimit", "-W", metavar="TIME", help="Run limit; 0: none."),
           mem: Optional[str] = typer.Option(None, "--mem", metavar="SIZE", help="Memory to reserve.")) -> None:
    """Change a pending job (bmod): queue, name, priority, run limit, memory."""
    from statgrid.config import parse_limit_s, parse_size_bytes

    try:
        runlimit_s = None if runlimit is None else _parsed(parse_limit_s, runlimit, "-W", "30m, 2h or 0")
        mem_bytes = None if mem is None else _parsed(parse_size_bytes, mem, "--mem", "4G or 512M")
    except StatgridError as exc:
        _fail(ctx, exc)
    if all(v is None for v in (queue, name, priority, runlimit_s, mem_bytes)):
        _fail(ctx, UsageError("nothing to change: give -q, -J, -sp, -W or --mem."))
    _each(ctx, [job_id], lambda c, i: c.modify(i, queue=queue, name=name, priority=priority, runlimit_s=runlimit_s,
                                               mem_bytes=mem_bytes))


def _each(ctx: typer.Context, job_ids: list[int], verb) -> None:
    """Apply a verb to each job; print each job's new state; exit 1 if any was refused."""
    client = _client(ctx)
    failed: list[StatgridError] = []
    for job_id in job_ids:
        try:
            rec = verb(client, job_id)
        except StatgridError as exc:
            typer.echo(f"Error: job {job_id}: {exc}", err=True)
            failed.append(exc)
            continue
        typer.echo(f"Job <{rec['id']}>: {rec['state']}")
    # 2 when every refusal was a usage error (as click's), 1 for others (not yours, not running any more)
    raise typer.Exit(0 if not failed else 2 if all(isinstance(e, UsageError) for e in failed) else 1)


flow_app = typer.Typer(help="Flows (Process Manager): jobs with dependencies, submitted, shown and killed as one; "
                       "arrays show here too.", no_args_is_help=True)
app.add_typer(flow_app, name="flow")


def _declare_flow_job(j, cwd: str, cfg) -> None:
    """A flow job's file's memsize, read here as you (the master may not read your files); the
    master reserves from it with its own grid.toml (jobspec.with_declared_memsize)."""
    from statgrid.grid.master.jobspec import JobRequest, with_declared_memsize

    if j.mem_bytes or j.kind != "file":
        return
    req = with_declared_memsize(JobRequest(list(j.argv), cwd), cfg)
    j.memsize_bytes, j.memsize_default_too = req.memsize_bytes, req.memsize_default_too


@flow_app.command("submit")
def flow_submit(ctx: typer.Context, path: Path = typer.Argument(..., metavar="FILE", help="A flow file (TOML)."),
                key: Optional[str] = typer.Option(None, "--idempotency-key", metavar="KEY", help=IDEMPOTENCY_HELP)) -> None:
    """Submit a flow file: every job or none; prints the flow's id. Its jobs run in the flow file's directory."""
    import time as _time

    from statgrid.grid.interface import flowfile
    from statgrid.grid.master.jobspec import JobRequest, validate

    cfg = _config(ctx)
    try:
        spec = flowfile.load(path)
        cwd = str(Path(path).resolve().parent)
        for j in spec.jobs:                     # the master's checks, here first, as you (files you may read)
            _declare_flow_job(j, cwd, cfg)
            validate(JobRequest(list(j.argv), cwd, "", j.queue, j.name, dict(j.options), j.rerunnable,
                                list(j.hosts), dict(os.environ), "", j.runlimit_s or 0.0, j.mem_bytes or 0,
                                memsize_bytes=j.memsize_bytes, memsize_default_too=j.memsize_default_too),
                     cfg, _time.time())
        rec = _client(ctx).submit_flow(spec, cwd=cwd, key=key)
    except StatgridError as exc:
        _fail(ctx, exc)
    typer.echo(f"Flow <{rec['id']}> ({rec['name']}) of {len(rec['jobs'])} jobs is submitted.", err=True)
    typer.echo(rec["id"])


@flow_app.command("list")
def flow_list(ctx: typer.Context, user: Optional[str] = typer.Option(None, "--user", "-u", help="This user's; 'all' "
                                                                      "for everyone's (default: yours)."),
              as_json: bool = typer.Option(False, "--json")) -> None:
    """The newest 100 flows and arrays with their state and jobs per state."""
    from statgrid.grid.interface import views

    rows = _call(ctx, _client(ctx).flows, user=None if user in (None, "all") else user, mine=user is None)
    typer.echo(json.dumps(rows, indent=1) if as_json else views.flows_table(rows))


@flow_app.command("show")
def flow_show(ctx: typer.Context, flow_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX),
              as_json: bool = typer.Option(False, "--json")) -> None:
    """A flow or array as one: its state, and each job with its state, dependency and pending reason."""
    from statgrid.grid.interface import views

    rec = _call(ctx, _client(ctx).flow, flow_id)
    typer.echo(json.dumps(rec, indent=1) if as_json else views.flow_detail(rec))


@flow_app.command("kill")
def flow_kill(ctx: typer.Context, flow_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Kill every unfinished job of a flow or array."""
    rec = _call(ctx, _client(ctx).kill_flow, flow_id)
    typer.echo(f"Flow <{rec['id']}>: {rec['state']} ("
               + ", ".join(f"{n} {s}" for s, n in sorted(rec["counts"].items())) + ")")


schedule_app = typer.Typer(help="Calendars (Process Manager): submit a job or a flow at cron-like times; kept "
                           "across master restarts.", no_args_is_help=True)
app.add_typer(schedule_app, name="schedule")


def local_zone() -> str:
    """This machine's IANA time zone name: $TZ, else /etc/localtime's link; UTC where the machine has
    none (no /etc/localtime: the C library's UTC too). Raises UsageError where it cannot be named."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        try:
            ZoneInfo(tz)
            return tz
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"$TZ={tz!r} is not an IANA time zone name; give the calendar's zone with --tz, e.g. "
                             "--tz Europe/Berlin.") from None
    if not os.path.lexists("/etc/localtime"):
        return "UTC"
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        target = ""
    if "zoneinfo/" not in target:
        raise UsageError("this machine's time zone has no name statgrid can read (/etc/localtime is not a link into "
                         "zoneinfo); give the calendar's zone with --tz, e.g. --tz UTC.")
    return target.split("zoneinfo/", 1)[1]


@schedule_app.command("add", context_settings={"allow_interspersed_args": False})
def schedule_add(ctx: typer.Context,
                 cron: str = typer.Option(..., "--cron", metavar="SPEC", help="When: 5 cron fields, e.g. \"0 2 * * *\" "
                                          "(02:00 daily), or @hourly, @daily, @weekly, @monthly."),
                 tz: Optional[str] = typer.Option(None, "--tz", help="Time zone of SPEC (default: this machine's)."),
                 flow: Optional[Path] = typer.Option(None, "--flow", metavar="FILE", help="Submit this flow file."),
                 queue: str = typer.Option("", "--queue", "-q"), name: str = typer.Option("", "--name", "-J"),
                 job: Optional[List[str]] = typer.Argument(None, metavar="[JOB [ARGS]...]")) -> None:
    """Add a calendar that submits a job (JOB ARGS, run in this directory) or a flow (--flow FILE)."""
    from statgrid.grid.interface import flowfile

    try:
        if (flow is None) == (not job):
            raise UsageError("give a job (JOB [ARGS]...) or --flow FILE, one of the two; e.g. statgrid schedule add "
                             "--cron \"0 2 * * *\" -- nightly.py")
        zone = tz or local_zone()
        client = _client(ctx)
        if flow is not None:
            spec, cwd = flowfile.load(flow), str(Path(flow).resolve().parent)
            for j in spec.jobs:                  # each file's memsize, read as you (as flow submit)
                _declare_flow_job(j, cwd, _config(ctx))
            rec = client.schedule_add(cron, zone, flow=spec, cwd=cwd)
        else:
            import time as _time

            from statgrid.grid.master.jobspec import JobRequest, validate, with_declared_memsize

            # the master's checks, here first, as you (a root master does not look at your files);
            # the file's memsize, read as you, is kept in the calendar's request (as submit's)
            req = with_declared_memsize(JobRequest(list(job), os.getcwd(), "", queue, name, {}, False, [],
                                                   dict(os.environ)), _config(ctx))
            validate(req, _config(ctx), _time.time())
            rec = client.schedule_add(cron, zone, argv=list(job), queue=queue, name=name,
                                      memsize_bytes=req.memsize_bytes, memsize_default_too=req.memsize_default_too)
    except StatgridError as exc:
        _fail(ctx, exc)
    import datetime as _dt
    from zoneinfo import ZoneInfo

    first = _dt.datetime.fromtimestamp(rec["next_ts"], ZoneInfo(rec["tz"])).strftime("%Y-%m-%d %H:%M %Z")
    typer.echo(f"Calendar <{rec['id']}> ({rec['cron']}, {rec['tz']}): {rec['what']}; first at {first}.", err=True)
    typer.echo(rec["id"])


@schedule_app.command("list")
def schedule_list(ctx: typer.Context, all_users: bool = typer.Option(False, "--all", help="Everyone's (administrators)."),
                  as_json: bool = typer.Option(False, "--json")) -> None:
    """Your calendars: when, what, the next and last time and what the last one submitted."""
    from statgrid.grid.interface import views

    rows = _call(ctx, _client(ctx).schedules, all_users)
    typer.echo(json.dumps(rows, indent=1) if as_json else views.schedules_table(rows))


@schedule_app.command("remove")
def schedule_remove(ctx: typer.Context, sched_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX)) -> None:
    """Remove a calendar (jobs it submitted go on)."""
    rec = _call(ctx, _client(ctx).schedule_remove, sched_id)
    typer.echo(f"Calendar <{rec['id']}> removed.")


@app.command()
def shares(ctx: typer.Context, queue: Optional[str] = typer.Option(None, "--queue", "-q", help="Only this queue."),
           as_json: bool = typer.Option(False, "--json")) -> None:
    """Fairshare: each user's and group's shares, running and pending jobs, decayed usage and
    dynamic priority, per queue with fairshare (bqueues -r)."""
    from statgrid.grid.interface import views

    rec = _call(ctx, _client(ctx).shares, queue)
    typer.echo(json.dumps(rec, indent=1) if as_json else views.shares_table(rec))


@app.command()
def queues(ctx: typer.Context, as_json: bool = typer.Option(False, "--json")) -> None:
    """Queues: priority, hosts and weights, user limit, pending and running jobs (bqueues)."""
    from statgrid.grid.interface import views

    rows = _call(ctx, _client(ctx).queues)
    typer.echo(json.dumps(rows, indent=1) if as_json else views.queues_table(rows))


@app.command()
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

    since_ts = None if since is None else _call(ctx, parse_since, since)
    rec = _call(ctx, _client(ctx).acct, user=user, queue=queue, since_ts=since_ts)
    typer.echo(json.dumps(rec, indent=1) if as_json else views.acct_text(_call(ctx, AcctReport.from_dict, rec)))


@app.command()
def kill(ctx: typer.Context, job_ids: List[int] = typer.Argument(..., metavar="ID...", min=1, max=JOB_ID_MAX)) -> None:
    """Kill jobs: pending ones leave the queue, running ones get SIGTERM then SIGKILL (bkill)."""
    results = _call(ctx, _client(ctx).kill, job_ids)
    for rec in results:
        if "error" in rec:
            typer.echo(f"Error: {rec['error']}", err=True)
        else:
            typer.echo(f"Job <{rec['id']}>: {rec['state']}{' (kill sent)' if rec['state'] == 'RUN' else ''}")
    raise typer.Exit(1 if any("error" in r for r in results) else 0)


@app.command()
def peek(ctx: typer.Context, job_id: int = typer.Argument(..., metavar="ID", min=1, max=JOB_ID_MAX),
         nbytes: int = typer.Option(4096, "--bytes", "-n", min=1, max=PEEK_MAX_BYTES, help="How much of the end of the "
                                    "output (at most 1 MiB; the whole file is at the path shown).")) -> None:
    """Show the end of a job's output and log (bpeek)."""
    rec = _call(ctx, _client(ctx).peek, job_id, nbytes)
    typer.echo(f"<< output of job {job_id} ({rec['job']['state']}): {rec['path']} >>", err=True)
    typer.echo(rec["text"], nl=False)


@app.command()
def wait(ctx: typer.Context, job_ids: List[int] = typer.Argument(..., metavar="ID...", min=1, max=JOB_ID_MAX),
         timeout: Optional[float] = typer.Option(None, "--timeout", help="Give up after this many seconds.")) -> None:
    """Wait until jobs finish; exit 0 only if all are DONE."""
    records = _call(ctx, _client(ctx).wait, job_ids, timeout)
    for rec in records:
        typer.echo(f"Job <{rec['id']}>: {rec['state']}" + (f" ({rec['exit_reason']})" if rec.get("exit_reason") else ""))
    raise typer.Exit(0 if all(r["state"] == "DONE" for r in records) else 1)


@app.command()
def worker(ctx: typer.Context,
           master: str = typer.Option(..., "--master", help="Address of the grid's Dask scheduler, "
                                      "e.g. tls://grid1:8786 ([master] scheduler in grid.toml)."),
           name: str = typer.Option(..., "--name", help="Host name as in grid.toml's [hosts.NAME]."),
           slots: int = typer.Option(..., "--slots", min=1, help="Job slots (LSF MXJ): the worker's threads.")) -> None:
    """Join this machine to a grid as host NAME (a thin wrapper on `dask worker`). It presents the
    grid's certificate from <home>/grid/tls (copied from the master's grid home, kept 0600)."""
    _exec_worker(ctx, _config(ctx), master, name, slots)


def _exec_worker(ctx: typer.Context, cfg: Config, master: str, name: str, slots: int,
                 listen: str | None = None, nanny: bool = True) -> None:
    """Become `dask worker` for host `name` of the grid whose scheduler is at `master`."""
    from statgrid.grid.security import tls
    from statgrid.grid.execution.cluster import dask_settings
    from statgrid.grid.master.core import grid_dir

    tls_args: list[str] = []
    if cfg.master.engine_tls:
        if not master.startswith("tls://"):
            _fail(ctx, UsageError(f"--master {master!r}: the grid's engine speaks TLS only; give its tls:// "
                                  "address (or set [master] engine_tls = false on a trusted single-user machine)."))
        tls_args = tls.dask_cli_args(_call(ctx, tls.require, grid_dir(cfg)))
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
app.add_typer(node_app, name="node")


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

    cfg = _config(ctx)
    name = name or _socket.gethostname().split(".")[0]
    host = cfg.hosts.get(name)
    if host is None:
        _fail(ctx, UsageError(f"host {name!r} is not in grid.toml (hosts: {', '.join(cfg.hosts)}); give --name, or "
                              f"add [hosts.{name}] with joins = true."))
    if not host.joins:
        _fail(ctx, UsageError(f"host {name!r} has no joins = true in grid.toml: its worker is run by the master's "
                              f"embedded engine; set joins = true under [hosts.{name}] (and restart the master) to "
                              "run it here."))
    address = master or _call(ctx, netaddr.engine_address, cfg)
    listen = _call(ctx, netaddr.address_towards, address)
    from statgrid.grid.execution.node import cpus_seen

    slots = host.slots if host.slots is not None else cpus_seen(host.cpus)    # resolved here, where it runs
    typer.echo(f"statgrid node {name}: joining {address} from {listen} with {slots} slot{'' if slots == 1 else 's'}"
               + (" (the CPUs it sees)" if host.slots is None else ""), err=True)
    # No nanny: a node is restarted by its service manager; Dask's nanny would instead try to restart
    # a silent worker through the same dead link and hold up its removal by 30 s.
    _exec_worker(ctx, cfg, address, name, slots, listen=listen, nanny=False)


# -- the node monitor ------------------------------------------------------------------------------
monitor_app = typer.Typer(help="Sample this node's CPU, memory, disks (per library), pressure and network.")
app.add_typer(monitor_app, name="monitor")


def _duration(ctx: typer.Context, option: str, value: Optional[str]) -> Optional[float]:
    from statgrid.config import parse_duration_s

    if value is None:
        return None
    try:
        return parse_duration_s(value)
    except ValueError as exc:
        _fail(ctx, UsageError(f"{option} {value!r} is not allowed: expected {exc}."))


@monitor_app.callback(invoke_without_command=True)
def monitor(ctx: typer.Context,
            interval: str = typer.Option("1s", "--interval", "-i", help="Time between samples (1s, 500ms, 5s)."),
            out: Optional[Path] = typer.Option(None, "--out", help="Where the Parquet samples go "
                                               "(default: <home>/monitor)."),
            duration: Optional[str] = typer.Option(None, "--duration", "-d", help="Stop after this long "
                                                   "(30s, 10m, 1h); default: until Ctrl-C."),
            host: Optional[str] = typer.Option(None, "--host", help="Name for this node (default: hostname)."),
            quiet: bool = typer.Option(False, "--quiet", "-q", help="No line per sample.")) -> None:
    """Sample until Ctrl-C or --duration; print one line per sample and write Parquet."""
    if ctx.invoked_subcommand is not None:
        return
    import socket

    from statgrid.monitor.runner import run as run_monitor
    from statgrid.monitor.store import host_dir

    cfg = _config(ctx)
    interval_s = _duration(ctx, "--interval", interval)
    duration_s = _duration(ctx, "--duration", duration)
    out_dir = out or cfg.home / "monitor"
    try:
        host_dir(out_dir, host or socket.gethostname())          # one file name: "a/b" or ".." would escape
    except UsageError as exc:
        _fail(ctx, exc)
    libs = {"data": cfg.libraries.data, "work": cfg.libraries.work, "util": cfg.libraries.util}

    def echo(rows: dict) -> None:
        import time as _time

        def f(v, scale=1.0, width=5):          # a figure the sampler could not compute shows as '-'
            return "-".rjust(width) if v is None else f"{v / scale:{width}.1f}"

        n = rows["node"][0]
        parts = [_time.strftime("%H:%M:%S", _time.localtime(n["ts"])),
                 "cpu usr {}% sys {}% wait {}% idle {}%".format(
                     *(f(n[k]) for k in ("cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "cpu_idle_pct"))),
                 f"psi io {f(n['psi_io_some_pct'])}%"]
        for lib in rows["library"]:
            parts.append(f"{lib['library']}({lib['device']}) r {f(lib['read_bytes_per_s'], 1e6, 7)} "
                         f"w {f(lib['write_bytes_per_s'], 1e6, 7)} MB/s util {f(lib['util_pct'])}%")
        typer.echo("  ".join(parts))

    try:
        n = run_monitor(host or socket.gethostname(), out_dir, libs, interval_s, duration_s,
                        echo=None if quiet else echo, warn=lambda note: typer.echo(f"note: {note}", err=True))
    except OSError as exc:
        _fail(ctx, StatgridError(f"cannot monitor: {exc}; check that /proc is readable and {out_dir} writable."))
    typer.echo(f"{n} samples written to {out_dir}", err=True)


@monitor_app.command("export")
def monitor_export(ctx: typer.Context,
                   source: Optional[Path] = typer.Option(None, "--in", help="Monitor directory "
                                                         "(default: <home>/monitor)."),
                   csv_dir: Path = typer.Option(..., "--csv", help="Directory for node.csv, disk.csv, library.csv.")) -> None:
    """Consolidate every node's samples and write them as CSV."""
    from statgrid.monitor.store import export_csv

    cfg = _config(ctx)
    src = source or cfg.home / "monitor"
    if not src.is_dir():
        _fail(ctx, UsageError(f"--in {str(src)!r} is not a directory of monitor samples; run `statgrid monitor` "
                              "first or point --in at its --out."))
    written = export_csv(src, csv_dir)
    if not written:
        _fail(ctx, StatgridError(f"no samples under {str(src)!r}."))
    for path in written:
        typer.echo(str(path))


# -- the I/O benchmark ------------------------------------------------------------------------------
@app.command()
def iobench(ctx: typer.Context,
            directory: Optional[Path] = typer.Option(None, "--dir", help="Directory for the test files."),
            library: Optional[str] = typer.Option(None, "--library", help="Or a library's directory: data, "
                                                  "work, util, or a [libname.*]. Default: work."),
            mode: str = typer.Option("write", "--mode", help="write, read or rw."),
            rwmixread: int = typer.Option(50, "--rwmixread", help="Share of reads in rw mode (%)."),
            pattern: str = typer.Option("seq", "--pattern", help="seq or rand."),
            bs: str = typer.Option("1M", "--bs", help="Request size (4K, 1M)."),
            threads: int = typer.Option(1, "--threads", "-t", help="Threads, each on its own file."),
            size: str = typer.Option("8G", "--size-per-thread", help="File size per thread (8G as in the papers)."),
            direct: bool = typer.Option(False, "--direct", help="O_DIRECT: bypass the page cache."),
            fsync: bool = typer.Option(False, "--fsync", help="fsync each file at the end, inside the timing."),
            runs: int = typer.Option(3, "--runs", help="Timed runs."),
            node: Optional[str] = typer.Option(None, "--node", help="Name of this node in the results "
                                               "(default: hostname)."),
            json_out: Optional[Path] = typer.Option(None, "--json", help="Write the fio-like JSON here."),
            csv_out: Optional[Path] = typer.Option(None, "--csv", help="Write one CSV row per run, node, direction."),
            nodes: Optional[str] = typer.Option(None, "--nodes", help="Run on these grid hosts at once ('all' or "
                                                "node1,node2); needs a running master."),
            queue: str = typer.Option("", "--queue", "-q", help="With --nodes: the grid queue of its jobs "
                                      "(default: 'normal' or the first in grid.toml)."),
            raw_out: Optional[Path] = typer.Option(None, "--raw-out", hidden=True),
            barrier_dir: Optional[Path] = typer.Option(None, "--barrier-dir", hidden=True),
            barrier_nodes: int = typer.Option(1, "--barrier-nodes", hidden=True)
            ) -> None:
    """Raw I/O test like gpfsperf/ndisk64: N threads, each on its own file; MB/s, IOPS, latency."""
    import socket

    from statgrid.bench import iobench_out
    from statgrid.bench.iobench import IOSpec, run_node
    from statgrid.config import parse_size_bytes

    cfg = _config(ctx)
    if directory is not None and library is not None:
        _fail(ctx, UsageError("give --dir or --library, not both."))
    if directory is None:
        lib = (library or "work").lower()
        roots = {"data": cfg.libraries.data, "work": cfg.libraries.work, "util": cfg.libraries.util,
                 **{n: ln.path for n, ln in cfg.libnames.items()}}
        if lib not in roots:
            _fail(ctx, UsageError(f"--library {library!r} is not a library; libraries: {', '.join(roots)}."))
        directory = roots[lib]
        directory.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for option, value in (("--bs", bs), ("--size-per-thread", size)):
        try:
            sizes[option] = parse_size_bytes(value)
        except ValueError as exc:
            _fail(ctx, UsageError(f"{option} {value!r} is not allowed: expected {exc}."))
    try:
        spec = IOSpec(directory.absolute(), mode, rwmixread, pattern, sizes["--bs"], threads,
                      sizes["--size-per-thread"], direct, fsync, runs)
        spec.check()
    except StatgridError as exc:
        _fail(ctx, exc)
    if mode != "read" and not direct and not fsync:
        typer.echo("warning: buffered writes without --fsync measure the page cache, not the device; add --fsync "
                   "or --direct.", err=True)

    def progress(r) -> None:
        total = r.read.io_bytes + r.write.io_bytes
        runtime_ns = max(r.read.runtime_ns, r.write.runtime_ns) or r.wall_ns
        typer.echo(f"run {r.run}/{runs}: {total / (runtime_ns / 1e9) / 1e6:.1f} MB/s", err=True)

    def on_term(signum, frame):
        raise KeyboardInterrupt                  # SIGTERM (a grid kill) cleans up like Ctrl-C

    import signal

    from statgrid.bench.iobench import file_barrier, mark_failed, save_runs

    signal.signal(signal.SIGTERM, on_term)
    if nodes:
        _iobench_on_grid(ctx, cfg, spec, nodes, queue, json_out, csv_out)
        return
    if queue:
        _fail(ctx, UsageError(f"-q/--queue {queue!r} applies to grid runs: add --nodes (e.g. --nodes all)."))
    me = node or socket.gethostname()
    try:
        before = file_barrier(barrier_dir, me, barrier_nodes) if barrier_dir else None
        try:
            results = run_node(spec, me, before_run=before, progress=progress)
        except BaseException:
            if barrier_dir is not None:
                mark_failed(barrier_dir, me)
            raise
        if raw_out is not None:
            save_runs(raw_out, results)
    except KeyboardInterrupt:
        typer.echo("iobench interrupted; its files were removed.", err=True)
        raise typer.Exit(130)
    except StatgridError as exc:
        _fail(ctx, exc)
    except OSError as exc:
        _fail(ctx, StatgridError(f"I/O error in {str(directory)!r}: {exc.strerror} ({exc.filename or ''}); check "
                                 "the space and permissions there."))
    result = iobench_out.summarize(spec, iobench_out.group_by_run([results]))
    typer.echo(iobench_out.terminal(result))
    if json_out:
        json_out.write_text(iobench_out.to_json(result))
    if csv_out:
        csv_out.write_text(iobench_out.to_csv(result))


def _iobench_on_grid(ctx: typer.Context, cfg: Config, spec, nodes: str, queue: str, json_out, csv_out) -> None:
    """One iobench job per chosen host, started through the grid, timed runs aligned by a file
    barrier in the grid home; results gathered here into one record (per node and total).
    The jobs wait for each other, so none is submitted unless all can start at once, and if one
    does not start or fails, the others are killed rather than left at the barrier."""
    import time as _time

    from statgrid.bench import iobench_out
    from statgrid.bench.iobench import grid_nodes, load_runs
    from statgrid.grid.interface.client import GridClient

    grid = GridClient(cfg)
    mine = _call(ctx, grid.jobs, mine=True, states=["RUN", "PEND"])
    queue, chosen = _call(ctx, grid_nodes, cfg, nodes, queue, _call(ctx, grid.hosts), mine)
    group = cfg.home / "iobench" / f"{_time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    group.mkdir(parents=True)
    argv = [sys.executable, "-m", "statgrid", "iobench", "--dir", str(spec.dir), "--mode", spec.mode,
            "--rwmixread", str(spec.rwmixread), "--pattern", spec.pattern, "--bs", str(spec.bs_bytes),
            "--threads", str(spec.threads), "--size-per-thread", str(spec.size_per_thread_bytes),
            "--runs", str(spec.runs), "--barrier-dir", str(group), "--barrier-nodes", str(len(chosen)),
            *(["--direct"] if spec.direct else []), *(["--fsync"] if spec.fsync else [])]
    ids: list[int] = []
    try:
        for n in chosen:
            try:
                rec = grid.submit(argv + ["--node", n, "--raw-out", str(group / f"{n}.npz")], queue=queue,
                                  hosts=[n], name=f"iobench-{n}")
            except StatgridError as exc:
                _give_up(ctx, grid, ids, exc)
            ids.append(rec["id"])
            # The master dispatches on submit: a job still PEND in the answer cannot start now (the
            # grid changed since the check above) and would leave the others waiting at the barrier.
            if rec["state"] == "PEND":
                _give_up(ctx, grid, ids, StatgridError(
                    f"iobench job {rec['id']} on {n} did not start at once (PEND in queue {queue!r}; see `statgrid "
                    "hosts` and `statgrid jobs -u all`); try again when those hosts are free."))
        typer.echo(f"iobench jobs {', '.join(map(str, ids))} on {', '.join(chosen)}; results in {group}", err=True)
        while True:                   # one ending badly: the others would wait at the barrier for it
            jobs = grid.wait(ids, timeout_s=1.0)
            if all(j["state"] in ("DONE", "EXIT", "KILLED") for j in jobs):
                break
            if any(j["state"] in ("EXIT", "KILLED") for j in jobs):
                grid.kill([j["id"] for j in jobs if j["state"] not in ("DONE", "EXIT", "KILLED")])
                jobs = grid.wait(ids)
                break
    except KeyboardInterrupt:
        grid.kill(ids)
        typer.echo("iobench interrupted; its jobs were killed (they remove their files).", err=True)
        raise typer.Exit(130)
    failed = sorted((j for j in jobs if j["state"] != "DONE"), key=lambda j: j["state"] != "EXIT")  # the cause first
    if failed:
        tail = grid.peek(failed[0]["id"], 1500)["text"]
        _fail(ctx, StatgridError(f"iobench job {failed[0]['id']} on {failed[0]['host']} ended {failed[0]['state']} "
                                 f"({failed[0]['exit_reason']}); its output ends with:\n{tail}"))
    result = iobench_out.summarize(spec, iobench_out.group_by_run([load_runs(group / f"{n}.npz") for n in chosen]))
    typer.echo(iobench_out.terminal(result))
    (group / "result.json").write_text(iobench_out.to_json(result))
    if json_out:
        json_out.write_text(iobench_out.to_json(result))
    if csv_out:
        csv_out.write_text(iobench_out.to_csv(result))


def _give_up(ctx: typer.Context, grid, ids: list[int], exc: StatgridError) -> None:
    """Kill the iobench jobs submitted so far (none may wait at the barrier for a job that will not
    come), then fail with `exc`."""
    if ids:
        grid.kill(ids)
        grid.wait(ids, timeout_s=60)
        exc = type(exc)(f"{exc} (iobench jobs {', '.join(map(str, ids))} were killed.)")
    _fail(ctx, exc)


def main() -> None:
    app(prog_name="statgrid")   # the same usage text under `python -m statgrid`


if __name__ == "__main__":
    main()
