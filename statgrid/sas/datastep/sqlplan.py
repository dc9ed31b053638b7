"""The SQL engine (engines.py): a DATA step whose rows do not depend on each other as one DuckDB query."""
from __future__ import annotations

from typing import Any


def try_run(step: Any, forced: bool = False) -> bool:
    """Run `step` as SQL if it can be; False (nothing done) if not."""
    return False
