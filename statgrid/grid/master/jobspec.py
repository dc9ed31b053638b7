"""A submit request → a validated Job, and a Job → the command its node runs.

Validation happens before anything is written, so a bad submit leaves nothing in the store.
The CLI checks the same things locally first (for the message and exit code 2 without a round
trip); the master checks again, because the HTTP API can be called directly. Sizes and
characters are checked first (`check_bounds`), so no later message quotes a 10 MB value.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from statgrid.config import Config, ConfigError, format_size
from statgrid.errors import UsageError
from statgrid.job.record import Job
from statgrid.grid.scheduling.policy import host_weights
from statgrid.job.kinds import JOB_KINDS, KERNEL_LANGUAGES, KERNEL_QUEUE, check_job_file, declared_memsize


# Names (job, user, queue, host, session option) are shown in one-line table rows and messages:
# bounded and printable only (str.isprintable: no newline, tab, NUL, escape or other control or
# format character), so a name can neither forge a row of `statgrid jobs` nor pad every row.
NAME_MAX_CHARS = 128
# A command's argv and a job's environment reach execve(2) on the node. Linux caps each string at
# MAX_ARG_STRLEN (32 pages = 128 KiB) and all of argv + envp at a quarter of the stack rlimit
# (ARG_MAX: 2 MiB under the default 8 MiB stack); past either, execve fails with E2BIG — see
# execve(2), "Limits on size of arguments and environment". A 2.2 MB environment was accepted
# and then ended in exit 127. 64 KiB each (strings counted with their NUL) keeps both, with the
# few variables the master adds, under 128 KiB: the whole of ARG_MAX before Linux 2.6.23.
COMMAND_MAX_BYTES = 64 * 1024
ENV_MAX_BYTES = 64 * 1024
CWD_MAX_BYTES = 4096                  # PATH_MAX (linux/limits.h), with its NUL
HOSTS_MAX = 1024
OPTIONS_MAX = 64
DEPEND_MAX_CHARS = 4096
RUNLIMIT_MAX_S = 366 * 86400.0        # a year: anything longer is a typo
MEM_MAX_BYTES = 2**50                 # 1 PiB
PRIORITY_MAX = 1000                   # job priorities 0 … 1000 (LSF MAX_USER_PRIORITY is 100 by default)
ARRAY_MAX_JOBS = 10_000               # elements of one array (LSF's MAX_JOB_ARRAY_SIZE is 1000 by default)
# Each element of an array keeps its own copy of the submit's environment (in the store and in the
# master's memory while it waits): 10,000 elements × 64 KiB would be 650 MB. Capped for the array.
ARRAY_ENV_MAX_BYTES = 16 * 2**20
# A session holds this much before its engine holds any data, on top of memsize (its buffer
# pool) and the margin: Python, DuckDB and Arrow. Measured here (memlimit.py counts what a node
# enforces: resident anonymous memory): ~75 MiB at start; a memsize=256M session sorting past its
# memsize peaked at 330 MiB, over 256M + 10 % = 282 MiB, which a reservation without this kills
# (365 MiB with threads=8: DuckDB keeps ~6 MiB per thread outside memory_limit).
SESSION_ENGINE_BYTES = 128 * 2**20
_SHOWN_CHARS = 40


class NotBool:
    """Annotated metadata for pydantic (FastAPI reads JobRequest with it): a JSON true or false is
    no number. Pydantic's lax mode takes `"priority": true` for 1."""

    def __get_pydantic_core_schema__(self, source, handler):
        from pydantic_core import core_schema

        return core_schema.no_info_before_validator_function(_refuse_bool, handler(source))


def _refuse_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a number; give a number (e.g. 50)")
    return value


