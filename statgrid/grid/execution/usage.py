"""A job's CPU, memory and I/O over time: what the node samples while the job runs, and how a
reader (the web console) gets it back.

The launcher reports a job's rusage and io only once, when the job is reaped; a console that
shows a running job's usage needs a series. The node (node.py) samples every running job every
USAGE_INTERVAL_S and appends one JSON line per job to `<attempts dir>/<job>.<attempt>.usage.jsonl`
(jobdir.usage_path: the one place the name is made), beside the attempt record and for the same
reason: the attempts directory is the grid's own (0700), so a user cannot forge or plant a file
there, and the file outlives the worker.

A sample holds cumulative counters, not rates, so a missed or late sample loses nothing:
    {"ts": Unix seconds, "cpu_s": user+system CPU seconds, "rss_bytes": resident memory now,
     "read_bytes": bytes read from storage, "write_bytes": bytes written to storage}
each null when it could not be read. `rates` turns them into per-interval points.

Where the numbers come from: the job's cgroup v2 when it has one (it holds every process of the
job, those that left its process tree included) — cpu.stat usage_usec, memory.stat anon (else
memory.current), io.stat rbytes/wbytes over all devices; else its first process in /proc — stat
utime+stime+cutime+cstime (its reaped children included), status VmRSS, io read_bytes and
write_bytes. A cgroup without the memory or io controller (a hybrid v1/v2 host) has no
memory.stat or io.stat: those fields then come from /proc as well.

Standard library only: node.py imports this inside Dask workers, which must not need the
master's modules. Parsers take file text, so tests can feed them fakes.
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from statgrid.host.procfs import PROCFS_PATH

FIELDS = ("cpu_s", "rss_bytes", "read_bytes", "write_bytes")
LINE_MAX_BYTES = 200       # a sample line is ~120 bytes; read_series reads this much per point wanted


# -- parsers: file text in, numbers out -------------------------------------------------------------------
# Field meanings: proc(5) and Documentation/admin-guide/cgroup-v2.rst in the kernel tree.

def parse_proc_stat_cpu_ticks(text: str) -> int:
    """/proc/<pid>/stat → utime+stime+cutime+cstime (fields 14-17), in clock ticks (SC_CLK_TCK).
    The command name (field 2) may hold spaces and parentheses: split after the last ')'."""
    rest = text[text.rindex(")") + 2:].split()
    return sum(int(rest[n - 3]) for n in (14, 15, 16, 17))


def parse_status_rss_bytes(text: str) -> int | None:
    """/proc/<pid>/status → VmRSS in bytes (the file says kB: KiB); None if absent (a zombie)."""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key == "VmRSS":
            number, _, unit = value.strip().partition(" ")
            return int(number) * (1024 if unit.strip() == "kB" else 1)
    return None


def parse_proc_io(text: str) -> tuple[int | None, int | None]:
    """/proc/<pid>/io → (read_bytes, write_bytes): what reached the storage layer. write_bytes less
    cancelled_write_bytes (pages truncated before they were written), as the launcher's IoCounters."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            values[key.strip()] = int(value)
    written = values.get("write_bytes")
    if written is not None:
        written = max(0, written - values.get("cancelled_write_bytes", 0))
    return values.get("read_bytes"), written


def _flat_keyed(text: str, key: str) -> int | None:
    """The value of `key` in a cgroup "flat keyed" file (lines of "key value")."""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return None


def parse_cpu_stat_usec(text: str) -> int | None:
    """cgroup cpu.stat → usage_usec: CPU time of every process in the cgroup, microseconds."""
    return _flat_keyed(text, "usage_usec")


def parse_memory_stat_anon_bytes(text: str) -> int | None:
    """cgroup memory.stat → anon: anonymous memory (heaps, stacks) of the cgroup, bytes — the
    closest to a resident set; page cache, which the kernel may drop, is left out."""
    return _flat_keyed(text, "anon")


def parse_memory_current_bytes(text: str) -> int | None:
    """cgroup memory.current → bytes charged to the cgroup (page cache included)."""
    text = text.strip()
    return int(text) if text else None


def parse_io_stat(text: str) -> tuple[int, int]:
    """cgroup io.stat → (rbytes, wbytes) summed over its devices ("MAJ:MIN rbytes=… wbytes=… …" lines)."""
    read_bytes = write_bytes = 0
    for line in text.splitlines():
        for field in line.split()[1:]:
            key, _, value = field.partition("=")
            if key == "rbytes":
                read_bytes += int(value)
            elif key == "wbytes":
                write_bytes += int(value)
    return read_bytes, write_bytes


# -- reading a job ----------------------------------------------------------------------------------------

