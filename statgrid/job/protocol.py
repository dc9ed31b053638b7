"""The typed contract of a job's path through the grid: every message and saved record, one module.

    master ──LaunchRequest (argument of the Dask task node.run_job)──▶ node
    node ──LaunchRequest (one JSON line on the launcher's socket)──▶ launcher
    launcher ──LaunchStarted, then LaunchExited; or LaunchFailed (JSON lines)──▶ node
    node ──AttemptStarted, then AttemptFinished or AttemptLost──▶ the attempt file (durable, read
           by a restarted master: LaunchRequest.attempt_file) and the Dask event log (JOB_TOPIC,
           the fast path)
    scheduler plugin (engine.GridEvents) ──TaskErred (JOB_TOPIC), HostEvent (HOST_TOPIC)──▶ master

Every top-level record goes out as `to_dict()`: its fields plus "type" (which record) and
"version"; `from_dict()` checks both and rejects an unknown or missing field and a value of the
wrong type with a ProtocolError that names the record and the field. Rusage, IoCounters and
Identity travel only inside such a record, whose version covers them.

Version 1 is the untyped dicts of statgrid before this module. Version 3 added
LaunchRequest.attempt_file (attempt files left the job's directory, which now belongs to the job's
user); the attempt records themselves are the same as in version 2. Version 4 added the memory
limit: LaunchRequest.mem_limit_bytes, and LaunchExited/AttemptFinished.limit_reason. Attempt files
of versions 1 to 3 are still read (`attempt_from_dict`): a grid upgraded while jobs ran has them.

The node launcher runs as `python -I -S launcher.py` with the standard library alone and loads
this file by its path, so this module imports nothing but the standard library.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from dataclasses import dataclass
from typing import Any, ClassVar

VERSION = 4
LEGACY_ATTEMPT_VERSION = 1              # attempt files without a "version" key
# Attempt records of these versions have today's fields but AttemptFinished.limit_reason (version 3
# changed LaunchRequest alone; version 4 added limit_reason, None in theirs).
SAME_ATTEMPT_VERSIONS = (2, 3)
TASK_KEY_PREFIX = "statgrid-job-"


class ProtocolError(ValueError):
    """A message or record this statgrid cannot read: wrong version, unknown or missing field, bad type."""


def task_key(job_id: int, attempt: int) -> str:
    """The Dask task key of one attempt of a job."""
    return f"{TASK_KEY_PREFIX}{job_id}-{attempt}"


def parse_task_key(key: str) -> tuple[int, int]:
    """task_key's inverse: (job id, attempt). ValueError if `key` is not a job task's key."""
    if not key.startswith(TASK_KEY_PREFIX):
        raise ValueError(f"{key!r} is not a statgrid job task key")
    job_id, _, attempt = key[len(TASK_KEY_PREFIX):].partition("-")
    return int(job_id), int(attempt)


# -- states -----------------------------------------------------------------------------------------

# A job's own states (PEND, RUN, ...) are the master's: statgrid.job.lifecycle.


class AttemptState(str, enum.Enum):
    """What an attempt file says of its attempt."""
    STARTED = "started"                 # the launcher started it; no end known yet
    FINISHED = "finished"               # it ended (exit code or signal), or could not be launched
    LOST = "lost"                       # the node's launcher died under it: a fault of the node


class HostAction(str, enum.Enum):
    ADD = "add"                         # a worker joined (its host may take jobs once prepared)
    REMOVE = "remove"                   # a worker left
    STALE = "stale"                     # a worker's node stopped asking (unavail; its jobs are left alone)
    FRESH = "fresh"                     # ... and came back before it was removed


# -- encoding and checking ----------------------------------------------------------------------------

_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = {f.name: typing.get_type_hints(cls)[f.name] for f in dataclasses.fields(cls)}
    return hints


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _decode(tp: Any, value: Any, where: str) -> Any:
    """`value` (as json.loads gives it) checked against the annotation `tp`, converted to it."""
    if tp is Any:
        return value
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (types.UnionType, typing.Union):              # only `X | None` is used
        if value is None:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _decode(inner, value, where)
    if origin is list or origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ProtocolError(f"{where} must be a list, got {type(value).__name__} {value!r}")
        items = [_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise ProtocolError(f"{where} must be an object, got {type(value).__name__} {value!r}")
        return {_decode(args[0], k, f"{where} key"): _decode(args[1], v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            raise ProtocolError(f"{where} must be one of {[m.value for m in tp]}, got {value!r}") from None
    if isinstance(tp, type) and issubclass(tp, _Part):
        if not isinstance(value, dict):
            raise ProtocolError(f"{where} must be an object ({tp.__name__}), got {type(value).__name__} {value!r}")
        return tp._from_fields(value, where)
    # bool is an int to Python, not to this contract; an int is a valid float (JSON writes 2.0 as 2.0,
    # but a hand-written file may say 2).
    ok = (isinstance(value, tp) and not (tp is int and isinstance(value, bool))) or \
         (tp is float and isinstance(value, int) and not isinstance(value, bool))
    if not ok:
        raise ProtocolError(f"{where} must be {_type_name(tp)}, got {type(value).__name__} {value!r}")
    return float(value) if tp is float else value


def _encode(value: Any) -> Any:
    if isinstance(value, _Part):
        return value.to_dict()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


class _Part:
    """A record with no version of its own: it travels inside a versioned _Record."""
    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _encode(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        return cls._from_fields(data, cls.__name__)

    @classmethod
    def _from_fields(cls, data: dict[str, Any], where: str):
        hints = _hints(cls)
        unknown = [k for k in data if k not in hints]
        if unknown:
            raise ProtocolError(f"{where}: unknown field {unknown[0]!r} ({cls.__name__} fields: {', '.join(hints)})")
        missing = [k for k in hints if k not in data]
        if missing:
            raise ProtocolError(f"{where}: missing field {missing[0]!r}")
        return cls(**{k: _decode(tp, data[k], f"{where}.{k}") for k, tp in hints.items()})


class _Record(_Part):
    """A message or saved record: to_dict() adds "type" and "version", from_dict() checks them."""
    __slots__ = ()
    TYPE: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.TYPE, "version": VERSION, **super().to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        if not isinstance(data, dict):
            raise ProtocolError(f"{cls.__name__}: expected an object, got {type(data).__name__} {data!r}")
        if "version" not in data:
            raise ProtocolError(f"{cls.__name__}: missing field 'version'")
        if data["version"] != VERSION:
            raise ProtocolError(f"{cls.__name__}: version {data['version']!r} is not supported (this statgrid reads "
                                f"version {VERSION}); run the same statgrid release on the master and every node")
        if data.get("type") != cls.TYPE:
            raise ProtocolError(f"{cls.__name__}: type {data.get('type')!r} is not {cls.TYPE!r}")
        return cls._from_fields({k: v for k, v in data.items() if k not in ("type", "version")}, cls.__name__)


def decode(data: Any, allowed: tuple[type[_Record], ...]) -> _Record:
    """The record among `allowed` that data's "type" names, checked (from_dict)."""
    kind = data.get("type") if isinstance(data, dict) else None
    for cls in allowed:
        if cls.TYPE == kind:
            return cls.from_dict(data)
    raise ProtocolError(f"message type {kind!r} is not one of {[c.TYPE for c in allowed]}: {data!r}"[:500])


