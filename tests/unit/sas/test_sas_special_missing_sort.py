"""Special missing values (.A-.Z, ._) through PROC SORT, and the MISSING statement as a global statement.

SAS 9.4 Language Reference: Concepts, "Order of Missing Values": ._ < . < .A < … < .Z < any number (DESCENDING
the reverse); PROC SORT keeps each value's letter (the letter is part of a NODUPKEY key: .A and .B differ).
SAS 9.4 Global Statements, MISSING: valid anywhere, global in scope — letters declared before a DATA step are
read by its INPUT as special missing values. Expected orders are worked out by hand from the rule above."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas

DATA = """missing a b _;
data one;
  input id x y;
  datalines;
1 3 1
2 A 2
3 . 3
4 B A
5 1 5
6 _ 6
7 A 7
8 -2 8
;
"""


def put_lines(log: str, tag: str) -> list[str]:
    return [ln[len(tag) + 1:] for ln in log.splitlines() if ln.startswith(tag + " ")]


def test_global_missing_statement_then_sort_ascending_keeps_letters_in_sas_order(session):
    code, log, _ = run_sas(session, DATA + "proc sort data=one out=s; by x; run;\n"
                                           "data _null_; set s; put 'S ' id x y; run;")
    assert code == 0, log
    assert "Invalid data" not in log
    # ._ then . then .A (ids 2, 7 in input order) then .B then the numbers
    assert put_lines(log, "S") == ["6 _ 6", "3 . 3", "2 A 2", "7 A 7", "4 B A", "8 -2 8", "5 1 5", "1 3 1"]


def test_sort_descending_reverses_the_missing_order(session):
    code, log, _ = run_sas(session, DATA + "proc sort data=one out=d; by descending x; run;\n"
                                           "data _null_; set d; put 'D ' id x; run;")
    assert code == 0, log
    assert put_lines(log, "D") == ["1 3", "5 1", "8 -2", "4 B", "2 A", "7 A", "3 .", "6 _"]


def test_nodupkey_treats_each_letter_as_its_own_key_and_dupout_keeps_its_letter(session):
    code, log, _ = run_sas(session, DATA + "proc sort data=one out=k nodupkey dupout=dd; by x; run;\n"
                                           "data _null_; set k; put 'K ' id x; run;\n"
                                           "data _null_; set dd; put 'X ' id x; run;")
    assert code == 0, log
    assert "NOTE: 1 observations with duplicate key values were deleted." in log
    assert put_lines(log, "K") == ["6 _", "3 .", "2 A", "4 B", "8 -2", "5 1", "1 3"]
    assert put_lines(log, "X") == ["7 A"]


def test_letters_follow_rename_and_drop_on_out_and_a_non_key_column_and_in_place_sort(session):
    code, log, _ = run_sas(session, DATA + "proc sort data=one out=r(rename=(x=xx) drop=id); by y; run;\n"
                                           "data _null_; set r; put 'R ' xx y; run;\n"
                                           "proc sort data=one; by x id; run;\n"
                                           "data _null_; set one; if x = .A then put 'A ' id; run;")
    assert code == 0, log
    # by y: .A (id 4's y) first, then 1 2 3 5 6 7 8
    assert put_lines(log, "R") == ["B A", "3 1", "A 2", ". 3", "1 5", "_ 6", "A 7", "-2 8"]
    assert put_lines(log, "A") == ["2", "7"]


def test_missing_statement_outside_a_step_refuses_a_word(session):
    code, log, _ = run_sas(session, "missing ab;\n")
    assert code == 1
    assert "The MISSING statement takes single letters A-Z or _" in log


def test_proc_append_keeps_the_letters_of_the_base_and_of_the_new_rows(session):
    code, log, _ = run_sas(session, """missing a b;
data one; input id x; datalines;
1 A
2 3
;
data two; input id x; datalines;
3 B
4 5
;
data two2; input id x; datalines;
9 A
10 B
11 7
;
proc append base=one data=two; run;
proc append base=one data=two2(firstobs=2); run;
proc append base=fresh data=two; run;
data _null_; set one; put 'AP ' id x; run;
data _null_; set fresh; put 'FR ' id x; run;""")
    assert code == 0, log
    assert put_lines(log, "AP") == ["1 A", "2 3", "3 B", "4 5", "10 B", "11 7"]
    assert put_lines(log, "FR") == ["3 B", "4 5"]


def test_proc_transpose_moves_the_letters_with_their_values(session):
    code, log, _ = run_sas(session, """missing a b;
data one; input g id x; datalines;
1 1 A
1 2 3
2 3 B
2 4 .
;
proc transpose data=one out=t; by g; var x; id id; run;
data _null_; set t; put 'T ' g _1 _2 _3 _4; run;""")
    assert code == 0, log
    assert put_lines(log, "T") == ["1 A 3 . .", "2 . . B ."]


def test_proc_freq_counts_each_special_missing_value_as_its_own_level(session):
    """SAS: with MISSING each of ., .A, .B is a level of its own (in SAS's order, before the numbers) and OUT=
    keeps the letters; without it they are all 'Frequency Missing'."""
    code, log, lst = run_sas(session, """missing a b;
data one; input id x g; datalines;
1 A 1
2 3 1
3 . 2
4 B 2
5 A 1
6 1 2
;
proc freq data=one; tables x / missing out=fo; run;
proc freq data=one; tables x; run;
proc freq data=one noprint; tables g*x / missing out=fx; run;
data _null_; set fo; put 'FO ' x count; run;
data _null_; set fx; put 'FX ' g x count; run;""")
    assert code == 0, log
    assert put_lines(log, "FO") == [". 1", "A 2", "B 1", "1 1", "3 1"]
    assert put_lines(log, "FX") == ["1 A 2", "1 3 1", "2 . 1", "2 B 1", "2 1 1"]
    rows = [ln.split() for ln in lst.splitlines() if ln.split()[:1] in (["A"], ["B"], ["."])]
    assert rows[:3] == [[".", "1", "16.67", "1", "16.67"], ["A", "2", "33.33", "3", "50.00"],
                        ["B", "1", "16.67", "4", "66.67"]]
    assert "Frequency Missing = 4" in lst


def test_means_class_with_missing_keeps_a_level_per_letter(session):
    """MEANS/SUMMARY CLASS with MISSING: ., .A and .B are levels of their own (SAS's order after .), shown and
    written with their letters; without MISSING all of them are left out."""
    code, log, lst = run_sas(session, """missing a b;
data one; input g x; datalines;
A 1
1 2
. 3
B 4
A 5
1 6
;
proc means data=one n sum missing; class g; var x; output out=mo n=n sum=s; run;
proc summary data=one nway; class g; var x; output out=mn n=n; run;
data _null_; set mo; put 'MO ' _type_ g n s; run;
data _null_; set mn; put 'MN ' g n; run;""")
    assert code == 0, log
    assert put_lines(log, "MO") == ["0 . 6 21", "1 . 1 3", "1 A 2 6", "1 B 1 4", "1 1 2 8"]
    assert put_lines(log, "MN") == ["1 2"]
    body = [ln.split()[:3] for ln in lst.splitlines() if ln.split()[:1] in (["A"], ["B"])]
    assert body == [["A", "2", "2"], ["B", "1", "1"]]
