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
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME
from statgrid.sas.parse.dsname import DatasetSpec, parse_dataset

KEYWORDS = {"P": "p", "PRED": "p", "PREDICTED": "p", "PROB": "p", "XBETA": "xbeta", "STDXBETA": "stdxbeta",
            "LOWER": "lower", "L": "lower", "UPPER": "upper", "U": "upper"}
NOT_BUILT = {"RESCHI", "RESDEV", "RESLIK", "STDRESCHI", "STDRESDEV", "H", "C", "CBAR", "DFBETAS", "DIFDEV",
             "DIFCHISQ", "PREDPROBS", "STDXBETA_", "ICPLFUNC"}
LABELS = {"p": "Estimated Probability", "xbeta": "Linear Predictor", "stdxbeta": "Standard Error of Linear Predictor",
          "lower": "Lower Confidence Limit", "upper": "Upper Confidence Limit"}
VALID = "OUT=, P=, XBETA=, STDXBETA=, LOWER=, UPPER=, / ALPHA="


def parse(c, program: Any) -> dict:
    out: dict[str, Any] = {"spec": None, "names": {}, "alpha": 0.05}
    while not c.at_end():
        if c.accept("/"):
            t = c.expect_kind(NAME, "ALPHA=")
            if t.upper != "ALPHA":
                raise SasError(f"The option {t.text} is not recognized in the OUTPUT statement of PROC LOGISTIC",
                               t.line, t.col, t.text, "ALPHA=")
            c.expect("=", expected="= after ALPHA")
            v = c.next()
            out["alpha"] = float(v.value) if isinstance(v.value, (int, float)) else float("nan")
            if not 0 < out["alpha"] < 1:
                raise SasError(f"ALPHA={v.text} must be between 0 and 1", v.line, v.col, v.text, "ALPHA=0.05")
            continue
        t = c.expect_kind(NAME, VALID)
        key = t.upper
        if key in NOT_BUILT:
            raise SasError(f"The OUTPUT statistic {t.text.upper()}= of PROC LOGISTIC is not supported by statgrid yet",
                           t.line, t.col, t.text, VALID)
        if key != "OUT" and key not in KEYWORDS:
            raise SasError(f"The keyword {t.text} is not recognized in the OUTPUT statement of PROC LOGISTIC", t.line,
                           t.col, t.text, VALID)
        c.expect("=", expected=f"= after {key}")
        if key == "OUT":
            out["spec"] = parse_dataset(c, program)
        else:
            out["names"][KEYWORDS[key]] = c.expect_kind(NAME, "a variable name").text
    if out["spec"] is None:
        from statgrid.sas.parse.dsname import next_data_name
        out["spec"] = DatasetSpec("WORK", next_data_name(program, "WORK"))
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
