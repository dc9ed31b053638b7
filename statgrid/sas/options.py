"""SAS system options: the table of those that mean something on statgrid (types, defaults, whether they
can change after start), the OPTIONS statement's values, GETOPTION's text, and SAS's invocation options
(invocation.py parses those given on the command line).

Names and behaviour follow SAS 9.4 System Options: Reference. Options SAS has that change nothing here
(SASTRACE=, SASTRACELOC=, STSUFFIX: SAS/ACCESS tracing) are accepted and kept so GETOPTION returns them.
MEMSIZE, WORK and UTILLOC are startup options: set in an OPTIONS statement they get SAS's WARNING and keep
their value. BUFSIZE=, SORTSIZE= and COMPRESS= are the session's options bufsize, sortsize and compress
(their start values come from the session; an OPTIONS statement changes the session's): BUFSIZE= in bytes
is the size of a data set's I/O requests (config/dataset_io.py; BUFSIZE=0 = grid.toml's), SORTSIZE= the
engine's memory while a sort runs, COMPRESS= the codec of data sets written. THREADS/NOTHREADS and
CPUCOUNT= set the session's engine threads.
Standard library only (the session is reached through the object handed in).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from statgrid.sas.errors import SasError

MAX_INT = 2**63 - 1          # OBS=MAX: SAS's 9223372036854775807 on 64-bit hosts

_SIZE_RE = re.compile(r"^(\d+)([KMGT]?)$", re.I)
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def parse_size(text: str) -> int:
    """'64k' → 65536, '4G' → 4294967296, 'MAX' → MAX_INT (SAS: n, nK, nM, nG, nT, MAX)."""
    t = str(text).strip().upper()
    if t == "MAX":
        return MAX_INT
    m = _SIZE_RE.match(t)
    if not m:
        raise ValueError("a size such as 64K, 512M, 4G or MAX")
    n = int(m.group(1)) * _UNITS[m.group(2).upper()]
    if n > MAX_INT:
        raise ValueError(f"a size such as 64K, 512M, 4G, at most {MAX_INT} bytes, or MAX")
    return n


def size_text(n: int) -> str:
    """GETOPTION's text of a size option: bytes as a number (SAS prints 'MAX' for the largest)."""
    return "MAX" if n >= MAX_INT else str(n)


def _bound(n: float) -> str:
    """A bound of a numeric option as SAS writes it: MAX for the largest integer, else the exact number
    (not 9.22337e+18)."""
    return "MAX" if n >= MAX_INT else str(int(n)) if n == int(n) else repr(n)


def _num(lo: float, hi: float, allow_max: bool = False) -> Callable[[str], int]:
    def parse(text: str) -> int:
        t = str(text).strip().upper()
        if allow_max and t == "MAX":
            return MAX_INT
        whole = f"a whole number from {_bound(lo)} to {_bound(hi)}" + (" or MAX" if allow_max else "")
        try:
            v: float | int = int(t)               # exact: float() would round 9223372036854775807 up
        except ValueError:
            try:
                v = float(t)
            except ValueError:
                raise ValueError(f"a number from {_bound(lo)} to {_bound(hi)}" + (" or MAX" if allow_max else "")) from None
            if v != v or v in (float("inf"), float("-inf")) or v != int(v):
                raise ValueError(whole) from None
            v = int(v)
        if not lo <= v <= hi:
            raise ValueError(whole)
        return int(v)
    return parse


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        t = str(text).strip().upper()
        if t not in allowed:
            raise ValueError("one of " + ", ".join(allowed))
        return t
    return parse


def _text(text: str) -> str:
    return str(text)


STIMEFMT_TIME = {"H": "H", "HOURS": "H", "Z": "H", "M": "M", "MINUTES": "M", "S": "S", "SECONDS": "S",
                 "N": "N", "NORMAL": "N", "B": "N", "BESTFIT": "N"}
STIMEFMT_OTHER = ("TS", "TSFULL", "TSOFF", "MEMFULL", "MEM", "KB", "MB", "GB", "C", "NC")


