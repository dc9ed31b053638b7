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


def test_variable_information_functions(session):
    """VNAME VLABEL VFORMAT VLENGTH VTYPE VVALUE (SAS 9.4 Functions): from the PDV, an array element by its
    subscript at run time. By hand."""
    code, log, _ = run_sas(session, """data a; length c $ 5; label x = 'The X'; format x 8.2;
  x = 3.14159; c = 'ab'; array r{2} x y; y = 2; i = 2;
  n1 = vname(x); n2 = vname(r{i}); l1 = vlabel(x); l2 = vlabel(c); f1 = vformat(x); f2 = vformat(c);
  f3 = vformat(y); len = vlength(c); t = vtype(c); vv = vvalue(x);
run;""")
    assert code == 0, log
    r = session.fetch_arrow("SELECT * FROM " + session.ref("work.a").scan_sql()).to_pylist()[0]
    got = [r[k].strip() if isinstance(r[k], str) else r[k] for k in
           ("n1", "n2", "l1", "l2", "f1", "f2", "f3", "len", "t", "vv")]
    assert got == ["x", "y", "The X", "c", "8.2", "$5.", "BEST12.", 5.0, "C", "3.14"]


def test_binomial_for_large_n_and_normal_log_tails(session):
    from scipy import special, stats
    code, log, _ = run_sas(session, """data a;
  d = cdf('BINOMIAL', 5e6, 0.5, 1e7); c = sdf('BINOMIAL', 5e7, 0.5, 1e8); q = quantile('BINOMIAL', .5, .5, 1e12);
  small = cdf('BINOMIAL', 3, 0.3, 10);
  lc = logcdf('NORMAL', -40); ls = logsdf('NORMAL', 40); lp = logpdf('NORMAL', 40);
run;""")
    assert code == 0, log
    r = session.fetch_arrow("SELECT * FROM " + session.ref("work.a").scan_sql()).to_pylist()[0]
    assert r["d"] == pytest.approx(stats.binom.cdf(5e6, 1e7, 0.5), rel=1e-9)
    assert r["c"] == pytest.approx(stats.binom.sf(5e7, 1e8, 0.5), rel=1e-9)
    assert r["q"] == pytest.approx(5e11, rel=1e-6)
    assert r["small"] == pytest.approx(stats.binom.cdf(3, 10, 0.3), rel=1e-12)
    assert r["lc"] == pytest.approx(float(special.log_ndtr(-40)), rel=1e-12)
    assert r["ls"] == pytest.approx(float(special.log_ndtr(-40)), rel=1e-12)
    assert r["lp"] == pytest.approx(-800 - 0.5 * __import__("math").log(2 * __import__("math").pi), rel=1e-12)


def test_date_functions_use_sas_calendar_past_4000(session):
    """SAS's calendar has no 29FEB4000 (Language Reference: Concepts, SAS date values): JULDATE of 01JAN5000 is
    5000001 and DATEJUL gives it back; HOLIDAY's New Year and Christmas of 4001 fall on 1 January and
    25 December."""
    code, log, _ = run_sas(session, """data a;
  j = juldate('01JAN5000'd); back = (datejul(j) = '01JAN5000'd);
  e = (holiday('NEWYEAR', 4001) = '01JAN4001'd); x = (holiday('CHRISTMAS', 4001) = '25DEC4001'd);
run;""")
    assert code == 0, log
    r = session.fetch_arrow("SELECT * FROM " + session.ref("work.a").scan_sql()).to_pylist()[0]
    assert (r["j"], r["back"], r["e"], r["x"]) == (5000001.0, 1.0, 1.0, 1.0)


def test_call_execute_chain_stops_at_its_limit(session):
    code, log, _ = run_sas(session, """data code; length l $200; l = "data _null_; set code; call execute(l); run;"; run;
data _null_; set code; call execute(l); run;
data after; x = 1; run;""")
    assert code == 1 and "CALL EXECUTE code generated CALL EXECUTE code 100 times in a row" in flat(log)
    assert "NOTE: The data set WORK.AFTER has 1 observations" in flat(log)


def test_ttest_class_levels_found_in_the_data_do_not_stop_the_program(session):
    code, log, _ = run_sas(session, """data three; input g x @@; datalines;
1 1 2 2 3 3
;
proc ttest data=three; class g; var x; run;
data after; x = 1; run;""")
    assert code == 1 and "has more than two levels" in flat(log) and "OBS=0" not in flat(log)
    assert "NOTE: The data set WORK.AFTER has 1 observations" in flat(log)


@pytest.mark.parametrize("stmt, message", [
    ("data _null_; y = put('ab', $hex2000000000.); run;", "$HEX2000000000."),
    ("proc format; picture d (default=2000000000) low-high='%Y' (datatype=date); run;",
     "The DEFAULT= value 2000000000 is not valid"),
    ("data _null_; file 'touch /tmp/statgrid-review-pipe' pipe; put 'x'; run;", "FILE PIPE would run"),
    ("data _null_; infile 'ls' pipe; input; run;", "INFILE PIPE would run")])
def test_widths_past_32767_and_file_pipe_are_refused(session, stmt, message):
    code, log, _ = run_sas(session, stmt)
    assert code == 1 and message in flat(log) and "Error:" not in log


def test_call_execute_runs_macro_statements_at_once(session):
    """SAS Macro Language Reference, CALL EXECUTE: macro statements and macro invocations in the argument execute
    immediately; the SAS statements they generate run after the step."""
    code, log, _ = run_sas(session, """%let v = 0;
data a; call execute('%let v = 1;'); x = symget('v'); run;
data _null_; call execute('%put FROM MACRO;'); put 'STEP LINE'; run;""")
    assert code == 0, log
    assert session.fetch_arrow("SELECT * FROM " + session.ref("work.a").scan_sql()).to_pylist()[0]["x"].strip() == "1"
    assert log.index("FROM MACRO") < log.index("STEP LINE")
