"""The SAS log and listing of one program, in SAS 9.4's look, written through the session's streams.

`SasLog` wraps a statgrid SessionLog (statgrid/session/log.py): its text stream is the .log, its listing
stream the .lst, its jsonl stream gets every step's STIMER record unchanged — so `statgrid run --log-dir`,
a grid job's directory (session.log, session.lst), `peek` and the console show a SAS program's log as
any other job's. A SasLog also serves as the Session's own log (same methods: note, warning, error,
step, listing, close), so the session's NOTEs and each step's STIMER record come out in SAS's shape:

    1          data a;
    2            x = 1;
    3          run;

    NOTE: The data set WORK.A has 1 observations and 1 variables.
    NOTE: DATA statement used (Total process time):
          real time           0.01 seconds
          cpu time            0.01 seconds

What SAS prints, and where, follows SAS 9.4 Language Reference: Concepts ("The SAS Log", "Output
(listing)") and the FULLSTIMER system option's description (the rows of the block and their order).
Standard library only.
"""
from __future__ import annotations

import json
import platform
import textwrap
from datetime import datetime
from typing import Any, Callable, TextIO

from statgrid.job.stimer import StepRecord

_NUMBER_WIDTH = 11          # '1          data a;': the line number left-justified in 11 columns
_TIME_LABEL = 20            # 'real time           0.01 seconds'
_COUNT_LABEL = 34           # 'Page Faults                       0'
_INDENT = " " * 6           # the block's rows sit under the text after 'NOTE: '


def _k(n_bytes: int) -> str:
    """SAS's memory figures: kilobytes with two decimals, no separators ('669.71k')."""
    return f"{n_bytes / 1024:.2f}k"


def _timestamp(iso: str) -> str:
    """FULLSTIMER's Timestamp: 'MM/DD/YYYY hh:mm:ss AM' (from the record's ISO 8601 start)."""
    try:
        return datetime.fromisoformat(iso).strftime("%m/%d/%Y %I:%M:%S %p")
    except ValueError:
        return iso


def sas_datetime_header(when: datetime) -> str:
    """The date of page headers (DATE option): '10:32 Monday, January 6, 2020' — when the session began."""
    return f"{when:%H:%M} {when:%A}, {when:%B} {when.day}, {when.year}"


def step_title(name: str) -> str:
    """'DATA' → 'DATA statement', 'PROC SORT' → 'PROCEDURE SORT' (SAS's wording of the step note)."""
    up = name.upper()
    if up == "DATA":
        return "DATA statement"
    if up.startswith("PROC "):
        return "PROCEDURE " + up[5:].strip()
    return name


def stime_text(seconds: float, layout: str = "M") -> str:
    """A STIMER time as STIMEFMT lays it out (SAS 9.4 on UNIX): S '62.03 seconds'; M (the default) seconds
    under a minute, else mm:ss.ss; H hh:mm:ss.ss; N seconds, mm:ss.ss under an hour, else hh:mm:ss.ss."""
    s = max(0.0, float(seconds))
    hms = f"{int(s // 3600)}:{int(s % 3600 // 60):02d}:{s % 60:05.2f}"
    if layout == "H":
        return hms
    if layout == "S" or s < 60:
        return f"{s:.2f} seconds"
    if layout == "N" and s >= 3600:
        return hms
    return f"{int(s // 60)}:{s % 60:05.2f}"


