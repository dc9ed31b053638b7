"""benchmarks/corr_pearson: PROC CORR's pairwise Pearson sums — one Arrow pass of matrix products (what
procs/corr.py runs) vs seven DuckDB FILTER aggregates per pair of variables in one SELECT (its first version).

    python benchmarks/corr_pearson.py [--rows 200000] [--vars 10 20] [--runs 3] [--threads 2]

Input: --rows rows of each --vars count of DOUBLE columns, 5 % of values missing, in a DuckDB table. Runs are
interleaved (run r rotates the order of the sides); each figure prints as `median (min … max, N runs)`, then
the ratio aggregates / Arrow per run. Both sides' r for one pair are checked equal before timing.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import clean_process_state, fmt_stat, rotated, timed  # noqa: E402

from statgrid.procs import corr as eng  # noqa: E402


def sql_aggregates(con, names: list[str], means: dict[str, float]) -> dict[tuple[str, str], float]:
    """The first version: per pair, n and the six centred weighted sums as FILTER aggregates of one SELECT."""
    uniq = [(a, b) for i, a in enumerate(names) for b in names[i:]]
    parts = []
    for a, b in uniq:
        both = f"{a} IS NOT NULL AND {b} IS NOT NULL"
        xa, xb = f"({a} - {means[a]!r})", f"({b} - {means[b]!r})"
        parts += [f"count(*) FILTER (WHERE {both})", f"sum({xa}) FILTER (WHERE {both})",
                  f"sum({xb}) FILTER (WHERE {both})", f"sum({xa}*{xb}) FILTER (WHERE {both})",
                  f"sum({xa}*{xa}) FILTER (WHERE {both})", f"sum({xb}*{xb}) FILTER (WHERE {both})"]
    row = con.execute(f"SELECT {', '.join(parts)} FROM m").fetchall()[0]
    out = {}
    for k, (a, b) in enumerate(uniq):
        n, sa, sb, sab, saa, sbb = row[6 * k: 6 * k + 6]
        cab, caa, cbb = sab - sa * sb / n, saa - sa * sa / n, sbb - sb * sb / n
        out[(a, b)] = cab / math.sqrt(caa * cbb)
    return out


def arrow_matmul(con, names: list[str], means: dict[str, float]) -> dict[tuple[str, str], float]:
    got = eng.pearson(con.execute, "SELECT * FROM m", names, means=means,
                      reader=lambda q: con.sql(q).to_arrow_reader(eng.BATCH_ROWS))
    return {k: v.r for k, v in got.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--vars", type=int, nargs="+", default=[10, 20])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    sides = {"aggregates": sql_aggregates, "arrow": arrow_matmul}
    print(f"rows {args.rows:,}, 5 % missing, threads {args.threads}, {args.runs} runs interleaved")
    for p in args.vars:
        names = [f"v{i}" for i in range(1, p + 1)]
        cols = ", ".join(f"CASE WHEN random() < 0.05 THEN NULL ELSE random() * 100 + 1e4 END AS {v}" for v in names)
        con.execute(f"CREATE OR REPLACE TABLE m AS SELECT {cols} FROM range({args.rows})")
        means = {s.name: s.mean for s in eng.simple_stats(con.execute, "SELECT * FROM m", names)}
        a, b = sql_aggregates(con, names, means), arrow_matmul(con, names, means)
        assert abs(a[(names[0], names[-1])] - b[(names[0], names[-1])]) < 1e-12, "the sides disagree"
        wall: dict[str, list[float]] = {k: [] for k in sides}
        for r in range(args.runs):
            for name in rotated(list(sides), r):
                clean_process_state()
                _, w, _ = timed(sides[name], con, names, means)
                wall[name].append(w)
        ratios = [x / y for x, y in zip(wall["aggregates"], wall["arrow"])]
        print(f"{p} variables ({p * (p + 1) // 2} pairs): aggregates {fmt_stat(wall['aggregates'])} s, "
              f"arrow {fmt_stat(wall['arrow'])} s; aggregates / arrow {fmt_stat(ratios)}")


if __name__ == "__main__":
    main()
