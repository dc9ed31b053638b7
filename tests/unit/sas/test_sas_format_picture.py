"""PROC FORMAT PICTURE through a real session (SAS 9.4 Base Procedures, FORMAT: PICTURE statement, "Building a
Picture Format: Step by Step", Example "Filling a Picture Format", and the FMTLIB listing of the NOZEROS. format
the manual publishes). Expected strings are worked by hand from those rules and published outputs."""
from __future__ import annotations

import re

import pytest

from statgrid.sas.errors import SasError
from statgrid.sas.formats import format_value
from statgrid.sas.formats.catalog import FormatCatalog, catalog_file, read_catalog_file
from tests.unit.sas.test_sas_procs_format import HEAD, lib_catalog, run_sas

NOZEROS = """proc format library=t fmtlib;
   picture nozeros
              low   -     -1  =  '00.00' (prefix='-'          )
               -1  <-<     0  =     '99' (prefix='-.' mult=100)
                0   -<     1  =     '99' (prefix='.'  mult=100)
                1   -   high  =  '00.00';
run;
"""


def puts(session, fmt_defs: str, pairs: list[tuple[str, str]]) -> list[str]:
    """PUT(value, format) of each (value expression, format) pair, written by a DATA step as quoted text."""
    body = "\n".join(f"  s{i} = put({v}, {f}); put s{i} $quote60.;" for i, (v, f) in enumerate(pairs))
    code, log, _ = run_sas(session, fmt_defs + f"data _null_;\n{body}\nrun;")
    assert code == 0, log
    return re.findall(r'"((?:[^"]|"")*)"', log.split("run;")[-1])[:len(pairs)]


def test_nozeros_step_by_step_and_published_fmtlib(session, tmp_path):
    lib_catalog(session, tmp_path)
    code, log, lst = run_sas(session, HEAD + NOZEROS)
    assert code == 0, log
    # the manual's FMTLIB rows for NOZEROS (MULT= defaults to 10**2 for '00.00': M100)
    for row in ("|LOW             |              -1|00.00               P-  F  M100         |",
                "|              -1<               0<99                  P-. F  M100         |",
                "|               0|               1<99                  P.  F  M100         |",
                "|               1|HIGH            |00.00               P   F  M100         |"):
        assert row in lst.split("\n"), lst
    assert "FORMAT NAME: NOZEROS  LENGTH:    5   NUMBER OF VALUES:    4" in lst
    # by hand: |-2.051|*100 = 205.1 → 205 → '0205' under '00.00' → ' 2.05', prefix '-' takes the blank
    got = puts(session, "options fmtsearch=(t);\n", [("-2.051", "nozeros."), ("-0.05", "nozeros."), ("0.25", "nozeros."),
                             ("1.5", "nozeros."), ("0.999", "nozeros."), ("-1", "nozeros."), ("0", "nozeros.")])
    assert got == ["-2.05", " -.05", "  .25", " 1.50", "  .99", "-1.00", "  .00"]


def test_fill_and_prefix_published_salary_example(session):
    code, log, lst = run_sas(session, HEAD + """data pay;
   input Name $ MonthlySalary;
   datalines;
Liu   1259.45
Lars  1289.33
Kim   1439.02
Wendy 1675.21
Alex  1623.73
;
proc format;
   picture salary low-high='00,000,000.00' (fill='*' prefix='$');
run;
proc print data=pay noobs;
   format monthlysalary salary.;
run;""")
    assert code == 0, log
    # the manual's output (Example: Filling a Picture Format); 1259.45*100 is 125945 exactly, not 125944.99…
    for name, text in (("Liu", "****$1,259.45"), ("Lars", "****$1,289.33"), ("Kim", "****$1,439.02"),
                       ("Wendy", "****$1,675.21"), ("Alex", "****$1,623.73")):
        assert re.search(rf"^\s*{name}\s+{re.escape(text)}\s*$", lst, re.M), lst


def test_too_many_digits_lose_the_prefix_then_the_leftmost_digits(session):
    """SAS's own log, published on communities.sas.com ("SAS Picture formats – without fear (or tears)"): PAY.
    (picture '000,009.99', PREFIX='$', width 10) for num = 1.23456789*10**(i-4), i = 1 … 12."""
    code, log, _ = run_sas(session, """proc format;
  picture pay low-high='000,009.99' (prefix='$');
run;
data _null_;
  do i = 1 to 12;
    num = 1.234567890*10**(i-4);
    put 'PAY ' num pay.;
  end;
run;""")
    assert code == 0, log
    assert re.findall(r"PAY +(\S+)", log.split("run;")[-1]) == [
        "$0.00", "$0.01", "$0.12", "$1.23", "$12.34", "$123.45", "$1,234.56", "$12,345.67",
        "123,456.78",      # no room left for the prefix
        "234,567.89",      # the leftmost digit is lost (1234567.89 * 100 is 123456789, not 123456788.99…)
        "345,678.89", "456,788.99"]


