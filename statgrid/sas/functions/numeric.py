"""Arithmetic, truncation and descriptive-statistics functions (SAS 9.4 Functions and CALL Routines):
ABS INT INTZ ROUND CEIL CEILZ FLOOR FLOORZ MOD MODZ SIGN FUZZ EXP LOG LOG2 LOG10 SQRT; MIN MAX SUM
MEAN N NMISS CMISS STD VAR RANGE MEDIAN CSS USS; MISSING COALESCE; CALL SORTN.

Missing values: a function of one number returns missing for a missing argument (the DATA step counts
it in its "Missing values were generated" NOTE); the descriptive functions ignore missing arguments
and return missing only when every argument is missing. An argument outside the function's domain
(LOG(0), SQRT(-1), MOD(x, 0)) gives SAS's "Invalid argument" NOTE and a missing result.
INT, CEIL, FLOOR and MOD fuzz as SAS documents: a result within 1E-12 of an integer is that integer.
"""
from __future__ import annotations

import math
from typing import Any

from statgrid.sas.formats.numeric import InvalidData, read_number
from statgrid.sas.functions.registry import call_routine, function, invalid_argument
from statgrid.sas.values import MISSING, num_key

FUZZ = 1e-12


def to_num(x: Any) -> float:
    """A numeric argument: a character value is read as a number (blank or not a number → missing),
    as SAS's automatic conversion does (the DATA step writes the conversion NOTE)."""
    if isinstance(x, str):
        try:
            return read_number(x)
        except InvalidData:
            return MISSING
    if x is None:
        return MISSING
    return x if isinstance(x, float) else float(x)


def _present(args: tuple) -> list[float]:
    out = []
    for a in args:
        v = to_num(a)
        if v == v:
            out.append(v)
    return out


@function("ABS", 1, 1)
def f_abs(rt, x):
    x = to_num(x)
    return MISSING if x != x else abs(x)


@function("SIGN", 1, 1)
def f_sign(rt, x):
    x = to_num(x)
    return MISSING if x != x else float((x > 0) - (x < 0))


def _fuzz_int(x: float) -> float | None:
    r = round(x)
    return float(r) if abs(x - r) <= FUZZ else None


def _to_integer(name: str, op, fuzzed: bool, doc: str) -> None:
    """Register INT/CEIL/FLOOR (fuzzed: within 1E-12 of an integer → that integer, as SAS documents)
    and their Z forms (no fuzzing)."""
    def fn(rt, x):
        x = to_num(x)
        if x != x:
            return MISSING
        f = _fuzz_int(x) if fuzzed else None
        return f if f is not None else float(op(x))
    fn.__name__, fn.__doc__ = f"f_{name.lower()}", doc
    function(name, 1, 1)(fn)


_to_integer("INT", math.trunc, True, "The integer part, truncated toward 0; within 1E-12 of an integer → that integer.")
_to_integer("INTZ", math.trunc, False, "The integer part, truncated toward 0 (no fuzzing).")
_to_integer("CEIL", math.ceil, True, "The smallest integer >= x; within 1E-12 of an integer → that integer.")
_to_integer("CEILZ", math.ceil, False, "The smallest integer >= x (no fuzzing).")
_to_integer("FLOOR", math.floor, True, "The largest integer <= x; within 1E-12 of an integer → that integer.")
_to_integer("FLOORZ", math.floor, False, "The largest integer <= x (no fuzzing).")


@function("FUZZ", 1, 1)
def f_fuzz(rt, x):
    """The nearest integer if x is within 1E-12 of it, else x."""
    x = to_num(x)
    if x != x:
        return MISSING
    f = _fuzz_int(x)
    return f if f is not None else x


def sas_round(x: float, unit: float = 1.0) -> float:
    """ROUND(x, unit): the multiple of `unit` nearest x, halves away from zero. SAS returns the value
    whose decimal form is the rounded one (ROUND(2.675, .01) = 2.68, not the binary 2.67), so the
    quotient is fuzzed by a few units in its last place and a unit like 0.01 divides by 100."""
    if unit == 0:
        return x
    unit = abs(unit)
    q = x / unit
    if math.isinf(x):
        raise OverflowError("ROUND of a value beyond the largest number")
    if math.isinf(q) or abs(q) >= 2.0 ** 53:
        return x                 # finer than x's own precision: x is already a multiple of unit
    eps = 1e-10 if abs(q) < 1e5 else abs(q) * 1e-15 * 4
    n = math.floor(abs(q) + 0.5 + eps)
    n = -n if q < 0 else n
    inv = 1 / unit
    if unit < 1 and abs(inv - round(inv)) < 1e-9 * inv:
        r = n / round(inv)
    else:
        r = n * unit
    return float(f"{r:.15g}") if r != 0 else 0.0


@function("ROUND", 1, 2)
def f_round(rt, x, unit=1.0):
    x = to_num(x)
    unit = to_num(unit)
    if x != x:
        return MISSING
    if unit != unit:
        return invalid_argument(rt, "ROUND", 2)
    return sas_round(x, unit)


