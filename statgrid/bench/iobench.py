"""The raw I/O test (seed 000 Table 2: ndisk64/gpfsperf — N threads per node, each on its own
file, 1 MiB blocks, 100 % read, 50/50, 100 % write), on one node.

Measurement rules (DESIGN.md, "I/O measurement"):
- O_DIRECT goes through page-aligned buffers (an anonymous mmap): misaligned buffers fail or
  halve throughput.
- Buffered reads would measure the page cache: after laying the files out, each file's pages
  are dropped with posix_fadvise(DONTNEED) (no root needed), so reads come from the device.
- Buffered writes without --fsync measure the page cache; the caller warns. With fsync, each
  thread's time includes its final fsync (fio's end_fsync=1).
- Each thread times every request (perf_counter_ns around preadv/pwrite, which release the
  GIL); bandwidth is bytes over the thread's wall time, summed over threads.
Files are removed at the end, also on error or Ctrl-C.

Two ways to end a run (ndisk64 has both, seed 000 Appendix: `-s 32768M` and `-t 120`):
- size mode (default): each thread moves its region (--size-per-thread) once;
- time mode (`duration_s`, ndisk64's -t, fio's time_based + runtime): each thread passes over its
  region again and again — writes wrap around to its start, reads loop — until duration_s is up;
  the request under way when the time runs out is the last one. Buffered runs drop the region's
  cached pages at each wrap (as fio's invalidate does each loop), so later passes read the device.
- Buffered runs tell the kernel the pattern (fadvise RANDOM / SEQUENTIAL, fio's fadvise_hint):
  random requests get no readahead.
A region is a thread's own file, or with a raw device (bench/iobench_device.py) its own slice of
the device: thread i at offset i × size_per_thread_bytes.
"""
from __future__ import annotations

import itertools
import mmap
import os
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from statgrid.errors import StatgridError, UsageError

MODES = ("read", "write", "rw")
PATTERNS = ("seq", "rand")


def read_pct(mode: str, rwmixread: int) -> int:
    """The share of requests that are reads, in %: 100 for read, 0 for write, rwmixread for rw."""
    return {"read": 100, "write": 0}.get(mode, rwmixread)


@dataclass(frozen=True)
class IOSpec:
    dir: Path
    mode: str = "write"
    rwmixread: int = 50
    pattern: str = "seq"
    bs_bytes: int = 1 << 20
    threads: int = 1
    size_per_thread_bytes: int = 1 << 30
    direct: bool = False
    fsync: bool = False
    runs: int = 3
    seed: int = 1
    duration_s: float | None = None     # time mode: each run lasts this long (None: size mode)
    device: Path | None = None          # a raw block device instead of files in dir (always O_DIRECT)
    destructive: bool = False           # with device: writes allowed (they destroy what it holds)

    @property
    def run_mode(self) -> str:
        """'time' (each run lasts duration_s) or 'size' (each thread moves its region once)."""
        return "size" if self.duration_s is None else "time"

    @property
    def target(self) -> Path:
        """Where the I/O goes: the device, or the directory of the files."""
        return self.device if self.device is not None else self.dir

    def check(self) -> None:
        if self.mode not in MODES:
            raise UsageError(f"--mode {self.mode!r} is not one of {', '.join(MODES)}.")
        if self.pattern not in PATTERNS:
            raise UsageError(f"--pattern {self.pattern!r} is not one of {', '.join(PATTERNS)}.")
        if not 0 <= self.rwmixread <= 100:
            raise UsageError(f"--rwmixread {self.rwmixread} is not a percentage (0–100).")
        if self.threads < 1:
            raise UsageError(f"--threads {self.threads} is not allowed: use 1 or more.")
        if self.runs < 1:
            raise UsageError(f"--runs {self.runs} is not allowed: use 1 or more.")
        if self.bs_bytes < 512 or (self.direct and self.bs_bytes % 4096):
            raise UsageError(f"--bs {self.bs_bytes} bytes: use at least 512 bytes, and a multiple of 4 KiB with "
                             "--direct (O_DIRECT needs aligned requests), e.g. --bs 1M.")
        if self.size_per_thread_bytes < self.bs_bytes:
            raise UsageError(f"--size-per-thread ({self.size_per_thread_bytes} bytes) is smaller than --bs "
                             f"({self.bs_bytes} bytes); give at least one block per thread.")
        if self.duration_s is not None and not self.duration_s > 0:
            raise UsageError(f"--time {self.duration_s!r} s is not allowed: give a positive duration such as 30s.")
        if self.device is not None:
            if not self.direct:
                raise UsageError("a raw --device is read and written with O_DIRECT only: add --direct.")
            return                                  # the device itself: iobench_device.open_device, region_bytes
        if self.destructive:
            raise UsageError("--destructive applies to a raw --device only; files in --dir need no such flag.")
        if not self.dir.is_dir():
            raise UsageError(f"--dir {str(self.dir)!r} is not a directory; create it or choose another.")
        if not os.access(self.dir, os.W_OK):
            raise UsageError(f"--dir {str(self.dir)!r} is not writable by this user.")


