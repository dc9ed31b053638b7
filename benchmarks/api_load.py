"""API under listing load (issue 14, item 11): submit and single-job status latency with
10,000 queued jobs while a full listing is asked every second.

A real master (`grid up --detach`, embedded engine) on one closed host, so every job stays PEND;
the store is filled with the queued jobs before the master starts (it loads them as after a
restart). Each round runs both sides, in alternating order:
  idle     submits and status calls alone;
  listing  the same while another process lists every queued job (`GridClient.jobs(user=None)`,
           what `statgrid jobs -u all` does) once a second, or back to back if one takes longer.
Each side paces one submit (`true`, the caller's environment, as the CLI sends it) and one
`GET /jobs/{id}` of that job every 1/--rate s for --phase-s seconds, through the Python client
(a new connection per call, like the CLI). Per side and round: p50 and p99 of each; printed as
median (min … max, N runs) over the rounds. Goal: listing-side p99 < 100 ms for both.

    .venv/bin/python benchmarks/api_load.py [--runs 5] [--jobs 10000] [--phase-s 10] [--rate 10]

Figures for the code before the fix: run this file with PYTHONPATH pointing at an export of the
old `statgrid/` package (the client calls it makes exist in both).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat, free_port, percentile, rotated, stat_dict  # noqa: E402

from statgrid.config import load_config  # noqa: E402
from statgrid.grid.interface.client import GridClient  # noqa: E402


def fill_store(home: Path, cfg, n_jobs: int) -> None:
    """n_jobs PEND jobs, as `statgrid submit true` would store them, in one transaction."""
    from statgrid.grid.master.jobspec import JobRequest, validate
    from statgrid.job.record import to_row
    from statgrid.grid.master.store import JobStore

    store = JobStore(home / "grid" / "jobs.db")
    try:
        job = validate(JobRequest(["true"], os.getcwd(), "bench", env=dict(os.environ)), cfg, time.time())
        row = to_row(job)
        row.pop("id")
        with store.con:
            store.con.execute("BEGIN")
            store.con.executemany(f"INSERT INTO jobs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                  [list(row.values())] * n_jobs)
    finally:
        store.close()


def lister(config: Path) -> None:
    """--lister: a full listing once a second until SIGTERM; then its wall times (s) as JSON."""
    stop = False

    def on_term(signum, frame):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    grid = GridClient(load_config(config, os.environ), timeout_s=600)
    walls, counts = [], []
    while not stop:
        t0 = time.perf_counter()
        counts.append(len(grid.jobs(user=None)))
        walls.append(time.perf_counter() - t0)
        if len(walls) == 1:
            print("ready", flush=True)
        time.sleep(max(0.0, 1.0 - walls[-1]))
    print(json.dumps({"walls_s": walls, "jobs": counts}), flush=True)


def phase(grid: GridClient, seconds: float, rate: float) -> tuple[list[float], list[float]]:
    """(submit latencies, status latencies) in ms, one pair every 1/rate s."""
    submit_ms, status_ms = [], []
    end = time.monotonic() + seconds
    next_t = time.monotonic()
    while time.monotonic() < end:
        t0 = time.perf_counter()
        job = grid.submit(["true"])
        t1 = time.perf_counter()
        grid.job(job["id"])
        t2 = time.perf_counter()
        submit_ms.append((t1 - t0) * 1000)
        status_ms.append((t2 - t1) * 1000)
        next_t += 1 / rate
        time.sleep(max(0.0, next_t - time.monotonic()))
    return submit_ms, status_ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--phase-s", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=10.0, help="submit+status pairs per second")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--lister", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.lister:
        lister(args.lister)
        return

    home = Path(tempfile.mkdtemp(prefix="statgrid-bench-api-"))
    toml = home / "grid.toml"
    toml.write_text(f"[master]\nport = {free_port()}\n[hosts.node1]\nslots = 1\nopen = false\n")
    env = {**os.environ, "STATGRID_HOME": str(home), "STATGRID_CONFIG": str(toml)}
    cfg = load_config(toml, env)
    fill_store(home, cfg, args.jobs)
    statgrid = [sys.executable, "-m", "statgrid"]
    subprocess.run(statgrid + ["grid", "up", "--detach"], env=env, check=True)
    grid = GridClient(cfg)
    sides = ("idle", "listing")
    res = {side: {k: [] for k in ("submit_p50", "submit_p99", "status_p50", "status_p99")} for side in sides}
    listing_s: list[float] = []
    try:
        phase(grid, 2, args.rate)                       # warm: imports, first connections
        for r in range(args.runs):
            for side in rotated(sides, r):
                proc = None
                if side == "listing":
                    proc = subprocess.Popen([sys.executable, __file__, "--lister", str(toml)], env=env,
                                            stdout=subprocess.PIPE, text=True)
                    assert proc.stdout.readline().strip() == "ready"
                submit_ms, status_ms = phase(grid, args.phase_s, args.rate)
                if proc is not None:
                    proc.send_signal(signal.SIGTERM)
                    out = json.loads(proc.communicate(timeout=600)[0])
                    listing_s += out["walls_s"]
                for name, ms in (("submit", submit_ms), ("status", status_ms)):
                    res[side][f"{name}_p50"].append(percentile(ms, 0.5))
                    res[side][f"{name}_p99"].append(percentile(ms, 0.99))
                print(f"round {r + 1} {side:8s} submit p50 {percentile(submit_ms, 0.5):6.1f} p99 "
                      f"{percentile(submit_ms, 0.99):7.1f} ms; status p50 {percentile(status_ms, 0.5):6.1f} p99 "
                      f"{percentile(status_ms, 0.99):7.1f} ms ({len(submit_ms)} pairs)", flush=True)
        queued = len(grid.jobs(user=None))
    finally:
        subprocess.run(statgrid + ["grid", "down"], env=env)
        shutil.rmtree(home, ignore_errors=True)

    print(f"\n{args.jobs:,} jobs queued at the start, {queued:,} at the end; {args.rate:g} submit+status pairs/s, "
          f"{args.phase_s:g} s per side per round")
    for side in sides:
        for name in ("submit", "status"):
            print(f"{side:8s} {name} p50 {fmt_stat(res[side][f'{name}_p50'], 1)} ms   "
                  f"p99 {fmt_stat(res[side][f'{name}_p99'], 1)} ms")
    print(f"full listing (all queued jobs, paged by the client): {fmt_stat(listing_s)} s")
    print("goal: listing-side p99 < 100 ms for submit and status")
    if args.json:
        args.json.write_text(json.dumps({"jobs": args.jobs, "queued_end": queued, "rate": args.rate,
                                         "phase_s": args.phase_s, "listing_s": stat_dict(listing_s),
                                         **{f"{side}_{k}_ms": stat_dict(v) for side in sides
                                            for k, v in res[side].items()}}, indent=1))


if __name__ == "__main__":
    main()
