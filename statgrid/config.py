"""grid.toml → typed configuration, resolved once.

Lookup order for the file: an explicit path, then ``$STATGRID_CONFIG``, then
``$STATGRID_HOME/grid.toml``, then ``./grid.toml``. With no file the defaults below make a
working grid whose home is ``$STATGRID_HOME`` or ``./statgrid-home``.

    [grid]
    home = "/srv/statgrid"          # job store, logs; default: the directory of grid.toml
    admins = ["gridadm"]            # grid administrators besides root: any job, hosts, grid down

    [libraries]                     # SASDATA / SASWORK / UTILLOC of the papers
    data = "/gpfs/sasdata"          # the permanent library `data`
    work = "/local/saswork"         # parent of each session's WORK directory
    util = "/local/utilloc"         # parent of each session's UTIL (spill) directory

    [libname.sales]                 # extra permanent libraries, like LIBNAME
    path = "/gpfs/sales"
    readonly = true

    [session]
    memsize = "2G"                  # engine memory cap (DuckDB memory_limit)
    threads = 0                     # engine threads; 0 = every CPU this process may use
    bufsize = 122880                # rows per Parquet row group (the dataset I/O unit)
    utilsize = "0"                  # cap on UTIL spill bytes; 0 = engine default

    [master]
    port = 8642                     # the HTTPS/HTTP API for remote clients (tokens); local users
                                    # use the socket <home>/grid/master.sock (no secret needed)
    listen = "127.0.0.1"            # address of that port; beyond loopback only with api_tls
    api_tls = true                  # HTTPS with a certificate of the grid's CA; false only
                                    # with a loopback listen address
    names = ["grid1.example.com"]   # host names remote clients use, for the API's certificate
    engine_port = 8786              # the embedded engine's scheduler port, for nodes (default: any free one)
    fence_grace = "60s"             # a node that lost the master this long kills its jobs; the master
                                    # gives them to other hosts only after that
    scheduler = ""                  # address of an existing Dask scheduler; "" = embedded
    engine_tls = true               # mutual TLS with the grid's own CA between master, scheduler and
                                    # workers; false only for benchmarks and trusted single-user machines

    [hosts.node1]
    slots = 2                       # jobs at once (LSF MXJ); default: the CPUs the host's worker
                                    # sees (its cpus, or all this machine lets it use)
    open = true
    joins = false                   # true: a machine of its own, joined with `statgrid node up`
    memory = "64G"                  # memory jobs may reserve here; "0" = not tracked (default)
    max_load = 0                    # 1-minute load average (from the monitor) over which the host
                                    # takes no new jobs and shows busy; 0 = no threshold (LSF r1m)

    [queues.normal]
    priority = 30
    hosts = "node1+1 others+2"      # LSF lsb.queues HOSTS syntax
    user_limit = 0                  # running jobs per user in this queue; 0 = no limit (UJOB_LIMIT)
    job_limit = 0                   # running jobs of the whole queue; 0 = no limit (QJOB_LIMIT)
    host_limit = 0                  # running jobs of this queue per host; 0 = no limit (HJOB_LIMIT)
    runlimit = "0"                  # wall time after which a job is killed (EXIT); "0" = none (RUNLIMIT)
    fairshare = { risk = 40, marketing = 60, default = 1 }
                                    # shares of users and [groups] (LSF USER_SHARES); "default": every
                                    # user not named; no fairshare = first come, first served

    [groups]                        # user groups, for shares and limits
    risk = ["alice", "bob"]

    [limits]                        # running jobs over all queues (LSF lsb.users MAX_JOBS)
    user_jobs = 0                   # of any one user; 0 = no limit
    users = { alice = 40 }          # a user's own limit instead of user_jobs
    groups = { risk = 12 }          # of a group's members together

    [scheduling]
    half_life = "5h"                # fairshare usage decays by half over this time (LSF HIST_HOURS)
    memory_margin = 0.1             # a session job reserves its memsize plus this fraction plus 128M for its engine
    run_job_factor = 3.0            # weight of running jobs in the fairshare priority (LSF RUN_JOB_FACTOR)
    run_time_factor = 0.7           # weight of decayed usage, per slot-hour (LSF RUN_TIME_FACTOR)

    [monitor]                       # runs beside every grid worker while the grid is up
    enabled = true
    interval = "1s"
"""
from __future__ import annotations

