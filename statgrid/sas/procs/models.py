"""PROC LOGISTIC, GLM, GENMOD and MIXED in SAS programs, on statgrid's model procedures (procs/logistic.py,
glm.py, genmod.py, mixed.py — each checked against R or statsmodels).

The statements are read as SAS writes them and handed to the engine; each BY group is fitted on its own
(the input must be sorted by BY). WHERE and data-set options apply to the input. The listing is the
engine's (its tables carry SAS's names and values); OUTEST=/OUTSTAT=/OUT= are written as the engine writes
them. What each procedure takes:
- LOGISTIC: DESCENDING, OUTEST=, NOPRINT; CLASS vars </ PARAM=EFFECT|REF|GLM>; MODEL y<(EVENT='v'|DESCENDING)>
  = effects </ SELECTION=FORWARD|BACKWARD|STEPWISE SLE= SLS= INCLUDE= LACKFIT MAXITER= NOINT RISKLIMITS
  LINK=LOGIT>; OUTPUT OUT= P= XBETA= STDXBETA= LOWER= UPPER= </ ALPHA=> (logisticoutput.py, with LACKFIT's
  tables).
- GLM: OUTSTAT=, NOPRINT; CLASS; MODEL y1 y2 = effects (crossed a*b, a|b, nested b(a)) </ SS1 SS3 SS4 NOINT
  SOLUTION>; LSMEANS effects; CONTRAST, ESTIMATE, TEST H= E= (glmstatements.py); MEANS effects </ DUNCAN SNK
  TUKEY BON SIDAK SCHEFFE LSD T ALPHA= LINES CLDIFF DEPONLY> (glmmeans.py).
- GENMOD: DESCENDING, NOPRINT; CLASS; MODEL y<(or events/trials)> = effects </ DIST= LINK= NOINT OFFSET=
  SCALE= DSCALE PSCALE MAXITER= TYPE3>; CONTRAST </ WALD>, ESTIMATE </ ALPHA= EXP> (genmodstatements.py);
  REPEATED SUBJECT= </ TYPE= CORRW WITHINSUBJECT= MAXITER= CONVERGE= MODELSE> (GEE,
  repeated.py).
- MIXED: METHOD=REML|ML, NOPRINT; CLASS; MODEL y = effects </ SOLUTION DDFM=>; RANDOM effects </ SUBJECT=
  TYPE=VC|UN>; REPEATED </ SUBJECT= TYPE=CS>.
What the engines do not have is an ERROR naming it (RANDOM/MANOVA in GLM, TYPE3/CONTRAST/ESTIMATE with
REPEATED in GENMOD, link functions other than LOGIT in LOGISTIC, other covariance types in MIXED).
"""
from __future__ import annotations

from typing import Any

from statgrid.errors import StatgridError
from statgrid.sas import ods
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, STR
from statgrid.sas.parse.dsname import DatasetSpec
from statgrid.sas.procs.common import (DATASET, FLAG, VALUE, by_group_members, by_list, by_rule, check_by_sorted,
                                       cursor, input_dataset, observations_read, open_input, parse_options,
                                       proc_statement, resolve_names, where_statement)
from statgrid.sas.procs.modeltables import TITLES, tables as model_tables

TEMP = "_sgmodel_group"
PROC_OPTIONS = {
    "LOGISTIC": {"DATA": DATASET, "OUTEST": DATASET, "NOPRINT": FLAG, "DESCENDING": FLAG, "DESC": FLAG,
                 "SIMPLE": FLAG, "ORDER": VALUE, "PLOTS": VALUE, "NAMELEN": VALUE},
    "GLM": {"DATA": DATASET, "OUTSTAT": DATASET, "NOPRINT": FLAG, "ORDER": VALUE, "PLOTS": VALUE},
    "GENMOD": {"DATA": DATASET, "NOPRINT": FLAG, "DESCENDING": FLAG, "DESC": FLAG, "ORDER": VALUE, "PLOTS": VALUE,
               "NAMELEN": VALUE},
    "MIXED": {"DATA": DATASET, "NOPRINT": FLAG, "METHOD": VALUE, "COVTEST": FLAG, "UPDATE": FLAG,
              "ITDETAILS": FLAG, "SCORING": VALUE, "MAXITER": VALUE, "NOCLPRINT": FLAG, "NOITPRINT": FLAG,
              "PLOTS": VALUE, "ORDER": VALUE},
}
UNSUPPORTED = {"GLM": ("RANDOM", "REPEATED", "MANOVA", "OUTPUT"),
               "GENMOD": ("LSMEANS", "OUTPUT"),
               "LOGISTIC": ("CONTRAST", "ODDSRATIO", "UNITS", "STRATA", "EXACT"),
               "MIXED": ("LSMEANS", "CONTRAST", "ESTIMATE", "PARMS")}


