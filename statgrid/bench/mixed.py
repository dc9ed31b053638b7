"""`statgrid bench mixed`: run a Mixed Analytics workload through the real grid and save a bundle.

Steps: start an embedded grid of `nodes` hosts (its home, job store and monitor series inside the
bundle) unless a running master is to be used; make the data the workload needs (datagen, through
the grid); submit the jobs on schedule — each session starts at its ramp offset and keeps up to
`concurrency` of its jobs in the grid, submitting the next when one ends; show live progress (jobs
PEND/RUN/DONE/EXIT, MB/s and CPU % of this machine); save the results bundle; print a summary.

The bundle (a directory, self-describing, what reports are built from):
    bundle.json     what ran: workload (workload.lang: the jobs' language, python or sas), scale, seed,
                    grid, start (of the run and of the workload,
                    after data generation), end, host facts, versions, the grid's [groups]
    workload.toml   the workload file as run
    inventory.json  the machine(s), the libraries' storage, the session options and the grid the run
                    ran on (statgrid/monitor/inventory.py)
    grid.toml       the grid's configuration (embedded grid)
    jobs.jsonl      one record per job: user, queue, session, order, template, its job file and language,
                    kind, user type, host, times,
                    state, rusage, and its steps' STIMER records
    grid/monitor/   the monitors' Parquet series (embedded grid)
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Callable

from statgrid.bench import inventory_hosts
from statgrid.monitor import inventory
from statgrid.bench import datagen
from statgrid.bench.workload import LANGS, Workload
from statgrid.config import toml_string
from statgrid.errors import StatgridError
from statgrid.job.jobdir import JobDir, owner_uid_of
from statgrid.job.lifecycle import FINISHED_NAMES

FINAL = FINISHED_NAMES


def free_port() -> int:
    """A TCP port free on loopback now (an embedded grid's API; tests and benchmarks use it too)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def node_cpus(nodes: int, cpus_per_node: int) -> list[tuple[int, ...]]:
    """CPUs of each embedded node: `cpus_per_node` of this process's CPUs each, dealt in order and
    wrapping round when there are fewer CPUs than nodes × cpus_per_node; 0 → every node shares all."""
    if cpus_per_node <= 0:
        return [()] * nodes
    have = sorted(os.sched_getaffinity(0))
    return [tuple(sorted({have[(i * cpus_per_node + k) % len(have)] for k in range(cpus_per_node)}))
            for i in range(nodes)]


def toml_path(path: str | os.PathLike) -> str:
    """A path as a TOML string, made absolute against the current directory: grid.toml reads a
    relative home against the file's own directory (and libraries against home), so a relative
    path written as given would name another place when read back (issue 14 item 2: `--out bundle`
    put the grid in bundle/bundle/grid)."""
    return toml_string(str(Path(path).absolute()), "path")


def grid_toml(cfg, home: Path, nodes: int, slots: int, port: int, memsize: str | None,
              cpus_per_node: int = 0, options: dict[str, str] | None = None) -> str:
    """An embedded grid of `nodes` hosts sharing the user's libraries (DATA is where datagen writes).
    Every path in it is absolute, so it means the same wherever the file is and whatever the cwd."""
    lines = ["[grid]", f"home = {toml_path(home)}", "", "[libraries]", f"data = {toml_path(cfg.libraries.data)}",
             f"work = {toml_path(cfg.libraries.work)}", f"util = {toml_path(cfg.libraries.util)}", ""]
    for name, lib in cfg.libnames.items():
        lines += [f"[libname.{name}]", f"path = {toml_path(lib.path)}", f"readonly = {str(lib.readonly).lower()}", ""]
    lines += ["[master]", f"port = {port}", "", "[monitor]", "enabled = true", 'interval = "1s"', ""]
    session = {**({"memsize": memsize} if memsize else {}), **(options or {})}    # -o name=value: every job's
    if session:
        lines += ["[session]"] + [f"{k} = {toml_string(v, '-o ' + k)}" for k, v in session.items()] + [""]
    for i, cpus in enumerate(node_cpus(nodes, cpus_per_node), start=1):
        lines += [f"[hosts.node{i}]", f"slots = {slots}"] + ([f"cpus = {list(cpus)}"] if cpus else []) + [""]
    return "\n".join(lines)


def host_facts() -> dict:
    mem = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    import duckdb
    import numpy
    return {"hostname": socket.gethostname(), "cpus": os.cpu_count(), "mem_bytes": mem,
            "kernel": platform.release(), "python": platform.python_version(), "duckdb": duckdb.__version__,
            "numpy": numpy.__version__, "machine": platform.machine()}


class _Live:
    """This machine's MB/s and CPU % between calls, from the monitor's own sampler."""

    def __init__(self):
        from statgrid.monitor.sampler import Sampler
        self._sampler = Sampler("bench")
        self._sampler.sample()

    def read(self) -> tuple[float | None, float | None]:
        from statgrid.monitor.sampler import is_counted

        tables = self._sampler.sample() or {}
        node = (tables.get("node") or [{}])[0]
        cpu = None
        if node.get("cpu_user_pct") is not None:
            cpu = node["cpu_user_pct"] + (node.get("cpu_system_pct") or 0)
        mbs = sum((r.get("read_bytes_per_s") or 0) + (r.get("write_bytes_per_s") or 0)
                  for r in tables.get("disk", []) if is_counted(r)) / 1e6      # a stacked device's bytes once
        return mbs, cpu


def run(cfg, workload: Workload, nodes: int | None = 4, slots: int = 2, out: Path | None = None,
        use_running: bool = False, memsize: str | None = None, echo: Callable[[str], None] = print,
        cpus_per_node: int = 0, lang: str = "python", options: dict[str, str] | None = None) -> Path:
    """Run `workload` with each job as its template's `lang` file (python: jobs/<name>.py, sas: the SAS
    twin jobs/<name>.sas); return the bundle directory. `options`: session options of every job (and of
    datagen: `-o bufsize=8k` writes the data in 8 KiB requests too), checked here."""
    if lang not in LANGS:
        raise StatgridError(f"--lang {lang!r} is not a job language; use one of {', '.join(LANGS)}.")
    cfg.session.with_overrides(options or {}, source="-o")         # a bad value fails before anything starts
    with _sigterm_as_interrupt():
        return _run(cfg, workload, nodes, slots, out, use_running, memsize, echo, cpus_per_node, lang, options)


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM (kill, a CI timeout) stops the embedded grid and the jobs like Ctrl-C does: the grid
    runs detached, so without this it would outlive us."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _run(cfg, workload: Workload, nodes: int | None, slots: int, out: Path | None, use_running: bool,
         memsize: str | None, echo: Callable[[str], None], cpus_per_node: int, lang: str = "python",
         options: dict[str, str] | None = None) -> Path:
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table

    from statgrid.config import load_config
    from statgrid.grid.interface import server
    from statgrid.grid.interface.batch import Batch
    from statgrid.grid.interface.client import GridClient

    stamp = time.strftime("%Y%m%d-%H%M%S")
    bundle = (Path(out) if out else cfg.home / "bench" / f"mixed-{workload.sessions}s-{stamp}").absolute()
    if bundle.exists() and any(bundle.iterdir()):
        raise StatgridError(f"--out {str(bundle)!r} exists and is not empty; give a new directory.")
    bundle.mkdir(parents=True, exist_ok=True)
    (bundle / "workload.toml").write_text(workload.text)
    own_grid = not use_running
    if own_grid:
        toml = grid_toml(cfg, bundle / "grid", nodes or 4, slots, free_port(), memsize, cpus_per_node, options)
        (bundle / "grid.toml").write_text(toml)
        gcfg = load_config(bundle / "grid.toml")
        pinned = f", {cpus_per_node} CPU(s) each" if cpus_per_node else ""
        echo(f"starting an embedded grid: {nodes} hosts × {slots} slots{pinned} (home {bundle / 'grid'})")
        try:
            server.start_detached(gcfg)
        except BaseException:                     # interrupted half-way: stop what did start
            server.stop(gcfg)
            raise
    else:
        gcfg = cfg
        if options:
            raise StatgridError("-o with --use-running: the running grid's grid.toml [session] sets the jobs' "
                                "options; set them there, or leave --use-running out.")
        if not server.running_master(cfg):
            raise StatgridError("--use-running: no grid master answers for this grid home; start one with "
                                "`statgrid grid up --detach`, or leave --use-running out for an embedded grid.")
    grid = GridClient(gcfg)
    batch = Batch(grid)                   # a job that fails is a result here: the others go on
    t_begin = time.time()
    submitted: dict[int, object] = {}
    states: dict[int, str] = {}
    try:
        # what the run ran on, written first so a run that fails still has it (monitor/inventory.py)
        inventory.write(bundle, inventory_hosts.for_run(gcfg, own_grid))
        datagen.run_all(gcfg, workload.scale, workload.seed, "data", echo=echo)
        env = {**os.environ, "STATGRID_BENCH_LIBRARY": "data", "STATGRID_BENCH_SCALE": repr(workload.scale),
               "STATGRID_BENCH_SEED": str(workload.seed)}
        if gcfg.source is not None:
            env["STATGRID_CONFIG"] = str(gcfg.source)
        plan = workload.schedule()
        queues = {s: [j for j in plan if j.session == s] for s in range(1, workload.sessions + 1)}
        running: dict[int, set[int]] = {s: set() for s in queues}
        live = _Live()
        t_workload = time.time()          # the workload's clock starts here: data generation is not in it
        t0 = time.monotonic()
        mbs = cpu = None
        last_sample = 0.0

        def view() -> Table:
            counts = {k: sum(1 for v in states.values() if v == k) for k in ("PEND", "RUN", "DONE", "EXIT")}
            counts["PEND"] += len(plan) - len(states)
            t = Table(title=f"{workload.name}: {workload.sessions} sessions, {len(plan)} jobs")
            for col in ("elapsed", "PEND", "RUN", "DONE", "EXIT", "MB/s", "CPU %"):
                t.add_column(col, justify="right")
            t.add_row(f"{time.monotonic() - t0:.0f} s", *(str(counts[k]) for k in ("PEND", "RUN", "DONE", "EXIT")),
                      "—" if mbs is None else f"{mbs:.1f}", "—" if cpu is None else f"{cpu:.0f}")
            return t

        # progress on stderr, like the other messages: stdout keeps only the results
        with Live(view(), refresh_per_second=2, transient=False, redirect_stderr=False,
                  console=Console(stderr=True)) as screen:
            while True:
                now = time.monotonic() - t0
                for s, jobs in queues.items():
                    while jobs and jobs[0].start_offset_s <= now and len(running[s]) < workload.concurrency:
                        pj = jobs.pop(0)
                        rec = batch.submit(pj.template.job_argv(lang),
                                           name=f"s{s:02d}-{pj.order:02d}-{pj.group}", env=env)
                        submitted[rec["id"]] = pj
                        if rec["state"] not in FINAL:       # the batch polls only the unfinished
                            running[s].add(rec["id"])
                        states[rec["id"]] = rec["state"]
                if batch.unfinished():
                    for j in batch.poll(timeout_s=0.5):
                        states[j["id"]] = j["state"]
                        if j["state"] in FINAL:
                            running[submitted[j["id"]].session].discard(j["id"])
                else:
                    time.sleep(0.2)
                if time.monotonic() - last_sample >= 1.0:
                    mbs, cpu = live.read()
                    last_sample = time.monotonic()
                screen.update(view())
                if not any(queues.values()) and not any(running.values()):
                    break
        t_end = time.time()
        records = [_job_record(grid, i, pj, lang) for i, pj in submitted.items()]
        with open(bundle / "jobs.jsonl", "w") as fh:
            for r in records:
                fh.write(json.dumps(r) + "\n")
        meta = {"kind": "statgrid-bench-mixed", "version": 1, "workload": {
                    "name": workload.name, "lang": lang, "sessions": workload.sessions, "ramp_s": workload.ramp_s,
                    "concurrency": workload.concurrency, "scale": workload.scale, "seed": workload.seed,
                    "jobs": len(plan), "groups": [{"name": g.name, "template": g.template.name, "count": g.count,
                                                   "trail_out": g.trail_out} for g in workload.groups]},
                "grid": {"embedded": own_grid, "nodes": nodes if own_grid else None, "slots": slots,
                         "cpus": ({h.name: list(h.cpus) for h in gcfg.hosts.values()} if own_grid else None)},
                # the grid's [groups], for the report's accounting per group (report/tables.accounting)
                "groups": {g: list(members) for g, members in gcfg.groups.items()},
                "session_options": gcfg.session.as_sas_names(), "start_ts": t_begin, "end_ts": t_end, "workload_start_ts": t_workload, "host": host_facts(),
                "datagen": datagen.read_manifest(Path(gcfg.libraries.data))}
        (bundle / "bundle.json").write_text(json.dumps(meta, indent=1))
    except KeyboardInterrupt:
        batch.kill()
        raise
    finally:
        if own_grid:
            server.stop(gcfg)
    return bundle


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _job_record(grid, job_id: int, pj, lang: str = "python") -> dict:
    j = grid.job(job_id)
    # The job's user's file: read as theirs (jobdir: regular, no link, owned by them), its steps alone.
    steps = JobDir(j["job_dir"]).stimer_steps(owner_uid_of(j.get("user")), kinds=("step",)) if j.get("job_dir") else []
    return {"id": job_id, "user": j.get("user"), "queue": j.get("queue"), "session": pj.session, "order": pj.order,
            "group": pj.group, "template": pj.template.name, "lang": lang,
            "job_file": str(pj.template.job_path(lang)), "kind": pj.template.kind,
            "user_type": pj.template.user_type, "trail_out": pj.trail_out, "host": j.get("host"), "state": j.get("state"),
            "exit_reason": j.get("exit_reason"), "submit_ts": j.get("submit_ts"), "start_ts": j.get("start_ts"),
            "end_ts": j.get("end_ts"), "rusage": j.get("rusage"), "stimer_total": j.get("stimer"),
            "steps": steps}


