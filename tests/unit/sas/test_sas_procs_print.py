"""PROC PRINT over real Parquet data in a tmp library, through a real statgrid session and the SAS driver.
Expected listings are written by hand from SAS 9.4's PRINT layout (Base Procedures Guide, PRINT: the
SASHELP.CLASS listing — columns four blanks apart, values centred under a wider heading, numbers
without a format aligned on the decimal point); nothing here is produced by the code under test."""
from __future__ import annotations

from tests.unit.sas import standins

CLASS = [("Alfred", "M", 14, 69.0, 112.5), ("Alice", "F", 13, 56.5, 84.0), ("Barbara", "F", 13, 65.3, 98.0),
         ("Carol", "F", 14, 62.8, 102.5), ("Henry", "M", 14, 63.5, 102.5), ("James", "M", 12, 57.3, 83.0),
         ("Jane", "F", 12, 59.8, 84.5), ("Janet", "F", 15, 62.5, 112.5), ("Jeffrey", "M", 13, 62.5, 84.0),
         ("John", "M", 12, 59.0, 99.5), ("Joyce", "F", 11, 51.3, 50.5)]
HEAD = "options nodate nonumber nocenter ls=100 ps=60;\n"


def make_lib(session, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir(exist_ok=True)
    values = ", ".join(f"('{n}', '{s}', {a}::DOUBLE, {h}::DOUBLE, {w}::DOUBLE)" for n, s, a, h, w in CLASS)
    session.execute(f"COPY (SELECT * FROM (VALUES {values}) v(Name, Sex, Age, Height, Weight)) "
                    f"TO '{lib}/class.parquet' (FORMAT parquet)").fetchall()
    session.libname("t", lib)
    return lib


def run_sas(session, text):
    """(exit code, log, listing with its last newline and the newline before each page break taken off)."""
    code, log, lst = standins.run_sas(session, text)
    return code, log, lst.rstrip("\n").replace("\n\f", "\f")


def test_print_layout_of_sas_class_listing(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + "proc print data=t.class; run;")
    assert code == 0, log
    assert lst == """The SAS System

Obs    Name       Sex    Age    Height    Weight

  1    Alfred      M      14     69.0      112.5
  2    Alice       F      13     56.5       84.0
  3    Barbara     F      13     65.3       98.0
  4    Carol       F      14     62.8      102.5
  5    Henry       M      14     63.5      102.5
  6    James       M      12     57.3       83.0
  7    Jane        F      12     59.8       84.5
  8    Janet       F      15     62.5      112.5
  9    Jeffrey     M      13     62.5       84.0
 10    John        M      12     59.0       99.5
 11    Joyce       F      11     51.3       50.5"""
    assert "NOTE: There were 11 observations read from the data set T.CLASS." in log


def test_where_keeps_observation_numbers_var_noobs_obs_label(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + """proc print data=t.class obs='Row';
  var name age;
  where age >= 14 and sex = 'F';
run;
proc print data=t.class(where=(age=12)) noobs;
  var name;
  where age > 100;    /* SAS: the WHERE= option wins over the WHERE statement */
run;""")
    assert code == 0, log
    assert lst.split("\f") == ["""The SAS System

Row    Name     Age

 4     Carol     14
 8     Janet     15""", """The SAS System

Name

James
Jane
John"""]
    assert "NOTE: There were 2 observations read from the data set T.CLASS." in log
    assert "NOTE: There were 3 observations read from the data set T.CLASS." in log


def test_by_groups_sum_n_label_split(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + """options ls=64;
proc sort data=t.class(where=(age>=14)) out=work.s; by sex; run;
proc print data=s n split='/';
  by sex;
  var name weight;
  sum weight;
  label name='First/Name';
run;""")
    assert code == 0, log
    dashes = "-" * 28
    assert lst == f"""The SAS System

{dashes} Sex=F {dashes}-

       First
Obs    Name     Weight

 1     Carol     102.5
 2     Janet     112.5
                ------
Sex              215.0

N = 2

{dashes} Sex=M {dashes}-

       First
Obs    Name      Weight

 3     Alfred     112.5
 4     Henry      102.5
                 ------
Sex               215.0
                 ======
                  430.0

N = 2"""


def test_formats_missing_option_and_format_statement(session, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    # a date column and a missing value, as Parquet stores them (DATE type: SAS shows it with DATE9.)
    session.execute(f"COPY (SELECT * FROM (VALUES ('ann', DATE '2021-02-01', 1234.5::DOUBLE), "
                    f"('bob', DATE '2021-03-15', NULL::DOUBLE)) v(who, \"when\", amt)) "
                    f"TO '{lib}/pay.parquet' (FORMAT parquet)").fetchall()
    session.libname("t", lib)
    code, log, lst = run_sas(session, HEAD + """options missing='-';
proc print data=t.pay noobs uniform;
  format amt comma10.2;
run;""")
    assert code == 0, log
    assert lst == """The SAS System

who         when           amt

ann    01FEB2021      1,234.50
bob    15MAR2021             -"""


def test_pages_repeat_headings_and_panels_split_wide_rows(session, tmp_path):
    make_lib(session, tmp_path)
    # PAGESIZE=15: title + blank leave 13 lines: heading, blank, 11 rows fit exactly once; ID repeats in panels
    code, log, lst = run_sas(session, HEAD + """options ps=15 ls=64;
data w; set t.class; a_long_variable_name_1 = age; a_long_variable_name_2 = age * 2; run;
proc print data=w(obs=3) double;
  id name;
  var a_long_variable_name_1 a_long_variable_name_2;
run;
proc print data=t.class(keep=name) double; run;""")
    assert code == 0, log
    pages = lst.split("\f")
    assert pages[0] == """The SAS System

Name       a_long_variable_name_1    a_long_variable_name_2

Alfred               14                        28

Alice                13                        26

Barbara              13                        26
"""[:-1]
    # 13 lines a page: heading + blank, then 5 observations of 2 lines each → 3 pages, headings on each
    rest = pages[1:]
    assert len(rest) == 3
    assert all(p.startswith("The SAS System\n\nObs    Name\n\n") for p in rest)
    # not UNIFORM: each page is measured alone (obs 6–10 need two digits, centred under 'Obs')
    assert rest[1] == """The SAS System

Obs    Name

  6    James

  7    Jane

  8    Janet

  9    Jeffrey

 10    John"""
    assert rest[2] == "The SAS System\n\nObs    Name\n\n 11    Joyce"


def test_errors_name_line_column_and_stop_the_step(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, """proc print data=t.class nosuchopt;
run;
proc print data=t.class;
  vars name;
run;""")
    assert code == 1
    assert "ERROR: The option or parameter nosuchopt is not recognized in the PROC PRINT statement" in log
    assert "(line 1, column 25)" in log
    assert "Statement VARS is not valid or it is used out of proper order" in log and "(line 4, column 3)" in log
    assert lst == ""
    code, log, lst = run_sas(session, "proc print data=t.class;\n  by sex;\nrun;")
    assert code == 1 and lst == ""
    assert ("ERROR: Data set T.CLASS is not sorted in ascending sequence. The current BY group has Sex = M and "
            "the next BY group has Sex = F") in " ".join(x.strip() for x in log.split("\n"))
    code, log, lst = run_sas(session, "proc print data=t.nosuch; run;")
    assert code == 1 and "T.NOSUCH.DATA does not exist" in log


def test_by_sorted_descending_and_id_with_label(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + """options ls=64;
proc sort data=t.class(where=(age>=15)) out=s; by descending age name; run;
proc print data=s label;
  by descending age;
  id name;
  var height;
  label height='Height in';
run;""")
    assert code == 0, log
    assert lst == """The SAS System

---------------------------- Age=15 ----------------------------

Name     Height in

Janet       62.5"""


def test_by_notsorted_groups_consecutive_values(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + """proc print data=t.class(obs=4) noobs;
  by sex notsorted;
  var name;
run;""")
    assert code == 0, log
    rules = [ln.strip("- ") for ln in lst.split("\n") if ln.startswith("---")]
    assert rules == ["Sex=M", "Sex=F"]                 # Alfred | Alice Barbara Carol
    assert [ln for ln in lst.split("\n") if ln in ("Alfred", "Alice", "Barbara", "Carol")] == \
        ["Alfred", "Alice", "Barbara", "Carol"]


def test_last_data_set_is_the_default(session, tmp_path):
    make_lib(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + """proc sort data=t.class(keep=name age where=(age=11)) out=work.young;
  by name;
run;
proc print; run;""")
    assert code == 0, log
    assert "NOTE: There were 1 observations read from the data set WORK.YOUNG." in log
    assert lst == "The SAS System\n\nObs    Name     Age\n\n 1     Joyce     11"
