"""A flood of bad tokens over HTTPS (issue 24, item 4): what it costs the grid home's disk, before
and after the throttle and the audit trail's coalescing.

Two grids up side by side: `before`, the code of git revision --before (default e8435a1, exported
with `git archive` into a temporary directory and run with PYTHONPATH), and `after`, this checkout.
Per run, interleaved (the order alternating), each side gets --seconds of flood: --connections
threads, each on one keep-alive HTTPS connection from 127.0.0.1, send `GET /jobs` with a new wrong
token each time; meanwhile one client with a valid token asks `GET /whoami` every 50 ms.

Per side: refusals answered per second, bytes the audit trail grew per second and per refusal
(audit.log and its rotated files), the statuses seen, and the valid client's answers (all must be
200) and median latency. Printed as median (min … max, N runs).

    python benchmarks/auth_flood.py --runs 3 --seconds 10
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import fmt_stat, free_port  # noqa: E402

STATGRID = [sys.executable, "-m", "statgrid"]


class Side:
    """One grid: its home, environment and a token of root's (made on its local socket)."""

    def __init__(self, name: str, pythonpath: str | None):
        self.name = name
        self.home = Path(tempfile.mkdtemp(prefix=f"statgrid-bench-flood-{name}-"))
        self.port = free_port()
        (self.home / "grid.toml").write_text(f"[master]\nport = {self.port}\n[hosts.node1]\nslots = 1\n"
                                             "[monitor]\nenabled = false\n")
        self.env = {**os.environ, "STATGRID_HOME": str(self.home), "STATGRID_CONFIG": str(self.home / "grid.toml")}
        if pythonpath:
            self.env["PYTHONPATH"] = pythonpath
        self.cwd = pythonpath or str(self.home)
        subprocess.run(STATGRID + ["grid", "up", "--detach"], env=self.env, cwd=self.cwd, check=True,
                       stdout=subprocess.DEVNULL)
        made = subprocess.run(STATGRID + ["token", "create", "--print"], env=self.env, cwd=self.cwd, check=True,
                              capture_output=True, text=True).stdout
        self.token = next(w for w in made.split() if w.startswith("sg_"))
        self.context = ssl.create_default_context(cafile=str(self.home / "grid" / "ca.pem"))

    def connect(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("localhost", self.port, timeout=60, context=self.context)

    def audit_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.home / "grid").glob("audit.log*"))

    def down(self) -> None:
        subprocess.run(STATGRID + ["grid", "down"], env=self.env, cwd=self.cwd, stdout=subprocess.DEVNULL)


def flood(side: Side, seconds: float, connections: int) -> dict:
    stop = time.monotonic() + seconds
    statuses: Counter = Counter()
    valid: list[tuple[int, float]] = []
    lock = threading.Lock()

    def attacker(k: int) -> None:
        conn, seen, i = side.connect(), Counter(), 0
        try:
            while time.monotonic() < stop:
                conn.request("GET", "/jobs", headers={"Authorization": f"Bearer sg_wrong{k}x{i}"})
                resp = conn.getresponse()
                resp.read()
                seen[resp.status] += 1
                i += 1
        finally:
            conn.close()
            with lock:
                statuses.update(seen)

    def user() -> None:
        conn = side.connect()
        try:
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                conn.request("GET", "/whoami", headers={"Authorization": f"Bearer {side.token}"})
                resp = conn.getresponse()
                json.loads(resp.read())
                valid.append((resp.status, time.perf_counter() - t0))
                time.sleep(0.05)
        finally:
            conn.close()

    before_bytes = side.audit_bytes()
    threads = [threading.Thread(target=attacker, args=(k,)) for k in range(connections)]
    threads.append(threading.Thread(target=user))
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed_s = time.monotonic() - t0
    grown = side.audit_bytes() - before_bytes
    refused = sum(statuses.values())
    return {"refusals_per_s": refused / elapsed_s, "audit_bytes_per_s": grown / elapsed_s,
            "audit_bytes_per_refusal": grown / max(1, refused), "statuses": dict(statuses),
            "valid_ok": sum(1 for s, _ in valid if s == 200), "valid_all": len(valid),
            "valid_ms": statistics.median(d for _, d in valid) * 1000 if valid else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="e8435a1", help="git revision of the code before (default e8435a1)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--connections", type=int, default=4)
    args = ap.parse_args()

    repo = Path(__file__).resolve().parent.parent
    tree = Path(tempfile.mkdtemp(prefix="statgrid-bench-before-"))
    archive = subprocess.run(["git", "-C", str(repo), "archive", args.before, "statgrid"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    sides = [Side("before", str(tree)), Side("after", None)]
    results: dict[str, list[dict]] = {s.name: [] for s in sides}
    start_bytes = {s.name: s.audit_bytes() for s in sides}
    try:
        for i in range(args.runs):
            for side in (sides if i % 2 == 0 else sides[::-1]):
                r = flood(side, args.seconds, args.connections)
                results[side.name].append(r)
                print(f"run {i + 1} {side.name}: {r['refusals_per_s']:.0f} refusals/s, audit +{r['audit_bytes_per_s']:.0f} "
                      f"B/s ({r['audit_bytes_per_refusal']:.1f} B a refusal), statuses {r['statuses']}, valid token "
                      f"{r['valid_ok']}/{r['valid_all']} answered 200 (median {r['valid_ms']:.1f} ms)", flush=True)
    finally:
        for side in sides:
            side.down()                         # writes the counts of the refusals still being coalesced
    print()
    for side in sides:
        refused = sum(sum(r["statuses"].values()) for r in results[side.name])
        grown = side.audit_bytes() - start_bytes[side.name]
        print(f"{side.name}: {refused} refusals in all, audit trail +{grown:,} bytes once the grid stopped "
              f"({grown / max(1, refused):.2f} B a refusal)")
    for key, label in [("refusals_per_s", "refusals answered per s"), ("audit_bytes_per_s", "audit trail growth, B/s"),
                       ("audit_bytes_per_refusal", "audit bytes per refusal"), ("valid_ms", "valid token, median ms")]:
        b = [r[key] for r in results["before"]]
        a = [r[key] for r in results["after"]]
        ratio = [x / y if y else None for x, y in zip(a, b)]
        print(f"{label:28s} before {fmt_stat(b)}   after {fmt_stat(a)}   after/before {fmt_stat(ratio)}")
    ok = all(r["valid_ok"] == r["valid_all"] for r in results["after"])
    print(f"valid token answered 200 during every flood (after): {ok}")


if __name__ == "__main__":
    main()
