"""A job's directory and its attempt records: the one place that knows their file names and reads
the job's STIMER log.

    <home>/jobs/<id>/               the job's (its user's, mode 0700 once the launcher gave it to them)
        output.txt                  the job's standard output and error
        session.log, session.lst    a session job's SAS-style log and listing (session/log.py)
        session.stimer.jsonl        its STIMER records, one JSON object a line (session/stimer.py)
        attempt-<n>.json            an attempt's record, as releases before protocol version 3 kept it
        kernel.json                 a notebook kernel's connection (ports, HMAC and CurveZMQ keys; 0600):
                                    the master hands it to the job's owner alone (GET /jobs/<id>/kernel)
        kernel.activity             touched by the kernel at each cell's end: its mtime is the idle clock
    <home>/grid/attempts/           the grid's alone (0700): no job's user may write here
        <id>.<attempt>.json         an attempt's record (protocol.AttemptStarted/Finished/Lost)
        <id>.<attempt>.usage.jsonl  its CPU, memory and I/O sampled while it ran (grid/execution/usage.py)

Nomad's client/allocdir names a task directory's layout once and hands it to every driver; this is
that for statgrid. The job's directory belongs to the job's user, so every file read from it is
read with read_untrusted: a regular file, not through a link, owned by the account expected (a
user could otherwise have a link show another's file, or a FIFO hang the reader).
"""
from __future__ import annotations

import json
import os
import pwd
from pathlib import Path
from typing import Any

from statgrid.host.files import NotTrusted, read_untrusted

OUTPUT = "output.txt"
SESSION_STEM = "session"                 # session.log, session.lst, session.stimer.jsonl (session/log.py's stem)
STIMER_LOG = f"{SESSION_STEM}.stimer.jsonl"
SESSION_LOG = f"{SESSION_STEM}.log"
STIMER_TAIL_BYTES = 1 << 20              # of a STIMER log, the end read (its last steps and its total)
KERNEL_CONNECTION = "kernel.json"
KERNEL_ACTIVITY = "kernel.activity"
KERNEL_CONNECTION_MAX_BYTES = 64 * 1024


def jobs_root(home: Path) -> Path:
    """<home>/jobs: every job's directory."""
    return Path(home) / "jobs"


def attempts_root(home: Path) -> Path:
    """<home>/grid/attempts: the attempt records, written by the nodes as the grid's account."""
    return Path(home) / "grid" / "attempts"


def attempt_path(attempts_dir: str | Path, job_id: int, attempt: int) -> Path:
    """Where an attempt's record is kept, in the grid's own directory of them."""
    return Path(attempts_dir) / f"{job_id}.{attempt}.json"


def usage_path(attempts_dir: str | Path, job_id: int, attempt: int) -> Path:
    """Where an attempt's usage series is kept: beside its record, in the grid's own directory, so
    that no job's user can forge or plant one."""
    return Path(attempts_dir) / f"{job_id}.{attempt}.usage.jsonl"


def owner_uid_of(user: str | None) -> int | None:
    """The uid a job's files must belong to: its user's on this machine; None if unknown here."""
    try:
        return None if not user else pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


class JobDir:
    """One job's directory: its files' paths, and its STIMER log read as its user's file."""

    __slots__ = ("path",)

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @classmethod
    def of(cls, home: Path, job_id: int) -> "JobDir":
        return cls(jobs_root(home) / str(job_id))

    def __fspath__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"JobDir({str(self.path)!r})"

    @property
    def output(self) -> Path:
        return self.path / OUTPUT

    @property
    def session_log(self) -> Path:
        return self.path / SESSION_LOG

    @property
    def stimer_log(self) -> Path:
        return self.path / STIMER_LOG

    @property
    def kernel_connection(self) -> Path:
        return self.path / KERNEL_CONNECTION

    @property
    def kernel_activity(self) -> Path:
        return self.path / KERNEL_ACTIVITY

    def read_kernel_connection(self, owner_uid: int | None, attempt: int | None = None) -> dict[str, Any] | None:
        """A kernel's connection once it has bound its ports (every port set) — of the job's attempt `attempt`
        when given (a file left by an earlier attempt is not the running kernel's); None before, or when the
        file is not a regular file of owner_uid's (None: nobody's is trusted) or not a JSON object."""
        if owner_uid is None:
            return None
        try:
            info = json.loads(read_untrusted(self.kernel_connection, KERNEL_CONNECTION_MAX_BYTES, owner_uid=owner_uid))
        except (NotTrusted, OSError, ValueError, RecursionError):
            return None
        ports = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
        if not isinstance(info, dict) or not all(isinstance(info.get(p), int) and info[p] > 0 for p in ports):
            return None
        if attempt is not None and info.get("statgrid_attempt") != attempt:
            return None
        return info

    def kernel_idle_s(self, now: float) -> float | None:
        """Seconds since the kernel's last cell ended (or it started); None for no kernel."""
        try:
            return max(0.0, now - os.stat(self.kernel_activity, follow_symlinks=False).st_mtime)
        except OSError:
            return None

    def legacy_attempt(self, attempt: int) -> Path:
        """Where releases before protocol version 3 kept an attempt's record."""
        return self.path / f"attempt-{attempt}.json"

    # -- STIMER ---------------------------------------------------------------------------------------
    def stimer_records(self, owner_uid: int | None, max_bytes: int = STIMER_TAIL_BYTES) -> list[dict[str, Any]]:
        """The JSON objects of the STIMER log's last max_bytes, oldest first; [] if there is none, it
        is not a regular file owned by owner_uid (None: nobody's is trusted), or it cannot be read.
        Lines that are not JSON objects (a torn first line of the tail, a user's edit) are skipped."""
        if owner_uid is None:
            return []
        try:
            text = read_untrusted(self.stimer_log, max_bytes, owner_uid=owner_uid, tail=True).decode(errors="replace")
        except (NotTrusted, OSError):              # FileNotFoundError included
            return []
        records = []
        for line in text.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                records.append(rec)
        return records

    def stimer_total(self, owner_uid: int | None) -> dict[str, Any] | None:
        """The session's last "total" record, or None (not a session, or it wrote none)."""
        for rec in reversed(self.stimer_records(owner_uid)):
            if rec.get("record") == "total":
                return rec
        return None

    def stimer_steps(self, owner_uid: int | None, kinds: tuple[str, ...] = ("step", "subtask"),
                     max_bytes: int = STIMER_TAIL_BYTES) -> list[dict[str, Any]]:
        """The step records (a record without "record" is a step), and its sub-tasks' records
        (Session.parallel) unless `kinds` leaves them out; never the "total"."""
        return [r for r in self.stimer_records(owner_uid, max_bytes) if r.get("record", "step") in kinds]
