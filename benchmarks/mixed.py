"""Issue 6's figures for this machine, from real runs through the CLI, interleaved per round:

1. fio ceiling: sequential 1 MiB reads and writes, O_DIRECT, in the DATA library's directory.
2. MA10 (36 jobs) on the demo's layout: 4 embedded hosts × 2 slots sharing every CPU (8 slots on
   this machine's cores: oversubscribed), and on 1 host × 1 slot (one job at a time with every
   core: what CPU/real shows when jobs do not queue for a core).
3. `bench scale --max-nodes 2`: MA10 on 1 node, MA20 on 2 nodes, each node with CPUs of its own.

Printed per figure as `median (min … max, N runs)`:
- mean CPU/real of the CPU jobs (STIMER: the session's steps, as SAS's FULLSTIMER), and of the
  whole job process (rusage over wall time, Python's start included); goal ≥ 1.0;
- MB/s per core in the I/O phase (the union of the intervals when I/O jobs run): the I/O jobs'
  logical reads + writes ÷ that time ÷ cores, and the device's MB/s (the monitor's disk series)
  over the same time ÷ cores — each against fio's ceiling per core;
- 1 → 2 node weak-scaling efficiency (jobs/h per node at 2 nodes ÷ jobs/h at 1).

    .venv/bin/python benchmarks/mixed.py [--scale 0.002] [--runs 2] [--dir /var/tmp/statgrid-bench/mixed]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat  # noqa: E402

from statgrid.bench import mixed  # noqa: E402

STATGRID = [sys.executable, "-m", "statgrid"]


def fio_mb_s(directory: Path, rw: str, size: str = "1G", runtime_s: int = 15) -> float:
    """fio sequential 1 MiB O_DIRECT, 4 jobs × psync: MB/s (10^6 bytes)."""
    r = subprocess.run(["fio", "--name=ceiling", f"--directory={directory}", f"--rw={rw}", "--bs=1M",
                        f"--size={size}", "--direct=1", "--ioengine=psync", "--numjobs=4", "--group_reporting",
                        "--time_based", f"--runtime={runtime_s}", "--output-format=json"],
                       capture_output=True, text=True, check=True)
    job = json.loads(r.stdout)["jobs"][0]
    for f in directory.glob("ceiling.*"):
        f.unlink()
    return job["read" if rw == "read" else "write"]["bw_bytes"] / 1e6


def union_intervals(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def device_mb_s(bundle: Path, spans: list[tuple[float, float]]) -> float | None:
    """Mean device MB/s (reads + writes of the counted devices: a stack's top-most ones, each byte
    once) over the samples inside `spans`. Every embedded host samples the same machine, so one
    host's series is the machine's."""
    from statgrid.monitor import store
    from statgrid.monitor.sampler import is_counted

    per_ts: dict[float, float] = {}
    for r in store.load(bundle / "grid" / "monitor", "disk").to_pylist():
        if r["host"] == "node1" and is_counted(r):
            per_ts[r["ts"]] = per_ts.get(r["ts"], 0.0) + (r["read_bytes_per_s"] or 0) + (r["write_bytes_per_s"] or 0)
    inside = [v for ts, v in per_ts.items() if any(a <= ts <= b for a, b in spans)]
    return sum(inside) / len(inside) / 1e6 if inside else None


def figures(bundle: Path, ncpu: int) -> dict:
    meta, jobs = mixed.load_bundle(bundle)
    done = [j for j in jobs if j["state"] == "DONE"]
    cpu = [j for j in done if j["kind"] == "cpu" and j["stimer_total"] and j["stimer_total"]["real_s"]]
    stimer = [(j["stimer_total"]["user_cpu_s"] + j["stimer_total"]["sys_cpu_s"]) / j["stimer_total"]["real_s"]
              for j in cpu]
    proc = [(j["rusage"]["user_cpu_s"] + j["rusage"]["sys_cpu_s"]) / (j["end_ts"] - j["start_ts"]) for j in cpu]
    io = [j for j in done if j["kind"] == "io"]
    spans = union_intervals([(j["start_ts"], j["end_ts"]) for j in io])
    io_time = sum(b - a for a, b in spans)
    io_bytes = sum(j["rusage"]["logical_read_bytes"] + j["rusage"]["logical_write_bytes"] for j in io)
    return {"jobs": len(jobs), "done": len(done), "clock_s": meta["end_ts"] - meta["workload_start_ts"],
            "cpu_real_stimer": sum(stimer) / len(stimer), "cpu_real_process": sum(proc) / len(proc),
            "io_phase_s": io_time, "io_logical_mb_s_core": io_bytes / 1e6 / io_time / ncpu,
            "io_device_mb_s_core": (device_mb_s(bundle, spans) or 0) / ncpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.002)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/statgrid-bench/mixed"))
    args = ap.parse_args()
    root = args.dir
    if root.exists():
        shutil.rmtree(root)
    home = root / "home"
    home.mkdir(parents=True)
    env = {**os.environ, "STATGRID_HOME": str(home)}
    ncpu = len(os.sched_getaffinity(0))
    data_dir = home / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([*STATGRID, "datagen", "--scale", repr(args.scale), "--local"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    res: dict[str, list] = {}

    def add(key: str, value) -> None:
        res.setdefault(key, []).append(value)

    for r in range(args.runs):
        add("fio_read_mb_s", fio_mb_s(data_dir, "read"))
        add("fio_write_mb_s", fio_mb_s(data_dir, "write"))
        b = root / f"ma10-{r}"
        subprocess.run([*STATGRID, "bench", "mixed", "--sessions", "10", "--scale", repr(args.scale), "--out", str(b)],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        f = figures(b, ncpu)
        for k, v in f.items():
            add(k, v)
        b1 = root / f"ma10-1x1-{r}"
        subprocess.run([*STATGRID, "bench", "mixed", "--sessions", "10", "--scale", repr(args.scale), "--nodes", "1",
                        "--slots", "1", "--out", str(b1)], env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        f = figures(b1, ncpu)
        add("clock_s_1x1", f["clock_s"])
        add("cpu_real_stimer_1x1", f["cpu_real_stimer"])
        add("cpu_real_process_1x1", f["cpu_real_process"])
        add("io_logical_mb_s_core_1x1", f["io_logical_mb_s_core"])
        s = root / f"scale-{r}"
        subprocess.run([*STATGRID, "bench", "scale", "--max-nodes", "2", "--scale", repr(args.scale), "--out", str(s)],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        steps = json.loads((s / "scale.json").read_text())["steps"]
        add("scale_1_clock_s", steps[0]["clock_s"])
        add("scale_2_clock_s", steps[1]["clock_s"])
        add("efficiency_1_2", steps[1]["efficiency"])
        f1 = figures(s / "1-nodes", ncpu)
        add("cpu_real_stimer_1node", f1["cpu_real_stimer"])
        add("cpu_real_process_1node", f1["cpu_real_process"])
        print(f"round {r + 1}: " + json.dumps({k: round(v[-1], 3) for k, v in res.items()}), flush=True)

    ceiling_r = [x / ncpu for x in res["fio_read_mb_s"]]
    ceiling_w = [x / ncpu for x in res["fio_write_mb_s"]]
    print(f"\nMA10 at scale {args.scale:g} on {ncpu} CPUs; {args.runs} rounds, interleaved")
    print(f"fio ceiling per core, seq read 1 MiB direct : {fmt_stat(ceiling_r)} MB/s")
    print(f"fio ceiling per core, seq write 1 MiB direct: {fmt_stat(ceiling_w)} MB/s")
    print(f"MA10 on 4 hosts × 2 slots (shared CPUs): {fmt_stat(res['done'], 0)} of 36 DONE, clock "
          f"{fmt_stat(res['clock_s'])} s")
    print(f"  CPU jobs CPU/real, STIMER (steps)        : {fmt_stat(res['cpu_real_stimer'])}")
    print(f"  CPU jobs CPU/real, whole process (rusage): {fmt_stat(res['cpu_real_process'])}")
    print(f"  I/O phase: {fmt_stat(res['io_phase_s'])} s")
    print(f"  I/O jobs' logical MB/s per core          : {fmt_stat(res['io_logical_mb_s_core'])}")
    print(f"    ÷ fio read ceiling per core            : "
          f"{fmt_stat([a / b for a, b in zip(res['io_logical_mb_s_core'], ceiling_r)])}")
    print(f"  device MB/s per core (monitor)           : {fmt_stat(res['io_device_mb_s_core'])}")
    print(f"    ÷ fio write ceiling per core           : "
          f"{fmt_stat([a / b for a, b in zip(res['io_device_mb_s_core'], ceiling_w)])}")
    print(f"MA10 on 1 host × 1 slot (no queueing for a core): clock {fmt_stat(res['clock_s_1x1'])} s")
    print(f"  CPU jobs CPU/real, STIMER (steps)        : {fmt_stat(res['cpu_real_stimer_1x1'])}")
    print(f"  CPU jobs CPU/real, whole process (rusage): {fmt_stat(res['cpu_real_process_1x1'])}")
    print(f"  I/O jobs' logical MB/s per core          : {fmt_stat(res['io_logical_mb_s_core_1x1'])}")
    print(f"bench scale, 1 CPU per node: MA10 on 1 node {fmt_stat(res['scale_1_clock_s'])} s, MA20 on 2 nodes "
          f"{fmt_stat(res['scale_2_clock_s'])} s")
    print(f"  1 → 2 node efficiency                    : {fmt_stat(res['efficiency_1_2'])}")
    print(f"  CPU jobs CPU/real on 1 node, STIMER      : {fmt_stat(res['cpu_real_stimer_1node'])}")
    print(f"  CPU jobs CPU/real on 1 node, process     : {fmt_stat(res['cpu_real_process_1node'])}")


if __name__ == "__main__":
    main()
