"""Special missing values (.A-.Z, ._) through PROC SQL queries over one data set.

SAS keeps a special missing value's letter through a query and orders it as everywhere else (._ < . < .A <
… < .Z < numbers); `x = .A` is true for .A only and `x = .` for the ordinary missing only (SAS 9.4 SQL
Procedure User's Guide, "Missing values"; Language Reference: Concepts, "Order of Missing Values").
statgrid's files keep the letters apart from the values (sas/specials_sql.py), so a query carries them when
its rows are the rows of one data set — `SELECT items FROM one-table [WHERE …] [ORDER BY …]`, no join, GROUP BY,
DISTINCT, set operator or aggregate: the table is read with its letters joined on (a code column per column
that has any), each selected plain column (or `*`) brings its code as a hidden result column
`__sas_letter__NAME`, ORDER BY keys over such columns sort on SAS's missing order first, and comparisons of
such a column with `.` or `.A` test the letter. Any other query runs as before (letters become `.`).
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.cursor import TokenCursor
from statgrid.sas.lexer import NAME, NUM, OP
from statgrid.sas.procs.sqltext import at_top
from statgrid.sas.specials_sql import Carried, file_specials

ROW = "__sas_sql_row"
LETTER = "__sas_letter__"
_STOP = {"GROUP", "HAVING", "UNION", "EXCEPT", "INTERSECT", "OUTER", "JOIN", "INNER", "LEFT", "RIGHT", "FULL",
         "CROSS", "NATURAL"}


def plan(program: Any, text: Any, toks: list, start: int, end: int, frm: int, distinct: bool) -> Carried | None:
    """The letters of the query's one table, set up for `text` (text.carried), or None when the query is not
    of the shape above or its table has no letters."""
    from statgrid.sas.dataset import column_info, input_sql
    from statgrid.sas.parse.dsname import parse_dataset

    if frm < 0 or distinct or frm + 1 >= end or toks[frm + 1].kind != NAME \
            or toks[frm + 1].is_("SELECT", "DICTIONARY", "SASHELP"):
        return None
    in_from = True
    for _, t in at_top(toks, frm + 1, end):
        if t.kind == NAME and t.upper in _STOP or (in_from and t.kind == OP and t.text == ","):
            return None                                     # a join, a FROM list, groups, a set operator
        if t.kind == NAME and t.upper in ("WHERE", "ORDER"):
            in_from = False
    try:
        cur = TokenCursor(toks[:end], text.source)
        cur.i = frm + 1
        spec = parse_dataset(cur, program)
        specials = file_specials(program, spec)
        if not specials:
            return None
        cols = column_info(program, spec)
    except Exception:  # noqa: BLE001  (the translation reports a bad table as it always has)
        return None
    carried = Carried(program, specials, input_sql(program, spec, cols, row_number=ROW, row_number_type="BIGINT"),
                      ROW, ordered=True)
    text.carried, text.carried_at = carried, frm + 1
    return carried


def hidden(carried: Carried) -> str:
    """What `*` leaves out: the row number and the code columns."""
    return " EXCLUDE (" + ", ".join([ROW, *carried.code.values()]) + ")"


def letter_items(carried: Carried, outputs: list[tuple[str | None, str | None, bool]]) -> list[str]:
    """Hidden result columns for the letters: `outputs` = per select item (output name, source column name
    of a plain column reference, is a `*`)."""
    items, seen = [], set()
    for name, source, star in outputs:
        pairs = ([(c, c) for c in carried.code] if star else
                 [(name, source.upper())] if name and source and source.upper() in carried.code else [])
        for out_name, src in pairs:
            if out_name.upper() not in seen:
                seen.add(out_name.upper())
                items.append(f"{carried.code[src]} AS {sql_ident(LETTER + out_name.upper())}")
    return items


def order_by(carried: Carried, text: Any, toks: list, order: int, end: int,
             outputs: list[tuple[str | None, str | None, bool]]) -> str:
    """ORDER BY … with SAS's missing order for the keys that are columns with letters."""
    parts, a = [], order + 2
    bounds = [k for k, t in at_top(toks, a, end) if t.kind == OP and t.text == ","] + [end]
    for b in bounds:
        item = text.translate_sub(a, b)
        key, way = toks[a:b], "ASC"
        if key and key[-1].is_("DESC", "ASC"):
            way, key = key[-1].upper, key[:-1]
        source = None
        if len(key) == 1 and key[0].kind == NUM and 1 <= int(key[0].value) <= len(outputs):
            source = outputs[int(key[0].value) - 1][1]
        elif len(key) == 1 and key[0].kind == NAME:
            # an output column's name (an alias) stands for its source column
            source = next((src for name, src, _ in outputs if name and src and name.upper() == key[0].upper),
                          key[0].text)
        elif len(key) == 3 and key[1].text == "." and key[2].kind == NAME:
            source = key[2].text
        if source and source.upper() in carried.code:
            parts.append(carried.sort_key(source, way == "DESC").split(", ")[0])
        parts.append(item)
        a = b + 1
    return "ORDER BY " + ", ".join(parts)


