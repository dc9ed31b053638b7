"""More descriptive statistics over the arguments and truncation (SAS 9.4 Functions and CALL Routines):
PCTL PCTL1-PCTL5 LARGEST SMALLEST ORDINAL CV KURTOSIS SKEWNESS STDERR; TRUNC ROUNDE; CALL ALLPERM.

Missing arguments are ignored (ORDINAL counts them: they sort first); the result is missing when too few
values remain (CV, STDERR: 2; SKEWNESS: 3; KURTOSIS: 4) or the values do not vary (SKEWNESS, KURTOSIS).
PCTLn uses PROC UNIVARIATE's percentile definition n (PCTL: 5). An invalid k or percentage (missing,
not in range) gives SAS's "Invalid argument" NOTE and a missing result.
"""
from __future__ import annotations

import math
import struct

from statgrid.sas.functions.numeric import _css, _present, to_num
from statgrid.sas.functions.registry import CALL_SETS, call_routine, function, invalid_argument
from statgrid.sas.values import MISSING, num_key


def percentile(v: list[float], p: float, definition: int = 5) -> float:
    """The p-th (0..100) percentile of sorted values `v` by PROC UNIVARIATE's PCTLDEF=definition."""
    n = len(v)
    if p <= 0:
        return v[0]
    if p >= 100:
        return v[-1]
    q = p / 100

    def x(i: int) -> float:                 # 1-based, clamped: x(0) = x(1), x(n+1) = x(n)
        return v[min(max(i, 1), n) - 1]

    if definition == 4:
        t = (n + 1) * q
        j = math.floor(t)
        g = t - j
        return (1 - g) * x(j) + g * x(j + 1)
    t = n * q
    j = math.floor(t)
    g = t - j
    if definition == 1:
        return (1 - g) * x(j) + g * x(j + 1)
    if definition == 2:
        if g == 0.5:
            i = j if j % 2 == 0 else j + 1
        else:
            i = math.floor(t + 0.5)
        return x(i)
    if definition == 3:
        return x(j) if g == 0 else x(j + 1)
    return (x(j) + x(j + 1)) / 2 if g == 0 else x(j + 1)


def _pctl(name: str, definition: int) -> None:
    def fn(rt, p, *args):
        pv = to_num(p)
        if pv != pv or not 0 <= pv <= 100:
            return invalid_argument(rt, name)
        v = sorted(_present(args))
        return percentile(v, pv, definition) if v else MISSING
    fn.__name__ = f"f_{name.lower()}"
    function(name, 2, None)(fn)


_pctl("PCTL", 5)
for _d in range(1, 6):
    _pctl(f"PCTL{_d}", _d)


def _k(rt, name: str, k) -> int | None:
    kv = to_num(k)
    if kv != kv or kv < 1:
        invalid_argument(rt, name)
        return None
    return int(kv)


@function("LARGEST", 2, None)
def f_largest(rt, k, *args):
    """The k-th largest non-missing value (missing when fewer than k are not missing)."""
    kk = _k(rt, "LARGEST", k)
    if kk is None:
        return MISSING
    v = sorted(_present(args), reverse=True)
    return v[kk - 1] if kk <= len(v) else MISSING


@function("SMALLEST", 2, None)
def f_smallest(rt, k, *args):
    kk = _k(rt, "SMALLEST", k)
    if kk is None:
        return MISSING
    v = sorted(_present(args))
    return v[kk - 1] if kk <= len(v) else MISSING


@function("ORDINAL", 2, None)
def f_ordinal(rt, k, *args):
    """The k-th smallest argument, missing values included (they sort first); k beyond the count of
    arguments is invalid."""
    kv = to_num(k)
    if kv != kv or kv < 1 or int(kv) > len(args):
        return invalid_argument(rt, "ORDINAL")
    return sorted((to_num(a) for a in args), key=num_key)[int(kv) - 1]


def _moments(v: list[float]) -> tuple[float, float]:
    n = len(v)
    m = math.fsum(v) / n
    return m, math.sqrt(_css(v) / (n - 1))


