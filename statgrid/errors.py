"""Error types. Library code raises these; only the CLI maps them to exit codes.

Every message quotes the bad value, names the option or object, and says what to do
(STYLE.md, point 7).
"""
from __future__ import annotations


class StatgridError(Exception):
    """Base class: a runtime error the user can act on (CLI exit code 1)."""


class NotFound(StatgridError):
    """No such job, host, flow or calendar (the API answers 404)."""


class UsageError(StatgridError):
    """Bad input on the command line or in an option (CLI exit code 2)."""


class ConfigError(UsageError):
    """grid.toml or an option override holds an unknown key or a bad value."""


class LibraryError(StatgridError):
    """Unknown library, bad member name, missing member, write to a read-only library."""


class StepError(StatgridError):
    """A session step failed. `step` names it, so the log can say which one."""

    def __init__(self, step: str, message: str):
        super().__init__(f"{step}: {message}")
        self.step = step
        self.reason = message


class SessionTerminated(SystemExit):
    """SIGTERM (or SIGINT) reached the session; unwinds through every cleanup block."""

    def __init__(self, signum: int):
        super().__init__(128 + signum)
        self.signum = signum
