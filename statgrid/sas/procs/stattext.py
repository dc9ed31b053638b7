"""The listing text of MEANS's and FREQ's statistics tables (simple_table: headings stacked over narrow columns
as SAS's listing stacks them) and of CORR's and TTEST's tables, which ods/odstable.render cannot lay out:
headings spanning two columns ("95% CL Mean" over its lower and upper limits), cells of several lines (a
correlation, its p-value and N), and SAS's D-format numbers (a fixed count of decimals, but 0 printed as "0" and
a whole-number DF without decimals, as SAS's TTEST listing shows: https://pastebin.com/5h0tyjvM).
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


def simple_table(header: list[str], body: list[list[str]], n_left: int | list[bool],
                 closing_rule: bool = True) -> list[str]:
    """A statistics table as MEANS and FREQ print it: the headings, a rule, the rows (the first n_left
    columns left-aligned, the others right-aligned; or, as a list, each column's left flag), and a closing rule. As in SAS's listing, a heading wider
    than its column's values is split at its blanks over several lines, bottom-aligned ("Cumulative" over
    "Frequency", "N" over "Miss"); a column is never narrower than the longest word of its heading."""
    widths = [max([len(r[j]) for r in body] + [max((len(w) for w in h.split()), default=0)])
              for j, h in enumerate(header)]
    stacked = [_split_heading(h, w) for h, w in zip(header, widths)]
    widths = [max([w] + [len(x) for x in lines]) for w, lines in zip(widths, stacked)]
    depth = max((len(x) for x in stacked), default=1)
    stacked = [[""] * (depth - len(x)) + x for x in stacked]

    left = n_left if isinstance(n_left, list) else [j < n_left for j in range(len(header))]

    def line(cells):
        return "  ".join(c.ljust(w) if lf else c.rjust(w) for c, w, lf in zip(cells, widths, left))
    heads = [line([x[k] for x in stacked]).rstrip() for k in range(depth)]
    rule = "-" * len(line(["" for _ in header]))
    return heads + [rule] + [line(r).rstrip() for r in body] + ([rule] if closing_rule else [])


def _split_heading(heading: str, width: int) -> list[str]:
    """The heading's lines: its words packed greedily into lines of at most `width` characters."""
    if len(heading) <= width or " " not in heading:
        return [heading]
    lines: list[str] = []
    for word in heading.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines
