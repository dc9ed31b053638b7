"""Macro symbol tables: the global table, one local table per executing macro, and the automatic
variables, with SAS's scope rules (Macro Language Reference, "Scopes of Macro Variables"):

- a reference `&x` is looked up from the innermost local table outward, then the global table, then
  the automatic variables;
- %LET x=… updates x in the nearest table that has it, else creates it in the current local table (in
  open code: the global table);
- CALL SYMPUT (`symput`) updates x in the nearest table that has it, else creates it in the most local
  *non-empty* table (global when every local table is empty) — SAS's rule for a DATA step run while a
  macro executes; CALL SYMPUTX's third argument picks G (global), L (the most local table) or F.

Values are kept as the macro processor holds them (macro-quoted characters masked, see quoting.py);
`get` returns the plain text, as SYMGET in the DATA step sees it. Standard library only.
"""
from __future__ import annotations

import getpass
import os
import socket
from dataclasses import dataclass, field
from datetime import datetime

from statgrid.sas.macro.quoting import unquote

# Automatic variables a %LET may not change (Macro Language Reference, "Automatic Macro Variables":
# the read-only ones); the others (SYSPARM, SYSCC, SYSLAST, SYSRC …) are read and write.
READ_ONLY = frozenset({"SYSDATE", "SYSDATE9", "SYSDAY", "SYSTIME", "SYSJOBID", "SYSUSERID", "SYSHOSTNAME",
                       "SYSSCP", "SYSSCPL", "SYSVER", "SYSVLONG", "SYSVLONG4", "SYSMAXLONG", "SYSINDEX",
                       "SYSMACRONAME", "SYSERR", "SYSENV", "SYSPROCESSID", "SYSNCPU", "SYSENCODING",
                       "SYSCHARWIDTH", "SYSMENV", "SYSPROCESSNAME", "SYSTCPIPHOSTNAME", "SYSSITE",
                       "SYSSTARTID", "SYSSTARTNAME", "SYSODSPATH", "SYSTIMEZONE", "SYSADDRBITS"})


def automatic_defaults(now: datetime | None = None, sysparm: str = "") -> dict[str, str]:
    """The automatic variables at start (their values as SAS 9.4 on 64-bit Linux shows them)."""
    t = now or datetime.now()
    job = os.environ.get("STATGRID_JOB_ID") or str(os.getpid())
    try:
        user = getpass.getuser()
    except Exception:          # no user name (a container without passwd entry)
        user = str(os.getuid()) if hasattr(os, "getuid") else ""
    host = socket.gethostname()
    return {
        "SYSPARM": sysparm, "SYSDATE": t.strftime("%d%b%y").upper(), "SYSDATE9": t.strftime("%d%b%Y").upper(),
        "SYSTIME": t.strftime("%H:%M"), "SYSDAY": t.strftime("%A"), "SYSJOBID": job,
        "SYSPROCESSID": str(os.getpid()), "SYSUSERID": user, "SYSHOSTNAME": host.split(".")[0],
        "SYSTCPIPHOSTNAME": host, "SYSERR": "0", "SYSCC": "0", "SYSRC": "0", "SYSFILRC": "0",
        "SYSLIBRC": "0", "SYSLAST": "_NULL_", "SYSDSN": "_NULL_", "SYSSCP": "LIN X64", "SYSSCPL": "Linux",
        "SYSVER": "9.4", "SYSVLONG": "9.04.01M0P000000", "SYSVLONG4": "9.04.01M0P00000000",
        "SYSMAXLONG": "9007199254740992", "SYSADDRBITS": "64", "SYSENV": "BACK", "SYSMENV": "S",
        "SYSENCODING": "utf-8", "SYSCHARWIDTH": "1", "SYSNCPU": str(os.cpu_count() or 1),
        "SYSPROCESSNAME": "Program", "SYSSITE": "0", "SYSSTARTID": "", "SYSSTARTNAME": "",
        "SYSTIMEZONE": "", "SYSERRORTEXT": "", "SYSWARNINGTEXT": "", "SYSMSG": "", "SYSPBUFF": "",
        "SYSDMG": "0", "SYSLCKRC": "0", "SYSODSPATH": "", "SYSINDEX": "0", "SYSMACRONAME": "",
    }


@dataclass
class Scope:
    """One symbol table: GLOBAL, or the local table of one executing macro (name = the macro's)."""
    name: str
    values: dict[str, str] = field(default_factory=dict)


class ReadOnlyError(Exception):
    """A %LET of a read-only automatic variable."""


