"""Issue 27's workload figure: `bench mixed --lang sas` against `--lang python` on the same data and grid.

Each round runs the same workload twice through the real CLI — once with the templates' Python jobs, once
with their SAS twins — on embedded grids of the same shape over one home (so one DATA library, made once by
the first run's datagen); the order alternates between rounds so neither language always goes first.
Printed: the workload clock ratio sas ÷ python as `median (min … max, N runs)` (goal ≤ 1.10), each
language's clock, and per template the mean job wall time of each language and their ratio (where the SAS
front end costs). A round whose jobs did not all end DONE is reported, its ratio kept (an EXIT job ends
early: look at its log).

    .venv/bin/python benchmarks/mixed_lang.py [--sessions 2] [--scale 0.0001] [--runs 3] [--nodes 2]
                                              [--dir /var/tmp/statgrid-bench/mixed-lang]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat  # noqa: E402

from statgrid.bench import mixed  # noqa: E402
from statgrid.job.figures import job_figures  # noqa: E402

STATGRID = [sys.executable, "-m", "statgrid"]
LANGS = ("python", "sas")


def run_bench(home: Path, out: Path, lang: str, args) -> tuple[dict, list[dict]]:
    env = {**os.environ, "STATGRID_HOME": str(home)}
    env.pop("STATGRID_CONFIG", None)
    cmd = STATGRID + ["bench", "mixed", "--lang", lang, "--sessions", str(args.sessions), "--nodes", str(args.nodes),
                      "--scale", str(args.scale), "--out", str(out)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return mixed.load_bundle(out)


def wall_by_template(jobs: list[dict]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for j in jobs:
        if j.get("start_ts") and j.get("end_ts"):
            out[j["template"]].append(j["end_ts"] - j["start_ts"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=2)
    ap.add_argument("--scale", type=float, default=0.0001)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/statgrid-bench/mixed-lang"))
    args = ap.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    home = args.dir / "home"
    home.mkdir(parents=True)
    clocks: dict[str, list[float]] = {lang: [] for lang in LANGS}
    walls: dict[str, dict[str, list[float]]] = {lang: defaultdict(list) for lang in LANGS}
    ratios = []
    for i in range(args.runs):
        order = LANGS if i % 2 == 0 else LANGS[::-1]
        this = {}
        for lang in order:
            meta, jobs = run_bench(home, args.dir / f"run{i + 1}-{lang}", lang, args)
            f = job_figures(meta, jobs)
            this[lang] = f["clock_s"]
            clocks[lang].append(f["clock_s"])
            for t, w in wall_by_template(jobs).items():
                walls[lang][t] += w
            note = "" if f["jobs_exit"] == 0 else f"  ({f['jobs_exit']} EXIT: {sorted({j['template'] for j in jobs if j['state'] != 'DONE'})})"
            print(f"round {i + 1} {lang:<6}: {f['jobs']} jobs, clock {f['clock_s']:.1f} s{note}", flush=True)
        ratios.append(this["sas"] / this["python"])
    print(f"\nMA{args.sessions}, scale {args.scale:g}, {args.nodes} hosts × 2 slots, {args.runs} rounds (interleaved)")
    for lang in LANGS:
        print(f"workload clock, {lang:<6} (s): {fmt_stat(clocks[lang], 1)}")
    print(f"workload clock ratio sas/python: {fmt_stat(ratios, 3)}   (goal ≤ 1.10)")
    print("\nper template: mean job wall time (s), python / sas / ratio")
    for t in sorted(walls["python"]):
        a, b = walls["python"][t], walls["sas"].get(t, [])
        if a and b:
            pa, pb = sum(a) / len(a), sum(b) / len(b)
            print(f"  {t:<26} {pa:7.2f} {pb:7.2f} {pb / pa:6.2f}")


if __name__ == "__main__":
    main()
