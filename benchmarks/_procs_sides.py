"""The data set and the sides of benchmarks/procs.py: the cases and sides it knows, the input's
generator, each side's set-up (a statgrid session, a raw DuckDB connection configured like one,
or nothing for pandas and Polars) and each side's code for each case (WORK), the part that is timed.
"""
from __future__ import annotations

import argparse
import shutil
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator


ALL_CASES = ("sort", "sort_unstable", "summary", "freq")
ALL_SIDES = ("statgrid", "duckdb", "pandas", "polars")
MEMBER = "big"                      # the input is library BENCH, member BIG = <dir>/big.parquet
SORT_KEYS = [("k1", False), ("k2", True)]
MEASURES = [f"x{j}" for j in range(1, 11)]
STATS = ["n", "mean", "std", "min", "max"]
FREQ_TABLES = [["cat1"], ["cat1", "cat2"]]
SPILL_GOAL = 3.0                    # peak spill / memsize the sort case should reach
RATIO_GOAL = 1.05                   # statgrid / raw DuckDB
REL_TOL = 1e-9                      # summary agreement

CASE_TITLES = {
    "sort": "stable sort by k1, k2 desc (statgrid equals=True) → Parquet",
    "sort_unstable": "unstable sort by k1, k2 desc (statgrid equals=False) → Parquet",
    "summary": "means of x1…x10 by class cat1 (n mean std min max)",
    "freq": "freq tables cat1 and cat1*cat2",
}

# 20 columns: id (input order), 2 integer sort keys with many duplicates, 10 DOUBLE measures
# (x10 has ~1 % NULL), 3 low-cardinality VARCHAR categories, BIGINT/INTEGER columns, one
# longer VARCHAR. Measures are kept away from zero so relative comparisons of means are fair.
GEN_COLUMNS = ["id", "k1", "k2"] + MEASURES + ["cat1", "cat2", "cat3", "n1", "n2", "n3", "note"]


def generator_sql(rows: int) -> str:
    xs = []
    for j in range(1, 11):
        expr = f"{10.0 * j} + (hash(i, {10 + j}) % 1000000000)::DOUBLE / 1e9 * {100.0 * j}"
        if j in (4, 5, 6):   # skewed: exponential-ish
            expr = f"{5.0 * j} - ln(1.0 - (hash(i, {10 + j}) % 1000000000)::DOUBLE / 1e9) * {3.0 * j}"
        if j == 10:
            expr = f"CASE WHEN hash(i, 60) % 100 = 0 THEN NULL ELSE {expr} END"
        xs.append(f"{expr} AS x{j}")
    return f"""
        SELECT i::BIGINT AS id,
               (hash(i, 1) % 100)::INTEGER AS k1,
               (hash(i, 2) % 1000)::INTEGER AS k2,
               {', '.join(xs)},
               (['north', 'south', 'east', 'west', 'central'])[1 + (hash(i, 30) % 5)::INTEGER] AS cat1,
               'P' || lpad((hash(i, 31) % 10)::VARCHAR, 2, '0') AS cat2,
               'store_' || (hash(i, 32) % 50)::VARCHAR AS cat3,
               (hash(i, 40) % 1000000000000)::BIGINT AS n1,
               (hash(i, 41) % 100000)::INTEGER AS n2,
               (18000 + hash(i, 42) % 3650)::INTEGER AS n3,
               'customer ' || lpad((hash(i, 50) % 1000000)::VARCHAR, 6, '0') || ': '
                   || md5(i::VARCHAR)[1:(8 + hash(i, 51) % 25)::INTEGER] AS note
        FROM range({rows}) t(i)
    """


