"""Special missing values (.A-.Z, ._) through set-wise SQL steps (PROC SORT, PROC SQL).

A data set file keeps the letters of its special missing values in its metadata, by row
(dataset.SPECIALS_KEY: {column: {0-based row: letter}}); in the Parquet columns they are NULLs like `.`.
A step that reorders or selects rows in SQL carries them this way:

1. `attach`: the rows that hold a letter go into a small temporary table (row, one code column per
   column with letters), LEFT JOINed to the step's input on the file's row number — a code is NULL for
   every other row (`.` or a value);
2. `sort_keys`: SAS's order of missing values (SAS 9.4 Language Reference: Concepts, "Order of Missing
   Values"): ._ < . < .A < … < .Z < any number, DESCENDING the reverse — a rank before the value itself;
3. `letters_of`: after the rows are written in a known order, which output rows hold which letter,
   as the metadata of the written file.

A file without letters takes none of this (the caller checks `file_specials` first), so steps over
ordinary data pay nothing.
"""
from __future__ import annotations

import itertools
import json
from typing import Any

from statgrid.libraries import sql_ident

_TABLES = itertools.count(1)
_FEW = 256          # letters looked up inline up to this many rows; a joined table beyond


def file_specials(program: Any, spec: Any) -> dict[str, dict[int, str]]:
    """{COLUMN: {0-based file row: letter}} of a data set read whole from its file; {} for a view, a file
    without letters, or a data set read from a library statgrid cannot map to a file."""
    from statgrid.sas.dataset import dataset_path, read_specials
    try:
        ref = dataset_path(program, spec)
        if not ref.exists() or str(ref.path).endswith(".view.json"):
            return {}
        letters = read_specials(ref.path)
    except Exception:  # noqa: BLE001  (no file to read: nothing to carry)
        return {}
    renames = {k.upper(): v.upper() for k, v in (getattr(spec, "rename", None) or {}).items()}
    return {renames.get(c, c): rows for c, rows in letters.items()}    # under the names RENAME= gives


