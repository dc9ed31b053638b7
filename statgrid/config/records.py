"""The typed configuration: one frozen record per grid.toml section, and `Config` holding them."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from statgrid.config.sections import _SESSION_KEYS, _parse_section
from statgrid.config.units import KIB, format_size
from statgrid.config.dataset_io import DEFAULT_BUFSIZE_BYTES, DEFAULT_COMPRESS, DatasetIO


@dataclass(frozen=True)
class SessionOptions:
    """Options of one session; SAS names, statgrid meanings.

    memsize_bytes: engine memory cap (DuckDB ``memory_limit``; RSS runs ~10 % above it).
    threads: engine threads; 0 means every CPU this process may use.
    bufsize_bytes: SAS's BUFSIZE: the size of a data set's I/O requests (a column chunk; dataset_io.py).
    compress: SAS's COMPRESS: 'no', 'yes', 'char' or 'binary' (uncompressed, snappy, snappy, zstd).
    sortsize_bytes: SAS's SORTSIZE: DuckDB's memory_limit while a sort step runs; 0 = memsize.
    utilsize_bytes: cap on spill in UTIL (DuckDB ``max_temp_directory_size``); 0 = engine default.
    autoexec: a SAS program run before every .sas job of the session ("" none; a relative path is taken
    from the job's working directory); a job's `-autoexec FILE` replaces it.
    """

    memsize_bytes: int = 2 * KIB**3
    threads: int = 0
    bufsize_bytes: int = DEFAULT_BUFSIZE_BYTES
    utilsize_bytes: int = 0
    autoexec: str = ""
    compress: str = DEFAULT_COMPRESS
    sortsize_bytes: int = 0

    @property
    def dataset_io(self) -> DatasetIO:
        """How this session writes data sets (row group rows and codec from bufsize and compress)."""
        return DatasetIO(self.bufsize_bytes, self.compress)

    @property
    def bufsize_rows(self) -> int:
        """Rows per Parquet row group that bufsize_bytes gives (dataset_io.row_group_rows)."""
        return self.dataset_io.row_group_rows

    @property
    def sort_memory_bytes(self) -> int:
        """The engine's memory limit during a sort: sortsize, never above memsize (the session's cap)."""
        return min(self.sortsize_bytes, self.memsize_bytes) if self.sortsize_bytes else self.memsize_bytes

    @property
    def effective_threads(self) -> int:
        return self.threads or len(os.sched_getaffinity(0))

    def with_overrides(self, overrides: Mapping[str, Any], source: str = "--option") -> "SessionOptions":
        """Apply `key=value` overrides (SAS option names), validated like grid.toml's [session]."""
        parsed = _parse_section("session", {k.lower(): v for k, v in overrides.items()}, _SESSION_KEYS, source)
        return replace(self, **parsed)

    def as_sas_names(self) -> dict[str, Any]:
        return {"memsize": format_size(self.memsize_bytes), "threads": self.effective_threads,
                "bufsize": format_size(self.bufsize_bytes), "sortsize": format_size(self.sortsize_bytes),
                "compress": self.compress, "utilsize": format_size(self.utilsize_bytes)}


@dataclass(frozen=True)
class LibraryRoots:
    data: Path
    work: Path
    util: Path


@dataclass(frozen=True)
class Libname:
    name: str
    path: Path
    readonly: bool = False


@dataclass(frozen=True)
class MasterConfig:
    port: int = 8642
    listen: str = "127.0.0.1"
    api_tls: bool = True
    # How long a node may lose the master before it kills its jobs (fencing); the master gives a
    # lost node's jobs to others only after the engine dropped it, later than that.
    fence_grace_s: float = 60.0
    engine_port: int = 0             # the embedded scheduler's port (0: any free one); fixed for firewalls
    names: tuple[str, ...] = ()
    scheduler: str = ""
    # False opens the engine to anyone who reaches its port (they may run code as the grid's
    # user): for benchmarks (benchmarks/dispatch.py --tls) and trusted single-user machines only.
    engine_tls: bool = True


