"""benchmarks/sas_procs: PROC SORT, MEANS, FREQ and SQL written in SAS against the same work through
statgrid's Python API (issue 27, "Performance": the SAS front end adds ≤ 5 % on 10 M rows).

    python benchmarks/sas_procs.py [--rows 10000000] [--runs 3] [--memsize 1G] [--threads 2]
                                   [--cases sort,means,freq,sql] [--json FILE] [--profile CASE]

The harness is benchmarks/datastep.py's (same input, same interleaving: run r executes the two sides in
an order rotated by r, each in a fresh session opened and closed outside the timed region; the same
checks before any figure counts; the same memory probe). Only the cases differ:

  sort   PROC SORT BY k DESCENDING x1                       vs Session.sort
  means  PROC MEANS NWAY NOPRINT, CLASS cat, VAR x1-x5,     vs Session.means(class_=cat, stats n mean sum,
         OUTPUT OUT= N= MEAN= SUM= / AUTONAME                  out=, print=False)
  freq   PROC FREQ NOPRINT, TABLES k / OUT= (rows/5 levels) vs Session.freq(tables=k, out=, print=False)
  sql    PROC SQL CREATE TABLE … GROUP BY cat, k            vs Session.sql (DuckDB SQL, the same query)

The goal of every case: SAS / other ≤ 1.05 (wall, median).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datastep as ds  # noqa: E402

SAS_SORT = ds.SAS_F

SAS_MEANS = """proc means data=bench.big noprint nway;
  class cat;
  var x1-x5;
  output out=work.out n= mean= sum= / autoname;
run;
"""


def api_means(ctx, s) -> None:
    s.means("bench.big", var="x1 x2 x3 x4 x5", class_="cat", stats="n mean sum", out="work.out", print=False)


SAS_FREQ = """proc freq data=bench.big noprint;
  tables k / out=work.out;
run;
"""


def api_freq(ctx, s) -> None:
    s.freq("bench.big", tables="k", out="work.out", print=False)


SAS_SQL = """proc sql;
  create table work.out as
  select cat, k, count(*) as n, sum(x1) as s1, avg(x2) as m2, max(x3) as mx3
  from bench.big
  group by cat, k;
quit;
"""


def api_sql(ctx, s) -> None:
    s.sql(f"CREATE TABLE work.out AS SELECT cat, k, count(*)::DOUBLE AS n, sum(x1) AS s1, avg(x2) AS m2, "
          f"max(x3) AS mx3 FROM {ds.src(s, 'big')} GROUP BY cat, k ORDER BY cat, k", print=False)


_GOAL = "ratio ≤ 1.05"
CASES = {c.key: c for c in (
    ds.Case("sort", "PROC SORT BY k DESCENDING x1", "Session.sort (procs/sort.py)",
            lambda ctx: SAS_SORT, ds.api_f, lambda ctx: ctx.rows, ("id",), _GOAL, order_digest=True),
    ds.Case("means", "PROC MEANS NWAY: CLASS cat, VAR x1-x5, N MEAN SUM to OUT=", "Session.means (procs/summary.py)",
            lambda ctx: SAS_MEANS, api_means, lambda ctx: ctx.rows,
            tuple("+".join(f'"x{i}_{st}"' for i in range(1, 6)) for st in ("N", "Mean", "Sum")), _GOAL,
            other_sums=("n", "mean", "sum"), other_rows_per_row=5),    # the API's OUT= is long: one row per class level and variable
    ds.Case("freq", "PROC FREQ: TABLES k / OUT= (rows/5 levels)", "Session.freq (procs/freq.py)",
            lambda ctx: SAS_FREQ, api_freq, lambda ctx: ctx.rows, ("k", "COUNT", "PERCENT"), _GOAL,
            other_sums=("k", "count", "percent")),
    ds.Case("sql", "PROC SQL: CREATE TABLE … GROUP BY cat, k (count, sum, avg, max)", "Session.sql (DuckDB SQL)",
            lambda ctx: SAS_SQL, api_sql, lambda ctx: ctx.rows, ("k", "n", "s1", "m2", "mx3"), _GOAL),
)}


if __name__ == "__main__":
    sys.exit(ds.main(cases=CASES, title="sas_procs", doc=__doc__))
