"""Accounting of finished jobs (issue 18, `statgrid acct`, like bacct): the pure function on hand-made
records with exact figures, the p95 definition, the --since parser, the store reader and its
query plan, the terminal text, and a real grid: `statgrid acct` and `--json` against the job
records, and an ordinary user refused everyone's accounting (a token of 'nobody', root only)."""
from __future__ import annotations

import json
import os
import pwd
import time
from dataclasses import asdict

import pytest

from statgrid.errors import StatgridError, UsageError
from statgrid.grid.master import acct
from statgrid.grid.interface import views
from statgrid.grid.master.acct import AcctRow, account, p95, parse_since
from statgrid.job.record import Job, JobState
from statgrid.grid.master.store import JobStore
from tests.support import gridtest
from tests.support.multiuser import known
from tests.support.gridtoml import toml_text


def rec(i: int, user: str, queue: str, state: str, submit: float, start: float | None, end: float,
        cpu: tuple[float, float] | None) -> dict:
    return {"id": i, "user": user, "queue": queue, "state": state, "submit_ts": submit, "start_ts": start,
            "end_ts": end, "rusage": None if cpu is None else {"user_cpu_s": cpu[0], "sys_cpu_s": cpu[1],
                                                                "max_rss_bytes": 1 << 20}}


# Figures are sums of binary fractions: every sum and mean below is exact in floats.
RECORDS = [
    rec(1, "alice", "normal", "DONE", 100.0, 101.0, 111.0, (2.0, 0.5)),       # wait 1, run 10, cpu 2.5
    rec(2, "alice", "night", "EXIT", 100.0, 104.0, 106.0, (1.0, 0.25)),       # wait 4, run 2, cpu 1.25
    rec(3, "bob", "normal", "DONE", 200.0, 202.0, 232.0, (20.0, 1.0)),        # wait 2, run 30, cpu 21
    rec(4, "bob", "normal", "KILLED", 300.0, None, 305.0, None),              # killed while pending
    rec(5, "carol", "night", "KILLED", 400.0, 408.0, 409.0, (0.5, 0.25)),     # wait 8, run 1, cpu 0.75
    rec(6, "carol", "night", "PEND", 500.0, None, None, None),                # not finished: left out
    rec(7, "alice", "normal", "RUN", 500.0, 501.0, None, None),
]
GROUPS = {"risk": ["alice", "bob"], "ops": ["alice"], "idle": ["dave"]}      # alice in two, carol in none


def row(name, jobs, done, exit_, killed, started, wait_mean, wait_p95, run_sum, run_mean, cpu) -> AcctRow:
    return AcctRow(name, jobs, done, exit_, killed, started, wait_mean, wait_p95, run_sum, run_mean, cpu)


def test_figures_per_user_group_queue_and_in_total():
    r = account(RECORDS, GROUPS)
    assert r.total == row("total", 5, 2, 1, 2, 4, 15 / 4, 8.0, 43.0, 43 / 4, 25.5)
    assert r.by_user == (row("alice", 2, 1, 1, 0, 2, 2.5, 4.0, 12.0, 6.0, 3.75),
                         row("bob", 2, 1, 0, 1, 1, 2.0, 2.0, 30.0, 30.0, 21.0),
                         row("carol", 1, 0, 0, 1, 1, 8.0, 8.0, 1.0, 1.0, 0.75))
    # grid.toml's order, then "-"; alice counts in risk and in ops; a group without jobs has no row
    assert r.by_group == (row("risk", 4, 2, 1, 1, 3, 7 / 3, 4.0, 42.0, 14.0, 24.75),
                          row("ops", 2, 1, 1, 0, 2, 2.5, 4.0, 12.0, 6.0, 3.75),
                          row("-", 1, 0, 0, 1, 1, 8.0, 8.0, 1.0, 1.0, 0.75))
    assert r.by_queue == (row("night", 2, 0, 1, 1, 2, 6.0, 8.0, 3.0, 1.5, 2.0),
                          row("normal", 3, 2, 0, 1, 2, 1.5, 2.0, 40.0, 20.0, 23.5))
    assert (r.user, r.queue, r.since_ts) == (None, None, None)


