"""The master's side of the execution engine (Dask distributed).

The master hands Dask one job attempt at a time, only when statgrid's own policy found a free
slot, pinned to the chosen host's worker (`workers=[address]`, no other workers, no retries),
and lets it go with `fire_and_forget` — the task then runs to its end even if the master dies.
Everything the master learns comes as events: the node's "started"/"finished" (node.py) and
this module's scheduler plugin's host add/remove and task-erred messages. Kills and queries go
to one worker with `client.run` (≈10 ms).
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Awaitable, Callable

from distributed import Client, Future, KilledWorker, fire_and_forget
from distributed.diagnostics.plugin import SchedulerPlugin

from statgrid.errors import StatgridError
from statgrid.grid.execution import hoptrace, node
from statgrid.grid.security import tls as grid_tls
from statgrid.grid.execution.cluster import configure_dask
from statgrid.grid.execution.fence import CONTACT_HANDLER, FENCE_MARGIN_S
from statgrid.host.files import write_json_atomic
from statgrid.job.protocol import (TASK_KEY_PREFIX, AttemptFinished, AttemptLost, AttemptStarted, HostAction,
                                    HostEvent, LaunchRequest, ProtocolError, TaskErred, from_event,
                                    job_event_from_dict, to_event)
from statgrid.host.procfs import process_running

log = logging.getLogger("statgrid.engine")
HOST_TOPIC = "statgrid-host"
# Dask batches messages on each stream (client→scheduler every 10 ms, scheduler→worker 5 ms),
# which pays off for large task graphs. A grid sends one small task per job, and the batching
# delay is added to every slot refill: measured here, it took the 144-job benchmark from
# ~1.02× to ~1.15× its ideal makespan. So statgrid's streams flush within 1 ms.
BATCH_INTERVAL_S = 0.001
WORKER_TTL_S = 5.0
ENGINE_FILE = "engine.json"
ENGINE_START_TIMEOUT_S = 120
CALL_TIMEOUT_S = 10.0            # a call to one worker (kill, list, prepare, load) gives up after this


# A job is a graph of one task. Dask's scheduler materializes each graph it is sent in a thread of
# its own (distributed.utils.offload), so that a big graph does not hold its loop; for one task
# that is two thread hand-offs per job, each a wait for a CPU on a busy machine: measured here
# (2 cores, load 9), the hand-off took a slot refill from a median of 64 ms to 38 ms with it
# gone (benchmarks/dispatch.py). The scheduler statgrid uses takes statgrid's graphs alone (its
# engine speaks TLS to the grid's daemons only), so GridEvents has it materialize them in its loop.
async def _in_loop(func, *args, **kwargs):
    return func(*args, **kwargs)


def materialize_in_loop() -> None:
    import distributed.scheduler

    if getattr(distributed.scheduler, "offload", None) is not None:
        distributed.scheduler.offload = _in_loop


STALE_AFTER_S = 5.0              # no word from a node for this long: the host is unavail (takes no job, keeps its own)
STALE_CHECK_S = 1.0


class GridEvents(SchedulerPlugin):
    """Runs in the scheduler: tells the master when a host joins or leaves, when its node stops
    asking whether it is still a member and starts again (stale/fresh), and when a job task errs
    (KilledWorker: its worker left while running it).

    It answers the nodes' fence questions (fence.py: CONTACT_HANDLER) and keeps, on this machine's
    monotonic clock, when it last received one from each worker: every host event says how long
    ago that was (HostEvent.silent_s), which is what the master's deadline for the host's jobs
    counts from. Dask may drop a worker sooner than that deadline (its TCP timeouts, worker-ttl):
    the master waits all the same. worker-ttl is set to the fence grace plus the margin, Dask's
    default 5 minutes being far longer than any grace."""

    name = "statgrid-events"

    def __init__(self, ttl_s: float = WORKER_TTL_S, stale_after_s: float = STALE_AFTER_S):
        self.names: dict[str, str] = {}
        self.ttl_s = ttl_s
        self.stale_after_s = stale_after_s
        self.stale: set[str] = set()
        self.contact: dict[str, float] = {}        # worker address → monotonic s of its node's last question (or join)
        self.departed: dict[str, float] = {}       # host name → the same, for a worker that left

    async def start(self, scheduler) -> None:
        self.scheduler = scheduler
        # A master that restarts registers a new instance: what the old one knew of contacts carries
        # over; the stale check says again which hosts are stale now (the new master has not heard).
        old = scheduler.plugins.get(self.name)
        for field in ("contact", "departed"):
            if isinstance(getattr(old, field, None), (dict, set)):
                setattr(self, field, getattr(old, field))
        # Every scheduler, embedded or given by address, gets these here: statgrid decides requeues;
        # a silent worker is dropped at ttl_s (after its node fenced itself), not Dask's default 5
        # minutes; a stale check marks it unavail after stale_after_s; a job's graph is
        # materialized without a thread hand-off (materialize_in_loop).
        from tornado.ioloop import PeriodicCallback

        scheduler.allowed_failures = 0
        scheduler.worker_ttl = self.ttl_s
        materialize_in_loop()
        scheduler.handlers[CONTACT_HANDLER] = self.answer_contact
        for name, fn, every_s in (("worker-ttl", scheduler.check_worker_ttl, min(self.ttl_s, 5.0)),
                                  ("statgrid-stale", self._check_stale, STALE_CHECK_S)):
            old = scheduler.periodic_callbacks.pop(name, None)
            if old is not None:
                old.stop()
            check = PeriodicCallback(fn, every_s * 1000)
            check.start()
            scheduler.periodic_callbacks[name] = check
        now = time.monotonic()
        for addr, ws in scheduler.workers.items():
            self.names[addr] = str(ws.name)
            self.contact.setdefault(addr, now)
        for comm in [*scheduler.stream_comms.values(), *scheduler.client_comms.values()]:
            comm.interval = BATCH_INTERVAL_S

    def answer_contact(self, address: str = "", name: str = "") -> dict:
        """A node's fence question: is the worker at `address`, named `name`, still a member? Its
        time of arrival is the scheduler's last contact with that node."""
        ws = self.scheduler.workers.get(address)
        member = ws is not None and str(ws.name) == name
        if member:
            self.contact[address] = time.monotonic()
        return {"member": member}

    def silent_s(self, address: str) -> float:
        return max(0.0, time.monotonic() - self.contact.get(address, time.monotonic()))

    def _host_event(self, action: HostAction, address: str, name: str | None) -> None:
        self.scheduler.log_event(HOST_TOPIC, to_event(HostEvent(action=action, address=address, name=name,
                                                                silent_s=round(self.silent_s(address), 3))))

    def add_worker(self, scheduler, worker: str) -> None:
        self.names[worker] = str(scheduler.workers[worker].name)
        self.contact[worker] = time.monotonic()     # its registration; its node's questions follow at once
        self.departed.pop(self.names[worker], None)
        if worker in scheduler.stream_comms:
            scheduler.stream_comms[worker].interval = BATCH_INTERVAL_S
        self._host_event(HostAction.ADD, worker, self.names[worker])

    def _check_stale(self) -> None:
        for addr, ws in list(self.scheduler.workers.items()):
            stale = self.silent_s(addr) > self.stale_after_s
            if stale != (addr in self.stale):
                (self.stale.add if stale else self.stale.discard)(addr)
                self._host_event(HostAction.STALE if stale else HostAction.FRESH, addr, str(ws.name))

    def remove_worker(self, scheduler, worker: str, *, stimulus_id: str, **kwargs) -> None:
        self.stale.discard(worker)
        name = self.names.pop(worker, None)
        self._host_event(HostAction.REMOVE, worker, name)
        last = self.contact.pop(worker, None)
        if name is not None and last is not None:
            self.departed[name] = last

    def silences(self) -> dict[str, float]:
        """host name → seconds since its node's last contact, for every host this scheduler has known."""
        now = time.monotonic()
        ages = {name: now - last for name, last in self.departed.items()}
        ages.update({self.names[a]: self.silent_s(a) for a in self.contact if a in self.names})
        return ages

    def log_event(self, topic, msg) -> None:
        """hoptrace only: a job event passing through the scheduler (to the master)."""
        if hoptrace.PATH and topic == node.JOB_TOPIC and isinstance(msg, str):
            try:
                data = json.loads(msg)
                hoptrace.mark(f"S.event_{data['type']}", data["key"])
            except (ValueError, KeyError, TypeError):
                pass

    def transition(self, key, start, finish, *args, stimulus_id: str, **kwargs) -> None:
        if hoptrace.PATH and isinstance(key, str) and key.startswith(TASK_KEY_PREFIX):
            hoptrace.mark(f"S.{start}>{finish}", key)
        if finish == "erred" and isinstance(key, str) and key.startswith(TASK_KEY_PREFIX):
            # A fire-and-forget task is forgotten right after it errs: the exception is only here.
            exc = kwargs.get("exception")
            try:
                exc = pickle.loads(exc) if isinstance(exc, bytes) else exc
            except Exception:                      # noqa: BLE001 — a message is all we need
                pass
            text = f"{type(exc).__name__}: {exc}" if isinstance(exc, BaseException) else str(exc or "task failed")
            worker = kwargs.get("worker")
            erred = TaskErred(key=key, error=text, host_lost=isinstance(exc, KilledWorker),
                              worker=worker if isinstance(worker, str) else None)
            self.scheduler.log_event(node.JOB_TOPIC, to_event(erred))