import os
import re
import sys
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from statgrid.errors import ConfigError

KIB = 1024
_SIZE_UNITS = {"": 1, "B": 1, "K": KIB, "M": KIB**2, "G": KIB**3, "T": KIB**4}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)
MIN_MEMSIZE_BYTES = 64 * KIB**2
DEFAULT_ROW_GROUP_ROWS = 122_880
# DuckDB catalog and schema names a library may not take
RESERVED_LIBRARY_NAMES = frozenset({"main", "temp", "system", "memory", "information_schema", "pg_catalog"})
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")


# ---------------------------------------------------------------- value parsers
# Each parser takes the raw TOML/CLI value and returns the typed value or raises
# ValueError(<what is allowed>); `_parse_section` turns that into a ConfigError.

def parse_size_bytes(value: Any) -> int:
    """'2G', '512M', '1.5GiB', '4096', 4096 → bytes (K/M/G/T are binary, as in SAS)."""
    if isinstance(value, bool):
        raise ValueError("a size such as 512M, 2G or a number of bytes")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size ≥ 0 such as 512M or 2G")
        return value
    m = _SIZE_RE.match(str(value))
    if not m:
        raise ValueError("a size such as 512M, 2G or a number of bytes")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).upper()])


_DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


def parse_duration_s(value: Any) -> float:
    """30, '30', '30s', '500ms', '5m', '1h' → seconds (> 0)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s|min|m|h|d)?\s*", str(value))
        if not m:
            raise ValueError(f"a duration like 30s, 500ms, 5m or 1h, not {value!r}")
        seconds = float(m.group(1)) * _DURATION_UNITS[m.group(2) or "s"]
    if seconds <= 0:
        raise ValueError(f"a positive duration, not {value!r}")
    return seconds


def format_size(n_bytes: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if n_bytes >= _SIZE_UNITS[unit] and n_bytes % _SIZE_UNITS[unit] == 0:
            return f"{n_bytes // _SIZE_UNITS[unit]}{unit}"
    return str(n_bytes)


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(text: str, what: str = "value") -> str:
    """`text` as a TOML basic string, for the grid.toml files statgrid writes and reads back.
    TOML 1.0 ("String"): escape the quote, the backslash and the control characters U+0000–U+001F
    and U+007F; everything else stands as itself (JSON's escapes are not TOML's: JSON writes a
    character beyond U+FFFF as a surrogate pair, which TOML refuses). A TOML file is UTF-8, so a
    text with no UTF-8 form (a path holding a byte that is not UTF-8) cannot be written: ConfigError."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(f"{what} {text!r} is not valid UTF-8 (it holds a byte that is not), so no TOML file can "
                          "hold it; use a path of UTF-8 characters.") from None
    return '"' + "".join(_TOML_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or c == "\x7f" else c)
                         for c in text) + '"'


def _memsize(value: Any) -> int:
    n = parse_size_bytes(value)
    if n < MIN_MEMSIZE_BYTES:
        raise ValueError(f"at least {format_size(MIN_MEMSIZE_BYTES)} (the engine needs that much to run a "
                         f"step); use memsize=512M or more")
    return n


def _nonneg_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("a whole number ≥ 0")
    try:
        n = int(str(value).strip()) if isinstance(value, str) else value
    except ValueError:
        raise ValueError("a whole number ≥ 0") from None
    if not isinstance(n, int) or n < 0:
        raise ValueError("a whole number ≥ 0")
    return n


def _positive_int(value: Any) -> int:
    n = _nonneg_int(value)
    if n == 0:
        raise ValueError("a whole number ≥ 1")
    return n


