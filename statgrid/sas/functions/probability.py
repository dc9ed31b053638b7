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
Numerics: scipy.special (already a statgrid dependency) — the same incomplete gamma/beta functions
SAS's own are checked against.
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


# -- the distributions: name → (discrete?, defaults of the parameters, frozen scipy distribution) -----------
def _d_normal(mu=0.0, sigma=1.0):
    _need(sigma > 0)
    return _st().norm(mu, sigma)


def _d_t(df, nc=0.0):
    _need(df > 0)
    return _st().t(df) if nc == 0 else _st().nct(df, nc)


def _d_chisq(df, nc=0.0):
    _need(df > 0 and nc >= 0)
    return _st().chi2(df) if nc == 0 else _st().ncx2(df, nc)


def _d_f(ndf, ddf, nc=0.0):
    _need(ndf > 0 and ddf > 0 and nc >= 0)
    return _st().f(ndf, ddf) if nc == 0 else _st().ncf(ndf, ddf, nc)


def _d_expo(scale=1.0):
    _need(scale > 0)
    return _st().expon(scale=scale)


def _d_gamma(a, scale=1.0):
    _need(a > 0 and scale > 0)
    return _st().gamma(a, scale=scale)


def _d_beta(a, b, lo=0.0, hi=1.0):
    _need(a > 0 and b > 0 and lo < hi)
    return _st().beta(a, b, loc=lo, scale=hi - lo)


def _d_binom(p, n):
    _need(0 <= p <= 1 and n >= 0 and n == int(n))
    return _st().binom(int(n), p)


def _d_poisson(m):
    _need(m >= 0)
    return _st().poisson(m)


def _d_uniform(lo=0.0, hi=1.0):
    _need(lo < hi)
    return _st().uniform(lo, hi - lo)


def _d_lognormal(theta=0.0, lam=1.0):
    _need(lam > 0)
    return _st().lognorm(lam, scale=math.exp(theta))


def _d_negbin(p, n):
    _need(0 < p <= 1 and n > 0)
    return _st().nbinom(n, p)


def _d_geometric(p):
    _need(0 < p <= 1)
    return _st().geom(p, loc=-1)          # failures before the first success: 0, 1, 2 …


def _d_bernoulli(p):
    _need(0 <= p <= 1)
    return _st().bernoulli(p)


def _d_cauchy(theta=0.0, lam=1.0):
    _need(lam > 0)
    return _st().cauchy(theta, lam)


def _d_logistic(theta=0.0, lam=1.0):
    _need(lam > 0)
    return _st().logistic(theta, lam)


def _d_laplace(theta=0.0, lam=1.0):
    _need(lam > 0)
    return _st().laplace(theta, lam)


def _d_weibull(a, lam=1.0):
    _need(a > 0 and lam > 0)
    return _st().weibull_min(a, scale=lam)


# name → (discrete, least and most parameters, factory)
_DISTS: dict[str, tuple[bool, int, int, Callable[..., Any]]] = {
    "NORMAL": (False, 0, 2, _d_normal), "T": (False, 1, 2, _d_t), "CHISQUARE": (False, 1, 2, _d_chisq),
    "F": (False, 2, 3, _d_f), "EXPONENTIAL": (False, 0, 1, _d_expo), "GAMMA": (False, 1, 2, _d_gamma),
    "BETA": (False, 2, 4, _d_beta), "BINOMIAL": (True, 2, 2, _d_binom), "POISSON": (True, 1, 1, _d_poisson),
    "UNIFORM": (False, 0, 2, _d_uniform), "LOGNORMAL": (False, 0, 2, _d_lognormal),
    "NEGBINOMIAL": (True, 2, 2, _d_negbin), "GEOMETRIC": (True, 1, 1, _d_geometric),
    "BERNOULLI": (True, 1, 1, _d_bernoulli), "CAUCHY": (False, 0, 2, _d_cauchy),
    "LOGISTIC": (False, 0, 2, _d_logistic), "LAPLACE": (False, 0, 2, _d_laplace),
    "WEIBULL": (False, 1, 2, _d_weibull),
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
    """(discrete, frozen distribution, x) for CDF('dist', x, params…), or raise _Invalid. Missing
    arguments give None."""
    name = _dist_name(args[0])
    if name is None:
        raise _Invalid
    discrete, least, most, make = _DISTS[name]
    vals = [to_num(a) for a in args[1:]]
    if not vals or len(vals) - 1 < least or len(vals) - 1 > most:
        raise _Invalid
    if any(v != v for v in vals):
        return None
    return discrete, make(*vals[1:]), vals[0]


def _log(v: float) -> float:
    return math.log(v) if v > 0 else MISSING


def _dist_function(fname: str, of: Callable[[bool, Any, float], float]) -> None:
    def fn(rt, *args):
        try:
            d = _distribution(rt, fname, args)
        except _Invalid:
            return invalid_argument(rt, fname)
        if d is None:
            return MISSING
        try:
            r = of(*d)
        except _Invalid:
            return invalid_argument(rt, fname)
        return MISSING if r is None or r != r else float(r)
    fn.__name__ = f"f_{fname.lower()}"
    function(fname, 2, None, args="can")(fn)


def _pdf(discrete, d, x):
    if discrete:
        return d.pmf(x) if x == math.floor(x) else 0.0
    return d.pdf(x)


def _quantile(discrete, d, p):
    _need(0 <= p <= 1)
    if not discrete:
        _need(0 < p < 1)
    q = d.ppf(p)
    _need(not math.isinf(q) and q == q)
    if discrete:
        q = max(q, d.support()[0])          # scipy's ppf(0) is one below the support
    return q


_dist_function("CDF", lambda disc, d, x: d.cdf(math.floor(x) if disc else x))
_dist_function("SDF", lambda disc, d, x: d.sf(math.floor(x) if disc else x))
_dist_function("PDF", _pdf)
_dist_function("LOGCDF", lambda disc, d, x: _log(d.cdf(math.floor(x) if disc else x)))
_dist_function("LOGSDF", lambda disc, d, x: _log(d.sf(math.floor(x) if disc else x)))
_dist_function("LOGPDF", lambda disc, d, x: _log(_pdf(disc, d, x)))
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
    return min(max(_sp().ndtri(p), -8.222), 7.941)


def _inv(make):
    def inv(p, *params):
        _need(0 < p < 1)
        return make(*params).ppf(p)
    return inv


_numeric("PROBNORM", 1, 1, lambda x: _sp().ndtr(x))
_numeric("PROBIT", 1, 1, _probit)
_numeric("PROBT", 2, 3, lambda x, df, nc=0.0: _d_t(df, nc).cdf(x))
_numeric("PROBCHI", 2, 3, lambda x, df, nc=0.0: _d_chisq(df, nc).cdf(x))
_numeric("PROBF", 3, 4, lambda x, n, d, nc=0.0: _d_f(n, d, nc).cdf(x))
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
