"""Changes broadcast to live viewers (issue 17): the master publishes each change once — a job's
new record, a host's new state — and every subscriber gets it from memory. A viewer never makes
the master query the store: 20 viewers cost 20 queue puts per change, not 20 queries a second.

A subscriber that cannot keep up (its queue full: a stalled browser) is not waited for: its queue
is emptied, and it gets one "resync" event, after which it should fetch the whole view again.

Events are read-only once published: every subscriber gets the same dict.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

QUEUE_MAX_EVENTS = 1000


@dataclass(eq=False)
class Subscription:
    queue: asyncio.Queue = field(default_factory=lambda: asyncio.Queue(QUEUE_MAX_EVENTS))
    overflowed: bool = False

    async def next(self, timeout_s: float | None = None) -> dict[str, Any] | None:
        """The next event; {"type": "resync"} after an overflow; None on timeout; {"type": "end"} at shutdown."""
        if self.overflowed:
            self.overflowed = False
            while not self.queue.empty():
                self.queue.get_nowait()
            return {"type": "resync"}
        try:
            return await asyncio.wait_for(self.queue.get(), timeout_s)
        except asyncio.TimeoutError:
            return None


class Broadcaster:
    """In the master's event loop only (no locks: one loop)."""

    def __init__(self):
        self.subscribers: set[Subscription] = set()
        self.published = 0

    def subscribe(self, sub: Subscription | None = None) -> Subscription:
        """A new subscription, or `sub` (one queue fed by several broadcasters)."""
        sub = Subscription() if sub is None else sub
        self.subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self.subscribers.discard(sub)

    def publish(self, event: dict[str, Any]) -> None:
        self.published += 1
        for sub in self.subscribers:
            if sub.overflowed:
                continue
            try:
                sub.queue.put_nowait(event)
            except asyncio.QueueFull:
                # Emptied now, not when (if ever) the stalled viewer reads again: its queue would
                # otherwise hold QUEUE_MAX_EVENTS events (log chunks of up to 64 KiB) meanwhile.
                sub.overflowed = True
                while not sub.queue.empty():
                    sub.queue.get_nowait()

    def close(self) -> None:
        """Every subscriber gets {"type": "end"} (the master stops)."""
        for sub in self.subscribers:
            while True:
                try:
                    sub.queue.put_nowait({"type": "end"})
                    break
                except asyncio.QueueFull:
                    sub.queue.get_nowait()
