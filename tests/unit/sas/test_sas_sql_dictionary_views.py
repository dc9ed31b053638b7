"""DICTIONARY.TABLES lists a view as MEMTYPE='VIEW' (no row count) and never the internal member a view's rows
are read into; a data set's label is its MEMLABEL (SAS 9.4 SQL Procedure User's Guide, DICTIONARY tables)."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


def test_views_are_views_and_labels_are_memlabels(session):
    code, log, _ = run_sas(session, """data emp(label='Staff'); input id dept $; datalines;
1 A
2 B
;
proc sql;
  create view v as select * from emp where dept in (select dept from emp where id = 1);
  select count(*) into :nv from v;
  create table t as select memname, memtype, nobs, memlabel from dictionary.tables where libname = 'WORK'
    order by memname;
quit;
""")
    assert code == 0, log
    got = [(r["memname"], r["memtype"], r["nobs"], r["memlabel"])
           for r in session.fetch_arrow("SELECT * FROM " + session.ref("work.t").scan_sql()).to_pylist()]
    assert got == [("EMP", "DATA", 2.0, "Staff"), ("V", "VIEW", None, "")]
