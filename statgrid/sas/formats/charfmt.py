"""Character formats beyond $w. and $CHARw. (SAS 9.4 Formats and Informats: Reference):

- $QUOTEw. writes the value in double quotation marks, trailing blanks removed and an embedded double
  quotation mark doubled; range 2-32767, default the value's length + 2. A value that does not fit is cut
  and still closed with a quotation mark.
- $UPCASEw. writes the value in upper case; range 1-32767, default the value's length (8 when unknown).
- $HEXw. writes each byte of the value as two hexadecimal digits, upper case, padded with blanks ('20') to
  w/2 bytes; range 1-32767, default 4 (a byte is a character of the value's Latin-1 text — MD5()'s raw digest
  — or, past Latin-1, its UTF-8 bytes).
"""
from __future__ import annotations


def quote(value: str, w: int | None) -> str:
    body = value.rstrip(" ").replace('"', '""')
    text = f'"{body}"'
    if w is None:
        return text
    if len(text) > w:
        text = text[:max(w - 1, 1)] + '"' if w >= 2 else text[:w]
    return text.ljust(w)


def upcase(value: str, w: int | None) -> str:
    text = value.upper()
    return text if w is None else text[:w].ljust(w)


def hexfmt(value: str, w: int | None) -> str:
    w = 4 if w is None else w
    try:
        data = value.encode("latin-1")
    except UnicodeEncodeError:
        data = value.encode("utf-8")
    need = (w + 1) // 2
    data = data[:need].ljust(need, b" ")
    return data.hex().upper()[:w]


CHAR_WRITERS = {"QUOTE": quote, "UPCASE": upcase, "HEX": hexfmt}
CHAR_RANGES: dict[str, tuple[int, int, int]] = {"QUOTE": (2, 2, 32767), "UPCASE": (8, 1, 32767),
                                                "HEX": (4, 1, 32767)}
