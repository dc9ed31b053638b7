"""STIMER: per-step resource accounting, like SAS FULLSTIMER.

One `StepRecord` per step is the single source for the log block, the JSON line, the session
total and (later) grid accounting and reports. Sources:
- CPU, faults, context switches, block ops: getrusage(RUSAGE_SELF) — which includes every
  engine thread — plus RUSAGE_CHILDREN for helper processes (never RUSAGE_THREAD).
- bytes: /proc/self/io; rchar/wchar are logical I/O (page cache included), read_bytes and
  write_bytes − cancelled_write_bytes are what reached the block layer.
- memory: VmHWM after resetting it at step start via /proc/self/clear_refs; `memory_bytes` is
  that step peak above the RSS the step started with, `os_memory_bytes` the peak itself.
"""
from __future__ import annotations

import dataclasses
import resource
import time
from dataclasses import dataclass, field
from datetime import datetime

from statgrid.host import procfs as _procfs

_RUSAGE_FIELDS = {
    "page_faults": "ru_majflt",
    "page_reclaims": "ru_minflt",
    "voluntary_ctx_switches": "ru_nvcsw",
    "involuntary_ctx_switches": "ru_nivcsw",
    "block_input_ops": "ru_inblock",
    "block_output_ops": "ru_oublock",
}


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


@dataclass(frozen=True)
class _Sample:
    wall_ns: int
    rusage: dict[str, float]
    io: dict[str, int]
    rss_bytes: int


def _rusage_sum() -> dict[str, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = {"user": me.ru_utime + kids.ru_utime, "sys": me.ru_stime + kids.ru_stime}
    for attr in _RUSAGE_FIELDS.values():
        out[attr] = getattr(me, attr) + getattr(kids, attr)
    return out


def _io_physical(io: dict[str, int]) -> tuple[int, int]:
    return io.get("read_bytes", 0), io.get("write_bytes", 0) - io.get("cancelled_write_bytes", 0)


class StepTimer:
    """Start at the beginning of a step, `finish()` at its end → a StepRecord."""

    def __init__(self, session_id: str, step: int, name: str, procfs: str = _procfs.PROCFS_PATH,
                 reset_hwm: bool = True):
        self.session_id, self.step, self.name, self.procfs = session_id, step, name, procfs
        self.start_ts = datetime.now().astimezone().isoformat(timespec="milliseconds")
        self.hwm_reset = _procfs.reset_hwm(procfs) if reset_hwm else False
        self._start = self._sample()

    def _sample(self) -> _Sample:
        mem = _procfs.read_status_memory(self.procfs)
        return _Sample(time.perf_counter_ns(), _rusage_sum(), _procfs.read_io(self.procfs), mem.get("VmRSS", 0))

    def finish(self, status: str = "ok", error: str | None = None, outputs: list[str] | None = None,
               rows_out: int | None = None) -> StepRecord:
        end = self._sample()
        hwm = _procfs.read_status_memory(self.procfs).get("VmHWM", 0)
        a, b = self._start, end
        read0, write0 = _io_physical(a.io)
        read1, write1 = _io_physical(b.io)
        counts = {name: int(b.rusage[attr] - a.rusage[attr]) for name, attr in _RUSAGE_FIELDS.items()}
        return StepRecord(
            session_id=self.session_id, step=self.step, name=self.name, status=status, start_ts=self.start_ts,
            real_s=(b.wall_ns - a.wall_ns) / 1e9,
            user_cpu_s=b.rusage["user"] - a.rusage["user"],
            sys_cpu_s=b.rusage["sys"] - a.rusage["sys"],
            # Without the reset VmHWM is the process's lifetime peak, which says nothing about
            # this step: report the RSS the step added instead.
            memory_bytes=max(0, (hwm if self.hwm_reset else b.rss_bytes) - a.rss_bytes),
            os_memory_bytes=hwm, os_memory_reset=self.hwm_reset,
            read_bytes=max(0, read1 - read0), write_bytes=max(0, write1 - write0),
            logical_read_bytes=b.io.get("rchar", 0) - a.io.get("rchar", 0),
            logical_write_bytes=b.io.get("wchar", 0) - a.io.get("wchar", 0),
            outputs=list(outputs or []), rows_out=rows_out, error=error, **counts,
        )


def total_record(session_timer: StepTimer, steps: list[StepRecord], status: str) -> StepRecord:
    """The session total, like SAS's 'Total process time' note.

    CPU, I/O and counts cover the whole session (open to close, so also the job's own Python
    between steps); memory figures are the maxima over the steps, whose peaks were reset per step.
    """
    whole = session_timer.finish(status=status)
    return dataclasses.replace(
        whole, name="SESSION TOTAL", record="total", step=len(steps),
        memory_bytes=max((s.memory_bytes for s in steps), default=0),
        os_memory_bytes=max([s.os_memory_bytes for s in steps] + [whole.os_memory_bytes if not steps else 0]),
        os_memory_reset=bool(steps) and all(s.os_memory_reset for s in steps),
        outputs=[o for s in steps for o in s.outputs])
