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


@app.callback()
def _main(config: Optional[Path] = typer.Option(None, "--config", "-c", help="grid.toml to use "
                                                "(default: $STATGRID_CONFIG, $STATGRID_HOME/grid.toml, ./grid.toml)."),
          version: bool = typer.Option(False, "--version", help="Print the version and exit.")) -> None:
    if version:
        typer.echo(f"statgrid {__version__}")
        raise typer.Exit(0)
    _state["config"] = str(config) if config else None


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
    from statgrid.session.scratch import clean_stale

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
def demo(ctx: typer.Context, rows: int = typer.Option(200_000, help="Rows of demo data.")) -> None:
    """Run the demo: a small mixed job in one session, with its STIMER log and listing."""
    from statgrid.examples import EXAMPLES_DIR
    from statgrid.session.jobs import run_job

    cfg = _config(ctx)
    out_dir = cfg.home / "demo"
    os.environ["STATGRID_DEMO_ROWS"] = str(rows)
    log = _open_log(ctx, out_dir, "demo", text=None, listing=sys.stdout, jsonl=None)
    try:
        outcome = run_job(EXAMPLES_DIR / "demo.py", cfg, {}, log)
    except StatgridError as exc:
        _fail(ctx, exc)
    finally:
        log.close()
    _print_step_summary(outcome.steps, outcome.total)
    if outcome.error:
        typer.echo(f"\nThe demo failed: {outcome.error}", err=True)
    typer.echo(f"\nLog: {out_dir / 'demo.log'}\nListing: {out_dir / 'demo.lst'}\n"
               f"STIMER records: {out_dir / 'demo.stimer.jsonl'}")
    raise typer.Exit(outcome.exit_code)


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


def main() -> None:
    app(prog_name="statgrid")   # the same usage text under `python -m statgrid`


if __name__ == "__main__":
    main()
