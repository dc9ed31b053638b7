"""The master's parts and the hooks the core calls them at.

A part (sub-tasks, dependencies, run limits, suspend/resume, calendars, flows and arrays, fairshare
usage, load thresholds) keeps its own state in its own module and is told of the core's few
moments through these hooks, rather than being a mixin of `Master` reading and writing the
core's attributes. The core owns the job's lifecycle (every state change goes
through `Master._change`, statgrid/job/lifecycle.py); a part asks the master's public methods
for changes and never changes a job's row itself.

Hooks, each a no-op unless a part overrides it; the core calls every registered part in the
order they were registered:

- `restored()`: at the master's start, its RUN and PEND jobs were read from the store (`running`
  and `pending` hold them), before it reconciles them with the engine: rebuild what a part keeps
  of them in memory here (the reconcile may end some, and their hooks then fire).
- `reconciled()` (async): at the master's start, its jobs were reconciled with the engine (jobs
  that ended or were lost while it was away are settled), before its first dispatch: settle
  what a part's own state says about them, read what the first dispatch needs. Not called after
  the sweep's periodic re-checks. Like `start`, a fault here stops the master's start.
- `start()` (async): the master has reconciled its jobs, made its first dispatch and is about to
  serve; start tasks here.
- `stop()`: the master is shutting down; cancel tasks here (no awaits: the loop may be closing).
- `submitted(job)`: a job was committed to the store and admitted (PEND or about to dispatch).
- `changed(job, event)`: the store committed `event` (a lifecycle event name, or "submit") on
  `job`, its row as now stored. Called from inside the store's change: schedule work with
  `loop.call_soon`, do not change jobs here.
- `planning()`: a dispatch is about to run the policy over the pending jobs.
- `reconfigured(cfg)`: grid.toml was read again (`statgrid grid reconfig`); `cfg` is the new one.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:                          # names for the annotations only: no import at run time
    from statgrid.config import Config
    from statgrid.job.record import Job

log = logging.getLogger("statgrid.master")

HOOKS = ("restored", "submitted", "changed", "planning", "reconfigured")


class Part:
    """A part of the master: its state, its verbs, and the hooks it overrides."""

    name = "part"

    def restored(self) -> None:
        pass

    async def reconciled(self) -> None:
        pass

    async def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def submitted(self, job: "Job") -> None:
        pass

    def changed(self, job: "Job", event: str) -> None:
        pass

    def planning(self) -> None:
        pass

    def reconfigured(self, cfg: "Config") -> None:
        pass


class Parts:
    """The registry: the master's parts by name, called in the order they were added."""

    def __init__(self) -> None:
        self._by_name: dict[str, Part] = {}

    def add(self, part: Part) -> Part:
        if part.name in self._by_name:
            raise ValueError(f"a part named {part.name!r} is registered already; give each part its own name")
        self._by_name[part.name] = part
        return part

    def __getitem__(self, name: str) -> Part:
        return self._by_name[name]

    def __iter__(self) -> Iterator[Part]:
        return iter(tuple(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)

    def call(self, hook: str, *args) -> None:
        """Call `hook` on every part. A hook's fault is logged and the others still run: one part's
        bug must not stop a submit, a state change or a dispatch of the core."""
        if hook not in HOOKS:
            raise ValueError(f"unknown hook {hook!r}; hooks: {', '.join(HOOKS)}")
        for part in self:
            try:
                getattr(part, hook)(*args)
            except Exception:
                log.exception("part %s: hook %s failed", part.name, hook)

    async def reconciled(self) -> None:
        for part in self:
            await part.reconciled()

    async def start(self) -> None:
        for part in self:
            await part.start()

    def stop(self) -> None:
        for part in self:
            try:
                part.stop()
            except Exception:
                log.exception("part %s: stop failed", part.name)
