"""The grid master: job store + dispatcher + engine, in one asyncio loop (the API's loop).

Event-driven dispatch (DESIGN.md: no MBD_SLEEP_TIME): `dispatch()` runs right after a submit,
a job's end, a requeue, a kill of a pending job, and a host joining — never on a timer. One
loop and no threads means no locks: every state change is a short synchronous SQLite
transaction between awaits.

Restart (kill -9, then `grid up`): the engine outlives the master, so `reconcile()` sorts every
job the store says is RUN into: finished while we were away (attempt file says so), still
running (its task is still in the scheduler, or its node still runs it), never started
(no attempt file, no task: back to PEND), or lost (started, now gone: requeue or EXIT).

Parts (parts.py): sub-tasks, dependencies, run limits, suspend/resume, calendars, flows and arrays,
fairshare usage and load thresholds keep their own state in their own module and hear the core's
hooks (jobs restored and reconciled at a start, a job submitted, a state changed, a dispatch
planned, a reconfig). What is left as mixins of this class is the core's own verbs split over
files: outcomes and the restart's reconcile (outcome.py), hosts (hostctl.py), the verbs on
pending jobs (queuectl.py).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import pwd
import time
from pathlib import Path

from statgrid.config import Config
from statgrid.errors import NotFound, StatgridError, UsageError  # noqa: F401 — NotFound: api.py imports it here
from statgrid.grid.security import auth
from statgrid.grid.execution import node
from statgrid.grid.security.auth import Caller
from statgrid.grid.execution.engine import Engine
from statgrid.grid.master.events import Broadcaster
from statgrid.grid.execution.fence import Silences
from statgrid.grid.master.jobspec import ARRAY_ENV_MAX_BYTES, JobRequest, check_bounds, launch_argv, parse_array, validate
from statgrid.job.record import Job, JobState
from statgrid.grid.scheduling.backlog import Backlog
from statgrid.grid.master.flows import Flows, check_submit_key, request_digest
from statgrid.grid.scheduling.policy import HostView, Limits, Plan, count_running, host_views, plan
from statgrid.grid.master.queuectl import QueueControl
from statgrid.job.protocol import (AttemptFinished, AttemptLost, AttemptStarted, Identity, LaunchRequest, TaskErred,
                                    parse_task_key)
from statgrid.grid.master.hostctl import HostControl
from statgrid.grid.master.calendars import Calendars
from statgrid.grid.master.dependencies import Dependencies
from statgrid.grid.master.loads import LoadThresholds
from statgrid.grid.master.parts import Parts
from statgrid.grid.master.runlimits import RunLimits
from statgrid.grid.master.subtasks import SubTasks
from statgrid.grid.master.suspend import Suspensions
from statgrid.grid.master.kernels import Kernels
from statgrid.grid.master.usage import FairshareUsage
from statgrid.grid.master.outcome import Outcomes
from statgrid.grid.master.store import JobFilter, JobStore
from statgrid.job.jobdir import JobDir, attempt_path, attempts_root, jobs_root

log = logging.getLogger("statgrid.master")

# A safety net, not the dispatch path: events can be lost while the Dask client reconnects, so
# every SWEEP_S the master re-checks its RUN jobs the way a restart does. Jobs dispatched less
# than SWEEP_MIN_AGE_S ago are left alone (their task may still be on its way to the scheduler).
SWEEP_S = 30.0
SWEEP_MIN_AGE_S = 10.0


def grid_dir(cfg: Config) -> Path:
    return cfg.home / "grid"


def jobs_dir(cfg: Config) -> Path:
    return jobs_root(cfg.home)


def job_dir(cfg: Config, job_id: int) -> Path:
    """A job's output and logs: made by the master, given to the job's user by the launcher (jobdir.JobDir)."""
    return JobDir.of(cfg.home, job_id).path


def attempts_dir(cfg: Config) -> Path:
    """The attempt records, written by the nodes as the grid's account: no job's user may write here."""
    return attempts_root(cfg.home)


def attempt_file(cfg: Config, job_id: int, attempt: int) -> Path:
    return attempt_path(attempts_dir(cfg), job_id, attempt)


def make_grid_dirs(cfg: Config) -> None:
    """<home>/grid (0711: users reach the master's socket and ca.pem in it by name, list nothing),
    <home>/grid/attempts (0700: only the grid reads or writes attempt records) and <home>/jobs
    (0755: the grid's; each job's directory below it becomes its user's, and no user may add,
    rename or remove one). The modes are set whatever the umask, and reset if they drifted."""
    cfg.home.mkdir(parents=True, exist_ok=True)
    for path, mode in ((grid_dir(cfg), 0o711), (attempts_dir(cfg), 0o700), (jobs_dir(cfg), 0o755)):
        path.mkdir(mode=mode, exist_ok=True)
        try:
            if path.stat().st_mode & 0o7777 != mode:
                os.chmod(path, mode)
        except OSError as exc:
            raise StatgridError(f"{path}: cannot make it mode {mode:04o} ({exc.strerror}); it must belong to the "
                                "grid's account: chown it to the account that runs the master, or choose another "
                                "grid home") from None


IDENTITY_TTL_S = 60.0              # how long a looked-up identity is reused (an account changed later is seen after it)
IDENTITY_CACHE_MAX = 4096
_identities: dict[str, tuple[float, Identity]] = {}


def identity_of(user: str) -> Identity:
    """The job user's ids from this machine's user database, each looked up at most once per
    IDENTITY_TTL_S (a directory service may be slow, and dispatch runs on the API's loop; an
    account added, removed or given new groups is seen within that time). A user unknown here gets
    None ids: every node refuses such a job (protocol.Identity), which then ends EXIT with the
    node's reason."""
    now = time.monotonic()
    hit = _identities.get(user)
    if hit is not None and hit[0] > now:
        return hit[1]
    if len(_identities) >= IDENTITY_CACHE_MAX:
        _identities.clear()
    identity = _lookup_identity(user)
    _identities[user] = (now + IDENTITY_TTL_S, identity)
    return identity


def _lookup_identity(user: str) -> Identity:
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return Identity(user=user, uid=None, gid=None, groups=())
    try:
        groups = tuple(dict.fromkeys([entry.pw_gid, *os.getgrouplist(user, entry.pw_gid)]))
    except OSError:
        groups = (entry.pw_gid,)
    return Identity(user=user, uid=entry.pw_uid, gid=entry.pw_gid, groups=groups)


class Master(Outcomes, HostControl, QueueControl):
    def __init__(self, cfg: Config):
        self.cfg = cfg
        make_grid_dirs(cfg)
        self.events = Broadcaster()                # changes for live viewers (GET /events)
        self.console = None                        # the web console's live state (console/app.mount sets it)
        self.store = JobStore(grid_dir(cfg) / "jobs.db", on_change=self._on_store_change)
        self.rights = auth.Rights(cfg)
        self.tokens = auth.Tokens(self.store.con)
        self.audit = auth.Audit(grid_dir(cfg) / "audit.log")
        # The embedded engine runs the workers of hosts on this machine; hosts that join from their
        # own machines (`statgrid node up`) reach its scheduler on [master] listen.
        # A host without slots gets one per CPU its worker sees: for these, this machine's (node.cpus_seen).
        self.engine = Engine(grid_dir(cfg), {h.name: h.slots if h.slots is not None else node.cpus_seen(h.cpus)
                                             for h in cfg.hosts.values() if not h.joins},
                             cfg.master.scheduler, on_job_event=self._on_job_event, on_host_event=self._on_host_event,
                             tls=cfg.master.engine_tls, listen=cfg.master.listen,
                             fence_grace_s=cfg.master.fence_grace_s, port=cfg.master.engine_port)
        self.stale: set[str] = set()               # hosts whose heartbeats stopped: unavail, jobs left alone
        # Hosts out of contact: their jobs are given away at the deadline (fence.py), not before.
        self.silences = Silences(cfg.master.fence_grace_s, self._silence_due)
        from statgrid.grid.master.metrics import GridMetrics

        self.metrics = GridMetrics(self)
        self.running: dict[int, Job] = {}
        self.closed = self.store.closed_hosts()    # host → who closed it, why, when (`statgrid host close`)
        self.pending = Backlog()                   # the store's PEND jobs, kept here: dispatch reads no rows
        self.last_plan = Plan()                    # the latest dispatch's decisions: why each pending job waits
        # host → dispatch sequence number of its latest job start (policy.HostView.last_start): ties
        # among equally loaded hosts go to the one that started a job least recently. Memory only:
        # after a restart ties start again from grid.toml order, which is all this is for.
        self.last_start: dict[str, int] = {}
        self.waiters: dict[int, list[asyncio.Future]] = {}
        self.accepting = True
        self._tasks: set[asyncio.Task] = set()
        self._sweeper: asyncio.Task | None = None
        self.work_roots = [str(cfg.libraries.work), str(cfg.libraries.util)]
        self.cpus = {h.name: h.cpus for h in cfg.hosts.values() if h.cpus}
        self.monitor = None if not cfg.monitor.enabled else {
            "out": str(cfg.home / "monitor"), "interval_s": cfg.monitor.interval_s,
            "libraries": {"data": str(cfg.libraries.data), "work": str(cfg.libraries.work),
                          "util": str(cfg.libraries.util)}}
        # The parts (parts.py): each keeps its own state and hears the core's hooks, in this order.
        # Sub-tasks first: a parent's end holds its pending sub-tasks, and schedules their end,
        # before any other part hears of it (the dependents' re-check dispatches).
        self.parts = Parts()
        self.subtasks: SubTasks = self.parts.add(SubTasks(self))
        self.dependencies: Dependencies = self.parts.add(Dependencies(self))
        self.runlimits: RunLimits = self.parts.add(RunLimits(self))
        self.suspensions: Suspensions = self.parts.add(Suspensions(self))
        self.calendars: Calendars = self.parts.add(Calendars(self))
        self.flows_part: Flows = self.parts.add(Flows(self))
        self.usage: FairshareUsage = self.parts.add(FairshareUsage(self))
        self.thresholds: LoadThresholds = self.parts.add(LoadThresholds(self))
        self.kernels: Kernels = self.parts.add(Kernels(self))

    # -- life cycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        self.running = {j.id: j for j in self.store.select(JobFilter(states=(JobState.RUN,)))}
        for job in self.store.select(JobFilter(states=(JobState.PEND,))):
            self._enqueue(job)
        self.parts.call("restored")                     # before the reconcile, which may end some of them
        await self.engine.start()
        try:
            await self.engine.prepare(self.work_roots, self.monitor, self.cpus, self.cfg.master.fence_grace_s)
            await self.reconcile()
        except BaseException:
            await self.engine.close(stop_engine=False)   # jobs keep running; the next `grid up` adopts them
            raise
        await self.parts.reconciled()                   # before the first dispatch
        self.dispatch()
        self._sweeper = asyncio.create_task(self._sweep_forever())
        await self.parts.start()
        if self.console is not None:
            self.console.start()

    def _spawn(self, coro) -> None:
        """Run a call to the engine in the background: event handlers never wait on a worker."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.warning("background call failed: %r", t.exception())
        task.add_done_callback(done)

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_S)
            try:
                await self.engine.refresh_workers()
                await self.reconcile(min_age_s=SWEEP_MIN_AGE_S)
            except Exception as exc:                     # engine unreachable: no host takes jobs
                log.warning("sweep: the engine does not answer (%r); hosts unavailable", exc)
                self.engine.workers.clear()
            self.dispatch()

    def begin_shutdown(self) -> None:
        """No more submits or dispatches; release every `wait` so the API can close."""
        self.accepting = False
        self.events.close()                        # live viewers' streams end, so the API can close
        if self.console is not None:
            self.console.stop()
        for job_id in list(self.waiters):
            job = self.store.get(job_id)
            if job is not None:
                self._wake(job)

    async def stop(self, stop_engine: bool = True, kill_grace_s: float = 15.0) -> None:
        """`grid down`: no new dispatches; kill running jobs (rerunnable ones go back to PEND for the
        next `grid up`), wait for them to end, then stop the engine."""
        self.begin_shutdown()
        if self._sweeper is not None:
            self._sweeper.cancel()
        self.parts.stop()
        if stop_engine:
            for job in list(self.running.values()):
                await self.kill(job.id, reason="grid down")
            deadline = time.monotonic() + kill_grace_s
            while self.running and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        await self.engine.close(stop_engine=stop_engine)
        self.store.close()
        self.audit.close()

    # -- submit / dispatch --------------------------------------------------------------------------------
    def _publish_job(self, job: Job, event: str) -> None:
        self.events.publish({"type": "job", "event": event, "job": job.to_dict()})

    def _on_store_change(self, job: Job, event: str) -> None:
        self._publish_job(job, event)
        self.parts.call("changed", job, event)

    def _publish_host(self, host: str, action: str) -> None:
        self.events.publish({"type": "host", "host": host, "action": action})

    def authenticate(self, peer_uid: int | None, authorization: str) -> Caller:
        """The caller of a request: the local socket's peer (kernel-checked), else its bearer token.
        Raises auth.NotAuthenticated (401) or auth.Forbidden (403)."""
        if peer_uid is not None:
            return self.rights.caller(peer_uid, "socket")
        token = auth.bearer(authorization)
        if token is None:
            raise auth.NotAuthenticated("this request carries no credential: on the master's machine the statgrid "
                                        "CLI needs none (it uses the local socket); from elsewhere send a token "
                                        f"(Authorization: Bearer …): {auth.HOW_TO_GET_A_TOKEN}.")
        found = self.tokens.lookup(token)
        if found is None:
            raise auth.NotAuthenticated(f"the token is not valid (unknown, mistyped or revoked); {auth.HOW_TO_GET_A_TOKEN}.")
        token_id, user = found
        uid = auth.uid_of(user)
        if uid is None:
            raise auth.Forbidden(f"token {token_id} belongs to {user!r}, who no longer has an account on the master's "
                                 "machine; ask a grid administrator.")
        return self.rights.caller(uid, "token", user=user, token_id=token_id)

    def submit(self, req: JobRequest, caller: Caller, key: str | None = None) -> Job:
        """A job of `caller`'s: it runs as them. Nobody, root included, submits for another user.
        An array's jobs are one transaction. `key`: the submit's idempotency key (flows.py): sent
        again with the same request, it answers the job the first submit made."""
        if not self.accepting:
            raise StatgridError("the master is shutting down; submit again after `statgrid grid up`.")
        check_bounds(req)                          # first: no message below quotes a 10 MB or control-character value
        key = check_submit_key(key)
        digest = request_digest("job", dataclasses.asdict(req)) if key else ""
        replay = self.flows_part.replayed(caller, key, "job", digest)
        if replay is not None:
            return self.get(replay["job_ids"][0])
        if req.user and req.user != caller.user:
            raise auth.Forbidden(f"you are {caller.user!r} and asked to submit as {req.user!r}: a job runs as the person "
                                 "who submits it, so nobody (root included) submits for another user; leave the user "
                                 "out, or log in as them.")
        req = dataclasses.replace(req, user=caller.user)
        array = parse_array(req.name) if req.name else None
        # Files are checked as the caller by the CLI, and as the caller by the node; the master
        # checks them itself only for its own account's requests (jobspec.validate).
        job = validate(req, self.cfg, time.time(), check_files=caller.uid == os.geteuid())
        job = dataclasses.replace(job, depend=self.dependencies.check(req.depend, job.user))
        if req.parent_id is not None:
            self.subtasks.check_parent(req.parent_id, caller)
        if array is not None:
            env_bytes = sum(len(k) + len(v) + 2 for k, v in job.env.items())
            if env_bytes * len(array.indices) > ARRAY_ENV_MAX_BYTES:
                raise UsageError(f"array {req.name!r}: {len(array.indices):,} jobs × an environment of {env_bytes:,} "
                                 f"bytes is over {ARRAY_ENV_MAX_BYTES // 2**20} MiB; submit from a smaller environment "
                                 "(`env -i PATH=$PATH HOME=$HOME statgrid submit …`) or split the array.")
        with self.store.transaction():             # an array and all its jobs, and the key, or nothing
            jobs = [self.store.add(job)] if array is None else self.flows_part.add_array(job, array, req.name)
            if key is not None:
                self.store.record_submit_key(caller.user, key, digest, "job", {"job_ids": [j.id for j in jobs]})

            def admit() -> None:                   # the master's memory, once the store has them
                verdict = self.dependencies.verdict(jobs[0]) if jobs[0].depend else None    # once for an array
                for j in jobs:
                    self.metrics.on_submit(j)
                    self._enqueue(j, verdict)
                    self.parts.call("submitted", j)    # a sub-task joins its parent's (subtasks.py)
                self.dispatch()
            self.store.after_commit(admit)
        return self.running.get(jobs[0].id) or self.pending.get(jobs[0].id) or self.get(jobs[0].id)

    def host_views(self) -> dict[str, HostView]:
        running: dict[str, int] = {}
        reserved: dict[str, int] = {}
        for job in self.running.values():
            running[job.host] = running.get(job.host, 0) + 1
            reserved[job.host] = reserved.get(job.host, 0) + job.mem_bytes
        # A host out of contact takes no job, and neither does its node's new worker until the silence
        # is settled (its node's report, or the deadline): a job given to the new worker would otherwise
        # fall under the old worker's deadline, which may come before that worker's node fences it.
        up = [h for h in self.engine.workers if h not in self.stale and h not in self.silences.hosts]
        return host_views(self.cfg.hosts, up, running, self.last_start, self.closed, reserved, self.thresholds.loads,
                          self.engine.threads_seen)

    def limits(self, now_ts: float | None = None) -> Limits:
        """What the policy obeys besides queues and hosts, as of now (fairshare usage decays)."""
        cfg = self.cfg
        usage = self.usage.at(time.time() if now_ts is None else now_ts, self.running.values()) \
            if any(q.fairshare for q in cfg.queues.values()) else {}
        return Limits(cfg.groups, cfg.limits, cfg.scheduling, self.flows_part.throttles, usage)

    def dispatch(self) -> int:
        """Run the policy over the pending jobs and start what it chose. Returns the jobs started."""
        if not self.accepting:
            return 0
        if self.store.in_transaction:              # the engine hears only of what the store committed
            self.store.after_commit(self.dispatch)
            return 0
        if not self.pending:
            self.last_plan = Plan()
            return 0
        self.parts.call("planning")
        hosts = self.host_views()
        chosen = plan(self.pending.lists, hosts, self.cfg.queues, count_running(self.running.values(), self.cfg.groups),
                      self.limits())
        self.last_plan = chosen
        self.last_start = {name: h.last_start for name, h in hosts.items()}
        started = 0
        for job, host in chosen.starts:
            started += self._start_attempt(job, host)
        return started

    def files_uid(self, user: str) -> int | None:
        """The uid that must own the files read from `user`'s job directories: that user's on this machine (None
        if unknown here: nobody's is trusted), the grid's own on a personal grid (its jobs run as it)."""
        return self.rights.grid_uid if self.rights.personal else identity_of(user).uid

    def pend_reason(self, job: Job) -> str | None:
        """Why a PEND job waits, as of the latest dispatch (LSF's bjobs -p); None for other states."""
        if job.state != JobState.PEND:
            return None
        held = self.pending.held.get(job.id)
        return held if held is not None else self.last_plan.reason(job)

    def _start_attempt(self, job: Job, host: str) -> bool:
        self.pending.remove(job.id)
        new = self._change(job, "dispatch", host=host, dispatch_ts=time.time())
        if new is None:
            return False
        directory = JobDir.of(self.cfg.home, new.id)
        directory.path.mkdir(parents=True, exist_ok=True)
        env = {**new.env, "STATGRID_HOME": str(self.cfg.home), "STATGRID_JOB_ID": str(new.id),
               "STATGRID_JOB_ATTEMPT": str(new.attempt), "STATGRID_HOST": host}
        if new.array_index is not None:
            env["STATGRID_ARRAY_INDEX"] = str(new.array_index)
            env["STATGRID_ARRAY_ID"] = str(new.flow_id)
        if self.cfg.source is not None:
            env["STATGRID_CONFIG"] = str(self.cfg.source)
        if new.kind == "kernel":
            env.update(self.kernels.launch_env(new, host))
        output = str(directory.output)
        request = LaunchRequest(job_id=new.id, attempt=new.attempt, host=host,
                                argv=tuple(launch_argv(new, self.cfg, directory.path)), env=env, cwd=new.cwd,
                                job_dir=str(directory.path),
                                work_roots=tuple(self.work_roots) if new.kind in ("session", "kernel") else (),
                                stdout=output, stderr=output, identity=identity_of(new.user),
                                attempt_file=str(attempt_file(self.cfg, new.id, new.attempt)),
                                mem_limit_bytes=new.mem_bytes)
        self.running[new.id] = new
        try:
            self.engine.submit(request)
        except Exception as exc:                  # the worker left between the plan and now
            log.warning("could not hand job %s to %s: %s", new.id, host, exc)
            self._back_to_pending(new, "dispatch failed")
            return False
        return True

    # -- events from the engine ------------------------------------------------------------------------
    async def _on_job_event(self, msg: AttemptStarted | AttemptFinished | AttemptLost | TaskErred) -> None:
        try:
            job_id, attempt = parse_task_key(msg.key)
        except ValueError:
            return
        job = self.running.get(job_id)
        if job is None or job.attempt != attempt:
            return                                 # an old attempt's late news
        if isinstance(msg, AttemptStarted):
            new = self._change(job, "start", {"pid": msg.pid}, pid=msg.pid, start_ts=msg.start_ts)
            if new is not None:
                self.running[job_id] = new
                self.metrics.on_start(new)
                self.runlimits.arm(new)
                if new.kill_requested:
                    self._spawn(self.engine.kill(new.host, new.task_key))
        elif isinstance(msg, AttemptFinished):
            self._finish(job, msg)
        elif isinstance(msg, AttemptLost):         # the node's launcher died under the job
            self._host_lost(job, msg.reason or f"host lost: {job.host}")
        elif isinstance(msg, TaskErred):
            # KilledWorker: the host went away. Anything else is a failure of the engine itself,
            # not of the host: EXIT, so a broken setup cannot requeue a job forever.
            if msg.host_lost:                      # settled at the host's deadline, or by its node's report
                self.engine.forget_worker(msg.worker)
                self._host_silent(job.host, 0.0)
            else:
                self._finish(job, AttemptFinished.launch_failed(msg.key, job.host, identity_of(job.user),
                                                                f"engine error: {msg.error}", time.time()))

    # -- verbs -------------------------------------------------------------------------------------------
    def get(self, job_id: int) -> Job:
        job = self.store.get(job_id)
        if job is None:
            raise NotFound(f"job {job_id} does not exist; see `statgrid jobs -a`.")
        return job

    async def kill(self, job_id: int, caller: Caller | None = None, reason: str = "killed by user",
                   kill_as: JobState = JobState.KILLED) -> Job:
        """Kill a job; `caller` must own it or be an administrator (None: the grid itself: `grid down`,
        a run limit). kill_as: the state it ends in (EXIT for a limit, as LSF's TERM_RUNLIMIT)."""
        job = self.get(job_id)
        if caller is not None:
            self.rights.require_owner(caller, job.user, "kill", f"job {job_id}")
        if job.state == JobState.PEND:
            new = self._change(job, "kill", end_ts=time.time(), exit_reason=f"{reason} while pending")
            if new is not None:
                self.pending.remove(job_id)
                self.metrics.on_end(new)
                self._wake(new)
                return new
            job = self.get(job_id)
        if job.state != JobState.RUN:
            return job
        current = self.running.get(job_id, job)
        new = self._change(current, "kill", {"reason": reason}, exit_reason=reason,
                           kill_as=None if kill_as == JobState.KILLED else kill_as.value)
        if new is not None:
            self.running[job_id] = new
            # Not there yet (the task is on its way)? Then the "started" event kills it.
            await self.engine.kill(new.host, new.task_key)
        return self.get(job_id)

    async def wait(self, job_id: int, timeout_s: float) -> Job:
        job = self.get(job_id)
        if job.state.finished:
            return job
        fut = asyncio.get_running_loop().create_future()
        self.waiters.setdefault(job_id, []).append(fut)
        try:
            return await asyncio.wait_for(fut, timeout_s)
        except asyncio.TimeoutError:
            return self.get(job_id)
        finally:
            waiting = self.waiters.get(job_id, [])
            if fut in waiting:
                waiting.remove(fut)
            if not waiting:
                self.waiters.pop(job_id, None)

    # -- flows and arrays (a part: flows.py) --------------------------------------------------------------
    def submit_flow(self, name: str, jobs: list[tuple[str, JobRequest, str]], caller: Caller,
                    key: str | None = None) -> dict:
        return self.flows_part.submit_flow(name, jobs, caller, key)

    def flow(self, flow_id: int) -> dict:
        return self.flows_part.flow(flow_id)

    def flows(self, user: str | None, limit: int = 100) -> list[dict]:
        return self.flows_part.flows(user, limit)

    async def kill_flow(self, flow_id: int, caller: Caller) -> dict:
        return await self.flows_part.kill_flow(flow_id, caller)

    # -- calendars (a part: calendars.py) -----------------------------------------------------------------
    def schedule_add(self, caller: Caller, cron_text: str, tz_name: str, request: JobRequest | None = None,
                     flow: dict | None = None) -> dict:
        return self.calendars.add(caller, cron_text, tz_name, request, flow)

    def schedule(self, sched_id: int) -> dict:
        return self.calendars.get(sched_id)

    def schedules(self, user: str | None) -> list[dict]:
        return self.calendars.list(user)

    def schedule_remove(self, sched_id: int, caller: Caller) -> dict:
        return self.calendars.remove(sched_id, caller)
