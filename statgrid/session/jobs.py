"""Run one job file as this process's session: `.py` (uses statgrid.session()) or `.sql`.

The runner owns the session: it opens it before the job, closes it after (writing the total
STIMER block, removing WORK and UTIL) whatever happened, and turns the outcome into an exit
code: 0 done, 1 a step or the job failed, 128+N killed by signal N.
"""
from __future__ import annotations

import ast
import os
import runpy
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from statgrid.config import Config
from statgrid.errors import SessionTerminated, StatgridError, StepError, UsageError
from statgrid.procs import sqlproc
from statgrid.session import set_runner_session
from statgrid.session.core import Session
from statgrid.session.log import SessionLog
from statgrid.session.stimer import StepRecord

JOB_KINDS = (".py", ".sql")


@dataclass(frozen=True)
class JobOutcome:
    exit_code: int
    total: StepRecord | None
    steps: list[StepRecord]
    error: str | None


def check_job_file(path: str | os.PathLike) -> Path:
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"job file {str(p)!r} is a directory; give the path of a .py or .sql job in it.")
    if not p.exists():
        raise UsageError(f"job file {str(p)!r} does not exist; give the path of a .py or .sql job.")
    if not p.is_file():
        raise UsageError(f"job file {str(p)!r} is not a regular file (a FIFO, a device or a socket); give the path "
                         "of a .py or .sql job.")
    if p.suffix.lower() not in JOB_KINDS:
        raise UsageError(f"job file {str(p)!r} is neither .py nor .sql; statgrid runs Python jobs that use "
                         "statgrid.session() and SQL scripts.")
    if not os.access(p, os.R_OK):
        raise UsageError(f"job file {str(p)!r} is not readable by this user; check its permissions.")
    return p


# Calls through which a Python job sets session options (statgrid.session(memsize=...),
# open_session(...), Session(options={...}), s.set_options({...})), by their last name; the first
# three open (or, under the runner, borrow) a session: one without a memsize runs at the default.
_OPTION_CALLS = frozenset({"session", "open_session", "Session", "set_options"})
_OPENING_CALLS = frozenset({"session", "open_session", "Session"})
# A job file larger than this is not parsed for memsize (the reservation is then the default's):
# parsing costs ~50 bytes of memory per byte of source, and a job is code, not data.
PARSE_MAX_BYTES = 4 * 2**20


@dataclass(frozen=True)
class DeclaredMemsize:
    """What a job file says of its session's memsize, read without running it. sizes: (line, value
    as written) of each literal memsize; unsized: lines of session-opening calls without a literal
    memsize (they run at the default memsize, or at one computed at run time); skipped: why the
    file was not read ('' if it was)."""
    sizes: list[tuple[int, str]]
    unsized: list[int]
    skipped: str = ""


def declared_memsize(path: str | os.PathLike) -> DeclaredMemsize:
    """The memsize values a job file sets for its session: each literal `memsize=` keyword, or
    "memsize" key of a literal dict, in a call of statgrid.session / open_session / Session /
    set_options; and the session-opening calls that set none. A value computed at run time is not
    seen (its call counts as unsized); nor are .sql scripts' (SQL cannot set memsize: sqlproc
    refuses SET memory_limit), nor a file Python cannot parse (it fails when it runs), nor one over
    PARSE_MAX_BYTES or nested too deep for the parser (skipped says so). Reads the file as the
    calling process."""
    p = Path(path)
    if p.suffix.lower() != ".py":
        return DeclaredMemsize([], [])
    try:
        size = p.stat().st_size
        if size > PARSE_MAX_BYTES:
            return DeclaredMemsize([], [], f"{size:,} bytes, over the {PARSE_MAX_BYTES // 2**20} MiB statgrid reads "
                                           "for memsize")
        tree = ast.parse(p.read_bytes(), filename=str(p))
    except (SyntaxError, ValueError, OSError):
        return DeclaredMemsize([], [])
    except (RecursionError, MemoryError) as exc:      # e.g. a 200,000-term expression
        return DeclaredMemsize([], [], f"too deeply nested for Python's parser ({type(exc).__name__})")
    found: list[tuple[int, str]] = []
    unsized: list[int] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in _OPTION_CALLS:
            continue
        pairs = [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None]
        for value in [*node.args[:1], *(v for k, v in pairs if k == "options")]:
            if isinstance(value, ast.Dict):
                pairs += [(k.value, v) for k, v in zip(value.keys, value.values)
                          if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        sized = False
        for key, value in pairs:
            if key.lower() == "memsize" and isinstance(value, ast.Constant) and \
                    isinstance(value.value, (str, int)) and not isinstance(value.value, bool):
                found.append((value.lineno, str(value.value)))
                sized = True
        if name in _OPENING_CALLS and not sized:
            unsized.append(node.lineno)
    return DeclaredMemsize(sorted(found), sorted(unsized))


def declared_memsizes(path: str | os.PathLike) -> list[tuple[int, str]]:
    """(line, value as written) of each literal memsize the job file sets (declared_memsize)."""
    return declared_memsize(path).sizes


def run_job(path: str | os.PathLike, config: Config, overrides: Mapping[str, str] | None = None,
            log: SessionLog | None = None) -> JobOutcome:
    """Run a job file in this process as one session; returns its outcome (never raises for job errors)."""
    job = check_job_file(path)
    overrides = dict(overrides or {})
    options = config.session.with_overrides(overrides, source="--option")
    log = log or SessionLog()
    try:
        session = Session(config, options, log, pinned_options=frozenset(overrides))
    except StatgridError as exc:
        log.error(f"the session could not start: {exc}")
        raise
    error: str | None = None
    exit_code = 0
    try:
        set_runner_session(session)
        log.note(f"job {str(job)!r} starting in session {session.id}.")
        if job.suffix.lower() == ".sql":
            sqlproc.sql(session, job.read_text(), keep_result=False)
        else:
            _run_python(job)
    except SessionTerminated as exc:
        exit_code, error = exc.code, f"terminated by signal {exc.signum}"
    except StepError as exc:
        exit_code, error = 1, str(exc)             # already logged by the step
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        exit_code, error = code, (f"job called sys.exit({exc.code!r})" if code else None)
        if code:
            log.error(error)
    except BaseException as exc:  # the job's own bug: log it with the job's traceback lines
        exit_code, error = 1, f"{type(exc).__name__}: {exc}"
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(job.absolute())]
        where = f" (line {frames[-1].lineno} of {job.name})" if frames else ""
        log.error(f"the job failed{where}: {error}")
    finally:
        # A signal arriving here is only flagged by the handler once close() has begun; the
        # inner finally makes sure close() runs even if one raises before that.
        try:
            set_runner_session(None)
        finally:
            total = session.close(failed=exit_code != 0)   # close() adds the steps' own failures
    if session.terminating and exit_code != 128 + session.terminating:
        exit_code, error = 128 + session.terminating, f"terminated by signal {session.terminating}"
    elif session.failed and exit_code == 0:
        exit_code = 1
    return JobOutcome(exit_code, total, list(session.steps), error)


def _run_python(job: Path) -> None:
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(job)]
    sys.path.insert(0, str(job.absolute().parent))
    try:
        runpy.run_path(str(job.absolute()), run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
