"""PROC LOGISTIC, GLM, GENMOD and MIXED in SAS programs, on statgrid's model procedures (procs/logistic.py,
glm.py, genmod.py, mixed.py — each checked against R or statsmodels).

The statements are read as SAS writes them and handed to the engine; each BY group is fitted on its own
(the input must be sorted by BY). WHERE and data-set options apply to the input. The listing is the
engine's (its tables carry SAS's names and values); OUTEST=/OUTSTAT=/OUT= are written as the engine writes
them. What each procedure takes:
- LOGISTIC: DESCENDING, OUTEST=, NOPRINT; CLASS vars </ PARAM=EFFECT|REF|GLM>; MODEL y<(EVENT='v'|DESCENDING)>
  = effects </ SELECTION=FORWARD|BACKWARD|STEPWISE SLE= SLS= INCLUDE= LACKFIT MAXITER= NOINT RISKLIMITS
  LINK=LOGIT|PROBIT|CLOGLOG CLODDS=WALD ALPHA=>; CONTRAST, ODDSRATIO, UNITS, EXACT (logisticstatements.py); OUTPUT OUT=
  P= XBETA= STDXBETA= LOWER= UPPER= </ ALPHA=> (logisticoutput.py, with LACKFIT's tables); STRATA vars
  (conditional logistic regression: procs/logistic_strata.py). CLASS var(REF='level'|FIRST|LAST) and / REF=
  put that level last (LOGISTIC, GENMOD, GLM), as SAS does.
- GLM: OUTSTAT=, NOPRINT; CLASS; MODEL y1 y2 = effects (crossed a*b, a|b, nested b(a)) </ SS1 SS3 SS4 NOINT
  SOLUTION>; LSMEANS effects; CONTRAST, ESTIMATE, TEST H= E= (glmstatements.py); MEANS effects </ DUNCAN SNK
  TUKEY BON SIDAK SCHEFFE LSD T ALPHA= LINES CLDIFF DEPONLY> (glmmeans.py).
- GENMOD: DESCENDING, NOPRINT; CLASS; MODEL y<(or events/trials)> = effects </ DIST= LINK= NOINT OFFSET=
  SCALE= DSCALE PSCALE MAXITER= TYPE3>; CONTRAST </ WALD>, ESTIMATE </ ALPHA= EXP> (genmodstatements.py);
  REPEATED SUBJECT= </ TYPE= CORRW WITHINSUBJECT= MAXITER= CONVERGE= MODELSE> (GEE,
  repeated.py: with it TYPE3 <WALD>, CONTRAST and ESTIMATE are GEE's score/Wald tests, and QIC is printed).
- MIXED: METHOD=REML|ML|MIVQUE0, COVTEST, SCORING=, UPDATE, ITDETAILS, NOPRINT; CLASS; MODEL y = effects
  </ SOLUTION DDFM=CONTAIN|RESIDUAL|BETWITHIN|SATTERTHWAITE|KR>; RANDOM (several) effects </ SUBJECT= TYPE=VC|UN>;
  REPEATED <effect> </ SUBJECT= TYPE=VC|CS|AR(1)|UN|SP(SPH)(c)|SP(EXP)(c) LOCAL>; PARMS / HOLD= NOITER;
  LSMEANS / DIFF; CONTRAST/ESTIMATE with random-effect coefficients after | and SUBJECT (mixedstatements.py).
What the engines do not have is an ERROR naming it (RANDOM/MANOVA in GLM, OUTPUT with
REPEATED in GENMOD, SELECTION=/OUTPUT/CONTRAST with STRATA in LOGISTIC, other covariance types in MIXED).
"""
from __future__ import annotations

from typing import Any

