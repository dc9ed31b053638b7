"""The job store: SQLite in WAL mode in the grid home; it survives a master restart.

Each change is one transaction. State changes are compare-and-set on (state, attempt), so a
late event of an old attempt (a job requeued after its host was lost) can never overwrite the
new one: that is how "none run twice, none lost" holds through restarts. Every change also
appends to `job_events`, the job's history (submit, dispatch, start, finish, requeue, kill).
"""
from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterable

from statgrid.grid.model import JSON_FIELDS, Job, JobState, from_row, to_row

_SQL_TYPES = {"int": "INTEGER", "float": "REAL", "bool": "INTEGER"}


def _schema() -> str:
    cols = []
    for f in dataclasses.fields(Job):
        if f.name == "id":
            cols.append("id INTEGER PRIMARY KEY AUTOINCREMENT")
        elif f.name in JSON_FIELDS:
            cols.append(f"{f.name} TEXT")
        else:
            base = str(f.type).split("|")[0].strip()          # annotations are strings here
            cols.append(f"{f.name} {_SQL_TYPES.get(base, 'TEXT')}")
    return (f"CREATE TABLE IF NOT EXISTS jobs ({', '.join(cols)});\n"
            "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);\n"
            "CREATE TABLE IF NOT EXISTS job_events (job_id INTEGER, attempt INTEGER, ts REAL, event TEXT, "
            "host TEXT, detail TEXT);\n"
            "CREATE INDEX IF NOT EXISTS job_events_job ON job_events(job_id);")


class JobStore:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.con.row_factory = sqlite3.Row
        self.con.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a committed change survives a process crash (the master's kill -9);
        # only an OS crash may lose the last transactions.
        self.con.execute("PRAGMA synchronous=NORMAL")
        self.con.execute("PRAGMA busy_timeout=5000")
        self.con.executescript(_schema())

    def close(self) -> None:
        self.con.close()

    # -- writes ------------------------------------------------------------------------------------
    def add(self, job: Job) -> Job:
        row = to_row(job)
        row.pop("id")
        with self.con:
            cur = self.con.execute(f"INSERT INTO jobs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                   list(row.values()))
            job = dataclasses.replace(job, id=cur.lastrowid)
            self._event(job, "submit", None)
        return job

    def update(self, job: Job, expect_state: JobState, expect_attempt: int, event: str,
               detail: dict | None = None) -> bool:
        """Write `job` if its stored state and attempt are still the expected ones."""
        row = to_row(job)
        job_id = row.pop("id")
        sets = ", ".join(f"{k} = ?" for k in row)
        with self.con:
            cur = self.con.execute(f"UPDATE jobs SET {sets} WHERE id = ? AND state = ? AND attempt = ?",
                                   [*row.values(), job_id, expect_state.value, expect_attempt])
            if cur.rowcount != 1:
                return False
            self._event(job, event, detail)
        return True

    def _event(self, job: Job, event: str, detail: dict | None) -> None:
        self.con.execute("INSERT INTO job_events VALUES (?, ?, ?, ?, ?, ?)",
                         (job.id, job.attempt, time.time(), event, job.host,
                          None if detail is None else json.dumps(detail)))

    # -- reads -------------------------------------------------------------------------------------
    def get(self, job_id: int) -> Job | None:
        row = self.con.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else from_row(dict(row))

    def select(self, states: Iterable[JobState] | None = None, user: str | None = None,
               ids: Iterable[int] | None = None, limit: int | None = None) -> list[Job]:
        where, args = [], []
        if states is not None:
            states = list(states)
            where.append(f"state IN ({', '.join('?' * len(states))})")
            args += [s.value for s in states]
        if user is not None:
            where.append("user = ?")
            args.append(user)
        if ids is not None:
            ids = list(ids)
            where.append(f"id IN ({', '.join('?' * len(ids))})")
            args += ids
        sql = "SELECT * FROM jobs" + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [from_row(dict(r)) for r in self.con.execute(sql, args)]

    def active(self) -> list[Job]:
        return self.select([JobState.PEND, JobState.RUN])

    def events(self, job_id: int | None = None) -> list[dict[str, Any]]:
        sql, args = "SELECT * FROM job_events", []
        if job_id is not None:
            sql, args = sql + " WHERE job_id = ?", [job_id]
        return [dict(r) for r in self.con.execute(sql + " ORDER BY rowid", args)]

