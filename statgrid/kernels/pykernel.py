"""statgrid-python: IPython with the grid session as `s` from the first cell on (statgrid.session.core.Session): WORK kept while the
kernel lives (closed, WORK removed, when the kernel ends: launch.run_kernel); after each cell, its steps' log lines (NOTEs, the STIMER block of each step) as the cell's stderr."""
from __future__ import annotations

import sys
from typing import Any


def attach(kernel: Any, host: Any) -> None:
    shell = kernel.shell

    def before(*_args) -> None:
        host.cell_started()
        if not host.opened:                # the first cell opens the session (launch.KernelHost.session)
            shell.user_ns["s"] = shell.user_ns["session"] = host.session

    def after(*_args) -> None:
        host.cell_ended()
        log_text, listing = host.drain()
        if listing.strip():
            sys.stdout.write(listing)
            sys.stdout.flush()
        if log_text.strip():
            sys.stderr.write(log_text)
            sys.stderr.flush()

    shell.events.register("pre_run_cell", before)
    shell.events.register("post_run_cell", after)
