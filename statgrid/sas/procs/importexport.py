"""PROC IMPORT and PROC EXPORT for delimited files (SAS 9.4 Base Procedures: IMPORT, EXPORT).

    PROC IMPORT DATAFILE='file' | FILE=fileref OUT=ds DBMS=CSV|TAB|DLM <REPLACE>;
      GETNAMES=YES|NO; GUESSINGROWS=n|MAX; DATAROW=n; DELIMITER='c';
    PROC EXPORT DATA=ds OUTFILE='file' DBMS=CSV|TAB|DLM <REPLACE>; DELIMITER='c'; PUTNAMES=YES|NO;

IMPORT: DuckDB's CSV reader guesses each column's type from the first GUESSINGROWS rows (default 20, as
SAS); numbers become SAS numbers, dates SAS dates with DATE9. (times TIME8., datetimes DATETIME19.), text
a character variable as long as its longest value. Header names become valid SAS names (VALIDVARNAME=V7:
characters other than letters, digits and _ become _, a leading digit gets _ before it, 32 characters
at most, duplicates numbered). Without REPLACE an existing OUT= data set is kept (SAS's NOTE says so).
EXPORT: the data set's values as its formats show them (unformatted numbers as BEST12. without blanks, a
missing number as an empty field), character values quoted when they hold the delimiter or a quote.
Without REPLACE an existing file is kept.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

from statgrid.libraries import sql_ident, sql_literal
from statgrid.sas.dataset import ColumnInfo, column_info, dataset_path, input_sql
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NUM, STR
from statgrid.sas.procs.common import (DATASET, FLAG, TEXT, VALUE, cursor, format_cell, input_dataset,
                                       observations_read, parse_options, proc_statement, write_select)

IMPORT_OPTIONS = {"DATAFILE": TEXT, "FILE": TEXT, "DATATABLE": TEXT, "OUT": DATASET, "DBMS": VALUE,
                  "REPLACE": FLAG}
EXPORT_OPTIONS = {"DATA": DATASET, "OUTFILE": TEXT, "FILE": TEXT, "DBMS": VALUE, "REPLACE": FLAG, "LABEL": FLAG}
DELIMITERS = {"CSV": ",", "TAB": "\t", "DLM": " "}


def _file(program: Any, opts, key: str, first) -> Path:
    value = opts.get(key) or opts.get("FILE")
    if value is None:
        t = first.tokens[0]
        raise SasError(f"No {key}= was specified", t.line, t.col, "", f"{key}='path'")
    fref = program.filerefs.get(str(value).upper())        # DATAFILE=fileref / FILE=fileref
    if fref is not None and fref.paths:
        return Path(fref.paths[0])
    return Path(str(value)).expanduser()


def _dbms(opts, first) -> str:
    dbms = str(opts.get("DBMS") or "").upper()
    if dbms not in DELIMITERS:
        line, col = opts.value_at.get("DBMS", (first.line, 0))
        raise SasError(f"DBMS={dbms or '(none)'} is not supported by statgrid", line, col, dbms,
                       "DBMS=CSV, TAB or DLM (sas7bdat and xpt come in with `statgrid import`)")
    return dbms


def _settings(statements: list) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for stmt in statements:
        c = cursor(stmt)
        t = c.next()
        name = t.upper
        if c.accept("="):
            v = c.next()
            out[name] = v.value if v.kind == STR else (v.value if v.kind == NUM else v.upper)
        elif name in ("REPLACE",):
            out[name] = True
        else:
            raise SasError(f"Statement {t.text} is not valid in this procedure", t.line, t.col, t.text,
                           "GETNAMES=, GUESSINGROWS=, DATAROW=, DELIMITER= or PUTNAMES=")
    return out


def sas_name(text: str, taken: set[str], n: int) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", text.strip()) or f"VAR{n}"
    if name[0].isdigit():
        name = "_" + name
    name = name[:32]
    base, k = name, 1
    while name.upper() in taken:
        k += 1
        name = f"{base[:32 - len(str(k))]}{k}"
    taken.add(name.upper())
    return name


def run_import(statements: list, program: Any) -> None:
    first, *rest = list(statements)
    opts = parse_options(proc_statement(first), IMPORT_OPTIONS, program, "PROC IMPORT")
    dbms = _dbms(opts, first)
    path = _file(program, opts, "DATAFILE", first)
    out = opts.get("OUT")
    if out is None:
        t = first.tokens[0]
        raise SasError("No OUT= data set was specified for PROC IMPORT", t.line, t.col, "", "OUT=")
    settings = _settings(rest)
    if not path.is_file():
        raise SasError(f"Physical file does not exist, {path}.", first.line, 0, str(path), "an existing file")
    if dataset_path(program, out).exists() and not opts.get("REPLACE"):
        program.log.note(f"Import cancelled.  Output dataset {out.name} already exists. Specify REPLACE option to "
                         "overwrite it.")
        return
    delim = str(settings.get("DELIMITER", DELIMITERS[dbms]))
    header = str(settings.get("GETNAMES", "YES")).upper() in ("YES", "Y")
    guess = settings.get("GUESSINGROWS", 20)
    sample = -1 if str(guess).upper() == "MAX" else max(1, int(float(guess)))
    skip = max(0, int(float(settings.get("DATAROW", 2 if header else 1))) - (2 if header else 1))
    reader = (f"read_csv({sql_literal(str(path))}, delim={sql_literal(delim)}, header={str(header).lower()}, "
              f"sample_size={sample}, skip={skip}, null_padding=true)")
    con = program.session.con
    desc = con.execute(f"SELECT * FROM {reader} LIMIT 0").description
    taken: set[str] = set()
    select, cols = [], []
    for n, (name, typ, *_) in enumerate(desc, 1):
        q = sql_ident(str(name))
        new = sas_name(str(name) if header else f"VAR{n}", taken, n)
        t = str(typ).upper()
        if t in ("VARCHAR", "STRING", "BOOLEAN", "BOOL"):
            expr = f"CAST({q} AS VARCHAR)"
            length = int(con.execute(f"SELECT coalesce(max(length({expr})), 1) FROM {reader}").fetchall()[0][0])
            cols.append(ColumnInfo(new, "char", max(1, length), "", f"${max(1, length)}."))
        elif t == "DATE":
            expr = f"CAST(date_diff('day', DATE '1960-01-01', {q}) AS DOUBLE)"
            cols.append(ColumnInfo(new, "num", 8, "DATE9.", "DATE9."))
        elif t.startswith("TIMESTAMP"):
            expr = f"(epoch_us(CAST({q} AS TIMESTAMP)) / 1e6 + 315619200.0)"
            cols.append(ColumnInfo(new, "num", 8, "DATETIME19.", "DATETIME19."))
        elif t.startswith("TIME"):
            expr = f"(epoch_us(CAST('1970-01-01' AS DATE) + {q}) / 1e6)"
            cols.append(ColumnInfo(new, "num", 8, "TIME8.", "TIME8."))
        else:
            expr = f"CAST({q} AS DOUBLE)"
            cols.append(ColumnInfo(new, "num", 8, "BEST12.", "BEST32."))
        select.append(f"{expr} AS {sql_ident(new)}")
    rows = write_select(program, out, f"SELECT {', '.join(select)} FROM {reader}", cols)
    program.log.note(f"{rows} records were read from the infile {sql_literal(str(path))}.")
    program.log.note(f"{out.name} data set was successfully created.")


def run_export(statements: list, program: Any) -> None:
    first, *rest = list(statements)
    opts = parse_options(proc_statement(first), EXPORT_OPTIONS, program, "PROC EXPORT")
    dbms = _dbms(opts, first)
    path = _file(program, opts, "OUTFILE", first)
    settings = _settings(rest)
    src = input_dataset(program, opts, "DATA", first)
    if path.exists() and not opts.get("REPLACE"):
        program.log.warning(f"File {path} already exists. Specify REPLACE option to overwrite it; nothing was "
                            "exported.")
        return
    delim = str(settings.get("DELIMITER", DELIMITERS[dbms]))
    names = str(settings.get("PUTNAMES", "YES")).upper() in ("YES", "Y")
    cols = column_info(program, src)
    table = program.session.fetch_arrow(input_sql(program, src, cols))
    tmp = path.with_name(f".{path.name}.tmp")
    n = 0
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter=delim, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        if names:
            w.writerow([(c.label if opts.get("LABEL") and c.label else c.name) for c in cols])
        data = [table.column(i).to_pylist() for i in range(table.num_columns)]
        for row in zip(*data) if data else []:
            out = []
            for v, c in zip(row, cols):
                if c.type == "char":
                    out.append("" if v is None else str(v).rstrip())
                elif v is None:
                    out.append("")
                else:
                    out.append(format_cell(program, v, c.format or "BEST12.", "num").strip())
            w.writerow(out)
            n += 1
    tmp.replace(path)
    # SAS counts the header line among the records written, then says what it made (SAS 9.4 PROC EXPORT log)
    program.log.note(f"{n + int(names)} records were written to the file {sql_literal(str(path))}.")
    observations_read(program, n, src)
    program.log.put(f"{n} records created in {path} from {src.member.upper()}.")
    program.log.note(f'"{path}" file was successfully created.')
