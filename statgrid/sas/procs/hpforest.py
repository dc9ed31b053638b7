"""PROC HPFOREST and PROC HP4SCORE in SAS programs, on statgrid's random forest (statgrid.procs.mining.forest,
scikit-learn) and its saved model (statgrid.procs.forest_model). The syntax is SAS Enterprise Miner's
(High-Performance Procedures reference):

    PROC HPFOREST DATA= SEED= MAXTREES= VARS_TO_TRY= LEAFSIZE= MAXDEPTH= NOPRINT;
      TARGET v </ LEVEL=BINARY|NOMINAL|INTERVAL>;
      INPUT vars </ LEVEL=INTERVAL|NOMINAL>;      (as many INPUT statements as wanted)
      ID vars;  SCORE OUT=ds;  SAVE FILE="path";  WHERE expr;  PERFORMANCE … (accepted);
    PROC HP4SCORE DATA=;  ID vars;  SCORE FILE="path" OUT=ds;

The target's level defaults to INTERVAL for a numeric target and NOMINAL for a character one; an input's to
INTERVAL (a character input is always NOMINAL). Defaults where SAS's and the engine's differ, and why:
MAXTREES=100 and LEAFSIZE=5, SAS's; MAXDEPTH= SAS's 20; VARS_TO_TRY= √(design columns), the engine's reading of
SAS's √(inputs) once nominal inputs are one-hot columns. The trees grow on bootstrap samples (with replacement,
scikit-learn's) where SAS draws 60 % without replacement (INBAGFRACTION=), so a forest is SAS's algorithm but
not SAS's trees; the Model Information table says so.

Listing: Model Information, Number of Observations, Fit Statistics (the whole forest: number of trees and
leaves, average square error and misclassification rate — or R-square — on the training rows and out of bag)
and Variable Importance (per input: the number of splitting rules on it, its impurity reduction — Gini for a
class target, squared error for an interval one — and the permutation importance on the training rows).
The ODS names are SAS's: ModelInfo, NObs, FitStatistics, VariableImportance.
HP4SCORE writes OUT= with the ID variables (every variable of DATA= without an ID statement) and the
predictions P_<target><level> and I_<target> (class target) or P_<target> (interval target).
"""
from __future__ import annotations

import math
from typing import Any

from statgrid.sas.lexer import STR
from statgrid.sas.parse.dsname import DatasetSpec, parse_dataset
from statgrid.sas.procs.common import DATASET, FLAG, VALUE, drop_member, var_names, where_statement
from statgrid.sas.procs.step import (begin, data_input, each_statement, fit_errors, stage_input, stmt_error as _err,
                                     whole_option)

TEMP = "_sgforest_input"
DEFAULTS = {"MAXTREES": 100, "LEAFSIZE": 5, "MAXDEPTH": 20}
FOREST_OPTIONS = {"DATA": DATASET, "SEED": VALUE, "MAXTREES": VALUE, "VARS_TO_TRY": VALUE, "LEAFSIZE": VALUE,
                  "MAXDEPTH": VALUE, "NOPRINT": FLAG}


def _whole(opts, key: str, stmt, low: int = 1) -> int | None:
    return whole_option(opts, key, stmt, low, shown=lambda v: f"{v:g}" if isinstance(v, float) else str(v))


def _level(c, stmt, allowed: tuple[str, ...]) -> str | None:
    """`/ LEVEL=x` at the end of TARGET or INPUT (None when absent)."""
    if not c.accept("/"):
        return None
    level = None
    while not c.at_end():
        k = c.next()
        c.expect("=", expected=f"= after {k.text}")
        v = c.next().text.upper()
        if k.upper != "LEVEL":
            raise _err(stmt, f"The option {k.text} is not supported in the {stmt.keyword} statement", k.text,
                       "LEVEL=")
        if v not in allowed:
            raise _err(stmt, f"LEVEL={v} is not valid in the {stmt.keyword} statement", v, "LEVEL=" + "|".join(allowed))
        level = v
    return level


def _path(c, stmt) -> str:
    """FILE="path" (a quoted path; a fileref is not taken)."""
    c.expect("=", expected="= after FILE")
    t = c.next()
    if t.kind != STR:
        raise _err(stmt, f"FILE={t.text}: statgrid takes the model file's path in quotes", t.text, 'FILE="path"')
    return t.value


