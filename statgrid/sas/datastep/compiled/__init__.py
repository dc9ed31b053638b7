"""The NUMBA engine (engines.py): a DATA step compiled to one machine-code loop over column batches."""
from __future__ import annotations

from typing import Any


def try_run(step: Any, forced: bool = False) -> bool:
    """Run `step` compiled if it can be; False (nothing done) if not."""
    return False