def _options_after_slash(c) -> dict[str, Any]:
    """`/ NAME NAME=value NAME=(a b)` → {NAME: True | value}."""
    out: dict[str, Any] = {}
    while not c.at_end():
        t = c.next()
        if t.kind != NAME:
            raise c.error("Syntax error in the statement's options", "an option name", t)
        if c.accept("="):
            if c.accept("("):
                vals = []
                while not c.accept(")"):
                    vals.append(str(c.next().value if c.peek().kind == STR else c.next().text))
                out[t.upper] = " ".join(vals)
            else:
                v = c.next()
                out[t.upper] = str(v.value) if v.kind == STR else v.text
        else:
            out[t.upper] = True
    return out


def _model(c) -> tuple[str, str, dict, dict]:
    """MODEL dep<(opts)> = effects / options → (dependent text, effects text, dependent options, options)."""
    dep_toks, dep_opts = [], {}
    while not c.at_end() and not c.at("="):
        t = c.next()
        if t.text == "(" and dep_toks:
            while not c.accept(")"):
                k = c.next()
                if c.accept("="):
                    v = c.next()
                    dep_opts[k.upper] = str(v.value) if v.kind == STR else v.text
                else:
                    dep_opts[k.upper] = True
            continue
        dep_toks.append(t.text)
    c.expect("=", expected="= after the response")
    eff = []
    while not c.at_end() and not c.at("/"):
        eff.append(c.next().text)
    opts = _options_after_slash(c) if c.accept("/") else {}
    effects = " ".join(eff).replace(" * ", "*").replace(" | ", "|").replace("( ", "(").replace(" )", ")")
    effects = effects.replace(" (", "(")
    return " ".join(dep_toks), effects, dep_opts, opts


def run_logistic(statements: list, program: Any) -> None:
    _run(statements, program, "LOGISTIC")


def run_glm(statements: list, program: Any) -> None:
    _run(statements, program, "GLM")


def run_genmod(statements: list, program: Any) -> None:
    _run(statements, program, "GENMOD")


def run_mixed(statements: list, program: Any) -> None:
    _run(statements, program, "MIXED")


