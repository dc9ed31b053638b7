"""PROC MEANS and PROC SUMMARY (SAS 9.4 Base Procedures: MEANS, SUMMARY) on statgrid's summary engine.

    PROC MEANS|SUMMARY <DATA=> <NWAY> <MISSING> <NOPRINT|PRINT> <PRINTALLTYPES> <MAXDEC=> <QNTLDEF=>
                       <VARDEF=DF|N> <ALPHA=> <statistic keywords>;
      BY vars; CLASS vars </ MISSING>; VAR vars; ID vars; TYPES a*b c (); WAYS n …; WHERE expr;
      OUTPUT <OUT=ds> <stat<(vars)>=<names>> … </ AUTONAME NOINHERIT KEEPLEN AUTOLABEL LEVELS WAYS>;

What SAS documents and this follows:
- Observations with a missing CLASS value are left out of every type unless MISSING (PROC or CLASS
  option). _FREQ_ counts a group's observations; N counts its non-missing values of the variable.
- BY … NOTSORTED: each run of consecutive observations with equal BY values is a group, in data order.
- Types: _TYPE_'s bit for the i-th of k CLASS variables is 2**(k-i) (the last variable is bit 0). The
  OUT= data set gets every type (0 … 2**k-1) unless NWAY (the highest only), TYPES or WAYS; the
  listing shows the highest type only unless PRINTALLTYPES, TYPES or WAYS. Rows: BY group, then
  _TYPE_, then the CLASS values ascending, a missing value first.
- OUTPUT names: `mean=` gives the statistic the analysis variables' own names; `mean=a b` names them in
  VAR order (fewer names: only the first variables); `mean(x)=mx` picks variables; AUTONAME names the
  unnamed ones x_Mean. OUTPUT without statistics writes SAS's _STAT_ layout (N, MIN, MAX, MEAN, STD).
- PROC SUMMARY is MEANS that prints nothing unless PRINT and, without a VAR statement, analyses no
  variable (OUT= gets _TYPE_ and _FREQ_ only); MEANS without VAR analyses every numeric variable not
  in BY, CLASS or ID.
Statistics: N NMISS MEAN STD VAR STDERR MIN MAX RANGE SUM USS CSS CV SKEWNESS KURTOSIS SUMWGT T PROBT
CLM LCLM UCLM MEDIAN P1 P5 P10 P20 P25 P30 P40 P50 P60 P70 P75 P80 P90 P95 P99 Q1 Q3 QRANGE — each
computed in one DuckDB aggregate (procs/summary.py's expressions; quantiles by QNTLDEF= through
procs/_quantile.py); MODE; the FREQ and WEIGHT statements and VARDEF=WDF|WEIGHT as means_weight.py says.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from statgrid.libraries import sql_ident
from statgrid.procs._quantile import DEFAULT_QNTLDEF, quantiles_sql
from statgrid.procs.summary import STATISTICS
from statgrid.sas.dataset import ColumnInfo, column_info
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, NUM
from statgrid.sas.parse.dsname import DatasetSpec, parse_dataset
from statgrid.sas import ods
from statgrid.sas.procs.fmtgroup import (format_order_sql, format_statement, group_by_formats, multilabel_levels,
                                         types_apart, with_formats)
from statgrid.sas.procs.means_weight import VARDEFS, WEIGHT_REFUSED, mode_of, mode_agg, weighted_aggs, weighted_input
from statgrid.sas.procs.byruns import by_columns, run_column, runs_on, with_runs
from statgrid.sas.procs.common import (DATASET, FLAG, VALUE, by_list, by_rule, check_by_sorted, cursor, fetch_rows,
                                       narrowed_input,
                                       format_cell, input_dataset, observations_read, open_input, parse_options,
                                       proc_statement, resolve_names, statement_error, var_names,
                                       where_statement, write_rows)
from statgrid.sas.procs.stattext import simple_table
from statgrid.sas.specials_sql import letters_as_levels, levels_back

# keyword → (listing header, AUTONAME suffix)
LABELS: dict[str, tuple[str, str]] = {
    "N": ("N", "N"), "NMISS": ("N Miss", "NMiss"), "MEAN": ("Mean", "Mean"), "STD": ("Std Dev", "StdDev"),
    "VAR": ("Variance", "Var"), "STDERR": ("Std Error", "StdErr"), "MIN": ("Minimum", "Min"),
    "MAX": ("Maximum", "Max"), "RANGE": ("Range", "Range"), "SUM": ("Sum", "Sum"), "USS": ("USS", "USS"),
    "CSS": ("CSS", "CSS"), "CV": ("Coeff of Variation", "CV"), "SKEWNESS": ("Skewness", "Skew"),
    "KURTOSIS": ("Kurtosis", "Kurt"), "SUMWGT": ("Sum Wgts", "SumWgt"), "T": ("t Value", "t"),
    "PROBT": ("Pr > |t|", "Probt"), "LCLM": ("Lower {p}% CL for Mean", "LCLM"),
    "UCLM": ("Upper {p}% CL for Mean", "UCLM"), "MEDIAN": ("Median", "Median"),
    "Q1": ("Lower Quartile", "Q1"), "Q3": ("Upper Quartile", "Q3"), "QRANGE": ("Quartile Range", "QRange"),
    "MODE": ("Mode", "Mode"),
}
PERCENTILES = {"P1": 1, "P5": 5, "P10": 10, "P20": 20, "P25": 25, "P30": 30, "P40": 40, "P50": 50, "P60": 60,
               "P70": 70, "P75": 75, "P80": 80, "P90": 90, "P95": 95, "P99": 99, "MEDIAN": 50, "Q1": 25, "Q3": 75}
for _k, _p in PERCENTILES.items():
    if _k.startswith("P"):
        LABELS[_k] = (f"{_p}{'st' if _p % 10 == 1 and _p != 11 else 'th'} Pctl", _k)
KEYWORDS = tuple(LABELS) + ("CLM",)
DEFAULT_PRINT = ("N", "MEAN", "STD", "MIN", "MAX")
STAT_LAYOUT = ("N", "MIN", "MAX", "MEAN", "STD")          # OUTPUT without statistics: SAS's _STAT_ rows
ALIASES = {"STDDEV": "STD", "SKEW": "SKEWNESS", "KURT": "KURTOSIS"}

OPTIONS = {"DATA": DATASET, "NWAY": FLAG, "MISSING": FLAG, "NOPRINT": FLAG, "PRINT": FLAG,
           "PRINTALLTYPES": FLAG, "PRINTALL": FLAG, "MAXDEC": VALUE, "QNTLDEF": VALUE, "PCTLDEF": VALUE,
           "VARDEF": VALUE, "ALPHA": VALUE, "FW": VALUE, "NOLABELS": FLAG, "NONOBS": FLAG, "NOTRAP": FLAG,
           "ORDER": VALUE, "DESCENDTYPES": FLAG, "CHARTYPE": FLAG, "IDMIN": FLAG, "COMPLETETYPES": FLAG,
           "EXCLNPWGT": FLAG, "THREADS": FLAG, "NOTHREADS": FLAG, "SUMSIZE": VALUE, "CLASSDATA": DATASET,
           "EXCLUSIVE": FLAG, "STACKODSOUTPUT": FLAG, "STACKODS": FLAG, "LCLM": FLAG, "UCLM": FLAG,
           **{k: FLAG for k in KEYWORDS}, **{k: FLAG for k in ALIASES}, "MODE": FLAG}
STATEMENTS = ("BY", "CLASS", "VAR", "ID", "TYPES", "WAYS", "OUTPUT", "WHERE", "FORMAT", "LABEL", "ATTRIB",
              "FREQ", "WEIGHT")


@dataclass
class OutRequest:
    spec: DatasetSpec
    items: list = field(default_factory=list)      # (statistic, [variables] or None, [names])
    autoname: bool = False
    noinherit: bool = False


@dataclass
class Request:
    proc: str
    opts: Any
    by: list = field(default_factory=list)
    classes: list = field(default_factory=list)
    class_missing: bool = False
    var: list | None = None
    ids: list = field(default_factory=list)
    types: list | None = None                       # CLASS-variable name lists
    ways: list | None = None
    outputs: list = field(default_factory=list)
    freq: str | None = None                         # FREQ variable
    weight: str | None = None                       # WEIGHT variable
    formats: dict = field(default_factory=dict)     # the FORMAT statement's: upper-case name → format
    mlf: set = field(default_factory=set)           # CLASS variables with / MLF (upper case)
    format_order: set = field(default_factory=set)  # … with / PRELOADFMT ORDER=DATA: levels in format order


@ods.proc_step
def run(statements: list, program: Any, proc: str = "MEANS") -> None:
    first, *rest = list(statements)
    cur = proc_statement(first)
    opts = parse_options(cur, OPTIONS, program, f"PROC {proc}", ALIASES)
    req = Request(proc, opts)
    src = input_dataset(program, opts, "DATA", first)
    cols, _ = open_input(program, src)
    for stmt in rest:
        kw, c = stmt.keyword, cursor(stmt)
        c.next()
        if kw == "BY":
            req.by = by_list(c)
        elif kw == "CLASS":
            names = var_names_until(c, cols, "/")
            preload = data_order = False
            if c.accept("/"):
                while not c.at_end():
                    o = c.next()
                    if o.upper == "MISSING":
                        req.class_missing = True
                    elif o.upper == "MLF":                    # every label of a MULTILABEL format (fmtgroup.py)
                        req.mlf |= {n.upper() for n in names}
                    elif o.upper == "PRELOADFMT":
                        preload = True
                    elif o.upper == "ORDER" and c.accept("="):
                        data_order = c.next().upper == "DATA"
                    elif c.accept("="):
                        c.next()                              # ORDER=, MLF … : accepted, the default order kept
            if preload and data_order:                # MLF levels in the format's order (fmtgroup.py)
                req.format_order |= {n.upper() for n in names}
            req.classes += names
        elif kw == "VAR":
            req.var = (req.var or []) + var_names_until(c, cols, "/")
        elif kw == "ID":
            req.ids += var_names(c, cols)
        elif kw == "TYPES":
            req.types = (req.types or []) + _types(c)
        elif kw == "WAYS":
            req.ways = req.ways or []
            while not c.at_end():
                req.ways.append(int(c.expect_kind(NUM, "a number of CLASS variables").value))
        elif kw == "OUTPUT":
            req.outputs.append(_output(c, program, cols))
        elif kw == "WHERE":
            where_statement(c, src)
        elif kw == "FORMAT":                                  # listing and CLASS levels by these formats
            req.formats.update(format_statement(c, cols, program))
        elif kw in ("LABEL", "ATTRIB"):
            continue                                          # the listing uses the data set's own
        elif kw in ("FREQ", "WEIGHT"):
            names = var_names(c, cols)
            if len(names) != 1:
                t = stmt.tokens[0]
                raise SasError(f"The {kw} statement of PROC {proc} names one numeric variable", t.line, t.col, kw,
                               f"{kw} variable;")
            setattr(req, kw.lower(), names[0])
        else:
            raise statement_error(stmt, proc, STATEMENTS)
    _run(program, first, src, req)


def run_summary(statements: list, program: Any) -> None:
    run(statements, program, "SUMMARY")


def var_names_until(c, cols, stop: str) -> list[str]:
    """A variable list up to `stop` (CLASS a b / MISSING)."""
    from statgrid.sas.dataset import expand_var_list
    from statgrid.sas.parse.expr import parse_var_list

    items = parse_var_list(c, stop=(stop,))
    return expand_var_list(items, [x.name for x in cols], {x.name.upper(): x.type for x in cols})


def _types(c) -> list[list[str]]:
    """TYPES a*b c () → [['A','B'], ['C'], []]; (a b)*c expands to a*c b*c."""
    out: list[list[str]] = []
    while not c.at_end():
        terms: list[list[list[str]]] = []
        while True:
            if c.accept("("):
                group = []
                while not c.accept(")"):
                    group.append([c.expect_kind(NAME, "a CLASS variable").upper])
                terms.append(group or [[]])
            else:
                terms.append([[c.expect_kind(NAME, "a CLASS variable").upper]])
            if not c.accept("*"):
                break
        combos: list[list[str]] = [[]]
        for alternatives in terms:
            combos = [a + b for a in combos for b in alternatives]
        out += combos
    return out


def _output(c, program: Any, cols: list[ColumnInfo]) -> OutRequest:
    req = OutRequest(DatasetSpec("WORK", "DATA1"))
    have_out = False
    while not c.at_end() and not c.at("/"):
        t = c.next()
        if t.kind != NAME:
            raise c.error("Syntax error in the OUTPUT statement", "OUT= or a statistic keyword", t)
        key = ALIASES.get(t.upper, t.upper)
        if key == "OUT":
            c.expect("=")
            req.spec, have_out = parse_dataset(c, program), True
            continue
        if key not in KEYWORDS or key == "CLM":
            raise SasError(f"Statistic {t.text} is not valid in the OUTPUT statement", t.line, t.col, t.text,
                           "one of " + ", ".join(k for k in KEYWORDS if k != "CLM"))
        chosen = None
        if c.accept("("):
            chosen = var_names_until(c, cols, ")")
            c.expect(")")
        names: list[str] = []
        if c.accept("="):
            while c.peek().kind == NAME and not c.at_end() and not (
                    ALIASES.get(c.peek().upper, c.peek().upper) in KEYWORDS + ("OUT",)
                    and (c.peek(1).text in ("=", "("))):
                names.append(c.next().text)
        req.items.append((key, chosen, names))
    if c.accept("/"):
        while not c.at_end():
            o = c.next().upper
            if o == "AUTONAME":
                req.autoname = True
            elif o == "NOINHERIT":
                req.noinherit = True
    if not have_out:
        from statgrid.sas.parse.dsname import next_data_name
        req.spec = DatasetSpec("WORK", next_data_name(program, "WORK"))
    return req


# -- the computation ---------------------------------------------------------------------------------------
def _run(program: Any, first, src: DatasetSpec, req: Request) -> None:
    opts, proc = req.opts, req.proc
    cols = with_formats(column_info(program, src), req.formats)   # the input SQL: narrowed_input, below
    line = first.line
    byc = by_columns(resolve_names([n for n, _ in req.by], cols, src, line), req.by)
    classc = resolve_names(req.classes, cols, src, line)
    idc = resolve_names(req.ids, cols, src, line)
    used = {c.name.upper() for c in byc + classc + idc}
    if req.var is None:
        varc = [] if proc == "SUMMARY" else [c for c in cols if c.type == "num" and c.name.upper() not in used]
    else:
        varc = resolve_names(req.var, cols, src, line)
        for c in varc:
            if c.type != "num":
                raise SasError(f"Variable {c.name} in list does not match type prescribed for this list", line, 0,
                               c.name, "numeric analysis variables")
    k = len(classc)
    full = (1 << k) - 1
    masks = _masks(req, classc, opts)
    print_masks = masks if (req.types is not None or req.ways is not None or opts.get("PRINTALLTYPES")
                            or opts.get("PRINTALL")) else [full]
    if not req.outputs:
        masks = print_masks
    printing = (proc == "MEANS" and not opts.get("NOPRINT")) or (proc == "SUMMARY" and opts.get("PRINT"))
    print_stats = []                                 # in the order the PROC statement names them
    for name in opts.values:
        for s in (("LCLM", "UCLM") if name == "CLM" else (name,) if name in LABELS else ()):
            if s not in print_stats:
                print_stats.append(s)
    print_stats = print_stats or list(DEFAULT_PRINT)
    out_stats = {it[0] for o in req.outputs for it in o.items} | (
        set(STAT_LAYOUT) if any(not o.items for o in req.outputs) else set())
    stats = [s for s in LABELS if s in out_stats or (printing and s in print_stats)]
    alpha = float(opts.get("ALPHA", 0.05))
    vardef = str(opts.get("VARDEF", "DF")).upper()
    qntldef = int(opts.get("QNTLDEF", opts.get("PCTLDEF", DEFAULT_QNTLDEF)))
    if vardef not in VARDEFS:
        line_, col_ = opts.value_at.get("VARDEF", (line, 0))
        raise SasError(f"VARDEF={vardef} is not a divisor of PROC {proc}", line_, col_, vardef,
                       "VARDEF=DF, N, WDF or WEIGHT")
    fw = resolve_names([n for n in (req.freq, req.weight) if n], cols, src, line)
    for c in fw:
        if c.type != "num":
            raise SasError(f"Variable {c.name} in the FREQ/WEIGHT statement is not numeric", line, 0, c.name,
                           "a numeric variable")
    if req.weight:
        bad = [s for s in stats if s in WEIGHT_REFUSED or s in PERCENTILES or s == "QRANGE"]
        if bad:
            raise SasError(f"Statistic {bad[0]} of PROC {proc} is not computed with a WEIGHT statement", line, 0,
                           bad[0], "SAS's rule: no SKEWNESS, KURTOSIS or MODE with weights (weighted quantiles "
                           "are not built in statgrid)")
    else:
        vardef = {"WDF": "DF", "WEIGHT": "N", "WGT": "N"}.get(vardef, vardef)   # every weight 1

    if byc:
        check_by_sorted(program, src, cols, req.by)
    base = narrowed_input(program, src, cols, [c.name for c in byc + classc + idc + varc + fw])
    keyc = [run_column()] + byc if runs_on(byc) else byc     # BY … NOTSORTED: grouped by run first (byruns.py)
    base = with_runs(base, byc) if runs_on(byc) else base
    n_read = int(program.session.execute(f"SELECT count(*) FROM ({base})").fetchall()[0][0])
    missing_ok = bool(opts.get("MISSING")) or req.class_missing
    keep = [] if missing_ok else [_present(c) for c in classc]
    rank = {c.name.upper(): format_order_sql(program, c.name, c.format) for c in classc
            if c.name.upper() in req.format_order & req.mlf}
    base, decode = letters_as_levels(program, src, cols, base, classc) if missing_ok else (base, {})  # .A: a level
    base, classc, mlf = multilabel_levels(program, base, classc, req.mlf)   # CLASS x / MLF
    base = group_by_formats(program, base, classc)            # CLASS levels by their formatted values
    filtered = f"SELECT * FROM ({base})" + (f" WHERE {' AND '.join(keep)}" if keep else "")

    def aggregate(mask_list: list[int], one_copy: str = "") -> str:
        f = f"SELECT * FROM ({filtered}) WHERE {one_copy}" if one_copy else filtered
        f = weighted_input(f, req.freq and fw[0].name, req.weight and fw[-1].name, bool(opts.get("EXCLNPWGT")))
        cls = [] if mask_list == [0] and not byc else classc        # GROUPING() needs a group: type 0 alone
        return _aggregate_sql(f, keyc, cls, idc, varc, stats, mask_list, qntldef, vardef, bool(opts.get("IDMIN")),
                              bool(req.weight))
    all_masks = sorted(set(masks) | set(print_masks))
    if mlf:        # one query per type: a type that does not cross an MLF variable counts its first label only
        sql = types_apart(aggregate, all_masks, keyc, classc, mlf, rank)
    else:
        sql = aggregate(all_masks)
    names, rows = fetch_rows(program, sql)
    pos = {n: i for i, n in enumerate(names)}
    groups = [_group(r, pos, keyc, classc, idc, varc, stats, alpha, len(keyc) - len(byc)) for r in rows]
    levels_back(groups, classc, decode)
    observations_read(program, n_read, src)
    if printing:
        _print(program, proc, groups, byc, classc, varc, print_stats, print_masks, opts, alpha)
    for o in req.outputs:
        _write(program, o, groups, masks, byc, classc, idc, varc)


def _masks(req: Request, classc: list[ColumnInfo], opts) -> list[int]:
    k = len(classc)
    bit = {c.name.upper(): 1 << (k - 1 - i) for i, c in enumerate(classc)}
    if req.types is not None or req.ways is not None:
        out = set()
        for combo in req.types or []:
            m = 0
            for n in combo:
                if n not in bit:
                    raise SasError(f"Variable {n} in the TYPES statement is not a CLASS variable", 0, 0, n,
                                   "CLASS variables")
                m |= bit[n]
            out.add(m)
        for w in req.ways or []:
            out |= {m for m in range(1 << k) if bin(m).count("1") == w}
        return sorted(out)
    if opts.get("NWAY"):
        return [(1 << k) - 1]
    return list(range(1 << k))


def _present(c: ColumnInfo) -> str:
    q = sql_ident(c.name)
    return f"({q} IS NOT NULL AND {q} <> '')" if c.type == "char" else f"{q} IS NOT NULL"


def _aggregate_sql(filtered: str, byc, classc, idc, varc, stats, masks, qntldef: int, vardef: str,
                   idmin: bool, weighted: bool = False) -> str:
    k = len(classc)
    aggs = []
    pct = sorted({PERCENTILES[s] for s in stats if s in PERCENTILES} | ({25, 75} if "QRANGE" in stats else set()))
    base_stats = set(stats) | ({"N", "MEAN", "STD"} if {"T", "PROBT", "LCLM", "UCLM"} & set(stats) else set())
    for i, v in enumerate(varc):
        c = f"CAST({sql_ident(v.name)} AS DOUBLE)"
        if "MODE" in stats:
            aggs.append(mode_agg(i, c))
        if weighted:
            aggs += weighted_aggs(i, c, base_stats, vardef, f"coalesce((SELECT avg({c}) FROM ({filtered})), 0)")
            continue
        for s in ("N", "NMISS", "MEAN", "STD", "VAR", "STDERR", "MIN", "MAX", "RANGE", "SUM", "USS", "CSS", "CV",
                  "SKEWNESS", "KURTOSIS"):
            if s in base_stats:
                expr = STATISTICS[s.lower()][0].format(c=c)
                if vardef == "N" and s != "CSS":
                    expr = expr.replace("stddev_samp", "stddev_pop").replace("var_samp", "var_pop")
                aggs.append(f"{expr} AS __v{i}_{s}")
        if "SUMWGT" in stats:
            aggs.append(f"count({c}) AS __v{i}_SUMWGT")
        if pct:
            aggs.append(f"{quantiles_sql(c, pct, qntldef)} AS __v{i}_PCT")
    for j, c in enumerate(idc):
        aggs.append(f"{'min' if idmin else 'max'}({sql_ident(c.name)}) AS __id{j}")
    keys = [sql_ident(c.name) for c in byc]
    cls = [sql_ident(c.name) for c in classc]
    one = k and len(masks) == 1 and (masks[0] or keys)     # one type (NWAY): a plain GROUP BY, no grouping sets
    if one:
        m = masks[0]
        inside = [cl for i, cl in enumerate(cls) if m >> (k - 1 - i) & 1]
        type_expr = str(m)
        group_by = f" GROUP BY {', '.join(keys + inside)}"
        cls_select = [cl if cl in inside else f"NULL AS {cl}" for cl in cls]
    elif k:
        type_expr = f"{(1 << k) - 1} - GROUPING({', '.join(cls)})"
        sets = ", ".join("(" + ", ".join(keys + [cl for i, cl in enumerate(cls) if m >> (k - 1 - i) & 1]) + ")"
                         for m in masks)
        group_by = f" GROUP BY GROUPING SETS ({sets})"
        cls_select = cls
    else:
        type_expr = "0"
        group_by = f" GROUP BY {', '.join(keys)}" if keys else ""
        cls_select = cls
    select = keys + cls_select + [f"{type_expr} AS __type", "count(*) AS __freq"] + aggs
    order = [f"{x} NULLS FIRST" for x in keys] + ["__type"] + [f"{x} NULLS FIRST" for x in cls]
    sql = f"SELECT {', '.join(select)} FROM ({filtered}){group_by}"
    if k and not one:                            # GROUPING SETS may return a type for an empty input only once
        sql = f"SELECT * FROM ({sql}) WHERE __type IN ({', '.join(str(m) for m in masks)})"
    return f"{sql} ORDER BY {', '.join(order)}"


@dataclass
class Group:
    by: tuple
    classes: tuple
    ids: tuple
    type: int
    freq: int
    values: list                                   # per analysis variable: {statistic: value}
    run: Any = None                                # its run, with BY … NOTSORTED


def _group(r, pos, byc, classc, idc, varc, stats, alpha, hidden: int = 0) -> Group:
    values = []
    pct_keys = sorted({PERCENTILES[s] for s in stats if s in PERCENTILES} | ({25, 75} if "QRANGE" in stats else set()))
    for i, _ in enumerate(varc):
        d: dict[str, Any] = {}
        for s in stats:
            key = f"__v{i}_{s}"
            if key in pos:
                d[s] = r[pos[key]]
        if pct_keys:
            got = r[pos[f"__v{i}_PCT"]] or [None] * len(pct_keys)
            by_pct = dict(zip(pct_keys, got))
            for s in stats:
                if s in PERCENTILES:
                    d[s] = by_pct[PERCENTILES[s]]
            if "QRANGE" in stats:
                q1, q3 = by_pct[25], by_pct[75]
                d["QRANGE"] = None if q1 is None or q3 is None else q3 - q1
        if "MODE" in stats:
            d["MODE"] = mode_of(r[pos[f"__v{i}_MODE"]])
        if {"T", "PROBT", "LCLM", "UCLM"} & set(stats):
            sw = f"__v{i}_SUMWGT"           # with WEIGHT the mean's standard error is s/√Σw
            d.update(_t_stats(r[pos[f"__v{i}_N"]], r[pos[f"__v{i}_MEAN"]], r[pos[f"__v{i}_STD"]], alpha,
                              r[pos[sw]] if sw in pos else None))
        values.append(d)
    nb = len(byc)                # the SELECT starts with the BY (after `hidden`: the run), then the CLASS values
    return Group(tuple(r[hidden:nb]), tuple(r[nb:nb + len(classc)]),
                 tuple(r[pos[f"__id{j}"]] for j in range(len(idc))),
                 int(r[pos["__type"]]), int(r[pos["__freq"]]), values, r[0] if hidden else None)


def _t_stats(n, mean, std, alpha: float, sumwgt: float | None = None) -> dict[str, float | None]:
    """t = mean / stderr, its two-sided p-value and the mean's (1-alpha) confidence limits (n-1 df); the
    standard error is s/√n, or s/√Σw with a WEIGHT statement."""
    if not n or n < 2 or mean is None or std is None or (sumwgt is not None and sumwgt <= 0):
        return {"T": None, "PROBT": None, "LCLM": None, "UCLM": None}
    from scipy import stats as st

    se = std / math.sqrt(n if sumwgt is None else sumwgt)
    half = st.t.ppf(1 - alpha / 2, n - 1) * se
    t = mean / se if se > 0 else None
    p = None if t is None else float(2 * st.t.sf(abs(t), n - 1))
    return {"T": t, "PROBT": p, "LCLM": mean - half, "UCLM": mean + half}


# -- OUT= --------------------------------------------------------------------------------------------------
def _write(program, o: OutRequest, groups: list[Group], masks, byc, classc, idc, varc) -> None:
    keys = [ColumnInfo(c.name, c.type, c.length, c.format, c.informat, c.label) for c in byc + classc + idc]
    head = keys + [ColumnInfo("_TYPE_", "num", 8), ColumnInfo("_FREQ_", "num", 8)]
    chosen = [g for g in groups if g.type in masks]
    if not o.items and not varc:                          # no analysis variable: the groups and their counts
        cols, rows = head, [list(g.by) + list(g.classes) + list(g.ids) + [g.type, g.freq] for g in chosen]
    elif not o.items:                                     # SAS's _STAT_ layout
        cols = head + [ColumnInfo("_STAT_", "char", 8)] + [
            ColumnInfo(v.name, "num", 8, "" if o.noinherit else v.format, "", "" if o.noinherit else v.label)
            for v in varc]
        rows = [list(g.by) + list(g.classes) + list(g.ids) + [g.type, g.freq, s]
                + [g.values[i].get(s) for i in range(len(varc))] for g in chosen for s in STAT_LAYOUT]
    else:
        outs: list[tuple[str, int, ColumnInfo]] = []      # (statistic, variable index, column)
        taken = {c.name.upper() for c in head}
        analysed = {v.name.upper() for v in varc}
        for stat, chosen_vars, names in o.items:
            stray = [n for n in chosen_vars or [] if n.upper() not in analysed]
            if stray:
                raise SasError(f"Variable {stray[0]} in the OUTPUT statement's {stat}( ) list is not an analysis "
                               "variable", o.spec.line, o.spec.col, stray[0], "a variable of the VAR statement")
            targets = [i for i, v in enumerate(varc) if chosen_vars is None or v.name.upper() in
                       {n.upper() for n in chosen_vars}]
            if chosen_vars is not None:
                order = {n.upper(): j for j, n in enumerate(chosen_vars)}
                targets.sort(key=lambda i: order.get(varc[i].name.upper(), 0))
            for j, i in enumerate(targets):
                v = varc[i]
                if j < len(names):
                    name = names[j]
                elif names:
                    break                                   # fewer names: only the first variables
                elif o.autoname:
                    name = f"{v.name}_{LABELS[stat][1]}"
                else:
                    name = v.name
                if name.upper() in taken:
                    program.log.warning(f"The variable {name} already exists on file {o.spec.name}; the "
                                        f"{stat} statistic of {v.name} is not written.")
                    continue
                taken.add(name.upper())
                inherit = not o.noinherit and stat not in ("N", "NMISS", "SUMWGT", "T", "PROBT", "CV",
                                                           "SKEWNESS", "KURTOSIS", "VAR", "USS", "CSS")
                outs.append((stat, i, ColumnInfo(name, "num", 8, v.format if inherit else "",
                                                 "", v.label if inherit else "")))
        cols = head + [c for _, _, c in outs]
        rows = [list(g.by) + list(g.classes) + list(g.ids) + [g.type, g.freq]
                + [g.values[i].get(s) for s, i, _ in outs] for g in chosen]
    write_rows(program, o.spec, cols, rows)


# -- the listing -------------------------------------------------------------------------------------------
def _print(program, proc, groups: list[Group], byc, classc, varc, stats, masks, opts, alpha) -> None:
    if not varc:
        return
    maxdec = opts.get("MAXDEC")
    heads = [LABELS[s][0].format(p=f"{100 * (1 - alpha):g}") for s in stats]
    listing = ods.Listing(program, proc)
    listing.title()
    by_keys: list[tuple] = []
    for g in groups:
        if g.type in masks and (not by_keys or by_keys[-1] != (g.run, g.by)):
            by_keys.append((g.run, g.by))
    for run, key in by_keys:
        mine = [g for g in groups if (g.run, g.by) == (run, key) and g.type in masks]
        if byc:
            text = " ".join(f"{c.name}={format_cell(program, v, c.format, c.type)}" for c, v in zip(byc, key))
            listing.text(by_rule(text), "")
        k = len(classc)
        for m in sorted({g.type for g in mine}):
            shown = [c for i, c in enumerate(classc) if m >> (k - 1 - i) & 1]
            header = [c.name for c in shown] + (["N Obs"] if classc else []) + (["Variable"] if len(varc) > 1 else [])
            header += heads
            body = []
            for g in (x for x in mine if x.type == m):
                cells = [format_cell(program, g.classes[classc.index(c)], c.format, c.type) for c in shown]
                cells += [str(g.freq)] if classc else []
                for i, v in enumerate(varc):
                    row = (cells if i == 0 else [""] * len(cells)) + ([v.name] if len(varc) > 1 else [])
                    row += [_num(g.values[i].get(s), s, maxdec, program) for s in stats]
                    body.append(row)
            lines = []
            if len(varc) == 1:
                lines += [f"Analysis Variable : {varc[0].name}" + (f" {varc[0].label}" if varc[0].label else ""), ""]
            left = [True] * len(shown) + [False] * bool(classc) + [True] * (len(varc) > 1)   # N Obs: a number
            lines += simple_table(header, body, left + [False] * len(stats))
            table = _summary_table(proc, [g for g in mine if g.type == m], shown, classc, varc, stats)
            table.by = list(zip(byc, key))
            listing.table(table, lines)
    listing.flush()


def _summary_table(proc, groups, shown, classc, varc, stats) -> ods.OdsTable:
    """SAS's Summary table (Base SAS MEANS, "ODS Table Names"): the CLASS variables, NObs, then per analysis
    variable VName_x (several variables) and x_N, x_Mean, x_StdDev … (the statistics' ODS suffixes)."""
    cols = [ods.OdsColumn(c.name, type=c.type) for c in shown] + ([ods.OdsColumn("NObs")] if classc else [])
    for v in varc:
        if len(varc) > 1:
            cols.append(ods.OdsColumn(f"VName_{v.name}", type="char"))
        cols += [ods.OdsColumn(f"{v.name}_{LABELS[s][1]}", label=LABELS[s][0]) for s in stats]
    rows = []
    for g in groups:
        row = [g.classes[classc.index(c)] for c in shown] + ([g.freq] if classc else [])
        for i, v in enumerate(varc):
            row += ([v.name] if len(varc) > 1 else []) + [g.values[i].get(s) for s in stats]
        rows.append(row)
    return ods.OdsTable("Summary", "", cols, rows, proc.capitalize())


def _num(v, stat: str, maxdec, program) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return format_cell(program, None, "", "num")
    if stat in ("N", "NMISS"):
        return str(int(v))
    if stat == "PROBT":
        return "<.0001" if v < 0.0001 else f"{v:.4f}"
    if maxdec is not None:
        return f"{v:.{int(maxdec)}f}"
    for d in range(7, -1, -1):                      # SAS: up to 7 decimals in a 12-wide field, else BEST12.
        text = f"{v:.{d}f}"
        if len(text) <= 12:
            return text
    return format_cell(program, v, "BEST12.", "num")
