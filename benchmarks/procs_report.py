"""The procs benchmark's printed report of one case: each side's times, memory and spill, the
ratios to raw DuckDB and the checks; procs.py calls print_case after measuring."""
from __future__ import annotations

from typing import TYPE_CHECKING

from _common import fmt_bytes, fmt_stat, render_rows, summarize

if TYPE_CHECKING:  # annotations only: procs.py imports this module
    from procs import Ctx, Record

SPILL_GOAL = 3.0                    # peak spill / memsize the sort case should reach
RATIO_GOAL = 1.05                   # statgrid / raw DuckDB

CASE_TITLES = {
    "sort": "stable sort by k1, k2 desc (statgrid equals=True) → Parquet",
    "sort_unstable": "unstable sort by k1, k2 desc (statgrid equals=False) → Parquet",
    "summary": "means of x1…x10 by class cat1 (n mean std min max)",
    "freq": "freq tables cat1 and cat1*cat2",
}


def print_case(case: str, ctx: Ctx, sides: list[str], recs: dict[str, Record], ratios: dict[str, list],
               checks: list[dict]) -> None:
    a = ctx.args
    print(f"\n== {case}: {CASE_TITLES[case]}")
    print(f"   {ctx.rows:,} rows; memsize {a.memsize} ({ctx.memsize_bytes:,} B); threads {ctx.threads}; "
          f"{a.runs} run(s), sides in rotated order")
    is_sort = case in ("sort", "sort_unstable")
    header = ["side", "wall s", "cpu s", "peak RSS (+ over start)"] + (["peak spill"] if is_sort else []) + ["STIMER real s"]
    rows = [header]
    for side in sides:
        r = recs[side]
        if r.skipped:
            rows.append([side, "skipped (see below)"])
            continue
        if summarize(r.wall_s) is None:
            rows.append([side, "FAILED (see below)"])
            continue
        spill = ""
        sp = summarize(r.peak_spill_bytes)
        if sp is not None:
            spill = f"{fmt_bytes(sp.median)} ({sp.median / ctx.memsize_bytes:.2f}× memsize)"
        elif is_sort:
            spill = "— (in memory)"
        grow = summarize([p - q for p, q in zip(r.peak_rss_bytes, r.rss_start_bytes) if p is not None and q is not None])
        rss = summarize(r.peak_rss_bytes)
        row = [side, fmt_stat(r.wall_s), fmt_stat(r.cpu_s),
               f"{fmt_bytes(rss.max if rss else None)} (+{fmt_bytes(grow.max if grow else None)})"]
        if is_sort:
            row.append(spill)
        row.append(fmt_stat(r.stimer_real_s) if side == "statgrid" else "")
        rows.append(row)
    print(render_rows(rows, indent="   "))
    for side in sides:
        if recs[side].skipped:
            print(f"   - {side} skipped: {recs[side].skipped}")
        for err in recs[side].errors:
            print(f"   ! {side} failed in {err.splitlines()[0]}")
            if "Out of Memory" in err or "out of memory" in err:
                print(f"     (the engine ran out of memory at memsize {a.memsize} with {ctx.threads} threads: "
                      "DuckDB's sort of these 20 columns needs roughly 80–100 MiB per thread; raise --memsize)")
        for note in recs[side].notes:
            print(f"   note {side}: {note}")
    lines = []
    for name, vals in ratios.items():
        s = summarize(vals)
        if s is None:
            continue
        extra = ""
        if name == "statgrid / duckdb":
            extra = f"   goal ≤ {RATIO_GOAL:.2f}: {'met' if s.median <= RATIO_GOAL else 'NOT met'} (median)"
        lines.append([f"{name}:", fmt_stat(vals, digits=2) + extra])
    if lines:
        print("   ratios, computed per run:")
        print(render_rows(lines, indent="     "))
    if is_sort:
        for side in ("statgrid", "duckdb"):
            if side not in sides or recs[side].skipped:
                continue
            sp = summarize(recs[side].peak_spill_bytes)
            if sp is None:
                continue
            ratio = sp.min / ctx.memsize_bytes
            if ratio < SPILL_GOAL:
                want = int(sp.min / SPILL_GOAL / 1024 ** 2)
                print(f"   WARNING: {side} spilled only {fmt_bytes(sp.min)} = {ratio:.2f}× memsize (goal ≥ "
                      f"{SPILL_GOAL:g}×): use a smaller --memsize (≈ {want}M or less) or more --rows. "
                      f"Below ~{90 * ctx.threads}M at {ctx.threads} threads DuckDB's sort fails instead of "
                      "spilling more, so at small --rows only more rows help.")
    if checks:
        bad = [c for c in checks if not c["ok"]]
        print(f"   checks (run 1): {len(checks) - len(bad)}/{len(checks)} passed")
        for c in checks:
            if not c["ok"]:
                print(f"     FAILED {c['check']}: {c['detail']}")
