"""PROC PRINT (SAS 9.4 Base Procedures, PRINT), its listing layout:

    Obs    Name       Sex    Age    Height

      1    Alfred      M      14     69.0
      2    Alice       F      13     56.5

- columns four blanks apart; a column is as wide as its widest value or heading; a heading wider than
  the values has them centred under it; otherwise character headings sit left, numeric ones right;
- numeric values without a format are written so their decimal points line up (w.d with the most
  decimals any value of the column needs, from its BEST12. text); with a format through
  statgrid.sas.formats.format_value; a missing value as the MISSING= option's character;
- the Obs column holds the observation's number in the data set (also under WHERE), `OBS='…'` renames
  it, NOOBS drops it, ID variables replace it and are repeated in every panel;
- LABEL (or SPLIT=) uses labels as headings, split into lines at the SPLIT= character;
- BY groups each get SAS's BY line (`----- x=1 -----`); the data must be sorted by them, else SAS's ERROR;
- SUM totals under a row of '=' (and per BY group under '-'), N prints `N = n`, DOUBLE a blank line
  between observations, UNIFORM the same widths on every page (otherwise each page is measured alone);
- a page holds PAGESIZE lines less the titles and footnotes (the log adds those); variables that do not
  fit LINESIZE go to further panels.
NOTE: There were N observations read from the data set X.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from statgrid.libraries import sql_ident
from statgrid.sas.dataset import ColumnInfo, column_info, input_sql
from statgrid.sas.errors import SasError, SasRuntimeError
from statgrid.sas.formats.numeric import best, missing_text, w_d
from statgrid.sas.lexer import STR
from statgrid.sas.procs.common import (DATASET, FLAG, TEXT, by_list, by_rule, fetch_rows, format_cell, input_dataset,
                                       observations_read, resolve_names, statement_error, var_names)
from statgrid.sas.procs.step import begin, each_statement

OPTIONS = {"DATA": DATASET, "OBS": TEXT, "NOOBS": FLAG, "LABEL": FLAG, "SPLIT": TEXT, "N": FLAG,
           "UNIFORM": FLAG, "DOUBLE": FLAG, "WIDTH": "value", "HEADING": "value", "ROWS": "value",
           "SUMLABEL": FLAG, "NOSUMLABEL": FLAG, "BLANKLINE": "value", "GRANDTOTAL_LABEL": TEXT,
           "CONTENTS": TEXT}
ALIASES = {"L": "LABEL", "S": "SPLIT", "U": "UNIFORM", "D": "DOUBLE", "W": "WIDTH", "H": "HEADING"}
STATEMENTS = ("VAR", "ID", "BY", "SUM", "WHERE", "FORMAT", "LABEL", "PAGEBY", "SUMBY", "TITLE", "FOOTNOTE")
GAP = " " * 4
_OBS = "__sas_obs"


@dataclass
class Col:
    info: ColumnInfo
    heading: list[str]
    fmt: str = ""
    width: int = 0
    vwidth: int = 0
    cells: list[str] = field(default_factory=list)


def run(statements: list, program: Any) -> None:
    first, rest, opts = begin(statements, program, OPTIONS, "PRINT", ALIASES)
    spec = input_dataset(program, opts, "DATA", first)
    cols = column_info(program, spec)
    var = idv = by = None
    notsorted = False
    sums: list[str] = []
    formats: dict[str, str] = {}
    labels: dict[str, str] = {}
    for stmt, kw, c in each_statement(rest):
        if kw == "VAR":
            var = (var or []) + var_names(c, cols)
        elif kw == "ID":
            idv = (idv or []) + var_names(c, cols)
        elif kw == "BY":
            notsorted = any(t.is_("NOTSORTED") for t in stmt.tokens)
            by = by_list(c)
        elif kw == "SUM":
            sums += var_names(c, cols)
        elif kw == "WHERE":
            from statgrid.sas.parse.expr import parse_expression
            start = c.i
            node = parse_expression(c, where=True)
            if spec.where is None:   # SAS: a WHERE= data set option wins over the WHERE statement
                spec.where = node
                spec.where_text = " ".join(t.text for t in c.tokens[start:c.i])
        elif kw == "FORMAT":
            formats.update(format_statement(c, cols))
        elif kw == "LABEL":
            labels.update(label_statement(c))
        elif kw in ("PAGEBY", "SUMBY", "TITLE", "FOOTNOTE"):
            continue
        else:
            raise statement_error(stmt, "PRINT", STATEMENTS)
        if not c.at_end():
            raise c.error(f"Syntax error in the {kw} statement", ";")
    byc = resolve_names([n for n, _ in by], cols, spec, first.line) if by else []
    shown = resolve_names(var, cols, spec, first.line) if var is not None else list(cols)
    ids = resolve_names(idv, cols, spec, first.line) if idv else []
    sumc = resolve_names(sums, cols, spec, first.line)
    for c in sumc:
        if c.type != "num":
            raise SasError(f"Variable {c.name} in the SUM statement is not numeric", first.line, 0, c.name)
        if c.name.upper() not in {x.name.upper() for x in shown + ids}:
            shown.append(c)                     # SAS prints a SUM variable not in the VAR list
    shown = [c for c in shown if c.name.upper() not in {x.name.upper() for x in ids}]

    # rows: the observation number in the file, then every needed column
    need = {c.name.upper(): c for c in byc + ids + shown}
    sql = input_sql(program, spec, cols, row_number=_OBS)
    sel = ", ".join([_OBS] + [sql_ident(c.name) for c in need.values()])
    _, rows = fetch_rows(program, f"SELECT {sel} FROM ({sql})")
    observations_read(program, len(rows), spec)
    pos = {name: i + 1 for i, name in enumerate(need)}

    use_labels = bool(opts.get("LABEL") or opts.get("SPLIT"))
    printer = Printer(program, opts, formats, labels, use_labels, opts.get("SPLIT") or "")
    printer.specials = _special_letters(program, spec, need)
    groups = _by_groups(rows, [pos[c.name.upper()] for c in byc], [d for _, d in by or []], byc, spec, notsorted)
    if not rows:
        return                                   # SAS prints nothing for an empty data set
    if byc:
        last = byc[-1]
        printer.by_label = (labels.get(last.name.upper()) or last.label or last.name) if use_labels else last.name
    if printer.uniform:
        printer.min_widths = printer.widths(rows, ids, shown, pos)
    blocks = []
    for grp in groups:
        head = printer.by_line(byc, grp[0], pos) if byc else None
        blocks.append((grp, head))
    printer.emit(blocks, ids, shown, sumc, pos, len(rows))


def format_statement(c, cols: list[ColumnInfo]) -> dict[str, str]:
    """`FORMAT a b date9. c;`: names before a format get it; names with none lose theirs ('')."""
    out, pending = {}, []
    while not c.at_end():
        if c.at_format():
            f = c.format_name()
            for n in pending:
                out[n.upper()] = f
            pending = []
        else:
            pending += var_names_one(c, cols)
    for n in pending:
        out[n.upper()] = ""
    return out


def var_names_one(c, cols: list[ColumnInfo]) -> list[str]:
    """The variable list before the next format (`a b x1-x3` of `a b x1-x3 date9.`): the tokens up to
    where a format starts are read as one list."""
    from statgrid.sas.cursor import TokenCursor
    from statgrid.sas.dataset import expand_var_list
    from statgrid.sas.parse.expr import parse_var_list

    start = c.i
    k = start
    while not c.at_end():
        c.i = k
        if k > start and c.at_format():
            break
        if c.at_end():
            break
        k += 1
    c.i = start
    sub = TokenCursor(c.tokens[start:k], c.source)
    items = parse_var_list(sub)
    if not items or not sub.at_end():
        raise c.error("Syntax error in the statement", "a variable name or a format", sub.peek())
    c.i = k
    return expand_var_list(items, [x.name for x in cols], {x.name.upper(): x.type for x in cols})


def label_statement(c) -> dict[str, str]:
    """`LABEL a='text' b="text";` → {A: text}."""
    out = {}
    while not c.at_end():
        name = c.expect_name("a variable name")
        c.expect("=", expected="=")
        t = c.next()
        if t.kind != STR:
            # SAS also takes an unquoted label up to the next `name=`: keep it simple and strict
            raise c.error("Syntax error in the LABEL statement", "a quoted label", t)
        out[name.upper()] = t.value
    return out


def _by_groups(rows, idx: list[int], desc: list[bool], byc: list[ColumnInfo], spec, notsorted: bool = False
               ) -> list[list]:
    """Rows cut into BY groups; SAS's ERROR when they are not in the BY order (unless NOTSORTED)."""
    from statgrid.sas.values import num_key
    if not idx:
        return [rows]

    def key(r):
        return [((r[i] or "").rstrip() if c.type == "char" else num_key(float("nan") if r[i] is None else r[i]))
                for i, c in zip(idx, byc)]
    groups: list[list] = []
    prev = None
    for r in rows:
        k = key(r)
        if k != prev:
            if prev is not None and not notsorted:
                for a, b, d, c in zip(prev, k, desc, byc):
                    if a == b:
                        continue
                    if (b < a) != d:
                        how = "descending" if d else "ascending"
                        raise SasRuntimeError(f"Data set {spec.name} is not sorted in {how} sequence. The current BY "
                                              f"group has {c.name} = {_plain(a)} and the next BY group has "
                                              f"{c.name} = {_plain(b)}", spec.line, spec.col, spec.name,
                                              "data sorted by the BY variables (PROC SORT)")
                    break
            groups.append([])
        groups[-1].append(r)
        prev = k
    return groups


