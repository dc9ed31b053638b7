"""Finding grid.toml and reading it into a `Config`: every section checked, every path made absolute."""
from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any, Mapping

from statgrid.config.records import (Config, HostConfig, HostPreference, LibraryRoots, Libname, LimitsConfig,
                                     MasterConfig, MonitorConfig, QueueConfig, SchedulingConfig, SessionOptions)
from statgrid.config.sections import _SESSION_KEYS, _TOP_KEYS, _check_name, _parse_section, _table, _unknown
from statgrid.config.units import parse_limit_s, parse_size_bytes, parse_duration_s
from statgrid.config.values import (_address, _bool, _engine_port, _fence_grace, _int, _margin, _name_counts,
                                    _names, _nonneg_float, _nonneg_int, _port, _port_range, _positive_duration, _shares, _slots,
                                    _string, is_loopback, parse_cpus)
from statgrid.errors import ConfigError

# DuckDB catalog and schema names a library may not take
RESERVED_LIBRARY_NAMES = frozenset({"main", "temp", "system", "memory", "information_schema", "pg_catalog"})


def _resolve_api_tls(master: "MasterConfig", raw: Mapping[str, Any], source: str) -> "MasterConfig":
    """api_tls = false only on loopback (tokens must not cross a network in clear)."""
    if not master.api_tls and not is_loopback(master.listen):
        raise ConfigError(f"{source}: master.api_tls = false with master.listen = {master.listen!r} would send tokens "
                          "over the network in clear; the API listens beyond loopback only with TLS: set api_tls = "
                          'true (or listen = "127.0.0.1").')
    return master

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
        except ValueError:                         # tomllib's int(): a number past Python's int_max_str_digits
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
            "fairshare": ("fairshare", _shares), "idle_timeout": ("idle_timeout_s", parse_limit_s),
            "kernel_ports": ("kernel_ports", _port_range)}, source)
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

