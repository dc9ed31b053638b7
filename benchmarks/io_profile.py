"""Issue 29 item 5: the I/O profile a session's data-set reads and writes give, by BUFSIZE and COMPRESS.

One process, one session per side, one engine thread (one core), sides interleaved per round:
    bufsize 8k vs 256k, each with compress=no and compress=binary (zstd).
Per side and round, on a data set of --mb MB of 8-byte numbers (20 columns) in --dir:
  write: the session writes it (COPY … ROW_GROUP_SIZE bufsize/8, the codec), then fsync — so the bytes
         reach the device inside the measured time;
  read:  its pages are dropped from the page cache (fsync + posix_fadvise DONTNEED: this file only, no
         root, no effect on other processes' cache — the way data "larger than memory" is read cold), then
         the session reads every column (sum of each).
Measured: device requests and bytes (/proc/diskstats of the file's device; other processes' I/O on that
device is counted too — run on a quiet machine), the session's read/write calls and bytes (/proc/self/io),
wall time and CPU time. Printed as `median (min … max, N runs)`: MB/s per core (bytes over wall time of
one single-threaded session, i.e. one core), logical and at the device; IOPS; request size; and the ratios
8k ÷ 256k — against fio's per-core ceiling (1 job, 1 MiB, O_DIRECT) in the same directory.

    .venv/bin/python benchmarks/io_profile.py [--mb 400] [--runs 3] [--dir /var/tmp/statgrid-bench/io]

--families: the Mixed Analytics I/O templates instead (statgrid/bench/jobs/io_*.py, one job each, two
sessions, through `statgrid bench mixed` on 1 host × 2 slots), per side `-o bufsize=… -o compress=…`, each
side with its own data (made once, reused in later rounds), sides interleaved per round. Their inputs are
read cold (datagen and each job evict the files' pages: statgrid/bench/datagen.py `evict`). MB/s per core
as benchmarks/mixed.py computes it: the I/O jobs' logical reads + writes (and the monitor's device MB/s)
over the union of their run intervals, ÷ this machine's cores.

    .venv/bin/python benchmarks/io_profile.py --families [--scale 0.005] [--runs 2]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat  # noqa: E402

SIDES = [("8k", "no"), ("256k", "no"), ("8k", "binary"), ("256k", "binary")]


def device_of(path: Path) -> str:
    """The /proc/diskstats name of the block device holding `path` (its whole disk)."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    name = Path(f"/sys/dev/block/{major}:{minor}").resolve().name
    part = Path(f"/sys/class/block/{name}/partition")
    return Path(f"/sys/class/block/{name}").resolve().parent.name if part.exists() else name


def diskstats(dev: str) -> tuple[int, int, int, int]:
    """(reads, read bytes, writes, write bytes) completed on `dev` since boot."""
    for line in open("/proc/diskstats"):
        f = line.split()
        if f[2] == dev:
            return int(f[3]), int(f[5]) * 512, int(f[7]), int(f[9]) * 512
    raise SystemExit(f"device {dev!r} is not in /proc/diskstats")


def proc_io() -> dict[str, int]:
    return {k: int(v) for k, v in (line.split(": ") for line in open("/proc/self/io").read().splitlines())}


def cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def drop_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def measure(dev: str, run) -> dict:
    d0, p0, c0, w0 = diskstats(dev), proc_io(), cpu_s(), time.perf_counter()
    run()
    d1, p1, c1, w1 = diskstats(dev), proc_io(), cpu_s(), time.perf_counter()
    wall = w1 - w0
    reqs = (d1[0] - d0[0]) + (d1[2] - d0[2])
    dev_bytes = (d1[1] - d0[1]) + (d1[3] - d0[3])
    calls = (p1["syscr"] - p0["syscr"]) + (p1["syscw"] - p0["syscw"])
    logical = (p1["rchar"] - p0["rchar"]) + (p1["wchar"] - p0["wchar"])
    return {"wall_s": wall, "cpu_s": c1 - c0, "device_mb_s": dev_bytes / wall / 1e6, "logical_mb_s": logical / wall / 1e6,
            "iops": reqs / wall, "request_kib": dev_bytes / reqs / 1024 if reqs else None,
            "call_kib": logical / calls / 1024 if calls else None, "cpu_per_real": (c1 - c0) / wall}


def fio_per_core(directory: Path, rw: str) -> float:
    r = subprocess.run(["fio", "--name=ceiling", f"--directory={directory}", f"--rw={rw}", "--bs=1M", "--size=1G",
                        "--direct=1", "--ioengine=psync", "--numjobs=1", "--runtime=8", "--time_based",
                        "--output-format=json"], capture_output=True, text=True, check=True)
    job = json.loads(r.stdout)["jobs"][0]
    for f in directory.glob("ceiling*"):
        f.unlink()
    return job["read" if rw == "read" else "write"]["bw_bytes"] / 1e6


