"""What runs inside a grid node (a Dask worker): start a job through the node's launcher, wait
for it, write its attempt file and report to the master; kill a job; list running jobs.

These functions are shipped to workers by reference (the worker imports statgrid), so they
must stay importable without the master's modules.

Reporting (DESIGN.md, "Flow of a job"): every attempt leaves a file — first an AttemptStarted,
then an AttemptFinished, or an AttemptLost when the node's launcher died under the job
(protocol.py has them all) — written (0600) before the matching event goes to the master through
the scheduler's event log (`Worker.log_event`). The file is the durable record a restarted master
reconciles from; the event is the fast path that frees the slot at once. It is kept where the
master's request says (LaunchRequest.attempt_file: `<home>/grid/attempts/<job>.<attempt>.json`),
not in the job's directory: that belongs to the job's user, who could forge it there.

Usage over time (usage.Sampler): every USAGE_INTERVAL_S a sample of each running job goes to its
usage file beside the attempt record; run_job appends the totals once the job is reaped.

Suspend and resume (LSF bstop/bresume): suspend_job stops every process of a running job, by
freezing its cgroup v2 or else with SIGSTOP to its process group; resume_job lets it run again.
A suspended job keeps its slot, is sampled as before (its CPU time stops growing), and can be
killed: kill_job lets it run after the SIGTERM, so that it can act on it.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from enum import Enum
from pathlib import Path

from distributed.diagnostics.plugin import WorkerPlugin

from statgrid.grid.execution import hoptrace, usage
from statgrid.host.files import write_json_atomic
from statgrid.host.scratch import prepare_work_roots
from statgrid.job.jobdir import JobDir, usage_path
from statgrid.job.protocol import (TASK_KEY_PREFIX, AttemptFinished, AttemptLost, AttemptStarted, LaunchExited,
                                    LaunchFailed, LaunchRequest, LaunchStarted, decode, started_fields, to_event)

logger = logging.getLogger("statgrid.node")

JOB_TOPIC = "statgrid-job"
KILL_GRACE_S = 10.0        # SIGTERM first (the session cleans WORK), SIGKILL after this (LSF: JOB_TERMINATE_INTERVAL)
# Each job in a cgroup v2 of its own where the launcher may create one (launcher.py says why);
# False runs the launcher with --no-cgroup: jobs are then tracked by process group alone.
LAUNCHER_CGROUPS = True
ORPHAN_WAIT_S = 10.0       # after the launcher died: how long to wait for its killed job to be gone before cleaning WORK
USAGE_INTERVAL_S = 1.0     # how often the sampler appends a usage sample of each running job
SUSPEND_WAIT_S = 1.0       # how long suspend_job waits for the kernel to have stopped every process of the job

_lock = threading.Lock()
_server: dict[str, object] = {}                   # the launcher process and its socket, per worker process
_running: dict[str, AttemptStarted] = {}          # task key → the start record of each job running here
_suspended: dict[str, "SuspendedBy"] = {}         # task key → how suspend_job stopped it, until resumed or ended


class LaunchRefused(Exception):
    """The launcher's LaunchFailed: its error is the job's exit reason as it stands."""


class SuspendedBy(Enum):
    """How suspend_job stopped a job, so that resume_job undoes the same."""
    FREEZE = "freeze"          # its cgroup v2's cgroup.freeze: every descendant, setsid'd ones too
    STOP = "stop"              # SIGSTOP to its process group (no cgroup, or no cgroup.freeze: Linux < 5.2)


def _forget_dead_launcher() -> None:
    """If the launcher died (kill -9, the OOM killer), remove the socket directory it could not
    remove itself, and forget it: the next job starts a new one. Call with _lock held."""
    proc = _server.get("proc")
    if proc is not None and proc.poll() is not None:
        logger.warning("the node launcher (pid %d) died (exit status %s)", proc.pid, proc.returncode)
        shutil.rmtree(os.path.dirname(_server["path"]), ignore_errors=True)
        _server.pop("proc")
        _server.pop("path")


def _launcher_socket() -> str:
    """Start this worker's launcher on first use; restart it if it died."""
    with _lock:
        _forget_dead_launcher()
        if _server.get("proc") is not None:
            return _server["path"]
        tmpdir = tempfile.mkdtemp(prefix="statgrid-node-")          # 0700: only we may ask for jobs
        path = os.path.join(tmpdir, "launcher.sock")
        script = Path(__file__).with_name("launcher.py")
        argv = [sys.executable, "-I", "-S", str(script), path] + ([] if LAUNCHER_CGROUPS else ["--no-cgroup"])
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
                                close_fds=True)
        line = proc.stdout.readline()
        if line.strip() != b"ready":
            raise RuntimeError(f"the node launcher did not start (exit code {proc.poll()})")
        proc.stdout.close()
        _server.update(proc=proc, path=path)
        if _server.get("cpus"):                   # a new or restarted launcher gets the host's cpuset
            _pin(proc.pid, _server["cpus"])
        return path


