"""Probability and distribution functions (SAS 9.4 Functions and CALL Routines): PROBNORM PROBIT PROBT
PROBCHI PROBF TINV CINV FINV; CDF PDF SDF QUANTILE LOGCDF LOGPDF LOGSDF over the distributions
NORMAL T CHISQUARE F EXPONENTIAL GAMMA BETA BINOMIAL POISSON UNIFORM LOGNORMAL NEGBINOMIAL GEOMETRIC
BERNOULLI (and CAUCHY LOGISTIC LAPLACE WEIBULL), with SAS's parameter order and defaults.

SAS's parameterisations (which differ from scipy's): EXPONENTIAL(x, lambda=1) and GAMMA(x, a, lambda=1)
take the SCALE lambda; LOGNORMAL(x, theta=0, lambda=1) the mean and standard deviation of log(x);
BETA(x, a, b, l=0, r=1) the interval; BINOMIAL(m, p, n) successes m of n trials; NEGBINOMIAL(m, p, n)
m failures before the n-th success; GEOMETRIC(m, p) m failures before the first success; POISSON(n, m)
mean m; UNIFORM(x, l=0, r=1). A distribution is named by its full name or its first four letters
('NORM', 'CHIS', 'EXPO', 'NEGB'; also GAUSS, CHISQ).

Missing values: any missing argument → a missing result (no NOTE). A parameter outside its domain
(a standard deviation <= 0, p outside [0, 1], a probability 0 or 1 to a quantile function) → SAS's
"Invalid argument" NOTE, missing. A discrete distribution's CDF at a non-integer m uses floor(m); its
PDF there is 0. LOGPDF/LOGCDF/LOGSDF of a zero probability are missing (the logarithm of 0).
Numerics: closed forms and scipy.special's scalar functions (scipy is already a statgrid dependency):
a few microseconds a call (CDF('NORMAL') 9 us, QUANTILE('T') 18 us), where scipy.stats' distribution
objects cost about 1 ms; those serve only the noncentral t, chi-square and F.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from statgrid.sas.functions.character import to_char
from statgrid.sas.functions.numeric import to_num
from statgrid.sas.functions.registry import function, invalid_argument
from statgrid.sas.values import MISSING


def _sp():
    import scipy.special as sp        # imported on first use: a step that uses none of these pays nothing
    return sp


def _st():
    import scipy.stats as st
    return st


class _Invalid(Exception):
    """A parameter outside its domain: the caller's invalid-argument NOTE."""


def _need(cond: bool) -> None:
    if not cond:
        raise _Invalid


# -- the distributions ------------------------------------------------------------------------------------
# Each is a Dist: cdf, sf, pdf (the probability of the value for a discrete one) and ppf of x given the
# parameters, in closed form or through scipy.special's scalar functions (a few microseconds a call;
# scipy.stats' distribution objects cost a millisecond each, too slow for a DATA step over many rows —
# they serve only the noncentral t, chi-square and F).
class Dist:
    def __init__(self, discrete: bool, cdf, sf, pdf, ppf, lo: float = -math.inf):
        self.discrete, self.cdf, self.sf, self.pdf, self.ppf, self.lo = discrete, cdf, sf, pdf, ppf, lo


class _Frozen(Dist):
    """A scipy.stats distribution (the noncentral ones)."""
    def __init__(self, d):
        super().__init__(False, d.cdf, d.sf, d.pdf, d.ppf)


_SQ2PI = math.sqrt(2 * math.pi)


def _d_normal(mu=0.0, sigma=1.0):
    _need(sigma > 0)
    sp = _sp()
    d = Dist(False, lambda x: sp.ndtr((x - mu) / sigma), lambda x: sp.ndtr((mu - x) / sigma),
             lambda x: math.exp(-0.5 * ((x - mu) / sigma) ** 2) / (sigma * _SQ2PI),
             lambda p: mu + sigma * sp.ndtri(p))
    # the logarithms in the tails, where the probabilities underflow (LOGCDF('NORMAL', -40) = -804.608…)
    d.logcdf = lambda x: float(sp.log_ndtr((x - mu) / sigma))
    d.logsf = lambda x: float(sp.log_ndtr((mu - x) / sigma))
    d.logpdf = lambda x: -0.5 * ((x - mu) / sigma) ** 2 - math.log(sigma * _SQ2PI)
    return d


