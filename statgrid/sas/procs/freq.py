"""PROC FREQ (SAS 9.4 Base SAS Procedures / SAS/STAT: FREQ) on statgrid's frequency engine (procs/freq.py).

    PROC FREQ <DATA=> <NOPRINT> <ORDER=INTERNAL|FREQ|DATA|FORMATTED> <PAGE> <NLEVELS>;
      BY vars; WEIGHT var; WHERE expr;
      TABLES requests </ LIST MISSING MISSPRINT NOCOL NOROW NOPERCENT NOCUM NOFREQ NOPRINT SPARSE
                          OUT= OUTPCT OUTCUM CHISQ EXACT FISHER>;

Requests: `a`, `a*b`, `a*b*c` (strata of a's values, rows b, columns c), `(a b)*c` = `a*c b*c`.
Without TABLES, one-way tables of every variable not in BY or WEIGHT.

SAS's documented rules kept here: an observation with a missing value in a request's variables is left
out of the table's percents and statistics and reported as "Frequency Missing = n" unless MISSING makes
missing a level (MISSPRINT shows the missing levels' counts without percents). OUT= holds the LAST
request of the TABLES statement: BY variables, the request's variables, COUNT, PERCENT (of the whole
table's non-missing total; missing combinations are rows with COUNT and a missing PERCENT) and, with
OUTPCT on a two-way or larger request, PCT_ROW and PCT_COL (within each stratum's two-way table) and,
for n > 2, PCT_TABL (of the stratum's table). Levels are in ascending internal order (missing first)
unless ORDER=FREQ (descending count) or ORDER=DATA (first appearance). A WEIGHT variable sums weights;
observations whose weight is missing or not positive are left out. CHISQ on a two-way table prints
Pearson's and the likelihood-ratio chi-square, the continuity-adjusted one and Fisher's exact test for
2×2 tables, the Mantel-Haenszel chi-square, phi, the contingency coefficient and Cramer's V.
ODS tables: OneWayFreqs, CrossTabFreqs, ChiSq (Table, Statistic, DF, Value, Prob) and, for 2×2 tables,
FishersExact (Table, Name1, Label1, cValue1, nValue1).
Not built: grouping levels by formatted values (levels are the stored values), the OUTPUT statement,
EXACT beyond Fisher's test on 2×2 tables (a NOTE says so).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME
from statgrid.sas.parse.dsname import parse_dataset
from statgrid.sas import ods
from statgrid.sas.procs.byruns import RUN, by_columns, runs_on, with_runs
from statgrid.sas.procs.common import (DATASET, FLAG, VALUE, by_rule, check_by_sorted, fetch_rows, format_cell,
                                       observations_read, open_input, resolve_names, statement_error,
                                       write_rows)
from statgrid.sas.procs.stattext import simple_table
from statgrid.sas.specials_sql import letters_joined
from statgrid.sas.values import SpecialMissing, special_missing
from statgrid.sas.procs.fmtgroup import group_by_formats
from statgrid.sas.procs.step import Statements, begin, data_input, each_statement, statement_option

OPTIONS = {"DATA": DATASET, "NOPRINT": FLAG, "ORDER": VALUE, "PAGE": FLAG, "NLEVELS": FLAG, "COMPRESS": FLAG,
           "FORMCHAR": VALUE}
TABLE_OPTIONS = {"LIST", "MISSING", "MISSPRINT", "NOCOL", "NOROW", "NOPERCENT", "NOCUM", "NOFREQ", "NOPRINT",
                 "SPARSE", "OUTPCT", "OUTCUM", "CHISQ", "EXACT", "FISHER", "OUT", "NOWARN", "EXPECTED", "DEVIATION",
                 "CELLCHI2", "TOTPCT", "CUMCOL", "MEASURES", "ALL", "NOSPARSE", "FORMAT"}
STATEMENTS = ("TABLES", "TABLE", "BY", "WEIGHT", "WHERE", "FORMAT", "LABEL", "ATTRIB", "EXACT", "OUTPUT", "TEST")


@dataclass
class TablesStmt:
    requests: list                              # lists of variable names
    options: dict = field(default_factory=dict)


@ods.proc_step
def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "FREQ")
    src, cols = data_input(program, opts, first)
    st, weight, tables = Statements(src, cols, ("BY", "WHERE"), ("FORMAT", "LABEL", "ATTRIB", "TEST")), None, []
    st.program = program
    for stmt, kw, c in each_statement(rest):
        if kw in ("TABLES", "TABLE"):
            tables.append(_tables(c, program))
        elif kw == "WEIGHT":
            weight = c.expect_kind(NAME, "a weight variable").text
        elif kw == "EXACT":
            program.log.note("PROC FREQ: the EXACT statement's tests other than Fisher's on 2x2 tables "
                             "are not computed by statgrid.")
        elif not st.read(kw, c):
            raise statement_error(stmt, "FREQ", STATEMENTS)
    _run(program, first, src, cols, opts, st.by, weight, tables)


def _tables(c, program) -> TablesStmt:
    requests: list[list[str]] = []
    while not c.at_end() and not c.at("/"):
        terms: list[list[str]] = []
        while True:
            if c.accept("("):
                group = []
                while not c.accept(")"):
                    group.append(c.expect_kind(NAME, "a variable name").text)
                terms.append(group)
            else:
                terms.append([c.expect_kind(NAME, "a variable name in a table request").text])
            if not c.accept("*"):
                break
        combos: list[list[str]] = [[]]
        for alternatives in terms:
            combos = [a + [b] for a in combos for b in alternatives]
        requests += combos
    options: dict[str, Any] = {}
    if c.accept("/"):
        while not c.at_end():
            name = statement_option(c, TABLE_OPTIONS, "TABLES").upper
            if name == "OUT":
                c.expect("=")
                options["OUT"] = parse_dataset(c, program)
            elif name == "FORMAT" and c.accept("="):
                c.next()
            else:
                options[name] = True
    return TablesStmt(requests, options)


def _run(program, first, src, cols, opts, by, weight, tables) -> None:
    line = first.line
    byc = by_columns(resolve_names([n for n, _ in by], cols, src, line), by)
    wc = resolve_names([weight], cols, src, line)[0] if weight else None
    if not tables:
        used = {c.name.upper() for c in byc} | ({wc.name.upper()} if wc else set())
        tables = [TablesStmt([[c.name] for c in cols if c.name.upper() not in used])]
    if byc:
        check_by_sorted(program, src, cols, by)
    cols_by_name = {c.name.upper(): c for c in cols}
    _, base = open_input(program, src)
    levels = {n.upper() for ts in tables for req in ts.requests for n in req}
    base, codes = letters_joined(program, src, cols, base, levels)     # .A-.Z/._: levels of their own
    if runs_on(byc):                              # BY … NOTSORTED: each run a group (byruns.py)
        base = with_runs(base, byc)
    n_read = int(program.session.execute(f"SELECT count(*) FROM ({base})").fetchall()[0][0])
    base = group_by_formats(program, base, [c for c in cols if c.name.upper() in levels])   # formatted levels
    if wc is not None and wc.type != "num":
        raise SasError(f"Variable {wc.name} in the WEIGHT statement must be numeric", line, 0, wc.name, "a numeric variable")
    order = str(opts.get("ORDER", "INTERNAL")).upper()
    printing = not opts.get("NOPRINT")
    listing = ods.Listing(program, "FREQ")
    listing.title()
    outputs = []
    for ts in tables:
        for i, req in enumerate(ts.requests):
            varc = resolve_names(req, cols, src, line)
            for v in varc:
                if v.name.upper() in {b.name.upper() for b in byc}:
                    raise SasError(f"Variable {v.name} is a BY variable and cannot be in a table request", line, 0,
                                   v.name, "a variable not in the BY statement")
            shown = printing and not ts.options.get("NOPRINT")
            out = "OUT" in ts.options and i == len(ts.requests) - 1
            groups = _counts(program, base, byc, varc, wc, order, codes) if shown or (out and codes) else None
            if shown:
                for key, cells in groups:
                    table = _freq_table(varc, cells, ts.options)
                    table.by = list(zip(byc, key))
                    stats_tables: list = []
                    listing.table(table, _print(program, byc, key, varc, cells, ts.options, stats_tables).split("\n"))
                    for st_table, st_text in stats_tables:
                        st_table.by = table.by
                        listing.table(st_table, st_text)
            if out:
                outputs.append((ts.options["OUT"], varc, groups, ts.options))
    observations_read(program, n_read, src)
    listing.flush()
    for spec, varc, groups, topts in outputs:
        if groups is None:                       # not printed: OUT= straight from the engine
            from statgrid.sas.procs.freq_out import write_out
            write_out(program, spec, base, byc, varc, wc, topts, order)
        else:
            _write(program, spec, byc, varc, groups, topts, cols_by_name)


def _counts(program, base, byc, varc, wc, order, codes=None) -> list[tuple[tuple, list[tuple]]]:
    """Per BY group: [(levels…, count)] in the table's level order (missing first); the groups in BY order, or
    with NOTSORTED by their run (data order; the run left out of the key). `codes`: {VARIABLE: the column of
    its special missing letters} (a level per letter, as SAS counts .A apart from .B)."""
    lead = [RUN] if runs_on(byc) else []
    coded = [c for c in varc if (codes or {}).get(c.name.upper())]
    keys = lead + [sql_ident(c.name) for c in byc + varc] + [codes[c.name.upper()] for c in coded]
    count = f"sum(CAST({sql_ident(wc.name)} AS DOUBLE))" if wc else "count(*)"
    where = f" WHERE {sql_ident(wc.name)} > 0" if wc else ""
    sql = (f"SELECT {', '.join(keys)}, {count} AS __n, min(__r) AS __first FROM "
           f"(SELECT *, row_number() OVER () AS __r FROM ({base})){where} GROUP BY {', '.join(keys)}")
    _, rows = fetch_rows(program, sql)
    nb = len(lead) + len(byc)
    out: dict[tuple, list] = {}
    at = [nb + len(varc) + coded.index(c) if c in coded else None for c in varc]    # each variable's letter

    def level(c, v, k, r):
        if c.type == "char" and (v is None or str(v).strip() == ""):
            return None
        return special_missing(r[k]) if v is None and k is not None and r[k] else v
    for r in rows:
        levels = tuple(level(c, v, k, r) for c, v, k in zip(varc, r[nb:nb + len(varc)], at))
        out.setdefault(tuple(r[:nb]), []).append((*levels, float(r[-2]), r[-1]))
    from statgrid.sas.values import num_key

    def level_key(v, c):
        if c.type == "char":
            return (v is not None, "" if v is None else str(v))
        return num_key(float("nan") if v is None else v if isinstance(v, float) else float(v))

    result = []
    for key in sorted(out, key=lambda k: k[0] if lead else tuple(level_key(v, c) for v, c in zip(k, byc))):
        cells = out[key]
        # each variable's levels in their own order (SAS ORDER=: INTERNAL the values, DATA each variable's
        # first appearance, FREQ its own descending marginal count, missing first); cells by those, row-major
        ranks = []
        for i, c in enumerate(varc):
            first: dict = {}
            marg: dict = {}
            for r in cells:
                first[r[i]] = min(first.get(r[i], r[-1]), r[-1])
                marg[r[i]] = marg.get(r[i], 0.0) + r[-2]
            if order == "DATA":
                keyf = (lambda v, first=first: first[v])
            elif order == "FREQ":
                keyf = (lambda v, c=c, marg=marg: (v is not None and not (isinstance(v, float) and v != v),
                                                   -marg[v], level_key(v, c)))
            else:
                keyf = (lambda v, c=c: level_key(v, c))
            ranks.append({v: k for k, v in enumerate(sorted(first, key=keyf))})
        cells.sort(key=lambda r: tuple(rank[v] for rank, v in zip(ranks, r)))
        ordered = Cells(r[:-1] for r in cells)
        ordered.levels = [sorted(rank, key=rank.get) for rank in ranks]
        result.append((key[len(lead):], ordered))
    return result


class Cells(list):
    """A table's cells in SAS's order, with `levels`: each table variable's levels in that order (a crosstab's
    columns follow it)."""
    levels: list = []


def _is_missing(cell, n) -> bool:
    return any(v is None or (isinstance(v, float) and v != v) for v in cell[:n])


# -- OUT= --------------------------------------------------------------------------------------------------
def _write(program, spec, byc, varc, groups, topts, cols_by_name) -> None:
    n = len(varc)
    missing_level = bool(topts.get("MISSING"))
    outpct = bool(topts.get("OUTPCT")) and n >= 2
    from statgrid.sas.procs.freq_out import out_columns, outcum
    cum = outcum(topts, varc)
    cols = out_columns(byc, varc, outpct, cum)
    rows = []
    for key, cells in groups:
        counted = [c for c in cells if missing_level or not _is_missing(c, n)]
        total = sum(c[-1] for c in counted)
        running = 0.0
        strata: dict[tuple, dict] = {}
        for c in counted:
            s = strata.setdefault(c[:n - 2], {"total": 0.0, "row": {}, "col": {}})
            s["total"] += c[-1]
            s["row"][c[n - 2]] = s["row"].get(c[n - 2], 0.0) + c[-1]
            s["col"][c[n - 1]] = s["col"].get(c[n - 1], 0.0) + c[-1]
        for c in cells:
            miss = not missing_level and _is_missing(c, n)
            row = list(key) + [("" if v is None and col.type == "char" else v) for v, col in zip(c[:n], varc)]
            row += [c[-1], None if miss or not total else 100.0 * c[-1] / total]
            if outpct:
                s = strata.get(c[:n - 2]) if not miss else None
                if s is None:
                    row += [None, None] + ([None] if n > 2 else [])
                else:
                    rt, ct = s["row"].get(c[n - 2]), s["col"].get(c[n - 1])
                    row += [100.0 * c[-1] / rt if rt else None, 100.0 * c[-1] / ct if ct else None]
                    if n > 2:
                        row.append(100.0 * c[-1] / s["total"] if s["total"] else None)
            if cum:
                if miss:
                    row += [None, None]
                else:
                    running += c[-1]
                    row += [running, 100.0 * running / total if total else None]
            rows.append(row)
    write_rows(program, spec, cols, rows)


# -- the listing -------------------------------------------------------------------------------------------
def _freq_table(varc, cells, topts) -> ods.OdsTable:
    """SAS's OneWayFreqs (one variable, or LIST) or CrossTabFreqs table (Base SAS FREQ, "ODS Table Names")
    with SAS's columns: Table, the variables, Frequency, Percent, and CumFrequency/CumPercent (one-way) or
    _TYPE_, _TABLE_, RowPercent, ColPercent, Missing (cross-tabulations: the cells, then row, column and
    overall totals)."""
    n = len(varc)
    missing_level = bool(topts.get("MISSING"))
    counted = [c for c in cells if missing_level or not _is_missing(c, n)]
    total = sum(c[-1] for c in counted) or 1.0
    name = " * ".join(v.name for v in varc)
    col = ods.OdsColumn
    vcols = [col(v.name, type=v.type) for v in varc]
    if n == 1 or topts.get("LIST"):
        rows, cum = [], 0.0
        for c in counted:
            cum += c[-1]
            rows.append([f"Table {name}", *c[:n], c[-1], 100 * c[-1] / total, cum, 100 * cum / total])
        return ods.OdsTable("OneWayFreqs", "", [col("Table", type="char"), *vcols, col("Frequency"), col("Percent"),
                                                col("CumFrequency"), col("CumPercent")], rows, "Freq")
    a, b = n - 2, n - 1
    rows = []
    for s in list(dict.fromkeys(c[:a] for c in counted)) or [()]:
        mine = [c for c in counted if c[:a] == s]
        tot = sum(c[-1] for c in mine) or 1.0
        rsum, csum = {}, {}
        for c in mine:
            rsum[c[a]] = rsum.get(c[a], 0.0) + c[-1]
            csum[c[b]] = csum.get(c[b], 0.0) + c[-1]
        miss = sum(c[-1] for c in cells if c[:a] == s and not missing_level and _is_missing(c, n))
        for c in mine:
            rows.append([*s, c[a], c[b], "11", c[-1], 100 * c[-1] / tot, 100 * c[-1] / rsum[c[a]],
                         100 * c[-1] / csum[c[b]], None])
        rows += [[*s, r, None, "10", v, 100 * v / tot, None, None, None] for r, v in rsum.items()]
        rows += [[*s, None, k, "01", v, 100 * v / tot, None, None, None] for k, v in csum.items()]
        rows.append([*s, None, None, "00", sum(rsum.values()), 100.0, None, None, miss])
    rows = [[f"Table {name}", *r[:n], r[n], 1, *r[n + 1:]] for r in rows]
    return ods.OdsTable("CrossTabFreqs", "", [col("Table", type="char"), *vcols, col("_TYPE_", type="char"),
                                              col("_TABLE_"), col("Frequency"), col("Percent"), col("RowPercent"),
                                              col("ColPercent"), col("Missing")], rows, "Freq")


def _cell_text(program, v, c: ColumnInfo) -> str:
    if v is None and c.type == "char":
        return ""
    if isinstance(v, SpecialMissing):
        return v.code                                 # SAS shows a special missing level by its letter
    return format_cell(program, v, c.format, c.type)


def _print(program, byc, key, varc, cells, topts, stats_out: list | None = None) -> str:
    lines = []
    if byc:
        text = " ".join(f"{c.name}={_cell_text(program, v, c)}" for c, v in zip(byc, key))
        lines += [by_rule(text), ""]
    if len(varc) == 1 or topts.get("LIST"):
        lines += _one_way(program, varc, cells, topts)
    else:
        lines += _crosstabs(program, varc, cells, topts, stats_out)
    return "\n".join(lines) + "\n"


def _one_way(program, varc, cells, topts) -> list[str]:
    n = len(varc)
    missing_level, missprint = bool(topts.get("MISSING")), bool(topts.get("MISSPRINT"))
    counted = [c for c in cells if missing_level or not _is_missing(c, n)]
    total = sum(c[-1] for c in counted)
    n_missing = sum(c[-1] for c in cells if not missing_level and _is_missing(c, n))
    show_pct, show_cum = not topts.get("NOPERCENT"), not topts.get("NOCUM")
    header = [c.name for c in varc] + ["Frequency"] + (["Percent"] if show_pct else [])
    header += (["Cumulative Frequency"] if show_cum else []) + (["Cumulative Percent"] if show_cum and show_pct else [])
    body, cum = [], 0.0
    for c in cells:
        miss = not missing_level and _is_missing(c, n)
        if miss and not missprint:
            continue
        row = [_cell_text(program, v, col) for v, col in zip(c[:n], varc)] + [_count(c[-1])]
        if miss:
            row += (["."] if show_pct else []) + (["."] if show_cum else []) + (["."] if show_cum and show_pct else [])
        else:
            cum += c[-1]
            row += ([f"{100.0 * c[-1] / total:.2f}"] if show_pct else [])
            row += ([_count(cum)] if show_cum else []) + ([f"{100.0 * cum / total:.2f}"] if show_cum and show_pct else [])
        body.append(row)
    lines = simple_table(header, body, n, closing_rule=False)
    if n_missing:
        lines += ["", f"Frequency Missing = {_count(n_missing)}"]
    return lines


def _crosstabs(program, varc, cells, topts, stats_out: list | None = None) -> list[str]:
    """The cross-tabulation's text; with CHISQ (FISHER, ALL) the statistics tables of each stratum are appended to
    `stats_out` as (OdsTable, its listing lines)."""
    n = len(varc)
    missing_level = bool(topts.get("MISSING"))
    counted = [c for c in cells if missing_level or not _is_missing(c, n)]
    n_missing = sum(c[-1] for c in cells if not missing_level and _is_missing(c, n))
    a, b = varc[n - 2], varc[n - 1]
    out: list[str] = []
    strata = list(dict.fromkeys(c[:n - 2] for c in counted)) or [()]
    for s in strata:
        mine = [c for c in counted if c[:n - 2] == s]
        rlev = list(dict.fromkeys(c[n - 2] for c in mine))
        present = set(c[n - 1] for c in mine)
        order = getattr(cells, "levels", None)
        clev = ([v for v in order[n - 1] if v in present] if order else
                sorted(present, key=lambda v: (v is not None, v if v is not None else 0)))
        cnt = {(c[n - 2], c[n - 1]): c[-1] for c in mine}
        total = sum(cnt.values())
        rsum = {r: sum(cnt.get((r, k), 0.0) for k in clev) for r in rlev}
        csum = {k: sum(cnt.get((r, k), 0.0) for r in rlev) for k in clev}
        if s:
            title = f"Table {strata.index(s) + 1} of {a.name} by {b.name}"
            ctrl = " ".join(f"{v.name}={_cell_text(program, x, v)}" for v, x in zip(varc[:n - 2], s))
            out += [title, f"Controlling for {ctrl}", ""]
        else:
            out += [f"Table of {a.name} by {b.name}", ""]
        parts = ["Frequency"] + ([] if topts.get("NOPERCENT") else ["Percent"])
        parts += ([] if topts.get("NOROW") else ["Row Pct"]) + ([] if topts.get("NOCOL") else ["Col Pct"])
        width = max(8, max((len(_cell_text(program, v, b)) for v in clev), default=1) + 1)
        lw = max(9, len(a.name) + 1, max(len(p) for p in parts) + 1)
        out.append(f"{a.name}     {b.name}")
        out.append("")
        head = [f"{p:<{lw}}|" for p in parts]
        head[-1] = f"{parts[-1]:<{lw}}|" + "".join(f"{_cell_text(program, v, b):>{width}}|" for v in clev) + "  Total"
        out += head
        sep = "-" * lw + "+" + ("-" * width + "+") * len(clev)
        out.append(sep)
        for r in rlev:
            vals = [[_count(cnt.get((r, k), 0.0)) for k in clev] + [_count(rsum[r])]]
            if not topts.get("NOPERCENT"):
                vals.append([f"{100 * cnt.get((r, k), 0.0) / total:.2f}" for k in clev] + [f"{100 * rsum[r] / total:.2f}"])
            if not topts.get("NOROW"):
                vals.append([f"{100 * cnt.get((r, k), 0.0) / rsum[r]:.2f}" if rsum[r] else "." for k in clev] + [""])
            if not topts.get("NOCOL"):
                vals.append([f"{100 * cnt.get((r, k), 0.0) / csum[k]:.2f}" if csum[k] else "." for k in clev] + [""])
            for j, v in enumerate(vals):
                label = _cell_text(program, r, a) if j == 0 else ""
                out.append(f"{label:>{lw - 1}} |" + "".join(f"{x:>{width - 1}} |" for x in v[:-1]) + f"{v[-1]:>7}")
            out.append(sep)
        out.append(f"{'Total':<{lw}}" + " " + "".join(f"{_count(csum[k]):>{width}}" for k in clev) + f"{_count(total):>8}")
        if not topts.get("NOPERCENT"):
            out.append(" " * (lw + 1) + "".join(f"{100 * csum[k] / total:>{width}.2f}" for k in clev) + f"{100.0:>8.2f}")
        if n_missing:
            out += ["", f"Frequency Missing = {_count(n_missing)}"]
        out.append("")
        if (topts.get("CHISQ") or topts.get("FISHER") or topts.get("ALL")) and stats_out is not None:
            stats_out += _chisq(a, b, rlev, clev, cnt, " * ".join(v.name for v in varc))
    return out


def _chisq(a, b, rlev, clev, cnt, name: str) -> list[tuple[ods.OdsTable, list[str]]]:
    """SAS's ChiSq table (Table, Statistic, DF, Value, Prob) and, for a 2×2 table, FishersExact (Table, Name1,
    Label1, cValue1, nValue1), each with its listing lines."""
    import numpy as np
    from scipy.special import chdtrc

    from statgrid.procs.freq import chi_square

    m = np.array([[cnt.get((r, k), 0.0) for k in clev] for r in rlev])
    st = chi_square(m)
    nobs = m.sum()
    rows = [["Chi-Square", st["df"], st["chisq"], st["chisq_p"]],
            ["Likelihood Ratio Chi-Square", st["df"], st["lr_chisq"], st["lr_chisq_p"]]]
    if m.shape == (2, 2) and nobs > 0:
        exp = np.outer(m.sum(axis=1), m.sum(axis=0)) / nobs
        with np.errstate(divide="ignore", invalid="ignore"):
            cont = float((np.maximum(np.abs(m - exp) - 0.5, 0) ** 2 / exp).sum())
        rows.append(["Continuity Adj. Chi-Square", 1, cont, float(chdtrc(1, cont))])
    mh = _mantel_haenszel(m, rlev, clev)
    if mh is not None:
        rows.append(["Mantel-Haenszel Chi-Square", 1, mh, float(chdtrc(1, mh))])
    rows += [["Phi Coefficient", None, st["phi"], None], ["Contingency Coefficient", None, st["contingency"], None],
             ["Cramer's V", None, st["cramers_v"], None]]
    title = f"Statistics for Table of {a.name} by {b.name}"
    text = [title, ""] + simple_table(["Statistic", "DF", "Value", "Prob"], [
        [r[0], "" if r[1] is None else str(r[1]), _f4(r[2]), "" if r[3] is None else _p(r[3])] for r in rows],
        1, closing_rule=False)
    if not math.isnan(st.get("cells_expected_lt5_pct", math.nan)) and st["cells_expected_lt5_pct"] > 20:
        text += ["", f"WARNING: {st['cells_expected_lt5_pct']:.0f}% of the cells have expected counts less than 5. "
                 "Chi-Square may not be a valid test."]
    col = ods.OdsColumn
    chisq = ods.OdsTable("ChiSq", title, [col("Table", type="char"), col("Statistic", type="char"), col("DF"),
                                          col("Value"), col("Prob")],
                         [[f"Table {name}", *r] for r in rows], "Freq")
    out = [(chisq, text)]
    if m.shape == (2, 2) and nobs > 0:
        out.append(_fisher(m, name))
    out[-1][1].extend(["", f"Sample Size = {_count(nobs)}", ""])
    return out


def _mantel_haenszel(m, rlev, clev) -> float | None:
    """(n-1) r², r Pearson's correlation of the row and column scores. SAS's default SCORES=TABLE: a numeric
    variable's levels score as their values, a character variable's as the row/column numbers 1, 2, … (FREQ,
    "Scores")."""
    if not (len(rlev) > 1 and len(clev) > 1):
        return None
    rs, cs = _table_scores(rlev), _table_scores(clev)
    n = m.sum()
    mr, mc = (m.sum(axis=1) @ rs) / n, (m.sum(axis=0) @ cs) / n
    cov = ((rs - mr)[:, None] * (cs - mc)[None, :] * m).sum()
    vr, vc = (m.sum(axis=1) * (rs - mr) ** 2).sum(), (m.sum(axis=0) * (cs - mc) ** 2).sum()
    return float((n - 1) * cov ** 2 / (vr * vc)) if vr > 0 and vc > 0 else None


def _table_scores(levels):
    """SCORES=TABLE for one variable: numeric levels score as their values, character ones as 1, 2, … in the
    table's order."""
    import numpy as np

    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in levels):
        return np.array(levels, dtype=float)
    return np.arange(1, len(levels) + 1, dtype=float)


