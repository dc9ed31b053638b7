"""The SAS tokenizer: program text (after the macro processor) → tokens with line and column.

Tokens are NAME (`data`, `first`, `x1`), NUM (`12`, `1.5`, `.5`, `1e3`, hex `0FFx`), STR (a quoted string;
`suffix` D/T/DT/X/N for `'01jan2020'd`, `'10:30't`, `'01jan2020:10:30'dt`, `'41'x`, `'my var'n`), OP (every
other symbol, longest first: `**`, `||`, `<=`, `>=`, `^=`, `<>`, `@@` …) and SEMI. Dots are their own
OP token: `work.a`, `first.id`, `date9.`, `.A` are joined by the parsers from tokens that touch
(`Token.touches`), because only the statement knows which of them it means.

Comments go here: `/* … */` anywhere, `* … ;` and `%* … ;` where a statement starts. A fault (an
unclosed string or comment) raises SasSyntaxError with its line and column. Standard library only.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterator

from statgrid.sas.errors import SasSyntaxError

NAME, NUM, STR, OP, SEMI, EOF = "NAME", "NUM", "STR", "OP", "SEMI", "EOF"

STRING_SUFFIXES = frozenset({"D", "T", "DT", "X", "N"})
_OPS = ("**", "||", "!!", "<=", ">=", "^=", "~=", "¬=", "<>", "><", "@@",
        "=", "<", ">", "+", "-", "*", "/", "(", ")", ",", "{", "}", "[", "]", "$", "@", ":", "#", "?",
        "%", ".", "^", "~", "¬", "!", "|", "&")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUM_RE = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX_RE = re.compile(r"\d[0-9A-Fa-f]*[xX](?![A-Za-z0-9_])")
_SPACE_RE = re.compile(r"\s+")
_INF = float("inf")
# The largest number SAS holds (an IEEE double; SAS's CONSTANT('BIG') on UNIX): a literal past it is an error.
_LARGEST_TEXT = "a number at most 1.797693134862316E308, the largest number SAS accepts"


def _too_big(literal: str) -> str:
    shown = literal if len(literal) <= 40 else literal[:20] + "…" + literal[-8:]
    return f"the numeric constant {shown} is too large for a SAS number"


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str               # as written (a STR's text includes its quotes and suffix)
    line: int               # 1-based
    col: int                # 1-based
    pos: int                # offset of the first character in the tokenized text
    end: int                # offset after the last character
    value: object = None    # NUM: float; STR: the content, quotes undone ('' doubled → ')
    suffix: str = ""        # STR: '', 'D', 'T', 'DT', 'X' or 'N' (upper case)

    @property
    def upper(self) -> str:
        return self.text.upper()

    def touches(self, other: "Token") -> bool:
        """True when `other` starts right where this token ends (no space, no comment between)."""
        return self.end == other.pos

    def is_(self, *texts: str) -> bool:
        """True for a NAME or OP whose text is one of `texts` (names compared case-blind)."""
        if self.kind not in (NAME, OP, SEMI):
            return False
        up = self.text.upper()
        return any(up == t.upper() for t in texts)


class _Lines:
    def __init__(self, text: str, line0: int, col0: int):
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.line0, self.col0 = line0, col0

    def at(self, pos: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.starts, pos) - 1
        col = pos - self.starts[i] + 1
        return self.line0 + i, (col + self.col0 - 1 if i == 0 else col)


def tokenize(text: str, line: int = 1, col: int = 1, source: str = "") -> list[Token]:
    """Every token of `text`, the last one EOF. `line`/`col` say where `text` starts in its file."""
    return list(iter_tokens(text, line, col, source))


def iter_tokens(text: str, line: int = 1, col: int = 1, source: str = "") -> Iterator[Token]:
    lines = _Lines(text, line, col)
    i, n, at_start = 0, len(text), True

    def fault(msg: str, pos: int, expected: str = "") -> SasSyntaxError:
        ln, cl = lines.at(pos)
        return SasSyntaxError(msg, ln, cl, text[pos:pos + 20].split("\n")[0], expected, source)

    while True:
        m = _SPACE_RE.match(text, i)
        if m:
            i = m.end()
        if i >= n:
            ln, cl = lines.at(n)
            yield Token(EOF, "", ln, cl, n, n)
            return
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise fault("a comment is not closed", i, "*/")
            i = j + 2
            continue
        if at_start and (c == "*" or text.startswith("%*", i)):
            j = text.find(";", i)
            i = n if j < 0 else j + 1            # a statement comment runs to its semicolon
            continue
        ln, cl = lines.at(i)
        if c in "'\"":
            j, parts = i + 1, []
            while True:
                k = text.find(c, j)
                if k < 0:
                    raise fault("a quoted string is not closed", i, c)
                parts.append(text[j:k])
                if text.startswith(c, k + 1):     # '' inside '…' is one quote
                    parts.append(c)
                    j = k + 2
                    continue
                j = k + 1
                break
            suffix = ""
            m = _NAME_RE.match(text, j)
            if m and m.group().upper() in STRING_SUFFIXES:
                suffix, j = m.group().upper(), m.end()
            value = "".join(parts)
            if suffix == "X":
                hexes = re.sub(r"[\s,]", "", value)
                if len(hexes) % 2 or not re.fullmatch(r"[0-9A-Fa-f]*", hexes):
                    raise fault(f"{text[i:j]} is not a hexadecimal string", i, "an even count of 0-9/A-F")
                value = bytes.fromhex(hexes).decode("latin-1")
            yield Token(STR, text[i:j], ln, cl, i, j, value, suffix)
            i, at_start = j, False
            continue
        m = _HEX_RE.match(text, i)
        if m:
            digits = m.group()[:-1]
            try:
                value = float(int(digits, 16))    # int() of base 16 has no digit limit; float() does
            except OverflowError:
                value = _INF
            if value == _INF:
                raise fault(_too_big(m.group()), i, _LARGEST_TEXT)
            yield Token(NUM, m.group(), ln, cl, i, m.end(), value)
            i, at_start = m.end(), False
            continue
        m = _NUM_RE.match(text, i)
        if m and (c != "." or (i + 1 < n and text[i + 1].isdigit())):
            value = float(m.group())
            if value == _INF:                     # 1e400: Python reads it as inf
                raise fault(_too_big(m.group()), i, _LARGEST_TEXT)
            yield Token(NUM, m.group(), ln, cl, i, m.end(), value)
            i, at_start = m.end(), False
            continue
        m = _NAME_RE.match(text, i)
        if m:
            yield Token(NAME, m.group(), ln, cl, i, m.end())
            i, at_start = m.end(), False
            continue
        if c == ";":
            yield Token(SEMI, ";", ln, cl, i, i + 1)
            i, at_start = i + 1, True
            continue
        op = next((o for o in _OPS if text.startswith(o, i)), c)
        yield Token(OP, op, ln, cl, i, i + len(op))
        i, at_start = i + len(op), False


def split_statements(tokens: list[Token]) -> list[list[Token]]:
    """Tokens cut after each SEMI (the SEMI kept); a last statement without one is kept as it is."""
    out, cur = [], []
    for t in tokens:
        if t.kind == EOF:
            break
        cur.append(t)
        if t.kind == SEMI:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out
