"""Run-time helpers of the NUMBA engine's generated kernels: `**` (runtime.py make_ops), the MIN/MAX
operators, array subscripts, OUTPUT into the buffer, the numeric functions (functions/numeric.py) and the
random streams (functions/random.py), each bit-for-bit the same as its Python counterpart over plain
missing values (a kernel never sees a special missing: refused at compile time, and Parquet keeps none).
Compiled once per process and cached on disk by numba beside this file (or in numba's user-wide cache when
the package directory is not writable).

The state arrays `cnt` and `ist` are described in state.py. Where the Python engine would write a NOTE in the middle of the step that this engine cannot place (an
invalid argument: it also sets _ERROR_ and dumps the PDV), or raise a run-time ERROR, a helper sets
ist[BAIL]; the kernel returns, the driver discards everything and the Python engine runs the step."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from statgrid.sas.datastep.compiled.state import (BAIL, DIVZERO, IST_SIZE, NITER, OUTCOUNT, RAN_ON,  # noqa: F401
                                                  RAN_X, ROWSREAD, ST_BAIL, ST_DEL, ST_OK, ST_STOP)

MODULUS = 2**31 - 1
MULTIPLIER = 397204094
FUZZ = 1e-12
nan = np.nan

# -- the PDV and the output buffer --------------------------------------------------------------------------
@njit(cache=True)
def output(v, ob, osrc, row, ist, hook, outs):
    """OUTPUT: the output's numeric variables (slots `outs`) into the buffer, with the input row they
    came from (for the character columns); a full buffer is written by the driver's `hook`."""
    k = ist[OUTCOUNT]
    for j in range(outs.shape[0]):
        ob[j, k] = v[outs[j]]
    osrc[k] = row
    ist[OUTCOUNT] = k + 1
    if k + 1 == osrc.shape[0]:
        hook()


# -- arithmetic (runtime.make_ops): + - * / and unary - are written inline by exprs.py; ** is here --------
@njit(cache=True)
def pow_(a, b, cnt, nsites, site):
    """Python's float ** with its exceptions turned into the invalid-math count (runtime.make_ops pow_)."""
    if a != a or b != b:
        cnt[site] += 1
        return nan
    if math.isfinite(a) and math.isfinite(b):
        if b == 0.0:
            return 1.0
        if a == 0.0 and b < 0.0:                    # ZeroDivisionError
            cnt[nsites + site] += 1
            return nan
        if a < 0.0 and b != math.floor(b):          # a complex result
            cnt[nsites + site] += 1
            return nan
        r = a ** b
        if math.isinf(r):                            # OverflowError
            cnt[nsites + site] += 1
            return nan
        return r
    return a ** b


# -- the MIN/MAX operators (>< <>): missing (always the ordinary `.` here) below every number ----------------
@njit(cache=True)
def le(a, b):
    """runtime.le: missing below every number."""
    if a == a and b == b:
        return a <= b
    return a != a


@njit(cache=True)
def nummax(a, b):
    return a if le(b, a) else b


@njit(cache=True)
def nummin(a, b):
    return a if le(a, b) else b


# -- functions (functions/numeric.py) ----------------------------------------------------------------------
@njit(cache=True)
def in_list(x, singles, miss, los, his):
    """`x IN (…)` over number constants, `.` and ranges lo:hi (exprgen g_In: KEY(x) in set, INRANGES)."""
    if x != x:
        return miss
    for c in singles:
        if x == c:
            return True
    for j in range(los.shape[0]):
        if los[j] <= x <= his[j]:
            return True
    return False


@njit(cache=True)
def f_abs(x):
    return nan if x != x else abs(x)


@njit(cache=True)
def _fuzz_int(x):
    r = np.rint(x) + 0.0              # Python's round() (ties to even: never within FUZZ of a tie); an int: no -0
    if abs(x - r) <= FUZZ:
        return r
    return nan


@njit(cache=True)
def _no_value(x, invalid, ist):
    """True when a one-argument function's result is missing: x is missing, or `invalid` (an argument
    Python refuses — an infinity, a number outside the domain: "Invalid argument", so the step bails)."""
    if x != x:
        return True
    if invalid:
        ist[BAIL] = 1
        return True
    return False


