"""The hash iterator and the hash object's MULTIDATA methods (SAS 9.4 Component Objects: Hash Object, Hash
Iterator Object): FIRST/NEXT/LAST/PREV in ORDERED: order, FIND/FIND_NEXT/FIND_PREV/HAS_NEXT over a key's items,
REMOVE, REMOVEDUP, REPLACE, NUM_ITEMS, OUTPUT. Expected values by hand from the items added."""
from __future__ import annotations

from tests.unit.sas.standins import rows, run_sas


def run(session, text):
    code, log, _ = run_sas(session, text, procs={}, header=False)
    return code, log


def puts(log):
    return [ln[1:] for ln in log.splitlines() if ln.startswith(">")]


LOAD = """  length k 8 d $ 4;
  if _n_ = 1 then do;
    declare hash h(ordered: '{order}', multidata: 'y');
    h.definekey('k'); h.definedata('k', 'd'); h.definedone();
    declare hiter hi('h');
  end;
  k = 2; d = 'b'; h.add(); k = 1; d = 'a'; h.add(); k = 1; d = 'a2'; h.add(); k = .; d = 'm'; h.add();
"""


def test_iterator_walks_in_key_order_both_ways(session):
    code, log = run(session, "data _null_;\n" + LOAD.format(order="a") + """
  n = h.num_items; put '>n ' n;
  rc = hi.first(); do while (rc = 0); put '>' k d; rc = hi.next(); end;
  put '>end ' rc= k d;
  rc = hi.last(); put '>last ' k d;
  rc = hi.prev(); put '>prev ' k d;
  rc = hi.next(); rc = hi.next(); put '>after ' k d rc=;
run;
data _null_;
""" + LOAD.format(order="d") + """
  rc = hi.next(); do while (rc = 0); put '>' k d; rc = hi.next(); end;
run;""")
    assert code == 0, log
    # ascending: missing lowest; a key's items in the order ADD gave them; past the end rc ne 0, data kept
    got = puts(log)
    assert got[:6] == ["n 4", ". m", "1 a", "1 a2", "2 b"] + [got[5]]
    assert got[5].startswith("end rc=") and got[5] != "end rc=0 2 b" and got[5].endswith(" 2 b")
    assert got[6:8] == ["last 2 b", "prev 1 a2"]
    assert got[8].startswith("after 2 b rc=") and got[8] != "after 2 b rc=0"
    # descending, NEXT without FIRST starts at the first item
    assert got[9:] == ["2 b", "1 a", "1 a2", ". m"]


def test_multidata_find_next_has_next_remove_replace(session):
    code, log = run(session, "data _null_;\n" + LOAD.format(order="a") + """
  k = 1; rc = h.find(); put '>find ' rc d;
  rc = h.has_next(result: more); put '>more ' more;
  rc = h.find_next(); put '>next ' rc d;
  rc = h.has_next(result: more); put '>more ' more;
  rc = h.find_next(); put '>past ' d;
  rc = h.find_prev(); put '>prev ' rc d;
  rc = h.removedup(); n = h.num_items; put '>removedup ' rc n;
  rc = h.find(); put '>left ' d;
  k = 2; d = 'z'; rc = h.replace(); d = ''; rc = h.find(); put '>replaced ' d;
  k = 1; rc = h.remove(); n = h.num_items; rc2 = (h.check() ne 0); put '>removed ' rc n rc2;
  k = 9; rc = (h.find() ne 0); put '>missing ' rc;
  rc = h.output(dataset: 'work.left');
run;""")
    assert code == 0, log
    assert "uninitialized" not in log
    assert puts(log) == ["find 0 a", "more 1", "next 0 a2", "more 0", "past a2", "prev 0 a", "removedup 0 3",
                         "left a2", "replaced z", "removed 0 2 1", "missing 1"]
    assert rows(session, "work.left") == [{"k": None, "d": "m"}, {"k": 2.0, "d": "z"}]


def test_without_multidata_add_of_a_key_fails_and_remove_under_an_iterator_is_refused(session):
    code, log = run(session, """data _null_;
  length k 8;
  declare hash h(); h.definekey('k'); h.definedone();
  declare hiter hi('h');
  k = 1; rc1 = (h.add() = 0); rc2 = (h.add() ne 0); n = h.num_items; put '>' rc1 rc2 n;
  rc = hi.first();
  rc = h.remove();
run;
data _null_; declare hiter x('nosuch'); rc = x.first(); run;""")
    assert code == 1
    assert puts(log) == ["1 1 1"]
    assert "a hash iterator points at this key, so REMOVE cannot remove it" in log
    assert "Hash iterator X: there is no hash object NOSUCH" in log
