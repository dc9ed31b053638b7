"""Monitor overhead (issue 4): CPU the sampler process uses at 1 Hz, as % of one core.

The monitor runs as it does on a grid node (`python -m statgrid.monitor`, three libraries),
and its CPU time (utime+stime from /proc/<pid>/stat) is read after a warm-up and again after
the measured window, so start-up (imports) is left out; Parquet flushes (every 60 samples)
fall inside windows of 60 s or more. Goal: ≤ 0.5 % of one core.

    .venv/bin/python benchmarks/monitor.py [--runs 3] [--seconds 60] [--interval 1]
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


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(seconds: float, interval: float, warmup_s: float = 3.0) -> float:
    out = Path(tempfile.mkdtemp(prefix="statgrid-bench-monitor-"))
    libs = []
    for name in ("data", "work", "util"):
        (out / name).mkdir()
        libs += ["--library", f"{name}={out / name}"]
    proc = subprocess.Popen([sys.executable, "-m", "statgrid.monitor", "--host", "bench", "--out", str(out / "mon"),
                             "--interval", str(interval), *libs, "--stdin-liveness"], stdin=subprocess.PIPE)
    try:
        time.sleep(warmup_s)
        c0, t0 = cpu_s(proc.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = cpu_s(proc.pid), time.monotonic()
    finally:
        proc.stdin.close()
        proc.wait(30)
    return 100.0 * (c1 - c0) / (t1 - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=1.0)
    args = ap.parse_args()
    values = []
    for i in range(args.runs):
        values.append(one_run(args.seconds, args.interval))
        print(f"run {i + 1}: {values[-1]:.3f} % of one core", flush=True)
    print(f"\nmonitor at {1 / args.interval:g} Hz over {args.seconds:g} s: {fmt_stat(values, 3)} % of one core "
          "(goal ≤ 0.5 %; clock tick 10 ms, so ±{:.3f} % per run)".format(100 * 0.01 / args.seconds))


if __name__ == "__main__":
    main()
