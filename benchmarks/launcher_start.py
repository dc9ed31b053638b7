"""What loading protocol.py costs the node launcher's start (issue 15, typed contract): the time
from `python -I -S launcher.py SOCKET --no-cgroup` to its "ready" line, for the launcher of a
given earlier commit (before: stdlib only, no protocol.py) and this tree's (after: it loads
protocol.py from its file, which imports dataclasses and typing). Starts alternate before,
after, before, … in one process run. A worker starts its launcher once (node.prepare warms it),
so this is paid once per worker, not per job. Any commit may be "before" (e.g. the one before a
change to the launcher): its whole statgrid package is taken from git, as the launcher loads its
pieces from the files beside it. (Since issue 24 the launcher forks its first spare job process,
jobproc.py, before it says ready: about a fork more.)

--job-start (issue 24, item 9): what a job's start costs on the node, the launcher of --before-rev
against this tree's, both started once and given jobs in turn (`sleep --sleep`, one at a time each,
--jobs per run, --runs runs; order alternating): per run the median of (a) request → LaunchStarted
(the node's wait for the job's process to exec) and (b) start_ts → end_ts − the sleep (the slot's
time that is not the command's: set-up, exec, exit and reap), with the ratio after/before per run.

    .venv/bin/python benchmarks/launcher_start.py [--runs 30] [--before-rev b634900]
    .venv/bin/python benchmarks/launcher_start.py --job-start --before-rev REV [--runs 5] [--jobs 40]
"""
from __future__ import annotations

import argparse
import json
import os
import pwd
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat, print_times  # noqa: E402

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


def job_ms(sock_path: str, job_dir: Path, job_id: int, sleep_s: float) -> tuple[float, float]:
    """One `sleep` job through a launcher: (request → LaunchStarted, start_ts → end_ts − sleep_s), ms."""
    from statgrid.grid.master.core import identity_of
    from statgrid.job.protocol import LaunchRequest

    job_dir.mkdir()
    out = str(job_dir / "out.txt")
    req = LaunchRequest(job_id=job_id, attempt=1, host="bench", argv=("sleep", str(sleep_s)),
                        env={"PATH": os.environ["PATH"]}, cwd=str(job_dir), job_dir=str(job_dir), work_roots=(),
                        stdout=out, stderr=out, identity=identity_of(pwd.getpwuid(os.getuid()).pw_name),
                        attempt_file=str(job_dir / "attempt.json"))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(sock_path)
        t0 = time.perf_counter()
        sock.sendall((json.dumps(req.to_dict()) + "\n").encode())
        reader = sock.makefile("rb")
        started = json.loads(reader.readline())
        elapsed_ms = (time.perf_counter() - t0) * 1000
        done = json.loads(reader.readline())
        reader.close()
    if started.get("type") != "launch.started" or done.get("exit_code") != 0:
        raise SystemExit(f"job {job_id} did not run: {started} {done}")
    return elapsed_ms, (done["end_ts"] - started["start_ts"] - sleep_s) * 1000


def job_start(args, scripts: dict[str, Path], tmp: Path) -> int:
    """--job-start: both launchers up, jobs in turn; per run the medians and their ratio."""
    procs = {}
    try:
        for name, script in scripts.items():
            path = str(tmp / f"{name}.sock")
            procs[name] = (subprocess.Popen([sys.executable, "-I", "-S", str(script), path], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL), path)
            if procs[name][0].stdout.readline() != b"ready\n":
                raise SystemExit(f"{script} did not start")
        res = {name: {"started": [], "overhead": []} for name in scripts}
        n = 0
        for run in range(args.runs + 1):                  # run 0 warms (page cache, first cgroups)
            per = {name: ([], []) for name in scripts}
            for i in range(args.jobs):
                for name in (list(scripts) if (run + i) % 2 == 0 else list(scripts)[::-1]):
                    n += 1
                    started_ms, overhead_ms = job_ms(procs[name][1], tmp / f"job{n}", n, args.sleep)
                    per[name][0].append(started_ms)
                    per[name][1].append(overhead_ms)
            if run:
                for name in scripts:
                    res[name]["started"].append(statistics.median(per[name][0]))
                    res[name]["overhead"].append(statistics.median(per[name][1]))
    finally:
        for proc, _ in procs.values():
            proc.stdin.close()
            proc.wait(30)
    print(f"a job's start on the node: {args.runs} runs × {args.jobs} jobs (sleep {args.sleep} s) per launcher, "
          f"interleaved; medians per run; load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for key, what in (("started", "request → LaunchStarted, ms"),
                      ("overhead", "start_ts → end_ts − sleep (the slot's time beyond the command), ms")):
        print(what)
        for name in scripts:
            ratio = "" if name == "before" else "   after/before " + fmt_stat(
                [a / b for a, b in zip(res[name][key], res["before"][key])], 3)
            print(f"  {name if name == 'after' else 'before (' + args.before_rev + ')':20} "
                  f"{fmt_stat(res[name][key], 2)}{ratio}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=None, help="default 30 (start), 5 (--job-start)")
    ap.add_argument("--before-rev", default="b634900", help="commit whose launcher.py is 'before' "
                    "(default: the last one without protocol.py)")
    ap.add_argument("--job-start", action="store_true", help="time jobs' starts instead of the launcher's (issue 24)")
    ap.add_argument("--jobs", type=int, default=40, help="--job-start: jobs per run and launcher")
    ap.add_argument("--sleep", type=float, default=0.02, help="--job-start: each job's sleep, s")
    args = ap.parse_args()
    if args.job_start:
        args.runs = 5 if args.runs is None else args.runs
        with tempfile.TemporaryDirectory() as tmp:
            before = checkout_launcher(args.before_rev, Path(tmp) / "before")
            return job_start(args, {"before": before, "after": LAUNCHER}, Path(tmp))
    args.runs = 30 if args.runs is None else args.runs
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
