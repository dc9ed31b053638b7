"""A SAS log and listing as a notebook cell's output: the log's NOTE/WARNING/ERROR lines coloured as SAS colours
them (blue, green, red), the listing as preformatted text — HTML for JupyterLab, ANSI for `jupyter console`."""
from __future__ import annotations

import html

_LEVELS = (("ERROR", "#d00000", "\x1b[31m"), ("WARNING", "#008000", "\x1b[32m"), ("NOTE", "#0000d0", "\x1b[34m"))
_RESET = "\x1b[0m"


def _level(line: str, current: str | None) -> str | None:
    """The message level a log line belongs to: its own prefix, or the message it continues (indented)."""
    for name, _, _ in _LEVELS:
        if line.startswith(f"{name}:") or line.startswith(f"{name} "):
            return name
    return current if line.startswith(" ") and current else None


def log_lines(text: str) -> list[tuple[str | None, str]]:
    """(level or None, line) for each line of a SAS log."""
    out, current = [], None
    for line in text.rstrip("\n").split("\n") if text.strip() else []:
        current = _level(line, current)
        out.append((current, line))
    return out


def log_html(text: str) -> str:
    colours = {name: colour for name, colour, _ in _LEVELS}
    rows = [f'<span style="color:{colours[lvl]}">{html.escape(line)}</span>' if lvl else html.escape(line)
            for lvl, line in log_lines(text)]
    return '<pre class="statgrid-log">' + "\n".join(rows) + "</pre>"


def log_ansi(text: str) -> str:
    codes = {name: code for name, _, code in _LEVELS}
    return "\n".join(f"{codes[lvl]}{line}{_RESET}" if lvl else line for lvl, line in log_lines(text)) + "\n"


def listing_html(text: str) -> str:
    return '<pre class="statgrid-listing">' + html.escape(text.rstrip("\n")) + "</pre>"


def table_html(table) -> str:
    """An ODS table (statgrid.sas.odstable.OdsTable) as an HTML table: its title, BY values, headings, the cells as
    the listing formats them, its footer."""
    from statgrid.sas.odstable import cell

    cols = [c for c in table.columns if not c.hidden]
    parts = ['<table class="statgrid-table">']
    caption = " ".join(x for x in (table.title, ", ".join(f"{getattr(info, 'name', info)}={value}"
                                                           for info, value in table.by)) if x)
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    if table.headings:
        parts.append("<thead><tr>" + "".join(f"<th>{html.escape(c.head)}</th>" for c in cols) + "</tr></thead>")
    parts.append("<tbody>")
    index = {id(c): i for i, c in enumerate(table.columns)}
    for row in table.rows:
        cells = []
        for c in cols:
            value = row[index[id(c)]] if index[id(c)] < len(row) else None
            right = c.right if c.right is not None else c.type == "num"
            align = ' style="text-align:right"' if right else ""
            cells.append(f"<td{align}>{html.escape(cell(value, c.fmt).strip())}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</tbody>")
    if table.footer:
        parts.append(f'<tfoot><tr><td colspan="{len(cols)}">' + html.escape(" ".join(table.footer)) + "</td></tr></tfoot>")
    parts.append("</table>")
    return "".join(parts)
