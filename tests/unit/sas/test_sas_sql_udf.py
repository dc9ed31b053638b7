"""PROC SQL calls the DATA step's functions that have no native DuckDB translation through a UDF bridge
(statgrid/sas/procs/sqludf.py): the same values as the same calls in a DATA step, SAS's missing-value rules,
the DATA step's "Invalid argument" NOTE, and a clear refusal for functions that need the DATA step."""
from __future__ import annotations

import math

import pytest

from tests.unit.sas.standins import run_sas

DATA = """data t; input x y s :$12.; datalines;
0 1 abbc
1.96 3 xyz
-1 . .
. 2 bbbb
;
"""
# (column, SAS expression) computed both ways
CALLS = [("pn", "probnorm(x)"), ("cdfn", "cdf('NORMAL', x)"), ("q", "quantile('NORMAL', 0.975)"),
         ("pm", "prxmatch('/b+/', s)"), ("pc", "prxchange('s/b/B/', -1, s)"), ("wn", "whichn(y, 1, 2, 3)"),
         ("yd", "yrdif('01jan2020'd, '01jan2020'd + 366 * y, 'ACT/ACT')"), ("lc", "lengthc(s)"),
         ("md", "put(md5(s), $hex32.)")]


def _rows(session, member):
    t = session.fetch_arrow("SELECT * FROM " + session.ref(f"work.{member}").scan_sql())
    return t.to_pylist()


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
    return a == b or (a in (None, "") and b in (None, ""))


def test_sql_calls_equal_the_data_step_and_hand_values(session):
    assigns = "\n".join(f"  {c} = {e};" for c, e in CALLS)
    cols = ", ".join(f"{e} as {c}" for c, e in CALLS)
    code, log, _ = run_sas(session, DATA + f"data d; set t;\n{assigns}\nrun;\n"
                           f"proc sql; create table q as select x, y, s, {cols} from t; quit;\n")
    assert code == 0, log
    assert "not supported in PROC SQL" not in log
    d, q = _rows(session, "d"), _rows(session, "q")
    assert len(d) == len(q) == 4
    for rd, rq in zip(d, q):
        for c, _ in CALLS:
            assert _same(rd[c], rq[c]), (c, rd, rq)
    # by hand: Phi(0) = 0.5, Phi(1.96) = 0.9750021048517795, Phi(.) missing; the 97.5% quantile 1.959963984540054
    assert q[0]["pn"] == pytest.approx(0.5) and q[1]["pn"] == pytest.approx(0.9750021048517795)
    assert q[3]["pn"] is None and q[3]["cdfn"] is None
    assert q[0]["q"] == pytest.approx(1.959963984540054)
    # 'abbc': first b at 2; 'xyz': 0; blank: 0; PRXCHANGE all b → B
    assert [r["pm"] for r in q] == [2.0, 0.0, 0.0, 1.0]
    assert q[0]["pc"] == "aBBc" and q[3]["pc"] == "BBBB"
    # WHICHN(y, 1, 2, 3): y=1 → 1, y=3 → 3, y missing → missing, y=2 → 2
    assert [r["wn"] for r in q] == [1.0, 3.0, None, 2.0]
    # 2020 is a leap year: 366 days from 01JAN2020 is exactly one year
    assert q[0]["yd"] == pytest.approx(1.0)
    # LENGTHC counts the padding of a $12 variable, as in the DATA step
    assert q[0]["lc"] == 12.0
    assert len(q[0]["md"]) == 32 and q[0]["md"] != q[1]["md"]


def test_invalid_argument_note_and_missing_result(session):
    code, log, _ = run_sas(session, DATA + "proc sql; create table q as select x, quantile('NORMAL', x) as qq "
                           "from t; quit;\n")
    assert code == 0, log
    q = _rows(session, "q")
    # QUANTILE needs 0 < p < 1: x=0, 1.96, -1 are invalid (missing, with the NOTE); x missing gives missing
    assert [r["qq"] for r in q] == [None, None, None, None]
    assert "Invalid argument to function QUANTILE" in log


def test_data_step_only_functions_are_refused_clearly(session):
    code, log, _ = run_sas(session, DATA + "proc sql; create table q as select vname(x) as v from t; quit;\n")
    assert code != 0 or "ERROR" in log
    assert "VNAME" in log and "needs the DATA step" in log


def test_type_mismatch_is_an_error_naming_the_argument(session):
    code, log, _ = run_sas(session, DATA + "proc sql; create table q as select probnorm(s) as p from t; quit;\n")
    assert "Function PROBNORM requires a numeric expression as argument 1" in log