def format_sas_block(rec: StepRecord, full: bool, stimefmt: str = "M") -> list[str]:
    """The lines of SAS's step note from a STIMER record: FULLSTIMER's rows when `full`, else STIMER's
    real time and cpu time, times laid out by STIMEFMT= (its time word; TSOFF drops the Timestamp row).
    Page Swaps is 0: Linux does not count swaps per process (getrusage(2))."""
    from statgrid.sas.options import STIMEFMT_TIME

    words = str(stimefmt or "M").upper().split()
    layout = next((STIMEFMT_TIME[w] for w in reversed(words) if w in STIMEFMT_TIME), "M")
    if rec.record == "total":
        head = "NOTE: The SAS System used:"
    else:
        head = f"NOTE: {step_title(rec.name)} used (Total process time):"
    rows = [("real time", stime_text(rec.real_s, layout))]
    if not full:
        rows.append(("cpu time", stime_text(rec.cpu_s, layout)))
        return [head] + [f"{_INDENT}{a:<{_TIME_LABEL}}{b}" for a, b in rows] + [_INDENT]
    rows += [("user cpu time", stime_text(rec.user_cpu_s, layout)),
             ("system cpu time", stime_text(rec.sys_cpu_s, layout)),
             ("memory", _k(rec.memory_bytes)),
             ("OS Memory", _k(rec.os_memory_bytes))]
    if "TSOFF" not in words:
        rows.append(("Timestamp", _timestamp(rec.start_ts)))
    counts = [("Page Faults", rec.page_faults), ("Page Reclaims", rec.page_reclaims), ("Page Swaps", 0),
              ("Voluntary Context Switches", rec.voluntary_ctx_switches),
              ("Involuntary Context Switches", rec.involuntary_ctx_switches),
              ("Block Input Operations", rec.block_input_ops), ("Block Output Operations", rec.block_output_ops)]
    return ([head] + [f"{_INDENT}{a:<{_TIME_LABEL}}{b}" for a, b in rows]
            + [f"{_INDENT}{a:<{_COUNT_LABEL}}{b}" for a, b in counts] + [_INDENT])


class LevelMessages:
    """SAS's three message levels as methods of a log that writes `message(level, text)` ("NOTE: …"): the
    SAS log here and the session's log (statgrid/session/log.py) alike."""

    def note(self, msg: str) -> None:
        self.message("NOTE", msg)

    def warning(self, msg: str) -> None:
        self.message("WARNING", msg)

    def error(self, msg: str) -> None:
        self.message("ERROR", msg)


