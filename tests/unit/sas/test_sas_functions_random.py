"""RANUNI reproduces SAS's documented generator (x[i+1] = 397204094 x[i] mod 2**31-1, computed here
from the recurrence); RANNOR matches the SAS/IML manual's NORMAL example (the same generator and
Box-Muller); the seed rules (one function stream per step; CALL routines keep theirs in the seed);
RAND deterministic per STREAMINIT seed."""
from __future__ import annotations

import math

import pytest

from statgrid.sas.context import FunctionRuntime
from statgrid.sas.functions import CALL_ROUTINES, FUNCTIONS
from statgrid.sas.functions.random import RanuniStream
from tests.unit.sas.test_sas_functions_numeric import Program

M31 = 2147483647


def documented_stream(seed: int, n: int) -> list[float]:
    out, x = [], seed
    for _ in range(n):
        x = (397204094 * x) % M31
        out.append(x / M31)
    return out


def step():
    return FunctionRuntime(Program(), {})


def test_ranuni_function_reproduces_the_documented_stream():
    r = step()
    got = [FUNCTIONS["RANUNI"].fn(r, 7.0) for _ in range(6)]
    assert got == documented_stream(7, 6)


def test_one_stream_per_step_whatever_the_later_seeds():
    r = step()
    a = FUNCTIONS["RANUNI"].fn(r, 7.0)
    b = FUNCTIONS["RANUNI"].fn(r, 99.0)                   # the seed of a later call is ignored
    c = FUNCTIONS["RANEXP"].fn(r, 12345.0)                # … by every RAN… function
    ref = documented_stream(7, 3)
    assert (a, b) == tuple(ref[:2]) and c == pytest.approx(-math.log(ref[2]))
    assert FUNCTIONS["RANUNI"].fn(step(), 7.0) == ref[0]  # a new step starts again


def test_rannor_matches_the_sas_iml_manual_example():
    r = step()
    got = [round(FUNCTIONS["RANNOR"].fn(r, 123456.0), 6) for _ in range(10)]
    assert got == pytest.approx([-0.109483, -0.348785, 1.1202546, -2.513766, 1.3630022, 0.6579036, -0.494706,
                                 -1.062104, 1.0276572, -0.283835], abs=1e-6)


def test_clock_seed_when_seed_is_not_positive():
    v = FUNCTIONS["RANUNI"].fn(step(), 0.0)
    assert 0 < v < 1


def test_call_ranuni_keeps_the_stream_in_the_seed():
    r = step()
    seed = 104.0
    xs = []
    for _ in range(5):
        new = CALL_ROUTINES["RANUNI"].fn(r, [seed, 0.0])
        seed, x = new
        xs.append(x)
    assert xs == documented_stream(104, 5) and seed == round(documented_stream(104, 5)[-1] * M31)


def test_call_rannor_ranpoi_ranbin_rantbl_update_seed():
    r = step()
    seed, x = CALL_ROUTINES["RANNOR"].fn(r, [123456.0, 0.0])
    assert round(x, 6) == pytest.approx(-0.109483, abs=1e-6)
    u = documented_stream(123456, 2)
    assert seed == round(u[1] * M31)
    new = CALL_ROUTINES["RANTBL"].fn(r, [5.0, .5, .25, .25, 0.0])
    u1 = documented_stream(5, 1)[0]
    assert new[-1] == (1 if u1 <= .5 else 2 if u1 <= .75 else 3) and new[1:4] == [None, None, None]


def test_ranpoi_ranbin_rantbl_inverse_transform():
    u = documented_stream(11, 1)[0]
    # Poisson(2) by the inverse transform of u, computed here from the pmf
    x, cdf, p = 0, math.exp(-2), math.exp(-2)
    while u > cdf:
        x += 1
        p *= 2 / x
        cdf += p
    assert FUNCTIONS["RANPOI"].fn(step(), 11.0, 2.0) == x
    cdf, k = 0.0, 0
    while True:
        cdf += math.comb(10, k) * .3 ** k * .7 ** (10 - k)
        if u <= cdf:
            break
        k += 1
    assert FUNCTIONS["RANBIN"].fn(step(), 11.0, 10.0, .3) == k
    assert FUNCTIONS["RANTBL"].fn(step(), 11.0, .1, .1) == (1 if u <= .1 else 2 if u <= .2 else 3)
    big = [FUNCTIONS["RANPOI"].fn(r, 3.0, 100.0) for r in [step()] for _ in range(2000)]
    assert 97 < sum(big) / len(big) < 103


def test_take_matches_next():
    s1, s2 = RanuniStream(42), RanuniStream(42)
    seq = [s1.next() for _ in range(5000)]
    assert list(s2.take(5000)) == seq and s1.x == s2.x


def test_rand_is_deterministic_per_streaminit_seed():
    def draws(seed):
        r = step()
        CALL_ROUTINES["STREAMINIT"].fn(r, [float(seed)])
        out = []
        for dist, params in [("UNIFORM", ()), ("NORMAL", (10.0, 2.0)), ("POISSON", (3.0,)), ("BINOMIAL", (.3, 10.0)),
                             ("NEGBINOMIAL", (.5, 3.0)), ("GEOMETRIC", (.2,)), ("EXPONENTIAL", ()), ("GAMMA", (2.0,)),
                             ("LOGNORMAL", ()), ("F", (3.0, 7.0)), ("TABLE", (.2, .3)), ("BERNOULLI", (.5,))]:
            out.append(FUNCTIONS["RAND"].fn(r, dist, *params))
        return out
    a, b, c = draws(123), draws(123), draws(124)
    assert a == b and a != c
    assert 0 < a[0] < 1 and a[6] > 0 and a[10] in (1, 2, 3) and a[11] in (0, 1) and a[5] >= 1
    assert float(a[2]).is_integer() and 0 <= a[3] <= 10


def test_streaminit_after_the_first_rand_is_ignored_and_bad_distribution_is_invalid():
    r = step()
    CALL_ROUTINES["STREAMINIT"].fn(r, [5.0])
    x = FUNCTIONS["RAND"].fn(r, "UNIFORM")
    CALL_ROUTINES["STREAMINIT"].fn(r, [6.0])
    r2 = step()
    CALL_ROUTINES["STREAMINIT"].fn(r2, [5.0])
    assert FUNCTIONS["RAND"].fn(r2, "uniform") == x and FUNCTIONS["RAND"].fn(r, "U") != FUNCTIONS["RAND"].fn(r, "U")
    assert r.program.log.notes and "RAND" in r.program.log.notes[0]
