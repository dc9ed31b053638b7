"""The NUMBA engine (engines.py): a DATA step whose rows depend on each other compiled to one machine-code loop
over column batches (numba). eligible.py decides which steps (and says why not), kernel.py writes the numba
source (exprs.py its expressions), rt.py holds its run-time helpers, state.py the layout of the state kept
between kernel calls, run.py reads, calls and writes. numba is imported only for a step the engine takes."""
from __future__ import annotations

from typing import Any

MIN_WORK_ROWS = 200_000          # AUTO: below this many rows compiling (~1 s) costs more than it saves


def try_run(step: Any, forced: bool = False) -> bool:
    """Run `step` compiled if it can be; False (nothing done, the reason in step.numba_refused) if not."""
    from statgrid.sas.datastep.compiled.eligible import Refuse, analyze
    try:
        plan = analyze(step)
    except Refuse as exc:
        step.numba_refused = str(exc)
        return False
    except Exception as exc:  # noqa: BLE001 - a step this engine misreads is the Python engine's to run
        step.numba_refused = f"not analysed: {type(exc).__name__}: {exc}"
        return False
    if not forced and plan.work < MIN_WORK_ROWS:
        step.numba_refused = f"{plan.work} rows: fewer than {MIN_WORK_ROWS} (DSENGINE=AUTO)"
        return False
    try:
        from statgrid.sas.datastep.compiled.run import run_plan
    except Exception as exc:  # noqa: BLE001 - numba missing or unusable here: the other engines run every step
        step.numba_refused = f"numba is not available: {exc}"
        return False
    return run_plan(step, plan)
