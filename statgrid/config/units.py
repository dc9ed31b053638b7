"""Sizes and durations as grid.toml and --option write them: '2G' → bytes, '5m' → seconds, and back."""
from __future__ import annotations

import re
from typing import Any

KIB = 1024
_SIZE_UNITS = {"": 1, "B": 1, "K": KIB, "M": KIB**2, "G": KIB**3, "T": KIB**4}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


# Each parser takes the raw TOML/CLI value and returns the typed value or raises
# ValueError(<what is allowed>); the section parser turns that into a ConfigError.

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

def parse_limit_s(value: Any) -> float:
    """A run limit: a duration as parse_duration_s, or 0 / "0" for none."""
    if value in (0, "0", 0.0):
        return 0.0
    return parse_duration_s(value)