from statgrid.errors import StatgridError
from statgrid.sas import ods
from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME, STR
from statgrid.sas.parse.dsname import DatasetSpec
from statgrid.sas.procs.common import DATASET, FLAG, VALUE, by_list, by_rule, by_text, where_statement
from statgrid.sas.procs.step import ByInput, begin, data_input, each_statement, fit_errors
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
              "PLOTS": VALUE, "ORDER": VALUE, "ASYCOV": FLAG, "IC": FLAG, "CL": FLAG, "LOGNOTE": FLAG},
}
UNSUPPORTED = {"GLM": ("RANDOM", "REPEATED", "MANOVA"),
               "GENMOD": ("LSMEANS",),
               "LOGISTIC": (),
               "MIXED": ()}


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


def _model(c, cols: list | None = None) -> tuple[str, str, dict, dict]:
    """MODEL dep<(opts)> = effects / options → (dependent text, effects text, dependent options, options).
    Variable lists among the effects become names before the engine sees them (SAS's MODEL takes them):
    numbered ranges `x1-x40` (`v001-v040`), name ranges `a--c` and `a-numeric-c`, prefixes `x:`, and
    _NUMERIC_/_CHARACTER_/_ALL_; all but numbered ranges need `cols`, the input's columns in order. Crossing
    `a*b`, bars `a|b@2` and nesting `b(a)` are kept as written."""
    dep_toks, dep_opts = [], {}
    while not c.at_end() and not c.at("="):
        if _list_item_size(c):
            dep_toks += _expand_list(c, cols)
            continue
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
        eff += _expand_list(c, cols) if _list_item_size(c) else [c.next().text]
    opts = _options_after_slash(c) if c.accept("/") else {}
    effects = " ".join(eff).replace(" * ", "*").replace(" | ", "|").replace("( ", "(").replace(" )", ")")
    effects = effects.replace(" (", "(")
    return " ".join(dep_toks), effects, dep_opts, opts


def _expand_list(c, cols: list | None) -> list[str]:
    """The variable list at the cursor (see _list_item_size) as names, the cursor moved past it."""
    from statgrid.sas.cursor import TokenCursor
    from statgrid.sas.dataset import expand_var_list
    from statgrid.sas.parse.expr import parse_var_list

    first, size = c.peek(), _list_item_size(c)
    items = parse_var_list(TokenCursor(c.tokens[c.i:c.i + size], c.source))
    c.i += size
    if items[0][0] != "range" and cols is None:
        raise SasError(f"The variable list starting at {first.text} needs the data set's variables", first.line,
                       first.col, first.text, "the effects' names written out")
    return expand_var_list(items, [col.name for col in cols or []], {col.name.upper(): col.type for col in cols or []})