# -- parts --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Identity(_Part):
    """Who a job runs for. Set by the master from the job's user; carried to the launcher, which
    runs the job as that account and echoes the identity in LaunchStarted and into the attempt file.
    A launcher running as root looks the user up BY NAME on its own machine and refuses the job if
    the account is unknown there or its uid/gid differ from these (the user databases disagree); a
    launcher running as an ordinary user runs only jobs whose uid is its own (launcher.py)."""
    user: str                           # the job's user name, as submitted
    uid: int | None                     # that user's numeric id on the master (pwd), None if it has none
    gid: int | None                     # that user's primary group id, None if unknown
    groups: tuple[int, ...]             # every group id of the user (os.getgrouplist), primary first


# wait4's struct rusage fields worth keeping → the names they go by here (units in the names).
RUSAGE_FIELDS = {
    "user_cpu_s": "ru_utime", "sys_cpu_s": "ru_stime", "max_rss_bytes": "ru_maxrss",
    "page_faults": "ru_majflt", "page_reclaims": "ru_minflt",
    "voluntary_ctx_switches": "ru_nvcsw", "involuntary_ctx_switches": "ru_nivcsw",
    "block_input_ops": "ru_inblock", "block_output_ops": "ru_oublock",
}


@dataclass(frozen=True, slots=True)
class Rusage(_Part):
    """wait4(2) accounting of a job's first process and its reaped descendants (getrusage(2))."""
    user_cpu_s: float                   # ru_utime, CPU seconds in user mode
    sys_cpu_s: float                    # ru_stime, CPU seconds in the kernel
    max_rss_bytes: int                  # ru_maxrss, peak resident set, bytes (Linux reports KiB)
    page_faults: int                    # ru_majflt, faults that needed I/O, count
    page_reclaims: int                  # ru_minflt, faults served without I/O, count
    voluntary_ctx_switches: int         # ru_nvcsw, count
    involuntary_ctx_switches: int       # ru_nivcsw, count
    block_input_ops: int                # ru_inblock, file system reads, 512-byte blocks
    block_output_ops: int               # ru_oublock, file system writes, 512-byte blocks

    @classmethod
    def from_wait4(cls, ru) -> "Rusage":
        values = {name: getattr(ru, field) for name, field in RUSAGE_FIELDS.items()}
        values["max_rss_bytes"] *= 1024                         # Linux: ru_maxrss in KiB
        return cls(**values)


