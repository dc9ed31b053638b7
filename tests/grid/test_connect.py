"""Sub-tasks from a session (MP CONNECT, statgrid/session/connect.py): a session job hands job files
to the grid with s.parallel() and waits for them; they see its librefs, their STIMER totals go into
its log, they end with it, and only it (its own user's, running) may have them.

End to end on a real grid (tests/support/gridtest.py): parent and sub-tasks are real `statgrid run` jobs.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from statgrid.config import load_config
from statgrid.console.data import stimer_steps
from statgrid.errors import LibraryError, StepError, UsageError
from statgrid.session import Session, Task
from statgrid.session.connect import TaskResult, subtask_record
from statgrid.libraries import LIBNAMES_ENV, Library, decode_libnames, encode_libnames
from statgrid.session.stimer import StepRecord
from tests.support import gridtest
from tests.conftest import wait_for
from tests.support.gridtoml import toml_text

# Four slots: the parent holds one while its sub-tasks run in the others.
GRID_TOML = toml_text({"node1": 4}, session={"memsize": "256M", "threads": 1})

PARENT = """\
import json
import statgrid
from statgrid.session import Task

with statgrid.session() as s:
    s.libname("shared", {shared!r})
    s.sql("CREATE TABLE shared.base AS SELECT range AS x FROM range(30)")
    results = s.parallel([Task("child.py", env={{"PART": str(i)}}, name=f"part{{i}}") for i in (1, 2, 3)])
    s.sql("CREATE TABLE shared.total AS SELECT part, count(*) AS n, sum(y) AS sum_y FROM "
          "(SELECT * FROM shared.part_1 UNION ALL SELECT * FROM shared.part_2 UNION ALL SELECT * FROM shared.part_3) "
          "GROUP BY part ORDER BY part")
    open("results.json", "w").write(json.dumps([[r.job_id, r.state] for r in results]))
"""

CHILD = """\
import os
import statgrid

part = int(os.environ["PART"])
with statgrid.session() as s:
    s.sql("CREATE TABLE work.mine AS SELECT x FROM shared.base WHERE x % 3 = " + str(part - 1))
    s.sql(f"CREATE TABLE shared.part_{part} AS SELECT {part} AS part, x * 10 AS y FROM work.mine")
