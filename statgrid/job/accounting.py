"""A finished job's resource usage as the grid keeps it: wait4(2)'s rusage and /proc/<pid>/io of
its process and reaped descendants, in one typed record (Job.rusage).

The node's AttemptFinished carries them apart (protocol.Rusage, protocol.IoCounters, versioned
with the protocol); the master joins them here (JobRusage.of) and the record goes as it is to the
store, the API, the client, the views, accounting and reports. Its JSON (to_dict) has the keys the
API always had: the fields, the io ones left out when the node could not read /proc/<pid>/io.

Standard library only: statgrid.job is the ground floor.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

IO_FIELDS = ("logical_read_bytes", "logical_write_bytes", "read_bytes", "write_bytes")


@dataclass(frozen=True, slots=True)
class JobRusage:
    """Times in seconds, sizes in bytes, counts as integers (protocol.Rusage and IoCounters say
    where each comes from). The io fields are None when they could not be read."""
    user_cpu_s: float = 0.0
    sys_cpu_s: float = 0.0
    max_rss_bytes: int = 0
    page_faults: int = 0
    page_reclaims: int = 0
    voluntary_ctx_switches: int = 0
    involuntary_ctx_switches: int = 0
    block_input_ops: int = 0
    block_output_ops: int = 0
    logical_read_bytes: int | None = None
    logical_write_bytes: int | None = None
    read_bytes: int | None = None
    write_bytes: int | None = None

    @property
    def cpu_s(self) -> float:
        """User plus system CPU seconds."""
        return self.user_cpu_s + self.sys_cpu_s

    @property
    def logical_io_bytes(self) -> int:
        """Bytes read and written by read()/write() calls (page cache and sockets included); 0 if unknown."""
        return (self.logical_read_bytes or 0) + (self.logical_write_bytes or 0)

    @classmethod
    def of(cls, rusage, io) -> "JobRusage":
        """From an AttemptFinished's protocol.Rusage and protocol.IoCounters (None: not read)."""
        values = rusage.to_dict()
        if io is not None:
            values.update(io.to_dict())
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of the store and the API: every field; the io ones only when known."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name in IO_FIELDS:
            if d[name] is None:
                del d[name]
        return d

    @classmethod
    def parse(cls, d: dict[str, Any] | None) -> "JobRusage | None":
        """The record of a stored or sent dict; None for none. Keys it does not know are ignored
        (a newer master's), missing ones take their defaults (an older row)."""
        if not d:
            return None
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names and v is not None})