@dataclass(frozen=True, slots=True)
class IoCounters(_Part):
    """proc(5) /proc/<pid>/io totals of a job and its reaped descendants."""
    logical_read_bytes: int             # rchar: every read call, page cache and sockets included, bytes
    logical_write_bytes: int            # wchar: every write call, bytes
    read_bytes: int                     # read_bytes: fetched from the storage layer, bytes
    write_bytes: int                    # write_bytes less cancelled_write_bytes: sent to storage, bytes


# -- master → node → launcher ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LaunchRequest(_Record):
    """One attempt of a job, as the master hands it to a node and the node to its launcher
    (unchanged: the node adds and overrides nothing)."""
    TYPE: ClassVar[str] = "launch"
    job_id: int                         # the job's id in the master's store
    attempt: int                        # 1 at the first dispatch, +1 at each requeue
    host: str                           # the grid.toml host chosen for it
    argv: tuple[str, ...]               # what the launcher execs (PATH searched in env)
    env: dict[str, str]                 # the job's whole environment
    cwd: str                            # its working directory
    job_dir: str                        # where output.txt and session logs go: the job's user's, mode 0700
    work_roots: tuple[str, ...]         # WORK/UTIL roots to clean if a session is killed; () for commands
    stdout: str                         # file the job's standard output is appended to
    stderr: str                         # file its standard error is appended to (may equal stdout)
    identity: Identity                  # who it runs for: the OS account the job runs as (see Identity)
    attempt_file: str                   # where the node keeps this attempt's record: a directory only the
                                        # grid's account may write (never job_dir, which is the user's)
    mem_limit_bytes: int = 0            # the job's memory reservation, enforced on the node (launcher.py,
                                        # "Memory limit"); 0: none

    @property
    def task_key(self) -> str:
        return task_key(self.job_id, self.attempt)


@dataclass(frozen=True, slots=True)
class LaunchStarted(_Record):
    """The launcher's first reply: the job runs (its process exec'd the command, as its user)."""
    TYPE: ClassVar[str] = "launch.started"
    pid: int                            # the job's first process
    pgid: int                           # its process group (= pid)
    cgroup: str | None                  # its cgroup v2 directory, None if tracked by process group alone
    start_ts: float                     # Unix seconds, just before the fork
    identity: Identity                  # the request's identity as the launcher read it


