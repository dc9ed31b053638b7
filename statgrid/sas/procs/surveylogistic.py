"""PROC SURVEYLOGISTIC in SAS programs, on statgrid.procs.surveylogistic (Taylor-series variance):

    PROC SURVEYLOGISTIC DATA= <VARMETHOD=TAYLOR> <RATE=r | TOTAL=N> <NOPRINT>;
      CLASS vars </ PARAM=EFFECT|REF>;
      MODEL y<(EVENT='v' | DESCENDING)> = effects </ LINK=LOGIT DF=DESIGN|n|INFINITY VADJUST=DF|NONE
                                                    NOINT MAXITER=>;
      WEIGHT var; STRATA vars; CLUSTER vars; BY vars; WHERE …;

Without WEIGHT, STRATA or CLUSTER the sample is taken as a simple random sample (every weight 1, one
stratum, each observation its own cluster). A variable missing from the data is an ERROR naming it.
Replication variance methods (VARMETHOD=BRR|JACKKNIFE|BOOTSTRAP), RATE=/TOTAL= data sets and the
statements SAS has beyond these (DOMAIN, OUTPUT, REPWEIGHTS, …) are an ERROR naming them.
"""
from __future__ import annotations

from typing import Any

from statgrid.errors import StatgridError
from statgrid.sas.errors import SasError
from statgrid.sas.procs.common import (DATASET, FLAG, VALUE, by_list, cursor, resolve_names, statement_error,
                                       where_statement)
from statgrid.sas.procs.models import _model, _options_after_slash, class_statement
from statgrid.sas.procs.modeltables import parameter_level
from statgrid.sas.procs.step import ByInput, begin, data_input, fit_errors

TEMP = "_sgsurvey_group"
PROC_OPTIONS = {"DATA": DATASET, "VARMETHOD": VALUE, "RATE": VALUE, "TOTAL": VALUE, "NOPRINT": FLAG,
                "ORDER": VALUE, "NAMELEN": VALUE, "PLOTS": VALUE, "MISSING": FLAG}
MODEL_OPTIONS = {"LINK", "DF", "VADJUST", "NOINT", "MAXITER", "CLPARM", "EXPB", "TECHNIQUE", "TECH"}
NOT_BUILT = ("DOMAIN", "OUTPUT", "REPWEIGHTS", "CONTRAST", "ESTIMATE", "LSMEANS", "TEST", "UNITS", "SLICE",
             "STORE", "EFFECT", "LSMESTIMATE", "FREQ")


def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, PROC_OPTIONS, "SURVEYLOGISTIC", {"R": "RATE", "N": "TOTAL"})
    _check_proc_options(opts, first)
    src, cols = data_input(program, opts, first)
    spec: dict[str, Any] = {"class": [], "class_opts": {}, "model": None, "by": [], "weight": None, "strata": [],
                            "cluster": []}
    for stmt in rest:
        _statement(stmt, spec, src)
    if spec["model"] is None:
        t = first.tokens[0]
        raise SasError("No MODEL statement was given to PROC SURVEYLOGISTIC", t.line, t.col, "SURVEYLOGISTIC",
                       "MODEL y = effects;")
    design_vars = [*([spec["weight"]] if spec["weight"] else []), *spec["strata"], *spec["cluster"]]
    resolve_names(design_vars, cols, src, first.line)      # SAS: Variable X not found, naming the data set
    spec["data_label"] = f"{src.libref}.{src.member}".upper()        # the listing's Data Set
    inp = ByInput(program, first, src, cols, spec["by"])
    for key, data in inp.groups(TEMP, by_line=True):
        with fit_errors(first, "SURVEYLOGISTIC"):
            result = _fit(program, opts, spec, data)
        if not opts.get("NOPRINT"):
            _publish(program, result, inp.pairs(key))


def _publish(program: Any, result, by: list) -> None:
    """ParameterEstimates for ODS OUTPUT (Variable, ClassVal0, Estimate, StdErr, tValue, Probt); the listing is
    the procedure's own text, so the table is published without being shown again."""
    from statgrid.sas.ods import OdsColumn as Col, OdsTable, publish_only

    rows = [[*parameter_level(r[0]), *r[1:]] for r in result.rows]
    cols = [Col("Variable", type="char"), Col("ClassVal0", type="char"), Col("Estimate", fmt="d4"),
            Col("StdErr", fmt="d4"), Col("tValue", fmt="d2"), Col("Probt", fmt="p")]
    if not any(r[1] for r in rows):               # no CLASS effect: SAS's table has no ClassVal0 column
        rows, cols = [[r[0], *r[2:]] for r in rows], [c for c in cols if c.name != "ClassVal0"]
    publish_only(program, [OdsTable("ParameterEstimates", "Analysis of Maximum Likelihood Estimates", cols, rows,
                                    "SurveyLogistic")], by)