def test_no_groups_none_started_and_no_jobs():
    r = account([rec(4, "bob", "normal", "KILLED", 300.0, None, 305.0, None)], {}, user="bob", since_ts=1.0)
    assert r.total == row("total", 1, 0, 0, 1, 0, None, None, 0.0, None, 0.0)
    assert [g.name for g in r.by_group] == ["-"] and (r.user, r.since_ts) == ("bob", 1.0)
    empty = account([], GROUPS)
    assert empty.total == row("total", 0, 0, 0, 0, 0, None, None, 0.0, None, 0.0)
    assert empty.by_user == empty.by_group == empty.by_queue == ()


def test_p95_is_the_nearest_rank():
    assert p95([]) is None and p95([7.0]) == 7.0
    assert p95([float(x) for x in range(20, 0, -1)]) == 19.0      # ⌈0.95·20⌉ = 19 (0.95 * 20 > 19 in floats)
    assert p95([float(x) for x in range(1, 22)]) == 20.0           # ⌈19.95⌉ = 20
    assert p95([float(x) for x in range(1, 20)]) == 19.0           # ⌈18.05⌉ = 19: the largest
    assert p95([float(x) for x in range(1, 101)]) == 95.0
    assert p95([1.0, 2.0, 3.0, 1000.0]) == 1000.0                  # one of the values, never interpolated


def test_the_record_round_trips_and_its_version_is_checked():
    r = account(RECORDS, GROUPS, user="alice", queue="night", since_ts=99.5)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["version"] == 1 and d["total"]["cpu_sum_s"] == 25.5 and list(d) == \
        ["version", "user", "queue", "since_ts", "total", "by_user", "by_group", "by_queue", "sessions_by_day"]
    assert acct.AcctReport.from_dict(d) == r
    with pytest.raises(StatgridError, match="accounting of version 2; this statgrid reads version 1"):
        acct.AcctReport.from_dict({**d, "version": 2})


def test_parse_since(monkeypatch):
    now = 1_800_000_000.0
    assert parse_since("24h", now) == now - 86400 and parse_since("7d", now) == now - 7 * 86400
    assert parse_since("30m", now) == now - 1800 and parse_since("1.5 h", now) == now - 5400
    assert parse_since("2026-11-01T08:00+01:00") == 1793516400.0          # a zone in the text wins
    monkeypatch.setenv("TZ", "XXX-2")                                      # this machine's zone: UTC+2
    time.tzset()
    try:
        assert parse_since("2026-11-01") == 1793491200.0 - 7200
        assert parse_since("2026-11-01T08:00") == parse_since("2026-11-01 08:00") == 1793491200.0 + 6 * 3600
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    for bad in ("yesterday", "86400", "2026-13-01", "", "-5h"):
        with pytest.raises(UsageError) as refused:
            parse_since(bad, now)
        assert str(refused.value) == (f"--since {bad!r} is not a time: give a date or a date and time like 2026-11-01 "
                                      "or 2026-11-01T08:00 (this machine's time zone), or how long ago like 24h or 7d.")


def test_the_reader_filters_in_sql_and_gives_the_listings_records(tmp_path):
    store = JobStore(tmp_path / "jobs.db")
    made = []
    for i, (user, queue, state, end) in enumerate([("ann", "normal", JobState.DONE, 110.0),
                                                   ("ann", "night", JobState.EXIT, 120.0),
                                                   ("bob", "normal", JobState.KILLED, 130.0),
                                                   ("bob", "normal", JobState.RUN, None),
                                                   ("ann", "normal", JobState.PEND, None)]):
        started = state is not JobState.PEND
        made.append(store.add(Job(id=0, user=user, queue=queue, name=f"j{i}", kind="command", argv=["true"], cwd="/",
                                  state=state, attempt=1, submit_ts=100.0 + i, start_ts=102.5 + i if started else None,
                                  end_ts=end, rusage={"user_cpu_s": 0.5, "sys_cpu_s": 0.25}, env={"SECRET": "x"})))

    def ids(**kw) -> list[int]:
        return [r["id"] for r in acct.finished_records(store, **kw)]

    assert acct.finished_records(store) == [j.to_dict() for j in made[:3]]      # the listings' records, no env
    assert ids(user="ann") == [made[0].id, made[1].id] and ids(queue="normal") == [made[0].id, made[2].id]
    assert ids(since_ts=120.0) == [made[1].id, made[2].id] and ids(user="bob", queue="night") == []
    report = account(acct.finished_records(store, user="ann"), {}, user="ann")
    assert (report.total.jobs, report.total.run_sum_s, report.total.cpu_sum_s) == (2, 7.5 + 16.5, 1.5)
    # index-friendly: SQLite reads the finished jobs through an index, never the whole table
    for kw, index in (({}, "jobs_state"), ({"user": "ann"}, "jobs_user_state"),
                      ({"queue": "night", "since_ts": 1.0}, "jobs_queue_state")):
        sql, args = acct.finished_sql(kw.get("user"), kw.get("queue"), kw.get("since_ts"))
        plan = " ".join(r[3] for r in store.con.execute("EXPLAIN QUERY PLAN " + sql, args))
        assert f"USING INDEX {index}" in plan, (kw, plan)
    store.close()


