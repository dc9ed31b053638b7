"""What a PROC SQL SELECT gives back: its rows as the listing shows them (labels as headers, formats kept,
a special missing value as its letter) or as INTO's macro variables; SQLOBS and the other automatic macro
variables PROC SQL sets."""
from __future__ import annotations

from typing import Any

from statgrid.sas.dataset import ColumnInfo
from statgrid.sas.procs.common import format_cell
from statgrid.sas.values import SpecialMissing


def symbol(program: Any, name: str, value: str) -> None:
    try:
        program.symbols.set_global(name, value)
    except Exception:  # noqa: BLE001 - a program without macro symbols
        pass


def cell_text(program, v, c: ColumnInfo, fmt_default: str = "BEST8.") -> str:
    if isinstance(v, SpecialMissing):
        return v.code                              # SAS prints a special missing value's letter
    if c.type == "char":
        return format_cell(program, v, c.format, "char")
    return format_cell(program, v, c.format or fmt_default, "num")


def assign_into(program, targets, cols, rows) -> None:
    for j, target in enumerate(targets):
        c = cols[j] if j < len(cols) else None
        if c is None:
            break
        values = [cell_text(program, r[j], c) for r in rows]
        if target["sep"] is not None:
            symbol(program, target["names"][0], target["sep"].join(v.strip() for v in values))
        elif target["range"]:
            for name, v in zip(target["names"], values):
                symbol(program, name, v.strip())
        elif values:
            # one value: SAS keeps its blanks (a number is BEST8., right-aligned) unless TRIMMED
            v = values[0] if c.type == "char" else values[0].rjust(8)
            symbol(program, target["names"][0], v.strip() if target["trimmed"] else v)
    if not rows:
        program.log.note("No rows were selected.")


def listing(program, cols: list[ColumnInfo], rows: list[list], number: bool) -> str:
    heads = [c.label or ("" if c.name.startswith("_TEMA") else c.name) for c in cols]
    cells = [[cell_text(program, v, c) for v, c in zip(r, cols)] for r in rows]
    if number:
        heads = ["Row"] + heads
        cells = [[str(i)] + r for i, r in enumerate(cells, 1)]
    widths = [max([len(h)] + [len(r[j]) for r in cells]) for j, h in enumerate(heads)]
    right = [False] * len(heads)
    for j, c in enumerate(([ColumnInfo("Row", "num", 8)] if number else []) + cols):
        right[j] = c.type == "num"
    line = "  ".join(h.center(w) for h, w in zip(heads, widths))
    rule = "-" * len(line.rstrip())
    body = ["  ".join(x.rjust(w) if r else x.ljust(w) for x, w, r in zip(row, widths, right)).rstrip()
            for row in cells]
    return "\n".join([line.rstrip(), rule] + body)
