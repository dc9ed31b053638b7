"""The DATA step's SQL engine (statgrid/sas/datastep/sqlplan/): each program runs twice in one session,
under DSENGINE=PYTHON (the row-by-row engine: the independent reference) and DSENGINE=SQL, and the two
results must agree bit for bit — rows, order, values, the Parquet schema with its column metadata — and in
their NOTE lines; the engine that ran the step is read from program.extras["datastep_engines"]. Steps the
SQL engine must refuse are checked to run in Python with the same result. A few expectations are written
by hand as well (duplicate hash keys, missing keys)."""
from __future__ import annotations

import re

import pyarrow.parquet as pq
import pytest

from statgrid.sas.datastep import sqlplan
from tests.unit.sas.standins import engines_agree, run_under_engine


run = run_under_engine


def notes(log: str) -> list[str]:
    """The NOTE lines of the log, without the timing NOTEs (their figures differ run to run)."""
    lines = re.findall(r"^(?:NOTE|WARNING|ERROR).*$", log, re.M)
    return [x for x in lines if "used (Total process time)" not in x]


def write(session, name: str, select: str) -> None:
    session.execute(f"COPY ({select}) TO '{session.ref(name).path}' (FORMAT parquet)")


def both(session, text: str, out: str = "work.out", want: str = "SQL"):
    """Run `text` with each engine; assert the results agree and that the SQL run used `want`; return the
    output table (pyarrow) and the SQL run's log."""
    return engines_agree(session, text, "SQL", want, out, sqlplan, notes)


@pytest.fixture
def data(session):
    write(session, "work.src", """
        SELECT i::DOUBLE AS id, (i % 7)::DOUBLE AS x, (i % 3)::DOUBLE / 3 AS y, 'n' || i::VARCHAR AS name,
               CASE WHEN i % 4 = 0 THEN NULL ELSE (i * 1.5)::DOUBLE END AS holes,
               'long_value_' || i::VARCHAR AS long
        FROM range(40) t(i)""")
    write(session, "work.lk", """
        SELECT * FROM (VALUES (1.0, 10.0, 'a'), (2.0, 20.0, 'b'), (1.0, 11.0, 'c'), (NULL, 99.0, 'm'),
                              (5.0, NULL, 'e'), (-0.0, 7.0, 'z')) t(k, v, tag)""")
    return session


# -- the row-wise pattern ----------------------------------------------------------------------------------------
def test_assignments_where_subsetting_if_keep_attributes(data):
    table, log = both(data, """
data out(keep=id x y z w name);
  set src;
  where x > 1;
  z = x * 2 + y / 4 - -x;
  w = abs(y - 0.5) * 3;
  if z > 5;
  label z = 'Zed';
  format w 8.2;
run;""")
    assert table.num_rows > 0
    assert "NOTE: There were 28 observations read from the data set WORK.SRC." in log
    meta = pq.read_schema(data.ref("work.out").path).metadata[b"statgrid.columns"].decode()
    assert '"label": "Zed"' in meta and '"format": "8.2"' in meta


def test_if_then_else_delete_and_reassignment(data):
    table, _ = both(data, """
data out;
  set src(drop=holes);
  if x > 3 then w = x - 1; else w = -x;
  if x = 2 then delete;
  if y >= 0.5 and not (x in (0, 6) or x = 5) then do;
    v = w * 2;
    x = x + 100;
  end;
  else if id < 10 then v = 0;
  t = (x > 50) + (w <= 0);
run;""")
    rows = table.to_pylist()
    assert all(r["x"] != 2 for r in rows)
    assert any(r["v"] is None for r in rows)          # assigned on some paths only: missing elsewhere


def test_character_comparison_and_pass_through(data):
    both(data, """
data out(rename=(name=label2));
  set src(drop=holes);
  if name > 'n2' and name ne 'n30  ';
  k = id * 1;
run;""")