def _to_integer(whole, fuzzed: bool):
    """INT, CEIL, FLOOR (fuzzed: within FUZZ of an integer → that integer) and their Z forms: x truncated,
    raised or lowered by `whole` (functions/numeric.py _to_integer). round(inf) and math.trunc(inf) raise
    in Python: "Invalid argument". numba freezes `whole` and `fuzzed` into each function (and keys its
    disk cache by them)."""
    @njit(cache=True)
    def f(x, ist):
        if _no_value(x, math.isinf(x), ist):
            return nan
        if fuzzed:
            r = _fuzz_int(x)
            if r == r:
                return r
        return whole(x) + 0.0
    return f


f_int = _to_integer(np.trunc, True)
f_intz = _to_integer(np.trunc, False)
f_ceil = _to_integer(np.ceil, True)
f_ceilz = _to_integer(np.ceil, False)
f_floor = _to_integer(np.floor, True)
f_floorz = _to_integer(np.floor, False)


@njit(cache=True)
def f_fuzz(x, ist):
    if _no_value(x, math.isinf(x), ist):
        return nan
    r = np.rint(x) + 0.0
    return r if abs(x - r) <= 1e-12 else x


@njit(cache=True)
def f_sign(x):
    if x != x:
        return nan
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


@njit(cache=True)
def f_coalesce(args):
    for a in args:
        if a == a:
            return a
    return nan


@njit(cache=True)
def f_round(x, unit, k, ist):
    """sas_round for a literal unit whose result round-trips through "%.15g" unchanged: unit 1/k (k > 0,
    k dividing 10**6) or an integral unit (k = 0); |result| < 1e9 — else the Python engine decides."""
    if _no_value(x, math.isinf(x), ist):
        return nan
    q = x / unit
    if abs(q) >= 2.0 ** 53:
        return x
    eps = 1e-10 if abs(q) < 1e5 else abs(q) * 1e-15 * 4
    n = np.floor(abs(q) + 0.5 + eps)
    if q < 0:
        n = -n
    r = n / k if k > 0 else n * unit
    if abs(r) >= 1e9:
        ist[BAIL] = 1
        return nan
    return r if r != 0 else 0.0


@njit(cache=True)
def f_mod(x, y, ist):
    if x != x or y != y:
        return nan
    if y == 0 or math.isinf(x):
        ist[BAIL] = 1
        return nan
    r = np.fmod(x, y)                 # exact, as math.fmod
    m = max(abs(x), 1.0)
    if abs(r) <= FUZZ * m or abs(abs(r) - abs(y)) <= FUZZ * m:
        return 0.0
    return r


def _on_domain(fn, zero_ok: bool):
    """SQRT (x >= 0: zero_ok) and LOG, LOG2, LOG10 (x > 0): fn(x); outside that domain Python raises
    ("Invalid argument": the step bails)."""
    @njit(cache=True)
    def f(x, ist):
        if _no_value(x, x < 0 or (x == 0 and not zero_ok), ist):
            return nan
        return fn(x)
    return f


f_sqrt = _on_domain(math.sqrt, True)
f_log = _on_domain(math.log, False)
f_log2 = _on_domain(math.log2, False)
f_log10 = _on_domain(math.log10, False)


@njit(cache=True)
def f_exp(x, ist):
    if x != x:
        return nan
    r = math.exp(x)
    if math.isinf(r) and math.isfinite(x):      # OverflowError in Python
        ist[BAIL] = 1
        return nan
    return r


def _extreme(least: bool):
    """MIN (least) and MAX of the non-missing arguments; missing when all are."""
    @njit(cache=True)
    def f(args):
        best = nan
        for a in args:
            if a == a and (best != best or (a < best if least else a > best)):
                best = a
        return best
    return f


f_min = _extreme(True)
f_max = _extreme(False)


@njit(cache=True)
def f_n(args):
    c = 0
    for a in args:
        if a == a:
            c += 1
    return float(c)