@ods.proc_step
def _run(statements: list, program: Any, proc: str) -> None:
    first, *rest = list(statements)
    opts = parse_options(proc_statement(first), PROC_OPTIONS[proc], program, f"PROC {proc}", {"DESC": "DESCENDING"})
    src = input_dataset(program, opts, "DATA", first)
    cols, _ = open_input(program, src)
    spec: dict[str, Any] = {"class": [], "class_opts": {}, "model": None, "by": [], "lsmeans": [], "random": None,
                            "random_opts": {}, "repeated": None, "repeated_opts": {}, "contrasts": [],
                            "estimates": [], "tests": []}
    for stmt in rest:
        kw, c = stmt.keyword, cursor(stmt)
        c.next()
        if kw == "CLASS":
            while not c.at_end() and not c.at("/"):
                t = c.next()
                if t.kind == NAME:
                    spec["class"].append(t.text)
                elif t.text == "(":
                    while not c.accept(")"):
                        c.next()                    # per-variable options such as (REF='a'): the engine's default
            if c.accept("/"):
                spec["class_opts"] = _options_after_slash(c)
        elif kw == "MODEL":
            spec["model"] = _model(c)
        elif kw == "BY":
            spec["by"] = by_list(c)
        elif kw == "WHERE":
            where_statement(c, src)
        elif kw == "LSMEANS" and proc == "GLM":
            while not c.at_end() and not c.at("/"):
                spec["lsmeans"].append(c.next().text)
        elif kw in ("CONTRAST", "ESTIMATE", "TEST") and proc == "GLM":
            from statgrid.sas.procs import glmstatements
            spec[kw.lower() + "s"].append(getattr(glmstatements, kw.lower())(c))
        elif kw == "MEANS" and proc == "GLM":
            from statgrid.sas.procs import glmmeans
            spec.setdefault("means", []).append(glmmeans.parse(c))
        elif kw == "RANDOM" and proc == "MIXED":
            words = []
            while not c.at_end() and not c.at("/"):
                words.append(c.next().text)
            spec["random"] = " ".join(words)
            spec["random_opts"] = _options_after_slash(c) if c.accept("/") else {}
        elif kw == "REPEATED" and proc == "MIXED":
            words = []
            while not c.at_end() and not c.at("/"):
                words.append(c.next().text)
            spec["repeated"] = " ".join(words) or True
            spec["repeated_opts"] = _options_after_slash(c) if c.accept("/") else {}
        elif kw == "OUTPUT" and proc == "LOGISTIC":
            from statgrid.sas.procs import logisticoutput
            if spec.get("output"):
                t = stmt.tokens[0]
                raise SasError("statgrid's PROC LOGISTIC takes one OUTPUT statement", t.line, t.col, kw,
                               "one OUTPUT OUT= statement per step")
            spec["output"] = logisticoutput.parse(c, program)
        elif kw in ("CONTRAST", "ESTIMATE") and proc == "GENMOD":
            from statgrid.sas.procs import genmodstatements
            spec[kw.lower() + "s"].append(getattr(genmodstatements, kw.lower())(c))
        elif kw == "REPEATED" and proc == "GENMOD":
            from statgrid.sas.procs import repeated
            spec["gee"] = repeated.parse(c, stmt)
        elif kw in ("FORMAT", "LABEL", "ATTRIB", "ODS", "FREQ", "ID", "UNITS") and kw not in UNSUPPORTED[proc]:
            continue
        else:
            t = stmt.tokens[0]
            if kw in UNSUPPORTED[proc]:
                raise SasError(f"The {kw} statement of PROC {proc} is not supported by statgrid yet", t.line, t.col,
                               kw, f"the statements statgrid's PROC {proc} takes (README: SAS programs)")
            raise SasError(f"Statement {t.text.upper()} is not valid or it is used out of proper order in PROC {proc}",
                           t.line, t.col, t.text, "CLASS, MODEL, BY, WHERE …")
    if spec["model"] is None:
        t = first.tokens[0]
        raise SasError(f"No MODEL statement was given to PROC {proc}", t.line, t.col, proc, "MODEL y = effects;")
    byc = resolve_names([n for n, _ in spec["by"]], cols, src, first.line)
    if byc:
        check_by_sorted(program, src, cols, spec["by"])
    cols, base = open_input(program, src)
    n_read = int(program.session.execute(f"SELECT count(*) FROM ({base})").fetchall()[0][0])
    observations_read(program, n_read, src)
    listing = ods.Listing(program, TITLES[proc])
    scored = []
    for key, data in by_group_members(program, byc, cols, base, TEMP):
        try:
            result = _fit(program, proc, opts, spec, data)
        except StatgridError as exc:
            t = first.tokens[0]
            raise SasError(str(exc), t.line, t.col, proc, "") from None
        if not opts.get("NOPRINT") and result is not None:
            _publish(listing, proc, spec, result, list(zip(byc, key)))
        if spec.get("output"):
            scored.append(result.stats["output"])
    listing.flush()
    if scored:
        from statgrid.sas.procs import logisticoutput
        logisticoutput.write(program, spec["output"], scored, cols, spec["model"][0])


def _publish(listing, proc: str, spec: dict, result: Any, by: list) -> None:
    """The fit's tables (modeltables.py) to the listing and ODS OUTPUT, after the BY line and the title."""
    if by:
        listing.text(by_rule(" ".join(f"{b.name}={v}" for b, v in by)), "")
    listing.title()
    extra = []
    if proc == "GLM":
        from statgrid.sas.procs import glmstatements
        from statgrid.sas.procs import glmmeans
        extra = glmstatements.tables(result) + glmmeans.tables(result)
    elif proc == "GENMOD":
        from statgrid.sas.procs import genmodstatements
        extra = genmodstatements.tables(result)
    elif proc == "LOGISTIC":
        from statgrid.sas.procs import logisticoutput
        extra = logisticoutput.lackfit_tables(result)
    for table in model_tables(proc, result, spec["class"]) + extra:
        table.by = by
        listing.table(table)


