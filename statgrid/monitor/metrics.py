"""Every metric the monitor records, declared once. This table drives the Parquet schema, the
CSV headers, chart labels and the HELP of /metrics (grid/master/metrics.py): nothing else describes them.

`rate` is True for values derived from counter deltas over the interval (per second, or a
share of the interval), False for gauges read as they are. `scope` says which table holds it:
node (one row per sample), disk (one row per block device; library rows carry them too, one row
per library root — data/work/util — as the papers show SASDATA vs SASWORK), library (library rows only).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    description: str
    rate: bool
    scope: str              # "node" | "disk" (library rows carry the disk metrics) | "library"


_IO = [
    ("read_bytes_per_s", "B/s", "bytes read per second", True),
    ("write_bytes_per_s", "B/s", "bytes written per second", True),
    ("read_iops", "1/s", "read requests completed per second", True),
    ("write_iops", "1/s", "write requests completed per second", True),
    ("avg_request_bytes", "B", "average size of a completed request (iostat areq-sz)", True),
    ("await_ms", "ms", "average time a request took, queue + service (iostat await)", True),
    ("read_await_ms", "ms", "average time a read took (iostat r_await)", True),
    ("write_await_ms", "ms", "average time a write took (iostat w_await)", True),
    ("util_pct", "%", "share of the interval with I/O in flight (iostat %util)", True),
    ("avg_queue_size", "requests", "average requests in flight or queued (iostat aqu-sz)", True),
]

METRICS: tuple[Metric, ...] = (
    Metric("cpu_user_pct", "%", "CPU time in user mode (incl. nice)", True, "node"),
    Metric("cpu_system_pct", "%", "CPU time in the kernel (incl. irq, softirq)", True, "node"),
    Metric("cpu_iowait_pct", "%", "CPU idle with I/O outstanding (reads 0 under async I/O: see psi_io)", True, "node"),
    Metric("cpu_idle_pct", "%", "CPU idle", True, "node"),
    Metric("cpu_steal_pct", "%", "CPU time taken by the hypervisor", True, "node"),
    Metric("cpu_busy_cores", "cores", "user + system CPU in cores", True, "node"),
    Metric("load_1m", "tasks", "1-minute load average", False, "node"),
    Metric("mem_used_bytes", "B", "memory used (total − free − buffers − cache − reclaimable slab)", False, "node"),
    Metric("mem_cached_bytes", "B", "page cache + buffers + reclaimable slab", False, "node"),
    Metric("mem_available_bytes", "B", "memory available to new work (MemAvailable)", False, "node"),
    Metric("swap_used_bytes", "B", "swap in use", False, "node"),
    Metric("psi_cpu_some_pct", "%", "share of the interval some task waited for CPU", True, "node"),
    Metric("psi_io_some_pct", "%", "share of the interval some task stalled on I/O", True, "node"),
    Metric("psi_io_full_pct", "%", "share of the interval all non-idle tasks stalled on I/O", True, "node"),
    Metric("psi_memory_some_pct", "%", "share of the interval some task stalled on memory", True, "node"),
    Metric("psi_memory_full_pct", "%", "share of the interval all non-idle tasks stalled on memory", True, "node"),
    Metric("net_rx_bytes_per_s", "B/s", "bytes received per second (all interfaces but lo)", True, "node"),
    Metric("net_tx_bytes_per_s", "B/s", "bytes sent per second (all interfaces but lo)", True, "node"),
    *(Metric(n, u, d, r, "disk") for n, u, d, r in _IO),
    # Library rows of source "process" (libio.py): the jobs' /proc/<pid>/io read_bytes/write_bytes,
    # beside their read_bytes_per_s/write_bytes_per_s, which there are rchar/wchar (logical bytes).
    Metric("storage_read_bytes_per_s", "B/s", "bytes the jobs made the storage layer read (/proc/<pid>/io "
           "read_bytes; source process only)", True, "library"),
    Metric("storage_write_bytes_per_s", "B/s", "bytes the jobs sent to the storage layer (/proc/<pid>/io "
           "write_bytes − cancelled_write_bytes; source process only)", True, "library"),
)

BY_NAME = {m.name: m for m in METRICS}
NODE_METRICS = tuple(m for m in METRICS if m.scope == "node")
DISK_METRICS = tuple(m for m in METRICS if m.scope == "disk")
LIBRARY_METRICS = DISK_METRICS + tuple(m for m in METRICS if m.scope == "library")

# Key columns of each table, before the metrics. A disk row's counted_in names the top-most devices
# its bytes are counted in (itself when it is one; see sampler.top_devices) and layer says what it
# is (disk, partition, LVM vg-lv, multipath name, md raid1); both null when the monitor had no sysfs.
KEYS = {"node": ("ts", "host", "interval_s"), "disk": ("ts", "host", "device", "counted_in", "layer"),
        "library": ("ts", "host", "library", "path", "device", "source")}
TABLE_METRICS = {"node": NODE_METRICS, "disk": DISK_METRICS, "library": LIBRARY_METRICS}
# A library row's source (monitor/libio.py): block (its device's diskstats, the disk metrics above),
# nfs (/proc/self/mountstats), gpfs (mmpmon fs_io_s) or process (the jobs' /proc/<pid>/io). What each
# metric means per source: README, "Library sources". Rows saved before format 3 are block rows.


def label(name: str) -> str:
    """Chart/column label: 'read_bytes_per_s' → 'read bytes per s [B/s]'."""
    m = BY_NAME[name]
    return f"{m.name.replace('_', ' ')} [{m.unit}]"
