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

Floods (issue 24). A client that keeps sending bad credentials is slowed per address
(`Throttle`: FAILURES_BURST failures at once, then one every FAILURES_REFILL_S seconds; past
that its refusals are 429 with Retry-After). Only failures are throttled: a request with a valid
token is served whatever its address has sent before — tokens are 256 random bits, so serving a
throttled address's good token tells a guesser nothing, and a user behind the same NAT as an
attacker is not locked out; nor is anyone else, since the budget is the failing address's own
(an IPv6 client's /48, a local socket user's uid). Per AUDIT_COALESCE_S the audit trail writes
an address's first refusal of each action in full (up to AUDIT_REFUSALS_IN_FULL actions, and at most
AUDIT_REFUSALS_FULL_PER_INTERVAL of all addresses together) and the rest as one line with their count, and rotates at AUDIT_MAX_BYTES (AUDIT_KEEP_FILES old files kept), so a
flood of refusals costs the grid home a bounded amount of disk.
"""
from __future__ import annotations

import errno
import hashlib
import ipaddress
import json
import logging
import math
import os
import pwd
import secrets
import socket
import sqlite3
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

from statgrid.config import Config
from statgrid.errors import StatgridError

TOKEN_PREFIX = "sg_"
TOKEN_MAX_CHARS = 256                # a header longer than this is no token of ours
TOKEN_NAME_MAX_CHARS = 64
PEER_UID_KEY = "statgrid.peer_uid"   # ASGI scope key set for connections on the local socket
CALLER_KEY = "statgrid.caller"       # ASGI scope key of the authenticated caller
FAILURES_BURST = 50                 # failed authentications an address may send at once …
FAILURES_REFILL_S = 1.0             # … then one more a second
THROTTLE_MAX_KEYS = 10_000          # addresses remembered; past this, the one that failed longest ago is forgotten
AUDIT_COALESCE_S = 60.0             # one address's refusals past the first few: one line per this interval
AUDIT_REFUSALS_IN_FULL = 20         # an address's first refusal of each action (method, path) in full, for this many
AUDIT_REFUSALS_FULL_PER_INTERVAL = 200   # … and of all addresses together at most this many in full per interval:
                                    # many addresses (a botnet) must not rotate the accountable records away
AUDIT_REFUSAL_ACTIONS_COUNTED = 5   # actions an address's count names one by one (the rest: "other paths")
AUDIT_MAX_BYTES = 16 * 2**20        # audit.log is rotated (audit.log.1, …) when a record would pass this
AUDIT_KEEP_FILES = 4                # rotated files kept: at most (1 + 4) × 16 MiB of audit trail
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
        # One statement: it commits alone (the store's connection is in autocommit mode). Never `with con:`,
        # which would commit a transaction of the store's that happened to be open (store.transaction).
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
        self.con.execute("UPDATE tokens SET revoked_ts = ?, revoked_by = ? WHERE id = ? AND revoked_ts IS NULL",
                         (time.time(), by, token_id))
        self._live = {d: v for d, v in self._live.items() if v[0] != token_id}


def client_key(scope: dict) -> str:
    """Whom a request's failures count against: its IPv4 address, its IPv6 /48 (one site's
    network: a host there may use any of its 2**80 addresses), or on the local socket the uid the
    kernel names ("uid N")."""
    uid = scope.get(PEER_UID_KEY)
    if uid is not None:
        return f"uid {uid}"
    client = scope.get("client")
    if not client:
        return "unknown"
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return str(client[0])
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        # A /48, a site's usual assignment (RFC 6177): who holds one may use any of its 65,536 /64s,
        # so counting /64s would give one attacker that many budgets (and rotate them out of memory).
        return str(ipaddress.IPv6Network((address, 48), strict=False))
    return str(address)


class Throttle:
    """Failed authentications per client key, a token bucket: each key may fail `burst` times at
    once, then once per `refill_s`. The master's loop only (no lock)."""

    def __init__(self, burst: int = FAILURES_BURST, refill_s: float = FAILURES_REFILL_S,
                 max_keys: int = THROTTLE_MAX_KEYS, clock=time.monotonic):
        self.burst, self.refill_s, self.max_keys, self.clock = burst, refill_s, max_keys, clock
        self._buckets: dict[str, tuple[float, float]] = {}      # key → (allowance, at); oldest first

    def failure(self, key: str) -> float | None:
        """Count one failure of `key`: None while within its budget, else the seconds until it may
        fail again (the answer's Retry-After)."""
        now = self.clock()
        allowance, at = self._buckets.pop(key, (float(self.burst), now))
        allowance = min(float(self.burst), allowance + (now - at) / self.refill_s)
        retry_after_s = None
        if allowance >= 1.0:
            allowance -= 1.0
        else:
            retry_after_s = (1.0 - allowance) * self.refill_s
        self._buckets[key] = (allowance, now)                   # re-inserted: the dict stays oldest first
        if len(self._buckets) > self.max_keys:                  # the key that failed longest ago goes (O(1))
            del self._buckets[next(iter(self._buckets))]
        return retry_after_s


