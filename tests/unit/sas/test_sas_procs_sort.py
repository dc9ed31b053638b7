"""PROC SORT over real Parquet data in a tmp library through a real session: orders, NODUPKEY, NODUPRECS,
DUPOUT=, OUT= with data set options, SORTSIZE= as the engine's memory limit, SAS's NOTEs and ERRORs.
Expected data sets are computed independently with DuckDB SQL over the same Parquet file (window
functions over the file row number), never by the code under test."""
from __future__ import annotations

import io
import random
import re

import pyarrow.parquet as pq

from statgrid.sas.program import run_program
from statgrid.sas.saslog import SasLog
from statgrid.session.log import SessionLog
from tests.unit.sas.standins import assert_errors


def run_sas(session, text):
    t, lst = io.StringIO(), io.StringIO()
    log = SasLog(SessionLog(text=t, jsonl=io.StringIO(), listing=lst))
    code = run_program(text, session, log)
    return code, t.getvalue(), lst.getvalue()


def make_data(session, tmp_path, n=3000, seed=7):
    """id (with missings), grp (char), val, in a random order with many ties."""
    lib = tmp_path / "lib"
    lib.mkdir(exist_ok=True)
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        i = rng.choice([None, 1.0, 2.0, 3.0, 4.0, 5.0, -1.5])
        g = rng.choice(["a", "b", "c", ""])
        v = float(rng.randint(0, 3))
        rows.append(f"({'NULL' if i is None else i}::DOUBLE, '{g}', {v}::DOUBLE)")
    session.execute(f"COPY (SELECT * FROM (VALUES {', '.join(rows)}) v(id, grp, val)) "
                    f"TO '{lib}/raw.parquet' (FORMAT parquet)").fetchall()
    session.libname("t", lib)
    return lib


def rows(session, path):
    return session.execute(f"SELECT * FROM read_parquet('{path}')").fetchall()


def expected(session, lib, sql):
    """`sql` over the input with `n` its 1-based row number in the file."""
    return session.execute(f"WITH src AS (SELECT *, file_row_number + 1 AS n FROM "
                           f"read_parquet('{lib}/raw.parquet', file_row_number=true)) {sql}").fetchall()


def norm(rs):
    """'' and NULL are the same character missing once through SAS (a blank value)."""
    return [tuple("" if (j == 1 and v is None) else v for j, v in enumerate(r)) for r in rs]


def test_sort_orders_missing_first_descending_and_keeps_input_order(session, tmp_path):
    lib = make_data(session, tmp_path)
    code, log, _ = run_sas(session, """proc sort data=t.raw out=t.s1; by id; run;
proc sort data=t.raw out=t.s2; by grp descending id; run;
""")
    assert code == 0, log
    want1 = expected(session, lib, "SELECT id, grp, val FROM src ORDER BY id ASC NULLS FIRST, n")
    want2 = expected(session, lib, "SELECT id, grp, val FROM src ORDER BY grp, id DESC NULLS LAST, n")
    assert norm(rows(session, lib / "s1.parquet")) == norm(want1)
    assert norm(rows(session, lib / "s2.parquet")) == norm(want2)
    assert "NOTE: There were 3000 observations read from the data set T.RAW." in log
    assert "NOTE: The data set T.S1 has 3000 observations and 3 variables." in log


def test_nodupkey_dupout_and_notes(session, tmp_path):
    lib = make_data(session, tmp_path)
    code, log, _ = run_sas(session, "proc sort data=t.raw out=t.u nodupkey dupout=t.d; by grp id; run;")
    assert code == 0, log
    ranked = ("SELECT id, grp, val, row_number() OVER (PARTITION BY grp, id ORDER BY n) AS k, n FROM src")
    keep = expected(session, lib, f"SELECT id, grp, val FROM ({ranked}) WHERE k = 1 "
                                  "ORDER BY grp, id ASC NULLS FIRST, n")
    dups = expected(session, lib, f"SELECT id, grp, val FROM ({ranked}) WHERE k > 1 "
                                  "ORDER BY grp, id ASC NULLS FIRST, n")
    assert norm(rows(session, lib / "u.parquet")) == norm(keep)
    assert norm(rows(session, lib / "d.parquet")) == norm(dups)
    assert len(keep) == 4 * 7
    assert f"NOTE: {3000 - len(keep)} observations with duplicate key values were deleted." in log
    assert f"NOTE: The data set T.U has {len(keep)} observations and 3 variables." in log
    assert f"NOTE: The data set T.D has {len(dups)} observations and 3 variables." in log