def _fit(program, proc, opts, spec, data: str) -> Any:
    dep, effects, dep_opts, mopts = spec["model"]
    s = program.session
    printing = False                   # the listing is made from the ODS tables (_publish)
    classes = spec["class"] or None
    if proc == "LOGISTIC":
        from statgrid.procs.logistic import logistic
        if str(mopts.get("LINK", "LOGIT")).upper() not in ("LOGIT", "LOGISTIC"):
            raise StatgridError(f"LINK={mopts['LINK']} is not supported by statgrid's PROC LOGISTIC (LOGIT only).")
        selection = {"S": "stepwise", "F": "forward", "B": "backward"}.get(
            str(mopts.get("SELECTION", "")).upper(), str(mopts.get("SELECTION", "")).lower() or None)
        fn = getattr(logistic, "__wrapped__", logistic)
        return fn(s, data, f"{dep} = {effects}", class_=classes, param=str(spec["class_opts"].get("PARAM", "effect")).lower(),
           event=dep_opts.get("EVENT"), descending=bool(opts.get("DESCENDING") or dep_opts.get("DESCENDING")),
           selection=selection if selection != "none" else None, sle=float(mopts.get("SLE", mopts.get("SLENTRY", 0.05))),
           sls=float(mopts.get("SLS", mopts.get("SLSTAY", 0.05))), include=int(float(mopts.get("INCLUDE", 0))),
           lackfit=bool(mopts.get("LACKFIT")), maxiter=int(float(mopts.get("MAXITER", 25))),
           noint=bool(mopts.get("NOINT")), outest=_name(opts.get("OUTEST")), print=printing,
           output=spec["output"]["names"] if spec.get("output") else None,
           alpha=spec["output"]["alpha"] if spec.get("output") else 0.05)
    elif proc == "GLM":
        from statgrid.procs.glm import glm
        ss = " ".join(k[2:] for k in ("SS1", "SS2", "SS3", "SS4") if mopts.get(k)) or "1 3"
        fn = getattr(glm, "__wrapped__", glm)
        return fn(s, data, f"{dep} = {effects}", class_=classes, noint=bool(mopts.get("NOINT")),
           lsmeans=spec["lsmeans"] or None, ss=ss, outstat=_name(opts.get("OUTSTAT")), print=printing,
           contrasts=spec["contrasts"], estimates=spec["estimates"], tests=spec["tests"],
           means=spec.get("means"))
    elif proc == "GENMOD" and spec.get("gee"):
        from statgrid.sas.procs import repeated
        # GEE prints its own listing (gee_listing.py) and publishes no ODS tables yet
        for what, there in (("TYPE3 option", mopts.get("TYPE3")), ("CONTRAST statement", spec["contrasts"]),
                            ("ESTIMATE statement", spec["estimates"])):
            if there:
                raise StatgridError(f"The {what} of PROC GENMOD with a REPEATED statement (GEE: generalized score "
                                    "and empirical-covariance tests) is not supported by statgrid yet; fit the model "
                                    "without REPEATED for likelihood-ratio tests.")
        repeated.fit(program, data, dep, effects, classes, mopts, opts, spec["gee"], not opts.get("NOPRINT"))
        return None
    elif proc == "GENMOD":
        from statgrid.procs.genmod import genmod
        trials = None
        if "/" in dep:
            dep, trials = [x.strip() for x in dep.split("/", 1)]
        fn = getattr(genmod, "__wrapped__", genmod)
        return fn(s, data, f"{dep} = {effects}", dist=str(mopts.get("DIST", mopts.get("D", "normal"))).lower(),
           link=str(mopts["LINK"]).lower() if "LINK" in mopts else None, class_=classes, trials=trials,
           offset=mopts.get("OFFSET"), noint=bool(mopts.get("NOINT")),
           scale=_genmod_scale(mopts), maxiter=int(float(mopts.get("MAXITER", 50))),
           descending=bool(opts.get("DESCENDING")), print=printing, type3=bool(mopts.get("TYPE3")),
           contrasts=spec["contrasts"], estimates=spec["estimates"])
    else:
        from statgrid.procs.mixed import mixed
        fn = getattr(mixed, "__wrapped__", mixed)
        ropts, popts = spec["random_opts"], spec["repeated_opts"]
        subject = ropts.get("SUBJECT", ropts.get("SUB")) or popts.get("SUBJECT", popts.get("SUB"))
        return fn(s, data, f"{dep} = {effects}", class_=classes, random=spec["random"], subject=subject,
           repeated=spec["repeated"], type=str(popts.get("TYPE", "cs")).lower(),
           method=str(opts.get("METHOD", "REML")).lower(), maxiter=int(float(opts.get("MAXITER", 200))),
           print=printing, random_type=str(ropts.get("TYPE", "vc")).lower())


def _genmod_scale(mopts: dict) -> str | None:
    """MODEL / SCALE=DEVIANCE|D|PEARSON|P, DSCALE, PSCALE → the engine's scale= (None: maximum likelihood)."""
    if mopts.get("DSCALE"):
        return "deviance"
    if mopts.get("PSCALE"):
        return "pearson"
    return str(mopts["SCALE"]).lower() if "SCALE" in mopts else None


def _name(spec: DatasetSpec | None) -> str | None:
    return None if spec is None else f"{spec.libref}.{spec.member}".lower()
