"""The DATA step: `run_data_step(statements, program)` — the driver hands it the DATA statement and the
step's statements (RUN; excluded); it compiles the step to a Python function and runs it (step.py)."""
from __future__ import annotations

from typing import Any


def run_data_step(statements: list, program: Any) -> None:
    from statgrid.sas.datastep.step import DataStep

    DataStep(statements, program).run()