def _bufsize(value: Any) -> int:
    if isinstance(value, str) and re.search(r"[A-Za-z]", value):
        raise ValueError(f"a number of rows per Parquet row group (default {DEFAULT_ROW_GROUP_ROWS}); "
                         "statgrid's bufsize counts rows, not bytes")
    n = _positive_int(value)
    if n < 1024:
        raise ValueError("at least 1024 rows per row group (smaller groups make reads slow)")
    return n


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise ValueError("true or false")


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("a string in quotes")
    return value


def _names(value: Any) -> tuple[str, ...]:
    """A TOML list of names (user names, host names): printable, no spaces, each at most 128 characters."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v and v.isprintable() and " " not in v
                                              and len(v) <= 128 for v in value):
        raise ValueError('a list of names in quotes, e.g. ["alice", "bob"]')
    return tuple(value)


FENCE_GRACE_MIN_S = 10.0


def _nonneg_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
        raise ValueError("a number ≥ 0")
    return float(value)


def _margin(value: Any) -> float:
    value = _nonneg_float(value)
    if value > 10:
        raise ValueError("a fraction between 0 and 10 (0.1 = 10 %)")
    return value


def _positive_duration(value: Any) -> float:
    seconds = parse_duration_s(value)
    if seconds <= 0:
        raise ValueError("a duration above zero, e.g. \"5h\"")
    return seconds


def _name_counts(value: Any) -> tuple[tuple[str, int], ...]:
    """An inline table {name = whole number ≥ 0} → ((name, n), ...) in its order."""
    if not isinstance(value, Mapping):
        raise ValueError("an inline table of names and whole numbers, e.g. { alice = 40, risk = 12 }")
    out = []
    for name, n in value.items():
        if not name or not name.isprintable() or " " in name or len(name) > 128:
            raise ValueError(f"user or group names: printable, no spaces, at most 128 characters (not {name!r})")
        out.append((str(name), _nonneg_int(n)))
    return tuple(out)


def _shares(value: Any) -> tuple[tuple[str, int], ...]:
    """fairshare = { risk = 40, marketing = 60, default = 1 }: users or groups and their shares (≥ 1)."""
    pairs = _name_counts(value)
    if not pairs:
        raise ValueError("at least one user or group with its shares, e.g. { risk = 40, default = 1 }")
    for name, n in pairs:
        if n < 1:
            raise ValueError(f"shares of at least 1 ({name} = {n}: leave {name} out instead)")
    return pairs


def parse_limit_s(value: Any) -> float:
    """A run limit: a duration as parse_duration_s, or 0 / "0" for none."""
    if value in (0, "0", 0.0):
        return 0.0
    return parse_duration_s(value)


def _engine_port(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        return 0
    return _port(value)


def _fence_grace(value: Any) -> float:
    seconds = parse_duration_s(value)
    if seconds < FENCE_GRACE_MIN_S:
        raise ValueError(f"a duration of at least {FENCE_GRACE_MIN_S:g}s, e.g. 60s (a node is called unavail "
                         "after 5 s without heartbeats; the grace must be well above that)")
    return seconds


def _address(value: Any) -> str:
    """An IP address to listen on ("127.0.0.1", "0.0.0.0", "10.1.2.3", "::")."""
    import ipaddress

    try:
        return str(ipaddress.ip_address(_string(value)))
    except ValueError:
        raise ValueError('an IP address of this machine in quotes, e.g. "127.0.0.1" (this machine only) or '
                         '"0.0.0.0" (every address)') from None


def is_loopback(address: str) -> bool:
    import ipaddress

    return ipaddress.ip_address(address).is_loopback


def _resolve_api_tls(master: "MasterConfig", raw: Mapping[str, Any], source: str) -> "MasterConfig":
    """api_tls = false only on loopback (tokens must not cross a network in clear)."""
    if not master.api_tls and not is_loopback(master.listen):
        raise ConfigError(f"{source}: master.api_tls = false with master.listen = {master.listen!r} would send tokens "
                          "over the network in clear; the API listens beyond loopback only with TLS: set api_tls = "
                          'true (or listen = "127.0.0.1").')
    return master


CPU_NUMBERS_MAX = 8192                  # CONFIG_NR_CPUS's upper bound (arch/x86/Kconfig, NR_CPUS_RANGE_END)
SLOTS_MAX = 100_000                     # job slots of one host: far past any machine's CPUs


def parse_cpus(value: Any) -> tuple[int, ...]:
    """A CPU list as taskset/cpuset write it ("0-3,6") or a TOML list of numbers → sorted numbers."""
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        cpus = set(value)
    elif isinstance(value, str):
        cpus = set()
        for part in value.replace(" ", "").split(","):
            m = re.fullmatch(r"(\d{1,9})(?:-(\d{1,9}))?", part)
            if not m or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
                raise ValueError('a CPU list such as "0-3,6" or [0, 1]')
            first, last = int(m.group(1)), int(m.group(2) or m.group(1))
            if last >= CPU_NUMBERS_MAX:                     # before range(): "0-999999999" is no set to build
                raise ValueError(f"CPU numbers 0 … {CPU_NUMBERS_MAX - 1} (Linux's largest NR_CPUS is {CPU_NUMBERS_MAX})")
            cpus.update(range(first, last + 1))
    else:
        raise ValueError('a CPU list such as "0-3,6" or [0, 1]')
    if any(not 0 <= c < CPU_NUMBERS_MAX for c in cpus):
        raise ValueError(f"CPU numbers 0 … {CPU_NUMBERS_MAX - 1} (Linux's largest NR_CPUS is {CPU_NUMBERS_MAX})")
    return tuple(sorted(cpus))


def _slots(value: Any) -> int:
    n = _positive_int(value)
    if n > SLOTS_MAX:
        raise ValueError(f"a whole number of job slots from 1 to {SLOTS_MAX:,}")
    return n


def _port(value: Any) -> int:
    n = _nonneg_int(value)
    if not 1 <= n <= 65535:
        raise ValueError("a TCP port 1–65535")
    return n


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            return int(str(value).strip())
        except ValueError:
            raise ValueError("a whole number") from None
    return value


# ---------------------------------------------------------------- typed records

@dataclass(frozen=True)
class SessionOptions:
    """Options of one session; SAS names, statgrid meanings.

    memsize_bytes: engine memory cap (DuckDB ``memory_limit``; RSS runs ~10 % above it).
    threads: engine threads; 0 means every CPU this process may use.
    bufsize_rows: rows per Parquet row group written.
    utilsize_bytes: cap on spill in UTIL (DuckDB ``max_temp_directory_size``); 0 = engine default.
    """

    memsize_bytes: int = 2 * KIB**3
    threads: int = 0
    bufsize_rows: int = DEFAULT_ROW_GROUP_ROWS
    utilsize_bytes: int = 0

    @property
    def effective_threads(self) -> int:
        return self.threads or len(os.sched_getaffinity(0))

    def with_overrides(self, overrides: Mapping[str, Any], source: str = "--option") -> "SessionOptions":
        """Apply `key=value` overrides (SAS option names), validated like grid.toml's [session]."""
        parsed = _parse_section("session", {k.lower(): v for k, v in overrides.items()}, _SESSION_KEYS, source)
        return replace(self, **parsed)

    def as_sas_names(self) -> dict[str, Any]:
        return {"memsize": format_size(self.memsize_bytes), "threads": self.effective_threads,
                "bufsize": self.bufsize_rows, "utilsize": format_size(self.utilsize_bytes)}


