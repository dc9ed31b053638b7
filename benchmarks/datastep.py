"""benchmarks/datastep: the SAS front end (a DATA step, PROC SORT) against the same work through
statgrid's Python API (issue 26, "Performance").

    python benchmarks/datastep.py [--rows 10000000] [--runs 3] [--memsize 1G] [--threads 2]
                                  [--cases a,b,c,d,e,f] [--json FILE] [--profile CASE]

Both sides of a case run in one process run, interleaved: run r executes the two sides in an order
rotated by r, so drift hits both alike. Each side gets a fresh statgrid session (opened and closed
outside the timed region; same memsize and threads). The SAS side is real .sas program text run by
statgrid.sas.program.run_program in its session; the other side is SQL through the session
(Session.write: DuckDB → Parquet in WORK) or, for PROC SORT, Session.sort (statgrid/procs/sort.py).
Timed: run_program(...) on one side, the write/sort call on the other (outputs are Parquet in WORK
on both). The input is generated once per process run with DuckDB into a temporary library BENCH
(Parquet; all numerics DOUBLE as a SAS data set's are) and removed at the end:

  bench.big     --rows rows: id, g = id div 10 (sorted: groups of 10 for BY), k (hash key, --rows/5
                distinct values), x1…x5 uniform [0, 1), cat (4 strings)
  bench.lookup  --rows/10 rows: k = 0 … --rows/10 − 1 (half of big's rows find a match), v
  bench.small   the first --rows/10 rows of big (case d)

Cases (rows/s counts the rows the step works through: input rows, or rows written for c):

  a  SET + WHERE + 10 assignments + subsetting IF + KEEP      vs the same as SQL (CTEs)        goal ≤ 1.5×
  b  BY g with RETAIN, FIRST./LAST., sum statements, OUTPUT   vs window-function SQL            goal ≥ 2 M rows/s
  c  nested DO loops writing --rows rows, RANUNI and RAND     vs range() × random() SQL         goal ≥ 2 M rows/s
  d  ARRAY of 200 numerics, DO over it per row, --rows/10 rows vs list_transform over range(200) goal ≥ 1 M rows/s
  e  hash object: --rows rows looked up in --rows/10 rows     vs a DuckDB join                  goal ≤ 2×
  f  PROC SORT of --rows rows (BY k DESCENDING x1)           vs Session.sort                   goal ≤ 1.05×

Before the figures count, each case checks that both sides wrote the same columns and the same row
count, and agree on column checksums (sums to 1e-9 relative; for the sort, a digest of the output's
id sequence, i.e. the same order); the script fails loudly (exit 1) if they do not.

Memory: the SAS side's peak RSS per run is this process's VmHWM, reset (/proc/self/clear_refs) just
before run_program and read right after it (the sides run in this process, DuckDB included; children
are not involved). It is printed with the RSS before the run; a DATA step that streams keeps the
growth within MEMSIZE whatever --rows is (a hash object holds its table: case e grows with --rows/10).

--profile CASE runs the SAS side of CASE once under cProfile (at --rows) instead of the benchmark and
prints the top functions by own time and by cumulative time.
"""
from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import math
import os
import platform
import pstats
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (clean_process_state, fmt_bytes, fmt_stat, hwm_bytes, mem_available_bytes,  # noqa: E402
                     private_home, reset_hwm, rotated, rss_bytes, stat_dict)

ALL_CASES = ("a", "b", "c", "d", "e", "f")
SIDES = ("sas", "api")
REL_TOL = 1e-9
INNER = 1000                # case c: the inner DO loop's count; the outer one makes up --rows
ARRAY_N = 200               # case d