class Audit:
    """The audit trail: one JSON object per line, appended (O_APPEND, one write(2) per record, so
    records never interleave), never rewritten; rotated by size (audit.log → audit.log.1 → … →
    audit.log.<keep>, the oldest dropped). Mode 0600: it names jobs.

    Refusals of unauthenticated requests go through `refusal`, which coalesces an address's flood.
    A record that does not fit on a full file system is counted, not raised (the action it
    records has happened, or was refused, either way); the next record that fits says how many
    were lost."""

    def __init__(self, path: Path, max_bytes: int = AUDIT_MAX_BYTES, keep: int = AUDIT_KEEP_FILES,
                 coalesce_s: float = AUDIT_COALESCE_S, in_full: int = AUDIT_REFUSALS_IN_FULL):
        self.path, self.max_bytes, self.keep = path, max_bytes, keep
        self.coalesce_s, self.in_full = coalesce_s, in_full
        self.lost = 0
        self._refusals: dict[str, _Refusals] = {}
        self._full_since_ts, self._full_count = 0.0, 0   # refusals written in full, all keys, this interval
        self._open()

    def _open(self) -> None:
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.fchmod(self.fd, 0o600)
        self.size = os.fstat(self.fd).st_size

    def record(self, caller: Caller | None, action: str, target: str = "", outcome: str = "ok",
               detail: str | None = None, peer: str | None = None) -> None:
        rec = {"ts": round(time.time(), 6), "user": caller.user if caller else None,
               "uid": caller.uid if caller else None, "via": caller.via if caller else peer,
               "action": action, "target": target, "outcome": outcome}
        if detail:
            rec["detail"] = detail
        self._write(rec)

    def refusal(self, key: str, action: str, detail: str, peer: str) -> None:
        """An unauthenticated request refused (401, 403, 429), from client `key` (client_key) at
        `peer` (address:port): the first of each action (method and path) in the key's interval is
        written in full, for up to `in_full` actions; the rest are counted (`flush_due` writes the
        count, per action)."""
        now = time.time()
        seen = self._refusals.get(key)
        if seen is not None and now - seen.since_ts >= self.coalesce_s:
            self._flush(key, now)
            seen = None
        if seen is None:
            if len(self._refusals) >= THROTTLE_MAX_KEYS:
                self._flush(next(iter(self._refusals)), now)
            seen = self._refusals[key] = _Refusals(since_ts=now)
        if now - self._full_since_ts >= self.coalesce_s:
            self._full_since_ts, self._full_count = now, 0
        if action not in seen.written and len(seen.written) < self.in_full \
                and self._full_count < AUDIT_REFUSALS_FULL_PER_INTERVAL:
            seen.written.add(action)
            self._full_count += 1
            self.record(None, action, outcome="refused", detail=detail, peer=peer)
            return
        seen.counted += 1
        if action in seen.by_action or len(seen.by_action) < AUDIT_REFUSAL_ACTIONS_COUNTED:
            seen.by_action[action] = seen.by_action.get(action, 0) + 1
        seen.last_detail = detail

    def flush_due(self) -> None:
        """Write the count of every key whose interval has ended (the server calls this every few
        seconds; `close` writes the rest)."""
        now = time.time()
        for key in [k for k, v in self._refusals.items() if now - v.since_ts >= self.coalesce_s]:
            self._flush(key, now)

    def _flush(self, key: str, now: float) -> None:
        seen = self._refusals.pop(key)
        if seen.counted:
            actions = ", ".join(f"{a} ×{n}" for a, n in seen.by_action.items())
            others = seen.counted - sum(seen.by_action.values())
            self._write({"ts": round(now, 6), "user": None, "uid": None, "via": key, "action": "refusals",
                         "target": "", "outcome": "refused", "count": seen.counted,
                         "interval_s": round(now - seen.since_ts, 3),
                         "detail": f"{seen.counted} more refusals from {key} in the last {now - seen.since_ts:.0f} s, "
                                   f"not written one by one: {actions}{f', other paths ×{others}' if others else ''}; "
                                   f"the last: {seen.last_detail}"})

    def _write(self, rec: dict) -> None:
        line = (json.dumps(rec, ensure_ascii=True) + "\n").encode()
        try:
            if self.lost:
                note = {"ts": rec["ts"], "user": None, "uid": None, "via": None, "action": "audit records lost",
                        "target": "", "outcome": "lost", "count": self.lost,
                        "detail": f"{self.lost} audit records were not written: the file system of {self.path} was full"}
                self._append((json.dumps(note, ensure_ascii=True) + "\n").encode())
                self.lost = 0
            self._append(line)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            if not self.lost:
                logging.getLogger("statgrid.audit").error("audit records are being lost: %s (%s)", self.path,
                                                          exc.strerror)
            self.lost += 1

    def _append(self, data: bytes) -> None:
        if self.size and self.size + len(data) > self.max_bytes:
            self._rotate()
        written = os.write(self.fd, data)
        if written < len(data):
            # The file system had room for part of the line (write(2) is short, not ENOSPC): take
            # the part back, so that every line stays a whole JSON object.
            os.ftruncate(self.fd, self.size)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
        self.size += len(data)

    def _rotate(self) -> None:
        os.close(self.fd)
        for i in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{i}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{i + 1}"))
        if self.keep > 0:
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        else:
            os.unlink(self.path)
        self._open()

    def close(self) -> None:
        now = time.time()
        for key in list(self._refusals):
            self._flush(key, now)
        os.close(self.fd)


