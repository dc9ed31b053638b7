"""The DATA step's text engine (statgrid/sas/datastep/textplan/): a step that only reads a fixed-width file with
INFILE and column or formatted INPUT runs as one DuckDB query. Each program runs twice in one session, under
DSENGINE=PYTHON (the row-by-row engine: the independent reference) and DSENGINE=SQL (or AUTO), and the two
must agree to the bit — rows, order, values, the Parquet schema with its metadata — and in the whole log but
the timing lines; the engine that ran the step is read from program.extras["datastep_engines"]. Files the
engine must leave to Python (invalid data, FLOWOVER, carriage returns …) are checked to run in Python with the
same result. A few values are also written by hand, and one large file is checked against DuckDB directly."""
from __future__ import annotations

import itertools
import math
import re

import pytest

from statgrid.sas.datastep import textplan
from tests.unit.sas.standins import engines_agree, run_under_engine

_TIMING = re.compile(r"used \(Total process time\)|^\s+(real|cpu) time\s")


run = run_under_engine


def log_body(log: str) -> list[str]:
    """The log without its first line (the OPTIONS statement naming the engine) and the timing lines."""
    return [x for x in log.split("\n")[1:] if not _TIMING.search(x)]


def both(session, text: str, want: str = "SQL", engine: str = "SQL", out: str = "work.out"):
    """Run `text` under PYTHON, then under `engine`; assert the results agree and that `engine`'s run used
    `want`; return the output table (pyarrow) and that run's log."""
    return engines_agree(session, text, engine, want, out, textplan, log_body)


@pytest.fixture
def textfile(tmp_path):
    """write(name, data) → the path of a file holding `data` (str: UTF-8; bytes as they are)."""
    def write(name: str, data) -> str:
        p = tmp_path / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        return str(p)
    return write


# id 1-5, name 7-13, amt 14-19, k 20-24
ROWS = ["00001 Alice   12.5    7",
        "00002   Bob   -3e2    .",
        "00003 .          .   -0",
        "00004 Carl  1  1234+8.25",
        "00005          ",
        ""]


# -- what the engine takes ---------------------------------------------------------------------------------------
def test_column_input_numbers_text_and_implied_decimals(session, textfile):
    path = textfile("a.txt", "\n".join(ROWS) + "\n")
    table, log = both(session, f"""
data out;
  infile '{path}' truncover;
  input id 1-5 name $ 7-13 amt 14-19 .2 k 20-24;
  format amt 8.2;
  label k = 'Kay';
run;""")
    rows = table.to_pylist()
    # by hand: 12.5 has a point (no implied decimals), 1234 has none (12.34); '.' and blanks are missing;
    # `name $ 7-13` drops leading blanks and reads a lone '.' as blank
    assert [r["amt"] for r in rows] == [12.5, -300.0, None, 12.34, None, None]
    assert [r["name"] for r in rows] == ["Alice", "Bob", "", "Carl  1", "", ""]
    assert [r["k"] for r in rows][:4] == [7.0, None, -0.0, 8.25] and math.copysign(1, rows[2]["k"]) == -1
    assert "NOTE: 6 records were read from the infile" in log and "The minimum record length was 0." in log


def test_formatted_input_with_pointers_and_informats(session, textfile):
    path = textfile("f.txt", "\n".join(["A1234  xy  1.5e2 0042 tail", "B9     .     77  -1   t", "C0001  ab  12345 1234"]))
    table, _ = both(session, f"""
data out;
  infile '{path}' missover;
  input @1 code $1. id 4. +2 tag $CHAR4. @11 big best6. @18 d 4.2 @23 t $4.;
run;""")
    rows = table.to_pylist()
    assert [r["tag"] for r in rows] == ["xy", ".", "ab"]          # $CHAR. keeps the '.' ($w. would blank it)
    assert [r["d"] for r in rows] == [0.42, -0.01, 12.34]          # 4.2: implied decimal places
    assert [r["t"] for r in rows] == ["tail", "", ""]              # MISSOVER: a field the line ends in is blank
    assert [r["big"] for r in rows] == [150.0, 77.0, 12345.0]


@pytest.mark.parametrize("options, want", [
    ("truncover", "SQL"), ("missover", "SQL"), ("lrecl=12 pad", "SQL"), ("lrecl=12 pad missover", "SQL"),
    ("pad", "PYTHON"),          # no LRECL: nothing to pad to, the short records flow over
    ("", "PYTHON"),             # FLOWOVER: SAS goes on in the next record; the Python engine is the reference
])
def test_short_records(session, textfile, options, want):
    path = textfile("s.txt", "1234567890\n12\n12345\n\n123456789012345\n")
    both(session, f"""
data out;
  infile '{path}' {options};
  input a 1-3 b 4-6 c $ 7-10 d 11-12;
run;""", want=want)


def test_lrecl_firstobs_obs_and_a_fileref(session, textfile):
    path = textfile("l.txt", "".join(f"{i:04d}{'x' * (i % 7)}\n" for i in range(1, 40)))
    _, log = both(session, f"""
filename src '{path}';
data out;
  infile src lrecl=6 firstobs=5 obs=20 truncover;
  input n 1-4 tail $ 5-9;
run;""")
    assert "NOTE: 16 records were read from the infile SRC." in log
    assert "The maximum record length was 6." in log