def prepare(work_roots: list[str] | None = None, monitor: dict | None = None, cpus: tuple[int, ...] = (),
            fence_grace_s: float | None = None, dask_worker=None) -> int:
    """Warm the launcher (so the first job does not pay its start), confine it to the host's
    `cpus` (jobs it forks inherit the set, like an LSF host's cpuset), start this node's monitor,
    and clean WORK left by jobs that died with an earlier worker. Returns the launcher's pid.
    (`client.run` passes dask_worker: its stream to the scheduler flushes within 1 ms, see
    engine.BATCH_INTERVAL_S.)"""
    if dask_worker is not None:
        dask_worker.batched_stream.interval = 0.001
        if fence_grace_s:                          # FencePlugin started it; a master of before it did it here
            _start_fence(dask_worker, fence_grace_s)
    with _lock:
        _server["cpus"] = tuple(cpus)
        proc = _server.get("proc")
        running = proc is not None and proc.poll() is None
    if running and cpus:                          # a launcher _launcher_socket starts is pinned there
        _pin(proc.pid, cpus)
    _launcher_socket()
    if work_roots and os.geteuid() == 0:
        prepare_work_roots(work_roots)
    if monitor:
        _start_monitor(monitor, str(dask_worker.name) if dask_worker is not None else monitor["host"])
    if work_roots:
        # client.run calls this on the worker's event loop: a slow shared file system must not
        # stall its heartbeats, so the sweep runs in a thread.
        from statgrid.host.scratch import clean_stale
        threading.Thread(target=clean_stale, args=([Path(p) for p in work_roots],), daemon=True).start()
    return _server["proc"].pid


# -- fencing ------------------------------------------------------------------------------------------
# A node cut off from the grid must not keep running jobs the master may give to another host
# (fence.py says how the node's count and the master's agree). A thread asks the scheduler every
# FENCE_PROBE_S whether this worker is still a member; it kills every job running here (their
# attempts end AttemptLost "fenced") once the fence grace has passed since it sent the last
# question answered "member", at once when the answer is "not a member" (the engine dropped this
# worker: its tasks are erred and the master will give them away), and when the worker closes
# (its stream to the scheduler broke, or the node is stopped). It checks every FENCE_CHECK_S on
# its own, whether or not a question is under way or the worker's event loop is busy. Contact
# again as a member: the fence lifts (jobs it killed stay killed).
_fence: dict[str, object] = {}
_fenced: dict[str, str] = {}                      # task key → why the fence killed it
CLOSED_STATUSES = ("closing", "closed", "failed")


class FencePlugin(WorkerPlugin):
    """Registered by the master on every worker (engine.Engine.start): a worker joining later gets
    it at its registration, before it reads its first task. Its teardown (a master registering it
    again, the worker closing) leaves the fence running: the fence itself watches the worker."""

    name = "statgrid-fence"

    def __init__(self, grace_s: float):
        self.grace_s = grace_s

    def setup(self, worker) -> None:
        worker.batched_stream.interval = 0.001
        _start_fence(worker, self.grace_s)

    def teardown(self, worker) -> None:
        pass

    def transition(self, key, start, finish, **kwargs) -> None:
        """hoptrace only: a job task's state changes on this worker."""
        if hoptrace.PATH and isinstance(key, str) and key.startswith(TASK_KEY_PREFIX):
            hoptrace.mark(f"W.{start}>{finish}", key)


def _start_fence(dask_worker, grace_s: float) -> None:
    with _lock:
        _fence["grace_s"] = grace_s
        if _fence.get("thread") is not None and _fence.get("worker") is dask_worker:
            return
        _fence.update(last_contact=time.monotonic(), why=None, worker=dask_worker)
        thread = threading.Thread(target=_fence_loop, args=(dask_worker,), name="statgrid-fence", daemon=True)
        _fence["thread"] = thread
    thread.start()


