"""PROC HPMIXED in SAS programs: linear mixed models on statgrid's MIXED engine (statgrid.procs.mixed —
REML/ML, checked against R), with HPMIXED's statements and defaults (SAS/STAT User's Guide, "The HPMIXED
Procedure"; the EFFECT statement in "Shared Concepts and Topics").

    PROC HPMIXED DATA= METHOD=REML|ML NOPRINT NOCLPRINT NOITPRINT;
      CLASS vars;  BY vars;  WHERE expr;  ID vars (accepted: it names OUTPUT's copies, and OUTPUT is not built);
      EFFECT name = COLLECTION(var-list </ DETAILS>);
      MODEL y = effects </ SOLUTION|S DDFM=RESIDUAL|NONE>;
      RANDOM effects </ SUBJECT= TYPE=VC|UN>;   REPEATED </ SUBJECT= TYPE=CS>;
      NLOPTIONS MAXITER= (the rest of the optimizer's options are accepted and noted: statsmodels optimises);

What differs from PROC MIXED here is HPMIXED's: the denominator DF are the residual DF n − rank(X)
(HPMIXED's Model Information says "Degrees of Freedom Method: Residual"; DDFM=NONE gives infinite DF, z and
chi-square/NumDF p-values), the tests table is "Type III Tests of Fixed Effects", and collection effects.

A collection effect (SAS: "a set of variables that are treated as a single effect with multiple degrees of
freedom"; its design columns are its constituents' columns, in order) is fitted as its constituents side by
side — the same column space, so the same estimates — and tested as one effect: the Wald F of all its
estimable columns at once, F = bᵀC⁻¹b / rank. That is the Type III hypothesis when no other MODEL effect holds
a constituent, which is required here (an ERROR otherwise), as is using a collection only as a main effect of
MODEL (not crossed, nested or in RANDOM).
"""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs.design import used_class_levels
from statgrid.sas.lexer import NAME
from statgrid.sas.procs.common import DATASET, FLAG, VALUE, by_list, where_statement
from statgrid.sas.procs.step import ByInput, begin, data_input, each_statement, fit_errors, stmt_error as _err
from statgrid.sas.procs.models import _model, _options_after_slash

TEMP = "_sghpmixed_group"
PROC_OPTIONS = {"DATA": DATASET, "METHOD": VALUE, "NOPRINT": FLAG, "NOCLPRINT": FLAG, "NOITPRINT": FLAG,
                "NOINFO": FLAG, "ORDER": VALUE, "PLOTS": VALUE}
MODEL_OPTIONS = ("SOLUTION", "S", "DDFM")
UNSUPPORTED = ("TEST", "CONTRAST", "ESTIMATE", "LSMEANS", "OUTPUT", "PARMS", "WEIGHT")
VALID = "CLASS, EFFECT, MODEL, RANDOM, REPEATED, NLOPTIONS, BY, WHERE, ID"


def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, PROC_OPTIONS, "HPMIXED")
    src, cols = data_input(program, opts, first)
    spec = _statements(rest, src, first)
    inp = ByInput(program, first, src, cols, spec["by"])
    for key, data in inp.groups(TEMP, by_line=True):
        with fit_errors(first, "HPMIXED", keep_sas=True):
            fit = fit_hpmixed(program.session, data, spec, opts, src.name)
        if not opts.get("NOPRINT"):
            program.log.listing(listing(fit, spec, opts))
            _publish(program, fit, inp.pairs(key))


def _publish(program: Any, fit: dict, by: list) -> None:
    """HPMIXED's ODS tables for ODS OUTPUT (ParameterEstimates, CovParms, Tests3); the listing above is the
    PROC's own text, so they are published without being shown again."""
    from statgrid.sas.ods import OdsColumn as Col, OdsTable, publish_only

    sol = fit["solution"]
    kinds = {"Estimate": "d4", "StdErr": "d4", "DF": "best", "tValue": "d2", "Probt": "p"}
    cols = [Col(c, type="num" if c in kinds else "char", fmt=kinds.get(c, "text")) for c in sol["columns"]]
    x = fit["result"].stats
    tables = [OdsTable("ParameterEstimates", "Solution for Fixed Effects", cols, [list(r) for r in sol["rows"]],
                       "HPMixed")]
    covparms = x.get("covparms") or []
    if covparms:
        tables.append(OdsTable("CovParms", "Covariance Parameter Estimates",
                               [Col("CovParm", type="char"), Col("Subject", type="char"), Col("Estimate", fmt="d4")],
                               [[c["CovParm"], c.get("Subject", ""), c["Estimate"]] for c in covparms], "HPMixed"))
    if fit["tests"]:
        tables.append(OdsTable("Tests3", "Type III Tests of Fixed Effects",
                               [Col("Effect", type="char"), Col("NumDF", fmt="int"), Col("DenDF", fmt="best"),
                                Col("FValue", fmt="d2"), Col("ProbF", fmt="p")],
                               [[t["Effect"], t["NumDF"], t["DenDF"], t["FValue"], t["ProbF"]] for t in fit["tests"]],
                               "HPMixed"))
    publish_only(program, tables, by)