def test_the_terminal_text():
    r = account(RECORDS, GROUPS, user="alice", queue="night")
    assert views.acct_text(r) == """\
Finished jobs (DONE, EXIT, KILLED) of user alice, queue night.
Seconds; wait = start − submit and run = end − start, of the jobs that started; p95 by nearest rank; CPU = user + system; a user in two groups counts in both.

USER   JOBS  DONE  EXIT  KILLED  STARTED  WAIT_MEAN_S  WAIT_P95_S  RUN_SUM_S  RUN_MEAN_S  CPU_SUM_S
alice  2     1     1     0       2        2.500        4.000       12.000     6.000       3.750
bob    2     1     0     1       1        2.000        2.000       30.000     30.000      21.000
carol  1     0     0     1       1        8.000        8.000       1.000      1.000       0.750

GROUP  JOBS  DONE  EXIT  KILLED  STARTED  WAIT_MEAN_S  WAIT_P95_S  RUN_SUM_S  RUN_MEAN_S  CPU_SUM_S
risk   4     2     1     1       3        2.333        4.000       42.000     14.000      24.750
ops    2     1     1     0       2        2.500        4.000       12.000     6.000       3.750
-      1     0     0     1       1        8.000        8.000       1.000      1.000       0.750

QUEUE   JOBS  DONE  EXIT  KILLED  STARTED  WAIT_MEAN_S  WAIT_P95_S  RUN_SUM_S  RUN_MEAN_S  CPU_SUM_S
night   2     0     1     1       2        6.000        8.000       3.000      1.500       2.000
normal  3     2     0     1       2        1.500        2.000       40.000     20.000      23.500

       JOBS  DONE  EXIT  KILLED  STARTED  WAIT_MEAN_S  WAIT_P95_S  RUN_SUM_S  RUN_MEAN_S  CPU_SUM_S
total  5     2     1     2       4        3.750        8.000       43.000     10.750      25.500"""
    assert views.acct_text(account([], {}, since_ts=None)) == (
        "Finished jobs (DONE, EXIT, KILLED) of all users.\nSeconds; wait = start − submit and run = end − start, of "
        "the jobs that started; p95 by nearest rank; CPU = user + system; a user in two groups counts in both.\n\n"
        "No finished job found.")


# -- a real grid -------------------------------------------------------------------------------------------
ME = pwd.getpwuid(os.geteuid()).pw_name
GRID_TOML = toml_text({"node1": 2}, {"normal": {"priority": 30}, "night": {"priority": 5}},
                      groups={"risk": [ME, "bob"], "ops": [ME]})
OTHER = "nobody"                          # an ordinary account, with a token (the master runs as root)


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    g = gridtest.Grid(tmp_path_factory.mktemp("acct"), GRID_TOML)
    g.other_token = None
    if os.geteuid() == 0 and known(pwd.getpwnam, OTHER):
        # Tokens are read when the master starts: this one goes into the store before `grid up`.
        from statgrid.grid.security import auth

        (g.home / "grid").mkdir(parents=True, exist_ok=True)
        store = JobStore(g.home / "grid" / "jobs.db")
        _, g.other_token = auth.Tokens(store.con).create(OTHER, "acct test")
        store.close()
    with gridtest.running(g):
        yield g


