"""Defects found by running analysts' style programs (helper dsmoke), each against SAS's documented
behaviour; expected values by hand from the programs' data."""
from __future__ import annotations

from tests.unit.sas.standins import rows, run_sas


def run(session, text):
    code, log, _ = run_sas(session, text, procs={}, header=False)
    return code, log


def test_line_pointer_hash_n_reads_the_observations_records(session, tmp_path):
    # SAS 9.4 Statements: INPUT, "Line Pointer Controls": #n goes to record n of the observation's records;
    # their number is INFILE N=, by default the highest #n (here 3); the file ends inside the third
    # observation: LOST CARD, that observation is not written. `/` reads the next record.
    f = tmp_path / "multi.txt"
    f.write_text("Smith\nDept A 12\n100\nJones\nDept B xx\n200\nOdd\n")
    code, log = run(session, f"""data m1;
  infile '{f}';
  input #2 dept $ 1-6 n 8-9 #1 name $ #3 sal;
run;
data m2;
  infile '{f}' n=3;
  input name $ / dept $ 1-6 n 8-9;
run;
data m3; infile '{f}'; input name $ / / sal; run;
data m4;
  input #1 name $ 1-5 #2 @3 score 2.;
datalines;
alice
  95
bob
  80
;""")
    assert code == 0, log
    assert rows(session, "work.m1") == [{"dept": "Dept A", "n": 12.0, "name": "Smith", "sal": 100.0},
                                        {"dept": "Dept B", "n": None, "name": "Jones", "sal": 200.0}]
    # the invalid value is on the file's 5th record (the 2nd of the 2nd observation)
    assert "NOTE: Invalid data for n in line 5 8-9." in log
    # N=3 with `/` only: records 3 and 6 are part of the observations, not read into a variable
    assert rows(session, "work.m2") == [{"name": "Smith", "dept": "Dept A", "n": 12.0},
                                        {"name": "Jones", "dept": "Dept B", "n": None}]
    assert rows(session, "work.m3") == [{"name": "Smith", "sal": 100.0}, {"name": "Jones", "sal": 200.0}]
    assert log.count("NOTE: LOST CARD.") == 3
    assert rows(session, "work.m4") == [{"name": "alice", "score": 95.0}, {"name": "bob", "score": 80.0}]
