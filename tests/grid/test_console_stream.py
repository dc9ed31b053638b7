"""The console's live stream on a busy grid (issue 24, item 7), read by a real HTTP client from a
real master: it never goes silent while changes it does not show keep coming (a keep-alive on time
whatever arrives), and a live jobs list past its cap keeps the newest rows, says it is capped, and
still updates the rows it shows. The master runs with a short keep-alive and a small cap
(STATGRID_CONSOLE_KEEPALIVE_S, STATGRID_CONSOLE_LIVE_ROWS) so that the test stays small; the
browser's side is tests/grid/test_console_stream_browser.py."""
from __future__ import annotations

import html
import json
import os
import queue
import re
import threading
import time
import urllib.parse

import pytest

from statgrid.grid.interface.client import GridClient
from tests.support import gridtest, sse
from tests.grid.test_console import Http, cookie, sign_in
from tests.support.gridtoml import toml_text

KEEPALIVE_S = 1.0
LIVE_ROWS = 5
DEADLINE_S = 120

# node1 runs the jobs the tests watch; node2 is closed in grid.toml, so the flood's jobs (queue
# "flood") only pend: a stream of submit events, and nothing else moves.
GRID_TOML = toml_text({"node1": 1, "node2": {"slots": 1, "open": False}},
                      {"normal": {"hosts": "node1"}, "capq": {"hosts": "node1"}, "flood": {"hosts": "node2"}},
                      master={"api_tls": False})


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    g = gridtest.Grid(tmp_path_factory.mktemp("console-stream"), GRID_TOML)
    g.env.update({"STATGRID_CONSOLE_KEEPALIVE_S": str(KEEPALIVE_S), "STATGRID_CONSOLE_LIVE_ROWS": str(LIVE_ROWS)})
    with gridtest.running(g):
        g.http = Http(g.cfg.master.port)
        g.session = sign_in(g.http, g.client.token_create("stream test")["token"])
        yield g


class RawStream:
    """A console stream read line by line in a thread, comments too: ("comment", text) and
    (event name, data) items on a queue. The socket's read timeout is the client's: a stream silent
    for that long ends in a timeout, as it did for the viewers of issue 24."""

    def __init__(self, g, query: str, read_timeout_s: float):
        self.items: queue.Queue = queue.Queue()
        self.error: BaseException | None = None
        self.c = g.http.conn(timeout=read_timeout_s)
        self.c.request("GET", "/console/stream?" + query, headers=cookie(g.session))
        self.response = self.c.getresponse()
        assert self.response.status == 200, self.response.read()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            sse.read_events(self.response, self.items.put, lambda text: self.items.put(("comment", text)))
        except BaseException as exc:   # noqa: BLE001 — the test reads it: a timeout is the failure looked for
            self.error = exc
        finally:
            self.items.put(("ended", repr(self.error)))

    def until(self, predicate, timeout_s: float = DEADLINE_S) -> list[tuple[str, str]]:
        """Items up to and including the first for which predicate(name, data) holds."""
        def not_ended(item, got):
            if item[0] == "ended":
                raise AssertionError(f"the stream ended ({item[1]}) after {[(n, d[:60]) for n, d in got[-20:]]}")
        return sse.take_until(self.items, predicate, timeout_s, check=not_ended)

    def close(self) -> None:
        sse.close(self.c)


class Flood(threading.Thread):
    """Submits `sleep 1` jobs to the closed queue "flood" one after another until stopped: a steady
    stream of job changes that the viewers below do not show."""

    def __init__(self, g):
        super().__init__(daemon=True)
        self.client = GridClient(g.cfg)
        self.cwd = str(g.root)
        self.submitted = 0
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self.client.submit(["sleep", "1"], queue="flood", cwd=self.cwd, env={"PATH": os.environ["PATH"]})
                self.submitted += 1
        except BaseException as exc:   # noqa: BLE001 — reported by the test
            self.error = exc


def page_stream_query(g, path: str) -> str:
    """The stream the page at `path` connects to (its sse-connect), as the browser would open it."""
    status, _, body = g.http.request("GET", path, headers=cookie(g.session))
    assert status == 200, body
    return html.unescape(re.search(r'sse-connect="/console/stream\?([^"]*)"', body).group(1))


