"""Issue 18 end to end on a real grid, through the real CLI: dependencies, arrays, flows, run limits,
suspend/resume, modify/top/bottom, memory reservations, load thresholds, pending reasons, shares.
(The policy's own rules, fairshare's convergence among them, are in tests/grid/test_scheduling_policy.py.)"""
from __future__ import annotations

import json
import os
import time

import pytest

from tests.support import gridtest
from tests.conftest import wait_for
from tests.support.gridtoml import toml_text

GRID_TOML = toml_text({"node1": {"slots": 2, "memory": "1G", "max_load": 4}, "node2": {"slots": 2, "memory": "1G"}},
                      {"normal": {"fairshare": {"default": 1}}, "short": {"priority": 40, "runlimit": "1s"},
                       "one": {"hosts": "node2", "job_limit": 1}})


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    g = gridtest.Grid(tmp_path_factory.mktemp("sched"), GRID_TOML)
    with gridtest.running(g):
        yield g


def cli_ok(grid, *args):
    out = grid.cli(*args)
    assert out.returncode == 0, out.stderr + out.stdout
    return out.stdout


def state(grid, job_id):
    return grid.client.job(job_id)


def test_dependencies_wait_release_and_end_when_never_met(grid):
    first = grid.submit("sleep", "1")
    after = grid.submit("true", depend=f"done({first})")
    rec = state(grid, after)
    assert rec["state"] == "PEND" and rec["depend"] == f"done({first})"
    assert rec["pend_reason"] in (f"dependency not met: done({first}): job {first} is RUN",
                                  f"dependency not met: done({first}): job {first} is PEND")
    failing = grid.submit("false")
    never = grid.submit("true", depend=f"done({failing}) || exit({first})")
    assert [j["state"] for j in grid.wait([first, after, failing])] == ["DONE", "DONE", "EXIT"]
    (ended,) = grid.wait([never])
    assert ended["state"] == "EXIT"
    assert ended["exit_reason"].startswith("dependency can never be met: ")
    # a job killed while it waits: what waits for it being DONE ends too
    held = grid.submit("true", depend=f"done({grid.submit('sleep', '30')})")
    chained = grid.submit("true", depend=f"done({held})")
    assert state(grid, chained)["pend_reason"] == f"dependency not met: done({held}): job {held} is PEND"
    grid.client.kill([held])
    (rec,) = grid.wait([chained])
    assert (rec["state"], rec["exit_reason"]) == ("EXIT", f"dependency can never be met: done({held}): job {held} "
                                                          "ended KILLED, so it can never be DONE")
    grid.client.kill([j["id"] for j in grid.client.jobs() if j["state"] == "RUN"])
    out = grid.cli("submit", "-w", "done(999999)", "true")
    assert out.returncode == 2 and "job 999999 does not exist" in out.stderr
    out = grid.cli("submit", "-w", "done(12", "true")
    assert out.returncode == 2 and "missing ')'" in out.stderr


def test_array_runs_each_index_under_its_throttle(grid):
    out = grid.cli("submit", "-J", "arr[1-6]%2", "sh", "-c", "echo index=$STATGRID_ARRAY_INDEX; sleep 0.3")
    assert out.returncode == 0, out.stderr
    ids = [int(i) for i in out.stdout.split()]
    assert len(ids) == 6 and "Job array <" in out.stderr and "of 6 jobs" in out.stderr
    flow_id = grid.client.job(ids[0])["flow_id"]
    flow = grid.client.flow(flow_id)
    assert [j["id"] for j in flow["jobs"]] == ids
    assert [j["name"] for j in flow["jobs"]] == [f"arr[{i}]" for i in range(1, 7)] and flow["throttle"] == 2
    jobs = grid.wait(ids)
    assert all(j["state"] == "DONE" for j in jobs)
    # never more than two at once: at each start, count the others running then
    for j in jobs:
        overlapping = [k for k in jobs if k["start_ts"] <= j["start_ts"] < k["end_ts"]]
        assert len(overlapping) <= 2, jobs
    for j, index in zip(jobs, range(1, 7)):
        assert f"index={index}" in grid.client.peek(j["id"])["text"]
    shown = cli_ok(grid, "flow", "show", str(flow_id))
    assert f"Array <{flow_id}>, Name <arr>" in shown and "Status <DONE>" in shown and "6 DONE" in shown


