"""MEANS's and FREQ's listings stack a heading wider than its column's values over several lines, bottom-aligned,
as SAS's listing does ("Cumulative" over "Frequency"; "N" over "Miss"; "N" over "Obs"), and right-align it over a
column of numbers. Expected layout by hand: each stacked word ends in the column where the numbers below end."""
from __future__ import annotations

from statgrid.sas.procs.stattext import simple_table
from tests.unit.sas.standins import run_sas


def test_simple_table_stacks_only_what_does_not_fit():
    lines = simple_table(["g", "Cumulative Frequency", "Std Dev"], [["a", "3", "1.2345678"]], 1)
    assert lines == ["   Cumulative",
                     "g   Frequency    Std Dev",
                     "-" * 24,
                     "a           3  1.2345678",
                     "-" * 24]


def test_freq_and_means_listings_stack_their_headings(session):
    code, log, lst = run_sas(session, """data a; input x @@; datalines;
1 1 2 . 3
;
proc freq data=a; tables x; run;
proc means data=a n nmiss mean; var x; run;""")
    assert code == 0, log
    lines = lst.splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.strip().startswith("x  Frequency"))
    top, head = lines[k - 1], lines[k]
    assert top.split() == ["Cumulative", "Cumulative"]
    # each "Cumulative" ends where its column's heading ends (right-aligned over numbers)
    assert top.index("Cumulative") + len("Cumulative") == head.index("Frequency", head.index("Percent")) + 9
    assert top.rindex("Cumulative") + len("Cumulative") == head.rindex("Percent") + 7
    assert lines[k + 2].split() == ["1", "2", "50.00", "2", "50.00"]
    m = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["N", "Miss"] or ln.split() == ["N", "Miss", "Mean"])
    assert lines[m - 1].split() == ["N"] and lines[m].split() == ["N", "Miss", "Mean"]
    assert lines[m + 2].split() == ["4", "1", "1.7500000"]
