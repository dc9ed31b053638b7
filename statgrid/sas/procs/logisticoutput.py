"""PROC LOGISTIC's OUTPUT statement, read as SAS writes it and written from the engine's scores
(procs/logistic_output.py):

    OUTPUT <OUT=ds> <P=|PRED=|PREDICTED=|PROB= name> <XBETA= name> <STDXBETA= name> <LOWER=|L= name>
           <UPPER=|U= name> </ ALPHA=p>;

OUT= holds every input variable, each statistic named, and _LEVEL_ (the response level whose probability P=
gives), every observation of the input in order (BY groups one after another). Without OUT= the data set is
named DATAn, as SAS names it. The statistics SAS has beyond these (RESCHI=, RESDEV=, H=, C=, DFBETAS=,
PREDPROBS= …) are an ERROR naming the keyword.
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.dataset import ColumnInfo

LABELS = {"p": "Estimated Probability", "xbeta": "Linear Predictor", "stdxbeta": "Standard Error of Linear Predictor",
          "lower": "Lower Confidence Limit", "upper": "Upper Confidence Limit"}


def parse(c, program: Any) -> dict:
    """{spec, names: statistic → name, alpha}: the OUTPUT statement read as GLM's and GENMOD's are
    (modeloutput.py), one name per statistic."""
    from statgrid.sas.procs import modeloutput
    out = modeloutput.parse(c, program, "LOGISTIC")
    out["names"] = {k: v[0] for k, v in out["names"].items()}
    return out


def write(program: Any, out: dict, parts: list, cols: list[ColumnInfo], response: str) -> None:
    """The scored BY groups (Arrow tables of the input's columns + statistics + _LEVEL_) as OUT=."""
    import pyarrow as pa

    from statgrid.libraries import sql_ident
    from statgrid.sas.procs.common import write_select

    table = pa.concat_tables(parts, promote_options="permissive") if len(parts) > 1 else parts[0]
    names = set(out["names"].values()) | {"_LEVEL_"}
    kept = [c for c in cols if c.name not in names]
    rtype = next((c.type for c in cols if c.name.upper() == response.upper()), "num")
    extra = [ColumnInfo(name, "num", 8, label=LABELS[k]) for k, name in out["names"].items()]
    extra.append(ColumnInfo("_LEVEL_", rtype, 8 if rtype == "num" else
                            max(1, max((len(str(x)) for x in table.column("_LEVEL_").to_pylist()), default=1)),
                            label="Response Value"))
    all_cols = kept + extra
    con = program.session.con
    view = "__sas_logistic_out"
    con.register(view, table)
    try:
        select = ", ".join(sql_ident(c.name) for c in all_cols)
        write_select(program, out["spec"], f"SELECT {select} FROM {view}", all_cols)
    finally:
        con.unregister(view)


def lackfit_tables(result: Any) -> list:
    """MODEL / LACKFIT: SAS's LackFitPartition ("Partition for the Hosmer and Lemeshow Test") and LackFitChiSq
    ("Hosmer and Lemeshow Goodness-of-Fit Test") from the engine's hosmer_lemeshow."""
    from statgrid.sas.ods import OdsColumn as Col, OdsTable

    hl = (getattr(result, "stats", None) or {}).get("hosmer_lemeshow")
    if not hl:
        return []
    return [OdsTable("LackFitPartition", "Partition for the Hosmer and Lemeshow Test", [
        Col("Group", fmt="int"), Col("Total", fmt="int"), Col("EventsObserved", "Events Observed", fmt="int"),
        Col("EventsExpected", "Events Expected", fmt="d2"), Col("NoneventsObserved", "Nonevents Observed", fmt="int"),
        Col("NoneventsExpected", "Nonevents Expected", fmt="d2")], [list(r) for r in hl["table"]], "Logistic"),
        OdsTable("LackFitChiSq", "Hosmer and Lemeshow Goodness-of-Fit Test", [
            Col("ChiSq", "Chi-Square", fmt="d4"), Col("DF", fmt="int"), Col("ProbChiSq", "Pr > ChiSq", fmt="p")],
            [[hl["chisq"], hl["df"], hl["p"]]], "Logistic")]
