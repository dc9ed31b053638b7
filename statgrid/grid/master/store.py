"""The job store: SQLite in WAL mode in the grid home; it survives a master restart.

Each change is one transaction, on the master's connection, in its event loop; a change of many
rows (a flow, an array, a calendar's firing with what it submitted, a job's end with its usage)
is one `transaction()`: all or none, whenever the master is killed. The connection is in
autocommit mode (isolation_level=None) and `transaction()` says BEGIN IMMEDIATE … COMMIT itself
(Python's `with con:` only commits or rolls back, it begins nothing in that mode); a transaction
inside another is a SAVEPOINT, so an inner failure the caller handles undoes only its own rows.
Callers change their in-memory state in `after_commit` callbacks, which run once the outermost
transaction has committed (and never when it rolled back). State changes
are compare-and-set on (state, attempt), so a late event of an old attempt (a job requeued
after its host was lost) can never overwrite the new one: that is how "none run twice, none
lost" holds through restarts. Every change also appends to `job_events`, the job's history
(submit, dispatch, start, finish, requeue, kill).

Listings (`page`) read on a connection of their own, in a worker thread, so that a listing of
thousands of jobs never holds up a submit: in WAL mode readers and the writer do not block
each other (https://sqlite.org/wal.html, "Concurrency").
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from statgrid.job.lifecycle import SHOWN_STATE_SQL, shown_state
from statgrid.job.record import JOB_ID_MAX, JSON_FIELDS, SUBMIT_ONLY_FIELDS, Job, JobState, from_row, to_row

# How long a submit's idempotency key is remembered: a client that lost the answer (the master
# died or the network broke) retries within seconds or minutes; a day covers a master that stayed
# down overnight. After that the same key submits anew.
SUBMIT_KEY_KEEP_S = 24 * 3600.0

_SQL_TYPES = {"int": "INTEGER", "float": "REAL", "bool": "INTEGER"}


def _base_type(f: dataclasses.Field) -> str:
    return str(f.type).split("|")[0].strip()                   # annotations are strings here


def _schema() -> str:
    cols = []
    for f in dataclasses.fields(Job):
        if f.name == "id":
            cols.append("id INTEGER PRIMARY KEY AUTOINCREMENT")
        elif f.name in JSON_FIELDS:
            cols.append(f"{f.name} TEXT")
        else:
            cols.append(f"{f.name} {_SQL_TYPES.get(_base_type(f), 'TEXT')}")
    # The listing filters (user, queue, host) each with the state, then id order (SQLite appends
    # the rowid to every index), so a page of one user's unfinished jobs reads only those rows.
    return (f"CREATE TABLE IF NOT EXISTS jobs ({', '.join(cols)});\n"
            "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);\n"
            "CREATE INDEX IF NOT EXISTS jobs_user_state ON jobs(user, state);\n"
            "CREATE INDEX IF NOT EXISTS jobs_queue_state ON jobs(queue, state);\n"
            "CREATE INDEX IF NOT EXISTS jobs_host_state ON jobs(host, state);\n"
            "CREATE TABLE IF NOT EXISTS job_events (job_id INTEGER, attempt INTEGER, ts REAL, event TEXT, "
            "host TEXT, detail TEXT);\n"
            "CREATE INDEX IF NOT EXISTS job_events_job ON job_events(job_id);\n"
            # hosts an administrator closed (`statgrid host close`): kept across master restarts
            "CREATE TABLE IF NOT EXISTS closed_hosts (host TEXT PRIMARY KEY, closed_by TEXT, reason TEXT, ts REAL);\n"
            # fairshare: each (queue, user)'s decayed usage in slot-seconds as of as_of_ts (fairshare.py)
            "CREATE TABLE IF NOT EXISTS usage (queue TEXT, user TEXT, usage_s REAL, as_of_ts REAL, "
            "PRIMARY KEY (queue, user));\n"
            # a flow (a flow file's jobs) or an array (-J "name[1-100]%10"): submitted, shown, killed as one
            "CREATE TABLE IF NOT EXISTS flows (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT, user TEXT, name TEXT, "
            "throttle INTEGER, submit_ts REAL, spec TEXT);\n"
            # calendars: cron-like schedules that submit a job or a flow at their times
            # (token_id: the token it was made with, None on the local socket: revoking the token stops it)
            "CREATE TABLE IF NOT EXISTS schedules (id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT, cron TEXT, "
            "tz TEXT, kind TEXT, what TEXT, queue TEXT, token_id INTEGER, spec TEXT, created_ts REAL, next_ts REAL, "
            "last_ts REAL, last_result TEXT);\n"
            # each firing of a calendar, written in the transaction that submits what it fires: a
            # firing is there with its jobs or not at all (then the calendar is still due: caught up)
            "CREATE TABLE IF NOT EXISTS schedule_firings (schedule_id INTEGER, due_ts REAL, fired_ts REAL, "
            "result TEXT, job_ids TEXT, PRIMARY KEY (schedule_id, due_ts));\n"
            # idempotency keys of submits (Idempotency-Key): a retried submit answers what the first
            # one stored; per user; kept SUBMIT_KEY_KEEP_S
            "CREATE TABLE IF NOT EXISTS submit_keys (user TEXT, key TEXT, digest TEXT, kind TEXT, result TEXT, "
            "created_ts REAL, PRIMARY KEY (user, key));\n"
            "CREATE INDEX IF NOT EXISTS submit_keys_created ON submit_keys(created_ts);")


# Indexes on columns an older store gets only from _add_new_columns: made after it.
_LATE_INDEXES = ("CREATE INDEX IF NOT EXISTS jobs_flow ON jobs(flow_id);\n"
                 "CREATE INDEX IF NOT EXISTS jobs_parent ON jobs(parent_id);\n"
                 "CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_ts);")


def _record_sql() -> str:
    """SQL for one job's record as JSON text, equal to json of Job.to_dict() (env left out).
    Its one parameter is the viewer: STIMER records only when NULL (an administrator) or the owner.

    Built from the Job fields as the schema is. Floats print with 17 significant digits ('!' lifts
    SQLite's printf cap of 16), so they read back as the same doubles; wait_s and run_s repeat
    Job.wait_s / Job.run_s (tests/grid/test_api.py checks the records against to_dict)."""
    def number(expr: str) -> str:
        return f"CASE WHEN {expr} IS NULL THEN NULL ELSE json(printf('%!.17g', {expr})) END"

    parts = []
    for f in dataclasses.fields(Job):
        if f.name == "env":
            continue
        if f.name == "state":
            expr = SHOWN_STATE_SQL
        elif f.name == "stimer":
            expr = "CASE WHEN ?1 IS NULL OR user = ?1 THEN json(stimer) ELSE NULL END"
        elif f.name in JSON_FIELDS:
            expr = f"json({f.name})"
        elif _base_type(f) == "bool":
            expr = f"json(CASE WHEN {f.name} THEN 'true' ELSE 'false' END)"
        elif _base_type(f) == "float":
            expr = number(f.name)
        else:
            expr = f.name
        parts.append(f"'{f.name}', {expr}")
    parts += [f"'wait_s', {number('start_ts - submit_ts')}", f"'run_s', {number('end_ts - start_ts')}"]
    return f"json_object({', '.join(parts)})"


_RECORD_SQL = _record_sql()


@dataclasses.dataclass(frozen=True)
class JobFilter:
    """Which jobs a listing shows; None matches any."""

    states: tuple[JobState, ...] | None = None
    user: str | None = None
    queue: str | None = None
    host: str | None = None
    parent_id: int | None = None         # the sub-tasks of this job

    def where(self) -> tuple[list[str], list[Any]]:
        where, args = [], []
        if self.states is not None:
            stored = [s.value for s in self.states if s != JobState.USUSP]
            clause = f"state IN ({', '.join('?' * len(stored))})" if stored else "0"
            if JobState.USUSP in self.states and JobState.RUN not in self.states:
                clause = f"({clause} OR (state = 'RUN' AND suspend_ts IS NOT NULL))"
            where.append(clause)
            args += stored
        for column in ("user", "queue", "host", "parent_id"):
            value = getattr(self, column)
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        return where, args


ROLLED_BACK = ("the transaction was rolled back by SQLite after an error inside it (database or disk is full?): "
               "nothing of it was kept")


class JobStore:
    def __init__(self, path: Path, on_change=None):
        """on_change(job, event): called after each committed add or update (the master broadcasts it)."""
        self.on_change = on_change
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The store holds every job's environment: its owner's alone (0600) from the start, and so
        # its -wal and -shm files, which SQLite makes with the database's mode.
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(self.path, 0o600)
        self.con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._depth = 0                             # transaction() nesting: 0 = none open
        self._after: list = []                      # after_commit callbacks of the open transaction
        self._keys_pruned_ts = 0.0
        self.con.row_factory = sqlite3.Row
        self.con.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a committed change survives a process crash (the master's kill -9);
        # only an OS crash may lose the last transactions.
        self.con.execute("PRAGMA synchronous=NORMAL")
        self.con.execute("PRAGMA busy_timeout=5000")
        self.con.executescript(_schema())
        self._add_new_columns()
        self.con.executescript(_LATE_INDEXES)
        for side in ("-wal", "-shm"):       # left by an older release (0644) or another umask: private too
            side_path = self.path.with_name(self.path.name + side)
            if side_path.exists() and side_path.stat().st_mode & 0o077:
                os.chmod(side_path, 0o600)

    def close(self) -> None:
        self.con.close()

    # -- transactions --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self):
        """All the writes inside are one transaction: committed together at the end of the outermost
        one, or none of them (an exception rolls back, and propagates). Nested: a SAVEPOINT, so an
        exception inside undoes the inner writes only. Never spans an await: the loop's connection
        is shared by every request."""
        if self._depth:
            if not self.con.in_transaction:         # SQLite ended the outer one (below): write nothing more
                raise sqlite3.OperationalError(ROLLED_BACK)
            name = f"sp{self._depth}"
            self.con.execute(f"SAVEPOINT {name}")
            mark = len(self._after)
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                # SQLite rolls the whole transaction back by itself on some errors ("database or disk
                # is full", SQLITE_FULL): then there is no savepoint to return to, and the outer block
                # must not go on writing (its writes would commit one by one): see the check at COMMIT.
                if self.con.in_transaction:
                    self.con.execute(f"ROLLBACK TO {name}")
                    self.con.execute(f"RELEASE {name}")
                del self._after[mark:]
                raise
            self._depth -= 1
            self.con.execute(f"RELEASE {name}")
            return
        self.con.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
            if not self.con.in_transaction:     # SQLite ended it (above): nothing of it was kept
                raise sqlite3.OperationalError(ROLLED_BACK)
            self.con.execute("COMMIT")
        except BaseException:
            self._depth = 0
            self._after.clear()
            if self.con.in_transaction:
                self.con.execute("ROLLBACK")
            raise
        self._depth = 0
        after, self._after = self._after, []
        failed: BaseException | None = None
        for fn in after:                            # each runs: one fault must not skip the others
            try:
                fn()
            except BaseException as exc:
                failed = failed or exc
        if failed is not None:
            raise failed

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def after_commit(self, fn) -> None:
        """Call fn() once the open transaction has committed (at once when none is open); dropped if
        it rolls back. The master changes its in-memory state here, never before the store has."""
        if self._depth:
            self._after.append(fn)
        else:
            fn()

    # Columns added to Job after a store was made (issue 18's scheduling fields): an older grid
    # home's jobs table gets them, with the values a plain job has. (CREATE TABLE IF NOT EXISTS
    # leaves an existing table as it is.)
    _NEW_COLUMN_DEFAULTS = {"mem_bytes": 0, "priority": 0, "suspended_s": 0.0}

    def _add_new_columns(self) -> None:
        have = {r[1] for r in self.con.execute("PRAGMA table_info(jobs)")}
        wanted = {c.split()[0]: c for c in _schema().split("(", 1)[1].split(");", 1)[0].split(", ")
                  if not c.startswith("id ")}
        missing = [name for name in wanted if name not in have]
        if not missing:
            return
        with self.transaction():
            for name in missing:
                default = self._NEW_COLUMN_DEFAULTS.get(name)
                self.con.execute(f"ALTER TABLE jobs ADD COLUMN {wanted[name]}"
                                 + ("" if default is None else f" DEFAULT {default!r}"))
            if "position" in missing:
                self.con.execute("UPDATE jobs SET position = submit_ts")

    # -- writes ------------------------------------------------------------------------------------
    def add(self, job: Job) -> Job:
        row = to_row(job)
        row.pop("id")
        with self.transaction():
            cur = self.con.execute(f"INSERT INTO jobs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                   list(row.values()))
            job = dataclasses.replace(job, id=cur.lastrowid)
            self._event(job, "submit", None)
            self._changed(job, "submit")
        return job

    def update(self, job: Job, expect_state: JobState, expect_attempt: int, event: str,
               detail: dict | None = None) -> bool:
        """Write `job` if its stored state and attempt are still the expected ones. The fields a job
        keeps from its submit (model.SUBMIT_ONLY_FIELDS) are not written again."""
        row = to_row(job, skip=SUBMIT_ONLY_FIELDS)
        job_id = row.pop("id")
        sets = ", ".join(f"{k} = ?" for k in row)
        with self.transaction():
            cur = self.con.execute(f"UPDATE jobs SET {sets} WHERE id = ? AND state = ? AND attempt = ?",
                                   [*row.values(), job_id, expect_state.value, expect_attempt])
            if cur.rowcount != 1:
                return False
            self._event(job, event, detail)
            self._changed(job, event)
        return True

    def _changed(self, job: Job, event: str) -> None:
        if self.on_change is not None:
            self.after_commit(lambda: self.on_change(job, event))

    def _event(self, job: Job, event: str, detail: dict | None) -> None:
        self.con.execute("INSERT INTO job_events VALUES (?, ?, ?, ?, ?, ?)",
                         (job.id, job.attempt, time.time(), event, job.host,
                          None if detail is None else json.dumps(detail)))

    def close_host(self, host: str, by: str, reason: str) -> None:
        with self.transaction():
            self.con.execute("INSERT OR REPLACE INTO closed_hosts VALUES (?, ?, ?, ?)", (host, by, reason, time.time()))

    def open_host(self, host: str) -> None:
        with self.transaction():
            self.con.execute("DELETE FROM closed_hosts WHERE host = ?", (host,))

    def closed_hosts(self) -> dict[str, dict[str, Any]]:
        """host → {closed_by, reason, ts} of every host an administrator closed."""
        return {r[0]: {"closed_by": r[1], "reason": r[2], "ts": r[3]}
                for r in self.con.execute("SELECT host, closed_by, reason, ts FROM closed_hosts")}

    def add_many(self, jobs: list[Job], event_detail: dict | None = None, prepare=None) -> list[Job]:
        """Several jobs in one transaction (an array, a flow): all or none. Returns them with their ids.
        prepare(i, job, inserted so far) → the job to insert (a flow resolves names to ids with it)."""
        out: list[Job] = []
        with self.transaction():
            for i, job in enumerate(jobs):
                if prepare is not None:
                    job = prepare(i, job, out)
                row = to_row(job)
                row.pop("id")
                cur = self.con.execute(f"INSERT INTO jobs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                       list(row.values()))
                job = dataclasses.replace(job, id=cur.lastrowid)
                self._event(job, "submit", event_detail)
                self._changed(job, "submit")
                out.append(job)
        return out

    def state_of(self, job_id: int) -> tuple[str, bool] | None:
        """(state as shown, whether it ever started) of a job, from its columns alone (a dependency's
        check reads this, not the whole row with its environment); None: no such job."""
        if not 0 < job_id <= JOB_ID_MAX:
            return None
        row = self.con.execute("SELECT state, start_ts, suspend_ts FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            return None
        return shown_state(row[0], row[2]), row[1] is not None or row[0] == JobState.RUN.value

    def set_usage(self, queue: str, user: str, usage_s: float, as_of_ts: float) -> None:
        with self.transaction():
            self.con.execute("INSERT OR REPLACE INTO usage VALUES (?, ?, ?, ?)", (queue, user, usage_s, as_of_ts))

    def usage(self) -> dict[tuple[str, str], tuple[float, float]]:
        """(queue, user) → (decayed usage in slot-seconds, as of when): fairshare's book."""
        return {(r[0], r[1]): (r[2], r[3]) for r in self.con.execute("SELECT queue, user, usage_s, as_of_ts FROM usage")}

    def add_flow(self, kind: str, user: str, name: str, throttle: int, submit_ts: float, spec: dict) -> int:
        """A flow's or an array's row; its jobs are added in the same transaction (the caller's)."""
        with self.transaction():
            return self.con.execute("INSERT INTO flows (kind, user, name, throttle, submit_ts, spec) VALUES "
                                    "(?, ?, ?, ?, ?, ?)", (kind, user, name, throttle, submit_ts,
                                                           json.dumps(spec))).lastrowid

    def flow(self, flow_id: int) -> dict[str, Any] | None:
        if not 0 < flow_id <= JOB_ID_MAX:
            return None
        row = self.con.execute("SELECT * FROM flows WHERE id = ?", (flow_id,)).fetchone()
        return None if row is None else {**dict(row), "spec": json.loads(row["spec"] or "{}")}

    def throttles(self) -> dict[int, int]:
        """flow id → its throttle, for the arrays that have one and still have unfinished jobs."""
        return {r[0]: r[1] for r in self.con.execute(
            "SELECT id, throttle FROM flows WHERE throttle > 0 AND id IN "
            "(SELECT flow_id FROM jobs WHERE state IN ('PEND', 'RUN') AND flow_id IS NOT NULL)")}

    # -- idempotency keys ----------------------------------------------------------------------------
    def submit_key(self, user: str, key: str) -> dict[str, Any] | None:
        """The submit `user` made with `key` within SUBMIT_KEY_KEEP_S: {digest, kind, result (as
        recorded), created_ts}; None: no such submit (never made, or forgotten)."""
        row = self.con.execute("SELECT digest, kind, result, created_ts FROM submit_keys WHERE user = ? AND key = ? "
                               "AND created_ts >= ?", (user, key, time.time() - SUBMIT_KEY_KEEP_S)).fetchone()
        return None if row is None else {"digest": row[0], "kind": row[1], "result": json.loads(row[2]),
                                         "created_ts": row[3]}

    def record_submit_key(self, user: str, key: str, digest: str, kind: str, result: dict) -> None:
        """Remember what a submit made, in the caller's transaction (with the rows it made): the
        key is stored exactly when they are. Forgets keys older than SUBMIT_KEY_KEEP_S."""
        now = time.time()
        with self.transaction():
            if now - self._keys_pruned_ts > 60:
                self.con.execute("DELETE FROM submit_keys WHERE created_ts < ?", (now - SUBMIT_KEY_KEEP_S,))
                self._keys_pruned_ts = now
            self.con.execute("INSERT OR REPLACE INTO submit_keys VALUES (?, ?, ?, ?, ?, ?)",
                             (user, key, digest, kind, json.dumps(result), now))

    # -- reads -------------------------------------------------------------------------------------
    def get(self, job_id: int) -> Job | None:
        if not 0 < job_id <= JOB_ID_MAX:
            return None
        row = self.con.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else from_row(dict(row))

    def select(self, flt: JobFilter) -> list[Job]:
        """Every matching job as a Job, on the master's connection (the loop's): for the master's own
        use at start-up and restart. Listings for clients go through `page`."""
        where, args = flt.where()
        sql = "SELECT * FROM jobs" + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY id"
        return [from_row(dict(r)) for r in self.con.execute(sql, args)]

    def events(self, job_id: int | None = None) -> list[dict[str, Any]]:
        sql, args = "SELECT * FROM job_events", []
        if job_id is not None:
            sql, args = sql + " WHERE job_id = ?", [job_id]
        return [dict(r) for r in self.con.execute(sql + " ORDER BY rowid", args)]

    @contextlib.contextmanager
    def _reader(self):
        """A read-only connection of its own, for listings in a worker thread (the master's is the loop's)."""
        con = sqlite3.connect(self.path)
        try:
            con.execute("PRAGMA query_only = ON")
            con.execute("PRAGMA busy_timeout = 5000")
            yield con
        finally:
            con.close()

    def page(self, flt: JobFilter, after_id: int, limit: int, viewer: str | None = None) -> tuple[str, int | None]:
        """Up to `limit` jobs with id > after_id, ascending: (a JSON array of their records, the
        id to pass as after_id for the next page, or None when no matching job follows).

        Safe to call from any thread: it opens its own connection (the master's is the loop's).
        SQLite builds each record's JSON (`_RECORD_SQL`) and releases the GIL while it does, so
        the loop keeps serving; Python only joins the texts. (Building Job objects and encoding
        them took ~0.15 ms per job, all under the GIL: a listing of 13,000 jobs held the loop
        for 1.8 s.)"""
        where, args = flt.where()
        where.append("id > ?")
        # ?1 is the viewer (_record_sql); the filter's parameters follow it.
        sql = f"SELECT id, {_RECORD_SQL} FROM jobs WHERE {' AND '.join(where)} ORDER BY id LIMIT ?"
        with self._reader() as con:
            rows = con.execute(sql, [viewer, *args, after_id, limit + 1]).fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        return "[" + ",".join(r[1] for r in rows) + "]", rows[-1][0] if more else None

    SORT_COLUMNS = {"id": "id", "user": "user", "state": "state", "queue": "queue", "host": "host", "name": "name",
                    "submit": "submit_ts", "start": "start_ts", "end": "end_ts", "wait": "(start_ts - submit_ts)",
                    "run": "(end_ts - start_ts)"}
    NULLABLE_SORTS = ("host", "start", "end", "wait", "run")

    def listing(self, flt: JobFilter, sort: str = "id", descending: bool = True, offset: int = 0, limit: int = 100,
                viewer: str | None = None) -> tuple[list[dict[str, Any]], int]:
        """One page of a sorted listing (the console's jobs view): (the records as `page` makes
        them, the number of matching jobs). `sort` is a key of SORT_COLUMNS; ties go by id. Any
        thread, its own connection, as `page`."""
        if sort not in self.SORT_COLUMNS:
            raise ValueError(f"sort {sort!r} is not one of {', '.join(self.SORT_COLUMNS)}")
        where, args = flt.where()
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        order = "DESC" if descending else "ASC"
        column = self.SORT_COLUMNS[sort]
        # NULLs last either way (a pending job has no start; SQLite puts them first in ASC) — only
        # for columns that may be NULL: the extra term keeps SQLite from walking the primary key.
        nulls = f"{column} IS NULL, " if sort in self.NULLABLE_SORTS else ""
        # The page's ids first, then the records of those 100 only: building every matching row's
        # JSON for the sorter cost ~90 ms at 10,000 jobs (benchmarks/console.py).
        sql = (f"SELECT {_RECORD_SQL} FROM jobs WHERE id IN (SELECT id FROM jobs{clause} ORDER BY {nulls}{column} "
               f"{order}, id {order} LIMIT ? OFFSET ?) ORDER BY {nulls}{column} {order}, id {order}")
        with self._reader() as con:
            rows = con.execute(sql, [viewer, *args, limit, offset]).fetchall()
            total = con.execute(f"SELECT count(*) FROM jobs{clause}", args).fetchone()[0]
        return [json.loads(r[0]) for r in rows], total