@dataclass
class JobRequest:
    """What `statgrid submit` sends. `argv[0]` is a .py/.sql/.sas job file (a session job; a .sas program may be
    followed by SAS invocation options) or a command."""

    argv: list[str]
    cwd: str
    user: str = ""                   # the master sets it to the caller's name (auth.py)
    queue: str = ""
    name: str = ""
    options: dict[str, str] = field(default_factory=dict)
    rerunnable: bool = False
    hosts: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    depend: str = ""                 # -w: a dependency expression (depend.py), e.g. "done(12) && ended(13)"
    runlimit_s: Annotated[float, NotBool()] = 0.0   # -W: wall-time limit; 0 = the queue's RUNLIMIT only
    mem_bytes: Annotated[int, NotBool()] = 0        # --mem: memory to reserve; 0 = the default (a session: memsize + margin)
    priority: Annotated[int, NotBool()] = 0         # --priority: order among the user's own jobs of the queue (higher first)
    parent_id: int | None = None     # a sub-task of this running session job (Session.parallel, MP CONNECT)
    # What its job file declares of memsize, read by the submitter as the user (the master may not
    # read the file; with_declared_memsize): the largest literal memsize in bytes (0: none), and
    # whether a session is also opened without one (it runs at the default memsize too). The master
    # turns them into the reservation with its own grid.toml's default and memory_margin.
    memsize_bytes: Annotated[int, NotBool()] = 0
    memsize_default_too: bool = False
    kernel: str = ""                 # an interactive session: a notebook kernel of this language (KERNEL_LANGUAGES)
                                     # instead of argv, which is then empty


def default_queue(cfg: Config) -> str:
    """LSF's DEFAULT_QUEUE: 'normal' if configured, else the first queue in grid.toml."""
    return "normal" if "normal" in cfg.queues else next(iter(cfg.queues))


def shown(value: Any, max_chars: int = _SHOWN_CHARS) -> str:
    """repr() of a value for a message, cut after `max_chars` characters (of the text, or of the
    repr of anything else) and marked with '…': a message never carries a 10 MB value."""
    if isinstance(value, str):
        return repr(value) if len(value) <= max_chars else repr(value[:max_chars]) + "…"
    text = repr(value)
    return text if len(text) <= max_chars else text[:max_chars] + "…"


def check_name(field_name: str, value: str, fix: str, allow_empty: bool = True) -> None:
    """A name is at most NAME_MAX_CHARS printable characters. Raises UsageError naming the field."""
    if not value and not allow_empty:
        raise UsageError(f"{field_name} is empty; {fix}.")
    if len(value) > NAME_MAX_CHARS:
        raise UsageError(f"{field_name} {shown(value)} is {len(value):,} characters long, over the limit of "
                         f"{NAME_MAX_CHARS}; {fix}.")
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        raise UsageError(f"{field_name} {shown(value)} contains the control character {bad!r} at position "
                         f"{value.index(bad)}; names take printable characters only (no newline, tab or escape); "
                         f"{fix}.")


def _c_bytes(strings) -> int:
    """Bytes the strings take in execve's argv/envp: UTF-8 with a NUL each."""
    return sum(len(s.encode("utf-8")) + 1 for s in strings)