class SasLog(LevelMessages):
    """The log (.log) and listing (.lst) of one SAS program. `out`: the SessionLog whose streams it
    writes; `options`: the program's SasOptions (read on every write: NOTES, SOURCE, STIMER, LINESIZE…),
    may be set later; `started`: when the session began (page headers' date). Counts: errors, warnings."""

    def __init__(self, out: Any, options: Any = None, started: datetime | None = None):
        self.out = out
        self.options = options
        self.started = started or datetime.now()
        self.errors = 0
        self.warnings = 0
        self.page = 1                      # the next listing page's number (PAGENO= resets it)
        self._pages_written = 0
        self._source: list[str] = []
        self._echoed = 0                   # the last program line echoed
        self._include_line = 0             # SOURCE2 lines are numbered on from the program's
        self._step_failure_reported = False
        self.header_done = False
        self.titles: dict[int, str] = {}
        self.footnotes: dict[int, str] = {}
        # ODS (statgrid/sas/ods.py): False while the listing is closed or an ODS SELECT/EXCLUDE list leaves out
        # the running step's output; set by the first ODS statement. Output published through ods.Listing has
        # passed ODS's own selection and skips it.
        self.listing_gate: Callable[[], bool] | None = None
        # PROC PRINTTO: {"LOG"|"PRINT": (open file, its path)} while the log or the listing goes to a file
        self._redirects: dict[str, tuple[TextIO, str]] = {}

    # ------------------------------------------------------------------ options
    def _opt(self, name: str, default: Any) -> Any:
        if self.options is None:
            return default
        try:
            return self.options.get(name)
        except KeyError:
            return default

    @property
    def linesize(self) -> int:
        return int(self._opt("LINESIZE", 132))

    # ------------------------------------------------------------------ raw output
    def redirect(self, which: str, stream: TextIO | None, path: str = "") -> None:
        """PROC PRINTTO: send the log (`which` "LOG") or the listing ("PRINT") to `stream` (an open file,
        closed here when replaced), or back to the program's own with None."""
        old = self._redirects.pop(which, None)
        if old is not None:
            old[0].close()
        if stream is not None:
            self._redirects[which] = (stream, path)

    def _text(self, line: str) -> None:
        if "LOG" in self._redirects:
            f = self._redirects["LOG"][0]
            f.write(line if line.endswith("\n") else line + "\n")
            f.flush()
            return
        stream: TextIO | None = getattr(self.out, "text", None)
        if stream is not None:
            stream.write(line if line.endswith("\n") else line + "\n")
            stream.flush()

    def put(self, text: str) -> None:
        """A raw log line (PUT statement, %PUT): as given, no prefix, no wrapping."""
        for line in (text.split("\n") if text else [""]):
            self._text(line)

    def header(self, title: str = "The SAS System", lines: list[str] | None = None) -> None:
        """The log's first page header (page number left, title centred, date right) and opening NOTEs."""
        self.header_done = True
        self._text(self._header_line(title, left=str(1), right=sas_datetime_header(self.started)))
        self._text("")
        from importlib.metadata import version
        __version__ = version("statgrid")          # the installed package's, without importing statgrid's top
        u = platform.uname()
        for msg in [f"statgrid {__version__}: SAS language front end (SAS 9.4 syntax; not SAS, a trademark of "
                    "SAS Institute Inc.).",
                    f"This session is executing on the {u.system} {u.release} ({u.machine}) platform.",
                    *(lines or [])]:
            self.note(msg)
        self._text("")

    def _header_line(self, title: str, left: str = "", right: str = "") -> str:
        ls = self.linesize
        center = bool(self._opt("CENTER", True))
        start = max(len(left) + 1 if left else 0, (ls - len(title)) // 2 if center else (len(left) + 1 if left else 0))
        if right and start + len(title) + 1 > ls - len(right):
            start = max(len(left) + 1 if left else 0, ls - len(right) - 1 - len(title))
        row = list(left.ljust(ls))
        row[start:start + len(title)] = title
        line = "".join(row)
        if right:
            line = line[:ls - len(right) - 1].ljust(ls - len(right)) + right
        return line.rstrip()

    # ------------------------------------------------------------------ messages
    def message(self, level: str, msg: str) -> None:
        """NOTE:/WARNING:/ERROR: lines, wrapped at LINESIZE with SAS's continuation indent (the text
        lines up after the prefix). NONOTES drops NOTEs; errors and warnings are counted."""
        if level == "ERROR":
            if self._step_failure_reported:
                return                     # the session repeating a failure the driver already logged
            self.errors += 1
        elif level == "WARNING":
            self.warnings += 1
        elif level == "NOTE":
            if self._step_failure_reported:
                return
            if not self._opt("NOTES", True):
                return
        prefix = f"{level}: "
        width = max(self.linesize, len(prefix) + 20)
        out: list[str] = []
        for i, para in enumerate(msg.split("\n") or [""]):
            first = prefix if i == 0 else " " * len(prefix)
            out += textwrap.wrap(para, width=width, initial_indent=first, subsequent_indent=" " * len(prefix),
                                 break_long_words=False, break_on_hyphens=False, drop_whitespace=True) or [first.rstrip()]
        for line in out:
            self._text(line)

    def sas_error(self, exc: Any, level: str = "ERROR") -> None:
        """A SasError as SAS shows it: the message, the text at fault, what was expected, line and column."""
        self.message(level, exc.describe() if hasattr(exc, "describe") else str(exc))

    def step_failure_reported(self, flag: bool = True) -> None:
        """The driver has logged a step's ERROR itself: the session's own generic lines about the failed
        step (session.step) are dropped until the step's STIMER record arrives."""
        self._step_failure_reported = flag

    # ------------------------------------------------------------------ source echo
    def set_source(self, text: str) -> None:
        self._source = text.split("\n")
        self._echoed = 0

    def source_line(self, number: int, text: str, included: bool = False) -> None:
        """One numbered source line; an %INCLUDEd one (SOURCE2) carries a '+' before its text."""
        if included:
            if self._opt("SOURCE2", False):
                self._text(f"{number:<{_NUMBER_WIDTH - 1}}+{text}".rstrip())
        elif self._opt("SOURCE", True):
            self._text(f"{number:<{_NUMBER_WIDTH}}{text}".rstrip() if text.strip() else f"{number}")

    def echo_through(self, line: int) -> None:
        """Echo the program's lines not yet shown, up to and including `line` (SAS shows the source of a
        step before the NOTEs of running it)."""
        line = min(line, len(self._source))
        while self._echoed < line:
            self._echoed += 1
            self.source_line(self._echoed, self._source[self._echoed - 1])

    def echo_rest(self) -> None:
        end = len(self._source)
        while end > self._echoed and not self._source[end - 1].strip():
            end -= 1                       # SAS does not number the file's trailing empty lines
        self.echo_through(end)

    def included(self, text: str) -> None:
        """A line of an %INCLUDEd file: numbered on from the program's lines, shown under SOURCE2."""
        self._include_line = max(self._include_line, self._echoed) + 1
        self.source_line(self._include_line, text, included=True)

    def mprint(self, macro: str, text: str) -> None:
        """MPRINT(NAME):   text — a statement a macro generated (under MPRINT)."""
        if self._opt("MPRINT", False):
            self._text(f"MPRINT({macro.upper()}):   {text}")

    def mlogic(self, macro: str, text: str) -> None:
        if self._opt("MLOGIC", False):
            self._text(f"MLOGIC({macro.upper()}):  {text}")

    def symbolgen(self, text: str) -> None:
        if self._opt("SYMBOLGEN", False):
            self._text(f"SYMBOLGEN:  {text}")

    # ------------------------------------------------------------------ steps
    def step(self, rec: StepRecord) -> None:
        """A step's (or the session's total) STIMER record: the JSON line always; the SAS note under
        FULLSTIMER (every row) or STIMER (real and cpu time), unless NONOTES."""
        self._step_failure_reported = False
        jsonl = getattr(self.out, "jsonl", None)
        if jsonl is not None:
            jsonl.write(json.dumps(rec.to_json_dict(), sort_keys=False) + "\n")
            jsonl.flush()
        full, st = bool(self._opt("FULLSTIMER", False)), bool(self._opt("STIMER", True))
        if not self._opt("NOTES", True) or not (full or st):
            if rec.record != "total":
                self._text("")
            return
        for line in format_sas_block(rec, full, str(self._opt("STIMEFMT", "M"))):
            self._text(line)
        self._text("")

    # ------------------------------------------------------------------ listing
    def set_page(self, number: int) -> None:
        self.page = int(number)

    def _title_lines(self, page: int) -> list[str]:
        ls = self.linesize
        right = sas_datetime_header(self.started) if self._opt("DATE", True) else ""
        if self._opt("NUMBER", True):
            right += f"{page:>4}" if right else str(page)
        titles = self.titles
        n = max(titles) if titles else 0
        lines = [self._header_line(titles.get(1, ""), right=right)]
        center = bool(self._opt("CENTER", True))
        for i in range(2, n + 1):
            t = titles.get(i, "")
            lines.append((t.center(ls) if center else t).rstrip())
        return [ln.rstrip() for ln in lines] + [""]

    def _footnote_lines(self) -> list[str]:
        if not self.footnotes:
            return []
        ls, center = self.linesize, bool(self._opt("CENTER", True))
        n = max(self.footnotes)
        return [""] + [((self.footnotes.get(i, "")).center(ls) if center else self.footnotes.get(i, "")).rstrip()
                       for i in range(1, n + 1)]

    def listing(self, text: str, published: bool = False, centered: bool = True) -> None:
        """PROC output on new pages: each page starts with its header (TITLEs, date and page number as the
        DATE/NUMBER/CENTER options say), ends with the FOOTNOTEs at the bottom (PAGESIZE lines a page);
        a form feed goes between pages. Under CENTER the block is centred as a whole in LINESIZE (the
        procedure writes it left-aligned). Nothing is written when ODS's gate is shut (`published`: the text
        came through ods.Listing, which applied ODS's selection already)."""
        if not published and self.listing_gate is not None and not self.listing_gate():
            return
        lines = text.rstrip("\n").split("\n")
        ls, ps = self.linesize, int(self._opt("PAGESIZE", 60))
        if centered and self._opt("CENTER", True):      # a DATA step's FILE PRINT lines stand where PUT put them
            width = max((len(ln) for ln in lines), default=0)
            pad = " " * max(0, (ls - width) // 2)
            lines = [(pad + ln).rstrip() if ln else "" for ln in lines]
        feet = self._footnote_lines()
        at = 0                                    # by index: re-slicing the rest each page was quadratic
        while at < len(lines):
            head = self._title_lines(self.page)
            room = max(1, ps - len(head) - len(feet))
            body = lines[at:at + room]
            at += room
            page = head + body
            if feet:
                page += [""] * (ps - len(page) - len(feet)) + feet
            text_out = "\n".join(page)
            if self._pages_written:
                text_out = "\f" + text_out
            if "PRINT" in self._redirects:
                self._redirects["PRINT"][0].write(text_out + "\n")
                self._redirects["PRINT"][0].flush()
            elif hasattr(self.out, "listing"):
                self.out.listing(text_out)
            self._pages_written += 1
            self.page += 1

    # ------------------------------------------------------------------ end
    def close(self) -> None:
        for which in list(self._redirects):
            self.redirect(which, None)
        if hasattr(self.out, "close"):
            self.out.close()