def test_digit_selectors_message_noedit_round_and_missing(session):
    defs = """proc format;
  picture nine low-high='9999';
  picture zero low-high='0000';
  picture mixed low-high='009.99';
  picture pct low-high='009.9%';
  picture trunc low-high='009.99';
  picture rnd (round) low-high='009.99';
  picture msg . = 'N/A' low -< 0 = 'negative' 0 - 1000 = '0,009' 1000 <- high = 'over 1,000' (noedit);
  picture times low-high='0009' (mult=1000);
  picture days 01-31='99' other='99-illegal day value';
  picture miles 1-1000='0000' 1000<-high='>1000 miles'(noedit);
run;
"""
    got = puts(session, defs, [
        ("42", "nine."), ("42", "zero."), ("0.5", "mixed."), ("12.345", "pct."), ("2.999", "trunc."),
        ("2.999", "rnd."), ("1.235", "rnd."), (".", "msg."), ("-3", "msg."), ("999", "msg."), ("5000", "msg."),
        ("0.0425", "times."), ("42", "nine6."), ("2", "days2."), ("67", "days."), ("1500", "miles."), ("-3", "msg3.")])
    assert got == [
        "0042",            # 9: leading zeros printed
        "  42",            # 0: leading zeros blank
        "  0.50",          # the 9 selector prints from its position on
        " 12.3%",          # MULT 10 (one selector after the point); truncated, not rounded
        "  2.99",          # truncation: 299.9 → 299
        "  3.00",          # ROUND: 299.9 → 300
        "  1.24",          # ROUND: 123.5 → 124
        "       N/A",      # a message, width of the longest picture ('over 1,000'), right-aligned
        "  negative",
        "       999",      # '0,009' for 999: the comma left of the blank zero goes too
        "over 1,000",      # NOEDIT: digits are message characters
        "  42",            # MULT=1000: 42.5 → 42
        "  0042",          # w=6: right-aligned
        # the manual's PICTURE statement examples: '02', '67-illegal day value', '>1000 miles'
        "02", "67-illegal day value", ">1000 miles",
        "neg",             # a message wider than w is cut on the right, as text is
    ]


def test_put_statement_and_freq_means_grouping_by_picture(session):
    code, log, lst = run_sas(session, HEAD + """proc format;
  picture tens (round) low-high='009' (mult=0.1);
run;
data a;
  input x @@;
  y = x;
  put 'X ' x tens. +1 x tens5.;
datalines;
4 14 15 24 26 31
;
run;
proc freq data=a; tables x; format x tens.; run;
proc means data=a n sum; class x; var y; format x tens.; run;""")
    assert code == 0, log
    # ROUND with MULT=0.1: 0.4 → 0, 1.4 → 1, 1.5 → 2, 2.4 → 2, 2.6 → 3, 3.1 → 3
    assert re.findall(r"X\s+(\d)\s+(\d)", log) == [(d, d) for d in "012233"]
    # FREQ and MEANS group by the picture's text: levels 0 1 2 3 with 1 1 2 2 observations
    assert [m for m in re.findall(r"^[ ]*(\d)[ ]+(\d)[ ]+\d+\.\d\d[ ]+\d[ ]+\d+\.\d\d(?=\s)", lst, re.M)] == \
        [("0", "1"), ("1", "1"), ("2", "2"), ("3", "2")]
    # MEANS: level 2 is 15+24 = 39, level 3 is 26+31 = 57
    assert re.search(r"^\s*2\s+2\s+2\s+39\.0+\s*$", lst, re.M) and re.search(r"^\s*3\s+2\s+2\s+57\.0+\s*$", lst, re.M), lst


def test_datatype_directives(session):
    defs = """proc format;
  picture dmy (default=11) other='%0d-%b-%Y' (datatype=date);
  picture mdyhms (default=19) other='%0m/%0d/%Y %0H:%0M:%0S' (datatype=datetime);
  picture clock (default=20) other='%H hours %M minutes' (datatype=time);
  picture words (default=40) other='%A %a %B %y %j %w %% %0U' (datatype=date);
  picture twelve (default=12) other='%I:%0M %p' (datatype=datetime);
  picture yr (default=8) '01jan2020'd - '31dec2020'd = 'in %Y' (datatype=date) other = 'none';
  picture short other='%d%b%Y' (datatype=date);
  picture num other='009.9';
run;
"""
    got = puts(session, defs, [
        ("'05mar2021'd", "dmy."), ("'05mar2021:09:04:07'dt", "mdyhms."), ("'1:05:00't", "clock."),
        ("'05mar2021'd", "words."), ("'05mar2021:15:04:07'dt", "twelve."), ("'15jun2020'd", "yr."),
        ("'15jun2021'd", "yr."), ("'05mar2021'd", "short."), (".", "short."), (".", "num.")])
    assert got == [
        "05-Mar-2021",
        "03/05/2021 09:04:07",
        "   1 hours 5 minutes",
        # Friday, day 31+28+5 = 64 of 2021, %w 6 (Sunday is 1), week (64-3)//7+1 = 9 counted from Sunday 3 Jan;
        # default 40: right-aligned
        "Friday Fri March 21 64 6 % 09".rjust(40),
        "3:04 PM".rjust(12),
        " in 2020",
        "    none",
        "5Mar20",          # no DEFAULT=: the picture's 6 characters, the rest cut (hence SAS's advice to give one)
        "     .", "    .",                 # a missing value has no date or digits to show: the MISSING= character
    ]


