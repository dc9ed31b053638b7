"""A small Python client of the master's HTTP API (standard library only).

    from statgrid.config import load_config
    from statgrid.grid.interface.client import GridClient

    grid = GridClient(load_config())
    job = grid.submit(["report.py"], queue="normal")
    print(grid.wait([job["id"]])[0]["state"])
"""
from __future__ import annotations

import http.client
import json
import math
import os
import ssl
import stat
import time
import tomllib
import urllib.parse
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from statgrid.config import Config
from statgrid.errors import StatgridError, UsageError
from statgrid.grid.interface import localsock
from statgrid.job.lifecycle import FINISHED_NAMES
from statgrid.job.record import PAGE_MAX_JOBS

KEEP_ALIVE_S = 4.0
# A submit whose connection broke after it was sent may or may not have been stored: the client
# sends it again with the same Idempotency-Key (the master answers what the first one made, or
# makes it now) until the master answers or this long has passed (a master restarting).
SUBMIT_RETRY_S = 60.0
SUBMIT_RETRY_EVERY_S = 0.5
# The client's own secrets: never sent with a job's environment (into the store and the job).
PRIVATE_ENV = frozenset({"STATGRID_TOKEN"})            # reuse a connection idle less than this (uvicorn closes idle ones after 5 s)


class _Lost(Exception):
    """The connection broke after the request was sent: the master may have acted on it."""

    def __init__(self, error: StatgridError):
        self.error = error


class NotAuthenticated(StatgridError):
    """401 from the master: no token, or a bad or revoked one."""


class Forbidden(StatgridError):
    """403 from the master: not yours, or not an administrator."""


@dataclass(frozen=True)
class Remote:
    """How to reach a master from another machine: its HTTPS address, a token, the grid's CA."""

    url: str
    token: str | None = None
    ca: str | None = None
    source: str = "--master"


def client_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path(env.get("HOME", "~")).expanduser() / ".config"
    return base / "statgrid" / "client.toml"