def _ask_scheduler(dask_worker):
    """The fence question, on the worker's event loop: {"member": bool} from the scheduler."""
    import asyncio

    from statgrid.grid.execution.fence import CONTACT_HANDLER, FENCE_PROBE_TIMEOUT_S

    async def ask():
        handler = getattr(dask_worker.scheduler, CONTACT_HANDLER)
        return await asyncio.wait_for(handler(address=dask_worker.contact_address or dask_worker.address,
                                              name=str(dask_worker.name)), FENCE_PROBE_TIMEOUT_S)

    return asyncio.run_coroutine_threadsafe(ask(), dask_worker.loop.asyncio_loop)


def _fence_loop(dask_worker) -> None:
    from statgrid.grid.execution.fence import FENCE_CHECK_S, FENCE_PROBE_S, FENCE_PROBE_TIMEOUT_S

    question = None                                 # (monotonic s when sent, its future)
    sent_s = -FENCE_PROBE_S
    while _fence.get("worker") is dask_worker:
        now = time.monotonic()
        if question is not None and question[1].done():
            try:
                member = bool(question[1].result().get("member"))
            except Exception:                       # noqa: BLE001 — no answer, whatever the reason
                member = None
            if member:
                if _fence.get("why"):
                    logger.warning("fence lifted: the scheduler answers again and this worker is still a member")
                _fence.update(last_contact=max(_fence["last_contact"], question[0]), why=None)
            elif member is False:
                _fence["why"] = "was dropped by the grid's engine"
            question = None
        elif question is not None and now - question[0] > FENCE_PROBE_TIMEOUT_S + 1:
            question[1].cancel()                    # the worker's loop is stuck: ask again
            question = None
        closing = dask_worker.status.name in CLOSED_STATUSES
        if closing:
            _fence["why"] = "closed its worker"
        elif question is None and now - sent_s >= FENCE_PROBE_S:
            sent_s = now
            try:
                question = (now, _ask_scheduler(dask_worker))
            except RuntimeError:                    # the worker's loop is closed
                question = None
        lost_s = now - _fence["last_contact"]
        if lost_s > _fence["grace_s"] and not _fence.get("why"):
            _fence["why"] = f"had no answer from the grid for {lost_s:.0f} s"
        if _fence.get("why") and _running:
            fence_jobs(str(_fence["why"]))
        if closing and dask_worker.status.name == "closed" and not _running:
            return
        time.sleep(FENCE_CHECK_S)


def fence_jobs(why: str) -> None:
    """Kill every job running here (process group and cgroup); their attempts end AttemptLost."""
    for key, info in list(_running.items()):
        if key in _fenced:
            continue
        _fenced[key] = why
        logger.warning("fencing: this node %s (grace %.0f s): killing job %s (process group %d)", why,
                       _fence.get("grace_s", 0), info.job_id, info.pgid)
        _kill_all_of(info)


def _kill_all_of(info: AttemptStarted) -> None:
    """SIGKILL a job's process group, and its cgroup if it has one (what left the group too). A
    suspended job too: SIGKILL ends a stopped process, and a frozen one (cgroup.kill included)."""
    from statgrid.grid.execution import cgroups

    _signal_group(info.pgid, signal.SIGKILL)
    if info.cgroup:
        cgroups.kill_cgroup(info.cgroup)


def cpus_seen(cpus: tuple[int, ...] = ()) -> int:
    """How many CPUs a host's jobs may use on this machine, for a worker started here: those of the
    host's `cpus` that this process may run on (os.sched_getaffinity), or all it may run on when
    `cpus` is () or names none of them (as _pin confines the launcher). The slots of a host that
    sets none: one per CPU, as the lsb.hosts LSF ships gives its `default` host (MXJ "!")."""
    usable = os.sched_getaffinity(0)
    return len(set(cpus) & usable) or len(usable)


def _pin(pid: int, cpus: tuple[int, ...]) -> None:
    """Confine the launcher (and so every job it starts from now on) to `cpus`. CPUs this machine
    does not have are left out; if none is left the jobs run unconfined and the worker log says so."""
    usable = set(cpus) & os.sched_getaffinity(0)
    if not usable:
        logger.warning("hosts cpus = %s: this machine has none of these CPUs (it has %s); jobs run on all CPUs",
                       list(cpus), sorted(os.sched_getaffinity(0)))
        return
    if usable != set(cpus):
        logger.warning("hosts cpus = %s: CPUs %s do not exist here; jobs run on %s", list(cpus),
                       sorted(set(cpus) - usable), sorted(usable))
    os.sched_setaffinity(pid, usable)