@dataclass
class _Refusals:
    """One client key's refusals in the current interval."""
    since_ts: float
    written: set[str] = field(default_factory=set)          # actions written in full
    counted: int = 0                                          # refusals not written one by one …
    by_action: dict[str, int] = field(default_factory=dict)   # … of these actions (at most AUDIT_REFUSAL_ACTIONS_COUNTED)
    last_detail: str = ""


def refused(scope: dict, throttle: Throttle, audit: Audit, action: str, detail: str) -> float | None:
    """A request whose credential failed: counted against its client (Throttle) and written to the
    audit trail (coalesced). Returns None to answer the refusal itself (401/403), else the seconds
    of the 429's Retry-After."""
    key = client_key(scope)
    client = scope.get("client")
    retry_after_s = throttle.failure(key)
    action = action if len(action) <= 200 else action[:200] + "…"          # the path is the client's
    audit.refusal(key, action, detail if retry_after_s is None else f"throttled (429): {detail}",
                  peer=f"{client[0]}:{client[1]}" if client else "socket")
    return retry_after_s


def throttled_message(scope: dict, retry_after_s: float, why: str) -> str:
    return (f"too many failed authentications from {client_key(scope)} ({FAILURES_BURST} at once, then one every "
            f"{FAILURES_REFILL_S:g} s): try again in {retry_after_header(retry_after_s)} s. This one failed too: "
            f"{why} (a valid token is served at any time).")


def retry_after_header(retry_after_s: float) -> str:
    """Retry-After in whole seconds (RFC 9110 §10.2.3), rounded up, at least 1."""
    return str(max(1, math.ceil(retry_after_s)))


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
