"""Write a report in the asked formats to a directory; returns the files written."""
from __future__ import annotations

from pathlib import Path

from statgrid.errors import UsageError
from statgrid.report import charts, csv_out, html, json_out, md
from statgrid.report.model import Report

FORMATS = ("html", "md", "json", "csv")


def parse_formats(text: str) -> list[str]:
    fmts = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad or not fmts:
        raise UsageError(f"--format {text!r}: {(repr(bad[0]) if bad else 'nothing')} is not a format; give a comma list of "
                         f"{', '.join(FORMATS)}.")
    return fmts


def write(report: Report, out: Path, formats: list[str]) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def put(name: str, data: str | bytes) -> None:
        p = out / name
        p.parent.mkdir(parents=True, exist_ok=True)
        (p.write_bytes if isinstance(data, bytes) else p.write_text)(data)
        written.append(p)

    chart_fmts = (["svg"] if {"html", "md"} & set(formats) else []) + (["png"] if "md" in formats else [])
    drawn = {c.id: charts.render_all(c, chart_fmts) for c in report.charts} if chart_fmts else {}
    svgs = {cid: d["svg"] for cid, d in drawn.items()}
    if "html" in formats:
        put("report.html", html.serialize(report, svgs))
    if "md" in formats:
        put("report.md", md.serialize(report))
        for c in report.charts:                     # the Markdown links them; PNG for slides and mail
            put(f"charts/{c.id}.svg", svgs[c.id])
            put(f"charts/{c.id}.png", drawn[c.id]["png"])
    if "json" in formats:
        put("report.json", json_out.serialize(report))
    if "csv" in formats:
        for name, text in csv_out.serialize(report).items():
            put(name, text)
    return written
