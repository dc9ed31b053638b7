"""The console benchmark's HTTP side: an API client (Api) and the viewers — real event streams
of console pages, each a thread that records when a change became visible; console.py runs them."""
from __future__ import annotations

import html
import http.client
import re
import socket
import ssl
import threading
import time
from pathlib import Path

WAIT_EVENT_S = 10.0


# ---------------------------------------------------------------------------- HTTP
class Api:
    """The master's TCP address with the token; connections to it (HTTPS with the grid's CA, or HTTP)."""

    def __init__(self, port: int, token: str, ca: Path | None):
        self.host, self.port, self.token = "127.0.0.1", port, token
        self.ctx = ssl.create_default_context(cafile=str(ca)) if ca is not None else None
        self.headers = {"Authorization": f"Bearer {token}"}

    @property
    def url(self) -> str:
        return f"{'https' if self.ctx else 'http'}://{self.host}:{self.port}"

    def connect(self, timeout: float | None = 60) -> http.client.HTTPConnection:
        if self.ctx is not None:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.ctx)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def get(self, conn: http.client.HTTPConnection, path: str) -> bytes:
        conn.request("GET", path, headers=self.headers)
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise SystemExit(f"GET {path}: {resp.status} {body[:300]!r}")
        return body

    def get_once(self, path: str) -> bytes:
        conn = self.connect()
        try:
            return self.get(conn, path)
        finally:
            conn.close()


def stream_path(page_html: bytes) -> str:
    """The stream a page opens (its `sse-connect`), as a browser reads the attribute."""
    m = re.search(rb'sse-connect="([^"]+)"', page_html)
    if not m:
        raise SystemExit("a console page without sse-connect")
    return html.unescape(m.group(1).decode())


class Viewer(threading.Thread):
    """One console page's stream, read line by line: each event's name, data and arrival time."""

    def __init__(self, api: Api, kind: str, page: str):
        super().__init__(name=f"viewer-{kind}", daemon=True)
        self.api, self.kind, self.page = api, kind, page
        self.events: list[tuple[float, str, str]] = []     # (perf_counter at its blank line, name, data); not samples
        self.samples = 0
        self.keepalives = 0
        self.error: str | None = None
        self.ready = threading.Event()
        self.cond = threading.Condition()
        self.conn: http.client.HTTPConnection | None = None
        self.closing = False

    def run(self) -> None:
        try:
            self.path = stream_path(self.api.get_once(self.page))
            self.conn = self.api.connect(timeout=None)
            self.conn.request("GET", self.path, headers={**self.api.headers, "Accept": "text/event-stream"})
            resp = self.conn.getresponse()
            if resp.status != 200:
                raise RuntimeError(f"{self.path}: {resp.status} {resp.read(300)!r}")
            name, data = None, []
            while True:
                line = resp.readline()
                if not line:
                    if not self.closing:
                        self.error = "the master closed the stream"
                    return
                t = time.perf_counter()
                line = line.rstrip(b"\n").decode()
                if line.startswith(":"):
                    self.keepalives += line != ": statgrid console"
                    self.ready.set()
                elif line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: ") or line == "data:":
                    data.append(line[6:])
                elif line == "" and name is not None:
                    if name == "sample":
                        self.samples += 1
                    else:
                        with self.cond:
                            self.events.append((t, name, "\n".join(data)))
                            self.cond.notify_all()
                    name, data = None, []
        except Exception as exc:                       # noqa: BLE001 — reported by the run
            if not self.closing:
                self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.ready.set()

    def mark(self) -> int:
        with self.cond:
            return len(self.events)

    def wait_for(self, since: int, pred, timeout_s: float = WAIT_EVENT_S) -> float | None:
        """Arrival time of the first event from index `since` on with pred(name, data), or None."""
        deadline = time.perf_counter() + timeout_s
        i = since
        with self.cond:
            while True:
                while i < len(self.events):
                    t, name, data = self.events[i]
                    if pred(name, data):
                        return t
                    i += 1
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def close(self) -> None:
        self.closing = True
        conn = self.conn
        if conn is not None and conn.sock is not None:
            try:
                socket.socket.shutdown(conn.sock, socket.SHUT_RDWR)   # the plain socket's: unblocks the read
            except OSError:
                pass
        self.join(10)
        if conn is not None:
            conn.close()


def viewer_mix(n: int) -> list[str]:
    """8 jobs, 6 grid, 3 queues, 3 job out of 20, scaled to n."""
    base = {"jobs": 8, "grid": 6, "queues": 3, "job": 3}
    counts = {k: v * n // 20 for k, v in base.items()}
    for k in base:                                      # the rounding's remainder, jobs first
        if sum(counts.values()) < n:
            counts[k] += 1
    return [k for k, c in counts.items() for _ in range(c)]


def connect_viewers(api: Api, n: int, watched_job: int) -> list[Viewer]:
    pages = {"jobs": "/console/jobs", "grid": "/console/grid", "queues": "/console/queues",
             "job": f"/console/jobs/{watched_job}"}
    viewers = [Viewer(api, kind, pages[kind]) for kind in viewer_mix(n)]
    for v in viewers:
        v.start()
    for v in viewers:
        if not v.ready.wait(60) or v.error:
            raise SystemExit(f"viewer {v.kind} did not connect: {v.error}")
    return viewers


def close_viewers(viewers: list[Viewer]) -> list[str]:
    errors = [f"{v.kind}: {v.error}" for v in viewers if v.error]
    for v in viewers:
        v.close()
    return errors
