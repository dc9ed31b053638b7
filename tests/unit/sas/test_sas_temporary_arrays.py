"""_TEMPORARY_ arrays: a large one is cheap to set up (its elements share one PDV entry's description) and one
that cannot fit in MEMSIZE is SAS's "Unable to allocate sufficient memory" ERROR — never a node out of
memory. Initial values and element independence by hand."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


def test_initial_values_and_elements_are_independent(session):
    code, log, _ = run_sas(session, """data a;
  array t{5} _temporary_ (1 2);
  array c{3} $ 4 _temporary_;
  t{4} = 40; c{2} = 'xy';
  s = sum(of t{*}); n = nmiss(of t{*}); c1 = c{1}; c2 = c{2};
run;""")
    assert code == 0, log
    r = session.fetch_arrow("SELECT * FROM " + session.ref("work.a").scan_sql()).to_pylist()[0]
    assert (r["s"], r["n"], r["c1"].strip(), r["c2"].strip()) == (43.0, 2.0, "", "xy")


def test_an_array_beyond_memsize_is_an_error_and_the_program_goes_on(session):
    code, log, _ = run_sas(session, """options nonotes; options notes;
data _null_; array t{400000000} _temporary_; t{1} = 1; run;
data b; x = 1; run;""")
    flat = " ".join(log.split())
    assert code == 1 and "Unable to allocate sufficient memory for the array T: 400,000,000 elements" in flat
    assert "NOTE: The data set WORK.B has 1 observations" in flat