# ------------------------------------------------------------------------------------------------ HPFOREST
def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, FOREST_OPTIONS, "HPFOREST")
    src, cols = data_input(program, opts, first)
    spec = _forest_statements(rest, src, cols, first, program)
    from statgrid.procs import forest_model
    from statgrid.procs.mining import forest
    fn = getattr(forest, "__wrapped__", forest)
    kind = "regression" if spec["level"] == "INTERVAL" else "classification"
    args = {"ntrees": _whole(opts, "MAXTREES", first) or DEFAULTS["MAXTREES"],
            "min_leaf": _whole(opts, "LEAFSIZE", first) or DEFAULTS["LEAFSIZE"],
            "max_depth": _whole(opts, "MAXDEPTH", first) or DEFAULTS["MAXDEPTH"],
            "seed": _whole(opts, "SEED", first, 0) or 0, "vars_to_try": _whole(opts, "VARS_TO_TRY", first)}
    data = stage_input(program, src, TEMP)
    s = program.session
    try:
        with fit_errors(first, "HPFOREST", keep_sas=True):
            r = fn(s, data, spec["target"], spec["inputs"], kind=kind, class_=spec["nominal"] or None, print=False,
                   **args)
            model = forest_model.from_fit(s, data, r)
            if spec["save"]:
                forest_model.save(model, spec["save"])
                program.log.note(f'The forest model was saved to the file "{spec["save"]}".')
            if spec["score_out"] is not None:
                _score(program, data, model, spec["score_out"], spec["id"])
    finally:
        drop_member(program, DatasetSpec("WORK", TEMP.upper()))
    if not opts.get("NOPRINT"):
        program.log.listing(forest_listing(r, args, spec, src.name))


def _forest_statements(rest, src, cols, first, program) -> dict:
    spec: dict[str, Any] = {"target": None, "level": None, "inputs": [], "nominal": [], "id": None, "save": None,
                            "score_out": None}
    types = {c.name.upper(): c.type for c in cols}
    for stmt, kw, c in each_statement(rest):
        if kw == "TARGET":
            spec["target"] = c.expect_name("the target variable")
            spec["level"] = _level(c, stmt, ("BINARY", "NOMINAL", "INTERVAL"))
        elif kw == "INPUT":
            names = []
            while not c.at_end() and not c.at("/"):
                names += var_names(c, cols)
            level = _level(c, stmt, ("INTERVAL", "NOMINAL", "BINARY", "ORDINAL")) or "INTERVAL"
            spec["inputs"] += names
            spec["nominal"] += [n for n in names if level != "INTERVAL" or types.get(n.upper()) == "char"]
        elif kw == "ID":
            spec["id"] = var_names(c, cols)
        elif kw == "SAVE":
            k = c.expect_name("FILE=")
            if k.upper() != "FILE":
                raise _err(stmt, f"The option {k} is not valid in the SAVE statement", k, 'FILE="path"')
            spec["save"] = _path(c, stmt)
        elif kw == "SCORE":
            k = c.expect_name("OUT=")
            if k.upper() != "OUT":
                raise _err(stmt, f"The option {k} is not valid in PROC HPFOREST's SCORE statement", k, "OUT=")
            c.expect("=")
            spec["score_out"] = parse_dataset(c, program)
        elif kw == "WHERE":
            where_statement(c, src)
        elif kw == "PERFORMANCE":
            continue
        elif kw in ("FREQ", "PARTITION", "TREATMENT"):
            raise _err(stmt, f"The {kw} statement of PROC HPFOREST is not supported by statgrid yet", kw,
                       "TARGET, INPUT, ID, SCORE, SAVE")
        else:
            raise _err(stmt, f"Statement {kw} is not valid or it is used out of proper order in PROC HPFOREST", kw,
                       "TARGET, INPUT, ID, SCORE, SAVE, WHERE, PERFORMANCE")
    if spec["target"] is None or not spec["inputs"]:
        raise _err(first, "PROC HPFOREST needs a TARGET and an INPUT statement", "HPFOREST",
                   "TARGET y; INPUT x1 x2;")
    if spec["level"] is None:
        spec["level"] = "NOMINAL" if types.get(spec["target"].upper()) == "char" else "INTERVAL"
    elif spec["level"] == "INTERVAL" and types.get(spec["target"].upper()) == "char":
        raise _err(first, f"The target {spec['target']} is character; LEVEL=INTERVAL needs a numeric target",
                   spec["target"], "LEVEL=NOMINAL or BINARY")
    return spec


def _score(program, data: str, model, out: DatasetSpec, ids) -> None:
    from statgrid.procs import forest_model
    from statgrid.sas.procs.analytics import _name
    forest_model.score(program.session, data, model, _name(out), ids)      # its NOTE is the session's
    program.last = out.name


