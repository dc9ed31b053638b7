"""What loading protocol.py costs the node launcher's start (issue 15, typed contract): the time
from `python -I -S launcher.py SOCKET --no-cgroup` to its "ready" line, for the launcher of a
given earlier commit (before: stdlib only, no protocol.py) and this tree's (after: it loads
protocol.py from its file, which imports dataclasses and typing). Starts alternate before,
after, before, … in one process run. A worker starts its launcher once (node.prepare warms it),
so this is paid once per worker, not per job. Any commit may be "before" (e.g. the one before a
change to the launcher): its whole statgrid package is taken from git, as the launcher loads its
pieces from the files beside it.

    .venv/bin/python benchmarks/launcher_start.py [--runs 30] [--before-rev b634900]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_times  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER_PATH = "statgrid/grid/execution/launcher.py"
# Where launcher.py was before the grid/ folders (issue 25): an older --before-rev has it there.
OLD_LAUNCHER_PATH = "statgrid/grid/launcher.py"
LAUNCHER = ROOT / LAUNCHER_PATH


def checkout_launcher(rev: str, into: Path) -> Path:
    """The statgrid package of commit `rev` under `into`, and its launcher.py there: the launcher
    loads protocol.py and its other pieces by their paths beside it, so the whole package comes."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev, "--",
                             LAUNCHER_PATH, OLD_LAUNCHER_PATH], capture_output=True, text=True)
    if listed.returncode != 0 or not listed.stdout.split():
        raise SystemExit(f"--before-rev {rev!r}: {listed.stderr.strip() or 'no launcher.py in that commit'}; "
                         f"give a commit of this repository that has {LAUNCHER_PATH} or {OLD_LAUNCHER_PATH}")
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "statgrid"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / listed.stdout.split()[0]


def start_ms(script: Path, sock_path: str, log: Path) -> float:
    """One start; what the launcher says on stderr (its notes on cgroups and memory limits, the
    same at every start) goes to `log`, shown if it does not start."""
    with open(log, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-I", "-S", str(script), sock_path, "--no-cgroup"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        line = proc.stdout.readline()
        elapsed_ms = (time.perf_counter() - t0) * 1000
        proc.stdin.close()
        proc.wait(10)
    if line != b"ready\n":
        raise SystemExit(f"{script} did not start: {log.read_text(errors='replace').strip()}")
    return elapsed_ms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--before-rev", default="b634900", help="commit whose launcher.py is 'before' "
                    "(default: the last one without protocol.py)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before = checkout_launcher(args.before_rev, Path(tmp) / "before")
        times: dict[str, list[float]] = {"before": [], "after": []}
        for i in range(args.runs + 1):
            for name, script in (("before", before), ("after", LAUNCHER)):
                ms = start_ms(script, os.path.join(tmp, f"{name}-{i}.sock"), Path(tmp) / "stderr.txt")
                if i:                                     # the first round warms the page cache
                    times[name].append(ms)
    return print_times(f"launcher start to 'ready', ms ({args.runs} runs each, interleaved; before = {args.before_rev}):",
                       times, 7)


if __name__ == "__main__":
    sys.exit(main())
