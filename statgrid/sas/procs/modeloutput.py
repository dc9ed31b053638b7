"""The OUTPUT statement of PROC GLM and PROC GENMOD, read as SAS writes it and written from the engines' scores
(procs/model_output.py):

    GLM:    OUTPUT <OUT=ds> keyword=names … </ ALPHA=p>;   keywords PREDICTED|P RESIDUAL|R STDP STDI STDR STUDENT
            H COOKD PRESS RSTUDENT DFFITS LCLM UCLM LCL UCL — with several responses, one name per response
    GENMOD: OUTPUT <OUT=ds> keyword=name … </ ALPHA=p>;   keywords PREDICTED|PRED|PROB|P XBETA STDXBETA LOWER|L
            UPPER|U RESRAW RESCHI

OUT= holds every input variable and each statistic named, every observation of the input in order (BY groups one
after another); without OUT= the data set is named DATAn. SAS's other keywords are an ERROR naming them.
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME
from statgrid.sas.parse.dsname import DatasetSpec, parse_dataset

KEYWORDS = {
    "GLM": {"P": "p", "PREDICTED": "p", "R": "r", "RESIDUAL": "r", "STDP": "stdp", "STDI": "stdi", "STDR": "stdr",
            "STUDENT": "student", "H": "h", "COOKD": "cookd", "PRESS": "press", "RSTUDENT": "rstudent",
            "DFFITS": "dffits", "LCLM": "lclm", "UCLM": "uclm", "LCL": "lcl", "UCL": "ucl"},
    "GENMOD": {"P": "p", "PRED": "p", "PREDICTED": "p", "PROB": "p", "XBETA": "xbeta", "STDXBETA": "stdxbeta",
               "LOWER": "lower", "L": "lower", "UPPER": "upper", "U": "upper", "RESRAW": "resraw",
               "RESCHI": "reschi"},
    "LOGISTIC": {"P": "p", "PRED": "p", "PREDICTED": "p", "PROB": "p", "XBETA": "xbeta", "STDXBETA": "stdxbeta",
                 "LOWER": "lower", "L": "lower", "UPPER": "upper", "U": "upper"},
}
NOT_BUILT = {"GLM": {"COVRATIO"},
             "LOGISTIC": {"RESCHI", "RESDEV", "RESLIK", "STDRESCHI", "STDRESDEV", "H", "C", "CBAR", "DFBETAS", "DIFDEV",
                          "DIFCHISQ", "PREDPROBS", "ICPLFUNC"},
             "GENMOD": {"RESDEV", "STDRESCHI", "STDRESDEV", "RESLIK", "HESSWGT", "LEVERAGE", "H", "COOKD", "DFBETA",
                        "DFBETAS", "STDRESLIK"}}
LABELS = {"p": "Predicted Value", "r": "Residual", "stdp": "Standard Error of Mean Predicted Value",
          "stdi": "Standard Error of Individual Prediction", "stdr": "Standard Error of Residual",
          "student": "Studentized Residual", "h": "Leverage", "cookd": "Cook's D Influence Statistic",
          "press": "Residual without Current Observation", "rstudent": "Studentized Residual without Current Obs",
          "dffits": "Standard Influence on Predicted Value", "lclm": "Lower Confidence Limit for Mean",
          "uclm": "Upper Confidence Limit for Mean", "lcl": "Lower Prediction Limit", "ucl": "Upper Prediction Limit",
          "xbeta": "Linear Predictor", "stdxbeta": "Standard Error of Linear Predictor",
          "lower": "Lower Confidence Limit", "upper": "Upper Confidence Limit", "resraw": "Raw Residual",
          "reschi": "Pearson Residual"}


def parse(c, program: Any, proc: str) -> dict:
    """{spec, names: statistic → [names], alpha} (GLM, GENMOD and LOGISTIC: logisticoutput.py)."""
    keys, valid = KEYWORDS[proc], "OUT=, " + ", ".join(f"{k}=" for k in KEYWORDS[proc]) + ", / ALPHA="
    out: dict[str, Any] = {"spec": None, "names": {}, "alpha": 0.05}
    while not c.at_end():
        if c.accept("/"):
            t = c.expect_kind(NAME, "ALPHA=")
            if t.upper != "ALPHA":
                raise SasError(f"The option {t.text} is not recognized in the OUTPUT statement of PROC {proc}",
                               t.line, t.col, t.text, "ALPHA=")
            c.expect("=", expected="= after ALPHA")
            v = c.next()
            out["alpha"] = float(v.value) if isinstance(v.value, (int, float)) else float("nan")
            if not 0 < out["alpha"] < 1:
                raise SasError(f"ALPHA={v.text} must be between 0 and 1", v.line, v.col, v.text, "ALPHA=0.05")
            continue
        t = c.expect_kind(NAME, valid)
        key = t.upper
        if key in NOT_BUILT[proc]:
            raise SasError(f"The OUTPUT statistic {key}= of PROC {proc} is not supported by statgrid yet", t.line,
                           t.col, t.text, valid)
        if key != "OUT" and key not in keys:
            raise SasError(f"The keyword {t.text} is not recognized in the OUTPUT statement of PROC {proc}", t.line,
                           t.col, t.text, valid)
        c.expect("=", expected=f"= after {key}")
        if key == "OUT":
            out["spec"] = parse_dataset(c, program)
            continue
        names = [c.expect_kind(NAME, "a variable name").text]
        while proc == "GLM" and c.peek().kind == NAME and not c.peek(1).is_("="):
            names.append(c.next().text)               # one name per response
        out["names"][keys[key]] = names
    if out["spec"] is None:
        from statgrid.sas.parse.dsname import next_data_name
        out["spec"] = DatasetSpec("WORK", next_data_name(program, "WORK"))
    return out


def write(program: Any, out: dict, parts: list, cols: list[ColumnInfo]) -> None:
    """The scored BY groups (Arrow tables of the input's columns + the statistics) as OUT=."""
    import pyarrow as pa

    from statgrid.libraries import sql_ident
    from statgrid.sas.procs.common import write_select

    table = pa.concat_tables(parts, promote_options="permissive") if len(parts) > 1 else parts[0]
    named = [(stat, name) for stat, names in out["names"].items() for name in names]
    new = {name.upper() for _, name in named}
    all_cols = [c for c in cols if c.name.upper() not in new] + [
        ColumnInfo(name, "num", 8, label=LABELS[stat]) for stat, name in named]
    con = program.session.con
    view = "__sas_model_out"
    con.register(view, table)
    try:
        write_select(program, out["spec"], f"SELECT {', '.join(sql_ident(c.name) for c in all_cols)} FROM {view}",
                     all_cols)
    finally:
        con.unregister(view)
