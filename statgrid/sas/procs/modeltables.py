"""The tables of PROC LOGISTIC, GLM, GENMOD and MIXED as SAS's ODS holds them (SAS/STAT 9.4 User's Guide, each
chapter's "ODS Table Names"), made from the engines' results (procs/logistic.py, glm.py, genmod.py, mixed.py):
one record per table feeds the listing and ODS OUTPUT (statgrid/sas/ods.py).

    LOGISTIC  NObs, ResponseProfile (with "Probability modeled is y=v."), FitStatistics, GlobalTests, Type3 (with CLASS), ParameterEstimates, OddsRatios, Association
    GLM       NObs, ClassLevels, OverallANOVA, FitStatistics, ModelANOVA (Type I and III), ParameterEstimates,
              LSMeans                                                   (Dependent in every data set)
    GENMOD    NObs, ClassLevels, ModelFit, ParameterEstimates
    MIXED     ClassLevels, Dimensions, NObs, CovParms, FitStatistics, SolutionF, Tests3
"""
from __future__ import annotations

import math
from typing import Any

from statgrid.sas.ods import OdsColumn as Col, OdsTable

TITLES = {"LOGISTIC": "LOGISTIC", "GLM": "GLM", "GENMOD": "GENMOD", "MIXED": "Mixed"}


def _t(proc: str, name: str, title: str, cols: list[Col], rows: list[list], headings: bool = True) -> OdsTable:
    return OdsTable(name, title, cols, [list(r) for r in rows], TITLES[proc].capitalize(), headings=headings)


def _nobs(proc: str, read: int, used: int) -> OdsTable:
    return _t(proc, "NObs", "", [Col("Label", "", "char"), Col("N", "", fmt="int")],
              [["Number of Observations Read", read], ["Number of Observations Used", used]], headings=False)


def _class_levels(proc: str, levels: dict[str, list]) -> OdsTable:
    rows = [[c, len(v), " ".join(str(x) for x in v)] for c, v in levels.items()]
    return _t(proc, "ClassLevels", "Class Level Information",
              [Col("Class", type="char"), Col("Levels", fmt="int"), Col("Values", type="char")], rows)


def parameter_level(name: str) -> tuple[str, str]:
    """'c a' → ('c', 'a'): an engine's parameter name as SAS's variable and class level."""
    head, _, rest = str(name).partition(" ")
    return head, rest


def tables(proc: str, result: Any, classes: list[str], model: tuple | None = None) -> list[OdsTable]:
    """The fit's tables; `model`: the MODEL statement as models._model read it (response, effects, response
    options, options), which LOGISTIC's Response Profile needs (the response's name and ordering)."""
    if proc == "LOGISTIC":
        return logistic_tables(result, classes, model)
    solution = bool(model and (model[3].get("SOLUTION") or model[3].get("S")))
    if proc == "GLM":
        return glm_tables(result, classes, solution)
    if proc == "MIXED":
        return mixed_tables(result, classes, solution)
    return genmod_tables(result, classes)


# ------------------------------------------------------------------------------------------ LOGISTIC
def _level_text(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v).rstrip()


def response_profile(r: Any, model: tuple) -> OdsTable:
    """SAS's Response Profile: the response levels by Ordered Value with their counts, and the line saying which
    level's probability is modeled. Ordered Values go up with the sorted levels, reversed by DESCENDING (SAS/STAT
    LOGISTIC, "Response Level Ordering"); EVENT= picks the modeled level without reordering. The engine takes
    the lowest level as the event unless DESCENDING or EVENT= says otherwise, so without EVENT= a highest-level
    event means DESCENDING (of the PROC or the response)."""
    st = r.stats
    dep, dep_opts = model[0].split("(")[0].strip(), model[2]
    levels, ev = list(st["levels"]), st["event"]
    descending = bool(dep_opts.get("DESCENDING")) or ("EVENT" not in dep_opts and ev == levels[-1])
    if descending:
        levels.reverse()
    counts = {_level_text(ev): st["events"]}
    rows = [[k + 1, _level_text(v), counts.get(_level_text(v), st["n"] - st["events"])]
            for k, v in enumerate(levels)]
    table = _t("LOGISTIC", "ResponseProfile", "Response Profile", [
        Col("OrderedValue", "Ordered Value", fmt="int"), Col("Outcome", dep, "char", right=True),
        Col("Count", "Total Frequency", fmt="int")], rows)
    table.footer = [f"Probability modeled is {dep}={_level_text(ev)}."]
    return table