def _d_t(df, nc=0.0):
    _need(df > 0)
    if nc != 0:
        return _Frozen(_st().nct(df, nc))
    sp = _sp()
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    return Dist(False, lambda x: sp.stdtr(df, x), lambda x: sp.stdtr(df, -x),
                lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2), lambda p: sp.stdtrit(df, p))


def _gamma_pdf(x, a, scale):
    if x < 0:
        return 0.0
    if x == 0:
        return (1 / scale if a == 1 else math.inf if a < 1 else 0.0)
    y = x / scale
    return math.exp((a - 1) * math.log(y) - y - math.lgamma(a)) / scale


def _d_gamma(a, scale=1.0):
    _need(a > 0 and scale > 0)
    sp = _sp()
    return Dist(False, lambda x: sp.gammainc(a, max(x, 0) / scale), lambda x: sp.gammaincc(a, max(x, 0) / scale),
                lambda x: _gamma_pdf(x, a, scale), lambda p: scale * sp.gammaincinv(a, p), 0.0)


def _d_chisq(df, nc=0.0):
    _need(df > 0 and nc >= 0)
    if nc != 0:
        return _Frozen(_st().ncx2(df, nc))
    return _d_gamma(df / 2, 2.0)


def _f_pdf(x, n, d, lbeta):
    if x <= 0:
        return 0.0 if x < 0 or n > 2 else (1.0 if n == 2 else math.inf)
    return math.exp(0.5 * n * math.log(n * x) + 0.5 * d * math.log(d) - 0.5 * (n + d) * math.log(n * x + d)
                    - math.log(x) - lbeta)


def _d_f(ndf, ddf, nc=0.0):
    _need(ndf > 0 and ddf > 0 and nc >= 0)
    if nc != 0:
        return _Frozen(_st().ncf(ndf, ddf, nc))
    sp = _sp()
    lb = math.lgamma(ndf / 2) + math.lgamma(ddf / 2) - math.lgamma((ndf + ddf) / 2)
    return Dist(False, lambda x: sp.fdtr(ndf, ddf, max(x, 0)), lambda x: sp.fdtrc(ndf, ddf, max(x, 0)),
                lambda x: _f_pdf(x, ndf, ddf, lb), lambda p: sp.fdtri(ndf, ddf, p), 0.0)


def _d_expo(scale=1.0):
    _need(scale > 0)
    return Dist(False, lambda x: -math.expm1(-x / scale) if x > 0 else 0.0,
                lambda x: math.exp(-x / scale) if x > 0 else 1.0,
                lambda x: math.exp(-x / scale) / scale if x >= 0 else 0.0, lambda p: -scale * math.log1p(-p), 0.0)


def _d_beta(a, b, lo=0.0, hi=1.0):
    _need(a > 0 and b > 0 and lo < hi)
    sp = _sp()
    w = hi - lo
    lb = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)

    def y(x):
        return min(max((x - lo) / w, 0.0), 1.0)

    def pdf(x):
        t = (x - lo) / w
        if t < 0 or t > 1:
            return 0.0
        if t in (0.0, 1.0):
            e = a if t == 0 else b
            return (math.inf if e < 1 else (1 / w) * math.exp(-lb) if e == 1 else 0.0)
        return math.exp((a - 1) * math.log(t) + (b - 1) * math.log1p(-t) - lb) / w
    return Dist(False, lambda x: sp.betainc(a, b, y(x)), lambda x: sp.betainc(b, a, 1 - y(x)), pdf,
                lambda p: lo + w * sp.betaincinv(a, b, p), lo)


def _d_uniform(lo=0.0, hi=1.0):
    _need(lo < hi)
    w = hi - lo
    return Dist(False, lambda x: min(max((x - lo) / w, 0.0), 1.0), lambda x: min(max((hi - x) / w, 0.0), 1.0),
                lambda x: 1 / w if lo <= x <= hi else 0.0, lambda p: lo + w * p, lo)


def _d_lognormal(theta=0.0, lam=1.0):
    _need(lam > 0)
    sp = _sp()

    def z(x):
        return (math.log(x) - theta) / lam
    return Dist(False, lambda x: sp.ndtr(z(x)) if x > 0 else 0.0, lambda x: sp.ndtr(-z(x)) if x > 0 else 1.0,
                lambda x: math.exp(-0.5 * z(x) ** 2) / (x * lam * _SQ2PI) if x > 0 else 0.0,
                lambda p: math.exp(theta + lam * sp.ndtri(p)), 0.0)


