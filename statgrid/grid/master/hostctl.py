"""The master's hosts: their workers joining, leaving and going silent (fence.py), opening and
closing them, re-reading grid.toml (reconfig), and the listings of hosts and queues. A mixin of
Master (core.py): the methods use its state and run on its loop, as queuectl.py's do.
"""
from __future__ import annotations

import asyncio
import logging
import os

from statgrid.errors import NotFound, UsageError
from statgrid.grid.execution import node
from statgrid.grid.execution.fence import FENCE_MARGIN_S, Silence
from statgrid.grid.security import auth
from statgrid.grid.security.auth import Caller
from statgrid.job.protocol import HostAction, HostEvent

log = logging.getLogger("statgrid.master")


class HostControl:
    # -- workers joining and leaving ----------------------------------------------------------------------
    async def _on_host_event(self, msg: HostEvent) -> None:
        if msg.action is HostAction.STALE and msg.name:
            # Unavail, but not lost: a short outage must cost no job. The node fences itself after
            # [master] fence_grace; its jobs go elsewhere only at the deadline (_host_silent).
            log.warning("host %s: no word from its node for %.0f s: unavail", msg.name, msg.silent_s)
            self.stale.add(msg.name)
            self._publish_host(msg.name, "stale")
            self._host_silent(msg.name, msg.silent_s)
        elif msg.action is HostAction.FRESH and msg.name:
            log.info("host %s: its node is in contact again", msg.name)
            self.stale.discard(msg.name)
            self.silences.found(msg.name)          # the same worker: its node still runs its jobs
            self._publish_host(msg.name, "fresh")
            self.dispatch()
        elif msg.action is HostAction.ADD and msg.name:
            self.stale.discard(msg.name)
            self._publish_host(msg.name, "add")
            if msg.name in self.silences.hosts:
                self._spawn(self._host_back(msg.name))
            self._spawn(self._prepare_host(msg.name))
        elif msg.action is HostAction.REMOVE and msg.name:
            self.stale.discard(msg.name)
            self._publish_host(msg.name, "remove")
            # The engine may drop a worker long before its node fenced its jobs (Dask's own timeouts):
            # they are settled at the host's deadline, or when its node says how they ended.
            self._host_silent(msg.name, msg.silent_s)
            self.dispatch()

    # -- hosts out of contact (fence.py) ------------------------------------------------------------------
    def _host_silent(self, host: str | None, silent_s: float) -> None:
        """No contact with the host for silent_s s: its jobs of now are settled at its deadline."""
        if host is None:
            return
        jobs = {(j.id, j.attempt) for j in self.running.values() if j.host == host}
        known = host in self.silences.hosts
        silence = self.silences.lost(host, silent_s, jobs)
        if not known and silence.jobs:
            log.warning("host %s: no contact for %.0f s; its %d job(s) are given to other hosts only when its node has "
                        "certainly fenced them, %.0f s after its last contact, unless it reports first", host,
                        silent_s, len(silence.jobs), self.silences.fence_grace_s + FENCE_MARGIN_S)

    def _silence_due(self, host: str, silence: Silence) -> None:
        reason = (f"host lost: no contact with {host} for {self.silences.fence_grace_s + FENCE_MARGIN_S:.0f} s "
                  f"(its node fenced its jobs after fence_grace)")
        for job_id, attempt in sorted(silence.jobs):
            job = self.running.get(job_id)
            if job is not None and job.attempt == attempt:
                self._settle_lost_task(job, reason)
        self.dispatch()

    async def _host_back(self, host: str) -> None:
        """The host's node joined again before its deadline: its own word on each job settles it."""
        on_node = await self.engine.running(host)
        silence = self.silences.hosts.get(host)
        if on_node is None or silence is None:     # no answer: the deadline stands
            return
        self.silences.found(host)
        for job_id, attempt in sorted(silence.jobs):
            job = self.running.get(job_id)
            if job is not None and job.attempt == attempt and job.task_key not in on_node:
                self._settle_lost_task(job, f"host lost: {host} joined again without it")
        self.dispatch()

    async def _prepare_host(self, host: str) -> None:
        try:
            await self.engine.refresh_workers()      # its threads: the slots of a host that sets none
        except Exception as exc:                     # the engine hiccuped: the sweep reads them again
            log.warning("host %s joined, but its worker's threads were not read: %r", host, exc)
        await self.engine.on_host(host, node.prepare, self.work_roots, self.monitor, self.cpus.get(host, ()),
                                  self.cfg.master.fence_grace_s)
        self.dispatch()

    # -- administration ----------------------------------------------------------------------------------
    def close_host(self, host: str, caller: Caller, reason: str) -> dict:
        """LSF's badmin hclose: the host takes no new jobs; its running jobs go on. Administrators only."""
        self.rights.require_admin(caller, f"close host {host!r}")
        self.check_host(host)
        self.store.close_host(host, caller.user, reason)
        self.closed = self.store.closed_hosts()
        self._publish_host(host, "close")
        return self.closed[host]

    def open_host(self, host: str, caller: Caller) -> None:
        """badmin hopen of a host an administrator closed; it takes jobs at once."""
        self.rights.require_admin(caller, f"open host {host!r}")
        self.check_host(host)
        if not self.cfg.hosts[host].open:
            raise UsageError(f"host {host!r} is closed in grid.toml (open = false), not by `statgrid host close`; "
                             "set open = true there and run `statgrid reconfig` (it opens the host at once).")
        self.store.open_host(host)
        self.closed = self.store.closed_hosts()
        self._publish_host(host, "open")
        self.dispatch()

    async def reconfig(self, caller: Caller) -> list[str]:
        """LSF's badmin reconfig: re-read grid.toml and apply what can change under running jobs —
        queues, host slots (down; up to what the host's worker started with), open, admins. A bad
        file, or a change that needs a restart, changes nothing and says which key. Returns what
        changed, one line each. Administrators only."""
        from statgrid.config import ConfigError, load_config

        self.rights.require_admin(caller, "reconfigure the grid")
        if self.cfg.source is None:
            raise UsageError("this grid runs on the defaults (no grid.toml): there is nothing to re-read; give it a "
                             "grid.toml and restart the master.")
        try:
            new = load_config(self.cfg.source, {"STATGRID_HOME": str(self.cfg.home)})
        except ConfigError as exc:
            raise UsageError(f"{exc} Nothing was changed.") from None
        old = self.cfg
        restart = [k for k, a, b in (("[grid] home", old.home, new.home), ("[libraries]", old.libraries, new.libraries),
                                     ("[master]", old.master, new.master), ("[monitor]", old.monitor, new.monitor))
                   if a != b]
        running = {name: view.running for name, view in self.host_views().items()}
        threads = await self.engine.threads()
        for name in sorted(set(old.hosts) | set(new.hosts)):
            a, b = old.hosts.get(name), new.hosts.get(name)
            if b is None:
                if running.get(name):
                    restart.append(f"hosts.{name} removed while {running[name]} job(s) run there (drain it first: "
                                   f"`statgrid host drain {name}`)")
                elif not a.joins:
                    restart.append(f"hosts.{name} removed: its worker is the embedded engine's (restart the grid)")
                continue
            if a is None:
                if not b.joins:
                    restart.append(f"hosts.{name} added without joins = true: the embedded engine's workers are made "
                                   "at its start (restart the grid, or add it with joins = true and `statgrid node up`)")
                continue
            if (a.joins, a.cpus) != (b.joins, b.cpus):
                restart.append(f"hosts.{name}.joins/cpus changed (restart the grid)")
            if b.slots is not None and b.slots != a.slots and name in threads and threads[name] < b.slots:
                restart.append(f"hosts.{name}.slots {a.slots or threads[name]} → {b.slots}: its worker runs "
                               f"{threads[name]} at most; "
                               + ("restart its node (`statgrid node up`)" if b.joins else "restart the grid"))
        for name in sorted(set(old.queues) - set(new.queues)):
            waiting = sum(j.queue == name for j in [*self.pending.values(), *self.running.values()])
            if waiting:
                restart.append(f"queues.{name} removed while {waiting} of its job(s) pend or run")
        if restart:
            raise UsageError(f"{self.cfg.source}: not applied, nothing was changed: " + "; ".join(restart) + ".")
        changes = [f"{k}: {getattr(old, k)!r} → {getattr(new, k)!r}" for k in ("admins", "groups", "limits", "scheduling")
                   if getattr(old, k) != getattr(new, k)]
        for section, a_map, b_map in (("hosts", old.hosts, new.hosts), ("queues", old.queues, new.queues)):
            for name in sorted(set(a_map) | set(b_map)):
                if a_map.get(name) != b_map.get(name):
                    changes.append(f"[{section}.{name}] " + ("added" if name not in a_map else "removed"
                                                              if name not in b_map else "changed"))
        self.cfg = new
        self.rights = auth.Rights(new, grid_uid=self.rights.grid_uid)
        self.parts.call("reconfigured", new)
        self.dispatch()
        return changes

    def check_host(self, host: str) -> None:
        """Raise NotFound (404) unless `host` is one of grid.toml's hosts (the API and console ask)."""
        if host not in self.cfg.hosts:
            raise NotFound(f"host {host!r} does not exist; hosts: {', '.join(self.cfg.hosts)} (see `statgrid hosts`).")

    async def hosts(self) -> list[dict]:
        views = self.host_views()
        async def load(host: str):
            # A host that stopped answering would hold the listing for the call's whole timeout.
            return None if host in self.stale or host not in self.engine.workers else \
                await self.engine.on_host(host, os.getloadavg)
        loads = await asyncio.gather(*(load(h) for h in views))
        return [{"host": v.name, "state": v.state, "slots": v.slots, "running": v.running,
                 "closed_by": self.closed.get(v.name, {}).get("closed_by") or (None if self.cfg.hosts[v.name].open
                                                                               else "grid.toml"),
                 "closed_reason": self.closed.get(v.name, {}).get("reason"),
                 "load_1m": None if load is None else round(load[0], 2),
                 "cpus": _cpu_list(self.cpus.get(v.name, ())), "address": self.engine.workers.get(v.name)} for v, load in zip(views.values(), loads)]

    def queues(self) -> list[dict]:
        pend: dict[str, int] = {}
        run: dict[str, int] = {}
        for job in self.pending.values():
            pend[job.queue] = pend.get(job.queue, 0) + 1
        for job in self.running.values():
            run[job.queue] = run.get(job.queue, 0) + 1
        return [{"queue": q.name, "priority": q.priority,
                 "hosts": " ".join(f"{p.host}+{p.weight}" if p.weight else p.host for p in q.hosts),
                 "user_limit": q.user_limit, "pending": pend.get(q.name, 0), "running": run.get(q.name, 0)}
                for q in sorted(self.cfg.queues.values(), key=lambda q: -q.priority)]



def _cpu_list(cpus: tuple[int, ...]) -> str:
    """(0, 1, 2, 5) → "0-2,5" (as taskset prints it); () → "all"."""
    if not cpus:
        return "all"
    runs: list[list[int]] = []
    for c in cpus:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