LOGISTIC_MODELS = {"logit": "binary logit", "probit": "binary probit", "cloglog": "binary cloglog"}


def _pairs(name: str, title: str, pairs: list[tuple[str, Any]]) -> OdsTable:
    return _t("LOGISTIC", name, title, [Col("Label1", "", "char"), Col("cValue1", "", "char")],
              [[a, str(b)] for a, b in pairs], headings=False)


def _class_design(st: dict) -> OdsTable:
    """Class Level Information with each level's design variables in the PARAM= coding (EFFECT: the last, the
    reference, −1; REF: 0; GLM: one indicator per level)."""
    rows, width = [], 0
    for var, levels in st["class_levels"].items():
        k = len(levels)
        for i, v in enumerate(levels):
            if st.get("param") == "glm":
                design = [int(i == j) for j in range(k)]
            else:
                last = -1 if st.get("param", "effect") == "effect" else 0
                design = [int(i == j) if i < k - 1 else last for j in range(k - 1)]
            width = max(width, len(design))
            rows.append([var if i == 0 else "", _level_text(v), *design])
    rows = [r + [None] * (2 + width - len(r)) for r in rows]
    cols = [Col("Class", type="char"), Col("Value", type="char"),
            *[Col(f"X{j + 1}", "Design Variables" if j == 0 else "", fmt="int") for j in range(width)]]
    return _t("LOGISTIC", "ClassLevelInfo", "Class Level Information", cols, rows)


def _selection_summary(st: dict, method: str) -> OdsTable:
    """Summary of Forward/Backward/Stepwise Selection (ODS ModelBuildingSummary): each step's effect, its DF,
    the number of effects then in the model and the score (entry) or Wald (removal) chi-square."""
    steps = st["selection"]
    number = len(st.get("effects", ())) - sum(1 if s[2] == "entered" else -1 for s in steps)
    rows = []
    for step, effect, action, df, chi, pv, _ in steps:
        number += 1 if action == "entered" else -1
        entered = action == "entered"
        rows.append([step, effect if entered else "", "" if entered else effect, df, number,
                     chi if entered else None, None if entered else chi, pv])
    cols = [Col("Step", fmt="int"), Col("EffectEntered", "Effect Entered", "char"),
            Col("EffectRemoved", "Effect Removed", "char"), Col("DF", fmt="int"),
            Col("NumberInModel", "Number In", fmt="int"), Col("ScoreChiSq", "Score Chi-Square", fmt="d4"),
            Col("WaldChiSq", "Wald Chi-Square", fmt="d4"), Col("ProbChiSq", "Pr > ChiSq", fmt="p")]
    keep = {"forward": {1, 6}, "backward": {2, 5}}.get(method, set())
    cols = [c for j, c in enumerate(cols) if j not in keep]
    rows = [[v for j, v in enumerate(row) if j not in keep] for row in rows]
    return _t("LOGISTIC", "ModelBuildingSummary", f"Summary of {method.capitalize()} Selection", cols, rows)


