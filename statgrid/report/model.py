"""The report's one result record: tables and charts, each defined once and rendered by every
exporter (md.py, csv_out.py, json_out.py, html.py).

A Table holds raw values (numbers stay numbers for JSON and CSV); `cell()` is the one place
they become text, so the Markdown, HTML and terminal views agree to the digit.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    digits: int | None = None        # decimals for floats; None: the general rule in fmt()
    align: str = "right"             # "left" for names


@dataclass
class Table:
    id: str                          # file name of its CSV, anchor in HTML
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)

    def cell(self, row: dict, col: Column) -> str:
        return fmt(row.get(col.key), col.digits)


@dataclass
class Chart:
    id: str
    title: str
    kind: str                        # lines | stacked | bars | timeline | scaling
    data: dict[str, Any]             # per kind; see charts.py
    caption: str = ""


@dataclass
class Report:
    title: str
    subtitle: str
    tables: list[Table]
    charts: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def fmt(value: Any, digits: int | None = None) -> str:
    """None → '—'; bool → yes/no; int → 1,234; float → `digits` decimals, or by size: ≥ 100 → 0,
    ≥ 1 → 2, smaller → 3 significant digits (0.900, 0.0229)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:
            return "—"
        if digits is not None:
            return f"{value:,.{digits}f}"
        a = abs(value)
        if a >= 100:
            return f"{value:,.0f}"
        if a >= 1 or a == 0:
            return f"{value:.2f}"
        return f"{value:#.3g}"
    return str(value)