def _silences(dask_scheduler) -> dict[str, float]:
    plugin = dask_scheduler.plugins.get(GridEvents.name)
    return plugin.silences() if plugin is not None and hasattr(plugin, "silences") else {}


def _task_states(dask_scheduler, prefix: str = TASK_KEY_PREFIX) -> dict[str, str]:
    return {k: ts.state for k, ts in dask_scheduler.tasks.items() if isinstance(k, str) and k.startswith(prefix)}


JobEvent = AttemptStarted | AttemptFinished | AttemptLost | TaskErred


class Engine:
    """Connects the master to the cluster. `on_job_event` and `on_host_event` are coroutines; they
    get the events as protocol records (an event that is not one is logged and dropped)."""

    def __init__(self, home: Path, hosts: dict[str, int], scheduler_address: str = "",
                 on_job_event: Callable[[JobEvent], Awaitable[None]] | None = None,
                 on_host_event: Callable[[HostEvent], Awaitable[None]] | None = None, tls: bool = True,
                 listen: str = "127.0.0.1", fence_grace_s: float = 60.0, port: int = 0):
        self.home = home
        self.port = port
        self.fence_grace_s = fence_grace_s
        self.listen = listen                       # the embedded scheduler's address: nodes of other machines join there
        self.hosts = hosts
        self.external = scheduler_address
        self.tls = tls                             # [master] engine_tls: mutual TLS with the grid's CA (tls.py)
        self.on_job_event = on_job_event
        self.on_host_event = on_host_event
        self.client: Client | None = None
        self.address = ""
        self.engine_pid: int | None = None
        self.workers: dict[str, str] = {}          # host name → worker address
        # host name → its worker's threads as last seen (kept while it is away): the slots of a host
        # that sets none in grid.toml, which its worker resolved when it started (node.cpus_seen)
        self.threads_seen: dict[str, int] = {}

    # -- start / stop --------------------------------------------------------------------------------
    async def start(self) -> None:
        configure_dask(self.fence_grace_s)
        security = None
        if self.tls:
            if self.external and not self.external.startswith("tls://"):
                raise StatgridError(f"[master] scheduler = {self.external!r}: the grid talks to its engine over TLS "
                                    "only; start the scheduler with the grid's certificate (`statgrid grid tls` "
                                    "prints how) and give its tls:// address.")
            # A running engine was started with the files there now: never renew under it.
            security = grid_tls.security(grid_tls.ensure(self.home, renew=not self.external and
                                                         running_engine(self.home) is None))
        self.address = self.external or self._embedded_address()
        try:
            self.client = await Client(self.address, asynchronous=True, timeout="20s", name="statgrid-master",
                                       security=security)
        except OSError as exc:                     # distributed's CommClosedError is one (a refused certificate too)
            hint = (" with the grid's certificates (`statgrid grid tls` prints the command)"
                    if self.tls and self.external else "")
            raise StatgridError(f"cannot reach the Dask scheduler at {self.address!r}: {exc}; start it{hint}, or "
                                "set [master] scheduler = \"\" in grid.toml for the embedded engine.") from None
        self.client.scheduler_comm.interval = BATCH_INTERVAL_S
        await self.client.register_plugin(GridEvents(ttl_s=self.fence_grace_s + FENCE_MARGIN_S),
                                          name=GridEvents.name)
        # Every worker, now and joining later, fences itself (node.FencePlugin): set up at its
        # registration, before it reads its first task.
        # The scheduler keeps it for joining workers first; a worker that does not answer now (cut off)
        # still runs the fence a master started there before (or fences itself: it has no contact).
        try:
            await asyncio.wait_for(self.client.register_plugin(node.FencePlugin(self.fence_grace_s),
                                                               name=node.FencePlugin.name), CALL_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as exc:
            log.warning("not every worker took the fence plugin now (%r); each gets it when it joins again", exc)
        self.client.subscribe_topic(node.JOB_TOPIC, self._job_event)
        self.client.subscribe_topic(HOST_TOPIC, self._host_event)
        await self.refresh_workers()

    def _embedded_address(self) -> str:
        """Reuse the engine a previous master started (still alive after a master crash), or start one."""
        path = self.home / ENGINE_FILE
        info = running_engine(self.home)
        if info is not None:
            started = info.get("hosts") or {}
            # Its workers were made at its start: the same hosts, each with at least the slots now
            # configured (`statgrid reconfig` may have lowered them since).
            if set(started) != set(self.hosts) or any(self.hosts[h] > started[h] for h in self.hosts):
                raise StatgridError(f"the engine left running by the previous master (pid {info['pid']}) has hosts "
                                    f"{info.get('hosts')}, but grid.toml now says {self.hosts}; stop it and its jobs "
                                    "with `statgrid grid down`, then `statgrid grid up`.")
            if info.get("tls", False) != self.tls:
                raise StatgridError(f"the engine left running by the previous master (pid {info['pid']}) has "
                                    f"engine_tls = {str(info.get('tls', False)).lower()}, but grid.toml now says "
                                    f"{str(self.tls).lower()}; stop it and its jobs with `statgrid grid down`, then "
                                    "`statgrid grid up`.")
            self.engine_pid = info["pid"]
            return info["address"]
        log = open(self.home / "engine.log", "ab")
        argv = [sys.executable, "-m", "statgrid.grid.execution.cluster", "--hosts", json.dumps(self.hosts), "--host", self.listen,
                "--port", str(self.port), "--fence-grace", str(self.fence_grace_s)]
        if self.tls:
            argv += ["--tls-dir", str(grid_tls.TlsFiles.under(self.home).dir)]
        proc = subprocess.Popen(argv,
                                stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                                start_new_session=True, close_fds=True)
        log.close()
        line = _readline_with_timeout(proc, ENGINE_START_TIMEOUT_S)
        if not line:
            proc.kill()
            raise StatgridError(f"the embedded engine did not start (exit code {proc.poll()}); see "
                                f"{self.home / 'engine.log'}.")
        address = json.loads(line)["address"]
        proc.stdout.close()
        # 0600: without TLS (engine_tls = false) the address is all another user needs to run code as us.
        write_json_atomic(path, {"pid": proc.pid, "address": address, "hosts": self.hosts, "tls": self.tls,
                                 "started_ts": time.time()}, private=True)
        self.engine_pid = proc.pid
        return address

    async def close(self, stop_engine: bool) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None
        if stop_engine and self.engine_pid:
            await asyncio.to_thread(stop_engine_process, self.home, self.engine_pid)

    # -- events ----------------------------------------------------------------------------------------
    async def _job_event(self, event) -> None:
        # Dask's client awaits its topic handlers one after another for a whole batch of events
        # (Client._handle_report); without a yield here a batch of ~30 job ends held the loop ~100 ms
        # and submits waited behind it (benchmarks/scheduling.py: submit p99 260 ms).
        if hoptrace.PATH:
            data = json.loads(event[1])
            hoptrace.mark(f"M.recv_{data.get('type')}", data.get("key", "?"))
        await asyncio.sleep(0)
        try:
            msg = from_event(event[1], job_event_from_dict)
        except ProtocolError as exc:               # a node of another statgrid release
            log.error("job event dropped: %s", exc)
            return
        hoptrace.mark(f"M.event_{type(msg).__name__}", msg.key)
        if self.on_job_event:
            await self.on_job_event(msg)
        hoptrace.mark(f"M.handled_{type(msg).__name__}", msg.key)

    async def _host_event(self, event) -> None:
        try:
            msg = from_event(event[1], HostEvent.from_dict)
        except ProtocolError as exc:
            log.error("host event dropped: %s", exc)
            return
        if msg.action is HostAction.ADD and msg.name:
            self.workers[msg.name] = msg.address
        elif msg.action is HostAction.REMOVE:
            self.forget_worker(msg.address)
        if self.on_host_event:
            await self.on_host_event(msg)

    def forget_worker(self, address: str | None) -> None:
        """A worker died: its host takes no job until its replacement says hello."""
        for name, addr in list(self.workers.items()):
            if addr == address:
                del self.workers[name]

    async def refresh_workers(self) -> dict[str, str]:
        info = await self.client.scheduler.identity()
        self.workers = {str(w["name"]): addr for addr, w in info["workers"].items()}
        self.threads_seen.update({str(w["name"]): int(w.get("nthreads", 0)) for w in info["workers"].values()})
        return self.workers

    async def threads(self) -> dict[str, int]:
        """host name → its worker's threads (the most jobs it can run at once: its slots when it started)."""
        info = await self.client.scheduler.identity()
        return {str(w["name"]): int(w.get("nthreads", 0)) for w in info["workers"].values()}

    # -- operations ----------------------------------------------------------------------------------------
    def submit(self, request: LaunchRequest) -> None:
        """Hand one attempt to its host's worker. The task's argument is the request's to_dict(),
        which the node checks (LaunchRequest.from_dict): a pickled record of another release's
        shape would not be."""
        hoptrace.mark("M.submit", request.task_key)
        address = self.workers[request.host]
        future = self.client.submit(node.run_job, request.to_dict(), key=request.task_key, workers=[address],
                                    allow_other_workers=False, retries=0, pure=False)
        fire_and_forget(future)
        hoptrace.mark("M.submitted", request.task_key)

    async def cancel(self, key: str) -> None:
        """Drop a task that never started (its worker is gone), so it can never start later."""
        await self.client.cancel([Future(key, self.client)], force=True)

    async def on_host(self, host: str, fn, *args):
        address = self.workers.get(host)
        if address is None:
            return None
        try:
            result = await asyncio.wait_for(self.client.run(fn, *args, workers=[address], on_error="return"),
                                            CALL_TIMEOUT_S)
        except (OSError, KeyError, asyncio.TimeoutError):
            return None
        value = result.get(address)
        return None if isinstance(value, BaseException) else value

    async def kill(self, host: str, key: str) -> bool:
        return bool(await self.on_host(host, node.kill_job, key))

    async def signal(self, host: str, key: str, signum: int) -> bool:
        """Send signum to the job's process group on its node (node.signal_job): a kernel's interrupt."""
        return bool(await self.on_host(host, node.signal_job, key, signum))

    async def suspend(self, host: str, key: str) -> bool:
        """Stop the job's processes where they are (node.suspend_job, LSF bstop). False if its host
        has no such running job, or did not answer."""
        return bool(await self.on_host(host, node.suspend_job, key))

    async def resume(self, host: str, key: str) -> bool:
        """Let a suspended job run again (node.resume_job, LSF bresume). False as for suspend."""
        return bool(await self.on_host(host, node.resume_job, key))

    async def running(self, host: str) -> dict | None:
        return await self.on_host(host, node.list_running)

    async def silences(self) -> dict[str, float]:
        """host name → seconds since the scheduler last heard from its node (GridEvents.silences)."""
        return await self.client.run_on_scheduler(_silences)

    async def task_states(self) -> dict[str, str]:
        return await self.client.run_on_scheduler(_task_states)

    async def prepare(self, work_roots: list[str], monitor: dict | None, cpus: dict[str, tuple[int, ...]],
                      fence_grace_s: float | None = None) -> None:
        """Warm every node's launcher, start its monitor and fence, clean WORK of jobs that died with a worker."""
        await asyncio.gather(*(self.on_host(h, node.prepare, work_roots, monitor, cpus.get(h, ()), fence_grace_s)
                               for h in list(self.workers)))


def running_engine(home: Path) -> dict | None:
    """engine.json of an embedded engine that is still alive, else None."""
    try:
        info = json.loads((home / ENGINE_FILE).read_text())
        if process_running(info["pid"], b"statgrid.grid.execution.cluster"):
            return info
    except (OSError, ValueError, KeyError):
        pass
    return None


def stop_engine_process(home: Path, pid: int, timeout_s: float = 20.0) -> None:
    """SIGTERM the embedded engine (its workers close, their launchers kill what still runs);
    SIGKILL it after timeout_s."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout_s
    while process_running(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            break
        time.sleep(0.1)
    (home / ENGINE_FILE).unlink(missing_ok=True)


def _readline_with_timeout(proc: subprocess.Popen, timeout_s: float) -> bytes:
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if sel.select(timeout=0.5):
            return proc.stdout.readline()
        if proc.poll() is not None:
            return b""
    return b""

