"""The listing of PROC SURVEYLOGISTIC in SAS's layout (SAS/STAT User's Guide, SURVEYLOGISTIC, "Displayed
Output"): Model Information, Variance Estimation, observation and weight counts, Response Profile, the
modelled event, Class Level Information, convergence, Model Fit Statistics, and Analysis of Maximum
Likelihood Estimates with t tests on the design degrees of freedom (and SAS's NOTE giving them)."""
from __future__ import annotations

import math

from statgrid.procs._base import ResultTable, format_value
from statgrid.procs.gee_listing import num, pairs, pvalue, table


def listing(t: ResultTable, design, yname: str, data: str, weight, strata, cluster, vadjust: str) -> str:
    st = t.stats
    info = [("Data Set", data), ("Response Variable", yname), ("Number of Response Levels", "2")]
    if strata:
        info += [("Stratum Variable", " ".join(strata)), ("Number of Strata", str(st["strata"]))]
    if cluster:
        info += [("Cluster Variable", " ".join(cluster)), ("Number of Clusters", str(st["clusters"]))]
    if weight:
        info.append(("Weight Variable", weight))
    info += [("Model", "Binary Logit"), ("Optimization Technique", "Fisher's Scoring"),
             ("Variance Adjustment", "Degrees of Freedom (DF)" if vadjust == "df" else "None")]
    out = ["The SURVEYLOGISTIC Procedure\n", pairs("Model Information", info),
           pairs("Variance Estimation", [("Method", "Taylor Series"),
                                         ("Variance Adjustment", "Degrees of Freedom (DF)" if vadjust == "df"
                                          else "None")]),
           pairs("", [("Number of Observations Read", str(st["n_read"])),
                      ("Number of Observations Used", str(st["n"]))]
                 + ([("Sum of Weights Used", num(st["sum_weights"]))] if weight else [])).lstrip("\n")]
    prof = [[str(o), format_value(v), str(c), *([num(wt)] if weight else [])]
            for o, v, c, wt in st["response_profile"]]
    out.append(table(["Response Profile"], [["Ordered", "", "Total", *(["Total"] if weight else [])],
                                            ["Value", yname, "Frequency", *(["Weight"] if weight else [])]],
                     prof, left=0))
    out.append(f"Probability modeled is {yname}={format_value(st['event'])}.\n")
    if design.classes:
        out.append(table(["Class Level Information"], [["Class", "Value"]],
                         [[c, " ".join(format_value(v) for v in design.levels[c])] for c in design.classes]))
    out.append("Model Convergence Status\n\nConvergence criterion (GCONV=1E-8) satisfied.\n")
    out.append(table(["Model Fit Statistics"], [["", "Intercept", "Intercept and"], ["Criterion", "Only",
                                                                                    "Covariates"]],
                     [[c, num(a), num(b)] for c, a, b in st["fit"]]))
    rows = [[r[0], num(r[1]), num(r[2]), num(r[3], 2), pvalue(r[4])] for r in t.rows]
    out.append(table(["Analysis of Maximum Likelihood Estimates"],
                     [["", "", "Standard", "", ""], ["Parameter", "Estimate", "Error", "t Value", "Pr > |t|"]], rows))
    dfv = st["df"]
    shown = "infinite" if math.isinf(dfv) else format_value(int(dfv) if float(dfv).is_integer() else dfv)
    out.append(f"NOTE: The degrees of freedom for the t tests is {shown}.\n")
    return "\n".join(out)