def _d_cauchy(theta=0.0, lam=1.0):
    _need(lam > 0)
    return Dist(False, lambda x: 0.5 + math.atan((x - theta) / lam) / math.pi,
                lambda x: 0.5 - math.atan((x - theta) / lam) / math.pi,
                lambda x: 1 / (math.pi * lam * (1 + ((x - theta) / lam) ** 2)),
                lambda p: theta + lam * math.tan(math.pi * (p - 0.5)))


def _logistic_cdf(z):
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def _d_logistic(theta=0.0, lam=1.0):
    _need(lam > 0)
    return Dist(False, lambda x: _logistic_cdf((x - theta) / lam), lambda x: _logistic_cdf((theta - x) / lam),
                lambda x: _logistic_cdf((x - theta) / lam) * _logistic_cdf((theta - x) / lam) / lam,
                lambda p: theta + lam * math.log(p / (1 - p)))


def _d_laplace(theta=0.0, lam=1.0):
    _need(lam > 0)

    def cdf(x):
        z = (x - theta) / lam
        return 0.5 * math.exp(z) if z < 0 else 1 - 0.5 * math.exp(-z)
    return Dist(False, cdf, lambda x: cdf(2 * theta - x), lambda x: math.exp(-abs(x - theta) / lam) / (2 * lam),
                lambda p: theta + lam * (math.log(2 * p) if p < 0.5 else -math.log(2 - 2 * p)))


def _d_weibull(a, lam=1.0):
    _need(a > 0 and lam > 0)
    return Dist(False, lambda x: -math.expm1(-(x / lam) ** a) if x > 0 else 0.0,
                lambda x: math.exp(-(x / lam) ** a) if x > 0 else 1.0,
                lambda x: a / lam * (x / lam) ** (a - 1) * math.exp(-(x / lam) ** a) if x > 0 else 0.0,
                lambda p: lam * (-math.log1p(-p)) ** (1 / a), 0.0)


# -- discrete: the value is floor(x) for the CDF, the probability is 0 off the integers -----------------------
def _discrete(cdf, sf, pmf, hi: float | None = None) -> Dist:
    def c(x):
        return 0.0 if x < 0 else 1.0 if hi is not None and x >= hi else float(cdf(math.floor(x)))

    def s(x):
        return 1.0 if x < 0 else 0.0 if hi is not None and x >= hi else float(sf(math.floor(x)))

    def p(x):
        return float(pmf(int(x))) if x == math.floor(x) and x >= 0 and (hi is None or x <= hi) else 0.0

    def ppf(q):
        if q <= c(0):
            return 0.0
        lo, up = 0, 1
        while c(up) < q:                        # the smallest k with CDF(k) >= q, by doubling then halving
            lo, up = up, up * 2
            _need(up < 2 ** 60)
        while up - lo > 1:
            mid = (lo + up) // 2
            if c(mid) >= q:
                up = mid
            else:
                lo = mid
        return float(up)
    return Dist(True, c, s, p, ppf, 0.0)


def _d_binom(p, n):
    _need(0 <= p <= 1 and n >= 0 and n == int(n))
    sp, n = _sp(), int(n)

    def pmf(k):
        if p in (0.0, 1.0):
            return 1.0 if k == (0 if p == 0 else n) else 0.0
        return math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                        + k * math.log(p) + (n - k) * math.log1p(-p))
    # through the regularized incomplete beta function (as scipy.stats does): scipy.special.bdtr loses its
    # accuracy for large n (CDF('BINOMIAL', 5e6, .5, 1e7) was 0.5015, not 0.50013)
    def cdf(k):
        return 1.0 if k >= n else float(sp.betainc(n - k, k + 1, 1 - p))

    def sf(k):
        return 0.0 if k >= n else float(sp.betainc(k + 1, n - k, p))
    return _discrete(cdf, sf, pmf, float(n))


def _d_poisson(m):
    _need(m >= 0)
    sp = _sp()

    def pmf(k):
        return (1.0 if k == 0 else 0.0) if m == 0 else math.exp(k * math.log(m) - m - math.lgamma(k + 1))
    return _discrete(lambda k: sp.pdtr(k, m), lambda k: sp.pdtrc(k, m), pmf, 0.0 if m == 0 else None)