# ---------------------------------------------------------------------------------------------- statements
def _statements(rest: list, src, first) -> dict:
    spec: dict[str, Any] = {"class": [], "model": None, "by": [], "random": None, "random_opts": {},
                            "repeated": None, "repeated_opts": {}, "collections": {}, "nloptions": {}}
    for stmt, kw, c in each_statement(rest):
        if kw == "CLASS":
            spec["class"] += _class_names(c)
        elif kw == "EFFECT":
            name, members = _effect(c, stmt)
            spec["collections"][name.upper()] = (name, members)
        elif kw == "MODEL":
            if spec["model"] is not None:
                raise _err(stmt, "PROC HPMIXED takes one MODEL statement", "MODEL")
            spec["model"] = _model(c)
        elif kw in ("RANDOM", "REPEATED"):
            key = kw.lower()
            if spec[key] is not None:
                raise _err(stmt, f"statgrid's PROC HPMIXED takes one {kw} statement (one block of random "
                                 "effects per subject)", kw, f"one {kw} statement")
            words = []
            while not c.at_end() and not c.at("/"):
                words.append(c.next().text)
            spec[key] = " ".join(words) if (words or kw == "RANDOM") else True
            spec[key + "_opts"] = _options_after_slash(c) if c.accept("/") else {}
        elif kw == "NLOPTIONS":
            spec["nloptions"] = _options_after_slash(c)
        elif kw == "BY":
            spec["by"] = by_list(c)
        elif kw == "WHERE":
            where_statement(c, src)
        elif kw in ("ID", "FORMAT", "LABEL", "ATTRIB", "ODS", "PERFORMANCE"):
            continue
        elif kw in UNSUPPORTED:
            raise _err(stmt, f"The {kw} statement of PROC HPMIXED is not supported by statgrid yet", kw, VALID)
        else:
            raise _err(stmt, f"Statement {kw} is not valid or it is used out of proper order in PROC HPMIXED",
                       kw, VALID)
    if spec["model"] is None:
        raise _err(first, "No MODEL statement was given to PROC HPMIXED", "HPMIXED", "MODEL y = effects;")
    _check_model_options(spec, first)
    return spec


def _class_names(c) -> list[str]:
    names = []
    while not c.at_end() and not c.at("/"):
        t = c.next()
        if t.kind == NAME:
            names.append(t.text)
        elif t.text == "(":
            while not c.accept(")"):
                c.next()                     # (REF=…): the GLM parameterization has no reference level
    return names


def _effect(c, stmt) -> tuple[str, list[str]]:
    """EFFECT name = COLLECTION(a b c </ DETAILS>) → (name, [a, b, c])."""
    name = c.expect_name("the effect's name")
    c.expect("=", expected="= after the effect's name")
    kind = c.expect_name("an effect type such as COLLECTION")
    if kind.upper() != "COLLECTION":
        raise _err(stmt, f"EFFECT type {kind.upper()} is not supported by statgrid's PROC HPMIXED", kind,
                   "COLLECTION(variables)")
    c.expect("(", expected="( after COLLECTION")
    members = []
    while not c.at_end() and not c.at(")", "/"):
        t = c.next()
        if t.kind != NAME:
            raise c.error("Syntax error in the COLLECTION's variables", "a variable name", t)
        members.append(t.text)
    if c.accept("/"):
        while not c.at_end() and not c.at(")"):
            opt = c.next()
            if opt.upper != "DETAILS":
                raise c.error(f"The option {opt.text} is not valid in COLLECTION( / …)", "DETAILS", opt)
    c.expect(")", expected=") closing the COLLECTION")
    if not members:
        raise _err(stmt, f"COLLECTION effect {name} names no variable", name, "COLLECTION(a b c)")
    return name, members


def _check_model_options(spec: dict, first) -> None:
    _, effects, _, mopts = spec["model"]
    for k in mopts:
        if k not in MODEL_OPTIONS:
            raise _err(first, f"The MODEL option {k} is not supported by statgrid's PROC HPMIXED", k,
                       "SOLUTION, DDFM=RESIDUAL|NONE")
    ddfm = str(mopts.get("DDFM", "RESIDUAL")).upper()
    if ddfm not in ("RESIDUAL", "RES", "NONE"):
        raise _err(first, f"DDFM={ddfm} is not supported by statgrid's PROC HPMIXED", ddfm, "DDFM=RESIDUAL or NONE")


