"""PROC TABULATE (Base SAS Procedures: TABULATE): tables of statistics over CLASS levels.

    PROC TABULATE <DATA=> <OUT=ds> <MISSING> <FORMAT=fmt> <NOSEPS> <ORDER=>;
      CLASS vars </ MISSING>; VAR vars; BY vars; WHERE expr; KEYLABEL kw='text' …;
      TABLE <<page,> row,> column </ BOX= RTS= MISSTEXT= PRINTMISS>;

Dimension expressions: a space concatenates, `*` crosses, parentheses group, ALL is the total over a
CLASS variable's levels, a statistic keyword (N NMISS SUM MEAN STD VAR MIN MAX RANGE MEDIAN Q1 Q3 P1 … P99
PCTN PCTSUM USS CSS CV STDERR) names the cell's statistic (default: SUM for an analysis variable, N
otherwise), `F=fmt` (or `*f=fmt`) the cell's format, `name='label'` a heading. Each cell's value comes from
one aggregate over the CLASS variables it crosses; observations with a missing CLASS value are left out
unless MISSING. PCTN and PCTSUM are percentages of the whole table's N or SUM.
OUT= has SAS's layout: the CLASS variables, _TYPE_ (a string of 0/1 per CLASS variable), _PAGE_, _TABLE_,
then one variable per analysis variable and statistic used (x_Mean, x_Sum, N, PctN_…), one observation per
combination of CLASS levels a cell needs.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from statgrid.libraries import sql_ident
from statgrid.procs._quantile import DEFAULT_QNTLDEF, quantiles_sql
from statgrid.procs.summary import STATISTICS
from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError
from statgrid.sas import ods
from statgrid.sas.lexer import NAME, STR
from statgrid.sas.procs.byruns import by_columns, group_id, runs_on, with_runs
from statgrid.sas.procs.common import (DATASET, FLAG, VALUE, by_condition, by_keys, by_list, by_rule, by_text,
                                       check_by_sorted, fetch_rows, format_cell, narrowed_input, observations_read,
                                       resolve_names, var_names, where_statement, write_rows)
from statgrid.sas.procs.fmtgroup import first_copies, format_statement, group_by_formats, multilabel_levels
from statgrid.sas.procs.step import begin, data_input, each_statement

OPTIONS = {"DATA": DATASET, "OUT": DATASET, "MISSING": FLAG, "FORMAT": VALUE, "NOSEPS": FLAG, "ORDER": VALUE,
           "QMETHOD": VALUE, "QNTLDEF": VALUE, "PCTLDEF": VALUE, "VARDEF": VALUE, "FORMCHAR": VALUE,
           "CONTENTS": VALUE, "STYLE": VALUE, "NOTRAP": FLAG, "EXCLNPWGT": FLAG, "DEPTH": VALUE}
SQL_STATS = {"N": "n", "NMISS": "nmiss", "SUM": "sum", "MEAN": "mean", "STD": "std", "STDDEV": "std", "VAR": "var",
             "MIN": "min", "MAX": "max", "RANGE": "range", "USS": "uss", "CSS": "css", "CV": "cv",
             "STDERR": "stderr"}
PCT = {"MEDIAN": 50, "P50": 50, "Q1": 25, "P25": 25, "Q3": 75, "P75": 75, "P1": 1, "P5": 5, "P10": 10, "P90": 90,
       "P95": 95, "P99": 99}
STAT_NAMES = {"N": "N", "NMISS": "NMiss", "SUM": "Sum", "MEAN": "Mean", "STD": "Std", "STDDEV": "Std", "VAR": "Var",
              "MIN": "Min", "MAX": "Max", "RANGE": "Range", "USS": "USS", "CSS": "CSS", "CV": "CV",
              "STDERR": "StdErr", "MEDIAN": "Median", "Q1": "Q1", "Q3": "Q3", "PCTN": "PctN", "PCTSUM": "PctSum",
              **{k: k for k in PCT if k.startswith("P")}}
KEYWORDS = set(SQL_STATS) | set(PCT) | {"PCTN", "PCTSUM"}


@dataclass
class Elem:
    kind: str                    # class, var, stat, all, fmt
    name: str = ""
    label: str | None = None


@dataclass
class Cell:
    classes: tuple               # CLASS variable names (upper) the cell crosses
    var: str | None
    stat: str
    fmt: str
    path: list = field(default_factory=list)


@ods.proc_step
def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "TABULATE")
    src, cols = data_input(program, opts, first)
    classes, vars_, tables, labels, by = [], [], [], {}, []
    mlf_names: set[str] = set()
    class_missing = bool(opts.get("MISSING"))
    for stmt, kw, c in each_statement(rest):
        if kw == "CLASS":
            first_class = len(classes)
            while not c.at_end() and not c.at("/"):
                classes.append(c.expect_kind(NAME, "a CLASS variable").text)
            if c.accept("/"):
                class_missing = class_missing or any(t.is_("MISSING") for t in c.tokens[c.i:])
                if any(t.is_("MLF") for t in c.tokens[c.i:]):     # every label of a MULTILABEL format
                    mlf_names |= {n.upper() for n in classes[first_class:]}
        elif kw == "VAR":
            vars_ += [n for n in var_names(c, cols)]
        elif kw in ("TABLE", "TABLES"):
            tables.append(_table(c))
        elif kw == "KEYLABEL":
            while not c.at_end():
                k = c.next().upper
                c.expect("=")
                labels[k] = str(c.next().value)
        elif kw == "WHERE":
            where_statement(c, src)
        elif kw == "BY":
            by = by_list(c)
        elif kw == "FORMAT":                      # the listing's and the CLASS levels' formats
            format_statement(c, cols, program)
        elif kw in ("LABEL", "KEYWORD", "CLASSLEV", "FREQ", "WEIGHT"):
            if kw in ("FREQ", "WEIGHT"):
                t = stmt.tokens[0]
                raise SasError(f"The {kw} statement of PROC TABULATE is not supported by statgrid yet", t.line,
                               t.col, kw, "an unweighted table")
            continue
        else:
            t = stmt.tokens[0]
            raise SasError(f"Statement {t.text.upper()} is not valid in PROC TABULATE", t.line, t.col, t.text,
                           "CLASS, VAR, TABLE, KEYLABEL, WHERE")
    if not tables:
        t = first.tokens[0]
        raise SasError("PROC TABULATE needs a TABLE statement", t.line, t.col, "TABULATE", "TABLE row, column;")
    classc = resolve_names(classes, cols, src, first.line)
    varc = resolve_names(vars_, cols, src, first.line)
    cnames = {c.name.upper(): c for c in classc}
    vnames = {c.name.upper(): c for c in varc}
    byc = by_columns(resolve_names([n for n, _ in by], cols, src, first.line), by)
    if byc:
        check_by_sorted(program, src, cols, by)
    base = narrowed_input(program, src, cols, [c.name for c in byc + classc + varc])   # what the tables read
    if runs_on(byc):                                          # BY … NOTSORTED: each run a group (byruns.py)
        base = with_runs(base, byc)
    n_read = int(program.session.execute(f"SELECT count(*) FROM ({base})").fetchall()[0][0])
    base, classc, mlf = multilabel_levels(program, base, classc, mlf_names)   # CLASS x / MLF
    cnames = {c.name.upper(): c for c in classc}
    base = group_by_formats(program, base, classc)            # CLASS levels by their formatted values
    if not class_missing and classc:
        keep = " AND ".join(f"{sql_ident(c.name)} IS NOT NULL" + (f" AND {sql_ident(c.name)} <> ''" if c.type == "char"
                                                                   else "") for c in classc)
        base = f"SELECT * FROM ({base}) WHERE {keep}"
    qdef = int(opts.get("QNTLDEF", opts.get("PCTLDEF", DEFAULT_QNTLDEF)))
    default_fmt = str(opts.get("FORMAT") or "BEST12.")
    out_rows: dict[tuple, dict] = {}
    out_stats: list[tuple[str | None, str]] = []
    listing = ods.Listing(program, "")
    printing = not opts.get("NOPRINT")
    for bykey, t_index, dims in ((k, t, d) for k in by_keys(program, byc, base) for t, d in enumerate(tables, 1)):
        expanded = [_expand(d, cnames, vnames) for d in dims]
        while len(expanded) < 2:
            expanded.insert(0, [[]])
        cells = _cells(expanded, default_fmt)
        group = base
        if byc:                                           # one table per BY group, under its BY line
            group = f"SELECT * FROM ({base}) WHERE {by_condition(byc, bykey)}"
        values = _values(program, group, cells, classc, vnames, qdef, mlf)
        table_stats: list[tuple[str | None, str]] = []
        for cell, results in values:
            key = (cell.var, cell.stat)
            for keys in (out_stats, table_stats):
                if key not in keys:
                    keys.append(key)
            for levels, value in results.items():
                type_str = "".join("1" if c.name.upper() in cell.classes else "0" for c in classc)
                row = out_rows.setdefault((group_id(bykey), t_index, type_str, levels), {})
                row[key] = value
        if printing:
            mine = {k: v for k, v in out_rows.items() if k[:2] == (group_id(bykey), t_index)}
            if byc:
                listing.text(by_rule(by_text(program, zip(byc, bykey))), "")
            listing.table(_ods_table(byc, classc, vnames, table_stats, mine),
                          _render(program, values, cnames, vnames, labels).split("\n"))
    observations_read(program, n_read, src)
    listing.flush()
    if opts.get("OUT") is not None:
        out_cols, rows = _layout(byc, classc, vnames, out_stats, out_rows)
        write_rows(program, opts.get("OUT"), out_cols, rows)


def _layout(byc, classc, vnames, stats: list, out_rows: dict) -> tuple[list[ColumnInfo], list[list]]:
    """SAS's OUT= (and ODS Table) layout: the BY and CLASS variables, _TYPE_, _PAGE_, _TABLE_, then each analysis
    variable's statistic as var_Stat (N, PctN_… for class-only cells), one row per combination of levels."""
    out_cols = [ColumnInfo(c.name, c.type, c.length, c.format, "", c.label) for c in byc + classc]
    out_cols += [ColumnInfo("_TYPE_", "char", max(1, len(classc))), ColumnInfo("_PAGE_", "num", 8),
                 ColumnInfo("_TABLE_", "num", 8)]
    out_cols += [ColumnInfo(f"{vnames[var].name}_{STAT_NAMES[stat]}" if var else STAT_NAMES[stat], "num", 8)
                 for var, stat in stats]

    def order(kv):                      # a group's key: byruns.group_id, its NOTSORTED run (or None) first
        ((run, *bykey), t_index, type_str, levels) = kv[0]
        return (run or 0, [(v is not None, v if v is not None else 0) for v in bykey], t_index, type_str,
                [(v is not None, v if v is not None else 0) for _, v in levels])
    rows = []
    for ((_, *bykey), t_index, type_str, levels), vals in sorted(out_rows.items(), key=order):
        lv = dict(levels)
        rows.append(list(bykey) + [lv.get(c.name.upper()) for c in classc] + [type_str, 1.0, float(t_index)]
                    + [vals.get(k) for k in stats])
    return out_cols, rows


