"""Issue 29 item 4's validation: the what-if model (statgrid/advise/whatif.py, through advise/size.py) predicts
`bench scale`'s 2-node run from its 1-node run, and the 1-node run from the 2-node run.

Each round runs `statgrid bench scale --max-nodes 2` (its two steps back to back: interleaved), then, for
each way and each of the model's fits (size.FITS; "background, target's load": the background fit with
the target run's own measured background load, the one figure of the target's environment it is given),
replays the source bundle on the target's grid — the target's nodes, slots, the CPUs its nodes really had
(bundle.json grid.cpus), its sessions and ramp — and compares the predicted workload clock with the
measured one. Printed: the error (predicted ÷ measured − 1) as `median (min … max, N runs)`.

On a machine that other work loads, a run's clock moves with that load: the model is told the load only
through the monitor's load average (the background fit). Results go to <dir>/sizing.json, rewritten
after every round.

    .venv/bin/python benchmarks/sizing.py [--runs 3] [--sessions-per-node 5] [--scale 0.0002] [--dir DIR] [--reuse]
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
from _common import fmt_stat, stat_dict  # noqa: E402

from statgrid.advise import size as sz  # noqa: E402

STATGRID = [sys.executable, "-m", "statgrid"]
WAYS = (("1→2", "1-nodes", "2-nodes"), ("2→1", "2-nodes", "1-nodes"))
VARIANTS = ("background", "background, target's load", "cores", "launch", "none")


def predict(src: sz.Measured, tgt: sz.Measured, variant: str) -> float:
    """The source bundle's jobs replayed on the target's grid and workload: the predicted clock (s)."""
    fit = "background" if variant.startswith("background") else variant
    cal = sz.calibrate(src, fit)
    background = tgt.background_per_core if variant == "background, target's load" else None
    w = sz.run_what_if(src, tgt.workload.sessions, cal, nodes=tgt.nodes, slots=tgt.slots, cores=tgt.cores_per_node,
                       shared_cores=tgt.shared_cores, ramp_s=tgt.workload.ramp_s, background=background)
    return w.clock_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sessions-per-node", type=int, default=5)
    ap.add_argument("--scale", type=float, default=0.0002)
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/statgrid-bench/sizing"))
    ap.add_argument("--reuse", action="store_true", help="Predict again from the rounds already in --dir (no run).")
    args = ap.parse_args()
    root = args.dir.absolute()
    if root.exists() and not args.reuse:
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    home = root / "home"
    env = {**os.environ, "STATGRID_HOME": str(home)}
    errors: dict[str, dict[str, list[float]]] = {w: {v: [] for v in VARIANTS} for w, _, _ in WAYS}
    # The data first, so that no round's 1-node step follows data generation (the load average lags).
    if not args.reuse:
        subprocess.run([*STATGRID, "datagen", "--scale", repr(args.scale), "--local"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rounds = []
    for r in range(1, args.runs + 1):
        out = root / f"round-{r}"
        if not args.reuse:
            subprocess.run([*STATGRID, "bench", "scale", "--max-nodes", "2", "--sessions-per-node",
                            str(args.sessions_per_node), "--scale", repr(args.scale), "--out", str(out)],
                           env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elif not (out / "scale.json").is_file():
            break
        bundles = {name: sz.load(out / name) for name in ("1-nodes", "2-nodes")}
        row = {"round": r, "measured_clock_s": {k: b.clock_s for k, b in bundles.items()},
               "background_per_core": {k: b.background_per_core for k, b in bundles.items()},
               "cores_per_node": {k: b.cores_per_node for k, b in bundles.items()},
               # CPU seconds per job: the model carries the source's over; if the target's jobs needed more
               # (contention: caches, more context switches), no sharing model makes up for it
               "cpu_s_per_job": {k: sum(j.demand.cpu_s for j in b.jobs) / len(b.jobs) for k, b in bundles.items()},
               "predicted_clock_s": {}}
        for way, src, tgt in WAYS:
            for v in VARIANTS:
                p = predict(bundles[src], bundles[tgt], v)
                row["predicted_clock_s"][f"{way} {v}"] = p
                errors[way][v].append(p / bundles[tgt].clock_s - 1)
        rounds.append(row)
        (root / "sizing.json").write_text(json.dumps(
            {"sessions_per_node": args.sessions_per_node, "scale": args.scale, "rounds": rounds,
             "errors": {w: {v: stat_dict(e) for v, e in vs.items()} for w, vs in errors.items()}}, indent=1))
        print(f"round {r}: measured clock 1 node {row['measured_clock_s']['1-nodes']:.1f} s, 2 nodes "
              f"{row['measured_clock_s']['2-nodes']:.1f} s; background load per core "
              f"{row['background_per_core']['1-nodes']:.2f} / {row['background_per_core']['2-nodes']:.2f}; CPU s per job "
              f"{row['cpu_s_per_job']['1-nodes']:.2f} / {row['cpu_s_per_job']['2-nodes']:.2f}", flush=True)
    print(f"\nbench scale 1 ↔ 2 nodes, {args.sessions_per_node} sessions per node, scale {args.scale:g}, "
          f"{os.cpu_count()} CPUs here; prediction error of the workload clock (predicted ÷ measured − 1, %):")
    for way, _, _ in WAYS:
        for v in VARIANTS:
            print(f"  {way}  {v:<26} {fmt_stat([e * 100 for e in errors[way][v]], 1)}")
    ratio = [r["cpu_s_per_job"]["2-nodes"] / r["cpu_s_per_job"]["1-nodes"] for r in rounds]
    print(f"  CPU seconds per job, 2-node run ÷ 1-node run: {fmt_stat(ratio, 2)} (the model assumes 1)")
    print(f"results: {root / 'sizing.json'}")


if __name__ == "__main__":
    main()
