"""The DATA step over real Parquet in a statgrid session, through the SAS program driver: the PDV, the
implicit loop and OUTPUT, RETAIN and sum, arrays, DO loops, SELECT, SET/MERGE/BY, WHERE, INPUT/PUT, the
NOTEs. Expected data sets are computed by hand from SAS's documented rules or by DuckDB over the inputs."""
from __future__ import annotations

from tests.unit.sas.standins import rows, run_sas


def run(session, text):
    """(exit code, log) of a program of DATA steps (no PROCs)."""
    code, log, _ = run_sas(session, text, procs={}, header=False)
    return code, log


table = rows


def col(session, name, column):
    return [r[column] for r in table(session, name)]


def test_implicit_loop_output_and_do(session):
    code, log = run(session, """
data a;
  do i = 1 to 5;
    x = i * 2;
    name = 'n' || put(i, 1.);
    if i ne 3 then output;
  end;
run;
""")
    assert code == 0, log
    assert table(session, "work.a") == [{"i": float(i), "x": 2.0 * i, "name": f"n{i}"} for i in (1, 2, 4, 5)]
    assert "NOTE: The data set WORK.A has 4 observations and 3 variables." in log


def test_set_retain_sum_by_first_last_and_notes(session):
    session.execute(f"COPY (SELECT * FROM (VALUES (1, 10.0), (1, 20.0), (2, NULL), (3, 5.0), (3, 1.0)) t(g, x)) "
                    f"TO '{session.ref('work.src').path}' (FORMAT parquet)")
    code, log = run(session, """
data b;
  set src;
  by g;
  if first.g then tot = 0;
  tot + x;
  retain cnt 0;
  cnt = cnt + 1;
  y = g / (g - 2);
  m = x + 1;
  if last.g then output;
run;
""")
    assert code == 0, log
    assert table(session, "work.b") == [
        {"g": 1.0, "x": 20.0, "tot": 30.0, "cnt": 2.0, "y": -1.0, "m": 21.0},
        {"g": 2.0, "x": None, "tot": 0.0, "cnt": 3.0, "y": None, "m": None},
        {"g": 3.0, "x": 1.0, "tot": 6.0, "cnt": 5.0, "y": 3.0, "m": 2.0}]
    assert "NOTE: There were 5 observations read from the data set WORK.SRC." in log
    assert "NOTE: Division by zero detected at line 9 column 9." in log
    assert "Missing values were generated as a result of performing an operation on missing values." in log
    assert "1 at 10:9" in log and "9:9" not in log.split("Missing values")[1]


def test_by_not_sorted_is_an_error(session):
    session.execute(f"COPY (SELECT * FROM (VALUES (2), (1)) t(g)) TO '{session.ref('work.uns').path}' (FORMAT parquet)")
    code, log = run(session, "data c; set uns; by g; run;")
    assert code == 1 and "BY variables are not properly sorted on data set WORK.UNS" in log
    # SAS keeps what the step wrote before the row at fault (none: the look-ahead of _N_=1 met it), and says
    # how many rows it had read: the first and the one looked ahead at
    assert session.fetch_arrow("SELECT * FROM " + session.ref("work.c").scan_sql()).num_rows == 0
    assert "There were 2 observations read from the data set WORK.UNS." in log
    assert "The data set WORK.C may be incomplete." in log
    code, log = run(session, "data c; set uns; by descending g; run;")
    assert code == 0, log


def test_merge_by_in_and_many_to_one(session):
    for name, sql in (("l", "SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (2, 'c'), (4, 'd')) t(id, s)"),
                      ("r", "SELECT * FROM (VALUES (1, 100.0), (2, 200.0), (3, 300.0)) t(id, v)")):
        session.execute(f"COPY ({sql}) TO '{session.ref('work.' + name).path}' (FORMAT parquet)")
    code, log = run(session, """
data m;
  merge l(in=inl) r(in=inr);
  by id;
  both = inl and inr;
run;
""")
    assert code == 0, log
    assert table(session, "work.m") == [
        {"id": 1.0, "s": "a", "v": 100.0, "both": 1.0},
        {"id": 2.0, "s": "b", "v": 200.0, "both": 1.0},
        {"id": 2.0, "s": "c", "v": 200.0, "both": 1.0},       # many-to-one: the one side's value is retained
        {"id": 3.0, "s": "", "v": 300.0, "both": 0.0},
        {"id": 4.0, "s": "d", "v": None, "both": 0.0}]


