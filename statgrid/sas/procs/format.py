"""PROC FORMAT (SAS 9.4 Base Procedures, FORMAT): VALUE, INVALUE and PICTURE with ranges into the program's
FormatCatalog (statgrid/sas/formats/catalog.py), kept in LIBRARY= (default WORK) so later steps — and
later programs, for a permanent library — find them.

    proc format library=mylib cntlin=work.ctl cntlout=work.out fmtlib;
      value agegrp (default=8) low -< 13 = 'Child'  13 - 19 = 'Teen'  20 - high = 'Adult'  other = '?';
      value $sexf 'F' = 'Female'  'M', 'm' = 'Male';
      invalue yn 'Y' = 1  'N' = 0  other = _error_;
      picture pay (round) low-<0 = '0,009.99' (prefix='-$')  0-high = '0,009.99' (prefix='$' fill='*');
      picture dmy (default=11) other = '%0d-%b-%Y' (datatype=date);

Ranges: single values, lists (`1, 3, 5`), `a - b`, `a <- b` / `a -< b` / `a <-< b` (exclusive ends), LOW,
HIGH, OTHER, `.` and special missings `.A`; labels: quoted text, `[fmt.]` (a format for the values of the
range), for numeric informats a number, `_SAME_` or `_ERROR_`. Options in parentheses after the name:
DEFAULT= MIN= MAX= FUZZ= NOTSORTED MULTILABEL (VALUE, PICTURE), ROUND (PICTURE), and JUST UPCASE
(INVALUE); after a picture PREFIX= FILL= MULT= NOEDIT DATATYPE= (statgrid/sas/formats/picture.py fills it).
CNTLIN= reads SAS's control data set (FMTNAME START END LABEL TYPE HLO SEXCL EEXCL DEFAULT MIN MAX FUZZ),
CNTLOUT= writes one, FMTLIB prints each format's ranges in SAS's box. The NOTE is SAS's
"NOTE: Format AGEGRP has been output." A format name may not end in a digit (SAS's rule); overlapping
ranges are SAS's ERROR "This range is repeated, or values overlap" unless the format is MULTILABEL.
CNTLOUT= adds SAS's PREFIX MULT FILL NOEDIT DATATYPE columns (TYPE='P' for a picture, HLO 'M' multilabel,
'R' round); FMTLIB shows a picture's label as SAS does: the picture, then P<prefix> F<fill> M<mult>.
"""
from __future__ import annotations

from typing import Any

from statgrid.sas.dataset import input_sql, column_info, write_dataset
from statgrid.sas.errors import SasError
from statgrid.sas.formats.catalog import DEFAULT_CATALOG, cntlout_rows, formats_from_cntlin
from statgrid.sas.formats.userformat import FormatRange, PictureOptions, UserFormat
from statgrid.sas.formats.numeric import InvalidData, best
from statgrid.sas.formats.picture import DATATYPES, default_mult
from statgrid.sas.lexer import NAME, NUM, STR
from statgrid.sas.procs.common import (DATASET, FLAG, cursor, fetch_rows, observations_read, parse_options,
                                       proc_statement, statement_error)
from statgrid.sas.values import MISSING, num_key, special_missing

OPTIONS = {"LIBRARY": "value", "CNTLIN": DATASET, "CNTLOUT": DATASET, "FMTLIB": FLAG, "PAGE": FLAG,
           "NOREPLACE": FLAG, "MAXLABLEN": "value", "MAXSELEN": "value", "LOCALE": FLAG, "NOLIST": FLAG}
ALIASES = {"LIB": "LIBRARY", "DDNAME": "LIBRARY"}
STATEMENTS = ("VALUE", "INVALUE", "PICTURE", "SELECT", "EXCLUDE")
VALUE_OPTIONS = ("DEFAULT", "MIN", "MAX", "FUZZ", "NOTSORTED", "MULTILABEL", "JUST", "UPCASE", "ROUND")
_FLAG_FIELDS = {"NOTSORTED": "notsorted", "MULTILABEL": "multilabel", "JUST": "just", "UPCASE": "upcase",
                "ROUND": "round"}
