"""The web console over HTTP (issue 17), on a real grid: sign-in and its cookie, what the cookie may
and may not do, every view and its JSON, live fragments on the stream, results served sandboxed.
The browser's side (a real chromium) is tests/grid/test_console_browser.py."""
from __future__ import annotations

import http.client
import json
import os
import queue
import re
import ssl
import threading
import urllib.parse

import pytest

from statgrid.console import app as console_app
from statgrid.console.live import flatten
from tests.support import gridtest, sse
from tests.conftest import WAIT_S
from tests.support.gridtoml import toml_text

GRID_TOML = toml_text({"node1": 1, "node2": 1}, master={"api_tls": False},
                      monitor={"enabled": True, "interval": "0.5s"})


class Http:
    """http.client on the grid's loopback port: one request per connection."""

    def __init__(self, port: int, tls_ca: str | None = None):
        self.port, self.ca = port, tls_ca

    def conn(self, timeout: float = 30):
        if self.ca:
            ctx = ssl.create_default_context(cafile=self.ca)
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method: str, path: str, body: bytes | str | None = None, headers: dict | None = None):
        c = self.conn()
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read().decode("utf-8", "replace")
        finally:
            c.close()


def cookie(token: str) -> dict:
    return {"Cookie": f"{console_app.COOKIE}={token}"}


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    g = gridtest.Grid(tmp_path_factory.mktemp("console"), GRID_TOML)
    with gridtest.running(g):
        g.token = g.client.token_create("console test")["token"]
        g.http = Http(g.cfg.master.port)
        g.session = sign_in(g.http, g.token)
        yield g


