"""The autocall facility (SAS 9.4 Macro Language: Reference, "Storing and Reusing Macros", "Autocall
Facility"): under OPTIONS MAUTOSOURCE an invocation of a macro not yet defined looks for the member
<name>.sas (lower case, as SAS looks on UNIX) in each SASAUTOS= location in turn — a quoted directory or
a fileref — and compiles the %MACRO definitions the first one found holds; the macro is then invoked as
if defined in the program. A member that does not define the macro leaves the invocation unresolved."""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from statgrid.sas.macro import parser as P

_MACRO_RE = re.compile(r"%macro\b", re.I)


def locations(program: Any, value: str) -> list[Path]:
    """The directories SASAUTOS= names: ('dir' fileref "dir" ...) or one of them without parentheses.
    A fileref that is not assigned is skipped (SAS's default SASAUTOS fileref is the SAS-supplied library,
    which statgrid does not have)."""
    text = str(value or "").strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    try:
        words = shlex.split(text.replace(",", " "), posix=False)
    except ValueError:
        words = text.split()
    out: list[Path] = []
    refs = getattr(program, "filerefs", {}) or {}
    for w in words:
        if w[:1] in "'\"" and w[-1:] == w[:1] and len(w) >= 2:
            out.append(Path(w[1:-1]))
            continue
        ref = refs.get(w.upper())
        if ref is not None:
            out.extend(Path(p) for p in ref.paths)
    return out


def member(dirs: list[Path], name: str) -> Path | None:
    """The first <name>.sas in `dirs` (the lower-case name first, then as spelled in upper case)."""
    for d in dirs:
        for cand in (d / f"{name.lower()}.sas", d / f"{name.upper()}.sas"):
            try:
                if cand.is_file():
                    return cand
            except OSError:          # a directory the job's user may not search: not an autocall library
                break
    return None


def definitions(text: str, source: str) -> list[P.MacroDef]:
    """The %MACRO ... %MEND definitions of an autocall member, in order (other text is not run)."""
    out, i = [], 0
    while True:
        m = _MACRO_RE.search(text, i)
        if m is None:
            return out
        try:
            node, after = P.Parser(text, source).statement(m.start())
        except P.MacroSyntaxError:
            i = m.end()
            continue
        if isinstance(node, P.MacroDef):
            out.append(node)
        i = max(after, m.end())


def find(engine: Any, name: str):
    """The definition of macro `name` compiled from the autocall libraries, or None (MAUTOSOURCE off,
    no member, or a member that does not define it)."""
    if not engine.opt("MAUTOSOURCE", True):
        return None
    dirs = locations(engine.program, engine.opt("SASAUTOS", ""))
    path = member(dirs, name)
    if path is None:
        return None
    try:
        text = path.read_text()
    except OSError:
        return None
    for node in definitions(text, str(path)):
        engine.define(node)
    return engine.macros.get(name.upper())