def conditional_tables(r: Any, model: tuple | None) -> list[OdsTable]:
    """LOGISTIC with STRATA (SAS: Conditional Logistic Regression): Strata Summary, Model Fit Statistics without
    and with covariates, the global tests, Analysis of Conditional Maximum Likelihood Estimates, odds ratios."""
    st, p = r.stats, "LOGISTIC"
    dep = model[0].split("(")[0].strip() if model else "y"
    ev = _level_text(st["event"])
    other = next(_level_text(v) for v in st["levels"] if v != st["event"])
    info = ([("Data Set", st["data_label"])] if st.get("data_label") else []) + [
        ("Response Variable", dep), ("Number of Response Levels", len(st["levels"])),
        ("Number of Strata", sum(row[2] for row in st["strata_summary"])), ("Model", "binary logit"),
        ("Optimization Technique", "Newton-Raphson")]
    out = [_pairs("ModelInfo", "Model Information", info), _nobs(p, st["n"] + st["n_missing"], st["n"]),
           _t(p, "StrataSummary", "Strata Summary", [
               Col("Pattern", "Response Pattern", fmt="int"), Col("Events", f"{dep}={ev}", fmt="int"),
               Col("NonEvents", f"{dep}={other}", fmt="int"), Col("NumberOfStrata", "Number of Strata", fmt="int"),
               Col("Frequency", fmt="int")], [[k + 1, *row] for k, row in enumerate(st["strata_summary"])]),
           _t(p, "ConvergenceStatus", "Model Convergence Status", [Col("Reason", "", "char")],
              [["Convergence criterion (GCONV=1E-8) satisfied."]], headings=False),
           _t(p, "FitStatistics", "Model Fit Statistics", [
               Col("Criterion", type="char"), Col("WithoutCovariates", "Without Covariates", fmt="d3"),
               Col("WithCovariates", "With Covariates", fmt="d3")], st["fit"]),
           _t(p, "GlobalTests", "Testing Global Null Hypothesis: BETA=0", [
               Col("Test", type="char"), Col("ChiSq", "Chi-Square", fmt="d4"), Col("DF", fmt="int"),
               Col("ProbChiSq", "Pr > ChiSq", fmt="p")], st["global"])]
    classes = bool(st.get("class_levels"))
    cols = [Col("Variable", "Parameter", "char"), *([Col("ClassVal0", "", "char")] if classes else []),
            Col("DF", fmt="int"), Col("Estimate", fmt="d4"), Col("StdErr", "Standard Error", fmt="d4"),
            Col("WaldChiSq", "Wald Chi-Square", fmt="d4"), Col("ProbChiSq", "Pr > ChiSq", fmt="p")]
    rows = [[*(parameter_level(x[0]) if classes else (x[0],)), *x[1:]] for x in r.rows]
    out.append(_t(p, "ParameterEstimates", "Analysis of Conditional Maximum Likelihood Estimates", cols, rows))
    if st["odds_ratios"]:
        out.append(_t(p, "OddsRatios", "Odds Ratio Estimates", [
            Col("Effect", type="char"), Col("OddsRatioEst", "Point Estimate", fmt="d3"),
            Col("LowerCL", "95% Wald Lower", fmt="d3"), Col("UpperCL", "95% Wald Upper", fmt="d3")],
            st["odds_ratios"]))
    return out