def test_flow_file_submitted_shown_and_killed_as_one(grid):
    (grid.root / "nightly.toml").write_text(
        'name = "nightly"\n'
        '[jobs.extract]\ncommand = ["sh", "-c", "echo extracted > extract.txt"]\n'
        '[jobs.model]\ncommand = ["sh", "-c", "cat extract.txt"]\nafter = "done(extract)"\n'
        '[jobs.broken]\ncommand = ["false"]\nafter = "done(model)"\n'
        '[jobs.report]\ncommand = ["true"]\nafter = "done(broken)"\n'
        '[jobs.cleanup]\ncommand = ["true"]\nafter = "ended(broken)"\n')
    out = grid.cli("flow", "submit", "nightly.toml")
    assert out.returncode == 0, out.stderr
    flow_id = int(out.stdout)
    rec = grid.client.flow(flow_id)
    by_name = {j["name"]: j for j in rec["jobs"]}
    assert by_name["model"]["depend"] == f"done({by_name['extract']['id']})"
    jobs = {j["name"]: j for j in grid.wait([j["id"] for j in rec["jobs"]])}
    assert {n: j["state"] for n, j in jobs.items()} == {"extract": "DONE", "model": "DONE", "broken": "EXIT",
                                                         "report": "EXIT", "cleanup": "DONE"}
    assert "extracted" in grid.client.peek(jobs["model"]["id"])["text"]     # ran in the flow file's directory
    assert jobs["report"]["exit_reason"].startswith("dependency can never be met: done(")
    shown = cli_ok(grid, "flow", "show", str(flow_id))
    assert "Status <EXIT>" in shown and "dependency can never be met" in shown
    assert f"{flow_id}" in cli_ok(grid, "flow", "list")

    (grid.root / "slow.toml").write_text('name = "slow"\n[jobs.a]\ncommand = ["sleep", "60"]\n'
                                         '[jobs.b]\ncommand = ["true"]\nafter = "done(a)"\n')
    slow = int(cli_ok(grid, "flow", "submit", "slow.toml"))
    a = grid.client.flow(slow)["jobs"][0]["id"]
    grid.wait_started(a)
    killed = cli_ok(grid, "flow", "kill", str(slow))
    assert killed.startswith(f"Flow <{slow}>:")
    final = {j["name"]: j for j in grid.wait([j["id"] for j in grid.client.flow(slow)["jobs"]])}
    assert final["a"]["state"] == "KILLED" and final["b"]["state"] == "KILLED"
    bad = grid.root / "cycle.toml"
    bad.write_text('name = "c"\n[jobs.a]\ncommand = ["true"]\nafter = "done(b)"\n'
                   '[jobs.b]\ncommand = ["true"]\nafter = "done(a)"\n')
    out = grid.cli("flow", "submit", "cycle.toml")
    assert out.returncode == 2 and "cycle" in out.stderr


def test_run_limit_kills_with_its_reason(grid):
    job = grid.submit("sleep", "60", queue="short")
    (rec,) = grid.wait([job])
    assert rec["state"] == "EXIT"
    assert rec["exit_reason"].startswith("run limit reached: ran ") and "(RUNLIMIT of queue short); killed" in \
        rec["exit_reason"]
    own = grid.submit("sleep", "60", runlimit_s=1.0)
    (rec,) = grid.wait([own])
    assert rec["state"] == "EXIT" and "limit 1s (-W)" in rec["exit_reason"]
    out = grid.cli("submit", "-q", "short", "-W", "2h", "true")
    assert out.returncode == 2 and "-W 2h is over queue short's RUNLIMIT of 1s" in out.stderr


