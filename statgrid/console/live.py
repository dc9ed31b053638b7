"""What the console shows live, gathered once for every viewer (issue 17).

- `SampleRing`: each host's recent monitor samples. The master reads each host's `latest.json`
  (which the node's monitor replaces at every sample) once per POLL_S, whatever the number of
  viewers, keeps the last RING_SAMPLES per host in memory and broadcasts each new one. A viewer
  opening the grid or a host gets the ring (its charts' history) and then the broadcast.
- `Watches`: the output and usage of jobs someone is looking at. One poll per watched job (not
  per viewer) reads what its output file and its usage series (grid/execution/usage.py) gained and
  broadcasts it; nobody watching, nothing read.

Everything broadcast goes through one `events.Broadcaster` (`Console.live`), separate from the
master's job and host changes, so that `statgrid events` never sees a monitor sample.
"""
from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statgrid.grid.security.auth import Caller
from statgrid.grid.master.events import Broadcaster
from statgrid.host.files import NotTrusted, read_untrusted
from statgrid.monitor.store import read_latest

if TYPE_CHECKING:
    from statgrid.grid.master.core import Master

log = logging.getLogger("statgrid.console")

POLL_S = 0.5                   # how often latest.json files and watched jobs are looked at
RING_SAMPLES = 600             # per host: 10 minutes at the monitor's default 1 s
LOG_CHUNK_MAX_BYTES = 64 * 1024
LOG_PAGE_BYTES = 16 * 1024     # of a job's output, what a page opens with (and the most a stream catches up at once)
SESSION_TTL_S = 12 * 3600
SESSIONS_MAX = 100_000
FRAGMENTS_KEPT = 4096


def flatten(rows: dict[str, list[dict]]) -> dict[str, Any] | None:
    """One sample of latest.json as {"ts", "values": {"node.cpu_user_pct": …, "library.data.read_bytes_per_s": …,
    "disk.vda.await_ms": …}, "sources": {"data": "block", …}} — the keys the console's charts name their
    series by, and each library's source (left out when the rows give none). None: no node row."""
    node = (rows.get("node") or [None])[-1]
    if not isinstance(node, dict) or not isinstance(node.get("ts"), (int, float)):
        return None
    values: dict[str, float] = {}
    for key, value in node.items():
        if key not in ("ts", "host", "interval_s") and isinstance(value, (int, float)):
            values[f"node.{key}"] = value
    sources: dict[str, str] = {}
    for table, name_key in (("library", "library"), ("disk", "device")):
        for row in rows.get(table) or []:
            if not isinstance(row, dict):
                continue
            if table == "library" and isinstance(row.get("source"), str):
                sources[str(row.get("library"))] = row["source"]      # block, nfs, gpfs, process (monitor/libio.py)
            if table == "disk" and row.get("layer") == "partition":
                continue                            # counted in its disk's row
            name = str(row.get(name_key))
            for key, value in row.items():
                if isinstance(value, (int, float)) and key not in ("ts", "interval_s"):
                    values[f"{table}.{name}.{key}"] = value
    sample: dict[str, Any] = {"ts": float(node["ts"]), "values": values}
    if sources:
        sample["sources"] = sources                 # where each library's figures come from (chart labels)
    return sample


class SampleRing:
    def __init__(self, monitor_root: Path, hosts: list[str], keep: int = RING_SAMPLES):
        self.root = monitor_root
        self.hosts = hosts
        self.keep = keep
        self.samples: dict[str, list[dict]] = {h: [] for h in hosts}

    def poll(self) -> list[tuple[str, dict]]:
        """Read every host's latest.json (off the loop); the (host, sample) pairs that are new."""
        new = []
        for host in self.hosts:
            sample = flatten(read_latest(self.root / host))
            ring = self.samples.setdefault(host, [])
            if sample is None or (ring and sample["ts"] <= ring[-1]["ts"]):
                continue
            ring.append(sample)
            if len(ring) > self.keep:
                del ring[: len(ring) - self.keep]
            new.append((host, sample))
        return new

    def latest(self, host: str) -> dict | None:
        ring = self.samples.get(host)
        return ring[-1] if ring else None


@dataclass
class Watch:
    job_id: int
    output: Path
    owner_uid: int | None
    usage: Path | None
    viewers: int = 0
    output_offset: int | None = None   # where the next read of the output starts
    last_usage: dict | None = None
    hub: Broadcaster = field(default_factory=Broadcaster)   # its log and usage events, to its viewers only


def read_output(path: Path, offset: int, max_bytes: int, owner_uid: int | None) -> bytes:
    """Bytes of a job's output from offset (b"" at its end or when it does not exist yet).
    The output is in the job's directory, its user's: read as read_untrusted does (no link, no
    FIFO, only a file of the job's user)."""
    try:
        return read_untrusted(path, max_bytes, owner_uid=owner_uid, offset=offset)
    except FileNotFoundError:
        return b""


def output_size(path: Path) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


