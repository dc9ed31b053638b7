"""SAS's numeric formats and informats: w.d, BESTw., COMMAw.d, DOLLARw.d, Ew., Zw.d, PERCENTw.d
(SAS 9.4 Formats and Informats: Reference). Every writer returns exactly `w` characters, right-aligned;
a value that does not fit is shortened as SAS does it (w.d and COMMA fall back to BESTw., BEST goes to
E notation, and a field too narrow for any of that is filled with asterisks).

The missing value is written as the MISSING= option's character (default '.'), right-aligned; a
special missing `.A` as its letter ('A'; `._` as '_'). Standard library only.
"""
from __future__ import annotations

import math
import re

from statgrid.sas.values import MISSING


class InvalidData(ValueError):
    """Data an informat cannot read: SAS's "NOTE: Invalid data for X in line N C1-C2." (the caller
    writes the NOTE and sets _ERROR_; the value read is missing)."""


def missing_text(value: float, missing: str = ".") -> str:
    """What a missing numeric prints as: a special missing's letter, else the MISSING= character."""
    code = getattr(value, "code", None)
    return code if code is not None else missing


def stars(w: int) -> str:
    return "*" * w


def _strip_zeros(s: str) -> str:
    if "." in s and "e" not in s.lower():
        s = s.rstrip("0").rstrip(".")
    return s


def _sig_digits(a: float) -> int:
    """How many significant digits `a` needs (at most 15, what a double holds reliably)."""
    digits = f"{a:.14e}".split("e")[0].replace(".", "").rstrip("0")
    return max(1, len(digits))


def _e_best(a: float, avail: int) -> str | None:
    """BEST's E notation of a >= 0 in `avail` characters: '1.2346E10', '1E-7'."""
    for mant_dec in range(min(max(0, avail - 3), 14), -1, -1):
        s = f"{a:.{mant_dec}e}"
        mant, exp = s.split("e")
        exp_i = int(exp)
        mant = _strip_zeros(mant)
        text = f"{mant}E{exp_i}"
        if len(text) <= avail:
            return text
    return None


def best(x: float, w: int = 12, missing: str = ".") -> str:
    """BESTw.: the most precision that fits in w characters (SAS: integers as integers, else as many
    decimals as fit, E notation when the integer part does not fit or shows more of the value)."""
    if x != x:
        return missing_text(x, missing).rjust(w)
    if x == 0:
        return "0".rjust(w)
    if math.isinf(x):
        return stars(w)                      # no SAS number is infinite: nothing fits
    neg = x < 0
    a = -x if neg else x
    avail = w - (1 if neg else 0)
    if avail < 1:
        return stars(w)
    sign = "-" if neg else ""
    if a >= 1e16 or a < 1e-300:
        fixed = None
    else:
        int_digits = len(str(int(a))) if a >= 1 else 0
        fixed = None
        if int_digits <= avail:
            if a == int(a):
                fixed = str(int(a))
            else:
                dec = avail - max(int_digits, 1) - 1
                if int_digits == 0 and dec < 1 and avail >= 2:
                    dec = avail - 1          # '.5' when '0.5' does not fit
                # a double holds 15 significant digits: BEST32. of 42.5 is '42.5', not its binary tail
                sig_limit = 15 - int_digits if int_digits else 15 + max(0, -math.floor(math.log10(a)) - 1)
                dec = min(dec, max(sig_limit, 0))
                if dec >= 1:
                    s = _strip_zeros(_fixed(a, dec))
                    if int_digits == 0 and len(s) > avail and s.startswith("0."):
                        s = s[1:]
                    if len(s) > avail:      # rounding carried into a new digit (9.99 → 10.0)
                        s = _strip_zeros(_fixed(a, max(dec - 1, 0)))
                    fixed = s if len(s) <= avail else None
                else:
                    s = _fixed(a, 0)
                    fixed = s if len(s) <= avail else None
        if fixed is not None and fixed.strip("0.") == "" and a != 0:
            fixed = None                     # the value would print as 0: E notation shows it
    if fixed is not None:
        # keep fixed notation unless E notation shows clearly more of the value
        shown = len(fixed.replace(".", "").lstrip("0"))
        need = _sig_digits(a)
        e = _e_best(a, avail)
        if e is None or shown >= need or shown >= len(e.split("E")[0].replace(".", "")):
            return (sign + fixed).rjust(w)
        return (sign + e).rjust(w)
    e = _e_best(a, avail)
    if e is None:
        if a < 1:
            # SAS 9.4 BESTw.: a value between 0 and .01 in too narrow a field is rounded ("use a field
            # width of at least 7 to avoid excessive rounding"): it is written as 0
            return "0".rjust(w)
        return stars(w)
    return (sign + e).rjust(w)


def _fixed(a: float, d: int) -> str:
    """a >= 0 rounded half away from zero to d decimals (SAS rounds; Python's format rounds the
    binary value, so nudge by the value's own precision first)."""
    if d == 0:
        return str(int(math.floor(a + 0.5 + a * 1e-15)))
    nudged = a + a * 4e-16
    return f"{nudged:.{d}f}"


def w_d(x: float, w: int, d: int = 0, missing: str = ".") -> str:
    """w.d: standard numeric data rounded to d decimals; too wide → BESTw. (SAS's NOTE: "At least
    one W.D format was too small for the number to be printed. The decimal may be shifted by the
    'BEST' format.")."""
    if x != x:
        return missing_text(x, missing).rjust(w)
    neg = x < 0
    a = -x if neg else x
    s = _fixed(a, d)
    if neg and s.strip("0.") == "":
        neg = False                          # -0.001 in 5.2 prints as 0.00, not -0.00
    text = ("-" if neg else "") + s
    if len(text) > w and s.startswith("0."):
        text = ("-" if neg else "") + s[1:]
    if len(text) <= w:
        return text.rjust(w)
    return best(x, w, missing)


