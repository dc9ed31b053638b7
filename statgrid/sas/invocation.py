"""SAS invocation options: what follows a .sas program on the command line,

    statgrid run prog.sas -sysparm 3 -memsize 4G -fullstimer -set HOST node1
    statgrid submit prog.sas -sysparm 3 -memsize 4G

parsed once here for both (`statgrid run` takes them as its options; the master checks a submitted job's
with this parser and passes them on to the `statgrid run` that runs it). SAS 9.4 Companion for UNIX
Environments, "SAS System Options": an option starts with '-' and takes its value as the next word.
Standard library only (plus the options table), so the master imports it cheaply.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.options import SasOptions

# name → takes a value; what `statgrid run` accepts after a .sas program (cli/session.py declares each)
INVOCATION_OPTIONS: dict[str, bool] = {
    "SYSPARM": True, "MEMSIZE": True, "BUFSIZE": True, "SORTSIZE": True, "FULLSTIMER": False,
    "AUTOEXEC": True, "SET": True, "LOG": True, "PRINT": True, "WORK": True, "UTILLOC": True,
}
INVOCATION_HELP = ("-sysparm V, -memsize 4G, -bufsize 64k, -sortsize 1G, -fullstimer, -autoexec FILE, "
                   "-set NAME VALUE, -log FILE, -print FILE, -work DIR, -utilloc DIR")


@dataclass
class Invocation:
    """SAS invocation options of one run, as given.

    session_options: the statgrid session options they set (memsize); system: SAS system options to set
    before the autoexec (SYSPARM, BUFSIZE, SORTSIZE, FULLSTIMER, MEMSIZE); env: -set NAME VALUE (an
    environment variable of the program, read by %SYSGET); autoexec, log_path, print_path: files;
    work_root, util_root: directories under which WORK and UTIL are made; args: the words as given."""
    session_options: dict[str, str] = field(default_factory=dict)
    system: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    autoexec: str = ""
    log_path: str = ""
    print_path: str = ""
    work_root: str = ""
    util_root: str = ""
    args: list[str] = field(default_factory=list)

    def apply(self, options: SasOptions) -> None:
        for name, value in self.system.items():
            options.set(name, value)


def parse_invocation(args: list[str]) -> Invocation:
    """The words after a .sas program → Invocation. Raises SasError naming an unknown option, a missing
    value or a bad one (checked against the system options table now, before anything runs)."""
    inv = Invocation(args=list(args))
    i = 0
    while i < len(args):
        word = args[i]
        name = word[1:].upper() if word.startswith("-") and len(word) > 1 else ""
        if name not in INVOCATION_OPTIONS:
            raise SasError(f"{word!r} is not a SAS invocation option statgrid takes", text=word,
                           expected=INVOCATION_HELP)
        if not INVOCATION_OPTIONS[name]:
            inv.system[name] = None
            i += 1
            continue
        need = 2 if name == "SET" else 1
        if len(args) - i <= need:
            raise SasError(f"{word} needs " + ("a name and a value" if need == 2 else "a value"), text=word,
                           expected=f"{word} NAME VALUE" if need == 2 else f"{word} VALUE")
        value = args[i + 1]
        if name == "SET":
            inv.env[value] = args[i + 2]
        elif name == "MEMSIZE":
            inv.session_options["memsize"] = value
            inv.system[name] = value
        elif name == "AUTOEXEC":
            inv.autoexec = value
        elif name == "LOG":
            inv.log_path = value
        elif name == "PRINT":
            inv.print_path = value
        elif name == "WORK":
            inv.work_root = value
        elif name == "UTILLOC":
            inv.util_root = value
        else:
            inv.system[name] = value
        i += 1 + need
    check = SasOptions()
    for name, value in inv.system.items():
        check.set(name, value)
    return inv


def invocation_for_file(inv: Invocation, cwd: str | Path) -> Invocation:
    """Paths of `inv` made absolute against `cwd`."""
    def absolute(p: str) -> str:
        return str((Path(cwd) / p).absolute()) if p else p
    inv.autoexec, inv.log_path, inv.print_path = absolute(inv.autoexec), absolute(inv.log_path), absolute(inv.print_path)
    inv.work_root, inv.util_root = absolute(inv.work_root), absolute(inv.util_root)
    return inv