"""


@pytest.fixture(scope="module")
def grid():
    # Not under pytest's tmp_path (0700): the test of another user's submit needs `nobody` to reach
    # the master's socket, as any user of a shared grid does.
    root = Path(tempfile.mkdtemp(prefix="statgrid-connect-"))
    root.chmod(0o755)
    try:
        g = gridtest.Grid(root, GRID_TOML)
        with gridtest.running(g):
            yield g
    finally:
        shutil.rmtree(root, ignore_errors=True)


def submit(grid, *argv: str) -> int:
    """A job of the test's user; PYTHONPATH passed on so that jobs import this statgrid (a worktree's)."""
    env = {k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ}
    return grid.client.submit(list(argv), cwd=str(grid.root), env=env)["id"]


def write(grid, name: str, text: str) -> Path:
    path = grid.root / name
    path.write_text(text)
    return path


def stimer_records(job_dir: str) -> list[dict]:
    return [json.loads(line) for line in (Path(job_dir) / "session.stimer.jsonl").read_text().splitlines()]


def test_a_parent_runs_three_subtasks_on_its_library_and_logs_their_stimer(grid):
    shared = grid.root / "shared"
    shared.mkdir()
    write(grid, "child.py", CHILD)
    parent = submit(grid, str(write(grid, "parent.py", PARENT.format(shared=str(shared)))))
    assert grid.wait([parent])[0]["state"] == "DONE", grid.client.peek(parent)["text"]

    children = grid.client.jobs(parent=parent, all_states=True)
    assert [c["name"] for c in children] == ["part1", "part2", "part3"]
    assert all(c["state"] == "DONE" and c["parent_id"] == parent for c in children)
    results = json.loads((grid.root / "results.json").read_text())
    assert [r[0] for r in results] == [c["id"] for c in children] and all(r[1] == "DONE" for r in results)

    # The data: each part read the parent's data set through SHARED and wrote its own there.
    total = pq.read_table(shared / "total.parquet").to_pylist()
    assert total == [{"part": p, "n": 10, "sum_y": sum(x * 10 for x in range(30) if x % 3 == p - 1)} for p in (1, 2, 3)]

    # The parent's log: its own steps, then one "subtask" record per child holding the child's totals.
    pjob = grid.client.job(parent)
    recs = stimer_records(pjob["job_dir"])
    own = [r for r in recs if r["record"] == "step"]
    assert [r["name"] for r in own] == ["PROCEDURE SQL", "CONNECT", "PROCEDURE SQL"]
    subtasks = [r for r in recs if r["record"] == "subtask"]
    assert [r["name"] for r in subtasks] == [f"CONNECT task part{i} (job {c['id']})" for i, c in
                                             zip((1, 2, 3), children)]
    for rec, child in zip(subtasks, children):
        figures = grid.client.job(child["id"])["stimer"]
        assert rec["job_id"] == child["id"] and rec["step"] == 2 and rec["status"] == "ok"
        assert rec["rows_out"] == 20                          # its two steps' rows: 10 + 10
        for key in ("session_id", "real_s", "user_cpu_s", "sys_cpu_s", "memory_bytes", "os_memory_bytes",
                    "write_bytes", "outputs"):
            assert rec[key] == figures[key], key
        assert figures["outputs"] == ["work.mine", f"shared.part_{child['name'][-1]}"]
    # ... and its total is its own process's: steps and outputs of its own alone.
    total_rec = recs[-1]
    assert total_rec["record"] == "total" and total_rec["step"] == 3
    assert total_rec["outputs"] == ["shared.base", "shared.total"]
    assert pjob["stimer"] == total_rec

    # The console's step table of the parent lists them after its CONNECT step.
    shown = [s["name"] for s in stimer_steps(Path(pjob["job_dir"]) / "session.stimer.jsonl", os.getuid())]
    assert shown == ["PROCEDURE SQL"] + [r["name"] for r in subtasks] + ["CONNECT", "PROCEDURE SQL"]

    log = (Path(pjob["job_dir"]) / "session.log").read_text()
    for child in children:
        assert f"NOTE: CONNECT task {child['name']} (job {child['id']}) used (Total process time):" in log
        assert f"CONNECT task {child['name']} (job {child['id']}) ended DONE; it ran" in log
    assert "CONNECT: 3 of 3 sub-tasks ended DONE" in log
    # The children got SHARED from the parent; their WORK was their own.
    clog = (Path(grid.client.job(children[0]["id"])["job_dir"]) / "session.log").read_text()
    assert f"Librefs of the parent job (${LIBNAMES_ENV}): SHARED={shared}" in clog
    assert "SGwork_" in clog and clog.split("WORK=")[1].split()[0] not in log


def test_a_failed_subtask_fails_parallel_naming_it_and_the_parent_exits(grid):
    write(grid, "good.py", "import statgrid\n\nwith statgrid.session() as s:\n    s.sql('SELECT 1')\n")
    write(grid, "bad.py", "import statgrid\n\nwith statgrid.session() as s:\n    s.sql('SELECT * FROM nosuch.t')\n")
    write(grid, "fails.py", "import statgrid\nfrom statgrid.session import Task\n"
                            "from statgrid.session.connect import SubtaskError\n\n"
                            "with statgrid.session() as s:\n"
                            "    try:\n"
                            "        s.parallel([Task('good.py'), Task('bad.py')])\n"
                            "    except SubtaskError as exc:\n"
                            "        open('caught.txt', 'w').write(' '.join(r.state for r in exc.results))\n"
                            "    s.sql('SELECT 1')\n")
    parent = submit(grid, str(grid.root / "fails.py"))
    pjob = grid.wait([parent])[0]
    assert pjob["state"] == "EXIT" and pjob["exit_reason"] == "exit code 1"
    good, bad = grid.client.jobs(parent=parent, all_states=True)
    assert (good["state"], bad["state"], bad["exit_reason"]) == ("DONE", "EXIT", "exit code 1")
    assert (grid.root / "caught.txt").read_text() == "DONE EXIT"    # caught, the job went on: but it failed
    log = (Path(grid.client.job(parent)["job_dir"]) / "session.log").read_text()
    error = " ".join(log.split("ERROR: CONNECT: ", 1)[1].split("\nNOTE:", 1)[0].split())
    assert error.startswith(f"1 of 2 sub-tasks failed: job {bad['id']} (task 'bad') EXIT: exit code 1 (step 1 "
                            "PROCEDURE SQL: SQL error: library 'nosuch' is not assigned")
    assert f"See `statgrid job {bad['id']}`; parallel(..., check=False) returns the results" in error
    recs = [r for r in stimer_records(grid.client.job(parent)["job_dir"]) if r["record"] == "subtask"]
    assert [(r["job_id"], r["status"]) for r in recs] == [(good["id"], "ok"), (bad["id"], "error")]
    assert recs[1]["error"].startswith("EXIT: exit code 1 (step 1 PROCEDURE SQL: SQL error: library 'nosuch' is not "
                                       "assigned") and "\n" not in recs[1]["error"]


def test_killing_the_parent_kills_its_pending_and_running_subtasks(grid):
    write(grid, "sleeper.py", "import time\n\ntime.sleep(300)\n")
    write(grid, "waits.py", "import statgrid\nfrom statgrid.session import Task\n\n"
                            "with statgrid.session() as s:\n"
                            "    s.parallel([Task('sleeper.py', name=f's{i}') for i in range(4)])\n")
    parent = submit(grid, str(grid.root / "waits.py"))

    def three_run_one_pends():   # the parent holds one of the 4 slots
        kids = grid.client.jobs(parent=parent, all_states=True)
        started = [k for k in kids if k["state"] == "RUN" and k["start_ts"] is not None]
        pending = [k for k in kids if k["state"] == "PEND"]
        return kids if (len(started), len(pending)) == (3, 1) else None

    kids = wait_for(three_run_one_pends, "3 sub-tasks running and 1 pending")
    grid.client.kill([parent])
    assert grid.wait([parent])[0]["state"] == "KILLED"
    ended = grid.wait([k["id"] for k in kids])
    assert [k["state"] for k in ended] == ["KILLED"] * 4
    pended = [k for k in ended if k["id"] not in {s["id"] for s in kids if s["state"] == "RUN"}]
    assert [k["start_ts"] for k in pended] == [None]     # the pending one never started, not even in the freed slot
    assert pended[0]["exit_reason"] == f"its parent job {parent} ended (KILLED) while pending"
    assert all(k["exit_reason"] == f"its parent job {parent} ended (KILLED)" for k in ended if k not in pended)


def test_subtasks_still_running_at_the_timeout_are_killed_and_check_false_returns_them(grid):
    write(grid, "sleeper.py", "import time\n\ntime.sleep(300)\n")
    write(grid, "times_out.py", "import json\nimport statgrid\nfrom statgrid.session import Task\n\n"
                                "with statgrid.session() as s:\n"
                                "    rs = s.parallel([Task('sleeper.py')], timeout_s=2, check=False)\n"
                                "    open('timeout.json', 'w').write(json.dumps([[r.job_id, r.state, r.timed_out, "
                                "r.why()] for r in rs]))\n")
    parent = submit(grid, str(grid.root / "times_out.py"))
    assert grid.wait([parent])[0]["state"] == "DONE"
    [sleeper] = grid.client.jobs(parent=parent, all_states=True)
    assert json.loads((grid.root / "timeout.json").read_text()) == [
        [sleeper["id"], "KILLED", True, "KILLED: killed by user (still running at the timeout, so killed)"]]


@pytest.mark.root
def test_a_subtask_must_name_a_running_job_of_ones_own(grid):
    done = submit(grid, "true")
    assert grid.wait([done])[0]["state"] == "DONE"
    with pytest.raises(UsageError, match=f"parent job {done} is DONE, not running: sub-tasks are handed to the "
                                         "grid by a running session job"):
        grid.client.submit(["true"], cwd=str(grid.root), parent_id=done)
    with pytest.raises(UsageError, match="parent job 999999 does not exist"):
        grid.client.submit(["true"], cwd=str(grid.root), parent_id=999999)

    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("submitting as another user needs root and setpriv")
    running = submit(grid, "sleep", "300")
    grid.wait_started(running)
    try:
        status, body = post_as_nobody(grid.client.socket_path, {"argv": ["true"], "cwd": "/", "parent_id": running})
        assert status == 403, body
        assert body["error"] == (f"job {running} belongs to 'root'; you ('nobody') cannot add sub-tasks to it.")
        assert grid.client.jobs(parent=running, all_states=True) == []
    finally:
        grid.client.kill([running])
        grid.wait([running])


NOBODY_POST = """
import json, socket, sys
sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
body = sys.argv[2].encode()
sock.sendall(b"POST /jobs HTTP/1.1\\r\\nHost: localhost\\r\\nContent-Type: application/json\\r\\n"
             b"Connection: close\\r\\nContent-Length: " + str(len(body)).encode() + b"\\r\\n\\r\\n" + body)
