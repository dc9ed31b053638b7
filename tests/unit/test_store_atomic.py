"""Issue 24, item 2, at the store's level: a change of many rows (a flow, an array) is one
transaction — a fault in its middle leaves nothing, another connection never sees part of it,
and the master's in-memory callbacks run only once it has committed. Real SQLite files.

The kill -9 trials on a real grid are in tests/grid/test_submit_kill9.py."""
from __future__ import annotations

import dataclasses
import sqlite3
import time

import pytest

from statgrid.grid.master import store as store_mod
from statgrid.job.record import Job, JobState
from statgrid.grid.master.store import JobFilter, JobStore


def job(name: str, user: str = "ann") -> Job:
    return Job(id=0, user=user, queue="normal", name=name, kind="command", argv=["true"], cwd="/", env={"A": "1"},
               state=JobState.PEND, submit_ts=time.time())


class Boom(Exception):
    pass


def count(path, table: str) -> int:
    con = sqlite3.connect(path)
    try:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        con.close()


@pytest.fixture
def db(tmp_path):
    seen: list[tuple[int, str]] = []
    s = JobStore(tmp_path / "jobs.db", on_change=lambda j, e: seen.append((j.id, e)))
    s.seen = seen
    yield s
    s.close()


def test_a_fault_in_the_middle_of_a_flow_leaves_neither_the_flow_nor_any_of_its_jobs(db, tmp_path):
    """The old store ran every INSERT in autocommit (isolation_level=None, and `with con:` begins
    nothing): three of five jobs stayed."""
    def prepare(i, j, inserted):
        if i == 3:
            raise Boom("the fourth job")
        return j

    with pytest.raises(Boom):
        with db.transaction():
            flow_id = db.add_flow("flow", "ann", "f", 0, time.time(), {"jobs": list("abcde")})
            db.add_many([job(n) for n in "abcde"], prepare=prepare)
    assert db.flow(flow_id) is None
    assert db.select(JobFilter()) == [] and db.events() == []
    assert count(tmp_path / "jobs.db", "jobs") == 0 and count(tmp_path / "jobs.db", "flows") == 0
    assert db.seen == []                                  # nobody was told of jobs that do not exist
    # and the store works on: the next flow is whole
    with db.transaction():
        db.add_flow("flow", "ann", "g", 0, time.time(), {"jobs": list("ab")})
        added = db.add_many([job(n) for n in "ab"])
    assert [j.name for j in db.select(JobFilter())] == ["a", "b"]
    assert db.seen == [(added[0].id, "submit"), (added[1].id, "submit")]


def test_add_many_alone_is_all_or_none_too(db, tmp_path):
    def prepare(i, j, inserted):
        if i == 2:
            raise Boom
        return j

    with pytest.raises(Boom):
        db.add_many([job(f"a{i}") for i in range(5)], prepare=prepare)
    assert count(tmp_path / "jobs.db", "jobs") == 0 and count(tmp_path / "jobs.db", "job_events") == 0


def test_another_connection_sees_a_flow_whole_or_not_at_all(db, tmp_path):
    """What a master killed at this moment would leave: another connection reads the file."""
    seen_mid: list[int] = []

    def prepare(i, j, inserted):
        seen_mid.append(count(tmp_path / "jobs.db", "jobs"))
        return j

    with db.transaction():
        db.add_flow("flow", "ann", "f", 0, time.time(), {"jobs": list("abcde")})
        db.add_many([job(n) for n in "abcde"], prepare=prepare)
        seen_mid.append(count(tmp_path / "jobs.db", "flows"))
    assert seen_mid == [0, 0, 0, 0, 0, 0]
    assert count(tmp_path / "jobs.db", "jobs") == 5 and count(tmp_path / "jobs.db", "flows") == 1


def test_after_commit_runs_once_committed_and_never_after_a_rollback(db):
    ran: list[str] = []
    with db.transaction():
        db.add(job("a"))
        db.after_commit(lambda: ran.append("a"))
        assert ran == [] and db.seen == []               # the master's memory waits for the commit
    assert ran == ["a"] and [e for _, e in db.seen] == ["submit"]
    with pytest.raises(Boom):
        with db.transaction():
            db.add(job("b"))
            db.after_commit(lambda: ran.append("b"))
            raise Boom
    assert ran == ["a"] and len(db.seen) == 1
    db.after_commit(lambda: ran.append("now"))            # outside a transaction: at once
    assert ran == ["a", "now"]