def _d_negbin(p, n):
    _need(0 < p <= 1 and n > 0)
    sp = _sp()

    def pmf(k):
        if p == 1:
            return 1.0 if k == 0 else 0.0
        return math.exp(math.lgamma(k + n) - math.lgamma(n) - math.lgamma(k + 1) + n * math.log(p)
                        + k * math.log1p(-p))
    return _discrete(lambda k: sp.betainc(n, k + 1, p), lambda k: sp.betainc(k + 1, n, 1 - p), pmf,
                     0.0 if p == 1 else None)


def _d_geometric(p):
    _need(0 < p <= 1)
    return _discrete(lambda k: -math.expm1((k + 1) * math.log1p(-p)) if p < 1 else 1.0,
                     lambda k: (1 - p) ** (k + 1), lambda k: p * (1 - p) ** k, 0.0 if p == 1 else None)


def _d_bernoulli(p):
    _need(0 <= p <= 1)
    return _discrete(lambda k: 1 - p, lambda k: p, lambda k: 1 - p if k == 0 else p, 1.0)


# name → (least and most parameters, factory)
_DISTS: dict[str, tuple[int, int, Callable[..., Dist]]] = {
    "NORMAL": (0, 2, _d_normal), "T": (1, 2, _d_t), "CHISQUARE": (1, 2, _d_chisq), "F": (2, 3, _d_f),
    "EXPONENTIAL": (0, 1, _d_expo), "GAMMA": (1, 2, _d_gamma), "BETA": (2, 4, _d_beta),
    "BINOMIAL": (2, 2, _d_binom), "POISSON": (1, 1, _d_poisson), "UNIFORM": (0, 2, _d_uniform),
    "LOGNORMAL": (0, 2, _d_lognormal), "NEGBINOMIAL": (2, 2, _d_negbin), "GEOMETRIC": (1, 1, _d_geometric),
    "BERNOULLI": (1, 1, _d_bernoulli), "CAUCHY": (0, 2, _d_cauchy), "LOGISTIC": (0, 2, _d_logistic),
    "LAPLACE": (0, 2, _d_laplace), "WEIBULL": (1, 2, _d_weibull),
}
_ALIASES = {"GAUSS": "NORMAL", "GAUSSIAN": "NORMAL", "CHISQ": "CHISQUARE", "EXPO": "EXPONENTIAL"}


def _dist_name(text: Any) -> str | None:
    n = to_char(text).strip().upper()
    if n in _DISTS:
        return n
    if n in _ALIASES:
        return _ALIASES[n]
    if len(n) >= 4:
        for full in _DISTS:
            if full.startswith(n):
                return full
        for alias, full in _ALIASES.items():
            if alias.startswith(n):
                return full
    return None


def _distribution(rt, fname: str, args: tuple):
    """(Dist, x) for CDF('dist', x, params…), or raise _Invalid; None when an argument is missing."""
    name = _dist_name(args[0])
    if name is None:
        raise _Invalid
    least, most, make = _DISTS[name]
    vals = [to_num(a) for a in args[1:]]
    if not vals or len(vals) - 1 < least or len(vals) - 1 > most:
        raise _Invalid
    if any(v != v for v in vals):
        return None
    return make(*vals[1:]), vals[0]


def _log(v: float) -> float:
    return math.log(v) if v > 0 else MISSING


def _dist_function(fname: str, of: Callable[[Dist, float], float]) -> None:
    def fn(rt, *args):
        try:
            d = _distribution(rt, fname, args)
            if d is None:
                return MISSING
            r = of(*d)
        except _Invalid:
            return invalid_argument(rt, fname)
        r = float(r)
        return MISSING if r != r else r
    fn.__name__ = f"f_{fname.lower()}"
    function(fname, 2, None, args="can")(fn)


def _quantile(d: Dist, p: float) -> float:
    _need(0 <= p <= 1 if d.discrete else 0 < p < 1)
    q = float(d.ppf(p))
    _need(not math.isinf(q) and q == q)
    return q


