"""What every Mixed Analytics job template shares: its parameters and where its data are.

A template is an ordinary statgrid job file (statgrid/bench/jobs/<name>.py) run as a session by the
grid. `statgrid bench mixed` passes the parameters through the job's environment:
STATGRID_BENCH_LIBRARY (the library datagen filled, default 'data'), STATGRID_BENCH_SCALE and
STATGRID_BENCH_SEED (the job's own random choices, e.g. which rows to read).

A template's SAS twin (jobs/<name>.sas, `bench mixed --lang sas`) reads the same variables with
%SYSGET, as a SAS program on an LSF-style grid reads what the job script exports (`statgrid run
prog.sas -set STATGRID_BENCH_LIBRARY data` gives them by hand); the text files' directory is
%SYSFUNC(PATHNAME(&lib)). What the Python job sets in code and SAS takes only at startup (MEMSIZE) is
the template's sas_options, given at submit.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BenchParams:
    library: str
    scale: float
    seed: int

    def ds(self, name: str) -> str:
        """'library.member' of a generated data set."""
        return f"{self.library}.{name}"

    def text(self, s, name: str) -> str:
        """Path of a generated text file (household, person, customer_dim)."""
        return str(Path(s.libraries.get(self.library).path) / f"{name}.txt")


def params() -> BenchParams:
    return BenchParams(os.environ.get("STATGRID_BENCH_LIBRARY", "data"),
                       float(os.environ.get("STATGRID_BENCH_SCALE", "0.0002")),
                       int(os.environ.get("STATGRID_BENCH_SEED", "1")))


def head_columns(s, dsname: str, prefix: str, limit: int) -> list[str]:
    """The first `limit` columns of a data set whose names start with `prefix`."""
    cols = [c for c, _ in s.columns(s.dataset(dsname).scan_sql()) if c.startswith(prefix)]
    return cols[:limit]
