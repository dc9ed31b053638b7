"""Numbered variable lists (`x1-x10`), shared by the parser (INPUT) and data-set options (KEEP=, DROP=)."""
from __future__ import annotations

from statgrid.sas.errors import SasError


def expand_numbered(a: str, b: str) -> list[str]:
    """`x1-x10` → x1 … x10 (SAS: the same prefix, numbered suffixes; either direction)."""
    import re
    ma, mb = re.fullmatch(r"(.*?)(\d+)", a), re.fullmatch(r"(.*?)(\d+)", b)
    if not ma or not mb or ma.group(1).upper() != mb.group(1).upper():
        raise SasError(f"Invalid numbered range list {a}-{b}", text=f"{a}-{b}", expected="x1-x10")
    i, j = int(ma.group(2)), int(mb.group(2))
    step = 1 if j >= i else -1
    return [f"{ma.group(1)}{k}" for k in range(i, j + step, step)]
