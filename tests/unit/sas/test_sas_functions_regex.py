"""Perl regular expressions (PRXPARSE PRXMATCH PRXCHANGE PRXPOSN PRXPAREN, CALL PRXSUBSTR PRXNEXT PRXPOSN
PRXCHANGE PRXFREE) against SAS 9.4 Functions and CALL Routines: the manual's examples (the cat/rat/bat
PRXNEXT loop, the name swap) and hand-worked matches; Perl syntax Python's re lacks; bad expressions."""
from __future__ import annotations

import pytest

from statgrid.sas.errors import SasError
from statgrid.sas.functions import CALL_ROUTINES, FUNCTIONS
from tests.unit.sas.standins import rows, run_under_engine
from tests.unit.sas.test_sas_functions_numeric import rt


def fn(r, name, *args):
    return FUNCTIONS[name].fn(r, *args)


def call(r, name, *args):
    return CALL_ROUTINES[name].fn(r, list(args))


def test_parse_ids_match_positions_and_capture_buffers():
    r = rt()
    rid = fn(r, "PRXPARSE", "/(\\d+)-(\\d+)/")
    assert rid == 1 and fn(r, "PRXPARSE", "/(\\d+)-(\\d+)/  ") == 1        # same text: same id (compiled once)
    assert fn(r, "PRXPARSE", "/x/i") == 2
    src = "tel 919-555 ok"
    assert fn(r, "PRXMATCH", rid, src) == 5
    assert fn(r, "PRXPOSN", rid, 1, src) == "919" and fn(r, "PRXPOSN", rid, 2, src) == "555"
    assert fn(r, "PRXPOSN", rid, 0, src) == "919-555" and fn(r, "PRXPAREN", rid) == 2
    assert call(r, "PRXPOSN", rid, 2, 0.0, 0.0) == [None, None, 9.0, 3.0]
    assert fn(r, "PRXMATCH", rid, "none here") == 0 and fn(r, "PRXPOSN", rid, 1, "none here") == ""
    assert fn(r, "PRXMATCH", "/X/", "abx") == 0 and fn(r, "PRXMATCH", "/X/i", "abx") == 3
    assert fn(r, "PRXMATCH", "m{a/b}", "xa/b") == 2                        # any delimiter, as in Perl
    assert call(r, "PRXSUBSTR", rid, "a 12-3", 0.0, 0.0) == [None, None, 3.0, 4.0]
    assert call(r, "PRXSUBSTR", rid, "a 12", 0.0) == [None, None, 0.0]


def test_change_times_and_replacement_forms():
    r = rt()
    assert fn(r, "PRXCHANGE", "s/(\\w+), (\\w+)/$2 $1/", -1, "Smith, John") == "John Smith"
    assert fn(r, "PRXCHANGE", "s/a/A/", -1, "banana") == "bAnAnA"
    assert fn(r, "PRXCHANGE", "s/a/A/", 2, "banana") == "bAnAna"
    assert fn(r, "PRXCHANGE", "s/a/A/", 0, "banana") == "banana"
    assert fn(r, "PRXCHANGE", "s/(\\w+)/\\U$1/", 1, "big cat") == "BIG cat"
    assert fn(r, "PRXCHANGE", "s/(b)(\\w+)/${1}_\\U$2\\E!/", -1, "big cat") == "b_IG! cat"
    assert fn(r, "PRXCHANGE", "s/\\s+/ /", -1, "a   b \t c") == "a b c"
    assert fn(r, "PRXCHANGE", "s{x}{y}", -1, "xox") == "yoy"
    assert fn(r, "PRXCHANGE", "s/\\//-/", -1, "1/2/3") == "1-2-3"            # an escaped delimiter
    assert fn(r, "PRXCHANGE", "s/c(a)t/[$&]/", -1, "a cat") == "a [cat]"


def test_perl_syntax_translated():
    r = rt()
    assert fn(r, "PRXMATCH", "/^[[:alpha:]]+[[:digit:]]$/", "abc1") == 1
    assert fn(r, "PRXMATCH", "/\\Qa.b\\E/", "aXb a.b") == 5
    assert fn(r, "PRXMATCH", "/b\\z/", "ab") == 2 and fn(r, "PRXMATCH", "/b\\z/", "ab\n") == 0
    assert fn(r, "PRXMATCH", "/b\\Z/", "ab\n") == 2
    assert fn(r, "PRXMATCH", "/(?<y>\\d\\d)-\\k<y>/", "x 12-12") == 3
    assert fn(r, "PRXMATCH", "/a\\hb/", "a\tb") == 1
    assert fn(r, "PRXMATCH", "/^b/m", "a\nb") == 3 and fn(r, "PRXMATCH", "/a.b/s", "a\nb") == 1
    assert fn(r, "PRXMATCH", "/a b # comment\n/x", "ab") == 1
    assert fn(r, "PRXMATCH", "/\\w/", "\u00e9a") == 2                        # ASCII \w, as Perl's default