@function("ROUNDZ", 1, 2)
def f_roundz(rt, x, unit=1.0):
    x, unit = to_num(x), to_num(unit)
    if x != x or unit != unit:
        return MISSING
    unit = abs(unit) or 1.0
    q = x / unit
    n = math.floor(abs(q) + 0.5)
    return (n if q >= 0 else -n) * unit


def _remainder(rt, x, y, name: str, fuzzed: bool) -> float:
    """x - y*INT(x/y), the sign of x (math.fmod: exact); fuzzed (MOD, not MODZ): exactly 0 when the
    remainder is numerical noise (within 1E-12 of 0 or of y, relative to x)."""
    x, y = to_num(x), to_num(y)
    if x != x or y != y:
        return MISSING
    if y == 0:
        return invalid_argument(rt, name)
    r = math.fmod(x, y)
    if fuzzed and (abs(r) <= FUZZ * max(abs(x), 1.0) or abs(abs(r) - abs(y)) <= FUZZ * max(abs(x), 1.0)):
        return 0.0
    return r


@function("MOD", 2, 2)
def f_mod(rt, x, y):
    """x - y*INT(x/y), the sign of x; fuzzed to exactly 0 when the remainder is numerical noise."""
    return _remainder(rt, x, y, "MOD", True)


@function("MODZ", 2, 2)
def f_modz(rt, x, y):
    return _remainder(rt, x, y, "MODZ", False)


@function("EXP", 1, 1)
def f_exp(rt, x):
    x = to_num(x)
    if x != x:
        return MISSING
    try:
        return math.exp(x)
    except OverflowError:
        return invalid_argument(rt, "EXP")


def _log(name, base):
    def fn(rt, x):
        x = to_num(x)
        if x != x:
            return MISSING
        if x <= 0:
            return invalid_argument(rt, name)
        return math.log(x) if base is None else (math.log10(x) if base == 10 else math.log2(x))
    return fn


function("LOG", 1, 1)(_log("LOG", None))
function("LOG10", 1, 1)(_log("LOG10", 10))
function("LOG2", 1, 1)(_log("LOG2", 2))


@function("SQRT", 1, 1)
def f_sqrt(rt, x):
    x = to_num(x)
    if x != x:
        return MISSING
    if x < 0:
        return invalid_argument(rt, "SQRT")
    return math.sqrt(x)


# -- descriptive statistics (missing arguments ignored) ---------------------------------------------
def _statistic(name: str, of, least: int = 1) -> None:
    """A descriptive statistic of at least `least` arguments: of(the non-missing values), missing when
    fewer than `least` are not missing."""
    def statistic(rt, *args):
        v = _present(args)
        return of(v) if len(v) >= least else MISSING
    statistic.__name__ = f"f_{name.lower()}"
    function(name, least, None)(statistic)


def _css(v: list[float]) -> float:
    m = math.fsum(v) / len(v)
    return math.fsum((x - m) ** 2 for x in v)


_statistic("MIN", min)
_statistic("MAX", max)
_statistic("SUM", math.fsum)
_statistic("MEAN", lambda v: math.fsum(v) / len(v))
_statistic("VAR", lambda v: _css(v) / (len(v) - 1), least=2)     # the sample variance (divisor n-1)
_statistic("STD", lambda v: math.sqrt(_css(v) / (len(v) - 1)), least=2)
_statistic("CSS", _css)
_statistic("USS", lambda v: math.fsum(x * x for x in v))
_statistic("RANGE", lambda v: max(v) - min(v))


@function("N", 1, None)
def f_n(rt, *args):
    return float(len(_present(args)))


@function("NMISS", 1, None)
def f_nmiss(rt, *args):
    return float(len(args) - len(_present(args)))


@function("CMISS", 1, None, args="a")
def f_cmiss(rt, *args):
    """Missing arguments of either type (a blank character value is missing)."""
    from statgrid.sas.values import is_missing
    return float(sum(1 for a in args if is_missing(a)))


@function("MEDIAN", 1, None)
def f_median(rt, *args):
    v = sorted(_present(args))
    if not v:
        return MISSING
    k = len(v) // 2
    return v[k] if len(v) % 2 else (v[k - 1] + v[k]) / 2


@function("MISSING", 1, 1, args="a")
def f_missing(rt, x):
    """1 if the argument is missing (numeric: any missing value; character: blanks), else 0."""
    if isinstance(x, str):
        return 1.0 if x.strip(" ") == "" else 0.0
    return 1.0 if x is None or x != x else 0.0


@function("COALESCE", 1, None)
def f_coalesce(rt, *args):
    """The first non-missing argument, else missing."""
    for a in args:
        v = to_num(a)
        if v == v:
            return v
    return MISSING


@call_routine("SORTN", 1, None, args="n")
def call_sortn(rt, args):
    """CALL SORTN(of x1-xn): the values in ascending order, missing values first (SAS's order)."""
    vals = [to_num(a) for a in args]
    return sorted(vals, key=num_key)


@call_routine("SORTC", 1, None, args="c")
def call_sortc(rt, args):
    """CALL SORTC: character values in ascending order (blanks first), each kept in its variable."""
    return sorted((str(a) for a in args), key=lambda s: s.rstrip(" "))
