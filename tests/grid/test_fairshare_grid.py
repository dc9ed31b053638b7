"""Fairshare on a real shared grid (issue 18): real OS users flood a queue through the real CLI, as
root runs the grid. Two users with equal shares run 1:1, shares 2:1 run 2:1, and a newcomer's job
starts before the heavy user's next. The counts are the master's own: each job's dispatch and
finish as the master recorded them (job_events), read at every finish — the moments the grid is
steady between dispatches. Skipped with the reason where users cannot be made.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.support.multiuser import site_install
from tests.grid.test_multiuser_grid import made_people, shared_grid
from tests.support.gridtoml import SHARED_SECTIONS, toml_text

__all__ = ["site_install"]   # a fixture, used by name

# the shared grid's grid.toml (tests/grid/test_multiuser_grid.py), a third host and the fairshare queues
TOML = toml_text({"node1": 2, "node2": 2, "node3": 2},
                 {"normal": {}, "fair": {"fairshare": {"default": 1}},
                  "fair21": {"fairshare": {"{alice}": 2, "{bob}": 1}}},
                 **SHARED_SECTIONS)


def history(grid) -> dict[int, dict]:
    """job id → user, submit, the master's dispatch and finish times (job_events), read as root."""
    con = sqlite3.connect(grid.home / "grid" / "jobs.db")
    try:
        jobs = {r[0]: {"user": r[1], "queue": r[2], "submit": r[3], "dispatch": None, "finish": None}
                for r in con.execute("SELECT id, user, queue, submit_ts FROM jobs")}
        for job_id, event, ts in con.execute("SELECT job_id, event, ts FROM job_events ORDER BY rowid"):
            if event == "dispatch":
                jobs[job_id]["dispatch"] = ts
            elif event in ("finish", "lost"):
                jobs[job_id]["finish"] = ts
    finally:
        con.close()
    return jobs


def running_at_finishes(jobs: dict[int, dict], users: tuple[str, str]) -> list[tuple[int, int]]:
    """At each finish while both users still had jobs waiting: (running of users[0], of users[1])."""
    out = []
    for t in sorted(j["finish"] for j in jobs.values() if j["finish"]):
        waiting = {u: any(j["user"] == u and j["submit"] <= t and (j["dispatch"] or t + 1) > t for j in jobs.values())
                   for u in users}
        if not all(waiting.values()):
            continue
        run = [sum(1 for j in jobs.values() if j["user"] == u and j["dispatch"] is not None and j["dispatch"] < t
                   and (j["finish"] is None or j["finish"] >= t)) for u in users]
        out.append(tuple(run))
    return out


def flood(grid, who: str, queue: str, n: int, seconds: str = "0.4", gate: Path | None = None) -> list[int]:
    """n jobs of `who` in one submit (an array), each sleeping a little; returns their job ids. With
    a gate (a file's path), each first waits for the file: the first ones hold their slots until the
    test has submitted what must compete with them, however slow the machine."""
    argv = ["sleep", seconds] if gate is None else \
        ["sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.05; done; sleep {seconds}"]
    done = grid.cli(who, "submit", "-q", queue, "-J", f"flood[1-{n}]", *argv)
    assert done.returncode == 0, done.stderr
    return [int(i) for i in done.stdout.split()]


def open_gate(grid, name: str) -> None:
    (grid.root / name).touch()


def wait_array(grid, who: str, ids: list[int]) -> None:
    done = grid.cli(who, "wait", *map(str, ids), timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout


@pytest.mark.root
def test_fairshare_on_a_real_grid(site_install):
    with made_people(("alice", "bob", "carol")) as people:
        toml = TOML.replace("{alice}", people["alice"].name).replace("{bob}", people["bob"].name)
        with shared_grid(site_install, people, toml, prefix="sgfs-") as grid:
            alice, bob = people["alice"].name, people["bob"].name
            # equal shares: alice floods first (FIFO would keep every slot hers), bob follows
            a = flood(grid, "alice", "fair", 30, gate=grid.root / "gate-fair")
            b = flood(grid, "bob", "fair", 30)
            open_gate(grid, "gate-fair")
            wait_array(grid, "alice", a)
            wait_array(grid, "bob", b)
            seen = running_at_finishes({k: v for k, v in history(grid).items() if v["queue"] == "fair"}, (alice, bob))
            steady = seen[4:]                      # bob's first slots come as alice's first jobs end
            assert steady and all(r == (3, 3) for r in steady), seen

            # shares 2:1 → 4:2 of the six slots
            a = flood(grid, "alice", "fair21", 30, gate=grid.root / "gate-fair21")
            b = flood(grid, "bob", "fair21", 30)
            open_gate(grid, "gate-fair21")
            wait_array(grid, "alice", a)
            wait_array(grid, "bob", b)
            seen = running_at_finishes({k: v for k, v in history(grid).items() if v["queue"] == "fair21"},
                                       (alice, bob))
            steady = seen[4:]
            assert steady and all(r == (4, 2) for r in steady), seen

            # a newcomer to a busy queue starts ahead of the heavy user's waiting jobs
            a = flood(grid, "alice", "fair", 30, seconds="1", gate=grid.root / "gate-newcomer")
            grid.wait_started("alice", a[5])       # the sixth element: all six slots are alice's
            newcomer = grid.submit("carol", "-q", "fair", "true")
            open_gate(grid, "gate-newcomer")
            assert grid.wait("carol", newcomer)["state"] == "DONE"
            jobs = history(grid)
            mine = jobs[newcomer]
            alice_waiting = [j for j in jobs.values() if j["user"] == alice and j["queue"] == "fair"
                             and j["submit"] < mine["submit"] and (j["dispatch"] is None or j["dispatch"] > mine["submit"])]
            assert alice_waiting and all(j["dispatch"] is None or j["dispatch"] > mine["dispatch"] for j in alice_waiting)
            shares = grid.cli("carol", "shares", "-q", "fair")
            assert shares.returncode == 0 and alice in shares.stdout and people["carol"].name in shares.stdout
            grid.cli("alice", "kill", *map(str, a))
