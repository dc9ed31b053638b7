"""Who is asking, and what they may do (issue 15; LSF's model).

Identity. On the master's machine the CLI talks to the master over a Unix domain socket,
`<home>/grid/master.sock`, and the master asks the kernel who is at the other end (SO_PEERCRED,
unix(7)): no secret, and a local user cannot claim another's name. From other machines a client
sends a per-user token (`Authorization: Bearer sg_…`) over HTTPS; a user makes one through the
local socket (`statgrid token create`), never with another token, and the store keeps only its
SHA-256 (a stolen jobs.db holds no usable token). Nothing but GET /health is anonymous.

Rights. Everyone may submit (as themselves only), list all jobs' metadata, see hosts and
queues. A job's output, log, environment and STIMER records are its owner's; only the owner may
kill it. Grid administrators — root, the users of `[grid] admins`, and on a personal grid the
account it runs as — may act on any job and stop the grid. A grid that does not run as root (the
embedded demo, a personal grid) cannot run a job as anyone but itself, so it serves only its own
account and tells anyone else so.

Every refusal says who may do the thing; every submit, kill, token change, grid stop and refusal
is appended to the audit trail (`<home>/grid/audit.log`, one JSON object per line, 0600).
"""
from __future__ import annotations

import hashlib
import json
import os
import pwd
import secrets
import socket
import sqlite3
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from statgrid.config import Config
from statgrid.errors import StatgridError

TOKEN_PREFIX = "sg_"
TOKEN_MAX_CHARS = 256                # a header longer than this is no token of ours
TOKEN_NAME_MAX_CHARS = 64
PEER_UID_KEY = "statgrid.peer_uid"   # ASGI scope key set for connections on the local socket
CALLER_KEY = "statgrid.caller"       # ASGI scope key of the authenticated caller
HOW_TO_GET_A_TOKEN = ("get a token on the master's machine with `statgrid token create` (it writes "
                      "~/.config/statgrid/client.toml, 0600), or ask a grid administrator")


class NotAuthenticated(StatgridError):
    """401: no, a bad or a revoked credential."""


class Forbidden(StatgridError):
    """403: known caller, not allowed."""


@dataclass(frozen=True)
class Caller:
    user: str
    uid: int
    admin: bool
    via: str                          # "socket" (kernel-checked uid) or "token"
    token_id: int | None = None

    def to_dict(self) -> dict:
        return {"user": self.user, "uid": self.uid, "admin": self.admin, "via": self.via, "token_id": self.token_id}


