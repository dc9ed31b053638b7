"""statgrid-sas: a notebook kernel whose cells are SAS (the language of statgrid/sas/), one SAS session over the
kernel's life — macro variables, librefs, options, titles, formats and WORK carry from cell to cell, as in an
Enterprise Guide session on SAS Grid. A cell's output is its log (NOTE blue, WARNING green, ERROR red, as SAS
colours them) and its listing, the PROCs' tables as HTML tables; an ERROR makes the cell's reply an error (so
"run all" stops there), as a failing step in EG flags the submit. An interrupt (SIGINT) stops the running step
and its DuckDB query; the session goes on."""
from __future__ import annotations

import signal
from importlib.metadata import version
from typing import Any

from ipykernel.kernelbase import Kernel

from statgrid.kernels import render


def _kernel_log_class():
    """The session's SasLog, keeping each listing block with the ODS tables shown in it, for the cell."""
    from statgrid.sas.saslog import SasLog

    class KernelSasLog(SasLog):
        def __init__(self, out: Any):
            super().__init__(out)
            self.tables_shown: list = []          # ods.Listing.table appends the tables it shows
            self.blocks: list[tuple[str, list]] = []

        def listing(self, text: str, published: bool = False, centered: bool = True) -> None:
            self.blocks.append((text, list(self.tables_shown)))
            self.tables_shown.clear()
            super().listing(text, published, centered)

    return KernelSasLog


class SasKernel(Kernel):
    implementation = "statgrid-sas"
    implementation_version = version("statgrid")
    banner = ("statgrid SAS session on the grid (SAS 9.4 language; not SAS, a trademark of SAS Institute Inc.): "
              "WORK lives as long as this kernel.")
    language_info = {"name": "sas", "mimetype": "text/x-sas", "file_extension": ".sas", "pygments_lexer": "sas",
                     "codemirror_mode": "sas"}

    statgrid: Any = None          # launch.KernelHost, set by the launcher before the first cell
    program: Any = None           # statgrid.sas.program.SasSession

    def open_program(self) -> None:
        """The SAS session over the grid session, at the first cell (the session opens then: KernelHost)."""
        from statgrid.sas.program import SasSession

        session = self.statgrid.session
        self.log_writer = _kernel_log_class()(session.log)
        self.program = SasSession(session, self.log_writer, interactive=True)

    def pre_handler_hook(self):
        # While a cell runs, SIGINT stops its DuckDB query too (DuckDB checks Python's signals, but not every
        # operator stops on them; interrupt() does) and raises KeyboardInterrupt in the step.
        host = self.statgrid

        def interrupt(signum, frame):
            con = getattr(host._session, "con", None) if host is not None else None
            if con is not None:
                con.interrupt()
            raise KeyboardInterrupt

        self.saved_sigint_handler = signal.signal(signal.SIGINT, interrupt)

    async def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False, *,
                         cell_meta=None, cell_id=None):
        host = self.statgrid
        host.cell_started()
        interrupted = False
        exit_code = 0
        try:
            if self.program is None:
                self.open_program()
            exit_code = self.program.submit(code)              # source "": echoed as the program's own lines
        except KeyboardInterrupt:
            interrupted = True
            if self.program is None:                  # interrupted while the session was opening
                return {"status": "error", "execution_count": self.execution_count, "ename": "KeyboardInterrupt",
                        "evalue": "interrupted", "traceback": []}
            self.program.log.error("The submit was interrupted (the notebook's interrupt): the step running was "
                                   "stopped; data sets it was writing were not replaced.")
        finally:
            host.cell_ended()
        log_text, _ = host.drain()
        blocks, self.log_writer.blocks = self.log_writer.blocks, []
        if not silent:
            self._show(log_text, blocks)
        if interrupted or exit_code:
            ename = "KeyboardInterrupt" if interrupted else "SasError"
            evalue = ("interrupted" if interrupted else
                      f"the submit ended with exit code {exit_code}; see the ERROR lines of its log")
            if not silent:
                self.send_response(self.iopub_socket, "error", {"ename": ename, "evalue": evalue, "traceback": []})
            return {"status": "error", "execution_count": self.execution_count, "ename": ename, "evalue": evalue,
                    "traceback": []}
        if self.program.ended:
            self.send_response(self.iopub_socket, "stream", {"name": "stderr", "text": "ENDSAS: the session ends.\n"})
            self._end_later()
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    def _show(self, log_text: str, blocks: list[tuple[str, list]]) -> None:
        if log_text.strip():
            self.send_response(self.iopub_socket, "display_data", {
                "data": {"text/plain": render.log_ansi(log_text), "text/html": render.log_html(log_text)},
                "metadata": {}})
        for text, tables in blocks:
            # tables ODS rendered become HTML tables; a block with text in a PROC's own layout (MEANS, PRINT…)
            # stays that text, preformatted, as SAS's listing destination shows it
            html = ("".join(render.table_html(t) for t in tables) if tables and None not in tables
                    else render.listing_html(text))
            self.send_response(self.iopub_socket, "display_data", {
                "data": {"text/plain": text, "text/html": html}, "metadata": {}})

    def _end_later(self) -> None:
        """After this cell's reply has gone: SIGUSR1 (launch._signals) ends the kernel, its session closed."""
        import asyncio
        import os

        asyncio.get_running_loop().call_later(0.2, os.kill, os.getpid(), signal.SIGUSR1)

    async def do_is_complete(self, code):
        """For `jupyter console`: complete once the last statement ends with ';' and the last step is ended
        (RUN; or QUIT;) or none is open."""
        text = code.strip()
        if not text or not text.endswith(";"):
            return {"status": "incomplete", "indent": ""}
        import re

        words = re.findall(r"(?i)\b(data|proc|run|quit)\b", text)
        last = words[-1].lower() if words else ""
        return {"status": "incomplete" if last in ("data", "proc") else "complete", "indent": ""}

    async def do_shutdown(self, restart):
        # ipykernel runs this on its control thread; the session closes (WORK removed) on the main thread
        # when the kernel's loop has stopped (launch.run_kernel), before the process ends.
        return {"status": "ok", "restart": restart}
