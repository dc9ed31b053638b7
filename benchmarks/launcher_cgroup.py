"""What a cgroup per job costs the launcher (issue 14, item 10): the round trip of a `true` job
(connect → "started" → "exited") through two real launchers started side by side,
A with a cgroup v2 per job (mkdir, the child's move, cgroup.kill at its end, rmdir) and
B with --no-cgroup (process group only). The jobs alternate A, B, A, B … in one process run.

    .venv/bin/python benchmarks/launcher_cgroup.py [--jobs 200]
"""
from __future__ import annotations

import argparse
import json
import os
import pwd
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_times  # noqa: E402

import statgrid.grid.execution.launcher as launcher_mod  # noqa: E402
from statgrid.job.protocol import Identity, LaunchExited, LaunchRequest, LaunchStarted  # noqa: E402


def start_launcher(sock_path: str, extra: list[str]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-I", "-S", launcher_mod.__file__, sock_path, *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    if proc.stdout.readline() != b"ready\n":
        raise SystemExit(f"launcher {extra} did not start")
    return proc


def round_trip_ms(sock_path: str, out: str) -> tuple[float, str | None]:
    t0 = time.perf_counter()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(sock_path)
        s.sendall((json.dumps(request(out).to_dict()) + "\n").encode())
        reader = s.makefile("rb")
        started = LaunchStarted.from_dict(json.loads(reader.readline()))
        exited = LaunchExited.from_dict(json.loads(reader.readline()))
        reader.close()
    if exited.exit_code != 0:
        raise SystemExit(f"job failed: {exited}")
    return (time.perf_counter() - t0) * 1000, started.cgroup


def request(out: str) -> LaunchRequest:
    """A job of the account running this (a launcher runs no one else's unless it is root, and then
    only users it knows); its job directory is out's, which a root launcher gives to that account."""
    me = pwd.getpwuid(os.getuid())
    job_dir = os.path.dirname(out)
    return LaunchRequest(job_id=1, attempt=1, host="bench", argv=("true",), env={"PATH": os.environ["PATH"]},
                         cwd="/", job_dir=job_dir, work_roots=(), stdout=out, stderr=out,
                         identity=Identity(user=me.pw_name, uid=me.pw_uid, gid=me.pw_gid,
                                           groups=tuple(os.getgrouplist(me.pw_name, me.pw_gid))),
                         attempt_file=os.path.join(job_dir, "attempt.json"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=200, help="jobs per side")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "job"))
        sides = {"A cgroup per job": [], "B process group only": ["--no-cgroup"]}
        procs = {name: start_launcher(os.path.join(tmp, f"{i}.sock"), extra)
                 for i, (name, extra) in enumerate(sides.items())}
        times: dict[str, list[float]] = {name: [] for name in sides}
        cgroups: dict[str, str | None] = {}
        try:
            for i in range(args.jobs + 10):                      # 10 warm-up jobs per side, not counted
                for j, name in enumerate(sides):
                    ms, cgroups[name] = round_trip_ms(os.path.join(tmp, f"{j}.sock"), os.path.join(tmp, "job", "out"))
                    if i >= 10:
                        times[name].append(ms)
        finally:
            for proc in procs.values():
                proc.stdin.close()
                proc.wait(10)
    if cgroups["A cgroup per job"] is None:
        print("note: side A got no cgroup (no cgroup v2 this launcher may write to): both sides are the same")
    return print_times(f"round trip of a `true` job through the launcher, ms ({args.jobs} jobs per side, interleaved):",
                       times, 22, 3)


if __name__ == "__main__":
    sys.exit(main())