reply = b""
while chunk := sock.recv(65536):
    reply += chunk
head, _, payload = reply.partition(b"\\r\\n\\r\\n")
print(json.dumps({"status": int(head.split()[1]), "body": json.loads(payload)}))
"""


def post_as_nobody(socket_path: Path, body: dict) -> tuple[int, dict]:
    """POST /jobs on the master's socket from a process of user `nobody` (the kernel tells the master who)."""
    # The system's Python: the test's own may live where `nobody` may not go (/root/.pyenv).
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    done = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", python, "-I",
                           "-c", NOBODY_POST, str(socket_path), json.dumps(body)],
                          capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    return out["status"], out["body"]


# -- without a grid -----------------------------------------------------------------------------------


def test_parallel_outside_a_grid_job_says_it_needs_one(session, captured, monkeypatch, tmp_path):
    monkeypatch.delenv("STATGRID_JOB_ID", raising=False)
    (tmp_path / "t.py").write_text("")
    with pytest.raises(StepError, match=r"CONNECT: sub-tasks need a grid job to belong to, and this session runs "
                                        r"outside the grid \(\$STATGRID_JOB_ID is not set\): submit this job with "
                                        "`statgrid submit FILE`"):
        session.parallel([Task("t.py")])
    assert session.steps[-1].name == "CONNECT" and session.steps[-1].status == "error"