def test_a_nested_transaction_that_fails_undoes_only_its_own_rows(db):
    """A calendar's firing: the submit inside may fail; the firing's own record stays."""
    ran: list[str] = []
    with db.transaction():
        db.add(job("outer"))
        with pytest.raises(Boom):
            with db.transaction():
                db.add(job("inner"))
                db.after_commit(lambda: ran.append("inner"))
                raise Boom
        db.after_commit(lambda: ran.append("outer"))
    assert [j.name for j in db.select(JobFilter())] == ["outer"]
    assert ran == ["outer"] and len(db.seen) == 1


def test_a_state_change_and_its_event_are_one_transaction(db, tmp_path):
    """update() writes the job and its history line together: a fault in the enclosing change
    leaves the job as it was, and no event of a change that did not happen."""
    a = db.add(job("a"))
    with pytest.raises(Boom):
        with db.transaction():
            assert db.update(dataclasses.replace(a, state=JobState.RUN, attempt=1), JobState.PEND, 0, "dispatch")
            raise Boom
    assert db.get(a.id).state == JobState.PEND
    assert [e["event"] for e in db.events(a.id)] == ["submit"]


def test_submit_keys_are_per_user_and_forgotten_after_a_day(db, monkeypatch):
    with db.transaction():
        db.record_submit_key("ann", "k1", "d1", "job", {"job_ids": [7]})
    assert db.submit_key("ann", "k1")["result"] == {"job_ids": [7]}
    assert db.submit_key("bob", "k1") is None             # bob's k1 is another key
    later = time.time() + store_mod.SUBMIT_KEY_KEEP_S + 1
    monkeypatch.setattr(store_mod.time, "time", lambda: later)
    assert db.submit_key("ann", "k1") is None
    with db.transaction():                                # a new key prunes those past the day
        db.record_submit_key("ann", "k2", "d2", "job", {"job_ids": [8]})
    assert [r[0] for r in db.con.execute("SELECT key FROM submit_keys")] == ["k2"]


def test_a_key_is_stored_only_with_what_the_submit_made(db):
    with pytest.raises(Boom):
        with db.transaction():
            db.add(job("a"))
            db.record_submit_key("ann", "k", "d", "job", {"job_ids": [1]})
            raise Boom
    assert db.submit_key("ann", "k") is None


def test_a_flow_an_older_store_kept_part_of_is_never_listed_done(db):
    """A store written before flows were one transaction may hold an empty flow or 2 of 5 jobs
    (the issue's master killed during `flow submit`): listed INCOMPLETE, not DONE."""
    import types

    from statgrid.grid.master.flows import Flows

    empty = db.add_flow("flow", "ann", "empty", 0, time.time(), {"jobs": list("abcde")})
    part = db.add_flow("flow", "ann", "part", 0, time.time(), {"jobs": list("abcde")})
    whole = db.add_flow("array", "ann", "arr", 0, time.time(), {"name": "arr[1-2]", "jobs": 2})
    for flow_id, n in ((part, 2), (whole, 2)):
        for j in db.add_many([dataclasses.replace(job(f"j{i}"), flow_id=flow_id) for i in range(n)]):
            assert db.update(dataclasses.replace(j, state=JobState.DONE), JobState.PEND, 0, "finish")
    master = types.SimpleNamespace(store=db)
    states = {f["name"]: f["state"] for f in Flows(master).flows(None)}
    assert states == {"empty": "INCOMPLETE", "part": "INCOMPLETE", "arr": "DONE"}


def test_a_full_disk_inside_a_nested_change_keeps_nothing_and_says_so(db, tmp_path):
    """SQLite rolls the WHOLE transaction back by itself on SQLITE_FULL: the inner block's error must
    reach the caller as that error (not "no such savepoint"), and the outer block must not commit
    what it writes after catching it (those writes would otherwise commit one by one)."""
    db.add(job("before"))
    pages = db.con.execute("PRAGMA page_count").fetchone()[0]
    db.con.execute(f"PRAGMA max_page_count = {pages + 2}")          # a disk with room for almost nothing
    blob = {"X": "y" * 200_000}
    with pytest.raises(sqlite3.OperationalError) as err:
        with db.transaction():
            try:
                with db.transaction():
                    db.add(dataclasses.replace(job("big"), env=blob))
            except sqlite3.OperationalError as inner:
                assert "full" in str(inner), inner                   # the disk's error, not the savepoint's
            db.add(job("after the failure"))                         # what _fire-like code would go on to write
    assert "rolled back" in str(err.value) or "full" in str(err.value), err.value
    db.con.execute("PRAGMA max_page_count = 1073741823")
    names = [r[0] for r in sqlite3.connect(tmp_path / "jobs.db").execute("SELECT name FROM jobs ORDER BY id")]
    assert names == ["before"], names