def _list_item_size(c) -> int:
    """How many tokens from the cursor form one variable list (`x1-x9` 3, `a--c` 4, `a-numeric-c` 5, `x:` 2,
    `_numeric_` 1); 0 for a name or operator of an effect (a name before `*`, `|`, `(` or `@` is an effect's
    part)."""
    t, nxt = c.peek(), c.peek(1)
    if t.kind != NAME:
        return 0
    if t.upper in ("_NUMERIC_", "_CHARACTER_", "_CHAR_", "_ALL_"):
        return 1
    if nxt.is_(":") and t.touches(nxt):
        return 2
    if not nxt.is_("-"):
        return 0
    if c.peek(2).is_("-") and nxt.touches(c.peek(2)) and c.peek(3).kind == NAME:
        return 4
    if c.peek(2).is_("NUMERIC", "CHARACTER", "CHAR") and c.peek(3).is_("-") and c.peek(4).kind == NAME:
        return 5
    return 3 if c.peek(2).kind == NAME else 0


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
    first, rest, opts = begin(statements, program, PROC_OPTIONS[proc], proc, {"DESC": "DESCENDING"})
    src, cols = data_input(program, opts, first)
    spec: dict[str, Any] = {"class": [], "class_opts": {}, "model": None, "by": [], "lsmeans": [], "random": None,
                            "random_opts": {}, "repeated": None, "repeated_opts": {}, "contrasts": [],
                            "estimates": [], "tests": []}
    for stmt, kw, c in each_statement(rest):
        if kw == "CLASS":
            class_statement(c, spec)
        elif kw == "MODEL":
            spec["model"] = _model(c, cols)
        elif kw == "BY":
            spec["by"] = by_list(c)
        elif kw == "WHERE":
            where_statement(c, src)
        elif kw == "STRATA" and proc == "LOGISTIC":          # conditional logistic regression
            while not c.at_end() and not c.at("/"):
                spec.setdefault("strata", []).append(c.expect_name("a STRATA variable"))
        elif kw in ("CONTRAST", "ODDSRATIO", "UNITS", "EXACT") and proc == "LOGISTIC":
            from statgrid.sas.procs import logisticstatements
            logisticstatements.parse(kw, c, spec, stmt)
        elif kw == "LSMEANS" and proc == "GLM":
            while not c.at_end() and not c.at("/"):
                spec["lsmeans"].append(c.next().text)
        elif kw in ("CONTRAST", "ESTIMATE", "TEST") and proc == "GLM":
            from statgrid.sas.procs import glmstatements
            spec[kw.lower() + "s"].append(getattr(glmstatements, kw.lower())(c))
        elif kw in ("CONTRAST", "ESTIMATE") and proc == "MIXED":
            from statgrid.sas.procs import mixedstatements
            spec[kw.lower() + "s"].append(getattr(mixedstatements, kw.lower())(c))
        elif kw in ("RANDOM", "REPEATED", "PARMS", "LSMEANS") and proc == "MIXED":
            from statgrid.sas.procs import mixedstatements as ms
            if kw == "RANDOM":
                spec.setdefault("mixed_randoms", []).append(ms.random(c))
            elif kw == "LSMEANS":
                spec.setdefault("mixed_lsmeans", []).append(ms.lsmeans(c))
            else:
                spec["mixed_" + kw.lower()] = ms.repeated(c) if kw == "REPEATED" else ms.parms(c)
        elif kw == "MEANS" and proc == "GLM":
            from statgrid.sas.procs import glmmeans
            spec.setdefault("means", []).append(glmmeans.parse(c))
        elif kw == "OUTPUT" and proc == "LOGISTIC":
            from statgrid.sas.procs import logisticoutput
            if spec.get("output"):
                t = stmt.tokens[0]
                raise SasError("statgrid's PROC LOGISTIC takes one OUTPUT statement", t.line, t.col, kw,
                               "one OUTPUT OUT= statement per step")
            spec["output"] = logisticoutput.parse(c, program)
        elif kw == "OUTPUT" and proc in ("GLM", "GENMOD"):
            from statgrid.sas.procs import modeloutput
            if spec.get("output"):
                t = stmt.tokens[0]
                raise SasError(f"statgrid's PROC {proc} takes one OUTPUT statement", t.line, t.col, kw,
                               "one OUTPUT OUT= statement per step")
            spec["output"] = modeloutput.parse(c, program, proc)
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
    spec["data_label"] = f"{src.libref}.{src.member}".upper()        # the listings' Data Set
    inp = ByInput(program, first, src, cols, spec["by"])
    listing = ods.Listing(program, TITLES[proc])
    scored = []
    for key, data in inp.groups(TEMP):
        with fit_errors(first, proc):
            result = _fit(program, proc, opts, spec, data)
        if proc == "MIXED" and result is not None:             # display options the tables honour
            result.stats.update(noclprint=bool(opts.get("NOCLPRINT")), noitprint=bool(opts.get("NOITPRINT")))
        if not opts.get("NOPRINT") and result is not None:
            _publish(listing, proc, spec, result, inp.pairs(key))
        if spec.get("output"):
            scored.append(result.stats["output"])
    listing.flush()
    if scored and proc == "LOGISTIC":
        from statgrid.sas.procs import logisticoutput
        logisticoutput.write(program, spec["output"], scored, inp.cols, spec["model"][0])
    elif scored:
        from statgrid.sas.procs import modeloutput
        modeloutput.write(program, spec["output"], scored, inp.cols)


