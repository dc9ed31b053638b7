"""Web console under load (issue 17, "Measure"): 10,000 jobs in the store and 20 viewers connected.

A real grid (`grid up --detach`, embedded engine, 4 hosts × 2 slots, the monitor on at its default
1 s, the API on loopback over HTTPS with the grid's CA — or plain HTTP with --http). Before it
starts, the store gets --jobs finished jobs (DONE/EXIT, 50 users, 3 queues, plausible submit /
start / end times, rusage and the submit/dispatch/start/finish history of each), written with
statgrid's JobStore as a restarted master finds them. Once it serves, 8 `sleep 600` fill the slots
and 50 more wait (PEND), all through the API with a token (Authorization: Bearer, as every request
here), so the live views have content.

The figures are taken once the master has been up --warm-s (default 600 s): the grid and host
views carry each host's last 600 monitor samples (the console's ring: 10 minutes at 1 s), so a
younger master answers them smaller and faster than a master in service does.

Viewers are real streams: each loads its page (GET /console/<view>) and opens the
`sse-connect` stream that page names, as a browser does, and reads it line by line in a thread of
its own (never a whole response). Default mix of 20: 8 on jobs, 6 on grid, 3 on queues, 3 on one
running job (scaled to --viewers). Each run, with them connected:

  latency     every page and the JSON behind it (grid, queues, jobs [unfinished; all 10,000
              newest first; all sorted by run time; all, last page; one user's], a running job,
              a finished job, a host, results): --requests sequential GETs each on one
              keep-alive connection (opened and warmed before timing; a browser keeps its
              connection too; one the master closes is reopened and the request sent again,
              both tries in its time, and counted); p50 and p99 in ms per endpoint;
  visibility  --trials times: submit a `sleep 600` (it waits: the slots are full) and time, from
              just before the submit call (statgrid's Python client as a remote one: token, HTTPS), its
              arrival in every viewer that shows it: `job-new` with its row in each jobs viewer,
              `grid-summary` in each grid viewer, `queues` in each queues viewer; then kill a
              running job (not the one the job viewers watch) and time its `job-<ID>` fragment
              showing KILLED in each jobs viewer (a pending job then takes the slot, so the
              number of running and pending jobs stays the same). Per trial the slowest viewer;
  CPU         the master's utime+stime (/proc/<pid>/stat, pid from grid/master.json) over
              --cpu-s seconds with the 20 viewers idle (nothing changes: the jobs sleep; monitor
              samples still flow to the grid viewers) and over --cpu-s with 0 viewers,
              interleaved (20, 0 in even runs; 0, 20 in odd), as % of one core.

Printed as median (min … max, N runs) over the runs; visibility over all trials, with the worst.
Goals (issue 17): p99 < 100 ms for every page and JSON; a change visible in every viewer within
1 s; master CPU with 20 idle viewers < 5 % of a core. At the end all jobs are killed, the grid
goes down, and no process of it may be left (checked by the grid home in /proc/*/environ and
cmdline).

    .venv/bin/python benchmarks/console.py [--runs 5] [--viewers 20] [--jobs 10000] [--requests 200]
                                           [--trials 10] [--cpu-s 30] [--warm-s 600] [--http]
                                           [--json FILE]
"""
from __future__ import annotations

import argparse
import html
import http.client
import json
import os
import random
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat, free_port, percentile, render_rows, rotated, stat_dict, summarize  # noqa: E402
from _gridprocs import cpu_pct, leftovers  # noqa: E402

from statgrid.config import load_config  # noqa: E402
from statgrid.grid.interface.client import GridClient, Remote  # noqa: E402

HOSTS, SLOTS = 4, 2
QUEUES = {"normal": 30, "short": 50, "long": 10}
USERS = ["root"] + [f"user{i:02d}" for i in range(1, 50)]      # root: finished jobs whose page shows files
PENDING = 50
STATGRID = [sys.executable, "-m", "statgrid"]
GOAL_P99_MS, GOAL_VISIBLE_S, GOAL_CPU_PCT = 100.0, 1.0, 5.0
WAIT_EVENT_S = 10.0