def _check_utf8(field_name: str, value: str) -> None:
    """Every text of a job is stored (SQLite, JSON) and handed to execve as UTF-8. A lone surrogate
    — sent by a hostile client, or standing for a byte that is not UTF-8 in a path or variable
    (Python's surrogateescape) — has no UTF-8 form: refuse it here, naming the field, rather than
    fail later in the store (that was a 500 with a traceback)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"{field_name} {shown(value)} is not valid UTF-8 text (character {exc.object[exc.start]!r} "
                         f"at position {exc.start}: a byte that is not UTF-8, or a lone surrogate); statgrid takes "
                         "commands, paths and environment values in UTF-8: rename the file or directory, or leave "
                         "the variable out.") from None


def check_bounds(req: JobRequest) -> None:
    """Sizes and characters of every field, before any other check quotes one. Raises UsageError."""
    texts = [("user", req.user), ("job name", req.name), ("queue", req.queue), ("working directory", req.cwd),
             *(("host", h) for h in req.hosts), *(("session option", k) for k in req.options),
             *(("session option value", v) for v in req.options.values()),
             *(("command argument", a) for a in req.argv), *(("environment variable", k) for k in req.env),
             *((f"environment variable {shown(k)}'s value", v) for k, v in req.env.items())]
    for field_name, value in texts:
        _check_utf8(field_name, value)
    check_name("user", req.user, "submit as a user with a printable name")
    check_name("job name", req.name, "give a shorter name with printable characters (-J NAME)")
    check_name("queue", req.queue, "name a queue of grid.toml (-q QUEUE; see `statgrid queues`)")
    if len(req.hosts) > HOSTS_MAX:
        raise UsageError(f"{len(req.hosts):,} hosts requested, over the limit of {HOSTS_MAX}; name fewer hosts (-m).")
    for host in req.hosts:
        check_name("host", host, "name a host of grid.toml (-m HOST; see `statgrid hosts`)")
    if len(req.options) > OPTIONS_MAX:
        raise UsageError(f"{len(req.options):,} session options, over the limit of {OPTIONS_MAX}; "
                         "give fewer -o KEY=VALUE.")
    for key, value in req.options.items():
        check_name("session option", key, "give -o KEY=VALUE with a known key (see `statgrid config`)")
        check_name(f"session option {key}", value, "give a shorter value (-o KEY=VALUE)")
    for arg in req.argv:
        if "\0" in arg:
            raise UsageError(f"command argument {shown(arg)} contains a NUL byte, which no command can receive; "
                             "remove it.")
    size = _c_bytes(req.argv)
    if size > COMMAND_MAX_BYTES:
        raise UsageError(f"the command is {size:,} bytes long (its {len(req.argv):,} arguments, each with a NUL), over "
                         f"the limit of {COMMAND_MAX_BYTES:,} bytes; put long inputs in a file and pass its path.")
    for key, value in req.env.items():
        if not key or "=" in key or "\0" in key or "\0" in value:
            raise UsageError(f"environment variable {shown(key)} cannot be passed to a process (an empty name, or "
                             "'=' or NUL in its name, or NUL in its value); remove it from the environment you "
                             "submit from.")
    size = _c_bytes(f"{k}={v}" for k, v in req.env.items())
    if size > ENV_MAX_BYTES:
        biggest = max(req.env, key=lambda k: _c_bytes([k, req.env[k]]))
        raise UsageError(f"the environment is {size:,} bytes ({len(req.env):,} variables as NAME=value with a NUL "
                         f"each; the largest, {shown(biggest)}, takes {_c_bytes([biggest, req.env[biggest]]):,}), "
                         f"over the limit of {ENV_MAX_BYTES:,} bytes; put large settings in a file and pass its "
                         "path, or submit from a smaller environment (`env -u NAME statgrid submit ...`).")
    if len(req.depend) > DEPEND_MAX_CHARS or not req.depend.isprintable():
        raise UsageError(f"dependency {shown(req.depend)} is over {DEPEND_MAX_CHARS} characters or holds a control "
                         "character; write e.g. -w \"done(12) && ended(13)\".")
    if not (isinstance(req.runlimit_s, (int, float)) and 0 <= req.runlimit_s <= RUNLIMIT_MAX_S):
        raise UsageError(f"run limit {shown(req.runlimit_s)} s is not between 0 and {RUNLIMIT_MAX_S:.0f} s (a year); "
                         "give e.g. -W 30m or -W 2h.")
    if not (isinstance(req.mem_bytes, int) and 0 <= req.mem_bytes <= MEM_MAX_BYTES):
        raise UsageError(f"memory {shown(req.mem_bytes)} bytes is not between 0 and 1 PiB; give e.g. --mem 4G.")
    if not (isinstance(req.memsize_bytes, int) and not isinstance(req.memsize_bytes, bool)
            and 0 <= req.memsize_bytes <= MEM_MAX_BYTES):
        raise UsageError(f"declared memsize {shown(req.memsize_bytes)} bytes is not between 0 and 1 PiB; send the "
                         "largest memsize the job file sets, in bytes (0 for none).")
    if not isinstance(req.memsize_default_too, bool):
        raise UsageError(f"memsize_default_too {shown(req.memsize_default_too)} is not true or false; send true "
                         "when the job file also opens a session without a memsize.")
    if req.parent_id is not None and not (isinstance(req.parent_id, int) and 0 < req.parent_id <= 2**63 - 1):
        raise UsageError(f"parent job {shown(req.parent_id)} is not a job id (1 … 2**63 − 1).")
    if not (isinstance(req.priority, int) and 0 <= req.priority <= PRIORITY_MAX):
        raise UsageError(f"job priority {shown(req.priority)} is not a whole number from 0 to {PRIORITY_MAX}; "
                         "give e.g. --priority 50.")
    if "\0" in req.cwd or len(req.cwd.encode("utf-8")) >= CWD_MAX_BYTES:
        raise UsageError(f"working directory {shown(req.cwd)} is longer than PATH_MAX ({CWD_MAX_BYTES} bytes) or "
                         "holds a NUL byte; submit from a shorter path.")


def validate(req: JobRequest, cfg: Config, submit_ts: float, check_files: bool = True) -> Job:
    """Check every field; returns the Job to store (id 0, state PEND). Raises UsageError.

    check_files: also check, as this process, that the job file, the command and the working
    directory exist. The CLI does (it runs as the user); a master that runs as root does not for
    another user's request — it would answer, as root, whether a path that user may not read
    exists, and a path on a hung file system would stall its loop. The node then finds them as
    the user (the launcher enters cwd and execs as them), and a missing one ends the job EXIT with
    the reason."""
    check_bounds(req)
    if req.kernel:
        return _kernel_job(req, cfg, submit_ts)
    if not req.argv or not str(req.argv[0]).strip():
        raise UsageError("nothing to run: give a job file (.py, .sql or .sas) or a command, e.g. "
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
                             "or set open = true in grid.toml and run `statgrid reconfig` (no restart).")
        if host not in usable:
            raise UsageError(f"host {host!r} is not used by queue {queue!r} (its hosts: {', '.join(usable)}); "
                             "choose one of those, or another queue with -q.")
    first = Path(req.cwd, req.argv[0]) if not os.path.isabs(req.argv[0]) else Path(req.argv[0])
    if first.suffix.lower() in JOB_KINDS:
        kind = "session"
        job_file = check_job_file(first) if check_files else Path(os.path.normpath(first))
        sas_options = (_sas_invocation(req.argv, req.cwd, job_file, cfg, req.options, check_files)
                       if first.suffix.lower() == ".sas" else {})
        if len(req.argv) > 1 and first.suffix.lower() != ".sas":
            raise UsageError(f"job file {req.argv[0]!r} takes no arguments (got {' '.join(req.argv[1:])!r}); pass "
                             "values through environment variables or a dataset.")
        argv = [str(job_file.resolve() if check_files else job_file), *req.argv[1:]]
        try:
            cfg.session.with_overrides({**sas_options, **req.options}, source="-o")
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    else:
        kind = "command"
        if req.options:
            raise UsageError(f"-o {', '.join(f'{k}={v}' for k, v in req.options.items())}: session options apply to "
                             "job files (.py/.sql/.sas), not to the command "
                             f"{req.argv[0]!r}.")
        path_env = req.env.get("PATH", os.environ.get("PATH", ""))
        if check_files and shutil.which(req.argv[0], path=path_env) is None and not (
                os.sep in req.argv[0] and first.exists()):
            raise UsageError(f"{req.argv[0]!r} is neither a job file (.py, .sql or .sas) nor a command on PATH; "
                             "check the name, or give the path.")
        argv = list(req.argv)
    if not os.path.isabs(req.cwd):
        raise UsageError(f"working directory {req.cwd!r} is not an absolute path; give one starting with '/'.")
    if check_files and not os.path.isdir(req.cwd):
        raise UsageError(f"working directory {req.cwd!r} does not exist.")
    qcfg = cfg.queues[queue]
    if qcfg.runlimit_s and req.runlimit_s > qcfg.runlimit_s:
        raise UsageError(f"-W {_seconds(req.runlimit_s)} is over queue {queue}'s RUNLIMIT of {_seconds(qcfg.runlimit_s)}; "
                         f"ask for at most {_seconds(qcfg.runlimit_s)}, or use another queue (-q).")
    mem_bytes = req.mem_bytes
    if not mem_bytes and kind == "session":
        if check_files:
            req = with_declared_memsize(req, cfg)
        # -o, else a .sas program's -memsize, else grid.toml's
        memsize = cfg.session.with_overrides({**sas_options, **req.options}, source="-o").memsize_bytes
        if req.memsize_bytes and "memsize" not in {k.lower() for k in req.options}:
            memsize = max(memsize, req.memsize_bytes) if req.memsize_default_too else req.memsize_bytes
        mem_bytes = int(memsize * (1 + cfg.scheduling.memory_margin)) + SESSION_ENGINE_BYTES
    tracked = {h: cfg.hosts[h].memory_bytes for h in (req.hosts or usable) if cfg.hosts[h].memory_bytes}
    if mem_bytes and tracked and len(tracked) == len(req.hosts or usable) and mem_bytes > max(tracked.values()):
        biggest = max(tracked, key=tracked.get)
        raise UsageError(f"the job reserves {format_size(mem_bytes)} of memory"
                         + (" (its memsize plus the margin of [scheduling] memory_margin plus "
                            f"{format_size(SESSION_ENGINE_BYTES)} for the engine)" if not req.mem_bytes else "")
                         + f", more than any host of queue {queue} has (the most: {biggest} with "
                         f"{format_size(tracked[biggest])}); ask for less (--mem, -o memsize) or use another queue.")
    from statgrid.grid.scheduling.fairshare import entity_of

    if entity_of(qcfg, req.user, cfg.groups) is None and req.user:
        raise UsageError(f"user {req.user!r} has no share in queue {queue}'s fairshare "
                         f"({', '.join(f'{n} = {v}' for n, v in qcfg.fairshare)}): jobs there could never start; "
                         "use another queue, or ask a grid administrator for a share.")
    # The default name comes from the command, which may hold any character: keep it a name.
    name = req.name or "".join(c if c.isprintable() else "?" for c in Path(req.argv[0]).name)[:NAME_MAX_CHARS]
    return Job(id=0, user=req.user, queue=queue, name=name, kind=kind, argv=argv, cwd=req.cwd,
               options=dict(req.options), rerunnable=req.rerunnable, requested_hosts=list(req.hosts),
               submit_ts=submit_ts, env=dict(req.env), runlimit_s=req.runlimit_s or None, mem_bytes=mem_bytes,
               priority=req.priority, position=submit_ts, parent_id=req.parent_id)


def kernel_queue(cfg: Config) -> str:
    """Where a kernel goes by default: the queue `interactive` when grid.toml has it, else the default queue."""
    return KERNEL_QUEUE if KERNEL_QUEUE in cfg.queues else default_queue(cfg)


def _kernel_job(req: JobRequest, cfg: Config, submit_ts: float) -> Job:
    """An interactive session: a notebook kernel the grid places (kind "kernel", argv [language]). It runs
    a session like a job file's, so it reserves memory as one (its memsize, -o or grid.toml's, plus margin)."""
    if req.kernel not in KERNEL_LANGUAGES:
        raise UsageError(f"kernel {req.kernel!r} is not one of {', '.join(KERNEL_LANGUAGES)}; e.g. "
                         "`jupyter console --kernel statgrid-sas`.")
    if req.argv:
        raise UsageError("a kernel takes no command (argv): its language says what runs.")
    if req.rerunnable or req.depend or req.parent_id is not None:
        raise UsageError("a kernel is an interactive session: it cannot be rerunnable (nobody would be attached to "
                         "a rerun), depend on other jobs or be a sub-task.")
    queue = req.queue or kernel_queue(cfg)
    probe = dataclasses.replace(req, argv=[f"kernel.{'sas' if req.kernel == 'sas' else 'py'}"], kernel="",
                                queue=queue)
    job = validate(probe, cfg, submit_ts, check_files=False)
    return dataclasses.replace(job, kind="kernel", argv=[req.kernel], name=req.name or f"{req.kernel} kernel")


def with_declared_memsize(req: JobRequest, cfg: Config) -> JobRequest:
    """`req` with memsize_bytes and memsize_default_too read from its job file by this process (the
    submitter, as the user: job.kinds.declared_memsize). The session runs with each memsize the
    file sets in turn, so the largest counts; and with the default too if the file opens a session
    without one. Unchanged for a command, a .sql script, a file that cannot be read (validate says
    why), or a request that already says (a sub-task's, a calendar's). Raises UsageError for a
    memsize the session would refuse, naming the file and line."""
    if req.memsize_bytes or req.memsize_default_too or not req.argv:
        return req
    path = Path(req.cwd, str(req.argv[0]))
    if path.suffix.lower() != ".py" or not os.access(path, os.R_OK) or not path.is_file():
        return req
    declared = declared_memsize(path)
    sizes = []
    for line, value in declared.sizes:
        try:
            sizes.append(cfg.session.with_overrides({"memsize": value}, source=f"{path}:{line}").memsize_bytes)
        except ConfigError as exc:
            raise UsageError(f"job file {str(path)!r} line {line}: {exc}") from None
    return dataclasses.replace(req, memsize_bytes=max(sizes, default=0),
                               memsize_default_too=bool(sizes and declared.unsized))


def _seconds(value: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if value >= size and value % size == 0:
            return f"{value / size:g}{unit}"
    return f"{value:g}s"


@dataclass(frozen=True)
class ArraySpec:
    """-J "name[1-100:2]%10": the elements' name, their indices (in order), at most `throttle` running (0: no cap)."""

    name: str
    indices: tuple[int, ...]
    throttle: int = 0


