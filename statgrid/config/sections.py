"""A grid.toml table → checked field values, and the ConfigError messages for what is not allowed."""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from statgrid.config.units import parse_size_bytes
from statgrid.config.dataset_io import parse_bufsize, parse_compress, parse_sortsize
from statgrid.config.values import _memsize, _nonneg_int, _string
from statgrid.errors import ConfigError

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")

# (key → parser) tables; the dataclass field name is the key with its unit suffix.
_SESSION_KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "memsize": ("memsize_bytes", _memsize),
    "threads": ("threads", _nonneg_int),
    "bufsize": ("bufsize_bytes", parse_bufsize),      # SAS's BUFSIZE: bytes of one I/O request
    "sortsize": ("sortsize_bytes", parse_sortsize),   # SAS's SORTSIZE: memory_limit while sorting
    "compress": ("compress", parse_compress),         # SAS's COMPRESS: no|yes|char|binary
    "utilsize": ("utilsize_bytes", parse_size_bytes),
    "autoexec": ("autoexec", _string),      # a SAS program run before each .sas job (SAS's AUTOEXEC)
}
_HINTS: dict[str, str] = {}
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

