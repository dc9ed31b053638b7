"""R cross-checks in one R process: `rscript(code, packages)` runs R code as `Rscript -e code` would and
answers a subprocess.CompletedProcess (returncode 0 or 1, stdout, stderr), but the R process and the
packages it has loaded (lme4, survey, geepack: about 1.5 s of CPU each time Rscript starts them) stay
from one call to the next.

Each call runs in a fresh environment (no variable of one script is seen by the next), its output is
what R prints (cat, print, write.csv and auto-printed values, as Rscript -e prints them), R's options
(contrasts=…) are put back after it, and an error ends it with returncode 1 and R's message in stderr
("there is no package called …" where a package is missing). One R process serves one `packages`
tuple, so a script never sees a package (say lmerTest's lmer over lme4's) that its own test did not
load; the processes of the last few tuples stay (the test files alternate: lme4, geepack, car,
lme4 + lmerTest, lme4 again), each started once. Scripts that call quit() are not for this.

    res = rscript("d <- read.csv('x.csv'); cat(mean(d$y))", packages=("lme4",))
    if res.returncode and "there is no package called" in res.stderr: pytest.skip(...)
"""
from __future__ import annotations

import atexit
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

_DONE = "@@statgrid-rscript-done@@"
# The server's loop: each line read from stdin names a script, its output file and its message file.
_SERVER = r"""
.sg_run <- function(code_file, out_file, err_file) {
  op <- options()
  out <- file(out_file, open = "wt"); err <- file(err_file, open = "wt")
  sink(out); sink(err, type = "message")
  status <- tryCatch({
    source(code_file, local = new.env(parent = globalenv()), echo = FALSE, print.eval = TRUE)
    0L
  }, error = function(e) { message("Error: ", conditionMessage(e)); 1L })
  sink(type = "message"); sink()
  close(out); close(err)
  options(op)
  cat("\n", "@@statgrid-rscript-done@@ ", status, "\n", sep = "")
}
con <- file("stdin", open = "r")
while (length(line <- readLines(con, n = 1)) > 0) {
  args <- strsplit(line, "\t", fixed = TRUE)[[1]]
  .sg_run(args[1], args[2], args[3])
}
"""


class _Server:
    def __init__(self, packages: tuple[str, ...]):
        self.packages = packages
        self.dir = Path(tempfile.mkdtemp(prefix="statgrid-rscript-"))
        (self.dir / "server.R").write_text(_SERVER)
        self.stderr = open(self.dir / "server.err", "w")
        self.proc = subprocess.Popen(["Rscript", str(self.dir / "server.R")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True, bufsize=1)
        self.calls = 0

    def run(self, code: str, timeout_s: float) -> subprocess.CompletedProcess:
        self.calls += 1
        paths = [self.dir / f"{self.calls}.{ext}" for ext in ("R", "out", "err")]
        paths[0].write_text(code)
        self.proc.stdin.write("\t".join(map(str, paths)) + "\n")
        self.proc.stdin.flush()
        status = self._status(timeout_s)
        out, err = (p.read_text() for p in paths[1:])
        return subprocess.CompletedProcess(["Rscript", "-e", code], status, out, err)

    def _status(self, timeout_s: float) -> int:
        """The status on the server's done line, read straight from the pipe (a buffered reader would
        keep the line where select() cannot see it)."""
        deadline, seen = time.monotonic() + timeout_s, b""
        fd = self.proc.stdout.fileno()
        while (match := re.search(_DONE.encode() + rb" (\d+)\n", seen)) is None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close()
                raise subprocess.TimeoutExpired(["Rscript", "-e"], timeout_s)
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError(f"the R process ended: {(self.dir / 'server.err').read_text()}")
            seen += chunk
        return int(match.group(1))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)


KEEP = 4                              # R processes kept at most (about 100–200 MB each with lme4 loaded)
_servers: dict[tuple[str, ...], _Server] = {}    # by packages, the least recently used first


def rscript(code: str, packages: tuple[str, ...] = (), timeout_s: float = 600) -> subprocess.CompletedProcess:
    """`Rscript -e code`'s result, from the R process kept for `packages` (the packages the callers'
    scripts load; the first call loads them). Skips the test where Rscript is not installed."""
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript is not installed: the R cross-check cannot run")
    packages = tuple(packages)
    server = _servers.pop(packages, None)
    if server is not None and server.proc.poll() is not None:
        server.close()
        server = None
    while len(_servers) >= KEEP:
        _servers.pop(next(iter(_servers))).close()
    _servers[packages] = server or _Server(packages)
    return _servers[packages].run(code, timeout_s)


@atexit.register
def _close() -> None:
    while _servers:
        _servers.popitem()[1].close()


def skip_if_missing_package(res: subprocess.CompletedProcess) -> None:
    """Skip the test, naming the package, where R said one is not installed."""
    if res.returncode != 0 and "there is no package called" in res.stderr:
        pytest.skip(f"an R package is missing: {res.stderr.strip().splitlines()[-1]}")


def r_numbers(code: str, packages: tuple[str, ...] = ()) -> list[float]:
    """The numbers R code prints (cat(sprintf(…))), split on white space; the script must succeed."""
    res = rscript(code, packages)
    skip_if_missing_package(res)
    assert res.returncode == 0, res.stderr
    return [float(v) for v in res.stdout.split()]