def parse_array(name: str) -> ArraySpec | None:
    """LSF's job array syntax in a job name: NAME[SPEC]%THROTTLE with SPEC a comma-separated list of
    INDEX, START-END or START-END:STEP (indices 1 … 1,000,000). None: `name` names no array."""
    import re

    # The characters first: an escape sequence's '[' ('\x1b[31m') is no array's.
    check_name("job name", name, "give a name of printable characters, at most 128 (-J NAME)")
    m = re.fullmatch(r"(.*)\[([^\[\]]*)\](?:%(\d+))?", name)
    if m is None:
        if "[" in name and "]" not in name[name.index("["):]:
            raise UsageError(f"job name {shown(name)} opens '[' without closing it; an array is -J \"name[1-100]\" "
                             "(with %N to run at most N at once).")
        return None
    base, spec, throttle = m.group(1), m.group(2), m.group(3)
    example = "e.g. -J \"sim[1-100]%10\" or -J \"part[1,3,5-9:2]\""
    indices: list[int] = []
    for part in spec.split(","):
        pm = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*(?::\s*(\d+)\s*)?)?", part)
        if pm is None:
            raise UsageError(f"array index {shown(part)} in {shown(name)} is not INDEX, START-END or START-END:STEP; "
                             f"{example}.")
        start = int(pm.group(1))
        end = int(pm.group(2)) if pm.group(2) else start
        step = int(pm.group(3)) if pm.group(3) else 1
        if not 1 <= start <= end <= 1_000_000 or step < 1:
            raise UsageError(f"array range {shown(part.strip())} in {shown(name)} must go up from 1 to at most "
                             f"1000000 with a step of 1 or more; {example}.")
        if (end - start) // step + 1 + len(indices) > ARRAY_MAX_JOBS:
            raise UsageError(f"array {shown(name)} has more than {ARRAY_MAX_JOBS:,} jobs; split it into several arrays.")
        indices.extend(range(start, end + 1, step))
    if len(set(indices)) != len(indices):
        raise UsageError(f"array {shown(name)} names an index twice; {example}.")
    cap = int(throttle) if throttle else 0
    if throttle is not None and cap < 1:
        raise UsageError(f"array throttle %{throttle} in {shown(name)} must be 1 or more; {example}.")
    return ArraySpec(base or "array", tuple(indices), cap)


