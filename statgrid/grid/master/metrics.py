"""The grid in Prometheus's exposition format: `GET /metrics` (issue 17; the API serves
render(), the master feeds the events), with prometheus-client.

Names follow Prometheus's conventions (base units in the name, `_total` for counters, ratios
0…1). What the master knows live — jobs by state, queue and user, per-queue and per-host counts,
host states — is read from its memory at each scrape (a custom collector: no store query).
What happens over time — dispatch latency and job wait (histograms), jobs finished by state
(counters) — is counted as it happens; counters start again at a master's restart, which
Prometheus's rate() takes as a reset. Each node's latest monitor sample (CPU, memory, per-library
bytes and ops per second, request size and latency, labelled with the library's source) comes from its monitor's `latest.json` (replaced at every sample), read off the loop and
kept for MONITOR_CACHE_S, so scrapes by several Prometheus servers cost one read.

Scraping needs a credential like every call but /health: a token (`statgrid token create`) as the
scrape config's bearer token.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Iterable, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from statgrid.monitor.metrics import BY_NAME
from statgrid.monitor.store import read_latest

if TYPE_CHECKING:
    from statgrid.config import Config
    from statgrid.grid.scheduling.backlog import Backlog
    from statgrid.grid.scheduling.policy import HostView
    from statgrid.job.record import Job


class Master(Protocol):
    """What the metrics read of the master (grid/master/core.py's Master is one). Described here,
    not imported: the master makes its GridMetrics, and importing it back would close a circle."""
    cfg: Config
    pending: Backlog
    running: dict[int, Job]

    def queues(self) -> list[dict[str, Any]]: ...

    def host_views(self) -> dict[str, HostView]: ...

__all__ = ["CONTENT_TYPE_LATEST", "GridMetrics"]

MONITOR_CACHE_S = 5.0
HOST_STATES = ("ok", "closed_Full", "closed_Busy", "closed_Adm", "unavail")
LATENCY_BUCKETS_S = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
WAIT_BUCKETS_S = (0.01, 0.1, 1.0, 10.0, 60.0, 300.0, 900.0, 3600.0, 4 * 3600.0, 24 * 3600.0)
# monitor column → (Prometheus name, scale to the base unit); what each one is, monitor/metrics.py says
# (its one table of the monitor's metrics): the HELP text is its description.
NODE_COLUMNS = {
    "cpu_user_pct": ("statgrid_node_cpu_user_ratio", 0.01),
    "cpu_system_pct": ("statgrid_node_cpu_system_ratio", 0.01),
    "cpu_iowait_pct": ("statgrid_node_cpu_iowait_ratio", 0.01),
    "cpu_busy_cores": ("statgrid_node_cpu_busy_cores", 1.0),
    "load_1m": ("statgrid_node_load1", 1.0),
    "mem_used_bytes": ("statgrid_node_memory_used_bytes", 1.0),
    "mem_cached_bytes": ("statgrid_node_memory_cached_bytes", 1.0),
    "mem_available_bytes": ("statgrid_node_memory_available_bytes", 1.0),
}
# Every library has rows (monitor/libio.py): labels host, library and source (block: its device's
# diskstats; nfs: mountstats; gpfs: mmpmon fs_io_s; process: the grid jobs' own /proc/<pid>/io).
# A figure a source does not give (latency of gpfs and process) is left out, not sent as 0.
LIBRARY_COLUMNS = {
    "read_bytes_per_s": ("statgrid_library_read_bytes_per_second", 1.0),
    "write_bytes_per_s": ("statgrid_library_write_bytes_per_second", 1.0),
    "read_iops": ("statgrid_library_read_ops_per_second", 1.0),
    "write_iops": ("statgrid_library_write_ops_per_second", 1.0),
    "avg_request_bytes": ("statgrid_library_request_bytes", 1.0),
    "await_ms": ("statgrid_library_latency_seconds", 0.001),
}


def help_text(column: str, scale: float = 1.0) -> str:
    """A monitor column's HELP: its description in monitor/metrics.py, and the ratio's or unit's scale."""
    text = BY_NAME[column].description
    if scale == 0.01:
        return f"{text}, 0…1 (the monitor's {column} / 100)"
    return f"{text}, in seconds (the monitor's {column} / 1000)" if scale == 0.001 else text


class GridMetrics:
    """The master's metrics: `render()` is the body of GET /metrics."""

    def __init__(self, master: "Master"):
        self.master = master
        self.registry = CollectorRegistry(auto_describe=False)
        self.dispatch_latency = Histogram(
            "statgrid_dispatch_latency_seconds", "Time from a job's dispatch by the master to its start on the node",
            buckets=LATENCY_BUCKETS_S, registry=self.registry)
        self.job_wait = Histogram(
            "statgrid_job_wait_seconds", "Time from a job's submit to its start (queue wait)",
            buckets=WAIT_BUCKETS_S, registry=self.registry)
        self.finished = Counter(
            "statgrid_jobs_finished", "Jobs that ended, by final state (DONE, EXIT, KILLED) and queue",
            ["state", "queue"], registry=self.registry)
        self.submitted = Counter("statgrid_jobs_submitted", "Jobs submitted, by queue", ["queue"],
                                 registry=self.registry)
        self._monitor: tuple[float, dict[str, dict], dict[tuple[str, str], dict]] | None = None
        self.registry.register(_Live(self))

    # -- events (from the master) ----------------------------------------------------------------------
    def on_submit(self, job: "Job") -> None:
        self.submitted.labels(queue=job.queue).inc()

    def on_start(self, job: "Job") -> None:
        if job.start_ts is None:
            return
        if job.dispatch_ts is not None:
            self.dispatch_latency.observe(max(0.0, job.start_ts - job.dispatch_ts))
        self.job_wait.observe(max(0.0, job.start_ts - job.submit_ts))

    def on_end(self, job: "Job") -> None:
        self.finished.labels(state=job.state.value, queue=job.queue).inc()

    # -- the scrape ------------------------------------------------------------------------------------
    def refresh_monitor(self) -> None:
        """Read each host's latest monitor sample (call off the event loop)."""
        if self._monitor is not None and time.monotonic() - self._monitor[0] < MONITOR_CACHE_S:
            return
        root = self.master.cfg.home / "monitor"
        nodes: dict[str, dict] = {}
        libraries: dict[tuple[str, str], dict] = {}
        for host in self.master.cfg.hosts:
            latest = read_latest(root / host)
            if latest.get("node"):
                nodes[host] = latest["node"][-1]
            for r in latest.get("library") or []:
                libraries[(host, str(r.get("library")))] = r
        self._monitor = (time.monotonic(), nodes, libraries)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _Live:
    """What the master holds now, read at each scrape."""

    def __init__(self, metrics: GridMetrics):
        self.metrics = metrics

    def collect(self) -> Iterable[GaugeMetricFamily]:
        master = self.metrics.master
        jobs = GaugeMetricFamily("statgrid_jobs", "Jobs pending or running now, by state, queue and user",
                                 labels=["state", "queue", "user"])
        counts: dict[tuple[str, str, str], int] = {}
        for table in (master.pending, master.running):
            for job in table.values():
                key = (job.shown_state, job.queue, job.user)
                counts[key] = counts.get(key, 0) + 1
        for key, n in sorted(counts.items()):
            jobs.add_metric(list(key), n)
        yield jobs

        queues = GaugeMetricFamily("statgrid_queue_jobs", "Jobs pending and running per queue", labels=["queue", "state"])
        for q in master.queues():
            queues.add_metric([q["queue"], "PEND"], q["pending"])
            queues.add_metric([q["queue"], "RUN"], q["running"])
        yield queues

        views = master.host_views()
        slots = GaugeMetricFamily("statgrid_host_slots", "Job slots of each host (LSF MXJ)", labels=["host"])
        running = GaugeMetricFamily("statgrid_host_running_jobs", "Jobs running on each host", labels=["host"])
        states = GaugeMetricFamily("statgrid_host_state", "1 for the host's state (ok, closed_Full, closed_Busy, closed_Adm, "
                                   "unavail), 0 for the others", labels=["host", "state"])
        for view in views.values():
            slots.add_metric([view.name], view.slots)
            running.add_metric([view.name], view.running)
            for state in HOST_STATES:
                states.add_metric([view.name, state], 1 if view.state == state else 0)
        yield from (slots, running, states)

        monitor = self.metrics._monitor
        if monitor is None:
            return
        _, nodes, libraries = monitor
        for column, (name, scale) in NODE_COLUMNS.items():
            family = GaugeMetricFamily(name, help_text(column, scale) + " (the node's latest monitor sample)",
                                       labels=["host"])
            for host, row in sorted(nodes.items()):
                if row.get(column) is not None:
                    family.add_metric([host], row[column] * scale)
            yield family
        for column, (name, scale) in LIBRARY_COLUMNS.items():
            family = GaugeMetricFamily(name, help_text(column, scale) + " for the library, from its source: block "
                                       "device, nfs mountstats, gpfs mmpmon, or process (the jobs' own I/O) (the "
                                       "node's latest monitor sample)", labels=["host", "library", "source"])
            for (host, library), row in sorted(libraries.items()):
                if row.get(column) is not None:
                    family.add_metric([host, library, str(row.get("source") or "block")], row[column] * scale)
            yield family