def test_task_arguments_are_checked():
    with pytest.raises(UsageError, match=r"Task name 'p\[1-3\]' is not valid: give a non-empty name without"):
        Task("p.py", name="p[1-3]")
    with pytest.raises(UsageError, match=r"Task env=\{'PART': 1\} is not a mapping of strings to strings"):
        Task("p.py", env={"PART": 1})
    assert Task("dir/part.py").job_name == "part"


def test_libnames_cross_in_the_environment_and_a_session_assigns_them(home, captured, monkeypatch, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    text = encode_libnames([Library("shared", lib, False), Library("ref", tmp_path, True)])
    assert decode_libnames(text) == [Library("shared", lib, False), Library("ref", tmp_path, True)]
    monkeypatch.setenv(LIBNAMES_ENV, text)
    with Session(load_config(), {"memsize": "256M", "threads": "1"}, log=captured.log()) as s:
        assert s.libraries.get("shared").path == lib and s.libraries.get("ref").readonly
        assert sorted(s.assigned_libnames) == ["ref", "shared"]     # handed on to its own sub-tasks
    assert f"NOTE: Librefs of the parent job (${LIBNAMES_ENV}): SHARED={lib}, REF={tmp_path} (read-only)" \
        in captured.text.getvalue()
    monkeypatch.setenv(LIBNAMES_ENV, json.dumps({"version": 99, "libnames": []}))
    with pytest.raises(LibraryError, match=rf"\${LIBNAMES_ENV} has version 99, this statgrid reads version 1"):
        Session(load_config(), log=captured.log())
    monkeypatch.setenv(LIBNAMES_ENV, encode_libnames([Library("gone", tmp_path / "gone", False)]))
    with pytest.raises(LibraryError, match=r"does not exist; create it or fix the path. \(a libref of the parent job"):
        Session(load_config(), log=captured.log())


def test_a_subtask_record_without_stimer_totals_keeps_its_wall_time():
    killed = TaskResult(task=Task("p.py"), job_id=7, state="KILLED", exit_code=None, exit_reason="killed by user",
                        wait_s=0.5, run_s=2.0, stimer=None)
    rec = subtask_record(killed, step_no=4)
    assert (rec.name, rec.record, rec.job_id, rec.step, rec.status, rec.real_s, rec.error) == \
        ("CONNECT task p (job 7)", "subtask", 7, 4, "terminated", 2.0, "KILLED: killed by user")
    assert StepRecord.from_json_dict(rec.to_json_dict()) == rec
    with pytest.raises(ValueError, match="STIMER record with real_s = 'x'"):
        StepRecord.from_json_dict({**rec.to_json_dict(), "real_s": "x"})
