"""What PROC SQL's translation (sqltext.py) needs in the engine: PUT and INPUT as DuckDB functions over
statgrid's formats (the program's user formats included), and DICTIONARY.TABLES / DICTIONARY.COLUMNS
(SASHELP.VTABLE / VCOLUMN) as queries over the assigned libraries."""
from __future__ import annotations

import os
from typing import Any

from statgrid.libraries import sql_literal


def register(program: Any) -> None:
    """sas_put_n(x, fmt), sas_put_c(s, fmt), sas_input_n(s, informat), sas_input_c(s, informat) on the
    session's connection, bound to this program's format catalog (once per program)."""
    con = program.session.con
    done = program.extras.setdefault("sql_udfs", set())
    if id(con) in done:
        return
    from statgrid.sas.formats import InvalidData, format_value, informat_value

    def put_n(x, fmt):
        return format_value(float("nan") if x is None else float(x), fmt, program.formats, ".").strip()

    def put_c(x, fmt):
        return format_value("" if x is None else str(x), fmt, program.formats, ".").rstrip()

    def input_n(s, fmt):
        try:
            v = informat_value("" if s is None else str(s), fmt, program.formats, whole=True)
        except (InvalidData, ValueError):
            return None
        return None if v is None or v != v else float(v)

    def input_c(s, fmt):
        try:
            return informat_value("" if s is None else str(s), fmt, program.formats, whole=True)
        except (InvalidData, ValueError):
            return None

    for name, fn, types, ret in (("sas_put_n", put_n, ["DOUBLE", "VARCHAR"], "VARCHAR"),
                                 ("sas_put_c", put_c, ["VARCHAR", "VARCHAR"], "VARCHAR"),
                                 ("sas_input_n", input_n, ["VARCHAR", "VARCHAR"], "DOUBLE"),
                                 ("sas_input_c", input_c, ["VARCHAR", "VARCHAR"], "VARCHAR")):
        try:
            con.remove_function(name)
        except Exception:  # noqa: BLE001 - not registered yet
            pass
        con.create_function(name, fn, types, ret, null_handling="special", side_effects=False)
    done.add(id(con))


def dictionary_sql(program: Any, kind: str) -> str:
    """DICTIONARY.TABLES (libname, memname, memtype, nobs, nvar, memlabel, filesize) or DICTIONARY.COLUMNS
    (libname, memname, memtype, name, type, length, varnum, label, format, informat) as a VALUES query;
    libname and memname upper case, as SAS keeps them."""
    import pyarrow.parquet as pq

    from statgrid.sas.dataset import LABEL_KEY, VIEW_SUFFIX, DatasetSpec, stored_columns

    rows = []
    for lib in program.session.libraries:
        for member in lib.members():
            if member.startswith("_view_"):          # a view's rows for the step reading it: not a member
                continue
            path = lib.member_path(member)
            spec = DatasetSpec(lib.name.upper(), member.upper())
            try:
                cols = stored_columns(program, spec)
                meta = pq.read_metadata(path)
            except Exception:  # noqa: BLE001 - a member being replaced: left out, as SAS skips locked ones
                continue
            if kind == "TABLES":
                label = ((meta.metadata or {}).get(LABEL_KEY.encode()) or b"").decode("utf-8", "replace")
                rows.append([lib.name.upper(), member.upper(), "DATA", float(meta.num_rows), float(len(cols)), label,
                             float(path.stat().st_size)])
            else:
                for n, c in enumerate(cols, 1):
                    rows.append([lib.name.upper(), member.upper(), "DATA", c.name, c.type, float(c.length), float(n),
                                 c.label, c.format, c.informat])
        if kind == "TABLES":                          # views (DATA step or SQL): memtype VIEW, no row count
            try:
                views = sorted(e.name[:-len(VIEW_SUFFIX)] for e in os.scandir(lib.path)
                               if e.name.endswith(VIEW_SUFFIX) and e.is_file())
            except OSError:
                views = []
            rows += [[lib.name.upper(), v.upper(), "VIEW", None, None, "", None] for v in views]
    if kind == "TABLES":
        names = ["libname", "memname", "memtype", "nobs", "nvar", "memlabel", "filesize"]
        types = ["VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE", "DOUBLE", "VARCHAR", "DOUBLE"]
    else:
        names = ["libname", "memname", "memtype", "name", "type", "length", "varnum", "label", "format", "informat"]
        types = ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "DOUBLE", "DOUBLE", "VARCHAR", "VARCHAR",
                 "VARCHAR"]
    if not rows:
        cols = ", ".join(f"CAST(NULL AS {t}) AS {n}" for n, t in zip(names, types))
        return f"SELECT {cols} WHERE FALSE"

    def lit(v, t):
        if t == "VARCHAR":
            return sql_literal(str(v or ""))
        return "CAST(NULL AS DOUBLE)" if v is None else repr(float(v))
    values = ", ".join("(" + ", ".join(lit(v, t) for v, t in zip(r, types)) + ")" for r in rows)
    return f"SELECT * FROM (VALUES {values}) AS t({', '.join(names)})"
