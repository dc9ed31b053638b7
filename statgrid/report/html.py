"""Report → one self-contained HTML file: tables, and charts as inline SVG (no script, no
network at view time; opens from a file:// URL or a mail attachment alike)."""
from __future__ import annotations

import re
from html import escape

from statgrid.report import charts as charts_mod
from statgrid.report.model import Report, Table

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; }
th { background: #f3f3f3; text-align: left; } td.r { text-align: right; font-variant-numeric: tabular-nums; }
tr.flag td { background: #fff3e0; }
p.note { color: #555; font-size: 12px; max-width: 60em; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 12px; }
figure svg { max-width: 100%; height: auto; }
.sub { color: #555; white-space: pre-line; }
"""


DETAIL_TABLES = ("workload_table1", "workload_profile", "acct", "jobs")


def table_html(t: Table) -> str:
    head = "".join(f"<th>{escape(c.header)}</th>" for c in t.columns)
    body = []
    for r in t.rows:
        cls = ' class="flag"' if r.get("flag") else ""
        cells = "".join(f'<td{"" if c.align == "left" else " class=r"}>{escape(t.cell(r, c))}</td>' for c in t.columns)
        body.append(f"<tr{cls}>{cells}</tr>")
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in t.notes if n)
    return (f'<section id="{t.id}"><h2>{escape(t.title)}</h2><table><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>{notes}</section>')


def serialize(report: Report, svgs: dict[str, bytes] | None = None) -> str:
    """svgs: chart id → SVG already drawn (write.py draws each chart once for every format)."""
    figs = []
    for c in report.charts:
        svg = (svgs or {}).get(c.id) or charts_mod.render(c, "svg")
        svg = svg.decode()
        svg = svg[svg.index("<svg"):]                         # drop the XML prolog and DOCTYPE
        svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)    # matplotlib's RDF credits
        figs.append(f'<figure id="chart-{c.id}">{svg}<figcaption>{escape(c.caption)}</figcaption></figure>')
    tables = [table_html(t) for t in report.tables]
    # charts after the summary tables, before the detail ones: accounting per user, group and queue, and the
    # long per-job table
    split = next((i for i, t in enumerate(report.tables) if t.id in DETAIL_TABLES), len(tables))
    body = "".join(tables[:split]) + "".join(figs) + "".join(tables[split:])
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(report.title)}</title>'
            f'<style>{CSS}</style></head><body><h1>{escape(report.title)}</h1>'
            f'<p class="sub">{escape(report.subtitle)}</p>{body}</body></html>\n')
