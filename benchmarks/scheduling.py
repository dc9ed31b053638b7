"""Scheduling benchmark (issue 18): the dispatcher alone, and `true` jobs through a real grid, with
10,000 jobs pending across 50 users and fairshare on.

Part A — the policy alone, in this process (statgrid.grid.scheduling.policy, backlog, fairshare; no store, no
engine). 16 hosts × 8 slots, all busy; 10,000 jobs pending in one queue, 50 users × 200, submitted
round robin. Then --dispatches times, as the master does it for each job that ends (master.py:
`_finish` → `_charge` → `dispatch`): end the oldest running job and charge its run time to the
UsageBook; build host_views, count_running and Limits(usage = book.at(now, running)); plan() on the
Backlog; apply the start (Backlog.remove, the RUN record). The user whose job started submits a
new one (not timed), so 10,000 stay pending. Variants, interleaved in each run (order rotated):
  fifo    a queue without fairshare (first come, first served);
  fair    fairshare = { default = 1 }: every user a share of their own;
  groups  5 [groups] of 10 users with 1 … 5 shares (members equal inside their group).
Per run and variant: p50 and p99 of the whole step ("dispatch": end + views + counts + usage +
plan + apply) and of plan() alone, in µs; jobs/s through the policy = 1 / mean step (and 1 / p50,
which the preemptions of a shared machine leave alone); a
submit-time dispatch (a new job joins the backlog, then views + counts + usage + plan with no
free slot and 10,000 pending: what the policy adds to each submit); and the first dispatch of a
grid that comes up with the 10,000 pending (one plan() placing 128 jobs). Goal: ≥ 500 jobs/s.

Part B — end to end: a real grid (`statgrid grid up --detach`, embedded engine, 4 hosts × 8
slots, monitor off, engine TLS on as by default; the CLI's client over the local socket). Queues
`fair` (fairshare = { default = 1 }) and `fifo` (none) on the same hosts, compared interleaved
(order alternating per run). Per run and side:
  build   the hosts are closed (`statgrid host close`), --jobs `true` jobs are submitted to the
          side's queue (POST /jobs, one job each, from --submitters clients at once, each job
          with the submitter's environment as `statgrid submit` sends it), so the backlog waits;
  drain   a second client starts submitting one `true` every --probe-ms (default 50 ms) and
          times each POST /jobs round trip; the hosts are opened; the backlog runs until the
          queue is empty. The probe's jobs go to a queue of their own on a host closed in
          grid.toml, so they wait (and are killed at the end) and add no work to the drain.
Sustained throughput = jobs that ended per second between the 10th and the 90th percentile of
the run's end_ts (the store's, via GET /jobs), so the ramp up and the tail are left out; the
probe's p50 / p99 / max; the master's CPU over the drain (share of one core) and that of every
other process of the grid. Goals: ≥ 100 jobs/s end to end, submit p99 < 100 ms meanwhile.

Users in part B: this grid runs as the account that starts it, so by default every job is that
account's — 50 "users" are not possible without 50 accounts, and the fairshare queue sees one
user (the policy's cost with 50 users is part A's). With --users 50 (as root) the benchmark makes
50 OS accounts (tests/support/multiuser.py: useradd, removed at the end) and each submits its share of
the jobs through the local socket as itself (a forked client that drops to the account), so the
fair queue has 50 users and the jobs run as them.

Where the master's time goes (part B): --profile FILE runs it under cProfile (its main thread: the
API's loop, where submit, dispatch and the engine's events run) and writes the statistics to FILE
(pstats) at `grid down`; --asyncio-debug runs it in asyncio's debug mode and lists the callbacks
that held its loop over 100 ms during the drains (what a submit then waits behind).

    .venv/bin/python benchmarks/scheduling.py [--part a|b|both] [--runs-a 5] [--runs-b 3]
        [--dispatches 2000] [--jobs 10000] [--users N] [--probe-ms 50] [--quick]
        [--profile FILE] [--asyncio-debug] [--json FILE]

--quick: a smoke run under a minute (1 run of each part, 300 dispatches, 600 jobs per side).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat, free_port, percentile, render_rows, stat_dict  # noqa: E402
from _gridprocs import cpu_share, cpu_snapshot  # noqa: E402
from _sched_policy import part_a  # noqa: E402

from statgrid.config import load_config  # noqa: E402

STATGRID = [sys.executable, "-m", "statgrid"]
GOAL_E2E_JOBS_S, GOAL_SUBMIT_P99_MS = 100.0, 100.0

# ---------------------------------------------------------------------------- part A: _sched_policy.py


# ---------------------------------------------------------------------------- part B: a real grid
B_HOSTS, B_SLOTS = 4, 8
B_NODES = tuple(f"node{i}" for i in range(1, B_HOSTS + 1))
B_SIDES = ("fifo", "fair")
PROBE_QUEUE, PROBE_HOST = "probe", "hold"
# Jobs carry the submitter's whole environment, as `statgrid submit` sends it (GridClient's default).
JOB_ENV = None


def b_toml(port: int) -> str:
    nodes = " ".join(B_NODES)
    return (f"[master]\nport = {port}\n"
            + "".join(f"[hosts.{n}]\nslots = {B_SLOTS}\n" for n in B_NODES)
            # the probe's jobs wait here: a host closed in grid.toml takes none
            + f"[hosts.{PROBE_HOST}]\nslots = 1\nopen = false\n"
            + f'[queues.fair]\npriority = 30\nhosts = "{nodes}"\nfairshare = {{ default = 1 }}\n'
            + f'[queues.fifo]\npriority = 30\nhosts = "{nodes}"\n'
            + f'[queues.{PROBE_QUEUE}]\npriority = 10\nhosts = "{PROBE_HOST}"\n'
            + "[monitor]\nenabled = false\n")


class BenchGrid:
    """A grid of B_HOSTS × B_SLOTS in a fresh directory: `grid up --detach`, or the master in the
    foreground under cProfile (--profile); `down()` stops it and removes nothing but its processes."""

    def __init__(self, profile: Path | None, shared: bool, asyncio_debug: bool = False):
        self.root = Path(tempfile.mkdtemp(prefix="statgrid-bench-sched-"))
        if shared:
            os.chmod(self.root, 0o755)      # other accounts reach the socket through it
        self.home = self.root / "home"
        self.toml = self.root / "grid.toml"
        self.toml.write_text(b_toml(free_port()))
        os.chmod(self.toml, 0o644)
        self.env = {**os.environ, "STATGRID_HOME": str(self.home), "STATGRID_CONFIG": str(self.toml)}
        self.cfg = load_config(self.toml, self.env)
        self.proc: subprocess.Popen | None = None
        # asyncio's debug mode logs every callback that holds the master's loop over 100 ms
        master_env = {**self.env, "PYTHONASYNCIODEBUG": "1"} if asyncio_debug else self.env
        if profile is None:
            subprocess.run(STATGRID + ["grid", "up", "--detach"], env=master_env, check=True, stdout=subprocess.DEVNULL)
        else:
            from statgrid.grid.interface.client import GridClient
            self.home.mkdir()
            log = open(self.root / "master.log", "w")
            self.proc = subprocess.Popen([sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "statgrid",
                                          "grid", "up"], env=master_env, stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL)
            probe = GridClient(self.cfg)
            deadline = time.monotonic() + 180
            while True:
                try:
                    probe.health()
                    break
                except Exception:                            # noqa: BLE001 — not serving yet
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(f"the profiled master did not start; see {self.root / 'master.log'}")
                    time.sleep(0.5)
        self.master_pid = json.loads((self.home / "grid" / "master.json").read_text())["pid"]

    @property
    def master_log(self) -> Path:
        return self.root / "master.log" if self.proc is not None else self.home / "grid" / "master.log"

    def log_size(self) -> int:
        try:
            return self.master_log.stat().st_size
        except OSError:
            return 0

    def slow_callbacks(self, since_bytes: int) -> list[tuple[str, float]]:
        """(what, seconds) of each 'Executing … took N seconds' asyncio logged after `since_bytes`."""
        try:
            with open(self.master_log, "rb") as f:
                f.seek(since_bytes)
                text = f.read().decode(errors="replace")
        except OSError:
            return []
        out = []
        for m in re.finditer(r"Executing <(.*?) took ([0-9.]+) seconds", text):
            what = re.search(r"coro=<(.+?)\(\)", m.group(1)) or re.search(r"^(?:Handle|TimerHandle) ([^(>]+)", m.group(1))
            out.append((what.group(1) if what else m.group(1)[:60], float(m.group(2))))
        return out

    def client(self):
        from statgrid.grid.interface.client import GridClient
        return GridClient(self.cfg, timeout_s=600)

    def down(self) -> None:
        subprocess.run(STATGRID + ["grid", "down"], env=self.env, stdout=subprocess.DEVNULL)
        if self.proc is not None:
            self.proc.wait(120)
        shutil.rmtree(self.root, ignore_errors=True)


# -- the grid's processes' CPU (utime + stime, and that of waited-for children: a launcher's jobs)
# -- the probe: a second client, one submit every --probe-ms until SIGTERM
def probe_main(args) -> None:
    from statgrid.grid.interface.client import GridClient

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    grid = GridClient(load_config(args.probe, os.environ), timeout_s=600)
    lat_ms, ids = [], []
    period = args.probe_ms / 1000
    next_t = time.monotonic()
    while not stop.is_set():
        t0 = time.perf_counter()
        ids.append(grid.submit(["true"], queue=PROBE_QUEUE, cwd="/tmp", env=JOB_ENV)["id"])
        lat_ms.append((time.perf_counter() - t0) * 1000)
        if len(ids) == 1:
            print("ready", flush=True)
        next_t += period
        stop.wait(max(0.0, next_t - time.monotonic()))
    print(json.dumps({"lat_ms": lat_ms, "ids": ids}), flush=True)


# -- building the backlog
def build_single(bg: BenchGrid, queue: str, n_jobs: int, threads: int) -> tuple[list[int], list[float]]:
    """n_jobs submits of the grid's own account, from `threads` clients at once; (ids, latencies ms)."""
    ids: list[int] = []
    lat: list[float] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        grid = bg.client()
        mine, ms = [], []
        try:
            for _ in range(n):
                t0 = time.perf_counter()
                mine.append(grid.submit(["true"], queue=queue, cwd="/tmp", env=JOB_ENV)["id"])
                ms.append((time.perf_counter() - t0) * 1000)
        except BaseException as exc:                     # noqa: BLE001 — reported below
            errors.append(exc)
        with lock:
            ids.extend(mine)
            lat.extend(ms)

    shares = [n_jobs // threads + (i < n_jobs % threads) for i in range(threads)]
    workers = [threading.Thread(target=work, args=(n,)) for n in shares]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise SystemExit(f"a submit failed: {errors[0]}")
    return ids, lat


def build_users(bg: BenchGrid, queue: str, n_jobs: int, users: list, parallel: int) -> tuple[list[int], list[float]]:
    """Each account submits its share as itself: a forked client that drops to the account (the
    master knows the caller from the socket's peer credentials), `parallel` accounts at once."""
    shares = [n_jobs // len(users) + (i < n_jobs % len(users)) for i in range(len(users))]
    ids: list[int] = []
    lat: list[float] = []
    todo = list(zip(users, shares))
    live: dict[int, int] = {}                            # pid → read end of its pipe
    while todo or live:
        while todo and len(live) < parallel:
            user, n = todo.pop(0)
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:                                 # the child: become the user, submit, report
                code = 1
                try:
                    os.close(r)
                    os.setgroups([])
                    os.setgid(user.gid)
                    os.setuid(user.uid)
                    grid = bg.client()
                    mine, ms = [], []
                    for _ in range(n):
                        t0 = time.perf_counter()
                        mine.append(grid.submit(["true"], queue=queue, cwd="/tmp", env=JOB_ENV)["id"])
                        ms.append((time.perf_counter() - t0) * 1000)
                    with os.fdopen(w, "w") as f:
                        json.dump({"ids": mine, "lat_ms": ms}, f)
                    code = 0
                except BaseException as exc:             # noqa: BLE001 — the parent reports it
                    try:
                        os.write(w, json.dumps({"error": f"{user.name}: {exc}"}).encode())
                    except OSError:
                        pass
                finally:
                    os._exit(code)
            os.close(w)
            live[pid] = r
        pid, _ = os.wait()
        r = live.pop(pid)
        with os.fdopen(r, "rb") as f:
            out = json.loads(f.read() or b"{}")
        if "ids" not in out:
            raise SystemExit(f"a user's submits failed: {out.get('error', 'no output')}")
        ids += out["ids"]
        lat += out["lat_ms"]
    return ids, lat



def run_side(bg: BenchGrid, grid, side: str, args, users: list) -> dict:
    """Build the side's backlog with the hosts closed, open them, and time the drain."""
    for h in B_NODES:
        grid.close_host(h, "scheduling benchmark: building the backlog")
    t0 = time.perf_counter()
    if users:
        ids, build_ms = build_users(bg, side, args.jobs, users, args.submitters)
    else:
        ids, build_ms = build_single(bg, side, args.jobs, args.submitters)
    build_s = time.perf_counter() - t0
    probe = subprocess.Popen([sys.executable, __file__, "--probe", str(bg.toml), "--probe-ms", str(args.probe_ms)],
                             env=bg.env, stdout=subprocess.PIPE, text=True)
    try:
        if probe.stdout.readline().strip() != "ready":
            raise SystemExit("the probe client did not start")
        log0 = bg.log_size()
        cpu0, c0 = cpu_snapshot(bg.home, "scheduling.py"), time.monotonic()
        t_open = time.time()
        for h in B_NODES:
            grid.open_host(h)
        deadline = time.monotonic() + max(300.0, args.jobs / 10)
        while True:
            q = next(x for x in grid.queues() if x["queue"] == side)
            if q["pending"] == 0 and q["running"] == 0:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"queue {side}: {q['pending']} pending and {q['running']} running after "
                                 f"{time.monotonic() - c0:.0f} s; see {bg.home / 'grid' / 'master.log'}")
            time.sleep(0.5)                              # GET /queues walks the backlog: ~1 ms
        drain_s = time.monotonic() - c0
        cpu = cpu_share(cpu0, cpu_snapshot(bg.home, "scheduling.py"), drain_s)
        slow = bg.slow_callbacks(log0)
    finally:
        probe.send_signal(signal.SIGTERM)
        probe_out = json.loads(probe.communicate(timeout=120)[0] or '{"lat_ms": [], "ids": []}')
    for i in range(0, len(probe_out["ids"]), 5000):          # the probe's jobs waited on the closed host
        grid.kill(probe_out["ids"][i:i + 5000])

    wanted = set(ids)
    jobs = [j for j in grid.jobs(all_states=True, queue=side) if j["id"] in wanted]
    bad = [j for j in jobs if j["state"] != "DONE"]
    if len(jobs) != len(ids) or bad:
        raise SystemExit(f"queue {side}: {len(jobs)} of {len(ids)} jobs found, {len(bad)} not DONE: "
                         f"{bad[0] if bad else ''}")
    ends = sorted(j["end_ts"] for j in jobs)
    p10, p90 = percentile(ends, 0.1), percentile(ends, 0.9)
    lat = probe_out["lat_ms"]
    per_user: dict[str, int] = {}
    for j in jobs:
        per_user[j["user"]] = per_user.get(j["user"], 0) + 1
    return {"jobs_per_s": 0.8 * len(ends) / (p90 - p10), "overall_jobs_per_s": len(ends) / (ends[-1] - t_open),
            "drain_s": drain_s, "build_jobs_per_s": len(ids) / build_s,
            "build_p50_ms": percentile(build_ms, 0.5), "build_p99_ms": percentile(build_ms, 0.99),
            "submit_p50_ms": percentile(lat, 0.5), "submit_p99_ms": percentile(lat, 0.99), "submit_max_ms": max(lat),
            "probe_submits": len(lat),
            "dispatch_to_start_ms": statistics.median(j["start_ts"] - j["dispatch_ts"] for j in jobs) * 1000,
            "run_ms": statistics.median(j["end_ts"] - j["start_ts"] for j in jobs) * 1000,
            "users": len(per_user),
            "cpu_ms_per_job": sum(cpu.values()) * drain_s * 1000 / len(jobs),
            "master_cpu_ms_per_job": cpu.get("master", 0.0) * drain_s * 1000 / len(jobs),
            **{f"cpu_{kind}": share for kind, share in cpu.items()},
            "slow_callbacks": slow}


B_ROWS = (("sustained throughput, p10–p90 of end_ts", "jobs_per_s", "jobs/s", 1),
          ("whole drain, hosts opened → last end", "overall_jobs_per_s", "jobs/s", 1),
          ("submit during the drain p50", "submit_p50_ms", "ms", 1),
          ("submit during the drain p99", "submit_p99_ms", "ms", 1),
          ("submit during the drain max", "submit_max_ms", "ms", 1),
          ("build: submits/s into the backlog", "build_jobs_per_s", "", 0),
          ("build: submit p99", "build_p99_ms", "ms", 1),
          ("dispatch → start, median", "dispatch_to_start_ms", "ms", 1),
          ("start → end (`true`), median", "run_ms", "ms", 1),
          ("CPU master", "cpu_master", "cores", 2), ("CPU scheduler", "cpu_scheduler", "cores", 2),
          ("CPU workers", "cpu_workers", "cores", 2), ("CPU launchers + jobs", "cpu_launchers", "cores", 2),
          ("CPU of the whole grid per job", "cpu_ms_per_job", "ms", 2),
          ("  of which the master's", "master_cpu_ms_per_job", "ms", 2))


def part_b(args) -> dict:
    users: list = []
    made_users: list = []
    bg = None
    res: dict[str, dict[str, list]] = {s: {} for s in B_SIDES}
    slow: dict[str, list[tuple[str, float]]] = {s: [] for s in B_SIDES}
    try:
        if args.users:
            if os.geteuid() != 0:
                raise SystemExit("--users makes OS accounts and runs jobs as them: run the benchmark as root, or "
                                 "leave --users out (every job is then this account's)")
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
            from tests.support.multiuser import create_user
            t0 = time.perf_counter()
            for _ in range(args.users):
                made_users.append(create_user("bench"))
            users = made_users
            print(f"{len(users)} OS accounts made in {time.perf_counter() - t0:.1f} s", flush=True)
        bg = BenchGrid(args.profile, shared=bool(users), asyncio_debug=args.asyncio_debug)
        grid = bg.client()
        who = f"{len(users)} OS accounts" if users else f"one account ({grid.whoami()['user']}: the grid's own)"
        print(f"\npart B: a real grid, {B_HOSTS} hosts × {B_SLOTS} slots, {args.jobs:,} `true` jobs per run and "
              f"side from {who}, probe every {args.probe_ms:g} ms, {args.runs_b} runs", flush=True)
        build_single(bg, "fifo", 50, 1)                       # warm: imports, launchers, first connections
        for r in range(args.runs_b):
            for side in (B_SIDES if r % 2 == 0 else B_SIDES[::-1]):
                out = run_side(bg, grid, side, args, users)
                slow[side] += out.pop("slow_callbacks")
                for k, v in out.items():
                    res[side].setdefault(k, []).append(v)
                print(f"run {r + 1} {side}: {out['jobs_per_s']:.1f} jobs/s sustained ({out['drain_s']:.1f} s drain), "
                      f"submit p50 {out['submit_p50_ms']:.1f} p99 {out['submit_p99_ms']:.1f} max "
                      f"{out['submit_max_ms']:.1f} ms ({out['probe_submits']} submits), master CPU "
                      f"{out.get('cpu_master', 0):.2f} cores, {out['users']} user(s)", flush=True)
    finally:
        if bg is not None:
            bg.down()
        if made_users:
            from tests.support.multiuser import remove_user
            for u in made_users:
                remove_user(u.name)
    ratio = [a / b for a, b in zip(res["fair"]["jobs_per_s"], res["fifo"]["jobs_per_s"])]
    rows = [["", "fifo", "fair (fairshare default=1)"]]
    for label, key, unit, digits in B_ROWS:
        rows.append([f"{label}{' (' + unit + ')' if unit else ''}",
                     *(fmt_stat(res[s].get(key, []), digits) for s in B_SIDES)])
    print("\n" + render_rows(rows))
    print(f"fair / fifo, sustained throughput: {fmt_stat(ratio)}")
    print(f"goals: ≥ {GOAL_E2E_JOBS_S:.0f} jobs/s end to end, submit p99 < {GOAL_SUBMIT_P99_MS:.0f} ms during the drain")
    if args.asyncio_debug:
        for side in B_SIDES:
            calls: dict[str, list[float]] = {}
            for what, sec in slow[side]:
                calls.setdefault(what, []).append(sec * 1000)
            print(f"{side}: callbacks that held the master's loop > 100 ms during the drains (asyncio debug mode, "
                  "itself slower): " + ("; ".join(f"{w} ×{len(v)}, max {max(v):.0f} ms, median "
                                                   f"{statistics.median(v):.0f} ms" for w, v in calls.items()) or "none"))
    if args.profile:
        print(f"master profile (cProfile): {args.profile}; read it with `python -m pstats {args.profile}`")
    return {s: {k: stat_dict(v) for k, v in res[s].items()} for s in B_SIDES} | {"fair_over_fifo": stat_dict(ratio)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("a", "b", "both"), default="both")
    ap.add_argument("--runs-a", type=int, default=5, help="runs of part A (default 5)")
    ap.add_argument("--runs-b", type=int, default=3, help="runs of part B (default 3)")
    ap.add_argument("--dispatches", type=int, default=2000, help="part A: dispatches per run and variant")
    ap.add_argument("--submits", type=int, default=1000, help="part A: submit-time dispatches per run and variant")
    ap.add_argument("--jobs", type=int, default=10_000, help="part B: jobs per run and side")
    ap.add_argument("--users", type=int, default=0, metavar="N",
                    help="part B: make N OS accounts (root) and submit as them (default: the grid's own account)")
    ap.add_argument("--submitters", type=int, default=2, help="part B: clients submitting at once while building")
    ap.add_argument("--probe-ms", type=float, default=50.0, help="part B: one probe submit every this many ms")
    ap.add_argument("--quick", action="store_true", help="a smoke run under a minute: 1 run each, 300 dispatches, "
                    "600 jobs")
    ap.add_argument("--profile", type=Path, metavar="FILE", help="part B: the master under cProfile, stats to FILE")
    ap.add_argument("--asyncio-debug", action="store_true", help="part B: the master in asyncio's debug mode; "
                    "report the callbacks that held its loop over 100 ms")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        probe_main(args)
        return
    if args.quick:
        args.runs_a, args.runs_b, args.dispatches, args.submits, args.jobs = 1, 1, 300, 200, 600
        args.users = min(args.users, 5)
    for name in ("runs_a", "runs_b", "dispatches", "submits", "jobs", "submitters"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} {getattr(args, name)!r} must be ≥ 1")
    out: dict = {"machine_cpus": os.cpu_count()}
    if args.part in ("a", "both"):
        out["policy"] = part_a(args)
    if args.part in ("b", "both"):
        out["grid"] = part_b(args)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