# ---------------------------------------------------------------------------- the store
def fill_store(home: Path, n_jobs: int, seed: int = 17) -> dict:
    """n_jobs finished jobs over the past week, with their histories, in one transaction."""
    from statgrid.job.record import Job, JobState, to_row
    from statgrid.grid.master.store import JobStore

    rng = random.Random(seed)
    now = time.time()
    env_base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "SHELL": "/bin/bash", "TERM": "xterm",
                "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "TZ": "UTC",
                "MODULEPATH": "/etc/modulefiles:/usr/share/modulefiles:/opt/modules/all",
                "LS_COLORS": "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01" * 4}
    store = JobStore(home / "grid" / "jobs.db")
    rows, events = [], []
    first_root_done = None
    try:
        for i in range(1, n_jobs + 1):
            user = rng.choice(USERS)
            queue = rng.choices(list(QUEUES), weights=(6, 3, 1))[0]
            submit = now - 7 * 86400 + (i / n_jobs) * (7 * 86400 - 3600) + rng.uniform(0, 30)
            start = submit + rng.expovariate(1 / 20.0)
            run = min(rng.lognormvariate(4.2, 1.3), 6 * 3600)        # median ~ 67 s, a tail of hours
            end = start + run
            failed = rng.random() < 0.15
            sig = 9 if failed and rng.random() < 0.3 else None
            code = None if sig else (rng.choice((1, 2, 137)) if failed else 0)
            host = f"node{rng.randint(1, HOSTS)}"
            cpu = run * rng.uniform(0.3, 0.98)
            rusage = {"user_cpu_s": round(cpu * 0.9, 3), "sys_cpu_s": round(cpu * 0.1, 3),
                      "max_rss_bytes": rng.randint(20, 4000) * 2**20, "page_faults": rng.randint(0, 50),
                      "page_reclaims": rng.randint(1000, 500000), "voluntary_ctx_switches": rng.randint(10, 10**5),
                      "involuntary_ctx_switches": rng.randint(10, 10**4), "block_input_ops": rng.randint(0, 10**6),
                      "block_output_ops": rng.randint(0, 10**6), "logical_read_bytes": rng.randint(0, 10**10),
                      "logical_write_bytes": rng.randint(0, 10**9), "read_bytes": rng.randint(0, 10**10),
                      "write_bytes": rng.randint(0, 10**9)}
            part = rng.randint(1, 400)
            job = Job(id=i, user=user, queue=queue, name=f"{rng.choice(('sales', 'claims', 'risk', 'panel'))}-{part}",
                      kind="command", argv=["python3", "analysis.py", f"--part={part}"],
                      cwd=f"/home/{user}/project", state=JobState.EXIT if failed else JobState.DONE, attempt=1,
                      host=host, submit_ts=submit, dispatch_ts=start - 0.004, start_ts=start, end_ts=end,
                      pid=rng.randint(1000, 4_000_000), exit_code=code, signal=sig,
                      exit_reason=(f"killed by signal {sig}" if sig else f"exit code {code}") if failed else None,
                      rusage=rusage, env={**env_base, "HOME": f"/home/{user}", "USER": user, "LOGNAME": user})
            row = to_row(job)
            rows.append(list(row.values()))
            events += [(i, 0, submit, "submit", None, None), (i, 1, start - 0.004, "dispatch", host, None),
                       (i, 1, start, "start", host, json.dumps({"pid": job.pid})),
                       (i, 1, end, "finish", host, json.dumps({"state": job.state.value, "reason": job.exit_reason}))]
            if first_root_done is None and user == "root" and not failed:
                first_root_done = i
        cols = list(to_row(job))
        with store.con:
            store.con.execute("BEGIN")
            store.con.executemany(f"INSERT INTO jobs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", rows)
            store.con.executemany("INSERT INTO job_events VALUES (?, ?, ?, ?, ?, ?)", events)
    finally:
        store.close()
    return {"finished_id": first_root_done or 1, "user": "user07"}