def split_letters(names: list[str]) -> tuple[list[int], dict[int, int]]:
    """Of a result's column names: the visible columns' positions, and {visible position: its letter's}."""
    visible = [j for j, n in enumerate(names) if not n.startswith("__sas_")]
    where = {n.upper(): j for j, n in enumerate(names) if not n.startswith("__sas_")}
    letters = {where[n[len(LETTER):].upper()]: j for j, n in enumerate(names)
               if n.startswith(LETTER) and n[len(LETTER):].upper() in where}
    return visible, letters


def letters_kv(program: Any, table: str, spec: Any, cols: list) -> dict[str, str]:
    """{SPECIALS_KEY: json} for the data set `spec` written from temporary table `table` in its rowid order
    (the query's result with its hidden letter columns): output row → letter by output column name, for
    the columns the output keeps (KEEP=/DROP=/RENAME=); {} when none, or when an output WHERE= renumbers."""
    import json

    from statgrid.sas.dataset import SPECIALS_KEY, output_names
    names = [d[0] for d in program.session.execute(f"SELECT * FROM {table} LIMIT 0").description]
    keep = output_names(spec, [c.name for c in cols], {c.name.upper(): c.type for c in cols})
    by_upper = {c.name.upper(): c.name for c in cols}
    kept = [n for n in names if n.startswith(LETTER) and n[len(LETTER):] in keep]
    if not kept or getattr(spec, "where", None) is not None:
        return {}
    any_code = " OR ".join(f"{sql_ident(n)} IS NOT NULL" for n in kept)
    rows = program.session.execute(
        f"SELECT * FROM (SELECT row_number() OVER (ORDER BY rowid) - 1 AS __o, {', '.join(map(sql_ident, kept))} "
        f"FROM {table}) WHERE {any_code}").fetchall()
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        for j, n in enumerate(kept):
            if row[j + 1] is not None:
                up = n[len(LETTER):]
                name = (spec.rename or {}).get(up, by_upper.get(up, up))
                out.setdefault(name, {})[str(row[0])] = row[j + 1]
    return {SPECIALS_KEY: json.dumps(out)} if out else {}


def write_rows(program: Any, query: Any, spec: Any, cols: list, write: Any) -> Any:
    """Write `query`'s rows as data set `spec` through `write(sql, kv)`; with letters to carry, the rows are
    kept once in a temporary table, so the letters are read by row from the very rows written."""
    if query.carried is None:
        return write(query.sql, None)
    program.session.execute(f"CREATE OR REPLACE TEMP TABLE __sas_sql_rows AS {query.sql}")
    try:
        return write("SELECT * FROM __sas_sql_rows ORDER BY rowid", letters_kv(program, "__sas_sql_rows", spec, cols))
    finally:
        program.session.execute("DROP TABLE IF EXISTS __sas_sql_rows")


def dml_frame(program: Any, spec: Any, cols: list, text: Any) -> Carried | None:
    """For DELETE and UPDATE of a table with letters: the table read with its row number and code columns
    (Carried.sql, in the file's order), set up for `text` so that its WHERE tells .A from . and .B; None when
    the table has none."""
    from statgrid.sas.dataset import input_sql
    from statgrid.sas.parse.dsname import DatasetSpec
    whole = DatasetSpec(spec.libref, spec.member)
    letters = file_specials(program, whole)
    if not letters:
        return None
    for c in cols:                                  # every numeric column: SET may give it a letter
        if c.type == "num":
            letters.setdefault(c.name.upper(), {})
    carried = Carried(program, letters, input_sql(program, whole, cols, row_number=ROW, row_number_type="BIGINT"),
                      ROW, ordered=True)
    text.carried, text.carried_at = carried, -2
    return carried


def updated_codes(carried: Carried, set_toks: dict[str, list], cond: str) -> str:
    """The row number and each code column after UPDATE's SET on the rows `cond` is true for: a column set to
    a column with letters takes that column's letter, one set to `.Z` the letter Z, one set to anything else
    none; the other rows and columns keep theirs."""
    items = [ROW]
    for col, code in carried.code.items():
        toks = set_toks.get(col)
        if toks is None:
            items.append(code)
            continue
        new = "NULL"
        if len(toks) == 1 and toks[0].kind == NAME and toks[0].upper in carried.code:
            new = carried.code[toks[0].upper]
        elif len(toks) == 2 and toks[0].text == "." and toks[1].kind == NAME and len(toks[1].text) == 1 \
                and toks[0].touches(toks[1]):
            new = f"'{toks[1].text.upper()}'"
        elif len(toks) == 1 and toks[0].kind == OP and toks[0].text == ".":
            new = "NULL"
        items.append(f"CASE WHEN coalesce(({cond}), FALSE) THEN {new} ELSE {code} END AS {code}")
    return ", ".join(items)


def kept_letters(program: Any, spec: Any, cols: list) -> dict | None:
    """The letters of a table INSERT rewrites (its rows stay where they are, the new ones come after):
    the file's own, under its columns' names; None when it has none."""
    import json

    from statgrid.sas.dataset import SPECIALS_KEY
    from statgrid.sas.parse.dsname import DatasetSpec
    letters = file_specials(program, DatasetSpec(spec.libref, spec.member))
    names = {c.name.upper(): c.name for c in cols}
    out = {names.get(c, c): {str(r): v for r, v in per.items()} for c, per in letters.items()}
    return {SPECIALS_KEY: json.dumps(out)} if out else None