def logistic_tables(r: Any, classes: list[str], model: tuple | None = None) -> list[OdsTable]:
    st, p = r.stats, "LOGISTIC"
    if st.get("conditional"):
        return conditional_tables(r, model)
    out = []
    if model is not None:
        dep = model[0].split("(")[0].strip()
        info = [("Response Variable", dep), ("Number of Response Levels", len(st.get("levels", ()))),
                ("Model", LOGISTIC_MODELS.get(st.get("link", "logit"), "binary logit")),
                ("Optimization Technique", "Fisher's scoring")]
        out.append(_pairs("ModelInfo", "Model Information",
                          ([("Data Set", st["data_label"])] if st.get("data_label") else []) + info))
    out.append(_nobs(p, st["n"] + st["n_missing"], st["n"]))
    if model is not None and len(st.get("levels", ())) == 2:
        out.append(response_profile(r, model))
    if st.get("class_levels"):
        out.append(_class_design(st))
    out.append(_t(p, "ConvergenceStatus", "Model Convergence Status", [Col("Reason", "", "char")],
                  [["Convergence criterion (GCONV=1E-8) satisfied."]], headings=False))
    out.append(_t(p, "FitStatistics", "Model Fit Statistics", [
               Col("Criterion", type="char"), Col("InterceptOnly", "Intercept Only", fmt="d3"),
               Col("InterceptAndCovariates", "Intercept and Covariates", fmt="d3")], st["fit"]))
    if model is not None and (model[3].get("RSQUARE") or model[3].get("RSQ")) and "m2loglik" in st:
        # Cox-Snell R² = 1 − exp((−2 log L − (−2 log L₀)) / n) and its maximum 1 − exp(2 log L₀ / n) (SAS: RSQUARE)
        r2 = 1 - math.exp((st["m2loglik"] - st["m2loglik_intercept"]) / st["n"])
        top = 1 - math.exp(-st["m2loglik_intercept"] / st["n"])
        out.append(_t(p, "RSquare", "", [Col("Label1", "", "char"), Col("cValue1", "", "char", right=True),
                                         Col("nValue1", hidden=True), Col("Label2", "", "char"),
                                         Col("cValue2", "", "char", right=True), Col("nValue2", hidden=True)],
                      [["R-Square", f"{r2:.4f}", r2, "Max-rescaled R-Square", f"{r2 / top:.4f}", r2 / top]],
                      headings=False))
    out += [
           _t(p, "GlobalTests", "Testing Global Null Hypothesis: BETA=0", [
               Col("Test", type="char"), Col("ChiSq", "Chi-Square", fmt="d4"), Col("DF", fmt="int"),
               Col("ProbChiSq", "Pr > ChiSq", fmt="p")], st["global"])]
    if classes and st["type3"]:
        out.append(_t(p, "Type3", "Type 3 Analysis of Effects", [
            Col("Effect", type="char"), Col("DF", fmt="int"), Col("WaldChiSq", "Wald Chi-Square", fmt="d4"),
            Col("ProbChiSq", "Pr > ChiSq", fmt="p")], st["type3"]))
    cols = [Col("Variable", "Parameter", "char")] + ([Col("ClassVal0", "", "char")] if classes else [])
    cols += [Col("DF", fmt="int"), Col("Estimate", fmt="d4"), Col("StdErr", "Standard Error", fmt="d4"),
             Col("WaldChiSq", "Wald Chi-Square", fmt="d4"), Col("ProbChiSq", "Pr > ChiSq", fmt="p"),
             Col("_ESTTYPE_", type="char", hidden=True)]
    rows = [[*(parameter_level(x[0]) if classes else (x[0],)), *x[1:], "MLE"] for x in r.rows]
    out.append(_t(p, "ParameterEstimates", "Analysis of Maximum Likelihood Estimates", cols, rows))
    if st["odds_ratios"]:
        out.append(_t(p, "OddsRatios", "Odds Ratio Estimates", [
            Col("Effect", type="char"), Col("OddsRatioEst", "Point Estimate", fmt="d3"),
            Col("LowerCL", "95% Wald Lower", fmt="d3"), Col("UpperCL", "95% Wald Upper", fmt="d3")],
            st["odds_ratios"]))
    a = st["association"]
    pairs = [("Percent Concordant", f"{a['concordant_pct']:.1f}", a["concordant_pct"], "Somers' D",
              f"{a['somers_d']:.3f}", a["somers_d"]),
             ("Percent Discordant", f"{a['discordant_pct']:.1f}", a["discordant_pct"], "Gamma",
              f"{a['gamma']:.3f}", a["gamma"]),
             ("Percent Tied", f"{a['tied_pct']:.1f}", a["tied_pct"], "Tau-a", f"{a['tau_a']:.3f}", a["tau_a"]),
             ("Pairs", str(a["pairs"]), a["pairs"], "c", f"{a['c']:.3f}", a["c"])]
    out.append(_t(p, "Association", "Association of Predicted Probabilities and Observed Responses", [
        Col("Label1", "", "char"), Col("cValue1", "", "char", right=True), Col("nValue1", hidden=True),
        Col("Label2", "", "char"), Col("cValue2", "", "char", right=True), Col("nValue2", hidden=True)],
        pairs, headings=False))
    if st.get("selection") and model is not None:
        method = {"S": "stepwise", "F": "forward", "B": "backward"}.get(
            str(model[3].get("SELECTION", "")).upper(), str(model[3].get("SELECTION", "stepwise")).lower())
        out.append(_selection_summary(st, method))
    return out


