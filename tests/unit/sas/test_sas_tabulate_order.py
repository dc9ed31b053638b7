"""PROC TABULATE's listing in SAS's order: a dimension reads as written (`h*x*(sum mean)`: each level of h,
then Sum and Mean under it) and CLASS levels sort by value (9 before 10), not as text. Cells by hand."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


def test_columns_follow_the_expression_and_levels_sort_as_numbers(session):
    code, log, lst = run_sas(session, """data a; input g h $ x @@; datalines;
10 u 1 10 v 2 9 u 3 9 v 4 10 u 5
;
proc tabulate data=a; class g h; var x; table g all, h*x*(sum mean); run;""")
    assert code == 0, log
    lines = [ln.split() for ln in lst.split("\n") if ln.strip()]
    head = next(ln for ln in lines if "Sum" in ln)
    assert " ".join(head) == "h=u x Sum h=u x Mean h=v x Sum h=v x Mean"
    body = [ln for ln in lines if ln[0] in ("g=9", "g=10", "All")]
    # g=9: u → 3 (one row), v → 4; g=10: u → 1 + 5 (mean 3), v → 2; All: u → 9 (mean 3), v → 6 (mean 3)
    assert body == [["g=9", "3", "3", "4", "4"], ["g=10", "6", "3", "2", "2"], ["All", "9", "3", "6", "3"]]