def test_concatenate_interleave_end_nobs(session):
    for name, vals in (("p", "(1), (3)"), ("q", "(2), (4)")):
        session.execute(f"COPY (SELECT * FROM (VALUES {vals}) t(k)) TO '{session.ref('work.' + name).path}' "
                        "(FORMAT parquet)")
    code, log = run(session, """
data cat; set p q end=eof nobs=n; last = eof; total = n; run;
data il; set p(in=a) q; by k; froma = a; run;
""")
    assert code == 0, log
    assert col(session, "work.cat", "k") == [1.0, 3.0, 2.0, 4.0]
    assert col(session, "work.cat", "last") == [0.0, 0.0, 0.0, 1.0]
    assert col(session, "work.cat", "total") == [4.0] * 4
    assert col(session, "work.il", "k") == [1.0, 2.0, 3.0, 4.0]
    assert col(session, "work.il", "froma") == [1.0, 0.0, 1.0, 0.0]


def test_arrays_select_loops_and_lengths(session):
    code, log = run(session, """
data arr;
  length grade $ 6;
  array v{3} v1-v3 (1 2 3);
  array t{2} _temporary_ (10 20);
  array c{*} $ 2 c1 c2;
  do i = 1 to dim(v);
    v{i} = v{i} * t{1 + (i > 1)};
  end;
  c[1] = 'xyz'; c(2) = 'q';
  n = 0;
  do while (n < 3); n + 1; end;
  k = 0;
  do until (k >= 5); k = k + 2; if k = 4 then leave; end;
  select (n);
    when (1, 2) grade = 'low';
    when (3) grade = 'exact';
    otherwise grade = 'high';
  end;
  s = 0;
  do j = 1, 3, 5; s = s + j; end;
  keep grade v1-v3 c1 c2 n k s;
run;
""")
    assert code == 0, log
    assert table(session, "work.arr") == [{"grade": "exact", "v1": 10.0, "v2": 40.0, "v3": 60.0, "c1": "xy",
                                           "c2": "q", "n": 3.0, "k": 4.0, "s": 9.0}]


def test_where_delete_stop_and_output_to_several(session):
    session.execute(f"COPY (SELECT range::DOUBLE AS x FROM range(10)) TO '{session.ref('work.nums').path}' "
                    "(FORMAT parquet)")
    code, log = run(session, """
data even odd;
  set nums;
  where x < 8;
  if x = 0 then delete;
  if mod(x, 2) = 0 then output even;
  else output odd;
  if x >= 6 then stop;
run;
""")
    assert code == 0, log
    assert col(session, "work.even", "x") == [2.0, 4.0, 6.0]
    assert col(session, "work.odd", "x") == [1.0, 3.0, 5.0]


def test_input_datalines_and_put(session):
    code, log = run(session, """
data people;
  input name $ age height 10-12 @14 born date9.;
  bmi = round(age / 2, 0.1);
  put name= age= born= date9.;
datalines;
ann 31   170 01JAN2000
bob .    180 15MAR1990
cy  x    150 01JAN1960
;
run;
""")
    assert table(session, "work.people") == [
        {"name": "ann", "age": 31.0, "height": 170.0, "born": 14610.0, "bmi": 15.5},
        {"name": "bob", "age": None, "height": 180.0, "born": 11031.0, "bmi": None},
        {"name": "cy", "age": None, "height": 150.0, "born": 0.0, "bmi": None}]
    assert "name=ann age=31 born=01JAN2000" in log
    assert "NOTE: Invalid data for age in line 9 5-5." in log and "_ERROR_=1" in log


def test_retain_lag_substr_left_goto_link(session):
    code, log = run(session, """
data g;
  do i = 1 to 4;
    prev = lag(i);
    d = dif(i);
    s = 'abcdef';
    substr(s, 2, 2) = 'XY';
    link double;
    output;
  end;
  stop;
  double: dbl = i * 2;
  return;
run;
""")
    assert code == 0, log
    rows = table(session, "work.g")
    assert [r["prev"] for r in rows] == [None, 1.0, 2.0, 3.0]
    assert [r["d"] for r in rows] == [None, 1.0, 1.0, 1.0]
    assert rows[0]["s"] == "aXYdef" and [r["dbl"] for r in rows] == [2.0, 4.0, 6.0, 8.0]


