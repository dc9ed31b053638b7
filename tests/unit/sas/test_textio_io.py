"""Text I/O of the DATA step (issue 26 audit, statgrid/sas/datastep/textio.py and parse/iostmts.py) and DATA
step views (dataset.materialize_view). Expected values and log lines are written by hand from SAS 9.4's
documentation (Statements: INFILE, INPUT, PUT; Concepts: DATA step views), never from statgrid's output."""
from __future__ import annotations

import io


from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog


def run(session, text):
    out = io.StringIO()
    log = SasLog(SessionLog(text=out, jsonl=io.StringIO(), listing=io.StringIO()))
    code = run_program(text, session, log, header=False)
    return code, out.getvalue()


def table(session, name):
    return session.fetch_arrow("SELECT * FROM " + session.ref(name).scan_sql()).to_pylist()


def notes(log):
    """NOTE lines with their wrapped continuation lines joined (the log wraps at LINESIZE)."""
    out = []
    for line in log.split("\n"):
        if line.startswith("      ") and out and line.strip():
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out


# ------------------------------------------------------------------------------------------- 1: views
def test_a_view_runs_once_per_reading_step_and_its_member_is_not_logged(session):
    code, log = run(session, """
data tx; do i = 1 to 3; output; end; run;
data vw / view=vw;
  set tx;
  put 'VIEW ROW ' i=;
run;
proc print data=vw; run;
data cp; set vw; run;
proc sort data=vw out=s; by descending i; run;
""")
    assert code == 0, log
    # three reading steps: the view's step runs three times (once each), so each row is PUT three times
    assert log.count("VIEW ROW i=1") == 3, log
    assert log.count("NOTE: View WORK.VW.VIEW used.") == 3, log
    assert "_VIEW_" not in log.upper(), log
    assert log.count("NOTE: There were 3 observations read from the data set WORK.VW.") == 3, log
    assert [r["i"] for r in table(session, "work.s")] == [3.0, 2.0, 1.0]
    assert [r["i"] for r in table(session, "work.cp")] == [1.0, 2.0, 3.0]


# ----------------------------------------------------------------------------------- 2: streamed INFILE
def test_records_are_streamed_with_one_record_read_ahead():
    from statgrid.sas.datastep.records import LineSource
    pulled = []

    def records():
        for k in range(1, 1_000_000):
            pulled.append(k)
            yield f"rec{k}"

    src = LineSource(records(), {"FIRSTOBS": 2.0, "OBS": 4.0})
    assert src.next() == "rec2"
    assert len(pulled) <= 3                      # the skipped record, the one read, one ahead for END=
    assert not src.at_end()
    assert src.next() == "rec3"
    assert src.next() == "rec4"                  # OBS= is the number of the last record read
    assert src.at_end() and src.next() is None
    assert src.i == 3


def test_file_records_reads_lazily_and_keeps_bytes(tmp_path):
    from statgrid.sas.datastep.records import file_records
    p = tmp_path / "v.txt"
    p.write_bytes(b"one\r\ntwo\n\xe9t\xe9\nlast")          # CRLF, Latin-1 bytes, no final newline
    it = file_records(p, {})
    assert next(it) == "one"                               # a generator: the file is read as needed
    assert list(it) == ["two", "\xe9t\xe9", "last"]


