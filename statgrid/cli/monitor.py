"""The node monitor: `monitor` (sample this node) and `monitor export`."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from statgrid.cli.common import config, fail
from statgrid.errors import StatgridError, UsageError

# -- the node monitor ------------------------------------------------------------------------------
monitor_app = typer.Typer(help="Sample this node's CPU, memory, disks (per library), pressure and network.")


def _duration(ctx: typer.Context, option: str, value: Optional[str]) -> Optional[float]:
    from statgrid.config import parse_duration_s

    if value is None:
        return None
    try:
        return parse_duration_s(value)
    except ValueError as exc:
        fail(ctx, UsageError(f"{option} {value!r} is not allowed: expected {exc}."))


@monitor_app.callback(invoke_without_command=True)
def monitor(ctx: typer.Context,
            interval: str = typer.Option("1s", "--interval", "-i", help="Time between samples (1s, 500ms, 5s)."),
            out: Optional[Path] = typer.Option(None, "--out", help="Where the Parquet samples go "
                                               "(default: <home>/monitor)."),
            duration: Optional[str] = typer.Option(None, "--duration", "-d", help="Stop after this long "
                                                   "(30s, 10m, 1h); default: until Ctrl-C."),
            host: Optional[str] = typer.Option(None, "--host", help="Name for this node (default: hostname)."),
            quiet: bool = typer.Option(False, "--quiet", "-q", help="No line per sample.")) -> None:
    """Sample until Ctrl-C or --duration; print one line per sample and write Parquet."""
    if ctx.invoked_subcommand is not None:
        return
    import socket

    from statgrid.monitor.runner import run as run_monitor
    from statgrid.monitor.store import host_dir

    cfg = config(ctx)
    interval_s = _duration(ctx, "--interval", interval)
    duration_s = _duration(ctx, "--duration", duration)
    out_dir = out or cfg.home / "monitor"
    try:
        host_dir(out_dir, host or socket.gethostname())          # one file name: "a/b" or ".." would escape
    except UsageError as exc:
        fail(ctx, exc)
    libs = {"data": cfg.libraries.data, "work": cfg.libraries.work, "util": cfg.libraries.util}

    def echo(rows: dict) -> None:
        import time as _time

        def f(v, scale=1.0, width=5):          # a figure the sampler could not compute shows as '-'
            return "-".rjust(width) if v is None else f"{v / scale:{width}.1f}"

        n = rows["node"][0]
        parts = [_time.strftime("%H:%M:%S", _time.localtime(n["ts"])),
                 "cpu usr {}% sys {}% wait {}% idle {}%".format(
                     *(f(n[k]) for k in ("cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "cpu_idle_pct"))),
                 f"psi io {f(n['psi_io_some_pct'])}%"]
        for lib in rows["library"]:
            parts.append(f"{lib['library']}({lib['device']}) r {f(lib['read_bytes_per_s'], 1e6, 7)} "
                         f"w {f(lib['write_bytes_per_s'], 1e6, 7)} MB/s util {f(lib['util_pct'])}%")
        typer.echo("  ".join(parts))

    try:
        n = run_monitor(host or socket.gethostname(), out_dir, libs, interval_s, duration_s,
                        echo=None if quiet else echo, warn=lambda note: typer.echo(f"note: {note}", err=True))
    except OSError as exc:
        fail(ctx, StatgridError(f"cannot monitor: {exc}; check that /proc is readable and {out_dir} writable."))
    typer.echo(f"{n} samples written to {out_dir}", err=True)


@monitor_app.command("export")
def monitor_export(ctx: typer.Context,
                   source: Optional[Path] = typer.Option(None, "--in", help="Monitor directory "
                                                         "(default: <home>/monitor)."),
                   csv_dir: Path = typer.Option(..., "--csv", help="Directory for node.csv, disk.csv, library.csv.")) -> None:
    """Consolidate every node's samples and write them as CSV."""
    from statgrid.monitor.store import export_csv

    cfg = config(ctx)
    src = source or cfg.home / "monitor"
    if not src.is_dir():
        fail(ctx, UsageError(f"--in {str(src)!r} is not a directory of monitor samples; run `statgrid monitor` "
                             "first or point --in at its --out."))
    written = export_csv(src, csv_dir)
    if not written:
        fail(ctx, StatgridError(f"no samples under {str(src)!r}."))
    for path in written:
        typer.echo(str(path))

