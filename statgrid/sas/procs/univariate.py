"""PROC UNIVARIATE (Base SAS Procedures: UNIVARIATE) on procs/univariate.py (moments, quantiles, extremes,
normality tests — checked against R).

    PROC UNIVARIATE <DATA=> <NORMAL> <NOPRINT> <PCTLDEF=1-5> <NEXTROBS=n>;
      VAR vars; BY vars; WHERE expr;
      OUTPUT OUT=ds <stat=names …> <PCTLPTS=p …  PCTLPRE=prefixes <PCTLNAME=suffixes>>;

OUTPUT OUT= has one observation per BY group (with BY … NOTSORTED: per run of equal BY values, in data
order): the BY variables, then each requested statistic (`mean=m1 m2` names it for the VAR variables in
order), then the PCTLPTS= percentiles named PCTLPRE + the percentile (`p` for 2.5 is `2_5`, as SAS names
it) for each VAR variable with a prefix. Statistics:
N NMISS MEAN STD VAR SUM MIN MAX RANGE MEDIAN Q1 Q3 QRANGE P1 P5 P10 P90 P95 P99
CV STDMEAN USS CSS SKEWNESS KURTOSIS — from the same aggregates as MEANS, percentiles by PCTLDEF=.
The listing and ODS OUTPUT get SAS's tables per variable (univariate_tables.py): Moments, BasicMeasures,
TestsForNormality (NORMAL), Quantiles, ExtremeObs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from statgrid.libraries import sql_ident
from statgrid.procs._quantile import DEFAULT_QNTLDEF, quantiles_sql
from statgrid.procs.summary import STATISTICS
from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM
from statgrid.sas import ods
from statgrid.sas.procs import univariate_tables as ut
from statgrid.sas.procs.byruns import RUN, by_columns, runs_on, with_runs
from statgrid.sas.procs.common import (by_text, DATASET, FLAG, VALUE, by_group_members, by_rule, check_by_sorted,
                                       observations_read, open_input, resolve_names, write_select)
from statgrid.sas.procs.step import Statements, begin, data_input, each_statement, output_statement

OPTIONS = {"DATA": DATASET, "NORMAL": FLAG, "NOPRINT": FLAG, "PCTLDEF": VALUE, "NEXTROBS": VALUE, "PLOT": FLAG,
           "PLOTS": FLAG, "FREQ": FLAG, "ALPHA": VALUE, "CIBASIC": FLAG, "ROUND": VALUE, "VARDEF": VALUE,
           "ROBUSTSCALE": FLAG, "TRIMMED": VALUE, "WINSORIZED": VALUE, "MODES": FLAG, "NOBYPLOT": FLAG}
SQL_STATS = {"N": "n", "NMISS": "nmiss", "MEAN": "mean", "STD": "std", "STDDEV": "std", "VAR": "var", "SUM": "sum",
             "MIN": "min", "MAX": "max", "RANGE": "range", "CV": "cv", "STDMEAN": "stderr", "USS": "uss",
             "CSS": "css", "SKEWNESS": "skewness", "KURTOSIS": "kurtosis"}
PCT_STATS = {"MEDIAN": 50, "Q1": 25, "Q3": 75, "P1": 1, "P5": 5, "P10": 10, "P90": 90, "P95": 95, "P99": 99}


@ods.proc_step
def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "UNIVARIATE")
    src, cols = data_input(program, opts, first)
    # graphics and labels: nothing to compute here
    st = Statements(src, cols, passed=("HISTOGRAM", "QQPLOT", "PPPLOT", "PROBPLOT", "INSET", "ID", "FORMAT", "LABEL",
                                       "CDFPLOT"))
    outputs = []
    for stmt, kw, c in each_statement(rest):
        if kw == "OUTPUT":
            outputs.append(_output(c, program))
        elif not st.read(kw, c):
            t = stmt.tokens[0]
            raise SasError(f"Statement {t.text.upper()} is not valid or not supported in PROC UNIVARIATE", t.line,
                           t.col, t.text, "VAR, BY, WHERE or OUTPUT")
    line, by = first.line, st.by
    byc = by_columns(resolve_names([n for n, _ in by], cols, src, line), by)
    varc = st.analysis_vars(line, {b.name.upper() for b in byc})
    if byc:
        check_by_sorted(program, src, cols, by)
    cols, base = open_input(program, src)
    if runs_on(byc):                                  # BY … NOTSORTED: each run a group (byruns.py)
        base = with_runs(base, byc)
    n_read = int(program.session.execute(f"SELECT count(*) FROM ({base})").fetchall()[0][0])
    qdef = int(opts.get("PCTLDEF", DEFAULT_QNTLDEF))
    if not opts.get("NOPRINT"):
        _print(program, src, base, cols, byc, varc, opts, qdef)
    observations_read(program, n_read, src)
    for out in outputs:
        _write(program, out, base, byc, varc, qdef)


def _output(c, program) -> dict:
    out: dict[str, Any] = {"spec": None, "stats": [], "pctlpts": [], "pctlpre": [], "pctlname": []}

    def read(t, c) -> bool:
        key = t.upper
        if key == "PCTLPTS":
            while c.peek().kind == NUM or c.at(","):
                tok = c.next()
                if tok.kind == NUM:
                    out["pctlpts"].append(float(tok.value))
            if c.peek().kind == NAME and c.peek().is_("TO"):
                raise SasError("PCTLPTS= with TO/BY is not supported by statgrid yet", t.line, t.col, "TO",
                               "the percentiles listed one by one")
        elif key in ("PCTLPRE", "PCTLNAME"):
            while c.peek().kind == NAME and not c.peek(1).is_("="):
                out[key.lower()].append(c.next().text)
        elif key in SQL_STATS or key in PCT_STATS or key == "QRANGE":
            names = []
            while c.peek().kind == NAME and not c.peek(1).is_("="):
                names.append(c.next().text)
            out["stats"].append((key, names))
        else:
            return False
        return True
    out["spec"] = output_statement(c, program, "UNIVARIATE", "OUT=, a statistic keyword, PCTLPTS= or PCTLPRE=",
                                   "OUT=, PCTLPTS=, PCTLPRE= or a statistic such as MEAN=", read)
    if out["pctlpts"] and not out["pctlpre"]:
        raise SasError("PCTLPTS= needs PCTLPRE= to name the percentile variables", 0, 0, "PCTLPRE",
                       "PCTLPRE=prefix for each VAR variable")
    return out


def _pct_name(p: float) -> str:
    text = f"{p:g}"
    return text.replace(".", "_")


def _write(program, out, base, byc, varc, qdef: int) -> None:
    select, cols = [sql_ident(b.name) for b in byc], [ColumnInfo(b.name, b.type, b.length, b.format, "", b.label)
                                                      for b in byc]
    for key, names in out["stats"]:
        for j, name in enumerate(names):
            if j >= len(varc):
                break
            v = varc[j]
            c = f"CAST({sql_ident(v.name)} AS DOUBLE)"
            if key in SQL_STATS:
                expr = STATISTICS[SQL_STATS[key]][0].format(c=c)
            elif key == "QRANGE":
                expr = f"(list_extract({quantiles_sql(c, [75], qdef)}, 1) - list_extract({quantiles_sql(c, [25], qdef)}, 1))"
            else:
                expr = f"list_extract({quantiles_sql(c, [PCT_STATS[key]], qdef)}, 1)"
            select.append(f"{expr} AS {sql_ident(name)}")
            cols.append(ColumnInfo(name, "num", 8))
    for j, prefix in enumerate(out["pctlpre"]):
        if j >= len(varc):
            break
        v = varc[j]
        c = f"CAST({sql_ident(v.name)} AS DOUBLE)"
        for k, p in enumerate(out["pctlpts"]):
            suffix = out["pctlname"][k] if k < len(out["pctlname"]) else _pct_name(p)
            if not float(p).is_integer():
                raise SasError(f"PCTLPTS={p:g}: statgrid computes whole-number percentiles only", 0, 0, f"{p:g}",
                               "percentiles 0 … 100 in whole numbers")
            select.append(f"list_extract({quantiles_sql(c, [int(p)], qdef)}, 1) AS {sql_ident(prefix + suffix)}")
            cols.append(ColumnInfo(prefix + suffix, "num", 8))
    keys = ", ".join(sql_ident(b.name) for b in byc)
    group = f" GROUP BY {keys} ORDER BY {', '.join(sql_ident(b.name) + ' NULLS FIRST' for b in byc)}" if byc else ""
    if runs_on(byc):                                  # NOTSORTED: one row per run, in data order
        group = f" GROUP BY {RUN}, {keys} ORDER BY {RUN}"
    write_select(program, out["spec"], f"SELECT {', '.join(select)} FROM ({base}){group}", cols)


def _print(program, src, base, cols, byc, varc, opts, qdef: int) -> None:
    """Per BY group and variable, SAS's tables (univariate_tables.py) to the listing and ODS OUTPUT: Moments,
    BasicMeasures, TestsForNormality (NORMAL), Quantiles, ExtremeObs, in SAS's order."""
    from statgrid.procs.univariate import univariate
    fn = getattr(univariate, "__wrapped__", univariate)
    normal = bool(opts.get("NORMAL"))
    listing = ods.Listing(program, "UNIVARIATE")
    for key, data in by_group_members(program, byc, cols, base, "_sguni_group"):
        result = fn(program.session, data, var=[v.name for v in varc], normal=normal,
                    nextrobs=int(opts.get("NEXTROBS", 5)), print=False, qntldef=qdef)
        by = list(zip(byc, key))
        for rec, ext in zip(result.to_dicts(), result.stats["extremes"]):
            _publish_variable(program, listing, data, rec, ext, by, normal, qdef)
        listing.flush()


