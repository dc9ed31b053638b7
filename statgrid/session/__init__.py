"""statgrid.session — the job runtime. `statgrid.session(...)` opens a session:

    import statgrid
    with statgrid.session(memsize="1G") as s:
        s.sql("CREATE TABLE work.big AS SELECT * FROM data.sales WHERE amount > 100")

Under `statgrid run` (and on a grid node) the runner has already opened the process's session;
`statgrid.session()` then returns it, applies the options given in code (command-line options
win), and leaves closing — with the total STIMER block — to the runner.
"""
from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statgrid.session.core import Session

# Loaded on first use, so that `import statgrid.libraries` (which every procedure module
# does) does not pull in core, which imports the procedures: no import cycle whichever comes first.
_LAZY = {"Session": "statgrid.session.core", "StepInfo": "statgrid.session.core",
         "DatasetRef": "statgrid.libraries", "SessionLog": "statgrid.session.log",
         "StepRecord": "statgrid.session.stimer", "Task": "statgrid.session.connect",
         "TaskResult": "statgrid.session.connect"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'statgrid.session' has no attribute {name!r}")


_runner_session: Session | None = None


class _Borrowed:
    """The runner's session as a context manager that does not close it on exit."""

    def __init__(self, session: Session):
        self._s = session

    def __enter__(self) -> Session:
        return self._s

    def __exit__(self, *exc: Any) -> None:
        return None

    def __getattr__(self, name: str) -> Any:   # `s = statgrid.session(); s.sort(...)` works too
        return getattr(self._s, name)


def open_session(**options: Any) -> Session | _Borrowed:
    """Open a session with SAS-named options (memsize, threads, bufsize, utilsize)."""
    if _runner_session is not None:
        if options:
            _runner_session.set_options(options, source="statgrid.session()")
        return _Borrowed(_runner_session)
    from statgrid.session.core import Session
    return Session(options=options)


def set_runner_session(session: Session | None) -> None:
    global _runner_session
    _runner_session = session


class _CallableModule(types.ModuleType):
    def __call__(self, **options: Any) -> Session | _Borrowed:
        return open_session(**options)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["DatasetRef", "Session", "SessionLog", "StepInfo", "StepRecord", "Task", "TaskResult", "open_session"]
