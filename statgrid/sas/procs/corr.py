"""PROC CORR (Base SAS Procedures: CORR) on procs/corr.py: Pearson, Spearman and Kendall tau-b correlations and
covariances, with SAS's tables and output data sets.

    PROC CORR <DATA=> <PEARSON> <SPEARMAN> <KENDALL> <COV> <NOMISS> <NOSIMPLE> <NOPROB> <NOCORR> <NOPRINT>
              <ALPHA> <OUTP= OUTS= OUTK=>;
      VAR vars; WITH vars; PARTIAL vars; BY vars; WHERE expr; FREQ var; WEIGHT var;

Tables (listing and ODS OUTPUT): VarInformation (text), SimpleStats (NObs Mean StdDev Sum|Median Min Max: the
median instead of the sum when a rank correlation is asked for, as SAS), Cov ("Covariance Matrix, DF = n-1"),
PearsonCorr, SpearmanCorr, KendallCorr (columns: Variable, the VAR variables' coefficients, P<var> their
p-values, N<var> the pairs' N when it differs between pairs). Missing values: pairwise deletion, as SAS; NOMISS
drops every row with a missing analysis value first. OUTP=/OUTS=/OUTK= in SAS's TYPE=CORR layout: BY variables,
_TYPE_ ('COV' rows with COV, then MEAN, STD, N, then one 'CORR' row per row variable), _NAME_ (the row
variable, blank on MEAN/STD/N) and the VAR variables. ALPHA (Cronbach's coefficient alpha) and PARTIAL (Pearson
partial correlations): corr_more.py. Not done: HOEFFDING, CSSCP/SSCP, FISHER; PARTIAL with SPEARMAN/KENDALL, and
ALPHA or PARTIAL with FREQ/WEIGHT.
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident
from statgrid.procs import corr as eng
from statgrid.sas import ods
from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError, skip_if_syntax_check
from statgrid.sas.lexer import NAME
from statgrid.sas.ods import OdsColumn as Col, OdsTable
from statgrid.sas.procs import corr_more
from statgrid.sas.procs.common import (DATASET, FLAG, by_condition, by_keys, by_rule, by_text, resolve_names,
                                       var_names, write_rows)
from statgrid.sas.procs.stattext import dnum, pvalue, text_table
from statgrid.sas.procs.step import ByInput, Statements, begin, data_input, each_statement, stmt_error

OPTIONS = {"DATA": DATASET, "PEARSON": FLAG, "SPEARMAN": FLAG, "KENDALL": FLAG, "COV": FLAG, "NOMISS": FLAG,
           "NOSIMPLE": FLAG, "NOPROB": FLAG, "NOCORR": FLAG, "NOPRINT": FLAG, "OUTP": DATASET, "OUTS": DATASET,
           "OUTK": DATASET, "HOEFFDING": FLAG, "CSSCP": FLAG, "SSCP": FLAG, "ALPHA": FLAG, "FISHER": FLAG}
NOT_DONE = ("HOEFFDING", "CSSCP", "SSCP", "FISHER")
KINDS = {"PEARSON": ("PearsonCorr", "Pearson Correlation Coefficients", "Prob > |r| under H0: Rho=0"),
         "SPEARMAN": ("SpearmanCorr", "Spearman Correlation Coefficients", "Prob > |r| under H0: Rho=0"),
         "KENDALL": ("KendallCorr", "Kendall Tau b Correlation Coefficients", "Prob > |tau| under H0: Tau=0")}


@ods.proc_step
def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "CORR")
    for key in NOT_DONE:
        if opts.get(key):
            line, col = opts.where[key]
            raise SasError(f"The CORR option {key} is not supported by statgrid yet", line, col, key,
                           "PEARSON, SPEARMAN, KENDALL or COV")
    src, cols = data_input(program, opts, first)
    st = Statements(src, cols)
    with_names, freq, weight, partial = None, None, None, []
    for stmt, kw, c in each_statement(rest):
        if kw == "WITH":
            with_names = (with_names or []) + var_names(c, cols)
        elif kw == "PARTIAL":
            partial += var_names(c, cols)
        elif kw in ("FREQ", "WEIGHT"):
            name = c.expect_kind(NAME, f"a {kw} variable").text
            if kw == "FREQ":
                freq = name
            else:
                weight = name
        elif not st.read(kw, c):
            raise stmt_error(stmt, f"Statement {kw} is not valid or not supported in PROC CORR", kw,
                             "VAR, WITH, BY, WHERE, FREQ or WEIGHT")
    line = first.line
    extra = [n for n in (freq, weight) if n]
    extc = resolve_names(extra, cols, src, line) if extra else []
    freq = extc[0].name if freq else None
    weight = extc[-1].name if weight else None
    used = {n.upper() for n, _ in st.by} | {n.upper() for n in extra} | {n.upper() for n in (with_names or [])}
    used |= {n.upper() for n in partial}
    varc = st.analysis_vars(line, used)
    withc = resolve_names(with_names, cols, src, line) if with_names else []
    partc = resolve_names(partial, cols, src, line) if partial else []
    for v in varc + withc + extc + partc:
        if v.type != "num":
            raise stmt_error(first, f"Variable {v.name} in list does not match type prescribed for this list",
                             v.name, "numeric variables")
    if not varc:
        raise stmt_error(first, "No numeric variables to analyse in PROC CORR", "VAR", "a VAR statement")
    kinds = [k for k in KINDS if opts.get(k)] or ["PEARSON"]
    names, wnames, pnames = [v.name for v in varc], [v.name for v in withc], [v.name for v in partc]
    _check_alpha_partial(first, opts, kinds, wnames, pnames, freq or weight)
    skip_if_syntax_check(program)          # after an ERROR: the statements were read; compute nothing
    inp = ByInput(program, first, src, cols, st.by)
    execute = program.session.execute
    reader = lambda sql: program.session.con.sql(sql).to_arrow_reader(eng.BATCH_ROWS)  # noqa: E731
    outs = {k: opts.get(o) for k, o in (("PEARSON", "OUTP"), ("SPEARMAN", "OUTS"), ("KENDALL", "OUTK"))}
    out_rows: dict[str, list] = {k: [] for k in outs}
    for key in by_keys(program, inp.byc, inp.base):
        conds = ([by_condition(inp.byc, key)] if inp.byc else [])
        if opts.get("NOMISS") or opts.get("ALPHA") or pnames:        # SAS: ALPHA and PARTIAL drop incomplete rows
            conds += [f"{sql_ident(n)} IS NOT NULL" for n in names + wnames + pnames]
        base = f"SELECT * FROM ({inp.base})" + (f" WHERE {' AND '.join(conds)}" if conds else "")
        all_names = list(dict.fromkeys(wnames + names + pnames))
        rank = any(k != "PEARSON" for k in kinds)
        simple = eng.simple_stats(execute, base, all_names, freq, weight, median=rank)
        means = {s.name: s.mean for s in simple}
        results = {}
        extras: dict[str, Any] = {}
        if pnames:
            order = list(dict.fromkeys(wnames + names))
            x = corr_more.complete_rows(program, base, order + pnames)
            results["PEARSON"], extras["partial"] = corr_more.partial_cells(
                x[:, :len(order)], x[:, len(order):], wnames or names, names, order)
        elif "PEARSON" in kinds or opts.get("COV") or outs["PEARSON"] is not None:
            results["PEARSON"] = eng.pearson(execute, base, names, wnames, freq, weight, means, reader)
        if opts.get("ALPHA"):
            extras["alpha"] = corr_more.cronbach(corr_more.complete_rows(program, base, names), names)
        for k in ("SPEARMAN", "KENDALL"):
            if k in kinds or outs[k] is not None:
                results[k] = eng.rank_pairs(execute, base, names, wnames, freq, k.lower())
        by = inp.pairs(key)
        if not opts.get("NOPRINT"):
            _print(program, opts, kinds, names, wnames, simple, results, rank, by, pnames, extras)
        for k, spec in outs.items():
            if spec is not None and k in results:
                out_rows[k] += _out_rows(key, names, wnames, simple, results[k],
                                         results["PEARSON"] if k == "PEARSON" and opts.get("COV") else None)
    for k, spec in outs.items():
        if spec is not None:
            ocols = [ColumnInfo(b.name, b.type, b.length, b.format, "", b.label) for b in inp.byc]
            ocols += [ColumnInfo("_TYPE_", "char", 8), ColumnInfo("_NAME_", "char", 32)]
            ocols += [ColumnInfo(n, "num", 8) for n in names]
            write_rows(program, spec, ocols, out_rows[k])


def _out_rows(key, names, wnames, simple, cells, cov_cells) -> list[list]:
    st = {s.name: s for s in simple}
    rows_v = wnames or names
    out = []
    if cov_cells is not None:
        out += [list(key) + ["COV", a] + [cov_cells[(a, b)].cov for b in names] for a in rows_v]
    out.append(list(key) + ["MEAN", ""] + [st[n].mean for n in names])
    out.append(list(key) + ["STD", ""] + [st[n].std for n in names])
    out.append(list(key) + ["N", ""] + [st[n].n for n in names])
    out += [list(key) + ["CORR", a] + [cells[(a, b)].r for b in names] for a in rows_v]
    return out


def _check_alpha_partial(first, opts, kinds, wnames, pnames, freq_or_weight) -> None:
    if opts.get("ALPHA") and wnames:
        raise stmt_error(first, "The ALPHA option is not valid with a WITH statement (SAS: Cronbach's alpha is "
                         "for the VAR variables)", "ALPHA", "ALPHA without WITH")
    if pnames and any(k != "PEARSON" for k in kinds):
        raise stmt_error(first, "PARTIAL with SPEARMAN or KENDALL is not supported by statgrid yet", "PARTIAL",
                         "Pearson partial correlations (leave SPEARMAN and KENDALL out)")
    if (pnames or opts.get("ALPHA")) and freq_or_weight:
        raise stmt_error(first, "ALPHA and PARTIAL with a FREQ or WEIGHT statement are not supported by statgrid "
                         "yet", "PARTIAL" if pnames else "ALPHA", "no FREQ or WEIGHT statement")


def _print(program, opts, kinds, names, wnames, simple, results, rank: bool, by, pnames=(), extras=None) -> None:
    extras = extras or {}
    listing = ods.Listing(program, "CORR")
    if by:
        listing.text(by_rule(by_text(program, by)), "")
    listing.title()
    if wnames:
        listing.text(f"{len(wnames)}  With Variables:    {'   '.join(wnames)}")
    pad = "     " if wnames or pnames else ""
    listing.text(f"{len(names)}  {pad}Variables:    {'   '.join(names)}", *([] if pnames else [""]))
    if pnames:
        listing.text(f"{len(pnames)}  Partial Variables:    {'   '.join(pnames)}", "")
    if not opts.get("NOSIMPLE"):
        _simple(listing, simple, rank, by, extras.get("partial"))
    if "alpha" in extras:
        corr_more.alpha_tables(listing, *extras["alpha"], by)
    if opts.get("COV"):
        _matrix(listing, "Cov", "Covariance Matrix", None, names, wnames, results["PEARSON"], by, cov=True)
    if not opts.get("NOCORR"):
        for k in kinds:
            name, title, prob = KINDS[k] if not pnames else corr_more.PARTIAL_KIND
            _matrix(listing, name, title, None if opts.get("NOPROB") else prob, names, wnames, results[k], by)
    listing.flush()


def _simple(listing, simple, rank: bool, by, partial: dict | None = None) -> None:
    mid = ("Median", "Median") if rank else ("Sum", "Sum")
    pv = (lambda s: list(partial.get(s.name, (None, None)))) if partial else (lambda s: [])
    pcols = [Col("PartialVar", "Partial Variance", fmt="d5"), Col("PartialStdDev", "Partial Std Dev", fmt="d5")] \
        if partial else []
    table = OdsTable("SimpleStats", "Simple Statistics", [
        Col("Variable", type="char"), Col("NObs", "N", fmt="int"), Col("Mean", fmt="d5"),
        Col("StdDev", "Std Dev", fmt="d5"), Col(mid[0], mid[1], fmt="d5"), Col("Min", "Minimum", fmt="d5"),
        Col("Max", "Maximum", fmt="d5"), *pcols],
        [[s.name, s.n, s.mean, s.std, s.median if rank else s.sum, s.min, s.max, *pv(s)] for s in simple], "Corr",
        "Corr.SimpleStats", by=by)
    text = text_table(["Variable", "N", "Mean", "Std Dev", mid[1], "Minimum", "Maximum",
                       *(["Partial Variance", "Partial Std Dev"] if partial else [])],
                      [[s.name, _int(s.n), dnum(s.mean, 5), dnum(s.std, 5),
                        dnum(s.median if rank else s.sum, 5), dnum(s.min, 5), dnum(s.max, 5),
                        *(("" if v is None else dnum(v, 5)) for v in pv(s))] for s in simple],
                      title="Simple Statistics")
    listing.table(table, text)


def _int(n) -> str:
    return str(int(n)) if float(n).is_integer() else f"{n:g}"


def _matrix(listing, name, title, prob, names, wnames, cells, by, cov: bool = False) -> None:
    rows_v = wnames or names
    ns = {cells[(a, b)].n for a in rows_v for b in names}
    same_n = len(ns) == 1
    n = next(iter(ns)) if same_n else None
    if cov:
        heading = [f"{title}, DF = {_int(n - 1)}" if same_n else title]
    else:
        heading = [f"{title}, N = {_int(n)}" if same_n else title] + ([prob] if prob else []) + \
                  ([] if same_n else ["Number of Observations"])
    columns = [Col("Variable", type="char")] + [Col(b, fmt="d5") for b in names]
    if not cov and prob:
        columns += [Col(f"P{b}", fmt="p") for b in names]
    if not same_n:
        columns += [Col(f"N{b}", fmt="int") for b in names]
    rows, text_rows = [], []
    for a in rows_v:
        row = [a] + [cells[(a, b)].cov if cov else cells[(a, b)].r for b in names]
        if not cov and prob:
            row += [cells[(a, b)].p for b in names]
        if not same_n:
            row += [cells[(a, b)].n for b in names]
        rows.append(row)
        text_rows.append([a] + [_cov_text(cells[(a, b)].cov) if cov else dnum(cells[(a, b)].r, 5) for b in names])
        if not cov and prob:
            text_rows.append([""] + ["" if a == b else pvalue(cells[(a, b)].p) for b in names])
        if not same_n:
            text_rows.append([""] + [_int(cells[(a, b)].n) for b in names])
        text_rows.append([""] * (len(names) + 1))
    table = OdsTable(name, " / ".join(heading), columns, rows, "Corr", f"Corr.{name}", by=by)
    body = text_table(["", *names], text_rows[:-1], min_width=11)
    width = max(len(x) for x in body)
    listing.table(table, [h.center(width).rstrip() for h in heading] + [""] + body)


def _cov_text(v) -> str:
    """A covariance as SAS's listing shows it: 8 significant digits (BEST)."""
    if v is None:
        return "."
    text = f"{v:.8g}"
    return text if "e" not in text else f"{v:.6E}"