# ---------------------------------------------------------------------------- HTTP
class Api:
    """The master's TCP address with the token; connections to it (HTTPS with the grid's CA, or HTTP)."""

    def __init__(self, port: int, token: str, ca: Path | None):
        self.host, self.port, self.token = "127.0.0.1", port, token
        self.ctx = ssl.create_default_context(cafile=str(ca)) if ca is not None else None
        self.headers = {"Authorization": f"Bearer {token}"}

    @property
    def url(self) -> str:
        return f"{'https' if self.ctx else 'http'}://{self.host}:{self.port}"

    def connect(self, timeout: float | None = 60) -> http.client.HTTPConnection:
        if self.ctx is not None:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.ctx)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def get(self, conn: http.client.HTTPConnection, path: str) -> bytes:
        conn.request("GET", path, headers=self.headers)
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise SystemExit(f"GET {path}: {resp.status} {body[:300]!r}")
        return body

    def get_once(self, path: str) -> bytes:
        conn = self.connect()
        try:
            return self.get(conn, path)
        finally:
            conn.close()


def stream_path(page_html: bytes) -> str:
    """The stream a page opens (its `sse-connect`), as a browser reads the attribute."""
    m = re.search(rb'sse-connect="([^"]+)"', page_html)
    if not m:
        raise SystemExit("a console page without sse-connect")
    return html.unescape(m.group(1).decode())


class Viewer(threading.Thread):
    """One console page's stream, read line by line: each event's name, data and arrival time."""

    def __init__(self, api: Api, kind: str, page: str):
        super().__init__(name=f"viewer-{kind}", daemon=True)
        self.api, self.kind, self.page = api, kind, page
        self.events: list[tuple[float, str, str]] = []     # (perf_counter at its blank line, name, data); not samples
        self.samples = 0
        self.keepalives = 0
        self.error: str | None = None
        self.ready = threading.Event()
        self.cond = threading.Condition()
        self.conn: http.client.HTTPConnection | None = None
        self.closing = False

    def run(self) -> None:
        try:
            self.path = stream_path(self.api.get_once(self.page))
            self.conn = self.api.connect(timeout=None)
            self.conn.request("GET", self.path, headers={**self.api.headers, "Accept": "text/event-stream"})
            resp = self.conn.getresponse()
            if resp.status != 200:
                raise RuntimeError(f"{self.path}: {resp.status} {resp.read(300)!r}")
            name, data = None, []
            while True:
                line = resp.readline()
                if not line:
                    if not self.closing:
                        self.error = "the master closed the stream"
                    return
                t = time.perf_counter()
                line = line.rstrip(b"\n").decode()
                if line.startswith(":"):
                    self.keepalives += line != ": statgrid console"
                    self.ready.set()
                elif line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: ") or line == "data:":
                    data.append(line[6:])
                elif line == "" and name is not None:
                    if name == "sample":
                        self.samples += 1
                    else:
                        with self.cond:
                            self.events.append((t, name, "\n".join(data)))
                            self.cond.notify_all()
                    name, data = None, []
        except Exception as exc:                       # noqa: BLE001 — reported by the run
            if not self.closing:
                self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.ready.set()

    def mark(self) -> int:
        with self.cond:
            return len(self.events)

    def wait_for(self, since: int, pred, timeout_s: float = WAIT_EVENT_S) -> float | None:
        """Arrival time of the first event from index `since` on with pred(name, data), or None."""
        deadline = time.perf_counter() + timeout_s
        i = since
        with self.cond:
            while True:
                while i < len(self.events):
                    t, name, data = self.events[i]
                    if pred(name, data):
                        return t
                    i += 1
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def close(self) -> None:
        self.closing = True
        conn = self.conn
        if conn is not None and conn.sock is not None:
            try:
                socket.socket.shutdown(conn.sock, socket.SHUT_RDWR)   # the plain socket's: unblocks the read
            except OSError:
                pass
        self.join(10)
        if conn is not None:
            conn.close()


