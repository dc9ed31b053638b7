"""Dispatch benchmark (issue 3): 144 `sleep 0.5` jobs on 4 hosts × 2 slots.

Both sides in one process run, interleaved per run:
  A  statgrid: the real master (`grid up --detach`, embedded engine), 144 submits through the
     Python client as fast as they go, makespan = last job's end − first submit;
  B  `xargs -P 8` running the same 144 commands.
Ideal makespan = 144 × 0.5 s / 8 slots = 9 s. Also measured, on the same grid:
  submit→start latency on an idle grid (one job at a time, a slot always free), and
  refill gap in the batch: a job's start − the end of the job whose slot it took.
Goals (issue 3): makespan ≤ 1.03× ideal and ≤ 1.01× xargs, median latency ≤ 20 ms.

--tls (issue 15): the engine's mutual TLS on against off ([master] engine_tls = false, the
engine of before), two grids up side by side, interleaved per run (order alternating): per run
the makespan of the batch and the median submit→start of --latency-jobs jobs on each, and their
ratio. Goals: median ≤ 20 ms and makespan ≤ 1.05× ideal with TLS on.

--auth REV (issue 15, before and after): three grids up side by side, interleaved per run:
  before  the code of git revision REV (e.g. 8245183, before issue 15: API on 127.0.0.1 without
          authentication, engine without TLS), run from a `git worktree` of it, called over plain
          HTTP as its client did;
  local   this code, the CLI's way on the master's machine: the local socket (SO_PEERCRED), engine TLS;
  remote  this code as a remote client: HTTPS with a token, engine TLS.
Per run: the batch's makespan and the median submit→start; ratios to `before`.

--netns (issue 16, as root): a grid of several machines on network namespaces (tests/support/netns.py):
the master on one host, three node hosts that join with `statgrid node up`, and the client on a
host of its own using HTTPS with a token; beside it, in the same run and interleaved, the same
3 hosts × 2 slots as an embedded grid on loopback, its client on the local socket. Per run: the
batch's makespan ÷ ideal and the median submit→start of each; the ratio remote/loopback.

--before REV (issue 24, item 9): this code against the code of git revision REV (exported with
`git archive` to a temporary directory and run from there), two grids up side by side, and
`xargs -P 8`, the three interleaved per run (order rotating). Per run and side: makespan ÷ ideal,
÷ xargs, the refill gap's median and p95, the median submit→start of --latency-jobs jobs on the
idle grid, the CPU time of the grid's daemons per job of the batch (less at the mercy of the
machine's load than the times are); and the refill's hops (refill_hops) over all runs.
With --trace, each side's grid also writes a hop trace (statgrid/grid/execution/hoptrace.py,
$STATGRID_HOP_TRACE; a REV before it writes none) and the refill is shown in its finer steps,
from the launcher's reap of the ended job to the next job's exec (median and p90, all runs).

    .venv/bin/python benchmarks/dispatch.py [--runs 5] [--jobs 144] [--sleep 0.5] [--tls] [--auth REV] [--netns]
                                           [--before REV [--trace]]
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat, free_port, percentile, stat_dict  # noqa: E402

from statgrid.config import load_config  # noqa: E402
from statgrid.grid.execution import hoptrace  # noqa: E402
from statgrid.grid.interface.client import GridClient  # noqa: E402

HOSTS, SLOTS = 4, 2


def run_statgrid(grid: GridClient, n_jobs: int, sleep_s: float) -> dict:
    env = {"PATH": os.environ["PATH"]}
    t0 = time.time()
    ids = [grid.submit(["sleep", str(sleep_s)], env=env)["id"] for _ in range(n_jobs)]
    jobs = grid.wait(ids)
    bad = [j for j in jobs if j["state"] != "DONE"]
    if bad:
        raise SystemExit(f"{len(bad)} jobs did not finish DONE: {bad[0]}")
    makespan = max(j["end_ts"] for j in jobs) - t0
    # Refill gap: each start on a host − the end of the job that freed the slot it took.
    gaps = []
    by_host: dict[str, list[dict]] = {}
    for j in jobs:
        by_host.setdefault(j["host"], []).append(j)
    for hjobs in by_host.values():
        ends = sorted(j["end_ts"] for j in hjobs)
        starts = sorted(j["start_ts"] for j in hjobs)[SLOTS:]          # the first SLOTS found free slots
        gaps += [s - e for s, e in zip(starts, ends)]
    running_max = max_concurrency(jobs)
    return {"makespan_s": makespan, "gaps_s": gaps, "max_running_per_host": running_max, "by_host": by_host,
            "hops_s": refill_hops(grid, jobs)}


HOPS = (("end → master", "the attempt's end on the node (launcher reaps it) → the master stores it (event 'finish')"),
        ("master", "'finish' stored → the next job's 'dispatch' stored (fairshare charge, plan, store writes)"),
        ("master → exec", "'dispatch' stored → the next job's start on the node (engine, worker, launcher fork)"))


def refill_hops(grid: GridClient, jobs: list[dict]) -> dict[str, list[float]]:
    """Each refill in three hops, from the jobs' own times (end_ts, start_ts: the node's launcher)
    and the master's history (job_events ts: when the master stored each change). A refill is
    a dispatch and the 'finish' the master stored last before it (dispatch runs inside the
    handling of that end); dispatches with no such 'finish' (the batch's first) are left out."""
    events = {j["id"]: {e["event"]: e["ts"] for e in grid.job(j["id"])["events"]} for j in jobs}
    by_id = {j["id"]: j for j in jobs}
    finishes = sorted((ev["finish"], i) for i, ev in events.items() if "finish" in ev)
    out: dict[str, list[float]] = {name: [] for name, _ in HOPS}
    for i, ev in events.items():
        k = bisect.bisect_right(finishes, (ev.get("dispatch", 0.0), float("inf"))) - 1
        if "dispatch" not in ev or k < 0 or by_id[i]["start_ts"] is None:
            continue
        fin_ts, ended = finishes[k]
        hops = (fin_ts - by_id[ended]["end_ts"], ev["dispatch"] - fin_ts, by_id[i]["start_ts"] - ev["dispatch"])
        for (name, _), value in zip(HOPS, hops):
            out[name].append(value)
    return out


def print_hops(hops: dict[str, list[float]], indent: str = "  ") -> None:
    """The refill's hops (refill_hops), median and p95 in ms each."""
    for name, what in HOPS:
        ms = [x * 1000 for x in hops[name]]
        if ms:
            print(f"{indent}{name:14} median {statistics.median(ms):5.1f} ms, p95 {percentile(ms, 0.95):5.1f} ms  ({what})")


def max_concurrency(jobs: list[dict]) -> int:
    worst = 0
    for host in {j["host"] for j in jobs}:
        events = sorted([(j["start_ts"], 1) for j in jobs if j["host"] == host] +
                        [(j["end_ts"], -1) for j in jobs if j["host"] == host], key=lambda e: (e[0], e[1]))
        level = 0
        for _, d in events:
            level += d
            worst = max(worst, level)
    return worst


def run_latency(grid: GridClient, n: int) -> list[float]:
    env = {"PATH": os.environ["PATH"]}
    out = []
    for _ in range(n):
        job = grid.submit(["true"], env=env)
        job = grid.wait([job["id"]])[0]
        out.append(job["start_ts"] - job["submit_ts"])
    return out


def run_kills(grid: GridClient, n: int) -> list[float]:
    """kill → KILLED: from the master's 'kill' event to its 'finish' event of a running job."""
    env = {"PATH": os.environ["PATH"]}
    out = []
    for _ in range(n):
        job_id = grid.submit(["sleep", "30"], env=env)["id"]
        while grid.job(job_id)["start_ts"] is None:
            time.sleep(0.01)
        grid.kill([job_id])
        grid.wait([job_id])
        ev = {e["event"]: e["ts"] for e in grid.job(job_id)["events"]}
        out.append(ev["finish"] - ev["kill"])
    return out


def run_xargs(n_jobs: int, sleep_s: float) -> float:
    data = (f"{sleep_s}\n" * n_jobs).encode()
    t0 = time.perf_counter()
    subprocess.run(["xargs", "-P", str(HOSTS * SLOTS), "-n", "1", "sleep"], input=data, check=True)
    return time.perf_counter() - t0


STATGRID = [sys.executable, "-m", "statgrid"]


def grid_up(engine_tls: bool = True, code: Path | None = None, trace: Path | None = None) -> tuple[GridClient, dict]:
    """A grid of HOSTS × SLOTS in a fresh home; returns its client and the environment for `grid down`.
    code: run the grid's processes from this source tree (PYTHONPATH) instead of the installed statgrid.
    trace: its processes write their hop trace there (hoptrace.py)."""
    home = Path(tempfile.mkdtemp(prefix="statgrid-bench-dispatch-"))
    (home / "grid.toml").write_text(f"[master]\nport = {free_port()}\nengine_tls = {str(engine_tls).lower()}\n" +
                                    "".join(f"[hosts.node{i}]\nslots = {SLOTS}\n" for i in range(1, HOSTS + 1)))
    env = {**os.environ, "STATGRID_HOME": str(home), "STATGRID_CONFIG": str(home / "grid.toml")}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    if trace is not None:
        env[hoptrace.ENV] = str(trace)
    subprocess.run(STATGRID + ["grid", "up", "--detach"], env=env, check=True, cwd=code)
    return GridClient(load_config(home / "grid.toml", env)), env


def export_revision(rev: str) -> Path:
    """The source tree of git revision `rev`, exported to a temporary directory (no worktree)."""
    repo = Path(__file__).resolve().parent.parent
    tree = Path(tempfile.mkdtemp(prefix="statgrid-bench-before-"))
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", rev, "statgrid"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def grid_cpu_s(env: dict) -> float:
    """CPU seconds (user + system) used so far by a grid's daemons: the master and every process
    below it (engine, workers, launchers, monitors); the jobs' own time is not counted."""
    import psutil

    pid = json.loads((Path(env["STATGRID_HOME"]) / "grid" / "master.json").read_text())["pid"]
    total = 0.0
    master = psutil.Process(pid)
    for proc in [master, *master.children(recursive=True)]:
        try:
            if proc.name() == "sleep":
                continue
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def compare_before(args) -> None:
    """REV's code, this code and xargs -P 8, interleaved per run (order rotating)."""
    ideal = args.jobs * args.sleep / (HOSTS * SLOTS)
    tree = export_revision(args.before)
    sides = ("before", "after")
    labels = {"before": f"before ({args.before})", "after": "after (this tree)"}
    grids: dict[str, tuple[GridClient, dict]] = {}
    res = {side: {"vs_ideal": [], "vs_xargs": [], "gap_median_ms": [], "gap_p95_ms": [], "gaps_ms": [],
                  "latency_ms": [], "cpu_ms_per_job": [], "hops": {name: [] for name, _ in HOPS}} for side in sides}
    xargs: list[float] = []
    traces = {side: tree / f"hoptrace-{side}.txt" for side in sides} if args.trace else {}
    try:
        grids["before"] = grid_up(code=tree, trace=traces.get("before"))
        grids["after"] = grid_up(trace=traces.get("after"))
        for side in sides:
            run_latency(grids[side][0], 5)                 # warm: launchers, imports, first connections
        for i in range(args.runs):
            order = ("before", "after", "xargs")[i % 3:] + ("before", "after", "xargs")[:i % 3]
            made: dict[str, float] = {}
            for side in order:
                if side == "xargs":
                    xargs.append(run_xargs(args.jobs, args.sleep))
                    continue
                cpu_s = grid_cpu_s(grids[side][1])
                r = run_statgrid(grids[side][0], args.jobs, args.sleep)
                res[side]["cpu_ms_per_job"].append((grid_cpu_s(grids[side][1]) - cpu_s) * 1000 / args.jobs)
                gaps = [x * 1000 for x in r["gaps_s"]]
                made[side] = r["makespan_s"]
                res[side]["vs_ideal"].append(r["makespan_s"] / ideal)
                res[side]["gap_median_ms"].append(statistics.median(gaps))
                res[side]["gap_p95_ms"].append(percentile(gaps, 0.95))
                res[side]["gaps_ms"] += gaps
                for name in res[side]["hops"]:
                    res[side]["hops"][name] += r["hops_s"][name]
                res[side]["latency_ms"].append(statistics.median(run_latency(grids[side][0], args.latency_jobs)) * 1000)
            for side in sides:
                res[side]["vs_xargs"].append(made[side] / xargs[-1])
            print(f"run {i + 1}: xargs {xargs[-1]:.3f} s, " + ", ".join(
                f"{s} {made[s]:.3f} s (refill median {res[s]['gap_median_ms'][-1]:.1f} ms)" for s in sides), flush=True)
    finally:
        for _, env in grids.values():
            subprocess.run(STATGRID + ["grid", "down"], env=env, cwd=env.get("PYTHONPATH"))
    print(f"\n{args.jobs} × sleep {args.sleep} s on {HOSTS} hosts × {SLOTS} slots; ideal makespan {ideal:.2f} s; "
          f"load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"makespan xargs -P {HOSTS * SLOTS}: {fmt_stat(xargs)} s")
    for key, name, digits, goal in (("vs_ideal", "makespan / ideal", 3, "goal ≤ 1.03"),
                                    ("vs_xargs", "makespan / xargs", 3, "goal ≤ 1.01"),
                                    ("gap_median_ms", "refill gap median, ms", 1, "goal ≤ 10 ms"),
                                    ("gap_p95_ms", "refill gap p95, ms", 1, ""),
                                    ("latency_ms", f"submit→start on an idle grid, median of {args.latency_jobs}, ms", 1,
                                     "goal ≤ 20 ms"),
                                    ("cpu_ms_per_job", "CPU of the grid's daemons per job of the batch, ms", 2, "")):
        print(f"{name}:  ({goal})" if goal else f"{name}:")
        for side in sides:
            ratio = "" if side == "before" else "   after/before " + fmt_stat(
                [b / a for a, b in zip(res["before"][key], res[side][key])], 3)
            print(f"  {labels[side]:24} {fmt_stat(res[side][key], digits)}{ratio}")
    for side in sides:
        g = res[side]["gaps_ms"]
        print(f"{labels[side]}: all {len(g)} refills: median {statistics.median(g):.1f} ms, p95 {percentile(g, 0.95):.1f} "
              "ms; by hop:")
        print_hops(res[side]["hops"], "    ")
    for side, path in traces.items():
        steps = hoptrace.refill_hops(str(path)) if path.exists() else {}
        print(f"{labels[side]}: the refill in steps (hop trace, {len(next(iter(steps.values()), []))} refills), "
              "median / p90 ms:" if any(steps.values()) else f"{labels[side]}: no hop trace (its code writes none)")
        for name, ms in steps.items():
            if ms:
                print(f"    {statistics.median(ms):6.2f} / {percentile(ms, 0.9):6.2f}  {name}")
    if args.json:
        args.json.write_text(json.dumps({"ideal_s": ideal, "before": args.before, "xargs_s": stat_dict(xargs), **{
            f"{key}_{side}": stat_dict(res[side][key]) for side in sides
            for key in ("vs_ideal", "vs_xargs", "gap_median_ms", "gap_p95_ms", "latency_ms", "cpu_ms_per_job")}},
                                          indent=1))


def compare_tls(args) -> None:
    """TLS off and on, interleaved: makespan and submit→start per run on each side."""
    ideal = args.jobs * args.sleep / (HOSTS * SLOTS)
    grids: dict[str, tuple[GridClient, dict]] = {}
    res = {side: {"makespan_s": [], "vs_ideal": [], "latency_ms": []} for side in ("off", "on")}
    try:
        for side in ("off", "on"):
            grids[side] = grid_up(engine_tls=side == "on")
            run_latency(grids[side][0], 5)            # warm: launchers, imports, first connections
        for i in range(args.runs):
            for side in (("off", "on") if i % 2 == 0 else ("on", "off")):
                grid = grids[side][0]
                r = run_statgrid(grid, args.jobs, args.sleep)
                res[side]["makespan_s"].append(r["makespan_s"])
                res[side]["vs_ideal"].append(r["makespan_s"] / ideal)
                res[side]["latency_ms"].append(statistics.median(run_latency(grid, args.latency_jobs)) * 1000)
            print(f"run {i + 1}: " + ", ".join(f"TLS {s}: makespan {res[s]['makespan_s'][-1]:.3f} s, submit→start "
                                               f"{res[s]['latency_ms'][-1]:.1f} ms" for s in ("off", "on")), flush=True)
    finally:
        for _, env in grids.values():
            subprocess.run(STATGRID + ["grid", "down"], env=env)
    report_sides(args, ideal, res, {"off": "TLS off", "on": "TLS on"}, "off",
                 f"{args.jobs} × sleep {args.sleep} s on {HOSTS} hosts × {SLOTS} slots; ideal makespan {ideal:.2f} s; "
                 f"submit→start: median of {args.latency_jobs} jobs per run on an idle grid",
                 "goals with TLS on: submit→start median ≤ 20 ms, makespan ≤ 1.05× ideal")


METRICS = (("makespan", "makespan_s", "s", 3), ("makespan / ideal", "vs_ideal", "", 3),
           ("submit→start", "latency_ms", "ms", 1))


def report_sides(args, ideal: float, res: dict, labels: dict[str, str], base: str, header: str, goal: str,
                 **extra) -> None:
    """Each metric per side as `median (min … max, N runs)`, with its per-run ratio to the base side;
    and the same in --json."""
    print(f"\n{header}")
    for name, key, unit, digits in METRICS:
        print(f"{name}:")
        for side, label in labels.items():
            ratio = "" if side == base else \
                f"   {side}/{base} {fmt_stat([b / a for a, b in zip(res[base][key], res[side][key])], 3)}"
            print(f"  {label:32} {fmt_stat(res[side][key], digits)} {unit}{ratio}")
    print(goal)
    if args.json:
        args.json.write_text(json.dumps({"ideal_s": ideal, **extra, **{
            f"{key}_{side}": stat_dict(res[side][key]) for side in res for key in res[side]}}, indent=1))


class BeforeClient:
    """The API of a master before issue 15: plain HTTP on 127.0.0.1, the user named in the body, a
    connection per call (as its client, urllib, made them)."""

    def __init__(self, port: int):
        self.port = port

    def _call(self, method: str, path: str, body=None):
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body),
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = json.loads(resp.read())
        finally:
            conn.close()
        if resp.status != 200:
            raise SystemExit(f"{method} {path}: {resp.status} {data}")
        return data

    def submit(self, argv, env=None):
        import getpass

        return self._call("POST", "/jobs", {"argv": argv, "cwd": os.getcwd(), "user": getpass.getuser(), "env": env})

    def wait(self, ids):
        out = []
        for i in ids:
            while True:
                job = self._call("GET", f"/jobs/{i}/wait?timeout_s=30")
                if job["state"] in ("DONE", "EXIT", "KILLED"):
                    break
            out.append(job)
        return out


def compare_auth(args) -> None:
    """before (REV, no auth) against this code on its local socket and over HTTPS with a token."""
    from statgrid.grid.interface.client import Remote

    ideal = args.jobs * args.sleep / (HOSTS * SLOTS)
    repo = Path(__file__).resolve().parent.parent
    tree = Path(tempfile.mkdtemp(prefix="statgrid-bench-before-")) / "src"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "-q", str(tree), args.auth], check=True)
    sides = ("before", "local", "remote")
    clients: dict[str, object] = {}
    envs: list[dict] = []
    res = {side: {"makespan_s": [], "vs_ideal": [], "latency_ms": []} for side in sides}
    try:
        home = Path(tempfile.mkdtemp(prefix="statgrid-bench-dispatch-"))
        port = free_port()
        (home / "grid.toml").write_text(f"[master]\nport = {port}\n" +
                                        "".join(f"[hosts.node{i}]\nslots = {SLOTS}\n" for i in range(1, HOSTS + 1)))
        env = {**os.environ, "STATGRID_HOME": str(home), "STATGRID_CONFIG": str(home / "grid.toml"),
               "PYTHONPATH": str(tree)}
        subprocess.run(STATGRID + ["grid", "up", "--detach"], env=env, check=True, cwd=tree)
        envs.append({**env, "cwd": str(tree)})
        clients["before"] = BeforeClient(port)
        grid, env = grid_up()
        envs.append(env)
        clients["local"] = grid
        token = grid.token_create("dispatch benchmark")
        ca = Path(env["STATGRID_HOME"]) / "grid" / "ca.pem"
        clients["remote"] = GridClient(grid.cfg, remote=Remote(url=f"https://localhost:{grid.cfg.master.port}",
                                                               token=token["token"], ca=str(ca)))
        for side in sides:
            run_latency(clients[side], 5)                 # warm: launchers, imports, first connections
        for i in range(args.runs):
            order = sides[i % 3:] + sides[:i % 3]
            for side in order:
                r = run_statgrid(clients[side], args.jobs, args.sleep)
                res[side]["makespan_s"].append(r["makespan_s"])
                res[side]["vs_ideal"].append(r["makespan_s"] / ideal)
                res[side]["latency_ms"].append(statistics.median(run_latency(clients[side], args.latency_jobs)) * 1000)
            print(f"run {i + 1}: " + ", ".join(f"{s}: makespan {res[s]['makespan_s'][-1]:.3f} s, submit→start "
                                               f"{res[s]['latency_ms'][-1]:.1f} ms" for s in sides), flush=True)
    finally:
        for env in envs:
            cwd = env.pop("cwd", None)
            subprocess.run(STATGRID + ["grid", "down"], env=env, cwd=cwd)
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)])
    report_sides(args, ideal, res, {"before": f"before ({args.auth})", "local": "local socket, engine TLS",
                                    "remote": "HTTPS + token, engine TLS"}, "before",
                 f"{args.jobs} × sleep {args.sleep} s on {HOSTS} hosts × {SLOTS} slots; ideal makespan {ideal:.2f} s; "
                 f"submit→start: median of {args.latency_jobs} jobs per run on an idle grid",
                 "goals with authentication and TLS on: submit→start median ≤ 20 ms, makespan ≤ 1.05× ideal",
                 before=args.auth)