def test_attributes_keep_drop_rename_length_informat(session, textfile):
    path = textfile("k.txt", "\n".join(f"{i:03d} name{i:<6d}{i * 125:>7d}  Q" for i in range(30)))
    table, _ = both(session, f"""
data out(rename=(v=value));
  length name $ 6 unused 8 blank $ 3;
  infile '{path}' truncover;
  informat v 7.2;
  input id 1-3 name $ 5-14 v 15-21 flag $ 24 skip 1-2;
  attrib v label='Value' format=comma10.2;
  keep id name v flag unused blank;
  drop flag;
run;""")
    rows = table.to_pylist()
    assert rows[3] == {"id": 3.0, "name": "name3", "unused": None, "blank": "", "value": 3.75}


def test_special_missing_values(session, textfile):
    path = textfile("m.txt", "  .A\n ._ \n   R\n  .r\n   .\n  12\n")
    table, _ = both(session, f"""
data out;
  missing R;
  infile '{path}' truncover;
  input x 1-4;
run;""")
    assert table.column("x").to_pylist() == [None] * 5 + [12.0]


def test_utf8_text_counts_characters(session, textfile):
    path = textfile("u.txt", "ÄÖÜ 12 héllo\n😀ab 34 wörld\n")
    table, log = both(session, f"""
data out;
  infile '{path}' truncover;
  input pre $ 1-3 n 5-6 word $ 8-12;
run;""")
    assert table.column("word").to_pylist() == ["héllo", "wörld"]
    assert "The maximum record length was 12." in log


def test_fields_across_the_pieces_of_a_long_record(session, textfile):
    """The engine cuts a record into pieces of fieldsql.CHUNK_CHARS characters: fields across their edges,
    in multibyte text and in records that end inside them, read as the Python engine reads them."""
    line = "".join(chr(0x41 + i % 26) if i % 7 else "é" for i in range(150))
    line = line[:61] + " 42.5 " + line[67:]
    rows = [line, line[:66], line[:130], "1" * 140, "", " " * 61 + "-1.5"]
    path = textfile("p.txt", "\n".join(rows) + "\n")
    table, _ = both(session, f"""
data out;
  infile '{path}' truncover;
  input a $ 60-70 b $char9. c $ 120-135 n 62-67 @138 d $CHAR3.;
run;""")
    assert table.column("a").to_pylist()[:3] == [line[59:70], line[59:66], line[59:70]]
    assert table.column("c").to_pylist()[:3] == [line[119:135], "", line[119:130]]
    assert table.column("n").to_pylist() == [42.5, 42.5, 42.5, 111111.0, None, -1.5]


def test_empty_file_and_empty_records(session, textfile):
    both(session, f"data out; infile '{textfile('e.txt', '')}' truncover; input a 1-3 b $ 4-6; run;")
    table, _ = both(session, f"data out; infile '{textfile('e2.txt', chr(10) * 3)}' truncover; input a 1-3 b $ 4-6; run;")
    assert table.num_rows == 3


# -- what it leaves to the Python engine -------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["12a", "+-1", "1_0", "1e999", "nan", "inf", "1,5", "٣"])
def test_invalid_numbers_go_to_python(session, textfile, value):
    path = textfile("i.txt", f"1 {value:<5}x\n2 7    y\n")
    _, log = both(session, f"data out; infile '{path}' truncover; input id 1 v 3-7 .1 c $ 8; run;", want="PYTHON")
    # every one is invalid data for SAS's standard numeric input (a non-ASCII digit too); the SQL engine leaves
    # them to the Python engine, which says so
    assert "Invalid data for v in line 1 3-7." in log


@pytest.mark.parametrize("data", [b"12 a\r\n34 b\r\n", b"12 a\n3\x1f4 b\n", b"\xef\xbb\xbf12 a\n34 b\n",
                                  b"12 \xe9\n34 b\n"])
def test_files_duckdb_would_read_otherwise_go_to_python(session, textfile, data):
    path = textfile("r.txt", data)
    both(session, f"data out; infile '{path}' truncover; input n 1-2 c $ 4-5; run;", want="PYTHON")


@pytest.mark.parametrize("body", [
    "input n 1-2 c $ 4-5; m = n * 2;",              # an assignment
    "input n c $;",                                  # list input
    "input n 1-2 @4 c $ 2. / m 1-2;",               # a second record
    "input n 1-2 d date9.;",                         # a date informat
])
def test_other_steps_are_left_to_the_other_engines(session, textfile, body):
    path = textfile("o.txt", "12 ab 01JAN2020\n34 cd 02FEB2021\n56 ef 03MAR2022\n")
    both(session, f"data out; infile '{path}' truncover; {body} run;", want="PYTHON")