def _ods_table(byc, classc, vnames, stats: list, out_rows: dict) -> ods.OdsTable:
    """One TABLE statement's ODS output object "Table" (Base SAS TABULATE, "ODS Table Names"), in OUT='s layout."""
    cols, rows = _layout(byc, classc, vnames, stats, out_rows)
    return ods.OdsTable("Table", "", [ods.OdsColumn(c.name, type=c.type) for c in cols], rows, "Tabulate")


def _table(c) -> list:
    dims, cur = [], []
    depth = 0
    while not c.at_end() and not (c.at("/") and depth == 0):
        t = c.next()
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        if t.text == "," and depth == 0:
            dims.append(cur)
            cur = []
            continue
        cur.append(t)
    dims.append(cur)
    if c.accept("/"):
        while not c.at_end():
            c.next()                                    # BOX=, RTS=, MISSTEXT= …: layout only
    return dims


def _expand(tokens: list, cnames, vnames) -> list[list[Elem]]:
    """A dimension expression → its heading paths (each a list of elements)."""
    pos = [0]

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def concat() -> list[list[Elem]]:
        paths: list[list[Elem]] = []
        while peek() is not None and peek().text != ")":
            paths += cross()
        return paths

    def cross() -> list[list[Elem]]:
        paths = factor()
        while peek() is not None and peek().text == "*":
            pos[0] += 1
            right = factor()
            paths = [a + b for a in paths for b in right]
        return paths

    def factor() -> list[list[Elem]]:
        t = peek()
        if t is None:
            raise SasError("A TABLE dimension ends too early", 0, 0, "", "a variable or statistic")
        pos[0] += 1
        if t.text == "(":
            inner = concat()
            if peek() is None or peek().text != ")":
                raise SasError("A '(' in the TABLE statement is not closed", t.line, t.col, "(", ")")
            pos[0] += 1
            return inner
        if t.kind != NAME:
            raise SasError(f"Syntax error in the TABLE statement at {t.text}", t.line, t.col, t.text,
                           "a CLASS or VAR variable, ALL, or a statistic")
        up = t.upper
        if up in ("F", "FORMAT") and peek() is not None and peek().text == "=":
            pos[0] += 1
            fmt = []
            while peek() is not None and peek().text not in ("*", ")", ",") and not (peek().kind == NAME and fmt
                                                                                    and fmt[-1].endswith(".")):
                fmt.append(peek().text)
                pos[0] += 1
                if fmt[-1].endswith(".") or (len(fmt) > 1 and fmt[-2] == "."):
                    break
            return [[Elem("fmt", "".join(fmt).upper())]]
        label = None
        if peek() is not None and peek().text == "=" and pos[0] + 1 < len(tokens) and tokens[pos[0] + 1].kind == STR:
            label = str(tokens[pos[0] + 1].value)
            pos[0] += 2
        if up == "ALL":
            return [[Elem("all", "ALL", label)]]
        if up in cnames:
            return [[Elem("class", up, label)]]
        if up in vnames:
            return [[Elem("var", up, label)]]
        if up in KEYWORDS:
            return [[Elem("stat", up, label)]]
        raise SasError(f"{t.text} in the TABLE statement is not a CLASS or VAR variable or a statistic", t.line,
                       t.col, t.text, "a variable of the CLASS or VAR statement, ALL, or a statistic keyword")

    return concat() or [[]]


