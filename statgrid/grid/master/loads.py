"""Load thresholds (LSF's, closed_Busy), a part of the master (parts.py): a host with max_load in
grid.toml takes no new job while its monitor's 1-minute load is over it. The loads come from each
host's monitor (latest.json), read once per monitor interval while any host has a threshold; a
host that turns busy or idle again is announced, and an idle one gets jobs at once.

Its own state: the hosts' latest loads and the task that reads them. The core's `host_views`
gives them to the policy, which marks a host over its threshold busy when a dispatch is planned.
Hooks: `reconciled` (the loads are read once before the master's first dispatch), `start` and
`stop` (the task that re-reads them).
"""
from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from statgrid.grid.master.parts import Part

log = logging.getLogger("statgrid.master")


class LoadThresholds(Part):
    name = "loads"

    def __init__(self, master):
        # the Master (core.py) holding this part; not imported here: core.py imports this module
        self.master = master
        self.loads: dict[str, float] = {}          # host → its monitor's latest 1-minute load (hosts with max_load)
        self._task: asyncio.Task | None = None

    def watched(self) -> list[str]:
        """The hosts with a load threshold (max_load), in grid.toml's order."""
        return [h.name for h in self.master.cfg.hosts.values() if h.max_load > 0]

    async def read(self, hosts: list[str]) -> dict[str, float]:
        from statgrid.monitor.store import read_latest

        return await asyncio.to_thread(read_loads, self.master.cfg.home / "monitor", hosts, read_latest)

    async def reconciled(self) -> None:
        watched = self.watched()
        if watched:                                # the first dispatch knows which hosts are busy
            self.loads = await self.read(watched)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._watch())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(max(0.5, self.master.cfg.monitor.interval_s))
            await self.refresh()

    async def refresh(self) -> None:
        """Read the watched hosts' loads again; announce hosts that turned busy or idle, and
        dispatch if one turned idle."""
        m = self.master
        watched = self.watched()
        if not watched:
            self.loads = {}
            return
        try:
            loads = await self.read(watched)
        except Exception as exc:                         # a monitor file half written: next time
            log.debug("loads: %r", exc)
            return
        before = {n for n, v in m.host_views().items() if v.busy}
        self.loads = loads
        views = m.host_views()
        after = {n for n, v in views.items() if v.busy}
        for host in sorted(before ^ after):
            m._publish_host(host, "busy" if host in after else "idle")
        if before - after:
            m.dispatch()


def read_loads(root: Path, hosts: list[str], read_latest) -> dict[str, float]:
    """host → the 1-minute load average of its monitor's latest sample (hosts without one left out)."""
    out = {}
    for host in hosts:
        rows = read_latest(root / host) or {}
        node = (rows.get("node") or [None])[-1]
        if isinstance(node, dict) and isinstance(node.get("load_1m"), (int, float)):
            out[host] = float(node["load_1m"])
    return out
