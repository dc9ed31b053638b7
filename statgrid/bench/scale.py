"""`statgrid bench scale`: the grid scalability test of seed 000 (Table 4, Figure 10).

Step k (k = 1 … max_nodes) runs the Mixed Analytics mix for k × sessions_per_node sessions on an
embedded grid of k nodes (1 node / 10 sessions / 36 jobs, 2 / 20 / 72, …): the work per node stays
the same, so a grid that scales keeps its clock time and its throughput per node. Every step's
sessions start over the same ramp (the shipped files' 6 s per session of one node), so the rate at
which sessions arrive grows with the nodes, as users do when a grid grows.

Each step is an ordinary `bench mixed` bundle (<out>/<k>-nodes/); scale.json holds the table and is
rewritten after every step, so an interrupted test keeps the steps it finished.

Efficiency is weak-scaling efficiency: (jobs per hour at k nodes / k) ÷ (jobs per hour at 1 node).
On one machine, nodes get their own CPUs when there are enough (`cpus_per_node`); otherwise they
share every CPU, and adding a node adds no hardware — the table then measures contention, and
says so.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

from statgrid.bench import mixed
from statgrid.bench import workload as wl
from statgrid.errors import StatgridError, UsageError
from statgrid.job.figures import job_figures

COLUMNS = [("nodes", "nodes"), ("sessions", "sessions"), ("jobs", "jobs"), ("done", "DONE"), ("exit", "EXIT"),
           ("clock_s", "clock s"), ("jobs_per_h", "jobs/h"), ("summed_real_s", "summed real s"),
           ("io_mb_per_s", "MB/s"), ("efficiency", "efficiency")]


def auto_cpus_per_node(max_nodes: int) -> int:
    """Own CPUs for every node when this machine has enough for the largest step, else 0 (shared)."""
    return len(os.sched_getaffinity(0)) // max_nodes


def step_row(nodes: int, meta: dict, jobs: list[dict]) -> dict:
    """One line of the scalability table from a step's bundle (its figures as the report defines them)."""
    f = job_figures(meta, jobs)
    clock_s, mb_s = f["clock_s"], f["jobs_logical_mb_s"]
    return {"nodes": nodes, "sessions": meta["workload"]["sessions"], "jobs": f["jobs"], "done": f["jobs_done"],
            "exit": f["jobs_exit"], "clock_s": round(clock_s, 2),
            "jobs_per_h": round(f["jobs_done"] / clock_s * 3600, 1) if clock_s > 0 else None,
            "summed_real_s": round(f["summed_real_s"], 1), "io_mb_per_s": None if mb_s is None else round(mb_s, 2)}


def with_efficiency(rows: list[dict]) -> list[dict]:
    base = next((r for r in rows if r["nodes"] == 1 and r["jobs_per_h"]), None)
    return [{**r, "efficiency": (round(r["jobs_per_h"] / r["nodes"] / base["jobs_per_h"], 3)
                                 if base and r["jobs_per_h"] else None)} for r in rows]


def table_text(rows: list[dict]) -> str:
    head = [h for _, h in COLUMNS]
    body = [["—" if r.get(k) is None else (f"{r[k]:,.2f}" if isinstance(r[k], float) else f"{r[k]:,}")
             for k, _ in COLUMNS] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


def run(cfg, max_nodes: int = 4, sessions_per_node: int = 10, scale: float | None = None, slots: int = 2,
        cpus_per_node: int | None = None, out: Path | None = None, memsize: str | None = None,
        echo: Callable[[str], None] = print) -> Path:
    """Run the steps; return the directory with scale.json and one bundle per step."""
    if max_nodes < 1 or sessions_per_node < 1 or slots < 1:
        raise UsageError(f"--max-nodes {max_nodes}, --sessions-per-node {sessions_per_node}, --slots {slots}: "
                         "each must be at least 1.")
    if cpus_per_node is None:
        cpus_per_node = auto_cpus_per_node(max_nodes)
    root = Path(out) if out else cfg.home / "bench" / f"scale-{max_nodes}n-{time.strftime('%Y%m%d-%H%M%S')}"
    if root.exists() and any(root.iterdir()):
        raise StatgridError(f"--out {str(root)!r} exists and is not empty; give a new directory.")
    root.mkdir(parents=True, exist_ok=True)
    ncpu = len(os.sched_getaffinity(0))
    shared = cpus_per_node == 0 or cpus_per_node * max_nodes > ncpu
    note = (f"each node has {cpus_per_node} CPU(s) of its own" if not shared else
            f"the nodes share this machine's {ncpu} CPUs: adding a node adds no hardware, so efficiency "
            "measures contention")
    echo(f"scalability test: 1 … {max_nodes} nodes, {sessions_per_node} sessions per node; {note}")
    ramp_s = wl.RAMP_PER_SESSION_S * sessions_per_node
    rows: list[dict] = []
    meta = {"kind": "statgrid-bench-scale", "version": 1, "max_nodes": max_nodes,
            "sessions_per_node": sessions_per_node, "slots": slots, "cpus_per_node": cpus_per_node,
            "cpus_shared": shared, "ramp_s": ramp_s, "note": note, "host": mixed.host_facts(), "steps": rows}
    for k in range(1, max_nodes + 1):
        w = wl.load(None, k * sessions_per_node)
        w = w.with_globals(ramp_s=ramp_s, scale=scale if scale is not None else w.scale)
        echo(f"step {k}/{max_nodes}: {k} node(s), {w.sessions} sessions, {w.n_jobs} jobs")
        bundle = mixed.run(cfg, w, k, slots, root / f"{k}-nodes", memsize=memsize, echo=echo,
                           cpus_per_node=cpus_per_node)
        rows.append({**step_row(k, *mixed.load_bundle(bundle)), "bundle": bundle.name})
        meta["steps"] = with_efficiency(rows)
        (root / "scale.json").write_text(json.dumps(meta, indent=1))
    return root


def load(path: Path) -> dict:
    try:
        meta = json.loads((Path(path) / "scale.json").read_text())
    except FileNotFoundError:
        raise StatgridError(f"{str(path)!r} is not a bench scale directory (scale.json is missing).") from None
    return meta