@dataclass(frozen=True)
class LibraryRoots:
    data: Path
    work: Path
    util: Path


@dataclass(frozen=True)
class Libname:
    name: str
    path: Path
    readonly: bool = False


@dataclass(frozen=True)
class MasterConfig:
    port: int = 8642
    listen: str = "127.0.0.1"
    api_tls: bool = True
    # How long a node may lose the master before it kills its jobs (fencing); the master gives a
    # lost node's jobs to others only after the engine dropped it, later than that.
    fence_grace_s: float = 60.0
    engine_port: int = 0             # the embedded scheduler's port (0: any free one); fixed for firewalls
    names: tuple[str, ...] = ()
    scheduler: str = ""
    # False opens the engine to anyone who reaches its port (they may run code as the grid's
    # user): for benchmarks (benchmarks/dispatch.py --tls) and trusted single-user machines only.
    engine_tls: bool = True


@dataclass(frozen=True)
class MonitorConfig:
    """[monitor]: the sampler that runs beside every grid worker while the grid is up."""

    enabled: bool = True
    interval_s: float = 1.0


@dataclass(frozen=True)
class HostConfig:
    name: str
    slots: int | None = None        # None: the CPUs its worker sees, known when it joins (node.cpus_seen)
    open: bool = True
    cpus: tuple[int, ...] = ()      # CPUs the host's jobs may run on (a cpuset); () = all
    joins: bool = False             # a machine of its own that joins with `statgrid node up`; False: the
                                    # embedded engine runs its worker on the master's machine
    memory_bytes: int = 0           # memory its jobs may reserve together; 0 = not tracked
    max_load: float = 0.0           # 1-minute load average over which it takes no new jobs; 0 = none