# ------------------------------------------------------------------------------------------------ HP4SCORE
def run_hp4score(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, {"DATA": DATASET}, "HP4SCORE")
    src, cols = data_input(program, opts, first)
    ids, path, out = None, None, None
    for stmt, kw, c in each_statement(rest):
        if kw == "ID":
            ids = var_names(c, cols)
        elif kw == "SCORE":
            while not c.at_end():
                k = c.expect_name("FILE= or OUT=")
                if k.upper() == "FILE":
                    path = _path(c, stmt)
                elif k.upper() == "OUT":
                    c.expect("=")
                    out = parse_dataset(c, program)
                else:
                    raise _err(stmt, f"The option {k} is not valid in PROC HP4SCORE's SCORE statement", k,
                               "FILE= and OUT=")
        elif kw == "PERFORMANCE":
            continue
        elif kw == "IMPORTANCE":
            raise _err(stmt, "The IMPORTANCE statement of PROC HP4SCORE is not supported by statgrid yet", kw,
                       "SCORE FILE= OUT=")
        else:
            raise _err(stmt, f"Statement {kw} is not valid or it is used out of proper order in PROC HP4SCORE", kw,
                       "ID, SCORE, PERFORMANCE")
    if path is None or out is None:
        raise _err(first, "PROC HP4SCORE needs a SCORE statement with FILE= and OUT=", "HP4SCORE",
                   'SCORE FILE="model.bin" OUT=scored;')
    from statgrid.procs import forest_model
    try:
        with fit_errors(first, "HP4SCORE", keep_sas=True):
            model = forest_model.load(path)
            data = stage_input(program, src, TEMP)
            _score(program, data, model, out, ids)
    finally:
        drop_member(program, DatasetSpec("WORK", TEMP.upper()))


# ------------------------------------------------------------------------------------------------ listing
def forest_listing(r, args: dict, spec: dict, dsname: str) -> str:
    from statgrid.procs._base import render_table

    st = r.stats
    pipe = st["model"]
    rf = pipe.named_steps["forest"]
    n_design = rf.n_features_in_
    info = [["Data Set", dsname], ["Target", st["target"]], ["Target Level", spec["level"]],
            ["Variables to Try", args["vars_to_try"] or max(1, int(math.sqrt(n_design)))],
            ["Maximum Trees", args["ntrees"]], ["Leaf Size", args["min_leaf"]], ["Maximum Depth", args["max_depth"]],
            ["Seed", args["seed"]], ["Sampling", "bootstrap, with replacement (scikit-learn)"]]
    if st["levels"]:
        info.insert(3, ["Target Levels", " ".join(st["levels"])])
    nobs = [["Number of Observations Read", st["n_read"]], ["Number of Observations Used", st["n_used"]]]
    fit = st["fit"]
    leaves = sum(int(t.tree_.n_leaves) for t in rf.estimators_)
    second = ("misclass", "Misclassification Rate") if st["kind"] == "classification" else ("rsquare", "R-Square")
    header = ["Number of Trees", "Number of Leaves", "Average Square Error (Train)", "Average Square Error (OOB)",
              f"{second[1]} (Train)", f"{second[1]} (OOB)"]
    row = [len(rf.estimators_), leaves, fit.get("ase_train"), fit.get("ase_oob"), fit.get(f"{second[0]}_train"),
           fit.get(f"{second[0]}_oob")]
    rules = _rules_per_input(pipe)
    loss = "Gini Reduction" if st["kind"] == "classification" else "MSE Reduction"
    imp = [[v, rules.get(v, 0), impurity, perm] for v, _, impurity, perm, _ in r.rows]
    parts = ["The HPFOREST Procedure",
             render_table(["Parameter", "Value"], info, title="Model Information", right_align=[False, False]),
             render_table(["Description", "N"], nobs, title="Number of Observations"),
             render_table(header, [row], title="Fit Statistics"),
             render_table(["Variable", "Number of Rules", loss, "Permutation Importance (Train)"], imp,
                          title="Variable Importance")]
    return "\n".join(parts)


def _rules_per_input(pipe) -> dict[str, int]:
    """How many splitting rules of the forest use each input (a nominal input's one-hot columns together)."""
    import numpy as np
    encode = pipe.named_steps["encode"]
    owner = np.empty(pipe.named_steps["forest"].n_features_in_, dtype=object)
    for (name, _, cols_) in encode.transformers_:
        if name in encode.output_indices_ and cols_:
            owner[encode.output_indices_[name]] = cols_[0]
    counts: dict[str, int] = {}
    for tree in pipe.named_steps["forest"].estimators_:
        feats = tree.tree_.feature
        for f in feats[feats >= 0]:
            counts[owner[f]] = counts.get(owner[f], 0) + 1
    return counts