# ------------------------------------------------------------------------------------------ GLM
def sig10(*columns: list) -> str:
    """The decimals SAS's GLM listing gives a column of sums of squares, mean squares or estimates: those that
    leave the column's largest magnitude ten significant digits (2670.365050, 281.3174755, 55.28234314)."""
    values = [abs(float(v)) for col in columns for v in col
              if v is not None and isinstance(v, (int, float)) and math.isfinite(v)]
    top = max(values, default=0.0)
    digits = len(str(int(top))) if top >= 1 else 1
    return f"d{max(0, 10 - digits)}"


def glm_order(tables: list[OdsTable], statements: list[OdsTable], means: list[OdsTable]) -> list[OdsTable]:
    """GLM's tables in SAS's order: the Class Level Information and the observations; for each response its
    ANOVA, fit statistics and Type I/III/IV tables, then its CONTRAST, ESTIMATE and TEST tables (`statements`),
    then its solution; after every response the LS-means and the MEANS statement's tables (`means`)."""
    def dep(t: OdsTable) -> Any:
        return t.rows[0][0] if t.rows and t.columns and t.columns[0].name == "Dependent" else None
    head = [t for t in tables if dep(t) is None]
    out = list(head)
    lsmeans = [t for t in tables if t.name == "LSMeans"]
    for y in dict.fromkeys(dep(t) for t in tables if dep(t) is not None):
        own = [t for t in tables if dep(t) == y and t.name != "LSMeans"]
        fit = [t for t in own if t.name != "ParameterEstimates"]
        out += fit + [t for t in statements if dep(t) == y] + [t for t in own if t.name == "ParameterEstimates"]
    placed = {id(t) for t in out}
    return out + [t for t in statements if id(t) not in placed] + lsmeans + means


def glm_tables(r: Any, classes: list[str], solution: bool = False) -> list[OdsTable]:
    """GLM's tables; the solution (ParameterEstimates) with SOLUTION or when no CLASS variable is in the model
    (SAS/STAT GLM, MODEL statement, SOLUTION: "displayed by default when your model involves no classification
    variables")."""
    p = "GLM"
    levels = r.stats.get("class_levels") or {}
    deps = list(dict.fromkeys(row[0] for row in r.rows))
    first = r.stats[deps[0]]
    out = ([_class_levels(p, levels)] if levels else []) + [
        _nobs(p, first["n"] + first["n_missing"], first["n"])]
    dep_col = Col("Dependent", type="char", hidden=True)
    for y in deps:
        st = r.stats[y]
        ms = st["ssm"] / st["df_model"] if st["df_model"] else None
        d_ss = sig10([st["ssm"], st["sse"], st["sst"]])          # the Mean Square column shares it
        out.append(_t(p, "OverallANOVA", f"Dependent Variable: {y}", [
            dep_col, Col("Source", type="char"), Col("DF", fmt="int"), Col("SS", "Sum of Squares", fmt=d_ss),
            Col("MS", "Mean Square", fmt=d_ss), Col("FValue", "F Value", fmt="d2"),
            Col("ProbF", "Pr > F", fmt="p")], [
            [y, "Model", st["df_model"], st["ssm"], ms, st["f_value"], st["prob_f"]],
            [y, "Error", st["df_error"], st["sse"], st["mse"], None, None],
            [y, "Corrected Total", st["df_model"] + st["df_error"], st["sst"], None, None, None]]))
        out.append(_t(p, "FitStatistics", "", [
            dep_col, Col("RSquare", "R-Square", fmt="d6"), Col("CV", "Coeff Var", fmt="d6"),
            Col("RootMSE", "Root MSE", fmt="d6"), Col("DepMean", f"{y} Mean", fmt="best8")],
            [[y, st["rsquare"], st["coeff_var"], st["rmse"], st["dep_mean"]]]))
        for key, kind, label in (("type1", 1, "Type I SS"), ("type3", 3, "Type III SS")):
            if st[key]:
                d_ss = sig10([row[2] for row in st[key]])
                out.append(_t(p, "ModelANOVA", "", [
                    dep_col, Col("HypothesisType", fmt="int", hidden=True), Col("Source", type="char"),
                    Col("DF", fmt="int"), Col("SS", label, fmt=d_ss), Col("MS", "Mean Square", fmt=d_ss),
                    Col("FValue", "F Value", fmt="d2"), Col("ProbF", "Pr > F", fmt="p")],
                    [[y, kind, *row] for row in st[key]]))
        # an aliased parameter (set to 0, 'B'): SAS prints '.' for its standard error, t and p (missing values)
        est = [[y, row[1], row[2], 1.0 if row[3] == "B" else 0.0,
                *(float("nan") if v is None and row[3] == "B" else v for v in row[4:])]
               for row in r.rows if row[0] == y]
        if solution or not levels:
            out.append(_t(p, "ParameterEstimates", "", [
                dep_col, Col("Parameter", type="char"), Col("Estimate", fmt=sig10([e[2] for e in est])),
                Col("Biased", "", fmt="b"), Col("StdErr", "Standard Error", fmt=sig10([e[4] for e in est])),
                Col("tValue", "t Value", fmt="d2"),
                Col("Probt", "Pr > |t|", fmt="p")], est))
        for effect, rows in st["lsmeans"].items():
            names = [v for v in effect.replace("*", " ").split()]
            out.append(_t(p, "LSMeans", "Least Squares Means", [
                Col("Effect", type="char", hidden=True), dep_col, *[Col(n, type="char") for n in names],
                Col("LSMean", f"{y} LSMEAN", fmt="d8"), Col("StdErr", "Standard Error", fmt="d8"),
                Col("Probt", "Pr > |t|", fmt="p")],
                [[effect, y, *[str(v) for v in row[:len(names)]], row[len(names)], row[len(names) + 1],
                  row[len(names) + 3]] for row in rows]))
    return out