def test_runaway_loop_is_stopped(session, monkeypatch):
    from statgrid.sas.datastep import runtime
    monkeypatch.setattr(runtime, "LOOP_CAP", 1000)
    code, log = run(session, """data _null_;
  x = 1;
  do while (x > 0); x = x + 1; end;
run;""")
    assert code == 1 and "A DO loop at line 3 column 3 ran more than 1000 iterations" in log
    code, log = run(session, "data _null_; do i = 1 to 10; i = 1; end; run;")
    assert code == 1 and "ran more than 1000 iterations" in log


def test_compile_errors_name_the_place(session):
    code, log = run(session, "data e; x = 1; y = 'a'; x = y z; run;")
    assert code == 1 and "line 1" in log
    code, log = run(session, "data e; length s $ 3; s = 1; s = 'abcdef'; run;")
    assert code == 0 and col(session, "work.e", "s") == ["abc"]
    code, log = run(session, "data e; x = nofunc(1); run;")
    assert code == 1 and "The function NOFUNC is unknown" in log


def test_hash_object_lookup_and_output(session):
    session.execute(f"COPY (SELECT * FROM (VALUES (1, 'one'), (2, 'two')) t(k, label)) "
                    f"TO '{session.ref('work.lookup').path}' (FORMAT parquet)")
    session.execute(f"COPY (SELECT * FROM (VALUES (2), (3), (1)) t(k)) TO '{session.ref('work.facts').path}' "
                    "(FORMAT parquet)")
    code, log = run(session, """
data joined;
  length label $ 8;        /* lookup's label is 3 long (its longest value): room for 'none' and 'nine' */
  if 0 then set lookup;
  if _n_ = 1 then do;
    declare hash h(dataset: 'lookup', ordered: 'a');
    h.definekey('k');
    h.definedata('label');
    h.definedone();
  end;
  set facts end=eof;
  rc = h.find();
  if rc ne 0 then label = 'none';
  if eof then do; k = 9; label = 'nine'; rc2 = h.add(); h.output(dataset: 'work.hout'); end;
  drop rc rc2;
run;
""")
    assert code == 0, log
    assert table(session, "work.joined") == [{"k": 2.0, "label": "two"}, {"k": 3.0, "label": "none"},
                                             {"k": 9.0, "label": "nine"}]
    assert table(session, "work.hout") == [{"k": 1.0, "label": "one"}, {"k": 2.0, "label": "two"},
                                           {"k": 9.0, "label": "nine"}]


def test_data_step_view_runs_when_read(session):
    session.execute(f"COPY (SELECT * FROM (VALUES (1.0), (2.0)) t(x)) TO '{session.ref('work.base').path}' "
                    "(FORMAT parquet)")
    code, log = run(session, """
data v / view=v; set base; y = x * 10; run;
data out; set v; z = y + 1; run;
""")
    assert code == 0, log
    assert "DATA STEP view saved on file WORK.V." in log
    assert table(session, "work.out") == [{"x": 1.0, "y": 10.0, "z": 11.0}, {"x": 2.0, "y": 20.0, "z": 21.0}]
    assert not session.ref("work.v").exists()


def test_infile_dsd_missover_and_file_output(session, tmp_path):
    src = tmp_path / "in.csv"
    src.write_text('a,1,"x, y"\nb,,z\nc,3\n')
    dst = tmp_path / "out.txt"
    code, log = run(session, f"""
data csv;
  infile '{src}' dsd missover;
  input name $ n note :$8.;
  file '{dst}';
  put name n;
run;
""")
    assert code == 0, log
    assert table(session, "work.csv") == [{"name": "a", "n": 1.0, "note": "x, y"},
                                          {"name": "b", "n": None, "note": "z"},
                                          {"name": "c", "n": 3.0, "note": ""}]
    assert dst.read_text().splitlines() == ["a 1", "b .", "c 3"]
