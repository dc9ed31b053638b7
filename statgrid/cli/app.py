"""The `statgrid` Typer app, assembled: the global options and every command, taken from the
module of its group, in the order `statgrid --help` lists them (commands, then groups)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from statgrid import __version__
from statgrid.cli import (admin, advise, bench, demo, events, flows, hosts, inventory, iobench, jobs, kernels, monitor,
                          node, session)
from statgrid.cli import size as size_cli
from statgrid.cli.common import state

app = typer.Typer(help="statgrid: an open analytics grid.", no_args_is_help=True, add_completion=False,
                  pretty_exceptions_enable=False, rich_markup_mode=None)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"statgrid {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(config: Optional[Path] = typer.Option(None, "--config", "-c", help="grid.toml to use "
                                                "(default: $STATGRID_CONFIG, $STATGRID_HOME/grid.toml, ./grid.toml)."),
          master: Optional[str] = typer.Option(None, "--master", metavar="URL", help="A master on another machine, "
                                               "e.g. https://grid1:8642 (default: $STATGRID_MASTER, else this "
                                               "machine's master through its local socket, else the url of "
                                               "~/.config/statgrid/client.toml); the token comes from "
                                               "$STATGRID_TOKEN or that file (`statgrid token create`)."),
          version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    state["config"] = str(config) if config else None
    state["master"] = master


# Positional arguments after JOB belong to the job (`submit job.py --its-own-flag`).
_JOB_ARGS = {"allow_interspersed_args": False}

for _name, _command, _settings in (
        ("run", session.run, None), ("cleanwork", session.cleanwork, None), ("demo", demo.demo, None),
        ("config", session.show_config, None), ("import", session.import_, None), ("datagen", bench.datagen, None),
        ("report", bench.report, None), ("size", size_cli.size, None), ("events", events.events, None), ("reconfig", admin.reconfig, None),
        ("whoami", admin.whoami, None), ("submit", jobs.submit, _JOB_ARGS), ("jobs", jobs.jobs, None),
        ("job", jobs.job_detail, None), ("hosts", hosts.hosts, None), ("suspend", jobs.suspend, None),
        ("resume", jobs.resume, None), ("top", jobs.top, None), ("bottom", jobs.bottom, None),
        ("modify", jobs.modify, None), ("shares", hosts.shares, None), ("queues", hosts.queues, None),
        ("acct", hosts.acct, None), ("kill", jobs.kill, None), ("peek", jobs.peek, None), ("wait", jobs.wait, None),
        ("worker", node.worker, None), ("iobench", iobench.iobench, None), ("inventory", inventory.inventory, None), ("kernel-run", kernels.kernel_run, None),
        ("lab", kernels.lab, {**_JOB_ARGS, "ignore_unknown_options": True}), ("advise", advise.advise, None)):
    app.command(_name, context_settings=_settings)(_command)

for _name, _group in (("bench", bench.bench_app), ("grid", admin.grid_app), ("token", admin.token_app),
                      ("host", admin.host_app), ("flow", flows.flow_app), ("schedule", flows.schedule_app),
                      ("node", node.node_app), ("monitor", monitor.monitor_app),
                      ("kernels", kernels.kernels_app)):
    app.add_typer(_group, name=_name)


def main() -> None:
    app(prog_name="statgrid")   # the same usage text under `python -m statgrid`