IO_WORKLOAD = """# the I/O families of the Mixed Analytics workload, one job each, two sessions
[global]
name = "IO8"
sessions = 2
ramp_s = 0
concurrency = 1
scale = {scale!r}
seed = 1
""" + "".join(f"\n[{t}]\ncount = 1\n" for t in ("io_import_household", "io_import_person", "io_datastep_big",
                                                 "io_sql_semijoin", "io_big_sort", "io_etl_lookup", "io_random_read",
                                                 "io_random_write"))
FAMILY_SIDES = [("256k", "no"), ("8k", "no"), ("256k", "binary")]


def families(args) -> int:
    from mixed import device_mb_s, union_intervals

    from statgrid.bench import mixed as bench_mixed

    ncpu = len(os.sched_getaffinity(0))
    shutil.rmtree(args.dir, ignore_errors=True)
    args.dir.mkdir(parents=True)
    (args.dir / "io8.toml").write_text(IO_WORKLOAD.format(scale=args.scale))
    fio = {"read": fio_per_core(args.dir, "read"), "write": fio_per_core(args.dir, "write")}
    print(f"fio 1 job 1 MiB O_DIRECT per core: read {fio['read']:.0f} MB/s, write {fio['write']:.0f} MB/s; "
          f"{ncpu} cores; scale {args.scale:g}", flush=True)
    res: dict[tuple, dict[str, list]] = {}
    per_job: dict[tuple, dict[str, list]] = {}
    for rnd in range(args.runs):
        for buf, comp in FAMILY_SIDES:
            home = args.dir / f"home-{buf}-{comp}"
            home.mkdir(exist_ok=True)
            out = args.dir / f"b-{buf}-{comp}-{rnd}"
            subprocess.run([sys.executable, "-m", "statgrid", "bench", "mixed", "--workload", str(args.dir / "io8.toml"),
                            "--nodes", "1", "--slots", "2", "-o", f"bufsize={buf}", "-o", f"compress={comp}",
                            "--out", str(out)], env={**os.environ, "STATGRID_HOME": str(home)}, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            meta, jobs = bench_mixed.load_bundle(out)
            io = [j for j in jobs if j["state"] == "DONE" and j["kind"] == "io"]
            spans = union_intervals([(j["start_ts"], j["end_ts"]) for j in io])
            t = sum(b - a for a, b in spans)
            logical = sum(j["rusage"]["logical_read_bytes"] + j["rusage"]["logical_write_bytes"] for j in io)
            cpu = sum(j["rusage"]["user_cpu_s"] + j["rusage"]["sys_cpu_s"] for j in io)
            physical = sum((j["rusage"].get("read_bytes") or 0) + (j["rusage"].get("write_bytes") or 0) for j in io)
            slot = res.setdefault((buf, comp), {})
            for k, v in (("jobs_done", len(io)), ("io_phase_s", t), ("logical_mb_s_core", logical / 1e6 / t / ncpu),
                         ("device_mb_s_core", (device_mb_s(out, spans) or 0) / ncpu), ("cpu_busy", cpu / t / ncpu),
                         # per CPU-second: what one job moves with a core of its own, whatever else runs
                         ("logical_mb_per_cpu_s", logical / 1e6 / cpu), ("physical_mb_per_cpu_s", physical / 1e6 / cpu)):
                slot.setdefault(k, []).append(v)
            for j in io:
                ru = j["rusage"]
                busy = ru["user_cpu_s"] + ru["sys_cpu_s"]
                per = per_job.setdefault((buf, comp, j["template"]), {"logical": [], "physical": []})
                per["logical"].append((ru["logical_read_bytes"] + ru["logical_write_bytes"]) / 1e6 / busy)
                per["physical"].append(((ru.get("read_bytes") or 0) + (ru.get("write_bytes") or 0)) / 1e6 / busy)
        print(f"round {rnd + 1}/{args.runs} done", flush=True)
    print(f"\nI/O families ({len(FAMILY_SIDES)} sides × {args.runs} rounds, interleaved; per core of {ncpu})")
    for side, m in res.items():
        print(f"  bufsize={side[0]:<5} compress={side[1]:<7} " + "  ".join(f"{k} {fmt_stat(v, 2)}" for k, v in m.items()))
        print(f"      logical ÷ fio read per core {fmt_stat([x / fio['read'] for x in m['logical_mb_s_core']], 3)}; "
              f"device ÷ fio read per core {fmt_stat([x / fio['read'] for x in m['device_mb_s_core']], 3)}")
    print("\nper job, MB per CPU-second (logical / reaching storage: the job's /proc/<pid>/io)")
    for (buf, comp, template), m in sorted(per_job.items(), key=lambda kv: (kv[0][2], kv[0][:2])):
        print(f"  {template:<20} bufsize={buf:<5} compress={comp:<7} logical {fmt_stat(m['logical'], 1)}  "
              f"physical {fmt_stat(m['physical'], 1)}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=400, help="data set size in MB (20 columns of 8-byte numbers)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/statgrid-bench/io"))
    ap.add_argument("--families", action="store_true", help="the Mixed Analytics I/O templates (see above)")
    ap.add_argument("--scale", type=float, default=0.005, help="--families: data scale")
    args = ap.parse_args()
    if args.families:
        return families(args)
    from statgrid.config import load_config
    from statgrid.libraries import parquet_copy_sql
    from statgrid.session import Session, SessionLog

    home = args.dir / "home"
    shutil.rmtree(args.dir, ignore_errors=True)
    (home / "data").mkdir(parents=True)
    os.environ["STATGRID_HOME"] = str(home)
    dev = device_of(args.dir)
    rows = args.mb * 10**6 // (20 * 8)
    select = "SELECT " + ", ".join(f"hash(range, {c})::DOUBLE / 1e19 AS c{c:02d}" for c in range(20)) + \
             f" FROM range({rows})"
    fio = {"read": fio_per_core(args.dir, "read"), "write": fio_per_core(args.dir, "write")}
    print(f"device {dev}; fio 1 job 1 MiB O_DIRECT: read {fio['read']:.0f} MB/s, write {fio['write']:.0f} MB/s "
          f"(per core); data set {rows:,} rows × 20 numbers ({args.mb} MB)", flush=True)
    results: dict[tuple, dict[str, list]] = {}
    for rnd in range(args.runs):
        for buf, comp in SIDES:
            opts = {"bufsize": buf, "compress": comp, "threads": 1, "memsize": "1G"}
            with Session(load_config(), opts, log=SessionLog(text=None, listing=None)) as s:
                path = home / "data" / "io_profile.parquet"
                path.unlink(missing_ok=True)

                def write():
                    s.execute(parquet_copy_sql(select, path, s.options.dataset_io)).fetchall()
                    fd = os.open(path, os.O_RDONLY)
                    os.fsync(fd)
                    os.close(fd)
                w = measure(dev, write)
                drop_cache(path)
                cols = ", ".join(f"sum(c{c:02d})" for c in range(20))
                r = measure(dev, lambda: s.execute(f"SELECT {cols} FROM read_parquet('{path}')").fetchall())
                w["file_mb"] = r["file_mb"] = path.stat().st_size / 1e6
            for phase, m in (("write", w), ("read", r)):
                slot = results.setdefault((buf, comp, phase), {})
                for k, v in m.items():
                    slot.setdefault(k, []).append(v)
        print(f"round {rnd + 1}/{args.runs} done", flush=True)
    keys = ["logical_mb_s", "device_mb_s", "iops", "request_kib", "call_kib", "cpu_per_real", "file_mb"]
    for phase in ("read", "write"):
        print(f"\n{phase} (one session, one engine thread = one core; fio per core {fio[phase]:.0f} MB/s)")
        for buf, comp in SIDES:
            m = results[(buf, comp, phase)]
            print(f"  bufsize={buf:<5} compress={comp:<7} " + "  ".join(f"{k} {fmt_stat(m[k], 1)}" for k in keys))
        for comp in ("no", "binary"):
            small, big = results[("8k", comp, phase)], results[("256k", comp, phase)]
            ratios = [a / b if b else None for a, b in zip(small["iops"], big["iops"])]
            mbs = [a / b if b else None for a, b in zip(small["device_mb_s"], big["device_mb_s"])]
            print(f"  compress={comp}: IOPS 8k ÷ 256k {fmt_stat(ratios, 2)}; device MB/s 8k ÷ 256k {fmt_stat(mbs, 2)}")
        for buf in ("8k", "256k"):
            none, z = results[(buf, "no", phase)], results[(buf, "binary", phase)]
            print(f"  bufsize={buf}: device MB/s per core no ÷ zstd "
                  f"{fmt_stat([a / b if b else None for a, b in zip(none['device_mb_s'], z['device_mb_s'])], 2)}; "
                  f"device MB/s per core ÷ fio {fmt_stat([a / fio[phase] for a in none['device_mb_s']], 2)} (no)")
    shutil.rmtree(args.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