# -- numbers: the SQL reading against the Python engine's, string by string --------------------------------------
def _corpus() -> list[str]:
    alphabet = "019.eE+-_d "
    out = ["".join(p) for n in range(1, 4) for p in itertools.product(alphabet, repeat=n)]
    out += ["1.5e300", "-2.5E-310", "123456789012345678901234567890", "0.1", "  -.5", "+7.", "1e+05", "1d5", ".A",
            "._", ".z", "\t5", "5\t", "١٢", "INF", "NaN", "0x10"]
    return [s for s in out if "\n" not in s]


@pytest.mark.parametrize("informat", ["", " .2"])
def test_every_number_the_sql_reads_is_the_python_engines(session, textfile, informat):
    """Each string of the corpus in a record of its own: the Python engine reads the file (its value and
    _ERROR_ per record); the SQL expression of the field (fieldsql.py) must give the same value, bit for bit,
    wherever it takes the string — and it must not take any the Python engine finds invalid."""
    from statgrid.sas.datastep.textplan import fieldsql
    from statgrid.sas.datastep.textplan.plan import Field

    strings = _corpus()
    path = textfile("n.txt", "\n".join(s.ljust(32) for s in strings) + "\n")
    code, log, _ = run(session, f"data ref; infile '{path}' truncover; input x 1-32{informat}; err = _error_; run;",
                       "PYTHON")
    assert code == 0, log[-2000:]
    ref = session.fetch_arrow("SELECT x, err FROM " + session.ref("work.ref").scan_sql()).to_pylist()
    f = Field("X", 1, 32, "number" if informat else "plain", cut_chars=32 if informat else None,
              decimals=2 if informat else 0)
    expr = fieldsql.value_sql(f, False, frozenset())
    assert fieldsql._INVALID in expr
    expr = expr.replace(fieldsql._INVALID, "'nan'::DOUBLE")        # NaN: refused (no value read is NaN)
    pieces = ", ".join(fieldsql.chunks_sql("__line", 32))
    got = session.con.execute(f"SELECT {expr} FROM (SELECT {pieces} FROM (SELECT unnest(?) AS __line))",
                              [[s.ljust(32) for s in strings]]).fetchall()
    taken = 0
    for s, (value,), r in zip(strings, got, ref):
        if value is not None and math.isnan(value):
            continue
        taken += 1
        assert r["err"] == 0, (s, value)
        assert (value is None) == (r["x"] is None), (s, value, r)
        if value is not None:
            assert value == r["x"] and math.copysign(1, value) == math.copysign(1, r["x"]), (s, value, r)
    assert taken > len(strings) // 10
    common = ["1", "-3.5", "+.5", "1e5", "9.", ".", " ", "-0", "10E-1"]
    refused = [s for s, (value,) in zip(strings, got) if value is not None and math.isnan(value)]
    assert not set(common) & set(refused)


# -- the benchmark files -----------------------------------------------------------------------------------------
def _layout_program(path: str, layout, lrecl: int) -> str:
    fields = " ".join(f"{n} {'$ ' if t == '$' else ''}{a}-{b}" for n, a, b, t in layout)
    return f"data out;\n  infile '{path}' lrecl={lrecl} truncover;\n  input {fields};\nrun;"


@pytest.mark.parametrize("name, lrecl", [("household", 549), ("person", 622), ("customer_dim", 2000)])
def test_datagen_layouts_through_auto(session, name, lrecl):
    from statgrid.bench import datagen

    session.libname("gen", session.ref("work.x").path.parent)
    datagen.generate(session, name, 1e-9, 7, library="gen")
    path = str(datagen.file_of(session.ref("work.x").path.parent, name))
    table, _ = both(session, _layout_program(path, datagen.layout(name), lrecl), engine="AUTO")
    assert table.num_rows == datagen.rows_for(datagen.SPECS[name], 1e-9)


def test_a_large_file_through_auto_against_duckdb(session, tmp_path):
    n = 60_000
    path = tmp_path / "big.txt"
    session.execute(f"""COPY (SELECT lpad(i::VARCHAR, 8, '0') || lpad(printf('%.2f', (hash(i) % 100000) / 100.0), 10, ' ')
                                     || rpad('c' || (i % 13)::VARCHAR, 4, ' ') || CASE WHEN i % 50 = 0 THEN '' ELSE
                                     lpad((i % 977)::VARCHAR, 5, ' ') END AS line FROM range({n}) t(i))
                        TO '{path}' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\x1f')""")
    table, log = both(session, f"""
data out;
  infile '{path}' truncover;
  input id 1-8 amt 9-18 cat $ 19-22 k 23-27;
run;""", engine="AUTO")
    got = table.to_pylist()
    assert len(got) == n and f"NOTE: {n} records were read" in log
    want = session.execute(f"SELECT sum(i), sum((hash(i) % 100000) / 100.0), count(*) FILTER (WHERE i % 50 = 0) "
                           f"FROM range({n}) t(i)").fetchone()
    assert sum(r["id"] for r in got) == want[0]
    assert math.isclose(sum(r["amt"] for r in got), float(want[1]), rel_tol=1e-12)
    assert sum(r["k"] is None for r in got) == want[2]