def _plain(k) -> str:
    if isinstance(k, tuple):
        return best(k[1], 12).strip() if k[0] == 28 else "."      # num_key: (28, x) for a number
    return str(k)


class Printer:
    def __init__(self, program, opts, formats, labels, use_labels, split):
        self.program, self.opts, self.formats, self.labels = program, opts, formats, labels
        self.use_labels, self.split = use_labels, split
        self.noobs = bool(opts.get("NOOBS"))
        self.obs_label = opts.get("OBS") or "Obs"
        self.double = bool(opts.get("DOUBLE"))
        self.uniform = bool(opts.get("UNIFORM"))
        self.ls = int(_opt(program, "LINESIZE", 132))
        self.min_widths: dict[str, int] = {}
        self.by_label = ""
        self.specials: dict[str, dict[int, str]] = {}     # COLUMN → {observation number: special missing letter}

    # -- one column -------------------------------------------------------------------------------
    def fmt_of(self, c: ColumnInfo) -> str:
        f = self.formats.get(c.name.upper(), c.format) or ""
        if f and "." not in f:
            f += "."            # formats imported from SAS files are kept without their period (YYMMDD10)
        return f

    def heading(self, c: ColumnInfo) -> list[str]:
        text = c.name
        if self.use_labels:
            text = self.labels.get(c.name.upper()) or c.label or c.name
        if self.split:
            return text.split(self.split)
        return [text]

    def cells(self, c: ColumnInfo, values: list, letters: list | None = None) -> list[str]:
        """The column's texts; `letters`: each value's special missing letter (A-Z, _) or None, printed in
        place of the missing value as SAS does."""
        out = self._cells(c, values)
        if letters:
            out = [(letter.rjust(len(text)) if text.strip() else letter) if letter and v is None else text
                   for v, text, letter in zip(values, out, letters)]
        return out

    def _cells(self, c: ColumnInfo, values: list) -> list[str]:
        fmt = self.fmt_of(c)
        if c.type == "num" and not fmt:
            return decimal_aligned(values, _opt(self.program, "MISSING", "."))
        from statgrid.sas.formats import format_value
        miss = str(_opt(self.program, "MISSING", "."))
        out = []
        for v in values:      # a formatted column is as wide as its format (SAS writes the whole field)
            if c.type == "char" and not fmt:
                out.append("" if v is None else str(v).rstrip())
            elif c.type == "char":
                out.append(format_value("" if v is None else str(v), fmt, self.program.formats, miss).rstrip())
            else:
                out.append(format_value(float("nan") if v is None else float(v), fmt, self.program.formats, miss))
        return out

    # -- a BY group's table (rows already fetched): its lines without paging -------------------------
    def by_line(self, byc: list[ColumnInfo], row, pos) -> str:
        """`name=value …` of the BY line (labels under LABEL), values formatted."""
        parts = []
        for c in byc:
            v = row[pos[c.name.upper()]]
            text = format_cell(self.program, v, self.fmt_of(c) or ("" if c.type == "char" else "BEST12."), c.type)
            name = (self.labels.get(c.name.upper()) or c.label or c.name) if self.use_labels else c.name
            parts.append(f"{name}={text.strip()}")
        return " ".join(parts)

    # -- layout ------------------------------------------------------------------------------------
    def _columns(self, rows, ids, shown, pos, sums: list[dict]) -> tuple[Col | None, list[Col], list[Col], dict]:
        """The columns' cells for `rows`, and each summed column's total texts (one per sum line)."""
        obs = None
        if not ids and not self.noobs:
            obs = Col(ColumnInfo(self.obs_label, "num"), self.obs_label.split(self.split) if self.split
                      else [self.obs_label])
            obs.cells = [str(int(r[0])) for r in rows]
        idc = [Col(c, self.heading(c), self.fmt_of(c)) for c in ids]
        vc = [Col(c, self.heading(c), self.fmt_of(c)) for c in shown]
        totals: dict[str, list[str]] = {}
        for col in idc + vc:
            u = col.info.name.upper()
            extra = [t[u] for t in sums if u in t]
            marks = self.specials.get(u)
            letters = [marks.get(int(r[0])) for r in rows] + [None] * len(extra) if marks else None
            texts = self.cells(col.info, [r[pos[u]] for r in rows] + extra, letters)
            col.cells = texts[:len(rows)]
            if extra:
                totals[u] = texts[len(rows):]
        return obs, idc, vc, totals

    def widths(self, rows, ids, shown, pos) -> dict[str, int]:
        obs, idc, vc, _ = self._columns(rows, ids, shown, pos, [])
        return {c.info.name.upper(): max([len(x) for x in c.cells] + [0]) for c in ([obs] if obs else []) + idc + vc}

    def render(self, rows, ids, shown, pos, sum_lines: list[tuple[str, dict]], n_line: str) -> list[str]:
        """The lines (heading, blank, rows, sum lines, N) of these rows, panel after panel."""
        obs, idc, vc, totals = self._columns(rows, ids, shown, pos, [t for _, t in sum_lines])
        for c in ([obs] if obs else []) + idc + vc:
            u = c.info.name.upper()
            c.vwidth = max([len(x) for x in c.cells + totals.get(u, [])] + [self.min_widths.get(u, 0)])
            c.width = max([c.vwidth] + [len(h) for h in c.heading] + [1])
        fixed = ([obs] if obs else []) + idc
        base = sum(c.width for c in fixed) + len(GAP) * max(0, len(fixed) - 1)
        panels, cur, width = [], [], base
        for c in vc:
            add = c.width + (len(GAP) if (fixed or cur) else 0)
            if cur and width + add > self.ls:
                panels.append(cur)
                cur, width = [], base
                add = c.width + (len(GAP) if fixed else 0)
            cur.append(c)
            width += add
        if cur or not panels:
            panels.append(cur)
        out: list[str] = []
        for panel in panels:
            if out:
                out.append("")
            cols = fixed + panel
            depth = max([len(c.heading) for c in cols] + [1])
            for k in range(depth):
                out.append(GAP.join(self._head_cell(c, k, depth) for c in cols).rstrip())
            out.append("")
            for i in range(len(rows)):
                out.append(GAP.join(self._cell(c, c.cells[i]) for c in cols).rstrip())
                if self.double:
                    out.append("")
            for j, (kind, _) in enumerate(sum_lines):
                here = [c for c in panel if c.info.name.upper() in totals]
                if not here:
                    continue
                rule = "=" if kind == "total" else "-"
                out.append(GAP.join((rule * c.width) if c in here else " " * c.width for c in cols).rstrip())
                line = GAP.join(self._cell(c, totals[c.info.name.upper()][j]) if c in here
                                else " " * c.width for c in cols).rstrip()
                label = self.by_label if kind == "group" else ""
                if label and cols and cols[0] not in here and len(label) <= cols[0].width:
                    line = label + line[len(label):]     # SAS names the BY variable on a group's sum line
                out.append(line)
        if n_line:
            out += ["", n_line]
        return out

    def _head_cell(self, c: Col, k: int, depth: int) -> str:
        lines = [""] * (depth - len(c.heading)) + c.heading      # headings sit on the bottom line
        h = lines[k]
        if max(len(x) for x in c.heading) > c.vwidth:
            return _centre(h, c.width)
        return h.rjust(c.width) if c.info.type == "num" else h.ljust(c.width)

    def _cell(self, c: Col, text: str) -> str:
        if max(len(h) for h in c.heading) > c.vwidth:   # values centred under a wider heading
            field_ = text.rjust(c.vwidth) if c.info.type == "num" else text.ljust(c.vwidth)
            return (" " * ((c.width - c.vwidth + 1) // 2) + field_).ljust(c.width)
        return text.rjust(c.width) if c.info.type == "num" else text.ljust(c.width)

    # -- pages -------------------------------------------------------------------------------------
    def emit(self, blocks, ids, shown, sumc, pos, n_total: int) -> None:
        """Pack the BY groups' tables onto pages (a blank line between groups on one page); a group
        longer than a page is cut into page-sized parts, each with the BY line and headings again."""
        room = self._room()
        pages: list[list[str]] = [[]]
        names = [c.name.upper() for c in sumc]
        by_groups = len(blocks) > 1 or blocks[0][1] is not None
        grand = {u: sum(r[pos[u]] for g, _ in blocks for r in g if r[pos[u]] is not None) for u in names}
        for bi, (rows, head) in enumerate(blocks):
            last = bi == len(blocks) - 1
            sum_lines: list[tuple[str, dict]] = []
            if names:
                tot = {u: sum(r[pos[u]] for r in rows if r[pos[u]] is not None) for u in names}
                if by_groups:
                    sum_lines.append(("group", tot))
                if last:
                    sum_lines.append(("total", grand))
            n_line = ""
            if self.opts.get("N"):
                n_line = f"N = {len(rows) if by_groups else n_total}"
            prefix = [by_rule(head, self.ls), ""] if head is not None else []
            lines = prefix + self.render(rows, ids, shown, pos, sum_lines, n_line)
            used = len(pages[-1]) + (1 if pages[-1] else 0)
            if used + len(lines) <= room:
                if pages[-1]:
                    pages[-1].append("")
                pages[-1] += lines
                continue
            if pages[-1]:
                pages.append([])
            start = 0
            while start < len(rows):
                n = self._fit(rows, start, ids, shown, pos, sum_lines, n_line, prefix, room)
                done = start + n >= len(rows)
                pages[-1] += prefix + self.render(rows[start:start + n], ids, shown, pos,
                                                  sum_lines if done else [], n_line if done else "")
                start += n
                if not done:
                    pages.append([])
        for p in pages:
            if p:
                self.program.log.listing("\n".join(p))

    def _fit(self, rows, start, ids, shown, pos, sum_lines, n_line, prefix, room) -> int:
        """How many rows from `start` fit one page (at least one)."""
        left = len(rows) - start
        n = left
        while n > 1:
            done = n == left
            lines = prefix + self.render(rows[start:start + n], ids, shown, pos,
                                         sum_lines if done else [], n_line if done else "")
            if len(lines) <= room:
                break
            n = max(1, n - max(1, (len(lines) - room) // (2 if self.double else 1)))
        return n

    def _room(self) -> int:
        p = self.program
        ps = int(_opt(p, "PAGESIZE", 60))
        titles = getattr(p, "titles", {}) or {}
        feet = getattr(p, "footnotes", {}) or {}
        head = max(1, max(titles) if titles else 0) + 1
        foot = (1 + max(feet)) if feet else 0
        return max(5, ps - head - foot)


def _special_letters(program, spec, need: dict) -> dict[str, dict[int, str]]:
    """The special missing letters (.A-.Z, ._) the DATA step kept in the data set's file
    (dataset.read_specials), for the printed columns: {COLUMN: {observation number: letter}}; {} for a view or
    a file without any."""
    from statgrid.sas.dataset import read_specials
    try:
        ref = program.session.ref(f"{spec.libref}.{spec.member}")
        if not ref.exists():
            return {}
        raw = read_specials(ref.path)
    except Exception:  # noqa: BLE001  (an unassigned library is reported by the input's own read)
        return {}
    return {u: {r + 1: code for r, code in raw[u].items()} for u in need if u in raw}


def _centre(text: str, width: int) -> str:
    left = (width - len(text) + 1) // 2
    return (" " * max(0, left) + text).ljust(width)


def decimal_aligned(values: list, missing: str = ".") -> list[str]:
    """Numbers without a format as PROC PRINT writes them: every value with the most decimals any
    value's BEST12. text has, so the decimal points line up (E notation and missings as BEST writes them)."""
    texts = [best(float(v), 12).strip() if v is not None else None for v in values]
    dec = 0
    for t in texts:
        if t and "E" not in t.upper() and "." in t:
            dec = max(dec, len(t) - t.index(".") - 1)
    out = []
    for v, t in zip(values, texts):
        if v is None:
            out.append(missing_text(float("nan"), missing))
        elif "E" in t.upper() or dec == 0:
            out.append(t)
        else:
            s = w_d(float(v), 32, dec).strip()
            out.append(s if len(s) <= 12 + dec else t)
    return out


def _opt(program: Any, name: str, default: Any) -> Any:
    try:
        v = program.options.get(name)
        return default if v is None else v
    except Exception:  # noqa: BLE001
        return default