def class_statement(c, spec: dict) -> None:
    """CLASS vars </ options> (after CLASS): the names onto spec["class"], the options as spec["class_opts"];
    REF= (a variable's own, var(REF='level'|FIRST|LAST), else the global / REF=) onto spec["class_ref"] {var:
    level}, which the engines put last among the variable's levels (SAS: the reference level). Other
    per-variable options (DESCENDING, ORDER=, PARAM=) are passed over."""
    own: dict[str, str] = {}
    names: list[str] = []
    while not c.at_end() and not c.at("/"):
        t = c.next()
        if t.kind == NAME:
            spec["class"].append(t.text)
            names.append(t.text)
        elif t.text == "(":
            while not c.accept(")"):
                if c.at_end():
                    raise c.error("Syntax error in the options of a CLASS variable", ")")
                o = c.next()
                if o.kind == NAME and o.upper in ("REF", "REFERENCE") and c.accept("="):
                    v = c.next()
                    for var in names[-1:]:
                        own[var] = str(v.value) if v.kind == STR else v.text
    if c.accept("/"):
        spec["class_opts"] = _options_after_slash(c)
    glob = spec["class_opts"].get("REF", spec["class_opts"].get("REFERENCE"))
    refs = spec.setdefault("class_ref", {})
    for var in names:
        if var in own:
            refs[var] = own[var]
        elif glob is not None and glob is not True:
            refs[var] = str(glob)


def _publish(listing, proc: str, spec: dict, result: Any, by: list) -> None:
    """The fit's tables (modeltables.py) to the listing and ODS OUTPUT, after the BY line and the title."""
    if proc == "GENMOD" and spec.get("gee"):            # published for ODS OUTPUT only: GEE wrote its listing
        from statgrid.sas.procs import repeated
        ods.publish_only(listing.program, repeated.tables(result, spec["class"]), by)
        return
    if by:
        listing.text(by_rule(by_text(listing.program, by)), "")
    listing.title()
    extra = []
    if spec.get("data_label") and isinstance(getattr(result, "stats", None), dict):
        result.stats.setdefault("data_label", spec["data_label"])
    tables = model_tables(proc, result, spec["class"], spec["model"])
    if proc == "GLM":
        from statgrid.sas.procs import glmstatements
        from statgrid.sas.procs import glmmeans
        from statgrid.sas.procs.modeltables import glm_order
        tables = glm_order(tables, glmstatements.tables(result), glmmeans.tables(result))
    elif proc == "MIXED":
        from statgrid.sas.procs import mixedstatements
        extra = mixedstatements.tables(result)
    elif proc == "GENMOD":
        from statgrid.sas.procs import genmodstatements
        extra = genmodstatements.tables(result)
    elif proc == "LOGISTIC":
        from statgrid.sas.procs import logisticoutput, logisticstatements
        extra = logisticoutput.lackfit_tables(result) + logisticstatements.tables(result)
    for table in tables + extra:
        table.by = by
        listing.table(table, mixedstatements.listing_text(table) if proc == "MIXED" else None)


