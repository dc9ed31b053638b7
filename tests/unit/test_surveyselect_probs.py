"""SURVEYSELECT's selection probabilities and sampling weights (METHOD=SRS, the only method statgrid's
SURVEYSELECT has; URS and SYS are an ERROR naming them): per stratum SelectionProb = n_h/N_h and
SamplingWeight = N_h/n_h, with N_h counted here independently by DuckDB over the input and n_h by
counting the rows selected, so the weights of a stratum sum to its size. Exact (1e-12)."""
from __future__ import annotations

import io
import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


@pytest.fixture
def frame(session):
    rng = np.random.default_rng(3)
    sizes = {"north": 37, "south": 120, "east": 8, "west": 55}
    region = [r for r, k in sizes.items() for _ in range(k)]
    t = pa.table({"region": region, "v": rng.normal(size=len(region))})
    session.write_table("work.f", t)
    return t, sizes


def _check(out: pa.Table, frame: pa.Table, expected_n) -> None:
    con = duckdb.connect()
    con.register("f", frame)
    con.register("o", out)
    N = dict(con.execute("SELECT region, count(*) FROM f GROUP BY region").fetchall())
    got = con.execute("SELECT region, count(*), min(SelectionProb), max(SelectionProb), min(SamplingWeight), "
                      "max(SamplingWeight), sum(SamplingWeight) FROM o GROUP BY region").fetchall()
    assert {g[0] for g in got} == set(N)
    for region, n, pmin, pmax, wmin, wmax, wsum in got:
        assert n == expected_n(N[region])
        assert math.isclose(pmin, n / N[region], rel_tol=1e-12) and math.isclose(pmax, pmin, rel_tol=1e-12)
        assert math.isclose(wmin, N[region] / n, rel_tol=1e-12) and math.isclose(wmax, wmin, rel_tol=1e-12)
        assert math.isclose(wsum, N[region], rel_tol=1e-12)
    con.close()


def test_srs_probabilities_with_n_per_stratum(session, frame):
    t, _ = frame
    session.surveyselect("work.f", "work.o", n=5, strata="region", seed=9)
    _check(session.fetch_arrow("SELECT * FROM " + session.dataset("work.o").scan_sql()), t, lambda N: 5)


def test_srs_probabilities_with_a_rate(session, frame):
    t, _ = frame
    session.surveyselect("work.f", "work.o", rate=0.15, strata="region", seed=4)
    _check(session.fetch_arrow("SELECT * FROM " + session.dataset("work.o").scan_sql()), t,
           lambda N: math.ceil(0.15 * N))


def test_sas_surveyselect_probabilities_and_unbuilt_methods(session, frame):
    t, _ = frame

    def run(text):
        log, lst = io.StringIO(), io.StringIO()
        code = run_program(text, session, SasLog(SessionLog(text=log, jsonl=io.StringIO(), listing=lst)))
        return code, log.getvalue()

    code, log = run("proc sort data=work.f out=work.fs; by region; run;\n"
                    "proc surveyselect data=work.fs out=work.o2 method=srs samprate=20 seed=5; strata region; run;")
    assert code == 0, log
    _check(session.fetch_arrow("SELECT * FROM " + session.dataset("work.o2").scan_sql()), t,
           lambda N: math.ceil(0.2 * N))
    # SYS and URS are built (tests/unit/sas/test_sas_fixes_surveyselect.py); PPS methods are not
    for method in ("PPS", "PPS_WR"):
        code, log = run(f"proc surveyselect data=work.f out=work.o3 method={method} n=3 seed=1; run;")
        assert code == 1 and f"METHOD={method} is not supported" in log, log
