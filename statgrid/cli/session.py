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
                                         "(memsize, threads, bufsize, sortsize, compress, utilsize, autoexec); repeatable."),
        as_json: bool = typer.Option(False, "--json", help="Print the STIMER records as JSON lines on stdout "
                                     "(log and listing go to stderr)."),
        log_dir: Optional[Path] = typer.Option(None, "--log-dir", help="Also write session.log, session.lst "
                                               "and session.stimer.jsonl here."),
        sysparm: Optional[str] = typer.Option(None, "-sysparm", metavar="VALUE", help=".sas: SYSPARM= (&SYSPARM)."),
        memsize: Optional[str] = typer.Option(None, "-memsize", metavar="SIZE", help=".sas: MEMSIZE (the session's "
                                              "memsize)."),
        bufsize: Optional[str] = typer.Option(None, "-bufsize", metavar="SIZE", help=".sas: BUFSIZE= in bytes: the size "
                                              "of data-set I/O requests (session option bufsize)."),
        sortsize: Optional[str] = typer.Option(None, "-sortsize", metavar="SIZE", help=".sas: SORTSIZE=."),
        dsengine: Optional[str] = typer.Option(None, "-dsengine", metavar="ENGINE", help=".sas: DSENGINE= (AUTO, "
                                               "PYTHON, SQL or NUMBA: the DATA step engine)."),
        fullstimer: bool = typer.Option(False, "-fullstimer", help=".sas: FULLSTIMER (every step's full record)."),
        autoexec: Optional[str] = typer.Option(None, "-autoexec", metavar="FILE", help=".sas: a program run first "
                                               "(instead of grid.toml's [session] autoexec)."),
        set_names: List[str] = typer.Option([], "-set", metavar="NAME VALUE", help=".sas: environment variable "
                                            "NAME=VALUE for the program (%SYSGET); repeatable. A VALUE that "
                                            "starts with '-': give the SAS options after `--` "
                                            "(statgrid run prog.sas -- -set NAME -1)."),
        sas_log: Optional[Path] = typer.Option(None, "-log", metavar="FILE", help=".sas: write the log to FILE "
                                               "instead of the terminal."),
        sas_print: Optional[Path] = typer.Option(None, "-print", metavar="FILE", help=".sas: write the listing "
                                                 "to FILE instead of the terminal."),
        work: Optional[str] = typer.Option(None, "-work", metavar="DIR", help=".sas: make WORK under DIR (an "
                                           "existing directory)."),
        utilloc: Optional[str] = typer.Option(None, "-utilloc", metavar="DIR", help=".sas: make UTIL under DIR."),
        sas_invocation: Optional[str] = typer.Option(None, "--sas-invocation", metavar="JSON", hidden=True,
                                                     help="A grid job's SAS invocation options: a JSON list of "
                                                     "the words after its program, read by the SAS parser only."),
        values: Optional[List[str]] = typer.Argument(None, metavar="[VALUE]...", hidden=True)) -> None:
    """Run one job locally as a session; exit non-zero if it failed. A .sas program's SAS invocation options
    may follow it (-sysparm V -set NAME VALUE …), or follow `--` to be read by the SAS parser alone."""
    from statgrid.session.jobs import run_job

    cfg = config(ctx)
    try:
        overrides = parse_option_pairs(option)
    except StatgridError as exc:
        fail(ctx, exc)
    # SAS's invocation options, in the words SAS takes them. Given as this command's own options, click has
    # read them (-set NAME: its VALUE arrives as the next trailing argument, in order); words after `--`
    # beyond those VALUEs go to the SAS parser as they are; a grid job's come whole as --sas-invocation
    # JSON (launch_argv), so no word of them is ever read as an option of this command.
    sas_args: list[str] = []
    for flag, value in (("-sysparm", sysparm), ("-memsize", memsize), ("-bufsize", bufsize),
                        ("-sortsize", sortsize), ("-dsengine", dsengine), ("-autoexec", autoexec), ("-log", sas_log),
                        ("-print", sas_print), ("-work", work), ("-utilloc", utilloc)):
        if value is not None:
            sas_args += [flag, str(value)]
    if fullstimer:
        sas_args.append("-fullstimer")
    values = list(values or [])
    if len(values) < len(set_names):
        fail(ctx, UsageError(f"-set takes a name and a value (-set NAME VALUE); got {len(set_names)} name(s) and "
                             f"the value(s) {values!r}."))
    for name, value in zip(set_names, values):
        sas_args += ["-set", name, value]
    sas_args += values[len(set_names):]        # after `--`: SAS words, read by parse_invocation only
    if sas_invocation is not None:
        if sas_args:
            fail(ctx, UsageError("--sas-invocation gives all of a program's SAS invocation options; give no other "
                                 f"SAS option with it (got {' '.join(sas_args)!r})."))
        sas_args = _invocation_words(ctx, sas_invocation)
    invocation = None
    text = None
    if job.suffix.lower() == ".sas":
        invocation = _invocation(ctx, sas_args)
        text = _read_program(ctx, job, invocation, cfg, overrides)
    elif sas_args:
        fail(ctx, UsageError(f"{' '.join(sas_args)}: SAS invocation options apply to .sas programs, not to "
                             f"{str(job)!r}; use -o KEY=VALUE for session options."))
    # With --json, stdout carries only the JSON records: listing, log and the job's own
    # print() output go to stderr. -log/-print are opened only now, after the program was read and
    # checked not to be either of them.
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
            outcome = run_job(job, cfg, overrides, log, invocation=invocation, sas_text=text)
    except StatgridError as exc:
        fail(ctx, exc)
    finally:
        log.close()
        for stream in (text_stream, listing_stream):
            if stream not in (None, sys.stderr, sys.stdout):
                stream.close()
    raise typer.Exit(outcome.exit_code)


def _invocation_words(ctx: typer.Context, text: str) -> list[str]:
    """--sas-invocation JSON → the words (a JSON list of strings)."""
    try:
        words = json.loads(text)
    except ValueError:
        words = None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        fail(ctx, UsageError(f"--sas-invocation {text[:80]!r} is not a JSON list of strings (the words after a "
                             "SAS program, e.g. [\"-sysparm\", \"3\"])."))
    return words


def _read_program(ctx: typer.Context, job: Path, invocation, cfg, overrides: dict) -> str:
    """A .sas program's text, read before its -log/-print are opened for writing; refuses a -log/-print
    that is the program, the autoexec or each other, a -work that does not exist (check_invocation_files)."""
    from statgrid.job.kinds import check_job_file
    from statgrid.sas.errors import SasError
    from statgrid.sas.invocation import check_invocation_files
    from statgrid.sas.program import read_sas_file

    try:
        check_job_file(job)
        default_auto = next((v for k, v in overrides.items() if k.lower() == "autoexec"), cfg.session.autoexec)
        check_invocation_files(invocation, job, default_auto)
    except SasError as exc:
        fail(ctx, UsageError(f"SAS invocation option: {exc.describe()}."))
    except StatgridError as exc:
        fail(ctx, exc)
    try:
        return read_sas_file(job)
    except SasError as exc:
        fail(ctx, UsageError(exc.describe() + "."))


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

