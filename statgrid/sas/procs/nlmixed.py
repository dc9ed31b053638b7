"""PROC NLMIXED in SAS programs, on statgrid's NLMIXED engine (statgrid.procs.nlmixed: adaptive Gauss–Hermite
quadrature, quasi-Newton optimisation; checked against lme4::glmer).

    PROC NLMIXED DATA= QPOINTS= QTOL= MAXITER= ALPHA= TECHNIQUE=QUANEW|DBLDOG|NEWRAP|TRUREG (all run as BFGS)
                 METHOD=GAUSS NOPRINT;
      PARMS name=value <,> …;            (starting values; every parameter is named here)
      BOUNDS name >= value <,> …;        (also >, <=, <; and value <= name)
      programming statements             (assignments, IF-THEN/ELSE, DO; … END; — the DATA step's language)
      MODEL y ~ BINARY(p) | BINOMIAL(n, p) | NORMAL(m, v) | POISSON(l) | GENERAL(ll);
      RANDOM u ~ NORMAL(m, v) SUBJECT=id;  (one random effect)
      ID vars;  (accepted: it names PREDICT's copies)

Not built (an ERROR naming it): several random effects (`random b1 b2 ~ normal([…], […])`, or a second
RANDOM), PREDICT, ESTIMATE, CONTRAST, REPLICATE, ARRAY, HESS/COV output options, METHOD=FIRO/ISAMP.
The listing has SAS's tables: Specifications, Dimensions, Parameters (the starting values and their negative
log likelihood), the convergence NOTE, Fit Statistics and Parameter Estimates.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from statgrid.errors import StatgridError
from statgrid.sas.lexer import NAME
from statgrid.sas.parse.expr import parse_expression
from statgrid.sas.procs.common import DATASET, FLAG, VALUE, cursor, drop_member, where_statement
from statgrid.sas.procs.step import begin, data_input, fit_errors, stage_input, stmt_error as _err, whole_option

TEMP = "_sgnlmixed_input"
PROC_OPTIONS = {"DATA": DATASET, "QPOINTS": VALUE, "QTOL": VALUE, "MAXITER": VALUE, "ALPHA": VALUE,
                "TECHNIQUE": VALUE, "TECH": VALUE, "METHOD": VALUE, "NOPRINT": FLAG, "NOAD": FLAG}
NOT_BUILT = ("PREDICT", "ESTIMATE", "CONTRAST", "REPLICATE", "ARRAY", "HESS", "COV")
DISTRIBUTIONS = {"BINARY": 1, "BINOMIAL": 2, "NORMAL": 2, "POISSON": 1, "GENERAL": 1}
OWN = ("PARMS", "PARM", "PARAMETERS", "BOUNDS", "MODEL", "RANDOM", "ID", "BY", "WHERE")


def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, PROC_OPTIONS, "NLMIXED", {"TECH": "TECHNIQUE"})
    method = str(opts.get("METHOD", "GAUSS")).upper()
    if method != "GAUSS" or opts.get("NOAD"):
        raise _err(first, f"METHOD={method}{' NOAD' if opts.get('NOAD') else ''} is not supported by statgrid's "
                          "PROC NLMIXED", method, "METHOD=GAUSS (adaptive Gauss-Hermite quadrature)")
    src, cols = data_input(program, opts, first)
    spec = _statements(rest, src, first, program)
    model = _build(spec, cols, src, first, program)
    from statgrid.procs.nlmixed import nlmixed
    fn = getattr(nlmixed, "__wrapped__", nlmixed)
    try:
        with fit_errors(first, "NLMIXED", keep_sas=True):
            data = stage_input(program, src, TEMP)
            r = fn(program.session, data, spec["parms"], model["loglik"], model["variables"],
                   random=model["random"], qpoints=_int(opts, "QPOINTS", first), bounds=spec["bounds"] or None,
                   maxiter=_int(opts, "MAXITER", first) or 200, alpha=float(opts.get("ALPHA", 0.05)))
    finally:
        drop_member(program, _work_member())
    program.log.note("GCONV convergence criterion satisfied.")
    if not opts.get("NOPRINT"):
        program.log.listing(listing(r, spec, model, src.name))


def _work_member():
    from statgrid.sas.parse.dsname import DatasetSpec
    return DatasetSpec("WORK", TEMP.upper())


def _int(opts, key: str, stmt) -> int | None:
    return whole_option(opts, key, stmt)


# ---------------------------------------------------------------------------------------------- statements
def _statements(rest: list, src, first, program) -> dict:
    spec: dict[str, Any] = {"parms": {}, "bounds": {}, "model": None, "random": None, "program": []}
    for stmt in rest:
        kw, c = stmt.keyword, cursor(stmt)
        if kw in OWN and not c.peek(1).is_("="):
            c.next()
            if kw in ("PARMS", "PARM", "PARAMETERS"):
                _parms(c, stmt, spec["parms"])
            elif kw == "BOUNDS":
                _bounds(c, stmt, spec["bounds"])
            elif kw == "MODEL":
                spec["model"] = _model(c, stmt)
            elif kw == "RANDOM":
                if spec["random"] is not None:
                    raise _err(stmt, "statgrid's PROC NLMIXED takes one RANDOM statement (one random effect)",
                               "RANDOM", "one RANDOM statement with one random effect")
                spec["random"] = _random(c, stmt)
            elif kw == "WHERE":
                where_statement(c, src)
            elif kw == "BY":
                raise _err(stmt, "The BY statement of PROC NLMIXED is not supported by statgrid yet", "BY")
            continue
        if kw in NOT_BUILT:
            raise _err(stmt, f"The {kw} statement of PROC NLMIXED is not supported by statgrid yet", kw,
                       "PARMS, BOUNDS, programming statements, MODEL, RANDOM")
        spec["program"].append(stmt)
    if spec["model"] is None:
        raise _err(first, "No MODEL statement was given to PROC NLMIXED", "NLMIXED", "MODEL y ~ BINARY(p);")
    if not spec["parms"]:
        raise _err(first, "PROC NLMIXED needs a PARMS statement naming the parameters and their starting values",
                   "NLMIXED", "PARMS b0=0 b1=0 s2u=1;")
    return spec


def _number(c, what: str) -> float:
    neg = bool(c.accept("-"))
    if not neg:
        c.accept("+")
    t = c.next()
    try:
        x = float(t.value if t.kind == "NUM" else t.text)
    except (TypeError, ValueError):
        raise c.error(f"Syntax error in {what}", "a number", t) from None
    return -x if neg else x


def _parms(c, stmt, parms: dict) -> None:
    while not c.at_end():
        if c.accept(","):
            continue
        if c.at("/"):
            raise _err(stmt, "PARMS options (after /) are not supported by statgrid's PROC NLMIXED", "/",
                       "PARMS name=value …;")
        name = c.expect_name("a parameter name")
        c.expect("=", expected=f"= after {name}")
        parms[name.upper()] = _number(c, "PARMS")
        if c.at("TO"):
            raise _err(stmt, "A grid of starting values (TO … BY) is not supported by statgrid's PROC NLMIXED", "TO",
                       "one starting value per parameter")


def _bounds(c, stmt, bounds: dict) -> None:
    while not c.at_end():
        if c.accept(","):
            continue
        t = c.peek()
        if t.kind == NAME:
            name = c.next().upper
            op = c.next().text
            value = _number(c, "BOUNDS")
        else:
            value = _number(c, "BOUNDS")
            op = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "=<": ">=", "=>": "<="}.get(c.next().text, "?")
            name = c.expect_name("a parameter name").upper()
        lo, hi = bounds.get(name, (None, None))
        if op in (">=", ">", "=>", "GE", "GT"):
            lo = value if op in (">=", "=>", "GE") else math.nextafter(value, math.inf)
        elif op in ("<=", "<", "=<", "LE", "LT"):
            hi = value if op in ("<=", "=<", "LE") else math.nextafter(value, -math.inf)
        else:
            raise _err(stmt, f"Syntax error in BOUNDS at {op!r}", op, "name >= value, name <= value")
        bounds[name] = (lo, hi)


def _call_args(c, stmt, what: str) -> tuple[str, list]:
    name = c.expect_name(what).upper()
    c.expect("(", expected=f"( after {name}")
    args = []
    while True:
        if c.at("["):
            raise _err(stmt, "Several random effects (bracketed vectors) are not supported by statgrid's PROC "
                             "NLMIXED", "[", "one random effect: RANDOM u ~ NORMAL(0, s2u) SUBJECT=id;")
        args.append(parse_expression(c))
        if c.accept(")"):
            return name, args
        c.expect(",", expected=", or )")


def _model(c, stmt) -> dict:
    dep = c.expect_name("the response variable")
    c.expect("~", expected="~ after the response")
    dist, args = _call_args(c, stmt, "a distribution")
    if dist not in DISTRIBUTIONS:
        raise _err(stmt, f"The distribution {dist} is not supported by statgrid's PROC NLMIXED", dist,
                   "BINARY(p), BINOMIAL(n, p), NORMAL(m, v), POISSON(l) or GENERAL(ll)")
    if len(args) != DISTRIBUTIONS[dist]:
        raise _err(stmt, f"{dist} takes {DISTRIBUTIONS[dist]} argument(s); {len(args)} given", dist)
    if not c.at_end():
        raise c.error("Syntax error after the MODEL statement's distribution", "the end of the statement")
    return {"dep": dep, "dist": dist, "args": args}


def _random(c, stmt) -> dict:
    names = []
    while not c.at_end() and not c.at("~"):
        names.append(c.next().text)
    if len(names) != 1:
        raise _err(stmt, f"Several random effects ({' '.join(names)}) are not supported by statgrid's PROC NLMIXED",
                   " ".join(names), "one random effect: RANDOM u ~ NORMAL(0, s2u) SUBJECT=id;")
    c.expect("~", expected="~ after the random effect")
    dist, args = _call_args(c, stmt, "NORMAL")
    if dist != "NORMAL" or len(args) != 2:
        raise _err(stmt, "The random effect's distribution must be NORMAL(mean, variance)", dist, "NORMAL(0, s2u)")
    subject = None
    while not c.at_end():
        k = c.expect_name("SUBJECT=")
        c.expect("=", expected=f"= after {k}")
        v = c.next().text
        if k.upper() in ("SUBJECT", "SUB"):
            subject = v
        else:
            raise _err(stmt, f"The RANDOM option {k.upper()} is not supported by statgrid's PROC NLMIXED", k,
                       "SUBJECT=")
    if subject is None:
        raise _err(stmt, "The RANDOM statement needs SUBJECT=", "RANDOM", "SUBJECT=variable")
    return {"name": names[0].upper(), "mean": args[0], "variance": args[1], "subject": subject}


# ---------------------------------------------------------------------------------------------- the model
def _build(spec: dict, cols, src, first, program) -> dict:
    """The likelihood function and the data variables it reads."""
    from statgrid.procs.nlmixed import Random
    from statgrid.sas.parse.statements import Stream, parse_block
    from statgrid.sas.procs.nlmixed_program import VectorProgram

    stmts = parse_block(Stream(spec["program"], program))
    prog = VectorProgram(stmts, program)
    m, rnd = spec["model"], spec["random"]
    extra = VectorProgram([], program)
    reads = prog.names_read() + _names(m["args"]) + (_names([rnd["mean"], rnd["variance"]]) if rnd else [])
    data_names = {c.name.upper(): c.name for c in cols}
    params = set(spec["parms"])
    known = params | set(prog.assigned) | ({rnd["name"]} if rnd else set())
    variables = [m["dep"]]
    for name in reads:
        if name in known or name.upper() == m["dep"].upper():
            continue
        if name not in data_names:
            raise _err(first, f"Variable {name} is not a parameter (PARMS), a data set variable of {src.name}, the "
                              "random effect or a variable the programming statements assign", name,
                       "a name in PARMS or in the data set")
        variables.append(data_names[name])
    if m["dep"].upper() not in data_names:
        raise _err(first, f"The response variable {m['dep']} is not in {src.name}", m["dep"], "a variable of the data set")
    dep = m["dep"].upper()

    def env_of(data, p, u):
        env = dict(data)
        env.update(p)
        if rnd:
            env[rnd["name"]] = u
        return prog.run(env)

    def loglik(data, p, u):
        env = env_of(data, p, u)
        a = [np.asarray(extra.eval(x, env), dtype=float) for x in m["args"]]
        return _log_density(m["dist"], np.asarray(data[dep], dtype=float), a)

    random = None
    if rnd:
        data_nan = {name.upper(): np.nan for name in variables}

        def moment(expr):
            def f(p):
                x = np.ravel(np.asarray(extra.eval(expr, env_of(data_nan, p, 0.0)), dtype=float))
                if not np.isfinite(x[0]) and np.all(np.isfinite(list(p.values()))):
                    raise StatgridError("the random effect's mean and variance must depend on the parameters only "
                                        "(not on data set variables)")
                return float(x[0])
            return f
        random = Random(rnd["name"], moment(rnd["mean"]), moment(rnd["variance"]), rnd["subject"])
        if rnd["subject"].upper() not in data_names:
            raise _err(first, f"The SUBJECT= variable {rnd['subject']} is not in {src.name}", rnd["subject"],
                       "a variable of the data set")
        random.subject = data_names[rnd["subject"].upper()]
    return {"loglik": loglik, "variables": list(dict.fromkeys(variables)), "random": random, "program": prog}


def _names(nodes: list) -> list[str]:
    from statgrid.sas.parse import ast as A
    from statgrid.sas.parse import dsast as D
    from statgrid.sas.procs.nlmixed_program import VectorProgram
    target = A.Var(0, 0, "__NLMIXED_EXPR__", "__NLMIXED_EXPR__")
    return [n for n in VectorProgram([D.Assign(0, 0, target, n) for n in nodes]).names_read() if n != target.name]


def _log_density(dist: str, y: np.ndarray, a: list[np.ndarray]) -> np.ndarray:
    from scipy.special import gammaln
    with np.errstate(all="ignore"):
        if dist == "BINARY":
            p = a[0]
            return np.where(y == 1, np.log(p), np.where(y == 0, np.log1p(-p), np.nan))
        if dist == "BINOMIAL":
            n, p = a
            return (gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1) + y * np.log(p) + (n - y) * np.log1p(-p))
        if dist == "NORMAL":
            m, v = a
            return -0.5 * (np.log(2 * np.pi * v) + (y - m) ** 2 / v)
        if dist == "POISSON":
            lam = a[0]
            return y * np.log(lam) - lam - gammaln(y + 1)
        return a[0]


# ---------------------------------------------------------------------------------------------- listing
def listing(r, spec: dict, model: dict, dsname: str) -> str:
    from statgrid.procs._base import render_table
    from statgrid.procs._mixed_setup import _kv

    st = r.stats
    m, rnd = spec["model"], spec["random"]
    info = [["Data Set", dsname], ["Dependent Variable", m["dep"]],
            ["Distribution for Dependent Variable", m["dist"].capitalize()]]
    if rnd:
        info += [["Random Effects", rnd["name"].lower()], ["Distribution for Random Effects", "Normal"],
                 ["Subject Variable", rnd["subject"]]]
    info += [["Optimization Technique", "Dual Quasi-Newton (BFGS)"],
             ["Integration Method", "Adaptive Gaussian Quadrature" if rnd else "None"]]
    dims = [["Observations Used", st["n_used"]], ["Observations Not Used", st["n_read"] - st["n_used"]],
            ["Total Observations", st["n_read"]]]
    if rnd:
        dims += [["Subjects", st["subjects"]], ["Max Obs per Subject", st["max_per_subject"]]]
    dims.append(["Parameters", len(st["start"])])
    if rnd:
        dims.append(["Quadrature Points", st["q"]])
    start = render_table([n.lower() for n, _ in st["start"]] + ["NegLogLike"],
                         [[v for _, v in st["start"]] + [st["start_neg_loglik"]]], title="Parameters")
    first_fit = next(iter(st["fit"]))
    fit = _kv([[k if k == first_fit else f"{k} (smaller is better)", v] for k, v in st["fit"].items()],
              title="Fit Statistics")
    alpha = r.rows[0][6] if r.rows else 0.05
    pct = f"{100 * (1 - alpha):g}%"
    est = render_table(["Parameter", "Estimate", "Standard Error", "DF", "t Value", "Pr > |t|", "Alpha",
                        f"Lower {pct}", f"Upper {pct}", "Gradient"],
                       [[row[0].lower(), *row[1:]] for row in r.rows], title="Parameter Estimates")
    return "\n".join(["The NLMIXED Procedure", _kv(info, title="Specifications"), _kv(dims, title="Dimensions"), start,
                      "NOTE: GCONV convergence criterion satisfied.\n", fit, est])