def test_next_loop_free_and_call_prxchange():
    r = rt()
    rid = fn(r, "PRXPARSE", "/[crb]at/")
    text = "The woods have a bat, cat, and a rat!"
    start, found = 1.0, []
    while True:
        out = call(r, "PRXNEXT", rid, start, float(len(text)), text, 0.0, 0.0)
        if out[4] == 0:
            assert out[1] is None and out[5] == 0                            # start unchanged
            break
        found.append((out[4], out[5]))
        start = out[1]
    assert found == [(18, 3), (23, 3), (34, 3)]
    assert call(r, "PRXNEXT", rid, 1.0, 20.0, text, 0.0, 0.0)[4] == 18
    assert call(r, "PRXNEXT", rid, 1.0, 19.0, text, 0.0, 0.0)[4] == 0         # stop cuts the match
    assert call(r, "PRXNEXT", rid, 1.0, -1.0, "a bat   ", 0.0, 0.0)[1:] == [6.0, None, None, 3.0, 3.0]
    sid = fn(r, "PRXPARSE", "s/a/o/")
    # new is a $6 variable: "bonono" fits; result length 6, not cut, 3 changes
    assert call(r, "PRXCHANGE", sid, -1.0, "banana  ", "      ", 0.0, 0.0, 0.0) == [None, None, None, "bonono",
                                                                                   6.0, 0.0, 3.0]
    out = call(r, "PRXCHANGE", sid, -1.0, "banana", "    ", 0.0, 0.0, 0.0)
    assert out[3] == "bono" and out[5] == 1.0
    assert call(r, "PRXCHANGE", sid, 1.0, "banana") == [None, None, "bonana"]
    assert call(r, "PRXFREE", sid)[0] != call(r, "PRXFREE", sid)[0]        # missing (NaN) both times
    assert FUNCTIONS["PRXMATCH"].fn(r, sid, "a") != FUNCTIONS["PRXMATCH"].fn(r, sid, "a")   # freed: missing
    assert r.program.log.notes[-1].startswith("Invalid first argument to function PRXMATCH")


@pytest.mark.parametrize("text,why", [("abc", "opening delimiter"), ("/abc", 'closing delimiter "/"'),
                                      ("/a(b/", "missing ), unterminated subpattern"), ("/a/q", "'q'"),
                                      ("/[[:nope:]]/", "[:nope:]"), ("/a\\Kb/", "\\K")])
def test_bad_expressions_name_the_text(text, why):
    with pytest.raises(SasError) as e:
        fn(rt(), "PRXPARSE", text)
    assert why in str(e.value) and repr(text) in str(e.value)


def test_in_a_data_step(session):
    code, log, engines = run_under_engine(session, r"""
data work.names;
  length name $ 20 swapped $ 40 first $ 10;
  input name & $20.;
  re = prxparse('/(\w+), (\w+)/');
  if prxmatch(re, name) then first = prxposn(re, 2, name);
  swapped = prxchange('s/(\w+), (\w+)/$2 $1/', -1, name);
  call prxsubstr(re, name, pos, len);
datalines;
Smith, John
Jones
;
data work.found;
  re = prxparse('/[crb]at/');
  text = 'The woods have a bat, cat, and a rat!';
  start = 1; stop = length(text);
  call prxnext(re, start, stop, text, position, length);
  do while (position > 0);
    found = substr(text, position, length);
    output;
    call prxnext(re, start, stop, text, position, length);
  end;
  keep found position length;
run;
""", "NUMBA")
    assert code == 0, log
    assert engines == ["PYTHON", "PYTHON"]
    assert rows(session, "work.names") == [
        {"name": "Smith, John", "swapped": "John Smith", "first": "John", "re": 1.0, "pos": 1.0, "len": 11.0},
        {"name": "Jones", "swapped": "Jones", "first": "", "re": 1.0, "pos": 0.0, "len": 0.0}]
    assert rows(session, "work.found") == [{"position": 18.0, "length": 3.0, "found": "bat"},
                                           {"position": 23.0, "length": 3.0, "found": "cat"},
                                           {"position": 34.0, "length": 3.0, "found": "rat"}]