# ---------------------------------------------------------------------------------------------- the fit
def expand_collections(effects: str, collections: dict[str, tuple[str, list[str]]]) -> tuple[str, dict[str, str]]:
    """MODEL effects with each collection replaced by its constituents; and constituent (upper) → collection.
    A collection inside a crossing or nesting, a constituent also written on its own or in another effect:
    an error (the collection's joint test would not be SAS's Type III test)."""
    terms = effects.split()
    out, owner = [], {}
    for term in terms:
        hit = collections.get(term.upper())
        if hit:
            name, members = hit
            for m in members:
                if m.upper() in owner:
                    raise StatgridError(f"variable {m} is in two collection effects; a variable can be in one.")
                owner[m.upper()] = name
            out += members
            continue
        for part in re.split(r"[*|()@\s]+", term):
            if part.upper() in collections:
                raise StatgridError(f"collection effect {part} is used in {term!r}; statgrid's HPMIXED takes a "
                                    "collection as a main effect of MODEL only (write its variables instead).")
        out.append(term)
    for term in out:
        if term.upper() in owner:
            continue
        for part in re.split(r"[*|()@\s]+", term):
            if part.upper() in owner:
                raise StatgridError(f"variable {part} of collection {owner[part.upper()]} is also in effect {term!r}; "
                                    "a collection's variables must not appear in other MODEL effects.")
    return " ".join(out), owner


def fit_hpmixed(s, data: str, spec: dict, opts, dsname: str) -> dict:
    """The MIXED engine's fit, recast as HPMIXED reports it: {result, covparms, fit, solution, tests, df,
    ddfm, info}. The solution rows' Effect is the collection's name for its constituents."""
    from statgrid.procs.mixed import mixed

    dep, effects, _, mopts = spec["model"]
    effects, owner = expand_collections(effects, spec["collections"])
    ropts, popts = spec["random_opts"], spec["repeated_opts"]
    subject = ropts.get("SUBJECT", ropts.get("SUB")) or popts.get("SUBJECT", popts.get("SUB"))
    maxiter = int(float(spec["nloptions"].get("MAXITER", 200)))
    fn = getattr(mixed, "__wrapped__", mixed)
    r = fn(s, data, f"{dep} = {effects}", class_=spec["class"] or None, random=spec["random"] or None,
           subject=subject, repeated=spec["repeated"], type=str(popts.get("TYPE", "cs")).lower(),
           method=str(opts.get("METHOD", "REML")).lower(), maxiter=maxiter, print=False,
           random_type=str(ropts.get("TYPE", "vc")).lower())
    ddfm = "None" if str(mopts.get("DDFM", "RESIDUAL")).upper() == "NONE" else "Residual"
    kept = [i for i, row in enumerate(r.rows) if row[r.columns.index("StdErr")] is not None]
    df = math.inf if ddfm == "None" else float(r.stats["n_used"] - len(kept))
    solution = _solution(r, owner, df)
    tests = _tests(r, owner, kept, df)
    r.stats["class_levels"] = used_class_levels(s, data, dep, effects, spec["class"], subject)
    return {"result": r, "solution": solution, "tests": tests, "df": df, "ddfm": ddfm, "dataset": dsname,
            "owner": owner, "subject": subject, "spec": spec}


def _p_t(t: float, df: float) -> float | None:
    from scipy import stats
    if t is None or not math.isfinite(t):
        return None
    return float(2 * (stats.norm.sf(abs(t)) if math.isinf(df) else stats.t.sf(abs(t), df)))


def _p_f(f: float, num: int, df: float) -> float | None:
    from scipy import stats
    if f is None or not math.isfinite(f) or num <= 0:
        return None
    return float(stats.chi2.sf(f * num, num) if math.isinf(df) else stats.f.sf(f, num, df))


def _solution(r, owner: dict[str, str], df: float) -> dict:
    cols = r.columns
    ie, ise, it = cols.index("Effect"), cols.index("StdErr"), cols.index("tValue")
    rows = []
    for row in r.rows:
        row = list(row)
        row[ie] = owner.get(str(row[ie]).upper(), row[ie])
        if row[ise] is not None:
            row[cols.index("DF")] = df
            row[cols.index("Probt")] = _p_t(row[it], df)
        rows.append(row)
    return {"columns": cols, "rows": rows}