@njit(cache=True)
def f_nmiss(args):
    c = 0
    for a in args:
        if a != a:
            c += 1
    return float(c)


@njit(cache=True)
def _fsum(args, ist):
    """CPython's math.fsum (Shewchuk's exact partials, then correct rounding) over the non-missing
    arguments; (sum, count). An infinite or overflowing sum raises in Python: the step is left to it."""
    partials = np.empty(len(args) + 1, np.float64)
    np_ = 0
    count = 0
    for x in args:
        if x != x:
            continue
        count += 1
        if not math.isfinite(x):
            ist[BAIL] = 1
            return nan, count
        i = 0
        for j in range(np_):
            y = partials[j]
            if abs(x) < abs(y):
                t = x
                x = y
                y = t
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                partials[i] = lo
                i += 1
            x = hi
        np_ = i
        if not math.isfinite(x):
            ist[BAIL] = 1
            return nan, count
        partials[np_] = x
        np_ += 1
    hi = 0.0
    if np_ > 0:
        np_ -= 1
        hi = partials[np_]
        lo = 0.0
        while np_ > 0:
            x = hi
            np_ -= 1
            y = partials[np_]
            hi = x + y
            yr = hi - x
            lo = y - yr
            if lo != 0.0:
                break
        if np_ > 0 and ((lo < 0.0 and partials[np_ - 1] < 0.0) or (lo > 0.0 and partials[np_ - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            yr = x - hi
            if y == yr:
                hi = x
    return hi, count


@njit(cache=True)
def f_sum(args, ist):
    s, c = _fsum(args, ist)
    return s if c > 0 else nan


@njit(cache=True)
def f_mean(args, ist):
    s, c = _fsum(args, ist)
    return s / c if c > 0 else nan


@njit(cache=True)
def f_missing(x):
    return 1.0 if x != x else 0.0


# -- random numbers (functions/random.py) ------------------------------------------------------------------
@njit(cache=True)
def _ranuni_next(seed, ist):
    if ist[RAN_ON] == 0:                        # the step's first call starts its one stream
        if seed != seed or seed >= MODULUS or int(seed) <= 0:
            ist[BAIL] = 1                       # invalid argument, or a clock seed: Python decides
            return nan
        ist[RAN_X] = int(seed)
        ist[RAN_ON] = 1
    x = MULTIPLIER * ist[RAN_X] % MODULUS
    ist[RAN_X] = x
    return x / MODULUS


@njit(cache=True)
def f_ranuni(seed, ist):
    return _ranuni_next(seed, ist)


@njit(cache=True)
def f_rannor(seed, ist):
    u1 = _ranuni_next(seed, ist)
    u2 = _ranuni_next(seed, ist)
    if ist[BAIL] != 0:
        return nan
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@njit(cache=True)
def _uniform(g):
    u = 0.0
    while u == 0.0:
        u = g.random()
    return u


@njit(cache=True)
def rand_uniform(g, n, a, b, ist):
    """RAND('UNIFORM'[, a[, b]]) with n parameters."""
    if n == 0:
        return _uniform(g)
    if a != a or (n == 2 and b != b):
        return nan
    lo, hi = (0.0, a) if n == 1 else (a, b)
    if not hi > lo:
        ist[BAIL] = 1
        return nan
    return lo + (hi - lo) * _uniform(g)


@njit(cache=True)
def rand_normal(g, n, a, b, ist):
    """RAND('NORMAL'[, mu[, sd]]) with n parameters."""
    if (n >= 1 and a != a) or (n == 2 and b != b):
        return nan
    mu = a if n >= 1 else 0.0
    sd = b if n == 2 else 1.0
    if not sd > 0:
        ist[BAIL] = 1
        return nan
    return mu + sd * g.standard_normal()


@njit(cache=True)
def lag(x, lq, ist, pos_slot, start, n):
    """LAGn at one call site: its queue is lq[start:start+n], its head position ist[pos_slot]."""
    p = ist[pos_slot]
    out = lq[start + p]
    lq[start + p] = x
    ist[pos_slot] = (p + 1) % n
    return out