def _stimefmt(text: str) -> str:
    """STIMEFMT=value or (values) (SAS 9.4 on UNIX): the time layout of STIMER/FULLSTIMER notes (H/HOURS/Z,
    M/MINUTES, S/SECONDS, N/NORMAL) and the datetime-stamp/memory words, kept as written, upper case."""
    words = str(text).strip().strip("()").upper().replace(",", " ").split()
    bad = [w for w in words if w not in STIMEFMT_TIME and w not in STIMEFMT_OTHER]
    if not words or bad:
        raise ValueError("one or more of " + ", ".join([*STIMEFMT_TIME, *STIMEFMT_OTHER]))
    return " ".join(words)


def _missing_char(text: str) -> str:
    t = str(text)
    if len(t) != 1:
        raise ValueError("one character, e.g. MISSING='.' or MISSING=' '")
    return t


def _cpucount(text: str) -> int:
    t = str(text).strip().upper()
    return 0 if t == "ACTUAL" else _num(1, 1024)(t)


@dataclass(frozen=True)
class OptionDef:
    """One system option. kind: 'bool' (NAME / NONAME) or 'value' (NAME=value, parsed by `parse`).
    startup: only at invocation (MEMSIZE, WORK, UTILLOC): SAS's WARNING in an OPTIONS statement."""
    name: str
    kind: str
    default: Any
    parse: Callable[[str], Any] | None = None
    startup: bool = False
    aliases: tuple[str, ...] = ()
    text: Callable[[Any], str] | None = None     # GETOPTION's text of the value (default str())


def _b(name: str, default: bool, startup: bool = False) -> OptionDef:
    return OptionDef(name, "bool", default, startup=startup)


def _v(name: str, default: Any, parse: Callable[[str], Any], startup: bool = False, aliases: tuple[str, ...] = (),
       text: Callable[[Any], str] | None = None) -> OptionDef:
    return OptionDef(name, "value", default, parse, startup, aliases, text)


