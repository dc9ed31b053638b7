"""benchmarks/import_fixed: Session.import_fixed's numpy path against its SQL path (issue 29: the
fixed-width imports of the Mixed Analytics I/O family, statgrid/bench/jobs/io_import_*.py).

    python benchmarks/import_fixed.py [--name person|household] [--mb 320] [--runs 3] [--threads 2]
                                      [--memsize 2G] [--dir /tmp] [--file PATH] [--keep]

The input is the datagen text file `--name` (statgrid/bench/datagen.py, seed 1) with as many records
as make about --mb MB, written under --dir and deleted at the end (--keep keeps it; --file reads an
existing file of that layout instead). Both sides run in this one process run, interleaved (run r
rotates the order by r), each in a fresh session (opened and closed outside the timed region; the
same memsize and threads). Before each timed import the file's pages are dropped from the page
cache (datagen.evict), so each side reads it from storage as the I/O jobs do.

Timed: the import_fixed call, in CPU seconds of this process — user + system of every thread
(getrusage RUSAGE_SELF: Python, numpy and DuckDB's threads) — and in wall seconds. Printed per side:
MB of input per CPU-second, and the ratio SQL CPU / numpy CPU per run, as median (min … max, N runs).
Before the figures count, the two data sets must be equal (same schema, same values, same order):
the script exits 1 if they are not.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat  # noqa: E402


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def make_file(name: str, mb: float, directory: Path) -> Path:
    import duckdb

    from statgrid.bench import datagen

    rows = int(mb * 1e6 / datagen.SPECS[name].written_bytes_per_row)
    path = directory / f"{name}_{rows}.txt"
    con = duckdb.connect()
    try:
        con.execute("SET threads = 2")
        datagen.macros(con, 1)
        con.execute(f"COPY ({datagen.SPECS[name].build(rows)}) TO '{path}' "
                    "(FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\x1f')")
    finally:
        con.close()
    return path


def one_run(args, path: Path, fast: bool) -> tuple[float, float, Path]:
    """(CPU s, wall s) of one import into a fresh session's WORK; the data set is kept for the check."""
    import shutil

    from statgrid.bench import datagen
    from statgrid.config import load_config
    from statgrid.session import Session, SessionLog

    s = Session(load_config(), {"memsize": args.memsize, "threads": str(args.threads)},
                log=SessionLog(text=None, jsonl=None, listing=None))
    try:
        datagen.evict(path)
        c0, w0 = cpu_s(), time.perf_counter()
        ref = s.import_fixed(path, "work.out", datagen.layout(args.name), fast=fast)
        c1, w1 = cpu_s(), time.perf_counter()
        keep = Path(args.work) / f"{'fast' if fast else 'sql'}.parquet"
        shutil.copyfile(ref.path, keep)
    finally:
        s.close()
    return c1 - c0, w1 - w0, keep


def same_data(a: Path, b: Path) -> bool:
    import pyarrow.parquet as pq

    ta, tb = pq.read_table(a), pq.read_table(b)
    return ta.schema == tb.schema and ta.equals(tb)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--name", default="person", choices=["person", "household"])
    ap.add_argument("--mb", type=float, default=320.0, help="size of the generated file in MB (1e6 bytes)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--memsize", default="2G")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--file", help="an existing datagen text file of layout --name (not deleted)")
    ap.add_argument("--keep", action="store_true", help="keep the generated file")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="sg-import-fixed-", dir=args.dir))
    os.environ.setdefault("STATGRID_HOME", str(tmp / "home"))
    args.work = tmp
    path = Path(args.file) if args.file else make_file(args.name, args.mb, tmp)
    mb = path.stat().st_size / 1e6
    print(f"input: {path} ({mb:.1f} MB, {args.name} layout), threads={args.threads}, memsize={args.memsize}, "
          f"{args.runs} runs, sides interleaved")
    cpu = {True: [], False: []}
    wall = {True: [], False: []}
    ratios = []
    try:
        for r in range(args.runs):
            order = (True, False) if r % 2 == 0 else (False, True)
            got = {}
            for fast in order:
                c, w, out = one_run(args, path, fast)
                cpu[fast].append(c)
                wall[fast].append(w)
                got[fast] = out
                print(f"  run {r + 1} {'numpy' if fast else 'SQL  '}: {c:.2f} CPU s, {w:.2f} wall s, "
                      f"{mb / c:.1f} MB/CPU-s", flush=True)
            if not same_data(got[True], got[False]):
                print("FAIL: the numpy and SQL paths wrote different data sets", file=sys.stderr)
                return 1
            ratios.append(cpu[False][-1] / cpu[True][-1])
        figures = {
            "mb": mb,
            "numpy_mb_per_cpu_s": [mb / c for c in cpu[True]],
            "sql_mb_per_cpu_s": [mb / c for c in cpu[False]],
            "cpu_ratio_sql_over_numpy": ratios,
            "wall_ratio_sql_over_numpy": [b / a for a, b in zip(wall[True], wall[False])],
        }
        print(f"numpy path: {fmt_stat(figures['numpy_mb_per_cpu_s'], 1)} MB/CPU-s")
        print(f"SQL path:   {fmt_stat(figures['sql_mb_per_cpu_s'], 1)} MB/CPU-s")
        print(f"CPU-s per MB, SQL / numpy:  {fmt_stat(ratios, 2)}  (goal ≥ 3)")
        print(f"wall s, SQL / numpy:        {fmt_stat(figures['wall_ratio_sql_over_numpy'], 2)}")
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=1))
        return 0
    finally:
        import shutil

        if args.file or args.keep:
            for p in tmp.glob("*.parquet"):
                p.unlink()
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
