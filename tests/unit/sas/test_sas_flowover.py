"""INFILE's end-of-record options for column and formatted input (SAS 9.4 Statements: INFILE, "Comparing the
Behavior of FLOWOVER, MISSOVER, STOPOVER and TRUNCOVER"): a record of 1, 22, 333, 4444, 55555 read with
`input t 5.` gives 22, 4444, 55555 under FLOWOVER (the default: a field past the record's end is read from the
next record, and the NOTE "SAS went to a new line…"), ., ., ., ., 55555 under MISSOVER, all five under
TRUNCOVER, and under STOPOVER an ERROR, _ERROR_=1 and the step stopped at the first record. Expected values by
hand from the manual's example and the file's columns."""
from __future__ import annotations

from tests.unit.sas.standins import rows, run_sas

NOTE_NEW_LINE = "NOTE: SAS went to a new line when INPUT statement reached past the end of a line."


def run(session, text):
    code, log, _ = run_sas(session, text, procs={}, header=False)
    return code, log


def values(session, name, col):
    return [r[col] for r in rows(session, name)]


def test_formatted_input_flowover_missover_truncover(session, tmp_path):
    f = tmp_path / "n.txt"
    f.write_text("1\n22\n333\n4444\n55555\n")
    code, log = run(session, f"""data f; infile '{f}'; input t 5.; run;
data m; infile '{f}' missover; input t 5.; run;
data tr; infile '{f}' truncover; input t 5.; run;
data fo; infile '{f}' flowover pad lrecl=5; input t 5.; run;""")
    assert code == 0, log
    assert values(session, "work.f", "t") == [22.0, 4444.0, 55555.0]
    assert values(session, "work.m", "t") == [None, None, None, None, 55555.0]
    assert values(session, "work.tr", "t") == [1.0, 22.0, 333.0, 4444.0, 55555.0]
    assert values(session, "work.fo", "t") == [1.0, 22.0, 333.0, 4444.0, 55555.0]    # PAD: no record is short
    assert log.count(NOTE_NEW_LINE) == 1


def test_column_input_flowover_reads_its_columns_in_the_next_record_and_loses_the_card(session, tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("a1\nb2 7\nc3 456\nd4\n")
    code, log = run(session, f"""data a; infile '{f}'; input name $ 1-3 num 4-6; run;
data t; infile '{f}' truncover; input name $ 1-3 num 4-6; run;""")
    assert code == 0, log
    # obs 1: 'a1' ends before column 3 → name from record 2 (columns 1-3 'b2 '); num 4-6 past record 2's end
    # (length 4) → columns 4-6 of record 3 ('456'); obs 2: 'd4' short, no record after it → LOST CARD
    assert rows(session, "work.a") == [{"name": "b2", "num": 456.0}]
    assert "NOTE: LOST CARD." in log and NOTE_NEW_LINE in log
    assert rows(session, "work.t") == [{"name": "a1", "num": None}, {"name": "b2", "num": 7.0},
                                       {"name": "c3", "num": 456.0}, {"name": "d4", "num": None}]


def test_stopover_stops_at_the_short_record(session, tmp_path):
    f = tmp_path / "n.txt"
    f.write_text("12345\n1\n")
    code, log = run(session, f"""filename raw '{f}';
data s; infile raw stopover; input t 5.; run;
data s2; infile datalines stopover; input a b c; datalines;
1 2 3
4 5
6 7 8
;""")
    assert code == 1
    lines = log.splitlines()
    i = lines.index("ERROR: INPUT statement exceeded record length.  INFILE RAW OPTION STOPOVER specified.")
    assert lines[i + 1].startswith("RULE:") and lines[i + 2].split() == ["2", "1"]
    assert lines[i + 3] == "t=. _ERROR_=1 _N_=2"
    assert values(session, "work.s", "t") == [12345.0]
    j = lines.index("ERROR: INPUT statement exceeded record length.  INFILE CARDS OPTION STOPOVER specified.")
    assert lines[j + 3] == "a=4 b=5 c=. _ERROR_=1 _N_=2"
    assert rows(session, "work.s2") == [{"a": 1.0, "b": 2.0, "c": 3.0}]
