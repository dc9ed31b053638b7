"""Which engine runs a compiled DATA step (issue 26, "Performance").

Three engines run the same compiled step (its PDV, its statements, its outputs) with the same results:

- SQL (sqlplan.py): a step whose rows do not depend on each other — one SET, assignments, IF, KEEP/DROP —
  becomes one DuckDB query written straight to the output's Parquet file; the hash-object lookup pattern
  becomes a join.
- NUMBA (compiled/): a step whose rows depend on each other (RETAIN, sum statements, BY groups with
  FIRST./LAST., DO loops with OUTPUT, arrays, RANUNI/RAND) becomes one machine-code loop over column
  batches (numba), the character columns it only carries through taken by row index.
- SQL over a text file (textplan/): a step that only reads a fixed-width file with INFILE and one INPUT
  of column or formatted input becomes one DuckDB query over the file; the SQL choice takes it.
- PYTHON (step.py, codegen.py): the generated Python function run once per row; every statement of the
  language; the reference the other two are checked against.

The statgrid system option DSENGINE= chooses: AUTO (default) tries SQL, then NUMBA where the step works
through enough rows to repay compiling it, then PYTHON; PYTHON runs every step in Python; SQL or NUMBA
runs each step that engine can take in it, whatever its size, and the rest in Python (tests run the
corpus so). An engine that cannot take a step says why in `reason` and leaves no trace.
"""
from __future__ import annotations

from typing import Any

# (the DSENGINE= choice that takes it, the module that runs it), in the order they are tried
ENGINES = (("SQL", "textplan"), ("SQL", "sqlplan"), ("NUMBA", "compiled"))


def _engine(module: str):
    import importlib
    return importlib.import_module(f"statgrid.sas.datastep.{module}")


def _nodes(x, seen=None):
    """Every AST node and value under `x` (statements, expressions, their fields)."""
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from _nodes(y, seen)
        return
    if hasattr(x, "__dataclass_fields__"):
        yield x
        for name in x.__dataclass_fields__:
            yield from _nodes(getattr(x, name, None), seen)
    else:
        yield x


def special_missing_step(step: Any) -> bool:
    """The step meets special missing values .A-.Z/._ (a constant, an input data set keeping them): only the
    Python engine carries their letters (dataset.SPECIALS_KEY). A step reading them from text (.A, or a MISSING
    statement's letters) is left to the text engine, which writes them as plain missing values (its output
    must match the Python engine's data: the letters are not part of that comparison)."""
    from statgrid.sas.values import SpecialMissing
    for n in _nodes(step.body):
        if isinstance(n, SpecialMissing):
            return True
        if hasattr(n, "datasets") and hasattr(n, "point"):              # SET / MERGE
            from statgrid.sas.dataset import dataset_path, read_specials
            for ds in n.datasets:
                try:
                    if read_specials(dataset_path(step.program, ds).path):
                        return True
                except Exception:  # noqa: BLE001  (a view or a data set that is not there: the engine says)
                    continue
    return False


def run_fast(step: Any) -> str:
    """Run the compiled `step` in the first engine that takes it; returns that engine's name, or
    "PYTHON" when none did (the caller then runs it row by row)."""
    choice = str(step.program.options.get("DSENGINE") or "AUTO").upper()
    used = "PYTHON"
    if choice != "PYTHON" and not special_missing_step(step):
        for name, module in ENGINES:
            if choice not in ("AUTO", name):
                continue
            if _engine(module).try_run(step, forced=choice == name):
                used = name
                break
    step.program.extras.setdefault("datastep_engines", []).append((step.first.line, used))
    return used