class SymbolTables:
    def __init__(self, now: datetime | None = None, sysparm: str = ""):
        self.globals = Scope("GLOBAL")
        self.locals: list[Scope] = []                 # innermost last
        self.automatic: dict[str, str] = automatic_defaults(now, sysparm)
        self.macros_run = 0                           # SYSINDEX: macros that have begun executing

    # ------------------------------------------------------------------ lookup
    def lookup(self, name: str) -> str | None:
        """The stored value (macro quoting kept) of `name` by SAS's search order, None if undefined."""
        up = name.upper()
        for scope in reversed(self.locals):
            if up in scope.values:
                return scope.values[up]
        if up in self.globals.values:
            return self.globals.values[up]
        if up == "SYSMACRONAME":
            return self.locals[-1].name if self.locals else ""
        if up == "SYSINDEX":
            return str(self.macros_run)
        return self.automatic.get(up)

    def get(self, name: str) -> str | None:
        """The value as text (SYMGET's view: macro quoting removed), None if undefined."""
        v = self.lookup(name)
        return None if v is None else unquote(v)

    def exists(self, name: str) -> bool:
        return self.lookup(name) is not None

    def scope_of(self, name: str) -> Scope | None:
        up = name.upper()
        for scope in reversed(self.locals):
            if up in scope.values:
                return scope
        return self.globals if up in self.globals.values else None

    # ------------------------------------------------------------------ assignment
    def set_global(self, name: str, value: str) -> None:
        self.globals.values[name.upper()] = value

    def set_automatic(self, name: str, value: str) -> None:
        self.automatic[name.upper()] = value

    def let(self, name: str, value: str) -> Scope | None:
        """%LET's rule: the nearest table holding `name`, else the current local table (global in open
        code). An automatic variable is set in place (ReadOnlyError for a read-only one). Returns the
        table written (None for an automatic variable)."""
        up = name.upper()
        scope = self.scope_of(up)
        if scope is None and up in self.automatic or up in ("SYSINDEX", "SYSMACRONAME"):
            if up in READ_ONLY:
                raise ReadOnlyError(up)
            self.automatic[up] = value
            return None
        if scope is None:
            scope = self.locals[-1] if self.locals else self.globals
        scope.values[up] = value
        return scope

    def symput(self, name: str, value: str, table: str = "") -> None:
        """CALL SYMPUT / SYMPUTX. table '' (SYMPUT's rule) or 'F': the nearest table holding `name`; else
        '' creates it in the most local non-empty table, 'F' in the most local table. 'G': global.
        'L': the most local table (global in open code)."""
        up, t = name.upper(), table.strip().upper()[:1]
        if t == "G":
            self.globals.values[up] = value
            return
        if t == "L":
            (self.locals[-1] if self.locals else self.globals).values[up] = value
            return
        scope = self.scope_of(up)
        if scope is None and up in self.automatic and up not in READ_ONLY:
            self.automatic[up] = value
            return
        if scope is None:
            if t == "F":
                scope = self.locals[-1] if self.locals else self.globals
            else:
                scope = next((s for s in reversed(self.locals) if s.values), self.globals)
        scope.values[up] = value

    def declare_global(self, name: str) -> None:
        """%GLOBAL: create `name` (empty) in the global table unless it is there."""
        self.globals.values.setdefault(name.upper(), "")

    def declare_local(self, name: str) -> None:
        """%LOCAL: create `name` (empty) in the current local table unless it is there."""
        (self.locals[-1] if self.locals else self.globals).values.setdefault(name.upper(), "")

    def delete(self, name: str) -> bool:
        """%SYMDEL: remove `name` from the global table; False when it was not there."""
        return self.globals.values.pop(name.upper(), None) is not None

    # ------------------------------------------------------------------ scopes
    def push(self, macro_name: str) -> Scope:
        scope = Scope(macro_name.upper())
        self.locals.append(scope)
        self.macros_run += 1
        return scope

    def pop(self) -> None:
        self.locals.pop()

    def listing(self, which: str) -> list[tuple[str, str, str]]:
        """(scope, name, value) rows for %PUT _USER_ / _GLOBAL_ / _LOCAL_ / _AUTOMATIC_ / _ALL_: local
        tables innermost first, then the global table, then the automatic variables; names sorted."""
        which = which.upper()
        rows: list[tuple[str, str, str]] = []
        if which in ("_USER_", "_ALL_", "_LOCAL_"):
            scopes = reversed(self.locals) if which != "_LOCAL_" else self.locals[-1:]
            for s in scopes:
                rows += [(s.name, k, s.values[k]) for k in sorted(s.values)]
        if which in ("_USER_", "_ALL_", "_GLOBAL_"):
            rows += [("GLOBAL", k, self.globals.values[k]) for k in sorted(self.globals.values)]
        if which in ("_ALL_", "_AUTOMATIC_"):
            auto = dict(self.automatic)
            auto["SYSINDEX"] = str(self.macros_run)
            auto["SYSMACRONAME"] = self.locals[-1].name if self.locals else ""
            rows += [("AUTOMATIC", k, auto[k]) for k in sorted(auto)]
        return rows
