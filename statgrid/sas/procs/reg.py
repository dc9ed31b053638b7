"""PROC REG (SAS/STAT: REG) on statgrid's least-squares engine (procs/regression.py: QR, selection, VIF,
collinearity — accurate to R).

    PROC REG <DATA=> <OUTEST=ds> <NOPRINT> <SIMPLE>;
      MODEL y = x1 x2 … </ NOINT SELECTION=NONE|FORWARD|BACKWARD|STEPWISE|RSQUARE|ADJRSQ|CP SLE= SLS=
                           INCLUDE= BEST= START= STOP= RSQUARE ADJRSQ CP STB VIF COLLIN>;
      BY vars; WHERE expr; OUTPUT OUT=ds P=name R=name;  (several MODEL statements: MODEL1, MODEL2 …)
      <label:> TEST equations;  (of the MODEL before it: reg_test.py)

The listing has SAS's tables: observations read and used, Analysis of Variance, the fit statistics
(Root MSE, Dependent Mean, Coeff Var, R-Square, Adj R-Sq), Parameter Estimates (with Standardized Estimate
and Variance Inflation when asked), the selection steps. OUTEST= has SAS's layout: _MODEL_, _TYPE_=PARMS,
_DEPVAR_, _RMSE_, Intercept, the regressors' estimates and the dependent variable as -1 (BY variables first).
OUTPUT OUT= is the input with the predicted value and the residual of every observation (missing where a
regressor is missing; the residual also where y is). Each BY group is fitted on its own.
"""
from __future__ import annotations

from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas import ods
from statgrid.sas.ods import OdsColumn as Col, OdsTable
from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME
from statgrid.sas.procs.byruns import group_id
from statgrid.sas.procs.common import (DATASET, FLAG, by_condition, by_list, by_rule, by_text, statement_error,
                                       where_statement, write_rows, write_select)
from statgrid.sas.procs.step import ByInput, begin, data_input, each_statement, output_statement, statement_option

OPTIONS = {"DATA": DATASET, "OUTEST": DATASET, "NOPRINT": FLAG, "SIMPLE": FLAG, "CORR": FLAG, "ALL": FLAG,
           "PLOTS": "value", "OUTSSCP": DATASET, "TABLEOUT": FLAG, "RSQUARE": FLAG, "ADJRSQ": FLAG, "EDF": FLAG,
           "SSE": FLAG, "MSE": FLAG}
# PROC REG options that add statistics to OUTEST= (SAS's order after the dependent variable's column)
OUTEST_STATS = (("_IN_", "EDF"), ("_P_", "EDF"), ("_EDF_", "EDF"), ("_SSE_", "SSE"), ("_MSE_", "MSE"),
                ("_RSQ_", "RSQUARE EDF"), ("_ADJRSQ_", "ADJRSQ"))
MODEL_OPTIONS = {"NOINT", "SELECTION", "SLE", "SLS", "SLENTRY", "SLSTAY", "INCLUDE", "STB", "VIF", "COLLIN",
                 "COLLINOINT", "CLB", "P", "R", "TOL", "DETAILS", "NOPRINT", "SS1", "SS2", "BEST", "START", "STOP",
                 "CP", "ADJRSQ", "RSQUARE"}
STATEMENTS = ("MODEL", "BY", "WHERE", "OUTPUT", "TEST", "VAR", "ID", "FREQ", "WEIGHT", "RUN", "QUIT", "TITLE")


