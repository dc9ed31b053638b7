"""The macro processor's front: program text in, resolved statements out, one at a time.

`MacroProcessor(program).statements(text, source)` reads open code a statement at a time: macro
statements (%LET, %PUT, %MACRO … %MEND, %IF … in open code, %GLOBAL …) run where they stand; other
text is resolved (execute.py) and cut into statements at semicolons outside quotes and comments. Each
statement is tokenized at the line it starts on and yielded before anything after it is resolved, so
the driver can run a step first (SAS: a CALL SYMPUT is seen by the `&x` after the step). Statements a
macro generated are marked `generated` and written as `MPRINT(NAME):   text` under MPRINT.

After `DATALINES;` `CARDS;` `LINES;` the raw lines up to the one holding a semicolon (`;;;;` for the
…4 forms) are attached to the statement, unresolved (SAS 9.4 Statements, DATALINES). `%INCLUDE 'file';`
`%INCLUDE fileref;` `%INCLUDE fileref(member);` read the file as open code; its lines are echoed
with '+' under SOURCE2 (or `/ SOURCE2`). A `* …;` comment is text, so macro triggers in it act as
in SAS (`* %let x=1;` does set x). Standard library only.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterator

from statgrid.sas.errors import SasError
from statgrid.sas.lexer import SEMI, tokenize
from statgrid.sas.macro import parser as P
from statgrid.sas.macro.execute import AbortProgram, Engine, MacroStop, Piece
from statgrid.sas.macro.functions import FUNCTIONS
from statgrid.sas.macro.quoting import unquote
from statgrid.sas.macro.scanner import (LineMap, is_name_start, name_at, paren_end, past_quoted, semicolon_end,
                                         skip_space, skip_space_comments, string_end)
from statgrid.sas.macro.symbols import SymbolTables
from statgrid.sas.statement import Statement

DATALINES_KEYWORDS = frozenset({"DATALINES", "CARDS", "LINES", "DATALINES4", "CARDS4", "LINES4"})
_SPACE_RE = re.compile(r"\s+")
_INCLUDE_RE = re.compile(r"^%inc(lude)?\b", re.I)


_CLOSERS = {"sq": "'", "dq": '"', "comment": "*/"}     # what ends each state of the scan


class Reader:
    """One open-code text (the program, the autoexec, an %INCLUDEd file) and where reading is."""

    def __init__(self, text: str, source: str, included: bool, log: Any):
        self.text, self.source, self.included, self.log = text, source, included, log
        self.pos = 0
        self.map = LineMap(text, 1, source)
        self.lines = text.split("\n")
        self.echoed = 0
        self.at_start = True                    # the next segment starts a statement

    def line_at(self, pos: int) -> int:
        return self.map.at(min(pos, len(self.text)))[0]

    def echo_through(self, line: int) -> None:
        if not self.included:
            if hasattr(self.log, "echo_through"):
                self.log.echo_through(line)
            return
        line = min(line, len(self.lines))
        while self.echoed < line:
            self.echoed += 1
            if hasattr(self.log, "included"):
                self.log.included(self.lines[self.echoed - 1])

    def echo_rest(self) -> None:
        end = len(self.lines)
        while end > self.echoed and not self.lines[end - 1].strip():
            end -= 1
        self.echo_through(end)

    def take_datalines(self, four: bool) -> list[str]:
        """The raw lines after the statement just read (self.pos is after its ';')."""
        t = self.text
        nl = t.find("\n", self.pos)
        if nl < 0:
            self.pos = len(t)
            return []
        k, out = nl + 1, []
        while k <= len(t):
            e = t.find("\n", k)
            e = len(t) if e < 0 else e
            raw = t[k:e]
            if four:
                j = raw.find(";;;;")
                if j >= 0 and not raw[:j].strip():
                    self.pos = k + j + 4
                    return out
            elif ";" in raw:
                self.pos = k + raw.index(";") + 1       # the null statement ends the data
                return out
            out.append(raw)
            if e >= len(t):
                break
            k = e + 1
        self.pos = len(t)
        return out


class MacroProcessor:
    def __init__(self, program: Any, lookup_function: Callable | None = None):
        if getattr(program, "symbols", None) is None:
            opts = getattr(program, "options", None)
            try:
                sysparm = str(opts.get("SYSPARM")) if opts is not None else ""
            except Exception:
                sysparm = ""
            program.symbols = SymbolTables(sysparm=sysparm)
        self.program = program
        self.log = program.log
        self.engine = Engine(program, lookup_function)
        if isinstance(getattr(program, "extras", None), dict):
            program.extras["macro_engine"] = self.engine       # the RESOLVE function's way in
            program.extras["macro_processor"] = self           # CALL EXECUTE's (statements_now)
        self.reader: Reader | None = None
        self.engine.line_at = lambda pos: self.reader.line_at(pos) if self.reader else 0
        self.engine.echo_to = lambda line: self.reader.echo_through(line) if self.reader else None

    # ------------------------------------------------------------------ public
    def statements(self, text: str, source: str = "") -> Iterator[Statement]:
        reader = Reader(text, source, False, self.log)
        try:
            yield from self._assemble(self._open(reader))
        except AbortProgram as exc:
            self._abort(exc)

    def statements_now(self, text: str, source: str = "") -> list[Statement]:
        """`text` through the macro processor at once, while a DATA step runs (CALL EXECUTE): its macro
        statements and macro calls execute now, as SAS's do; the SAS statements they make are returned to run
        after the step. The processor's place in the program it is reading is kept."""
        reader, line = self.reader, self.engine.cur_line
        try:
            return list(self.statements(text, source))
        finally:
            self.reader, self.engine.cur_line = reader, line

    def _abort(self, exc: AbortProgram) -> None:
        try:
            from statgrid.sas.errors import ProgramAbort
        except ImportError:
            return
        raise ProgramAbort(exc.code)

    # ------------------------------------------------------------------ open code
    def _open(self, r: Reader) -> Iterator[tuple[Piece, Reader]]:
        eng, t = self.engine, r.text
        while r.pos < len(t):
            self.reader = r
            start = r.pos
            end, kw = self._segment_end(r, start)
            eng.cur_line = r.line_at(skip_space(t, start))
            if end > start:
                r.pos = end
                r.at_start = t[end - 1] == ";" or (r.at_start and not t[start:end].strip())
                for piece in eng.resolve(t[start:end], offset=start):
                    yield piece, r
                continue
            try:
                node, after = P.Parser(t, r.source).statement(start)
            except P.MacroSyntaxError as exc:
                self._syntax(exc, r)
                r.pos = max(semicolon_end(t, start + 1), start + 1)
                continue
            r.pos = after
            if node is None:
                continue
            try:
                for piece in self._open_statement(node):
                    yield piece, r
            except MacroStop:
                pass

    def _open_statement(self, node: Any) -> Iterator[Piece]:
        eng = self.engine
        if isinstance(node, P.Do):
            eng.error("The %DO statement is not valid in open code.")
            return
        if isinstance(node, P.Label):
            eng.error(f"The %{node.name}: label is not valid in open code.")
            return
        if isinstance(node, P.MacroDef):
            node.line = self.reader.line_at(node.pos) if self.reader else 0
        yield from eng.exec(node)

    def _segment_end(self, r: Reader, i: int) -> tuple[int, str]:
        """From i: the end of the text before the next macro statement, or after the next ';' (a statement
        of open code), and the keyword of the macro statement found at i ('' otherwise)."""
        t, n, j = r.text, len(r.text), i
        parser = P.Parser(t, r.source)
        star = False
        k0 = skip_space_comments(t, i)
        if r.at_start and k0 < n and t[k0] == "*":
            star, j = True, k0 + 1                  # a `* …;` comment: quotes in it are text
        while j < n:
            c = t[j]
            if c == ";":
                return j + 1, ""
            k = past_quoted(t, j, strings=not star)
            if k != j:
                j = k
                continue
            if c == "%" and j + 1 < n and (is_name_start(t[j + 1]) or t[j + 1] == "*"):
                kw = parser.keyword_at(j)
                if kw and kw != ":":
                    return j, kw
                name = name_at(t, j + 1)
                up = name.upper()
                e = j + 1 + len(name)
                mdef = self.engine.lookup_macro(up) if up not in FUNCTIONS else None
                if mdef is None and up not in FUNCTIONS and j > i:
                    # a macro not defined yet: the text before it runs first (an OPTIONS SASAUTOS= there
                    # decides where autocall looks for it), then it is looked up again
                    return j, ""
                if up in FUNCTIONS or (mdef is not None and (mdef.params or mdef.parmbuff)):
                    k = skip_space_comments(t, e) if mdef is not None else skip_space(t, e)
                    if k < n and t[k] == "(":
                        p = paren_end(t, k)
                        e = p if p > 0 else e
                j = e
                continue
            j += 1
        return n, ""

    def _syntax(self, exc: P.MacroSyntaxError, r: Reader) -> None:
        line, col = r.map.at(exc.pos)
        self.reader = r
        self.engine.cur_line = line
        self.engine.echo()
        err = SasError(exc.message, line, col, exc.text, exc.expected, r.source)
        if hasattr(self.log, "sas_error"):
            self.log.sas_error(err)
        else:
            self.log.error(err.describe())

    # ------------------------------------------------------------------ statements
    def _assemble(self, chunks: Iterator[tuple[Piece, Reader]]) -> Iterator[Statement]:
        buf: list[str] = []
        first: tuple[Piece, Reader, int] | None = None
        state = "start"                 # start, code, sq, dq, comment, star
        for piece, r in chunks:
            text = unquote(piece.text)
            if piece.macro is not None and "\n" in text and first is not None and first[0].macro is None:
                # a macro's text inside an open-code statement (`label %mklab(300);`): its line breaks are
                # the macro definition's, not the program's; kept, they moved the statement's later tokens
                # (and the log's echo of the source) hundreds of lines ahead of the program
                text = text.replace("\n", " ")
            i, n, seg = 0, len(text), 0
            while i < n:
                if state == "start":
                    k = skip_space(text, i)
                    if k >= n:
                        i = n
                        break
                    first, state = (piece, r, k), ("star" if text[k] == "*" else "code")
                    i = k if state == "code" else k + 1
                    continue
                if state == "code":
                    m = re.compile(r"['\";]|/\*").search(text, i)
                    if not m:
                        i = n
                        break
                    g = m.group()
                    if g == ";":
                        buf.append(text[seg:m.end()])
                        seg = i = m.end()
                        yield from self._finish("".join(buf), first, r)
                        buf, first, state = [], None, "start"
                        continue
                    state = {"'": "sq", '"': "dq", "/*": "comment"}[g]
                    i = m.end()
                    continue
                closer = _CLOSERS.get(state)
                if closer is not None:                  # inside a string or a /* */ comment: to its end
                    k = text.find(closer, i)
                    if k < 0:
                        i = n
                        break
                    state, i = "code", k + len(closer)
                    continue
                if state == "star":
                    k = text.find(";", i)
                    if k < 0:
                        i = n
                        break
                    buf.append(text[seg:k + 1])
                    seg = i = k + 1
                    self._comment("".join(buf), first)
                    buf, first, state = [], None, "start"
                    continue
            if first is not None or state != "start":
                buf.append(text[seg:])
        rest = "".join(buf)
        if rest.strip() and first is not None:
            if state == "star":
                self._comment(rest, first)
            else:
                yield from self._finish(rest, first, None)

    def _where(self, first: tuple[Piece, Reader, int]) -> tuple[int, int, str, bool]:
        piece, r, k = first
        if piece.macro is not None:
            return self.engine.call_line or r.line_at(piece.pos), 1, r.source, True
        pos = piece.pos + k if piece.literal else piece.pos
        line, col = r.map.at(min(pos, len(r.text)))
        return line, col, r.source, False

    def _comment(self, text: str, first: tuple[Piece, Reader, int] | None) -> None:
        if first is not None and first[0].macro is not None:
            self._mprint(first[0].macro, text)

    def _mprint(self, macro: str, text: str) -> None:
        eng = self.engine
        if eng.opt("MPRINT"):
            eng.echo_to(eng.call_line)
            self.log.mprint(macro, _collapse(text))

    def _finish(self, text: str, first: tuple[Piece, Reader, int] | None, last: Reader | None) -> Iterator[Statement]:
        if first is None:
            return
        line, col, source, generated = self._where(first)
        body = text.lstrip()
        skip = skip_space_comments(body, 0)          # `/* banner */ %include 'x';`: the comment is no text
        if _INCLUDE_RE.match(body[skip:]):
            if generated:
                self._mprint(first[0].macro, body)
            else:
                first[1].echo_through(line + body.count("\n"))
            yield from self._include(body[skip:], line + body[:skip].count("\n"), col, source, first[1])
            return
        try:
            toks = tokenize(body, line, col, source)
        except SasError as exc:
            self.engine.echo_to(line)
            self.log.sas_error(exc) if hasattr(self.log, "sas_error") else self.log.error(exc.describe())
            return
        toks = [tk for tk in toks if tk.kind != "EOF"]
        if not toks:
            if generated:
                self._mprint(first[0].macro, body)
            return
        stmt = Statement(toks, body, line, source, generated)
        if generated:
            self.engine.echo_to(self.engine.call_line)    # the source through the macro's call comes first
            self._mprint(first[0].macro, body)
        kw = stmt.keyword
        if kw in DATALINES_KEYWORDS and len(toks) == 2 and toks[1].kind == SEMI:
            if generated or last is None:
                self.engine.error(f"The macro {first[0].macro or ''} generated CARDS (data lines) for the DATA "
                                  "step, which could cause incorrect results. The DATA step will not be executed.")
                stmt.datalines = []
            else:
                stmt.datalines = last.take_datalines(kw.endswith("4"))
        r = first[1]
        if r.included and not generated:
            end_line = toks[-1].line + (len(stmt.datalines) + 1 if stmt.datalines is not None else 0)
            r.echo_through(end_line)
        yield stmt

    # ------------------------------------------------------------------ %INCLUDE
    def _include(self, body: str, line: int, col: int, source: str, r: Reader) -> Iterator[Statement]:
        spec = _INCLUDE_RE.sub("", body, count=1).strip().rstrip(";").strip()
        cut = spec.find("/", string_end(spec, 0) if spec[:1] in "'\"" else 0)
        spec, opts = (spec, "") if cut < 0 else (spec[:cut], spec[cut + 1:])
        spec = spec.strip()
        paths: list[Path] = []
        m = re.match(r"^(['\"])(.*)\1$", spec, re.S)
        if m:
            paths = [Path(m.group(2))]
        else:
            m2 = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(\s*['\"]?([^'\")]+)['\"]?\s*\))?$", spec)
            ref = getattr(self.program, "filerefs", {}).get(m2.group(1).upper()) if m2 else None
            if ref is None:
                self._fail(f"The file or fileref {spec} named in %INCLUDE is not assigned.", line, col, spec, source)
                return
            if m2.group(2):
                member = m2.group(2)
                base = ref.paths[0]
                cand = base / member
                paths = [cand if cand.suffix else cand.with_suffix(".sas")]
            else:
                paths = list(ref.paths)
        texts = []
        for p in paths:
            try:
                texts.append(p.read_text())
            except OSError as exc:
                self._fail(f"Cannot open %INCLUDE file {p}: {exc.strerror}.", line, col, str(p), source)
                return
        force = "SOURCE2" in opts.upper() and "NOSOURCE2" not in opts.upper()
        options = getattr(self.program, "options", None)
        saved = None
        if force and options is not None:
            try:
                saved = options.get("SOURCE2")
                options.set("SOURCE2")
            except Exception:
                saved = None
        try:
            for p, text in zip(paths, texts):
                inc = Reader(text, str(p), True, self.log)
                outer, outer_line = self.reader, self.engine.cur_line
                try:
                    yield from self._assemble(self._open(inc))
                    inc.echo_rest()
                finally:
                    self.reader, self.engine.cur_line = outer, outer_line
        finally:
            if saved is False and options is not None:
                options.set("NOSOURCE2")

    def _fail(self, msg: str, line: int, col: int, text: str, source: str) -> None:
        self.engine.echo_to(line)
        err = SasError(msg, line, col, text, "", source)
        self.log.sas_error(err) if hasattr(self.log, "sas_error") else self.log.error(err.describe())


def _collapse(text: str) -> str:
    """MPRINT's form of a statement: blanks outside quoted strings collapsed to one, ends trimmed."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            e = string_end(text, i)
            e = n if e < 0 else e
            out.append(text[i:e])
            i = e
            continue
        if c.isspace():
            j = i
            while j < n and text[j].isspace():
                j += 1
            out.append(" ")
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out).strip()
