"""PROC SORT (SAS 9.4 Base Procedures, SORT): DATA=, OUT=, BY with DESCENDING, NODUPKEY, NODUPRECS
(NODUP), DUPOUT=, EQUALS/NOEQUALS, SORTSIZE=, and SAS's NOTEs:

    NOTE: There were 5 observations read from the data set WORK.RAW.
    NOTE: 2 observations with duplicate key values were deleted.
    NOTE: The data set OUT.UNIQ has 3 observations and 3 variables.

The order is statgrid/procs/sort.py's (a missing value sorts lowest: first ascending, last descending;
EQUALS keeps the input order within equal keys through the file's row number), run by DuckDB with
SORTSIZE= as its memory limit (it spills to UTIL beyond). NODUPKEY keeps the first observation of each
BY group; NODUPRECS deletes an observation equal in every variable to the one just before it in the
sorted order (SAS compares adjacent observations only). DUPOUT= gets what either deletes. Without OUT=
the input is replaced, atomically.
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.dataset import input_sql
from statgrid.sas.errors import SasError
from statgrid.sas.specials_sql import Carried, file_specials
from statgrid.sas.procs.common import (DATASET, FLAG, SIZE, SORTED_KEY, by_list, cursor, input_dataset,
                                       observations_read, open_input, parse_options, proc_statement, resolve_names,
                                       sortsize, statement_error, write_select)

OPTIONS = {"DATA": DATASET, "OUT": DATASET, "DUPOUT": DATASET, "NODUPKEY": FLAG, "NODUPRECS": FLAG,
           "EQUALS": FLAG, "NOEQUALS": FLAG, "SORTSIZE": SIZE, "FORCE": FLAG, "REVERSE": FLAG,
           "TAGSORT": FLAG, "THREADS": FLAG, "NOTHREADS": FLAG, "PRESORTED": FLAG, "OVERWRITE": FLAG,
           "DATECOPY": FLAG, "SORTSEQ": "value", "ASCII": FLAG, "EBCDIC": FLAG}
ALIASES = {"NODUP": "NODUPRECS", "NODUPREC": "NODUPRECS", "NODUPLICATES": "NODUPRECS", "DUPOUT": "DUPOUT"}
_ROW = "__sas_sort_row"
_DUP = "__sas_sort_dup"


def run(statements: list, program: Any) -> None:
    first, *rest = list(statements)
    cur = proc_statement(first)
    opts = parse_options(cur, OPTIONS, program, "PROC SORT", ALIASES)
    by = None
    for stmt in rest:
        kw = stmt.keyword
        c = cursor(stmt)
        c.next()
        if kw == "BY":
            by = by_list(c)
        else:
            raise statement_error(stmt, "SORT", ("BY",))
    if by is None:
        t = first.tokens[0]
        raise SasError("No BY statement was specified for PROC SORT", t.line, t.col, "", "a BY statement")
    if opts.get("NODUPKEY") and opts.get("NODUPRECS"):
        pass                                        # SAS accepts both: NODUPKEY decides
    if "SORTSIZE" in opts:
        from statgrid.sas.options import parse_size
        try:
            size = parse_size(opts.get("SORTSIZE"))
        except ValueError as exc:
            line, col = opts.value_at["SORTSIZE"]
            raise SasError("Invalid value for SORTSIZE=", line, col, opts.get("SORTSIZE"), str(exc)) from None
        saved = program.options.get("SORTSIZE")
        program.options.values["SORTSIZE"] = size   # the procedure's own, for this step only
        try:
            _sort(program, first, opts, by)
        finally:
            program.options.values["SORTSIZE"] = saved
    else:
        _sort(program, first, opts, by)


def _sort(program: Any, first, opts, by: list[tuple[str, bool]]) -> None:
    src = input_dataset(program, opts, "DATA", first)
    cols, sql = open_input(program, src)
    line = first.line
    keys = resolve_names([n for n, _ in by], cols, src, line)
    desc = [d for _, d in by]
    equals = not opts.get("NOEQUALS")
    nodupkey, noduprecs = bool(opts.get("NODUPKEY")), bool(opts.get("NODUPRECS")) and not opts.get("NODUPKEY")
    out = opts.get("OUT") or src
    dupout = opts.get("DUPOUT")
    if dupout is not None and not (nodupkey or noduprecs):
        program.log.warning("DUPOUT= is ignored without NODUPKEY or NODUPRECS.")
        dupout = None

    # the observation's number in the file: the tie-breaker that makes the sort stable (EQUALS)
    numbered = input_sql(program, src, cols, row_number=_ROW, row_number_type="BIGINT")
    specials = file_specials(program, src)
    carried = Carried(program, specials, numbered, _ROW) if specials else None
    if carried is not None:
        numbered = carried.sql            # special missing letters ride along; their order is SAS's
    # SAS: a missing value is smaller than any other (first ascending, last descending)
    order = ", ".join(carried.sort_key(c.name, d) if carried else
                      f"{sql_ident(c.name)} DESC NULLS LAST" if d else f"{sql_ident(c.name)} ASC NULLS FIRST"
                      for c, d in zip(keys, desc))
    tie = f", {_ROW}" if equals or nodupkey or noduprecs or carried else ""
    if not tie:
        numbered = sql
    names = ", ".join(sql_ident(c.name) for c in cols)
    codes = "".join(f", {code}" for code in carried.code.values()) if carried else ""
    sorted_kv = {SORTED_KEY: " ".join(("DESCENDING " if d else "") + c.name for c, d in zip(keys, desc))
                 + (" NODUPKEY" if nodupkey else " NODUPRECS" if noduprecs else "")}
    if out.keep is not None or out.drop is not None or out.rename:
        sorted_kv = {}                     # SAS keeps the sort flag only when every variable stays as it is
    if (opts.get("OUT") is None and not (nodupkey or noduprecs or opts.get("FORCE")) and not src.options
            and src.where is None and _stored_sort(program, src) == sorted_kv.get(SORTED_KEY, "").upper()):
        # SAS 9.4 Base Procedures, SORT: PROC SORT checks the stored sort information first and does not
        # sort a data set already sorted so (FORCE sorts anyway; with OUT= it copies)
        program.log.note("Input data set is already sorted, no sorting done.")
        if carried is not None:
            carried.drop()
        return
    n_in = int(program.session.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0])
    try:
        with sortsize(program):
            if nodupkey or noduprecs:
                _sort_nodup(program, src, out, dupout, cols, keys, nodupkey, numbered, order, tie, names, codes,
                            carried, sorted_kv, n_in)
            else:
                observations_read(program, n_in, src)
                kv = dict(sorted_kv)
                if carried is not None:
                    kv.update(carried.letters_of(numbered, f"{order}, {_ROW}", out, cols))
                write_select(program, out, f"SELECT {names} FROM ({numbered}) ORDER BY {order}{tie}", cols, kv)
    finally:
        if carried is not None:
            carried.drop()


def _sort_nodup(program, src, out, dupout, cols, keys, nodupkey: bool, numbered: str, order: str, tie: str,
                names: str, codes: str, carried, sorted_kv: dict, n_in: int) -> None:
    """NODUPKEY (the first observation of each key) or NODUPRECS (an observation equal in every variable to
    the one before it in the sorted order); DUPOUT= gets what either deletes. A special missing value's
    letter is part of the key (.A and .B differ)."""
    if nodupkey:
        part = ", ".join(t for c in keys for t in (carried.same_key(c.name) if carried else [sql_ident(c.name)]))
        flag = f"row_number() OVER (PARTITION BY {part} ORDER BY {_ROW}) > 1"
        marked = f"SELECT *, {flag} AS {_DUP} FROM ({numbered})"
    else:
        terms = [t for c in cols for t in (carried.same_key(c.name) if carried else [sql_ident(c.name)])]
        same = " AND ".join(f"{t} IS NOT DISTINCT FROM lag({t}) OVER w" for t in terms) or "TRUE"
        marked = (f"SELECT *, coalesce(row_number() OVER w > 1 AND {same}, FALSE) AS {_DUP} "
                  f"FROM ({numbered}) WINDOW w AS (ORDER BY {order}, {_ROW})")
    program.session.execute(f"CREATE OR REPLACE TEMP TABLE __sas_sorted AS "
                            f"SELECT {names}{codes}, {_DUP} FROM ({marked}) ORDER BY {order}{tie}")
    try:
        n_dup = int(program.session.execute(f"SELECT count(*) FROM __sas_sorted WHERE {_DUP}").fetchall()[0][0])
        observations_read(program, n_in, src)
        what = "observations with duplicate key values" if nodupkey else "duplicate observations"
        program.log.note(f"{n_dup} {what} were deleted.")
        # rowid keeps the sorted order the table was filled in
        for spec, cond, kv in ((out, f"NOT {_DUP}", sorted_kv), (dupout, _DUP, {})):
            if spec is None:
                continue
            kv = dict(kv)
            if carried is not None:
                kv.update(carried.letters_of(f"SELECT rowid AS __rid, * FROM __sas_sorted WHERE {cond}", "__rid",
                                             spec, cols))
            write_select(program, spec, f"SELECT {names} FROM __sas_sorted WHERE {cond} ORDER BY rowid", cols,
                         kv or None)
    finally:
        program.session.execute("DROP TABLE IF EXISTS __sas_sorted")


def _stored_sort(program: Any, src) -> str | None:
    """The BY list of the data set's stored sort flag (upper case, without NODUPKEY/NODUPRECS), or None."""
    import pyarrow.parquet as pq

    from statgrid.sas.dataset import dataset_path
    try:
        ref = dataset_path(program, src)
        if not ref.exists():
            return None
        kv = pq.read_schema(ref.path).metadata or {}
    except Exception:  # noqa: BLE001  (a view, a file that cannot be read: sort it)
        return None
    flag = (kv.get(SORTED_KEY.encode()) or b"").decode()
    if not flag:
        return None
    return flag.partition(" NODUP")[0].strip().upper()
