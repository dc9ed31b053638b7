"""The Output Delivery System of a SAS program: the ODS statement's state and the tables PROCs publish.

A PROC makes each of its tables once, as an OdsTable (statgrid/sas/odstable.py), and hands it to a Listing:
the listing shows it (unless ODS LISTING CLOSE, or an ODS SELECT/EXCLUDE list leaves it out) and every ODS
OUTPUT selection that names it keeps it. When the step ends (`end_step`) each selection's tables become one
data set (all instances stacked, BY variables first, the union of their columns) or, with MATCH_ALL, one
data set per instance (ds, ds1, ds2 …, their names in the MATCH_ALL= macro variable); a selection no table
matched gets SAS's WARNING "Output 'x' was not created"; selections without PERSIST=PROC are cleared.
Behaviour from SAS 9.4 Output Delivery System: User's Guide (ODS OUTPUT, ODS SELECT/EXCLUDE, ODS TRACE,
ODS LISTING, ODS NOPROCTITLE statements).

Statements: ODS OUTPUT object<(MATCH_ALL<=mv> PERSIST=PROC|RUN)><=ds> … | CLOSE | CLEAR | SHOW;
ODS <LISTING> SELECT|EXCLUDE objects<(PERSIST)> | ALL | NONE; ODS LISTING <CLOSE>; ODS _ALL_ CLOSE;
ODS NOPROCTITLE | PROCTITLE; ODS TRACE ON|OFF. Other destinations (HTML, PDF, RTF, GRAPHICS …) get a NOTE:
statgrid writes the listing only.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

from statgrid.sas.cursor import TokenCursor
from statgrid.sas.lexer import NAME
from statgrid.sas.odstable import OdsColumn, OdsTable, render

NOT_CREATED = ("Output '{name}' was not created.  Make sure that the output object name, label, or path is "
               "spelled correctly.  Also, verify that the appropriate procedure options are used to produce the "
               "requested output object.  For example, verify that the NOPRINT option is not used.")
OTHER_DESTINATIONS_NOTE = "ODS {what} statement accepted; statgrid writes procedure output to the listing (.lst) only."

__all__ = ["OdsColumn", "OdsTable", "Listing", "statement", "proc_step", "end_step", "state_of"]


@dataclass
class Selection:
    """One ODS OUTPUT data-set definition."""
    spec: str                      # the output object as written: name, path or partial path
    target: Any = None             # DatasetSpec of the data set (None: DATAn)
    match_all: str | None = None   # None: off; "": on; else the macro variable for the data sets' names
    persist: str = ""              # "", "RUN" or "PROC"
    made: list[OdsTable] = field(default_factory=list)   # this step's matching tables


@dataclass
class OdsState:
    output: list[Selection] = field(default_factory=list)
    select: list[tuple[str, bool]] | None = None    # ODS SELECT objects (name, persist); None: no list
    exclude: list[tuple[str, bool]] | None = None
    everything: str = "ALL"        # ODS SELECT ALL / NONE (EXCLUDE ALL = SELECT NONE)
    listing_open: bool = True
    proctitle: bool = True
    trace: bool = False


def state_of(program: Any) -> OdsState:
    return program.extras.setdefault("ods", OdsState())


# ------------------------------------------------------------------------------------------ statements
def statement(stmt: Any, program: Any) -> None:
    """Run one ODS statement (the driver's global statement)."""
    c = TokenCursor(stmt.tokens, stmt.source)
    c.next()
    st = state_of(program)
    what = c.peek().upper if c.peek().kind == NAME else ""
    if what == "OUTPUT":
        c.next()
        _output_statement(c, program, st)
    elif what in ("SELECT", "EXCLUDE"):
        c.next()
        _select_statement(c, st, what)
    elif what == "LISTING":
        c.next()
        if c.accept("SELECT", "EXCLUDE"):
            _select_statement(c, st, c.tokens[c.i - 1].upper)
        else:
            st.listing_open = not c.accept("CLOSE")
    elif what == "_ALL_" and c.peek(1).is_("CLOSE"):
        st.listing_open = False
        st.output = []
    elif what in ("NOPROCTITLE", "PROCTITLE"):
        st.proctitle = what == "PROCTITLE"
    elif what == "TRACE":
        c.next()
        st.trace = bool(c.accept("ON", "YES", "OUTPUT"))
    else:
        program.log.note(OTHER_DESTINATIONS_NOTE.format(what=what).replace("ODS  ", "ODS "))
    if hasattr(program.log, "listing_gate"):
        program.log.listing_gate = functools.partial(unpublished_shown, program)


def _output_statement(c: TokenCursor, program: Any, st: OdsState) -> None:
    if c.accept("CLOSE", "CLEAR"):
        st.output = []
        return
    if c.accept("SHOW"):
        names = " ".join(s.spec for s in st.output) or "EXCLUDE ALL"
        program.log.note(f"Current OUTPUT select list: {names}" if st.output else "Current OUTPUT select list: "
                         "EXCLUDE ALL")
        return
    if c.at_end():
        raise c.error("Syntax error in the ODS OUTPUT statement", "an output object such as ParameterEstimates=pe")
    while not c.at_end():
        sel = _definition(c, program)
        st.output = [s for s in st.output if s.spec.upper() != sel.spec.upper()] + [sel]


def _definition(c: TokenCursor, program: Any) -> Selection:
    from statgrid.sas.parse.dsname import parse_dataset

    if c.peek().kind != NAME:
        raise c.error("Syntax error in the ODS OUTPUT statement", "an output object name such as ParameterEstimates")
    sel = Selection(c.dotted_name("an output object name"))
    if c.accept("("):
        while not c.accept(")"):
            t = c.expect_kind(NAME, "MATCH_ALL or PERSIST=")
            if t.upper == "MATCH_ALL":
                sel.match_all = c.expect_name("a macro variable name").upper() if c.accept("=") else ""
            elif t.upper == "PERSIST":
                sel.persist = "PROC"
                if c.accept("="):
                    v = c.expect_kind(NAME, "PROC or RUN")
                    if v.upper not in ("PROC", "RUN"):
                        raise c.error(f"PERSIST={v.text} is not valid", "PERSIST=PROC or PERSIST=RUN", v)
                    sel.persist = v.upper
            else:
                raise c.error(f"The option {t.text} is not valid for an ODS OUTPUT object", "MATCH_ALL or PERSIST=",
                              t)
    if c.accept("="):
        sel.target = parse_dataset(c, program)
    return sel


def _select_statement(c: TokenCursor, st: OdsState, verb: str) -> None:
    if c.accept("ALL", "NONE"):
        word = c.tokens[c.i - 1].upper
        st.everything = word if verb == "SELECT" else ("NONE" if word == "ALL" else "ALL")
        st.select = st.exclude = None
        return
    items = []
    while not c.at_end():
        if c.peek().kind != NAME:
            raise c.error(f"Syntax error in the ODS {verb} statement", "an output object name, ALL or NONE")
        name = c.dotted_name("an output object name")
        persist = False
        if c.accept("("):
            persist = bool(c.accept("PERSIST"))
            c.expect(")")
        items.append((name, persist))
    st.everything = "ALL"
    if verb == "SELECT":
        st.select, st.exclude = items, None
    else:
        st.exclude, st.select = items, None


# ------------------------------------------------------------------------------------------ tables
# The output objects of the PROCs that write their listing as text rather than through Listing (SAS's "ODS Table
# Names" of each): ODS SELECT/EXCLUDE name them; a PROC not here is one object named after it.
UNPUBLISHED_OBJECTS = {"PRINT": ("Print",), "SQL": ("SQL_Results",), "TABULATE": ("Table",),
                       "CONTENTS": ("Attributes", "EngineHost", "Variables", "Sortedby", "Directory", "Members"),
                       "DATASETS": ("Directory", "Members"), "FORMAT": ("FormatLibrary",)}


def unpublished_shown(program: Any) -> bool:
    """Does the listing take the running step's text output (SasLog.listing_gate)? Not while ODS LISTING is
    closed; for a PROC, only when its output objects pass ODS SELECT/EXCLUDE (a DATA step's FILE PRINT output
    follows LISTING CLOSE only)."""
    st = state_of(program)
    if not st.listing_open:
        return False
    step = _running_step(program)
    if not step.startswith("PROC "):
        return True
    proc = step[5:].strip()
    names = UNPUBLISHED_OBJECTS.get(proc, (proc.title(),))
    return any(_shown(st, OdsTable(n, "", [], [], proc.title())) for n in names)


def _running_step(program: Any) -> str:
    """The name of the step the session is running ('PROC PRINT', 'DATA'; '' between steps): session.step keeps
    it while the step runs."""
    info = getattr(getattr(program, "session", None), "_current", None)
    return str(getattr(info, "name", "") or "").upper()


def _shown(st: OdsState, table: OdsTable) -> bool:
    if not st.listing_open:
        return False
    if st.select is not None:
        return any(table.matches(n) for n, _ in st.select)
    if st.exclude is not None:
        return not any(table.matches(n) for n, _ in st.exclude)
    return st.everything == "ALL"


def _trace(program: Any, table: OdsTable) -> None:
    for line in ("", "Output Added:", "-------------", f"Name:       {table.name}", f"Label:      {table.title}",
                 f"Path:       {table.full_path}", "-------------"):
        program.log.put(line)


class Listing:
    """A PROC's output of one step (or BY group): the procedure title, tables and text, written to the listing
    as one block by flush() (SasLog.listing starts a page per call)."""

    def __init__(self, program: Any, proc_title: str):
        self.program, self.proc_title, self.lines = program, proc_title, []
        self.state = state_of(program)
        self.shown = False             # a table or text reached the block (a title alone is not written)

    def title(self) -> None:
        """'The REG Procedure' (unless ODS NOPROCTITLE), once per block."""
        if self.state.proctitle and self.proc_title:
            self.lines += [f"The {self.proc_title} Procedure", ""]

    def text(self, *lines: str) -> None:
        if self.state.listing_open:
            self.lines += list(lines)
            self.shown = True

    def table(self, table: OdsTable, text: list[str] | None = None) -> None:
        """Publish `table`: kept by the ODS OUTPUT selections naming it; shown as `text` (the PROC's own layout)
        or rendered, unless the listing is closed or an ODS SELECT/EXCLUDE list leaves it out."""
        for sel in self.state.output:
            if table.matches(sel.spec):
                sel.made.append(table)
        if self.state.trace:
            _trace(self.program, table)
        if _shown(self.state, table):
            self.lines += (render(table) if text is None else list(text)) + [""]
            self.shown = True
            shown = getattr(self.program.log, "tables_shown", None)
            if shown is not None:          # a notebook kernel's log: it shows the tables as HTML (kernels/render.py);
                shown.append(table if text is None else None)     # None: shown in the PROC's own text layout

    def flush(self) -> None:
        while self.lines and not self.lines[-1].strip():
            self.lines.pop()
        if self.lines and self.shown:
            self.program.log.listing("\n".join(self.lines), published=True)
        self.lines, self.shown = [], False


def publish_only(program: Any, tables: list[OdsTable], by: list) -> None:
    """Tables of a PROC that writes its own listing text (HPMIXED, SURVEYLOGISTIC, GENMOD's GEE): kept by the ODS
    OUTPUT selections naming them, never shown a second time."""
    out = Listing(program, "")
    for table in tables:
        table.by = by
        out.table(table, [])
    out.flush()


# ------------------------------------------------------------------------------------------ step end
def proc_step(fn: Callable[..., None]) -> Callable[..., None]:
    """A PROC runner `fn(statements, program, *rest)` whose step ends with end_step (the ODS OUTPUT data sets,
    warnings, selections cleared)."""
    @functools.wraps(fn)
    def run(statements: Any, program: Any, *rest: Any) -> None:
        ok = False
        try:
            fn(statements, program, *rest)
            ok = True
        finally:
            end_step(program, failed=not ok)
    return run


def end_step(program: Any, failed: bool = False) -> None:
    """The end of a PROC step: each selection that matched a table is written (not after an ERROR); a selection
    that matched none gets SAS's WARNING unless it persists; selections and SELECT/EXCLUDE lists without
    PERSIST are cleared. Calling it twice for one step is harmless."""
    st = state_of(program)
    for sel in st.output:
        if sel.made and not failed:
            _write(program, sel)
        elif not sel.made and not failed and sel.persist != "PROC":
            program.log.warning(NOT_CREATED.format(name=sel.spec))
        sel.made = []
    st.output = [s for s in st.output if s.persist == "PROC"]
    if st.select is not None:
        st.select = [x for x in st.select if x[1]] or None
    if st.exclude is not None:
        st.exclude = [x for x in st.exclude if x[1]] or None


def _write(program: Any, sel: Selection) -> None:
    from statgrid.sas.parse.dsname import DatasetSpec, next_data_name
    from statgrid.sas.procs.common import write_rows

    target = sel.target or DatasetSpec("WORK", next_data_name(program, "WORK"))
    groups = [[t] for t in sel.made] if sel.match_all is not None else [sel.made]
    names = []
    for k, tables in enumerate(groups):
        spec = target if k == 0 else DatasetSpec(target.libref, f"{target.member}{k}"[:32])
        cols, rows = _stack(tables)
        write_rows(program, spec, cols, rows)
        names.append(f"{spec.libref}.{spec.member}")
    if sel.match_all and program.symbols is not None:
        program.symbols.set_global(sel.match_all, " ".join(names))


def _stack(tables: list[OdsTable]) -> tuple[list[Any], list[list[Any]]]:
    """The tables' rows in one data set: BY variables first, then the union of the columns in order of first
    appearance (a column a table lacks is missing in its rows)."""
    from statgrid.sas.dataset import ColumnInfo

    order: dict[str, ColumnInfo] = {}
    for t in tables:
        for b, _ in t.by:
            order.setdefault(b.name.upper(), ColumnInfo(b.name, b.type, b.length, b.format, "", b.label))
    for t in tables:
        for c in t.columns:
            if c.name.upper() not in order:
                order[c.name.upper()] = ColumnInfo(c.name, c.type, 8, "", "", c.label)
    rows = []
    for t in tables:
        where = {b.name.upper(): v for b, v in t.by}
        idx = {c.name.upper(): j for j, c in enumerate(t.columns)}
        for r in t.rows:
            rows.append([where[k] if k in where else (r[idx[k]] if k in idx else None) for k in order])
    cols = list(order.values())
    for j, col in enumerate(cols):
        if col.type == "char":
            col.length = max([1] + [len(str(r[j])) for r in rows if r[j] is not None])
    return cols, rows