# ------------------------------------------------------------------------------------------ GENMOD
def genmod_tables(r: Any, classes: list[str]) -> list[OdsTable]:
    st, p = r.stats, "GENMOD"
    if "deviance" not in st:                     # a fit of another shape (REPEATED/GEE): its own listing
        return []
    levels = st.get("class_levels") or {}
    per = (lambda v: v / st["df"] if st["df"] else None)
    fit = [["Deviance", st["df"], st["deviance"], st["deviance_df"]],
           ["Scaled Deviance", st["df"], st["scaled_deviance"], per(st["scaled_deviance"])],
           ["Pearson Chi-Square", st["df"], st["pearson_chisq"], st["pearson_df"]],
           ["Scaled Pearson X2", st["df"], st["scaled_pearson"], per(st["scaled_pearson"])],
           ["Log Likelihood", None, st.get("loglik_kernel", st["loglik"]), None], ["Full Log Likelihood", None, st["loglik"], None],
           ["AIC (smaller is better)", None, st["aic"], None], ["AICC (smaller is better)", None, st["aicc"], None],
           ["BIC (smaller is better)", None, st["bic"], None]]
    cols = [Col("Parameter", type="char")] + ([Col("Level1", "", "char")] if classes else [])
    cols += [Col("DF", fmt="int"), Col("Estimate", fmt="d4"), Col("StdErr", "Standard Error", fmt="d4"),
             Col("LowerWaldCL", "Wald 95% Lower", fmt="d4"), Col("UpperWaldCL", "Wald 95% Upper", fmt="d4"),
             Col("ChiSq", "Wald Chi-Square", fmt="d2"), Col("ProbChiSq", "Pr > ChiSq", fmt="p")]
    rows = [[*(parameter_level(x[0]) if classes else (x[0],)), *x[1:]] for x in r.rows]
    return [*genmod_head(st), _nobs(p, st["n"] + st["n_missing"], st["n"])] + (
        [_class_levels(p, levels)] if levels else []) + genmod_response(st) + [
        _t(p, "ModelFit", "Criteria For Assessing Goodness Of Fit", [
            Col("Criterion", type="char"), Col("DF", fmt="int"), Col("Value", fmt="d4"),
            Col("ValueDF", "Value/DF", fmt="d4")], fit),
        _t(p, "ConvergenceStatus", "", [Col("Reason", "", "char")], [["Algorithm converged."]], headings=False),
        _t(p, "ParameterEstimates", "Analysis Of Maximum Likelihood Parameter Estimates", cols, rows)]


