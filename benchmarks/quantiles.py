"""benchmarks/quantiles: MEANS/SUMMARY quantiles — SAS definitions (procs/_quantile.py, what
summary_sql runs now: definition 5, the default, by quantile_disc; definition 1 from sorted lists,
as 2 and 4) vs DuckDB's quantile_cont aggregate (what it ran before issue 14: Hyndman–Fan type 7,
not a SAS definition).

    python benchmarks/quantiles.py [--rows 2000000] [--runs 5] [--memsize 1GB] [--threads 2]

Input: --rows rows of 3 DOUBLE measures, class variables cat1 (3 levels) and cat2 (10 levels),
in a DuckDB table. Cases:
  means    class cat1, nway: q1 median q3 p90 of 3 measures
  summary  class cat1 cat2, every combination (4 grouping sets): the same statistics
Runs are interleaved (run r rotates the order of the sides); each figure prints as
`median (min … max, N runs)`. Peak RSS is the process high-water mark (the input table
included), reset before each run.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import clean_process_state, fmt_bytes, fmt_stat, hwm_bytes, reset_hwm, rotated, timed  # noqa: E402

from statgrid.procs.summary import QUANTILES, summary_sql  # noqa: E402

MEASURES = ["x1", "x2", "x3"]
STATS = ["q1", "median", "q3", "p90"]
CASES = {"means": (["cat1"], True), "summary": (["cat1", "cat2"], False)}


def quantile_cont_sql(classes: list[str], nway: bool) -> str:
    """The pre-issue-14 query: one aggregate with quantile_cont over every grouping set."""
    aggs = ", ".join(f"quantile_cont({v}, [{', '.join(str(QUANTILES[st][0] / 100) for st in STATS)}]) AS {v}__q"
                     for v in MEASURES)
    if nway:
        group = f"GROUP BY {', '.join(classes)}"
    else:
        sets = [[c for i, c in enumerate(classes) if m >> (len(classes) - 1 - i) & 1]
                for m in range((1 << len(classes)) - 1, -1, -1)]
        group = "GROUP BY GROUPING SETS (" + ", ".join("(" + ", ".join(s) + ")" for s in sets) + ")"
    return f"SELECT {', '.join(classes)}, count(*) AS _freq_, {aggs} FROM big {group}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--memsize", default="1GB")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{a.memsize}'; SET threads = {a.threads}")
    con.execute(f"""CREATE TABLE big AS SELECT
        ['a', 'b', 'c'][1 + (hash(i, 1) % 3)::INT] AS cat1, 'k' || (hash(i, 2) % 10) AS cat2,
        (hash(i, 3) % 1000000)::DOUBLE / 1e4 AS x1, (hash(i, 4) % 1000)::DOUBLE AS x2,
        CASE WHEN i % 50 = 0 THEN NULL ELSE (hash(i, 5) % 100000)::DOUBLE END AS x3
        FROM range({a.rows}) t(i)""")
    print(f"{a.rows:,} rows, memory_limit={a.memsize}, threads={a.threads}")
    for case, (classes, nway) in CASES.items():
        sides = {"QNTLDEF=5 (quantile_disc)": summary_sql("big", MEASURES, [], classes, STATS, nway, 5),
                 "QNTLDEF=1 (sorted lists)": summary_sql("big", MEASURES, [], classes, STATS, nway, 1),
                 "quantile_cont (before)": quantile_cont_sql(classes, nway)}
        wall: dict[str, list[float]] = {s: [] for s in sides}
        peak: dict[str, list[float]] = {s: [] for s in sides}
        for r in range(a.runs):
            for side in rotated(list(sides), r):
                clean_process_state()
                reset_hwm()
                _, wall_s, _ = timed(lambda: con.execute(sides[side]).fetchall())
                wall[side].append(wall_s)
                peak[side].append(hwm_bytes() or 0)
        print(f"\n{case}: class {' '.join(classes)}{'' if nway else ' (every combination)'}, "
              f"{' '.join(STATS)} of {' '.join(MEASURES)}")
        for side in sides:
            print(f"  {side:30s} wall {fmt_stat(wall[side])} s   peak RSS {fmt_bytes(max(peak[side]))}")


if __name__ == "__main__":
    main()
