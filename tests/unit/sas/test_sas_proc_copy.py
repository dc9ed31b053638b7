"""PROC COPY (Base SAS Procedures: COPY) — IN= OUT= SELECT / EXCLUDE / MOVE, the DATASETS COPY statement as a
procedure of its own (it was 'Procedure COPY not found'). Members by hand."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


def test_copy_select_exclude_and_move(session, tmp_path):
    dest = tmp_path / "dest"
    dest.mkdir()
    code, log, _ = run_sas(session, f"""libname dest '{dest}';
data a; x = 1; run; data b; y = 2; run; data c; z = 3; run;
proc copy in=work out=dest; select a b; run;
proc copy in=work out=dest move; exclude a b; run;
proc copy in=work out=dest; select nosuch; bogus; run;
""")
    assert sorted(p.name for p in dest.iterdir()) == ["a.parquet", "b.parquet", "c.parquet"]
    assert session.ref("work.a").exists() and not session.ref("work.c").exists()     # C moved, A copied
    assert "NOTE: Moving WORK.C to DEST.C (memtype=DATA)." in log
    assert code == 1 and "BOGUS" in log.upper()
