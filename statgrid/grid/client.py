"""A small Python client of the master's HTTP API (standard library only).

    from statgrid.config import load_config
    from statgrid.grid.client import GridClient

    grid = GridClient(load_config())
    job = grid.submit(["report.py"], queue="normal")
    print(grid.wait([job["id"]])[0]["state"])
"""
from __future__ import annotations

import getpass
import json
import math
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterable

from statgrid.config import Config
from statgrid.errors import StatgridError, UsageError
from statgrid.grid.model import PAGE_MAX_JOBS



class GridClient:
    def __init__(self, cfg: Config, timeout_s: float = 60.0):
        self.cfg = cfg
        self.base = f"http://127.0.0.1:{cfg.master.port}"
        self.timeout_s = timeout_s

    def _call(self, method: str, path: str, body: Any = None, params: dict | None = None,
              timeout_s: float | None = None) -> Any:
        url = self.base + path
        if params:
            url += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout_s or self.timeout_s) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            try:
                payload = json.loads(exc.read())
                message, usage = payload.get("error") or str(payload.get("detail")), payload.get("usage", False)
            except ValueError:
                message, usage = f"HTTP {exc.code} from the master", False
            raise (UsageError if usage else StatgridError)(message) from None
        except TimeoutError:
            raise StatgridError(f"the master at {self.base} did not answer {method} {path} within "
                                f"{timeout_s or self.timeout_s:.0f} s; check {self.cfg.home}/grid/master.log.") from None
        except (urllib.error.URLError, OSError) as exc:
            raise StatgridError(f"no master answers at {self.base} (grid home {self.cfg.home}): "
                                f"{getattr(exc, 'reason', exc)}; start one with `statgrid grid up --detach`.") from None

    # -- verbs ----------------------------------------------------------------------------------------
    def health(self) -> dict:
        return self._call("GET", "/health", timeout_s=5)

    def submit(self, argv: list[str], queue: str = "", name: str = "", options: dict[str, str] | None = None,
               rerunnable: bool = False, hosts: list[str] | None = None, cwd: str | None = None,
               env: dict[str, str] | None = None, user: str | None = None) -> dict:
        """Submit a job file (.py/.sql) or a command; returns the job record (its "id" first)."""
        body = {"argv": list(argv), "cwd": cwd or os.getcwd(), "user": user or getpass.getuser(),
                "queue": queue, "name": name, "options": options or {}, "rerunnable": rerunnable,
                "hosts": list(hosts or []), "env": dict(os.environ if env is None else env)}
        return self._call("POST", "/jobs", body)

    def jobs(self, user: str | None = None, all_states: bool = False, states: Iterable[str] | None = None,
             queue: str | None = None, host: str | None = None, limit: int | None = None) -> list[dict]:
        """Job records in id order (default: not finished; None filters match anyone), all of
        them or the first `limit`, fetched page by page (the master answers at most 1000 a call)."""
        params = {"user": user, "all": "true" if all_states else None, "state": ",".join(states) if states else None,
                  "queue": queue, "host": host}
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

    def kill(self, ids: Iterable[int], user: str | None = None) -> list[dict]:
        return self._call("POST", "/kill", {"ids": [int(i) for i in ids], "user": user or getpass.getuser()})

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
                if job["state"] in ("DONE", "EXIT", "KILLED") or (deadline and time.monotonic() >= deadline):
                    break
            out.append(job)
        return out

    def peek(self, job_id: int, nbytes: int = 4096) -> dict:
        return self._call("GET", f"/jobs/{int(job_id)}/peek", params={"nbytes": nbytes})

    def hosts(self) -> list[dict]:
        return self._call("GET", "/hosts")

    def queues(self) -> list[dict]:
        return self._call("GET", "/queues")

    def down(self) -> dict:
        return self._call("POST", "/grid/down")
