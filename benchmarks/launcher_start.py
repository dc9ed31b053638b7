"""What loading protocol.py costs the node launcher's start (issue 15, typed contract): the time
from `python -I -S launcher.py SOCKET --no-cgroup` to its "ready" line, for the launcher of a
given earlier commit (before: stdlib only, no protocol.py) and this tree's (after: it loads
protocol.py from its file, which imports dataclasses and typing). Starts alternate before,
after, before, … in one process run. A worker starts its launcher once (node.prepare warms it),
so this is paid once per worker, not per job.

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
from _common import fmt_stat  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "statgrid" / "grid" / "launcher.py"


def start_ms(script: Path, sock_path: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-I", "-S", str(script), sock_path, "--no-cgroup"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    line = proc.stdout.readline()
    elapsed_ms = (time.perf_counter() - t0) * 1000
    proc.stdin.close()
    proc.wait(10)
    if line != b"ready\n":
        raise SystemExit(f"{script} did not start")
    return elapsed_ms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--before-rev", default="b634900", help="commit whose launcher.py is 'before' "
                    "(default: the last one without protocol.py)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before" / "launcher.py"
        before.parent.mkdir()
        git = ["git", "-C", str(ROOT), "show", f"{args.before_rev}:statgrid/grid/execution/launcher.py"]
        before.write_bytes(subprocess.run(git, check=True, capture_output=True).stdout)
        times: dict[str, list[float]] = {"before": [], "after": []}
        for i in range(args.runs + 1):
            for name, script in (("before", before), ("after", LAUNCHER)):
                ms = start_ms(script, os.path.join(tmp, f"{name}-{i}.sock"))
                if i:                                     # the first round warms the page cache
                    times[name].append(ms)
    print(f"launcher start to 'ready', ms ({args.runs} runs each, interleaved):")
    for name, values in times.items():
        print(f"  {name:<7} {fmt_stat(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
