"""Numbered variable lists (`x1-x10`), shared by the parser (INPUT) and data-set options (KEEP=, DROP=)."""
from __future__ import annotations

import re

from statgrid.sas.errors import SasError


def expand_numbered(a: str, b: str) -> list[str]:
    """`x1-x10` → x1 … x10 (SAS: the same prefix, numbered suffixes; either direction). When the first suffix has
    leading zeros the names keep its width (`v002-v004` → v002 v003 v004), and the last suffix must have at least
    as many digits (SAS Language Reference: Concepts, "Data Set Lists": sales001-sales999 is valid, sales001-sales99
    is an error)."""
    ma, mb = re.fullmatch(r"(.*?)(\d+)", a), re.fullmatch(r"(.*?)(\d+)", b)
    if not ma or not mb or ma.group(1).upper() != mb.group(1).upper():
        raise SasError(f"Invalid numbered range list {a}-{b}", text=f"{a}-{b}", expected="x1-x10")
    first, last = ma.group(2), mb.group(2)
    width = len(first) if first.startswith("0") and len(first) > 1 else 0
    if len(last) < width:
        raise SasError(f"Invalid numbered range list {a}-{b}: the first suffix {first} has leading zeros, so the last "
                       f"suffix needs at least {width} digits", text=f"{a}-{b}",
                       expected=f"{a}-{mb.group(1)}{int(last):0{width}d}")
    i, j = int(first), int(last)
    step = 1 if j >= i else -1
    return [f"{ma.group(1)}{k:0{width}d}" if width else f"{ma.group(1)}{k}" for k in range(i, j + step, step)]