def test_character_assignments_cut_to_the_variable_length(data):
    table, _ = both(data, """
data out;
  set src(keep=id x name long);
  c = name;
  d = 'abcdefghij  ';
  if x > 3 then e = long; else e = 'zz';
  if x = 1 then f = 'q';
  if e ne 'zz' or f = 'q';
run;""")
    rows = table.to_pylist()
    # by hand: LONG's stored length is its longest value's (written without SAS metadata), E takes it from its
    # first assignment (so no value of LONG is cut), F is 1 long, D is 12 long (trailing blanks dropped)
    longest = len("long_value_39")                       # the fixture's longest LONG
    assert all(r["e"].startswith("long_value_") or r["e"] == "zz" for r in rows)
    assert any(len(r["e"]) == longest for r in rows) and max(len(r["e"]) for r in rows) == longest
    assert {r["f"] for r in rows} == {"q", ""}
    assert rows[0]["d"] == "abcdefghij"


def test_missing_values_in_a_column_not_read_are_carried(data):
    table, _ = both(data, "data out; set src; z = x + 1; run;")
    assert table.column("holes").null_count == 10


def test_empty_result_and_obs_option(data):
    both(data, "data out; set src(obs=5 firstobs=2); if x > 100; run;")


# -- refused: the Python engine runs the step, with the same result ----------------------------------------------
@pytest.mark.parametrize("text, why", [
    ("data out; set src; z = holes + 1; run;", "missing values"),
    ("data out; set src(drop=holes); z = x / y; run;", "division"),
    ("data out; set src(drop=holes); z = x / 0; run;", "division"),
    ("data out; set src(drop=holes); retain s 0; s = s + x; run;", "retained"),
    ("data out; set src(drop=holes); by x notsorted; z = x; run;", "FIRST."),
    ("data out; set src(drop=holes); if x > 1 then z = 1; w = z + 1; run;", "may be missing"),
    ("data out; set src(drop=holes); w = z + 1; z = 1; run;", "may be missing"),
    ("data out; set src(drop=holes); z = x * 1e200 * 1e200; run;", "overflow"),
    ("data out; set src(drop=holes); length c $ 3; c = name; run;", ""),
    ("data out; set src(drop=holes); c = name || 'x'; run;", "character expression"),
    ("data out; set src(drop=holes); z = _n_; run;", "_n_"),
    ("data out; set src(drop=holes); z = int(y); run;", "Call"),
    ("data out; set src(drop=holes); output; run;", "statement"),
    ("data out; x = 1; set src(drop=holes); run;", "SET"),
])
def test_refused_steps_run_in_python(data, text, why):
    both(data, text, want="PYTHON")
    assert why in sqlplan.reason


def test_refused_step_leaves_no_trace_before_python(data):
    """A refusal after the look at the data (a missing value) leaves nothing: one set of NOTEs, no temp file."""
    _, log, engines = run(data, "data out; set src; z = holes * 2; run;", "SQL")
    assert engines == ["PYTHON"]
    assert log.count("observations read from the data set WORK.SRC") == 1
    assert "Missing values were generated" in log
    assert not [p for p in data.ref("work.out").path.parent.iterdir() if p.name.endswith(".tmp")]


# -- the hash lookup ---------------------------------------------------------------------------------------------
HASH = """
data out{keep};
  if 0 then set lk;
  if _n_ = 1 then do;
    declare hash h(dataset: 'work.lk');
    h.defineKey('k');
    h.defineData('v');
    h.defineDone();
  end;
  set probe;
  {find}
run;"""