def _fit(program, proc, opts, spec, data: str) -> Any:
    dep, effects, dep_opts, mopts = spec["model"]
    s = program.session
    printing = False                   # the listing is made from the ODS tables (_publish)
    classes = spec["class"] or None
    if proc == "LOGISTIC":
        from statgrid.sas.procs import logisticstatements
        return logisticstatements.fit(s, data, dep, effects, dep_opts, mopts, opts, spec, classes, _name(opts.get("OUTEST")))
    elif proc == "GLM":
        from statgrid.procs.glm import glm
        ss = " ".join(k[2:] for k in ("SS1", "SS2", "SS3", "SS4") if mopts.get(k)) or "1 3"
        fn = getattr(glm, "__wrapped__", glm)
        return fn(s, data, f"{dep} = {effects}", class_=classes, noint=bool(mopts.get("NOINT")),
           lsmeans=spec["lsmeans"] or None, ss=ss, outstat=_name(opts.get("OUTSTAT")), print=printing,
           contrasts=spec["contrasts"], estimates=spec["estimates"], tests=spec["tests"],
           means=spec.get("means"), output=spec["output"]["names"] if spec.get("output") else None,
           output_alpha=spec["output"]["alpha"] if spec.get("output") else 0.05, ref=spec.get("class_ref") or None,
           order=str(opts.get("ORDER")).lower() if opts.get("ORDER") else None)
    elif proc == "GENMOD" and spec.get("gee"):
        from statgrid.sas.procs import repeated
        # GEE prints its own listing (gee_listing.py); TYPE3/CONTRAST/ESTIMATE are GEE's own tests (gee_tests.py)
        if spec.get("output"):
            raise StatgridError("The OUTPUT statement of PROC GENMOD with a REPEATED statement (GEE) is not "
                                "supported by statgrid yet; fit the model without REPEATED for its OUTPUT data set.")
        gee_opts = {"DESCENDING": _genmod_descending(opts, dep_opts)}      # the one PROC option GEE reads
        return repeated.fit(program, data, dep, effects, classes, mopts, gee_opts, spec["gee"], not opts.get("NOPRINT"),
                            spec["contrasts"], spec["estimates"], spec.get("data_label"), spec.get("class_ref") or None)
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
           descending=_genmod_descending(opts, dep_opts), print=printing, type3=bool(mopts.get("TYPE3")),
           contrasts=spec["contrasts"], estimates=spec["estimates"],
           output={k: v[0] for k, v in spec["output"]["names"].items()} if spec.get("output") else None,
           output_alpha=spec["output"]["alpha"] if spec.get("output") else 0.05, ref=spec.get("class_ref") or None,
           order=str(opts.get("ORDER")).lower() if opts.get("ORDER") else None)
    else:
        from statgrid.procs.mixed import mixed
        from statgrid.sas.procs.mixedstatements import engine_args
        fn = getattr(mixed, "__wrapped__", mixed)
        r = fn(s, data, f"{dep} = {effects}", class_=classes, method=str(opts.get("METHOD", "REML")).lower(),
           maxiter=int(float(opts.get("MAXITER", 200))), print=printing, ddfm=mopts.get("DDFM"),
           covtest=bool(opts.get("COVTEST")), scoring=int(float(opts.get("SCORING", 0))), **engine_args(spec),
           ref=spec.get("class_ref") or None)
        if classes and "class_levels" not in r.stats:      # for Class Level Information (modeltables.mixed_tables)
            from statgrid.procs.design import used_class_levels
            r.stats["class_levels"] = used_class_levels(s, data, dep, effects, classes, None)
        return r


def _genmod_descending(opts, dep_opts: dict) -> bool:
    """Whether GENMOD models the higher level of a 0/1 response: MODEL y(EVENT='1') (EVENT='0': the lower),
    y(DESCENDING), else PROC GENMOD DESCENDING (SAS: the lowest ordered level by default)."""
    if "EVENT" in dep_opts:
        v = str(dep_opts["EVENT"]).strip()
        try:
            level = float(v)
        except ValueError:
            level = None
        if level not in (0.0, 1.0):
            raise StatgridError(f"EVENT='{v}' is not a level of the 0/1 response of PROC GENMOD; give EVENT='1' "
                                "or EVENT='0'.")
        return level == 1.0
    if dep_opts.get("DESCENDING") or dep_opts.get("DESC"):
        return True
    return bool(opts.get("DESCENDING"))


def _genmod_scale(mopts: dict) -> str | None:
    """MODEL / SCALE=DEVIANCE|D|PEARSON|P, DSCALE, PSCALE → the engine's scale= (None: maximum likelihood)."""
    if mopts.get("DSCALE"):
        return "deviance"
    if mopts.get("PSCALE"):
        return "pearson"
    return str(mopts["SCALE"]).lower() if "SCALE" in mopts else None


def _name(spec: DatasetSpec | None) -> str | None:
    return None if spec is None else f"{spec.libref}.{spec.member}".lower()
