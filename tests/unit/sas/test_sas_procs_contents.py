"""PROC CONTENTS over real Parquet data sets in a tmp library through a real session: SAS's variable table
(written by hand from SAS 9.4 Base Procedures, CONTENTS: '#  Variable  Type  Len  Format  Label', four
blanks apart, numbers right-aligned), VARNUM/SHORT/POSITION, lib._ALL_ with NODS, OUT=."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from tests.unit.sas import standins
from tests.unit.sas.standins import assert_errors

HEAD = "options nodate nonumber nocenter ls=100;\n"


def run_sas(session, text):
    """(exit code, log, listing with its last newline and the newline before each page break taken off)."""
    code, log, lst = standins.run_sas(session, text)
    return code, log, lst.rstrip("\n").replace("\n\f", "\f")


def make_lib(session, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    meta = {"student": {"length": 4}, "grade1": {"format": "5.2", "label": "First grade"},
            "state": {"length": 2, "label": "Home State"}}
    table = pa.table({"student": ["1000", "1042"], "year": [1980.0, 1981.0], "state": ["NC", "MD"],
                      "grade1": [84.0, 92.0]})
    table = table.replace_schema_metadata({"statgrid.columns": json.dumps(meta), "statgrid.label": "Majors"})
    pq.write_table(table, lib / "majors.parquet")
    pq.write_table(pa.table({"x": [1.0]}), lib / "other.parquet")
    session.libname("t", lib)
    return lib


def test_variable_table_and_header(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + "proc contents data=t.majors; run;")
    assert code == 0, log
    lines = lst.split("\n")
    assert lines[:3] == ["The SAS System", "", "The CONTENTS Procedure"]
    assert lines[4] == "Data Set Name        T.MAJORS                         Observations          2"
    assert lines[5] == "Member Type          DATA                             Variables             4"
    assert "Label                Majors" in lines
    assert lst.endswith("""Alphabetic List of Variables and Attributes

#    Variable    Type    Len    Format    Label

4    grade1      Num       8    5.2       First grade
3    state       Char      2              Home State
1    student     Char      4
2    year        Num       8""")


def test_varnum_position_short(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + """proc contents data=t.other varnum; run;
proc contents data=t.majors short; run;
proc contents data=t.other position; run;""")
    assert code == 0, log
    pages = lst.split("\f")
    assert pages[0].endswith("""Variables in Creation Order

#    Variable    Type    Len

1    x           Num       8""")
    assert pages[1].endswith("Alphabetic List of Variables for T.MAJORS\n\ngrade1 state student year")
    assert "Alphabetic List of Variables and Attributes" in pages[2] and "Variables in Creation Order" in pages[2]


def test_all_nods_and_out(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + "proc contents data=t._all_ nods out=work.c; run;\n"
                                              "data t.c2; set work.c; run;")
    assert code == 0, log
    assert "The CONTENTS Procedure" not in lst
    listed = [ln.split()[:3] for ln in lst.split("\n") if ln[:1].isdigit()]
    assert listed == [["1", "MAJORS", "DATA"], ["2", "OTHER", "DATA"]]
    got = session.execute(f"SELECT MEMNAME, NAME, TYPE, LENGTH, VARNUM, LABEL, FORMAT, FORMATL, FORMATD, NOBS "
                          f"FROM read_parquet('{tmp_path / 'lib' / 'c2.parquet'}') ORDER BY MEMNAME, VARNUM").fetchall()
    # a blank character value is stored as '' (SAS's character missing)
    assert got == [("MAJORS", "student", 2.0, 4.0, 1.0, "", "", 0.0, 0.0, 2.0),
                   ("MAJORS", "year", 1.0, 8.0, 2.0, "", "", 0.0, 0.0, 2.0),
                   ("MAJORS", "state", 2.0, 2.0, 3.0, "Home State", "", 0.0, 0.0, 2.0),
                   ("MAJORS", "grade1", 1.0, 8.0, 4.0, "First grade", "", 5.0, 2.0, 2.0),
                   ("OTHER", "x", 1.0, 8.0, 1.0, "", "", 0.0, 0.0, 1.0)]


def test_errors(session, tmp_path):
    make_lib(session, tmp_path)
    assert_errors(run_sas, session, [("proc contents data=t.nosuch; run;", "T.NOSUCH.DATA does not exist"),
                                     ("proc contents data=t.majors vrnum; run;",
                                      "The option or parameter vrnum is not recognized")])


def test_sort_information_after_proc_sort(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + """proc sort data=t.majors out=t.s nodupkey; by descending year state; run;
proc contents data=t.s; run;
data t.s2; set t.s; run;
proc contents data=t.s2 out=work.o; run;""")
    assert code == 0, log
    first, second = lst.split("\f")
    assert "Sorted                YES" in first and "Sorted                NO" in second
    assert first.endswith("""Sort Information

Sortedby       DESCENDING year state
Validated      YES
Character Set  ASCII
Sort Option    NODUPKEY""")
    assert "Sort Information" not in second


def test_compressed_says_sas_words_for_the_codec(session, tmp_path):
    """COMPRESS=NO|CHAR|BINARY written (config/dataset_io.py: uncompressed, snappy, zstd) is shown as SAS shows it."""
    code, log, lst = run_sas(session, """data a(compress=no); x = 1; run;
data b(compress=binary); x = 1; run;
data c(compress=yes); x = 1; run;
proc contents data=a; run; proc contents data=b; run; proc contents data=c; run;""")
    assert code == 0, log
    words = [line.split("Compressed")[1].split()[0] for line in lst.splitlines() if "Compressed" in line]
    assert words == ["NO", "BINARY", "CHAR"]
