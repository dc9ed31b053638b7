"""Macro quoting: how a quoted character is kept apart from the same character unquoted.

SAS marks quoted text with "delta characters" (Macro Language Reference, "Macro Quoting": "the macro
processor ... masks special characters and mnemonic operators so that they are treated as text").
statgrid does the same with Unicode private-use characters: a quoted character c (one of the special
characters SAS lists — blank ; , + - * / < > = ^ ~ ¬ | # ( ) ' " & % and the letters of the mnemonic
operators AND OR NOT EQ NE LT LE GT GE IN) is stored as chr(0xE000 + ord(c)). Every part of the macro
processor that interprets a character (statement ends, argument commas, %EVAL's operators, & and %
triggers, string quotes) sees a masked one as plain text; %UNQUOTE and the hand-over of text to the
statement tokenizer map it back. The mask is one character for one, so %LENGTH, %SUBSTR and %INDEX
count positions the same quoted or not. Standard library only.
"""
from __future__ import annotations

import re

_BASE = 0xE000
SPECIAL = frozenset(" \t\n\r;,+-*/<>=^~¬|#()'\"&%!")
MNEMONICS = frozenset({"AND", "OR", "NOT", "EQ", "NE", "LT", "LE", "GT", "GE", "IN"})
_MASKED_RE = re.compile("[\ue000-\ue0ff]")
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def mask_char(c: str) -> str:
    return chr(_BASE + ord(c)) if ord(c) < 256 else c


def is_masked(c: str) -> bool:
    return "\ue000" <= c <= "\ue0ff"


def unquote(text: str) -> str:
    """Every masked character back to itself (%UNQUOTE; the text handed to the tokenizer)."""
    if not text or not _MASKED_RE.search(text):
        return text
    return _MASKED_RE.sub(lambda m: chr(ord(m.group()) - _BASE), text)


def mask(text: str, amp_percent: bool = True) -> str:
    """Quote `text` as %NRBQUOTE does (amp_percent) or %BQUOTE (& and % left as they are): special
    characters and mnemonic operators masked; characters already masked stay masked."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        m = _WORD_RE.match(text, i) if (c.isalpha() or c == "_") else None
        if m:
            w = m.group()
            prev = text[i - 1] if i else ""
            if w.upper() in MNEMONICS and not (prev and prev in "&%" and not amp_percent):
                out.append("".join(mask_char(ch) for ch in w))
            else:
                out.append(w)
            i = m.end()
            continue
        if c in SPECIAL and (amp_percent or c not in "&%"):
            out.append(mask_char(c))
        else:
            out.append(c)
        i += 1
    return "".join(out)


def strip_blanks(text: str) -> str:
    """Leading and trailing blanks that are not quoted removed (%LET's and parameters' rule)."""
    return text.strip(" \t\r\n")


def has_masked(text: str) -> bool:
    return bool(text) and bool(_MASKED_RE.search(text))