# which statement takes which flag (SAS: MULTILABEL on VALUE and PICTURE, ROUND on PICTURE, JUST/UPCASE on INVALUE)
_FLAG_STATEMENTS = {"MULTILABEL": ("VALUE", "PICTURE"), "ROUND": ("PICTURE",), "JUST": ("INVALUE",),
                    "UPCASE": ("INVALUE",)}
_NUMBER_FIELDS = {"DEFAULT": ("default", int), "MIN": ("min_width", int), "MAX": ("max_width", int),
                  "FUZZ": ("fuzz", float)}


def run(statements: list, program: Any) -> None:
    first, *rest = list(statements)
    c = proc_statement(first)
    opts = parse_options(c, OPTIONS, program, "PROC FORMAT", ALIASES)
    lib, cat = _library(first, opts)
    catalog = program.formats
    if catalog is None:
        raise SasError("User formats are not available in this statgrid build", first.line, 0, "PROC FORMAT")
    directory = _lib_dir(program, lib, first, opts)
    defined: list[UserFormat] = []
    select = exclude = None
    cntlin = opts.get("CNTLIN")
    if cntlin is not None:
        cols = column_info(program, cntlin)
        names, rows = fetch_rows(program, input_sql(program, cntlin, cols))
        observations_read(program, len(rows), cntlin)
        for fmt in formats_from_cntlin(dict(zip(names, r)) for r in rows):
            defined.append(fmt)
    for stmt in rest:
        kw = stmt.keyword
        sc = cursor(stmt)
        sc.next()
        if kw in ("VALUE", "INVALUE"):
            defined.append(parse_value(sc, informat=kw == "INVALUE"))
        elif kw == "PICTURE":
            defined.append(parse_picture(sc))
        elif kw in ("SELECT", "EXCLUDE"):
            names = []
            while not sc.at_end():
                t = sc.next()
                names.append(t.text.upper() if t.kind == NAME else t.text)
            names = _join_dollar(names)
            if kw == "SELECT":
                select = (select or []) + names
            else:
                exclude = (exclude or []) + names
        elif kw in ("TITLE", "FOOTNOTE"):
            continue
        else:
            raise statement_error(stmt, "FORMAT", STATEMENTS)
    dry = bool(getattr(program, "syntax_check", False))
    for fmt in defined:
        if opts.get("NOREPLACE") and catalog.get(fmt.name, informat=fmt.informat) is not None:
            program.log.warning(f"{'Informat' if fmt.informat else 'Format'} {fmt.name} is already on the library "
                                f"{lib}.{cat}; NOREPLACE keeps it.")
            continue
        if dry:
            continue                       # syntax-check mode: the catalog is not changed
        catalog.define(fmt, lib, cat, directory=directory)
        program.log.note(f"{'Informat' if fmt.informat else 'Format'} {fmt.name} has been output.")
    if opts.get("FMTLIB") or opts.get("CNTLOUT") is not None:
        chosen = _chosen(catalog, lib, cat, select, exclude)
        if opts.get("FMTLIB"):
            text = "\n\n".join(fmtlib_box(f) for f in chosen)
            if text:
                program.log.listing(text)
        if opts.get("CNTLOUT") is not None:
            _cntlout(program, opts.get("CNTLOUT"), chosen)