def test_infile_end_and_notes_on_a_file(session, tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("1 2\n33 4\n5 6\n")
    code, log = run(session, f"""
data a;
  infile '{p}' end=last;
  input x y;
  if last then put 'LAST ' x=;
run;
""")
    assert code == 0, log
    assert [(r["x"], r["y"]) for r in table(session, "work.a")] == [(1, 2), (33, 4), (5, 6)]
    lines = notes(log)
    assert "LAST x=5" in lines
    assert any(line.startswith(f"NOTE: The infile '{p}' is: Filename={p}, RECFM=V,LRECL=32767,File Size (bytes)=13, "
                               "Last Modified=") for line in lines), log
    assert (f"NOTE: 3 records were read from the infile '{p}'. The minimum record length was 3. "
            "The maximum record length was 4.") in lines, log
    assert log.index("NOTE: The infile") < log.index("LAST x=5") < log.index("records were read")


def test_infile_fileref_is_named_by_its_fileref(session, tmp_path):
    p = tmp_path / "b.txt"
    p.write_text("7\n")
    code, log = run(session, f"filename raw '{p}';\ndata b; infile raw; input x; run;\n")
    assert code == 0, log
    lines = notes(log)
    assert any(l.startswith("NOTE: The infile RAW is: Filename=") for l in lines), log
    assert ("NOTE: 1 records were read from the infile RAW. The minimum record length was 1. "
            "The maximum record length was 1.") in lines, log


# --------------------------------------------------------------------------------------- 3: RECFM=F
def test_recfm_f_reads_lrecl_bytes_with_newlines_as_data(session, tmp_path):
    p = tmp_path / "f.dat"
    p.write_bytes(b"01A\nB\r02CD\nE03\n\n\n\n")              # three 6-byte records, newline bytes inside
    code, log = run(session, f"""
data f;
  infile '{p}' recfm=f lrecl=6;
  input id 2. s $char4.;
  n = length(s);
  c = rank(substr(s, 2, 1));
run;
""")
    assert code == 0, log
    rows = table(session, "work.f")
    assert [r["id"] for r in rows] == [1.0, 2.0, 3.0]
    assert [r["s"] for r in rows] == ["A\nB\r", "CD\nE", "\n\n\n\n"]
    assert [r["c"] for r in rows] == [10.0, 68.0, 10.0]
    assert "NOTE: 3 records were read from the infile" in log


# ---------------------------------------------------------------------------- 6: PUT with unknown format
def test_put_with_an_unknown_format_is_error_48_59(session):
    code, log = run(session, "data _null_;\n  x = 1;\n  put 'RAN' x bogus7.;\nrun;\n")
    assert "The format BOGUS was not found or could not be loaded" in log
    assert "RAN" not in log.replace("put 'RAN'", "")          # the step is not run
    assert code != 0


# ------------------------------------------------------------------------------------------ 10: _INFILE_
def test_put_infile(session):
    code, log = run(session, """
data _null_;
  infile datalines;
  input;
  put '[' _infile_ ']';
datalines;
abc def
g
;
""")
    assert code == 0, log
    assert "[abc def ]" in log and "[g ]" in log, log


# ------------------------------------------------------------------------------- 11: implied decimals
def test_column_input_implied_decimals(session):
    code, log = run(session, """
data c;
  input y 1-3 .2 z 5-8 .1;
  datalines;
345 1.25
 12  -37
;
""")
    assert code == 0, log
    # 345 with .2 is 3.45; an explicit point in the field wins (1.25); -37 with .1 is -3.7
    assert [(r["y"], r["z"]) for r in table(session, "work.c")] == [(3.45, 1.25), (0.12, -3.7)]


# --------------------------------------------------------------------------------- 13: FLOWOVER NOTE
def test_flowover_note(session):
    code, log = run(session, "data fo;\n  input a b;\n  datalines;\n1 2\n3\n4 5\n;\n")
    assert code == 0, log
    assert [(r["a"], r["b"]) for r in table(session, "work.fo")] == [(1, 2), (3, 4)]
    assert "NOTE: SAS went to a new line when INPUT statement reached past the end of a line." in notes(log)
    code, log = run(session, "data ok;\n  input a b;\n  datalines;\n1 2\n;\n")
    assert "SAS went to a new line" not in log


# -------------------------------------------------------------------------- 9: variable and format lists
def test_put_variable_lists_with_format_lists(session):
    code, log = run(session, """
data _null_;
  a = 1.5; b = 'txt'; c = 1234.567; c2 = 22.75; d = 3;
  put (a b)(=);
  put (_all_)(=);
  put '[' (a c)(8.3 ' ' comma12.2) ']';
  put (a c2 d)(5.1 '-');
run;
""")
    assert code == 0, log
    lines = log.split("\n")
    assert "a=1.5 b=txt" in lines, log
    assert "a=1.5 b=txt c=1234.567 c2=22.75 d=3" in lines, log    # _ALL_: the step's variables
    assert "[   1.500     1,234.57]" in lines, log   # formatted values and strings: no blank added
    assert "  1.5- 22.8-  3.0" in lines, log          # the format list used again; nothing after the last


def test_input_informat_list_with_pointer_controls(session):
    code, log = run(session, """
data g;
  input (b1 b2)($1. +1 $1.) @5 (x1-x3)(2. +1);
  datalines;
a b 01 02 03
;
""")
    assert code == 0, log
    assert table(session, "work.g") == [{"b1": "a", "b2": "b", "x1": 1.0, "x2": 2.0, "x3": 3.0}]


# ------------------------------------------------------- binary informats on RECFM=F records (formats/)
def test_binary_informats_on_fixed_records(session, tmp_path):
    import struct
    rec = (b"\x00\x00\x01\x02" + b"\x02\x01\x00\x00" + b"\xff" + b"\x01\x23\x4d" + b"\x12\x3c" + b"\xc1\xc2"
           + struct.pack("<d", 2.5))
    assert len(rec) == 24
    p = tmp_path / "b.dat"
    p.write_bytes(rec + b"\x00" * 9 + b"\x00\x0a\x0c" + b"\x00\x0c" + b"\x40\x40" + b"\x00" * 8)
    code, log = run(session, f"""
data b;
  infile '{p}' recfm=f lrecl=24;
  input a s370fib4. b ib4. c pib1. d s370fpd3.2 e pd2. f $ebcdic2. g rb8.;
run;
""")
    assert code == 0, log
    rows = table(session, "work.b")
    assert rows[0] == {"a": 258.0, "b": 258.0, "c": 255.0, "d": -12.34, "e": 123.0, "f": "AB", "g": 2.5}
    # record 2: X'000A0C' is no packed decimal (A is not a digit): SAS's NOTE with the record in hexadecimal
    assert rows[1] == {"a": 0.0, "b": 0.0, "c": 0.0, "d": None, "e": 0.0, "f": "", "g": 0.0}
    lines = log.split("\n")
    assert "NOTE: Invalid data for d in line 2 10-12." in lines, log
    k = lines.index("NOTE: Invalid data for d in line 2 10-12.")
    assert lines[k + 2] == "2   CHAR  " + "." * 14 + "@@" + "." * 8
    assert lines[k + 3] == "    ZONE  " + "0" * 14 + "44" + "0" * 8
    assert lines[k + 4] == "    NUMR  " + "0" * 9 + "0AC0C" + "00" + "0" * 8


def test_quote_and_upcase_formats_in_put(session):
    code, log = run(session, """
data _null_;
  s = 'a"b  ';
  put '[' s $quote8. ']' '[' s $upcase4. ']';
run;
""")
    assert code == 0, log
    assert '["a""b"  ][A"B ]' in log.split("\n"), log


def test_two_infiles_read_in_turn_keep_their_places(session, tmp_path):
    (tmp_path / "p.txt").write_text("1\n2\n3\n")
    (tmp_path / "q.txt").write_text("10\n20\n30\n")
    code, log = run(session, f"""
data t;
  if _n_ > 5 then stop;                     /* a bound: reading each file from its start again would loop */
  infile '{tmp_path}/p.txt';
  input a;
  infile '{tmp_path}/q.txt';
  input b;
run;
""")
    assert code == 0, log
    assert [(r["a"], r["b"]) for r in table(session, "work.t")] == [(1, 10), (2, 20), (3, 30)]
    lines = notes(log)
    assert any(line.startswith(f"NOTE: 3 records were read from the infile '{tmp_path}/p.txt'.") for line in lines)
    assert any(line.startswith(f"NOTE: 3 records were read from the infile '{tmp_path}/q.txt'.") for line in lines)


def test_python_number_syntax_is_invalid_data_for_sas_input(session):
    """SAS's standard numeric input takes an optional sign, ASCII digits, a decimal point and an exponent: Python's
    float() extras ('1_000', 'inf', 'nan', other scripts' digits) and values beyond a double are invalid data
    (missing, a NOTE) in column, list and formatted input alike."""
    bad = ["1_000", "Infinity", "-inf", "nan", "1e400", "\u0661\u0662"]
    lines = "\n".join(bad + ["12", "3.5"])
    for stmt in ("input n 1-8;", "input n;", "input n 8.;"):
        code, log = run(session, f"data x; infile datalines truncover; {stmt} datalines;\n{lines}\n;\nrun;\n")
        assert code == 0, log
        assert [r["n"] for r in table(session, "work.x")] == [None] * len(bad) + [12.0, 3.5], stmt
        assert log.count("Invalid data for n in line") == len(bad), stmt


def test_input_pointer_to_a_string_or_a_character_variable(session):
    """@'text' and @charvar move the pointer past the text's next occurrence from the pointer on (SAS 9.4
    Statements: INPUT, Column Pointer Controls); a text not found leaves the pointer past the record's end, so
    with TRUNCOVER the next value is missing; @numvar still names a column."""
    code, log = run(session, """data c;
  length key $6 name $5 tag $5;
  infile datalines truncover;
  key = 'tag: ';
  col = 1;
  input @'id=' id 3. @'name=' name $5. @key tag $ @col first $2.;
datalines;
xx id=123 name=Alice tag: blue
id=7   yy name=Bob
name=Cy id=42
;
run;
""")
    assert code == 0, log
    got = [(r["id"], r["name"], r["tag"], r["first"]) for r in table(session, "work.c")]
    # record 3: @'id=' finds 'id=42' (col 12), then @'name=' searches on from there: not found → missing
    assert got == [(123.0, "Alice", "blue", "xx"), (7.0, "Bob", "", "id"), (42.0, "", "", "na")]


def test_infile_buffer_filevar_filename_and_aggregate_members(session, tmp_path):
    """_INFILE_ is the input record as a variable (read in expressions, changed before a held record is read,
    never written); FILEVAR= switches files when its value changes and, like FILENAME=, is not written;
    `fileref(member)` reads a member of a directory fileref, `.dat` added to an unquoted name without one
    (SAS 9.4 Statements: INFILE; SAS 9.4 Companion for UNIX: aggregate storage locations)."""
    (tmp_path / "f1.txt").write_text("a 1\nb 2\n")
    (tmp_path / "f2.txt").write_text("c 3\n")
    (tmp_path / "m1.dat").write_text("x 10\n")
    code, log = run(session, f"""filename agg '{tmp_path}';
data r;
  infile datalines truncover;
  input @;
  length up $20;
  up = upcase(_infile_);
  n = length(_infile_);
  if index(_infile_, 'skip') then delete;
  _infile_ = tranwrd(_infile_, ',', ' ');
  input w $ a b;
datalines;
hi,1,2
skip,3,4
lo,5,6
;
data files; length fname $200; infile datalines truncover; input fname $200.; datalines;
{tmp_path}/f1.txt
{tmp_path}/f2.txt
;
data all;
  set files;
  length src $200 file $200;
  infile dummy filevar=fname filename=src end=last;
  do while (not last);
    input k $ v;
    file = src;
    output;
  end;
run;
data m; infile agg(m1); input k $ v; run;
""")
    assert code == 0, log
    got = table(session, "work.r")
    assert [(r["up"], r["n"], r["b"]) for r in got] == [("HI,1,2", 6.0, 2.0), ("LO,5,6", 6.0, 6.0)]
    assert "Invalid data" not in log, log
    assert "_INFILE_" not in {k.upper() for k in got[0]}
    rows_ = table(session, "work.all")
    assert [(r["k"], r["v"], r["file"]) for r in rows_] == [
        ("a", 1.0, f"{tmp_path}/f1.txt"), ("b", 2.0, f"{tmp_path}/f1.txt"), ("c", 3.0, f"{tmp_path}/f2.txt")]
    assert not {"FNAME", "SRC"} & {k.upper() for k in rows_[0]}
    assert "2 records were read from the infile DUMMY." in log and "1 records were read from the infile DUMMY." in log
    assert [(r["k"], r["v"]) for r in table(session, "work.m")] == [("x", 10.0)]
    assert "The infile AGG(m1.dat) is:" in log


def test_input_before_any_infile_reads_the_instream_data(session, tmp_path):
    """INFILE is executable: until one runs, INPUT reads DATALINES; once the FILEVAR= INFILE has run, INPUT
    reads that file — so the next iteration's first INPUT reads on there (as in SAS: the idiom puts
    `infile datalines;` first to read every file)."""
    (tmp_path / "f1.txt").write_text("a 1\nb 2\n")
    (tmp_path / "f2.txt").write_text("c 3\n")
    program = """data {name};
  length fn $200;
  {first}input fn $;
  infile dummy filevar=fn end=eof truncover;
  do while (not eof); input k $ v; output; end;
datalines;
{d}/f1.txt
{d}/f2.txt
;
run;
"""
    code, log = run(session, program.format(name="one", first="", d=tmp_path))
    assert code == 0, log
    assert [r["k"] for r in table(session, "work.one")] == ["a", "b"]
    code, log = run(session, program.format(name="both", first="infile datalines; ", d=tmp_path))
    assert code == 0, log
    assert [r["k"] for r in table(session, "work.both")] == ["a", "b", "c"]