@pytest.mark.parametrize("keep, find", [
    ("", "if h.find() = 0;"),
    ("(drop=tag)", "rc = h.find(); if rc = 0;"),
    ("(drop=rc)", "rc = h.find(); if rc = 0;"),
])
def test_hash_lookup_duplicates_missing_keys_order(data, keep, find):
    write(data, "work.probe", """
        SELECT * FROM (VALUES (3.0, 1.0), (1.0, 2.0), (NULL, 3.0), (2.0, 4.0), (0.0, 5.0), (1.0, 6.0),
                              (5.0, 7.0)) t(k, id)""")
    table, log = both(data, HASH.format(keep=keep, find=find))
    got = [(r["id"], r["k"], r["v"]) for r in table.to_pylist()]
    # by hand: key 3 not in LK; key 1's first row holds 10; a missing key finds LK's missing key (99);
    # 0 finds -0 (7); key 5 finds a missing data value; B's order kept
    assert got == [(2.0, 1.0, 10.0), (3.0, None, 99.0), (4.0, 2.0, 20.0), (5.0, 0.0, 7.0), (6.0, 1.0, 10.0),
                   (7.0, 5.0, None)]
    assert notes(log)[:3] == ["NOTE: There were 6 observations read from the data set WORK.LK.",
                              "NOTE: There were 0 observations read from the data set WORK.LK.",
                              "NOTE: There were 7 observations read from the data set WORK.PROBE."]


@pytest.mark.parametrize("text, why", [
    (HASH.format(keep="", find="if h.find() = 0; z = id + 1;"), "hash-lookup pattern"),
    (HASH.format(keep="", find="if h.find() = 0;").replace("'work.lk'", "'work.lk', multidata: 'y'"), "MULTIDATA"),
    (HASH.format(keep="", find="if h.find() = 0;").replace("defineKey('k')", "defineKey('tag')"), "tag is not a numeric"),
])
def test_hash_steps_refused(data, text, why):
    write(data, "work.probe", "SELECT * FROM (VALUES (1.0, 1.0, 'a'), (2.0, 2.0, 'b')) t(k, id, tag)")
    both(data, text, want="PYTHON")
    assert why in sqlplan.reason


def test_long_chain_of_dependent_assignments(data):
    """Each assignment reading the one before: one projection layer each (nested SELECTs)."""
    chain = "\n".join(f"  a{i} = a{i - 1} * 1.5 - y;" for i in range(2, 61))
    both(data, f"data out; set src(keep=id x y); a1 = x + 1;\n{chain}\n  if a60 > 0 then b = 1; else b = 2; run;")


# -- many rows on several threads: B's order is kept (expected values by DuckDB over the input) ------------------
def test_row_order_and_counts_on_many_rows(session):
    n = 400_000
    write(session, "work.big", f"SELECT i::DOUBLE AS id, (hash(i) % 1000)::DOUBLE AS x FROM range({n}) t(i)")
    write(session, "work.lk", "SELECT i::DOUBLE AS k, (i * 3)::DOUBLE AS v FROM range(0, 1000, 2) t(i)")
    code, log, engines = run(session, """
data out; set big; where x < 900; y = x * 2 + 1; if y > 100; run;
data out2(keep=id x v);
  if 0 then set lk(rename=(k=x));
  if _n_ = 1 then do;
    declare hash h(dataset: 'work.lk(rename=(k=x))'); h.defineKey('x'); h.defineData('v'); h.defineDone();
  end;
  set big;
  if h.find() = 0;
run;""", "AUTO")
    assert code == 0, log
    assert engines == ["SQL", "SQL"], sqlplan.reason
    ref = session.ref("work.big").scan_sql()
    want = session.execute(f"SELECT count(*) FILTER (WHERE x < 900), count(*) FILTER (WHERE x < 900 AND x * 2 + 1 > 100), "
                           f"count(*) FILTER (WHERE x % 2 = 0) FROM {ref}").fetchall()[0]
    assert f"There were {want[0]} observations read from the data set WORK.BIG." in log
    assert f"The data set WORK.OUT has {want[1]} observations and 3 variables." in log
    assert f"The data set WORK.OUT2 has {want[2]} observations and 3 variables." in log
    for name in ("work.out", "work.out2"):
        t = pq.read_table(session.ref(name).path)
        ids = t.column("id").to_numpy()
        assert (ids[1:] > ids[:-1]).all(), f"{name}: rows out of the input's order"
    v = pq.read_table(session.ref("work.out2").path).to_pydict()
    assert v["v"] == [x * 3 for x in v["x"]]
