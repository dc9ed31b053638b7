"""Notebook kernels on the grid: `kernels install`, `kernel-run` (the node's side, run by the grid), `lab`."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from statgrid.cli.common import config, fail
from statgrid.config import parse_option_pairs
from statgrid.errors import StatgridError, UsageError
from statgrid.job.kinds import KERNEL_LANGUAGES

kernels_app = typer.Typer(help="Notebook kernels the grid places (statgrid-sas, statgrid-python), as Enterprise "
                          "Guide sessions on SAS Grid.", no_args_is_help=True)


@kernels_app.command("install")
def install(user: bool = typer.Option(False, "--user", help="For you only (~/.local/share/jupyter/kernels)."),
            sys_prefix: bool = typer.Option(False, "--sys-prefix", help="Into this Python environment "
                                            f"({sys.prefix})."),
            queue: str = typer.Option("", "--queue", "-q", help="The queue the kernels go to (default: "
                                      "`interactive` when grid.toml has it, else the default queue).")) -> None:
    """Install the kernel specs statgrid-sas and statgrid-python (default: system-wide, as root)."""
    from statgrid.kernels.specs import install as install_specs

    if user and sys_prefix:
        raise typer.BadParameter("give --user or --sys-prefix, not both.")
    for path in install_specs(user=user, prefix=sys.prefix if sys_prefix else None, queue=queue):
        typer.echo(f"installed kernel spec {Path(path).name} in {path}")


def kernel_run(ctx: typer.Context,
               language: str = typer.Argument(..., metavar="LANGUAGE", help=f"{' or '.join(KERNEL_LANGUAGES)}."),
               option: List[str] = typer.Option([], "--option", "-o", metavar="KEY=VALUE", help="Session option."),
               log_dir: Optional[Path] = typer.Option(None, "--log-dir", help="The job's directory.")) -> None:
    """The node's side of a kernel (run by the grid's launcher as the job's user; not for people)."""
    from statgrid.kernels.launch import run_kernel

    if language not in KERNEL_LANGUAGES:
        fail(ctx, UsageError(f"kernel language {language!r} is not one of {', '.join(KERNEL_LANGUAGES)}."))
    if log_dir is None:
        fail(ctx, UsageError("kernel-run is run by the grid for a kernel job: it needs --log-dir (the job's "
                             "directory). Start a kernel with `jupyter console --kernel statgrid-sas` or "
                             "`statgrid lab`."))
    try:
        code = run_kernel(language, config(ctx), parse_option_pairs(option), log_dir)
    except StatgridError as exc:
        fail(ctx, exc)
    raise typer.Exit(code)


def lab(extra: Optional[List[str]] = typer.Argument(None, metavar="[JUPYTERLAB ARGS]...")) -> None:
    """Start JupyterLab here for you, with the statgrid kernel specs (installed for you if missing)."""
    import os

    import importlib.util

    if importlib.util.find_spec("jupyterlab") is None:
        typer.echo("Error: JupyterLab is not installed: pip install 'statgrid[lab]' (or pip install jupyterlab).",
                   err=True)
        raise typer.Exit(1)
    from jupyter_client.kernelspec import KernelSpecManager

    from statgrid.kernels.specs import install as install_specs, spec_name

    have = KernelSpecManager().find_kernel_specs()
    if not all(spec_name(lang) in have for lang in KERNEL_LANGUAGES):
        for path in install_specs(user=True):
            typer.echo(f"installed kernel spec {Path(path).name} in {path}", err=True)
    os.execvp(sys.executable, [sys.executable, "-m", "jupyterlab", *(extra or [])])