def test_suspend_resume_and_kill_while_suspended(grid):
    job = grid.submit("python3", "-c", "import time\nwhile True: time.sleep(0.01)")
    grid.wait_started(job)
    assert cli_ok(grid, "suspend", str(job)).strip() == f"Job <{job}>: USUSP"
    rec = state(grid, job)
    assert rec["state"] == "USUSP" and rec["suspend_ts"] is not None
    assert [r["id"] for r in json.loads(cli_ok(grid, "jobs", "-s", "USUSP", "--json"))] == [job]
    time.sleep(0.5)
    assert cli_ok(grid, "resume", str(job)).strip() == f"Job <{job}>: RUN"
    rec = state(grid, job)
    assert rec["suspend_ts"] is None and rec["suspended_s"] >= 0.5
    cli_ok(grid, "suspend", str(job))
    grid.client.kill([job])
    (rec,) = grid.wait([job])
    assert rec["state"] == "KILLED"
    out = grid.cli("resume", str(job))
    assert out.returncode == 2 and "not suspended" in out.stderr


def test_pending_reasons_modify_top_bottom_and_job_limit(grid):
    blocker = grid.submit("sleep", "30", queue="one")
    grid.wait_started(blocker)
    waiting = [grid.submit("true", queue="one") for _ in range(3)]
    rec = state(grid, waiting[0])
    assert rec["pend_reason"] == "queue one's job limit reached: 1 running (job_limit = 1)"
    table = cli_ok(grid, "jobs", "-p")
    assert "PENDING REASON" in table and "queue one's job limit reached" in table
    assert "Pending reason: queue one's job limit reached" in cli_ok(grid, "job", str(waiting[1]))
    assert cli_ok(grid, "top", str(waiting[2])).strip() == f"Job <{waiting[2]}>: PEND"
    cli_ok(grid, "bottom", str(waiting[0]))
    cli_ok(grid, "modify", str(waiting[1]), "-sp", "0", "-J", "renamed")
    assert state(grid, waiting[1])["name"] == "renamed"
    out = grid.cli("modify", str(blocker), "-q", "normal")
    assert out.returncode == 2 and "only a pending job can be modified" in out.stderr
    grid.client.kill([blocker])
    done = grid.wait(waiting)
    order = [j["id"] for j in sorted(done, key=lambda j: j["start_ts"])]
    assert order == [waiting[2], waiting[1], waiting[0]]


def test_memory_reservations_and_refusal(grid):
    out = grid.cli("submit", "--mem", "2G", "true")
    assert out.returncode == 2 and "more than any host of queue normal has (the most: node1 with 1G)" in out.stderr
    big = [grid.submit("sleep", "30", mem_bytes=700 * 2**20) for _ in range(3)]
    wait_for(lambda: sum(state(grid, j)["state"] == "RUN" for j in big) == 2, "two 700M jobs running")
    third = next(j for j in big if state(grid, j)["state"] == "PEND")
    assert state(grid, third)["pend_reason"].startswith("needs 700M of memory; the most free on a host with a free "
                                                        "slot: 324M")
    hosts = {state(grid, j)["host"] for j in big if state(grid, j)["state"] == "RUN"}
    assert hosts == {"node1", "node2"}
    grid.client.kill(big)
    grid.wait(big)


def test_busy_host_from_its_monitor_load(grid):
    """node1 has max_load 4: its monitor's latest sample (written here: the grid's monitor is off so the
    load is the test's, not this machine's) says 9.5 → closed_Busy, jobs go to node2; 0.5 → ok again."""
    latest = grid.home / "monitor" / "node1" / "latest.json"
    latest.parent.mkdir(parents=True, exist_ok=True)
    latest.write_text(json.dumps({"node": [{"ts": time.time(), "host": "node1", "load_1m": 9.5}]}))
    wait_for(lambda: next(h for h in grid.client.hosts() if h["host"] == "node1")["state"] == "closed_Busy",
             "node1 busy")
    jobs = [grid.submit("true") for _ in range(4)]
    assert {j["host"] for j in grid.wait(jobs)} == {"node2"}
    latest.write_text(json.dumps({"node": [{"ts": time.time(), "host": "node1", "load_1m": 0.5}]}))
    wait_for(lambda: next(h for h in grid.client.hosts() if h["host"] == "node1")["state"] == "ok", "node1 ok")