class Watches:
    """Jobs being looked at, with how many viewers each; `poll` reads what each gained."""

    def __init__(self):
        self.jobs: dict[int, Watch] = {}

    def add(self, job_id: int, output: Path, owner_uid: int | None, usage: Path | None) -> Watch:
        watch = self.jobs.get(job_id)
        if watch is None:
            watch = self.jobs[job_id] = Watch(job_id, output, owner_uid, usage)
        watch.viewers += 1
        return watch

    def remove(self, job_id: int) -> None:
        watch = self.jobs.get(job_id)
        if watch is not None:
            watch.viewers -= 1
            if watch.viewers <= 0:
                del self.jobs[job_id]

    def poll(self) -> list[tuple[Watch, dict]]:
        """(watch, event) for what the watched jobs' files gained (off the loop)."""
        from statgrid.grid.execution import usage

        events = []
        for watch in list(self.jobs.values()):
            if watch.output_offset is None:
                watch.output_offset = output_size(watch.output)
            try:
                data = read_output(watch.output, watch.output_offset, LOG_CHUNK_MAX_BYTES, watch.owner_uid)
            except (NotTrusted, OSError) as exc:
                log.debug("job %s: output not read: %s", watch.job_id, exc)
                data = b""
            if len(data) == LOG_CHUNK_MAX_BYTES and b"\n" in data:
                data = data[: data.rindex(b"\n") + 1]      # whole lines, whole characters
            if data:
                events.append((watch, {"type": "log", "job": watch.job_id, "offset": watch.output_offset,
                                       "data": data}))
                watch.output_offset += len(data)
            if watch.usage is not None:
                samples = usage.read_series(watch.usage, 2)
                if samples and samples[-1] != watch.last_usage:
                    points = usage.rates(([watch.last_usage] if watch.last_usage else []) + samples[-1:])
                    watch.last_usage = samples[-1]
                    if points:
                        events.append((watch, {"type": "usage", "job": watch.job_id, "point": points[-1]}))
        return events


class Sessions:
    """Signed-in browsers: a random id (the cookie) → who, until it expires, is signed out, or its
    token is revoked. The cookie is never the token itself: a stolen cookie ends with its session.
    In memory: a restart of the master signs everyone out."""

    def __init__(self, tokens):
        self.tokens = tokens
        self.by_id: dict[str, tuple[Caller, float]] = {}

    def create(self, caller: Caller) -> str:
        if len(self.by_id) >= SESSIONS_MAX:
            now = time.time()
            self.by_id = {k: v for k, v in self.by_id.items() if v[1] > now}
            while len(self.by_id) >= SESSIONS_MAX:             # still full: the oldest go
                self.by_id.pop(next(iter(self.by_id)))
        session_id = secrets.token_urlsafe(32)
        self.by_id[session_id] = (caller, time.time() + SESSION_TTL_S)
        return session_id

    def caller(self, session_id: str) -> Caller | None:
        entry = self.by_id.get(session_id)
        if entry is None:
            return None
        caller, expires = entry
        if expires < time.time() or (caller.token_id is not None and not self.tokens.is_live(caller.token_id)):
            self.by_id.pop(session_id, None)
            return None
        return caller

    def end(self, session_id: str) -> None:
        self.by_id.pop(session_id, None)


class Console:
    """The console's live state in a master: started and stopped with it."""

    def __init__(self, master: "Master"):
        self.master = master
        self.live = Broadcaster()                   # the queues view's renders
        self.samples = Broadcaster()                # monitor samples: grid and host viewers only
        self.ring = SampleRing(master.cfg.home / "monitor", list(master.cfg.hosts))
        self.watches = Watches()
        self.sessions = Sessions(master.tokens)
        self._fragments: OrderedDict = OrderedDict()
        self._task: asyncio.Task | None = None
        # The queues view: re-rendered once per poll when jobs changed and someone shows it, for all.
        self.queues_viewers = 0
        self.render_queues = None
        self._queues_seen = -1

    def fragment(self, event: dict, key: tuple, make) -> str:
        """A fragment for a published event, rendered once for every viewer that shows it alike.
        Kept here, not in the event (which every subscriber shares, `statgrid events` too); the
        event is held with it, so its id() is not reused while it is cached."""
        cache_key = (id(event), key)
        hit = self._fragments.get(cache_key)
        if hit is not None:
            return hit[1]
        html = str(make())
        self._fragments[cache_key] = (event, html)
        if len(self._fragments) > FRAGMENTS_KEPT:
            self._fragments.popitem(last=False)
        return html

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._poll_forever())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self.live.close()
        self.samples.close()
        for watch in list(self.watches.jobs.values()):
            watch.hub.close()

    async def _poll_forever(self) -> None:
        while True:
            try:
                samples, watched = await asyncio.to_thread(self._poll)
                for event in samples:
                    self.samples.publish(event)
                for watch, event in watched:
                    watch.hub.publish(event)
                published = self.master.events.published
                if self.queues_viewers > 0 and self.render_queues is not None and published != self._queues_seen:
                    self._queues_seen = published
                    self.live.publish({"type": "queues", "html": self.render_queues()})
            except Exception:                              # never stop polling for one bad file
                log.exception("console poll failed")
            await asyncio.sleep(POLL_S)

    def _poll(self) -> tuple[list[dict], list[tuple[Watch, dict]]]:
        samples = [{"type": "sample", "host": h, "sample": s} for h, s in self.ring.poll()]
        return samples, (self.watches.poll() if self.watches.jobs else [])
