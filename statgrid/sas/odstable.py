"""One procedure table, as SAS's Output Delivery System holds it: the record a PROC makes once and that feeds
both the listing (render) and an ODS OUTPUT data set (statgrid/sas/ods.py).

A table has SAS's table name (ParameterEstimates, ANOVA, OneWayFreqs …: the "ODS Table Names" section of each
procedure's chapter), its title as the listing shows it, and columns with SAS's column names (the data set's
variables), the listing's heading and a display format. Columns marked `hidden` are in the data set only
(SAS's Model, Dependent, Table …: shown in the listing's headings, not as columns); tables printed without
column headings (SAS's FitStatistics of REG: label/value pairs) have `headings=False`.
Standard library only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class OdsColumn:
    name: str                      # the data set variable, SAS's column name (Estimate, StdErr, Probt …)
    heading: str | None = None     # the listing's heading (None: the name; "": none)
    type: str = "num"              # "num" or "char"
    fmt: str = "best"              # listing format: "p" (PVALUE6.4), "d<k>" (k decimals), "int", "best", "best<w>",
                                   # "b" (GLM's Biased: "B" for 1), "text"
    label: str = ""                # the data set variable's label
    hidden: bool = False           # in the data set only
    right: bool | None = None      # right-aligned in the listing (None: numbers right, characters left)

    @property
    def head(self) -> str:
        return self.name if self.heading is None else self.heading


@dataclass
class OdsTable:
    name: str                      # SAS's table name: "ParameterEstimates"
    title: str                     # the listing's title above the table ("" for none)
    columns: list[OdsColumn]
    rows: list[list[Any]]
    proc: str = ""                 # "Reg", "Means" …: the first part of the path
    path: str = ""                 # SAS's full path (Reg.MODEL1.Fit.y.ParameterEstimates); default proc.name
    by: list[tuple[Any, Any]] = field(default_factory=list)   # (ColumnInfo of a BY variable, its value)
    headings: bool = True          # print the column headings
    footer: list[str] = field(default_factory=list)   # lines under the rows (LOGISTIC's "Probability modeled is …")

    @property
    def full_path(self) -> str:
        return self.path or (f"{self.proc}.{self.name}" if self.proc else self.name)

    def matches(self, spec: str) -> bool:
        """Does an ODS selection name this table? Its name, its full path, or a partial path (the end of the
        path after a period), case-blind (SAS: ODS OUTPUT statement, "output-object")."""
        s, path = spec.upper(), self.full_path.upper()
        return s == self.name.upper() or s == path or path.endswith("." + s)


def cell(value: Any, fmt: str) -> str:
    """One value as the listing shows it: '.' for a missing number."""
    if value is None:                                # not applicable (an Error row's F Value): blank
        return ""
    if isinstance(value, float) and math.isnan(value):
        return "." if fmt != "text" else ""
    if isinstance(value, str) or fmt == "text":
        return str(value).rstrip()
    v = float(value)
    if math.isinf(v):
        return "Infty" if v > 0 else "-Infty"
    if fmt == "p":                                   # PVALUE6.4
        return "<.0001" if v < 0.0001 else f"{v:.4f}"
    if fmt == "b":                                   # GLM's Biased flag
        return "B" if v else ""
    if fmt == "int":
        return str(int(round(v)))
    if fmt.startswith("d"):
        k = int(fmt[1:])
        return f"{v:.{k}f}" if abs(v) < 1e10 else f"{v:.{max(k - 1, 1)}E}"
    if fmt.startswith("best") and fmt[4:].isdigit():   # BESTw. of another width ("best12")
        return _best(v, int(fmt[4:]))
    return _best(v, 8)


def _best(v: float, width: int) -> str:
    """BESTw.: the most significant digits that fit in `width`."""
    if v == int(v) and abs(v) < 10 ** width:
        return str(int(v))
    for digits in range(width, 0, -1):
        text = f"{v:.{digits}g}"
        if "e" not in text and len(text) <= width:
            return text
    return f"{v:.{max(width - 6, 1)}E}"


def render(table: OdsTable) -> list[str]:
    """The table's lines in the listing: its title centred over it, a blank line, the headings, a blank line and
    the rows (character columns left-aligned, numbers right-aligned, two blanks between columns)."""
    shown = [c for c in table.columns if not c.hidden]
    body = [[cell(r[table.columns.index(c)], c.fmt if c.type == "num" else "text") for c in shown]
            for r in table.rows]
    heads = [c.head if table.headings else "" for c in shown]
    widths = [max([len(h)] + [len(row[j]) for row in body]) for j, h in enumerate(heads)]
    left = [not c.right if c.right is not None else c.type == "char" for c in shown]

    def line(cells: list[str]) -> str:
        return "  ".join(x.ljust(w) if lf else x.rjust(w) for x, w, lf in zip(cells, widths, left)).rstrip()

    out = []
    width = len(line(["" for _ in shown])) if shown else 0
    width = max(width, sum(widths) + 2 * max(len(widths) - 1, 0))
    if table.title:
        out += [table.title.center(width).rstrip(), ""]
    if table.headings and any(heads):
        out += [line(heads), ""]
    out += [line(row) for row in body]
    if table.footer:
        out += [""] + [f.center(width).rstrip() for f in table.footer]
    return out