def test_shares_command(grid):
    jobs = [grid.submit("true") for _ in range(2)]
    grid.wait(jobs)
    out = cli_ok(grid, "shares")
    assert out.startswith("Queue normal: fairshare default = 1; usage halves every 5 h")
    me = grid.client.whoami()["user"]
    rec = json.loads(cli_ok(grid, "shares", "--json"))
    row = next(r for r in rec["queues"][0]["rows"] if r["name"] == me)
    assert row["kind"] == "user" and row["shares"] == 1 and row["usage_h"] > 0


def test_calendars_survive_a_restart_and_fire_a_missed_time(tmp_path):
    """A calendar is kept in the store: after `grid down` its time passes (the test moves it into
    the past in the store: no waiting a minute), and the next `grid up` fires it once and plans the
    next time from then."""
    import sqlite3

    g = gridtest.Grid(tmp_path, gridtest.ONE_SLOT_TOML)
    (tmp_path / "f.toml").write_text('name = "cal"\n[jobs.a]\ncommand = ["true"]\n'
                                     '[jobs.b]\ncommand = ["true"]\nafter = "done(a)"\n')
    with gridtest.running(g):
        out = g.cli("schedule", "add", "--cron", "0 2 * * *", "--tz", "UTC", "-J", "nightly", "--", "echo", "hi")
        assert out.returncode == 0, out.stderr
        job_cal = int(out.stdout)
        assert "(0 2 * * *, UTC): echo hi; first at " in out.stderr and out.stderr.rstrip().endswith("02:00 UTC.")
        flow_cal = int(g.cli("schedule", "add", "--cron", "@hourly", "--tz", "Europe/Berlin", "--flow", "f.toml").stdout)
        listed = g.cli("schedule", "list").stdout
        assert "0 2 * * *" in listed and "flow cal (2 jobs)" in listed
        # a calendar made with a token stops when the token is revoked (it does not outlive it)
        from statgrid.grid.interface.client import GridClient, Remote

        made = g.client.token_create("calendar test")
        remote = GridClient(g.cfg, remote=Remote(url=f"https://localhost:{g.cfg.master.port}", token=made["token"],
                                                 ca=str(g.home / "grid" / "ca.pem")))
        token_cal = remote.schedule_add("@daily", "UTC", argv=["true"], cwd=str(tmp_path),
                                        env={"PATH": os.environ["PATH"]})["id"]
        g.client.token_revoke(made["id"])
        bad = g.cli("schedule", "add", "--cron", "61 * * * *", "--", "true")
        assert bad.returncode == 2 and "minute" in bad.stderr
        bad = g.cli("schedule", "add", "--cron", "@daily", "--tz", "Mars/Olympus", "--", "true")
        assert bad.returncode == 2 and "time zone 'Mars/Olympus' is not known" in bad.stderr
    con = sqlite3.connect(g.home / "grid" / "jobs.db")
    with con:
        con.execute("UPDATE schedules SET next_ts = ?", (time.time() - 3600,))
    con.close()
    with gridtest.running(g):
        rows = wait_for(lambda: [r for r in g.client.schedules() if r["last_result"]] if all(
            r["last_result"] for r in g.client.schedules()) else None, "both calendars fired")
        results = {r["id"]: r for r in rows}
        assert results[job_cal]["last_result"].startswith("job ")
        assert results[flow_cal]["last_result"].startswith("flow ")
        assert results[token_cal]["last_result"] == (f"failed: token {made['id']}, with which the calendar was made, "
                                                     "was revoked: nothing submitted; make the calendar again")
        assert all(r["next_ts"] > time.time() for r in rows)
        job_id = int(results[job_cal]["last_result"].split()[1])
        (rec,) = g.wait([job_id])
        assert rec["state"] == "DONE" and rec["name"] == "nightly"
        flow = g.client.flow(int(results[flow_cal]["last_result"].split()[1]))
        assert [j["state"] for j in g.wait([j["id"] for j in flow["jobs"]])] == ["DONE", "DONE"]
        assert g.cli("schedule", "remove", str(job_cal)).returncode == 0
        assert [r["id"] for r in g.client.schedules()] == [flow_cal, token_cal]
