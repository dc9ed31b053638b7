"""Issue 24, item 3, on a real grid: a calendar's firing happens exactly once, whenever the
master is killed around it. The firing, what it submitted (a 3-job flow) and the calendar's next
time are one transaction: killed before its commit, the calendar is still due and fires at the
restart (caught up); killed after, the flow is there whole and the calendar is not due again.

Each trial: the master is killed (SIGKILL; the engine runs on), the calendar is made due in the
store, a master starts and fires it — and is killed at the moment another connection first sees
the firing's effects in the store (the old master wrote the next time first, alone), or at a
random delay after it started — then a master starts again. Afterwards exactly one flow of that
calendar is new, whole, recorded in schedule_firings with its job ids for that due time, and
every job of every firing ran once."""
from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from tests.support import gridtest
from tests.conftest import wait_for, wait_gone
from tests.support.gridtoml import toml_text

TRIALS = 6
GRID_TOML = toml_text({"node1": 3})


def master_info(grid) -> dict:
    return json.loads((grid.home / "grid" / "master.json").read_text())


def db(grid) -> sqlite3.Connection:
    return sqlite3.connect(grid.home / "grid" / "jobs.db")


def cal_flows(grid) -> list[tuple[int, int]]:
    con = db(grid)
    try:
        return con.execute("SELECT f.id, (SELECT count(*) FROM jobs j WHERE j.flow_id = f.id) FROM flows f "
                           "WHERE f.name = 'cal' ORDER BY f.id").fetchall()
    finally:
        con.close()


@pytest.fixture
def grid(tmp_path):
    g = gridtest.Grid(tmp_path, GRID_TOML)
    marker = tmp_path / "runs.txt"
    lines = ['name = "cal"']
    for job, after in (("a", None), ("b", "done(a)"), ("c", None)):
        lines += [f"[jobs.{job}]", f'command = ["sh", "-c", "echo $STATGRID_JOB_ID >> {marker}"]']
        if after:
            lines.append(f'after = "{after}"')
    (tmp_path / "cal.toml").write_text("\n".join(lines) + "\n")
    with gridtest.running(g):
        yield g


def start_and_kill(grid, sched_id: int, due_ts: float, strategy: str, delay_s: float, started_after: float) -> str:
    """Start a master (`grid up --detach`) and SIGKILL it: when the firing shows in the store
    ("seen"), or `delay_s` after it started ("delay"). Returns what happened first."""
    flows_before = len(cal_flows(grid))
    up = subprocess.Popen([sys.executable, "-m", "statgrid", "grid", "up", "--detach"], cwd=grid.root,
                          env={**os.environ, **grid.env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    con = db(grid)
    what = "no kill"
    try:
        deadline = time.monotonic() + 120
        pid = None
        while time.monotonic() < deadline:
            if pid is None:
                try:
                    info = master_info(grid)
                except (FileNotFoundError, ValueError):
                    info = None
                if info is not None and info["started_ts"] > started_after:
                    pid = info["pid"]
                    if strategy == "delay":
                        time.sleep(delay_s)              # a random kill point, not a wait for an outcome
                        os.kill(pid, signal.SIGKILL)
                        what = "killed at a delay"
                        break
                else:
                    time.sleep(0.005)                    # not started: it cannot fire yet (master.json first)
            row = con.execute("SELECT next_ts FROM schedules WHERE id = ?", (sched_id,)).fetchone()
            n = con.execute("SELECT count(*) FROM flows WHERE name = 'cal'").fetchone()[0]
            if row[0] != due_ts or n != flows_before:
                pid = pid or master_info(grid)["pid"]   # it fired: master.json is written before
                os.kill(pid, signal.SIGKILL)
                what = f"killed when seen (next_ts {'moved' if row[0] != due_ts else 'not moved'}, " \
                       f"{n - flows_before} new flow)"
                break
        else:
            raise AssertionError("the master neither started nor fired within 120 s")
    finally:
        con.close()
    up.wait(timeout=240)
    wait_gone([pid])
    return what


def test_a_calendar_fires_exactly_once_whenever_the_master_is_killed_around_it(grid):
    out = grid.cli("schedule", "add", "--cron", "0 2 * * *", "--tz", "UTC", "--flow", "cal.toml")
    assert out.returncode == 0, out.stderr
    sched_id = int(out.stdout)
    seed = int(os.environ.get("STATGRID_KILL9_SEED", time.time_ns() % 10**6))
    rng = random.Random(seed)
    print(f"seed {seed}")
    happened = []
    for trial in range(TRIALS):
        info = master_info(grid)
        os.kill(info["pid"], signal.SIGKILL)
        wait_gone([info["pid"]])
        due_ts = round(time.time() - 60 - trial, 3)       # a time the master missed
        con = db(grid)
        with con:
            con.execute("UPDATE schedules SET next_ts = ? WHERE id = ?", (due_ts, sched_id))
        con.close()
        before = cal_flows(grid)
        strategy = "seen" if trial % 2 == 0 else "delay"
        what = start_and_kill(grid, sched_id, due_ts, strategy, rng.uniform(0, 0.3), info["started_ts"])
        grid.up()
        rec = wait_for(lambda: next(r for r in grid.client.schedules() if r["id"] == sched_id)
                       if next(r for r in grid.client.schedules() if r["id"] == sched_id)["next_ts"] > time.time()
                       else None, "the calendar fired (its next time is ahead)")
        after = cal_flows(grid)
        new = after[len(before):]
        # exactly one firing: one new flow, whole — not none (a lost firing), not two, not part
        assert len(new) == 1 and new[0][1] == 3, (trial, what, before, after)
        assert rec["last_result"] == f"flow {new[0][0]}"
        con = db(grid)
        firings = con.execute("SELECT result, job_ids FROM schedule_firings WHERE schedule_id = ? AND due_ts = ?",
                              (sched_id, due_ts)).fetchall()
        con.close()
        jobs = grid.client.flow(new[0][0])["jobs"]
        assert firings == [(f"flow {new[0][0]}", json.dumps([j["id"] for j in jobs]))], (trial, firings)
        happened.append((strategy, what))
    print("trials:", happened)
    # a time that fired already, set back by hand: not fired again, and the calendar moves on
    info = master_info(grid)
    os.kill(info["pid"], signal.SIGKILL)
    wait_gone([info["pid"]])
    con = db(grid)
    with con:
        con.execute("UPDATE schedules SET next_ts = ? WHERE id = ?", (due_ts, sched_id))
    con.close()
    grid.up()
    wait_for(lambda: next(r for r in grid.client.schedules() if r["id"] == sched_id)["next_ts"] > time.time(),
             "the calendar moved past the time that fired already")
    flows = cal_flows(grid)
    assert len(flows) == TRIALS
    ids = [j["id"] for f, _ in flows for j in grid.client.flow(f)["jobs"]]
    assert {j["state"] for j in grid.wait(ids, timeout_s=300)} == {"DONE"}
    ran = sorted(int(x) for x in (grid.root / "runs.txt").read_text().split())
    assert ran == sorted(ids)                             # each job of each firing ran once
