"""PROC GLM SOLUTION in SAS's listing: an aliased parameter's missing values. By hand (SASHELP.CLASS)."""
from __future__ import annotations

from tests.unit.sas.standins import run_sas


def test_glm_aliased_parameter_prints_missing_values(session):
    """PROC GLM SOLUTION: an aliased parameter (Sex M, set to 0 and flagged B) has '.' for its standard error,
    t value and p-value in SAS's listing, and missing values in ODS OUTPUT ParameterEstimates."""
    code, log, lst = run_sas(session, "ods output ParameterEstimates=pe;\n"
                                      "proc glm data=sashelp.class; class sex; model weight = sex height / solution;"
                                      " run; quit;")
    assert code == 0, log
    line = next(ln for ln in lst.split("\n") if "Sex M" in ln)
    assert line.split()[2:] == ["0.0000000", "B", ".", ".", "."]
    row = next(r for r in session.fetch_arrow("SELECT * FROM " + session.ref("work.pe").scan_sql()).to_pylist()
               if r["Parameter"].strip() == "Sex M")
    assert row["StdErr"] is None and row["tValue"] is None and row["Probt"] is None
