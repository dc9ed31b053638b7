"""STIMER's record: one step's (or a session's total) resource accounting, like SAS FULLSTIMER.

The session writes one StepRecord per step to its STIMER log (session/stimer.py measures them;
jobdir.JobDir reads the log); the node reads the log's last "total" record when the job ends, and
the master keeps it as the job's `stimer` (record.Job), typed from there on: store, API, client,
views and reports all read this record's fields, never re-spelled keys.

Standard library only: statgrid.job is the ground floor.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StepRecord:
    """One step's STIMER record. Times in seconds, sizes in bytes, counts as integers.

    memory_bytes: step peak RSS above the RSS at step start (where the peak cannot be reset,
    os_memory_reset is False: RSS at step end minus RSS at start). os_memory_bytes: process RSS
    high-water mark during the step (or since process start where os_memory_reset is False).
    read_bytes/write_bytes: physical I/O; logical_read_bytes/logical_write_bytes: read()/write().
    record: "step", "total" (the session's, last), or "subtask": a sub-task's totals in its parent's
    log (connect.py), with job_id the sub-task's grid job and session_id its session; its `step` is
    the number of the parent's CONNECT step. Readers that sum steps take record == "step" only, so
    a sub-task's work, already in its own job's records, is not counted twice.
    """

    session_id: str
    step: int
    name: str
    status: str                  # ok | error | terminated
    start_ts: str                # ISO 8601, local time with offset
    real_s: float
    user_cpu_s: float
    sys_cpu_s: float
    memory_bytes: int
    os_memory_bytes: int
    os_memory_reset: bool
    page_faults: int
    page_reclaims: int
    voluntary_ctx_switches: int
    involuntary_ctx_switches: int
    block_input_ops: int
    block_output_ops: int
    read_bytes: int
    write_bytes: int
    logical_read_bytes: int
    logical_write_bytes: int
    outputs: list[str] = field(default_factory=list)
    rows_out: int | None = None
    error: str | None = None
    record: str = "step"
    job_id: int | None = None

    @property
    def cpu_s(self) -> float:
        return self.user_cpu_s + self.sys_cpu_s

    def to_json_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json_dict(cls, d: dict) -> "StepRecord":
        """The record of a JSON line (a session's .stimer.jsonl): unknown keys are ignored; a missing
        or mistyped figure raises ValueError (the file is the user's own and may be anything)."""
        kw = {}
        for f in dataclasses.fields(cls):
            if f.name in d:
                kw[f.name] = d[f.name]
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"STIMER record without {f.name!r}")
        for name in ("real_s", "user_cpu_s", "sys_cpu_s"):
            if not isinstance(kw[name], (int, float)) or isinstance(kw[name], bool):
                raise ValueError(f"STIMER record with {name} = {kw[name]!r}")
        for name in ("memory_bytes", "os_memory_bytes", "step"):
            if not isinstance(kw[name], int) or isinstance(kw[name], bool):
                raise ValueError(f"STIMER record with {name} = {kw[name]!r}")
        return cls(**kw)

    @classmethod
    def parse(cls, d: dict[str, Any] | None) -> "StepRecord | None":
        """The record of a stored, sent or saved dict (Job.stimer in the store and the API, a
        bench bundle's stimer_total), or None if there is none or a figure has the wrong type. A
        figure it lacks (a bundle or row of an older release, a hand-written file) counts as zero,
        as the readers before this record took it."""
        if not isinstance(d, dict) or not d:
            return None
        zero = {"str": "", "int": 0, "float": 0.0, "bool": False}
        filled = {f.name: zero[f.type] for f in dataclasses.fields(cls)
                  if f.name not in d and f.type in zero and f.default is dataclasses.MISSING}
        try:
            return cls.from_json_dict({**filled, **d})
        except (TypeError, ValueError):
            return None