def _cells(dims: list[list[list[Elem]]], default_fmt: str) -> list[Cell]:
    cells = []
    for combo in itertools.product(*dims):
        path = [e for p in combo for e in p]
        classes = tuple(dict.fromkeys(e.name for e in path if e.kind == "class"))
        var = next((e.name for e in path if e.kind == "var"), None)
        stat = next((e.name for e in path if e.kind == "stat"), None) or ("SUM" if var else "N")
        fmt = next((e.name for e in reversed(path) if e.kind == "fmt"), default_fmt)
        cells.append(Cell(classes, var, stat, fmt, list(combo)))
    return cells


def _values(program, all_rows, cells: list[Cell], classc, vnames, qdef: int, mlf: dict | None = None
            ) -> list[tuple[Cell, dict]]:
    """Each cell's value for every combination of its CLASS variables' levels: {((name, level), …): value}. With
    MLF variables (`mlf`, fmtgroup.multilabel_levels) a cell that does not cross one counts its first label only."""
    out = []
    totals: dict[str | None, float] = {}
    one = first_copies(mlf or {})
    for cell in cells:
        keep = first_copies(mlf or {}, set(cell.classes))
        base = f"SELECT * FROM ({all_rows}) WHERE {keep}" if keep else all_rows
        keys = [sql_ident(next(c.name for c in classc if c.name.upper() == n)) for n in cell.classes]
        agg = _agg(cell, vnames, qdef)
        group = f" GROUP BY {', '.join(keys)}" if keys else ""
        sql = f"SELECT {', '.join(keys + [agg])} FROM ({base}){group}"
        _, rows = fetch_rows(program, sql)
        if cell.stat in ("PCTN", "PCTSUM"):
            tkey = cell.var if cell.stat == "PCTSUM" else None
            if tkey not in totals:
                tot_agg = "count(*)" if cell.stat == "PCTN" else f"sum(CAST({sql_ident(vnames[cell.var].name)} AS DOUBLE))"
                whole = f"SELECT * FROM ({all_rows}) WHERE {one}" if one else all_rows
                totals[tkey] = float(fetch_rows(program, f"SELECT {tot_agg} FROM ({whole})")[1][0][0] or 0.0)
            denom = totals[tkey]
            rows = [r[:-1] + [100.0 * float(r[-1] or 0) / denom if denom else None] for r in rows]
        results = {}
        for r in rows:
            levels = tuple(zip(cell.classes, r[:len(keys)]))
            results[levels] = None if r[-1] is None else float(r[-1])
        out.append((cell, results))
    return out


