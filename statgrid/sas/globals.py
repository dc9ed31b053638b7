"""SAS global statements: they take effect where they stand, inside a step or between steps.

LIBNAME (a directory as a statgrid library; engines BASE/V9 accepted; ACCESS=READONLY; CLEAR; LIST),
FILENAME (a file, several files read as one stream, a directory, TEMP; CLEAR; LIST), OPTIONS,
TITLE1–10 / FOOTNOTE1–10, ENDSAS, ODS (statgrid/sas/ods.py: OUTPUT, SELECT/EXCLUDE, LISTING, TRACE; others a NOTE), DM (ignored in batch) and X / SYSTASK,
which are refused: a grid job gets no shell through a statement. Behaviour from SAS 9.4 Global Statements:
Reference. Standard library only.
"""
from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path
from typing import Callable

from statgrid.errors import LibraryError
from statgrid.sas.context import Fileref, ProgramState
from statgrid.sas.cursor import TokenCursor
# SHELL_ESCAPE_REFUSED: what X, SYSTASK, CALL SYSTEM, %SYSEXEC and FILENAME PIPE say (errors.py). SAS's own
# words under NOXCMD are "Shell escape is not valid in this SAS session."; statgrid has no XCMD switch on
# purpose: a command runs as a grid job of its own, where it is placed, limited and accounted like any job.
from statgrid.sas.errors import SHELL_ESCAPE_REFUSED, SasError, SasSyntaxError
from statgrid.sas.lexer import NAME, NUM, OP, SEMI, STR
from statgrid.sas.statement import Statement

STARTUP_LIBREFS = ("WORK",)
_ENGINES = ("BASE", "V9", "V8", "V7")


class EndSas(Exception):
    """ENDSAS: the program stops here (the driver ends it cleanly)."""


def is_global(stmt: Statement, in_step: str = "") -> bool:
    """Is `stmt` a global statement? Inside a DATA step `title = 'x';`, `x + 1;` or `x(1) = 2;` are the
    step's own (an assignment, a sum statement, an array element): a global keyword followed by one of
    those symbols is not global there."""
    kw = stmt.keyword
    if kw not in GLOBAL_STATEMENTS:
        return False
    if in_step and len(stmt.tokens) > 1:
        nxt = stmt.tokens[1]
        if nxt.kind == OP and nxt.text in ("=", "+", "(", "{", "[", "-", ":", "."):
            return False
    if in_step == "DATA" and kw in ("X", "DM") and not (len(stmt.tokens) > 1 and stmt.tokens[1].kind in (STR, SEMI)):
        return False
    return True


def run_global(stmt: Statement, program: ProgramState) -> None:
    """Run one global statement; raises SasError (logged by the driver) or EndSas."""
    GLOBAL_STATEMENTS[stmt.keyword](stmt, program)


def _cursor(stmt: Statement) -> TokenCursor:
    c = TokenCursor(stmt.tokens, stmt.source)
    c.next()                                   # the keyword
    return c


def _value(c: TokenCursor) -> str:
    """An option value: a quoted string's content, a parenthesised list as written, or touching tokens
    joined ('64k', 'work.formats', 'max')."""
    t = c.next()
    if t.kind == STR:
        return str(t.value)
    if t.is_("("):
        depth, parts = 1, ["("]
        while depth:
            u = c.next()
            if u.kind in ("EOF", SEMI):
                raise SasSyntaxError("A list in parentheses is not closed", u.line, u.col, u.text, ")")
            depth += 1 if u.is_("(") else -1 if u.is_(")") else 0
            parts.append(u.text)
        return "(" + " ".join(parts[1:-1]) + ")"
    if t.kind in (SEMI, "EOF"):
        raise SasSyntaxError("Syntax error: an option value is missing", t.line, t.col, t.text, "a value after =")
    text = t.text
    while c.peek().kind in (NAME, NUM, OP) and t.touches(c.peek()) and not c.peek().is_("=", "(", ")", ","):
        t = c.next()
        text += t.text
    return text


