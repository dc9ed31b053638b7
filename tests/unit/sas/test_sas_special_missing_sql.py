"""Special missing values (.A-.Z, ._) through PROC SQL over one data set (SAS 9.4 SQL Procedure User's Guide:
SAS's missing values in comparisons and sorting). A letter is kept through SELECT * / plain columns / aliases,
WHERE and ORDER BY, into CREATE TABLE, the listing and INTO; ORDER BY puts them in SAS's order (._ < . < .A < …
< .Z < numbers; DESC the reverse); `x = .A` is true for .A only, `x = .` for the ordinary missing only, and
`x IS MISSING` for all. Expected rows worked out by hand from the data (DATA, shared with the PROC SORT tests)."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas
from tests.unit.sas.test_sas_special_missing_sort import DATA, put_lines


def test_create_table_order_by_keeps_letters_in_sas_order(session):
    code, log, _ = run_sas(session, DATA + "proc sql; create table q as select * from one order by x; quit;\n"
                                           "data _null_; set q; put 'Q ' id x y; run;")
    assert code == 0, log
    assert put_lines(log, "Q") == ["6 _ 6", "3 . 3", "2 A 2", "7 A 7", "4 B A", "8 -2 8", "5 1 5", "1 3 1"]


def test_where_tells_letters_apart_and_alias_keeps_the_letter(session):
    code, log, _ = run_sas(session, DATA + """proc sql;
  create table w as select id, x as xx from one where x = .A;
  create table w2 as select id from one where x = . ;
  create table w3 as select id, y from one where x is missing order by 2 desc;
  create table w4 as select id from one where x ne .A and x ne .;
quit;
data _null_; set w; put 'W ' id xx; run;
data _null_; set w2; put 'W2 ' id; run;
data _null_; set w3; put 'W3 ' id y; run;
data _null_; set w4; put 'W4 ' id; run;""")
    assert code == 0, log
    assert put_lines(log, "W") == ["2 A", "7 A"]
    assert put_lines(log, "W2") == ["3"]
    assert put_lines(log, "W3") == ["7 7", "6 6", "3 3", "2 2", "4 A"]
    assert put_lines(log, "W4") == ["1", "4", "5", "6", "8"]


def test_listing_and_into_show_the_letters(session):
    code, log, lst = run_sas(session, DATA + """proc sql;
  select id, x, y from one order by x desc, id;
  select x into :xs separated by ' ' from one;
quit;
%put XS=&xs;""")
    assert code == 0, log
    assert "XS=3 A . B 1 _ A -2" in log
    body = [ln.split() for ln in lst.splitlines() if ln.strip() and ln.split()[0].lstrip("-").isdigit()]
    assert body == [["1", "3", "1"], ["5", "1", "5"], ["8", "-2", "8"], ["4", "B", "A"], ["2", "A", "2"],
                    ["7", "A", "7"], ["3", ".", "3"], ["6", "_", "6"]]


def test_aggregates_and_joins_still_run(session):
    code, log, lst = run_sas(session, DATA + """proc sql;
  create table agg as select count(*) as n, nmiss(x) as m, sum(x) as s from one;
  create table j as select a.id, b.y from one a, one b where a.id = b.id order by a.id;
