"""Session commands: run a job here (`run`), clean stale WORK/UTIL (`cleanwork`), show the
configuration (`config`), import a SAS data set (`import`)."""
from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from statgrid.cli.common import config, fail
from statgrid.config import parse_option_pairs
from statgrid.errors import StatgridError, UsageError
from statgrid.job.jobdir import SESSION_STEM


def run(ctx: typer.Context, job: Path = typer.Argument(..., metavar="JOB", help="Job file: .py (uses "
                                   "statgrid.session()), .sql, or .sas (a SAS program; SAS's invocation options "
                                   "may follow it)."),
        option: List[str] = typer.Option([], "--option", "-o", metavar="KEY=VALUE", help="Session option "
                                         "(memsize, threads, bufsize, utilsize, autoexec); repeatable."),
        as_json: bool = typer.Option(False, "--json", help="Print the STIMER records as JSON lines on stdout "
                                     "(log and listing go to stderr)."),
        log_dir: Optional[Path] = typer.Option(None, "--log-dir", help="Also write session.log, session.lst "
                                               "and session.stimer.jsonl here."),
        sysparm: Optional[str] = typer.Option(None, "-sysparm", metavar="VALUE", help=".sas: SYSPARM= (&SYSPARM)."),
        memsize: Optional[str] = typer.Option(None, "-memsize", metavar="SIZE", help=".sas: MEMSIZE (the session's "
                                              "memsize)."),
        bufsize: Optional[str] = typer.Option(None, "-bufsize", metavar="SIZE", help=".sas: BUFSIZE= (kept for "
                                              "GETOPTION; statgrid's I/O unit is -o bufsize=ROWS)."),
        sortsize: Optional[str] = typer.Option(None, "-sortsize", metavar="SIZE", help=".sas: SORTSIZE=."),
        fullstimer: bool = typer.Option(False, "-fullstimer", help=".sas: FULLSTIMER (every step's full record)."),
        autoexec: Optional[str] = typer.Option(None, "-autoexec", metavar="FILE", help=".sas: a program run first "
                                               "(instead of grid.toml's [session] autoexec)."),
        set_names: List[str] = typer.Option([], "-set", metavar="NAME VALUE", help=".sas: environment variable "
                                            "NAME=VALUE for the program (%SYSGET); repeatable."),
        sas_log: Optional[Path] = typer.Option(None, "-log", metavar="FILE", help=".sas: write the log to FILE "
                                               "instead of the terminal."),
        sas_print: Optional[Path] = typer.Option(None, "-print", metavar="FILE", help=".sas: write the listing "
                                                 "to FILE instead of the terminal."),
        work: Optional[str] = typer.Option(None, "-work", metavar="DIR", help=".sas: make WORK under DIR."),
        utilloc: Optional[str] = typer.Option(None, "-utilloc", metavar="DIR", help=".sas: make UTIL under DIR."),
        values: Optional[List[str]] = typer.Argument(None, metavar="[VALUE]...", hidden=True)) -> None:
    """Run one job locally as a session; exit non-zero if it failed."""
    from statgrid.session.jobs import run_job

    cfg = config(ctx)
    try:
        overrides = parse_option_pairs(option)
    except StatgridError as exc:
        fail(ctx, exc)
    # SAS's invocation options, in the words SAS takes them (-set NAME VALUE: the VALUEs arrive as the
    # trailing arguments, in order); a grid job's come here as the node runs `statgrid run prog.sas …`.
    sas_args: list[str] = []
    for flag, value in (("-sysparm", sysparm), ("-memsize", memsize), ("-bufsize", bufsize),
                        ("-sortsize", sortsize), ("-autoexec", autoexec), ("-log", sas_log),
                        ("-print", sas_print), ("-work", work), ("-utilloc", utilloc)):
        if value is not None:
            sas_args += [flag, str(value)]
    if fullstimer:
        sas_args.append("-fullstimer")
    values = list(values or [])
    if len(values) != len(set_names):
        fail(ctx, UsageError(f"-set takes a name and a value (-set NAME VALUE); got {len(set_names)} name(s) and "
                             f"the extra argument(s) {values!r}."))
    for name, value in zip(set_names, values):
        sas_args += ["-set", name, value]
    invocation = None
    if job.suffix.lower() == ".sas":
        invocation = _invocation(ctx, sas_args)
    elif sas_args:
        fail(ctx, UsageError(f"{' '.join(sas_args)}: SAS invocation options apply to .sas programs, not to "
                             f"{str(job)!r}; use -o KEY=VALUE for session options."))
    # With --json, stdout carries only the JSON records: listing, log and the job's own
    # print() output go to stderr.
    out = sys.stdout
    text_stream = listing_stream = None
    try:
        text_stream = open(invocation.log_path, "w") if invocation and invocation.log_path else sys.stderr
        listing_stream = (open(invocation.print_path, "w") if invocation and invocation.print_path else
                          sys.stderr if as_json else out)
    except OSError as exc:
        fail(ctx, StatgridError(f"cannot write {exc.filename!r}: {exc.strerror}; choose a writable file for -log "
                                "or -print."))
    log = _open_log(ctx, log_dir, SESSION_STEM, text=text_stream, listing=listing_stream,
                    jsonl=out if as_json else None)
    try:
        with contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext():
            outcome = run_job(job, cfg, overrides, log, invocation=invocation)
    except StatgridError as exc:
        fail(ctx, exc)
    finally:
        log.close()
        for stream in (text_stream, listing_stream):
            if stream not in (None, sys.stderr, sys.stdout):
                stream.close()
    raise typer.Exit(outcome.exit_code)