# ------------------------------------------------------------------------------------------ OPTIONS
def options_statement(stmt: Statement, program: ProgramState) -> None:
    c = _cursor(stmt)
    while not c.at_end():
        t = c.expect_kind(NAME, "a system option name")
        value = None
        if c.accept("="):
            value = _value(c)
        try:
            program.options.set(t.text, value, t.line, t.col)
        except SasError as exc:
            if not exc.line:
                exc.line, exc.col = t.line, t.col
            program.log.sas_error(exc)
            continue
        up = t.text.upper()
        if up == "PAGENO":
            program.log.set_page(program.options.get("PAGENO"))
        elif up == "SYSPARM" and program.symbols is not None:
            program.symbols.set_automatic("SYSPARM", program.options.get("SYSPARM"))


# ------------------------------------------------------------------------------------------ TITLE / FOOTNOTE
def _title_text(c: TokenCursor) -> str | None:
    """The text of TITLE/FOOTNOTE: quoted strings (joined by a blank) or unquoted words; None if empty.
    Options such as J=, H=, COLOR=, BOLD apply to ODS destinations, not the listing: skipped."""
    parts: list[str] = []
    while not c.at_end():
        t = c.next()
        if t.kind == NAME and c.at("="):
            c.next()
            _value(c)
            continue
        if t.kind == NAME and t.upper in ("BOLD", "ITALIC", "UNDERLIN"):
            continue
        parts.append(str(t.value) if t.kind == STR else t.text)
    return " ".join(parts) if parts else None


def _title_like(table: str, kw: str) -> Callable[[Statement, ProgramState], None]:
    def run(stmt: Statement, program: ProgramState) -> None:
        rest = stmt.keyword[len(kw):]
        n = int(rest) if rest else 1
        lines: dict[int, str] = getattr(program, table)
        text = _title_text(_cursor(stmt))
        # TITLEn replaces line n and clears every line below it (SAS 9.4, TITLE statement)
        for k in [k for k in lines if k >= n]:
            del lines[k]
        if text is not None:
            lines[n] = text
    return run


# ------------------------------------------------------------------------------------------ LIBNAME
def libname_statement(stmt: Statement, program: ProgramState) -> None:
    c = _cursor(stmt)
    ref = c.expect_kind(NAME, "a libref").text
    up = ref.upper()
    try:
        _libname(c, ref, up, program)
    except (SasError, LibraryError) as exc:
        if isinstance(exc, SasError):
            program.log.sas_error(exc)
        else:
            program.log.error(str(exc))
        program.log.error("Error in the LIBNAME statement.")