def qi(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# ---------------------------------------------------------------------------- context
@dataclass
class Ctx:
    args: argparse.Namespace
    data_dir: Path
    src: Path                     # the input Parquet file
    scratch: Path                 # statgrid home, raw-DuckDB temp dirs, baseline outputs
    cfg: Any                      # statgrid Config
    memsize_bytes: int
    threads: int
    row_group: int
    rows: int


@dataclass
class Env:
    """What a side needs inside the timed region; built and torn down outside it."""

    side: str
    handle: Any = None            # statgrid Session / duckdb connection / None
    spill_dir: Path | None = None
    out_dir: Path | None = None
    notes: list[str] = field(default_factory=list)


def src_ref(ctx: Ctx):
    """The input as a statgrid DatasetRef, so the raw side can use statgrid's own SQL builders."""
    from statgrid.libraries import DatasetRef, Library
    return DatasetRef(Library("bench", ctx.data_dir), MEMBER)


def copy_sql(ctx: Ctx, query: str, out: Path) -> str:
    """statgrid's Session.write() COPY statement."""
    from statgrid.libraries import parquet_copy_sql
    return parquet_copy_sql(query, out, ctx.row_group)


# ---------------------------------------------------------------------------- side set-up
def quiet_log():
    """A SessionLog that writes nothing but remembers warnings and the out-of-memory retry note."""
    from statgrid.session import SessionLog

    class QuietLog(SessionLog):
        def __init__(self):
            super().__init__(text=None, jsonl=None, listing=None)
            self.captured: list[str] = []

        def message(self, level: str, msg: str) -> None:
            # ERROR lines repeat the step's exception, which the benchmark reports itself
            oom_retry = level == "NOTE" and "runs with threads=1" in msg
            if level == "WARNING" or oom_retry:
                extra = (" [the timed call includes the failed attempt and runs on 1 thread: not comparable]"
                         if oom_retry else "")
                self.captured.append(f"{level}: {msg}{extra}")

    return QuietLog()


@contextmanager
def statgrid_env(ctx: Ctx) -> Iterator[Env]:
    from statgrid.session import Session
    log = quiet_log()
    s = Session(ctx.cfg, {"memsize": ctx.args.memsize, "threads": str(ctx.threads)}, log=log)
    try:
        s.libname("bench", ctx.data_dir)
        # env.notes is the log's capture list itself, so notes survive a failing step
        yield Env("statgrid", handle=s, spill_dir=Path(s.util.path), out_dir=Path(s.work.path),
                  notes=log.captured)
    finally:
        s.close()


@contextmanager
def duckdb_env(ctx: Ctx) -> Iterator[Env]:
    import duckdb
    tmp = ctx.scratch / f"duckdb_util_{uuid.uuid4().hex[:8]}"
    tmp.mkdir(mode=0o700)
    out = ctx.scratch / "out"
    out.mkdir(exist_ok=True)
    con = duckdb.connect(config={"temp_directory": str(tmp)})
    try:
        con.execute(f"SET memory_limit = '{ctx.memsize_bytes}B'")
        con.execute(f"SET threads = {ctx.threads}")
        yield Env("duckdb", handle=con, spill_dir=tmp, out_dir=out)
    finally:
        con.close()
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def plain_env(ctx: Ctx, side: str) -> Iterator[Env]:
    out = ctx.scratch / "out"
    out.mkdir(exist_ok=True)
    yield Env(side, out_dir=out)


def make_env(ctx: Ctx, side: str):
    if side == "statgrid":
        return statgrid_env(ctx)
    if side == "duckdb":
        return duckdb_env(ctx)
    return plain_env(ctx, side)


# ---------------------------------------------------------------------------- the work (timed)
def sort_statgrid(ctx: Ctx, env: Env, stable: bool) -> Path:
    by = [f"{k} desc" if d else k for k, d in SORT_KEYS]
    ref = env.handle.sort(f"bench.{MEMBER}", by=by, out="work.sorted", equals=stable)
    return Path(ref.path)


def sort_duckdb(ctx: Ctx, env: Env, stable: bool) -> Path:
    from statgrid.procs.sort import sort_sql
    out = env.out_dir / "duckdb_sorted.parquet"
    env.handle.execute(copy_sql(ctx, sort_sql(src_ref(ctx), SORT_KEYS, nodupkey=False, equals=stable), out)).fetchone()
    return out


def sort_pandas(ctx: Ctx, env: Env, stable: bool) -> Path:
    import pandas as pd
    out = env.out_dir / "pandas_sorted.parquet"
    df = pd.read_parquet(ctx.src)
    df = df.sort_values([k for k, _ in SORT_KEYS], ascending=[not d for _, d in SORT_KEYS],
                        kind="stable" if stable else "quicksort", na_position="last")
    df.to_parquet(out, compression="zstd", row_group_size=ctx.row_group, index=False)
    return out


def sort_polars(ctx: Ctx, env: Env, stable: bool) -> Path:
    import polars as pl
    out = env.out_dir / "polars_sorted.parquet"
    (pl.scan_parquet(ctx.src)
       .sort([k for k, _ in SORT_KEYS], descending=[d for _, d in SORT_KEYS], nulls_last=True,
             maintain_order=stable)
       .sink_parquet(out, compression="zstd", row_group_size=ctx.row_group))
    return out


def summary_statgrid(ctx: Ctx, env: Env):
    return env.handle.means(f"bench.{MEMBER}", var=MEASURES, class_=["cat1"], stats=STATS, print=False)


def summary_duckdb_sql(ctx: Ctx) -> str:
    from statgrid.procs.summary import summary_sql
    return summary_sql(src_ref(ctx).scan_sql(), MEASURES, groups=[], classes=["cat1"], stats=STATS, nway=True)


def summary_duckdb(ctx: Ctx, env: Env):
    return env.handle.sql(summary_duckdb_sql(ctx)).to_arrow_table()


def summary_pandas(ctx: Ctx, env: Env):
    import pandas as pd
    df = pd.read_parquet(ctx.src, columns=["cat1"] + MEASURES)
    return df.groupby("cat1", sort=True)[MEASURES].agg(["count", "mean", "std", "min", "max"])


def summary_polars(ctx: Ctx, env: Env):
    import polars as pl
    aggs = []
    for v in MEASURES:
        c = pl.col(v)
        aggs += [c.count().alias(f"{v}__n"), c.mean().alias(f"{v}__mean"), c.std().alias(f"{v}__std"),
                 c.min().alias(f"{v}__min"), c.max().alias(f"{v}__max")]
    return pl.scan_parquet(ctx.src).group_by("cat1").agg(aggs).sort("cat1").collect()


def freq_statgrid(ctx: Ctx, env: Env):
    return env.handle.freq(f"bench.{MEMBER}", tables=["*".join(t) for t in FREQ_TABLES], print=False)


def freq_duckdb_sql(ctx: Ctx) -> str:
    """statgrid's one statement for both tables (one scan, GROUPING SETS)."""
    from statgrid.procs.freq import tables_sql
    return tables_sql(src_ref(ctx).scan_sql(), FREQ_TABLES)


def freq_duckdb(ctx: Ctx, env: Env):
    return env.handle.execute(freq_duckdb_sql(ctx)).fetchall()


def freq_pandas(ctx: Ctx, env: Env):
    import pandas as pd
    df = pd.read_parquet(ctx.src, columns=["cat1", "cat2"])
    return [df["cat1"].value_counts(dropna=True).sort_index(), df.groupby(["cat1", "cat2"], sort=True).size()]


def freq_polars(ctx: Ctx, env: Env):
    import polars as pl
    lf = pl.scan_parquet(ctx.src)
    return pl.collect_all([lf.group_by("cat1").len().sort("cat1"),
                           lf.group_by(["cat1", "cat2"]).len().sort(["cat1", "cat2"])])


WORK: dict[str, dict[str, Callable]] = {
    "sort": {"statgrid": lambda c, e: sort_statgrid(c, e, True), "duckdb": lambda c, e: sort_duckdb(c, e, True),
             "pandas": lambda c, e: sort_pandas(c, e, True), "polars": lambda c, e: sort_polars(c, e, True)},
    "sort_unstable": {"statgrid": lambda c, e: sort_statgrid(c, e, False),
                      "duckdb": lambda c, e: sort_duckdb(c, e, False),
                      "pandas": lambda c, e: sort_pandas(c, e, False),
                      "polars": lambda c, e: sort_polars(c, e, False)},
    "summary": {"statgrid": summary_statgrid, "duckdb": summary_duckdb, "pandas": summary_pandas,
                "polars": summary_polars},
    "freq": {"statgrid": freq_statgrid, "duckdb": freq_duckdb, "pandas": freq_pandas, "polars": freq_polars},
}

SIDE_NOTES = {
    ("pandas", "sort_unstable"): "pandas ignores kind= for a multi-column sort (always a stable lexsort)",
    ("pandas", "sort"): "pandas/polars run in memory without a memory cap",
}

