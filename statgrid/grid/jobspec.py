"""A submit request → a validated Job, and a Job → the command its node runs.

Validation happens before anything is written, so a bad submit leaves nothing in the store.
The CLI checks the same things locally first (for the message and exit code 2 without a round
trip); the master checks again, because the HTTP API can be called directly.
"""
from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from statgrid.config import Config, ConfigError
from statgrid.errors import UsageError
from statgrid.grid.model import Job
from statgrid.grid.policy import host_weights
from statgrid.session.jobs import JOB_KINDS, check_job_file


@dataclass
class JobRequest:
    """What `statgrid submit` sends. `argv[0]` is a .py/.sql job file (a session job) or a command."""

    argv: list[str]
    cwd: str
    user: str
    queue: str = ""
    name: str = ""
    options: dict[str, str] = field(default_factory=dict)
    rerunnable: bool = False
    hosts: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def default_queue(cfg: Config) -> str:
    """LSF's DEFAULT_QUEUE: 'normal' if configured, else the first queue in grid.toml."""
    return "normal" if "normal" in cfg.queues else next(iter(cfg.queues))


def validate(req: JobRequest, cfg: Config, submit_ts: float) -> Job:
    """Check every field; returns the Job to store (id 0, state PEND). Raises UsageError."""
    if not req.argv or not str(req.argv[0]).strip():
        raise UsageError("nothing to run: give a job file (.py or .sql) or a command, e.g. "
                         "`statgrid submit job.py` or `statgrid submit sleep 10`.")
    queue = req.queue or default_queue(cfg)
    if queue not in cfg.queues:
        raise UsageError(f"queue {queue!r} does not exist; queues: {', '.join(cfg.queues)} "
                         "(see `statgrid queues`).")
    usable = host_weights(cfg.queues[queue], cfg.hosts)
    for host in req.hosts:
        if host not in cfg.hosts:
            raise UsageError(f"host {host!r} does not exist; hosts: {', '.join(cfg.hosts)} (see `statgrid hosts`).")
        if not cfg.hosts[host].open:
            raise UsageError(f"host {host!r} is closed (open = false in grid.toml); choose another host with -m, "
                             "or open it in grid.toml and restart the master.")
        if host not in usable:
            raise UsageError(f"host {host!r} is not used by queue {queue!r} (its hosts: {', '.join(usable)}); "
                             "choose one of those, or another queue with -q.")
    first = Path(req.cwd, req.argv[0]) if not os.path.isabs(req.argv[0]) else Path(req.argv[0])
    if first.suffix.lower() in JOB_KINDS:
        kind = "session"
        job_file = check_job_file(first)
        if len(req.argv) > 1:
            raise UsageError(f"job file {req.argv[0]!r} takes no arguments (got {' '.join(req.argv[1:])!r}); pass "
                             "values through environment variables or a dataset.")
        argv = [str(job_file.resolve())]
        try:
            cfg.session.with_overrides(req.options, source="-o")
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    else:
        kind = "command"
        if req.options:
            raise UsageError(f"-o {', '.join(f'{k}={v}' for k, v in req.options.items())}: session options apply to "
                             "job files (.py/.sql), not to the command "
                             f"{req.argv[0]!r}.")
        path_env = req.env.get("PATH", os.environ.get("PATH", ""))
        if shutil.which(req.argv[0], path=path_env) is None and not (os.sep in req.argv[0] and first.exists()):
            raise UsageError(f"{req.argv[0]!r} is neither a job file (.py or .sql) nor a command on PATH; "
                             "check the name, or give the path.")
        argv = list(req.argv)
    if not os.path.isdir(req.cwd):
        raise UsageError(f"working directory {req.cwd!r} does not exist.")
    name = req.name or Path(req.argv[0]).name
    return Job(id=0, user=req.user, queue=queue, name=name, kind=kind, argv=argv, cwd=req.cwd,
               options=dict(req.options), rerunnable=req.rerunnable, requested_hosts=list(req.hosts),
               submit_ts=submit_ts, env=dict(req.env))


def launch_argv(job: Job, cfg: Config, job_dir: Path) -> list[str]:
    """The command the node's launcher runs for this job."""
    if job.kind == "command":
        return list(job.argv)
    argv = [sys.executable, "-m", "statgrid"]
    if cfg.source is not None:
        argv += ["--config", str(cfg.source)]
    argv += ["run", job.argv[0], "--log-dir", str(job_dir)]
    for k, v in job.options.items():
        argv += ["-o", f"{k}={v}"]
    return argv