# SAS 9.4 defaults for a batch session on UNIX, except STIMER/FULLSTIMER (statgrid logs every step's
# record, as the seed papers' sites ran with FULLSTIMER) and LINESIZE/PAGESIZE (batch: 132 and 60).
OPTION_DEFS: tuple[OptionDef, ...] = (
    _b("FULLSTIMER", False), _b("STIMER", True), _b("NOTES", True), _b("SOURCE", True), _b("SOURCE2", False),
    _b("MPRINT", False), _b("MLOGIC", False), _b("SYMBOLGEN", False), _b("MERROR", True), _b("SERROR", True),
    _b("DATE", True), _b("NUMBER", True), _b("CENTER", True), _b("THREADS", True), _b("STSUFFIX", True),
    _b("REPLACE", True), _b("LABEL", True), _b("FMTERR", True), _b("DSNFERR", True), _b("ECHOAUTO", False),
    _b("MAUTOSOURCE", True), _b("MRECALL", False), _b("MINOPERATOR", False), _b("SYNTAXCHECK", True),
    _b("DMSSYNCHK", False), _b("MACRO", True, startup=True), _b("XCMD", False, startup=True),
    _b("NOTES2", True),
    _v("OBS", MAX_INT, _num(0, MAX_INT, allow_max=True), text=size_text),
    _v("FIRSTOBS", 1, _num(1, MAX_INT)),
    _v("BUFSIZE", 0, parse_size),
    _v("SORTSIZE", 1024**3, parse_size, text=size_text),
    _v("MEMSIZE", 2 * 1024**3, parse_size, startup=True, text=size_text),
    _v("COMPRESS", "NO", _choice("NO", "YES", "CHAR", "BINARY")),
    _v("MISSING", ".", _missing_char),
    _v("YEARCUTOFF", 1926, _num(1582, 19900)),
    _v("LINESIZE", 132, _num(64, 256), aliases=("LS",)),
    _v("PAGESIZE", 60, _num(15, 32767), aliases=("PS",)),
    _v("PAGENO", 1, _num(1, MAX_INT)),
    _v("ERRORS", 20, _num(0, MAX_INT, allow_max=True)),
    _v("SYSPARM", "", _text),
    _v("FMTSEARCH", "(WORK LIBRARY)", _text),
    _v("VALIDVARNAME", "V7", _choice("V7", "UPCASE", "ANY")),
    _v("VALIDMEMNAME", "COMPATIBLE", _choice("COMPATIBLE", "COMPAT", "EXTEND")),
    _v("SASTRACE", "", _text), _v("SASTRACELOC", "STDOUT", _text),
    _v("CPUCOUNT", 0, _cpucount, text=lambda v: "ACTUAL" if not v else str(v)),
    _v("WORK", "", _text, startup=True), _v("UTILLOC", "", _text, startup=True),
    _v("AUTOEXEC", "", _text, startup=True),
    _v("MSGLEVEL", "N", _choice("N", "I")), _v("STIMEFMT", "M", _stimefmt),
    _v("MEXECSIZE", 65536, parse_size), _v("MVARSIZE", 65534, _num(0, 65534)),
    _v("SASAUTOS", "", _text), _v("FORMCHAR", "|----|+|---+=|-/\\<>*", _text),
    _v("FORMDLM", "", _text), _v("DKRICOND", "ERROR", _choice("ERROR", "WARN", "WARNING", "NOWARN", "NOWARNING")),
    _v("DKROCOND", "WARN", _choice("ERROR", "WARN", "WARNING", "NOWARN", "NOWARNING")),
    _v("MINDELIMITER", " ", _text), _v("VARLENCHK", "WARN", _choice("NOWARN", "WARN", "ERROR")),
    _v("QUOTELENMAX", "", _text), _v("ORIENTATION", "PORTRAIT", _choice("PORTRAIT", "LANDSCAPE")),
    # statgrid's own: how DATA steps run (statgrid/sas/datastep/engines.py)
    _v("DSENGINE", "AUTO", _choice("AUTO", "PYTHON", "SQL", "NUMBA")),
)
_BY_NAME: dict[str, OptionDef] = {}
for _d in OPTION_DEFS:
    _BY_NAME[_d.name] = _d
    for _a in _d.aliases:
        _BY_NAME[_a] = _d


def lookup(name: str) -> tuple[OptionDef, bool]:
    """(definition, value for a boolean) of `name`, 'NOSOURCE' → (SOURCE, False). KeyError if unknown."""
    up = name.upper()
    if up in _BY_NAME:
        return _BY_NAME[up], True
    if up.startswith("NO") and up[2:] in _BY_NAME and _BY_NAME[up[2:]].kind == "bool":
        return _BY_NAME[up[2:]], False
    raise KeyError(name)


