"""Random numbers: RANUNI RANNOR RANEXP RANPOI RANBIN RANTBL (functions and CALL routines), RAND with
CALL STREAMINIT.

RANUNI reproduces SAS's stream exactly. SAS documents the generator (Functions and CALL Routines,
RANUNI / CALL RANUNI): a prime-modulus multiplicative congruential generator, modulus 2**31-1,
multiplier 397204094 (Fishman and Moore 1982): x[i+1] = 397204094 * x[i] mod (2**31-1), the variate
x[i+1] / (2**31-1), x[0] the seed. Its seed rules ("Seed Values", "Generating Multiple Variables from
One Seed in Random-Number Functions"): a seed <= 0 starts the stream from the clock; the seed of the
first random-number *function* call in a DATA step starts one stream that every RAN… function call of
that step continues (later seed arguments are ignored; there is no way to start a second stream with
functions); a new DATA step starts again. The CALL routines keep their stream in the seed variable,
which they update on every call.

The other RAN… variates are SAS's documented transforms of that stream, so they reproduce SAS too
where SAS documents the method exactly:
- RANNOR: the Box-Muller transform of two RANUNI variates, sqrt(-2 log u1) * cos(2 pi u2), one normal
  per two uniforms. SAS documents "the Box-Muller transformation of RANUNI uniform variates"; the
  exact form (cosine, u1 for the radius, the sine half unused) is the one that reproduces the SAS/IML
  manual's NORMAL (= RANNOR) example for seed 123456 (-0.109483, -0.348785, 1.1202546 …).
- RANEXP: the inverse transform -log(u) (documented).
- RANPOI: m < 85 the inverse transform of one uniform (documented, Fishman 1976); m >= 85 the normal
  approximation floor(m + sqrt(m) * z + 0.5) with z from RANNOR's transform (SAS documents the
  approximation, not its rounding: ours).
- RANBIN: n <= 50, np <= 5 or n(1-p) <= 5 the inverse transform of one uniform (documented); otherwise
  the normal approximation with continuity correction, z from RANNOR's transform (rounding ours).
- RANTBL: the inverse transform of one uniform over p1 … pn (documented); n + 1 past their sum.

RAND is not SAS's stream: SAS documents its Mersenne Twister generator but neither how STREAMINIT
seeds it nor its variate algorithms. statgrid's RAND draws from numpy's MT19937 generator seeded with
the STREAMINIT seed (the clock without one, or with a seed <= 0): deterministic per seed, the same on
every machine, different from SAS's numbers. Each DATA step honours the first CALL STREAMINIT before
its first RAND call, as SAS does.

State lives in rt.state (one dict per DATA step): 'ranuni' (RanuniStream) and 'rand' (RandStream).
`RanuniStream.take(n)` and `RandStream.generator` let a compiled step draw many values at once from
the same streams.
"""
from __future__ import annotations

import math
import time
from typing import Any

from statgrid.sas.functions.registry import CALL_SETS, call_routine, function, invalid_argument
from statgrid.sas.functions.numeric import to_num
from statgrid.sas.values import MISSING

MODULUS = 2**31 - 1
MULTIPLIER = 397204094


def clock_seed() -> int:
    """A seed from the time of day (SAS: a seed <= 0 'uses the time of day to initialize the stream')."""
    return time.time_ns() // 1000 % (MODULUS - 1) + 1


class RanuniStream:
    """SAS's RANUNI generator from seed x0 (1 <= x0 < 2**31-1)."""
    __slots__ = ("x",)
    _block_powers: Any = None
    BLOCK = 4096

    def __init__(self, seed: int):
        self.x = int(seed)

    def next(self) -> float:
        self.x = MULTIPLIER * self.x % MODULUS
        return self.x / MODULUS

    def take(self, n: int):
        """The next n variates as a numpy array (jump-ahead by blocks: x[i+k] = a**k x[i] mod m)."""
        import numpy as np
        cls = type(self)
        if cls._block_powers is None:
            pw = np.empty(cls.BLOCK, dtype=np.int64)
            p = 1
            for i in range(cls.BLOCK):
                p = p * MULTIPLIER % MODULUS
                pw[i] = p
            cls._block_powers = pw
        pw = cls._block_powers
        out = np.empty(n, dtype=np.int64)
        done = 0
        while done < n:
            k = min(cls.BLOCK, n - done)
            block = (pw[:k] * self.x) % MODULUS
            out[done:done + k] = block
            self.x = int(block[-1])
            done += k
        return out / MODULUS


def _stream(rt, seed: Any) -> RanuniStream | None:
    """The step's function stream, started by the first call's seed."""
    st = rt.state.get("ranuni")
    if st is None:
        s = to_num(seed)
        if s != s or s >= MODULUS:
            return None
        s = int(s)
        st = RanuniStream(clock_seed() if s <= 0 else s)
        rt.state["ranuni"] = st
    return st