def _invocation(ctx: typer.Context, args: list[str]):
    from statgrid.sas.errors import SasError
    from statgrid.sas.invocation import parse_invocation

    try:
        return parse_invocation(args)
    except SasError as exc:
        fail(ctx, UsageError(f"SAS invocation option: {exc.describe()}."))


def _open_log(ctx: typer.Context, directory: Optional[Path], stem: str, text, listing, jsonl):
    from statgrid.session.log import SessionLog

    if directory is None:
        return SessionLog(text=text, jsonl=jsonl, listing=listing)
    try:
        return SessionLog.to_directory(directory, stem=stem, text_echo=text, listing_echo=listing, jsonl_echo=jsonl)
    except OSError as exc:
        fail(ctx, StatgridError(f"cannot write the log to {str(directory)!r}: {exc.strerror}; choose a writable "
                                "directory."))


def cleanwork(ctx: typer.Context, dry_run: bool = typer.Option(False, "--dry-run", help="Only say what would be removed."),
              all_hosts: bool = typer.Option(False, "--all-hosts", help="Also judge other hosts' sessions by their "
                                             "locks (only on file systems whose locks work across hosts).")) -> None:
    """Remove WORK and UTIL directories of sessions that no longer exist (never a live one)."""
    from statgrid.host.scratch import clean_stale

    cfg = config(ctx)
    results = clean_stale([cfg.libraries.work, cfg.libraries.util], dry_run=dry_run, all_hosts=all_hosts)
    verb = "would remove" if dry_run else "removed"
    for r in results:
        action = verb if r.action == "removed" else ("kept (live)" if r.action == "live" else "skipped")
        typer.echo(f"{action:<13} {r.path}  ({r.reason})")
    n = sum(r.action == "removed" for r in results)
    typer.echo(f"{n} director{'y' if n == 1 else 'ies'} {verb}; {sum(r.action == 'live' for r in results)} live "
               "session(s) left alone.")

def show_config(ctx: typer.Context) -> None:
    """Print the resolved configuration (grid.toml merged with the defaults) as JSON."""
    import dataclasses

    cfg = config(ctx)
    typer.echo(json.dumps(dataclasses.asdict(cfg), indent=2, default=str))


def import_(ctx: typer.Context, path: Path = typer.Argument(..., metavar="FILE", help=".sas7bdat or .xpt file."),
            out: str = typer.Argument(..., metavar="LIB.MEMBER", help="Data set to write, e.g. data.sales."),
            catalog: Optional[Path] = typer.Option(None, "--catalog", help=".sas7bcat with the value labels."),
            encoding: Optional[str] = typer.Option(None, "--encoding", help="Text encoding if not UTF-8 "
                                                   "(e.g. latin1).")) -> None:
    """Import a SAS data set (.sas7bdat, .xpt) into a library, with its labels and formats."""
    from statgrid.session import Session, SessionLog

    cfg = config(ctx)
    if not path.is_file():
        fail(ctx, UsageError(f"FILE {str(path)!r} does not exist; give a .sas7bdat or .xpt file."))
    if "." not in out:
        fail(ctx, UsageError(f"LIB.MEMBER {out!r} names no library; e.g. data.{out} (WORK would vanish with "
                             "the import's session)."))
    try:
        with Session(cfg, {}, log=SessionLog(text=sys.stderr)) as s:
            s.import_sas(str(path), out, catalog=str(catalog) if catalog else None, encoding=encoding)
    except StatgridError as exc:
        fail(ctx, exc)