def _stat(name: str, least: int, of) -> None:
    def fn(rt, *args):
        v = _present(args)
        if len(v) < least:
            return MISSING
        r = of(v)
        return MISSING if r is None else r
    fn.__name__ = f"f_{name.lower()}"
    function(name, 1, None)(fn)


def _cv(v):
    m, s = _moments(v)
    return None if m == 0 else s / m * 100


def _skewness(v):
    n = len(v)
    m, s = _moments(v)
    if s == 0:
        return None
    return n / ((n - 1) * (n - 2)) * math.fsum(((x - m) / s) ** 3 for x in v)


def _kurtosis(v):
    n = len(v)
    m, s = _moments(v)
    if s == 0:
        return None
    return (n * (n + 1) / ((n - 1) * (n - 2) * (n - 3)) * math.fsum(((x - m) / s) ** 4 for x in v)
            - 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))


_stat("CV", 2, _cv)
_stat("STDERR", 2, lambda v: _moments(v)[1] / math.sqrt(len(v)))
_stat("SKEWNESS", 3, _skewness)
_stat("KURTOSIS", 4, _kurtosis)


@function("TRUNC", 2, 2)
def f_trunc(rt, x, length):
    """The value as SAS stores it in `length` bytes (3-8): the IEEE double's last 8-length bytes zeroed."""
    xv, ln = to_num(x), to_num(length)
    if xv != xv:
        return xv
    if ln != ln or not 3 <= ln <= 8:
        return invalid_argument(rt, "TRUNC", 2)
    keep = int(ln)
    b = struct.pack(">d", xv)[:keep] + b"\0" * (8 - keep)
    return struct.unpack(">d", b)[0]


@function("ROUNDE", 1, 2)
def f_rounde(rt, x, unit=1.0):
    """The multiple of `unit` nearest x; an exact half goes to the even multiple (within SAS's fuzz)."""
    xv, u = to_num(x), to_num(unit)
    if xv != xv:
        return MISSING
    if u != u or u < 0:
        return invalid_argument(rt, "ROUNDE", 2)
    if u == 0:
        return xv
    q = xv / u
    f = math.floor(q)
    frac = q - f
    if abs(frac - 0.5) <= 1e-12 * max(1.0, abs(q)):
        n = f if f % 2 == 0 else f + 1
    else:
        n = math.floor(q + 0.5)
    inv = 1 / u
    r = n / round(inv) if u < 1 and abs(inv - round(inv)) < 1e-9 * inv else n * u
    return float(f"{r:.15g}") if r != 0 else 0.0


# -- permutations -------------------------------------------------------------------------------------------
def plain_change(n: int, t: int) -> int:
    """The left position (1-based) of the two adjacent values the t-th step (t >= 1) of the minimal-change
    order of n values interchanges (Steinhaus-Johnson-Trotter "plain changes": the last value moves left
    through the others, then right, with a step of the order of n-1 values in between)."""
    if n < 2:
        return 0
    q, r = divmod(t, n)
    if r:
        return n - r if q % 2 == 0 else r
    j = plain_change(n - 1, q)
    return j + 1 if q % 2 else j


@call_routine("ALLPERM", 2, None, args="na")
def call_allperm(rt, args):
    """CALL ALLPERM(count, v1, …): count 1 leaves the values; each next count interchanges two adjacent
    values in SAS's minimal-change order (call it with count 1, 2, … N! in sequence); past N! nothing."""
    k = to_num(args[0])
    vals = list(args[1:])
    n = len(vals)
    if k != k or k < 1 or n > 18 or len({isinstance(v, str) for v in vals}) > 1:
        invalid_argument(rt, "ALLPERM", None, None)
        return None
    k = int(k)
    if k == 1 or k > math.factorial(n):
        return None
    j = plain_change(n, k - 1)
    vals[j - 1], vals[j] = vals[j], vals[j - 1]
    return [None] + vals


CALL_SETS["ALLPERM"] = tuple(range(1, 19))