def _libname(c: TokenCursor, ref: str, up: str, program: ProgramState) -> None:
    session = program.session
    if c.accept("CLEAR"):
        c.expect_end()
        names = [lib.name for lib in session.libraries] if up == "_ALL_" else [ref.lower()]
        for name in names:
            if name.upper() in STARTUP_LIBREFS or (up == "_ALL_" and name in ("data",)):
                if up != "_ALL_":
                    raise SasError(f"Libref {name.upper()} cannot be cleared: it is the session's own library",
                                   text=ref)
                continue
            if name not in session.libraries:
                program.log.warning(f"Libref {name.upper()} is not assigned.")
                continue
            _unassign(session, name)
            program.log.note(f"Libref {name.upper()} has been deassigned.")
        return
    if c.accept("LIST"):
        libs = list(session.libraries) if up == "_ALL_" else [session.libraries.get(ref)]
        for lib in libs:
            program.log.note(_list_library(lib))
        return
    if up == "_ALL_":
        raise SasSyntaxError("LIBNAME _ALL_ takes CLEAR or LIST", c.peek().line, c.peek().col, c.peek().text,
                             "CLEAR or LIST")
    engine = "V9"
    if c.peek().kind == NAME:
        t = c.next()
        if t.upper not in _ENGINES:
            raise SasError(f"The {t.upper} engine cannot be found", t.line, t.col, t.text,
                           "BASE or V9 (statgrid libraries are directories of Parquet data sets)")
        engine = "V9" if t.upper == "BASE" else t.upper
    t = c.peek()
    levels = None                                  # LIBNAME x (lib | 'dir' …): a library concatenation
    if t.is_("("):
        c.next()
        levels = []
        while not c.at(")"):
            if c.at_end():
                raise SasSyntaxError("Syntax error: the library list is not closed", t.line, t.col, t.text, ")")
            levels.append(c.next())
        c.expect(")")
        if len(levels) != 1:
            raise SasError("Concatenated libraries of more than one library are not supported by statgrid", t.line,
                           t.col, t.text, "one libref or one directory in the parentheses (the same library under "
                           "a second name), or one LIBNAME per directory")
        t = levels[0]
        if t.kind == NAME:                         # the same library under another libref
            if t.text.lower() not in session.libraries:
                raise SasError(f"Libref {t.upper} is not assigned", t.line, t.col, t.text,
                               "a libref assigned before this LIBNAME statement")
            t_path = session.libraries.get(t.text.lower()).path
        elif t.kind == STR:
            t_path = str(t.value)
        else:
            raise SasSyntaxError("Syntax error", t.line, t.col, t.text, "a libref or a quoted directory path")
    elif t.kind != STR:
        raise SasSyntaxError("Syntax error", t.line, t.col, t.text, "a quoted directory path")
    else:
        c.next()
        t_path = str(t.value)
    path = Path(os.path.expanduser(t_path))
    readonly = levels is not None and levels[0].kind == NAME and session.libraries.get(levels[0].text.lower()).readonly
    while not c.at_end():
        o = c.expect_kind(NAME, "a LIBNAME option such as ACCESS=READONLY")
        c.expect("=")
        v = _value(c).upper()
        if o.upper == "ACCESS":
            if v not in ("READONLY", "TEMP"):
                raise SasError(f"Invalid value {v} for option ACCESS", o.line, o.col, v, "READONLY")
            readonly = v == "READONLY"
        elif o.upper in ("COMPRESS", "REUSE", "OUTREP", "INENCODING", "OUTENCODING", "CVPBYTES", "CVPMULTIPLIER"):
            program.log.note(f"LIBNAME option {o.upper}= has no effect on statgrid libraries.")
        else:
            raise SasError(f"Unrecognized LIBNAME option {o.upper}", o.line, o.col, o.text, "ACCESS=READONLY")
    if not path.is_dir():
        raise SasError(f"Library {up} does not exist: {str(path)!r} is not a directory", t.line, t.col,
                       t_path, "the path of an existing directory")
    lib = session.libraries.assign(ref, path, readonly)
    session.assigned_libnames[lib.name] = lib
    if levels is not None:
        program.log.note(f"Libref {up} was successfully assigned as follows: \nLevels:           1 \n"
                         f"Engine(1):        {engine} \nPhysical Name(1): {lib.path}")
        return
    program.log.note(f"Libref {up} was successfully assigned as follows: \nEngine:        {engine} \n"
                     f"Physical Name: {lib.path}")


def _unassign(session, name: str) -> None:
    session.libraries.clear(name)
    session.assigned_libnames.pop(name, None)


def _list_library(lib) -> str:
    """What SAS prints for LIBNAME x LIST (SAS 9.4 on UNIX): the libref's engine and directory facts."""
    rows = [("Libref=", lib.name.upper()), ("Scope=", "Kernel"), ("Engine=", "V9")]
    if lib.readonly:
        rows.append(("Access=", "READONLY"))
    rows += [("Physical Name=", str(lib.path)), ("Filename=", str(lib.path))]
    try:
        st = os.stat(lib.path)
        try:
            owner = pwd.getpwuid(st.st_uid).pw_name
        except KeyError:
            owner = str(st.st_uid)
        rows += [("Inode Number=", str(st.st_ino)), ("Access Permission=", stat.filemode(st.st_mode)[1:]),
                 ("Owner Name=", owner), ("File Size=", f"{(st.st_size + 1023) // 1024}KB"),
                 ("File Size (bytes)=", str(st.st_size))]
    except OSError:
        pass
    return "\n".join(f"{a:<10}{b}" if len(a) < 10 else f"{a} {b}" for a, b in rows)


