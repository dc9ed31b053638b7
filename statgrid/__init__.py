"""statgrid — an open analytics grid: sessions, a workload manager, monitors and a performance lab.

`statgrid.session(...)` opens a session (the module `statgrid.session` is callable).
"""
from __future__ import annotations

__version__ = "0.1.0"


def __getattr__(name: str):
    # Imported on first use, not with the package: the engine (DuckDB, Arrow) costs ~0.4 s that
    # the CLI's grid verbs, the monitor and the node launcher's callers do not need.
    if name == "session":
        import statgrid.session

        return statgrid.session
    raise AttributeError(f"module 'statgrid' has no attribute {name!r}")
