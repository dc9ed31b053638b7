"""Formats in PROC steps: the FORMAT statement of a PROC, and grouping by formatted values.

SAS groups the levels of PROC FREQ's tables and the CLASS variables of MEANS/SUMMARY and TABULATE by their
formatted values (SAS/STAT FREQ, "Grouping with Formats"; Base Procedures MEANS, CLASS statement): with
`format age agef.;` (a PROC FORMAT range) or `format x 1.;` the values that print alike are one level. Here
a level's rows carry one internal value — the lowest of the group, as SAS reports the level under ORDER=
INTERNAL — so the procedure runs unchanged on the input and prints and writes the level with its format.
A missing value stays its own level. The values are formatted in Python once per distinct value (the
formats' one implementation, statgrid/sas/formats), the mapping joined in DuckDB. A CLASS variable with MLF
under a MULTILABEL format is expanded instead (multilabel_levels): one row per label, the label its value.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME


def format_statement(c: Any, cols: list[ColumnInfo], program: Any = None) -> dict[str, str]:
    """A PROC's FORMAT statement (after FORMAT): `var … format. …`; a variable list without a format after it
    takes its format away. The named columns of `cols` are replaced (not changed: the data set's column
    records are shared) by copies with the format, so the listing and the grouping both see it."""
    from statgrid.sas.formats import known_format, not_found, parse_spec
    by_name = {col.name.upper(): i for i, col in enumerate(cols)}
    pending: list[str] = []
    given: dict[str, str] = {}
    while not c.at_end():
        if c.at_format() and pending:
            t = c.peek()
            fmt = c.format_name()
            spec = parse_spec(fmt)
            if program is not None and not known_format(spec, getattr(program, "formats", None)):
                raise not_found(spec, line=t.line, col=t.col)
            _assign(cols, by_name, pending, fmt)
            given.update(dict.fromkeys(pending, fmt))
            pending = []
            continue
        t = c.expect_kind(NAME, "a variable name or a format")
        if t.upper not in by_name:
            raise SasError(f"Variable {t.text} not found", t.line, t.col, t.text, "a variable of the input data set")
        pending.append(t.upper)
    _assign(cols, by_name, pending, "")
    given.update(dict.fromkeys(pending, ""))
    return given


def with_formats(cols: list[ColumnInfo], given: dict[str, str]) -> list[ColumnInfo]:
    """`cols` with the FORMAT statement's formats (format_statement's answer) put on copies."""
    return [dataclasses.replace(c, format=given[c.name.upper()]) if c.name.upper() in given else c for c in cols]


def _assign(cols: list[ColumnInfo], by_name: dict[str, int], names: list[str], fmt: str) -> None:
    for n in names:
        i = by_name[n]
        cols[i] = dataclasses.replace(cols[i], format=fmt)


def group_by_formats(program: Any, base: str, cols: list[ColumnInfo]) -> str:
    """`base` (an input SQL) with each of `cols` that has a format replaced by its level's internal value: the
    lowest value that formats alike. Columns whose every value formats apart are left as they are."""
    from statgrid.sas.formats import format_value
    catalog = getattr(program, "formats", None)
    con = program.session.con
    sql, grouped = base, 0
    for col in cols:
        if not col.format:
            continue
        q = sql_ident(col.name)
        values = [r[0] for r in con.cursor().execute(f"SELECT DISTINCT {q} FROM ({sql}) WHERE {q} IS NOT NULL"
                                                    + (f" AND {q} <> ''" if col.type == "char" else "")).fetchall()]
        label = {v: format_value(v, col.format, catalog).strip() for v in values}    # each value formatted once
        lowest: dict[str, Any] = {}
        for v in sorted(values):
            lowest.setdefault(label[v], v)
        if len(lowest) == len(values):
            continue                                    # one level per value: nothing to group
        pairs = [(v, lowest[label[v]]) for v in values]
        import pyarrow as pa
        kind = pa.string() if col.type == "char" else pa.float64()
        table = pa.table({"raw": pa.array([p[0] for p in pairs], kind), "lvl": pa.array([p[1] for p in pairs], kind)})
        # a table of the session's database (not a registration: the PROCs' cursors must see it), one per
        # grouped column of this step, replaced by the next step's
        name = f"__sg_fmtgroup_{grouped}"
        grouped += 1
        con.register("__sg_fmtgroup_arrow", table)
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM __sg_fmtgroup_arrow")
        con.unregister("__sg_fmtgroup_arrow")
        sql = (f"SELECT __b.* REPLACE (coalesce(__m.lvl, __b.{q}) AS {q}) FROM ({sql}) __b "
               f"LEFT JOIN {name} __m ON __b.{q} = __m.raw")
    return sql


def multilabel_levels(program: Any, base: str, cols: list[ColumnInfo], mlf: set[str] | frozenset = frozenset()
                      ) -> tuple[str, list[ColumnInfo], dict[str, str]]:
    """CLASS variables with MLF (Base Procedures MEANS and TABULATE, CLASS statement MLF option): each
    observation is put in the group of every label its value has under a MULTILABEL format, so `base` gets one
    row per (observation, label). The column becomes character, its value the label (stripped) — SAS's OUT=
    holds the formatted value of an MLF variable; levels then sort by that text. Each expanded column gets a
    companion `__sg_mlf_<i>` numbering an observation's labels from 0: a statistic that does not cross the
    variable counts only copy 0, so every observation is counted once there. Returns (sql, cols with the MLF
    columns replaced, {upper-case name: companion column}). A variable named in MLF whose format is not a
    MULTILABEL user format is left to group_by_formats, as SAS groups it by its one label."""
    from statgrid.sas.formats import parse_spec
    catalog = getattr(program, "formats", None)
    if not mlf or catalog is None:
        return base, cols, {}
    con = program.session.con
    out_cols = list(cols)
    copies: dict[str, str] = {}
    sql = base
    for i, col in enumerate(cols):
        if col.name.upper() not in mlf or not col.format:
            continue
        spec = parse_spec(col.format)
        fmt = catalog.get(("$" if spec.char else "") + spec.name) if spec.name else None
        if fmt is None or not fmt.multilabel or fmt.char != (col.type == "char"):
            continue
        q = sql_ident(col.name)
        values = [r[0] for r in con.cursor().execute(f"SELECT DISTINCT {q} FROM ({sql}) WHERE {q} IS NOT NULL"
                                                    + (f" AND {q} <> ''" if col.type == "char" else "")).fetchall()]
        raw, lvl, n = [], [], []
        for v in values:
            for k, text in enumerate(fmt.labels(v, catalog)):
                raw.append(v), lvl.append(text), n.append(k)
        import pyarrow as pa
        kind = pa.string() if col.type == "char" else pa.float64()
        table = pa.table({"raw": pa.array(raw, kind), "lvl": pa.array(lvl, pa.string()),
                          "n": pa.array(n, pa.int64())})
        copy = f"__sg_mlf_{len(copies)}"
        con.register("__sg_mlf_arrow", table)
        # named with its database and schema: a PROC's own cursor (TABULATE's) does not share the session's
        # search_path
        db, schema = con.execute("SELECT current_database(), current_schema()").fetchone()
        name = f"{sql_ident(db)}.{sql_ident(schema)}.__sg_mlf_map_{len(copies)}"
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM __sg_mlf_arrow")
        con.unregister("__sg_mlf_arrow")
        sql = (f"SELECT __b.* REPLACE (__m.lvl AS {q}), coalesce(__m.n, 0) AS {copy} FROM ({sql}) __b "
               f"LEFT JOIN {name} __m ON __b.{q} = __m.raw")
        width = max([len(t) for t in lvl] + [1])
        out_cols[i] = dataclasses.replace(col, type="char", length=width, format="", sql_type="VARCHAR")
        copies[col.name.upper()] = copy
    return sql, out_cols, copies


def first_copies(copies: dict[str, str], crossed: set[str] | frozenset = frozenset()) -> str:
    """The SQL condition keeping one row per observation for every MLF variable not in `crossed` (names upper
    case): '' when there is none."""
    return " AND ".join(f"{c} = 0" for n, c in copies.items() if n not in crossed)


def format_order_sql(program: Any, column: str, fmt_text: str) -> str | None:
    """An SQL expression ranking an MLF column's labels (its values after multilabel_levels) in the order its
    format keeps its ranges — sorted by start, or as written with NOTSORTED — for CLASS x / MLF PRELOADFMT
    ORDER=DATA (Base Procedures MEANS, CLASS statement: "PRELOADFMT … ORDER=DATA … the order in which the
    format's values are defined"). Labels the ranges do not name (pictures, nested formats, BEST. text) sort
    after them. None when the format is not a user format."""
    from statgrid.sas.formats import parse_spec
    catalog = getattr(program, "formats", None)
    spec = parse_spec(fmt_text) if fmt_text else None
    fmt = catalog.get(("$" if spec.char else "") + spec.name) if catalog is not None and spec and spec.name else None
    if fmt is None:
        return None
    whens, seen = [], set()
    for r in fmt.ranges:
        if r.label_format or r.pic is not None:
            continue
        text = str(r.label).strip()
        if text not in seen:
            seen.add(text)
            whens.append(f"WHEN '{text.replace(chr(39), chr(39) * 2)}' THEN {len(seen)}")
    if not whens:
        return None
    return f"CASE {sql_ident(column)} {' '.join(whens)} ELSE {len(seen) + 1} END"


def types_apart(aggregate: Any, masks: list[int], byc: list[ColumnInfo], classc: list[ColumnInfo],
                copies: dict[str, str], rank: dict[str, str | None]) -> str:
    """MEANS/SUMMARY with MLF variables: one aggregate query per type (`aggregate(mask list, condition)` gives
    it, the condition keeping one copy of each observation for the MLF variables the type does not cross),
    joined into one answer in MEANS' layout — BY values, CLASS values, the rest — ordered by BY, _TYPE_ and
    the CLASS values (an MLF variable's by `rank`, format_order_sql's expression, when it has one). A mask's
    bit for the i-th of k CLASS variables is 2**(k-1-i)."""
    k = len(classc)
    parts = [aggregate([m], first_copies(copies, {c.name.upper() for i, c in enumerate(classc)
                                                  if m >> (k - 1 - i) & 1})) for m in masks]
    lead = [sql_ident(c.name) for c in byc + classc]
    order = [f"{q} NULLS FIRST" for q in lead[:len(byc)]] + ["__type"] + \
        [f"{rank[c.name.upper()]}, {q}" if rank.get(c.name.upper()) and c.name.upper() in copies
         else f"{q} NULLS FIRST" for c, q in zip(classc, lead[len(byc):])]
    union = " UNION ALL BY NAME ".join(f"SELECT * FROM ({p})" for p in parts)
    return f"SELECT {', '.join(lead)}, * EXCLUDE ({', '.join(lead)}) FROM ({union}) ORDER BY {', '.join(order)}"