@dataclass
class SasOptions:
    """The program's system options. `session` (optional) is the statgrid session whose engine options
    THREADS/CPUCOUNT drive; `log` (a SasLog, optional) gets SAS's WARNINGs and NOTEs about them.
    `started` is False while invocation options are applied (startup options may still change)."""
    session: Any = None
    log: Any = None
    values: dict[str, Any] = field(default_factory=dict)
    started: bool = False

    def __post_init__(self) -> None:
        for d in OPTION_DEFS:
            self.values.setdefault(d.name, d.default)
        o = getattr(self.session, "options", None)
        if o is not None and hasattr(o, "bufsize_bytes"):    # the session's (grid.toml, -o, -bufsize …)
            self.values["BUFSIZE"] = o.bufsize_bytes
            self.values["COMPRESS"] = o.compress.upper()
            if o.sortsize_bytes:
                self.values["SORTSIZE"] = o.sortsize_bytes

    def get(self, name: str) -> Any:
        """The typed value: bool for NAME/NONAME options, int for numbers and sizes, str otherwise."""
        d, _ = lookup(name)
        return self.values[d.name]

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def getoption_text(self, name: str) -> str:
        """What GETOPTION(name) returns: 'FULLSTIMER' or 'NOFULLSTIMER' for a boolean, the value's
        text otherwise ('' for an unknown option, as SAS's GETOPTION; SAS 9.4 Functions, GETOPTION)."""
        try:
            d, _ = lookup(name)
        except KeyError:
            return ""
        v = self.values[d.name]
        if d.kind == "bool":
            return d.name if v else "NO" + d.name
        return d.text(v) if d.text else str(v)

    def set(self, name: str, value: Any = None, line: int = 0, col: int = 0) -> None:
        """Set one option. `value` is the text after '=' (None for NAME / NONAME). Raises SasError
        naming an unknown option or a bad value; a startup option after start gets SAS's WARNING."""
        try:
            d, flag = lookup(name)
        except KeyError:
            # SAS 9.4: "ERROR 13-12: Unrecognized SAS option name XYZ."
            raise SasError(f"Unrecognized SAS option name {name.upper()}", line, col,
                           name, "a SAS system option such as OBS=, FULLSTIMER, MPRINT") from None
        if d.kind == "bool":
            if value is not None:
                raise SasError(f"Option {d.name} takes no value", line, col, str(value), f"{d.name} or NO{d.name}")
            new: Any = flag
        else:
            if value is None or not flag:
                raise SasError(f"Option {name.upper()} needs a value", line, col, name.upper(), f"{d.name}=value")
            try:
                new = d.parse(value)
            except ValueError as exc:
                raise SasError(f"Invalid option value {value} for SAS option {d.name}", line, col, str(value),
                               str(exc)) from None
        if d.startup and self.started:
            # SAS 9.4: "WARNING 30-12: SAS option MEMSIZE is valid only at startup of the SAS System.
            # The SAS option is ignored."
            if self.log is not None:
                self.log.warning(f"SAS option {d.name} is valid only at startup of the SAS System. The SAS "
                                 "option is ignored.")
            return
        self.values[d.name] = new
        self._apply(d.name, new)

    def _apply(self, name: str, value: Any) -> None:
        """Options that drive the statgrid session's engine (after start; at start the invocation maps
        them to session options before the session opens)."""
        s = self.session
        if s is None or not self.started:
            return
        if name in ("THREADS", "CPUCOUNT"):
            threads = 1 if not self.values["THREADS"] else self.values["CPUCOUNT"]   # 0 = every CPU
            s.set_options({"threads": threads}, source="OPTIONS statement")
        elif name in SESSION_IO_OPTIONS and hasattr(getattr(s, "options", None), "bufsize_bytes"):
            s.set_options({name.lower(): session_value(name, value, s)}, source="OPTIONS statement")
            # what the session took (BUFSIZE=0 → grid.toml's; pinned by the command line → unchanged)
            o = s.options
            self.values.update(BUFSIZE=o.bufsize_bytes, COMPRESS=o.compress.upper())
            if name == "SORTSIZE" and o.sortsize_bytes:
                self.values["SORTSIZE"] = o.sortsize_bytes


# SAS options that are statgrid session options of the same name (config/dataset_io.py)
SESSION_IO_OPTIONS = ("BUFSIZE", "SORTSIZE", "COMPRESS")


def session_value(name: str, value: Any, session: Any = None) -> str | None:
    """A SAS BUFSIZE=/SORTSIZE=/COMPRESS= value (bytes as int, or the COMPRESS word) as the session option's
    text: BUFSIZE=0 is grid.toml's bufsize (SAS: the engine's default), within statgrid's 4K … 64M."""
    if name == "COMPRESS":
        return str(value).lower()
    n = int(value)
    if name == "SORTSIZE":
        return "0" if n >= MAX_INT else f"{n}B"      # SORTSIZE=MAX: the whole MEMSIZE
    from statgrid.config.dataset_io import MAX_BUFSIZE_BYTES, MIN_BUFSIZE_BYTES
    if not n:
        config = getattr(session, "config", None)
        if config is None:
            return None                              # -bufsize 0: leave grid.toml's
        n = config.session.bufsize_bytes
    return f"{min(max(n, MIN_BUFSIZE_BYTES), MAX_BUFSIZE_BYTES)}B"