def genmod_head(st: dict) -> list[OdsTable]:
    """GENMOD's Model Information (ODS ModelInfo): data set, distribution, link, dependent variable."""
    from statgrid.procs.gee_listing import DIST_NAMES, LINK_NAMES
    dep = st.get("response", "")
    if st.get("trials_var"):
        dep = f"{dep} / {st['trials_var']}"
    pairs = ([["Data Set", st["data_label"]]] if st.get("data_label") else []) + [
        ["Distribution", DIST_NAMES.get(st.get("dist"), str(st.get("dist")))],
        ["Link Function", LINK_NAMES.get(st.get("link"), str(st.get("link")))], ["Dependent Variable", dep]]
    return [_t("GENMOD", "ModelInfo", "Model Information", [Col("Label1", "", "char"), Col("cValue1", "", "char")],
               pairs, headings=False)]


def genmod_response(st: dict) -> list[OdsTable]:
    """Response Profile of a 0/1 binomial response (ODS ResponseProfile) with SAS's line on the level modelled:
    the levels ascending, or descending when the higher one is modelled."""
    counts = st.get("response_counts")
    if not counts or not st.get("modeled"):
        return []
    dep, _, ev = str(st["modeled"]).partition(" = ")
    levels = sorted(counts, reverse=ev == "1")
    table = _t("GENMOD", "ResponseProfile", "Response Profile", [
        Col("OrderedValue", "Ordered Value", fmt="int"), Col("Value", dep, "char", right=True),
        Col("Count", "Total Frequency", fmt="int")],
        [[k + 1, _level_text(v), counts[v]] for k, v in enumerate(levels)])
    table.footer = [f"PROC GENMOD is modeling the probability that {dep}='{ev}'."]
    return [table]


# ------------------------------------------------------------------------------------------ MIXED
def _mixed_front(st: dict) -> list[OdsTable]:
    """SAS's Class Level Information and Dimensions (MIXED, "Displayed Output"): Covariance Parameters, Columns
    in X, Columns in Z (per Subject when a RANDOM statement has SUBJECT=), Subjects, Max Obs Per Subject (1 and
    every observation used without SUBJECT=: the engine's independent blocks are not SAS's subjects then)."""
    levels = {c: [_level_text(v) for v in vals] for c, vals in (st.get("class_levels") or {}).items()}
    out = [_class_levels("MIXED", levels)] if levels and not st.get("noclprint") else []
    if "columns_in_x" not in st:
        return out
    z = (["Columns in Z per Subject", st["columns_in_z_per_subject"]] if st.get("subject_effect") and st["columns_in_z"]
         else ["Columns in Z", st["columns_in_z"]])
    dims = [["Covariance Parameters", st["covariance_parameters"]], ["Columns in X", st["columns_in_x"]], z,
            *([["Subjects", st["subjects"]], ["Max Obs Per Subject", st["max_obs_per_subject"]]]
              if st.get("subject_effect") else [["Subjects", 1], ["Max Obs Per Subject", st["n_used"]]])]
    out.append(_t("MIXED", "Dimensions", "Dimensions", [Col("Descr", "", "char"), Col("Value", "", fmt="int")],
                  dims, headings=False))
    return out


def _mixed_info(st: dict) -> list[OdsTable]:
    """SAS's Model Information (ODS ModelInfo): data set, response, covariance structure, subject, estimation,
    residual variance, standard error and degrees-of-freedom methods."""
    if "structure" not in st:
        return []
    pairs = ([["Data Set", st["data_label"]]] if st.get("data_label") else []) + [
        ["Dependent Variable", st.get("dependent", "")], ["Covariance Structure", st["structure"]]]
    if st.get("subject_effect"):
        pairs.append(["Subject Effect", st["subject_effect"]])
    pairs += [["Estimation Method", st.get("method", "REML")], ["Residual Variance Method", "Profile"],
              ["Fixed Effects SE Method", st.get("se_method", "Model-Based")],
              ["Degrees of Freedom Method", st.get("ddfm", "")]]
    return [_t("MIXED", "ModelInfo", "Model Information", [Col("Descr", "", "char"), Col("Value", "", "char")],
               pairs, headings=False)]