def normal_from(u) -> float:
    """RANNOR's Box-Muller: two uniforms from `u()` → one standard normal variate."""
    u1 = u()
    u2 = u()
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def poisson_from(u, m: float) -> float:
    if m < 85:
        x, p = 0, math.exp(-m)
        cdf, v = p, u()
        while v > cdf and p > 0:
            x += 1
            p *= m / x
            cdf += p
        return float(x)
    return float(max(0, math.floor(m + math.sqrt(m) * normal_from(u) + 0.5)))


def binomial_from(u, n: int, p: float) -> float:
    if n <= 50 or n * p <= 5 or n * (1 - p) <= 5:
        v = u()
        q = 1 - p
        prob = q ** n
        cdf, x = prob, 0
        while v > cdf and x < n:
            prob *= (n - x) / (x + 1) * p / q
            x += 1
            cdf += prob
        return float(x)
    z = normal_from(u)
    return float(min(n, max(0, math.floor(n * p + math.sqrt(n * p * (1 - p)) * z + 0.5))))


def table_from(u, probs: list[float]) -> float:
    v, cdf = u(), 0.0
    for j, p in enumerate(probs, 1):
        cdf += p
        if v <= cdf:
            return float(j)
    return float(len(probs) + 1)


# -- functions (one stream per step) --------------------------------------------------------------------
def _ranfn(name: str, nparams: int, draw, check=None):
    @function(name, 1 + nparams, None if name == "RANTBL" else 1 + nparams)
    def fn(rt, seed, *params):
        ps = [to_num(p) for p in params]
        if any(p != p for p in ps) or (check is not None and not check(ps)):
            return invalid_argument(rt, name)
        st = _stream(rt, seed)
        if st is None:
            return invalid_argument(rt, name, 1)
        return draw(st.next, ps)
    return fn


_ranfn("RANUNI", 0, lambda u, ps: u())
_ranfn("UNIFORM", 0, lambda u, ps: u())
_ranfn("RANNOR", 0, lambda u, ps: normal_from(u))
_ranfn("NORMAL", 0, lambda u, ps: normal_from(u))
_ranfn("RANEXP", 0, lambda u, ps: -math.log(u()))
_ranfn("RANPOI", 1, lambda u, ps: poisson_from(u, ps[0]), lambda ps: ps[0] >= 0)
_ranfn("RANBIN", 2, lambda u, ps: binomial_from(u, int(ps[0]), ps[1]),
       lambda ps: ps[0] >= 1 and 0 < ps[1] < 1)
_ranfn("RANTBL", 1, lambda u, ps: table_from(u, ps), lambda ps: all(0 <= p <= 1 for p in ps))


# -- CALL routines (the stream is in the seed variable) ----------------------------------------------------
class _SeedVar:
    """A RanuniStream over a CALL routine's seed variable."""

    def __init__(self, seed: float):
        s = int(seed)
        self.st = RanuniStream(clock_seed() if s <= 0 else s)

    def u(self) -> float:
        return self.st.next()


def _ranroutine(name: str, nparams: int, draw, check=None):
    CALL_SETS[name.upper()] = (0, -1)      # the seed variable and the variate
    @call_routine(name, 2 + nparams, None if name == "RANTBL" else 2 + nparams, args="n")
    def fn(rt, args):
        seed, params = to_num(args[0]), [to_num(p) for p in args[1:-1]]
        if seed != seed or seed >= MODULUS or any(p != p for p in params) or (check and not check(params)):
            invalid_argument(rt, "CALL " + name)
            return [None] * (len(args) - 1) + [MISSING]
        sv = _SeedVar(seed)
        x = draw(sv.u, params)
        return [float(sv.st.x)] + [None] * (len(args) - 2) + [x]
    return fn


_ranroutine("RANUNI", 0, lambda u, ps: u())
_ranroutine("RANNOR", 0, lambda u, ps: normal_from(u))
_ranroutine("RANEXP", 0, lambda u, ps: -math.log(u()))
_ranroutine("RANPOI", 1, lambda u, ps: poisson_from(u, ps[0]), lambda ps: ps[0] >= 0)
_ranroutine("RANBIN", 2, lambda u, ps: binomial_from(u, int(ps[0]), ps[1]), lambda ps: ps[0] >= 1 and 0 < ps[1] < 1)
_ranroutine("RANTBL", 1, lambda u, ps: table_from(u, ps), lambda ps: all(0 <= p <= 1 for p in ps))


# -- RAND -----------------------------------------------------------------------------------------------
class RandStream:
    """The step's RAND generator: numpy MT19937 from the STREAMINIT seed."""

    def __init__(self, seed: int):
        import numpy as np
        self.seed = seed
        self.generator = np.random.Generator(np.random.MT19937(seed))

    def uniform(self) -> float:
        u = 0.0
        while u == 0.0:                      # (0, 1), as SAS's uniform
            u = float(self.generator.random())
        return u


