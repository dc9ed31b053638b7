"""iobench results → one summary record → terminal table, fio-like JSON, CSV.

The JSON keeps fio's key names so the numbers can be held against `fio --output-format=json`:
per direction `io_bytes`, `bw_bytes` (bytes/s), `iops`, `runtime` (ms), `total_ios`, and
`lat_ns` {min, max, mean, stddev, N, percentile {"50.000000": ..., "99.000000": ..., "99.900000": ...}}.
The spec says how each run ended: `run_mode` "size" (each thread moved `size_per_thread`
bytes once) or "time" (each run lasted `duration_s`, threads looping over their regions), and
whether `dir` is a raw `device`. Bandwidth of a node is its bytes over its slowest thread's
time; the total of a run is the sum over nodes (they run at the same time); figures over runs
print as `mean ± σ (min … max, N runs)`.
"""
from __future__ import annotations

import csv
import io
import json
import statistics
from typing import Iterable

import numpy as np

from statgrid.bench.iobench import Direction, IOSpec, NodeRun

PERCENTILES = (50.0, 99.0, 99.9)
DIRECTIONS = ("read", "write")


def lat_stats(lat: np.ndarray) -> dict:
    if lat.size == 0:
        return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0, "percentile": {}}
    pct = np.percentile(lat, PERCENTILES)
    return {"min": int(lat.min()), "max": int(lat.max()), "mean": float(lat.mean()), "stddev": float(lat.std()),
            "N": int(lat.size), "percentile": {f"{p:.6f}": int(v) for p, v in zip(PERCENTILES, pct)}}


def direction_record(d: Direction, runtime_ns: int | None = None) -> dict:
    runtime_ns = runtime_ns or d.runtime_ns
    secs = runtime_ns / 1e9 if runtime_ns else 0.0
    n = int(d.lat_ns.size)
    lat = lat_stats(d.lat_ns)
    # A synchronous request's time is both fio's clat and lat (psync engine): fio's default output
    # has percentiles under clat_ns, so they are given under both names.
    return {"io_bytes": d.io_bytes, "bw_bytes": d.io_bytes / secs if secs else 0.0, "iops": n / secs if secs else 0.0,
            "runtime": runtime_ns / 1e6, "total_ios": n, "lat_ns": lat, "clat_ns": lat}


def spread(values: list[float]) -> dict:
    return {"mean": statistics.fmean(values), "stddev": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values), "n": len(values)}


def summarize(spec: IOSpec, runs: list[list[NodeRun]]) -> dict:
    """runs[i] = the NodeRun of every node in run i+1."""
    out_runs = []
    for node_runs in runs:
        nodes = [{"node": r.node, **{k: direction_record(getattr(r, k)) for k in DIRECTIONS}} for r in node_runs]
        total = {}
        for k in DIRECTIONS:
            ds = [direction_record(getattr(r, k)) for r in node_runs]
            lat = np.concatenate([getattr(r, k).lat_ns for r in node_runs])
            total[k] = {"io_bytes": sum(d["io_bytes"] for d in ds), "bw_bytes": sum(d["bw_bytes"] for d in ds),
                        "iops": sum(d["iops"] for d in ds), "runtime": max(d["runtime"] for d in ds),
                        "total_ios": sum(d["total_ios"] for d in ds), "lat_ns": lat_stats(lat)}
            total[k]["clat_ns"] = total[k]["lat_ns"]
        out_runs.append({"run": node_runs[0].run, "nodes": nodes, "total": total})
    summary: dict = {"nodes": {}, "total": {}}
    names = [n["node"] for n in out_runs[0]["nodes"]]
    for k in DIRECTIONS:
        summary["total"][k] = {m: spread([r["total"][k][m] for r in out_runs]) for m in ("bw_bytes", "iops")}
        for i, name in enumerate(names):
            summary["nodes"].setdefault(name, {})[k] = {
                m: spread([r["nodes"][i][k][m] for r in out_runs]) for m in ("bw_bytes", "iops")}
        # latency over every request of every run
        for scope in ("total", *names):
            lat = np.concatenate([getattr(nr, k).lat_ns for node_runs in runs for nr in node_runs
                                  if scope == "total" or nr.node == scope])
            target = summary["total"][k] if scope == "total" else summary["nodes"][scope][k]
            target["lat_ns"] = lat_stats(lat)
    # "mode" is the operation (read/write/rw, as the reports read it); how a run ends is "run_mode":
    # "size" (each thread moved size_per_thread once) or "time" (each run lasted duration_s).
    return {"spec": {"dir": str(spec.target), "mode": spec.mode, "rwmixread": spec.rwmixread, "pattern": spec.pattern,
                     "bs": spec.bs_bytes, "threads": spec.threads, "size_per_thread": spec.size_per_thread_bytes,
                     "direct": spec.direct, "fsync": spec.fsync, "runs": spec.runs, "run_mode": spec.run_mode,
                     "duration_s": spec.duration_s, "device": spec.device is not None},
            "runs": out_runs, "summary": summary}