def _mixed_iterations(st: dict) -> list[OdsTable]:
    """Iteration History (ODS IterHistory) and the convergence line (ConvergenceStatus), as SAS prints them after
    the Number of Observations; none for MIVQUE0 (no iterations)."""
    history = st.get("history") or []
    if not history:
        return []
    conv = _t("MIXED", "ConvergenceStatus", "", [Col("Reason", "", "char")], [["Convergence criteria met."]],
              headings=False)
    if st.get("noitprint"):                     # NOITPRINT: no Iteration History; the convergence line stays
        return [conv]
    label = "-2 Log Like" if str(st.get("method", "")).upper() == "ML" else "-2 Res Log Like"
    hist = _t("MIXED", "IterHistory", "Iteration History", [
        Col("Iteration", fmt="int"), Col("Evaluations", fmt="int"), Col("Objective", label, fmt="d8"),
        Col("Criterion", fmt="best8")],
        [[h["Iteration"], h["Evaluations"], h["Objective"],
          None if isinstance(h["Criterion"], float) and math.isnan(h["Criterion"]) else h["Criterion"]]
         for h in history])
    return [hist, conv]


def mixed_tables(r: Any, classes: list[str], solution: bool = True) -> list[OdsTable]:
    """MIXED's tables; Solution for Fixed Effects only with MODEL / SOLUTION (SAS/STAT MIXED, MODEL statement)."""
    st, p = r.stats, "MIXED"
    show_subject = any(c["Subject"] for c in st["covparms"])
    cp_cols = [Col("CovParm", "Cov Parm", "char")] + ([Col("Subject", type="char")] if show_subject else [])
    test = bool(st["covparms"]) and "StdErr" in st["covparms"][0]          # COVTEST
    cp_cols += [Col("Estimate", fmt="d4")] + ([Col("StdErr", "Standard Error", fmt="d4"), Col("ZValue", "Z Value", fmt="d2"),
                                             Col("ProbZ", "Pr Z", fmt="p")] if test else [])
    cp_rows = [[c["CovParm"], *([c["Subject"]] if show_subject else []), c["Estimate"],
                *([c["StdErr"], c["ZValue"], c["ProbZ"]] if test else [])] for c in st["covparms"]]
    sol_cols = [Col(c, type="char") for c in r.columns[:r.columns.index("Estimate")]] + [
        Col("Estimate", fmt="d4"), Col("StdErr", "Standard Error", fmt="d4"), Col("DF", fmt="best"),
        Col("tValue", "t Value", fmt="d2"), Col("Probt", "Pr > |t|", fmt="p")]
    out = _mixed_info(st) + _mixed_front(st) + [_t(p, "NObs", "", [Col("Label", "", "char"), Col("N", "", fmt="int")],
              [["Number of Observations Read", st["n_read"]], ["Number of Observations Used", st["n_used"]],
               ["Number of Observations Not Used", st["n_read"] - st["n_used"]]], headings=False),
           *_mixed_iterations(st),
           _t(p, "CovParms", "Covariance Parameter Estimates", cp_cols, cp_rows),
           _t(p, "FitStatistics", "Fit Statistics", [Col("Descr", "", "char"), Col("Value", "", fmt="d1")],
              [[k if i == 0 else f"{k} (Smaller is Better)", v] for i, (k, v) in enumerate(st["fit"].items())],
              headings=False)]
    if solution:
        out.append(_t(p, "SolutionF", "Solution for Fixed Effects", sol_cols,
                      [[*row[:len(sol_cols) - 5], *row[len(sol_cols) - 5:]] for row in r.rows]))
    if st["type3"]:
        out.append(_t(p, "Tests3", "Type 3 Tests of Fixed Effects", [
            Col("Effect", type="char"), Col("NumDF", "Num DF", fmt="best"), Col("DenDF", "Den DF", fmt="best"),
            Col("FValue", "F Value", fmt="d2"), Col("ProbF", "Pr > F", fmt="p")],
            [[t["Effect"], t["NumDF"], t["DenDF"], t["FValue"], t["ProbF"]] for t in st["type3"]]))
    return out
