"""The unit layer's wall time (issue 25 item 5): the tests of --before-rev (its tree taken from git, run
as `pytest -m unit` in one process) against this tree's with --after-args (default `-m unit -n 2
--dist loadfile`: two pytest-xdist workers), run after one another, the order turned round each run
(A B, B A, …), in one process run. Prints each side's wall and CPU seconds (the pytest processes and
their children) and the ratio after/before per run as `median (min … max, N runs)`.

The whole unit layer loads both cores for minutes: other work on the machine slows it, so compare
the two sides of one run, not against remembered numbers. Paths after `--` narrow both sides to
those tests (e.g. the R cross-check files), `--collect-only` compares collection alone.

    .venv/bin/python benchmarks/unit_layer.py [--runs 1] [--before-rev main] [--before-args "-m unit"]
        [--after-args "-m unit -n 2 --dist loadfile"] [-- tests/unit/test_gee.py …]
"""
from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat, rotated  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def tree_of(rev: str, into: Path) -> Path:
    """rev's files (git archive) in `into`: its tests and statgrid package, run with this tree's .venv."""
    res = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True)
    if res.returncode != 0:
        raise SystemExit(f"--before-rev {rev!r}: git archive cannot take it ({res.stderr.decode().strip()}); "
                         "give a branch, tag or commit of this repository")
    archive = res.stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_side(cwd: Path, args: list[str], paths: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s, pytest's last line): `python -m pytest` in cwd (its statgrid comes first on
    sys.path), without the cache plug-in (nothing written into the tree but bytecode)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, *paths]
    cpu0, t0 = children_cpu_s(), time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, children_cpu_s() - cpu0
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    last = lines[-1] if lines else res.stderr.strip()[-200:]
    if res.returncode not in (0, 1):        # 1: some test failed; both sides are shown, not judged
        raise SystemExit(f"pytest ended with {res.returncode} in {cwd}: {last}\n{res.stderr[-2000:]}")
    return wall, cpu, last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--before-rev", default="main")
    ap.add_argument("--before-args", default="-m unit")
    ap.add_argument("--after-args", default="-m unit -n 2 --dist loadfile")
    ap.add_argument("--collect-only", action="store_true", help="time collection only (both sides)")
    ap.add_argument("paths", nargs="*", help="test paths for both sides (after --)")
    a = ap.parse_args()
    if a.runs < 1:
        raise SystemExit(f"--runs {a.runs}: give a number of runs of at least 1")
    extra = ["--collect-only"] if a.collect_only else []
    with tempfile.TemporaryDirectory(prefix="statgrid-unit-layer-") as tmp:
        before = tree_of(a.before_rev, Path(tmp))
        sides = {"before": (before, shlex.split(a.before_args) + extra),
                 "after": (ROOT, shlex.split(a.after_args) + extra)}
        # bytecode for the before tree (the after tree has its own): collection once, not timed
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                        *shlex.split(a.before_args), *a.paths], cwd=before, capture_output=True)
        walls: dict[str, list[float]] = {"before": [], "after": []}
        cpus: dict[str, list[float]] = {"before": [], "after": []}
        for r in range(a.runs):
            for name in rotated(list(sides), r):
                load = os.getloadavg()[0]
                wall, cpu, last = run_side(*sides[name], a.paths)
                walls[name].append(wall)
                cpus[name].append(cpu)
                print(f"run {r + 1} {name:6s} wall {wall:7.1f} s  cpu {cpu:7.1f} s  (load {load:.1f} at start)  {last}",
                      flush=True)
    print(f"before ({a.before_rev}: {a.before_args}) wall s: {fmt_stat(walls['before'])}")
    print(f"after  (this tree: {a.after_args}) wall s: {fmt_stat(walls['after'])}")
    print(f"after/before wall: {fmt_stat([x / y for x, y in zip(walls['after'], walls['before'])])}")
    print(f"after/before cpu:  {fmt_stat([x / y for x, y in zip(cpus['after'], cpus['before'])])}")


if __name__ == "__main__":
    main()