def _fisher(m, name: str) -> tuple[ods.OdsTable, list[str]]:
    """Fisher's exact test of a 2×2 table: the (1,1) cell, the one-sided p-values, the observed table's
    probability and the two-sided p-value (SAS's Name1 keys: XPL_FISH, XPR_FISH, XP2_FISH)."""
    from scipy.stats import fisher_exact, hypergeom

    _, two = fisher_exact(m)
    _, left = fisher_exact(m, alternative="less")
    _, right = fisher_exact(m, alternative="greater")
    n11, row1, col1, n = int(m[0, 0]), int(m[0].sum()), int(m[:, 0].sum()), int(m.sum())
    prob = float(hypergeom.pmf(n11, n, col1, row1))
    rows = [["FREQ11", "Cell (1,1) Frequency (F)", _count(m[0, 0]), float(m[0, 0])],
            ["XPL_FISH", "Left-sided Pr <= F", _p(left), float(left)],
            ["XPR_FISH", "Right-sided Pr >= F", _p(right), float(right)],
            ["P_TABLE", "Table Probability (P)", _p(prob), prob],
            ["XP2_FISH", "Two-sided Pr <= P", _p(two), float(two)]]
    col = ods.OdsColumn
    table = ods.OdsTable("FishersExact", "Fisher's Exact Test", [
        col("Table", type="char", hidden=True), col("Name1", type="char", hidden=True), col("Label1", "", "char"),
        col("cValue1", "", "char", right=True), col("nValue1", hidden=True)],
        [[f"Table {name}", *r] for r in rows], "Freq", headings=False)
    return table, ods.render(table)


def _count(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _f4(x) -> str:
    return "." if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4f}"


def _p(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "."
    return "<.0001" if x < 0.0001 else f"{x:.4f}"
