"""`statgrid iobench`: the raw I/O test here, or on grid hosts at once (bench/iobench_grid.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from statgrid.cli.common import config, fail
from statgrid.errors import StatgridError, UsageError


DEFAULT_SIZE_PER_THREAD_BYTES = 8 << 30        # 8G per thread, as in the papers (seed 000 Table 2)


# -- the I/O benchmark ------------------------------------------------------------------------------
def iobench(ctx: typer.Context,
            directory: Optional[Path] = typer.Option(None, "--dir", help="Directory for the test files."),
            library: Optional[str] = typer.Option(None, "--library", help="Or a library's directory: data, "
                                                  "work, util, or a [libname.*]. Default: work."),
            mode: str = typer.Option("write", "--mode", help="write, read or rw."),
            rwmixread: int = typer.Option(50, "--rwmixread", help="Share of reads in rw mode (%)."),
            pattern: str = typer.Option("seq", "--pattern", help="seq or rand."),
            bs: str = typer.Option("1M", "--bs", help="Request size (4K, 1M)."),
            threads: int = typer.Option(1, "--threads", "-t", help="Threads, each on its own file."),
            size: Optional[str] = typer.Option(None, "--size-per-thread", help="File size per thread (default 8G as "
                                               "in the papers; with --device, the device split between the threads)."),
            time_limit: Optional[str] = typer.Option(None, "--time", help="Time mode (ndisk64 -t): each run lasts this "
                                                     "long (30s, 2m), writes wrapping round the file, reads looping; "
                                                     "default: each thread moves its file once."),
            device: Optional[Path] = typer.Option(None, "--device", help="A raw block device (ndisk64 -f /dev/sdX) "
                                                  "instead of files: O_DIRECT, root only, each thread on its own slice."),
            destructive: bool = typer.Option(False, "--destructive", help="With --device: allow writes, which destroy "
                                             "what the device holds (refused on a mounted or held device)."),
            direct: bool = typer.Option(False, "--direct", help="O_DIRECT: bypass the page cache."),
            fsync: bool = typer.Option(False, "--fsync", help="fsync each file at the end, inside the timing."),
            runs: int = typer.Option(3, "--runs", help="Timed runs."),
            node: Optional[str] = typer.Option(None, "--node", help="Name of this node in the results "
                                               "(default: hostname)."),
            json_out: Optional[Path] = typer.Option(None, "--json", help="Write the fio-like JSON here."),
            csv_out: Optional[Path] = typer.Option(None, "--csv", help="Write one CSV row per run, node, direction."),
            nodes: Optional[str] = typer.Option(None, "--nodes", help="Run on these grid hosts at once ('all' or "
                                                "node1,node2); needs a running master."),
            queue: str = typer.Option("", "--queue", "-q", help="With --nodes: the grid queue of its jobs "
                                      "(default: 'normal' or the first in grid.toml)."),
            raw_out: Optional[Path] = typer.Option(None, "--raw-out", hidden=True),
            barrier_dir: Optional[Path] = typer.Option(None, "--barrier-dir", hidden=True),
            barrier_nodes: int = typer.Option(1, "--barrier-nodes", hidden=True)
            ) -> None:
    """Raw I/O test like gpfsperf/ndisk64: N threads, each on its own file; MB/s, IOPS, latency."""
    import socket
    from dataclasses import replace

    from statgrid.bench import iobench_out
    from statgrid.bench.iobench import IOSpec, run_node
    from statgrid.config import parse_duration_s, parse_size_bytes

    cfg = config(ctx)
    if directory is not None and library is not None:
        fail(ctx, UsageError("give --dir or --library, not both."))
    if device is not None and (directory is not None or library is not None):
        fail(ctx, UsageError("give --device or --dir/--library, not both: --device tests the raw device itself."))
    if device is not None:
        directory = device.parent                    # unused: the I/O goes to the device
        direct = True                                # a raw device is always read and written with O_DIRECT
    elif directory is None:
        lib = (library or "work").lower()
        roots = {"data": cfg.libraries.data, "work": cfg.libraries.work, "util": cfg.libraries.util,
                 **{n: ln.path for n, ln in cfg.libnames.items()}}
        if lib not in roots:
            fail(ctx, UsageError(f"--library {library!r} is not a library; libraries: {', '.join(roots)}."))
        directory = roots[lib]
        directory.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for option, value in (("--bs", bs), ("--size-per-thread", size)):
        try:
            sizes[option] = None if value is None else parse_size_bytes(value)
        except ValueError as exc:
            fail(ctx, UsageError(f"{option} {value!r} is not allowed: expected {exc}."))
    try:
        duration_s = None if time_limit is None else parse_duration_s(time_limit)
    except ValueError as exc:
        fail(ctx, UsageError(f"--time {time_limit!r} is not allowed: expected {exc}."))
    try:
        spec = IOSpec(directory.absolute(), mode, rwmixread, pattern, sizes["--bs"], threads,
                      sizes["--size-per-thread"] or DEFAULT_SIZE_PER_THREAD_BYTES, direct, fsync, runs,
                      duration_s=duration_s, device=device.absolute() if device else None, destructive=destructive)
        spec.check()
        if device is not None and not nodes:
            # the device is checked here; on the grid, each node's job checks its own
            from statgrid.bench.iobench_device import open_device, region_bytes

            dev = open_device(device, writes=mode != "read", destructive=destructive)
            spec = replace(spec, size_per_thread_bytes=region_bytes(dev, threads, sizes["--bs"],
                                                                    sizes["--size-per-thread"]))
            spec.check()
        elif device is not None:
            if mode != "read" and not destructive:
                raise UsageError(f"writing to --device {str(device)!r} destroys what it holds: add --destructive to "
                                 "mean it, or use --mode read.")
            if sizes["--size-per-thread"] is None:
                raise UsageError("--device with --nodes needs --size-per-thread: the nodes' devices may differ in "
                                 "size, so give each thread's slice (e.g. --size-per-thread 8G).")
    except StatgridError as exc:
        fail(ctx, exc)
    if mode != "read" and not direct and not fsync:
        typer.echo("warning: buffered writes without --fsync measure the page cache, not the device; add --fsync "
                   "or --direct.", err=True)

    def progress(r) -> None:
        total = r.read.io_bytes + r.write.io_bytes
        runtime_ns = max(r.read.runtime_ns, r.write.runtime_ns) or r.wall_ns
        typer.echo(f"run {r.run}/{runs}: {total / (runtime_ns / 1e9) / 1e6:.1f} MB/s", err=True)

    def on_term(signum, frame):
        raise KeyboardInterrupt                  # SIGTERM (a grid kill) cleans up like Ctrl-C

    import signal

    from statgrid.bench.iobench import file_barrier, mark_failed, save_runs

    signal.signal(signal.SIGTERM, on_term)
    if nodes:
        _on_grid(ctx, cfg, spec, nodes, queue, json_out, csv_out)
        return
    if queue:
        fail(ctx, UsageError(f"-q/--queue {queue!r} applies to grid runs: add --nodes (e.g. --nodes all)."))
    me = node or socket.gethostname()
    try:
        before = file_barrier(barrier_dir, me, barrier_nodes) if barrier_dir else None
        try:
            results = run_node(spec, me, before_run=before, progress=progress)
        except BaseException:
            if barrier_dir is not None:
                mark_failed(barrier_dir, me)
            raise
        if raw_out is not None:
            save_runs(raw_out, results)
    except KeyboardInterrupt:
        typer.echo("iobench interrupted; its files were removed." if device is None else "iobench interrupted.",
                   err=True)
        raise typer.Exit(130)
    except StatgridError as exc:
        fail(ctx, exc)
    except OSError as exc:
        fail(ctx, StatgridError(f"I/O error in {str(spec.target)!r}: {exc.strerror} ({exc.filename or ''}); check "
                                "the space and permissions there."))
    _show(iobench_out.summarize(spec, iobench_out.group_by_run([results])), json_out, csv_out)


def _on_grid(ctx: typer.Context, cfg, spec, nodes: str, queue: str, json_out, csv_out) -> None:
    """One iobench job per chosen host at once (bench/iobench_grid.py); the gathered result shown."""
    from statgrid.bench import iobench_grid

    try:
        result, _ = iobench_grid.run(cfg, spec, nodes, queue, lambda m: typer.echo(m, err=True))
    except KeyboardInterrupt:
        typer.echo("iobench interrupted; its jobs were killed (they remove their files).", err=True)
        raise typer.Exit(130)
    except StatgridError as exc:
        fail(ctx, exc)
    _show(result, json_out, csv_out)


def _show(result: dict, json_out: Optional[Path], csv_out: Optional[Path]) -> None:
    """The result on the terminal, and in the --json and --csv files asked for."""
    from statgrid.bench import iobench_out

    typer.echo(iobench_out.terminal(result))
    if json_out:
        json_out.write_text(iobench_out.to_json(result))
    if csv_out:
        csv_out.write_text(iobench_out.to_csv(result))

