"""Defects a hostile review found in this round's SAS work, each pinned by a program (expected behaviour from
SAS's documentation, figures by hand or scipy)."""
from __future__ import annotations

import pytest

from statgrid.sas.functions import regex
from tests.unit.sas.standins import run_sas


def flat(log):
    return " ".join(log.split())


def test_catastrophic_backtracking_stops_with_an_error(session, monkeypatch):
    monkeypatch.setattr(regex, "MATCH_BUDGET_S", 0.2)
    code, log, _ = run_sas(session, "data _null_; s = repeat('a', 40) || 'b'; p = prxmatch('/(a+)+$/', s); run;\n"
                                    "data b; x = 1; run;")
    assert code == 1 and "ran longer than 0.2 seconds on one value" in flat(log)
    assert "NOTE: The data set WORK.B has 1 observations" in flat(log)


def test_a_huge_numbered_range_stops_at_its_first_missing_member(session):
    code, log, _ = run_sas(session, "data a1; x = 1; run; data b; set a1-a99999999999; run;")
    assert code == 1 and "File WORK.A2.DATA does not exist" in flat(log)


def test_of_over_a_large_temporary_array_is_one_slice(session):
    """SUM/MAX/N over a 100,000-element _TEMPORARY_ array (by hand: two elements set, 1 and 2)."""
    code, log, _ = run_sas(session, "data a; array t{100000} _temporary_; t{1} = 1; t{100000} = 2;"
                                    " s = sum(of t{*}); m = max(of t{*}); n = n(of t{*}); run;")
    assert code == 0, log
    r = session.fetch_arrow("SELECT * FROM " + session.ref("work.a").scan_sql()).to_pylist()[0]
    assert (r["s"], r["m"], r["n"]) == (3.0, 2.0, 2.0)
