"""The listing of a GEE fit in PROC GENMOD's layout (SAS/STAT User's Guide, GENMOD, "Displayed Output"):
Model Information, Class Level Information, the initial GLM fit (Criteria For Assessing Goodness Of
Fit, Analysis Of Initial Parameter Estimates), GEE Model Information, the working correlation (CORRW;
the exchangeable correlation always), and Analysis Of GEE Parameter Estimates with empirical (and, for
MODELSE, model-based) standard errors, GEE Fit Criteria (QIC, QICu) before them, and after them the tests
asked for (gee_tests.py): Score (or Wald) Statistics For Type 3 GEE Analysis, Contrast Results for GEE
Analysis and Contrast Estimate Results. Numbers in SAS's formats: estimates and limits 4 decimals,
Z and chi-squares 2, p-values PVALUE6.4 (<.0001).
"""
from __future__ import annotations

import math
from typing import Sequence

from statgrid.procs._base import ResultTable, format_value

DIST_NAMES = {"normal": "Normal", "poisson": "Poisson", "binomial": "Binomial", "gamma": "Gamma",
              "negbin": "Negative Binomial"}
LINK_NAMES = {"identity": "Identity", "log": "Log", "logit": "Logit", "probit": "Probit", "cloglog": "CLL",
              "inverse": "Power(-1)"}


