"""Notebook kernels the grid places (statgrid/kernels/), a part of the master (parts.py).

A kernel is a job of kind "kernel" (jobspec._kernel_job): placed by the policy like any job, in the queue
`interactive` when grid.toml has it. This part adds what only a kernel needs:
- at dispatch, the environment its node side reads (launch_env): the address to bind (the host's worker address
  as the engine knows it: the node's address on the grid's network), the queue's port range and idle timeout;
- `connection`: the kernel's connection (ports, HMAC and CurveZMQ keys) for its OWNER alone — an administrator
  may kill a kernel but not take it over (403) — read as the owner's file from the job's directory; a long-poll
  that answers when the kernel has bound its ports, or the job is still pending (with why) when the time is up,
  or has ended;
- `signal`: SIGINT to the kernel's process group on its node (the notebook's interrupt), owner or administrator.
"""
from __future__ import annotations

import asyncio
import signal as signals
import time
import urllib.parse

from statgrid.errors import StatgridError, UsageError
from statgrid.grid.master.parts import Part
from statgrid.grid.security.auth import Caller, Forbidden
from statgrid.job.jobdir import JobDir
from statgrid.job.record import Job, JobState

POLL_S = 0.2                       # how often a waiting connection request looks for the kernel's file
HANDED_OUT_MAX = 10_000            # (job, generation) pairs remembered for the audit's once-per-start record
SIGNALS = {"SIGINT": signals.SIGINT}


class Kernels(Part):
    name = "kernels"

    def __init__(self, master):
        self.master = master
        self.handed_out: set[tuple[int, int]] = set()     # (job, generation) whose connection was recorded

    def first_handout(self, job_id: int, info: dict) -> bool:
        """True the first time this start of the kernel's connection goes out (the audit records it once)."""
        key = (job_id, int(info.get("statgrid_generation", 1)))
        if key in self.handed_out:
            return False
        if len(self.handed_out) >= HANDED_OUT_MAX:
            self.handed_out.clear()
        self.handed_out.add(key)
        return True

    def launch_env(self, job: Job, host: str) -> dict[str, str]:
        qcfg = self.master.cfg.queues.get(job.queue)
        address = self.master.engine.workers.get(host, "")
        ip = urllib.parse.urlsplit(address).hostname if "://" in address else ""
        env = {"STATGRID_KERNEL_IP": ip if ip and ip not in ("0.0.0.0", "::") else "127.0.0.1"}
        if qcfg is not None and qcfg.kernel_ports != (0, 0):
            env["STATGRID_KERNEL_PORTS"] = f"{qcfg.kernel_ports[0]}..{qcfg.kernel_ports[1]}"
        if qcfg is not None and qcfg.idle_timeout_s:
            env["STATGRID_KERNEL_IDLE_S"] = repr(qcfg.idle_timeout_s)
        return env

    def _kernel_job(self, job_id: int, caller: Caller, verb: str, owner_only: bool) -> Job:
        job = self.master.get(job_id)
        if job.kind != "kernel":
            raise UsageError(f"job {job_id} is not a notebook kernel (it is a {job.kind} job).")
        if owner_only and caller.user != job.user:
            raise Forbidden(f"job {job_id} is {job.user!r}'s kernel; only {job.user!r} may {verb} it (you are "
                            f"{caller.user!r}; administrators may kill it, not connect to it).")
        if not owner_only:
            self.master.rights.require_owner(caller, job.user, verb, f"job {job_id}")
        return job

    def idle_s(self, job_id: int, now: float) -> float | None:
        """A running kernel's idle time: since its last cell ended (the kernel touches its activity file)."""
        return JobDir.of(self.master.cfg.home, job_id).kernel_idle_s(now)

    async def connection(self, job_id: int, caller: Caller, timeout_s: float, min_generation: int = 1) -> dict:
        """{"job": record, "connection": info or None, "pend_reason"}: info once the kernel listens (its start
        min_generation or a later one); None while it is pending or starting when timeout_s has passed, or when
        it has ended. While it waits it looks at the master's memory (the running and pending jobs) and, once
        the job runs, at the kernel's file, every POLL_S."""
        job = self._kernel_job(job_id, caller, "connect to", owner_only=True)
        directory = JobDir.of(self.master.cfg.home, job_id)
        uid = await asyncio.to_thread(self.master.files_uid, job.user)       # a user lookup may be slow (NSS)
        deadline = time.monotonic() + timeout_s
        while True:
            current = self.master.running.get(job_id) or self.master.pending.get(job_id)
            job = current if current is not None else self.master.get(job_id)
            info = None
            if job.state == JobState.RUN and job.start_ts is not None:
                info = await asyncio.to_thread(directory.read_kernel_connection, uid, job.attempt)
                if info is not None and int(info.get("statgrid_generation", 1)) < min_generation:
                    info = None
            if info is not None or job.state.finished or time.monotonic() >= deadline:
                return {"job": job.to_dict(), "connection": info,
                        "pend_reason": self.master.pend_reason(self.master.pending.get(job_id) or job)}
            await asyncio.sleep(POLL_S)

    async def signal(self, job_id: int, name: str, caller: Caller) -> Job:
        """Send signal `name` (SIGINT) to the kernel's processes on its node."""
        if name not in SIGNALS:
            raise UsageError(f"signal {name!r} is not one a kernel takes here ({', '.join(SIGNALS)}); end a kernel "
                             "with `statgrid kill`.")
        job = self._kernel_job(job_id, caller, "interrupt", owner_only=False)
        current = self.master.running.get(job_id)
        if current is None or current.start_ts is None:
            raise UsageError(f"job {job_id} is {job.state.value} and not running yet: nothing to interrupt.")
        if not await self.master.engine.signal(current.host, current.task_key, int(SIGNALS[name])):
            raise StatgridError(f"job {job_id} is no longer running on {current.host}; nothing was interrupted.")
        return current