def _fmt_spread(s: dict, scale: float, digits: int = 1) -> str:
    m, sd, lo, hi, n = (s[k] / scale if k != "n" else s[k] for k in ("mean", "stddev", "min", "max", "n"))
    if n == 1:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ± {sd:.{digits}f} ({lo:.{digits}f} … {hi:.{digits}f}, {n} runs)"


def scopes(result: dict) -> list[tuple[str, dict]]:
    """(name, summary) rows to show: each node and the total, or the one node (its total)."""
    nodes = list(result["summary"]["nodes"].items())
    if len(nodes) > 1:
        return [*nodes, ("total", result["summary"]["total"])]
    return [(nodes[0][0], result["summary"]["total"])]


def _time_part(spec: dict) -> str:
    """', for 30 s per run (looping)' in time mode; nothing in size mode (results from before
    time mode have no run_mode: size)."""
    if spec.get("run_mode") != "time":
        return ""
    return f", for {spec['duration_s']:g} s per run (looping)"


def terminal(result: dict) -> str:
    spec = result["spec"]
    active = [k for k in DIRECTIONS if result["summary"]["total"][k]["bw_bytes"]["max"] > 0]
    head = ["node", "dir", "MB/s", "MiB/s", "IOPS", "lat mean ms", "p50 ms", "p99 ms", "p99.9 ms"]
    rows = []
    for name, s in scopes(result):
        for k in active:
            lat = s[k]["lat_ns"]
            p = lat["percentile"]
            rows.append([name, k, _fmt_spread(s[k]["bw_bytes"], 1e6), _fmt_spread(s[k]["bw_bytes"], 2**20),
                         _fmt_spread(s[k]["iops"], 1, 0), f"{lat['mean'] / 1e6:.3f}",
                         f"{p.get('50.000000', 0) / 1e6:.3f}", f"{p.get('99.000000', 0) / 1e6:.3f}",
                         f"{p.get('99.900000', 0) / 1e6:.3f}"])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    title = (f"iobench: {spec['mode']}{' ' + str(spec['rwmixread']) + '% read' if spec['mode'] == 'rw' else ''}, "
             f"{spec['pattern']}, bs {spec['bs']} B, {spec['threads']} thread(s) × {spec['size_per_thread']} B"
             f"{_time_part(spec)}, {'O_DIRECT' if spec['direct'] else 'buffered'}{', fsync' if spec['fsync'] else ''}, "
             f"{'on device' if spec.get('device') else 'in'} {spec['dir']}")
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def to_json(result: dict) -> str:
    return json.dumps(result, indent=1)


CSV_FIELDS = ("run", "node", "direction", "io_bytes", "bw_bytes", "iops", "runtime_ms", "total_ios",
              "lat_mean_ns", "lat_p50_ns", "lat_p99_ns", "lat_p99_9_ns")


def to_csv(result: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_FIELDS)

    def row(run: int, node: str, k: str, d: dict) -> list:
        p = d["lat_ns"]["percentile"]
        return [run, node, k, d["io_bytes"], f"{d['bw_bytes']:.0f}", f"{d['iops']:.1f}", f"{d['runtime']:.3f}",
                d["total_ios"], f"{d['lat_ns']['mean']:.0f}", p.get("50.000000", ""), p.get("99.000000", ""),
                p.get("99.900000", "")]

    for r in result["runs"]:
        for n in r["nodes"]:
            for k in DIRECTIONS:
                if n[k]["total_ios"]:
                    w.writerow(row(r["run"], n["node"], k, n[k]))
        if len(r["nodes"]) > 1:
            for k in DIRECTIONS:
                if r["total"][k]["total_ios"]:
                    w.writerow(row(r["run"], "total", k, r["total"][k]))
    return buf.getvalue()


def group_by_run(node_results: Iterable[list[NodeRun]]) -> list[list[NodeRun]]:
    """[[node A runs], [node B runs]] → [[A run1, B run1], [A run2, B run2], ...]."""
    per_node = list(node_results)
    return [list(rs) for rs in zip(*per_node)]