def _agg(cell: Cell, vnames, qdef: int) -> str:
    if cell.var is None:
        if cell.stat not in ("N", "PCTN"):
            raise SasError(f"The statistic {cell.stat} needs an analysis variable (VAR) in the same cell", 0, 0,
                           cell.stat, "a VAR variable crossed with the statistic")
        return "count(*)"
    c = f"CAST({sql_ident(vnames[cell.var].name)} AS DOUBLE)"
    if cell.stat == "PCTN":
        return f"count({c})"
    if cell.stat == "PCTSUM":
        return f"sum({c})"
    if cell.stat in SQL_STATS:
        return STATISTICS[SQL_STATS[cell.stat]][0].format(c=c)
    return f"list_extract({quantiles_sql(c, [PCT[cell.stat]], qdef)}, 1)"


# -- listing -----------------------------------------------------------------------------------------------
def _render(program, values, cnames, vnames, labels) -> str:
    """Row headings down, column headings across (the last dimension), one line per row level combination."""
    def heading(path, levels):
        parts = []
        for e in path:
            if e.kind == "class":
                lv = dict(levels).get(e.name)
                c = cnames[e.name]
                parts.append(f"{e.label or c.name}={format_cell(program, lv, c.format, c.type)}")
            elif e.kind == "all":
                parts.append(e.label or labels.get("ALL", "All"))
            elif e.kind in ("var", "stat"):
                parts.append(e.label or labels.get(e.name, vnames[e.name].name if e.kind == "var" else STAT_NAMES[e.name]))
        return " ".join(parts)

    # SAS's order: each dimension as its expression reads (the first-written element first at every depth),
    # a CLASS variable's levels in sorted order (missing first) where it stands
    rank: dict[tuple, int] = {}
    for cell, _ in values:
        for dim in cell.path:
            for depth, e in enumerate(dim):
                rank.setdefault((depth, e.kind, e.name, e.label), len(rank))

    def order(path, levels):
        lv = dict(levels)
        key = []
        for depth, e in enumerate(path):
            level = lv.get(e.name) if e.kind == "class" else None
            key.append((rank[(depth, e.kind, e.name, e.label)], level is not None,
                        (0, level, "") if isinstance(level, (int, float)) else (1, 0, str(level or ""))))
        return tuple(key)

    header, body = [""], {}
    col_keys, col_order = [], {}
    for cell, results in values:
        cp, rp = cell.path[-1], cell.path[-2] if len(cell.path) >= 2 else []
        for levels, v in results.items():
            col_levels = tuple((n, lv) for n, lv in levels if any(e.kind == "class" and e.name == n for e in cp))
            row_levels = tuple((n, lv) for n, lv in levels if any(e.kind == "class" and e.name == n for e in rp))
            ck = (id(cp), col_levels)
            if ck not in col_order:
                col_order[ck] = (order(cp, col_levels), heading(cp, col_levels))
            rk = (id(rp), row_levels)
            body.setdefault(rk, {"label": heading(rp, row_levels), "cells": {}, "order": order(rp, row_levels)})
            body[rk]["cells"][ck] = format_cell(program, v, cell.fmt, "num").strip()
    col_keys = sorted(col_order, key=lambda k: col_order[k][0])
    header += [col_order[k][1] for k in col_keys]
    rows = sorted(body.values(), key=lambda b: b["order"])
    table = [header] + [[b["label"]] + [b["cells"].get(k, "") for k in col_keys] for b in rows]
    widths = [max(len(r[j]) for r in table) for j in range(len(header))]
    lines = []
    for i, r in enumerate(table):
        lines.append("  ".join(x.ljust(w) if j == 0 else x.rjust(w) for j, (x, w) in enumerate(zip(r, widths))).rstrip())
        if i == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)
