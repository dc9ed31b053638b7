"""A session job's memory reservation is made by the master, from what the job file declares and
the master's own grid.toml (under which the job runs): `statgrid submit`, `flow submit`, `schedule
add` and Session.parallel send what the file declares (its largest memsize, and whether it also
opens a session without one), never a reservation computed from the client's config.

End to end on a real grid whose grid.toml differs from the client's (empty: the defaults, memsize
2G and memory_margin 0.1); and the reader of job files over files Python's parser cannot take.
"""
from __future__ import annotations

import json
import time

import pytest

from statgrid.config import load_config
from statgrid.errors import UsageError
from statgrid.grid.master.jobspec import JobRequest, validate, with_declared_memsize
from statgrid.job.kinds import PARSE_MAX_BYTES, declared_memsize
from tests.conftest import run_cli, wait_for
from tests.support.gridtest import Grid, running
from tests.support.gridtoml import toml_text

MIB, GIB = 2**20, 2**30
ENGINE_BYTES = 128 * MIB                  # what a session holds besides memsize (README, "Memory")
MASTER_MEMSIZE, MASTER_MARGIN = 1 * GIB, 0.5


def master_reserves(memsize: int) -> int:
    """The reservation under the grid.toml below (README, "Memory": memsize × (1 + margin) + 128 MiB)."""
    return int(memsize * (1 + MASTER_MARGIN)) + ENGINE_BYTES


GRID_TOML = toml_text({"node1": {"slots": 4, "memory": "16G"}}, session={"memsize": "1G"},
                      scheduling={"memory_margin": 0.5})

NO_MEMSIZE_PY = "import statgrid\nwith statgrid.session() as s:\n    pass\n"
SMALL_PY = 'import statgrid\nwith statgrid.session(memsize="512M") as s:\n    pass\n'
# Opens a session at the default memsize first, then sets one: it runs at both, the larger counts.
SMALL_AFTER_DEFAULT_PY = ('import statgrid\nwith statgrid.session() as s:\n    s.sql("SELECT 1")\n'
                          'with statgrid.session(memsize="512M") as s:\n    pass\n')
BIG_AFTER_DEFAULT_PY = ('import statgrid\nwith statgrid.session() as s:\n    pass\n'
                        'with statgrid.session(memsize="1536M") as s:\n    pass\n')
PARENT_PY = ('import statgrid\nfrom statgrid.session import Task\n'
             'with statgrid.session() as s:\n'
             '    s.parallel([Task("small.py"), Task("small_after_default.py")])\n')


def test_the_master_reserves_from_its_own_grid_toml_what_the_file_declares(tmp_path):
    grid = Grid(tmp_path, GRID_TOML)
    files = {"none": NO_MEMSIZE_PY, "small": SMALL_PY, "small_after_default": SMALL_AFTER_DEFAULT_PY,
             "big_after_default": BIG_AFTER_DEFAULT_PY, "parent": PARENT_PY}
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    (tmp_path / "flow.toml").write_text('name = "f"\n[jobs.a]\nfile = "small.py"\n'
                                        '[jobs.b]\nfile = "small_after_default.py"\n')
    client_toml = tmp_path / "client.toml"
    client_toml.write_text("")             # a client without the grid's grid.toml: every default
    client_env = {"STATGRID_HOME": str(grid.home), "STATGRID_CONFIG": str(client_toml)}

    def cli(*args):
        out = run_cli(*args, cwd=tmp_path, env=client_env)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    expected = {"none.py": master_reserves(MASTER_MEMSIZE), "small.py": master_reserves(512 * MIB),
                "small_after_default.py": master_reserves(MASTER_MEMSIZE),
                "big_after_default.py": master_reserves(1536 * MIB)}
    with running(grid):
        calendar = int(cli("schedule", "add", "--cron", "* * * * *", "--", "small.py"))
        ids = {name: int(cli("submit", name)) for name in expected}
        cli("flow", "submit", "flow.toml")
        parent = int(cli("submit", "parent.py"))

        def jobs():
            return json.loads(cli("jobs", "--all", "--json"))

        by_id = {j["id"]: j for j in jobs()}
        assert {name: by_id[i]["mem_bytes"] for name, i in ids.items()} == expected
        flow_jobs = {j["name"]: j["mem_bytes"] for j in jobs() if j.get("flow_id")}
        assert flow_jobs == {"a": expected["small.py"], "b": expected["small_after_default.py"]}, flow_jobs

        # Session.parallel's sub-tasks: their files' memsize, as submit's.
        done = grid.wait([parent], timeout_s=300)[0]
        assert done["state"] == "DONE", done
        subs = {j["name"]: j["mem_bytes"] for j in jobs() if j.get("parent_id") == parent}
        assert subs == {"small": expected["small.py"],                # a Task's name: its file's stem
                        "small_after_default": expected["small_after_default.py"]}, subs

        # The calendar keeps the file's memsize in its request: what it submits reserves the same.
        fired = wait_for(lambda: [j for j in jobs() if j["id"] not in by_id and j["name"] == "small.py"
                                  and not j.get("parent_id")], "the calendar to submit its job", 150)
        assert fired[0]["mem_bytes"] == expected["small.py"], fired
        cli("schedule", "remove", str(calendar))
        assert {j["state"] for j in grid.wait(list(ids.values()), timeout_s=300)} == {"DONE"}


