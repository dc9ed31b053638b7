"""Bad input gets a clear error naming it (issue 24, item 5): through the real CLI (grid.toml,
job files, -J, monitor --host) and a real master's API on its local socket (JSON bodies a parser
chokes on, true for a number, a calendar for another user)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support import gridtest
from tests.conftest import run_cli
from tests.grid.test_api import Grid, assert_usage_error


def cli_in(tmp_path: Path, *args):
    return run_cli(*args, cwd=tmp_path, env={"STATGRID_HOME": str(tmp_path / "home"), "STATGRID_CONFIG": ""})


def assert_usage_exit(r, *needles: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)


# -- grid.toml -------------------------------------------------------------------------------------------
def test_a_grid_toml_that_is_not_utf8_is_a_usage_error_naming_the_file_and_byte(tmp_path):
    text = '[grid]\nadmins = ["ren\xe9"]\n'
    (tmp_path / "grid.toml").write_bytes(text.encode("latin-1"))
    offset = text.encode("latin-1").index(b"\xe9")                    # 20: counted here, not by the code
    r = cli_in(tmp_path, "--config", str(tmp_path / "grid.toml"), "config")
    assert_usage_exit(r, str(tmp_path / "grid.toml"), f"byte {offset} (0xe9)", "UTF-8")


@pytest.mark.parametrize("line, needles", [
    ("slots = 99999999999999999999", ["hosts.node1.slots = 99999999999999999999", "1 to 100,000"]),
    ("slots = 100001", ["hosts.node1.slots = 100001"]),
    ('cpus = "0-99999"', ["hosts.node1.cpus = '0-99999'", "0 … 8191"]),
    ('cpus = "0-99999999999999"', ["hosts.node1.cpus = '0-99999999999999'"]),
    ("cpus = [0, 8192]", ["hosts.node1.cpus = [0, 8192]", "0 … 8191"]),
    ("slots = " + "9" * 5000, ["more than 4,300 digits"]),
])
def test_host_slots_and_cpus_out_of_range_are_usage_errors(tmp_path, line, needles):
    (tmp_path / "grid.toml").write_text(f"[hosts.node1]\n{line}\n")
    r = cli_in(tmp_path, "--config", str(tmp_path / "grid.toml"), "config")
    assert_usage_exit(r, *needles)


def test_the_largest_slots_and_cpus_are_accepted(tmp_path):
    (tmp_path / "grid.toml").write_text('[hosts.node1]\nslots = 100000\ncpus = "0-8191"\n')
    r = cli_in(tmp_path, "--config", str(tmp_path / "grid.toml"), "config")
    assert r.returncode == 0, r.stderr


# -- the CLI's own checks ----------------------------------------------------------------------------------
def test_a_directory_given_as_a_job_file_is_named_a_directory(tmp_path):
    (tmp_path / "job.py").mkdir()
    r = cli_in(tmp_path, "submit", "job.py")
    assert_usage_exit(r, "is a directory")
    assert "does not exist" not in r.stderr


def test_a_job_name_with_an_escape_sequence_is_refused_for_its_control_character(tmp_path):
    r = cli_in(tmp_path, "submit", "-J", "\x1b[31mred", "true")
    assert_usage_exit(r, "control character '\\x1b' at position 0")
    assert "opens '['" not in r.stderr                       # not taken for an array's bracket


@pytest.mark.parametrize("host", ["a/b", "..", "."])
def test_monitor_refuses_a_host_name_that_is_no_file_name(tmp_path, host):
    out = tmp_path / "samples"
    r = cli_in(tmp_path, "monitor", "--host", host, "--out", str(out), "-d", "1s", "-q")
    assert_usage_exit(r, f"host name {host!r}")
    assert not list(tmp_path.rglob("machine.json")) and not list(tmp_path.rglob("*.parquet"))


# -- the API ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    with gridtest.running(Grid(tmp_path_factory.mktemp("gaps"))) as g:
        yield g


def test_bodies_the_json_parser_cannot_read_get_a_400_saying_why(grid):
    before = len(grid.client.jobs(all_states=True))
    job = json.dumps(grid.submit_body())
    cases = [
        (job[:-1] + ', "priority": ' + "7" * 5000 + "}", ["more than 4,300 digits"]),
        ("[" * 100_000 + "]" * 100_000, ["nests arrays or objects deeper"]),
        (None, ["not UTF-8", "byte"]),
    ]
    for text, needles in cases:
        raw = text.encode() if text is not None else job[:-1].encode() + b', "name": "caf\xe9"}'
        status, payload = grid.http("POST", "/jobs", raw=raw)
        assert_usage_error(status, payload, *needles)
        assert "There was an error parsing the body" not in payload["error"]
    offset = (job[:-1] + ', "name": "caf').encode().__len__()
    status, payload = grid.http("POST", "/jobs", raw=job[:-1].encode() + b', "name": "caf\xe9"}')
    assert f"byte {offset} (0xe9)" in payload["error"], payload
    assert len(grid.client.jobs(all_states=True)) == before


@pytest.mark.parametrize("field", ["priority", "mem_bytes", "runlimit_s"])
def test_true_is_no_number_in_a_submit_or_a_modify(grid, field):
    status, payload = grid.http("POST", "/jobs", grid.submit_body(**{field: True}))
    assert_usage_error(status, payload, field, "true is not a number")
    status, payload = grid.http("POST", "/jobs/1/modify", {field: False})
    assert_usage_error(status, payload, field, "false is not a number")


def test_a_calendar_for_another_user_is_refused_as_a_submit_for_them_is(grid):
    other = "nobody"
    submit = grid.http("POST", "/jobs", grid.submit_body(user=other))
    calendar = grid.http("POST", "/schedules", {"cron": "@daily", "request": grid.submit_body(user=other)})
    assert submit[0] == 403 and calendar[0] == 403, (submit, calendar)
    assert f"asked for a calendar that submits as {other!r}" in calendar[1]["error"], calendar
    assert grid.http("GET", "/schedules") == (200, [])