@dataclass
class Direction:
    """One direction (read or write) of one thread or one node."""

    io_bytes: int = 0
    runtime_ns: int = 0
    lat_ns: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))


@dataclass
class NodeRun:
    """One run on one node: per direction, bytes and latencies of all threads; wall time."""

    node: str
    run: int
    wall_ns: int
    read: Direction
    write: Direction


def thread_files(spec: IOSpec, node: str) -> list[Path]:
    return [spec.dir / f"sgio.{node}.{os.getpid()}.{i}.dat" for i in range(spec.threads)]


def _open(path: Path, spec: IOSpec, write: bool, create: bool = False) -> int:
    flags = os.O_RDWR if write else os.O_RDONLY
    if create and spec.device is None:
        flags |= os.O_CREAT
    if spec.direct:
        flags |= os.O_DIRECT
    try:
        return os.open(path, flags, 0o600)
    except OSError as exc:
        if spec.direct and exc.errno == 22:
            raise UsageError(f"{str(spec.target)!r} does not support O_DIRECT (e.g. tmpfs); run without --direct "
                             "or choose another --dir.") from None
        raise


def _data_buffer(size: int) -> mmap.mmap:
    """A page-aligned (O_DIRECT-safe) buffer of random bytes to write."""
    buf = mmap.mmap(-1, size)
    buf.write(os.urandom(min(size, 1 << 20)) * max(1, size // (1 << 20)))
    return buf


def layout(spec: IOSpec, files: list[Path]) -> None:
    """Write every file once in full (reads and mixed runs need data), fsync, drop its cache."""
    buf = _data_buffer(spec.bs_bytes)

    def one(path: Path) -> None:
        fd = _open(path, spec, write=True, create=True)
        try:
            for off in range(0, spec.size_per_thread_bytes - spec.bs_bytes + 1, spec.bs_bytes):
                if _stop.is_set():
                    raise Interrupted()
                os.pwrite(fd, buf, off)
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)

    _in_threads([lambda p=p: one(p) for p in files])


def drop_cache(files: list[Path]) -> None:
    for path in files:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


_stop = threading.Event()                 # set on Ctrl-C/SIGTERM: every I/O loop ends at its next request


def _in_threads(fns) -> None:
    errors: list[BaseException] = []

    def wrap(fn):
        try:
            fn()
        except BaseException as exc:          # noqa: BLE001 — re-raised in the caller
            errors.append(exc)

    threads = [threading.Thread(target=wrap, args=(fn,), daemon=True) for fn in fns]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.2)                   # short joins: Ctrl-C reaches the main thread at once
    except BaseException:
        _stop.set()                           # the threads stop at their next request; then files go
        for t in threads:
            t.join()
        raise
    if errors:
        raise errors[0]


class Interrupted(Exception):
    pass


def request_plan(n_blocks: int, pattern: str, reads_pct: int, seed: int) -> Iterator[tuple[list[int], list[bool]]]:
    """A thread's passes over its region, endless: per pass (block numbers, is-a-read per request),
    n_blocks requests each. Size mode takes one pass, time mode as many as its time allows.

    seq: reads and writes each keep their own position, as fio does, so readahead and write-back
    see sequential I/O; a position that reaches the region's end wraps to block 0 (in a mix, the
    next pass goes on where the last one stopped). rand: one shuffled order of all blocks, every
    pass the same (no reshuffle inside the timed loop); the kinds repeat each pass too, so every
    pass has the same read share."""
    rng = random.Random(seed)
    kinds = ([rng.randrange(100) < reads_pct for _ in range(n_blocks)] if 0 < reads_pct < 100
             else [reads_pct == 100] * n_blocks)
    if pattern == "rand":
        blocks = list(range(n_blocks))
        rng.shuffle(blocks)
        while True:
            yield blocks, kinds
    if reads_pct in (0, 100):
        blocks = list(range(n_blocks))                   # one direction: every pass is 0 … n-1
        while True:
            yield blocks, kinds
    pos = {True: 0, False: 0}
    while True:
        blocks = []
        for is_read in kinds:
            blocks.append(pos[is_read])
            pos[is_read] = (pos[is_read] + 1) % n_blocks
        yield blocks, kinds


