"""More functions (SAS 9.4 Functions and CALL Routines: Reference) that were "unknown" to statgrid:

- Character classes: ANYALNUM ANYUPPER ANYLOWER ANYXDIGIT ANYCNTRL ANYPRINT ANYGRAPH ANYFIRST ANYNAME and
  their NOT… forms (the position of the first character that is / is not of the class from `start` on,
  0 when none; a negative start searches leftward from position -start).
- Statistics of the arguments (missing ones ignored): GEOMEAN HARMEAN (an argument below 0 is invalid; a 0
  makes GEOMEAN 0 and HARMEAN missing-free 0), IQR (PCTL5's Q3 - Q1), MAD (the median of the absolute
  deviations from the median), RMS, SUMABS, EUCLID.
- Distributions: PROBBNML(p, n, m) = P(X <= m) binomial, POISSON(m, n) = P(X <= n), PROBNEGB(p, n, m),
  PROBHYPR(N, K, n, x), PROBBETA(x, a, b), PROBGAM(x, a), BETAINV(p, a, b), GAMINV(p, a); DIGAMMA TRIGAMMA
  LOGBETA.
- SUBPAD(s, pos, len), COMPARE(s1, s2 <, modifiers>), CONSTANT(name), SYSPARM(), UUIDGEN().
"""
from __future__ import annotations

import math
import string
import uuid

from statgrid.sas.functions.character import to_char
from statgrid.sas.functions.descriptive import percentile
from statgrid.sas.functions.numeric import _present, to_num
from statgrid.sas.functions.registry import function, invalid_argument
from statgrid.sas.values import MISSING

_CLASSES = {
    "ALNUM": string.ascii_letters + string.digits, "UPPER": string.ascii_uppercase,
    "LOWER": string.ascii_lowercase, "XDIGIT": string.hexdigits, "CNTRL": "".join(map(chr, range(32))) + "\x7f",
    "PRINT": "".join(map(chr, range(32, 127))), "GRAPH": "".join(map(chr, range(33, 127))),
    "FIRST": string.ascii_letters + "_", "NAME": string.ascii_letters + string.digits + "_",
}


def _class_search(name: str, chars: str, negate: bool) -> None:
    @function(name, 1, 2, args="cn")
    def fn(rt, s, start=None):
        s = to_char(s)
        st = 1 if start is None else to_num(start)
        if st != st or st == 0:
            return 0.0 if st == st else invalid_argument(rt, name)
        st = int(st)
        if st > 0:
            order = range(st - 1, len(s))
        else:
            order = range(min(-st, len(s)) - 1, -1, -1)
        for i in order:
            if (s[i] in chars) != negate:
                return float(i + 1)
        return 0.0
    fn.__name__ = f"f_{name.lower()}"


for _cls, _chars in _CLASSES.items():
    _class_search("ANY" + _cls, _chars, False)
    _class_search("NOT" + _cls, _chars, True)


def _stat(name: str, of, least: int = 1) -> None:
    def fn(rt, *args):
        v = _present(args)
        if len(v) < least:
            return MISSING
        r = of(rt, v)
        return MISSING if r is None else float(r)
    fn.__name__ = f"f_{name.lower()}"
    function(name, 1, None)(fn)


def _geomean(rt, v):
    if any(x < 0 for x in v):
        return invalid_argument(rt, "GEOMEAN")
    if any(x == 0 for x in v):
        return 0.0
    return math.exp(math.fsum(math.log(x) for x in v) / len(v))


def _harmean(rt, v):
    if any(x < 0 for x in v):
        return invalid_argument(rt, "HARMEAN")
    if any(x == 0 for x in v):
        return 0.0
    return len(v) / math.fsum(1 / x for x in v)


def _median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


_stat("GEOMEAN", _geomean)
_stat("HARMEAN", _harmean)
_stat("IQR", lambda rt, v: percentile(sorted(v), 75) - percentile(sorted(v), 25))
_stat("MAD", lambda rt, v: _median([abs(x - _median(v)) for x in v]))
_stat("RMS", lambda rt, v: math.sqrt(math.fsum(x * x for x in v) / len(v)))
_stat("SUMABS", lambda rt, v: math.fsum(abs(x) for x in v))
_stat("EUCLID", lambda rt, v: math.sqrt(math.fsum(x * x for x in v)))


def _numeric(name: str, least: int, most: int, of) -> None:
    def fn(rt, *args):
        vals = [to_num(a) for a in args]
        if any(x != x for x in vals):
            return MISSING
        try:
            r = of(*vals)
        except (ValueError, ZeroDivisionError, OverflowError):
            return invalid_argument(rt, name)
        return MISSING if r is None or r != r else float(r)
    fn.__name__ = f"f_{name.lower()}"
    function(name, least, most)(fn)


def _need(cond: bool) -> None:
    if not cond:
        raise ValueError("invalid argument")


def _sp():
    import scipy.special as sp
    return sp


def _probbnml(p, n, m):
    _need(0 <= p <= 1 and n >= 1 and n == int(n) and 0 <= m <= n and m == int(m))
    return float(_sp().bdtr(int(m), int(n), p))