def remote_client_run(args) -> None:
    """--as-remote-client: one run of the batch and the latency jobs through HTTPS (run by --netns
    inside the client host's namespace); prints the figures as JSON."""
    from statgrid.config import load_config as _load
    from statgrid.grid.interface.client import Remote

    grid = GridClient(_load(None, {"STATGRID_HOME": tempfile.mkdtemp()}),
                      remote=Remote(url=args.as_remote_client, token=os.environ["STATGRID_TOKEN"],
                                    ca=os.environ["STATGRID_CA"]))
    if args.runs == 0:
        run_latency(grid, 5)                              # warm
        return
    r = run_statgrid(grid, args.jobs, args.sleep)
    lat = run_latency(grid, args.latency_jobs)
    print(json.dumps({"makespan_s": r["makespan_s"], "latency_ms": statistics.median(lat) * 1000,
                      "hosts": sorted({h for h in r["by_host"]})}))


def compare_netns(args) -> None:
    """A grid across namespaces (client on its own host, HTTPS) beside the same grid on loopback."""
    repo = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(repo))
    from tests.support.netns import Network

    nodes, slots = ("node1", "node2", "node3"), 2
    ideal = args.jobs * args.sleep / (len(nodes) * slots)
    res = {side: {"makespan_s": [], "vs_ideal": [], "latency_ms": []} for side in ("loopback", "netns")}
    with Network(["grid1", *nodes, "client"]) as net:
        root = Path(tempfile.mkdtemp(prefix="statgrid-bench-netns-"))
        home = root / "home"
        master_ip = net.ip("grid1")
        (root / "grid.toml").write_text(
            f'[master]\nport = 8642\nlisten = "{master_ip}"\nnames = ["{master_ip}"]\n'
            + "".join(f"[hosts.{n}]\nslots = {slots}\njoins = true\n" for n in nodes) + "[monitor]\nenabled = false\n")
        env = {**os.environ, "STATGRID_HOME": str(home), "STATGRID_CONFIG": str(root / "grid.toml")}
        node_procs = []
        loop_env = None
        try:
            subprocess.run(net.argv("grid1", STATGRID + ["grid", "up", "--detach"]), env=env, check=True)
            for n in nodes:
                node_procs.append(net.popen(n, STATGRID + ["node", "up", "--name", n], env=env,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            for _ in range(240):
                hosts = json.loads(subprocess.run(net.argv("grid1", STATGRID + ["hosts", "--json"]), env=env,
                                                  capture_output=True, text=True).stdout or "[]")
                if sum(h["state"] == "ok" for h in hosts) == len(nodes):
                    break
                time.sleep(0.5)
            token = subprocess.run(net.argv("grid1", STATGRID + ["token", "create", "--print"]), env=env,
                                   capture_output=True, text=True, check=True).stdout.strip()
            client_env = {k: v for k, v in os.environ.items() if not k.startswith("STATGRID_")}
            client_env.update(STATGRID_TOKEN=token, STATGRID_CA=str(home / "grid" / "ca.pem"))
            client = [sys.executable, str(Path(__file__).resolve()), "--as-remote-client",
                      f"https://{master_ip}:8642", "--jobs", str(args.jobs), "--sleep", str(args.sleep),
                      "--latency-jobs", str(args.latency_jobs)]

            def remote(runs: int) -> dict | None:
                done = subprocess.run(net.argv("client", client + ["--runs", str(runs)]), env=client_env,
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    raise SystemExit(f"the client host's run failed: {done.stderr[-2000:]}")
                return json.loads(done.stdout) if runs else None

            # loopback: the same hosts and slots, embedded on this machine, the CLI's socket
            loop_home = Path(tempfile.mkdtemp(prefix="statgrid-bench-loop-"))
            (loop_home / "grid.toml").write_text(f"[master]\nport = {free_port()}\n" + "".join(
                f"[hosts.{n}]\nslots = {slots}\n" for n in nodes) + "[monitor]\nenabled = false\n")
            loop_env = {**os.environ, "STATGRID_HOME": str(loop_home), "STATGRID_CONFIG": str(loop_home / "grid.toml")}
            subprocess.run(STATGRID + ["grid", "up", "--detach"], env=loop_env, check=True)
            local = GridClient(load_config(loop_home / "grid.toml", loop_env))
            remote(0)
            run_latency(local, 5)
            for i in range(args.runs):
                for side in (("loopback", "netns") if i % 2 == 0 else ("netns", "loopback")):
                    if side == "netns":
                        r = remote(1)
                        makespan, latency = r["makespan_s"], r["latency_ms"]
                    else:
                        makespan = run_statgrid(local, args.jobs, args.sleep)["makespan_s"]
                        latency = statistics.median(run_latency(local, args.latency_jobs)) * 1000
                    res[side]["makespan_s"].append(makespan)
                    res[side]["vs_ideal"].append(makespan / ideal)
                    res[side]["latency_ms"].append(latency)
                print(f"run {i + 1}: " + ", ".join(f"{s}: makespan {res[s]['makespan_s'][-1]:.3f} s, submit→start "
                                                   f"{res[s]['latency_ms'][-1]:.1f} ms" for s in res), flush=True)
        finally:
            if loop_env is not None:
                subprocess.run(STATGRID + ["grid", "down"], env=loop_env)
            subprocess.run(net.argv("grid1", STATGRID + ["grid", "down"]), env=env)
            for proc in node_procs:
                proc.terminate()
                proc.wait(30)
    report_sides(args, ideal, res, {"loopback": "loopback (socket)", "netns": "namespaces (client host, HTTPS)"},
                 "loopback", f"{args.jobs} × sleep {args.sleep} s on {len(nodes)} hosts × {slots} slots; ideal "
                 f"makespan {ideal:.2f} s; submit→start: median of {args.latency_jobs} jobs per run on an idle grid",
                 "goals: makespan ≤ 1.05× ideal, submit→start median ≤ 20 ms")

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=144)
    ap.add_argument("--sleep", type=float, default=0.5)
    ap.add_argument("--latency-jobs", type=int, default=50)
    ap.add_argument("--tls", action="store_true", help="compare the engine's TLS on and off (issue 15)")
    ap.add_argument("--auth", metavar="REV", help="before (REV's code) against local socket and HTTPS+token (issue 15)")
    ap.add_argument("--netns", action="store_true", help="a grid across network namespaces beside loopback "
                    "(issue 16; root)")
    ap.add_argument("--before", metavar="REV", help="this code against git revision REV's, and xargs, interleaved "
                    "(issue 24)")
    ap.add_argument("--trace", action="store_true", help="with --before: the refill in finer steps, from a hop "
                    "trace each grid writes (statgrid/grid/execution/hoptrace.py)")
    ap.add_argument("--as-remote-client", metavar="URL", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    if args.as_remote_client:
        remote_client_run(args)
        return
    if args.netns:
        compare_netns(args)
        return
    if args.auth:
        compare_auth(args)
        return
    if args.tls:
        compare_tls(args)
        return
    if args.before:
        compare_before(args)
        return

    grid, env = grid_up()
    ideal = args.jobs * args.sleep / (HOSTS * SLOTS)
    res: dict[str, list] = {"statgrid_s": [], "xargs_s": [], "vs_ideal": [], "vs_xargs": [], "gaps_s": [],
                            "max_running_per_host": []}
    hops: dict[str, list[float]] = {name: [] for name, _ in HOPS}
    try:
        run_latency(grid, 5)                        # warm: launchers, imports, first connections
        for i in range(args.runs):
            order = ("statgrid", "xargs") if i % 2 == 0 else ("xargs", "statgrid")
            for side in order:
                if side == "statgrid":
                    r = run_statgrid(grid, args.jobs, args.sleep)
                    res["statgrid_s"].append(r["makespan_s"])
                    res["gaps_s"] += r["gaps_s"]
                    for name in hops:
                        hops[name] += r["hops_s"][name]
                    res["max_running_per_host"].append(r["max_running_per_host"])
                else:
                    res["xargs_s"].append(run_xargs(args.jobs, args.sleep))
            res["vs_ideal"].append(res["statgrid_s"][-1] / ideal)
            res["vs_xargs"].append(res["statgrid_s"][-1] / res["xargs_s"][-1])
            print(f"run {i + 1}: statgrid {res['statgrid_s'][-1]:.3f} s, xargs {res['xargs_s'][-1]:.3f} s",
                  flush=True)
        latency = run_latency(grid, args.latency_jobs)
        kills = [x * 1000 for x in run_kills(grid, 20)]
    finally:
        subprocess.run(STATGRID + ["grid", "down"], env=env)

    ms = [x * 1000 for x in latency]
    gaps = [x * 1000 for x in res["gaps_s"]]
    print(f"\n{args.jobs} × sleep {args.sleep} s on {HOSTS} hosts × {SLOTS} slots; ideal makespan {ideal:.2f} s")
    print(f"makespan statgrid     {fmt_stat(res['statgrid_s'])} s")
    print(f"makespan xargs -P {HOSTS * SLOTS}   {fmt_stat(res['xargs_s'])} s")
    print(f"statgrid / ideal      {fmt_stat(res['vs_ideal'])}   (goal ≤ 1.03)")
    print(f"statgrid / xargs      {fmt_stat(res['vs_xargs'])}   (goal ≤ 1.01)")
    print(f"submit→start, idle grid: median {statistics.median(ms):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms "
          f"({len(ms)} jobs; goal: median ≤ 20 ms)")
    print(f"slot refill gap in the batch: median {statistics.median(gaps):.1f} ms, p95 {percentile(gaps, 0.95):.1f} ms "
          f"({len(gaps)} refills)")
    print_hops(hops)
    print(f"kill → KILLED: median {statistics.median(kills):.1f} ms, max {max(kills):.1f} ms ({len(kills)} kills; "
          "goal ≤ 100 ms)")
    print(f"most jobs at once on one host: {max(res['max_running_per_host'])} (slots {SLOTS})")
    if args.json:
        args.json.write_text(json.dumps({
            "ideal_s": ideal, "statgrid_s": stat_dict(res["statgrid_s"]), "xargs_s": stat_dict(res["xargs_s"]),
            "vs_ideal": stat_dict(res["vs_ideal"]), "vs_xargs": stat_dict(res["vs_xargs"]),
            "latency_ms": {"median": statistics.median(ms), "p95": percentile(ms, 0.95), "n": len(ms)},
            "kill_ms": {"median": statistics.median(kills), "max": max(kills), "n": len(kills)},
            "refill_gap_ms": {"median": statistics.median(gaps), "p95": percentile(gaps, 0.95), "n": len(gaps)},
            "refill_hops_ms": {name: {"median": statistics.median(v) * 1000, "p95": percentile(v, 0.95) * 1000,
                                      "n": len(v)} for name, v in hops.items() if v},
        }, indent=1))


if __name__ == "__main__":
    main()