@pytest.fixture
def cfg(tmp_path, grid_toml):
    toml = grid_toml({"node1": 2}, port=None, monitor=True, session={"memsize": "2G"})
    return load_config(toml, {"STATGRID_HOME": str(tmp_path / "home")})


@pytest.mark.parametrize("field,value", [("memsize_bytes", -1), ("memsize_bytes", 2**51), ("memsize_bytes", True),
                                         ("memsize_bytes", "1G"), ("memsize_default_too", "yes")])
def test_a_bad_declared_memsize_is_refused_naming_it(cfg, tmp_path, field, value):
    (tmp_path / "job.py").write_text(SMALL_PY)
    req = JobRequest(["job.py"], str(tmp_path), **{field: value})
    with pytest.raises(UsageError, match="declared memsize" if field == "memsize_bytes" else field) as caught:
        validate(req, cfg, time.time(), check_files=False)
    assert repr(value) in str(caught.value)


def test_the_declared_memsize_is_what_a_master_that_cannot_read_the_file_reserves(cfg, tmp_path):
    (tmp_path / "job.py").write_text(SMALL_AFTER_DEFAULT_PY)
    req = with_declared_memsize(JobRequest(["job.py"], str(tmp_path)), cfg)
    assert (req.memsize_bytes, req.memsize_default_too) == (512 * MIB, True)
    (tmp_path / "job.py").unlink()                     # the master does not read it: the request says
    assert validate(req, cfg, time.time(), check_files=False).mem_bytes == int(2 * GIB * 1.1) + ENGINE_BYTES
    small = JobRequest(["job.py"], str(tmp_path), memsize_bytes=512 * MIB)
    assert validate(small, cfg, time.time(), check_files=False).mem_bytes == int(512 * MIB * 1.1) + ENGINE_BYTES
    # -o memsize wins over the file; --mem over all.
    assert validate(JobRequest(["job.py"], str(tmp_path), options={"memsize": "1G"}, memsize_bytes=512 * MIB),
                    cfg, time.time(), check_files=False).mem_bytes == int(GIB * 1.1) + ENGINE_BYTES
    assert validate(JobRequest(["job.py"], str(tmp_path), mem_bytes=100 * MIB, memsize_bytes=512 * MIB),
                    cfg, time.time(), check_files=False).mem_bytes == 100 * MIB


def test_session_calls_without_memsize_are_reported(tmp_path):
    job = tmp_path / "job.py"
    job.write_text('import statgrid\nfrom statgrid.session import Session\n'
                   'with statgrid.session(threads=2) as s:\n'          # opens without memsize: line 3
                   '    s.set_options({"threads": 1})\n'               # sets no memsize, opens nothing
                   'Session(options={"memsize": "1G"})\n'
                   'statgrid.session(memsize=size)\n')                 # computed at run time: line 6
    got = declared_memsize(job)
    assert (got.sizes, got.unsized, got.skipped) == ([(5, "1G")], [3, 6], "")


def test_a_file_too_deep_or_too_big_to_parse_declares_nothing_and_submits(tmp_path, grid_toml):
    deep = tmp_path / "deep.py"
    deep.write_text('import statgrid\nstatgrid.session(memsize="512M")\nx = ' + " + ".join(["1"] * 200_000) + "\n")
    got = declared_memsize(deep)
    assert (got.sizes, got.unsized) == ([], []) and "nested" in got.skipped, got
    big = tmp_path / "big.py"
    big.write_text('import statgrid\nstatgrid.session(memsize="512M")\n' + "#" * PARSE_MAX_BYTES + "\n")
    got = declared_memsize(big)
    assert got.sizes == [] and f"{PARSE_MAX_BYTES // MIB} MiB" in got.skipped, got
    # The CLI's check of the file does not end in a traceback (it did: RecursionError from ast.parse).
    grid_toml({"node1": 2}, port=None, monitor=True, session={"memsize": "2G"})
    out = run_cli("submit", "deep.py", cwd=tmp_path, env={"STATGRID_CONFIG": str(tmp_path / "grid.toml"),
                                                          "STATGRID_HOME": str(tmp_path / "home")})
    assert "Traceback" not in out.stderr and "RecursionError" not in out.stderr, out.stderr
    assert "no master answers" in out.stderr, out.stderr     # it got as far as sending it


def test_a_bad_declared_memsize_over_http_is_a_400_naming_it(tmp_path):
    from tests.support import gridtest
    from tests.grid.test_api import Grid as ApiGrid, assert_usage_error

    with gridtest.running(ApiGrid(tmp_path)) as grid:
        (tmp_path / "job.py").write_text(SMALL_PY)
        for field, value, needle in [("memsize_bytes", True, "true is not a number"),
                                     ("memsize_bytes", -1, "declared memsize -1 bytes"),
                                     ("memsize_bytes", 2**51, f"declared memsize {2**51} bytes"),
                                     ("memsize_default_too", "maybe", "memsize_default_too")]:
            status, payload = grid.http("POST", "/jobs", grid.submit_body(argv=["job.py"], **{field: value}))
            assert_usage_error(status, payload, needle)
            assert field in payload["error"] or "declared memsize" in payload["error"], payload
        # A sound one: the master's grid.toml (memsize 2G by default) and what the request declares.
        status, job = grid.http("POST", "/jobs", grid.submit_body(argv=["job.py"], memsize_bytes=512 * MIB))
        assert status == 200, job
        assert job["mem_bytes"] == int(512 * MIB * 1.1) + ENGINE_BYTES     # (its host is closed: it stays PEND)