@dataclass(frozen=True, slots=True)
class LaunchExited(_Record):
    """The launcher's last reply: the job's first process was reaped."""
    TYPE: ClassVar[str] = "launch.exited"
    pid: int                            # the job's first process
    exit_code: int | None               # its exit status, None if a signal ended it
    signal: int | None                  # the signal that ended it, None if it exited
    end_ts: float                       # Unix seconds, when it was reaped
    rusage: Rusage                      # its wait4 accounting
    io: IoCounters                      # its /proc io counters
    limit_reason: str | None = None     # the job was killed for exceeding its memory limit: why, naming the
                                        # limit and how it was enforced; None otherwise


@dataclass(frozen=True, slots=True)
class LaunchFailed(_Record):
    """The launcher's reply to a request it could not read, would not run (for whom: see Identity)
    or could not start (the job's process failed before exec, e.g. its user cannot open its output
    file): the job never ran. The error is the job's exit reason as it stands."""
    TYPE: ClassVar[str] = "launch.failed"
    error: str                          # why, e.g. "ProtocolError: LaunchRequest: missing field 'argv'",
                                        # "user 'ann' is unknown on host node1: ..."


# -- node → attempt file and master ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Attempt(_Record):
    key: str                            # the Dask task key (task_key(job_id, attempt))
    job_id: int                         # the job's id
    attempt: int                        # which attempt of it
    host: str                           # the host it ran on
    identity: Identity | None           # who it ran for (None in files of version 1)


@dataclass(frozen=True, slots=True)
class _Began(_Attempt):
    pid: int                            # the job's first process
    pgid: int                           # its process group
    cgroup: str | None                  # its cgroup v2 directory, or None
    start_ts: float                     # Unix seconds


@dataclass(frozen=True, slots=True)
class AttemptStarted(_Began):
    """The attempt file (and event) once the launcher started the job."""
    TYPE: ClassVar[str] = "attempt.started"
    state: ClassVar[AttemptState] = AttemptState.STARTED


@dataclass(frozen=True, slots=True)
class AttemptFinished(_Attempt):
    """The attempt file (and event) once the job ended, or could not be launched (launch_error)."""
    TYPE: ClassVar[str] = "attempt.finished"
    state: ClassVar[AttemptState] = AttemptState.FINISHED
    pid: int | None                     # the job's first process; None if it never started
    pgid: int | None                    # its process group; None if it never started
    cgroup: str | None                  # its cgroup v2 directory, or None
    start_ts: float | None              # Unix seconds; None if it never started
    end_ts: float                       # Unix seconds
    exit_code: int | None               # exit status; None after a signal or a launch error
    signal: int | None                  # the signal that ended it, or None
    rusage: Rusage | None               # wait4 accounting; None if it never started
    io: IoCounters | None               # /proc io counters; None if it never started
    stimer: dict[str, Any] | None       # the session's last STIMER "total" record (session.stimer), or None
    launch_error: str | None            # why it could not be started, or None
    attempt_file_error: str | None      # (event only) why this record could not be saved, or None
    limit_reason: str | None = None     # LaunchExited.limit_reason: killed for exceeding its memory limit

    @classmethod
    def launch_failed(cls, key: str, host: str, identity: Identity | None, error: str,
                      end_ts: float) -> "AttemptFinished":
        job_id, attempt = parse_task_key(key)
        return cls(key=key, job_id=job_id, attempt=attempt, host=host, identity=identity, pid=None, pgid=None,
                   cgroup=None, start_ts=None, end_ts=end_ts, exit_code=None, signal=None, rusage=None, io=None,
                   stimer=None, launch_error=error, attempt_file_error=None)