def launch_argv(job: Job, cfg: Config, job_dir: Path) -> list[str]:
    """The command the node's launcher runs for this job."""
    if job.kind == "command":
        return list(job.argv)
    argv = [sys.executable, "-m", "statgrid"]
    if cfg.source is not None:
        argv += ["--config", str(cfg.source)]
    if job.kind == "kernel":
        argv += ["kernel-run", "--log-dir", str(job_dir)]
        for k, v in job.options.items():
            argv += ["-o", f"{k}={v}"]
        return argv + ["--", job.argv[0]]
    argv += ["run", "--log-dir", str(job_dir)]
    for k, v in job.options.items():
        argv += ["-o", f"{k}={v}"]
    if len(job.argv) > 1:
        # A .sas program's SAS invocation options (validate read them with parse_invocation): one opaque
        # word, which `statgrid run` hands to that same parser whole. Passed as words, click would read
        # them again its own way (-set NAME VALUE: a VALUE such as '--option=memsize=1T' became an option).
        argv += ["--sas-invocation", json.dumps(list(job.argv[1:]))]
    return argv + ["--", job.argv[0]]     # `--`: the job's path is never read as an option


def _sas_invocation(argv: list[str], cwd: str = "", program: Path | None = None, cfg: Config | None = None,
                    options: dict[str, str] | None = None, check_files: bool = False) -> dict[str, str]:
    """The session options (memsize) of a .sas program's SAS invocation options `prog.sas -sysparm 3 -memsize
    4G`, checked with the parser `statgrid run` uses; UsageError naming a bad one. check_files: also check,
    as this process (the submitting user), its files as `statgrid run` will on the node: -autoexec a regular
    file, -log/-print neither the program nor the autoexec nor each other, -work/-utilloc existing
    directories (paths taken from the job's working directory `cwd`)."""
    from statgrid.sas.errors import SasError
    from statgrid.sas.invocation import check_invocation_files, invocation_for_file, parse_invocation

    try:
        inv = parse_invocation(list(argv[1:]))
        if check_files and program is not None:
            auto = next((v for k, v in (options or {}).items() if k.lower() == "autoexec"),
                        cfg.session.autoexec if cfg is not None else "")
            check_invocation_files(invocation_for_file(inv, cwd), program,
                                   str(Path(cwd, auto)) if auto else "")
        return inv.session_options
    except SasError as exc:
        raise UsageError(f"SAS invocation option of {argv[0]!r}: {exc.describe()}.") from None