def num(v, decimals: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "."
    return f"{v:.{decimals}f}"


def pvalue(p) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "."
    return "<.0001" if p < 0.0001 else f"{p:.4f}"


def table(title: Sequence[str], header: Sequence[Sequence[str]], rows: Sequence[Sequence[str]],
          left: int = 1, left_cols: Sequence[int] = ()) -> str:
    """Columns right-aligned except the first `left` and `left_cols`; `header` lines are lists of headings."""
    ncol = max(len(r) for r in [*rows, *header])
    widths = [max([len(r[i]) for r in [*rows, *header] if i < len(r)] or [0]) for i in range(ncol)]

    def line(cells: Sequence[str]) -> str:
        out = [c.ljust(widths[i]) if i < left or i in left_cols else c.rjust(widths[i]) for i, c in enumerate(cells)]
        return "  ".join(out).rstrip()
    return "\n".join([*title, "", *(line(h) for h in header), *(line(r) for r in rows)]) + "\n"


def pairs(title: str, items: Sequence[tuple[str, str]]) -> str:
    w = max(len(k) for k, _ in items)
    v = max(len(x) for _, x in items)
    return "\n".join([title, "", *(f"{k.ljust(w)}  {x.rjust(v)}" for k, x in items)]) + "\n"


MAX_LEVELS_SHOWN = 50      # Class Level Information lists at most this many values of a variable


def _values(v: list) -> str:
    shown = " ".join(format_value(x) for x in v[:MAX_LEVELS_SHOWN])
    return shown + (" ..." if len(v) > MAX_LEVELS_SHOWN else "")


def _initial(init: ResultTable, levels: dict, y: str, trials: str | None, data: str) -> list[str]:
    st = init.stats
    info = pairs("Model Information", [("Data Set", data), ("Distribution", DIST_NAMES[st["dist"]]),
                                       ("Link Function", LINK_NAMES.get(st["link"], st["link"])),
                                       ("Dependent Variable", f"{y}{' / ' + trials if trials else ''}")])
    counts = pairs("", [("Number of Observations Read", str(st["n"] + st["n_missing"])),
                        ("Number of Observations Used", str(st["n"]))]).lstrip("\n")
    out = ["The GENMOD Procedure\n", info, counts]
    if levels:
        out.append(table(["Class Level Information"], [["Class", "Levels", "Values"]],
                         [[c, str(len(v)), _values(v)] for c, v in levels.items()], left_cols=(2,)))
    counts = st.get("response_counts")
    if counts and st.get("modeled"):                 # a 0/1 response: SAS's Response Profile and the level modelled
        dep, _, ev = str(st["modeled"]).partition(" = ")
        order = sorted(counts, reverse=ev == "1")
        out.append(table(["Response Profile"], [["Ordered Value", dep, "Total Frequency"]],
                         [[str(k + 1), format_value(v), str(counts[v])] for k, v in enumerate(order)]))
        out.append(f"PROC GENMOD is modeling the probability that {dep}='{ev}'.\n")
    df = st["df"]
    crit = [["Deviance", str(df), num(st["deviance"]), num(st["deviance_df"])],
            ["Scaled Deviance", str(df), num(st["scaled_deviance"]), num(st["scaled_deviance"] / df if df else None)],
            ["Pearson Chi-Square", str(df), num(st["pearson_chisq"]), num(st["pearson_df"])],
            ["Scaled Pearson X2", str(df), num(st["scaled_pearson"]), num(st["scaled_pearson"] / df if df else None)],
            ["Full Log Likelihood", "", num(st["loglik"]), ""], ["AIC (smaller is better)", "", num(st["aic"]), ""],
            ["AICC (smaller is better)", "", num(st["aicc"]), ""], ["BIC (smaller is better)", "", num(st["bic"]), ""]]
    out.append(table(["Criteria For Assessing Goodness Of Fit"], [["Criterion", "DF", "Value", "Value/DF"]], crit))
    rows = []
    for nm, dfp, est, se, lo, hi, chi, pv in init.rows:
        if dfp == 0:                       # aliased (0) or a fixed scale: SAS prints the value as its limits
            se, lo, hi = 0.0, est, est
        rows.append([nm, str(dfp), num(est), num(se), num(lo), num(hi), num(chi, 2), pvalue(pv)])
    out.append(table(["Analysis Of Initial Parameter Estimates"],
                     [["", "", "", "Standard", "Wald 95% Confidence", "", "Wald", ""],
                      ["Parameter", "DF", "Estimate", "Error", "Limits", "", "Chi-Square", "Pr > ChiSq"]], rows))
    return out


def _gee_info(st: dict) -> str:
    items = [("Correlation Structure", {"ind": "Independent", "exch": "Exchangeable", "ar": "AR(1)",
                                        "un": "Unstructured"}[st["type"]])]
    if st["within"]:
        items.append(("Within-Subject Effect", f"{st['within']} ({st['within_levels']} levels)"))
    items += [("Subject Effect", f"{'*'.join(st['subject'])} ({st['subject_levels']} levels)"),
              ("Number of Clusters", str(st["clusters"])), ("Correlation Matrix Dimension", str(st["dim"])),
              ("Maximum Cluster Size", str(st["max_size"])), ("Minimum Cluster Size", str(st["min_size"]))]
    return pairs("GEE Model Information", items)


def _estimates(rows: list[list], subtitle: str) -> str:
    body = [[r[0], num(r[1]), num(r[2]), num(r[3]), num(r[4]), num(r[5], 2), pvalue(r[6])] for r in rows]
    return table(["Analysis Of GEE Parameter Estimates", subtitle],
                 [["", "", "Standard", "95% Confidence", "", "", ""],
                  ["Parameter", "Estimate", "Error", "Limits", "", "Z", "Pr > |Z|"]], body)


def _model_rows(t: ResultTable) -> list[list]:
    from scipy.special import ndtr
    se_k = list(t.stats["model_stderr"])
    out = []
    for r in t.rows:
        if r[5] is None:
            out.append(list(r))
            continue
        b, e = r[1], float(se_k.pop(0))
        z = b / e
        out.append([r[0], b, e, b - 1.959963984540054 * e, b + 1.959963984540054 * e, z, float(2 * ndtr(-abs(z)))])
    if t.stats["initial"].stats["dist"] in ("normal", "gamma"):
        out.append(["Scale", t.stats["scale"], None, None, None, None, None])
    return out


def listing(t: ResultTable, design, y: str, trials: str | None, data: str, corrw: bool, modelse: bool) -> str:
    st = t.stats
    out = _initial(st["initial"], st["class_levels"], y, trials, data)
    out += [_gee_info(st), "Algorithm converged.\n"]
    R = st["working_correlation"]
    if corrw:
        out.append(table(["Working Correlation Matrix"], [["", *(f"Col{j + 1}" for j in range(R.shape[0]))]],
                         [[f"Row{i + 1}", *(num(x) for x in R[i])] for i in range(R.shape[0])]))
    if st["type"] == "exch":
        out.append(pairs("Exchangeable Working Correlation", [("Correlation", num(st["alpha"], 4))]))
    if st.get("qic"):
        out.append(table(["GEE Fit Criteria"], [], [["QIC", num(st["qic"]["qic"])], ["QICu", num(st["qic"]["qicu"])]]))
    out.append(_estimates(t.rows, "Empirical Standard Error Estimates"))
    if modelse:
        out.append(_estimates(_model_rows(t), "Model-Based Standard Error Estimates"))
        if st["initial"].stats["dist"] in ("normal", "gamma"):
            out.append("NOTE: The scale parameter for GEE estimation was computed as the square root of the "
                       "normalized Pearson's chi-square.\n")
    return "\n".join(out + tests(st))


def type3_title(st: dict) -> str:
    return f"{'Wald' if st.get('type3_wald') else 'Score'} Statistics For Type 3 GEE Analysis"


def tests(st: dict) -> list[str]:
    """The Type 3, CONTRAST and ESTIMATE tables of the fit's stats (those it has)."""
    out = []
    if st.get("type3"):
        out.append(table([type3_title(st)], [["Source", "DF", "Chi-Square", "Pr > ChiSq"]],
                         [[r[0], num(r[1], 0), num(r[2], 2), pvalue(r[3])] for r in st["type3"]]))
    if st.get("contrasts"):
        out.append(table(["Contrast Results for GEE Analysis"], [["Contrast", "DF", "Chi-Square", "Pr > ChiSq",
                                                                  "Type"]],
                         [[r[0], num(r[1], 0), num(r[2], 2), pvalue(r[3]), r[4]] for r in st["contrasts"]],
                         left_cols=(4,)))
    if st.get("estimates"):
        rows = [[r[0], num(r[1]), num(r[2]), num(r[3]), num(r[4]), num(r[5]), num(r[6], 2), num(r[7]), num(r[8]),
                 num(r[9], 2), pvalue(r[10])] for r in st["estimates"]]
        out.append(table(["Contrast Estimate Results"],
                         [["", "Mean", "Mean", "", "L'Beta", "Standard", "", "L'Beta", "", "Chi-", ""],
                          ["Label", "Estimate", "Confidence Limits", "", "Estimate", "Error", "Alpha",
                           "Confidence Limits", "", "Square", "Pr > ChiSq"]], rows))
    return out