@dataclass(frozen=True)
class HostPreference:
    """One token of an LSF HOSTS list: a host name (or 'others'/'all') and its weight."""

    host: str
    weight: int = 0


@dataclass(frozen=True)
class QueueConfig:
    name: str
    priority: int = 30
    hosts: tuple[HostPreference, ...] = (HostPreference("all"),)
    user_limit: int = 0              # running jobs of one user in this queue (UJOB_LIMIT); 0 = none
    job_limit: int = 0               # running jobs of the queue (QJOB_LIMIT); 0 = none
    host_limit: int = 0              # running jobs of the queue on one host (HJOB_LIMIT); 0 = none
    runlimit_s: float = 0.0          # wall time a job of the queue may run (RUNLIMIT); 0 = none
    # (user or group name, shares) in grid.toml's order; "default" stands for every user not named
    # (each such user gets that many shares of their own, as LSF's `default`). () = no fairshare.
    fairshare: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class LimitsConfig:
    """[limits]: running jobs over all queues (LSF lsb.users MAX_JOBS); 0 = no limit."""

    user_jobs: int = 0
    users: tuple[tuple[str, int], ...] = ()      # (user, limit): instead of user_jobs
    groups: tuple[tuple[str, int], ...] = ()     # (group of [groups], limit): its members together


@dataclass(frozen=True)
class SchedulingConfig:
    """[scheduling]: fairshare's dynamic priority (LSF lsb.params) and memory reservations.

    A user's (or group's) priority in a fairshare queue is
        shares / (1 + run_job_factor × running jobs + run_time_factor × decayed slot-hours)
    as LSF's dynamic user priority (CPU time and committed run time factors left out: statgrid
    charges wall time of a slot). Usage decays by half every half_life_s (LSF HIST_HOURS, 5 h)."""

    half_life_s: float = 5 * 3600.0
    memory_margin: float = 0.1        # DESIGN.md: RSS runs ~10 % above memsize; jobspec.SESSION_ENGINE_BYTES adds the engine's own
    run_job_factor: float = 3.0
    run_time_factor: float = 0.7


@dataclass(frozen=True)
class Config:
    home: Path
    source: Path | None
    libraries: LibraryRoots
    libnames: dict[str, Libname]
    session: SessionOptions
    master: MasterConfig
    hosts: dict[str, HostConfig]
    queues: dict[str, QueueConfig]
    monitor: MonitorConfig = MonitorConfig()
    admins: tuple[str, ...] = ()     # [grid] admins: grid administrators besides root
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)   # [groups]: group → members
    limits: LimitsConfig = LimitsConfig()
    scheduling: SchedulingConfig = SchedulingConfig()

    def groups_of(self, user: str) -> tuple[str, ...]:
        """The [groups] `user` is a member of, in grid.toml's order."""
        return tuple(g for g, members in self.groups.items() if user in members)