def viewer_mix(n: int) -> list[str]:
    """8 jobs, 6 grid, 3 queues, 3 job out of 20, scaled to n."""
    base = {"jobs": 8, "grid": 6, "queues": 3, "job": 3}
    counts = {k: v * n // 20 for k, v in base.items()}
    for k in base:                                      # the rounding's remainder, jobs first
        if sum(counts.values()) < n:
            counts[k] += 1
    return [k for k, c in counts.items() for _ in range(c)]


def connect_viewers(api: Api, n: int, watched_job: int) -> list[Viewer]:
    pages = {"jobs": "/console/jobs", "grid": "/console/grid", "queues": "/console/queues",
             "job": f"/console/jobs/{watched_job}"}
    viewers = [Viewer(api, kind, pages[kind]) for kind in viewer_mix(n)]
    for v in viewers:
        v.start()
    for v in viewers:
        if not v.ready.wait(60) or v.error:
            raise SystemExit(f"viewer {v.kind} did not connect: {v.error}")
    return viewers


def close_viewers(viewers: list[Viewer]) -> list[str]:
    errors = [f"{v.kind}: {v.error}" for v in viewers if v.error]
    for v in viewers:
        v.close()
    return errors


# ---------------------------------------------------------------------------- measurements
def endpoints(running_id: int, finished_id: int, user: str, n_jobs: int) -> list[tuple[str, str]]:
    last = max(0, (n_jobs - 1) // 100 * 100)
    views = [("grid", "grid"), ("queues", "queues"), ("jobs (unfinished)", "jobs"),
             ("jobs all, newest", "jobs?state=all"), ("jobs all by run time", "jobs?state=all&sort=run&order=desc"),
             ("jobs all, last page", f"jobs?state=all&offset={last}"), (f"jobs of {user}", f"jobs?state=all&user={user}"),
             ("job (running)", f"jobs/{running_id}"), ("job (finished)", f"jobs/{finished_id}"),
             ("host", "hosts/node1"), ("results", "results")]
    out = []
    for label, rel in views:
        out += [(f"page {label}", f"/console/{rel}"), (f"JSON {label}", f"/console/api/{rel}")]
    return out


def latency(api: Api, path: str, n: int) -> tuple[list[float], int]:
    """n sequential GETs on one keep-alive connection (warmed by 3 untimed ones): (ms each, drops).
    A connection the master closes under a request (RemoteDisconnected, reset) is opened anew and
    the request sent again, as a browser does; that request's time includes both tries."""
    conn = api.connect()
    drops = 0

    def get() -> None:
        nonlocal conn, drops
        try:
            api.get(conn, path)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            drops += 1
            conn.close()
            conn = api.connect()
            api.get(conn, path)
    try:
        for _ in range(3):
            get()
        drops = 0
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            get()
            out.append((time.perf_counter() - t0) * 1000)
        return out, drops
    finally:
        conn.close()


def running_jobs(grid: GridClient) -> list[dict]:
    return grid.jobs(states=["RUN"])


def settle(grid: GridClient, want_running: int, timeout_s: float = 30) -> None:
    """Until the slots are full again (a pending job took the killed one's), then a quiet moment."""
    deadline = time.monotonic() + timeout_s
    while len(running_jobs(grid)) < want_running and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)


def trial(grid: GridClient, viewers: list[Viewer], watched: int, job_env: dict) -> dict:
    """One submit and one kill; per viewer kind the slowest arrival (s), None when one never arrived."""
    by_kind: dict[str, list[Viewer]] = {}
    for v in viewers:
        by_kind.setdefault(v.kind, []).append(v)
    out: dict[str, float | None] = {}

    marks = {v: v.mark() for v in viewers}
    t0 = time.perf_counter()
    job_id = grid.submit(["sleep", "600"], env=job_env, name="visible")["id"]
    t_call = time.perf_counter() - t0
    row = f'id="job-{job_id}"'
    preds = {"jobs": lambda n, d: n == "job-new" and row in d,
             "grid": lambda n, d: n == "grid-summary",
             "queues": lambda n, d: n == "queues"}
    for kind, pred in preds.items():
        times = [v.wait_for(marks[v], pred) for v in by_kind.get(kind, [])]
        if times:
            out[f"submit_{kind}"] = None if None in times else max(times) - t0
    out["submit_call"] = t_call

    victim = next(j for j in running_jobs(grid) if j["id"] != watched)
    marks = {v: v.mark() for v in viewers}
    t0 = time.perf_counter()
    grid.kill([victim["id"]])
    t_call = time.perf_counter() - t0
    name = f"job-{victim['id']}"
    first = [v.wait_for(marks[v], lambda n, d: n == name) for v in by_kind.get("jobs", [])]
    killed = [v.wait_for(marks[v], lambda n, d: n == name and "s-KILLED" in d) for v in by_kind.get("jobs", [])]
    if killed:
        out["kill_first"] = None if None in first else max(first) - t0
        out["kill_jobs"] = None if None in killed else max(killed) - t0
    out["kill_call"] = t_call
    return out


# ---------------------------------------------------------------------------- output
def fmt_trials(values: list[float | None], scale: float = 1000.0, unit: str = "ms") -> str:
    seen = [v * scale for v in values if v is not None]
    missing = len(values) - len(seen)
    s = summarize(seen)
    if s is None:
        return "—"
    text = f"{s.median:.1f} ({s.min:.1f} … {s.max:.1f}, {s.n} trials) {unit}, worst {s.max:.1f} {unit}"
    return text + (f"; NOT SEEN in {missing} trials" if missing else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--viewers", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=10_000, help="finished jobs in the store")
    ap.add_argument("--requests", type=int, default=200, help="sequential GETs per endpoint per run")
    ap.add_argument("--trials", type=int, default=10, help="submit+kill visibility trials per run")
    ap.add_argument("--cpu-s", type=float, default=30.0, help="seconds of each CPU window")
    ap.add_argument("--warm-s", type=float, default=600.0,
                    help="measure only once the master is up this long: the grid and host views carry each host's "
                    "last 600 monitor samples (10 min at 1 s), so they reach their full size only then; 0: at once")
    ap.add_argument("--http", action="store_true", help="the API over plain HTTP (api_tls = false) instead of HTTPS")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="statgrid-bench-console-"))
    port = free_port()
    (home / "grid.toml").write_text(
        f"[master]\nport = {port}\napi_tls = {'false' if args.http else 'true'}\n"
        + "".join(f"[hosts.node{i}]\nslots = {SLOTS}\n" for i in range(1, HOSTS + 1))
        + "".join(f"[queues.{q}]\npriority = {p}\n" for q, p in QUEUES.items()))
    env = {**os.environ, "STATGRID_HOME": str(home), "STATGRID_CONFIG": str(home / "grid.toml")}
    cfg = load_config(home / "grid.toml", env)
    t0 = time.perf_counter()
    fixture = fill_store(home, args.jobs)
    print(f"store: {args.jobs:,} finished jobs written in {time.perf_counter() - t0:.1f} s", flush=True)
    subprocess.run(STATGRID + ["grid", "up", "--detach"], env=env, check=True)
    master_info = json.loads((home / "grid" / "master.json").read_text())
    master_pid = master_info["pid"]
    local = GridClient(cfg)
    token = local.token_create("console benchmark")["token"]
    api = Api(port, token, None if args.http else home / "grid" / "ca.pem")
    grid = GridClient(cfg, remote=Remote(url=api.url, token=token, ca=None if args.http else str(home / "grid" / "ca.pem")))
    # the jobs' environment names the grid home: the final check finds any job process left
    job_env = {"PATH": os.environ["PATH"], "STATGRID_BENCH_HOME": str(home)}

    eps: list[tuple[str, str]] = []
    lat = {}                                             # label → {"p50": [...], "p99": [...]}
    trials: list[dict] = []
    cpu = {0: [], args.viewers: []}
    viewer_errors: list[str] = []
    viewers: list[Viewer] = []
    stream_stats = []
    drops = [0] * args.runs
    ring: list[int] = []                                 # monitor samples per host in the views, per run
    try:
        ids = [grid.submit(["sleep", "600"], env=job_env, name=f"run-{i}")["id"] for i in range(HOSTS * SLOTS)]
        deadline = time.monotonic() + 60
        while len(running_jobs(grid)) < HOSTS * SLOTS:
            if time.monotonic() > deadline:
                raise SystemExit("the 8 sleep jobs did not all start in 60 s")
            time.sleep(0.1)
        for i in range(PENDING):
            grid.submit(["sleep", "600"], env=job_env, name=f"wait-{i}", queue=list(QUEUES)[i % len(QUEUES)])
        watched = ids[0]
        eps = endpoints(watched, fixture["finished_id"], fixture["user"], args.jobs)
        lat = {label: {"p50": [], "p99": []} for label, _ in eps}
        wait = master_info["started_ts"] + args.warm_s - time.time()
        if wait > 0:
            print(f"waiting {wait:.0f} s until the master has been up {args.warm_s:g} s (the views hold up to 600 s of samples)", flush=True)
        time.sleep(max(2.0, wait))
        for r in range(args.runs):
            ring.append(len(json.loads(api.get_once("/console/api/grid"))["charts"]["node1"][0]["data"][0]))
            viewers = connect_viewers(api, args.viewers, watched)
            time.sleep(2)
            for label, path in rotated(eps, r):
                ms, d = latency(api, path, args.requests)
                drops[r] += d
                lat[label]["p50"].append(percentile(ms, 0.5))
                lat[label]["p99"].append(percentile(ms, 0.99))
            print(f"run {r + 1}: latency done ({ring[-1]} samples per host in the grid view; {drops[r]} connections closed by the master under a request); p99 max {max(lat[l]['p99'][-1] for l, _ in eps):.1f} ms "
                  f"({max(eps, key=lambda e: lat[e[0]]['p99'][-1])[0]})", flush=True)
            for _ in range(args.trials):
                trials.append(trial(grid, viewers, watched, job_env))
                settle(grid, HOSTS * SLOTS)
            last = trials[-args.trials:]
            print(f"run {r + 1}: {args.trials} trials; slowest job-new {max((t.get('submit_jobs') or 99) for t in last) * 1000:.0f} ms, "
                  f"slowest KILLED {max((t.get('kill_jobs') or 99) for t in last) * 1000:.0f} ms", flush=True)
            time.sleep(2)
            for n in (args.viewers, 0) if r % 2 == 0 else (0, args.viewers):
                if n == 0 and viewers:
                    viewer_errors += close_viewers(viewers)
                    stream_stats += [(v.kind, v.samples, v.keepalives) for v in viewers]
                    viewers = []
                elif n and not viewers:
                    viewers = connect_viewers(api, args.viewers, watched)
                time.sleep(3)
                cpu[n].append(cpu_pct(master_pid, args.cpu_s))
                print(f"run {r + 1}: master CPU with {n:2d} viewers {cpu[n][-1]:.2f} % of a core", flush=True)
            if viewers:
                viewer_errors += close_viewers(viewers)
                stream_stats += [(v.kind, v.samples, v.keepalives) for v in viewers]
                viewers = []
    except BaseException:
        log = home / "grid" / "master.log"
        if log.exists():
            print("master.log, last lines:\n" + "\n".join(log.read_text(errors="replace").splitlines()[-30:]),
                  file=sys.stderr)
        raise
    finally:
        if viewers:
            close_viewers(viewers)
        try:
            left = [j["id"] for j in local.jobs()]
            if left:
                local.kill(left)
        except Exception as exc:                         # noqa: BLE001 — grid down kills them anyway
            print(f"killing the jobs: {exc}", file=sys.stderr)
        subprocess.run(STATGRID + ["grid", "down"], env=env)
        time.sleep(1)
        remaining = leftovers(home, {os.getpid()})
        shutil.rmtree(home, ignore_errors=True)

    # -- report ---------------------------------------------------------------------------------------
    scheme = "HTTP" if args.http else "HTTPS (grid CA)"
    print(f"\n{args.jobs:,} finished jobs in the store + {HOSTS * SLOTS} running + {PENDING} pending; "
          f"{HOSTS} hosts × {SLOTS} slots, monitor every 1 s; API {scheme} on loopback, Bearer token")
    kinds = viewer_mix(args.viewers)
    print(f"{args.viewers} viewers: " + ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))
          + f"; {args.runs} runs; monitor samples per host in the grid and host views: {', '.join(map(str, ring))}")
    print(f"\nlatency with {args.viewers} viewers connected: {args.requests} sequential GETs per endpoint per run, "
          "one keep-alive connection each; ms")
    rows = [["endpoint", "p50", "p99"]]
    for label, path in eps:
        rows.append([label, fmt_stat(lat[label]["p50"], 1), fmt_stat(lat[label]["p99"], 1)])
    print(render_rows(rows))
    print(f"keep-alive connections the master closed under a request (reopened, that request timed with both tries): "
          f"{', '.join(map(str, drops))} per run")
    keys = [("submit_jobs", "submit → job-new in every jobs viewer"),
            ("submit_grid", "submit → grid-summary in every grid viewer"),
            ("submit_queues", "submit → queues in every queues viewer"),
            ("kill_first", "kill → first job-<ID> in every jobs viewer"),
            ("kill_jobs", "kill → job-<ID> showing KILLED in every jobs viewer"),
            ("submit_call", "(the submit call itself)"), ("kill_call", "(the kill call itself)")]
    print(f"\nchange visible, slowest viewer per trial, from just before the API call ({len(trials)} trials):")
    print(render_rows([[label, fmt_trials([t.get(k) for t in trials])] for k, label in keys if any(k in t for t in trials)]))
    diff = [a - b for a, b in zip(cpu[args.viewers], cpu[0])]
    print(f"\nmaster CPU over {args.cpu_s:g} s windows, % of one core (interleaved):")
    print(render_rows([[f"{args.viewers} idle viewers", fmt_stat(cpu[args.viewers], 2)],
                       ["0 viewers", fmt_stat(cpu[0], 2)],
                       ["difference", fmt_stat(diff, 2)]]))
    if stream_stats:
        per = {}
        for kind, samples, keepalives in stream_stats:
            per.setdefault(kind, []).append((samples, keepalives))
        print("streams: " + "; ".join(f"{k}: {sum(s for s, _ in v) / len(v):.0f} samples, "
                                      f"{sum(c for _, c in v) / len(v):.1f} keep-alives per stream" for k, v in per.items()))
    print(f"viewer errors: {'; '.join(viewer_errors) or 'none'}")
    print(f"processes left after grid down: {'; '.join(remaining) or 'none'}")

    print("\ngoals (issue 17):")
    goal_rows = []
    for label, _ in eps:
        s = summarize(lat[label]["p99"])
        goal_rows.append([f"p99 {label}", f"{s.median:.1f} ms (worst run {s.max:.1f})", "< 100 ms",
                          "met" if s.median < GOAL_P99_MS else "NOT MET"])
    for k, label in keys[:5]:
        vals = [t.get(k) for t in trials if k in t]
        if not vals:
            continue
        worst = None if None in vals else max(vals)
        goal_rows.append([f"visible: {label}", "not seen in a trial" if worst is None else f"worst {worst * 1000:.0f} ms",
                          "< 1 s", "met" if worst is not None and worst < GOAL_VISIBLE_S else "NOT MET"])
    s = summarize(cpu[args.viewers])
    goal_rows.append([f"master CPU, {args.viewers} idle viewers", f"{s.median:.2f} % (max {s.max:.2f})", "< 5 %",
                      "met" if s.median < GOAL_CPU_PCT else "NOT MET"])
    print(render_rows(goal_rows))
    if args.json:
        args.json.write_text(json.dumps({
            "jobs": args.jobs, "viewers": args.viewers, "runs": args.runs, "scheme": scheme,
            "latency_ms": {label: {"p50": stat_dict(v["p50"]), "p99": stat_dict(v["p99"])} for label, v in lat.items()},
            "trials": trials, "cpu_pct": {"viewers": stat_dict(cpu[args.viewers]), "none": stat_dict(cpu[0]),
                                          "difference": stat_dict(diff)},
            "connections_closed": drops, "ring_samples": ring, "viewer_errors": viewer_errors, "left": remaining}, indent=1))


if __name__ == "__main__":
    main()
