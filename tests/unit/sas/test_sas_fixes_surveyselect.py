"""PROC SURVEYSELECT METHOD=SYS and METHOD=URS (SAS/STAT SURVEYSELECT, "Systematic Random Sampling",
"Unrestricted Random Sampling", "Sample Output Data Set"). Expected values by hand from the strata sizes below:
stratum A has 12 rows (id 1-12), B has 7 (id 13-19), in input order."""
from __future__ import annotations

from collections import Counter

import pytest
from tests.unit.sas.standins import rows, run_sas

FRAME = """data f; do id = 1 to 19; region = ifc(id <= 12, 'A', 'B'); output; end; run;
"""


def run_ok(session, text: str) -> str:
    code, log, _ = run_sas(session, FRAME + text)
    assert code == 0, log
    return log


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sys_sample_size_is_equally_spaced_in_each_stratum(session, seed):
    run_ok(session, f"proc surveyselect data=f out=s method=sys n=3 seed={seed}; strata region; run;")
    got = rows(session, "work.s")
    a = [r["id"] for r in got if r["region"] == "A"]
    b = [r["id"] - 12 for r in got if r["region"] == "B"]
    # A: interval 12/3 = 4, a start r in 1..4 gives r, r+4, r+8
    assert len(a) == 3 and 1 <= a[0] <= 4 and a == [a[0], a[0] + 4, a[0] + 8]
    # B: interval 7/3: consecutive picks 2 or 3 apart, all 3 distinct rows of B
    assert len(b) == 3 and all(d in (2, 3) for d in (b[1] - b[0], b[2] - b[1])) and 1 <= b[0] <= 3
    for r in got:
        n_h = 12 if r["region"] == "A" else 7
        assert r["SelectionProb"] == pytest.approx(3 / n_h, rel=1e-12)
        assert r["SamplingWeight"] == pytest.approx(n_h / 3, rel=1e-12)


def test_sys_sampling_rate_uses_the_inverse_rate_as_interval(session):
    run_ok(session, "proc surveyselect data=f out=s method=sys samprate=25 seed=7; strata region; run;")
    got = rows(session, "work.s")
    a = [r["id"] for r in got if r["region"] == "A"]
    b = [r["id"] for r in got if r["region"] == "B"]
    # interval 4: A (12 rows) gives exactly 3, every 4th; B (7 rows) gives 1 or 2
    assert len(a) == 3 and a == [a[0], a[0] + 4, a[0] + 8] and len(b) in (1, 2)
    assert {r["SelectionProb"] for r in got} == {0.25} and {r["SamplingWeight"] for r in got} == {4.0}


def test_urs_number_hits_and_expected_hits(session):
    run_ok(session, "proc surveyselect data=f out=u method=urs n=10 seed=11; strata region; run;")
    got = rows(session, "work.u")
    for region, n_h in (("A", 12), ("B", 7)):
        mine = [r for r in got if r["region"] == region]
        # one row per unit selected, NumberHits the selections of it: 10 in all per stratum
        assert sum(r["NumberHits"] for r in mine) == 10
        assert len({r["id"] for r in mine}) == len(mine)
        assert all(r["ExpectedHits"] == pytest.approx(10 / n_h, rel=1e-12) for r in mine)
        assert all(r["SamplingWeight"] == pytest.approx(n_h / 10, rel=1e-12) for r in mine)
    assert [r["id"] for r in got] == sorted(r["id"] for r in got)          # input order
    assert "SelectionProb" not in got[0]


def test_urs_outhits_gives_a_row_per_selection(session):
    run_ok(session, "proc surveyselect data=f out=u method=urs n=25 seed=3 outhits; run;")
    got = rows(session, "work.u")
    # 25 draws from 19 rows: 25 output rows; a unit drawn m times is m rows, each with NumberHits m
    assert len(got) == 25
    copies = Counter(r["id"] for r in got)
    assert all(r["NumberHits"] == copies[r["id"]] for r in got)
    assert all(r["ExpectedHits"] == pytest.approx(25 / 19, rel=1e-12) for r in got)


@pytest.mark.parametrize("text, message", [
    ("proc surveyselect data=f out=s method=srs n=3 outhits; run;", "The OUTHITS option is for METHOD=URS"),
    ("proc surveyselect data=f out=s method=sys n=13 seed=1; strata region; run;",
     "n=13 is more than the 12 rows of stratum"),
    ("proc surveyselect data=f out=s method=pps n=3; run;", "METHOD=PPS is not supported"),
])
def test_bad_requests_are_errors(session, text, message):
    code, log, _ = run_sas(session, FRAME + text)
    assert code != 0 and message in log, log