# ---------------------------------------------------------------------------- the input
def generate_input(con, data_dir: Path, rows: int) -> None:
    kmod = max(rows // 5, 1)
    xs = ", ".join(f"(hash(i, {j}) % 1000000)::DOUBLE / 1e6 AS x{j}" for j in range(1, 6))
    con.execute(f"""COPY (SELECT i::DOUBLE AS id, (i // 10)::DOUBLE AS g, (hash(i, 100) % {kmod})::DOUBLE AS k,
                                 {xs}, (['north', 'south', 'east', 'west'])[1 + (hash(i, 7) % 4)::INTEGER] AS cat
                          FROM range({rows}) t(i))
                    TO '{data_dir / "big.parquet"}' (FORMAT parquet, COMPRESSION zstd)""")
    con.execute(f"""COPY (SELECT i::DOUBLE AS k, (hash(i, 9) % 1000)::DOUBLE AS v FROM range({max(rows // 10, 1)}) t(i))
                    TO '{data_dir / "lookup.parquet"}' (FORMAT parquet, COMPRESSION zstd)""")
    con.execute(f"""COPY (SELECT * FROM read_parquet('{data_dir / "big.parquet"}') LIMIT {max(rows // 10, 1)})
                    TO '{data_dir / "small.parquet"}' (FORMAT parquet, COMPRESSION zstd)""")


# ---------------------------------------------------------------------------- the cases
@dataclass
class Case:
    key: str
    title: str
    api_label: str
    sas: Callable[["Ctx"], str]                     # the .sas program text (after the LIBNAME)
    api: Callable[["Ctx", Any], None]               # the other side: writes work.out through the session
    rows: Callable[["Ctx"], int]                    # rows the step works through
    sums: tuple[str, ...]                           # columns whose sums both sides must agree on
    goal: str
    order_digest: bool = False                      # compare the output's row order (id sequence)
    other_sums: tuple[str, ...] | None = None       # the other side's names of `sums` (default: the same)
    other_rows_per_row: int = 1                     # the other side writes this many rows per SAS row


def src(s, member: str) -> str:
    return s.dataset(f"bench.{member}").scan_sql()


# a: SET + WHERE + 10 assignments + subsetting IF + KEEP
SAS_A = """data work.out(keep=id g y1-y10);
  set bench.big;
  where x1 > 0.2;
  y1 = x1 * 2;
  y2 = x2 + x3;
  y3 = x4 - x5;
  y4 = x1 * x2;
  y5 = (x3 + x4) / 2;
  y6 = y1 + y2;
  y7 = y3 * 3;
  y8 = y4 - y5;
  y9 = x5 * x5;
  y10 = y6 + y7 + y8;
  if y5 > 0.3;
run;
"""


def api_a(ctx, s) -> None:
    s.write("work.out", f"""
        WITH t AS (SELECT id, g, x1 * 2 AS y1, x2 + x3 AS y2, x4 - x5 AS y3, x1 * x2 AS y4, (x3 + x4) / 2 AS y5,
                          x5 * x5 AS y9
                   FROM {src(s, 'big')} WHERE x1 > 0.2),
             u AS (SELECT *, y1 + y2 AS y6, y3 * 3 AS y7, y4 - y5 AS y8 FROM t)
        SELECT id, g, y1, y2, y3, y4, y5, y6, y7, y8, y9, y6 + y7 + y8 AS y10 FROM u WHERE y5 > 0.3""")


# b: BY-group processing
SAS_B = """data work.out(keep=g n total maxx);
  set bench.big(keep=g x1 x2);
  by g;
  retain maxx;
  if first.g then do;
    n = 0;
    total = 0;
    maxx = .;
  end;
  n + 1;
  total + x1;
  maxx = max(maxx, x2);
  if last.g then output;
run;
"""


def api_b(ctx, s) -> None:
    # the DATA step's running values at each group's last row: window aggregates in input order
    s.write("work.out", f"""
        SELECT g, n::DOUBLE AS n, total, maxx FROM (
          SELECT g, count(*) OVER w AS n, sum(x1) OVER w AS total, max(x2) OVER w AS maxx,
                 row_number() OVER (PARTITION BY g ORDER BY id DESC) AS from_last
          FROM {src(s, 'big')}
          WINDOW w AS (PARTITION BY g ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
        WHERE from_last = 1 ORDER BY g""")


# c: nested DO loops + OUTPUT + RANUNI/RAND
def sas_c(ctx) -> str:
    return f"""data work.out;
  do i = 1 to {ctx.outer};
    do j = 1 to {INNER};
      u = ranuni(12345);
      r = rand('uniform');
      output;
    end;
  end;
run;
"""


def api_c(ctx, s) -> None:
    s.write("work.out", f"""
        SELECT (t // {INNER} + 1)::DOUBLE AS i, (t % {INNER} + 1)::DOUBLE AS j, random() AS u, random() AS r
        FROM range({ctx.outer * INNER}) r(t)""")


# d: ARRAY of 200 numerics, a DO over it per row
SAS_D = f"""data work.out(keep=id s);
  set bench.small(keep=id x1);
  array a{{{ARRAY_N}}} a1-a{ARRAY_N};
  s = 0;
  do k = 1 to {ARRAY_N};
    a{{k}} = x1 * k;
    s + a{{k}};
  end;
run;
"""


def api_d(ctx, s) -> None:
    s.write("work.out", f"""
        SELECT id, list_sum(list_transform(range(1, {ARRAY_N + 1}), lambda k: x1 * k)) AS s FROM {src(s, 'small')}""")


# e: hash lookup
SAS_E = """data work.out(keep=id k v);
  if 0 then set bench.lookup;
  if _n_ = 1 then do;
    declare hash h(dataset: 'bench.lookup');
    h.defineKey('k');
    h.defineData('v');
    h.defineDone();
  end;
  set bench.big(keep=id k);
  if h.find() = 0;
run;
"""


def api_e(ctx, s) -> None:
    s.write("work.out", f"""
        SELECT b.id, b.k, l.v FROM {src(s, 'big')} b JOIN {src(s, 'lookup')} l ON b.k = l.k""")


# f: PROC SORT
SAS_F = """proc sort data=bench.big out=work.out;
  by k descending x1;
run;
"""


def api_f(ctx, s) -> None:
    s.sort("bench.big", by=["k", "x1 desc"], out="work.out")


# g: a fixed-width text file read with INFILE and column input (the text engine, datastep/textplan/)
def household_file(ctx) -> Path:
    """The datagen household file of ctx.small records beside the BENCH library (made once per process run,
    untimed: the SAS side's program text is made before its clock starts, and it runs first in run 1)."""
    from statgrid.bench import datagen
    import duckdb

    path = ctx.data_dir.parent / "household.txt"
    if not path.exists():
        con = duckdb.connect()
        try:
            con.execute(f"SET threads = {ctx.args.threads}")
            datagen.macros(con, 1)
            con.execute(f"COPY ({datagen.SPECS['household'].build(ctx.small)}) TO '{path}' "
                        "(FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\x1f')")
        finally:
            con.close()
    return path


def sas_g(ctx) -> str:
    from statgrid.bench import datagen

    fields = " ".join(f"{n} {'$ ' if t == '$' else ''}{a}-{b}" for n, a, b, t in datagen.layout("household"))
    return f"data work.out;\n  infile '{household_file(ctx)}' lrecl=549 truncover;\n  input {fields};\nrun;\n"


def api_g(ctx, s) -> None:
    from statgrid.bench import datagen

    s.import_fixed(household_file(ctx), "work.out", datagen.layout("household"))


CASES = {c.key: c for c in (
    Case("a", "SET + WHERE + 10 assignments + subsetting IF + KEEP", "SQL via Session.write",
         lambda ctx: SAS_A, api_a, lambda ctx: ctx.rows, ("id", "y10", "y5"), "ratio ≤ 1.5"),
    Case("b", "BY-group: RETAIN, FIRST./LAST., sum statements, OUTPUT", "window SQL via Session.write",
         lambda ctx: SAS_B, api_b, lambda ctx: ctx.rows, ("g", "n", "total", "maxx"), "≥ 2 M rows/s"),
    Case("c", f"nested DO loops (… × {INNER}) + OUTPUT, RANUNI and RAND", "range()+random() SQL via Session.write",
         sas_c, api_c, lambda ctx: ctx.outer * INNER, ("i", "j"), "≥ 2 M rows/s"),
    Case("d", f"ARRAY of {ARRAY_N} numerics, DO over it per row (--rows/10 rows)", "list_transform SQL via Session.write",
         lambda ctx: SAS_D, api_d, lambda ctx: ctx.small, ("id", "s"), "≥ 1 M rows/s"),
    Case("e", "hash object FIND: --rows rows against a --rows/10-row table", "join SQL via Session.write",
         lambda ctx: SAS_E, api_e, lambda ctx: ctx.rows, ("id", "k", "v"), "ratio ≤ 2"),
    Case("f", "PROC SORT BY k DESCENDING x1", "Session.sort (procs/sort.py)",
         lambda ctx: SAS_F, api_f, lambda ctx: ctx.rows, ("id",), "ratio ≤ 1.05", order_digest=True),
    Case("g", "INFILE + column input of the datagen household file (--rows/10 records, 115 fields)",
         "Session.import_fixed (procs/importing.py)", sas_g, api_g, lambda ctx: ctx.small,
         ("hh_id", "h003", "h011"), "ratio ≤ 1.10"),
)}


# ---------------------------------------------------------------------------- running a side
@dataclass
class Ctx:
    args: argparse.Namespace
    data_dir: Path
    cfg: Any
    rows: int
    small: int
    outer: int
    memsize_bytes: int


@dataclass
class Record:
    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    rss_before: list[int] = field(default_factory=list)
    peak_rss: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class CheckFailed(Exception):
    pass


def open_session(ctx: Ctx):
    from statgrid.session import Session, SessionLog

    s = Session(ctx.cfg, {"memsize": ctx.args.memsize, "threads": str(ctx.args.threads)},
                log=SessionLog(text=None, jsonl=None, listing=None))
    s.libname("bench", ctx.data_dir, readonly=True)
    return s


def run_sas(ctx: Ctx, s, text: str) -> tuple[str, list[str]]:
    """run_program on `text` after a LIBNAME for BENCH; (log text, WARNING lines); raises on an ERROR."""
    from statgrid.sas.program import run_program
    from statgrid.sas.saslog import SasLog
    from statgrid.session.log import SessionLog

    buf = io.StringIO()
    log = SasLog(SessionLog(text=buf, jsonl=None, listing=io.StringIO()))
    code = run_program(f"libname bench '{ctx.data_dir}' access=readonly;\n{text}", s, log)
    out = buf.getvalue()
    if code != 0 or log.errors:
        raise CheckFailed(f"the SAS program ended with exit code {code}; its log:\n{out[-4000:]}")
    return out, [line for line in out.splitlines() if line.startswith("WARNING")]


def _sql_term(c: str) -> str:
    """A column name quoted; an expression over columns (a case's own SQL) as it is."""
    return f'"{c}"' if c.isidentifier() else c


def digest(s, case: Case, side: str = "sas") -> dict:
    """Row count, column names, column sums, (sort) a digest of the id sequence — of work.out. The sums
    are keyed by the SAS side's column names; the other side's may be named apart (case.other_sums)."""
    import duckdb

    path = Path(s.dataset("work.out").path)
    con = duckdb.connect()
    try:
        rel = con.sql(f"SELECT * FROM read_parquet('{path}')")
        cols = sorted(c.lower() for c in rel.columns)
        names = case.other_sums if side != "sas" and case.other_sums else case.sums
        agg = ", ".join(f'sum({_sql_term(c)})::DOUBLE' for c in names)
        row = con.execute(f"SELECT count(*), {agg} FROM read_parquet('{path}')").fetchone()
        out = {"rows": row[0], "columns": cols, "sums": dict(zip(case.sums, row[1:]))}
        if case.order_digest:
            ids = con.execute(f"SELECT id FROM read_parquet('{path}')").fetchnumpy()["id"]
            out["order"] = hashlib.blake2b(ids.astype("float64").tobytes(), digest_size=8).hexdigest()
        return out
    finally:
        con.close()


def compare(case: Case, d: dict[str, dict]) -> list[str]:
    """What differs between the sides' digests (empty: they agree)."""
    a, b = d["sas"], d["api"]
    bad = []
    if a["rows"] * case.other_rows_per_row != b["rows"]:
        bad.append(f"row count: SAS {a['rows']:,} vs other {b['rows']:,}")
    if a["columns"] != b["columns"] and not case.other_sums:
        bad.append(f"columns: SAS {a['columns']} vs other {b['columns']}")
    for c in case.sums:
        x, y = a["sums"].get(c), b["sums"].get(c)
        if x is None or y is None or not math.isclose(x, y, rel_tol=REL_TOL, abs_tol=1e-9):
            bad.append(f"sum({c}): SAS {x!r} vs other {y!r}")
    if case.order_digest and a.get("order") != b.get("order"):
        bad.append(f"row order (id sequence digest): SAS {a.get('order')} vs other {b.get('order')}")
    if a["rows"] == 0:
        bad.append("no rows written")
    return bad


def measure(ctx: Ctx, case: Case, side: str, rec: Record, want_digest: bool) -> dict | None:
    clean_process_state()
    s = open_session(ctx)
    try:
        text = case.sas(ctx) if side == "sas" else None
        before = rss_bytes() or 0
        reset_hwm()
        c0, t0 = time.process_time(), time.perf_counter()
        if side == "sas":
            _, warnings = run_sas(ctx, s, text)
            rec.warnings += [w for w in warnings if w not in rec.warnings]
        else:
            case.api(ctx, s)
        rec.wall_s.append(time.perf_counter() - t0)
        rec.cpu_s.append(time.process_time() - c0)
        rec.peak_rss.append(hwm_bytes() or 0)
        rec.rss_before.append(before)
        return digest(s, case, side) if want_digest else None
    finally:
        s.close()


def warm_up(ctx: Ctx) -> None:
    """Untimed: import and first-use costs of both sides (the DATA step compiler, functions, PROC SORT, and
    numba's start-up: the warm-up step is forced onto the NUMBA engine, which AUTO gives only large steps)."""
    s = open_session(ctx)
    try:
        run_sas(ctx, s, "options dsengine=numba;\n"
                        "data work.w; set bench.small(obs=10); by g; retain t; t + x1; u = ranuni(1); "
                        "r = rand('uniform'); array z{2} z1-z2; do k = 1 to 2; z{k} = k; end; run;\n"
                        "proc sort data=work.w out=work.w2; by k descending x1; run;\n"
                        "options dsengine=auto;\n")
        s.write("work.w3", f"SELECT * FROM {src(s, 'small')} LIMIT 10")
    finally:
        s.close()


# ---------------------------------------------------------------------------- report
def print_case(ctx: Ctx, case: Case, recs: dict[str, Record], checks: list[str]) -> dict:
    n = case.rows(ctx)
    sas, api = recs["sas"], recs["api"]
    sas_rate = [n / t / 1e6 for t in sas.wall_s]
    api_rate = [n / t / 1e6 for t in api.wall_s]
    ratio = [a / b for a, b in zip(sas.wall_s, api.wall_s)]
    cpu_ratio = [a / b for a, b in zip(sas.cpu_s, api.cpu_s) if b > 0]
    growth = [p - b for p, b in zip(sas.peak_rss, sas.rss_before)]
    print(f"\n({case.key}) {case.title} — {n:,} rows; other side: {case.api_label}")
    print(f"  SAS side       {fmt_stat(sas_rate, 3)} M rows/s   wall {fmt_stat(sas.wall_s, 2)} s")
    print(f"  other side     {fmt_stat(api_rate, 3)} M rows/s   wall {fmt_stat(api.wall_s, 2)} s")
    print(f"  SAS / other    {fmt_stat(ratio, 2)} (wall), {fmt_stat(cpu_ratio, 2)} (CPU)   goal: {case.goal}")
    print(f"  SAS peak RSS   {fmt_stat([p / 2**20 for p in sas.peak_rss], 0)} MiB (VmHWM), "
          f"growth over RSS before the run {fmt_stat([g / 2**20 for g in growth], 0)} MiB; "
          f"MEMSIZE {fmt_bytes(ctx.memsize_bytes)}")
    print(f"  other peak RSS {fmt_stat([p / 2**20 for p in api.peak_rss], 0)} MiB (VmHWM)")
    print("  check          " + ("both sides agree (rows, columns, " + ", ".join(f"sum({c})" for c in case.sums)
                                 + (", row order" if case.order_digest else "") + ")" if not checks
                                 else "FAILED: " + "; ".join(checks)))
    for w in sas.warnings[:3]:
        print(f"  SAS log        {w}")
    return {"rows": n, "sas_mrows_s": stat_dict(sas_rate), "other_mrows_s": stat_dict(api_rate),
            "ratio_wall": {"per_run": ratio, "summary": stat_dict(ratio)}, "ratio_cpu": stat_dict(cpu_ratio),
            "sas_peak_rss_bytes": sas.peak_rss, "sas_rss_before_bytes": sas.rss_before,
            "other_peak_rss_bytes": api.peak_rss, "sas_wall_s": sas.wall_s, "other_wall_s": api.wall_s,
            "checks": checks, "sas_warnings": sas.warnings}


def profile(ctx: Ctx, case: Case) -> None:
    s = open_session(ctx)
    try:
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        run_sas(ctx, s, case.sas(ctx))
        prof.disable()
        dt = time.perf_counter() - t0
    finally:
        s.close()
    print(f"\nprofile of the SAS side of ({case.key}) {case.title}: {case.rows(ctx):,} rows in {dt:.2f} s "
          f"under cProfile ({case.rows(ctx) / dt / 1e6:.3f} M rows/s)")
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats(key).print_stats(25)
        print(f"--- by {key}\n" + "\n".join(out.getvalue().splitlines()[4:]))


# ---------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None, all_cases: tuple[str, ...] = ALL_CASES, doc: str | None = None
               ) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(doc or __doc__).split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=10_000_000, help="rows of the input (default 10,000,000)")
    p.add_argument("--runs", type=int, default=3, help="interleaved runs per case (default 3)")
    p.add_argument("--memsize", default="1G", help="statgrid memsize of every session (default 1G)")
    p.add_argument("--threads", type=int, default=2, help="engine threads of every session (default 2)")
    p.add_argument("--cases", default=",".join(all_cases), help=f"comma list of {', '.join(all_cases)}")
    p.add_argument("--json", type=Path, default=None, help="write raw timings and ratios here")
    p.add_argument("--profile", choices=all_cases, default=None,
                   help="instead of the benchmark: cProfile the SAS side of this case once")
    a = p.parse_args(argv)
    a.cases = [c.strip() for c in a.cases.split(",") if c.strip()]
    bad = [c for c in a.cases if c not in all_cases]
    if bad or not a.cases:
        p.error(f"unknown case {bad[0] if bad else '(none)'}; choose from {', '.join(all_cases)}")
    if a.rows < 1000 or a.runs < 1 or a.threads < 1:
        p.error("--rows must be ≥ 1000, --runs and --threads ≥ 1")
    return a