@dataclass
class Moved:
    """What one thread's request loop did: bytes per direction; per request its latency (ns) and
    whether it was a read, in the order issued (kept per pass as the loop left them, joined on
    first use: after the thread's clock has stopped)."""

    read_bytes: int
    write_bytes: int
    lat_parts: list[np.ndarray]
    kind_parts: list[list[bool]]

    @property
    def lat_ns(self) -> np.ndarray:
        return np.concatenate(self.lat_parts)

    @property
    def is_read(self) -> np.ndarray:
        n = sum(len(k) for k in self.kind_parts)
        return np.fromiter(itertools.chain.from_iterable(self.kind_parts), dtype=bool, count=n)


FOREVER_NS = 1 << 62


def request_loop(plans: Iterator[tuple[list[int], list[bool]]], fd: int, view, bs: int, base_bytes: int,
                 deadline_ns: int | None, clock=time.perf_counter_ns, pread=os.preadv, pwrite=os.pwrite,
                 stop: threading.Event | None = None, between_passes=None) -> Moved:
    """Issue the plan's requests at base_bytes + block × bs: one pass (deadline_ns None: size mode),
    or pass after pass until a request ends at or after deadline_ns on `clock` (time mode), calling
    between_passes() (if given) before each pass after the first. clock/pread/pwrite are parameters
    so the loop logic is testable without a disk or a real clock."""
    stop = _stop if stop is None else stop
    end = FOREVER_NS if deadline_ns is None else deadline_ns
    lats, kinds_done = [], []
    read_bytes = write_bytes = 0
    timed_out = False
    for p, (blocks, kinds) in enumerate(plans):
        if p and between_passes is not None:
            between_passes()
        n = len(blocks)
        lat = np.empty(n, dtype=np.int64)
        done = n
        for i in range(n):
            if stop.is_set():
                raise Interrupted()
            off = base_bytes + blocks[i] * bs
            a = clock()
            if kinds[i]:
                read_bytes += pread(fd, [view], off)
            else:
                write_bytes += pwrite(fd, view, off)
            b = clock()
            lat[i] = b - a
            if b >= end:
                done, timed_out = i + 1, True
                break
        lats.append(lat[:done])
        kinds_done.append(kinds[:done] if done < n else kinds)
        if deadline_ns is None or timed_out:
            break
    return Moved(read_bytes, write_bytes, lats, kinds_done)


def _thread_io(spec: IOSpec, path: Path, base_bytes: int, seed: int, out: dict, start: threading.Barrier) -> None:
    n_blocks = spec.size_per_thread_bytes // spec.bs_bytes
    reads_wanted = read_pct(spec.mode, spec.rwmixread)
    plans = request_plan(n_blocks, spec.pattern, reads_wanted, seed)
    # the first pass is built before the clock starts (a mix draws a random number per block)
    plans = itertools.chain((next(plans),), plans)
    buf = view = None
    fd = -1
    clock = time.perf_counter_ns
    try:
        buf = _data_buffer(spec.bs_bytes) if reads_wanted < 100 else mmap.mmap(-1, spec.bs_bytes)
        view = memoryview(buf)
        fd = _open(path, spec, write=reads_wanted < 100, create=spec.mode == "write")
        if not spec.direct:
            # tell the kernel the access pattern, as fio does (fadvise_hint=1): no readahead for
            # random requests, which would read — and cache — more than the request asked for
            os.posix_fadvise(fd, base_bytes, spec.size_per_thread_bytes,
                             os.POSIX_FADV_RANDOM if spec.pattern == "rand" else os.POSIX_FADV_SEQUENTIAL)
        start.wait(timeout=600)
        t0 = clock()
        deadline = None if spec.duration_s is None else t0 + int(spec.duration_s * 1e9)
        # Buffered time mode: the next pass would read the pages this one brought in (memory, not
        # the device), so they are dropped at each wrap, as fio's invalidate=1 does every time it
        # loops over a file (measured: without it a 256M file read at 2.4× fio's MB/s).
        drop = None if spec.direct else lambda: os.posix_fadvise(fd, base_bytes, spec.size_per_thread_bytes,
                                                                 os.POSIX_FADV_DONTNEED)
        moved = request_loop(plans, fd, view, spec.bs_bytes, base_bytes, deadline, clock, between_passes=drop)
        if spec.fsync and moved.write_bytes:
            os.fsync(fd)
        wall = clock() - t0
    except BaseException:
        start.abort()                                   # the other threads must not wait for this one
        raise
    finally:
        if fd >= 0:
            os.close(fd)
        if view is not None:
            view.release()
        if buf is not None:
            buf.close()
    lat, is_read = moved.lat_ns, moved.is_read
    out.update(read_bytes=moved.read_bytes, write_bytes=moved.write_bytes, wall_ns=wall,
               read_lat=lat[is_read], write_lat=lat[~is_read])


