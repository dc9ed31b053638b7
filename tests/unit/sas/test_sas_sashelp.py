"""SASHELP.CLASS in every SAS session, read-only. Expected figures are the ones SAS's manuals print for it
(Base SAS Procedures Guide, PROC MEANS over SASHELP.CLASS: Height mean 62.3368421, Weight mean 100.0263158,
N 19; PROC FREQ: F 9, M 10)."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


def test_sashelp_class_reads_as_sas_prints_it(session):
    code, log, lst = run_sas(session, """proc means data=sashelp.class n mean; var height weight; run;
proc freq data=sashelp.class; tables sex / out=f noprint; run;""")
    assert code == 0, log
    assert "62.3368421" in lst and "100.0263158" in lst
    got = {r["Sex"]: r["COUNT"] for r in session.fetch_arrow("SELECT * FROM " + session.ref("work.f").scan_sql())
           .to_pylist()}
    assert got == {"F": 9, "M": 10}


def test_sashelp_is_read_only_and_other_libraries_are_untouched(session):
    code, log, _ = run_sas(session, "data sashelp.mine; x = 1; run;\n")
    assert code == 1 and "SASHELP is read-only" in log
    assert "sashelp" in session.libraries and session.libraries.get("sashelp").readonly
    assert not any(p.name.startswith("mine") for p in session.libraries.get("sashelp").path.iterdir())
