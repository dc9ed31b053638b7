"""Run one job file as this process's session: `.py` (uses statgrid.session()), `.sql`, or `.sas` (a
SAS program, through statgrid.sas.program.run_program, with its SAS invocation options).

The runner owns the session: it opens it before the job, closes it after (writing the total
STIMER block, removing WORK and UTIL) whatever happened, and turns the outcome into an exit
code: 0 done, 1 a step or the job failed, 128+N killed by signal N.
"""
from __future__ import annotations

import dataclasses
import os
import runpy
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from statgrid.config import Config
from statgrid.errors import SessionTerminated, StatgridError, StepError
from statgrid.job.kinds import check_job_file
from statgrid.procs import sqlproc
from statgrid.session import set_runner_session
from statgrid.session.core import Session
from statgrid.session.log import SessionLog
from statgrid.session.stimer import StepRecord


@dataclass(frozen=True)
class JobOutcome:
    exit_code: int
    total: StepRecord | None
    steps: list[StepRecord]
    error: str | None


def run_job(path: str | os.PathLike, config: Config, overrides: Mapping[str, str] | None = None,
            log: SessionLog | None = None, invocation=None, sas_text: str | None = None) -> JobOutcome:
    """Run a job file in this process as one session; returns its outcome (never raises for job errors).
    `invocation`: a .sas program's SAS invocation options (statgrid.sas.invocation.Invocation); `sas_text`:
    the program's text when the caller read it already (before opening a -log or -print file)."""
    job = check_job_file(path)
    overrides = dict(overrides or {})
    log = log or SessionLog()
    sas = job.suffix.lower() == ".sas"
    if sas:
        from statgrid.sas.invocation import Invocation
        from statgrid.sas.saslog import SasLog

        invocation = invocation or Invocation()
        # -memsize, -cpucount: session options; statgrid's own -o wins where both are given
        overrides = {**invocation.session_options, **overrides}
        config = _with_scratch_roots(config, invocation.work_root, invocation.util_root)
        log = SasLog(log)                   # the session's own NOTEs and step records in SAS's shape
        log.header()
    options = config.session.with_overrides(overrides, source="--option")
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
        if sas:
            from statgrid.sas.program import run_program

            from statgrid.sas.program import read_sas_file

            text = sas_text if sas_text is not None else read_sas_file(job)
            exit_code = run_program(text, session, log, invocation, header=False)
            error = None if exit_code == 0 else f"the SAS program ended with exit code {exit_code} (see its log)"
        elif job.suffix.lower() == ".sql":
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


def _with_scratch_roots(config: Config, work_root: str, util_root: str) -> Config:
    """SAS's -work DIR / -utilloc DIR: the directories under which this session makes its WORK and UTIL
    (as SAS makes its SAS_work directory under -WORK)."""
    if not work_root and not util_root:
        return config
    roots = config.libraries
    roots = dataclasses.replace(roots, work=Path(work_root) if work_root else roots.work,
                                util=Path(util_root) if util_root else roots.util)
    return dataclasses.replace(config, libraries=roots)


def _run_python(job: Path) -> None:
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(job)]
    sys.path.insert(0, str(job.absolute().parent))
    try:
        runpy.run_path(str(job.absolute()), run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