@dataclass(frozen=True)
class MonitorConfig:
    """[monitor]: the sampler that runs beside every grid worker while the grid is up."""

    enabled: bool = True
    interval_s: float = 1.0


@dataclass(frozen=True)
class HostConfig:
    name: str
    slots: int | None = None        # None: the CPUs its worker sees, known when it joins (node.cpus_seen)
    open: bool = True
    cpus: tuple[int, ...] = ()      # CPUs the host's jobs may run on (a cpuset); () = all
    joins: bool = False             # a machine of its own that joins with `statgrid node up`; False: the
                                    # embedded engine runs its worker on the master's machine
    memory_bytes: int = 0           # memory its jobs may reserve together; 0 = not tracked
    max_load: float = 0.0           # 1-minute load average over which it takes no new jobs; 0 = none


@dataclass(frozen=True)
class HostPreference:
    """One token of an LSF HOSTS list: a host name (or 'others'/'all') and its weight."""

    host: str
    weight: int = 0


@dataclass(frozen=True)
class QueueConfig:
    name: str
    priority: int = 30
    hosts: tuple[HostPreference, ...] = (HostPreference("all"),)
    user_limit: int = 0              # running jobs of one user in this queue (UJOB_LIMIT); 0 = none
    job_limit: int = 0               # running jobs of the queue (QJOB_LIMIT); 0 = none
    host_limit: int = 0              # running jobs of the queue on one host (HJOB_LIMIT); 0 = none
    runlimit_s: float = 0.0          # wall time a job of the queue may run (RUNLIMIT); 0 = none
    # (user or group name, shares) in grid.toml's order; "default" stands for every user not named
    # (each such user gets that many shares of their own, as LSF's `default`). () = no fairshare.
    fairshare: tuple[tuple[str, int], ...] = ()
    # Interactive sessions (notebook kernels, statgrid/kernels/): an idle kernel (no cell run) is ended after
    # this long, with a warning in the notebook first; 0 = never. kernel_ports: the TCP ports its kernels bind
    # on their node (a firewall range), (0, 0) = any free port.
    idle_timeout_s: float = 0.0
    kernel_ports: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class LimitsConfig:
    """[limits]: running jobs over all queues (LSF lsb.users MAX_JOBS); 0 = no limit."""

    user_jobs: int = 0
    users: tuple[tuple[str, int], ...] = ()      # (user, limit): instead of user_jobs
    groups: tuple[tuple[str, int], ...] = ()     # (group of [groups], limit): its members together


@dataclass(frozen=True)
class SchedulingConfig:
    """[scheduling]: fairshare's dynamic priority (LSF lsb.params) and memory reservations.

    A user's (or group's) priority in a fairshare queue is
        shares / (1 + run_job_factor × running jobs + run_time_factor × decayed slot-hours)
    as LSF's dynamic user priority (CPU time and committed run time factors left out: statgrid
    charges wall time of a slot). Usage decays by half every half_life_s (LSF HIST_HOURS, 5 h)."""

    half_life_s: float = 5 * 3600.0
    memory_margin: float = 0.1        # DESIGN.md: RSS runs ~10 % above memsize; jobspec.SESSION_ENGINE_BYTES adds the engine's own
    run_job_factor: float = 3.0
    run_time_factor: float = 0.7


@dataclass(frozen=True)
class Config:
    home: Path
    source: Path | None
    libraries: LibraryRoots
    libnames: dict[str, Libname]
    session: SessionOptions
    master: MasterConfig
    hosts: dict[str, HostConfig]
    queues: dict[str, QueueConfig]
    monitor: MonitorConfig = MonitorConfig()
    admins: tuple[str, ...] = ()     # [grid] admins: grid administrators besides root
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)   # [groups]: group → members
    limits: LimitsConfig = LimitsConfig()
    scheduling: SchedulingConfig = SchedulingConfig()

    def groups_of(self, user: str) -> tuple[str, ...]:
        """The [groups] `user` is a member of, in grid.toml's order."""
        return tuple(g for g, members in self.groups.items() if user in members)