def sign_in(http: Http, token: str) -> str:
    """POST /console/login: the session id of the cookie it sets."""
    status, headers, _ = http.request("POST", "/console/login", urllib.parse.urlencode({"token": token}),
                                      {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 303, status
    return headers["set-cookie"].split(";")[0].split("=", 1)[1]




class Stream:
    """A console SSE stream read in a thread: (event name, data) pairs on a queue."""

    def __init__(self, g, query: str, session: str):
        self.events: queue.Queue = queue.Queue()
        self.ended = threading.Event()
        self.subscribed = threading.Event()
        self.c = g.http.conn(timeout=WAIT_S)
        self.c.request("GET", "/console/stream?" + query, headers=cookie(session))
        self.response = self.c.getresponse()
        assert self.response.status == 200, self.response.read()
        assert self.response.getheader("Content-Type").startswith("text/event-stream")
        threading.Thread(target=self._read, daemon=True).start()
        # the stream's first line, a comment, is sent once it has subscribed: what happens from now on, it shows
        assert self.subscribed.wait(WAIT_S) or self.ended.is_set(), f"no first line on the stream {query}"

    def _read(self) -> None:
        try:
            sse.read_events(self.response, self.events.put, lambda _text: self.subscribed.set())
        except (OSError, ValueError, AttributeError, http.client.HTTPException):   # closed under the reader
            pass
        finally:
            self.ended.set()

    def until(self, predicate, timeout_s: float = WAIT_S) -> list[tuple[str, str]]:
        """Events up to and including the first for which predicate(name, data) holds."""
        return sse.take_until(self.events, predicate, timeout_s)

    def close(self) -> None:
        sse.close(self.c)


# -- pure parts -----------------------------------------------------------------------------------------
def test_sse_frames_each_line_of_a_fragment():
    assert console_app.sse("job-3", "<tr>\n<td>1</td>\n</tr>") == \
        b"event: job-3\ndata: <tr>\ndata: <td>1</td>\ndata: </tr>\n\n"


def test_redirects_after_sign_in_stay_in_the_console():
    assert console_app._local("/console/jobs?user=a") == "/console/jobs?user=a"
    for bad in ("//evil.example/console/", "https://evil.example/", "/console\\..\\x", "/etc/passwd", ""):
        assert console_app._local(bad) == "/console/grid"


def test_a_monitor_sample_flattens_to_the_keys_the_charts_name():
    rows = {"node": [{"ts": 10.0, "host": "n1", "interval_s": 1.0, "cpu_user_pct": 12.5, "mem_used_bytes": 100}],
            "library": [{"ts": 10.0, "host": "n1", "library": "data", "path": "/d", "device": "vda",
                         "read_bytes_per_s": 5.0}],
            "disk": [{"ts": 10.0, "host": "n1", "device": "vda", "layer": "disk", "await_ms": 2.0},
                     {"ts": 10.0, "host": "n1", "device": "vda1", "layer": "partition", "await_ms": 9.0}]}
    assert flatten(rows) == {"ts": 10.0, "values": {"node.cpu_user_pct": 12.5, "node.mem_used_bytes": 100,
                                                    "library.data.read_bytes_per_s": 5.0,
                                                    "disk.vda.await_ms": 2.0}}
    assert flatten({}) is None and flatten({"node": [{"ts": "x"}]}) is None


# -- signing in ------------------------------------------------------------------------------------------
def test_pages_need_a_sign_in_and_the_cookie_is_httponly_strict_and_console_only(grid):
    status, headers, _ = grid.http.request("GET", "/console/jobs?state=all")
    assert status == 303 and headers["location"] == "/console/login?next=%2Fconsole%2Fjobs%3Fstate%3Dall"
    status, headers, body = grid.http.request("GET", "/console/login")
    assert status == 200 and "statgrid token create" in body and "content-security-policy" in headers
    assert grid.http.request("GET", "/console/static/htmx.min.js")[0] == 200       # no sign-in for the scripts
    assert grid.http.request("GET", "/console/stream?view=grid")[0] == 401         # a stream is not redirected

    form = {"Content-Type": "application/x-www-form-urlencoded"}
    status, _, body = grid.http.request("POST", "/console/login", "token=sg_wrong&next=/console/jobs", form)
    assert status == 401 and "the token is not valid" in body
    body = urllib.parse.urlencode({"token": grid.token, "next": "/console/jobs?state=all"})
    status, headers, _ = grid.http.request("POST", "/console/login", body, form)
    assert status == 303 and headers["location"] == "/console/jobs?state=all"
    set_cookie = headers["set-cookie"]
    assert set_cookie.startswith(f"{console_app.COOKIE}=") and grid.token not in set_cookie   # a session id, not the token
    attrs = {a.strip().split("=")[0].lower(): a.strip() for a in set_cookie.split(";")[1:]}
    assert "httponly" in attrs and attrs["samesite"].lower() == "samesite=strict" and attrs["path"] == "Path=/console"
    assert "secure" not in attrs                                                    # plain http on loopback here
    body = urllib.parse.urlencode({"token": grid.token, "next": "//evil.example/x"})
    assert grid.http.request("POST", "/console/login", body, form)[1]["location"] == "/console/grid"
    audit = (grid.home / "grid" / "audit.log").read_text().splitlines()
    assert any('"action": "console login", "target": "", "outcome": "refused"' in a for a in audit)


def test_the_json_api_never_takes_the_console_cookie(grid):
    status, _, body = grid.http.request("GET", "/jobs", headers=cookie(grid.session))
    assert status == 401 and "carries no credential" in body
    assert grid.http.request("GET", "/console/api/jobs", headers=cookie(grid.token))[0] == 401   # the token is no cookie
    assert grid.http.request("GET", "/console/api/jobs", headers=cookie(grid.session))[0] == 200
    assert grid.http.request("GET", "/console/api/jobs", headers={"Authorization": f"Bearer {grid.token}"})[0] == 200


def test_a_change_through_the_cookie_must_come_from_the_console_page(grid):
    job = grid.submit("sleep", "300")
    grid.wait_started(job)
    path = f"/console/jobs/{job}/kill"
    status, _, body = grid.http.request("POST", path, headers=cookie(grid.session))         # a forged form post
    assert status == 403 and "HX-Request" in body
    status, _, body = grid.http.request("POST", path, headers={**cookie(grid.session), "HX-Request": "true",
                                                                "Origin": "https://evil.example"})
    assert status == 403 and "evil.example" in body
    assert grid.client.job(job)["state"] == "RUN"                                    # nothing was done
    status, _, body = grid.http.request("POST", path, headers={
        **cookie(grid.session), "HX-Request": "true", "Origin": f"http://127.0.0.1:{grid.cfg.master.port}"})
    # "kill requested" while the job ends; KILLED when its end was processed before the answer (a loaded machine)
    assert status == 200 and (f"job {job}: kill requested" in body or f"job {job}: KILLED" in body), body
    assert grid.wait([job])[0]["state"] == "KILLED"
    audit = (grid.home / "grid" / "audit.log").read_text()
    assert f'"action": "kill", "target": "job {job}", "outcome": "ok", "detail": "console"' in audit


# -- views -------------------------------------------------------------------------------------------------
def test_every_view_renders_with_its_json_and_text_stays_text(grid):
    evil = "<script>alert(1)</script>"
    job = grid.client.submit(["true"], name=evil, cwd=str(grid.root), env={"PATH": os.environ["PATH"]})["id"]
    grid.wait([job])
    h = cookie(grid.session)
    for path in ("/console/grid", "/console/queues", "/console/jobs?state=all", f"/console/jobs/{job}",
                 "/console/hosts/node1", "/console/results"):
        status, headers, body = grid.http.request("GET", path, headers=h)
        assert status == 200, (path, body)
        assert headers["content-security-policy"] == console_app.CSP
        assert evil not in body and "<script src=\"https://" not in body and "http://" not in body.replace(
            f"http://127.0.0.1:{grid.cfg.master.port}", "")                           # nothing from elsewhere
    body = grid.http.request("GET", "/console/jobs?state=all", headers=h)[2]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and f'id="job-{job}"' in body
    grid_json = json.loads(grid.http.request("GET", "/console/api/grid", headers=h)[2])
    assert [r["host"] for r in grid_json["hosts"]] == ["node1", "node2"]
    assert grid_json["slots"] == 2 and {c["title"] for c in grid_json["charts"]["node1"]} == \
        {"CPU %", "memory GiB", "libraries MB/s"}
    jobs_json = json.loads(grid.http.request("GET", "/console/api/jobs?state=all&sort=id&order=asc", headers=h)[2])
    assert jobs_json["total"] >= 1 and [j["id"] for j in jobs_json["jobs"]] == sorted(j["id"] for j in jobs_json["jobs"])
    one = json.loads(grid.http.request("GET", f"/console/api/jobs/{job}", headers=h)[2])
    assert one["job"]["name"] == evil and one["detail"] is True and [e["event"] for e in one["events"]] == \
        ["submit", "dispatch", "start", "finish"]
    status, _, body = grid.http.request("GET", "/console/api/jobs?sort=nonsense", headers=h)
    assert status == 400 and "sort 'nonsense' is not one of" in body
    assert grid.http.request("GET", "/console/hosts/nohost", headers=h)[0] == 404


def test_a_pending_job_says_why_and_a_closed_host_shows_who_closed_it(grid):
    h = {**cookie(grid.session), "HX-Request": "true"}
    form = {**h, "Content-Type": "application/x-www-form-urlencoded"}
    try:
        for host in ("node1", "node2"):
            status, _, body = grid.http.request("POST", f"/console/hosts/{host}/close", "reason=disk+swap", form)
            assert status == 200 and f"host {host} closed" in body
        job = grid.submit("true")
        view = json.loads(grid.http.request("GET", f"/console/api/jobs/{job}", headers=h)[2])
        assert view["job"]["state"] == "PEND"
        assert view["job"]["pend_reason"] == "no free slot on queue normal's hosts: node1 closed_Adm, node2 closed_Adm"
        page = grid.http.request("GET", "/console/grid", headers=h)[2]
        assert re.search(r'id="host-node1".*?closed_Adm.*?by \w+: disk swap', page, re.S)
    finally:
        for host in ("node1", "node2"):
            assert grid.http.request("POST", f"/console/hosts/{host}/open", headers=h)[0] == 200
    assert grid.wait([job])[0]["state"] == "DONE"


# -- live ------------------------------------------------------------------------------------------------
def test_a_viewer_sees_a_new_job_arrive_and_change_without_asking(grid):
    jobs_view = Stream(grid, "view=jobs", grid.session)
    grid_view = Stream(grid, "view=grid", grid.session)
    api_events = grid.client.events(timeout_s=WAIT_S)    # `statgrid events` beside the console, unharmed by it
    assert next(api_events) == {"type": "open"}
    gate = grid.root / "gate-viewer"                       # the job runs until its host's row has shown it
    try:
        job = grid.submit("sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.05; done")
        new = jobs_view.until(lambda n, d: n == "job-new")[-1][1]
        assert f'id="job-{job}"' in new and 'sse-swap="job-' in new
        host_rows = grid_view.until(lambda n, d: n.startswith("host-node") and "1 / 1" in d)
        assert host_rows
        gate.touch()
        changes = jobs_view.until(lambda n, d: n == f"job-{job}" and "s-DONE" in d)
        assert any("s-RUN" in d for n, d in changes if n == f"job-{job}")
        assert grid_view.until(lambda n, d: n == "sample")[-1][1].startswith('{"host": "node')
        states = []
        for event in api_events:
            if event["type"] == "job" and event["job"]["id"] == job:
                states.append(event["job"]["state"])
                if event["job"]["state"] == "DONE":
                    break
        assert states == ["PEND", "RUN", "RUN", "DONE"]
    finally:
        jobs_view.close()
        grid_view.close()


def test_the_log_tail_grows_on_the_job_page(grid):
    script = "import itertools, time\nfor i in itertools.count():\n    print('line', i, flush=True)\n    time.sleep(0.25)\n"
    job = grid.submit("python3", "-c", script)
    grid.wait_started(job)
    page = grid.http.request("GET", f"/console/jobs/{job}", headers=cookie(grid.session))[2]
    log_from = int(re.search(r"log_from=(\d+)", page).group(1))
    stream = Stream(grid, f"view=job&id={job}&log_from={log_from}", grid.session)
    try:
        got = stream.until(lambda n, d: n == "log" and "line 12" in d)
        text = page.split('id="log"', 1)[1].split(">", 1)[1].split("</pre>", 1)[0] + \
            "".join(d for n, d in got if n == "log")
        lines = [x for x in text.splitlines() if x]
        assert lines[: lines.index("line 12") + 1] == [f"line {i}" for i in range(13)]   # nothing lost, nothing twice
        assert stream.until(lambda n, d: n == "usage")[-1][1].startswith(f'{{"job": {job}, "ts": ')
        grid.client.kill([job])
        stream.until(lambda n, d: n == f"job-{job}" and "KILLED" in d)
    finally:
        stream.close()
    grid.wait([job])


# -- results ---------------------------------------------------------------------------------------------
def test_saved_reports_are_listed_and_served_sandboxed_and_nothing_else(grid, tmp_path):
    report_dir = grid.home / "bench" / "mixed-10s-20261123-000000" / "report"
    report_dir.mkdir(parents=True)
    (report_dir / "report.html").write_text("<html><body><h1>Mixed analytics</h1></body></html>")
    (grid.home / "bench" / "linked").symlink_to(report_dir.parent)
    (tmp_path / "secret.html").write_text("secret")
    h = cookie(grid.session)
    page = grid.http.request("GET", "/console/results", headers=h)[2]
    assert "mixed-10s-20261123-000000" in page and "linked" not in page
    status, headers, body = grid.http.request(
        "GET", "/console/files/bench/mixed-10s-20261123-000000/report/report.html", headers=h)
    assert status == 200 and "Mixed analytics" in body
    assert headers["content-security-policy"].startswith("sandbox;")
    for bad in ("bench/linked/report/report.html", "bench/../grid/audit.log", "grid/jobs.db",
                "bench/mixed-10s-20261123-000000/report/../../../grid/master.log"):
        assert grid.http.request("GET", "/console/files/" + bad, headers=h)[0] == 404, bad


def test_a_session_jobs_stimer_steps_are_a_table_on_its_page(grid):
    job_file = grid.root / "steps.py"
    job_file.write_text("import statgrid\n\nwith statgrid.session(memsize='256M', threads=1) as s:\n"
                        "    s.sql('CREATE TABLE work.t AS SELECT range AS x FROM range(1000)')\n"
                        "    s.sql('CREATE TABLE work.u AS SELECT x * 2 AS y FROM work.t')\n")
    job = grid.submit(str(job_file))
    assert grid.wait([job])[0]["state"] == "DONE"
    view = json.loads(grid.http.request("GET", f"/console/api/jobs/{job}", headers=cookie(grid.session))[2])
    assert len(view["steps"]) == 2 and all(s["status"] == "ok" for s in view["steps"])
    page = grid.http.request("GET", f"/console/jobs/{job}", headers=cookie(grid.session))[2]
    table = page.split('id="steps"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == 3 and all(f"<td>{s['name']}</td>" in table for s in view["steps"])


def test_a_cr_in_a_fragment_cannot_start_an_event_of_its_own():
    assert console_app.sse("job-1", "a\r\revent: resync\rdata: x\r\nb") == \
        b"event: job-1\ndata: a\ndata: \ndata: event: resync\ndata: data: x\ndata: b\n\n"


def test_signing_out_or_revoking_the_token_ends_the_session_and_its_stream(grid):
    made = grid.client.token_create("short-lived")
    session = sign_in(grid.http, made["token"])
    assert grid.http.request("GET", "/console/grid", headers=cookie(session))[0] == 200
    stream = Stream(grid, "view=grid", session)
    try:
        stream.until(lambda n, d: n == "sample")
        grid.client.token_revoke(made["id"])
        assert stream.ended.wait(WAIT_S), "the stream of a revoked token's session went on"
    finally:
        stream.close()
    status, headers, _ = grid.http.request("GET", "/console/grid", headers=cookie(session))
    assert status == 303 and headers["location"].startswith("/console/login")
    other = sign_in(grid.http, grid.token)
    assert grid.http.request("POST", "/console/logout", headers={**cookie(other), "HX-Request": "true"})[0] == 204
    assert grid.http.request("GET", "/console/api/grid", headers=cookie(other))[0] == 401


def test_a_sign_in_from_another_site_is_refused(grid):
    body = urllib.parse.urlencode({"token": grid.token})
    status, headers, text = grid.http.request("POST", "/console/login", body, {
        "Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"})
    assert status == 401 and "set-cookie" not in headers and "evil.example" in text


def test_a_huge_output_is_skipped_not_read_and_a_broken_stimer_log_still_shows(grid):
    job = grid.submit("sleep", "300")
    grid.wait_started(job)
    output = grid.home / "jobs" / str(job) / "output.txt"
    with open(output, "r+b") as f:                  # sparse: 3 GiB that cost no disk
        f.truncate(3 * 2**30)
        f.seek(3 * 2**30)
        f.write(b"the end\n")
    stream = Stream(grid, f"view=job&id={job}&log_from=0", grid.session)
    try:
        got = stream.until(lambda n, d: n == "log" and "the end" in d)
    finally:
        stream.close()
    logs = [d for n, d in got if n == "log"]
    assert logs[0].strip() == f"[… {3 * 2**30 + 8 - 16384:,} bytes not shown …]"
    assert sum(len(d) for d in logs) < 20_000
    grid.client.kill([job])
    grid.wait([job])
    (output.parent / "session.stimer.jsonl").write_text(
        '{"record": "step", "name": "x", "user_cpu_s": "oops", "step": "one"}\n[1, 2]\nnot json\n')
    status, _, page = grid.http.request("GET", f"/console/jobs/{job}", headers=cookie(grid.session))
    assert status == 200 and "<td>-</td><td>x</td>" in page


def test_bad_stream_and_file_requests_are_4xx_not_faults(grid):
    h = cookie(grid.session)
    status, _, body = grid.http.request("GET", "/console/stream?view=jobs&state=bogus", headers=h)
    assert status == 400 and "state 'bogus'" in body
    assert grid.http.request("GET", "/console/files/bench/a%00b/report.html", headers=h)[0] == 404
    assert grid.http.request("GET", "/console/stream?view=nothing", headers=h)[0] == 400


def test_the_jobs_listing_pages_in_the_order_asked_with_nulls_last(tmp_path):
    from statgrid.job.record import Job, JobState
    from statgrid.grid.master.store import JobFilter, JobStore

    store = JobStore(tmp_path / "jobs.db")
    for i in range(60):
        started = None if i % 4 == 0 else 1000.0 + (i * 37) % 23
        store.add(Job(id=0, user=f"u{i % 5}", queue="q", name=f"j{i}", kind="command", argv=["true"], cwd="/",
                      state=JobState.PEND if started is None else JobState.DONE, submit_ts=900.0 + (i * 11) % 17,
                      start_ts=started, end_ts=None if started is None else started + (i * 13) % 29,
                      host=None if started is None else f"n{i % 3}"))
    rows = store.listing(JobFilter(), "id", False, 0, 100)[0]
    assert [r["id"] for r in rows] == list(range(1, 61))
    keys = {"id": "id", "user": "user", "host": "host", "submit": "submit_ts", "start": "start_ts", "run": "run_s"}
    for sort, field in keys.items():
        for descending in (True, False):
            present = sorted((r for r in rows if r[field] is not None), key=lambda r: (r[field], r["id"]),
                             reverse=descending)
            want = [r["id"] for r in present] + [r["id"] for r in sorted(
                (r for r in rows if r[field] is None), key=lambda r: r["id"], reverse=descending)]
            got = []
            for offset in (0, 25, 50):
                page, total = store.listing(JobFilter(), sort, descending, offset, 25)
                got += [r["id"] for r in page]
            assert total == 60 and got == want, (sort, descending)
    page, total = store.listing(JobFilter(states=(JobState.PEND,), user="u0"), "submit", True, 0, 100)
    assert total == len(page) == sum(1 for r in rows if r["state"] == "PEND" and r["user"] == "u0")