def _read(path: str) -> str | None:
    """A small kernel file's text, or None if it cannot be read (absent, refused, gone)."""
    try:
        with open(path) as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _parsed(text: str | None, parse):
    if text is None:
        return None
    try:
        return parse(text)
    except (ValueError, IndexError):
        return None


def _cgroup_usage(cgroup: str) -> dict:
    """The FIELDS from a cgroup v2 directory (None for a file it lacks). Raises
    ProcessLookupError if the directory is gone: the launcher removes it once the job is reaped."""
    cpu_usec = _parsed(_read(os.path.join(cgroup, "cpu.stat")), parse_cpu_stat_usec)
    if cpu_usec is None and not os.path.isdir(cgroup):
        raise ProcessLookupError(f"cgroup {cgroup} is gone")
    rss_bytes = _parsed(_read(os.path.join(cgroup, "memory.stat")), parse_memory_stat_anon_bytes)
    if rss_bytes is None:
        rss_bytes = _parsed(_read(os.path.join(cgroup, "memory.current")), parse_memory_current_bytes)
    read_bytes, write_bytes = _parsed(_read(os.path.join(cgroup, "io.stat")), parse_io_stat) or (None, None)
    return {"cpu_s": None if cpu_usec is None else cpu_usec / 1e6, "rss_bytes": rss_bytes,
            "read_bytes": read_bytes, "write_bytes": write_bytes}


def _proc_usage(pid: int, procfs: str) -> dict:
    """The FIELDS from the job's first process in /proc (io may be refused: None). Raises
    ProcessLookupError if the process is gone."""
    base = os.path.join(procfs, str(pid))
    ticks = _parsed(_read(os.path.join(base, "stat")), parse_proc_stat_cpu_ticks)
    if ticks is None:
        raise ProcessLookupError(f"process {pid} is gone")
    read_bytes, write_bytes = _parsed(_read(os.path.join(base, "io")), parse_proc_io) or (None, None)
    return {"cpu_s": ticks / os.sysconf("SC_CLK_TCK"),
            "rss_bytes": _parsed(_read(os.path.join(base, "status")), parse_status_rss_bytes),
            "read_bytes": read_bytes, "write_bytes": write_bytes}


def sample(pid: int, cgroup: str | None, procfs: str = PROCFS_PATH) -> dict:
    """One sample of a running job (its first process `pid`, its cgroup v2 directory or None):
    {"ts", "cpu_s", "rss_bytes", "read_bytes", "write_bytes"}, a field None when it could not be
    read. Fields the cgroup lacks come from /proc. Raises ProcessLookupError if the job is gone."""
    ts = time.time()
    if cgroup is None:
        values = _proc_usage(pid, procfs)
    else:
        values = _cgroup_usage(cgroup)
        if any(values[k] is None for k in FIELDS):
            try:
                fallback = _proc_usage(pid, procfs)
            except ProcessLookupError:    # the first process ended; the cgroup's numbers stand
                fallback = {}
            values = {k: fallback.get(k) if values[k] is None else values[k] for k in FIELDS}
    return record(ts, **values)


def record(ts: float, cpu_s: float | None, rss_bytes: int | None, read_bytes: int | None,
           write_bytes: int | None) -> dict:
    """A sample as it is stored: ts to the millisecond, CPU to the microsecond, bytes whole."""
    return {"ts": round(ts, 3), "cpu_s": None if cpu_s is None else round(cpu_s, 6),
            "rss_bytes": _whole(rss_bytes), "read_bytes": _whole(read_bytes), "write_bytes": _whole(write_bytes)}


def _whole(n) -> int | None:
    return None if n is None else int(n)


def append(path: Path, sample_record: dict) -> None:
    """Append one sample as one line, in one write() (a reader never sees two lines mixed). The
    file is created 0600, never through a link."""
    fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, (json.dumps(sample_record, separators=(",", ":")) + "\n").encode())
    finally:
        os.close(fd)


# -- reading a series back --------------------------------------------------------------------------------

def read_series(path: str | Path, max_points: int = 600) -> list[dict]:
    """The last max_points samples of a usage file, oldest first; [] if there is none. Only its
    end is read (a long job's file may be large). A line the node is writing now (no newline yet),
    the partial first line of the end read, and lines that are not a sample are left out."""
    if max_points <= 0:
        return []
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return []
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - max_points * LINE_MAX_BYTES)
        data = os.pread(fd, size - start, start)
    finally:
        os.close(fd)
    lines = data.split(b"\n")[:-1]                 # the last piece has no newline: half written, or empty
    if start > 0 and lines:
        lines = lines[1:]                          # began mid-line
    samples = [s for s in map(_parse_line, lines) if s is not None]
    return samples[-max_points:]


