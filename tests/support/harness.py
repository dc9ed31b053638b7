"""A master without a grid, for tests: a real Master (its store in a temporary directory, its policy,
its lifecycle) whose engine only records what it was asked — launch, kill, cancel, suspend — so a
test replays a job's events (AttemptStarted, AttemptFinished, AttemptLost) through the master and
checks the store, with no Dask, no node and no launcher. Nomad's scheduler/testing.go Harness and
Flux's job-manager tests are the model.

    with MasterHarness(tmp_path) as h:
        job = h.submit("true")                        # dispatched at once: h.engine.launched[-1]
        h.event(h.started(job))
        h.event(h.finished(job, exit_code=0))
        assert h.job(job.id).state is JobState.DONE

`host` adds keys to [hosts.node1] (e.g. "max_load = 2.0"), `extra` adds tables to grid.toml (e.g.
queues); `restart()` stops the master as a `kill -9` would leave it (its jobs run on) and starts a
new one on the same store, through Master.start: the parts' restored and reconciled hooks, the
reconcile (with what `attempt_file` holds), the first dispatch.
"""
from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from statgrid.config import load_config
from statgrid.grid.security.auth import Caller
from statgrid.grid.master.core import Master, attempt_file, identity_of
from statgrid.grid.master.jobspec import JobRequest
from statgrid.job.protocol import AttemptFinished, AttemptLost, AttemptStarted, IoCounters, LaunchRequest, Rusage
from statgrid.job.record import Job

TOML = """
[hosts.node1]
slots = {slots}
{host}

[monitor]
enabled = false

{extra}
"""


class RecordingEngine:
    """Stands in for engine.Engine: every host of grid.toml has a worker; nothing runs anywhere."""

    def __init__(self, hosts):
        self.workers = {name: f"tcp://{name}.invalid:1" for name in hosts}
        self.threads_seen: dict[str, int] = {}
        self.launched: list[LaunchRequest] = []
        self.killed: list[tuple[str, str]] = []          # (host, task key)
        self.cancelled: list[str] = []
        self.suspended: list[str] = []
        self.resumed: list[str] = []

    def submit(self, request: LaunchRequest) -> None:
        self.launched.append(request)

    async def kill(self, host: str, key: str) -> bool:
        self.killed.append((host, key))
        return True

    async def cancel(self, key: str) -> None:
        self.cancelled.append(key)

    async def suspend(self, host: str, key: str) -> bool:
        self.suspended.append(key)
        return True

    async def resume(self, host: str, key: str) -> bool:
        self.resumed.append(key)
        return True

    async def running(self, host: str) -> dict:
        return {}

    async def task_states(self) -> dict[str, str]:
        return {}

    async def silences(self) -> dict[str, float]:
        return {}

    async def threads(self) -> dict[str, int]:
        return {}

    async def refresh_workers(self) -> dict[str, str]:
        return self.workers

    def forget_worker(self, address: str | None) -> None:
        pass

    async def on_host(self, host: str, fn, *args):
        return None

    async def close(self, stop_engine: bool) -> None:
        pass

    async def start(self) -> None:
        pass

    async def prepare(self, work_roots, monitor, cpus, fence_grace_s) -> None:
        pass


class MasterHarness:
    """A Master on a store under `root`, with a RecordingEngine, run on a loop of its own."""

    def __init__(self, root: Path, slots: int = 1, host: str = "", extra: str = ""):
        home = root / "home"
        home.mkdir(parents=True, exist_ok=True)
        (root / "grid.toml").write_text(TOML.format(slots=slots, host=host, extra=extra))
        self.cfg = load_config(root / "grid.toml", {"STATGRID_HOME": str(home)})
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.master = self.run(self._make())
        self.engine: RecordingEngine = self.master.engine
        self.caller: Caller = self.master.rights.caller(os.getuid(), "socket")
        self._started = False                            # the master went through Master.start (restart)

    async def _make(self) -> Master:
        master = Master(self.cfg)
        master.engine = RecordingEngine(self.cfg.hosts)
        return master

    def run(self, coro):
        """Run a coroutine on the harness's loop, then let the callbacks it scheduled run too."""
        result = self.loop.run_until_complete(coro)
        self.loop.run_until_complete(asyncio.sleep(0))
        return result

    def __enter__(self) -> "MasterHarness":
        return self

    def __exit__(self, *exc) -> None:
        self._close()
        self.loop.close()

    def _close(self) -> None:
        if self._started:                               # its tasks (sweep, parts) cancelled, its store closed
            self.run(self.master.stop(stop_engine=False))
        else:
            self.master.store.close()
            self.master.audit.close()

    def restart(self) -> Master:
        """A new master on the same store, started (Master.start) as after a `kill -9` of the old one."""
        self._close()
        self.master = self.run(self._make())
        self.engine = self.master.engine
        self.run(self.master.start())
        self._started = True
        return self.master

    # -- acting -------------------------------------------------------------------------------------------
    def submit(self, *argv: str, **kw) -> Job:
        req = JobRequest(argv=list(argv), cwd=str(self.root), env={"PATH": os.environ["PATH"]}, **kw)

        async def go() -> Job:
            return self.master.submit(req, self.caller)
        return self.run(go())

    def job(self, job_id: int) -> Job:
        return self.master.get(job_id)

    def event(self, record) -> None:
        """Deliver a record as the engine would (the Dask event log's JOB_TOPIC)."""
        self.run(self.master._on_job_event(record))

    def done(self, *argv: str) -> Job:
        """A job submitted (`true` without argv), started and finished with exit code 0: its DONE record."""
        job = self.submit(*(argv or ("true",)))
        self.event(self.started(job))
        self.event(self.finished(job, exit_code=0))
        return self.job(job.id)

    def kill(self, job_id: int) -> Job:
        return self.run(self.master.kill(job_id, self.caller))

    def attempt_file(self, record) -> Path:
        """Write a node's attempt record where the master's reconcile reads it (attempt_file)."""
        path = attempt_file(self.cfg, record.job_id, record.attempt)
        path.write_text(json.dumps(record.to_dict()))
        return path

    # -- records a node would send ---------------------------------------------------------------------------
    def started(self, job: Job, pid: int = 4242, start_ts: float | None = None) -> AttemptStarted:
        job = self.job(job.id)
        return AttemptStarted(key=job.task_key, job_id=job.id, attempt=job.attempt, host=job.host,
                              identity=identity_of(job.user), pid=pid, pgid=pid, cgroup=None,
                              start_ts=time.time() if start_ts is None else start_ts)

    def finished(self, job: Job, exit_code: int | None = 0, signal: int | None = None, rusage: Rusage | None = None,
                 io: IoCounters | None = None, stimer: dict | None = None) -> AttemptFinished:
        job = self.job(job.id)
        return AttemptFinished(key=job.task_key, job_id=job.id, attempt=job.attempt, host=job.host,
                               identity=identity_of(job.user), pid=job.pid or 4242, pgid=job.pid or 4242, cgroup=None,
                               start_ts=job.start_ts or time.time(), end_ts=time.time(), exit_code=exit_code,
                               signal=signal, rusage=rusage, io=io, stimer=stimer, launch_error=None,
                               attempt_file_error=None)

    def lost(self, job: Job, reason: str = "host lost: the launcher of node1 died") -> AttemptLost:
        job = self.job(job.id)
        return AttemptLost(key=job.task_key, job_id=job.id, attempt=job.attempt, host=job.host,
                           identity=identity_of(job.user), pid=job.pid or 4242, pgid=job.pid or 4242, cgroup=None,
                           start_ts=job.start_ts or time.time(), end_ts=time.time(), reason=reason)
