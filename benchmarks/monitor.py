"""Monitor overhead (issues 4 and 29): CPU the sampler process uses at 1 Hz, as % of one core, with
the block source alone (the monitor before issue 29: `--sources block`) and with every library
source (block, nfs, gpfs, process), run interleaved in one process run.

The monitor runs as it does on a grid node (`python -m statgrid.monitor --stdin-liveness`, three
libraries). So that the process source has work, a stand-in launcher (a sibling of the monitor,
as the node's launcher is) runs --jobs job processes that each keep --fds files open on the
libraries and write 64 KiB to one of them every 10 ms: the monitor reads their /proc/<pid>/io and
fd links at each sample. Libraries: data and util on a tmpfs (/dev/shm: source process), work
on the benchmark's temporary directory (a block device here: source block). Its CPU time
(utime+stime from /proc/<pid>/stat) is read after a warm-up and again after the measured
window, so start-up (imports) is left out; Parquet flushes (every 60 samples) fall inside
windows of 60 s or more. Goal: ≤ 0.5 % of one core.

    .venv/bin/python benchmarks/monitor.py [--runs 3] [--seconds 60] [--interval 1] [--jobs 8] [--fds 16]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat  # noqa: E402

# The stand-in launcher: forks the jobs (its children, as the launcher's jobs are) and waits.
LAUNCHER = r"""
import os, sys, time
jobs, fds, libs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
kids = []
for j in range(jobs):
    pid = os.fork()
    if pid == 0:
        files = [open(os.path.join(libs[k % len(libs)], f"job{j}-{k}.bin"), "wb") for k in range(fds)]
        chunk = b"x" * 65536
        while True:
            f = files[0]
            f.seek(0)
            f.write(chunk)
            f.flush()
            time.sleep(0.01)
    kids.append(pid)
sys.stdin.read()
for pid in kids:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"""


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(sources: str, seconds: float, interval: float, libs: dict[str, Path], warmup_s: float = 3.0) -> float:
    out = Path(tempfile.mkdtemp(prefix="statgrid-bench-monitor-"))
    args = [a for name, path in libs.items() for a in ("--library", f"{name}={path}")]
    proc = subprocess.Popen([sys.executable, "-m", "statgrid.monitor", "--host", "bench", "--out", str(out / "mon"),
                             "--interval", str(interval), *args, "--stdin-liveness", "--sources", sources],
                            stdin=subprocess.PIPE)
    try:
        time.sleep(warmup_s)
        c0, t0 = cpu_s(proc.pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = cpu_s(proc.pid), time.monotonic()
    finally:
        proc.stdin.close()
        proc.wait(30)
        shutil.rmtree(out, ignore_errors=True)
    return 100.0 * (c1 - c0) / (t1 - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--jobs", type=int, default=8, help="job processes the process source reads (default 8)")
    ap.add_argument("--fds", type=int, default=16, help="files each job keeps open (default 16)")
    args = ap.parse_args()
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        sys.exit("needs a writable tmpfs at /dev/shm for the libraries of source 'process'")
    tmp = Path(tempfile.mkdtemp(prefix="statgrid-bench-libs-"))
    mem = Path(tempfile.mkdtemp(prefix="statgrid-bench-libs-", dir=shm))
    libs = {"data": mem / "data", "work": tmp / "work", "util": mem / "util"}
    for p in libs.values():
        p.mkdir()
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(args.jobs), str(args.fds), str(libs["data"]),
                                 str(libs["util"]), str(libs["work"])], stdin=subprocess.PIPE)
    old, new = [], []
    try:
        for i in range(args.runs):
            order = (("block", old), ("block,nfs,gpfs,process", new))
            for sources, values in (order if i % 2 == 0 else order[::-1]):     # alternate who goes first
                values.append(one_run(sources, args.seconds, args.interval, libs))
                print(f"run {i + 1} --sources {sources}: {values[-1]:.3f} % of one core", flush=True)
    finally:
        launcher.stdin.close()
        launcher.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(mem, ignore_errors=True)
    tick = 100 * 0.01 / args.seconds
    print(f"\nmonitor at {1 / args.interval:g} Hz over {args.seconds:g} s, {args.jobs} jobs × {args.fds} open files "
          f"(clock tick 10 ms, so ±{tick:.3f} % per run; goal ≤ 0.5 %):")
    print(f"  block source only (before):   {fmt_stat(old, 3)} % of one core")
    print(f"  every library source (after): {fmt_stat(new, 3)} % of one core")
    print(f"  after − before:               {fmt_stat([b - a for a, b in zip(old, new)], 3)} % of one core")
    print(f"  after ÷ before:               {fmt_stat([b / a if a else None for a, b in zip(old, new)], 2)}")


if __name__ == "__main__":
    main()
