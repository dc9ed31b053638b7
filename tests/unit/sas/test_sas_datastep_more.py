"""More DATA step statements: output data set options, attributes kept in the Parquet metadata, POINT=,
multi-level BY, DO OVER, multi-dimensional arrays, GOTO, CALL routines, SELECT without OTHERWISE, ABORT,
DATA _NULL_ with PUT. Expected values by hand from the SAS 9.4 Statements reference."""
from __future__ import annotations

import json

import pyarrow.parquet as pq

from tests.unit.sas.standins import rows, run_sas


def run(session, text):
    """(exit code, log) of a program of DATA steps (no PROCs)."""
    code, log, _ = run_sas(session, text, procs={}, header=False)
    return code, log


table = rows


def test_output_options_attributes_and_metadata(session):
    code, log = run(session, """data a(keep=id amount rename=(amount=amt) label='Sales') b(drop=id);
  attrib amount length=8 format=comma10.2 label='Amount';
  length region $ 3;
  format when date9.;
  label id = 'Identifier';
  retain region 'eastern';
  do id = 1 to 2;
    amount = id * 1000.5;
    when = '01jan2020'd + id;
    output;
  end;
  rename when = day;
run;""")
    assert code == 0, log
    assert table(session, "work.a") == [{"id": 1.0, "amt": 1000.5}, {"id": 2.0, "amt": 2001.0}]
    assert table(session, "work.b") == [{"amount": 1000.5, "region": "eas", "day": 21916.0},
                                        {"amount": 2001.0, "region": "eas", "day": 21917.0}]
    meta = pq.read_schema(session.ref("work.a").path).metadata
    cols = json.loads(meta[b"statgrid.columns"])
    assert cols["amt"]["format"] == "COMMA10.2" and cols["amt"]["label"] == "Amount"
    assert cols["id"]["label"] == "Identifier" and meta[b"statgrid.label"] == b"Sales"
    bcols = json.loads(pq.read_schema(session.ref("work.b").path).metadata[b"statgrid.columns"])
    assert bcols["day"]["format"] == "DATE9." and bcols["region"]["length"] == 3


def test_point_multilevel_by_do_over_and_2d_arrays(session):
    session.execute(f"COPY (SELECT * FROM (VALUES (1, 1, 5.0), (1, 2, 6.0), (1, 2, 7.0), (2, 1, 8.0)) t(a, b, x)) "
                    f"TO '{session.ref('work.g').path}' (FORMAT parquet)")
    code, log = run(session, """data firsts;
  set g;
  by a b;
  fa = first.a; la = last.a; fb = first.b; lb = last.b;
run;
data picked;
  do p = 3, 1;
    set g point=p nobs=total;
    n = total;
    output;
  end;
  stop;
run;
data grid;
  array m{2, 3} m1-m6;
  do i = 1 to 2; do j = 1 to 3; m{i, j} = i * 10 + j; end; end;
  array w x1 x2 x3;
  do over w; w = _i_ * 2; end;
  drop i j;
run;""")
    assert code == 0, log
    rows = table(session, "work.firsts")
    assert [(r["fa"], r["la"], r["fb"], r["lb"]) for r in rows] == [
        (1.0, 0.0, 1.0, 1.0), (0.0, 0.0, 1.0, 0.0), (0.0, 1.0, 0.0, 1.0), (1.0, 1.0, 1.0, 1.0)]
    assert [(r["x"], r["n"]) for r in table(session, "work.picked")] == [(7.0, 4.0), (5.0, 4.0)]
    assert table(session, "work.grid") == [{"m1": 11.0, "m2": 12.0, "m3": 13.0, "m4": 21.0, "m5": 22.0,
                                            "m6": 23.0, "x1": 2.0, "x2": 4.0, "x3": 6.0}]


