"""Character formats beyond $w. and $CHARw. (SAS 9.4 Formats and Informats: Reference):

- $QUOTEw. writes the value in double quotation marks, trailing blanks removed and an embedded double
  quotation mark doubled; range 2-32767, default the value's length + 2. A value that does not fit is cut
  and still closed with a quotation mark.
- $UPCASEw. writes the value in upper case; range 1-32767, default the value's length (8 when unknown).
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


CHAR_WRITERS = {"QUOTE": quote, "UPCASE": upcase}
CHAR_RANGES: dict[str, tuple[int, int, int]] = {"QUOTE": (2, 2, 32767), "UPCASE": (8, 1, 32767)}