@ods.proc_step
def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "REG")
    src, cols = data_input(program, opts, first)
    models, by, outputs = [], [], []
    for stmt, kw, c in each_statement(rest):
        label = None
        if len(stmt.tokens) > 2 and stmt.tokens[1].text == ":" and stmt.tokens[2].upper in ("MODEL", "TEST"):
            label, kw = stmt.tokens[0].text, stmt.tokens[2].upper      # label: MODEL … / label: TEST …
            c.next()
            c.next()
        if kw == "MODEL":
            models.append(_model(c, cols, len(models) + 1))
            if label:
                models[-1]["label"] = label
        elif kw == "BY":
            by = by_list(c)
        elif kw == "WHERE":
            where_statement(c, src)
        elif kw == "OUTPUT":
            outputs.append(_output(c, program, len(models)))
        elif kw == "TEST":
            from statgrid.sas.procs import reg_test
            if not models:
                t = stmt.tokens[0]
                raise SasError("The TEST statement must follow a MODEL statement", t.line, t.col, t.text,
                               "MODEL y = x …; TEST x = 0;")
            models[-1].setdefault("tests", []).append(reg_test.parse(c, label))
        elif kw in ("VAR", "ID"):
            continue
        elif kw in ("FREQ", "WEIGHT"):
            t = stmt.tokens[0]
            raise SasError(f"The {kw} statement of PROC REG is not supported by statgrid yet", t.line, t.col, kw,
                           "an unweighted model")
        else:
            raise statement_error(stmt, "REG", STATEMENTS)
    if not models:
        t = first.tokens[0]
        raise SasError("No MODEL statement was given to PROC REG", t.line, t.col, "REG", "MODEL y = x …;")
    inp = ByInput(program, first, src, cols, by)
    byc, cols, base = inp.byc, inp.cols, inp.base
    keys: list[list] = []
    est_rows: list[list] = []
    fits: dict[tuple[int, tuple], Any] = {}
    listing = ods.Listing(program, "REG")
    from statgrid.procs.regression import reg as api_reg
    fit_fn = getattr(api_reg, "__wrapped__", api_reg)
    for key, data in inp.groups("_sgreg_group"):
        keys.append(key)
        for m in models:
            result = fit_fn(program.session, data, f"{m['dep']} = {' '.join(m['regs'])}",
                            noint=m["noint"], selection=m["selection"], sle=m["sle"], sls=m["sls"],
                            include=m["include"], stb=m["stb"], vif=m["vif"], collin=m["collin"], print=False)
            fits[(m["index"], group_id(key))] = (m, result)
            if not opts.get("NOPRINT"):
                _publish(listing, byc, key, m, result)
            est_rows.append(list(key) + [m["label"], "PARMS", m["dep"], result.stats["rmse"]]
                            + _estimates(m, result) + [_outest_stats(result)])
    listing.flush()
    if opts.get("OUTEST") is not None:
        names = []
        for m in models:
            names += [n for n in (["Intercept"] if not m["noint"] else []) + m["regs"] + [m["dep"]] if n not in names]
        cols_out = [ColumnInfo(b.name, b.type, b.length, b.format, "", b.label) for b in byc] + [
            ColumnInfo("_MODEL_", "char", 8), ColumnInfo("_TYPE_", "char", 8), ColumnInfo("_DEPVAR_", "char", 32),
            ColumnInfo("_RMSE_", "num", 8, label="Root mean squared error")] + [ColumnInfo(n, "num", 8) for n in names]
        extra = [n for n, keys in OUTEST_STATS if any(opts.get(k) for k in keys.split())]
        cols_out += [ColumnInfo(n, "num", 8) for n in extra]
        rows = []
        k = 0
        for key in keys:
            for m in models:
                r = est_rows[k]
                k += 1
                head, values = r[:len(byc) + 4], dict(r[len(byc) + 4])
                rows.append(head + [values.get(n.upper()) for n in names] + [r[-1][n] for n in extra])
        write_rows(program, opts.get("OUTEST"), cols_out, rows)
    for out in outputs:
        _write_output(program, out, models, byc, keys, fits, cols, base)


def _model(c, cols, index: int) -> dict:
    label = f"MODEL{index}"
    if c.peek().kind == NAME and c.peek(1).text == ":":
        label = c.next().text.upper()
        c.next()
    dep = c.expect_kind(NAME, "the dependent variable").text
    c.expect("=", expected="= after the dependent variable")
    regs = []
    while not c.at_end() and not c.at("/"):
        regs += var_names_one(c, cols)
    m = {"index": index, "label": label, "dep": dep, "regs": regs, "noint": False, "selection": None, "sle": 0.15,
         "sls": 0.15, "include": 0, "stb": False, "vif": False, "collin": False, "best": None, "start": None,
         "stop": None, "cp": False, "adjrsq": False, "rsquare": False}
    if c.accept("/"):
        while not c.at_end():
            o = statement_option(c, MODEL_OPTIONS, "MODEL").upper
            if c.accept("="):
                v = c.next()
                val = v.value if v.kind != NAME else v.upper
                if o == "SELECTION":
                    m["selection"] = {"F": "forward", "B": "backward", "S": "stepwise", "STEPWISE": "stepwise",
                                      "FORWARD": "forward", "BACKWARD": "backward", "ADJRSQ": "adjrsq",
                                      "RSQUARE": "rsquare", "CP": "cp", "NONE": None}.get(str(val).upper(), str(val).lower())
                elif o in ("SLE", "SLENTRY"):
                    m["sle"] = float(val)
                elif o in ("SLS", "SLSTAY"):
                    m["sls"] = float(val)
                elif o == "INCLUDE":
                    m["include"] = int(float(val))
                elif o in ("BEST", "START", "STOP"):
                    m[o.lower()] = _count_option(o, val, v)
            elif o in ("NOINT", "STB", "VIF", "COLLIN", "CP", "ADJRSQ", "RSQUARE"):
                m[o.lower()] = True
            elif o == "COLLINOINT":
                m["collin"] = True
    return m


