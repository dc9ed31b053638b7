"""Special missing values .A-.Z and ._ through a data set (SAS 9.4 Language Reference: Concepts, "Missing
Values": a special missing value is stored as such and keeps its letter when the data set is read again; PUT
writes the letter, ._ as _). Parquet has one null: the letters ride in the file's key-value metadata and the
DATA step's SET gives them back. Expected values by hand."""
from __future__ import annotations

import json

import pyarrow.parquet as pq

from tests.unit.sas.standins import rows, run_sas


def run(session, text):
    code, log, _ = run_sas(session, text, procs={}, header=False)
    return code, log


def test_letters_survive_write_and_read(session):
    code, log = run(session, """data s; x=.a; y=._; z=.; w=.z; output; x=2; y=.; output; x=.; output; run;
data t; set s; isa = (x = .a); put '>' x= y= z= w= isa=; run;
data t2; set s(firstobs=2); put '>2 ' x= w=; run;
data u; set s(where=(x ne 2)); put '>w ' x=; run;
data m; merge s(keep=w) s(keep=x firstobs=2); put '>m ' x= w=; run;
data v; set s; if _n_ = 3 then x = .b; run;
data _null_; set v; put '>v ' x=; run;""")
    assert code == 0, log
    got = [ln[1:] for ln in log.splitlines() if ln.startswith(">")]
    assert got[:3] == ["x=A y=_ z=. w=Z isa=1", "x=2 y=. z=. w=Z isa=0", "x=. y=. z=. w=Z isa=0"]
    assert got[3:5] == ["2 x=2 w=Z", "2 x=. w=Z"]              # FIRSTOBS=2: rows 2 and 3 of the file
    assert got[5:7] == ["w x=A", "w x=."]                      # WHERE=: rows 1 and 3, each with its letter
    assert got[7:10] == ["m x=2 w=Z", "m x=. w=Z", "m x=. w=Z"]  # one-to-one MERGE: x from rows 2, 3
    assert got[10:] == ["v x=A", "v x=2", "v x=B"]
    assert [r["x"] for r in rows(session, "work.s")] == [None, 2.0, None]
    meta = json.loads(pq.read_metadata(session.ref("work.s").path).metadata[b"statgrid.special_missing"])
    assert meta == {"x": {"0": "A"}, "y": {"0": "_"}, "w": {"0": "Z", "1": "Z", "2": "Z"}}
