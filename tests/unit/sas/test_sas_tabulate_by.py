"""PROC TABULATE's BY statement (Base SAS TABULATE, BY): one table per BY group under its BY line, the BY
variables first in OUT=; a BY variable out of order is SAS's ERROR. Expected rows worked out by hand."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


DATA = """data a; input g $ age x; datalines;
a 11 1
a 14 2
b 12 3
b 15 4
b 16 5
;
run;
"""


def run(session, text):
    return run_sas(session, DATA + text)


def test_one_table_per_by_group_and_by_columns_first_in_out(session):
    code, log, lst = run(session, "proc tabulate data=a out=tt; by g; class age; var x; table age all, x*(n sum); run;")
    assert code == 0, log
    got = [(r["g"], r["age"], r["_TYPE_"], r["x_N"], r["x_Sum"]) for r in
           session.fetch_arrow("SELECT * FROM " + session.ref("work.tt").scan_sql()).to_pylist()]
    assert got == [("a", None, "0", 1 + 1, 1 + 2), ("a", 11.0, "1", 1, 1), ("a", 14.0, "1", 1, 2),
                   ("b", None, "0", 3, 3 + 4 + 5), ("b", 12.0, "1", 1, 3), ("b", 15.0, "1", 1, 4),
                   ("b", 16.0, "1", 1, 5)]
    assert lst.index("g=a") < lst.index("g=b")


def test_by_not_sorted_is_an_error(session):
    code, log, _ = run(session, "proc tabulate data=a; by x; class g; table g; run;\n"
                                "data d; set a; x = -x; run; proc tabulate data=d; by x; class g; table g; run;")
    assert code != 0 and "Data set WORK.D is not sorted in ascending sequence" in log


def test_by_values_with_sql_characters_select_their_own_rows(session):
    """Two BY variables, the first's value holding '?' or a quote: each group gets its own rows (by hand:
    a?b/1 → 1 + 2, a?b/2 → 4, o'k/1 → 3)."""
    code, log, _ = run(session, """data q; length g $4; input g $ h x; datalines;
a?b 1 1
a?b 1 2
a?b 2 4
o'k 1 3
;
proc tabulate data=q out=qt; by g h; var x; table x*sum; run;""")
    assert code == 0, log
    got = [(r["g"], r["h"], r["x_Sum"]) for r in
           session.fetch_arrow("SELECT * FROM " + session.ref("work.qt").scan_sql()).to_pylist()]
    assert got == [("a?b", 1.0, 3.0), ("a?b", 2.0, 4.0), ("o'k", 1.0, 3.0)]