def _join_dollar(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for t in tokens:
        if out and out[-1] == "$":
            out[-1] = "$" + t.upper()
        else:
            out.append(t.upper())
    return out


def _library(first, opts) -> tuple[str, str]:
    v = opts.get("LIBRARY")
    if v is None:
        return "WORK", DEFAULT_CATALOG
    text = str(v)
    # LIBRARY=lib.cat arrives as the NAME, then '.' and NAME tokens: read them from the statement
    toks = first.tokens
    for i, t in enumerate(toks[:-3]):
        if t.is_("LIBRARY", "LIB", "DDNAME") and toks[i + 1].is_("=") and toks[i + 3].is_(".") \
                and toks[i + 2].touches(toks[i + 3]):
            return toks[i + 2].text.upper(), toks[i + 4].text.upper()
    return text.upper(), DEFAULT_CATALOG


def _lib_dir(program: Any, lib: str, first, opts):
    try:
        return program.session.libraries.get(lib.lower()).path
    except Exception:  # noqa: BLE001
        line, col = opts.where.get("LIBRARY", (first.line, 0))
        raise SasError(f"Libref {lib} is not assigned", line, col, lib, "a library assigned with LIBNAME") from None


# -- VALUE / INVALUE ------------------------------------------------------------------------------------------
def parse_value(c, informat: bool) -> UserFormat:
    fmt = _head(c, informat, "INVALUE" if informat else "VALUE")
    char = fmt.char
    numeric_keys = not char and not informat
    while not c.at_end():
        ranges = []
        while True:
            ranges.append(_range(c, numeric_keys))
            if not c.accept(","):
                break
        eq = c.expect("=", expected="= and a label")
        label, label_fmt = _label(c, fmt, eq)
        for r in ranges:
            r.label, r.label_format = label, label_fmt
            fmt.ranges.append(r)
    _check_overlap(fmt, numeric_keys)
    return fmt


def _head(c, informat: bool, statement: str) -> UserFormat:
    """`<$>name <(options)>` of a VALUE, INVALUE or PICTURE statement."""
    if statement == "PICTURE" and c.at("$"):
        raise c.error("A PICTURE format is numeric: its name cannot start with $", "a name without $")
    char = bool(c.accept("$"))
    t = c.expect_kind(NAME, "a format name")
    name = t.text.upper()
    if name[-1].isdigit():
        raise SasError(f"The {'informat' if informat else 'format'} name {name} ends in a number, which is not "
                       "allowed", t.line, t.col, t.text, "a name that ends in a letter or _")
    if len(name) > 32:
        raise SasError(f"The format name {name} is longer than 32 characters", t.line, t.col, t.text)
    fmt = UserFormat(("$" if char else "") + name, informat=informat)
    if c.at("("):
        c.next()
        while not c.accept(")"):
            o = c.expect_kind(NAME, "an option such as DEFAULT=")
            up = o.upper
            if up not in VALUE_OPTIONS:
                raise c.error(f"The option {o.text} is not recognized", "one of " + ", ".join(VALUE_OPTIONS), o)
            if up in _FLAG_FIELDS:
                if statement not in _FLAG_STATEMENTS.get(up, (statement,)):
                    raise c.error(f"The option {o.text} is not valid in the {statement} statement",
                                  "an option of " + " or ".join(_FLAG_STATEMENTS[up]), o)
                setattr(fmt, _FLAG_FIELDS[up], True)
                continue
            c.expect("=", expected="=")
            vt = c.expect_kind(NUM, f"a number after {up}=")
            field_name, kind = _NUMBER_FIELDS[up]
            if up in ("DEFAULT", "MIN", "MAX") and not 1 <= vt.value <= 32767:   # a format's width range
                raise SasError(f"The {up}= value {vt.text} is not valid", vt.line, vt.col, vt.text,
                               "a width from 1 to 32767")
            setattr(fmt, field_name, kind(vt.value))
    return fmt


# -- PICTURE --------------------------------------------------------------------------------------------------
PICTURE_OPTIONS = ("PREFIX", "FILL", "MULT", "MULTIPLIER", "NOEDIT", "DATATYPE")
MAX_PICTURE = 40                                         # SAS: "The maximum length for a picture is 40 characters"


def parse_picture(c) -> UserFormat:
    """PICTURE name <(DEFAULT= MIN= MAX= FUZZ= ROUND MULTILABEL NOTSORTED)> range <, range> = 'picture'
    <(PREFIX='p' FILL='c' MULT=n NOEDIT DATATYPE=DATE|TIME|DATETIME)> …"""
    fmt = _head(c, False, "PICTURE")
    fmt.picture = True
    while not c.at_end():
        ranges = []
        while True:
            ranges.append(_range(c, True))
            if not c.accept(","):
                break
        c.expect("=", expected="= and a picture in quotation marks")
        t = c.peek()
        if t.kind != STR:
            raise c.error("A picture must be in quotation marks", "a picture such as '000,009.99'", t)
        c.next()
        if len(t.value) > MAX_PICTURE:
            raise c.error(f"The picture {t.value!r} is longer than {MAX_PICTURE} characters",
                          f"a picture of at most {MAX_PICTURE} characters", t)
        opts = _picture_options(c)
        if opts.mult is None:                            # SAS keeps the default it computed (FMTLIB shows M100)
            opts.mult = default_mult(t.value)
        for r in ranges:
            r.label, r.pic = t.value, opts
            fmt.ranges.append(r)
    _check_overlap(fmt, True)
    return fmt


def _picture_options(c) -> PictureOptions:
    o = PictureOptions()
    if not c.accept("("):
        return o
    while not c.accept(")"):
        t = c.expect_kind(NAME, "PREFIX=, FILL=, MULT=, NOEDIT or DATATYPE=")
        up = t.upper
        if up not in PICTURE_OPTIONS:
            raise c.error(f"The picture option {t.text} is not recognized", "one of " + ", ".join(PICTURE_OPTIONS), t)
        if up == "NOEDIT":
            o.noedit = True
            continue
        c.expect("=", expected="=")
        v = c.next()
        if up in ("PREFIX", "FILL"):
            if v.kind != STR:
                raise c.error(f"{up}= needs a quoted value", f"{up}='$'", v)
            if up == "FILL":
                if len(v.value) != 1:
                    raise c.error(f"FILL={v.text} is not one character", "one character such as FILL='*'", v)
                o.fill = v.value
            else:
                if len(v.value) > 4:
                    raise c.error(f"PREFIX={v.text} is longer than 4 characters", "a prefix of up to 4 characters", v)
                o.prefix = v.value
        elif up in ("MULT", "MULTIPLIER"):
            neg = v.is_("-")
            if neg:
                v = c.next()
            if v.kind != NUM:
                raise c.error(f"{up}= needs a number", "MULT=100", v)
            o.mult = -v.value if neg else float(v.value)
        else:
            if v.upper not in DATATYPES:
                raise c.error(f"DATATYPE={v.text} is not a data type", "DATATYPE=DATE, TIME or DATETIME", v)
            o.datatype = v.upper
    return o


def _value(c, numeric: bool) -> Any:
    """One end of a range: a number (maybe negative), `.`/`.A`, or a quoted string."""
    t = c.peek()
    if t.kind == STR:
        c.next()
        if numeric and t.suffix in ("D", "T", "DT"):
            return _date_literal(c, t)
        if numeric:
            try:
                return float(t.value) if t.value.strip() else MISSING
            except ValueError:
                raise c.error("A character value is given for a numeric format", "a number", t) from None
        return t.value.rstrip(" ")
    if t.is_("-") and c.peek(1).kind == NUM:
        c.next()
        v = -c.next().value
        return v if numeric else best(v, 16).strip()
    if t.kind == NUM:
        c.next()
        return float(t.value) if numeric else t.text
    if t.is_("."):
        c.next()
        nxt = c.peek()
        if nxt.kind == NAME and t.touches(nxt) and len(nxt.text) == 1:
            c.next()
            return special_missing(nxt.text.upper())
        if nxt.is_("_") and t.touches(nxt):
            c.next()
            return special_missing("_")
        return MISSING
    raise c.error("Syntax error in a range", "a value, LOW, HIGH or OTHER", t)


def _date_literal(c, t) -> float:
    """'01jan2020'd, '10:30't, '01jan2020:10:30'dt as a range end (a PICTURE with DATATYPE= often has them)."""
    from statgrid.sas.formats.dates import read_date, read_datetime, read_time
    reader = {"D": read_date, "T": read_time, "DT": read_datetime}[t.suffix]
    try:
        v = reader(t.value)
    except InvalidData:
        v = MISSING
    if v != v:
        raise c.error(f"Invalid date/time/datetime constant {t.text}", "a constant such as '01jan2020'd", t)
    return float(v)


def _range(c, numeric: bool) -> FormatRange:
    r = FormatRange()
    if c.accept("OTHER"):
        r.other = True
        return r
    if c.accept("LOW"):
        r.low = True
    else:
        r.start = _value(c, numeric)
    # `-`, `<-`, `-<`, `<-<` between the ends (the lexer gives '<' and '-' as their own tokens)
    if c.at("<") and c.peek(1).is_("-"):
        c.next(), c.next()
        r.start_excl = True
        _range_end(c, r, numeric)
    elif c.at("-"):
        c.next()
        _range_end(c, r, numeric)
    elif r.low:
        raise c.error("LOW must start a range", "- after LOW")
    else:
        r.end = r.start
    return r


def _range_end(c, r: FormatRange, numeric: bool) -> None:
    if c.accept("<"):
        r.end_excl = True
    if c.accept("HIGH"):
        r.high = True
    else:
        r.end = _value(c, numeric)


def _label(c, fmt: UserFormat, eq) -> tuple[Any, str | None]:
    t = c.peek()
    if t.is_("["):
        c.next()
        f = c.format_name("a format in [ ] such as [date9.]")
        c.expect("]", expected="]")
        return "", f
    if t.kind == STR:
        c.next()
        if fmt.informat and not fmt.char:
            u = t.value.strip().upper()
            if u in ("_SAME_", "_ERROR_"):
                return u, None
            try:
                return float(t.value), None
            except ValueError:
                raise c.error("A numeric informat's value must be a number", "a number, _SAME_ or _ERROR_", t) \
                    from None
        return t.value, None
    if t.kind == NAME and t.upper in ("_SAME_", "_ERROR_"):
        c.next()
        return t.upper, None
    if t.kind == NUM or (t.is_("-") and c.peek(1).kind == NUM):
        neg = bool(c.accept("-"))
        v = c.next()
        num = -v.value if neg else v.value
        if fmt.informat and not fmt.char:
            return float(num), None
        return ("-" if neg else "") + v.text, None
    if t.is_("."):
        c.next()
        return (MISSING if fmt.informat and not fmt.char else "."), None
    if t.kind == NAME:                                   # an unquoted one-word label
        c.next()
        return t.text, None
    raise c.error("Syntax error after =", "a quoted label", t)


def _check_overlap(fmt: UserFormat, numeric: bool) -> None:
    """SAS: "ERROR: This range is repeated, or values overlap: a-b." (VALUE — numeric or character — and
    PICTURE formats without MULTILABEL, which allows overlapping ranges)."""
    if fmt.notsorted or fmt.multilabel or (not numeric and (fmt.informat or not fmt.char)):
        return
    spans = []
    for r in fmt.ranges:
        if r.other:
            continue
        end = r.end if r.end is not None else r.start
        if numeric:
            # LOW starts at the smallest number (it does not take in missing values), HIGH ends past the largest
            lo = (28, float("-inf"), 0) if r.low else (*num_key(r.start), 1 if r.start_excl else 0)
            hi = (29, 0.0, 0) if r.high else (*num_key(end), -1 if r.end_excl else 0)
        else:                                            # text: LOW before every value, HIGH after
            lo = (0, "", 0) if r.low else (1, str(r.start), 1 if r.start_excl else 0)
            hi = (2, "", 0) if r.high else (1, str(end), -1 if r.end_excl else 0)
        spans.append((lo, hi, r))
    spans.sort(key=lambda s: s[0])
    for (lo1, hi1, r1), (lo2, hi2, r2) in zip(spans, spans[1:]):
        a = hi1[:2]
        b = lo2[:2]
        if a > b or (a == b and not (r1.end_excl or r2.start_excl)):
            text = f"{_end_text(r2.start, r2.low, 'LOW')}-{_end_text(r2.end, r2.high, 'HIGH')}"
            raise SasError(f"This range is repeated, or values overlap: {text}", text=text,
                           expected="ranges that do not overlap (or the MULTILABEL option)")


def _end_text(v: Any, flag: bool, word: str) -> str:
    if flag:
        return word
    if isinstance(v, float):
        return "." if v != v else best(v, 16).strip()
    return str(v)


# -- output ---------------------------------------------------------------------------------------------------
def _chosen(catalog, lib: str, cat: str, select, exclude) -> list[UserFormat]:
    # SAS lists a catalog's entries by name ($ or not), formats before informats of the same name
    fmts = sorted(catalog.formats(lib, cat), key=lambda f: (f.name.lstrip("$"), f.informat, f.char))
    if select is not None:
        fmts = [f for f in fmts if f.name in select]
    if exclude is not None:
        fmts = [f for f in fmts if f.name not in exclude]
    return fmts


def fmtlib_box(fmt: UserFormat) -> str:
    """One format as FMTLIB prints it: a box with the name, lengths, and START | END | LABEL rows."""
    inner = 74
    rule = "-" * (inner + 2)
    kind = "INFORMAT NAME" if fmt.informat else "FORMAT NAME"
    head1 = f"{kind}: {fmt.name:<9}LENGTH: {fmt.default_width:>4}   NUMBER OF VALUES: {len(fmt.ranges):>4}"
    fuzz = "STD" if fmt.fuzz == 1e-12 else best(fmt.fuzz, 8).strip()
    head2 = (f"MIN LENGTH: {fmt.min_width:>3}  MAX LENGTH: {fmt.max_width:>3}  DEFAULT LENGTH: "
             f"{fmt.default_width:>3}  FUZZ: {fuzz}")
    lines = [rule, "|" + head1.center(inner) + "|", "|" + head2.center(inner) + "|", "|" + "-" * inner + "|",
             "|" + f"{'START':<16}|{'END':<16}|{'LABEL':<40}" + "|",
             "|" + "-" * 16 + "+" + "-" * 16 + "+" + "-" * 40 + "|"]
    numeric = not fmt.char and not fmt.informat
    for r, row in zip(fmt.ranges, cntlout_rows(fmt)):
        def side(text, flag, v):
            if flag or r.other:
                return text.ljust(16)
            return text.rjust(16) if numeric and isinstance(v, float) else text.ljust(16)
        start = side(row["START"], r.low, r.start)[:16]
        end = side(row["END"], r.high, r.end if r.end is not None else r.start)[:16]
        mid = "<" if r.start_excl else "|"
        after = "<" if r.end_excl else "|"
        label = str(row["LABEL"])
        if r.pic is not None:                            # SAS: the picture, then P<prefix> F<fill> M<mult>
            label = f"{label:<20}P{r.pic.prefix:<3}F{r.pic.fill} M{row['MULT_TEXT']}"
        lines.append(f"|{start}{mid}{end}{after}{label[:40]:<40}|")
    lines.append(rule)
    return "\n".join(lines)


_CNTLOUT_CHAR = {"FMTNAME": 32, "START": 16, "END": 16, "LABEL": 40, "PREFIX": 2, "FILL": 1, "TYPE": 1, "SEXCL": 1,
                 "EEXCL": 1, "HLO": 11, "DATATYPE": 8}
_CNTLOUT_ORDER = ["FMTNAME", "START", "END", "LABEL", "MIN", "MAX", "DEFAULT", "LENGTH", "FUZZ", "PREFIX", "MULT",
                  "FILL", "NOEDIT", "TYPE", "SEXCL", "EEXCL", "HLO", "DATATYPE"]


def _cntlout(program: Any, spec, fmts: list[UserFormat]) -> None:
    import pyarrow as pa

    rows = [r for f in fmts for r in cntlout_rows(f)]
    arrays = {}
    for n in _CNTLOUT_ORDER:
        vals = [r.get(n) for r in rows]
        if n in _CNTLOUT_CHAR:
            arrays[n] = pa.array([None if v is None else str(v) for v in vals], pa.string())
        else:
            arrays[n] = pa.array([None if v is None else float(v) for v in vals], pa.float64())
    meta = {n: {"length": _CNTLOUT_CHAR.get(n, 8)} for n in _CNTLOUT_ORDER}
    write_dataset(program, spec, pa.table(arrays), meta)
