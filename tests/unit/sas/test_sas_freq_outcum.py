"""PROC FREQ TABLES / OUT= OUTCUM (Base SAS Procedures, FREQ, TABLES statement): CUM_FREQ and CUM_PCT in OUT= for
a one-way table, over the levels in order, a missing level without them (unless MISSING); printed and NOPRINT
paths alike. Counts by hand: g = a a b c c c plus one missing."""
from __future__ import annotations

import pytest

from tests.unit.sas.standins import run_sas

DATA = """data a; input g $ @@; datalines;
a a b c c c .
;
"""


def rows(session, name):
    return [(r["g"], r["COUNT"], r["CUM_FREQ"], r["CUM_PCT"])
            for r in session.fetch_arrow("SELECT * FROM " + session.ref(name).scan_sql()).to_pylist()]


@pytest.mark.parametrize("noprint", ["", "noprint"])
def test_outcum_one_way(session, noprint):
    code, log, _ = run_sas(session, DATA + f"proc freq data=a {noprint}; tables g / out=f outcum; run;\n"
                                            f"proc freq data=a {noprint}; tables g / out=fm outcum missing; run;")
    assert code == 0, log
    assert rows(session, "work.f") == [("", 1.0, None, None), ("a", 2.0, 2.0, pytest.approx(100 * 2 / 6)),
                                       ("b", 1.0, 3.0, pytest.approx(50.0)), ("c", 3.0, 6.0, pytest.approx(100.0))]
    assert rows(session, "work.fm") == [("", 1.0, 1.0, pytest.approx(100 / 7)),
                                        ("a", 2.0, 3.0, pytest.approx(300 / 7)),
                                        ("b", 1.0, 4.0, pytest.approx(400 / 7)),
                                        ("c", 3.0, 7.0, pytest.approx(100.0))]