class Carried:
    """The letters of one input joined to its rows: `code[COLUMN]` names the code column of COLUMN in
    `sql` (in the file's order when `ordered`; a caller that sorts anyway need not); `drop()` removes the
    temporary table."""

    def __init__(self, program: Any, specials: dict[str, dict[int, str]], sql: str, row_col: str,
                 ordered: bool = False):
        self.program = program
        self.table = ""
        cols = sorted(specials)
        self.code = {c: f"__sas_code_{i}" for i, c in enumerate(cols)}
        rows = sorted({r for c in cols for r in specials[c]})
        row = f"__n.{sql_ident(row_col)}"
        if len(rows) <= _FEW:
            # a few letters (the usual case): looked up by row number in the projection — no join, the rows
            # keep their order and nothing is left behind
            def lookup(c: str) -> str:
                per = specials[c]
                if not per:                           # a column without letters (yet): its code is none
                    return f"CAST(NULL AS VARCHAR) AS {self.code[c]}"
                whens = " ".join(f"WHEN {r} THEN '{per[r]}'" for r in sorted(per))
                return (f"CASE WHEN {row} IN ({', '.join(map(str, sorted(per)))}) THEN CASE {row} {whens} END END "
                        f"AS {self.code[c]}")
            self.sql = f"SELECT __n.*, {', '.join(lookup(c) for c in cols)} FROM ({sql}) __n"
            return
        self.table = f"__sas_special_{next(_TABLES)}"
        import pyarrow as pa
        arrays = [pa.array(rows, pa.int64())] + [pa.array([specials[c].get(r) for r in rows], pa.string())
                                                 for c in cols]
        table = pa.table(arrays, names=["r"] + [self.code[c] for c in cols])
        con = program.session.con
        con.register(self.table + "_arrow", table)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {self.table} AS SELECT * FROM {self.table}_arrow")
        con.unregister(self.table + "_arrow")
        codes = ", ".join(f"__s.{self.code[c]}" for c in cols)
        self.sql = f"SELECT __n.*, {codes} FROM ({sql}) __n LEFT JOIN {self.table} __s ON __s.r = {row}"
        if ordered:                       # a join's rows come in any order: the file's order again
            self.sql += f" ORDER BY {row}"

    def drop(self) -> None:
        if self.table:
            self.program.session.execute(f"DROP TABLE IF EXISTS {self.table}")

    def compare(self, left: str, op: str, letter: str | None) -> str | None:
        """`left op .` / `left op .A` for a column with letters: the test SAS makes (= and <> only: `x = .A` is
        true for .A only, `x = .` for the ordinary missing only), else None."""
        if op not in ("=", "<>"):
            return None
        code = self.code.get(left.rsplit(".", 1)[-1].strip('"').upper())
        if code is None:
            return None
        lit = f"'{letter.upper()}'" if letter else "NULL"
        if op == "=":
            return f"({left} IS NULL AND {code} IS NOT DISTINCT FROM {lit})"
        return f"({left} IS NOT NULL OR {code} IS DISTINCT FROM {lit})"

    def sort_key(self, column: str, descending: bool) -> str:
        """ORDER BY terms for `column` in SAS's order, special missing values included."""
        q = sql_ident(column)
        code = self.code.get(column.upper())
        if code is None:
            return f"{q} DESC NULLS LAST" if descending else f"{q} ASC NULLS FIRST"
        rank = (f"CASE WHEN {q} IS NOT NULL THEN 28 WHEN {code} IS NULL THEN 1 WHEN {code} = '_' THEN 0 "
                f"ELSE ascii({code}) - 63 END")
        way = "DESC" if descending else "ASC"
        return f"{rank} {way}, {q} {way}"

    def same_key(self, column: str) -> list[str]:
        """What makes two rows' values of `column` the same key: the value and, with letters, the letter."""
        code = self.code.get(column.upper())
        return [sql_ident(column)] + ([code] if code else [])

    def letters_of(self, from_sql: str, order_by: str, spec: Any, cols: list) -> dict[str, str]:
        """{SPECIALS_KEY: json} for the output written from `from_sql` (with this input's code columns) in
        the order `order_by`, which must be total (a row number last): output row → letter, under the
        output's names (RENAME=), only for the columns it keeps (`cols`: the ColumnInfo written); {} when
        none is left or an output WHERE= renumbers the rows."""
        from statgrid.sas.dataset import SPECIALS_KEY, output_names
        if getattr(spec, "where", None) is not None:
            return {}
        names = [c.name for c in cols]
        keep = output_names(spec, names, {c.name.upper(): c.type for c in cols})
        kept = [c for c in self.code if c in keep]
        if not kept:
            return {}
        codes = ", ".join(self.code[c] for c in kept)
        any_code = " OR ".join(f"{self.code[c]} IS NOT NULL" for c in kept)
        rows = self.program.session.execute(
            f"SELECT * FROM (SELECT row_number() OVER (ORDER BY {order_by}) - 1 AS __o, {codes} "
            f"FROM ({from_sql})) WHERE {any_code}").fetchall()
        by_name = {n.upper(): n for n in names}
        out: dict[str, dict[str, str]] = {}
        for row in rows:
            for j, c in enumerate(kept):
                if row[j + 1] is not None:
                    name = (spec.rename or {}).get(c, by_name.get(c, c))
                    out.setdefault(name, {})[str(row[0])] = row[j + 1]
        return {SPECIALS_KEY: json.dumps(out)} if out else {}


