"""What every procedure shares: the step decorator, name checks and the text listing."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Callable, Sequence

from statgrid.errors import StatgridError
from statgrid.libraries import sql_ident as qi  # noqa: F401  (re-exported for procs)

NUMERIC_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                 "UBIGINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL")


@dataclass
class ResultTable:
    """A procedure's result held in memory: column names, rows, and the data set written (out=)."""

    columns: list[str]
    rows: list[list[Any]]
    out: Any = None           # DatasetRef when written with out=
    stats: dict[str, Any] = field(default_factory=dict)   # extra figures (e.g. chi-square)

    def to_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def to_arrow(self):
        """Column by column, so a column is never lost to another of the same name; a column
        with no values at all is typed DOUBLE (a missing number), not Arrow's null type."""
        import pyarrow as pa
        arrays = []
        for i in range(len(self.columns)):
            arr = pa.array([r[i] for r in self.rows])
            arrays.append(arr.cast(pa.float64()) if pa.types.is_null(arr.type) else arr)
        return pa.Table.from_arrays(arrays, names=list(self.columns))


def procedure(step_name: str) -> Callable:
    """Make `fn(session, ...)` a Session method that runs as one step named `step_name`."""
    def deco(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def method(self, *args, **kwargs):
            with self.step(step_name):
                return fn(self, *args, **kwargs)
        return method
    return deco


def is_numeric(sql_type: str) -> bool:
    return sql_type.upper().startswith(NUMERIC_TYPES)


def as_list(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return value.split()
    return list(value)


def check_columns(names: Sequence[str], available: Sequence[str], role: str, dsname: str) -> list[str]:
    """Map user-given names to the data set's columns (case-insensitive), or say which are missing."""
    by_lower = {a.lower(): a for a in available}
    out = []
    for n in names:
        if n.lower() not in by_lower:
            raise StatgridError(f"{role} variable {n!r} is not in {dsname}; its variables are: "
                                f"{', '.join(available)}.")
        out.append(by_lower[n.lower()])
    return out


def dataset_types(s, data: str) -> tuple[Any, dict[str, str]]:
    """Data set `data` opened, and its variables' SQL types by name, in the data set's order (the
    names a procedure checks its statements against, the types it picks numeric variables by)."""
    src = s.dataset(data)
    return src, dict(s.columns(src.scan_sql()))


def column_names(s, ref) -> list[str]:
    """The variable names of data set `ref`, read from its Parquet footer.

    The footer read is ~2 ms on a 10 M-row file; the engine's DESCRIBE of the same file plans a
    query and took 12–20 ms (a third of FREQ's fixed cost per step, benchmarks/procs.py). Names the
    engine would rename (the same name twice, in any case) and files pyarrow cannot read are asked
    of the engine, so the names are always the ones SQL sees.
    """
    import pyarrow.parquet as pq
    try:
        names = pq.read_schema(ref.path).names
    except Exception:   # noqa: BLE001 — anything pyarrow cannot parse: the engine decides
        names = None
    if names is None or len({n.lower() for n in names}) < len(names):
        names = [c for c, _ in s.columns(ref.scan_sql())]
    return names


# ---------------------------------------------------------------------------- listing
def format_value(value: Any) -> str:
    """SAS-like cell text: missing numbers print '.', floats with up to 8 significant digits."""
    if value is None:
        return "."
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if math.isnan(value):
            return "."
        if value != 0 and (abs(value) >= 1e12 or abs(value) < 1e-4):
            return f"{value:.6E}"
        text = f"{value:.8g}" if abs(value) >= 1 else f"{value:.7f}".rstrip("0").rstrip(".")
        return text if "e" not in text else f"{value:.4f}"
    if isinstance(value, Decimal):
        return format_value(float(value))
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def render_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None,
                 right_align: Sequence[bool] | None = None) -> str:
    """A plain-text table: header, a rule, one line per row; numbers right-aligned."""
    cells = [[format_value(v) for v in row] for row in rows]
    if right_align is None:
        right_align = [bool(rows) and all(isinstance(r[i], (int, float, Decimal)) or r[i] is None for r in rows)
                       and any(r[i] is not None for r in rows) for i in range(len(columns))]
    widths = [max([len(str(c))] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if ra else v.ljust(w)
                         for v, w, ra in zip(values, widths, right_align)).rstrip()

    out = []
    if title:
        out += [title, ""]
    out.append(line([str(c) for c in columns]))
    out.append("  ".join("-" * w for w in widths))
    out += [line(r) for r in cells]
    return "\n".join(out) + "\n"