@call_routine("STREAMINIT", 1, 2, args="n")
def call_streaminit(rt, args):
    """Seed RAND for this step; honoured only before the step's first RAND call; a seed <= 0 is
    ignored (RAND then seeds itself from the clock)."""
    if "rand" in rt.state:
        return None
    s = to_num(args[0])
    if s == s and s > 0:
        rt.state["rand_seed"] = int(s)
    return None


def rand_stream(rt) -> RandStream:
    st = rt.state.get("rand")
    if st is None:
        st = RandStream(rt.state.get("rand_seed") or clock_seed())
        rt.state["rand"] = st
    return st


def _p(x: float) -> bool:
    return 0 <= x <= 1


def _rand_draw(st: RandStream, dist: str, ps: list[float]) -> float | None:
    g = st.generator
    n = len(ps)
    if dist == "UNIFORM":
        if n == 0:
            return st.uniform()
        a, b = (0.0, ps[0]) if n == 1 else (ps[0], ps[1])
        return a + (b - a) * st.uniform() if b > a else None
    if dist == "INTEGER":
        if n != 2 or ps[1] < ps[0]:
            return None
        return float(math.ceil(ps[0]) + math.floor(st.uniform() * (math.floor(ps[1]) - math.ceil(ps[0]) + 1)))
    if dist in ("NORMAL", "GAUSSIAN"):
        mu, sd = (ps + [0.0, 1.0][n:])[:2] if n < 2 else ps[:2]
        return mu + sd * float(g.standard_normal()) if sd > 0 else None
    if dist in ("LOGNORMAL",):
        mu, sd = (ps + [0.0, 1.0][n:])[:2] if n < 2 else ps[:2]
        return float(g.lognormal(mu, sd)) if sd > 0 else None
    if dist in ("EXPONENTIAL", "EXPO"):
        scale = ps[0] if n else 1.0
        return float(g.exponential(scale)) if scale > 0 else None
    if dist == "GAMMA":
        if n < 1 or ps[0] <= 0:
            return None
        return float(g.gamma(ps[0], ps[1] if n > 1 else 1.0))
    if dist == "ERLANG":
        return float(g.gamma(int(ps[0]), 1.0)) if n and ps[0] >= 1 else None
    if dist == "POISSON":
        return float(g.poisson(ps[0])) if n and ps[0] >= 0 else None
    if dist == "BINOMIAL":                     # RAND('BINOMIAL', p, n)
        return float(g.binomial(int(ps[1]), ps[0])) if n == 2 and _p(ps[0]) and ps[1] >= 1 else None
    if dist in ("BERNOULLI", "BERN"):
        return float(st.uniform() < ps[0]) if n and _p(ps[0]) else None
    if dist in ("NEGBINOMIAL", "NEGB"):        # failures before the k-th success
        return float(g.negative_binomial(ps[1], ps[0])) if n == 2 and 0 < ps[0] <= 1 and ps[1] > 0 else None
    if dist in ("GEOMETRIC", "GEOM"):          # trials up to and including the first success
        return float(g.geometric(ps[0])) if n and 0 < ps[0] <= 1 else None
    if dist == "F":
        return float(g.f(ps[0], ps[1])) if n == 2 and ps[0] > 0 and ps[1] > 0 else None
    if dist in ("CHISQUARE", "CHISQ"):
        return float(g.chisquare(ps[0])) if n and ps[0] > 0 else None
    if dist == "T":
        return float(g.standard_t(ps[0])) if n and ps[0] > 0 else None
    if dist == "BETA":
        return float(g.beta(ps[0], ps[1])) if n == 2 and ps[0] > 0 and ps[1] > 0 else None
    if dist == "CAUCHY":
        return float(g.standard_cauchy())
    if dist == "WEIBULL":                      # shape a, scale b
        return float(ps[1] * g.weibull(ps[0])) if n == 2 and ps[0] > 0 and ps[1] > 0 else None
    if dist in ("TRIANGLE", "TRIANGULAR"):
        return float(g.triangular(0.0, ps[0], 1.0)) if n and _p(ps[0]) else None
    if dist in ("TABLE", "TABLED"):
        return table_from(st.uniform, ps) if all(_p(p) for p in ps) else None
    if dist in ("HYPERGEOMETRIC", "HYPER"):    # N population, R items of interest, n drawn
        if n != 3:
            return None
        N, R, k = int(ps[0]), int(ps[1]), int(ps[2])
        return float(g.hypergeometric(R, N - R, k)) if 0 <= R <= N and 0 <= k <= N else None
    return None


@function("RAND", 1, None, args="cn")
def f_rand(rt, dist, *params):
    name = str(dist).strip().upper()
    ps = [to_num(p) for p in params]
    if any(p != p for p in ps):
        return MISSING
    st = rand_stream(rt)
    try:
        v = _rand_draw(st, name, ps)
    except (ValueError, IndexError):
        v = None
    if v is None:
        return invalid_argument(rt, "RAND")
    return v
