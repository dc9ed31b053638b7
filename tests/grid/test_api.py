"""The master's HTTP API under hostile and large input (issue 14, item 11), on a real grid:
`statgrid grid up --detach` with one closed host, so every submitted job stays PEND and no job
process runs. Old jobs are written straight into the store (as an older statgrid would have
left them), through a second SQLite connection beside the master's.

Nothing here is timed: a call that used to hang (wait with timeout_s=nan) is bounded by the
HTTP client's own timeout, which makes the test fail instead of hanging.
"""
from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from statgrid.config import load_config
from statgrid.errors import UsageError
from statgrid.grid.interface import localsock
from statgrid.grid.interface.client import _UnixConnection
from statgrid.grid.master.jobspec import COMMAND_MAX_BYTES, ENV_MAX_BYTES, NAME_MAX_CHARS, JobRequest, validate
from statgrid.job.record import Job, JobState
from statgrid.grid.master.store import JobFilter, JobStore
from statgrid.grid.interface.views import jobs_table
from tests.support import gridtest
from tests.support.gridtoml import toml_text

GRID_TOML = toml_text({"node1": {"slots": 1, "open": False}}, monitor=True)
HTTP_TIMEOUT_S = 30


class Grid(gridtest.Grid):
    def __init__(self, root: Path):
        super().__init__(root, GRID_TOML)

    def http(self, method: str, path: str, body=None, raw: bytes | None = None) -> tuple[int, object]:
        """(status, decoded JSON body) of one call on the master's local socket (as the CLI on its
        machine calls it); errors are answers here, not exceptions."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        conn = _UnixConnection(self.client.socket_path, HTTP_TIMEOUT_S)
        try:
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            text = resp.read()
        finally:
            conn.close()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, text.decode(errors="replace")

    def store(self) -> JobStore:
        return JobStore(self.home / "grid" / "jobs.db")

    def submit_body(self, **kw) -> dict:
        return {"argv": ["true"], "cwd": str(self.root), "env": {"PATH": os.environ["PATH"]}, **kw}


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    with gridtest.running(Grid(tmp_path_factory.mktemp("api"))) as g:
        yield g


def old_job(i: int, **kw) -> Job:
    """A finished job as an older master stored it."""
    fields = dict(id=0, user=f"u{i % 3}", queue=("normal", "night")[i % 2], name=f"old-{i}", kind="command",
                  argv=["true"], cwd="/", state=JobState.DONE, attempt=1, host=f"h{i % 4}", submit_ts=1.7e9 + i,
                  dispatch_ts=1.7e9 + i + 0.25, start_ts=1.7e9 + i + 0.5, end_ts=1.7e9 + i + 1.75, exit_code=0)
    return Job(**{**fields, **kw})


def assert_usage_error(status: int, payload, *needles: str) -> None:
    assert status == 400, (status, payload)
    assert set(payload) == {"error", "usage"} and payload["usage"] is True, payload
    for needle in needles:
        assert needle in payload["error"], (needle, payload["error"])


# -- ids and timeouts out of range -----------------------------------------------------------------------
def test_job_id_beyond_int64_is_a_usage_error_not_500(grid):
    huge = str(2**70)
    for method, path, body in [("GET", f"/jobs/{huge}", None), ("GET", f"/jobs/{huge}/wait?timeout_s=0", None),
                               ("GET", f"/jobs/{huge}/peek", None), ("GET", "/jobs/0", None),
                               ("POST", "/kill", {"ids": [2**70]})]:
        status, payload = grid.http(method, path, body)
        assert_usage_error(status, payload, "job_id" if method == "GET" else "ids")
        assert huge in payload["error"] or "/jobs/0" == path
    status, payload = grid.http("GET", f"/jobs/{2**63 - 1}")
    assert status == 404 and "does not exist" in payload["error"], payload
    # The CLI: a usage error (exit 2), before any call.
    r = grid.cli("job", huge)
    assert r.returncode == 2 and "Usage: statgrid job" in r.stderr, r.stderr


def test_wait_timeout_must_be_finite_and_bounded(grid):
    status, job = grid.http("POST", "/jobs", grid.submit_body(name="waiter"))
    assert status == 200 and job["state"] == "PEND", job
    for bad in ("nan", "inf", "-inf", "-1", "301", "1e400"):
        status, payload = grid.http("GET", f"/jobs/{job['id']}/wait?timeout_s={bad}")
        assert_usage_error(status, payload, "timeout_s", repr(bad))
    status, payload = grid.http("GET", f"/jobs/{job['id']}/wait?timeout_s=0")
    assert status == 200 and payload["state"] == "PEND"
    for bad in ("0", "-5", str(2**21)):
        status, payload = grid.http("GET", f"/jobs/{job['id']}/peek?nbytes={bad}")
        assert_usage_error(status, payload, "nbytes", repr(bad))
    with pytest.raises(UsageError, match="wait timeout nan"):
        grid.client.wait([job["id"]], timeout_s=float("nan"))


# -- submit: sizes and characters ------------------------------------------------------------------------
def test_submit_refuses_huge_and_control_character_fields_and_stores_nothing(grid):
    before = grid.client.jobs(user=None, all_states=True)
    cases = [
        ({"name": "n" * 10 * 2**20}, ["job name", "10,485,760 characters", f"limit of {NAME_MAX_CHARS}", "-J"]),
        ({"name": "ok\nJOBID  USER  STAT"}, ["job name", "control character '\\n'", "printable"]),
        ({"name": "red\x1b[31m"}, ["job name", "'\\x1b'"]),
        ({"user": "ann\tx"}, ["user", "'\\t'"]),
        ({"queue": "q" * 200}, ["queue", "200 characters", f"limit of {NAME_MAX_CHARS}"]),
        ({"env": {"PATH": os.environ["PATH"], "BIG": "x" * 2_200_000}},
         ["environment", f"{2_200_000 + len('BIG=') + 1 + len('PATH=') + len(os.environ['PATH']) + 1:,} bytes",
          f"limit of {ENV_MAX_BYTES:,} bytes", "'BIG'", "put large settings in a file"]),
        ({"argv": ["echo", "a" * COMMAND_MAX_BYTES]},
         ["command", f"limit of {COMMAND_MAX_BYTES:,} bytes", "in a file"]),
        ({"env": {"A=B": "1"}}, ["environment variable 'A=B'"]),
        ({"hosts": ["node1\n"]}, ["host", "'\\n'"]),
        # a lone surrogate (a hostile client; or a non-UTF-8 byte of a path, as Python decodes it) has no
        # UTF-8 form: it reached the store and gave a 500
        ({"argv": ["echo", "\ud800"]}, ["command argument", "not valid UTF-8"]),
        ({"cwd": "/tmp/caf\udce9"}, ["working directory", "not valid UTF-8", "rename"]),
        ({"env": {"PATH": os.environ["PATH"], "X": "\udcff"}}, ["environment variable 'X'", "not valid UTF-8"]),
    ]
    for fields, needles in cases:
        status, payload = grid.http("POST", "/jobs", grid.submit_body(**fields))
        assert_usage_error(status, payload, *needles)
        assert len(payload["error"]) < 1000, payload["error"][:200]        # the value is quoted cut short
    assert grid.client.jobs(user=None, all_states=True) == before
    # The CLI checks the same before any call: exit 2, the message names -J.
    r = grid.cli("submit", "-J", "a\nb", "true")
    assert r.returncode == 2 and "job name 'a\\nb' contains the control character" in r.stderr, r.stderr


def test_a_body_over_the_limit_is_refused_before_it_is_read_whole(grid):
    """A hostile client cannot make the master hold a body of any size: 413 with the documented shape,
    by Content-Length and for a chunked body alike; nothing stored."""
    from statgrid.grid.interface.api import BODY_MAX_BYTES

    import select

    def post(headers: str, chunks) -> tuple[int, dict]:
        """Send a POST as a hostile client does: headers, then body chunks until the server answers
        (it answers without reading the rest); return (status, JSON body)."""
        with localsock.connect(grid.client.socket_path, HTTP_TIMEOUT_S) as sock:
            sock.sendall(f"POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{headers}\r\n"
                         .encode())
            for chunk in chunks:
                if select.select([sock], [], [], 0)[0]:
                    break                                      # answered already
                sock.sendall(chunk)
            data = b""
            while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < int(
                    dict(line.split(b": ", 1) for line in data.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:])
                    .get(b"content-length", b"0")):
                more = sock.recv(65536)
                if not more:
                    break
                data += more
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split()[1]), json.loads(body)

    before = grid.client.jobs(user=None, all_states=True)
    status, payload = post(f"Content-Length: {BODY_MAX_BYTES + 1}\r\n", [])
    assert status == 413 and set(payload) == {"error", "usage"}, (status, payload)
    assert f"{BODY_MAX_BYTES + 1:,} bytes" in payload["error"] and "limit of 16 MiB" in payload["error"]
    mib = b" " * 2**20
    status, payload = post("Transfer-Encoding: chunked\r\n", (b"%x\r\n%s\r\n" % (len(mib), mib) for _ in range(64)))
    assert status == 413 and "sent in chunks" in payload["error"], (status, payload)
    assert grid.client.jobs(user=None, all_states=True) == before


def test_bounds_are_checked_in_validate_for_every_entry_point(tmp_path, home):
    cfg = load_config()

    def req(**kw):
        return JobRequest(**{"argv": ["true"], "cwd": str(tmp_path), "user": "ann", **kw})

    for kw, message in [({"name": "x" * (NAME_MAX_CHARS + 1)}, "job name"),
                        ({"argv": ["echo", "a\0b"]}, "NUL"), ({"cwd": "/" + "d" * 5000}, "PATH_MAX"),
                        ({"options": {"memsize\n": "1G"}}, "session option")]:
        with pytest.raises(UsageError, match=message):
            validate(req(**kw), cfg, 0)
    assert validate(req(name="x" * NAME_MAX_CHARS), cfg, 0).name == "x" * NAME_MAX_CHARS
    # A name taken from the command is made printable rather than refused.
    weird = tmp_path / "a\nb"
    weird.write_text("#!/bin/sh\n")
    weird.chmod(0o755)
    assert validate(req(argv=[str(weird)]), cfg, 0).name == "a?b"


# -- error shape -----------------------------------------------------------------------------------------
def test_errors_have_the_documented_shape(grid):
    for method, path, raw, needles in [
        ("GET", "/jobs/abc", None, ["job_id", "'abc'", "valid integer"]),
        ("GET", "/jobs?limit=5000", None, ["limit", "'5000'"]),
        ("GET", "/jobs?after_id=-1", None, ["after_id"]),
        ("GET", "/jobs?state=nope", None, ["state 'nope' is not one of"]),
        ("GET", "/jobs?user=" + "u" * 200, None, ["user"]),
        ("POST", "/jobs", b'{"argv": ["true"', ["not valid JSON"]),
        ("POST", "/jobs", json.dumps({"argv": ["true"]}).encode(), ["'cwd' is missing"]),
        ("POST", "/jobs", json.dumps({"argv": "true", "cwd": "/"}).encode(), ["argv", "valid list"]),
    ]:
        status, payload = grid.http(method, path, raw=raw)
        assert_usage_error(status, payload, *needles)
    status, payload = grid.http("GET", "/no/such/path")
    assert status == 404 and set(payload) == {"error", "usage"} and "GET /no/such/path" in payload["error"]
    # The CLI turns the master's 400 into a usage error: exit 2, usage line, the master's message.
    r = grid.cli("jobs", "-u", "u" * 200)
    assert r.returncode == 2 and "Usage: statgrid jobs" in r.stderr and "query parameter user" in r.stderr, r.stderr


# -- listing ---------------------------------------------------------------------------------------------
def test_pages_return_every_job_exactly_once_and_filters_apply(grid):
    store = grid.store()
    try:
        ids = [store.add(old_job(i)).id for i in range(250)]
    finally:
        store.close()
    seen, after_id, pages = [], 0, 0
    while after_id is not None:
        status, page = grid.http("GET", f"/jobs?all=true&user=u1&limit=30&after_id={after_id}")
        assert status == 200 and set(page) == {"jobs", "next_after_id"}, page
        assert len(page["jobs"]) <= 30
        seen += [j["id"] for j in page["jobs"]]
        after_id, pages = page["next_after_id"], pages + 1
    want = [i for n, i in enumerate(ids) if n % 3 == 1]
    assert seen == want and pages == -(-len(want) // 30)
    # Default page size, with its "more" cursor; filters by state, queue and host.
    status, page = grid.http("GET", "/jobs?all=true")
    assert len(page["jobs"]) == 100 and page["next_after_id"] == page["jobs"][-1]["id"]
    status, page = grid.http("GET", "/jobs?state=DONE&queue=night&host=h1&limit=1000")
    assert [j["id"] for j in page["jobs"]] == [i for n, i in enumerate(ids) if n % 2 == 1 and n % 4 == 1]
    assert page["next_after_id"] is None
    # The client and the CLI read every page.
    assert [j["id"] for j in grid.client.jobs(user="u2", all_states=True)] == [i for n, i in enumerate(ids)
                                                                                 if n % 3 == 2]
    assert len(grid.client.jobs(user=None, all_states=True, limit=7)) == 7
    r = grid.cli("jobs", "-u", "u0", "-s", "DONE", "-q", "normal")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 1 + len([n for n in range(250) if n % 3 == 0 and n % 2 == 0])


def test_cli_listing_shows_one_line_per_job_whatever_an_old_store_holds(grid):
    bad = [old_job(0, name="evil\nJOBID  USER  STAT  forged"), old_job(1, name="n" * 10 * 2**20),
           old_job(2, name="\x1b[2Jclear", user="bob\r"), old_job(3, name="tab\there")]
    store = grid.store()
    try:
        ids = [store.add(dataclass_job).id for dataclass_job in bad]
    finally:
        store.close()
    r = grid.cli("jobs", "-a", "-u", "all")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    rows = {int(line.split()[0]): line for line in lines[1:]}
    assert len(lines) - 1 == len(rows) and set(ids) <= set(rows)           # one line per job, none forged
    assert all(len(line) < 200 for line in lines)
    assert "evil\\nJOBID  USER  STAT  forge" in rows[ids[0]]
    assert "\\x1b[2Jclear" in rows[ids[2]] and "bob\\r" in rows[ids[2]] and "\x1b" not in r.stdout
    assert "tab\\there" in rows[ids[3]]
    detail = grid.cli("job", str(ids[0]))
    assert detail.returncode == 0 and "Job Name <evil\\nJOBID  USER  STAT  forged>" in detail.stdout


def test_jobs_table_escapes_and_cuts_cells():
    rec = old_job(5, name="a\nb" + "c" * 60).to_dict()
    rec["id"] = 7
    text = jobs_table([rec])
    assert len(text.splitlines()) == 2
    assert "a\\nb" + "c" * 35 + "…" in text


def test_page_records_equal_job_to_dict(tmp_path):
    """The listing's SQL-built JSON is the record Job.to_dict() gives, field for field."""
    store = JobStore(tmp_path / "jobs.db")
    try:
        jobs = [store.add(old_job(1, rerunnable=True, kill_requested=True, options={"memsize": "1G"},
                                  requested_hosts=["h1"], rusage={"user_cpu_s": 0.1 + 0.2, "max_rss_bytes": 2**40},
                                  stimer={"real_s": 1 / 3}, exit_reason="é ünïcode \"quoted\"", requeues=2,
                                  env={"SECRET": "not listed"})),
                store.add(old_job(2, state=JobState.PEND, attempt=0, host=None, dispatch_ts=None, start_ts=None,
                                  end_ts=None, exit_code=None, submit_ts=1234567890.123456789)),
                store.add(old_job(3, state=JobState.RUN, end_ts=None, pid=4242))]
        text, next_after_id = store.page(JobFilter(), 0, 10)
        assert next_after_id is None
        assert json.loads(text) == [store.get(j.id).to_dict() for j in jobs]
        text, next_after_id = store.page(JobFilter(states=(JobState.PEND, JobState.RUN)), 0, 1)
        assert [r["id"] for r in json.loads(text)] == [jobs[1].id] and next_after_id == jobs[1].id
    finally:
        store.close()


# -- faults of the master itself ---------------------------------------------------------------------------
def test_an_internal_error_is_a_500_record_and_the_traceback_stays_in_the_log(grid):
    con = sqlite3.connect(grid.home / "grid" / "jobs.db")
    try:
        with con:
            job_id = con.execute("INSERT INTO jobs (user, queue, name, kind, argv, cwd, state, attempt, submit_ts, "
                                 "rerunnable, kill_requested, requeues) VALUES ('ann', 'normal', 'broken', "
                                 "'command', 'not json', '/', 'DONE', 1, 1.0, 0, 0, 0)").lastrowid
        status, payload = grid.http("GET", f"/jobs/{job_id}")
        assert status == 500 and set(payload) == {"error", "usage"} and payload["usage"] is False, payload
        assert "internal error" in payload["error"] and "Traceback" not in payload["error"]
        assert "Traceback" in (grid.home / "grid" / "master.log").read_text()
        r = grid.cli("job", str(job_id))
        assert r.returncode == 1 and r.stderr.startswith("Error: internal error"), r.stderr
    finally:
        with con:
            con.execute("DELETE FROM jobs WHERE name = 'broken'")
        con.close()
