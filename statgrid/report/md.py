"""Report → Markdown: a pipe table per Table, its notes below, charts linked as SVG files."""
from __future__ import annotations

from statgrid.report.model import Report, Table


def _esc(text: str) -> str:
    return text.replace("|", "\\|")


def table_md(t: Table) -> str:
    head = "| " + " | ".join(_esc(c.header) for c in t.columns) + " |"
    rule = "|" + "|".join(":---" if c.align == "left" else "---:" for c in t.columns) + "|"
    body = ["| " + " | ".join(_esc(t.cell(r, c)) for c in t.columns) + " |" for r in t.rows]
    notes = [f"*{_esc(n)}*" for n in t.notes if n]
    return "\n".join([f"## {t.title}", "", head, rule, *body, *([""] + notes if notes else [])])


def serialize(report: Report, chart_dir: str | None = "charts") -> str:
    parts = [f"# {report.title}", "", *[line for line in report.subtitle.splitlines()], ""]
    for t in report.tables:
        parts += [table_md(t), ""]
    if chart_dir is not None:
        for c in report.charts:
            parts += [f"![{c.title}]({chart_dir}/{c.id}.svg)", ""]
    return "\n".join(parts).rstrip() + "\n"
