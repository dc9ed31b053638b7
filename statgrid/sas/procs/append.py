"""PROC APPEND (SAS 9.4 Base Procedures: APPEND) and PROC CIMPORT's refusal.

    PROC APPEND BASE=ds <DATA=ds> <FORCE> <NOWARN> <APPENDVER=V6>;

BASE gets DATA's observations after its own (DATA= defaults to _LAST_). Without BASE, DATA is copied
to it ("NOTE: BASE data set does not exist. DATA file is being copied to BASE file."). The rules SAS
documents for differing variables:
- a DATA variable BASE does not have: ERROR, nothing appended — with FORCE, a WARNING and it is dropped;
- a BASE variable DATA does not have: a WARNING, its values are missing in the appended observations;
- a variable numeric in one and character in the other: ERROR — with FORCE, WARNING and missing values;
- a character variable longer in DATA: ERROR — with FORCE, WARNING and the values truncated to BASE's length.
BASE keeps its variables, their order and attributes. The new BASE is written as every data set is (atomic).
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.dataset import column_info, dataset_path, input_sql
from statgrid.sas.errors import SasError, SasRuntimeError
from statgrid.sas.parse.dsname import DatasetSpec
from statgrid.sas.specials_sql import stacked_letters
from statgrid.sas.procs.common import (DATASET, FLAG, VALUE, input_dataset, observations_read, parse_options,
                                       proc_statement, statement_error, write_select)

OPTIONS = {"BASE": DATASET, "OUT": DATASET, "DATA": DATASET, "NEW": DATASET, "FORCE": FLAG, "NOWARN": FLAG,
           "APPENDVER": VALUE, "GETSORT": FLAG}


def run(statements: list, program: Any) -> None:
    first, *rest = list(statements)
    opts = parse_options(proc_statement(first), OPTIONS, program, "PROC APPEND", {"OUT": "BASE", "NEW": "DATA"})
    for stmt in rest:
        raise statement_error(stmt, "APPEND", ())
    base = opts.get("BASE")
    if base is None:
        t = first.tokens[0]
        raise SasError("No BASE= data set was specified for PROC APPEND", t.line, t.col, "", "BASE=")
    data = input_dataset(program, opts, "DATA", first)
    force = bool(opts.get("FORCE"))
    dcols = column_info(program, data)
    dsql = input_sql(program, data, dcols)
    n = int(program.session.execute(f"SELECT count(*) FROM ({dsql})").fetchall()[0][0])
    if not dataset_path(program, base).exists():
        program.log.note(f"Appending {data.name} to {base.name}.")
        program.log.note("BASE data set does not exist. DATA file is being copied to BASE file.")
        observations_read(program, n, data)
        letters = stacked_letters(program, [(data, dcols, {c.name.upper(): c.name for c in dcols if c.type == "num"})])
        write_select(program, base, dsql, dcols, letters or None)
        return
    bcols = column_info(program, base)
    program.log.note(f"Appending {data.name} to {base.name}.")
    have = {c.name.upper(): c for c in dcols}
    problems, select = [], []
    for b in bcols:
        d = have.get(b.name.upper())
        target = "VARCHAR" if b.type == "char" else "DOUBLE"
        if d is None:
            program.log.warning(f"Variable {b.name} was not found on DATA file.")
            select.append(f"CAST(NULL AS {target}) AS {sql_ident(b.name)}")
        elif d.type != b.type:
            problems.append(f"Variable {b.name} not appended because of type mismatch.")
            select.append(f"CAST(NULL AS {target}) AS {sql_ident(b.name)}")
        elif b.type == "char" and d.length > b.length:
            problems.append(f"Variable {b.name} has different lengths on BASE and DATA files (BASE {b.length} "
                            f"DATA {d.length}).")
            select.append(f"substr({sql_ident(d.name)}, 1, {b.length}) AS {sql_ident(b.name)}")
        else:
            select.append(f"{sql_ident(d.name)} AS {sql_ident(b.name)}")
    base_names = {b.name.upper() for b in bcols}
    have_base = {b.name.upper(): b.name for b in bcols}
    for d in dcols:
        if d.name.upper() not in base_names:
            problems.append(f"Variable {d.name} was not found on BASE file. The variable will not be added to "
                            "the BASE file.")
    if problems and not force:
        for p in problems:
            program.log.warning(p)
        t = first.tokens[0]
        raise SasError("No appending done because of anomalies listed above. Use FORCE option to append these "
                       "files", t.line, t.col, "FORCE", "the FORCE option, or data sets whose variables agree")
    for p in problems:
        program.log.warning(p)
    if problems:
        program.log.note("FORCE is specified, so dropping/truncating will occur.")
    # every observation of the base stays (SAS reads only DATA=; BASE='s own WHERE=/OBS= never drop its rows)
    whole = DatasetSpec(base.libref, base.member, line=base.line, col=base.col)
    bsql = input_sql(program, whole, bcols)
    observations_read(program, n, data)
    program.log.note(f"{n} observations added.")
    # special missing letters: the base's where they were, the new rows' after them (numeric columns appended)
    kept = {b.name.upper() for b, sel in zip(bcols, select) if b.type == "num" and not sel.startswith("CAST(NULL")}
    letters = stacked_letters(program, [(whole, bcols, {c.name.upper(): c.name for c in bcols if c.type == "num"}),
                                        (data, dcols, {c.name.upper(): have_base[c.name.upper()] for c in dcols
                                                       if c.name.upper() in kept})])
    write_select(program, whole, f"SELECT * FROM ({bsql}) UNION ALL SELECT {', '.join(select)} FROM ({dsql})",
                 bcols, letters or None)


def run_cimport(statements: list, program: Any) -> None:
    """PROC CIMPORT reads SAS's transport files made by PROC CPORT, a format no open tool reads."""
    t = list(statements)[0].tokens[0]
    # an execution-time ERROR (as SAS's own when the file cannot be read): the steps after it still run
    raise SasRuntimeError("PROC CIMPORT is not available: SAS's CPORT transport format has no open reader. Convert the "
                   "file where SAS runs (PROC COPY to a XPORT library, or a sas7bdat data set), then bring it in with "
                   "`statgrid import FILE LIB.MEMBER` (.xpt or .sas7bdat)", t.line, t.col, "CIMPORT",
                   "an XPORT or sas7bdat file")