def var_names_one(c, cols) -> list[str]:
    from statgrid.sas.dataset import expand_var_list
    from statgrid.sas.parse.expr import parse_var_list
    items = parse_var_list(c, stop=("/",))
    if not items:
        t = c.next()
        raise SasError("Syntax error in the MODEL statement", t.line, t.col, t.text, "regressor names")
    return expand_var_list(items, [x.name for x in cols], {x.name.upper(): x.type for x in cols})


def _output(c, program, n_models: int) -> dict:
    out: dict[str, Any] = {"spec": None, "p": None, "r": None, "model": n_models}

    def read(t, c) -> bool:
        key = {"P": "p", "PREDICTED": "p", "PRED": "p", "R": "r", "RESIDUAL": "r"}.get(t.upper)
        if key is not None:
            out[key] = c.expect_kind(NAME, "a variable name").text
        return key is not None
    out["spec"] = output_statement(c, program, "REG", "OUT=, P= or R=", "OUT=, P= or R=", read)
    return out


def _estimates(m, result) -> list:
    values = {}
    for row in result.rows:
        values[str(row[0]).upper()] = row[2]
    for name in (["Intercept"] if not m["noint"] else []) + m["regs"]:
        values.setdefault(name.upper(), None)     # a variable the selection left out: missing
    values[m["dep"].upper()] = -1.0
    return [values]


def _write_output(program, out, models, byc, keys, fits, cols, base) -> None:
    m = models[max(0, out["model"] - 1)]
    cases = []
    for key in keys:
        _, result = fits[(m["index"], group_id(key))]
        est = {str(r[0]).upper(): r[2] for r in result.rows}
        pred = " + ".join([repr(float(est.get("INTERCEPT", 0.0) or 0.0))] +
                          [f"{repr(float(est.get(x.upper()) or 0.0))} * CAST({sql_ident(x)} AS DOUBLE)"
                           for x in m["regs"] if est.get(x.upper()) is not None])
        guard = " OR ".join(f"{sql_ident(x)} IS NULL" for x in m["regs"] if est.get(x.upper()) is not None) or "FALSE"
        p = f"CASE WHEN {guard} THEN NULL ELSE {pred} END"
        cond = by_condition(byc, key) if byc else "TRUE"
        cases.append((cond, p))
    p_expr = "CASE " + " ".join(f"WHEN {cond} THEN {p}" for cond, p in cases) + " END" if byc else cases[0][1]
    select = [sql_ident(c.name) for c in cols]
    extra = []
    if out["p"]:
        select.append(f"{p_expr} AS {sql_ident(out['p'])}")
        extra.append(ColumnInfo(out["p"], "num", 8, label=f"Predicted Value of {m['dep']}"))
    if out["r"]:
        select.append(f"{sql_ident(m['dep'])} - ({p_expr}) AS {sql_ident(out['r'])}")
        extra.append(ColumnInfo(out["r"], "num", 8, label="Residual"))
    write_select(program, out["spec"], f"SELECT {', '.join(select)} FROM ({base})", cols + extra)


