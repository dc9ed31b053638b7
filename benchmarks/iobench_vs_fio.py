"""statgrid iobench against fio on the same cases, interleaved A/B in one run (issue 4).

Cases: sequential read, write, and 50/50 mix; 1 and 4 threads; O_DIRECT and buffered. fio
runs with ioengine=psync (one blocking request at a time per thread, like iobench), the same
block size, size per thread and directory; buffered write cases use end_fsync on both sides,
buffered reads start from a cold cache on both sides (files laid out and synced, caches
dropped when root; iobench also drops each file's pages with fadvise).
Ratio = iobench MB/s ÷ fio MB/s per case, printed as `median (min … max, N runs)`.
Goal (issue 4): ratio ≥ 0.95.

Time mode (issue 29, ndisk64 -t): `--time 5s` runs every case for that long on both sides —
iobench's --time against fio's `--time_based --runtime` — each thread looping over its --size
file. `--device /dev/X` (root) reads a raw block device instead of files (read cases only, O_DIRECT,
each thread on its own --size slice: fio's offset_increment), in either mode.

    .venv/bin/python benchmarks/iobench_vs_fio.py [--dir /var/tmp/io] [--size 512M] [--runs 3]
    .venv/bin/python benchmarks/iobench_vs_fio.py --time 5s --size 256M [--bs 4K --pattern rand]
    .venv/bin/python benchmarks/iobench_vs_fio.py --device /dev/loop0 --time 3s --size 64M
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
from _common import fmt_stat  # noqa: E402

from statgrid.bench import iobench_out  # noqa: E402
from statgrid.bench.iobench import IOSpec, run_node  # noqa: E402
from statgrid.config import parse_duration_s, parse_size_bytes  # noqa: E402

CASES = [(mode, threads, direct) for mode in ("read", "write", "rw") for threads in (1, 4)
         for direct in (True, False)]
DEVICE_CASES = [("read", threads, True) for threads in (1, 4)]


class Side:
    """What both sides share in one invocation: block size, pattern, time (None: size mode), device."""

    bs = 1 << 20
    pattern = "seq"
    duration_s: float | None = None
    device: Path | None = None


def total_mb_s(result: dict) -> float:
    t = result["runs"][0]["total"]
    return (t["read"]["bw_bytes"] + t["write"]["bw_bytes"]) / 1e6


def run_iobench(directory: Path, mode: str, threads: int, direct: bool, size: int) -> float:
    drop_caches()
    spec = IOSpec(directory, mode, 50, Side.pattern, Side.bs, threads, size, direct,
                  fsync=not direct and mode != "read", runs=1, duration_s=Side.duration_s, device=Side.device)
    res = run_node(spec, "bench")
    return total_mb_s(iobench_out.summarize(spec, [res]))


def drop_caches() -> None:
    """Both sides start from a cold page cache where the kernel lets us (root)."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        pass


def run_fio(directory: Path, mode: str, threads: int, direct: bool, size: int) -> float:
    rw = {"read": "read", "write": "write", "rw": "rw"}[mode] if Side.pattern == "seq" else \
        {"read": "randread", "write": "randwrite", "rw": "randrw"}[mode]
    where = [f"--directory={directory}"] if Side.device is None else \
        [f"--filename={Side.device}", f"--offset_increment={size}"]         # thread i at i × size, as iobench
    argv = ["fio", "--name=sg", *where, f"--rw={rw}", "--rwmixread=50", f"--bs={Side.bs}",
            f"--size={size}", f"--numjobs={threads}", f"--direct={int(direct)}", "--ioengine=psync",
            "--group_reporting", "--output-format=json", "--invalidate=1"]
    if Side.duration_s is not None:
        argv += ["--time_based", f"--runtime={Side.duration_s:g}s"]
    # rand: fio's random map (its default) touches every block once per loop, as iobench's shuffled
    # pass does; with --norandommap fio never ends a loop, so never invalidates, and its buffered
    # random reads come from the page cache after the first seconds (measured: 2387 vs 121 MB/s).
    if mode != "write" and Side.device is None:
        # fio lays files out without syncing them: dirty pages survive its invalidate and reads
        # then hit the page cache. Lay out first, sync, drop caches (iobench's own layout
        # fsyncs and drops each file's pages).
        subprocess.run(argv + ["--create_only=1"], capture_output=True, check=True)
        drop_caches()
    if not direct and mode != "read":
        argv.append("--end_fsync=1")
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]
    result = (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 1e6
    for f in directory.glob("sg.*"):
        f.unlink()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/statgrid-bench/io"))
    ap.add_argument("--size", default="512M", help="per thread")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--time", help="time mode: each case runs this long on both sides (5s)")
    ap.add_argument("--bs", default="1M")
    ap.add_argument("--pattern", choices=("seq", "rand"), default="seq")
    ap.add_argument("--device", type=Path, help="a raw block device to read (root; read cases only)")
    ap.add_argument("--modes", default="read,write,rw", help="which cases: read,write,rw")
    ap.add_argument("--threads", default="1,4", help="which cases: 1,4")
    args = ap.parse_args()
    if shutil.which("fio") is None:
        raise SystemExit("fio is not installed (Debian: apt-get install fio)")
    args.dir.mkdir(parents=True, exist_ok=True)
    size = parse_size_bytes(args.size)
    Side.bs, Side.pattern, Side.device = parse_size_bytes(args.bs), args.pattern, args.device
    Side.duration_s = parse_duration_s(args.time) if args.time else None
    modes, threads = args.modes.split(","), [int(t) for t in args.threads.split(",")]
    cases = [c for c in (CASES if args.device is None else DEVICE_CASES) if c[0] in modes and c[1] in threads]
    if args.device is not None:
        from statgrid.bench.iobench_device import open_device, region_bytes

        dev = open_device(args.device, writes=False, destructive=False)          # a block device, root
        region_bytes(dev, max(t for _, t, _ in cases), Side.bs, size)           # every thread's slice inside it
    ratios: dict[tuple, list[float]] = {c: [] for c in cases}
    ours: dict[tuple, list[float]] = {c: [] for c in cases}
    theirs: dict[tuple, list[float]] = {c: [] for c in cases}
    for i in range(args.runs):
        for case in cases:
            order = ("statgrid", "fio") if i % 2 == 0 else ("fio", "statgrid")
            got = {}
            for side in order:
                got[side] = (run_iobench if side == "statgrid" else run_fio)(args.dir, *case, size)
            ours[case].append(got["statgrid"])
            theirs[case].append(got["fio"])
            ratios[case].append(got["statgrid"] / got["fio"])
            print(f"run {i + 1} {case}: statgrid {got['statgrid']:.0f} MB/s, fio {got['fio']:.0f} MB/s", flush=True)
    how = f"for {args.time} per case (time mode)" if args.time else "once (size mode)"
    print(f"\n{args.pattern}, bs {args.bs}, {args.size} per thread {how}, "
          f"{'on device ' + str(args.device) if args.device else 'in ' + str(args.dir)}")
    print(f"{'mode':<6}{'threads':>8}  {'io':<9}{'statgrid MB/s':<34}{'fio MB/s':<34}ratio")
    for case in cases:
        mode, threads, direct = case
        print(f"{mode:<6}{threads:>8}  {'direct' if direct else 'buffered':<9}{fmt_stat(ours[case], 0):<34}"
              f"{fmt_stat(theirs[case], 0):<34}{fmt_stat(ratios[case])}")
    allr = [r for rs in ratios.values() for r in rs]
    print(f"\nall cases: ratio {fmt_stat(allr)} (goal ≥ 0.95)")


if __name__ == "__main__":
    main()