# (key → parser) tables; the dataclass field name is the key with its unit suffix.
_SESSION_KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "memsize": ("memsize_bytes", _memsize),
    "threads": ("threads", _nonneg_int),
    "bufsize": ("bufsize_rows", _bufsize),
    "utilsize": ("utilsize_bytes", parse_size_bytes),
}
_HINTS = {
    "session.sortsize": "DuckDB has no separate sort memory: sorts use memsize, and spill to UTIL. "
                        "Set memsize instead",
}
_TOP_KEYS = ("grid", "libraries", "libname", "session", "master", "hosts", "queues", "monitor", "groups", "limits",
             "scheduling")


def _unknown(section: str, key: str, allowed: list[str], source: str) -> ConfigError:
    hint = _HINTS.get(f"{section}.{key}")
    where = f"{section}.{key}" if section else key
    if hint:
        return ConfigError(f"{source}: {where!r} is not an option: {hint}.")
    scope = f"in [{section}]" if section else "at the top level"
    return ConfigError(f"{source}: unknown key {where!r}; allowed {scope}: {', '.join(sorted(allowed))}.")


def _parse_section(section: str, raw: Mapping[str, Any], keys: dict[str, tuple[str, Callable[[Any], Any]]],
                   source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in keys:
            raise _unknown(section, key, list(keys), source)
        field_name, parser = keys[key]
        try:
            out[field_name] = parser(value)
        except ValueError as exc:
            raise ConfigError(f"{source}: {section}.{key} = {_shown(value)} is not allowed: expected {exc}.") from None
    return out


def _shown(value: Any, max_chars: int = 80) -> str:
    """repr() of a config value for a message, cut at max_chars (a 5000-digit number has no repr at
    all past Python's int_max_str_digits: it is shown by its size)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"a number of {value.bit_length():,} bits"
    text = repr(value)
    return text if len(text) <= max_chars else text[:max_chars] + "…"


def _table(raw: Mapping[str, Any], key: str, source: str) -> Mapping[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{source}: {key!r} must be a table ([{key}]), not {value!r}.")
    return value


def _check_name(kind: str, name: str, source: str) -> None:
    if not NAME_RE.match(name):
        raise ConfigError(f"{source}: {kind} name {name!r} is not allowed: use letters, digits and "
                          "underscore, starting with a letter or underscore, at most 32 characters.")


def parse_host_preferences(spec: str, hosts: Mapping[str, HostConfig], where: str) -> tuple[HostPreference, ...]:
    """LSF HOSTS syntax: 'node1+1 others+2', 'all', 'node1 node2'. Higher weight = preferred."""
    prefs = []
    for token in spec.split():
        name, _, weight = token.partition("+")
        if weight and not weight.isdigit():
            raise ConfigError(f"{where}: {token!r} is not allowed: expected HOST or HOST+N (N a whole number), "
                              "e.g. 'node1+1 others+2'.")
        if name not in ("all", "others") and name not in hosts:
            raise ConfigError(f"{where}: host {name!r} is not a configured host; known hosts: "
                              f"{', '.join(sorted(hosts))} (or 'all', 'others').")
        prefs.append(HostPreference(name, int(weight or 0)))
    if not prefs:
        raise ConfigError(f"{where}: empty host list; use 'all' or host names like 'node1+1 others+2'.")
    return tuple(prefs)


def _default_hosts() -> dict[str, HostConfig]:
    return {f"node{i}": HostConfig(f"node{i}") for i in range(1, 5)}


def find_config_file(explicit: str | os.PathLike | None, env: Mapping[str, str]) -> Path | None:
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"config file {str(path)!r} does not exist; pass an existing grid.toml "
                              "or leave --config out to use the defaults.")
        return path
    if env.get("STATGRID_CONFIG"):
        path = Path(env["STATGRID_CONFIG"])
        if not path.is_file():
            raise ConfigError(f"$STATGRID_CONFIG={str(path)!r} does not exist; point it at a grid.toml or unset it.")
        return path
    candidates = [Path(env["STATGRID_HOME"]) / "grid.toml"] if env.get("STATGRID_HOME") else []
    candidates.append(Path.cwd() / "grid.toml")
    return next((p for p in candidates if p.is_file()), None)


def load_config(path: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Read grid.toml (or the defaults) into a `Config`; every path made absolute."""
    env = os.environ if env is None else env
    file = find_config_file(path, env)
    source = str(file) if file else "defaults"
    raw: dict[str, Any] = {}
    if file:
        try:
            raw = tomllib.loads(file.read_bytes().decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{file}: not UTF-8 text: byte {exc.start} (0x{exc.object[exc.start]:02x}) cannot be "
                              "decoded; TOML files are UTF-8 (save it as UTF-8, e.g. `iconv -f latin1 -t utf-8`).") \
                from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{file}: not valid TOML: {exc}.") from None
        except ValueError as exc:                  # tomllib's int(): a number past Python's int_max_str_digits
            raise ConfigError(f"{file}: a number in it has more than {sys.get_int_max_str_digits():,} digits, more than "
                              "Python reads; no setting takes such a number: correct it.") from None
        except OSError as exc:
            raise ConfigError(f"cannot read the grid's configuration {str(file)!r} ({exc.strerror}); a grid used by "
                              "several accounts keeps its grid.toml readable by them (chmod 644, and every directory "
                              "above it searchable), or point --config / $STATGRID_CONFIG at a copy you may read.") \
                from None
    for key in raw:
        if key not in _TOP_KEYS:
            raise _unknown("", key, list(_TOP_KEYS), source)

    grid = _parse_section("grid", _table(raw, "grid", source), {"home": ("home", _string),
                                                                 "admins": ("admins", _names)}, source)
    if "home" in grid:
        home = Path(grid["home"]).expanduser()
        if not home.is_absolute():
            home = (file.parent if file else Path.cwd()) / home
    elif env.get("STATGRID_HOME"):
        home = Path(env["STATGRID_HOME"])
    elif file:
        home = file.parent
    else:
        home = Path.cwd() / "statgrid-home"
    home = home.absolute()

    def under_home(p: str) -> Path:
        q = Path(p).expanduser()
        return q if q.is_absolute() else home / q

    lib_raw = _parse_section("libraries", _table(raw, "libraries", source),
                             {k: (k, _string) for k in ("data", "work", "util")}, source)
    roots = LibraryRoots(**{k: under_home(lib_raw.get(k, k)) for k in ("data", "work", "util")})

    libnames: dict[str, Libname] = {}
    for name, spec in _table(raw, "libname", source).items():
        _check_name("library", name, source)
        if name.lower() in RESERVED_LIBRARY_NAMES | {"data", "work", "util"}:
            raise ConfigError(f"{source}: library name {name!r} is reserved; choose another name.")
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{source}: libname.{name} = {spec!r} must be a table: [libname.{name}] with path = \"...\".")
        parsed = _parse_section(f"libname.{name}", spec, {"path": ("path", _string), "readonly": ("readonly", _bool)},
                                source)
        if "path" not in parsed:
            raise ConfigError(f"{source}: [libname.{name}] needs path = \"/some/dir\".")
        libnames[name.lower()] = Libname(name.lower(), under_home(parsed["path"]), parsed.get("readonly", False))

    session = SessionOptions(**_parse_section("session", _table(raw, "session", source), _SESSION_KEYS, source))
    master = MasterConfig(**_parse_section("master", _table(raw, "master", source),
                                           {"port": ("port", _port), "scheduler": ("scheduler", _string),
                                            "engine_tls": ("engine_tls", _bool), "listen": ("listen", _address),
                                            "api_tls": ("api_tls", _bool), "names": ("names", _names),
                                            "fence_grace": ("fence_grace_s", _fence_grace),
                                            "engine_port": ("engine_port", _engine_port)}, source))
    master = _resolve_api_tls(master, _table(raw, "master", source), source)

    hosts_raw = _table(raw, "hosts", source)
    hosts: dict[str, HostConfig] = {}
    for name, spec in hosts_raw.items():
        _check_name("host", name, source)
        if name in ("all", "others"):
            raise ConfigError(f"{source}: host name {name!r} is reserved for queue host lists; choose another.")
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{source}: hosts.{name} = {spec!r} must be a table: [hosts.{name}] with e.g. slots = 2.")
        hosts[name] = HostConfig(name, **_parse_section(
            f"hosts.{name}", spec, {"slots": ("slots", _slots), "open": ("open", _bool), "cpus": ("cpus", parse_cpus),
                                    "joins": ("joins", _bool), "memory": ("memory_bytes", parse_size_bytes),
                                    "max_load": ("max_load", _nonneg_float)},
            source))
    hosts = hosts or _default_hosts()

    queues: dict[str, QueueConfig] = {}
    for name, spec in _table(raw, "queues", source).items():
        _check_name("queue", name, source)
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{source}: queues.{name} = {spec!r} must be a table: [queues.{name}] with e.g. "
                              "priority = 30.")
        parsed = _parse_section(f"queues.{name}", spec, {
            "priority": ("priority", _int), "hosts": ("hosts", _string),
            "user_limit": ("user_limit", _nonneg_int), "job_limit": ("job_limit", _nonneg_int),
            "host_limit": ("host_limit", _nonneg_int), "runlimit": ("runlimit_s", parse_limit_s),
            "fairshare": ("fairshare", _shares)}, source)
        if "hosts" in parsed:
            parsed["hosts"] = parse_host_preferences(parsed["hosts"], hosts, f"{source}: queues.{name}.hosts")
        queues[name] = QueueConfig(name, **parsed)
    queues = queues or {"normal": QueueConfig("normal")}

    groups: dict[str, tuple[str, ...]] = {}
    for name, members in _table(raw, "groups", source).items():
        _check_name("group", name, source)
        if name == "default":
            raise ConfigError(f"{source}: group name 'default' is reserved for fairshare (every user not named); "
                              "choose another.")
        try:
            groups[name] = _names(members)
        except ValueError as exc:
            raise ConfigError(f"{source}: groups.{name} = {members!r} is not allowed: expected {exc}.") from None
    for qname, queue in queues.items():
        named = [n for n, _ in queue.fairshare]
        for g in (n for n in named if n in groups):
            for other in (n for n in named if n in groups and n != g):
                both = set(groups[g]) & set(groups[other])
                if both:
                    raise ConfigError(f"{source}: queues.{qname}.fairshare names groups {g!r} and {other!r}, which "
                                      f"share the member(s) {', '.join(sorted(both))}: a user's jobs must count "
                                      "against one share; give them one group of the two.")
    limits_raw = _parse_section("limits", _table(raw, "limits", source), {
        "user_jobs": ("user_jobs", _nonneg_int), "users": ("users", _name_counts),
        "groups": ("groups", _name_counts)}, source)
    limits = LimitsConfig(**limits_raw)
    for g, _ in limits.groups:
        if g not in groups:
            raise ConfigError(f"{source}: limits.groups names {g!r}, which is not a group of [groups] "
                              f"({', '.join(groups) or 'none defined'}); define it there or remove the limit.")
    scheduling = SchedulingConfig(**_parse_section("scheduling", _table(raw, "scheduling", source), {
        "half_life": ("half_life_s", _positive_duration), "memory_margin": ("memory_margin", _margin),
        "run_job_factor": ("run_job_factor", _nonneg_float),
        "run_time_factor": ("run_time_factor", _nonneg_float)}, source))

    monitor = MonitorConfig(**_parse_section("monitor", _table(raw, "monitor", source), {
        "enabled": ("enabled", _bool), "interval": ("interval_s", parse_duration_s)}, source))

    return Config(home=home, source=file.absolute() if file else None, libraries=roots, libnames=libnames,
                  session=session, master=master, hosts=hosts, queues=queues, monitor=monitor,
                  admins=grid.get("admins", ()), groups=groups, limits=limits, scheduling=scheduling)


def parse_option_pairs(pairs: list[str]) -> dict[str, str]:
    """['memsize=2G', 'threads=1'] → {'memsize': '2G', 'threads': '1'} (CLI --option)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--option {pair!r} is not KEY=VALUE; e.g. --option memsize=2G "
                              f"(keys: {', '.join(_SESSION_KEYS)}).")
        out[key.strip().lower()] = value.strip()
    return out