def peer_uid(sock) -> int:
    """The uid of the process at the other end of a connected AF_UNIX socket (SO_PEERCRED: the
    credentials it had when it connected, kept by the kernel)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


_TOKEN_COLUMNS = ("id", "user", "name", "created_ts", "revoked_ts", "revoked_by")   # what a listing shows (no digest)


class Tokens:
    """Per-user API tokens in the job store's database (table `tokens`); the master's loop only.
    A token is `sg_` + 43 URL-safe characters (256 random bits); the table keeps its digest."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con
        con.executescript("CREATE TABLE IF NOT EXISTS tokens (id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT, "
                          "digest TEXT UNIQUE, name TEXT, created_ts REAL, revoked_ts REAL, revoked_by TEXT);")
        self._live = {row[0]: (row[1], row[2]) for row in
                      con.execute("SELECT digest, id, user FROM tokens WHERE revoked_ts IS NULL")}

    def create(self, user: str, name: str) -> tuple[int, str]:
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self.con:
            cur = self.con.execute("INSERT INTO tokens (user, digest, name, created_ts) VALUES (?, ?, ?, ?)",
                                   (user, digest(token), name, time.time()))
        self._live[digest(token)] = (cur.lastrowid, user)
        return cur.lastrowid, token

    def lookup(self, token: str) -> tuple[int, str] | None:
        """(token id, user) of a live token, else None."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > TOKEN_MAX_CHARS:
            return None
        return self._live.get(digest(token))

    def is_live(self, token_id: int) -> bool:
        return any(v[0] == token_id for v in self._live.values())

    def get(self, token_id: int) -> dict | None:
        row = self.con.execute(f"SELECT {', '.join(_TOKEN_COLUMNS)} FROM tokens WHERE id = ?", (token_id,)).fetchone()
        return None if row is None else dict(zip(_TOKEN_COLUMNS, row))

    def list(self, user: str | None) -> list[dict]:
        sql = f"SELECT {', '.join(_TOKEN_COLUMNS)} FROM tokens"
        rows = self.con.execute(sql + (" WHERE user = ? ORDER BY id" if user else " ORDER BY id"),
                                (user,) if user else ()).fetchall()
        return [dict(zip(_TOKEN_COLUMNS, r)) for r in rows]

    def revoke(self, token_id: int, by: str) -> None:
        with self.con:
            self.con.execute("UPDATE tokens SET revoked_ts = ?, revoked_by = ? WHERE id = ? AND revoked_ts IS NULL",
                             (time.time(), by, token_id))
        self._live = {d: v for d, v in self._live.items() if v[0] != token_id}


class Audit:
    """The audit trail: one JSON object per line, appended (O_APPEND, one write(2) per record, so
    records of concurrent writers never interleave), never rewritten. Mode 0600: it names jobs."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.fchmod(self.fd, 0o600)

    def record(self, caller: Caller | None, action: str, target: str = "", outcome: str = "ok",
               detail: str | None = None, peer: str | None = None) -> None:
        rec = {"ts": round(time.time(), 6), "user": caller.user if caller else None,
               "uid": caller.uid if caller else None, "via": caller.via if caller else peer,
               "action": action, "target": target, "outcome": outcome}
        if detail:
            rec["detail"] = detail
        os.write(self.fd, (json.dumps(rec, ensure_ascii=True) + "\n").encode())

    def close(self) -> None:
        os.close(self.fd)


class Rights:
    """Who is who on this grid, resolved once from grid.toml and the account the master runs as."""

    def __init__(self, cfg: Config, grid_uid: int | None = None):
        self.grid_uid = os.geteuid() if grid_uid is None else grid_uid
        self.grid_user = _user_name(self.grid_uid) or str(self.grid_uid)
        self.personal = self.grid_uid != 0
        self.admins = tuple(cfg.admins)

    def caller(self, uid: int, via: str, user: str | None = None, token_id: int | None = None) -> Caller:
        """The Caller of a uid (socket) or of a token's user; Forbidden on a personal grid for anyone
        but its own account."""
        if user is None:
            user = _user_name(uid)
            if user is None:
                raise Forbidden(f"uid {uid} has no user name on the master's machine; jobs run as named users: "
                                "ask your administrator to add the account (the same on every host).")
        if self.personal and uid != self.grid_uid:
            raise Forbidden(f"this grid runs as {self.grid_user!r}, not as root (a personal grid): it cannot run jobs "
                            f"as anyone else, so it accepts requests only from {self.grid_user!r}, not from "
                            f"{user!r}. A grid for many users runs as root (README: 'A grid for many users').")
        admin = uid == 0 or user in self.admins or (self.personal and uid == self.grid_uid)
        return Caller(user=user, uid=uid, admin=admin, via=via, token_id=token_id)

    def who_administers(self) -> str:
        if self.personal:
            return f"{self.grid_user!r} (this personal grid's account)"
        return "a grid administrator (root" + (f", or {', '.join(self.admins)} of [grid] admins" if self.admins
                                                else "; others are named in grid.toml [grid] admins") + ")"

    def require_owner(self, caller: Caller, owner: str, verb: str, what: str) -> None:
        """Owner or administrator, else Forbidden: "only <owner> or <admins> may <verb> <what>"."""
        if caller.user != owner and not caller.admin:
            raise Forbidden(f"{what} belongs to {owner!r}; only {owner!r} or {self.who_administers()} may {verb} it "
                            f"(you are {caller.user!r}).")

    def require_admin(self, caller: Caller, verb: str) -> None:
        if not caller.admin:
            raise Forbidden(f"only {self.who_administers()} may {verb} (you are {caller.user!r}).")

    def sees_detail(self, caller: Caller, owner: str) -> bool:
        return caller.admin or caller.user == owner


def _user_name(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None


def uid_of(user: str) -> int | None:
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


def bearer(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None