def _group(int_text: str, sep: str = ",") -> str:
    out = []
    while len(int_text) > 3:
        out.append(int_text[-3:])
        int_text = int_text[:-3]
    out.append(int_text)
    return sep.join(reversed(out))


def _signed_fixed(x: float, d: int) -> tuple[bool, str]:
    """(negative, |x| with d decimals); a negative that rounds to zero shows no sign (SAS: -0.001 in 5.2
    is ' 0.00')."""
    neg = x < 0
    s = _fixed(-x if neg else x, d)
    return neg and s.strip("0.") != "", s


def comma(x: float, w: int = 6, d: int = 0, missing: str = ".", prefix: str = "") -> str:
    """COMMAw.d (prefix '' ) and DOLLARw.d (prefix '$'): commas every three digits; when that does not
    fit, the commas (and dollar sign) go first, then w.d's own fallback."""
    if x != x:
        return missing_text(x, missing).rjust(w)
    neg, s = _signed_fixed(x, d)
    int_part, _, frac = s.partition(".")
    body = _group(int_part) + ("." + frac if frac else "")
    text = ("-" if neg else "") + prefix + body
    if len(text) <= w:
        return text.rjust(w)
    text = ("-" if neg else "") + prefix + s
    if len(text) <= w:
        return text.rjust(w)
    return w_d(x, w, d, missing)


def e_format(x: float, w: int = 12, d: int | None = None, missing: str = ".") -> str:
    """Ew.: scientific notation with a sign column, one digit before the point, 'E+nn'
    (SAS: put(1257000, e10.) → ' 1.257E+06')."""
    if x != x:
        return missing_text(x, missing).rjust(w)
    exp_width = 4 if x == 0 or abs(x) >= 1e-99 and abs(x) < 1e100 else 5
    dec = w - 3 - exp_width if d is None else d
    if dec < 0:
        return stars(w)
    s = f"{abs(x):.{dec}e}"
    mant, exp = s.split("e")
    e = int(exp)
    text = ("-" if x < 0 else " ") + mant + "E" + ("+" if e >= 0 else "-") + f"{abs(e):02d}"
    if len(text) > w:
        return stars(w)
    return text.rjust(w)


def z_format(x: float, w: int = 1, d: int = 0, missing: str = ".") -> str:
    """Zw.d: like w.d with leading zeros (put(1350, z8.) → '00001350'; -1.5 in z8.2 → '-0001.50')."""
    if x != x:
        return missing_text(x, missing).rjust(w)
    neg, s = _signed_fixed(x, d)
    width = w - (1 if neg else 0)
    if len(s) > width:
        return w_d(x, w, d, missing)
    return ("-" if neg else "") + s.zfill(width)


def percent(x: float, w: int = 6, d: int = 0, missing: str = ".") -> str:
    """PERCENTw.d: 100·x like BESTw.d with '%'; negatives in parentheses; the last column is kept for
    the ')' even when positive (SAS: 0.1 → '      10% ', -0.05 → '(      5%)' in PERCENT10.)."""
    if x != x:
        return missing_text(x, missing).rjust(w)
    v = abs(x) * 100
    body = (_fixed(v, d) if d else best(round(v, 10), max(w - 3, 1)).strip()) + "%"
    if x < 0 and _fixed(v, d).strip("0.") != "":
        if len(body) + 2 > w:
            return stars(w)
        return "(" + body.rjust(w - 2) + ")"
    if len(body) + 1 > w:
        return stars(w)
    return body.rjust(w - 1) + " "


# -- informats -----------------------------------------------------------------------------------------
# ASCII digits only: Python's \d (and float()) also take other scripts' digits, '1_000', 'inf' and 'nan', which
# SAS's standard numeric input reads as invalid data
_NUM_RE = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eEdD][+-]?[0-9]+)?$", re.ASCII)


def read_number(text: str, d: int = 0) -> float:
    """w.d / BESTw. informat: a number in standard or E notation; with d and no decimal point in the
    data, the value is divided by 10**d (SAS: input('1234', 6.2) → 12.34). Blank or '.' → missing."""
    t = text.strip()
    if t in ("", "."):
        return MISSING
    if not _NUM_RE.match(t):
        raise InvalidData(text)
    v = float(t.replace("d", "e").replace("D", "e"))
    if math.isinf(v):
        raise InvalidData(text)           # beyond the largest double: invalid data, as SAS reads it
    if d and "." not in t and "e" not in t.lower() and "d" not in t.lower():
        v = v / 10 ** d if d <= 300 else 0.0
    return v


def read_comma(text: str, d: int = 0) -> float:
    """COMMAw.d / DOLLARw.d informats: commas, blanks, dollar signs, percent signs and dashes
    embedded in the number are removed; parentheses make it negative (SAS 9.4 COMMAw.d informat)."""
    t = text.strip()
    neg = t.startswith("(") and t.endswith(")")
    if neg:
        t = t[1:-1]
    sign = ""
    if t[:1] in "+-" and t:
        sign, t = t[0], t[1:]
    cleaned = re.sub(r"[,$% ]", "", t)
    if cleaned in ("", "."):
        return MISSING
    v = read_number(sign + cleaned, d)
    return -v if neg else v
