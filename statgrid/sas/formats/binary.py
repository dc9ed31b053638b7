"""Binary informats for fixed-length (RECFM=F) records (SAS 9.4 Formats and Informats: Reference). A record
is read as Latin-1 text, so character n of the field is byte n of the file.

- IBw.d / S370FIBw.d: signed two's-complement integer, little-endian (Intel hosts) / big-endian; w 1-8,
  default 4. PIBw.d / S370FPIBw.d: the same, unsigned; default 1.
- PDw.d / S370FPDw.d: packed decimal, two digits a byte, the last half-byte the sign (X'D' or X'B'
  negative); w 1-16, default 1.
- RBw.d: a little-endian double whose w high-order bytes are given (w 2-8, default 4).
- $EBCDICw.: EBCDIC (code page 037) characters as ASCII text; default 1.
Each value is divided by 10**d when d is given.
"""
from __future__ import annotations

import struct

from statgrid.sas.formats.numeric import InvalidData


def _bytes(text: str) -> bytes:
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def _scaled(v: float, d: int) -> float:
    return float(v) / (10 ** d) if d else float(v)


def _integer(text: str, d: int, signed: bool, order: str) -> float:
    b = _bytes(text)
    if not b:
        raise InvalidData(text)
    return _scaled(int.from_bytes(b, order, signed=signed), d)


def _packed(text: str, d: int) -> float:
    b = _bytes(text)
    if not b:
        raise InvalidData(text)
    digits = []
    for k, byte in enumerate(b):
        hi, lo = byte >> 4, byte & 0xF
        if hi > 9:
            raise InvalidData(text)
        digits.append(hi)
        if k < len(b) - 1:
            if lo > 9:
                raise InvalidData(text)
            digits.append(lo)
        sign = lo
    if sign < 10:
        raise InvalidData(text)
    v = int("".join(map(str, digits)) or "0")
    return _scaled(-v if sign in (0xB, 0xD) else v, d)


def _real(text: str, d: int) -> float:
    b = _bytes(text)
    if not 2 <= len(b) <= 8:
        raise InvalidData(text)
    return _scaled(struct.unpack("<d", b"\0" * (8 - len(b)) + b)[0], d)


def ebcdic(text: str) -> str:
    return _bytes(text).decode("cp037")


READERS = {
    "IB": lambda t, d, y: _integer(t, d, True, "little"),
    "PIB": lambda t, d, y: _integer(t, d, False, "little"),
    "S370FIB": lambda t, d, y: _integer(t, d, True, "big"),
    "S370FPIB": lambda t, d, y: _integer(t, d, False, "big"),
    "PD": lambda t, d, y: _packed(t, d),
    "S370FPD": lambda t, d, y: _packed(t, d),
    "RB": lambda t, d, y: _real(t, d),
}
DEFAULTS = {"IB": 4, "PIB": 1, "S370FIB": 4, "S370FPIB": 1, "PD": 1, "S370FPD": 1, "RB": 4}
