"""What one SAS program run shares between its parts: the program's state (ProgramState: the statgrid
session, the SAS log, system options, macro symbol tables, user formats, filerefs, titles, the
syntax-check mode after an ERROR) and the per-call runtime handed to DATA step functions and CALL
routines (FunctionRuntime). Built by the driver (program.py); the attributes are typed by their
owning modules, named here so every part finds the same thing. Standard library only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Fileref:
    """A FILENAME: one file, several read as one stream (`filename in ("a" "b")`), or a directory."""
    name: str
    paths: list[Path]
    directory: bool = False
    options: dict[str, Any] = field(default_factory=dict)    # LRECL=, RECFM= … as written, upper-case keys


@dataclass
class ProgramState:
    session: Any                       # statgrid.session.core.Session: libraries, DuckDB, steps and STIMER
    log: Any                           # statgrid.sas.saslog.SasLog
    options: Any                       # statgrid.sas.options.SasOptions
    symbols: Any                       # statgrid.sas.macro.symbols.SymbolTables
    formats: Any                       # statgrid.sas.formats.catalog.FormatCatalog
    filerefs: dict[str, Fileref] = field(default_factory=dict)
    titles: dict[int, str] = field(default_factory=dict)      # TITLE1–10
    footnotes: dict[int, str] = field(default_factory=dict)   # FOOTNOTE1–10
    syntax_check: bool = False         # after an ERROR in batch: OBS=0, no data set replaced
    interactive: bool = False          # an interactive session (a notebook's kernel): DMSSYNCHK, not
                                       # SYNTAXCHECK, says whether an ERROR turns syntax-check mode on
    last: str = ""                     # _LAST_ / SYSLAST: the data set written last, 'LIB.MEMBER'
    syscc: int = 0                     # SYSCC: the program's condition code (0, 4 warning, 8+ error)
    syserr: int = 0                    # SYSERR of the last step
    missing_letters: set[str] = field(default_factory=set)   # the MISSING statement's letters (global in scope):
                                       # INPUT reads them as the special missing values .A-.Z and ._
    extras: dict[str, Any] = field(default_factory=dict)      # parts' own program-wide state, by part name
    data_step: Any = None              # run_data_step(statements, program), set by the driver: dataset.py runs
                                       # a DATA step view through it without importing the DATA step
    input_sql: Any = None              # dataset.input_sql(program, spec), set by the driver: the functions (OPEN
                                       # with data set options) read a data set without importing its layer
    sql_view: Any = None               # run_sql_view(program, stored, member), set by the driver: an SQL view


@dataclass
class FunctionRuntime:
    """Handed to every DATA step function and CALL routine as its first argument: `program` for what
    the program shares (symbols, options, formats, filerefs, session), `state` for the step's own
    (random streams, open data set ids …: a fresh dict per DATA step or %SYSFUNC call)."""
    program: ProgramState | None
    state: dict[str, Any] = field(default_factory=dict)
    line: int = 0                      # where the call is, for NOTEs such as invalid arguments
    col: int = 0
