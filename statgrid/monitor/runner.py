"""Running the sampler: on a fixed schedule (no drift), until a duration, a signal, or — when a
grid node started it — the end of its stdin (the worker is gone). A sample that fails is
logged and skipped; the monitor keeps running (glances' rule for a failing plugin).

    python -m statgrid.monitor --host node1 --out DIR [--interval 1] [--duration 60] [--stdin-liveness]
                               [--library NAME=PATH ...] [--sources block,nfs,gpfs,process]
"""
from __future__ import annotations

import argparse
import importlib.abc
import logging
import os
import select
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Callable, Mapping

from statgrid.monitor import _linux, libio
from statgrid.monitor.sampler import Sampler
from statgrid.monitor.store import MonitorWriter, write_machine

log = logging.getLogger("statgrid.monitor")


def run(host: str, out_dir: Path, libraries: Mapping[str, Path | str], interval_s: float = 1.0,
        duration_s: float | None = None, echo: Callable[[dict], None] | None = None,
        stdin_liveness: bool = False, procfs: str | None = None, flush_every: int = 60,
        sysfs: str | None = None, warn: Callable[[str], None] | None = None,
        sources: tuple[str, ...] = libio.SOURCES) -> int:
    """Sample until stopped; returns the number of samples written. `warn` gets one line per
    library whose I/O cannot be measured here or is measured from the jobs' own I/O (default: the
    log). A monitor a node started (stdin_liveness) knows the node's jobs: the children of its
    siblings (libio.node_job_parents)."""
    sampler = Sampler(host, libraries, procfs, sysfs, sources,
                      libio.node_job_parents(procfs) if stdin_liveness else None)
    for lib in sampler.libraries:
        note = lib.unmeasured_note()
        if note and lib.source == "process" and not stdin_liveness:
            note += ("; this monitor was not started by a grid node, so it knows no jobs and those rows stay empty "
                     "(the node's own monitor fills them)")
        if note:
            (warn or log.warning)(note)
    writer = MonitorWriter(out_dir, host, flush_every)
    write_machine(out_dir, host, {"machine_id": machine_id(procfs), "hostname": socket.gethostname(),
                                  "cpus": os.cpu_count()})
    stop = False

    def on_signal(signum, frame):
        nonlocal stop
        stop = True

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    start = time.monotonic()
    next_t = start
    n = 0
    try:
        sampler.sample()                                 # prime the counters
        while not stop:
            next_t += interval_s
            if duration_s is not None and next_t - start > duration_s + 1e-6:
                break
            if _sleep_until(next_t, stdin_liveness):
                break                                    # the worker that started us is gone
            try:
                rows = sampler.sample()
                if rows:
                    writer.append(rows)
                    n += 1
                    if echo:
                        echo(rows)
            except Exception as exc:                     # noqa: BLE001 — one bad sample must not stop monitoring
                log.warning("sample failed: %r", exc)
            if time.monotonic() > next_t + interval_s:   # fell behind (suspended, overloaded): re-anchor
                next_t = time.monotonic()
    finally:
        writer.flush()
        for s, h in old.items():
            signal.signal(s, h)
    return n


def machine_id(procfs: str | None = None) -> str | None:
    """The kernel's boot id: one per running kernel, so hosts (processes, containers) that share
    it share /proc/stat and /proc/diskstats."""
    try:
        return _linux.read("sys/kernel/random/boot_id", procfs).strip() or None
    except OSError:
        return None


def _sleep_until(t: float, stdin_liveness: bool) -> bool:
    """Sleep until monotonic time t; True if stdin reached EOF meanwhile."""
    while True:
        left = t - time.monotonic()
        if left <= 0:
            return False
        if not stdin_liveness:
            time.sleep(left)
            continue
        try:
            ready, _, _ = select.select([sys.stdin], [], [], left)
        except InterruptedError:
            continue
        if ready and not os.read(sys.stdin.fileno(), 4096):
            return True


class _NoPandas(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("the monitor process does not load pandas", name=name)
        return None


def main(argv: list[str] | None = None) -> int:
    # This process never needs pandas, but pyarrow's pandas shim imports it at the first
    # conversion of Python values (0.4 s of CPU and ~40 MiB per node monitor, measured): let
    # pyarrow find it missing.
    sys.meta_path.insert(0, _NoPandas())
    ap = argparse.ArgumentParser(prog="python -m statgrid.monitor")
    ap.add_argument("--host", default=socket.gethostname())
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--duration", type=float, default=None)
    ap.add_argument("--library", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--stdin-liveness", action="store_true", help="stop when stdin closes (started by a node)")
    ap.add_argument("--sources", default=",".join(libio.SOURCES),
                    help="library I/O sources, comma-separated (default: all; 'block' is the monitor before the others)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    bad = [spec for spec in args.library if "=" not in spec]
    if bad:
        ap.error(f"--library {bad[0]!r} is not NAME=PATH, e.g. --library data=/gpfs/sasdata")
    sources = tuple(s for s in args.sources.split(",") if s)
    bad = [s for s in sources if s not in libio.SOURCES]
    if bad:
        ap.error(f"--sources {args.sources!r}: {bad[0]!r} is not one of {', '.join(libio.SOURCES)}, "
                 "e.g. --sources block,nfs")
    libraries = dict(spec.split("=", 1) for spec in args.library)
    run(args.host, args.out, libraries, args.interval, args.duration, stdin_liveness=args.stdin_liveness,
        sources=sources)
    return 0