def test_picture_kept_in_library_cntlout_cntlin_round_trip(session, tmp_path):
    lib = lib_catalog(session, tmp_path)
    code, log, _ = run_sas(session, HEAD + NOZEROS + """proc format library=t cntlout=work.ctl;
  picture salary (round) low-high='00,000,000.00' (fill='*' prefix='$');
run;
data ctl2;
  set ctl;
  fmtname = cats(fmtname, 'X');
run;
proc format cntlin=ctl2;
run;
proc print data=ctl noobs;
  var fmtname start end label prefix mult fill noedit type hlo;
run;""")
    assert code == 0, log
    assert "NOTE: Format NOZEROSX has been output." in log and "NOTE: Format SALARYX has been output." in log
    # a later program finds the pictures in the library's catalog file
    cat = FormatCatalog()
    assert cat.load_library(lib) == 2
    assert format_value(-0.05, "NOZEROS.", cat) == " -.05"
    assert format_value(1259.456, "SALARY.", cat) == "****$1,259.46"          # ROUND
    stored = read_catalog_file(catalog_file(lib))
    assert {f.name for f in stored.values()} == {"NOZEROS", "SALARY"}
    # CNTLIN= from CNTLOUT= rebuilds the same formats (TYPE='P', PREFIX, FILL, MULT; HLO 'R' for ROUND)
    got = puts(session, "", [("-2.051", "nozerosx."), ("-0.05", "nozerosx."), ("0.25", "nozerosx."),
                             ("1259.456", "salaryx.")])
    assert got == ["-2.05", " -.05", "  .25", "****$1,259.46"]


def test_cntlout_columns(session):
    code, log, _ = run_sas(session, HEAD + """proc format cntlout=work.ctl;
  picture pay (round) low - <0 = '0,009.99' (prefix='-') 0 - high = '0,009.99' (fill='*' mult=100);
  value plain 1 = 'one';
run;
data _null_;
  set ctl;
  put fmtname= type= start= end= label= prefix= mult= fill= noedit= hlo=;
run;""")
    assert code == 0, log
    assert "FMTNAME=PAY TYPE=P START=LOW END=0 LABEL=0,009.99 PREFIX=- MULT=100 FILL= NOEDIT=0 HLO=LR" in log
    assert "FMTNAME=PAY TYPE=P START=0 END=HIGH LABEL=0,009.99 PREFIX= MULT=100 FILL=* NOEDIT=0 HLO=HR" in log
    assert "FMTNAME=PLAIN TYPE=N START=1 END=1 LABEL=one PREFIX= MULT=. FILL= NOEDIT=. HLO=" in log


BAD = [
    ("picture p low-high='99' (fill='**');", "FILL='**' is not one character"),
    ("picture p low-high='99' (datatype=week);", "DATATYPE=week is not a data type"),
    ("picture p low-high='99' (prefix='$$$$$');", "PREFIX='$$$$$' is longer than 4 characters"),
    ("picture p low-high='99' (spin=1);", "The picture option spin is not recognized"),
    ("picture p low-high=99;", "A picture must be in quotation marks"),
    ("picture $p low-high='99';", "A PICTURE format is numeric"),
    ("picture p 0-10='99' 5-20='999';", "This range is repeated, or values overlap: 5-20"),
    ("value v (round) 1='a';", "The option round is not valid in the VALUE statement"),
    ("picture p low-high='" + "9" * 41 + "';", "longer than 40 characters"),
]


def test_bad_pictures_are_errors(session):
    for stmt, message in BAD:                 # one session for all: each PROC FORMAT step stands alone
        code, log, _ = run_sas(session, f"proc format;\n  {stmt}\nrun;")
        assert code != 0, stmt
        assert "ERROR" in log and message in log, log


def test_damaged_picture_entry_is_refused(tmp_path):
    p = catalog_file(tmp_path)
    p.write_text('{"statgrid_format_catalog": 1, "formats": [{"name": "P", "picture": true, "ranges": '
                 '[{"low": true, "high": true, "label": "99", "picture": {"fill": "**"}}]}]}')
    with pytest.raises(SasError, match="fill is not one character"):
        read_catalog_file(p)