def stacked_letters(program: Any, parts: list[tuple[Any, list, dict[str, str]]]) -> dict[str, str]:
    """{SPECIALS_KEY: json} for an output whose rows are the rows of `parts` one after another (PROC APPEND:
    the base's, then the new data's): each part is (its DatasetSpec, its ColumnInfo list, {COLUMN: output
    column name} for the columns it brings). A part read with WHERE=/FIRSTOBS=/OBS= is numbered over the rows
    it gives; {} when no part has letters."""
    from statgrid.sas.dataset import SPECIALS_KEY, input_sql
    out: dict[str, dict[str, str]] = {}
    offset = 0
    for spec, cols, names in parts:
        specials = {c: rows for c, rows in file_specials(program, spec).items() if c in names}
        numbered = input_sql(program, spec, cols, row_number="__sas_part_row", row_number_type="BIGINT")
        if specials:
            wanted = sorted({r for rows in specials.values() for r in rows})
            found = program.session.execute(
                f"SELECT __o, __sas_part_row FROM (SELECT row_number() OVER (ORDER BY __sas_part_row) - 1 AS __o, "
                f"__sas_part_row FROM ({numbered})) WHERE __sas_part_row IN ({', '.join(map(str, wanted))})"
            ).fetchall()
            for o, r in found:
                for c, rows in specials.items():
                    if r in rows:
                        out.setdefault(names[c], {})[str(offset + o)] = rows[r]
        offset += int(program.session.execute(f"SELECT count(*) FROM ({numbered})").fetchall()[0][0])
    return {SPECIALS_KEY: json.dumps(out)} if out else {}


def letters_joined(program: Any, spec: Any, cols: list, base: str, names: set[str]) -> tuple[str, dict[str, str]]:
    """(`base` with the letters of the numeric columns `names` joined on as code columns — the data set read
    whole from its file, in its order —, {COLUMN: code column}); (`base`, {}) when none of them has letters."""
    from statgrid.sas.dataset import input_sql
    letters = {c: per for c, per in file_specials(program, spec).items() if c in names}
    if not letters:
        return base, {}
    carried = Carried(program, letters, input_sql(program, spec, cols, row_number="__sas_proc_row",
                                                  row_number_type="BIGINT"), "__sas_proc_row", ordered=True)
    return carried.sql, dict(carried.code)


def _level(code: str) -> float:
    """A special missing value's stand-in as a CLASS level: far below any data (._ first, then .A … .Z)."""
    return -1e300 * (100.0 if code == "_" else 100.0 - (ord(code) - 60))


def letters_as_levels(program: Any, spec: Any, cols: list, base: str, classc: list) -> tuple[str, dict]:
    """`base` with each CLASS variable that has letters holding a stand-in number per letter (so a GROUP BY
    tells .A from .B and from .), and {COLUMN: {stand-in: letter}} to turn the groups' levels back;
    (`base`, {}) when none has letters. For MISSING class levels only (without MISSING they are left out)."""
    from statgrid.sas.dataset import input_sql
    names = {c.name.upper() for c in classc if c.type == "num"}
    letters = {c: per for c, per in file_specials(program, spec).items() if c in names}
    if not letters:
        return base, {}
    carried = Carried(program, letters, input_sql(program, spec, cols, row_number="__sas_proc_row",
                                                  row_number_type="BIGINT"), "__sas_proc_row", ordered=True)
    swaps = []
    for c, code in carried.code.items():
        q = sql_ident(next(x.name for x in classc if x.name.upper() == c))
        swaps.append(f"CASE WHEN {code} = '_' THEN {_level('_')!r} WHEN {code} IS NOT NULL THEN "
                     f"-1e300 * (100.0 - (ascii({code}) - 60)) ELSE {q} END AS {q}")
    decode = {c: {_level(v): v for v in set(per.values())} for c, per in letters.items()}
    return f"SELECT * REPLACE ({', '.join(swaps)}) FROM ({carried.sql})", decode


def levels_back(groups: list, classc: list, decode: dict) -> None:
    """The groups' CLASS levels that stand in for letters turned back into the special missing values."""
    from statgrid.sas.values import special_missing
    if not decode:
        return
    where = [decode.get(c.name.upper()) for c in classc]
    for g in groups:
        g.classes = tuple(special_missing(m[v]) if m and v in m else v for v, m in zip(g.classes, where))