def test_goto_call_missing_select_error_and_null_put(session):
    code, log = run(session, """data h;
  x = 1; y = 2;
  if x = 1 then goto skip;
  y = 99;
  skip: call missing(x);
run;
data _null_;
  length s $ 4;
  s = 'hi';
  put 'value: ' s @20 'n=' _n_;
  put s= $quote6.;
run;""")
    assert code == 0, log
    assert table(session, "work.h") == [{"x": None, "y": 2.0}]
    assert "value: hi" in log and "n=1" in log
    code, log = run(session, "data s; x = 5; select; when (x = 1) y = 1; end; run;")
    assert code == 1 and "Unsatisfied WHEN clause and no OTHERWISE clause" in log
    code, log = run(session, "data s; x = 5; if x > 1 then abort; run;")
    assert code == 1 and "ABORT statement" in log


def test_merge_without_by_one_to_one(session):
    for name, sql in (("l", "SELECT * FROM (VALUES (1), (2), (3)) t(a)"),
                      ("r", "SELECT * FROM (VALUES ('x'), ('y')) t(b)")):
        session.execute(f"COPY ({sql}) TO '{session.ref('work.' + name).path}' (FORMAT parquet)")
    code, log = run(session, "data m; merge l r; run;")
    assert code == 0, log
    assert table(session, "work.m") == [{"a": 1.0, "b": "x"}, {"a": 2.0, "b": "y"}, {"a": 3.0, "b": ""}]


def test_input_pointer_controls_and_holds(session):
    code, log = run(session, """data pairs;
  input k v @@;
datalines;
1 10 2 20
3 30
;
data typed;
  input type $ 1 @;
  if type = 'A' then input @3 amount 5.;
  else input @3 code $3.;
datalines;
A 12.50
B xyz
;
run;""")
    assert code == 0, log
    assert table(session, "work.pairs") == [{"k": 1.0, "v": 10.0}, {"k": 2.0, "v": 20.0}, {"k": 3.0, "v": 30.0}]
    assert table(session, "work.typed") == [{"type": "A", "amount": 12.5, "code": ""},
                                            {"type": "B", "amount": None, "code": "xyz"}]


def test_retain_initial_values_and_rewrite_in_place(session):
    code, log = run(session, """data r;
  retain m1-m3 1 y 0 a b ('p' 'q') c;
  m2 = m2 + 1;
run;
data r; set r; m3 = 7; run;""")
    assert code == 0, log
    assert table(session, "work.r") == [{"m1": 1.0, "m2": 2.0, "m3": 7.0, "y": 0.0, "a": "p", "b": "q", "c": None}]


def test_char_do_values_continue_and_until(session):
    code, log = run(session, """data d;
  length s $ 3 all $ 12;
  do s = 'ab', 'cde';
    all = cats(all, s);
  end;
  n = 0; odd = 0;
  do i = 1 to 6;
    if mod(i, 2) = 0 then continue;
    odd + i;
  end;
  do until (n >= 3); n + 1; end;
  drop i;
run;""")
    assert code == 0, log
    assert table(session, "work.d") == [{"s": "cde", "all": "abcde", "n": 3.0, "odd": 9.0}]


def test_infile_fileref_of_two_files_with_end_and_firstobs(session, tmp_path):
    (tmp_path / "a.txt").write_text("head\n1\n2\n")
    (tmp_path / "b.txt").write_text("3\n")
    code, log = run(session, f"""filename both ("{tmp_path / 'a.txt'}" "{tmp_path / 'b.txt'}");
data t;
  infile both firstobs=2 end=last;
  input x;
  final = last;
run;""")
    assert code == 0, log
    assert table(session, "work.t") == [{"x": 1.0, "final": 0.0}, {"x": 2.0, "final": 0.0},
                                        {"x": 3.0, "final": 1.0}]


def test_where_beyond_sql_is_evaluated_by_the_step(session):
    session.execute(f"COPY (SELECT * FROM (VALUES ('a b', 1.0), ('c d', 2.0), ('a x', 3.0)) t(s, x)) "
                    f"TO '{session.ref('work.w').path}' (FORMAT parquet)")
    code, log = run(session, """data ww;
  set w;
  where scan(s, 1, ' ') = 'a' and x > 1;
  n = _n_;
run;""")
    assert code == 0, log
    assert table(session, "work.ww") == [{"s": "a x", "x": 3.0, "n": 1.0}]
