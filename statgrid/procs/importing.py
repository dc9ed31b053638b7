"""PROC IMPORT / DATA step INPUT: delimited text and fixed-width text into a data set.

Bad rows: with max_errors=0 (the default) the first bad row stops the step and nothing is
written; with max_errors=N up to N bad rows are skipped and listed by line number in the log,
and more than N stops the step. Either way the log names the file, line numbers and columns.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Mapping, Sequence

import duckdb

from statgrid.errors import StatgridError
from statgrid.procs import fixedwidth
from statgrid.procs._base import procedure, qi
from statgrid.libraries import check_name, sql_literal

# temp tables; always named with their catalog so a WORK member of the same name is never hit
_REJ_ERRORS, _REJ_SCANS = "temp.main.__statgrid_rejects", "temp.main.__statgrid_reject_scans"
_SHOW_LINES = 10
_FIXED_TYPES = {"$": "VARCHAR", "char": "VARCHAR", "varchar": "VARCHAR", "string": "VARCHAR", "num": "DOUBLE",
                "double": "DOUBLE", "int": "BIGINT", "integer": "BIGINT", "bigint": "BIGINT", "date": "DATE"}
_BAD_MARK = "statgrid-bad-fixed-value"
_log = logging.getLogger(__name__)


def _input_file(path: str | os.PathLike) -> Path:
    p = Path(path).expanduser().absolute()
    if not p.is_file():
        raise StatgridError(f"input file {str(p)!r} does not exist or is not a file; check the path.")
    if not os.access(p, os.R_OK):
        raise StatgridError(f"input file {str(p)!r} is not readable by this user; check its permissions.")
    return p


def _check_max_errors(max_errors: int) -> int:
    if isinstance(max_errors, bool) or not isinstance(max_errors, int) or max_errors < 0:
        raise StatgridError(f"max_errors={max_errors!r} must be a whole number ≥ 0.")
    return max_errors


def _lines_text(n_bad: int, lines: list[tuple]) -> str:
    """The first bad lines, one per row, and how many more there are."""
    shown = "\n".join(f"  line {ln}: {what}" for ln, what in lines[:_SHOW_LINES])
    return shown + (f"\n  … and {n_bad - _SHOW_LINES} more" if n_bad > _SHOW_LINES else "")


def _bad_rows_message(kind: str, path: Path, n_bad: int, max_errors: int, lines: list[tuple]) -> str:
    return (f"{n_bad} bad {kind} row(s) in {str(path)!r}, more than max_errors={max_errors}:\n"
            f"{_lines_text(n_bad, lines)}\n"
            f"Fix the file, declare the column types that fit, or allow them with max_errors={n_bad}.")


def _warn_skipped(s, path: Path, n_bad: int, max_errors: int, lines: list[tuple]) -> None:
    s.log.warning(f"{n_bad} bad row(s) in {str(path)!r} were skipped (max_errors={max_errors}):\n"
                  + _lines_text(n_bad, lines))


@procedure("PROCEDURE IMPORT")
def import_csv(s, path: str | os.PathLike, out: str, delimiter: str | None = None, header: bool = True,
               types: Mapping[str, str] | None = None, names: Sequence[str] | None = None,
               max_errors: int = 0, skip: int = 0):
    """Import delimited text into data set `out`; returns its DatasetRef.

    delimiter: None sniffs it. header=False names columns var1, var2, … unless `names` are given.
    types: {'column': 'INTEGER' | 'DOUBLE' | 'VARCHAR' | 'DATE' | …}; other columns are sniffed,
    except that a yes/no or true/false column stays text (VARCHAR) unless declared BOOLEAN here.
    """
    p = _input_file(path)
    max_errors = _check_max_errors(max_errors)
    opts = [f"header={str(bool(header)).lower()}", f"skip={int(skip)}"]
    if delimiter is not None:
        if not 1 <= len(delimiter) <= 4:
            raise StatgridError(f"delimiter {delimiter!r} must be 1 to 4 characters, e.g. ',' or '|' or '\\t'.")
        opts.append(f"delim={sql_literal(delimiter)}")
    if names is None and not header:
        ncols = len(s.columns(f"read_csv({sql_literal(str(p))}, {', '.join(opts)})"))
        names = [f"var{i + 1}" for i in range(ncols)]
    if names is not None:
        opts.append("names=[" + ", ".join(sql_literal(check_name("variable", n)) for n in names) + "]")
    opts += _types_option(s, p, opts, dict(types or {}))
    s.execute(f"DROP TABLE IF EXISTS {_REJ_ERRORS}; DROP TABLE IF EXISTS {_REJ_SCANS}")
    opts += ["store_rejects=true", f"rejects_table={sql_literal(_REJ_ERRORS.split('.')[-1])}",
             f"rejects_scan={sql_literal(_REJ_SCANS.split('.')[-1])}"]
    scan = f"read_csv({sql_literal(str(p))}, {', '.join(opts)})"
    s.log.note(f"Importing {str(p)!r}.")
    try:
        return s.write(out, f"SELECT * FROM {scan}", before_commit=lambda: _report_rejects(s, p, max_errors))
    finally:
        s.execute(f"DROP TABLE IF EXISTS {_REJ_ERRORS}; DROP TABLE IF EXISTS {_REJ_SCANS}")


def _types_option(s, p: Path, opts: list[str], declared: dict[str, str]) -> list[str]:
    """The types= option of read_csv: the declared types, and VARCHAR for every other column the
    sniffer would make BOOLEAN.

    SAS PROC IMPORT reads a column as numeric or character (dates and times are numbers with a
    format); it has no BOOLEAN. DuckDB's sniffer makes a column of yes/no, true/false or T/F
    BOOLEAN, and FREQ then prints 0/1 — so such a column stays text, as SAS keeps it, unless
    types= declares it. Every other sniffed type is kept as DuckDB chooses it (integers, doubles,
    dates, times, timestamps), so the file is sniffed once with the declared types and only its
    BOOLEAN columns are re-typed (DuckDB matches types= keys case-insensitively; so do we)."""
    def option(types: dict[str, str]) -> list[str]:
        return ["types={" + ", ".join(f"{sql_literal(k)}: {sql_literal(v)}" for k, v in types.items()) + "}"] \
            if types else []

    named = {k.lower() for k in declared}
    sniffed = s.columns(f"read_csv({sql_literal(str(p))}, {', '.join(opts + option(declared))})")
    as_text = {name: "VARCHAR" for name, typ in sniffed if typ == "BOOLEAN" and name.lower() not in named}
    return option({**declared, **as_text})


def _report_rejects(s, p: Path, max_errors: int) -> None:
    """Raise when more than max_errors rows were rejected (the import is then discarded), else warn."""
    rows = s.execute(f"SELECT line, column_name, error_type, csv_line FROM {_REJ_ERRORS} ORDER BY line").fetchall()
    if not rows:
        return
    lines = [(ln, f"column {col!r}: {etype.lower()} error in {text!r}") for ln, col, etype, text in rows]
    n_bad = len({ln for ln, *_ in rows})
    if n_bad > max_errors:
        raise StatgridError(_bad_rows_message("CSV", p, n_bad, max_errors, lines))
    _warn_skipped(s, p, n_bad, max_errors, lines)


def _fixed_spec(columns: Sequence[Sequence]) -> list[tuple[str, int, int, str]]:
    """[(name, start, end[, type])] with 1-based inclusive positions → validated specs."""
    out = []
    for spec in columns:
        if not isinstance(spec, (list, tuple)) or len(spec) not in (3, 4):
            raise StatgridError(f"column spec {spec!r} must be (name, start, end) or (name, start, end, type) "
                                "with 1-based inclusive positions, e.g. ('id', 1, 5, 'int').")
        name, start, end = spec[0], spec[1], spec[2]
        typ = spec[3] if len(spec) == 4 else "num"
        check_name("variable", name)
        if not (isinstance(start, int) and isinstance(end, int) and 1 <= start <= end):
            raise StatgridError(f"column {name!r}: positions {start!r}-{end!r} must be whole numbers with "
                                "1 ≤ start ≤ end.")
        out.append((name, start, end, _FIXED_TYPES.get(str(typ).lower(), str(typ).upper())))
    if not out:
        raise StatgridError("columns= is empty; give (name, start, end, type) for each field.")
    return out


@procedure("PROCEDURE IMPORT")
def import_fixed(s, path: str | os.PathLike, out: str, columns: Sequence[Sequence], max_errors: int = 0,
                 skip: int = 0, fast: bool = True):
    """Import fixed-width text (SAS column input) into data set `out`; returns its DatasetRef.

    columns: [(name, start, end, type)], positions 1-based and inclusive as in `input id 1-5`;
    type is '$'/'char' (text, trimmed), 'num'/'double' (default), 'int', 'date' (ISO) or any
    SQL type. A blank field is missing; a field that does not convert is a bad row.
    fast=False always runs the SQL path (the fast path's reference; see procs/fixedwidth.py).
    """
    p = _input_file(path)
    max_errors = _check_max_errors(max_errors)
    specs = _fixed_spec(columns)
    for _, _, _, typ in specs:
        try:
            s.con.execute(f"SELECT CAST(NULL AS {typ})").fetchall()
        except duckdb.Error:
            raise StatgridError(f"type {typ!r} is not known; use '$', 'num', 'int', 'date' or an SQL type "
                                "such as DECIMAL(12,2).") from None
    lines = (f"read_csv({sql_literal(str(p))}, columns={{'line': 'VARCHAR'}}, header=false, delim='\x1f', "
             f"quote='', escape='', auto_detect=false, strict_mode=false, skip={int(skip)})")
    raw = {n: f"NULLIF(trim(substr(line, {a}, {b - a + 1})), '')" for n, a, b, _ in specs}
    bad = {n: f"({raw[n]} IS NOT NULL AND TRY_CAST({raw[n]} AS {t}) IS NULL)" for n, _, _, t in specs if t != "VARCHAR"}
    any_bad = " OR ".join(bad.values()) or "false"

    def value(n: str, t: str, strict: bool) -> str:
        if t == "VARCHAR":
            return f"{raw[n]} AS {qi(n)}"
        if strict:
            return (f"CASE WHEN {bad[n]} THEN error('{_BAD_MARK}') ELSE TRY_CAST({raw[n]} AS {t}) END AS {qi(n)}")
        return f"TRY_CAST({raw[n]} AS {t}) AS {qi(n)}"

    s.log.note(f"Importing fixed-width {str(p)!r} ({len(specs)} columns).")
    if fast:
        done = _import_fixed_fast(s, p, out, specs, {n: value(n, t, False) for n, _, _, t in specs}, any_bad, skip)
        if done is not None:
            return done
    if max_errors == 0:
        try:
            return s.write(out, f"SELECT {', '.join(value(n, t, True) for n, _, _, t in specs)} FROM {lines}")
        except duckdb.InvalidInputException as exc:
            if _BAD_MARK not in str(exc):
                raise
            n_bad = s.execute(f"SELECT count(*) FROM {lines} WHERE {any_bad}").fetchone()[0]
            raise StatgridError(_bad_rows_message("fixed-width", p, n_bad, 0, _bad_lines(s, lines, bad, skip))) from None
    n_bad = s.execute(f"SELECT count(*) FROM {lines} WHERE {any_bad}").fetchone()[0]
    if n_bad > max_errors:
        raise StatgridError(_bad_rows_message("fixed-width", p, n_bad, max_errors, _bad_lines(s, lines, bad, skip)))
    if n_bad:
        _warn_skipped(s, p, n_bad, max_errors, _bad_lines(s, lines, bad, skip))
    select = ", ".join(value(n, t, False) for n, _, _, t in specs)
    return s.write(out, f"SELECT {select} FROM {lines}" + (f" WHERE NOT ({any_bad})" if n_bad else ""))


def _import_fixed_fast(s, p: Path, out: str, specs, exprs: dict[str, str], any_bad: str, skip: int):
    """The numpy path (procs/fixedwidth.py); None when it steps back for the SQL path (bad rows, odd bytes)."""
    parser = fixedwidth.Parser(specs, exprs, any_bad)
    stepped_back: list[str] = []

    def batches():
        try:
            yield from parser.reader(p, int(skip))
        except fixedwidth.Fallback as why:
            stepped_back.append(str(why))
            raise

    import pyarrow as pa
    s.con.register("__statgrid_fw", pa.RecordBatchReader.from_batches(parser.schema, batches()))
    cols = ", ".join(qi(n) if t in ("VARCHAR", "DOUBLE", "BIGINT") else f"CAST({qi(n)} AS {t}) AS {qi(n)}"
                     for n, _, _, t in specs)
    try:
        ref = s.write(out, f"SELECT {cols} FROM temp.main.__statgrid_fw")
        _log.debug("%s: read by the numpy path", p)
        return ref
    except Exception:
        if not stepped_back:
            raise
        _log.debug("%s: read by the SQL path (%s)", p, stepped_back[0])
        return None
    finally:
        s.con.unregister("__statgrid_fw")
        parser.close()


def _bad_lines(s, lines: str, bad: dict[str, str], skip: int) -> list[tuple[int, str]]:
    """Line numbers and columns of the first bad rows. One thread, so row_number() is file order."""
    cols = ", ".join(f"CASE WHEN {cond} THEN {sql_literal(n)} END" for n, cond in bad.items())
    any_bad = " OR ".join(bad.values())
    s.single_thread()
    rows = s.execute(f"SELECT ln, concat_ws(', ', {cols}), line FROM "
                     f"(SELECT row_number() OVER () AS ln, line FROM {lines}) WHERE {any_bad} "
                     f"ORDER BY ln LIMIT {_SHOW_LINES}").fetchall()
    return [(ln + skip, f"column(s) {names} do not convert: {line!r}") for ln, names, line in rows]