def test_row_udfs_give_what_vector_udfs_give(session, monkeypatch):
    from statgrid.sas.procs import sqludf
    sel = "select probnorm(x) as pn, prxchange('s/b/B/', -1, s) as pc, whichn(y, 1, 2, 3) as wn from t"
    code, log, _ = run_sas(session, DATA + f"proc sql; create table va as {sel}; quit;\n")
    assert code == 0, log
    made, real = [], sqludf.make_row_fn
    monkeypatch.setattr(sqludf, "UDF_MODE", "native")
    monkeypatch.setattr(sqludf, "make_row_fn", lambda p, f, sig: made.append(f.name) or real(p, f, sig))
    code, log, _ = run_sas(session, f"proc sql; create table ro as {sel}; quit;\n")
    assert code == 0, log
    assert sorted(made) == ["PROBNORM", "PRXCHANGE", "WHICHN"]          # the per-row UDFs did run
    assert _rows(session, "va") == _rows(session, "ro")


class _Log:
    def __init__(self):
        self.lines = []

    def note(self, m):
        self.lines.append("NOTE: " + m)


def test_where_translation_calls_the_bridge_when_given_the_program(session):
    from statgrid.sas.context import ProgramState
    from statgrid.sas.parse.expr import parse_expression_text
    from statgrid.sas.where_sql import Column, WhereNotSql, where_sql
    con = session.con
    con.execute("CREATE OR REPLACE TEMP TABLE wt AS SELECT * FROM (VALUES (1, 0.0, 'abbc'), (2, 2.0, 'xyz'), "
                "(3, NULL, 'bb'), (4, -1.0, NULL)) v(id, x, s)")
    cols = {"X": Column('"x"', "num"), "S": Column('"s"', "char", 4)}
    node = parse_expression_text("probnorm(x) > 0.9 or prxmatch('/b+/', s) = 1", where=True)
    with pytest.raises(WhereNotSql):
        where_sql(node, cols, "WT")                   # without the program: as before, no SQL for PROBNORM
    program = ProgramState(session=session, log=_Log(), options=None, symbols=None, formats=None)
    cond = where_sql(node, cols, "WT", program=program)
    ids = [r[0] for r in con.execute(f"SELECT id FROM wt WHERE {cond} ORDER BY id").fetchall()]
    # by hand: Phi(0) = 0.5 and 'abbc' matches at 2 → out; Phi(2) = 0.977 → in; Phi(.) is missing (< 0.9) but
    # 'bb' matches at 1 → in; Phi(-1) = 0.159 and a blank value never matches → out
    assert ids == [2, 3]
    bad = parse_expression_text("quantile('NORMAL', x) > 0", where=True)
    ids = [r[0] for r in con.execute(f"SELECT id FROM wt WHERE {where_sql(bad, cols, 'WT', program=program)}"
                                     ).fetchall()]
    assert ids == [] and any("Invalid argument to function QUANTILE" in x for x in program.log.lines)


def test_a_missing_result_compares_as_sas_missing_in_sql_where(session):
    code, log, _ = run_sas(session, DATA + "data d; set t; if probnorm(x) < 0.6 and 0.1 > whichn(y, 5); run;\n"
                           "proc sql; create table q as select x from t where probnorm(x) < 0.6 and "
                           "0.1 > whichn(y, 5); quit;\n")
    assert code == 0, log
    # by hand: Phi(0) = 0.5, Phi(1.96) = 0.975, Phi(-1) = 0.159, Phi(.) missing (smaller than every number);
    # WHICHN(y, 5) is 0 for y = 1, 3, 2 and missing for y missing (smaller than 0.1 too) → x = 0, -1, .
    want = [0.0, -1.0, None]
    assert [r["x"] for r in _rows(session, "q")] == want
    assert [r["x"] for r in _rows(session, "d")] == want


def test_a_procs_where_option_and_statement_call_data_step_functions(session):
    """WHERE= on a PROC's input and a PROC's WHERE statement use the same bridge (by hand: x from -2 to 2 by .5;
    PROBNORM(x) > .5 for x > 0; '5' in PUT(x, 4.1) for 0.5 and 1.5; PROBNORM(x) < .5 for the 4 negative x)."""
    from tests.unit.sas.standins import run_sas
    code, log, lst = run_sas(session, """data a; do x = -2 to 2 by .5; s = put(x, 4.1); output; end; run;
proc sort data=a(where=(probnorm(x) > .5 and prxmatch('/5/', s))) out=b; by x; run;
proc means data=a noprint; where probnorm(x) < .5; var x; output out=m n=n; run;""")
    assert code == 0, log
    xs = [r["x"] for r in session.fetch_arrow("SELECT * FROM " + session.ref("work.b").scan_sql()).to_pylist()]
    n = session.fetch_arrow("SELECT * FROM " + session.ref("work.m").scan_sql()).to_pylist()[0]["n"]
    assert xs == [0.5, 1.5] and n == 4


def test_a_functions_own_error_inside_sql_reads_as_sas_error(session):
    from tests.unit.sas.standins import run_sas
    code, log, _ = run_sas(session, "data a; s = 'abc'; run;\nproc sql; select prxmatch('/(/', s) as p from a; quit;")
    assert code == 1 and "ERROR: The regular expression '/(/' is not valid" in log
    assert "Python exception" not in log and "UDF" not in log