def _parse_line(line: bytes) -> dict | None:
    try:
        s = json.loads(line)
    except ValueError:
        return None
    if not isinstance(s, dict) or not _is_number(s.get("ts")):
        return None
    return {"ts": s["ts"], **{k: s.get(k) if _is_number(s.get(k)) else None for k in FIELDS}}


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def rates(samples: list[dict]) -> list[dict]:
    """Cumulative samples → one point per interval between consecutive samples:
    {"ts": the interval's end, "cpu_cores": CPU seconds per second (2.0: two cores busy),
     "rss_bytes": resident memory at its end, "read_bytes_per_s", "write_bytes_per_s"}.
    A counter that went down (a reset: e.g. the last sample, from wait4 and /proc io, counts a
    little differently from the cgroup's) gives null; a sample no later than the one before is
    skipped."""
    points: list[dict] = []
    prev = None
    for cur in samples:
        if prev is not None:
            dt_s = cur["ts"] - prev["ts"]
            if dt_s <= 0:
                continue
            points.append({"ts": cur["ts"], "cpu_cores": _rate(prev, cur, "cpu_s", dt_s, 3),
                           "rss_bytes": cur.get("rss_bytes"),
                           "read_bytes_per_s": _rate(prev, cur, "read_bytes", dt_s, 0),
                           "write_bytes_per_s": _rate(prev, cur, "write_bytes", dt_s, 0)})
        prev = cur
    return points


def _rate(prev: dict, cur: dict, key: str, dt_s: float, digits: int) -> float | int | None:
    a, b = prev.get(key), cur.get(key)
    if a is None or b is None or b < a:
        return None
    value = round((b - a) / dt_s, digits)
    return int(value) if digits == 0 else value


def final_record(exited) -> dict | None:
    """The job's totals when it was reaped (a protocol.LaunchExited, or None when the launcher did
    not report the end): wait4's CPU and the /proc io counters; no memory (it has none left)."""
    if exited is None:
        return None
    io = exited.io
    return record(time.time(), exited.rusage.user_cpu_s + exited.rusage.sys_cpu_s, None,
                  io.read_bytes if io is not None else None, io.write_bytes if io is not None else None)


# -- the node's sampler ---------------------------------------------------------------------------------------

class Sampler:
    """One thread per worker process, however many jobs run there (a thread per job would multiply
    with the slots), appending a sample of each running job to its usage file every interval_s.
    It reads kernel files without the node's lock: the launcher's start holds that lock while it
    waits for the launcher, and sampling must not wait for it (nor a job start for a slow read).

    running: task key → the job's start record (pid, cgroup, job_id), the node's own dict;
    paths: task key → its usage file, set by the node when the job starts, removed by end()."""

    def __init__(self, running: dict, interval_s: float, logger):
        self.running = running
        self.interval_s = interval_s
        self.paths: dict[str, Path] = {}
        self.log = logger
        self._lock = threading.Lock()              # held to append a sample: none follows a job's last
        self._start_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the sampler thread, once."""
        with self._start_lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._loop, name="statgrid-usage", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        next_s = time.monotonic()
        while True:
            next_s += self.interval_s
            time.sleep(max(0.0, next_s - time.monotonic()))
            if time.monotonic() - next_s > self.interval_s:
                next_s = time.monotonic()          # a tick late (a stalled host): no burst to catch up
            try:
                self.sample_running()
            except Exception:                      # noqa: BLE001 — the sampler must outlive any surprise
                self.log.debug("usage sampler", exc_info=True)

    def sample_running(self) -> None:
        """Append one usage sample of every job running here to its usage file. A job that ended
        meanwhile is skipped; so is one whose file cannot be written (the debug log says why)."""
        for key, info in list(self.running.items()):
            path = self.paths.get(key)
            if path is None:
                continue
            try:
                point = sample(info.pid, info.cgroup)
            except ProcessLookupError:
                continue
            except Exception:                      # noqa: BLE001
                self.log.debug("usage sample of job %s", info.job_id, exc_info=True)
                continue
            with self._lock:                       # still running here (see end)
                if self.paths.get(key) == path:
                    self._write(path, point)

    def end(self, key: str, final: dict | None) -> None:
        """Forget the job's usage file, after appending its final sample if there is one. Under
        the lock: a sample read before the job ended never lands after this."""
        with self._lock:
            path = self.paths.pop(key, None)
            if path is not None and final is not None:
                self._write(path, final)

    def _write(self, path: Path, point: dict) -> None:
        try:
            append(path, point)
        except OSError as exc:
            self.log.debug("usage file %s: %s", path, exc)
