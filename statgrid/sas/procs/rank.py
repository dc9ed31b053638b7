"""PROC RANK (SAS 9.4 Base Procedures: RANK), as one DuckDB query with window functions.

    PROC RANK <DATA=> <OUT=> <GROUPS=n> <TIES=MEAN|HIGH|LOW|DENSE> <DESCENDING> <FRACTION|PERCENT|NPLUS1>;
      BY vars; VAR vars; RANKS names; WHERE expr;

Ranks count within each BY group the non-missing values of each VAR variable (default: every numeric
variable not in BY); a missing value gets a missing rank. Ties (TIES=MEAN by default) get the mean of the
ranks they span, or the highest, the lowest, or the dense rank. GROUPS=k gives floor(rank·k/(n+1)) —
0 … k-1; FRACTION rank/n, PERCENT 100·rank/n, NPLUS1 rank/(n+1). RANKS names the new variables
(in VAR order); without it the VAR variables are replaced by their ranks. Observations keep their order.
With BY … NOTSORTED each run of equal BY values is a group of its own (byruns.py).
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.dataset import ColumnInfo, input_sql
from statgrid.sas.errors import SasError
from statgrid.sas.procs.byruns import RUN, is_notsorted, with_runs
from statgrid.sas.procs.common import (DATASET, FLAG, VALUE, check_by_sorted, observations_read, resolve_names,
                                       statement_error, write_select)
from statgrid.sas.procs.step import Statements, begin, data_input, each_statement

OPTIONS = {"DATA": DATASET, "OUT": DATASET, "GROUPS": VALUE, "TIES": VALUE, "DESCENDING": FLAG, "FRACTION": FLAG,
           "F": FLAG, "PERCENT": FLAG, "P": FLAG, "NPLUS1": FLAG, "FN1": FLAG, "N1": FLAG, "SAVAGE": FLAG,
           "NORMAL": VALUE}
ALIASES = {"F": "FRACTION", "P": "PERCENT", "FN1": "NPLUS1", "N1": "NPLUS1"}
STATEMENTS = ("BY", "VAR", "RANKS", "WHERE", "FORMAT", "LABEL", "ATTRIB")
_ROW = "__sas_rank_row"


def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "RANK", ALIASES)
    for bad in ("SAVAGE", "NORMAL"):
        if bad in opts:
            line, col = opts.where[bad]
            raise SasError(f"The {bad} scores of PROC RANK are not supported by statgrid yet", line, col, bad,
                           "GROUPS=, FRACTION, PERCENT, NPLUS1 or plain ranks")
    src, cols = data_input(program, opts, first)
    st, ranks = Statements(src, cols), None
    for stmt, kw, c in each_statement(rest):
        if kw == "RANKS":
            ranks = [t.text for t in c.tokens[c.i:] if t.kind == "NAME"]
        elif not st.read(kw, c):
            raise statement_error(stmt, "RANK", STATEMENTS)
    line, by = first.line, st.by
    byc = resolve_names([n for n, _ in by], cols, src, line)
    varc = st.analysis_vars(line, {c.name.upper() for c in byc})
    for v in varc:
        if v.type != "num":
            raise SasError(f"Variable {v.name} in the VAR statement is character; PROC RANK ranks numeric "
                           "variables", line, 0, v.name, "numeric variables")
    if ranks is not None and len(ranks) > len(varc):
        raise SasError("The RANKS statement names more variables than the VAR statement", line, 0, ranks[-1],
                       "one name per VAR variable")
    if byc:
        check_by_sorted(program, src, cols, by)
    ties = str(opts.get("TIES", "MEAN")).upper()
    if ties not in ("MEAN", "HIGH", "LOW", "DENSE", "CONDENSE"):
        line_, col_ = opts.value_at.get("TIES", (line, 0))
        raise SasError(f"TIES={ties} is not valid", line_, col_, ties, "TIES=MEAN, HIGH, LOW or DENSE")
    groups = opts.get("GROUPS")
    sql_in = input_sql(program, src, cols, row_number=_ROW)
    part = ", ".join(sql_ident(b.name) for b in byc)
    if byc and is_notsorted(by):                  # BY … NOTSORTED: ranks within each run (byruns.py)
        sql_in, part = with_runs(sql_in, byc, order=_ROW), RUN
    exprs: dict[str, str] = {}
    out_names = {}
    for j, v in enumerate(varc):
        q = sql_ident(v.name)
        order = f"{q} {'DESC' if opts.get('DESCENDING') else 'ASC'}"
        pby = f"PARTITION BY {part + ', ' if part else ''}({q} IS NULL)"
        low = f"rank() OVER ({pby} ORDER BY {order})"
        same = f"count(*) OVER (PARTITION BY {part + ', ' if part else ''}{q})"
        rank = {"LOW": low, "HIGH": f"({low} + {same} - 1)", "MEAN": f"({low} + ({same} - 1) / 2.0)",
                "DENSE": f"dense_rank() OVER ({pby} ORDER BY {order})",
                "CONDENSE": f"dense_rank() OVER ({pby} ORDER BY {order})"}[ties]
        n = f"count({q}) OVER ({'PARTITION BY ' + part if part else ''})"
        if groups is not None:
            k = int(groups)
            value = f"floor(({rank}) * {k} / ({n} + 1))"
        elif opts.get("FRACTION"):
            value = f"({rank}) / {n}"
        elif opts.get("PERCENT"):
            value = f"100.0 * ({rank}) / {n}"
        elif opts.get("NPLUS1"):
            value = f"({rank}) / ({n} + 1)"
        else:
            value = rank
        expr = f"CASE WHEN {q} IS NULL THEN NULL ELSE CAST({value} AS DOUBLE) END"
        if ranks is not None and j < len(ranks):
            out_names[ranks[j]] = expr
        else:
            exprs[v.name.upper()] = expr
    select, out_cols = [], []
    for c in cols:
        if c.name.upper() in exprs:
            select.append(f"{exprs[c.name.upper()]} AS {sql_ident(c.name)}")
            out_cols.append(ColumnInfo(c.name, "num", 8, "", "", c.label))
        else:
            select.append(sql_ident(c.name))
            out_cols.append(c)
    for name, expr in out_names.items():
        select.append(f"{expr} AS {sql_ident(name)}")
        out_cols.append(ColumnInfo(name, "num", 8, label=f"Rank for Variable {varc[list(out_names).index(name)].name}"))
    n_in = int(program.session.execute(f"SELECT count(*) FROM ({sql_in})").fetchall()[0][0])
    observations_read(program, n_in, src)
    out = opts.get("OUT")
    if out is None:
        from statgrid.sas.parse.dsname import DatasetSpec, next_data_name
        out = DatasetSpec("WORK", next_data_name(program, "WORK"))
    write_select(program, out, f"SELECT {', '.join(select)} FROM ({sql_in}) ORDER BY {_ROW}", out_cols)
