"""SAS invocation options: what follows a .sas program on the command line,

    statgrid run prog.sas -sysparm 3 -memsize 4G -fullstimer -set HOST node1
    statgrid submit prog.sas -sysparm 3 -memsize 4G

parsed once here for both (`statgrid run` takes them as its options; the master checks a submitted job's
with this parser and passes them on to the `statgrid run` that runs it). SAS 9.4 Companion for UNIX
Environments, "SAS System Options": an option starts with '-' and takes its value as the next word.
Standard library only (plus the options table), so the master imports it cheaply.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statgrid.sas.errors import SasError
from statgrid.sas.options import SasOptions, session_value

# name → takes a value; what `statgrid run` accepts after a .sas program (cli/session.py declares each)
INVOCATION_OPTIONS: dict[str, bool] = {
    "SYSPARM": True, "MEMSIZE": True, "BUFSIZE": True, "SORTSIZE": True, "FULLSTIMER": False,
    "AUTOEXEC": True, "SET": True, "LOG": True, "PRINT": True, "WORK": True, "UTILLOC": True, "DSENGINE": True,
}
INVOCATION_HELP = ("-sysparm V, -memsize 4G, -bufsize 64k, -sortsize 1G, -fullstimer, -dsengine AUTO, -autoexec FILE, "
                   "-set NAME VALUE, -log FILE, -print FILE, -work DIR, -utilloc DIR")
# -set NAME VALUE: an environment variable of the program, read by %SYSGET(NAME) — a SAS name.
_SET_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Words that are statgrid's own options, not SAS's (`statgrid submit a.sas -sysparm 3 -o memsize=1G`).
_STATGRID_WORDS = frozenset({"-o", "-q", "-J", "-m", "-r", "-w", "-W", "-sp", "-c"})
_STATGRID_HINT = ("; statgrid's own options (-o KEY=VALUE, -q, -J, --log-dir …) go before the job file, e.g. "
                  "`statgrid submit -o memsize=4G prog.sas -sysparm 3`")


@dataclass
class Invocation:
    """SAS invocation options of one run, as given.

    session_options: the statgrid session options they set (memsize, bufsize, sortsize); system: SAS system options to set
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


# the invocation options that name a file or directory: the Invocation field each sets
_PATH_FIELDS = {"AUTOEXEC": "autoexec", "LOG": "log_path", "PRINT": "print_path", "WORK": "work_root",
                "UTILLOC": "util_root"}


def parse_invocation(args: list[str]) -> Invocation:
    """The words after a .sas program → Invocation. Raises SasError naming an unknown option, a missing
    value or a bad one (checked against the system options table now, before anything runs)."""
    inv = Invocation(args=list(args))
    i = 0
    while i < len(args):
        word = args[i]
        name = word[1:].upper() if word.startswith("-") and len(word) > 1 else ""
        if name not in INVOCATION_OPTIONS:
            own = word.split("=", 1)[0] in _STATGRID_WORDS or word.startswith("--")
            raise SasError(f"{word!r} is not a SAS invocation option statgrid takes"
                           + (_STATGRID_HINT if own else ""), text=word, expected=INVOCATION_HELP)
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
            if not _SET_NAME_RE.fullmatch(value):
                raise SasError(f"-set {value!r}: the name of an environment variable is a letter or '_' followed "
                               "by letters, digits or '_'", text=value, expected="-set NAME VALUE, e.g. -set "
                               "REGION north")
            inv.env[value] = args[i + 2]
        elif name in ("MEMSIZE", "BUFSIZE", "SORTSIZE"):     # the session opens with them (options.py)
            inv.system[name] = value
            inv.session_options[name.lower()] = value if name == "MEMSIZE" else None
        elif name in _PATH_FIELDS:
            setattr(inv, _PATH_FIELDS[name], value)
        else:
            inv.system[name] = value
        i += 1 + need
    check = SasOptions()
    for name, value in inv.system.items():
        check.set(name, value)
        if inv.session_options.get(name.lower(), "") is None:     # -bufsize 64k → bufsize=65536B
            value = session_value(name, check.get(name))
            if value is None:
                del inv.session_options[name.lower()]
            else:
                inv.session_options[name.lower()] = value
    return inv


def invocation_for_file(inv: Invocation, cwd: str | Path) -> Invocation:
    """Paths of `inv` made absolute against `cwd` (the directory the program runs in)."""
    def absolute(p: str) -> str:
        return str((Path(cwd) / p).absolute()) if p else p
    inv.autoexec, inv.log_path, inv.print_path = absolute(inv.autoexec), absolute(inv.log_path), absolute(inv.print_path)
    inv.work_root, inv.util_root = absolute(inv.work_root), absolute(inv.util_root)
    return inv


def _same(a: str, b: str) -> bool:
    """Whether paths `a` and `b` name the same file: os.path.samefile when both exist, else the same
    resolved path (a file -log would create)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def check_invocation_files(inv: Invocation, program: str | Path, autoexec: str = "") -> None:
    """The files of `inv` (paths absolute, or relative to this process's directory), checked as whoever
    will run the program, before anything is opened: -log/-print may name neither the program nor the
    autoexec (`autoexec`: the one that runs when -autoexec is not given) nor each other — opening them
    for writing would erase it; -log/-print's directory exists; -autoexec is a regular file; -work and
    -utilloc are existing directories (SAS requires -WORK to exist; statgrid makes no directory for
    it). Raises SasError naming the option and the path."""
    auto = inv.autoexec or autoexec
    inputs = [("the program", str(program))] + ([("the autoexec", auto)] if auto else [])
    outputs = [(flag, p) for flag, p in (("-log", inv.log_path), ("-print", inv.print_path)) if p]
    for flag, path in outputs:
        for what, other in inputs:
            if _same(path, other):
                raise SasError(f"{flag} {path!r} is {what} ({other!r}): writing the {flag[1:]} there would erase "
                               f"it", text=path, expected=f"another file for {flag}")
        if os.path.isdir(path):
            raise SasError(f"{flag} {path!r} is a directory", text=path, expected=f"{flag} FILE")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise SasError(f"{flag} {path!r}: its directory {parent!r} does not exist", text=path,
                           expected=f"{flag} FILE in an existing directory")
    # the same device (-log /dev/null -print /dev/null) is no file to overwrite
    if len(outputs) == 2 and _same(outputs[0][1], outputs[1][1]) and (
            _is_regular(outputs[0][1]) or not os.path.exists(outputs[0][1])):
        raise SasError(f"-log and -print name the same file {outputs[0][1]!r}: each would overwrite the other",
                       text=outputs[0][1], expected="two different files for -log and -print")
    if inv.autoexec:
        if not os.path.exists(inv.autoexec):
            raise SasError(f"-autoexec {inv.autoexec!r} does not exist", text=inv.autoexec,
                           expected="-autoexec FILE (a SAS program)")
        if not _is_regular(inv.autoexec):
            raise SasError(f"-autoexec {inv.autoexec!r} is not a regular file (a directory, device or pipe)",
                           text=inv.autoexec, expected="-autoexec FILE (a SAS program)")
    for flag, path in (("-work", inv.work_root), ("-utilloc", inv.util_root)):
        if path and not os.path.isdir(path):
            raise SasError(f"{flag} {path!r} is not an existing directory (SAS requires it to exist; statgrid "
                           "makes WORK under it, not it)", text=path, expected=f"{flag} DIR of an existing directory")
