"""The listing text of CORR's and TTEST's tables, which ods/odstable.render cannot lay out: headings spanning two
columns ("95% CL Mean" over its lower and upper limits), cells of several lines (a correlation, its p-value and
N), and SAS's D-format numbers (a fixed count of decimals, but 0 printed as "0" and a whole-number DF without
decimals, as SAS's TTEST listing shows: https://pastebin.com/5h0tyjvM).
"""
from __future__ import annotations

import math


def dnum(v, decimals: int) -> str:
    """A number with `decimals` decimals ('.' missing, 0 as '0', ±Infty), as SAS's D format shows it."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "."
    v = float(v)
    if math.isinf(v):
        return "Infty" if v > 0 else "-Infty"
    if v == 0:
        return "0"
    if abs(v) >= 1e10:
        return f"{v:.{max(decimals - 1, 1)}E}"
    return f"{v:.{decimals}f}"


def pvalue(v) -> str:
    """PVALUE6.4: <.0001 below 0.0001."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "."
    return "<.0001" if v < 0.0001 else f"{v:.4f}"


def df_text(v) -> str:
    """A DF: whole numbers as they are, Satterthwaite's with 3 decimals (SAS: 11.496)."""
    if v is None:
        return "."
    return str(int(v)) if float(v).is_integer() else f"{v:.3f}"


def text_table(heads: list[str], rows: list[list[str]], n_left: int = 1,
               spans: list[tuple[int, int, str]] = (), title: str = "", min_width: int = 0) -> list[str]:
    """Columns two blanks apart, the first `n_left` left-aligned, the others right-aligned; `spans`: (first
    column, count, heading) headings centred over several columns (their own headings left blank); the title
    centred over the table; `min_width`: the right-aligned columns' least width (CORR's matrices)."""
    widths = [max([len(h), 0 if j < n_left else min_width] + [len(r[j]) for r in rows]) for j, h in enumerate(heads)]
    for first, count, text in spans:
        have = sum(widths[first:first + count]) + 2 * (count - 1)
        if len(text) > have:                       # widen the spanned columns' first to fit the heading
            widths[first] += len(text) - have

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if j < n_left else c.rjust(w)
                         for j, (c, w) in enumerate(zip(cells, widths))).rstrip()
    head = line(heads)
    if spans:
        cells = list(heads)
        pieces, j = [], 0
        while j < len(heads):
            span = next((s for s in spans if s[0] == j), None)
            if span:
                first, count, text = span
                w = sum(widths[first:first + count]) + 2 * (count - 1)
                pieces.append(text.center(w).rstrip().ljust(w))
                j += count
            else:
                w = widths[j]
                pieces.append(cells[j].ljust(w) if j < n_left else cells[j].rjust(w))
                j += 1
        head = "  ".join(pieces).rstrip()
    body = [line(r) for r in rows]
    width = max([len(head)] + [len(b) for b in body])
    out = [title.center(width).rstrip(), ""] if title else []
    return out + [head, ""] + body
