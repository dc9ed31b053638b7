"""benchmarks/sql_udf: PROC SQL's bridge to the DATA step's functions (statgrid/sas/procs/sqludf.py) — a DuckDB
Python UDF called once per row ('native') vs an arrow UDF called once per vector ('arrow', the default).

    python benchmarks/sql_udf.py [--rows 200000] [--runs 5] [--threads 2]

Input: --rows rows of a DOUBLE column x (5 % missing) and a VARCHAR column s in a DuckDB table. Per function
(PROBNORM(x), PRXMATCH('/b+/', s)) and run, both sides run `SELECT sum(udf(...))` interleaved (run r rotates
their order); prints rows/s per side as `median (min … max, N runs)` and the ratio arrow/native per run.
Both sides' sums are checked equal before timing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import clean_process_state, fmt_stat, rotated, timed  # noqa: E402

from statgrid.sas.procs import sqludf  # noqa: E402

CASES = [("PROBNORM", "n", "x"), ("PRXMATCH", "cc", "'/b+/', s")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    con = duckdb.connect()
    con.execute(f"SET threads = {a.threads}")
    con.execute(f"CREATE TABLE t AS SELECT CASE WHEN i % 20 = 0 THEN NULL ELSE (i % 1000) / 250.0 - 2 END AS x, "
                f"repeat('ab', CAST(i % 7 AS INTEGER)) || 'c' AS s FROM range({a.rows}) r(i)")
    program = SimpleNamespace(session=SimpleNamespace(con=con), extras={}, log=None, formats={})
    print(f"sql_udf: {a.rows} rows, {a.runs} runs, threads={a.threads}; rows/s")
    for name, sig, args in CASES:
        sides = {m: sqludf.register(program, name, sig, mode=m) for m in ("native", "arrow")}
        sums = {m: con.execute(f"SELECT sum({u}({args})) FROM t").fetchall()[0][0] for m, u in sides.items()}
        assert abs(sums["native"] - sums["arrow"]) <= 1e-9 * max(1.0, abs(sums["native"])), sums
        rates: dict[str, list[float]] = {m: [] for m in sides}
        for r in range(a.runs):
            for m in rotated(list(sides), r):
                clean_process_state()
                sql = f"SELECT sum({sides[m]}({args})) FROM t"
                _, wall_s, _ = timed(lambda: con.execute(sql).fetchall())
                rates[m].append(a.rows / wall_s)
        ratios = [x / y for x, y in zip(rates["arrow"], rates["native"])]
        print(f"  {name}({args})")
        for m, v in rates.items():
            print(f"    {m:<7} {fmt_stat(v, 0)}")
        print(f"    arrow/native {fmt_stat(ratios, 2)}")
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
