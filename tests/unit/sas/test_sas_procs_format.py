"""PROC FORMAT through a real session: VALUE/INVALUE ranges (LOW, HIGH, OTHER, exclusive ends, lists,
missing values) used by later steps, LIBRARY= keeping the catalog in a library for later programs,
CNTLIN= from a real Parquet control data set, CNTLOUT=, FMTLIB, SAS's NOTEs and ERRORs. Expected
values follow SAS 9.4 Base Procedures (FORMAT) by hand."""
from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq

from statgrid.sas.formats import format_value, informat_value
from statgrid.sas.formats.catalog import FormatCatalog
from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog
from tests.unit.sas.standins import assert_errors

HEAD = "options nodate nonumber nocenter ls=100;\n"


def run_sas(session, text):
    t, lst = io.StringIO(), io.StringIO()
    log = SasLog(SessionLog(text=t, jsonl=io.StringIO(), listing=lst))
    code = run_program(text, session, log)
    listing = lst.getvalue().rstrip("\n").replace("\n\f", "\f")
    return code, " ".join(x.strip() for x in t.getvalue().split("\n")), listing


def lib_catalog(session, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir(exist_ok=True)
    session.libname("t", lib)
    return lib


def test_value_invalue_ranges_saved_in_library(session, tmp_path):
    lib = lib_catalog(session, tmp_path)
    code, log, _ = run_sas(session, """proc format library=t;
  value agegrp low -< 13 = 'Child'
               13 - 19  = 'Teen'
               19 <- high = 'Adult'
               . = 'None'
               other = 'Unknown';
  value $sexf 'F', 'f' = 'Female'
              'M' = 'Male';
  value codes (default=6) 1, 3, 5 = 'odd' -4 - -2 = 'minus';
  invalue yn (upcase) 'Y' = 1 'N' = 0 other = _error_;
run;""")
    assert code == 0, log
    for name in ("AGEGRP", "$SEXF", "CODES"):
        assert f"NOTE: Format {name} has been output." in log
    assert "NOTE: Informat YN has been output." in log
    # a later program finds them in the library's catalog file
    cat = FormatCatalog()
    assert cat.load_library(lib) == 4
    fmt = lambda v, spec: format_value(v, spec, cat).strip()   # noqa: E731
    assert [fmt(v, "AGEGRP.") for v in (5.0, 12.999, 13.0, 19.0, 19.5, 100.0, float("nan"))] == \
        ["Child", "Child", "Teen", "Teen", "Adult", "Adult", "None"]
    assert [fmt(v, "$SEXF.") for v in ("F", "f", "M", "x")] == ["Female", "Female", "Male", "x"]
    assert [fmt(v, "CODES.") for v in (3.0, -3.0, 2.0)] == ["odd", "minus", "2"]
    assert len(format_value(1.0, "CODES.", cat)) == 6                 # DEFAULT=6
    assert informat_value("y", "YN.", cat) == 1.0 and informat_value("N", "YN.", cat) == 0.0


def test_formats_used_by_later_steps_and_fmtlib(session, tmp_path):
    lib_catalog(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + """proc format fmtlib;
  value grade low -< 60 = 'F' 60 - high = 'Pass';
run;
data t.g; input s; r = put(s, grade.); datalines;
59.5
60
;
proc print data=t.g noobs; format s grade.; run;""")
    assert code == 0, log
    assert session.execute(f"SELECT * FROM read_parquet('{tmp_path}/lib/g.parquet')").fetchall() == \
        [(59.5, "F"), (60.0, "Pass")]
    box = lst.split("\f")[0].split("\n")[2:]
    assert box == ["-" * 76,
                   "|" + "FORMAT NAME: GRADE    LENGTH:    4   NUMBER OF VALUES:    2".center(74) + "|",
                   "|" + "MIN LENGTH:   1  MAX LENGTH:  40  DEFAULT LENGTH:   4  FUZZ: STD".center(74) + "|",
                   "|" + "-" * 74 + "|",
                   "|START           |END             |LABEL" + " " * 35 + "|",
                   "|" + "-" * 16 + "+" + "-" * 16 + "+" + "-" * 40 + "|",
                   "|LOW             |              60<F" + " " * 39 + "|",
                   "|              60|HIGH            |Pass" + " " * 36 + "|",
                   "-" * 76]
    assert lst.split("\f")[1].split("\n")[2:] == ["   s    r", "", "F       F", "Pass    Pass"]


def test_cntlin_and_cntlout(session, tmp_path):
    lib = lib_catalog(session, tmp_path)
    ctl = pa.table({"FMTNAME": ["region", "region", "region", "$st", "$st"],
                    "START": ["1", "3", "", "NC", "MD"], "END": ["2", "5", "", "NC", "MD"],
                    "LABEL": ["East", "West", "Other", "North Carolina", "Maryland"],
                    "TYPE": ["N", "N", "N", "C", "C"], "HLO": ["", "", "O", "", ""]})
    pq.write_table(ctl, lib / "ctl.parquet")
    code, log, _ = run_sas(session, """proc format cntlin=t.ctl cntlout=t.back;
  select region;
run;
data t.use; x = put(4, region.); y = put('MD', $st.); z = put(9, region.); run;""")
    assert code == 0, log
    assert "NOTE: There were 5 observations read from the data set T.CTL." in log
    assert "NOTE: Format REGION has been output." in log and "NOTE: Format $ST has been output." in log
    assert session.execute(f"SELECT * FROM read_parquet('{lib}/use.parquet')").fetchall() == \
        [("West", "Maryland", "Other")]
    back = session.execute(f"SELECT FMTNAME, START, \"END\", LABEL, TYPE, HLO FROM read_parquet('{lib}/back.parquet')"
                           ).fetchall()
    assert back == [("REGION", "1", "2", "East", "N", ""), ("REGION", "3", "5", "West", "N", ""),
                    ("REGION", "**OTHER**", "**OTHER**", "Other", "N", "O")]


def test_errors(session, tmp_path):
    lib_catalog(session, tmp_path)
    assert_errors(run_sas, session, [
        ("proc format; value bad1 1='a'; run;", "The format name BAD1 ends in a number, which is not allowed"),
        ("proc format; value ov 1-10='a' 5-20='b'; run;", "This range is repeated, or values overlap: 5-20"),
        ("proc format;\n  value x 1 'a';\nrun;", "(line 2, column 13)"),
        ("proc format libary=t; run;", "The option or parameter libary is not recognized in the PROC FORMAT statement"),
        ("proc format; valu x 1='a'; run;", "Statement VALU is not valid")])
