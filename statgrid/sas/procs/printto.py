"""PROC PRINTTO (SAS 9.4 Base Procedures: PRINTTO): where the log and the procedure output go.

    PROC PRINTTO <LOG=file | fileref | LOG> <PRINT=file | fileref | PRINT> <NEW>;   (FILE= is PRINT=)
    PROC PRINTTO;                         -- both back to where the program's log and listing go

`file` is a path in quotes; a fileref names a FILENAME's file. NEW replaces the file, else the text is
appended. LOG=LOG / PRINT=PRINT send one of them back. The file is opened with the rights of the user whose
job this is (a grid job runs as its owner), so PRINTTO reaches only what that user may write. Batch
programs use it to keep one step's log apart; the job's own log says where the lines went.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from statgrid.sas.errors import SasError, SasRuntimeError
from statgrid.sas.lexer import NAME, STR
from statgrid.sas.procs.common import proc_statement

_OPTIONS = ("LOG", "PRINT", "FILE", "NEW", "LABEL", "UNIT")


def run(statements: list, program: Any) -> None:
    first, *rest = list(statements)
    if rest:
        t = rest[0].tokens[0]
        raise SasError(f"Statement {t.text.upper()} is not valid in PROC PRINTTO", t.line, t.col, t.text,
                       "RUN; right after the PROC PRINTTO statement")
    c = proc_statement(first)
    targets: dict[str, Any] = {}
    new = False
    while not c.at_end():
        o = c.expect_kind(NAME, "a PROC PRINTTO option: LOG=, PRINT=, NEW")
        up = o.upper
        if up not in _OPTIONS:
            raise SasError(f"The option {o.text} is not recognized in the PROC PRINTTO statement", o.line, o.col,
                           o.text, "LOG=, PRINT= (FILE=), NEW")
        if up == "NEW":
            new = True
            continue
        c.expect("=")
        v = c.next()
        if up in ("LABEL", "UNIT"):
            continue                            # a label for the output / a FORTRAN unit: nothing to do here
        which = "LOG" if up == "LOG" else "PRINT"
        if v.kind == STR:
            targets[which] = Path(str(v.value)).expanduser()
        elif v.kind == NAME and v.upper == which:
            targets[which] = None               # LOG=LOG, PRINT=PRINT: back to the program's own
        elif v.kind == NAME:
            ref = program.filerefs.get(v.upper)
            if ref is None or not getattr(ref, "paths", None) or getattr(ref, "directory", False):
                raise SasRuntimeError(f"No logical assign for filename {v.upper}", v.line, v.col, v.text,
                                      "a FILENAME naming one file, or a path in quotes")
            targets[which] = Path(ref.paths[0])
        else:
            raise SasError(f"Syntax error in PROC PRINTTO at {v.text}", v.line, v.col, v.text,
                           "a path in quotes, a fileref, LOG or PRINT")
    log = program.log
    if not targets:                             # PROC PRINTTO; — both back
        log.redirect("LOG", None)
        log.redirect("PRINT", None)
        return
    for which, path in targets.items():
        if path is None:
            log.redirect(which, None)
            continue
        try:
            stream = open(path, "w" if new else "a", encoding="utf-8")
        except OSError as exc:
            raise SasRuntimeError(f"PROC PRINTTO cannot open {str(path)!r} for writing: {exc.strerror}", first.line,
                                  0, str(path), "a file this job's user may write") from None
        log.redirect(which, stream, str(path))