def _tests(r, owner: dict[str, str], kept: list[int], df: float) -> list[dict]:
    """Type III tests: the engine's for ordinary effects (with HPMIXED's DF), one joint Wald F per collection."""
    out, done = [], set()
    cov = np.asarray(r.stats["cov_beta"], dtype=float)
    ie = r.columns.index("Effect")
    est = r.columns.index("Estimate")
    for t in r.stats["type3"]:
        name = owner.get(t["Effect"].upper())
        if name is None:
            out.append({"Effect": t["Effect"], "NumDF": t["NumDF"], "DenDF": df, "FValue": t["FValue"],
                        "ProbF": _p_f(t["FValue"], t["NumDF"], df)})
            continue
        if name in done:
            continue
        done.add(name)
        idx = [k for k, i in enumerate(kept) if owner.get(str(r.rows[i][ie]).upper()) == name]
        b = np.array([r.rows[kept[k]][est] for k in idx], dtype=float)
        c = cov[np.ix_(idx, idx)]
        rank = int(np.linalg.matrix_rank(c))
        f = float(b @ np.linalg.pinv(c) @ b) / rank if rank else float("nan")
        out.append({"Effect": name, "NumDF": rank, "DenDF": df, "FValue": f, "ProbF": _p_f(f, rank, df)})
    return out


# ---------------------------------------------------------------------------------------------- listing
def listing(fit: dict, spec: dict, opts) -> str:
    from statgrid.procs._base import render_table
    from statgrid.procs._mixed_setup import _kv

    r = fit["result"]
    x = r.stats
    rep = spec["repeated"] is not None
    q = x["columns_in_z_per_subject"]
    structure = ("Compound Symmetry" if rep else "Variance Components" if not q or str(
        spec["random_opts"].get("TYPE", "VC")).upper() == "VC" or q == 1 else "Unstructured")
    info = [["Data Set", fit["dataset"]], ["Dependent Variable", x["dependent"]], ["Covariance Structure", structure]]
    if fit["subject"]:
        info.append(["Subject Effect", fit["subject"]])
    info += [["Estimation Method", x["method"]], ["Residual Variance Method", "Profile"],
             ["Fixed Effects SE Method", "Model-Based"], ["Degrees of Freedom Method", fit["ddfm"]]]
    parts = ["The HPMIXED Procedure", _kv(info, title="Model Information")]
    if spec["class"] and not opts.get("NOCLPRINT"):
        parts.append(_class_levels(r, spec))
    dims = [["Covariance Parameters", x["covariance_parameters"]], ["Columns in X", x["columns_in_x"]],
            ["Columns in Z per Subject", q], ["Subjects", x["subjects"]],
            ["Max Obs per Subject", x["max_obs_per_subject"]]]
    parts.append(_kv(dims, title="Dimensions"))
    parts.append(_kv([["Number of Observations Read", x["n_read"]], ["Number of Observations Used", x["n_used"]],
                      ["Number of Observations Not Used", x["n_read"] - x["n_used"]]],
                     title="Number of Observations"))
    parts.append("Convergence criterion (GCONV=1E-8) satisfied.\n")
    parts += [f"NOTE: {nt}\n" for nt in x["notes"]]
    subj = any(c["Subject"] for c in x["covparms"])
    parts.append(render_table(["Cov Parm", *(["Subject"] if subj else []), "Estimate"],
                              [[c["CovParm"], *([c["Subject"]] if subj else []), c["Estimate"]]
                               for c in x["covparms"]], title="Covariance Parameter Estimates"))
    first_fit = next(iter(x["fit"]))
    parts.append(_kv([[k if k == first_fit else f"{k} (Smaller is Better)", v] for k, v in x["fit"].items()],
                     title="Fit Statistics"))
    mopts = spec["model"][3]
    if mopts.get("SOLUTION") or mopts.get("S"):
        sol = fit["solution"]
        header = [{"StdErr": "Standard Error", "tValue": "t Value", "Probt": "Pr > |t|"}.get(c, c)
                  for c in sol["columns"]]
        rows = [[("Infty" if isinstance(v, float) and math.isinf(v) else v) for v in row] for row in sol["rows"]]
        parts.append(render_table(header, rows, title="Solution for Fixed Effects"))
    if fit["tests"]:
        rows = [[t["Effect"], t["NumDF"], "Infty" if math.isinf(t["DenDF"]) else t["DenDF"], t["FValue"], t["ProbF"]]
                for t in fit["tests"]]
        parts.append(render_table(["Effect", "Num DF", "Den DF", "F Value", "Pr > F"], rows,
                                  title="Type III Tests of Fixed Effects"))
    return "\n".join(parts)


def _class_levels(r, spec: dict) -> str:
    from statgrid.procs._base import format_value, render_table
    levels = r.stats.get("class_levels")
    if levels is None:
        return ""
    rows = [[v, len(levels[v]), " ".join(format_value(x) for x in levels[v][:30])] for v in spec["class"]
            if v in levels]
    return render_table(["Class", "Levels", "Values"], rows, title="Class Level Information")