def run_node(spec: IOSpec, node: str, before_run=None, progress=None) -> list[NodeRun]:
    """All runs of the spec on this node; files are removed at the end in every case.
    before_run(run) is called right before each timed run (the grid's cross-node barrier)."""
    spec.check()
    _stop.clear()
    if spec.device is not None:
        from statgrid.bench.iobench_device import claim

        # threads share the device, each on its own slice; a write run holds an exclusive claim
        # on it meanwhile (nothing can mount it under us)
        files, bases, guard = [spec.device] * spec.threads, [i * spec.size_per_thread_bytes
                                                             for i in range(spec.threads)], claim(spec)
    else:
        files, bases, guard = thread_files(spec, node), [0] * spec.threads, None
    results: list[NodeRun] = []
    try:
        if spec.mode != "write" and spec.device is None:
            layout(spec, files)
        for run in range(1, spec.runs + 1):
            if not spec.direct:
                # reads start from the device, and the last run's dirty pages are not this run's
                drop_cache(files)
            if before_run is not None:
                before_run(run)
            outs = [dict() for _ in files]
            barrier = threading.Barrier(len(files))
            t0 = time.perf_counter_ns()
            _in_threads([lambda p=p, o=o, i=i: _thread_io(spec, p, bases[i], spec.seed * 1000 + run * 100 + i, o,
                                                          barrier)
                         for i, (p, o) in enumerate(zip(files, outs))])
            wall = time.perf_counter_ns() - t0
            rd = Direction(sum(o["read_bytes"] for o in outs), max(o["wall_ns"] for o in outs),
                           np.concatenate([o["read_lat"] for o in outs]))
            wr = Direction(sum(o["write_bytes"] for o in outs), max(o["wall_ns"] for o in outs),
                           np.concatenate([o["write_lat"] for o in outs]))
            results.append(NodeRun(node, run, wall, rd, wr))
            if progress is not None:
                progress(results[-1])
    finally:
        if guard is not None:
            os.close(guard)
        for f in files if spec.device is None else []:
            try:
                f.unlink()
            except FileNotFoundError:
                pass
    return results


# -- a node's results on disk (grid mode: each node's job writes them, the submitter reads) --------
def save_runs(path: Path, runs: list[NodeRun]) -> None:
    arrays = {}
    for r in runs:
        arrays[f"r{r.run}_read_lat"] = r.read.lat_ns
        arrays[f"r{r.run}_write_lat"] = r.write.lat_ns
        arrays[f"r{r.run}_scalars"] = np.array([r.wall_ns, r.read.io_bytes, r.read.runtime_ns,
                                                r.write.io_bytes, r.write.runtime_ns], dtype=np.int64)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, node=np.array(runs[0].node if runs else ""), **arrays)
    os.replace(tmp, path)


def load_runs(path: Path) -> list[NodeRun]:
    with np.load(path) as z:
        node = str(z["node"])
        n = len([k for k in z.files if k.endswith("_scalars")])
        out = []
        for run in range(1, n + 1):
            wall, rb, rt, wb, wt = (int(x) for x in z[f"r{run}_scalars"])
            out.append(NodeRun(node, run, wall, Direction(rb, rt, z[f"r{run}_read_lat"]),
                               Direction(wb, wt, z[f"r{run}_write_lat"])))
    return out


def file_barrier(directory: Path, node: str, n_nodes: int, timeout_s: float = 600.0):
    """before_run hook: every node waits at each run until all n_nodes have arrived, so the
    timed runs overlap as in gpfsperf (files on the grid's shared file system)."""
    def wait(run: int) -> None:
        (directory / f"ready-{run}-{node}").touch()
        deadline = time.monotonic() + timeout_s
        while len(list(directory.glob(f"ready-{run}-*"))) < n_nodes:
            if _stop.is_set():
                raise Interrupted()
            failed = sorted(p.name.split("-", 1)[1] for p in directory.glob("failed-*"))
            if failed or time.monotonic() > deadline:
                arrived = sorted(p.name.split("-", 2)[2] for p in directory.glob(f"ready-{run}-*"))
                raise StatgridError(f"iobench run {run}: node(s) {', '.join(failed) or '?'} failed; arrived: "
                                    f"{', '.join(arrived)} of {n_nodes} (see their job output).")
            time.sleep(0.005)
    return wait