def _publish_variable(program, listing, data: str, rec: dict, ext: dict, by: list, normal: bool, qdef: int) -> None:
    var = rec["variable"]
    scan = program.session.dataset(data).scan_sql()
    values = np.array([r[0] for r in program.session.execute(
        f"SELECT CAST({sql_ident(var)} AS DOUBLE) FROM {scan} WHERE {sql_ident(var)} IS NOT NULL").fetchall()],
        dtype=float)
    if by:
        listing.text(by_rule(by_text(program, by)), "")
    listing.title()
    listing.text(f"Variable:  {var}", "")
    tables = [ut.moments(var, rec), ut.basic_measures(var, rec, _mode(values))]
    if normal:
        tables.append(ut.normality_tests(var, rec, values))
    tables += [ut.quantiles(var, rec, qdef), ut.extreme_obs(var, ext)]
    for table in tables:
        table.by = by
        listing.table(table, ut.normality_text(table) if table.name == "TestsForNormality" else None)


def _mode(values: np.ndarray) -> float | None:
    """SAS's mode: the most frequent value, the lowest of several; missing when no value occurs twice."""
    if values.size == 0:
        return None
    uniq, counts = np.unique(values, return_counts=True)
    top = counts.max()
    return float(uniq[np.argmax(counts == top)]) if top > 1 else None
