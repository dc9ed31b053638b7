"""The job record: one typed row per job, shared by the store, the API, the client and the CLI.

States follow LSF's bjobs: PEND (queued), RUN (handed to a node), DONE (exit code 0), EXIT
(non-zero exit, a signal, a launch error, or the host lost), KILLED (ended after `kill`).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

# The states and their display rule are the lifecycle's; the store, API and CLI import them here.
from statgrid.job.accounting import JobRusage
from statgrid.job.lifecycle import JobState, shown_state, stored_state  # noqa: F401
from statgrid.job.protocol import task_key
from statgrid.job.stimer import StepRecord

# Job ids are SQLite INTEGERs, signed 64-bit: a larger id names no job, and binding one raises
# OverflowError (GET /jobs/<2**70> answered 500).
JOB_ID_MAX = 2**63 - 1
# Bounds of the API that its clients must respect too (one definition: the API, the client and the
# CLI import them).
PAGE_MAX_JOBS = 1000                    # jobs in one GET /jobs page
PEEK_MAX_BYTES = 2**20                  # a terminal's worth; the whole file is at the path peek returns


@dataclass
class Job:
    """One job. Times are Unix seconds (`*_ts`); durations end in `_s`."""

    id: int
    user: str
    queue: str
    name: str
    kind: str                              # "session" (a .py/.sql/.sas job file), "command" or "kernel" (argv [language])
    argv: list[str]                        # the job file and its arguments, or the command
    cwd: str
    options: dict[str, str] = field(default_factory=dict)      # session options (-o memsize=...)
    rerunnable: bool = False
    requested_hosts: list[str] = field(default_factory=list)  # -m HOST...; empty = the queue's hosts
    state: JobState = JobState.PEND
    attempt: int = 0                       # 1 at first dispatch; +1 at each requeue
    host: str | None = None
    submit_ts: float = 0.0
    dispatch_ts: float | None = None
    start_ts: float | None = None
    end_ts: float | None = None
    pid: int | None = None
    exit_code: int | None = None
    signal: int | None = None
    exit_reason: str | None = None
    kill_requested: bool = False
    rusage: JobRusage | None = None        # wait4 + /proc/<pid>/io of the job's process (accounting.py)
    stimer: StepRecord | None = None       # the session's STIMER totals (its log's "total" record)
    requeues: int = 0
    # Scheduling (issue 18): what the policy and the master's dependency, array, flow and limit
    # handling read. Defaults are a plain job's.
    depend: str | None = None              # dependency expression, canonical (depend.py): "done(12) && ended(13)"
    flow_id: int | None = None             # the flow or array the job belongs to (store: flows table)
    array_index: int | None = None         # its index in an array (STATGRID_ARRAY_INDEX)
    runlimit_s: float | None = None        # its own run limit (-W); the queue's RUNLIMIT applies too
    mem_bytes: int = 0                     # memory reserved on its host while it runs
    priority: int = 0                      # job priority among its user's jobs of the queue (higher first)
    position: float = 0.0                  # order among them at equal priority (submit time; top/bottom move it)
    suspended_s: float = 0.0               # time spent suspended (not counted as run time by limits/usage)
    suspend_ts: float | None = None        # when the current suspension began (state USUSP)
    kill_as: str | None = None             # the state a requested kill ends in (None: KILLED; "EXIT": a limit)
    parent_id: int | None = None           # the session job that handed this sub-task to the grid
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The JSON of the store or the API (a dict) becomes the typed record: here alone.
        if isinstance(self.rusage, dict):
            self.rusage = JobRusage.parse(self.rusage)
        if isinstance(self.stimer, dict):
            self.stimer = StepRecord.parse(self.stimer)

    @property
    def wait_s(self) -> float | None:
        return None if self.start_ts is None else self.start_ts - self.submit_ts

    @property
    def run_s(self) -> float | None:
        return None if self.start_ts is None or self.end_ts is None else self.end_ts - self.start_ts

    @property
    def shown_state(self) -> str:
        """The state as users see it: RUN shows as USUSP while the job is suspended."""
        return shown_state(self.state, self.suspend_ts)

    @property
    def task_key(self) -> str:
        return task_key(self.id, self.attempt)

    def to_dict(self, with_env: bool = False) -> dict[str, Any]:
        """The record as the API sends it: the fields, state as text, wait_s and run_s.

        Shallow (its lists and dicts are the job's own): dataclasses.asdict deep-copied every
        field, ~7× slower, on the loop. (Listings do not come through here: store.page.)"""
        d = {name: getattr(self, name) for name in _FIELD_NAMES}
        d["state"] = self.shown_state
        d["rusage"] = None if self.rusage is None else self.rusage.to_dict()
        d["stimer"] = None if self.stimer is None else self.stimer.to_json_dict()
        d["wait_s"], d["run_s"] = self.wait_s, self.run_s
        if not with_env:
            d.pop("env")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Job":
        kw = {k: v for k, v in d.items() if k in _FIELD_NAMES}
        state = kw.get("state", "PEND")
        kw["state"] = stored_state(state)                   # USUSP is shown, stored as RUN
        return cls(**kw)                                     # __post_init__ types rusage and stimer


_FIELD_NAMES = {f.name: None for f in dataclasses.fields(Job)}   # ordered, O(1) membership

# Columns stored as JSON text in SQLite.
JSON_FIELDS = ("argv", "options", "requested_hosts", "rusage", "stimer", "env")


# What a job keeps from its submit on: a state change (JobStore.update) does not write them again
# (the environment alone may be 64 KiB of JSON, and a job changes state four times or more).
SUBMIT_ONLY_FIELDS = ("user", "kind", "argv", "cwd", "options", "rerunnable", "requested_hosts", "submit_ts", "env",
                      "flow_id", "array_index", "parent_id", "depend")


def to_row(job: Job, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The job's columns (JSON fields as text), without those in `skip`. Shallow: the JSON fields
    are encoded straight from the job's own lists and dicts (dataclasses.asdict deep-copied every
    field first, ~95 µs a job with an environment; benchmarks/scheduling.py)."""
    d = {name: getattr(job, name) for name in _FIELD_NAMES if name not in skip}
    d["state"] = job.state.value
    if "rusage" in d and job.rusage is not None:
        d["rusage"] = job.rusage.to_dict()
    if "stimer" in d and job.stimer is not None:
        d["stimer"] = job.stimer.to_json_dict()
    for k in JSON_FIELDS:
        if k in d:
            d[k] = None if d[k] is None else json.dumps(d[k])
    if "rerunnable" in d:
        d["rerunnable"] = int(job.rerunnable)
    d["kill_requested"] = int(job.kill_requested)
    return d


def from_row(row: dict[str, Any]) -> Job:
    d = dict(row)
    for k in JSON_FIELDS:
        d[k] = None if d[k] is None else json.loads(d[k])
    d["rerunnable"] = bool(d["rerunnable"])
    d["kill_requested"] = bool(d["kill_requested"])
    return Job.from_dict(d)
