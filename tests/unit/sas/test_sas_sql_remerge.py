"""PROC SQL remerging (SAS 9.4 SQL Procedure User's Guide, "Remerging Summary Statistics"): a query that
selects columns neither grouped nor summarized beside summary functions gets every detail row with its
group's statistics and SAS's NOTE; HAVING with no GROUP BY filters detail rows by whole-table statistics;
NOREMERGE makes it an ERROR. Expected rows are computed with pandas (groupby/transform) over the same
values, not by the code under test."""
from __future__ import annotations

import io
import random

import pandas as pd
import pytest

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog

NOTE = "NOTE: The query requires remerging summary statistics back with the original data."


def run_sas(session, text):
    t, lst = io.StringIO(), io.StringIO()
    log = SasLog(SessionLog(text=t, jsonl=io.StringIO(), listing=lst))
    code = run_program(text, session, log)
    return code, t.getvalue(), lst.getvalue()


@pytest.fixture
def frame(session):
    rng = random.Random(11)
    rows = [(rng.choice("abc"), float(rng.randint(1, 50))) for _ in range(40)]
    lines = "\n".join(f"{g} {x:g}" for g, x in rows)
    code, log, _ = run_sas(session, f"data work.a; input g $ x; datalines;\n{lines}\n;\nrun;\n")
    assert code == 0, log
    return pd.DataFrame(rows, columns=["g", "x"])


def table(session, member):
    return session.execute(f"SELECT * FROM read_parquet('{session.dataset('work.' + member).path}')").df()


def test_group_statistics_are_remerged_with_every_detail_row(session, frame):
    code, log, _ = run_sas(session, """proc sql;
      create table work.r as select g, x, sum(x) as tot, x / sum(x) as share, count(*) as n, max(x) - min(x) as rng
      from work.a group by g;
    quit;""")
    assert code == 0, log
    assert NOTE in log
    want = frame.assign(tot=frame.groupby("g").x.transform("sum"), n=frame.groupby("g").x.transform("size").astype(float),
                        rng=frame.groupby("g").x.transform(lambda s: s.max() - s.min()))
    want["share"] = want.x / want.tot
    got = table(session, "r")
    assert list(got.columns) == ["g", "x", "tot", "share", "n", "rng"]
    assert len(got) == len(frame)                                   # every detail row, none collapsed
    assert list(got.g) == sorted(got.g)                             # ordered by the group, as SAS sorts to group
    key = ["g", "x", "tot", "n", "rng"]
    assert sorted(map(tuple, got[key].astype(str).values)) == sorted(map(tuple, want[key].astype(str).values))
    assert got.share.sum() == pytest.approx(want.share.sum(), rel=1e-12)


def test_no_group_by_remerges_the_whole_table_and_having_filters_detail_rows(session, frame):
    code, log, _ = run_sas(session, """proc sql;
      create table work.p as select x, x / sum(x) as pct from work.a;
      create table work.top as select g, x from work.a group by g having x = max(x);
      create table work.above as select * from work.a having x > avg(x);
    quit;""")
    assert code == 0, log
    assert log.count(NOTE) == 3
    p = table(session, "p")
    assert len(p) == len(frame) and p.pct.sum() == pytest.approx(1.0, rel=1e-12)
    assert sorted(p.x) == sorted(frame.x)
    top = table(session, "top")
    want_top = frame[frame.x == frame.groupby("g").x.transform("max")]
    assert sorted(map(tuple, top.values)) == sorted(map(tuple, want_top.values))
    above = table(session, "above")
    assert sorted(above.x) == sorted(frame.x[frame.x > frame.x.mean()])


def test_a_subquery_keeps_its_own_aggregate(session, frame):
    code, log, _ = run_sas(session, """proc sql;
      create table work.s as select g, x, sum(x) as tot, (select count(*) from work.a) as all_n
      from work.a group by g;
    quit;""")
    assert code == 0, log
    s = table(session, "s")
    assert set(s.all_n) == {float(len(frame))} and len(s) == len(frame)


def test_a_grouped_query_needs_no_remerge_and_gets_no_note(session, frame):
    code, log, _ = run_sas(session, "proc sql; create table work.g as select g, sum(x) as t from work.a group by g; quit;")
    assert code == 0, log
    assert NOTE not in log
    got = table(session, "g")
    want = frame.groupby("g").x.sum()
    assert dict(zip(got.g, got.t)) == dict(want)


def test_noremerge_refuses_with_sas_error(session, frame):
    code, log, _ = run_sas(session, """proc sql noremerge;
      create table work.r as select g, x, sum(x) as tot from work.a group by g;
    quit;""")
    assert code != 0
    assert "ERROR: The query requires remerging summary statistics back with the original data." in log
    assert "NOREMERGE" in log
    assert "Table WORK.R created" not in log


def test_group_by_a_column_position_remerges_by_that_column(session, frame):
    code, log, _ = run_sas(session, """proc sql;
      create table work.p as select g, x, sum(x) as s from work.a group by 1;
    quit;""")
    assert code == 0, log
    got = table(session, "p")
    want = frame.groupby("g").x.sum()
    assert len(got) == len(frame)
    assert all(row.s == want[row.g] for row in got.itertuples())
