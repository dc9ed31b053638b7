"""PROC TTEST (SAS/STAT: TTEST) on procs/ttest.py: one-sample, paired and two-sample t tests.

    PROC TTEST <DATA=> <H0=m> <ALPHA=α> <SIDES=2|L|U>;
      CLASS var;  VAR vars;  PAIRED a*b <c*d …>;  FREQ var;  WEIGHT var;  BY vars;  WHERE expr;

Per BY group and analysis variable (or pair: the differences a - b, "Difference:  a - b"), SAS's tables to the
listing and ODS OUTPUT: Statistics (N Mean StdDev StdErr Minimum Maximum; with CLASS one row per group and
"Diff (1-2)"), ConfLimits (mean and std with their CL; the Pooled and Satterthwaite differences), TTests (DF
tValue Probt; Pooled/Equal and Satterthwaite/Unequal with CLASS) and, with CLASS, Equality (Folded F). Without
VAR every numeric variable but the BY and CLASS ones is analysed. The CLASS variable must have exactly two levels
among the rows used (SAS's ERROR otherwise); its levels are ordered by their (formatted) values.
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident
from statgrid.procs import ttest as eng
from statgrid.sas import ods
from statgrid.sas.errors import SasError, SasRuntimeError, skip_if_syntax_check
from statgrid.sas.lexer import NAME
from statgrid.sas.ods import OdsColumn as Col, OdsTable
from statgrid.sas.procs.common import (VALUE, DATASET, by_condition, by_keys, format_cell, by_rule, by_text,
                                       resolve_names)
from statgrid.sas.procs.stattext import df_text, dnum, pvalue, text_table
from statgrid.sas.procs.step import ByInput, Statements, begin, data_input, each_statement, fit_errors, stmt_error

OPTIONS = {"DATA": DATASET, "H0": VALUE, "ALPHA": VALUE, "SIDES": VALUE, "CI": VALUE, "PLOTS": VALUE}
SIDES = {"2": "2", "U": "U", "L": "L"}


@ods.proc_step
def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "TTEST")
    src, cols = data_input(program, opts, first)
    h0, alpha, sides = _number(opts, "H0", 0.0, first), _number(opts, "ALPHA", 0.05, first), _sides(opts, first)
    with fit_errors(first, "ALPHA"):
        eng.check_options(alpha, sides)
    if str(opts.get("CI", "EQUAL")).upper() != "EQUAL":      # the equal-tailed std CL is the one computed
        line, col = opts.value_at["CI"]
        raise SasError(f"CI={opts.get('CI')} is not supported by statgrid yet", line, col, str(opts.get("CI")),
                       "CI=EQUAL (the default)")
    st = Statements(src, cols, passed=("FORMAT", "LABEL", "ATTRIB"))
    klass, pairs, freq, weight = None, [], None, None
    for stmt, kw, c in each_statement(rest):
        if kw == "CLASS":
            names = []
            while not c.at_end():
                names.append(c.expect_kind(NAME, "a CLASS variable").text)
            if len(names) != 1:
                raise stmt_error(stmt, "Only one CLASS variable is allowed in PROC TTEST", " ".join(names),
                                 "one CLASS variable with two levels")
            klass = names[0]
        elif kw == "PAIRED":
            pairs += _paired(c)
        elif kw == "FREQ":
            freq = c.expect_kind(NAME, "a FREQ variable").text
        elif kw == "WEIGHT":
            weight = c.expect_kind(NAME, "a WEIGHT variable").text
        elif not st.read(kw, c):
            raise stmt_error(stmt, f"Statement {kw} is not valid or not supported in PROC TTEST", kw,
                             "CLASS, VAR, PAIRED, FREQ, WEIGHT, BY or WHERE")
    line = first.line
    if pairs and klass:
        raise stmt_error(first, "The PAIRED statement cannot be used with a CLASS statement", "PAIRED",
                         "either CLASS or PAIRED")
    classc = resolve_names([klass], cols, src, line)[0] if klass else None
    freqc = resolve_names([freq], cols, src, line)[0] if freq else None
    weightc = resolve_names([weight], cols, src, line)[0] if weight else None
    used = {n.upper() for n, _ in st.by} | ({classc.name.upper()} if classc else set()) | (
        {freqc.name.upper()} if freqc else set()) | ({weightc.name.upper()} if weightc else set())
    if pairs:
        pc = [resolve_names([a, b], cols, src, line) for a, b in pairs]
        targets = [(f"{a.name} - {b.name}", f"CAST({sql_ident(a.name)} AS DOUBLE) - CAST({sql_ident(b.name)} AS "
                    "DOUBLE)", (a.name, b.name)) for a, b in pc]
    else:
        varc = [v for v in st.analysis_vars(line, used) if v.type == "num" or st.var is not None]
        for v in varc:
            if v.type != "num":
                raise stmt_error(first, f"Variable {v.name} in list does not match type prescribed for this list",
                                 v.name, "numeric VAR variables")
        targets = [(v.name, f"CAST({sql_ident(v.name)} AS DOUBLE)", None) for v in varc]
    skip_if_syntax_check(program)          # after an ERROR: the statements were read; compute nothing
    inp = ByInput(program, first, src, cols, st.by)
    execute = lambda sql: program.session.execute(sql).fetchall()  # noqa: E731
    for key in by_keys(program, inp.byc, inp.base):
        base = f"SELECT * FROM ({inp.base})" + (f" WHERE {by_condition(inp.byc, key)}" if inp.byc else "")
        by = inp.pairs(key)
        for name, expr, pair in targets:
            listing = ods.Listing(program, "TTEST")
            if by:
                listing.text(by_rule(by_text(program, by)), "")
            listing.title()
            listing.text(f"Difference:  {name}" if pair else f"Variable:  {name}", "")
            if classc is None:
                stats = eng.group_stats(execute, base, expr, freq=freqc.name if freqc else None,
                                        weight=weightc.name if weightc else None)
                s = stats[0][1] if stats else eng.GroupStats(0, None, None, None, None)
                _one(listing, name, pair, s, h0, alpha, sides, by)
            else:
                _two(program, first, listing, name, classc, base, expr, h0, alpha, sides, by, freqc, weightc)
            listing.flush()


def _paired(c) -> list[tuple[str, str]]:
    out = []
    while not c.at_end():
        a = c.expect_kind(NAME, "a variable of a PAIRED a*b request").text
        c.expect("*", expected="* between the two variables of a pair (PAIRED a*b)")
        b = c.expect_kind(NAME, "the second variable of a PAIRED a*b request").text
        out.append((a, b))
    return out


def _number(opts, key: str, default: float, first) -> float:
    v = opts.get(key)
    if v is None:
        return default
    try:
        return float(v)
    except (TypeError, ValueError):
        line, col = opts.value_at.get(key, (first.line, 0))
        raise SasError(f"{key}={v} is not valid", line, col, str(v), "a number") from None


def _sides(opts, first) -> str:
    v = opts.get("SIDES")
    if v is None:
        return "2"
    text = str(v).upper()
    text = text[:-2] if text.endswith(".0") else text
    if text not in SIDES:
        line, col = opts.value_at.get("SIDES", (first.line, 0))
        raise SasError(f"SIDES={text} is not valid", line, col, text, "SIDES=2, SIDES=L or SIDES=U")
    return SIDES[text]


def _p_head(sides: str, t: str = "t") -> str:
    return {"2": f"Pr > |{t}|", "U": f"Pr > {t}", "L": f"Pr < {t}"}[sides]


def _cl_head(alpha: float, what: str) -> str:
    return f"{100 * (1 - alpha):g}% CL {what}"


def _vcols(pair) -> tuple[list[Col], list]:
    if pair:
        return [Col("Variable1", type="char", hidden=True), Col("Variable2", type="char", hidden=True),
                Col("Difference", type="char", hidden=True)], [pair[0], pair[1], f"{pair[0]} - {pair[1]}"]
    return [Col("Variable", type="char", hidden=True)], None


def _tables(name, pair, class_rows, cl_rows, test_rows, equality, alpha, sides, has_class):
    vcols, vvals = _vcols(pair)
    vv = vvals or [name]
    kc = [Col("Class", type="char")] if has_class else []
    stats = OdsTable("Statistics", "", vcols + kc + [Col("N", fmt="int"), Col("Mean", fmt="d4"),
                     Col("StdDev", "Std Dev", fmt="d4"), Col("StdErr", "Std Err", fmt="d4"),
                     Col("Minimum", fmt="d4"), Col("Maximum", fmt="d4")],
                     [vv + r for r in class_rows], "TTEST", f"TTEST.{name}.Statistics")
    conf = OdsTable("ConfLimits", "", vcols + kc + ([Col("Method", type="char")] if has_class else []) + [
        Col("Mean", fmt="d4"), Col("LowerCLMean", fmt="d4"), Col("UpperCLMean", fmt="d4"), Col("StdDev", fmt="d4"),
        Col("LowerCLStdDev", fmt="d4"), Col("UpperCLStdDev", fmt="d4")], [vv + r for r in cl_rows], "TTEST",
        f"TTEST.{name}.ConfLimits")
    tests = OdsTable("TTests", "", vcols + ([Col("Method", type="char"), Col("Variances", type="char")]
                                            if has_class else []) + [
        Col("DF", fmt="best"), Col("tValue", "t Value", fmt="d2"), Col("Probt", _p_head(sides), fmt="p")],
        [vv + r for r in test_rows], "TTEST", f"TTEST.{name}.TTests")
    out = [stats, conf, tests]
    if equality is not None:
        out.append(OdsTable("Equality", "Equality of Variances", vcols + [
            Col("Method", type="char"), Col("NumDF", "Num DF", fmt="int"), Col("DenDF", "Den DF", fmt="int"),
            Col("FValue", "F Value", fmt="d2"), Col("ProbF", "Pr > F", fmt="p")],
            [vv + ["Folded F", *equality]], "TTEST", f"TTEST.{name}.Equality"))
    return out


def _stat_cells(s: eng.GroupStats) -> list[str]:
    return [str(s.n), dnum(s.mean, 4), dnum(s.std, 4), dnum(s.stderr, 4), dnum(s.min, 4), dnum(s.max, 4)]


def _one(listing, name, pair, s: eng.GroupStats, h0, alpha, sides, by) -> None:
    cl, test = eng.one_sample(s, h0, alpha, sides)
    tables = _tables(name, pair, [[s.n, s.mean, s.std, s.stderr, s.min, s.max]],
                     [[cl.mean, cl.lower, cl.upper, cl.std, cl.std_lower, cl.std_upper]],
                     [[test.df, test.t, test.p]], None, alpha, sides, False)
    texts = [
        text_table(["N", "Mean", "Std Dev", "Std Err", "Minimum", "Maximum"], [_stat_cells(s)], n_left=0),
        text_table(["Mean", "", "", "Std Dev", "", ""],
                   [[dnum(cl.mean, 4), dnum(cl.lower, 4), dnum(cl.upper, 4), dnum(cl.std, 4), dnum(cl.std_lower, 4),
                     dnum(cl.std_upper, 4)]], n_left=0,
                   spans=[(1, 2, _cl_head(alpha, "Mean")), (4, 2, _cl_head(alpha, "Std Dev"))]),
        text_table(["DF", "t Value", _p_head(sides)], [[df_text(test.df), dnum(test.t, 2), pvalue(test.p)]],
                   n_left=0)]
    for table, text in zip(tables, texts):
        table.by = by
        listing.table(table, text)


def _two(program, first, listing, name, classc, base, expr, h0, alpha, sides, by, freqc, weightc=None) -> None:
    execute = lambda sql: program.session.execute(sql).fetchall()  # noqa: E731
    g = sql_ident(classc.name)
    present = f"{g} IS NOT NULL" + (f" AND trim({g}) <> ''" if classc.type == "char" else "")
    groups = eng.group_stats(execute, f"SELECT * FROM ({base}) WHERE {present}", expr, classc.name,
                             freqc.name if freqc else None, weightc.name if weightc else None)
    shown = [format_cell(program, k, classc.format, classc.type) for k, _ in groups]
    if len(groups) != 2:
        t = first.tokens[0]
        # found in the data, not the statements: an execution-time ERROR (the program goes on)
        raise SasRuntimeError(f"The CLASS variable {classc.name} has {'more' if len(groups) > 2 else 'fewer'} than two "
                       f"levels{' (' + ', '.join(shown) + ')' if shown else ''}", t.line, t.col, classc.name,
                       "a CLASS variable with exactly two levels")
    (_, s1), (_, s2) = groups
    with fit_errors(first):
        two = eng.two_sample(s1, s2, h0, alpha, sides)
    diff = "Diff (1-2)"
    stat_rows = [[shown[0], s1.n, s1.mean, s1.std, s1.stderr, s1.min, s1.max],
                 [shown[1], s2.n, s2.mean, s2.std, s2.stderr, s2.min, s2.max],
                 [diff, None, two.diff, two.pooled_std, two.pooled_se, None, None]]
    cl_rows = [[lab, c.method, c.mean, c.lower, c.upper, c.std, c.std_lower, c.std_upper]
               for lab, c in zip([shown[0], shown[1], diff, diff], two.cl)]
    test_rows = [[t.method, t.variances, t.df, t.t, t.p] for t in two.tests]
    eq = list(two.folded_f) if two.folded_f else None
    tables = _tables(name, None, stat_rows, cl_rows, test_rows, eq, alpha, sides, True)
    cname = classc.name
    # the Diff row leaves N, Minimum and Maximum blank, Satterthwaite's the Std Dev and its CL (SAS); any other
    # figure that cannot be computed (a group of one has no Std Dev) is '.'
    stat_text = [[r[0], str(r[1])] + [dnum(x, 4) for x in r[2:]] for r in stat_rows[:2]]
    stat_text.append([diff, "", dnum(two.diff, 4), dnum(two.pooled_std, 4), dnum(two.pooled_se, 4), "", ""])
    texts = [
        text_table([cname, "N", "Mean", "Std Dev", "Std Err", "Minimum", "Maximum"], stat_text),
        text_table([cname, "Method", "Mean", "", "", "Std Dev", "", ""],
                   [[r[0], r[1]] + [dnum(x, 4) for x in r[2:5]] + (["", "", ""] if r[1] == "Satterthwaite" else
                                                                     [dnum(x, 4) for x in r[5:]]) for r in cl_rows],
                   n_left=2,
                   spans=[(3, 2, _cl_head(alpha, "Mean")), (6, 2, _cl_head(alpha, "Std Dev"))]),
        text_table(["Method", "Variances", "DF", "t Value", _p_head(sides)],
                   [[t.method, t.variances, df_text(t.df), dnum(t.t, 2), pvalue(t.p)] for t in two.tests],
                   n_left=2)]
    if eq is not None:
        texts.append(text_table(["Method", "Num DF", "Den DF", "F Value", "Pr > F"],
                                [["Folded F", str(int(eq[0])), str(int(eq[1])), dnum(eq[2], 2), pvalue(eq[3])]],
                                title="Equality of Variances"))
    for table, text in zip(tables, texts):
        table.by = by
        listing.table(table, text)