def _start_monitor(spec: dict, host: str) -> None:
    """The node's sampler, as its own process (its overhead is measurable on its own) that
    stops when this worker's pipe to it closes. spec: out, interval_s, libraries."""
    with _lock:
        proc = _server.get("monitor")
        if proc is not None and proc.poll() is None:
            return
        out = Path(spec["out"])
        out.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "statgrid.monitor", "--host", host, "--out", str(out),
                "--interval", str(spec["interval_s"]), "--stdin-liveness"]
        for name, path in spec.get("libraries", {}).items():
            argv += ["--library", f"{name}={path}"]
        with open(out / f"{host}.log", "ab") as log:
            _server["monitor"] = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                                  stderr=log, start_new_session=True, close_fds=True)


def monitor_pid() -> int | None:
    proc = _server.get("monitor")
    return proc.pid if proc is not None and proc.poll() is None else None


def _event(record: AttemptStarted | AttemptFinished | AttemptLost) -> None:
    """Send the record to the master through the scheduler's event log (protocol.to_event)."""
    try:
        from distributed import get_worker
        get_worker().log_event(JOB_TOPIC, to_event(record))
    except ValueError:
        pass                                      # not in a worker (direct call in a test)


_sampler = usage.Sampler(_running, USAGE_INTERVAL_S, logger)     # usage over time: one thread per worker process
_usage_paths = _sampler.paths                     # task key → its usage file, while the job runs
sample_running, _start_sampler, _end_usage = _sampler.sample_running, _sampler.start, _sampler.end


def run_job(spec: dict) -> AttemptStarted | AttemptFinished | AttemptLost:
    """Run one attempt of a job to its end. `spec` is a protocol.LaunchRequest's to_dict() (checked
    here: a request of another version errs the task, and the master ends the job with the error).
    The request goes to the launcher as it came: nothing is added or overridden on the way.
    Returns the attempt's last record: AttemptFinished (exit code or signal, rusage, io, stimer;
    or a launch error) or AttemptLost if the launcher died while the job ran."""
    request = LaunchRequest.from_dict(spec)
    key, job_dir, attempt_file = request.task_key, Path(request.job_dir), Path(request.attempt_file)
    hoptrace.mark("W.run", key)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(_launcher_socket())
        sock.sendall((json.dumps(request.to_dict()) + "\n").encode())
        reader = sock.makefile("rb")
        line = reader.readline()
        if not line:
            raise RuntimeError("the launcher closed the connection")
        reply = decode(json.loads(line), (LaunchStarted, LaunchFailed))
        hoptrace.mark("W.started", key)
        if isinstance(reply, LaunchFailed):
            raise LaunchRefused(reply.error)
        info = AttemptStarted(key=key, job_id=request.job_id, attempt=request.attempt, host=request.host,
                              identity=reply.identity, pid=reply.pid, pgid=reply.pgid, cgroup=reply.cgroup,
                              start_ts=reply.start_ts)
        _running[key] = info
        _usage_paths[key] = usage_path(attempt_file.parent, request.job_id, request.attempt)
        if reply.identity != request.identity:     # the launcher must run the job for whom it was asked
            raise RuntimeError(f"the launcher started job {request.job_id} for {reply.identity!r}, "
                               f"not for {request.identity!r}")
        write_json_atomic(attempt_file, info.to_dict(), private=True)
        _event(info)
        hoptrace.mark("W.started_event", key)
        _start_sampler()
        try:
            line = reader.readline()
        except OSError:                            # a reset: the launcher is gone all the same
            line = b""
        reader.close()
        hoptrace.mark("W.exited", key)
        exited = decode(json.loads(line), (LaunchExited,)) if line.endswith(b"\n") else None   # no line, or half
        _end_usage(key, usage.final_record(exited))
        if exited is not None:
            outcome = AttemptFinished(**started_fields(info), end_ts=exited.end_ts, exit_code=exited.exit_code,
                                      signal=exited.signal, rusage=exited.rusage, io=exited.io,
                                      stimer=JobDir(job_dir).stimer_total(
                                          request.identity.uid if os.geteuid() == 0 else os.getuid()),
                                      launch_error=None, attempt_file_error=None,
                                      limit_reason=exited.limit_reason)
        else:
            # The launcher died under the job (kill -9, the OOM killer): a fault of the node, not
            # of the job, so it ends as on the loss of the worker (master._host_lost).
            _end_orphaned_job(info)
            with _lock:                            # its socket directory goes now, not at the next job
                _forget_dead_launcher()
            outcome = AttemptLost(**started_fields(info), end_ts=time.time(),
                                  reason=f"host lost: the launcher of {request.host} died")
        fenced_why = _fenced.pop(key, None)
        if fenced_why is not None:
            outcome = AttemptLost(**started_fields(info), end_ts=time.time(),
                                  reason=f"host lost: {request.host} {fenced_why} and killed the job (fenced)")
        if (isinstance(outcome, AttemptLost) or outcome.signal is not None) and request.work_roots:
            # A killed session could not remove its WORK; its lock is gone now, so this is safe.
            from statgrid.host.scratch import clean_stale
            clean_stale([Path(p) for p in request.work_roots])
    except Exception as exc:                       # report, never leave the master waiting
        error = str(exc) if isinstance(exc, LaunchRefused) else f"{type(exc).__name__}: {exc}"
        outcome = AttemptFinished.launch_failed(key, request.host, request.identity, error, time.time())
    finally:
        # Closing our end makes the launcher kill the job if it is still running (an error here
        # must not leave a job nobody accounts for). shutdown: a file object made from the
        # socket would keep it open past close().
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
        _running.pop(key, None)
        _suspended.pop(key, None)
        _end_usage(key, None)
    try:
        write_json_atomic(attempt_file, outcome.to_dict(), private=True)
    except OSError as exc:                          # the event below still reports the end
        outcome = dataclasses.replace(outcome, attempt_file_error=str(exc))
    hoptrace.mark("W.attempt_written", key)
    _event(outcome)
    hoptrace.mark("W.finish_event", key)
    return outcome