def _check_proc_options(opts, first) -> None:
    bad = [k for k in ("RATE", "TOTAL") if opts.get(k) is not None and not isinstance(opts.get(k), (int, float))]
    if str(opts.get("VARMETHOD", "TAYLOR")).upper() != "TAYLOR":
        bad.insert(0, "VARMETHOD")
    if bad:
        line, col = opts.value_at.get(bad[0], (first.line, 0))
        raise SasError(f"{bad[0]}={opts.get(bad[0])} is not supported by statgrid's PROC SURVEYLOGISTIC", line, col,
                       str(opts.get(bad[0])), "VARMETHOD=TAYLOR, RATE=number, TOTAL=number")


def _statement(stmt, spec: dict, src) -> None:
    kw, c = stmt.keyword, cursor(stmt)
    c.next()
    if kw == "CLASS":
        class_statement(c, spec)
    elif kw == "MODEL":
        spec["model"] = _model(c)
        unknown = [k for k in spec["model"][3] if k not in MODEL_OPTIONS]
        if unknown:
            t = stmt.tokens[0]
            raise SasError(f"The option {unknown[0]} of the MODEL statement of PROC SURVEYLOGISTIC is not supported "
                           "by statgrid", t.line, t.col, unknown[0], ", ".join(sorted(MODEL_OPTIONS)), stmt.source)
    elif kw == "WEIGHT":
        spec["weight"] = c.expect_name("a weight variable")
    elif kw in ("STRATA", "STRATUM"):
        spec["strata"] += _names(c)
    elif kw in ("CLUSTER", "CLUSTERS"):
        spec["cluster"] += _names(c)
    elif kw == "BY":
        spec["by"] = by_list(c)
    elif kw == "WHERE":
        where_statement(c, src)
    elif kw in ("FORMAT", "LABEL", "ATTRIB", "ODS"):
        return
    elif kw in NOT_BUILT:
        t = stmt.tokens[0]
        raise SasError(f"The {kw} statement of PROC SURVEYLOGISTIC is not supported by statgrid yet", t.line, t.col,
                       kw, "CLASS, MODEL, WEIGHT, STRATA, CLUSTER, BY, WHERE", stmt.source)
    else:
        raise statement_error(stmt, "SURVEYLOGISTIC", ["CLASS", "MODEL", "WEIGHT", "STRATA", "CLUSTER", "BY",
                                                       "WHERE"])


def _names(c) -> list[str]:
    out = []
    while not c.at_end() and not c.at("/"):
        out.append(c.expect_name("a variable name"))
    if c.accept("/"):
        _options_after_slash(c)                       # LIST, NOCOLLAPSE: display options
    return out


def _fit(program, opts, spec: dict, data: str):
    from statgrid.procs.surveylogistic import surveylogistic
    dep, effects, dep_opts, mopts = spec["model"]
    link = str(mopts.get("LINK", "LOGIT")).upper()
    if link not in ("LOGIT", "LOGISTIC"):
        raise StatgridError(f"LINK={link} is not supported by statgrid's PROC SURVEYLOGISTIC (LOGIT only).")
    fn = getattr(surveylogistic, "__wrapped__", surveylogistic)
    return fn(program.session, data, f"{dep} = {effects}", class_=spec["class"] or None,
       param=str(spec["class_opts"].get("PARAM", "effect")).lower(), event=dep_opts.get("EVENT"),
       descending=bool(dep_opts.get("DESCENDING") or dep_opts.get("DESC")), weight=spec["weight"],
       strata=spec["strata"] or None, cluster=spec["cluster"] or None, df=mopts.get("DF"),
       vadjust=str(mopts.get("VADJUST", "DF")).lower(),
       rate=float(opts.get("RATE")) if opts.get("RATE") is not None else None,
       total=float(opts.get("TOTAL")) if opts.get("TOTAL") is not None else None,
       maxiter=int(float(mopts.get("MAXITER", 25))), noint=bool(mopts.get("NOINT")), print=not opts.get("NOPRINT"),
       data_label=spec.get("data_label"))