@dataclass(frozen=True, slots=True)
class AttemptLost(_Began):
    """The attempt file (and event) when the node gave up a running job: its launcher died under it,
    or the node fenced it (no answer from the master for the fence grace)."""
    TYPE: ClassVar[str] = "attempt.lost"
    state: ClassVar[AttemptState] = AttemptState.LOST
    end_ts: float                       # Unix seconds, when the node gave it up
    reason: str                         # e.g. "host lost: the launcher of node1 died"


AttemptRecord = AttemptStarted | AttemptFinished | AttemptLost
ATTEMPT_RECORDS = (AttemptStarted, AttemptFinished, AttemptLost)


def started_fields(started: AttemptStarted) -> dict[str, Any]:
    """The fields an attempt's end record repeats from its start record."""
    return {f.name: getattr(started, f.name) for f in dataclasses.fields(AttemptStarted)}


# -- scheduler plugin → master ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TaskErred(_Record):
    """A job's Dask task erred (KilledWorker: its worker died while running it)."""
    TYPE: ClassVar[str] = "task.erred"
    key: str                            # the task key
    error: str                          # "ExceptionType: message"
    host_lost: bool                     # True for KilledWorker: the host went, not the engine
    worker: str | None                  # the address of the worker it ran on, if known


@dataclass(frozen=True, slots=True)
class HostEvent(_Record):
    """A worker joined or left the scheduler, or its node's contact stopped or came back."""
    TYPE: ClassVar[str] = "host"
    action: HostAction                  # add, remove, stale or fresh
    address: str                        # the worker's address
    name: str | None                    # its name (the grid.toml host), None if the scheduler had none
    silent_s: float                     # seconds since the scheduler last heard from the node (fence.py), as
                                        # of the event: the master's deadline for its jobs counts from there


JOB_EVENTS = (*ATTEMPT_RECORDS, TaskErred)


def to_event(record: _Record) -> str:
    """A record as the Dask event log carries it: JSON text. Not a dict: the scheduler adds a
    "worker" key to every dict a worker logs (distributed's Scheduler.log_worker_event), which is
    no field of any record, so its reader would reject it."""
    return json.dumps(record.to_dict())


def from_event(text: Any, decode: typing.Callable[[Any], _Record]) -> _Record:
    """The record in an event's JSON text (decode: a from_dict); ProtocolError if there is none."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        raise ProtocolError(f"an event is not a record's JSON text: {text!r}"[:300]) from None
    return decode(data)


def job_event_from_dict(data: Any) -> AttemptStarted | AttemptFinished | AttemptLost | TaskErred:
    return decode(data, JOB_EVENTS)


def attempt_from_dict(data: Any) -> AttemptStarted | AttemptFinished | AttemptLost:
    """An attempt file's record; a file of version 1 (no "version" key) is read in that version's
    shape, one of version 2 as this version (its attempt records have the same fields)."""
    if isinstance(data, dict) and "version" not in data:
        data = _attempt_from_v1(data)
    elif isinstance(data, dict) and data["version"] in SAME_ATTEMPT_VERSIONS:
        data = {**data, "version": VERSION}
        if data.get("type") == AttemptFinished.TYPE:
            data.setdefault("limit_reason", None)
    return decode(data, ATTEMPT_RECORDS)


def _attempt_from_v1(old: dict[str, Any]) -> dict[str, Any]:
    """Version 1 (node.py before this module): {"state": "started"|"finished"|"lost", key, job_id,
    attempt, host, pid, pgid, cgroup, start_ts, ...}; a launch error's "finished" had no pid,
    pgid, cgroup or start_ts; no record had an identity."""
    new = {k: v for k, v in old.items() if k != "state"}
    state = old.get("state")
    new.update(type=f"attempt.{state}", version=VERSION, identity=None)
    if state == AttemptState.FINISHED.value:
        for name in ("pid", "pgid", "cgroup", "start_ts", "rusage", "io", "stimer", "launch_error",
                     "attempt_file_error", "limit_reason"):
            new.setdefault(name, None)
        if new["io"] == {}:                                     # never written, but harmless to read
            new["io"] = None
    return new