_dist_function("CDF", lambda d, x: d.cdf(x))
_dist_function("SDF", lambda d, x: d.sf(x))
_dist_function("PDF", lambda d, x: d.pdf(x))
_dist_function("LOGCDF", lambda d, x: d.logcdf(x) if hasattr(d, "logcdf") else _log(float(d.cdf(x))))
_dist_function("LOGSDF", lambda d, x: d.logsf(x) if hasattr(d, "logsf") else _log(float(d.sf(x))))
_dist_function("LOGPDF", lambda d, x: d.logpdf(x) if hasattr(d, "logpdf") else _log(float(d.pdf(x))))
_dist_function("QUANTILE", _quantile)


# -- the PROB* and *INV functions ----------------------------------------------------------------------
def _numeric(fname: str, least: int, most: int, of: Callable[..., float]) -> None:
    """A function of numbers: missing if any argument is missing, the NOTE when `of` raises _Invalid."""
    def fn(rt, *args):
        vals = [to_num(a) for a in args]
        if any(v != v for v in vals):
            return MISSING
        try:
            r = of(*vals)
        except _Invalid:
            return invalid_argument(rt, fname)
        return MISSING if r != r else float(r)
    fn.__name__ = f"f_{fname.lower()}"
    function(fname, least, most)(fn)


def _probit(p):
    _need(0 < p < 1)
    # SAS: "The result could be truncated to lie between -8.222 and 7.941."
    return min(max(float(_sp().ndtri(p)), -8.222), 7.941)


def _inv(make):
    def inv(p, *params):
        _need(0 < p < 1)
        return float(make(*params).ppf(p))
    return inv


_numeric("PROBNORM", 1, 1, lambda x: float(_sp().ndtr(x)))
_numeric("PROBIT", 1, 1, _probit)
_numeric("PROBT", 2, 3, lambda x, df, nc=0.0: float(_d_t(df, nc).cdf(x)))
_numeric("PROBCHI", 2, 3, lambda x, df, nc=0.0: float(_d_chisq(df, nc).cdf(x)))
_numeric("PROBF", 3, 4, lambda x, n, d, nc=0.0: float(_d_f(n, d, nc).cdf(x)))
_numeric("TINV", 2, 3, _inv(_d_t))
_numeric("CINV", 2, 3, _inv(_d_chisq))
_numeric("FINV", 3, 4, _inv(_d_f))


# -- special functions -----------------------------------------------------------------------------------
def _gamma(x):
    _need(not (x <= 0 and x == math.floor(x)))
    return math.gamma(x)


def _lgamma(x):
    _need(x > 0)
    return math.lgamma(x)


def _beta(a, b):
    _need(a > 0 and b > 0)
    return math.exp(math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))


def _nonneg_int(*vals):
    for v in vals:
        _need(v >= 0 and v == math.floor(v))


def _fact(n):
    _nonneg_int(n)
    _need(n <= 170)
    return float(math.factorial(int(n)))


def _comb(n, r):
    _nonneg_int(n, r)
    _need(r <= n)
    return float(math.comb(int(n), int(r)))


def _perm(n, r=None):
    if r is None:
        return _fact(n)
    _nonneg_int(n, r)
    _need(r <= n)
    return float(math.perm(int(n), int(r)))


def _log1px(x):
    _need(x > -1)
    return math.log1p(x)


def _domain(f, lo, hi):
    def g(x):
        _need(lo <= x <= hi)
        return f(x)
    return g


_numeric("GAMMA", 1, 1, _gamma)
_numeric("LGAMMA", 1, 1, _lgamma)
_numeric("BETA", 2, 2, _beta)
_numeric("ERF", 1, 1, math.erf)
_numeric("ERFC", 1, 1, math.erfc)
_numeric("FACT", 1, 1, _fact)
_numeric("COMB", 2, 2, _comb)
_numeric("PERM", 1, 2, _perm)
_numeric("LOG1PX", 1, 1, _log1px)
_numeric("ATAN", 1, 1, math.atan)
_numeric("ATAN2", 2, 2, lambda y, x: math.atan2(y, x))
_numeric("COS", 1, 1, math.cos)
_numeric("SIN", 1, 1, math.sin)
_numeric("TAN", 1, 1, math.tan)
_numeric("ARCOS", 1, 1, _domain(math.acos, -1.0, 1.0))
_numeric("ARSIN", 1, 1, _domain(math.asin, -1.0, 1.0))
_numeric("COSH", 1, 1, math.cosh)
_numeric("SINH", 1, 1, math.sinh)
_numeric("TANH", 1, 1, math.tanh)
