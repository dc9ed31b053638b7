"""The console's server-sent events as the grid tests read them: one parser of the stream's lines, one wait
for an event on the queue the reader fills, one close that wakes a reader blocked in recv."""
from __future__ import annotations

import contextlib
import queue
import socket
import time


def read_events(response, put, comment) -> None:
    """Read an SSE response to its end: put((event name, data)) for each event, comment(text) for each
    comment line (the stream's first line, its keep-alives)."""
    name, data = None, []
    for raw in response:
        line = raw.decode().rstrip("\n")
        if line.startswith(":"):
            comment(line[1:].strip())
        elif line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif line == "" and name is not None:
            put((name, "\n".join(data)))
            name, data = None, []


def take_until(items: queue.Queue, predicate, timeout_s: float, check=None) -> list[tuple[str, str]]:
    """Items of the queue up to and including the first for which predicate(name, data) holds;
    check(item, got) sees each item first (and may fail the test)."""
    got = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            item = items.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        got.append(item)
        if check is not None:
            check(item, got)
        if predicate(*item):
            return got
    raise AssertionError(f"no such event within {timeout_s} s; got {[(n, d[:80]) for n, d in got[-20:]]}")


def close(c) -> None:
    """Close an HTTP connection a reader thread reads: shutdown first, it wakes the reader blocked in recv
    (close alone would wait for its lock)."""
    with contextlib.suppress(OSError):
        c.sock.shutdown(socket.SHUT_RDWR)
    c.close()
