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
from dataclasses import dataclass
from datetime import datetime

from statgrid.host import procfs as _procfs
from statgrid.job.stimer import StepRecord  # noqa: F401 — the record is the job's (job/stimer.py); readers import it here too

_RUSAGE_FIELDS = {
    "page_faults": "ru_majflt",
    "page_reclaims": "ru_minflt",
    "voluntary_ctx_switches": "ru_nvcsw",
    "involuntary_ctx_switches": "ru_nivcsw",
    "block_input_ops": "ru_inblock",
    "block_output_ops": "ru_oublock",
}


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