# -- the tables (SAS/STAT REG, "ODS Table Names"): one record feeds the listing and ODS OUTPUT ---------------
def _outest_stats(result) -> dict:
    """The model's OUTEST= statistics: _IN_ regressors, _P_ parameters, _EDF_ error DF, _SSE_, _MSE_, _RSQ_,
    _ADJRSQ_."""
    st = result.stats
    params = sum(1 for row in result.rows if row[1])
    has_int = any(str(row[0]).upper() == "INTERCEPT" for row in result.rows)
    return {"_IN_": params - int(has_int), "_P_": params, "_EDF_": st["df_error"], "_SSE_": st["sse"],
            "_MSE_": st["mse"], "_RSQ_": st["rsquare"], "_ADJRSQ_": st["adj_rsquare"]}


def _publish(listing, byc, key, m, result) -> None:
    if byc:
        listing.text(by_rule(by_text(listing.program, zip(byc, key))), "")
    listing.title()
    listing.text(f"Model: {m['label']}", f"Dependent Variable: {m['dep']}", "")
    by = list(zip(byc, key))
    for table in reg_tables(m, result):
        table.by = by
        listing.table(table)


def reg_tables(m, result) -> list[OdsTable]:
    """NObs, ANOVA, FitStatistics, ParameterEstimates and (with SELECTION=) SelectionSummary, with SAS's
    column names; Model and Dependent are in the data sets, not the listing's columns."""
    st, label, dep = result.stats, m["label"], m["dep"]
    head = [Col("Model", type="char", hidden=True), Col("Dependent", type="char", hidden=True)]

    def table(name, title, cols, rows, headings=True):
        return OdsTable(name, title, head + cols, [[label, dep] + r for r in rows], "Reg",
                        f"Reg.{label}.Fit.{dep}.{name}", headings=headings)

    n_read = st["n"] + st["n_missing"]
    nobs = [["Number of Observations Read", n_read], ["Number of Observations Used", st["n"]]]
    if st["n_missing"]:
        nobs.append(["Number of Observations with Missing Values", st["n_missing"]])
    ms_model = st["ssm"] / st["df_model"] if st["df_model"] else None
    anova = [["Model", st["df_model"], st["ssm"], ms_model, st["f_value"], st["prob_f"]],
             ["Error", st["df_error"], st["sse"], st["mse"], None, None],
             ["Corrected Total", st["df_model"] + st["df_error"], st["sst"], None, None, None]]
    fit = [["Root MSE", _num(st["rmse"]), st["rmse"], "R-Square", f"{st['rsquare']:.4f}", st["rsquare"]],
           ["Dependent Mean", _num(st["dep_mean"]), st["dep_mean"], "Adj R-Sq", f"{st['adj_rsquare']:.4f}",
            st["adj_rsquare"]],
           ["Coeff Var", _num(st["coeff_var"]), st["coeff_var"], "", "", None]]
    out = [table("NObs", "", [Col("Label", "", "char"), Col("N", "", fmt="int")], nobs, headings=False),
           table("ANOVA", "Analysis of Variance", [
               Col("Source", type="char"), Col("DF", fmt="int"), Col("SS", "Sum of Squares", fmt="d5"),
               Col("MS", "Mean Square", fmt="d5"), Col("FValue", "F Value", fmt="d2"),
               Col("ProbF", "Pr > F", fmt="p")], anova),
           table("FitStatistics", "", [
               Col("Label1", "", "char"), Col("cValue1", "", "char", right=True), Col("nValue1", hidden=True),
               Col("Label2", "", "char"), Col("cValue2", "", "char", right=True), Col("nValue2", hidden=True)],
               fit, headings=False)]
    extra = [c for c in result.columns if c in ("StandardizedEst", "VarianceInflation")]
    cols = [Col("Variable", type="char"), Col("DF", fmt="int"), Col("Estimate", "Parameter Estimate", fmt="d5"),
            Col("StdErr", "Standard Error", fmt="d5"), Col("tValue", "t Value", fmt="d2"),
            Col("Probt", "Pr > |t|", fmt="p")]
    cols += [Col(c, "Standardized Estimate" if c == "StandardizedEst" else "Variance Inflation", fmt="d5")
             for c in extra]
    rows = []
    for row in result.rows:
        r = dict(zip(result.columns, row))
        rows.append([r["Variable"], r["DF"], r["Estimate"], r["StdErr"], r["tValue"], r["Probt"]]
                    + [r[c] for c in extra])
    out.append(table("ParameterEstimates", "Parameter Estimates", cols, rows))
    if m.get("tests"):
        from statgrid.sas.procs import reg_test
        for k, test in enumerate(m["tests"], 1):
            title, rows_t = reg_test.result(test, result, k)
            out.append(table("TestANOVA", title, reg_test.COLUMNS, rows_t))
    if st.get("collinearity"):
        names = list(st["collinearity"][0]["proportions"])
        out.append(table("CollinDiag", "Collinearity Diagnostics", [
            Col("Number", fmt="int"), Col("Eigenvalue", fmt="d5"), Col("ConditionIndex", "Condition Index", fmt="d5")]
            + [Col(f"Proportion{nm}", f"Proportion of Variation {nm}", fmt="d5") for nm in names],
            [[c["number"], c["eigenvalue"], c["condition_index"], *c["proportions"].values()]
             for c in st["collinearity"]]))
    subsets = next((x[1] for x in st.get("selection") or [] if x[0] == "subsets"), None)
    if subsets is not None:
        # SELECTION=RSQUARE|ADJRSQ|CP prints the subsets instead of a fitted model (SAS REG, "Model-Selection
        # Methods")
        return [out[0], _subset_table(m, subsets, table)]
    if st.get("selection"):
        steps = []
        moves = [x for x in st["selection"] if x[0] in ("entered", "removed")]
        for k, (step, ss) in enumerate(zip(moves, st.get("selection_stats") or [{}] * len(moves)), 1):
            action, name, p = step[:3]
            steps.append([k, name if action != "removed" else "", name if action == "removed" else "",
                          ss.get("num_in"), ss.get("partial_rsquare"), ss.get("model_rsquare"), ss.get("cp"),
                          ss.get("f_value"), p])
        out.append(table("SelectionSummary", "Summary of " + ("Backward Elimination" if m["selection"] == "backward"
                                           else f"{str(m['selection']).capitalize()} Selection"), [
            Col("Step", fmt="int"), Col("VarEntered", "Variable Entered", "char"),
            Col("VarRemoved", "Variable Removed", "char"), Col("NumInModel", "Number Vars In", fmt="int"),
            Col("PartialRSquare", "Partial R-Square", fmt="d4"), Col("ModelRSquare", "Model R-Square", fmt="d4"),
            Col("Cp", "C(p)", fmt="d4"), Col("FValue", "F Value", fmt="d2"), Col("ProbF", "Pr > F", fmt="p")],
            steps))
    return out