def main(argv: list[str] | None = None, cases: dict[str, Case] | None = None, title: str = "datastep",
         doc: str | None = None) -> int:
    """Run the benchmark over `cases` (default: the DATA step cases; benchmarks/sas_procs.py passes its own)."""
    cases = cases or CASES
    args = parse_args(argv, tuple(cases), doc)
    import duckdb

    data_dir = Path(tempfile.mkdtemp(prefix=f"statgrid-bench-{title}-"))
    failed = 0
    try:
        cfg, opts = private_home(data_dir, args.memsize, args.threads)
        lib = data_dir / "bench"
        lib.mkdir()
        t0 = time.perf_counter()
        con = duckdb.connect()
        con.execute(f"SET threads = {args.threads}")
        generate_input(con, lib, args.rows)
        con.close()
        ctx = Ctx(args, lib, cfg, args.rows, max(args.rows // 10, 1), max(args.rows // INNER, 1), opts.memsize_bytes)
        import statgrid
        print(f"statgrid {title} benchmark — python {platform.python_version()}, duckdb {duckdb.__version__}, "
              f"statgrid {statgrid.__version__}, {len(os.sched_getaffinity(0))} CPUs, load average "
              f"{os.getloadavg()[0]:.1f}, MemAvailable {fmt_bytes(mem_available_bytes())}")
        print(f"input: {args.rows:,} rows in bench.big ({fmt_bytes((lib / 'big.parquet').stat().st_size)}), "
              f"{ctx.small:,} in bench.lookup and bench.small, generated in {time.perf_counter() - t0:.1f} s; "
              f"sessions: memsize {args.memsize}, threads {args.threads}")
        if args.profile:
            warm_up(ctx)
            profile(ctx, cases[args.profile])
            return 0
        warm_up(ctx)
        report: dict[str, Any] = {"args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                                  "versions": {"python": platform.python_version(), "duckdb": duckdb.__version__},
                                  "cpus": len(os.sched_getaffinity(0)), "cases": {}}
        for key in args.cases:
            case = cases[key]
            recs = {side: Record() for side in SIDES}
            digests: dict[str, dict] = {}
            print(f"\n{key}: ", end="", flush=True)
            for r in range(args.runs):
                order = rotated(SIDES, r)
                print(f"[run {r + 1}: " + " ".join(order) + "] ", end="", flush=True)
                for side in order:
                    d = measure(ctx, case, side, recs[side], want_digest=(r == 0))
                    if d is not None:
                        digests[side] = d
                    print(f"{side} {recs[side].wall_s[-1]:.2f}s ", end="", flush=True)
            print(flush=True)
            checks = compare(case, digests)
            report["cases"][key] = print_case(ctx, case, recs, checks)
            if checks:
                failed += 1
            if args.json:
                args.json.write_text(json.dumps(report, indent=1, default=str))
        print(f"\nload average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; peak RSS is this "
              "process's VmHWM reset before each timed call (both sides run in-process)")
        if failed:
            print(f"\nFAILED: in {failed} case(s) the two sides did not produce the same data — the figures "
                  "above compare different work", file=sys.stderr)
            return 1
        return 0
    except CheckFailed as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr)
        return 1
    except Exception:   # noqa: BLE001 — say what failed, then the exit code
        traceback.print_exc()
        return 1
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