def test_noduprecs_deletes_only_adjacent_duplicates(session, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    # by k: the two (1,'x') rows are not adjacent after the sort ((1,'y') sits between them, EQUALS)
    session.execute(f"COPY (SELECT * FROM (VALUES (1.0, 'x'), (1.0, 'y'), (1.0, 'x'), (2.0, 'z'), (2.0, 'z'), "
                    f"(2.0, 'z')) v(k, s)) TO '{lib}/r.parquet' (FORMAT parquet)").fetchall()
    session.libname("t", lib)
    code, log, _ = run_sas(session, "proc sort data=t.r out=t.o noduprecs dupout=t.d; by k; run;")
    assert code == 0, log
    assert rows(session, lib / "o.parquet") == [(1.0, "x"), (1.0, "y"), (1.0, "x"), (2.0, "z")]
    assert rows(session, lib / "d.parquet") == [(2.0, "z"), (2.0, "z")]
    assert "NOTE: 2 duplicate observations were deleted." in log


def test_in_place_out_options_and_sortsize(session, tmp_path):
    lib = make_data(session, tmp_path, n=500)
    issued = []

    class Recorder:                    # records the SQL the step sends, passes everything on
        def __init__(self, con):
            self.con = con

        def execute(self, sql, *a):
            issued.append(sql)
            return self.con.execute(sql, *a)

        def __getattr__(self, name):
            return getattr(self.con, name)
    real = session.con
    session.con = Recorder(real)
    try:
        code, log, _ = run_sas(session, """options sortsize=64M;
proc sort data=t.raw(where=(val > 1)) out=t.o(rename=(val=v) drop=grp); by descending val id; run;
proc sort data=t.raw sortsize=32M; by val; run;""")
    finally:
        session.con = real
    assert code == 0, log
    want = expected(session, lib, "SELECT id, val FROM src WHERE val > 1 ORDER BY val DESC NULLS LAST, "
                                  "id ASC NULLS FIRST, n")
    got = rows(session, lib / "o.parquet")
    assert got == want
    assert pq.read_schema(lib / "o.parquet").names == ["id", "v"]
    assert [f"SET memory_limit = '{64 * 1024**2}B'", f"SET memory_limit = '{32 * 1024**2}B'"] == [
        s for s in issued if s.startswith("SET memory_limit") and "536870912" not in s]
    # the session's MEMSIZE back after each sort, and once from OPTIONS SORTSIZE= (it sets the session's sortsize,
    # which re-applies the engine options)
    assert issued.count("SET memory_limit = '536870912B'") == 3
    assert session.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] in ("512.0 MiB", "512 MiB")
    # in place: the input replaced, sorted by val (stable)
    in_place = rows(session, lib / "raw.parquet")
    assert [r[2] for r in in_place] == sorted(r[2] for r in in_place)
    assert "NOTE: The data set T.RAW has 500 observations and 3 variables." in log


def test_errors_leave_data_untouched(session, tmp_path):
    lib = make_data(session, tmp_path, n=50)
    before = (lib / "raw.parquet").read_bytes()
    code, log, _ = run_sas(session, """proc sort data=t.raw nodupkeys; by id; run;
proc sort data=t.raw; by id; run;""")
    assert code == 1
    assert "The option or parameter nodupkeys is not recognized in the PROC SORT statement" in log
    assert "(line 1, column 22)" in " ".join(x.strip() for x in log.split("\n"))
    assert re.search(r"WARNING: (The )?[Dd]ata set T\.RAW was not replaced because this step was stopped\.", log)
    assert (lib / "raw.parquet").read_bytes() == before
    assert_errors(run_sas, session, [("proc sort data=t.raw; run;", "No BY statement was specified for PROC SORT"),
                                     ("proc sort data=t.raw; by nosuch; run;", "Variable nosuch not found"),
                                     ("proc sort data=t.raw; by id; where id > 1; run;", "Statement WHERE is not valid")])
    assert (lib / "raw.parquet").read_bytes() == before
