"""Shared helpers for the statgrid benchmarks: run statistics, formatting, process probes.

Memory is read with statgrid's own /proc readers (the ones STIMER uses), applied alike to
statgrid and to its baselines. Linux only (/proc).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import statistics
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from statgrid.bench.mixed import free_port  # noqa: F401 — for the benchmarks
from statgrid.host import procfs as _procfs

GIB = 1024 ** 3


# ---------------------------------------------------------------------------- statistics
@dataclass(frozen=True)
class Summary:
    median: float
    min: float
    max: float
    n: int


def summarize(values: Sequence[float | None]) -> Summary | None:
    """median/min/max over the values that are not None (None: a run that did not happen)."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return Summary(statistics.median(vals), min(vals), max(vals), len(vals))


def fmt_num(v: float, digits: int | None = None) -> str:
    if digits is not None:
        return f"{v:.{digits}f}"
    return f"{v:.3f}" if abs(v) < 1 else f"{v:.2f}"


def fmt_stat(values: Sequence[float | None], digits: int | None = None) -> str:
    """'1.02 (0.99 … 1.04, 3 runs)'; a single value prints without spread; no values: '—'."""
    s = summarize(values)
    if s is None:
        return "—"
    if s.n == 1:
        return fmt_num(s.median, digits)
    return f"{fmt_num(s.median, digits)} ({fmt_num(s.min, digits)} … {fmt_num(s.max, digits)}, {s.n} runs)"


def stat_dict(values: Sequence[float | None]) -> dict | None:
    s = summarize(values)
    return None if s is None else {"median": s.median, "min": s.min, "max": s.max, "n": s.n}


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "—"
    for unit, size in (("GiB", GIB), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0 … 1) by linear interpolation between order statistics."""
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def rotated(items: Sequence, r: int) -> list:
    """Run r's order: A B C D, then B C D A, … so drift hits every side alike."""
    if not items:
        return []
    k = r % len(items)
    return list(items[k:]) + list(items[:k])


def render_rows(rows: Sequence[Sequence[str]], indent: str = "  ") -> str:
    """Left-aligned columns, two spaces apart."""
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(len(r) for r in rows))]
    return "\n".join(indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


# ---------------------------------------------------------------------------- process probes
# statgrid's own /proc readers (statgrid.host.procfs), so the benchmark measures memory
# exactly as STIMER does
def rss_bytes() -> int | None:
    return _procfs.read_status_memory().get("VmRSS")


def hwm_bytes() -> int | None:
    return _procfs.read_status_memory().get("VmHWM")


reset_hwm = _procfs.reset_hwm


def mem_available_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


_libc = None


def clean_process_state() -> None:
    """Between sides: collect garbage and hand freed heap back to the OS, so one side's
    leftovers do not inflate the next side's memory or page-fault counts."""
    global _libc
    gc.collect()
    try:
        import pyarrow as pa
        pa.default_memory_pool().release_unused()
    except Exception:   # noqa: BLE001 — best effort
        pass
    try:
        if _libc is None:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _libc.malloc_trim(0)
    except Exception:   # noqa: BLE001 — not glibc
        pass


def dir_usage(path: str | os.PathLike) -> tuple[int, int]:
    """(apparent bytes, allocated bytes) of all files under `path`; files vanishing mid-walk
    are skipped (the engine deletes spill files while we look)."""
    apparent = allocated = 0
    stack = [str(path)]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    else:
                        st = e.stat(follow_symlinks=False)
                        apparent += st.st_size
                        allocated += st.st_blocks * 512
                except OSError:
                    continue
    return apparent, allocated


class Poller:
    """Poll a spill directory's size (and this process's RSS) every `interval_s` in a thread.

    Peak spill is reported as the larger of apparent and allocated size (sparse or
    preallocated temp files make either one misleading alone).
    """

    def __init__(self, spill_dir: str | os.PathLike | None, interval_s: float = 0.05):
        self.spill_dir = Path(spill_dir) if spill_dir else None
        self.interval_s = interval_s
        self.peak_spill = 0
        self.peak_rss = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="spill-poller", daemon=True)

    def _sample(self) -> None:
        if self.spill_dir is not None:
            apparent, allocated = dir_usage(self.spill_dir)
            self.peak_spill = max(self.peak_spill, apparent, allocated)
        self.peak_rss = max(self.peak_rss, rss_bytes() or 0)
        self.samples += 1

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval_s)

    def __enter__(self) -> "Poller":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def cpu_seconds() -> float:
    """User + system CPU of this process, all threads, to the nanosecond (CLOCK_PROCESS_CPUTIME_ID;
    os.times() counts in clock ticks of 10 ms, 7 % of a 0.14 s step)."""
    return time.process_time()


def timed(fn, *args, **kwargs):
    """(result, wall seconds by perf_counter, cpu seconds)."""
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    t1 = time.perf_counter()
    return result, t1 - t0, cpu_seconds() - c0


def private_home(parent: Path, memsize: str, threads: int):
    """A statgrid home of its own under `parent` (WORK, UTIL and data there, and an explicit grid.toml so
    no other one is picked up), made STATGRID_HOME; returns its config and the session options."""
    home = parent / "sghome"
    home.mkdir()
    (home / "grid.toml").write_text('[libraries]\ndata = "data"\nwork = "work"\nutil = "util"\n')
    os.environ["STATGRID_HOME"] = str(home)
    from statgrid.config import load_config

    cfg = load_config(home / "grid.toml")
    return cfg, cfg.session.with_overrides({"memsize": memsize, "threads": str(threads)})


def print_times(title: str, times: dict[str, list[float]], width: int, digits: int | None = None) -> int:
    """The title, then a line per side: its name (`width` wide) and its times' statistics; returns 0."""
    print(title)
    for name, values in times.items():
        print(f"  {name:<{width}} {fmt_stat(values, digits)}")
    return 0
