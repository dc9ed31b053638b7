"""`statgrid bench mixed --repeat N`: the same workload run N times, each an ordinary bundle (<out>/run-k/), and
every summary figure given as its mean with the spread of the runs — noisy machines and shared storage make one
run an anecdote (seed 000 repeats its runs; the issue asks for averaged runs with their spread).

repeat.json holds each run's summary figures (report.tables.summary_figures: the figures a report and
`report --compare` show) and is rewritten after every run, so an interrupted series keeps the runs it finished.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Callable

from statgrid.errors import StatgridError, UsageError

KIND = "statgrid-bench-repeat"


def run(n: int, out: Path, run_one: Callable[[Path], Path], figures_of: Callable[[Path], dict],
        echo: Callable[[str], None] = print) -> Path:
    """Run `run_one(bundle_dir)` n times into <out>/run-1 … run-n, keeping `figures_of(bundle)` (the report's
    summary figures: the caller passes them, the lab does not import the report); return <out>."""
    if n < 1:
        raise UsageError(f"--repeat {n} must be at least 1.")
    root = Path(out).absolute()
    if root.exists() and any(root.iterdir()):
        raise StatgridError(f"--out {str(root)!r} exists and is not empty; give a new directory.")
    root.mkdir(parents=True, exist_ok=True)
    meta: dict = {"kind": KIND, "version": 1, "runs": []}
    for k in range(1, n + 1):
        echo(f"run {k}/{n}")
        bundle = run_one(root / f"run-{k}")
        figures = figures_of(bundle)
        meta["runs"].append({"bundle": bundle.name, "figures": {key: v for key, v in figures.items()
                                                                if isinstance(v, (int, float)) and not isinstance(v, bool)}})
        (root / "repeat.json").write_text(json.dumps(meta, indent=1))
    return root


def load(path: Path) -> dict:
    try:
        meta = json.loads((Path(path) / "repeat.json").read_text())
    except FileNotFoundError:
        raise StatgridError(f"{str(path)!r} is not a --repeat directory (repeat.json is missing).") from None
    except ValueError:
        raise StatgridError(f"{str(Path(path) / 'repeat.json')!r} is damaged (not JSON).") from None
    if meta.get("kind") != KIND or not isinstance(meta.get("runs"), list):
        raise StatgridError(f"{str(path)!r}: repeat.json is not a --repeat record.")
    return meta


def spread(meta: dict) -> list[dict]:
    """Per figure of every run: mean, min, max, the relative spread (max − min) ÷ mean, and how many runs."""
    runs = [r["figures"] for r in meta["runs"]]
    keys = list(dict.fromkeys(k for f in runs for k in f))
    out = []
    for k in keys:
        vals = [f[k] for f in runs if f.get(k) is not None]
        if not vals:
            continue
        mean = statistics.fmean(vals)
        out.append({"key": k, "mean": mean, "min": min(vals), "max": max(vals), "runs": len(vals),
                    "spread": (max(vals) - min(vals)) / abs(mean) if mean else None})
    return out
