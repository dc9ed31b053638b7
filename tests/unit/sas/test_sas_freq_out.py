"""PROC FREQ's OUT= written straight from the engine when the table is not printed (freq_out.py) equals the
OUT= written from the printed table's cells (freq.py), on random data with missing numbers, blank strings,
weights, BY groups and every ORDER= — and, for a one-way table, counts and percentages computed with
pandas. (The corpus program proc_freq.sas holds hand-computed expectations for both paths.)"""
from __future__ import annotations

import io
import random

import pandas as pd
import pytest

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


def run_sas(session, text):
    t = io.StringIO()
    code = run_program(text, session, SasLog(SessionLog(text=t, jsonl=io.StringIO(), listing=io.StringIO())))
    return code, t.getvalue()


def table(session, member):
    return session.execute(f"SELECT * FROM read_parquet('{session.dataset('work.' + member).path}')").df()


@pytest.fixture
def data(session):
    rng = random.Random(5)
    lines = []
    for _ in range(300):
        g = rng.choice(["a", "b", "c", "."])
        h = rng.choice(["1", "2", "."])
        x = rng.choice(["1", "2", "3", "."])
        lines.append(f"{rng.choice('pq')} {g} {h} {x} {rng.randint(0, 3)}")
    code, log = run_sas(session, "data work.d; input b $ g $ h x w; datalines;\n" + "\n".join(lines)
                        + "\n;\nrun;\nproc sort data=work.d; by b; run;\n")
    assert code == 0, log
    return session


@pytest.mark.parametrize("order", ["internal", "freq", "data"])
@pytest.mark.parametrize("tables,options,weight,by", [
    ("g", "", "", ""),
    ("g", "missing", "", "b"),
    ("g*h", "outpct", "w", ""),
    ("g*h*x", "outpct missing", "", "b"),
    ("x*g", "outpct", "w", "b"),
])
def test_engine_out_equals_the_printed_tables_out(data, order, tables, options, weight, by):
    body = (f"  tables {tables} / out=work.{{o}} {options};\n" + (f"  weight {weight};\n" if weight else "")
            + (f"  by {by};\n" if by else ""))
    code, log = run_sas(data, f"proc freq data=work.d order={order};\n{body.format(o='printed')}run;\n"
                              f"proc freq data=work.d order={order} noprint;\n{body.format(o='engine')}run;\n")
    assert code == 0, log
    printed, engine = table(data, "printed"), table(data, "engine")
    assert list(engine.columns) == list(printed.columns)
    assert len(engine) == len(printed) > 0
    pd.testing.assert_frame_equal(engine, printed, check_exact=False, rtol=1e-12)


def test_one_way_out_against_pandas(data):
    code, log = run_sas(data, "proc freq data=work.d noprint; tables g / out=work.o; weight w; run;\n")
    assert code == 0, log
    d = data.execute(f"SELECT * FROM read_parquet('{data.dataset('work.d').path}')").df()
    d = d[d.w > 0]
    counts = d.groupby(d.g.fillna("").replace("", None), dropna=False).w.sum()
    present = counts[counts.index.notna()]
    got = table(data, "o")
    assert list(got.g) == [""] * (len(counts) - len(present)) + sorted(present.index)
    for g, c in present.items():
        row = got[got.g == g].iloc[0]
        assert row.COUNT == c and row.PERCENT == pytest.approx(100 * c / present.sum(), rel=1e-12)
    miss = got[got.g == ""]
    assert miss.PERCENT.isna().all()


@pytest.mark.parametrize("noprint", ["", "noprint"])
def test_crosstab_order_follows_each_variables_own_order(session, noprint):
    """ORDER=DATA: each variable's levels by its own first appearance (r: z, y; c: 2, 1); ORDER=FREQ: by its own
    marginal count (c: 2 thrice, 1 twice) — the cells row-major in those orders, in OUT= and the printed table.
    Written out by hand from the five rows."""
    code, log = run_sas(session, f"""data a; input r $ c; datalines;
z 2
y 1
z 1
y 2
z 2
;
run;
proc freq data=a order=data {noprint}; tables r*c / out=work.o; run;
proc freq data=a order=freq {noprint}; tables c*r / out=work.f; run;
""")
    assert code == 0, log
    assert [(x.r, x.c, x.COUNT) for x in table(session, "o").itertuples()] == [
        ("z", 2.0, 2.0), ("z", 1.0, 1.0), ("y", 2.0, 1.0), ("y", 1.0, 1.0)]
    assert [(x.c, x.r, x.COUNT) for x in table(session, "f").itertuples()] == [
        (2.0, "z", 2.0), (2.0, "y", 1.0), (1.0, "z", 1.0), (1.0, "y", 1.0)]