# ------------------------------------------------------------------------------------------ FILENAME
def filename_statement(stmt: Statement, program: ProgramState) -> None:
    c = _cursor(stmt)
    ref = c.expect_kind(NAME, "a fileref")
    up = ref.upper
    if c.accept("CLEAR"):
        names = list(program.filerefs) if up == "_ALL_" else [up]
        for name in names:
            if program.filerefs.pop(name, None) is None:
                program.log.warning(f"Fileref {name} is not assigned.")
        return
    if c.accept("LIST"):
        refs = program.filerefs.values() if up == "_ALL_" else [program.filerefs.get(up)]
        for f in list(refs):
            if f is None:
                raise SasError(f"Fileref {up} is not assigned", ref.line, ref.col, ref.text)
            program.log.note(f"Fileref= {f.name}\nPhysical Name= "
                             + (" ".join(str(p) for p in f.paths) if len(f.paths) != 1 else str(f.paths[0])))
        return
    device = ""
    if c.peek().kind == NAME:
        d = c.next()
        device = d.upper
        if device == "PIPE":
            raise SasError(SHELL_ESCAPE_REFUSED.format(what="FILENAME PIPE"), d.line, d.col, d.text)
        if device not in ("DISK", "TEMP", "DUMMY"):
            raise SasError(f"Invalid device type {device}", d.line, d.col, d.text, "DISK, TEMP or a quoted path")
    paths: list[Path] = []
    if device == "TEMP":
        work = program.session.libraries.get("work").path
        paths = [Path(work) / f"#fileref_{up.lower()}.tmp"]
        paths[0].touch()
    elif device == "DUMMY":
        paths = [Path(os.devnull)]
    elif c.accept("("):
        while not c.accept(")"):
            t = c.expect_kind(STR, "a quoted file path or )")
            paths.append(Path(os.path.expanduser(str(t.value))))
            c.accept(",")
        if not paths:
            raise SasSyntaxError("An aggregate fileref needs at least one file", ref.line, ref.col, up,
                                 '("file1" "file2")')
    else:
        t = c.expect_kind(STR, "a quoted file or directory path")
        paths = [Path(os.path.expanduser(str(t.value)))]
    opts: dict[str, str] = {}
    while not c.at_end():
        o = c.expect_kind(NAME, "a FILENAME option such as LRECL=")
        opts[o.upper] = _value(c) if c.accept("=") else ""
    absolute = [p if p.is_absolute() else Path.cwd() / p for p in paths]
    directory = len(absolute) == 1 and absolute[0].is_dir()
    program.filerefs[up] = Fileref(up, absolute, directory, opts)


# ------------------------------------------------------------------------------------------ the rest
def endsas_statement(stmt: Statement, program: ProgramState) -> None:
    raise EndSas()


def shell_statement(stmt: Statement, program: ProgramState) -> None:
    t = stmt.tokens[0]
    raise SasError(SHELL_ESCAPE_REFUSED.format(what=f"the {t.upper} statement"), t.line, t.col, t.text)


def ods_statement(stmt: Statement, program: ProgramState) -> None:
    from statgrid.sas import ods

    ods.statement(stmt, program)


def missing_statement(stmt: Statement, program: ProgramState) -> None:
    """MISSING a r _; — the letters INPUT reads as the special missing values .A .R ._ from then on, in every
    later DATA step (SAS 9.4 Global Statements: "valid anywhere ... global in scope")."""
    c, letters = _cursor(stmt), set()
    while not c.at_end():
        tok = c.next()
        if tok.kind != NAME or len(tok.text) != 1:
            raise c.error("The MISSING statement takes single letters A-Z or _ (as in MISSING a r _;)",
                          "a letter A-Z or _", tok)
        letters.add(tok.text.upper())
    program.missing_letters |= letters


def dm_statement(stmt: Statement, program: ProgramState) -> None:
    program.log.note("The DM statement has no effect in a batch program.")


GLOBAL_STATEMENTS: dict[str, Callable[[Statement, ProgramState], None]] = {
    "OPTIONS": options_statement, "OPTION": options_statement,
    "LIBNAME": libname_statement, "FILENAME": filename_statement,
    "ENDSAS": endsas_statement, "X": shell_statement, "SYSTASK": shell_statement,
    "ODS": ods_statement, "DM": dm_statement, "MISSING": missing_statement,
    "TITLE": _title_like("titles", "TITLE"), "FOOTNOTE": _title_like("footnotes", "FOOTNOTE"),
    **{f"TITLE{i}": _title_like("titles", "TITLE") for i in range(1, 11)},
    **{f"FOOTNOTE{i}": _title_like("footnotes", "FOOTNOTE") for i in range(1, 11)},
}
