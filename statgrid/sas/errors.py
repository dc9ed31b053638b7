"""Errors of the SAS front end. Each reports like a compiler (STYLE.md, 15): the line and column of the
fault, the text at fault and what was expected, so the SAS log can print SAS's own shape:

    ERROR 22-322: Syntax error, expecting one of the following: ;, DATA=. (line 12, column 9: 'dta')

Standard library only.
"""
from __future__ import annotations

from statgrid.errors import StatgridError


class SasError(StatgridError):
    """An ERROR of a SAS program. line/col are 1-based in the program (or %INCLUDEd file) as the user
    wrote it; 0 where no place applies. `text` is the token or value at fault, `expected` what would
    have been right ('' if nothing in particular)."""

    def __init__(self, message: str, line: int = 0, col: int = 0, text: str = "", expected: str = "",
                 source: str = ""):
        self.message, self.line, self.col, self.text, self.expected, self.source = (
            message, line, col, text, expected, source)
        super().__init__(self.describe())

    def describe(self) -> str:
        where = ""
        if self.line:
            where = f" (line {self.line}" + (f", column {self.col}" if self.col else "")
            where += (f" of {self.source}" if self.source else "") + ")"
        at = f" at {self.text!r}" if self.text else ""
        exp = f"; expecting {self.expected}" if self.expected else ""
        return f"{self.message}{at}{exp}{where}"


class SasSyntaxError(SasError):
    """A statement that does not parse: SAS stops the step, goes on in syntax-check mode."""


class SasRuntimeError(SasError):
    """A fault while a step runs (a data set that does not exist, a file that cannot be opened…)."""


class ProgramAbort(Exception):
    """ABORT ABEND n / ABORT RETURN n (raised by the DATA step): the program ends with exit code `code`
    (SAS 9.4 Statements, ABORT). The step's ERROR is logged by whoever raises it."""

    def __init__(self, code: int = 1, message: str = ""):
        super().__init__(message or f"ABORT with return code {code}")
        self.code, self.message = code, message


class SyntaxCheckSkip(Exception):
    """Raised by a PROC, after its statements were read, when the program is in syntax-check mode (after an
    ERROR, OBS=0): the analysis is not run — SAS only checks a step's syntax then — and the step ends quietly."""


def skip_if_syntax_check(program) -> None:
    if getattr(program, "syntax_check", False):
        raise SyntaxCheckSkip()


# What X, SYSTASK, CALL SYSTEM, %SYSEXEC, FILENAME PIPE and INFILE/FILE PIPE say: a grid job gets no shell
SHELL_ESCAPE_REFUSED = ("Shell escape is not allowed in a statgrid SAS session (NOXCMD): {what} would run an "
                        "operating-system command inside this job. Run the command as a grid job of its own "
                        "(`statgrid submit COMMAND`, or a step of a flow) before or after this program.")
