"""Parsers of single grid.toml values (numbers, flags, names, ports, CPU lists).

Each takes the raw TOML/CLI value and returns the typed value or raises ValueError(<what is
allowed>); `sections.parse_section` turns that into a ConfigError naming key and value."""
from __future__ import annotations

import re
from typing import Any, Mapping

from statgrid.config.units import KIB, format_size, parse_duration_s, parse_size_bytes

MIN_MEMSIZE_BYTES = 64 * KIB**2
MAX_MEMSIZE_BYTES = KIB**5              # 1 PiB: no machine has more; DuckDB's memory_limit refuses far larger values
DEFAULT_ROW_GROUP_ROWS = 122_880         # DuckDB's own default row group (rows); statgrid's comes from bufsize
FENCE_GRACE_MIN_S = 10.0
CPU_NUMBERS_MAX = 8192                  # CONFIG_NR_CPUS's upper bound (arch/x86/Kconfig, NR_CPUS_RANGE_END)
SLOTS_MAX = 100_000                     # job slots of one host: far past any machine's CPUs


def _memsize(value: Any) -> int:
    n = parse_size_bytes(value)
    if n > MAX_MEMSIZE_BYTES:
        raise ValueError(f"at most 1 PiB ({format_size(MAX_MEMSIZE_BYTES)}: the largest engine memory limit statgrid "
                         f"sets; {value!s:.40} is {n:.3g} bytes); use e.g. memsize=64G")
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


def _port_range(value: Any) -> tuple[int, int]:
    """"40000..40999": the first and last TCP port of a range (both included)."""
    text = str(value).strip()
    first, sep, last = text.partition("..")
    try:
        low, high = _port(first), _port(last)
    except ValueError:
        raise ValueError('a range of TCP ports such as "40000..40999"') from None
    if not sep or high - low < 9:
        raise ValueError('a range of at least 10 TCP ports such as "40000..40999" (a kernel binds 5)')
    return low, high


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            return int(str(value).strip())
        except ValueError:
            raise ValueError("a whole number") from None
    return value