def _end_orphaned_job(info: AttemptStarted, wait_s: float = ORPHAN_WAIT_S) -> None:
    """SIGKILL what is left of a job whose launcher died: its first process got SIGKILL from the
    kernel (PR_SET_PDEATHSIG), its children were re-parented and run on. Its process group
    outlives the leader while a member lives (the kernel does not reuse the id meanwhile, so the
    kill reaches only the job), and its cgroup holds even those that left the group. Waits (at most wait_s) until none is left, so that the
    session's WORK can be cleaned, then removes the job's cgroup and what the dead launcher left."""
    from statgrid.grid.execution import cgroups
    from statgrid.host.procfs import process_group_alive

    pgid, cgroup = info.pgid, info.cgroup
    logger.warning("the node launcher died while job %s ran: killing its process group %d%s", info.job_id,
                   pgid, f" and cgroup {cgroup}" if cgroup else "")
    _kill_all_of(info)
    deadline = time.monotonic() + wait_s
    # A zombie does not count: the job's first process, re-parented when its launcher died, stays
    # one for as long as PID 1 does not reap it (a container's entrypoint that is not an init).
    while process_group_alive(pgid) or (cgroup and cgroups.cgroup_populated(cgroup)):
        if time.monotonic() > deadline:
            logger.warning("job %s: processes of group %d still exist %.0f s after SIGKILL", info.job_id, pgid,
                           wait_s)
            break
        time.sleep(0.05)
    if cgroup:
        cgroups.remove_cgroup(cgroup)
        cgroups.sweep_dead_servers(os.path.dirname(os.path.dirname(cgroup)))


def kill_job(key: str, grace_s: float = KILL_GRACE_S) -> bool:
    """SIGTERM the job's process group now, SIGKILL it after grace_s if it is still running. A
    suspended job is let run after the SIGTERM (_let_run), so that it can act on it in the grace.
    Returns False if the job is not running here (finished already, or never started)."""
    info = _running.get(key)
    if info is None:
        return False
    _signal_group(info.pgid, signal.SIGTERM)
    _let_run(key, info)

    def escalate() -> None:
        # Only the same attempt, still running: a reused pgid must never be hit.
        if _running.get(key) is info:
            _signal_group(info.pgid, signal.SIGKILL)

    timer = threading.Timer(grace_s, escalate)
    timer.daemon = True
    timer.start()
    return True


def signal_job(key: str, signum: int) -> bool:
    """Send signum (a notebook kernel's SIGINT) to the job's process group; False if it is not running here."""
    info = _running.get(key)
    return info is not None and _signal_group(info.pgid, signum)