def load_bundle(path: Path) -> tuple[dict, list[dict]]:
    """A bundle's metadata and job records (what reports read)."""
    path = Path(path)
    try:
        meta = json.loads((path / "bundle.json").read_text())
        jobs = [json.loads(x) for x in (path / "jobs.jsonl").read_text().splitlines() if x.strip()]
    except FileNotFoundError as exc:
        raise StatgridError(f"{str(path)!r} is not a bench mixed bundle ({exc.filename} is missing).") from None
    return meta, jobs


def lang_label(meta: dict) -> str:
    """The language a bundle's jobs were written in, as reports name it (bundles from before --lang: Python)."""
    return {"python": "Python", "sas": "SAS"}.get(meta.get("workload", {}).get("lang", "python"), "?")


def summary(meta: dict, jobs: list[dict]) -> str:
    """The end-of-run summary: counts, clock time, response time and summed STIMER real time, CPU/real
    by kind — the figures and names of the report's summary (job/figures.py), so the two agree."""
    from statgrid.job.figures import FIGURE_NAMES, job_figures

    f = job_figures(meta, jobs)
    lines = [f"{meta['workload']['name']}: {f['jobs']} jobs, {f['jobs_done']} DONE, {f['jobs_exit']} EXIT, "
             f"workload clock {f['clock_s']:.1f} s"]
    lines += [f"{FIGURE_NAMES[k]}: {f[k]:.1f} s" for k in ("summed_real_s", "stimer_real_s")]
    for kind in ("io", "cpu", "memory"):
        if f[f"cpu_real_{kind}"] is not None:
            n = sum(1 for j in jobs if j["state"] == "DONE" and j.get("kind") == kind)
            lines.append(f"{kind:<6} jobs: {n}, mean CPU/real {f[f'cpu_real_{kind}']:.2f}")
    lines.append(f"jobs written in: {lang_label(meta)}")
    return "\n".join(lines)
