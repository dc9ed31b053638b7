"""SAS expression semantics inside the DATA step (SAS 9.4 Language Reference: Concepts, "Expressions",
"Missing Values", "Automatic Numeric-Character Conversion"); each expected value worked out by hand from
those rules."""
from __future__ import annotations

import io

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


def one_row(session, body):
    out = io.StringIO()
    log = SasLog(SessionLog(text=out, jsonl=io.StringIO(), listing=io.StringIO()))
    code = run_program(f"data r;\n{body}\nrun;", session, log, procs={}, header=False)
    assert code == 0, out.getvalue()
    rows = session.fetch_arrow("SELECT * FROM " + session.ref("work.r").scan_sql()).to_pylist()
    assert len(rows) == 1
    return rows[0], out.getvalue()


def test_missing_order_and_arithmetic(session):
    r, log = one_row(session, """
  m = .; a = .A; z = ._;
  lt0 = (m < -1e300); alt = (a > m); zlt = (z < m); eqm = (m = .);
  p = m + 1; q = 2 ** -1; bad = (-8) ** (1/3);
  mx = m <> 3; mn = m >< 3;
  b = (3 > 1) + 1;
  tot = 5; tot + m; tot + 2;
""")
    assert (r["lt0"], r["alt"], r["zlt"], r["eqm"]) == (1.0, 1.0, 1.0, 1.0)
    assert r["a"] is None and r["p"] is None and r["q"] == 0.5 and r["bad"] is None
    assert (r["mx"], r["mn"]) == (3.0, None)
    assert r["b"] == 2.0 and r["tot"] == 7.0
    assert "Missing values were generated" in log and "Mathematical operations could not be performed" in log


def test_character_rules(session):
    r, log = one_row(session, """
  length s $ 5 t $ 12;
  s = 'ab';
  same = (s = 'ab   ');
  cat = s || '|';
  pre = (s =: 'a'); pre2 = ('abc' =: s);
  inl = (s in ('x', 'ab'));
  lt = ('a' < 'b');
  t = 42;
  length n 8;
  n = ' 12 ';
  x = 'abcdefgh';
  short = substr(x, 3, 2);
""")
    assert r["s"] == "ab" and r["same"] == 1.0 and r["cat"] == "ab   |"
    assert r["pre"] == 1.0 and r["pre2"] == 0.0 and r["inl"] == 1.0 and r["lt"] == 1.0
    assert r["t"] == "          42"                       # BEST12., right-aligned
    assert r["n"] == 12.0 and r["x"] == "abcdefgh" and r["short"] == "cd"
    assert "Numeric values have been converted to character values" in log
    assert "Character values have been converted to numeric values" in log


def test_functions_of_lists_and_in_ranges(session):
    r, _ = one_row(session, """
  array v{4} v1-v4 (1 . 3 4);
  s = sum(of v1-v4);
  s2 = sum(of v{*});
  n = n(of v1-v4);
  mx = max(v1, v3, .);
  k = 3;
  inr = (k in (1:3));
  outr = (k not in (4:9));
  w = 'Hello';
  up = upcase(w);
  c = cats('a', ' b ', 1);
  d = '15mar2020'd;
  yr = year(d);
  ds = put(d, date9.);
""")
    assert (r["s"], r["s2"], r["n"], r["mx"]) == (8.0, 8.0, 3.0, 3.0)
    assert (r["inr"], r["outr"]) == (1.0, 1.0)
    assert r["up"] == "HELLO" and r["c"] == "ab1" and r["yr"] == 2020.0 and r["ds"] == "15MAR2020"