def _let_run(key: str, info: AttemptStarted) -> None:
    """After the SIGTERM of a kill: a stopped or frozen process acts on a signal it handles (a
    session removing its WORK) only once it runs again, so thaw the job's cgroup and SIGCONT its
    group, whoever stopped it (suspend_job, or the job itself with kill -STOP). The kernel holds
    the SIGTERM meanwhile: it is what each process handles first when it runs. (SIGKILL, and a
    signal whose default action ends the process, end a stopped or frozen one without this.)"""
    from statgrid.grid.execution import cgroups

    _suspended.pop(key, None)
    if info.cgroup:
        cgroups.freeze_cgroup(info.cgroup, False)
    _signal_group(info.pgid, signal.SIGCONT)


# -- suspend and resume -------------------------------------------------------------------------------
# LSF suspends a running job with SIGSTOP to it and resumes it with SIGCONT (IBM Spectrum LSF 10.1,
# "About controlling jobs"; bstop(1), bresume(1)). A signal to the process group misses what left
# it (setsid, a daemon's double fork), so a job with a cgroup v2 is frozen instead: cgroup.freeze
# stops every process below, and cgroup.events says "frozen 1" once all have stopped
# (Documentation/admin-guide/cgroup-v2.rst, "Core Interface Files").
# client.run calls these on the worker's event loop: the wait for the stop is bounded (SUSPEND_WAIT_S),
# so a process the kernel cannot stop at once (in uninterruptible I/O on a slow file system) holds
# the worker's heartbeats no longer than that; it stops when its I/O ends.

def suspend_job(key: str, wait_s: float = SUSPEND_WAIT_S) -> bool:
    """Stop every process of the job until resume_job: freeze its cgroup v2 if it has one, else
    SIGSTOP its process group. Waits (at most wait_s) until the kernel has stopped them all, and
    says in the worker log if it has not by then. Suspending a suspended job changes nothing.
    Returns False if the job is not running here (ended already, or never started)."""
    from statgrid.grid.execution import cgroups

    info = _running.get(key)
    if info is None:
        return False
    if info.cgroup and cgroups.freeze_cgroup(info.cgroup, True):
        how = SuspendedBy.FREEZE
    elif info.cgroup and not os.path.isdir(info.cgroup):
        return False                               # the launcher removed it: the job has ended
    elif _signal_group(info.pgid, signal.SIGSTOP):
        how = SuspendedBy.STOP
    else:
        return False                               # no process of its group is left
    _suspended[key] = how
    deadline = time.monotonic() + wait_s
    while not _all_stopped(info, how):
        if _running.get(key) is not info:
            break
        if time.monotonic() > deadline:
            logger.warning("job %s: suspended, but not every process of it has stopped %.1f s after %s; it stops "
                           "when the kernel can stop it (a process in uninterruptible I/O)", info.job_id, wait_s,
                           "freezing its cgroup" if how is SuspendedBy.FREEZE else "SIGSTOP to its process group")
            break
        time.sleep(0.005)
    if _running.get(key) is not info:              # it ended meanwhile: run_job may have forgotten it first
        _suspended.pop(key, None)
        return False
    return True


def _all_stopped(info: AttemptStarted, how: SuspendedBy) -> bool:
    from statgrid.grid.execution import cgroups
    from statgrid.host.procfs import process_group_running

    if how is SuspendedBy.FREEZE:
        return cgroups.cgroup_frozen(info.cgroup)
    return not process_group_running(info.pgid)


def resume_job(key: str) -> bool:
    """Let a job that suspend_job stopped run again, undoing what it did: thaw its cgroup, or
    SIGCONT its process group. Resuming a job that is not suspended changes nothing. Returns
    False if the job is not running here (ended already, or never started)."""
    from statgrid.grid.execution import cgroups

    info = _running.get(key)
    if info is None:
        return False
    how = _suspended.pop(key, None)
    if how is SuspendedBy.FREEZE:
        return cgroups.freeze_cgroup(info.cgroup, False)      # False: the cgroup is gone with the job
    if how is SuspendedBy.STOP:
        return _signal_group(info.pgid, signal.SIGCONT)
    return True


def suspended_jobs() -> list[str]:
    """Task keys of the jobs suspended here now (a master that restarted learns it here)."""
    return sorted(_suspended)


def _signal_group(pgid: int, sig: int) -> bool:
    """Send sig to the process group; False if none of it is left (or none may be signalled)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def list_running() -> dict[str, dict]:
    """Task key → AttemptStarted.to_dict() of every job this node runs now."""
    return {key: info.to_dict() for key, info in list(_running.items())}


def launcher_pid() -> int | None:
    proc = _server.get("proc")
    return proc.pid if proc is not None and proc.poll() is None else None