def test_acct_counts_the_grids_finished_jobs_as_their_records_say(grid):
    ids = [grid.submit("true", queue="normal"), grid.submit("true", queue="normal"),
           grid.submit("false", queue="night")]
    sleeper = grid.submit("sleep", "60", queue="normal")
    grid.wait(ids)
    grid.wait_started(sleeper)
    grid.client.kill([sleeper])                                   # KILLED after it started
    grid.client.close_host("node1", "acct test")
    pending = grid.submit("true", queue="night")
    grid.client.kill([pending])                                   # KILLED while pending: never started
    grid.client.open_host("node1")
    records = grid.wait([*ids, sleeper, pending])
    assert [r["state"] for r in records] == ["DONE", "DONE", "EXIT", "KILLED", "KILLED"], records
    assert records[-1]["start_ts"] is None

    out = grid.cli("acct", "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert (got["user"], got["queue"], got["since_ts"]) == (ME, None, None)
    # the figures, from the job records' own timestamps and rusage
    waits = sorted(r["start_ts"] - r["submit_ts"] for r in records if r["start_ts"] is not None)
    runs = [r["end_ts"] - r["start_ts"] for r in records if r["start_ts"] is not None]
    assert waits == sorted(r["wait_s"] for r in records if r["wait_s"] is not None)
    total = got["total"]
    assert {k: total[k] for k in ("jobs", "done", "exit", "killed", "started")} == \
        {"jobs": 5, "done": 2, "exit": 1, "killed": 2, "started": 4}
    assert total["wait_mean_s"] == pytest.approx(sum(waits) / 4, rel=1e-12, abs=1e-12)
    assert total["wait_p95_s"] == waits[3]                                 # ⌈0.95·4⌉ = 4: the longest
    assert total["run_sum_s"] == pytest.approx(sum(runs), rel=1e-12)
    assert total["run_mean_s"] == pytest.approx(sum(runs) / 4, rel=1e-12)
    assert total["cpu_sum_s"] == pytest.approx(sum(r["rusage"]["user_cpu_s"] + r["rusage"]["sys_cpu_s"]
                                                   for r in records if r["rusage"]), rel=1e-12)
    assert total["run_sum_s"] >= 0 and total["wait_mean_s"] >= 0
    assert [(u["name"], u["jobs"]) for u in got["by_user"]] == [(ME, 5)]
    assert [(g["name"], g["jobs"]) for g in got["by_group"]] == [("risk", 5), ("ops", 5)]
    assert [(q["name"], q["jobs"], q["started"]) for q in got["by_queue"]] == [("night", 2, 1), ("normal", 3, 3)]

    text = grid.cli("acct")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == f"Finished jobs (DONE, EXIT, KILLED) of user {ME}."
    cells = {line.split()[0]: line.split()[1:6] for line in lines[2:] if line.strip()}
    assert cells[ME] == cells["risk"] == cells["ops"] == cells["total"] == ["5", "2", "1", "2", "4"]
    assert cells["night"] == ["2", "0", "1", "1", "1"] and cells["normal"] == ["3", "2", "0", "1", "3"]

    night = json.loads(grid.cli("acct", "-q", "night", "--json").stdout)
    assert (night["queue"], night["total"]["jobs"], [q["name"] for q in night["by_queue"]]) == ("night", 2, ["night"])
    assert json.loads(grid.cli("acct", "--since", "1h", "--json").stdout)["total"]["jobs"] == 5
    later = grid.cli("acct", "--since", "2099-01-01")
    assert later.returncode == 0 and later.stdout.splitlines()[-1] == "No finished job found.", later
    everyone = json.loads(grid.cli("acct", "-u", "all", "--json").stdout)       # an administrator may
    assert everyone["user"] is None and everyone["total"]["jobs"] == 5
    assert json.loads(grid.cli("acct", "-u", "bob", "--json").stdout)["total"]["jobs"] == 0


def test_a_bad_since_is_refused_naming_it(grid):
    r = grid.cli("acct", "--since", "last week")
    assert r.returncode == 2 and "Usage: statgrid acct" in r.stderr, r.stderr
    assert "--since 'last week' is not a time: give a date" in r.stderr
    for bad in ("abc", "nan", "-1", "1e400"):
        with pytest.raises(UsageError) as refused:
            grid.client._call("GET", "/acct", params={"since": bad})
        assert str(refused.value).startswith(f"since {bad!r} is not a time: give Unix seconds, e.g. since="), bad


@pytest.mark.root
def test_an_ordinary_user_sees_only_their_own_accounting(grid, tmp_path):
    if grid.other_token is None:
        pytest.skip(f"needs root (a shared grid) and an account {OTHER!r}")
    from statgrid.grid.interface.client import Forbidden, GridClient, Remote

    url = f"https://localhost:{grid.cfg.master.port}"
    ca = str(grid.home / "grid" / "ca.pem")
    other = GridClient(grid.cfg, remote=Remote(url=url, token=grid.other_token, ca=ca))
    own = acct.AcctReport.from_dict(other.acct())
    assert (own.user, own.total.jobs) == (OTHER, 0)
    refusal = ("only a grid administrator (root; others are named in grid.toml [grid] admins) may see the accounting "
               "of {} — your own is `statgrid acct` without -u (you are 'nobody').")
    for user, whose in (("all", "all users"), (ME, repr(ME))):
        with pytest.raises(Forbidden) as refused:
            other.acct(user=user)
        assert str(refused.value) == refusal.format(whose)
    # the real CLI from "another machine": the token and the grid's CA in the account's client.toml
    conf = tmp_path / "statgrid" / "client.toml"
    conf.parent.mkdir()
    conf.write_text(f'url = "{url}"\ntoken = "{grid.other_token}"\nca = "{ca}"\n')
    conf.chmod(0o600)
    env = {"XDG_CONFIG_HOME": str(tmp_path), "STATGRID_MASTER": url}
    r = gridtest.run_cli("acct", "-u", "all", cwd=grid.root, env={**grid.env, **env})
    assert (r.returncode, r.stderr.strip()) == (1, "Error: " + refusal.format("all users")), r.stderr
    r = gridtest.run_cli("acct", "--json", cwd=grid.root, env={**grid.env, **env})
    assert r.returncode == 0 and json.loads(r.stdout)["user"] == OTHER, r.stderr
    assert '"outcome": "refused"' in (grid.home / "grid" / "audit.log").read_text()


def test_row_fields_carry_units():
    names = list(asdict(account(RECORDS).total))
    assert names == ["name", "jobs", "done", "exit", "killed", "started", "wait_mean_s", "wait_p95_s", "run_sum_s",
                     "run_mean_s", "cpu_sum_s"]


def test_interactive_sessions_are_counted_per_day_of_their_start():
    """seed 004 reports interactive sessions a day: kernels (kind "kernel") by their start's day, with distinct users;
    batch jobs and kernels that never started are not sessions. Days in this machine's time zone, as acct's."""
    import datetime as dt

    day1 = dt.datetime(2026, 11, 2, 9, 30).timestamp()
    day2 = dt.datetime(2026, 11, 3, 23, 59).timestamp()
    base = {"queue": "interactive", "state": "DONE", "submit_ts": day1 - 5, "end_ts": day2 + 60, "rusage": None}
    records = [{**base, "id": 1, "user": "ann", "kind": "kernel", "start_ts": day1},
               {**base, "id": 2, "user": "ann", "kind": "kernel", "start_ts": day1 + 60},
               {**base, "id": 3, "user": "bob", "kind": "kernel", "start_ts": day1 + 120},
               {**base, "id": 4, "user": "bob", "kind": "kernel", "start_ts": day2},
               {**base, "id": 5, "user": "cy", "kind": "session", "start_ts": day2},
               {**base, "id": 6, "user": "cy", "kind": "kernel", "start_ts": None, "state": "KILLED"}]
    report = account(records)
    assert report.sessions_by_day == (("2026-11-02", 3, 2), ("2026-11-03", 1, 1))
    assert acct.AcctReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    section = views.acct_text(report).split("by the day they started:")[1]
    assert [ln.split() for ln in section.strip().splitlines()][-2:] == [["2026-11-02", "3", "2"], ["2026-11-03", "1", "1"]]
