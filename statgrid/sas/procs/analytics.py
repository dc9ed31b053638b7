"""PROC SURVEYSELECT, STDIZE, FASTCLUS, HPCLUS and GLIMMIX in SAS programs, on statgrid's procedures
(procs/reshape.py, rank.py, mining.py, glimmix.py). The input (with its data-set options and WHERE) is
read once into a WORK member the procedure reads; OUT= is written by the procedure.

- SURVEYSELECT DATA= OUT= METHOD=SRS|SYS|URS N=|SAMPRATE= SEED= OUTHITS; STRATA vars.  (others: an ERROR)
- STDIZE DATA= OUT= METHOD=STD|RANGE|MEAN|MEDIAN|MAXABS|IQR|MAD REPLACE; VAR vars; BY vars.
- FASTCLUS DATA= MAXCLUSTERS=k MAXITER= OUT= OUTSTAT= SEED= (REPLACE=RANDOM) ; VAR vars.
- HPCLUS DATA= MAXCLUSTERS=k MAXITER= SEED= STANDARDIZE=STD; INPUT vars </ LEVEL=INTERVAL>; SCORE OUT=.
- GLIMMIX DATA= METHOD=; CLASS; MODEL y<(EVENT='v')> = effects / DIST=BINARY|BINOMIAL S;
  RANDOM INTERCEPT / SUBJECT=.
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.lexer import NAME
from statgrid.sas.parse.dsname import DatasetSpec, parse_dataset
from statgrid.sas.procs.common import DATASET, FLAG, VALUE, by_list, drop_member, var_names
from statgrid.sas.procs.step import Statements, begin, data_input, each_statement, fit_errors, stage_input

TEMP = "_sgproc_input"
SURVEYSELECT_OPTIONS = {"DATA": DATASET, "OUT": DATASET, "METHOD": VALUE, "M": VALUE, "N": VALUE, "SAMPSIZE": VALUE,
                        "SAMPRATE": VALUE, "RATE": VALUE, "SEED": VALUE, "NOPRINT": FLAG, "STATS": FLAG,
                        "OUTALL": FLAG, "SELECTALL": FLAG, "OUTHITS": FLAG}
STDIZE_OPTIONS = {"DATA": DATASET, "OUT": DATASET, "METHOD": VALUE, "REPLACE": FLAG, "REPONLY": FLAG, "MISSING": VALUE,
                  "OUTSTAT": DATASET, "PCTLDEF": VALUE}
FASTCLUS_OPTIONS = {"DATA": DATASET, "OUT": DATASET, "OUTSTAT": DATASET, "MAXCLUSTERS": VALUE, "MAXC": VALUE,
                    "MAXITER": VALUE, "SEED": VALUE, "NOPRINT": FLAG, "REPLACE": VALUE, "CONVERGE": VALUE,
                    "DRIFT": FLAG, "LIST": FLAG, "DISTANCE": FLAG, "SHORT": FLAG, "SUMMARY": FLAG, "RANDOM": VALUE}
HPCLUS_OPTIONS = {"DATA": DATASET, "MAXCLUSTERS": VALUE, "MAXITER": VALUE, "SEED": VALUE, "STANDARDIZE": VALUE,
                  "NOPRINT": FLAG, "NOC": VALUE, "DISTANCE": VALUE, "OUTITERINFO": FLAG, "IMPUTE": VALUE,
                  "IMPUTENOM": VALUE}
GLIMMIX_OPTIONS = {"DATA": DATASET, "METHOD": VALUE, "NOPRINT": FLAG, "PLOTS": VALUE, "NOCLPRINT": FLAG,
                   "ORDER": VALUE, "ITDETAILS": FLAG}


def _name(spec: DatasetSpec | None) -> str | None:
    return None if spec is None else f"{spec.libref}.{spec.member}".lower()


def _call(program, first, fn, *args, **kwargs):
    f = getattr(fn, "__wrapped__", fn)
    try:
        with fit_errors(first):
            return f(program.session, *args, **kwargs)
    finally:
        drop_member(program, DatasetSpec("WORK", TEMP.upper()))


def _out_spec(program, opts, key="OUT") -> DatasetSpec:
    spec = opts.get(key)
    if spec is None:
        from statgrid.sas.parse.dsname import next_data_name
        spec = DatasetSpec("WORK", next_data_name(program, "WORK"))
    return spec


def run_surveyselect(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, SURVEYSELECT_OPTIONS, "SURVEYSELECT",
                              {"M": "METHOD", "SAMPSIZE": "N", "RATE": "SAMPRATE"})
    src, cols = data_input(program, opts, first)
    strata, st = None, Statements(src, cols, ("WHERE",), ("ID", "CONTROL"))
    for stmt, kw, c in each_statement(rest):
        if kw == "STRATA":
            strata = var_names(c, cols)
        elif not st.read(kw, c):
            t = stmt.tokens[0]
            raise SasError(f"Statement {t.text.upper()} is not supported in PROC SURVEYSELECT", t.line, t.col,
                           t.text, "STRATA or WHERE")
    method = str(opts.get("METHOD", "SRS")).upper()
    if method not in ("SRS", "SYS", "URS"):
        line, col = opts.value_at.get("METHOD", (first.line, 0))
        raise SasError(f"METHOD={method} is not supported by statgrid's PROC SURVEYSELECT", line, col, method,
                       "METHOD=SRS (simple random sampling), SYS (systematic) or URS (with replacement)")
    if opts.get("OUTHITS") and method != "URS":
        raise SasError("The OUTHITS option is for METHOD=URS (selection with replacement)", first.line, 0,
                       "OUTHITS", "METHOD=URS OUTHITS, or leave OUTHITS out")
    data = stage_input(program, src, TEMP)
    from statgrid.procs.reshape import surveyselect
    n = opts.get("N")
    rate = opts.get("SAMPRATE")
    if rate is not None and float(rate) > 1:
        rate = float(rate) / 100.0                   # SAMPRATE=10 means 10 percent
    seed = opts.get("SEED")
    out, summary = _out_spec(program, opts), {}
    _call(program, first, surveyselect, data, _name(out), n=int(float(n)) if n is not None else None,
          rate=float(rate) if rate is not None else None, strata=strata, method=method.lower(),
          seed=int(float(seed)) if seed is not None else None, outhits=bool(opts.get("OUTHITS")), summary=summary)
    if not opts.get("NOPRINT"):
        _surveyselect_listing(program, method, strata, src, out, n, rate, summary)


SELECTION_METHODS = {"SRS": "Simple Random Sampling", "SYS": "Systematic Random Sampling",
                     "URS": "Unrestricted Random Sampling"}


def _surveyselect_listing(program, method: str, strata, src: DatasetSpec, out: DatasetSpec, n, rate,
                          summary: dict) -> None:
    """SAS's two tables of a selection (SAS/STAT SURVEYSELECT, "Displayed Output"): Sample Selection Method (ODS
    Method) and Sample Selection Summary (ODS Summary), as label-value pairs."""
    from statgrid.sas import ods
    from statgrid.sas.formats.numeric import best
    from statgrid.sas.ods import OdsColumn as Col, OdsTable

    def table(name: str, title: str, pairs: list[tuple[str, Any]]) -> OdsTable:
        rows = [[label, v if isinstance(v, str) else best(float(v), 8).strip(), None if isinstance(v, str) else v]
                for label, v in pairs]
        return OdsTable(name, title, [Col("Label1", "", "char"), Col("cValue1", "", "char", right=True),
                                      Col("nValue1", hidden=True)], rows, "Surveyselect", headings=False)
    method_rows: list[tuple[str, Any]] = [("Selection Method", SELECTION_METHODS[method])]
    if strata:
        method_rows.append(("Strata Variable" + ("s" if len(strata) > 1 else ""), " ".join(strata)))
    rows: list[tuple[str, Any]] = [("Input Data Set", src.member.upper()), ("Random Number Seed", summary["seed"])]
    size_word = "Stratum Sample Size" if strata else "Sample Size"
    if rate is not None:
        rows.append(("Stratum Sampling Rate" if strata else "Sampling Rate", float(rate)))
    elif n is not None:
        rows.append((size_word, int(float(n))))
    if strata:
        rows += [("Number of Strata", summary["strata"]), ("Total Sample Size", summary["sample"])]
    else:
        if rate is not None:
            rows.append(("Sample Size", summary["sample"]))
        if summary.get("prob"):
            rows += [("Expected Number of Hits" if method == "URS" else "Selection Probability", summary["prob"]),
                     ("Sampling Weight", 1.0 / summary["prob"])]
    rows.append(("Output Data Set", out.member.upper()))
    listing = ods.Listing(program, "SURVEYSELECT")
    listing.title()
    listing.table(table("Method", "", method_rows))
    listing.table(table("Summary", "", rows))
    listing.flush()


def run_stdize(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, STDIZE_OPTIONS, "STDIZE")
    src, cols = data_input(program, opts, first)
    var, by, st = None, None, Statements(src, cols, ("WHERE",), ())
    for stmt, kw, c in each_statement(rest):
        if kw == "VAR":
            var = var_names(c, cols)
        elif kw == "BY":
            by_stmt = by_list(c)
            by = [n for n, _ in by_stmt]
            _stdize_by(program, src, cols, by_stmt, stmt)
        elif not st.read(kw, c):
            t = stmt.tokens[0]
            raise SasError(f"Statement {t.text.upper()} is not supported in PROC STDIZE", t.line, t.col, t.text,
                           "VAR, BY or WHERE")
    data = stage_input(program, src, TEMP)
    from statgrid.procs.rank import standardize
    _call(program, first, standardize, data, _name(_out_spec(program, opts)), var=var, by=by,
          method=str(opts.get("METHOD", "STD")).lower(), replace=bool(opts.get("REPLACE")),
          pctldef=int(float(opts.get("PCTLDEF", 5))))


def _stdize_by(program, src, cols, by_stmt, stmt) -> None:
    """STDIZE standardizes each BY group by its values: the data must be sorted by them (SAS's ERROR when not);
    with NOTSORTED, each run of equal values is a group — built here only when no value comes back in a later
    run (then the runs are the values' groups), else a clear ERROR."""
    from statgrid.libraries import sql_ident
    from statgrid.sas.procs.byruns import RUN, by_columns, with_runs
    from statgrid.sas.dataset import input_sql
    from statgrid.sas.procs.common import check_by_sorted, resolve_names
    if not getattr(by_stmt, "notsorted", False):
        check_by_sorted(program, src, cols, by_stmt)
        return
    byc = by_columns(resolve_names([n for n, _ in by_stmt], cols, src, stmt.line), by_stmt)
    keys = ", ".join(sql_ident(c.name) for c in byc)
    staged = with_runs(input_sql(program, src, cols), byc)
    runs, groups = program.session.execute(
        f"SELECT count(DISTINCT {RUN}), count(DISTINCT ({keys})) FROM ({staged})").fetchall()[0]
    if runs != groups:
        t = stmt.tokens[0]
        raise SasError("PROC STDIZE in statgrid takes BY … NOTSORTED only when no BY value comes back in a later "
                       f"run ({runs} runs of {groups} values here)", t.line, t.col, "NOTSORTED",
                       "data sorted by the BY variables (PROC SORT), then BY without NOTSORTED")


def _clus(program, first, opts, src, var, out, outstat, standardize=False, proc_title="FASTCLUS") -> None:
    data = stage_input(program, src, TEMP)
    from statgrid.procs.mining import fastclus
    k = opts.get("MAXCLUSTERS")
    if k is None:
        t = first.tokens[0]
        raise SasError("MAXCLUSTERS= is required", t.line, t.col, "MAXCLUSTERS", "MAXCLUSTERS=k")
    _call(program, first, fastclus, data, var, int(float(k)), seed=int(float(opts.get("SEED", 1))),
          maxiter=int(float(opts.get("MAXITER", 100))), standardize=standardize, out=_name(out),
          outstat=_name(outstat), print=not opts.get("NOPRINT"), proc_title=proc_title)


def run_fastclus(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, FASTCLUS_OPTIONS, "FASTCLUS", {"MAXC": "MAXCLUSTERS"})
    src, cols = data_input(program, opts, first)
    var, st = None, Statements(src, cols, ("WHERE",), ())
    for stmt, kw, c in each_statement(rest):
        if kw == "VAR":
            var = var_names(c, cols)
        elif st.read(kw, c):
            continue
        elif kw in ("ID", "FREQ", "WEIGHT", "BY"):
            t = stmt.tokens[0]
            raise SasError(f"The {kw} statement of PROC FASTCLUS is not supported by statgrid yet", t.line, t.col,
                           kw, "VAR and WHERE")
        else:
            t = stmt.tokens[0]
            raise SasError(f"Statement {t.text.upper()} is not valid in PROC FASTCLUS", t.line, t.col, t.text, "VAR")
    _clus(program, first, opts, src, var, opts.get("OUT"), opts.get("OUTSTAT"))


def run_hpclus(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, HPCLUS_OPTIONS, "HPCLUS")
    src, cols = data_input(program, opts, first)
    var, out, st = [], None, Statements(src, cols, ("WHERE",), ("PERFORMANCE", "ID", "FREQ"))
    for stmt, kw, c in each_statement(rest):
        if kw == "INPUT":
            while not c.at_end() and not c.at("/"):
                var += var_names(c, cols)
            if c.accept("/"):
                level = " ".join(t.upper for t in c.tokens[c.i:])
                if "NOMINAL" in level:
                    raise SasError("HPCLUS with nominal inputs (k-modes) is not supported by statgrid", stmt.line,
                                   0, "NOMINAL", "LEVEL=INTERVAL inputs")
        elif kw == "SCORE":
            c.expect_kind(NAME, "OUT=")
            c.expect("=")
            out = parse_dataset(c, program)
        elif not st.read(kw, c):
            t = stmt.tokens[0]
            raise SasError(f"Statement {t.text.upper()} is not valid in PROC HPCLUS", t.line, t.col, t.text,
                           "INPUT, SCORE OUT=, WHERE")
    _clus(program, first, opts, src, var or None, out, None,
          standardize=str(opts.get("STANDARDIZE", "NONE")).upper() in ("STD", "RANGE"), proc_title="HPCLUS")


def run_glimmix(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, GLIMMIX_OPTIONS, "GLIMMIX")
    src, cols = data_input(program, opts, first)
    from statgrid.sas.procs.models import _model, _options_after_slash, class_statement
    classes, model, random, ropts, st = [], None, None, {}, Statements(src, cols, ("WHERE",), ())
    cspec: dict[str, Any] = {"class": classes, "class_opts": {}}
    for stmt, kw, c in each_statement(rest):
        if kw == "CLASS":
            class_statement(c, cspec)           # names, var(REF=) and / options as the model procedures read them
        elif kw == "MODEL":
            model = _model(c)
        elif kw == "RANDOM":
            words = []
            while not c.at_end() and not c.at("/"):
                words.append(c.next().text)
            random = " ".join(words)
            ropts = _options_after_slash(c) if c.accept("/") else {}
        elif not st.read(kw, c):
            t = stmt.tokens[0]
            raise SasError(f"Statement {t.text.upper()} is not supported in statgrid's PROC GLIMMIX", t.line, t.col,
                           t.text, "CLASS, MODEL, RANDOM, WHERE")
    if model is None or random is None:
        t = first.tokens[0]
        raise SasError("PROC GLIMMIX needs a MODEL and a RANDOM statement", t.line, t.col, "GLIMMIX",
                       "MODEL y = effects / DIST=BINARY; RANDOM INTERCEPT / SUBJECT=s;")
    dep, effects, dep_opts, mopts = model
    dist = str(mopts.get("DIST", mopts.get("D", "BINARY"))).upper()
    if dist not in ("BINARY", "BINOMIAL", "BIN", "B"):
        raise SasError(f"DIST={dist} is not supported by statgrid's PROC GLIMMIX", first.line, 0, dist,
                       "DIST=BINARY with a random intercept")
    subject = ropts.get("SUBJECT", ropts.get("SUB"))
    data = stage_input(program, src, TEMP)
    from statgrid.procs.glimmix import glimmix
    _call(program, first, glimmix, data, f"{dep} = {effects}", random.lower(), subject, class_=classes or None,
          event=dep_opts.get("EVENT", "first"), print=not opts.get("NOPRINT"),
          data_label=f"{src.libref}.{src.member}".upper(), solution=bool(mopts.get("S") or mopts.get("SOLUTION")),
          ref=cspec.get("class_ref") or None)

