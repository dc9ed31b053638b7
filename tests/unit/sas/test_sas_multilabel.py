"""MULTILABEL formats (SAS 9.4 Base Procedures: FORMAT VALUE/PICTURE option MULTILABEL; MEANS/SUMMARY and
TABULATE CLASS statement option MLF) through a real session. PUT takes a value's first label (ranges in
order of their start); a CLASS variable with MLF puts an observation in the group of every label it has, and a
statistic that does not cross the variable counts it once; with PRELOADFMT ORDER=DATA the levels come in the
format's order. Expected counts and sums by hand from the data."""
from __future__ import annotations

import re

from tests.unit.sas.test_sas_procs_format import HEAD, run_sas

# ages 10 15 18 25 40 with scores 1..5:
#   'Teen or less' (0-19): 10 15 18 → n 3, sum 1+2+3 = 6      'Child' (0-12): 10 → n 1, sum 1
#   'Teen' (13-19): 15 18 → n 2, sum 5                          'Adult' (20-high): 25 40 → n 2, sum 9
DATA = """proc format;
  value agef (multilabel) 0-19 = 'Teen or less' 13-19 = 'Teen' 20-high = 'Adult' 0-12 = 'Child';
  value $grp (multilabel) 'F' = 'Female' 'F', 'M' = 'Anyone';
  picture pct (multilabel) 0-100 = '009%' 50-100 = 'half or more' (noedit);
run;
data a;
  input age score sex $;
  lab = put(age, agef.);
  p = put(score * 20, pct.);
datalines;
10 1 F
15 2 M
18 3 F
25 4 M
40 5 F
;
run;
"""


def rows(text: str, pattern: str) -> list[tuple[str, ...]]:
    return re.findall(pattern, text)


def test_put_takes_the_first_label_and_summary_mlf_counts_every_label(session):
    code, log, lst = run_sas(session, HEAD + DATA + """data _null_;
  set a;
  put 'LAB ' age lab $quote20. p $quote20.;
run;
proc summary data=a;
  class sex;
  class age / mlf;
  var score;
  format age agef.;
  output out=m n=n sum=s;
run;
data _null_;
  set m;
  put 'OUT ' _type_ age $quote20. sex $quote5. n s;
run;""")
    assert code == 0, log
    # PUT: the first of the ranges ordered by start (0-19 was given before 0-12, both start at 0); PCT.'s width
    # is its longest picture's, 12
    assert rows(log, r'LAB (\d+) "([^"]*)"\s+"([^"]*)"') == [
        ("10", "Teen or less", " 20%".rjust(12)), ("15", "Teen or less", " 40%".rjust(12)),
        ("18", "Teen or less", " 60%".rjust(12)), ("25", "Adult", " 80%".rjust(12)), ("40", "Adult", "100%".rjust(12))]
    got = rows(log, r'OUT (\d) "([^"]*)"\s+"([^"]*)"\s*(\d+) (\d+)')
    assert got == [
        ("0", "", "", "5", "15"),                                 # every observation once
        ("1", "Adult", "", "2", "9"), ("1", "Child", "", "1", "1"), ("1", "Teen", "", "2", "5"),
        ("1", "Teen or less", "", "3", "6"),
        ("2", "", "F", "3", "9"), ("2", "", "M", "2", "6"),       # the type without AGE: each observation once
        ("3", "Adult", "F", "1", "5"), ("3", "Child", "F", "1", "1"), ("3", "Teen", "F", "1", "3"),
        ("3", "Teen or less", "F", "2", "4"),                     # type 3 in order of SEX, then AGE's label
        ("3", "Adult", "M", "1", "4"), ("3", "Teen", "M", "1", "2"), ("3", "Teen or less", "M", "1", "2"),
    ]


def test_means_listing_and_tabulate_mlf_char_and_picture(session):
    code, log, lst = run_sas(session, HEAD + DATA + """proc means data=a n sum nway;
  class sex / mlf;
  var score;
  format sex $grp.;
run;
proc tabulate data=a;
  class score / mlf;
  class age / mlf;
  format age agef. score pct.;
  table age all, n;
  table score, n;
run;
proc means data=a n sum;
  class age / mlf preloadfmt order=data;
  var score;
  format age agef.;
run;""")
    assert code == 0, log
    # $GRP.: 'Anyone' F and M (1..5: n 5, sum 15), 'Female' F (1 3 5: n 3, sum 9)
    assert re.search(r"^Anyone\s+5\s+5\s+15\.0+\s*$", lst, re.M), lst
    assert re.search(r"^Female\s+3\s+3\s+9\.0+\s*$", lst, re.M), lst
    # TABULATE: every label's cell; ALL counts each observation once (5, not 8)
    for label, n in (("Adult", 2), ("Child", 1), ("Teen", 2), ("Teen or less", 3)):
        assert re.search(rf"^age={label}\s+{n}\s*$", lst, re.M), lst
    assert re.search(r"^All\s+5\s*$", lst, re.M), lst
    # a MULTILABEL PICTURE: scores 1..5 → labels ' 1%' … ' 5%' (1 each) and none >= 50
    assert len(re.findall(r"^score=\s*\d%[ ]+1(?=\s)", lst, re.M)) == 5, lst
    # PRELOADFMT ORDER=DATA: the levels in the format's stored order (by start; 0-19 was given before 0-12)
    assert re.findall(r"^(Teen or less|Child|Teen|Adult)[ ]+(\d)[ ]+\d[ ]+(\d)\.0+(?=\s)", lst, re.M) == [
        ("Teen or less", "3", "6"), ("Child", "1", "1"), ("Teen", "2", "5"), ("Adult", "2", "9")], lst


def test_overlap_without_multilabel_is_an_error_and_cntl_keeps_multilabel(session):
    code, log, _ = run_sas(session, "proc format;\n  value bad 0-19 = 'a' 13-19 = 'b';\nrun;")
    assert code != 0
    assert "ERROR: This range is repeated, or values overlap: 13-19" in log, log
    code, log, _ = run_sas(session, "proc format;\n  value $bad 'A'-'C' = 'a to c' 'B' = 'b';\nrun;")
    assert code != 0
    assert "ERROR: This range is repeated, or values overlap: B-B" in log, log
    code, log, _ = run_sas(session, HEAD + """proc format cntlout=ctl;
  value agef (multilabel) 0-19 = 'Teen or less' 13-19 = 'Teen';
run;
data ctl;
  set ctl;
  fmtname = 'AGEG';
  put hlo=;
run;
proc format cntlin=ctl;
run;
data _null_;
  x = put(15, ageg.);
  put x=;
run;""")
    assert code == 0, log
    assert log.count("HLO=M") == 2 and "x=Teen or less" in log, log