def _count_option(name: str, val, token) -> int:
    try:
        k = float(val)
    except (TypeError, ValueError):
        k = -1.0
    if k < 1 or k != int(k):
        raise SasError(f"{name}={token.text} must be a whole number of at least 1 (e.g. {name}=2)", token.line,
                       token.col, name, f"{name}=2")
    return int(k)


SUBSET_TITLES = {"rsquare": "R-Square Selection Method", "adjrsq": "Adjusted R-Square Selection Method",
                 "cp": "C(p) Selection Method"}


def _subset_table(m, subsets: list[list], table) -> OdsTable:
    """SAS's SubsetSelSummary: Number in Model, the method's criterion first, then R-Square / Adjusted R-Square /
    C(p) as the method or the MODEL options (RSQUARE ADJRSQ CP) ask, and Variables in Model."""
    from statgrid.procs.regression import order_subsets

    method = m["selection"]
    cols = {"rsquare": Col("RSquare", "R-Square", fmt="d4"), "adjrsq": Col("AdjRsq", "Adjusted R-Square", fmt="d4"),
            "cp": Col("Cp", "C(p)", fmt="d4")}
    pos = {"rsquare": 1, "adjrsq": 2, "cp": 3}
    shown = [method] + [k for k in ("rsquare", "adjrsq", "cp") if k != method and (m[k] or (
        method == "adjrsq" and k == "rsquare") or (method == "cp" and k == "rsquare"))]
    rows = [[r[0], *[r[pos[k]] for k in shown], r[4]]
            for r in order_subsets(subsets, method, m["best"], m["start"], m["stop"])]
    return table("SubsetSelSummary", SUBSET_TITLES[method], [
        Col("NumInModel", "Number in Model", fmt="int"), *[cols[k] for k in shown],
        Col("VarsInModel", "Variables in Model", "char")], rows)


def _num(x, d: int = 5) -> str:
    if x is None or x != x:
        return "."
    return f"{x:.{d}f}" if abs(x) < 1e8 else f"{x:.4E}"