def _poisson(mu, n):
    _need(mu >= 0 and n >= 0)
    return float(_sp().pdtr(math.floor(n), mu))


def _probnegb(p, n, m):
    _need(0 <= p <= 1 and n >= 1 and m >= 0)
    return float(_sp().nbdtr(int(m), int(n), p))


def _probhypr(nn, k, n, x, r=1.0):
    _need(r == 1.0 and 0 <= k <= nn and 0 <= n <= nn)
    from scipy.stats import hypergeom
    return float(hypergeom.cdf(math.floor(x), int(nn), int(k), int(n)))


def _probbeta(x, a, b):
    _need(0 <= x <= 1 and a > 0 and b > 0)
    return float(_sp().betainc(a, b, x))


def _probgam(x, a):
    _need(a > 0)
    return float(_sp().gammainc(a, x)) if x > 0 else 0.0


def _betainv(p, a, b):
    _need(0 <= p <= 1 and a > 0 and b > 0)
    return float(_sp().betaincinv(a, b, p))


def _gaminv(p, a):
    _need(0 <= p < 1 and a > 0)
    return float(_sp().gammaincinv(a, p))


def _digamma(x):
    _need(not (x <= 0 and x == math.floor(x)))
    return float(_sp().psi(x))


def _trigamma(x):
    _need(not (x <= 0 and x == math.floor(x)))
    return float(_sp().polygamma(1, x))


def _logbeta(a, b):
    _need(a > 0 and b > 0)
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


_numeric("PROBBNML", 3, 3, _probbnml)
_numeric("POISSON", 2, 2, _poisson)
_numeric("PROBNEGB", 3, 3, _probnegb)
_numeric("PROBHYPR", 4, 5, _probhypr)
_numeric("PROBBETA", 3, 3, _probbeta)
_numeric("PROBGAM", 2, 2, _probgam)
_numeric("BETAINV", 3, 3, _betainv)
_numeric("GAMINV", 2, 2, _gaminv)
_numeric("DIGAMMA", 1, 1, _digamma)
_numeric("TRIGAMMA", 1, 1, _trigamma)
_numeric("LOGBETA", 2, 2, _logbeta)


@function("SUBPAD", 2, 3, returns="char", char_length=0, args="cnn")
def f_subpad(rt, s, pos, length=None):
    """SUBSTR without its invalid-argument NOTEs: the piece from pos, padded with blanks to `length`."""
    s = to_char(s)
    p = to_num(pos)
    if p != p:
        return ""
    p = max(int(p), 1)
    if length is None:
        return s[p - 1:]
    n = to_num(length)
    if n != n or n <= 0:
        return ""
    return s[p - 1:p - 1 + int(n)].ljust(int(n))


@function("COMPARE", 2, 3, args="ccc")
def f_compare(rt, a, b, modifiers=""):
    """The position of the first character where the strings differ, negative when the first string sorts
    lower there; 0 when equal (trailing blanks ignored). Modifiers: i (ignore case), l (leading blanks
    removed), : (compare only the shorter length)."""
    a, b, mods = to_char(a), to_char(b), to_char(modifiers).lower()
    if "l" in mods:
        a, b = a.lstrip(" "), b.lstrip(" ")
    if "i" in mods:
        a, b = a.upper(), b.upper()
    a, b = a.rstrip(" "), b.rstrip(" ")
    if ":" in mods:
        n = min(len(a), len(b))
        a, b = a[:n], b[:n]
    n = max(len(a), len(b))
    a2, b2 = a.ljust(n), b.ljust(n)
    for i in range(n):
        if a2[i] != b2[i]:
            return float(i + 1) if a2[i] > b2[i] else -float(i + 1)
    return 0.0


_CONSTANTS = {
    "E": math.e, "PI": math.pi, "EULER": 0.5772156649015329, "BIG": 1.7976931348623157e308,
    "LOGBIG": math.log(1.7976931348623157e308), "SQRTBIG": math.sqrt(1.7976931348623157e308),
    "SMALL": 2.2250738585072014e-308, "LOGSMALL": math.log(2.2250738585072014e-308),
    "SQRTSMALL": math.sqrt(2.2250738585072014e-308), "MACEPS": 2.220446049250313e-16,
    "LOGMACEPS": math.log(2.220446049250313e-16), "SQRTMACEPS": math.sqrt(2.220446049250313e-16),
}


@function("CONSTANT", 1, 2, args="cn")
def f_constant(rt, name, parameter=None):
    key = to_char(name).strip().upper()
    if key == "EXACTINT":                           # the largest integer a double holds exactly
        return float(2 ** 53)
    v = _CONSTANTS.get(key)
    return invalid_argument(rt, "CONSTANT") if v is None else v


@function("SYSPARM", 0, 0, returns="char", char_length=200)
def f_sysparm(rt):
    """The SYSPARM= system option's value (the -sysparm of the command line), as GETOPTION('SYSPARM')."""
    program = getattr(rt, "program", None)
    opts = getattr(program, "options", None) if program is not None else None
    return "" if opts is None else opts.getoption_text("SYSPARM")


@function("UUIDGEN", 0, 2, returns="char", char_length=36)
def f_uuidgen(rt, *args):
    return str(uuid.uuid4())