def mark_failed(directory: Path, node: str) -> None:
    """Tell the other nodes at the barrier that this one will not come."""
    (directory / f"failed-{node}").touch()


# -- grid mode: which hosts, in which queue, and whether they can all run at once ----------------


def grid_nodes(cfg, nodes: str, queue: str, hosts: list[dict], mine: list[dict]) -> tuple[str, list[str]]:
    """Check, before any job is submitted, that one iobench job per node can start at once in the
    queue; return (queue name, chosen hosts). The jobs wait for each other at a barrier, so one
    that cannot start would hold the others there (issue 14 item 8: user_limit = 1 left one job
    spinning while the rest stayed PEND).

    nodes: 'all' (every up, open host the queue may use) or 'node1,node2'; queue: '' = the default.
    hosts: the master's host rows (host, state, slots, running); mine: this user's RUN and PEND
    job rows (queue). Raises UsageError for what grid.toml or the options decide, StatgridError
    for what is busy now."""
    from statgrid.grid.master.jobspec import default_queue
    from statgrid.grid.scheduling.policy import RUNNABLE_STATES, host_weights

    name = queue or default_queue(cfg)
    if name not in cfg.queues:
        raise UsageError(f"-q/--queue {name!r} does not exist; queues: {', '.join(cfg.queues)} (see "
                         "`statgrid queues`).")
    rows = {h["host"]: h for h in hosts}
    usable = host_weights(cfg.queues[name], rows)
    if nodes == "all":
        chosen = [h for h in rows if h in usable and rows[h]["state"] in RUNNABLE_STATES]
        if not chosen:
            raise StatgridError(f"no host of queue {name!r} is up and open; see `statgrid hosts`, or choose "
                                "another queue with -q QUEUE.")
    else:
        chosen = list(dict.fromkeys(n.strip() for n in nodes.split(",") if n.strip()))
        if not chosen:
            raise UsageError(f"--nodes {nodes!r} names no host; give 'all' or host names like node1,node2.")
    for n in chosen:
        if n not in rows:
            raise UsageError(f"--nodes: host {n!r} does not exist; hosts: {', '.join(rows)}.")
        if rows[n]["state"] not in RUNNABLE_STATES:
            raise UsageError(f"--nodes: host {n!r} is {rows[n]['state']}; choose hosts that are up and open.")
        if n not in usable:
            raise UsageError(f"--nodes: host {n!r} is not used by queue {name!r} (its hosts: "
                             f"{', '.join(usable)}); choose those hosts, or another queue with -q QUEUE.")
    limit = cfg.queues[name].user_limit
    if limit and limit < len(chosen):
        others = [q for q, c in cfg.queues.items() if q != name and (not c.user_limit or c.user_limit >= len(chosen))
                  and set(chosen) <= set(host_weights(c, rows))]
        hint = f" e.g. -q {others[0]}" if others else " (add one to grid.toml: a [queues.*] without user_limit)"
        raise UsageError(f"queue {name!r} has user_limit = {limit}: at most {limit} of your jobs run there at once, "
                         f"but iobench on {len(chosen)} nodes needs {len(chosen)} jobs running together (they wait "
                         f"for each other); run it in a queue whose limit allows that with -q QUEUE,{hint}.")
    ahead = sum(1 for j in mine if j.get("queue") == name)
    if limit and ahead + len(chosen) > limit:
        raise StatgridError(f"queue {name!r} has user_limit = {limit} and you have {ahead} job(s) running or pending "
                            f"there: the {len(chosen)} iobench jobs could not all start at once; wait for those "
                            "to end, or use another queue with -q QUEUE.")
    full = [f"{n} ({rows[n]['running']} of {rows[n]['slots']} slots running)" for n in chosen
            if rows[n]["running"] >= rows[n]["slots"]]
    if full:
        raise StatgridError(f"--nodes: no free slot on {', '.join(full)}: iobench needs one slot on every node at "
                            "once; wait for their jobs to end, or leave those hosts out of --nodes.")
    return name, chosen