quit;
data _null_; set agg; put 'AGG ' n m s; run;""")
    assert code == 0, log
    assert put_lines(log, "AGG") == ["8 5 2"]
    assert "Table WORK.J created, with 8 rows and 2 columns." in log


def test_tables_rewritten_in_place_keep_their_letters(session):
    """DATASETS MODIFY (RENAME, FORMAT), SQL INSERT, UPDATE (the SET column's letter goes on the rows updated)
    and DELETE (the rows after a deleted one move up) rewrite the file: the letters stay with their rows."""
    code, log, _ = run_sas(session, """missing a b;
data one; input id x y; datalines;
1 A 1
2 3 B
3 B 4
;
proc datasets lib=work nolist; modify one; rename y=yy; format x 8.2; quit;
data _null_; set one; put 'MOD ' id x yy; run;
proc sql; insert into one values (4, 9, 9); quit;
data _null_; set one; put 'INS ' id x yy; run;
proc sql; update one set yy = 0 where id in (1, 2); quit;
data _null_; set one; put 'UPD ' id x yy; run;
proc sql; delete from one where id = 2; quit;
data _null_; set one; put 'DEL ' id x yy; run;""")
    assert code == 0, log
    assert [s.split() for s in put_lines(log, "MOD")] == [["1", "A", "1"], ["2", "3.00", "B"], ["3", "B", "4"]]
    assert [s.split() for s in put_lines(log, "INS")][-1] == ["4", "9.00", "9"]
    assert [s.split() for s in put_lines(log, "INS")][:3] == [["1", "A", "1"], ["2", "3.00", "B"], ["3", "B", "4"]]
    assert [s.split() for s in put_lines(log, "UPD")] == [["1", "A", "0"], ["2", "3.00", "0"], ["3", "B", "4"],
                                                         ["4", "9.00", "9"]]
    assert [s.split() for s in put_lines(log, "DEL")] == [["1", "A", "0"], ["3", "B", "4"], ["4", "9.00", "9"]]


def test_review_cases_subquery_dml_alias_rename_and_no_tables_left(session):
    """A subquery's `x = .` is about its own table; DELETE/UPDATE ... WHERE x = .A touch .A only; UPDATE's SET
    moves letters (x = x, w = x) and gives one (x = .Z); ORDER BY an alias sorts in SAS's missing order; the
    input's RENAME= keeps the letters under the new name; FREQ BY NOTSORTED over letters; no table is left."""
    code, log, lst = run_sas(session, """missing a b z;
data one; input id x w; datalines;
1 A 1
2 . 2
3 B 3
4 5 4
;
data two; input id x; datalines;
1 .
2 3
;
data t; set one; run;
proc sql; delete from t where x = .A; quit;
data _null_; set t; put 'D1 ' id x w; run;
data t; set one; run;
proc sql; update t set w = 0 where x = .A; quit;
data _null_; set t; put 'U1 ' id x w; run;
data t; set one; run;
proc sql; update t set x = x where id = 3; update t set x = .Z where id = 4; update t set w = x; quit;
data _null_; set t; put 'U2 ' id x w; run;
proc sql; create table sub as select id, x from one where id in (select id from two where x = .); quit;
data _null_; set sub; put 'SQ ' id x; run;
proc sql; create table o as select id, x as xx from one order by xx; create view v as select * from one; quit;
data _null_; set o; put 'O ' id xx; run;
proc sort data=one(rename=(x=q)) out=s7; by q; run;
data _null_; set s7; put 'S7 ' id q; run;
proc freq data=one; by w notsorted; tables x / missing out=fo; run;
data _null_; set fo; put 'FO ' w x count; run;""")
    assert code == 0, log
    assert put_lines(log, "D1") == ["2 . 2", "3 B 3", "4 5 4"]
    assert put_lines(log, "U1") == ["1 A 0", "2 . 2", "3 B 3", "4 5 4"]
    assert put_lines(log, "U2") == ["1 A A", "2 . .", "3 B B", "4 Z Z"]
    assert put_lines(log, "SQ") == ["1 A"]
    assert put_lines(log, "O") == ["2 .", "1 A", "3 B", "4 5"]
    assert put_lines(log, "S7") == ["2 .", "1 A", "3 B", "4 5"]
    assert put_lines(log, "FO") == ["1 A 1", "2 . 1", "3 B 1", "4 5 1"]
    left = session.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '__sas_special%' "
                           "OR table_name LIKE '__sas_sql_rows%'").fetchall()
    assert left == []


def test_outobs_limits_a_created_table_and_append_never_drops_base_rows(session):
    """SAS 9.4 SQL Procedure: OUTOBS= restricts the rows PROC SQL displays or writes to a table (WARNING when
    the query had more); PROC APPEND reads only DATA= — a WHERE= on BASE= never deletes the base's rows."""
    code, log, _ = run_sas(session, """data b; do i = 1 to 5; output; end; run;
proc sql outobs=3; create table c as select * from b order by i desc; create table d as select * from b where i < 3;
quit;
data e; i = 9; run;
proc append base=b(where=(i > 3)) data=e; run;
data _null_; set c; put 'C ' i; run;
data _null_; set d; put 'D ' i; run;
data _null_; set b; put 'B ' i; run;""")
    assert code == 0, log
    assert log.count("WARNING: Statement terminated early due to OUTOBS=3 option.") == 1
    assert put_lines(log, "C") == ["5", "4", "3"]
    assert put_lines(log, "D") == ["1", "2"]
    assert put_lines(log, "B") == ["1", "2", "3", "4", "5", "9"]