def test_viewers_that_show_none_of_a_flood_of_changes_still_get_a_keep_alive_on_time(grid):
    """10 viewers whose pages show none of the flood's jobs (a jobs list of another queue, another
    job's page), each reading with a read timeout of 10 keep-alive intervals: each gets keep-alives
    while the flood goes on, and no read times out. Before, a keep-alive went out only after
    KEEPALIVE_S without any change, so under a steady flow of changes none ever did."""
    watched = grid.submit("sleep", "600")
    grid.wait_started(watched)
    queries = [page_stream_query(grid, "/console/jobs?queue=capq&state=all")] * 5 + \
              [page_stream_query(grid, f"/console/jobs/{watched}")] * 5
    streams = [RawStream(grid, q, read_timeout_s=10 * KEEPALIVE_S) for q in queries]
    flood = Flood(grid)
    try:
        for s in streams:
            s.until(lambda n, d: n == "comment" and d == "statgrid console")    # subscribed
        flood.start()
        # Each viewer: three keep-alives, each after more jobs were submitted than before the
        # previous one (so they came while the flood went on, not in a pause of it).
        for s in streams:
            seen_at = []
            while len(seen_at) < 3:
                s.until(lambda n, d: n == "comment" and d == "keep-alive")
                if not seen_at or flood.submitted > seen_at[-1]:
                    seen_at.append(flood.submitted)
            assert flood.is_alive() and flood.error is None, flood.error
        assert flood.submitted > 3
        for s in streams:
            assert s.error is None and s.thread.is_alive()
    finally:
        flood.stop.set()
        flood.join(60)
        for s in streams:
            s.close()
        grid.client.kill([watched])
    assert flood.error is None, flood.error


def test_a_capped_jobs_list_keeps_the_newest_rows_says_so_and_updates_the_rows_it_shows(grid):
    query = page_stream_query(grid, "/console/jobs?queue=capq")
    assert dict(urllib.parse.parse_qsl(query))["total"] == "0"                  # nothing in capq yet
    stream = RawStream(grid, query, read_timeout_s=10 * KEEPALIVE_S)
    try:
        stream.until(lambda n, d: n == "comment" and d == "statgrid console")
        first = grid.client.submit(["sleep", "600"], queue="capq", cwd=str(grid.root),
                                   env={"PATH": os.environ["PATH"]})["id"]
        grid.wait_started(first)
        ids = [first] + [grid.client.submit(["true"], queue="capq", cwd=str(grid.root),
                                            env={"PATH": os.environ["PATH"]})["id"] for _ in range(LIVE_ROWS + 2)]
        # 8 new rows: the 6th, 7th and 8th each push the oldest row shown off the bottom.
        got = stream.until(lambda n, d: n == "jobs-capped" and f"of {len(ids)} jobs" in d)
        new_rows = [int(re.search(r'id="job-(\d+)"', d).group(1)) for n, d in got if n == "job-new"]
        assert new_rows == ids
        dropped = [int(n[4:]) for n, d in got if n.startswith("job-") and n != "job-new" and d == ""]
        assert dropped == ids[:3]
        notice = [d for n, d in got if n == "jobs-capped"]
        assert len(notice) == 3 and f"Showing the newest {LIVE_ROWS} of {len(ids)} jobs" in notice[-1]
        assert f"Showing the newest {LIVE_ROWS} of {LIVE_ROWS + 1} jobs" in notice[0]
        # A row in view still changes live; one that left the list sends nothing any more.
        grid.client.kill([ids[-1]])                   # on top, pending
        got = stream.until(lambda n, d: n == f"job-{ids[-1]}" and "s-KILLED" in d)
        grid.client.kill([first])                     # left the list (the oldest); its slot goes to ids[3]
        got += stream.until(lambda n, d: n == f"job-{ids[3]}" and "s-DONE" in d)
        assert any("s-RUN" in d for n, d in got if n == f"job-{ids[3]}")
        assert not [d for n, d in got if n == f"job-{first}"], got
        assert grid.client.job(first)["state"] == "KILLED"
    finally:
        stream.close()
        grid.client.kill(ids)


def test_a_running_job_shows_its_run_time_so_far(grid):
    job = grid.client.submit(["sleep", "600"], queue="normal", cwd=str(grid.root),
                             env={"PATH": os.environ["PATH"]})["id"]
    try:
        start_ts = grid.wait_started(job)["start_ts"]
        h = cookie(grid.session)
        before = time.time()
        record = json.loads(grid.http.request("GET", f"/console/api/jobs/{job}", headers=h)[2])["job"]
        page = grid.http.request("GET", "/console/jobs?state=RUN", headers=h)[2]
        after = time.time()
        assert record["run_s"] is None and before - start_ts <= record["run_so_far_s"] <= after - start_ts
        row = re.search(rf'<tr id="job-{job}".*?</tr>', page, re.S).group(0)
        shown = float(re.search(r'class="elapsed" data-elapsed-s="([0-9.]+)"', row).group(1))
        assert round(before - start_ts, 1) - 0.1 <= shown <= after - start_ts + 0.1
    finally:
        grid.client.kill([job])
    ended = grid.wait([job])[0]
    page = grid.http.request("GET", f"/console/jobs/{job}", headers=cookie(grid.session))[2]
    assert 'class="elapsed"' not in page and f"{ended['run_s']:.1f} s" in page      # ended: its whole run time