def read_client_config(path: Path) -> Remote | None:
    """~/.config/statgrid/client.toml (written by `statgrid token create`): url, token, ca. It holds
    a secret: refused, as ssh refuses a private key, when others may read it."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise StatgridError(f"{path} holds your grid token but others may read it (mode {stat.S_IMODE(st.st_mode):04o}); "
                            f"make it yours alone: chmod 600 {path}")
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise StatgridError(f"{path} cannot be read as TOML ({exc}); remove it and run `statgrid token create` "
                            "again on the master's machine.") from None
    if not isinstance(raw.get("url"), str):
        return None
    return Remote(url=raw["url"], token=raw.get("token"), ca=raw.get("ca"), source=str(path))


def default_client(cfg: Config, master_url: str | None = None) -> "GridClient":
    """The master as the CLI finds it: master_url (--master) or $STATGRID_MASTER; else this machine's local
    socket; else, when that does not exist, the url of the client config (a client machine)."""
    if master_url:
        return GridClient(cfg, remote=Remote(url=master_url))
    grid = GridClient(cfg)
    if grid.remote is None and not grid.socket_path.exists():
        remote = read_client_config(client_config_path())
        if remote is not None:
            return GridClient(cfg, remote=remote)
    return grid


class GridClient:
    """The master's API over the local socket (`<home>/grid/master.sock`: the master learns who you
    are from the kernel) or, with `remote` (or $STATGRID_MASTER, or the client config's url when no
    local socket answers), over HTTP(S) with a token."""

    def __init__(self, cfg: Config, timeout_s: float = 60.0, remote: Remote | None = None,
                 submit_retry_s: float = SUBMIT_RETRY_S):
        self.cfg = cfg
        self.timeout_s = timeout_s
        self.submit_retry_s = submit_retry_s
        self.socket_path = localsock.socket_path(cfg.home)
        if remote is None and os.environ.get("STATGRID_MASTER"):
            remote = Remote(url=os.environ["STATGRID_MASTER"], source="$STATGRID_MASTER")
        self.remote = remote
        self._conn: http.client.HTTPConnection | None = None
        self._conn_used = 0.0
        if remote is None:
            self.base = f"unix:{self.socket_path}"
        else:
            self.base = remote.url.rstrip("/")

    # -- transport ------------------------------------------------------------------------------------
    def _resolve_remote(self) -> Remote:
        """The remote's token and CA: given, else $STATGRID_TOKEN / the client config."""
        remote = self.remote
        assert remote is not None
        token, ca = remote.token, remote.ca
        if token is None:
            token = os.environ.get("STATGRID_TOKEN")
        if token is None or ca is None:
            conf = read_client_config(client_config_path())
            if conf is not None:
                token = token or conf.token
                ca = ca or conf.ca
        return Remote(url=remote.url, token=token, ca=ca, source=remote.source)

    def _connect(self) -> http.client.HTTPConnection:
        if self.remote is None:
            return _UnixConnection(self.socket_path, self.timeout_s)
        parts = urllib.parse.urlsplit(self.remote.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"master address {self.remote.url!r} ({self.remote.source}) is not an http(s) URL; give "
                             "one like https://grid1:8642.")
        if parts.scheme == "http":
            return http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=self.timeout_s)
        resolved = self._resolve_remote()
        context = ssl.create_default_context(cafile=resolved.ca) if resolved.ca else ssl.create_default_context()
        return http.client.HTTPSConnection(parts.hostname, parts.port or 443, timeout=self.timeout_s,
                                           context=context)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.remote is not None:
            token = self._resolve_remote().token
            parts = urllib.parse.urlsplit(self.remote.url)
            if token and parts.scheme == "http" and not _is_loopback_host(parts.hostname or ""):
                raise UsageError(f"master address {self.remote.url!r} ({self.remote.source}) is plain http to another "
                                 "machine: your token would cross the network in clear; use https://.")
            if token:
                headers["Authorization"] = f"Bearer {token}"
        return headers

    def _call(self, method: str, path: str, body: Any = None, params: dict | None = None,
              timeout_s: float | None = None, raw: bool = False, key: str | None = None) -> Any:
        """One request. With an idempotency `key` (submits), a connection that breaks after the
        request was sent is retried with the same key for up to SUBMIT_RETRY_S: the master answers
        what the first request made, or makes it if it never got there."""
        url = path
        if params:
            url += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        data = None if body is None else json.dumps(body).encode()
        headers = self._headers()
        if key is not None:
            headers["Idempotency-Key"] = key
        deadline = None
        while True:
            try:
                resp, payload = self._exchange(method, path, url, data, headers, timeout_s)
                break
            except _Lost as lost:
                if key is None:
                    raise lost.error from None
                deadline = deadline or time.monotonic() + self.submit_retry_s
                if time.monotonic() >= deadline:
                    raise self._unknown(method, path, key, lost.error) from None
            except StatgridError as exc:          # not reached: refused, no socket (a master restarting)
                if deadline is None:
                    raise
                if time.monotonic() >= deadline:
                    raise self._unknown(method, path, key, exc) from None
            time.sleep(SUBMIT_RETRY_EVERY_S)
        if raw and resp.status < 400:
            return payload.decode()
        if resp.status >= 400:
            try:
                err = json.loads(payload)
                message, usage = err.get("error") or str(err.get("detail")), err.get("usage", False)
            except ValueError:
                message, usage = f"HTTP {resp.status} from the master", False
            cls = {401: NotAuthenticated, 403: Forbidden}.get(resp.status, UsageError if usage else StatgridError)
            raise cls(message)
        return json.loads(payload)

    def _unknown(self, method: str, path: str, key: str, exc: StatgridError) -> StatgridError:
        return StatgridError(f"the connection to the master broke during {method} {path} and it did not answer again "
                             f"within {self.submit_retry_s:.0f} s ({exc}). Whether it stored the submit is unknown: "
                             f"once the master is back, send it again with the same key ({key}) from the same "
                             f"directory and environment, e.g. `statgrid submit --idempotency-key {key} …` or "
                             f"`statgrid flow submit --idempotency-key {key} FILE`: it answers what was stored, or "
                             "submits it, never twice.")

    def _exchange(self, method: str, path: str, url: str, data: bytes | None, headers: dict,
                  timeout_s: float | None) -> tuple[http.client.HTTPResponse, bytes]:
        """Send one request, on the kept-alive connection or a new one: (response, its body).
        Raises _Lost when the connection broke after sending, StatgridError when none was made."""
        for reuse in (True, False):
            conn = self._conn if reuse and self._conn is not None and \
                time.monotonic() - self._conn_used < KEEP_ALIVE_S else None
            fresh = conn is None
            sent = False                              # the request went out: the master may have acted on it
            try:
                if fresh:
                    self.close()
                    conn = self._conn = self._connect()
                conn.timeout = timeout_s or self.timeout_s
                if conn.sock is not None:
                    conn.sock.settimeout(conn.timeout)
                conn.request(method, url, body=data, headers=headers)
                sent = True
                resp = conn.getresponse()
                payload = resp.read()
                self._conn_used = time.monotonic()
                if resp.will_close:
                    self.close()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self.close()
                if not fresh:
                    continue                          # the master closed an idle connection: once more, anew
                raise _Lost(self._unreachable(method, path, exc)) from None
            except http.client.HTTPException as exc:  # the answer cut short (IncompleteRead): the master died
                self.close()
                raise _Lost(self._unreachable(method, path, exc)) from None
            except TimeoutError:
                self.close()
                error = StatgridError(f"the master at {self.base} did not answer {method} {path} within "
                                      f"{timeout_s or self.timeout_s:.0f} s; check {self.cfg.home}/grid/master.log.")
                if sent:                              # it may have stored it: a keyed submit asks again
                    raise _Lost(error) from None
                raise error from None
            except ssl.SSLError as exc:
                self.close()
                if sent:
                    raise _Lost(self._unreachable(method, path, exc)) from None
                raise StatgridError(f"the TLS handshake with {self.base} failed ({exc.reason or exc}); the client needs "
                                    "the grid's CA certificate (`ca` in "
                                    f"{client_config_path()}, written by `statgrid token create`).") from None
            except OSError as exc:
                self.close()
                if sent:
                    raise _Lost(self._unreachable(method, path, exc)) from None
                raise self._unreachable(method, path, exc) from None
        return resp, payload

    def _unreachable(self, method: str, path: str, exc: BaseException) -> StatgridError:
        reason = getattr(exc, "strerror", None) or exc
        if self.remote is None:
            return StatgridError(f"no master answers on {self.socket_path} (grid home {self.cfg.home}): {reason}; "
                                 "start one with `statgrid grid up --detach`, or reach a master on another machine "
                                 "with --master https://HOST:PORT.")
        return StatgridError(f"no master answers at {self.base} ({method} {path}): {reason}; check the address "
                             f"({self.remote.source}) and that the master runs.")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- verbs ----------------------------------------------------------------------------------------
    def health(self) -> dict:
        return self._call("GET", "/health", timeout_s=5)

    def submit(self, argv: list[str], queue: str = "", name: str = "", options: dict[str, str] | None = None,
               rerunnable: bool = False, hosts: list[str] | None = None, cwd: str | None = None,
               env: dict[str, str] | None = None, depend: str = "", runlimit_s: float = 0.0, mem_bytes: int = 0,
               priority: int = 0, parent_id: int | None = None, key: str | None = None, memsize_bytes: int = 0,
               memsize_default_too: bool = False) -> dict:
        """Submit a job file (.py/.sql) or a command; returns the job record (its "id" first). It
        runs as you: the master knows who you are (the socket's peer, or your token). `key`: its
        idempotency key (default: a new UUID): the same request sent again with it answers the
        same job, so a submit whose answer was lost is retried safely. memsize_bytes,
        memsize_default_too: what the job file declares of memsize (jobspec.with_declared_memsize),
        from which the master computes the reservation when mem_bytes is 0."""
        env = {k: v for k, v in (os.environ if env is None else env).items() if k not in PRIVATE_ENV}
        body = {"argv": list(argv), "cwd": cwd or os.getcwd(),
                "queue": queue, "name": name, "options": options or {}, "rerunnable": rerunnable,
                "hosts": list(hosts or []), "env": env, "depend": depend, "runlimit_s": runlimit_s,
                "mem_bytes": mem_bytes, "priority": priority, "parent_id": parent_id,
                "memsize_bytes": memsize_bytes, "memsize_default_too": memsize_default_too}
        return self._call("POST", "/jobs", body, key=key or str(uuid.uuid4()))

    def jobs(self, user: str | None = None, all_states: bool = False, states: Iterable[str] | None = None,
             queue: str | None = None, host: str | None = None, limit: int | None = None,
             mine: bool = False, parent: int | None = None) -> list[dict]:
        """Job records in id order (default: not finished; None filters match anyone; mine: only
        the caller's), all of them or the first `limit`, fetched page by page (the master answers
        at most 1000 a call)."""
        params = {"user": user, "all": "true" if all_states else None, "state": ",".join(states) if states else None,
                  "queue": queue, "host": host, "mine": "true" if mine else None, "parent": parent}
        out: list[dict] = []
        after_id = 0
        while limit is None or len(out) < limit:
            page_jobs = PAGE_MAX_JOBS if limit is None else min(PAGE_MAX_JOBS, limit - len(out))
            page = self._call("GET", "/jobs", params={**params, "limit": page_jobs, "after_id": after_id})
            out += page["jobs"]
            after_id = page["next_after_id"]
            if after_id is None:
                break
        return out

    def job(self, job_id: int) -> dict:
        return self._call("GET", f"/jobs/{int(job_id)}")

    def kill(self, ids: Iterable[int]) -> list[dict]:
        return self._call("POST", "/kill", {"ids": [int(i) for i in ids]})

    def wait(self, ids: Iterable[int], timeout_s: float | None = None) -> list[dict]:
        """Block until every job has finished (or timeout_s passed); returns their records."""
        if timeout_s is not None and not (math.isfinite(timeout_s) and timeout_s >= 0):
            raise UsageError(f"wait timeout {timeout_s!r} is not a number of seconds ≥ 0; give one, e.g. 600.")
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        out = []
        for job_id in ids:
            while True:
                left = 30.0 if deadline is None else max(0.0, min(30.0, deadline - time.monotonic()))
                job = self._call("GET", f"/jobs/{int(job_id)}/wait", params={"timeout_s": left},
                                 timeout_s=left + 30)
                if job["state"] in FINISHED_NAMES or (deadline and time.monotonic() >= deadline):
                    break
            out.append(job)
        return out

    def submit_kernel(self, language: str, queue: str = "", name: str = "", options: dict[str, str] | None = None,
                      cwd: str | None = None, env: dict[str, str] | None = None, key: str | None = None) -> dict:
        """Start a notebook kernel (statgrid/kernels/) as an interactive job; returns its job record."""
        env = {k: v for k, v in (env or {}).items() if k not in PRIVATE_ENV}
        body = {"argv": [], "kernel": language, "cwd": cwd or os.getcwd(), "queue": queue, "name": name,
                "options": options or {}, "env": env}
        return self._call("POST", "/jobs", body, key=key or str(uuid.uuid4()))

    def kernel(self, job_id: int, timeout_s: float = 0.0, min_generation: int = 1) -> dict:
        """The kernel's connection once it listens (owner only) — of its start `min_generation` or later (a
        restart in its job makes the next); {"connection": None, "job", "pend_reason"} while it is pending or
        starting after timeout_s, or once it ended."""
        return self._call("GET", f"/jobs/{int(job_id)}/kernel",
                          params={"timeout_s": timeout_s, "min_generation": int(min_generation)},
                          timeout_s=timeout_s + 30)

    def signal(self, job_id: int, name: str = "SIGINT") -> dict:
        return self._call("POST", f"/jobs/{int(job_id)}/signal", {"signal": name})

    def peek(self, job_id: int, nbytes: int = 4096) -> dict:
        return self._call("GET", f"/jobs/{int(job_id)}/peek", params={"nbytes": nbytes})

    def hosts(self) -> list[dict]:
        return self._call("GET", "/hosts")

    def close_host(self, host: str, reason: str = "") -> dict:
        return self._call("POST", f"/hosts/{urllib.parse.quote(host, safe='')}/close", {"reason": reason})

    def open_host(self, host: str) -> dict:
        return self._call("POST", f"/hosts/{urllib.parse.quote(host, safe='')}/open")

    def suspend(self, job_id: int) -> dict:
        return self._call("POST", f"/jobs/{int(job_id)}/suspend")

    def resume(self, job_id: int) -> dict:
        return self._call("POST", f"/jobs/{int(job_id)}/resume")

    def modify(self, job_id: int, **changes) -> dict:
        """queue=, name=, priority=, runlimit_s=, mem_bytes= of a pending job."""
        return self._call("POST", f"/jobs/{int(job_id)}/modify", {k: v for k, v in changes.items() if v is not None})

    def move(self, job_id: int, to: str) -> dict:
        """to: "top" or "bottom" of its queue."""
        return self._call("POST", f"/jobs/{int(job_id)}/{to}")

    def submit_flow(self, spec, cwd: str | None = None, env: dict[str, str] | None = None,
                    key: str | None = None) -> dict:
        """A flowfile.FlowSpec, submitted as one; its jobs run in `cwd` (default: here) with `env`.
        `key`: as submit()'s."""
        return self._call("POST", "/flows", self._flow_body(spec, cwd, env), key=key or str(uuid.uuid4()))

    def schedule_add(self, cron: str, tz: str, argv: list[str] | None = None, flow=None, cwd: str | None = None,
                     env: dict[str, str] | None = None, **submit) -> dict:
        """A calendar that submits `argv` (with submit()'s options) or the flowfile.FlowSpec `flow`."""
        env_ = {k: v for k, v in (os.environ if env is None else env).items() if k not in PRIVATE_ENV}
        body: dict = {"cron": cron, "tz": tz}
        if flow is not None:
            body["flow"] = self._flow_body(flow, cwd, env)
        else:
            body["request"] = {"argv": list(argv or []), "cwd": cwd or os.getcwd(), "env": env_, **submit}
        return self._call("POST", "/schedules", body)

    def schedules(self, all_users: bool = False) -> list[dict]:
        return self._call("GET", "/schedules", params={"all": "true" if all_users else None})

    def schedule_remove(self, sched_id: int) -> dict:
        return self._call("DELETE", f"/schedules/{int(sched_id)}")

    def _flow_body(self, spec, cwd: str | None, env: dict[str, str] | None) -> dict:
        env = {k: v for k, v in (os.environ if env is None else env).items() if k not in PRIVATE_ENV}
        jobs = [{"name": j.name, "after": "" if j.after is None else str(j.after),
                 "request": {"argv": list(j.argv), "cwd": cwd or os.getcwd(), "queue": j.queue, "name": j.name,
                             "options": dict(j.options), "rerunnable": j.rerunnable, "hosts": list(j.hosts),
                             "env": env, "runlimit_s": j.runlimit_s or 0.0, "mem_bytes": j.mem_bytes or 0,
                             "memsize_bytes": j.memsize_bytes, "memsize_default_too": j.memsize_default_too}}
                for j in spec.jobs]
        return {"name": spec.name, "jobs": jobs}

    def flows(self, user: str | None = None, mine: bool = False) -> list[dict]:
        return self._call("GET", "/flows", params={"user": user, "mine": "true" if mine else None})

    def flow(self, flow_id: int) -> dict:
        return self._call("GET", f"/flows/{int(flow_id)}")

    def kill_flow(self, flow_id: int) -> dict:
        return self._call("POST", f"/flows/{int(flow_id)}/kill")

    def shares(self, queue: str | None = None) -> dict:
        return self._call("GET", "/shares", params={"queue": queue})

    def queues(self) -> list[dict]:
        return self._call("GET", "/queues")

    def acct(self, user: str | None = None, queue: str | None = None, since_ts: float | None = None) -> dict:
        """Accounting of finished jobs (GET /acct; statgrid.grid.master.acct.AcctReport.from_dict reads it):
        yours by default, user="all" or another's for administrators; since_ts: Unix seconds."""
        return self._call("GET", "/acct", params={"user": user, "queue": queue,
                                                  "since": None if since_ts is None else repr(float(since_ts))})

    def down(self) -> dict:
        return self._call("POST", "/grid/down")

    def reconfig(self) -> dict:
        return self._call("POST", "/grid/reconfig")

    def events(self, timeout_s: float = 60.0):
        """Yield the master's change events (GET /events: {"type": "job"|"host"|"resync", ...}) as
        they come, on a connection of their own, after a first {"type": "open"} once the master has
        subscribed this stream (every change from then on comes); ends when the master stops.
        timeout_s bounds the wait for any line (the master sends a keep-alive every 15 s)."""
        conn = self._connect()
        conn.timeout = timeout_s
        try:
            conn.request("GET", "/events", headers=self._headers())
            resp = conn.getresponse()
            if resp.status != 200:
                raise StatgridError(f"GET /events: HTTP {resp.status}: {resp.read()[:500].decode(errors='replace')}")
            yield {"type": "open"}
            kind = None
            while True:
                line = resp.fp.readline()
                if not line:
                    return
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind is not None:
                    yield json.loads(line[6:])
                    kind = None
        finally:
            conn.close()

    def metrics(self) -> str:
        """GET /metrics: the grid in Prometheus's text format."""
        return self._call("GET", "/metrics", raw=True)

    def whoami(self) -> dict:
        return self._call("GET", "/whoami")

    def token_create(self, name: str = "") -> dict:
        return self._call("POST", "/tokens", {"name": name})

    def tokens(self, all_users: bool = False) -> list[dict]:
        return self._call("GET", "/tokens", params={"all": "true" if all_users else None})

    def token_revoke(self, token_id: int) -> dict:
        return self._call("DELETE", f"/tokens/{int(token_id)}")


def _is_loopback_host(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over the master's local socket."""

    def __init__(self, path: Path, timeout_s: float):
        super().__init__("localhost", timeout=timeout_s)
        self.socket_path = path

    def connect(self) -> None:
        self.sock = localsock.connect(self.socket_path, self.timeout)
