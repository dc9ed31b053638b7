"""Character-level scanning shared by the macro parser and the resolver: names, quoted strings,
comments, matching parentheses, top-level commas, and where a macro statement's text ends.

The rules follow the SAS word scanner as the Macro Language Reference describes it ("How the Macro
Processor Works", "Macro Quoting"): a single-quoted string is one literal token (no macro triggers
inside); a double-quoted string is too, but macro triggers inside it resolve; `/* … */` is a comment;
characters masked by macro quoting (quoting.py) are plain text to every rule here. A quote with no
closing partner is taken as a plain character, so a stray apostrophe does not swallow the program.
Standard library only.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NEWLINES = re.compile(r"\n")


def is_name_start(c: str) -> bool:
    return c.isascii() and (c.isalpha() or c == "_")


def name_at(text: str, i: int) -> str:
    """The SAS name starting at text[i] ('' if none)."""
    m = NAME_RE.match(text, i)
    return m.group() if m else ""


def skip_space(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t\r\n\f":
        i += 1
    return i


def skip_space_comments(text: str, i: int) -> int:
    while True:
        i = skip_space(text, i)
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                return len(text)
            i = j + 2
            continue
        return i


def string_end(text: str, i: int) -> int:
    """text[i] is ' or ": the index after its closing quote, or -1 when it is never closed."""
    q = text[i]
    j = text.find(q, i + 1)
    return -1 if j < 0 else j + 1


def comment_end(text: str, i: int) -> int:
    """text[i:i+2] is '/*': the index after '*/' (the end of text when unclosed)."""
    j = text.find("*/", i + 2)
    return len(text) if j < 0 else j + 2


def past_quoted(text: str, j: int, strings: bool = True) -> int:
    """From j: the index after the quoted string (when `strings`; an unclosed quote is one character) or
    the /* comment */ that starts at j; j itself when neither does."""
    c = text[j]
    if strings and c in "'\"":
        e = string_end(text, j)
        return j + 1 if e < 0 else e
    if c == "/" and text.startswith("/*", j):
        return comment_end(text, j)
    return j


def top_level(text: str, i: int = 0, escapes: str = "", quotes: bool = True):
    """(index, character, depth) for each character of text from i that is not inside a quoted string
    (unless `quotes` is False) and not part of a `%x` escape with x in `escapes` (%STR's marks); depth
    is the parenthesis depth after that character (a '(' counts itself)."""
    depth, n, j = 0, len(text), i
    while j < n:
        c = text[j]
        if c == "%" and j + 1 < n and text[j + 1] in escapes:
            j += 2
            continue
        if quotes and c in "'\"":
            e = string_end(text, j)
            j = j + 1 if e < 0 else e
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        yield j, c, depth
        j += 1


def paren_end(text: str, i: int, quotes: bool = True) -> int:
    """text[i] is '(': the index after its matching ')', -1 when there is none. Quoted strings are
    skipped (unless `quotes` is False); %( %) %' %" are escapes (%STR's marks), not parentheses."""
    for j, c, depth in top_level(text, i, "()'\"%", quotes):
        if c == ")" and depth == 0:
            return j + 1
    return -1


def split_args(text: str) -> list[str]:
    """The arguments of a call, split at commas outside parentheses and quoted strings ('' → [''])."""
    out, start = [], 0
    for j, c, depth in top_level(text, 0, "()'\"%,"):
        if c == "," and depth == 0:
            out.append(text[start:j])
            start = j + 1
    out.append(text[start:])
    return out


def semicolon_end(text: str, i: int, call_names: frozenset[str] | set[str] = frozenset()) -> int:
    """From i, the index after the `;` ending a macro statement (len(text) when there is none). Quoted
    strings, comments and the parenthesized arguments of `%name(` calls do not end it (SAS: `%let x =
    %str(a;b);`)."""
    n, j = len(text), i
    while j < n:
        c = text[j]
        if c == ";":
            return j + 1
        k = past_quoted(text, j)
        if k != j:
            j = k
            continue
        if c == "%" and j + 1 < n and is_name_start(text[j + 1]):
            name = name_at(text, j + 1)
            k = j + 1 + len(name)
            if name.upper() in call_names or not call_names:
                k2 = skip_space(text, k)
                if k2 < n and text[k2] == "(":
                    e = paren_end(text, k2)
                    if e > 0:
                        j = e
                        continue
            j = k
            continue
        j += 1
    return n


@dataclass
class LineMap:
    """Offsets of a text → (line, column), 1-based, the text starting at `line`."""
    text: str
    line: int = 1
    source: str = ""

    def __post_init__(self) -> None:
        self.starts = [0] + [m.end() for m in _NEWLINES.finditer(self.text)]

    def at(self, pos: int) -> tuple[int, int]:
        k = bisect.bisect_right(self.starts, pos) - 1
        return self.line + k, pos - self.starts[k] + 1
