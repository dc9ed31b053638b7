"""Probability, special and descriptive functions against SAS 9.4 Functions and CALL Routines: the manual's
example values (PROBT(.9,5), PROBF(3.32,2,3), TINV(.95,2), CDF('BETA',.2,3,4) …) and values computed by
hand from the distributions' formulas; SAS's parameter order (EXPONENTIAL and GAMMA take the scale);
missing and invalid arguments; a DATA step using them runs on the Python engine."""
from __future__ import annotations

import math

import pytest

from statgrid.sas.functions import FUNCTIONS, call_function
from statgrid.sas.values import MISSING
from tests.unit.sas.standins import rows, run_under_engine
from tests.unit.sas.test_sas_functions_numeric import rt

M = MISSING


def f(name, *args):
    return call_function(rt(), name, *args)


def miss(v):
    return isinstance(v, float) and v != v


def phi(x):                      # the normal CDF from the standard library's erfc
    return 0.5 * math.erfc(-x / math.sqrt(2))


@pytest.mark.parametrize("call,expected", [
    (("PROBNORM", 1.96), phi(1.96)), (("PROBNORM", -1), phi(-1)),
    (("PROBT", .9, 5), 0.7953143998), (("PROBCHI", 11.264, 11), 0.5785813293),
    (("PROBF", 3.32, 2, 3), 0.8263933602), (("TINV", .95, 2), 2.9199855804),
    (("CINV", .95, 3), 7.8147279033), (("FINV", .95, 2, 10), 4.1028210151),
    (("PROBIT", .025), -1.959963985), (("PROBT", 0, 7), 0.5),
    (("PROBCHI", 2, 2), 1 - math.exp(-1)),           # chi-square(2) is exponential with mean 2
])
def test_prob_and_inverse_functions_manual_values(call, expected):
    assert f(*call) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("call,expected", [
    (("CDF", "BINOM", 4, .5, 10), (1 + 10 + 45 + 120 + 210) / 1024),
    (("CDF", "BINOMIAL", 4.7, .5, 10), 386 / 1024),                    # floor(m) for a discrete one
    (("PDF", "BINOMIAL", 4.5, .5, 10), 0.0),
    (("CDF", "POISSON", 2, 1), 2.5 / math.e), (("PDF", "POIS", 0, 3), math.exp(-3)),
    (("PDF", "GEOMETRIC", 2, .3), .3 * .7 ** 2), (("CDF", "GEOM", 1, .3), .3 + .3 * .7),
    (("PDF", "NEGB", 1, .5, 2), 0.25), (("PDF", "NEGBINOMIAL", 0, .5, 2), 0.25),
    (("PDF", "BERN", 0, .25), .75), (("CDF", "BERNOULLI", 0, .25), .75),
    (("CDF", "EXPO", 1, 2), 1 - math.exp(-.5)),                          # lambda is the scale
    (("PDF", "EXPONENTIAL", 1), math.exp(-1)),
    (("CDF", "GAMMA", 1, 3), 1 - 2.5 / math.e),                          # manual: 0.0803
    (("CDF", "GAMMA", 2, 1, 2), 1 - math.exp(-1)),                       # gamma(1, scale 2) = expo(2)
    (("CDF", "BETA", .2, 3, 4), 0.09888), (("CDF", "BETA", 1.5, 1, 1, 1, 2), .5),
    (("CDF", "NORMAL", 1.96), phi(1.96)), (("CDF", "NORMAL", 110, 100, 10), phi(1)),
    (("SDF", "NORMAL", 1.96), 1 - phi(1.96)), (("SDF", "POISSON", 2, 1), 1 - 2.5 / math.e),
    (("PDF", "NORMAL", 0), 1 / math.sqrt(2 * math.pi)), (("PDF", "GAUSS", 1, 1, 2), 1 / (2 * math.sqrt(2 * math.pi))),
    (("CDF", "LOGNORMAL", 1), .5), (("CDF", "LOGN", math.e, 1, 3), .5),
    (("CDF", "UNIFORM", .25), .25), (("PDF", "UNIF", 3, 2, 6), .25), (("CDF", "UNIFORM", 9, 2, 6), 1.0),
    (("CDF", "T", 0, 4), .5), (("CDF", "CHISQ", 2, 2), 1 - math.exp(-1)), (("CDF", "CHISQUARE", 2, 2), 1 - math.exp(-1)),
    (("CDF", "F", 1, 4, 4), .5),                                         # F(n, n) has median 1
    (("CDF", "WEIBULL", 2, 1, 2), 1 - math.exp(-1)), (("CDF", "LOGISTIC", 0), .5),
    (("QUANTILE", "NORMAL", .975), 1.959963985), (("QUANTILE", "CHISQ", .95, 3), 7.8147279033),
    (("QUANTILE", "EXPO", 1 - math.exp(-1), 2), 2.0), (("QUANTILE", "UNIFORM", .3, 10, 20), 13.0),
    (("QUANTILE", "BINOM", .376953125, .5, 10), 4.0), (("QUANTILE", "BINOM", .38, .5, 10), 5.0),
    (("QUANTILE", "POISSON", .5, 1), 1.0), (("QUANTILE", "BINOM", 0, .5, 10), 0.0),
    (("QUANTILE", "BINOM", 1, .5, 10), 10.0),
    (("LOGPDF", "NORMAL", 0), -0.5 * math.log(2 * math.pi)), (("LOGCDF", "EXPO", 1), math.log(1 - math.exp(-1))),
    (("LOGSDF", "EXPO", 3), -3.0),
])
def test_distribution_functions(call, expected):
    assert f(*call) == pytest.approx(expected, abs=1e-9, rel=1e-7)


def test_missing_and_invalid_distribution_arguments():
    assert miss(f("CDF", "NORMAL", M)) and miss(f("PDF", "POISSON", 2, M)) and miss(f("PROBNORM", M))
    r = rt(4, 9)
    for args in (("NORMAL", 0, 0, -1), ("NOPE", 1), ("BINOMIAL", 1, 1.5, 10), ("POISSON", 1, 2, 3)):
        assert miss(FUNCTIONS["CDF"].fn(r, *args))
    assert miss(FUNCTIONS["QUANTILE"].fn(r, "NORMAL", 1.0)) and miss(FUNCTIONS["PROBIT"].fn(r, 0.0))
    assert miss(FUNCTIONS["TINV"].fn(r, .5, -1.0))
    assert len(r.program.log.notes) == 7 and r.state["_ERROR_"] == 1
    assert r.program.log.notes[0] == "Invalid argument to function CDF('NORMAL',0,0,-1) at line 4 column 9."
    assert f("PDF", "EXPO", -1) == 0.0 and miss(f("LOGPDF", "EXPO", -1))     # log(0): missing
    assert f("PROBIT", 1e-300) == -8.222                                     # SAS's truncation


def test_special_and_trigonometric_functions():
    assert f("GAMMA", 5) == pytest.approx(24) and f("GAMMA", .5) == pytest.approx(math.sqrt(math.pi))
    assert f("LGAMMA", 6) == pytest.approx(math.log(120)) and f("BETA", 5, 3) == pytest.approx(24 * 2 / 5040)
    assert f("ERF", .5) == pytest.approx(0.5204998778) and f("ERFC", .5) == pytest.approx(1 - 0.5204998778)
    assert f("FACT", 5) == 120 and f("COMB", 4, 2) == 6 and f("PERM", 5, 2) == 20 and f("PERM", 5) == 120
    assert f("LOG1PX", 1e-10) == pytest.approx(1e-10, rel=1e-9)
    assert f("ATAN2", 1, 1) == pytest.approx(math.pi / 4) and f("ATAN2", 1, -1) == pytest.approx(3 * math.pi / 4)
    assert f("ARCOS", 0) == pytest.approx(math.pi / 2) and f("ARSIN", 1) == pytest.approx(math.pi / 2)
    assert f("SIN", math.pi / 6) == pytest.approx(.5) and f("COS", 0) == 1 and f("TAN", math.pi / 4) == pytest.approx(1)
    assert f("TANH", 0) == 0 and f("COSH", 0) == 1 and f("SINH", 0) == 0 and f("ATAN", 1) == pytest.approx(math.pi / 4)
    r = rt()
    for name, args in (("ARCOS", (2.0,)), ("GAMMA", (0.0,)), ("GAMMA", (-2.0,)), ("LGAMMA", (-1.0,)), ("FACT", (-1.0,)),
                       ("FACT", (2.5,)), ("COMB", (2.0, 3.0)), ("LOG1PX", (-1.0,)), ("FACT", (171.0,))):
        assert miss(FUNCTIONS[name].fn(r, *args)), name
    assert len(r.program.log.notes) == 9
    assert miss(f("SIN", M)) and miss(f("COMB", M, 2))


def test_descriptive_functions():
    assert f("KURTOSIS", 5, 9, 3, 6) == pytest.approx(0.928)                 # the manual's examples
    assert f("SKEWNESS", 0, 1, 1) == pytest.approx(-1.732050808)
    assert f("PCTL", 25, 2, 4, 1, 3) == 1.5 and f("PCTL", 50, 2, M, 4, 1, 3) == 2.5
    v = (4, 2, 3, 1)                       # n=4: 25% → np = 1 (g = 0); 37.5% → np = 1.5 (g = .5, j odd)
    assert [f(f"PCTL{d}", 25, *v) for d in range(1, 6)] == [1, 1, 1, 1.25, 1.5]
    assert [f(f"PCTL{d}", 37.5, *v) for d in range(1, 6)] == [1.5, 2, 2, 1.875, 2]
    assert f("PCTL", 0, *v) == 1 and f("PCTL", 100, *v) == 4 and miss(f("PCTL", 50, M, M))
    assert f("LARGEST", 2, 4, M, 9, 7) == 7 and f("SMALLEST", 1, M, 4, 2) == 2 and miss(f("LARGEST", 5, 1, 2))
    assert miss(f("ORDINAL", 1, 4, M, 2)) and f("ORDINAL", 3, 4, M, 2) == 4
    assert f("CV", 1, 2, 3) == pytest.approx(50) and miss(f("CV", 3, M))
    assert f("STDERR", 2, 4, 4, 4, 5, 5, 7, 9) == pytest.approx(math.sqrt(32 / 7) / math.sqrt(8))
    assert miss(f("SKEWNESS", 1, 2)) and miss(f("KURTOSIS", 1, 2, 3)) and miss(f("SKEWNESS", 2, 2, 2))
    r = rt()
    assert miss(FUNCTIONS["PCTL"].fn(r, 101.0, 1.0)) and miss(FUNCTIONS["LARGEST"].fn(r, 0.0, 1.0))
    assert miss(FUNCTIONS["ORDINAL"].fn(r, 3.0, 1.0, 2.0)) and len(r.program.log.notes) == 3


def test_trunc_and_rounde():
    # 1/3 kept in 3 bytes: sign, 11 exponent bits and 12 mantissa bits 0101 0101 0101: 2**-2 * (1 + 0x555/4096)
    assert f("TRUNC", 1 / 3, 3) == 5461 / 16384 and f("TRUNC", 1 / 3, 8) == 1 / 3 and f("TRUNC", 0.5, 3) == 0.5
    assert f("ROUNDE", 2.5) == 2 and f("ROUNDE", 3.5) == 4 and f("ROUNDE", -2.5) == -2 and f("ROUNDE", 2.6) == 3
    assert f("ROUNDE", 2.45, .1) == 2.4 and f("ROUNDE", 2.55, .1) == 2.6 and f("ROUNDE", 2.46, .1) == 2.5
    r = rt()
    assert miss(FUNCTIONS["TRUNC"].fn(r, 1.0, 2.0)) and len(r.program.log.notes) == 1


def test_a_data_step_with_them_falls_back_to_the_python_engine(session):
    code, log, engines = run_under_engine(session, """
data work.p;
  do x = -1 to 1;
    p = probnorm(x); q = quantile('NORMAL', cdf('NORMAL', x)); d = pdf('BINOMIAL', x + 1, .5, 2);
    big = largest(1, x, 0.5, .); s = skewness(x, 1, 3);
    output;
  end;
run;
""", "NUMBA")
    assert code == 0, log
    assert engines == ["PYTHON"]
    got = rows(session, "work.p")
    assert [r["x"] for r in got] == [-1, 0, 1]
    assert [r["p"] for r in got] == pytest.approx([phi(-1), .5, phi(1)])
    assert [r["q"] for r in got] == pytest.approx([-1, 0, 1], abs=1e-9)
    assert [r["d"] for r in got] == pytest.approx([.25, .5, .25])
    assert [r["big"] for r in got] == [.5, .5, 1]
    # skewness of (x, 1, 3): mean m, sd s, n/((n-1)(n-2)) * sum(((v-m)/s)^3)
    def skew(v):
        m = sum(v) / 3
        s = math.sqrt(sum((a - m) ** 2 for a in v) / 2)
        return 3 / 2 * sum(((a - m) / s) ** 3 for a in v)
    assert [r["s"] for r in got] == pytest.approx([skew([-1, 1, 3]), skew([0, 1, 3]), skew([1, 1, 3])])


def _scipy_cases():
    """(SAS distribution and parameters, the same distribution in scipy.stats, points) — scipy.stats is an
    independent reference here: the functions use closed forms and scipy.special's scalar functions."""
    import scipy.stats as st
    return [
        (("NORMAL", 2, 3), st.norm(2, 3), (-4, 0.5, 2, 7)), (("T", 3.5), st.t(3.5), (-2, 0, 0.7, 5)),
        (("T", 4, 1.5), st.nct(4, 1.5), (0, 2)), (("CHISQ", 4), st.chi2(4), (0.5, 3, 12)),
        (("F", 3, 7), st.f(3, 7), (0.2, 1, 4.5)), (("EXPO", 2.5), st.expon(scale=2.5), (0.1, 2, 9)),
        (("GAMMA", 2.2, 1.7), st.gamma(2.2, scale=1.7), (0.3, 3, 10)),
        (("BETA", 2, 5, 1, 3), st.beta(2, 5, loc=1, scale=2), (1.1, 1.5, 2.8)),
        (("LOGNORMAL", .5, .8), st.lognorm(.8, scale=math.exp(.5)), (0.4, 1.6, 6)),
        (("UNIFORM", -1, 3), st.uniform(-1, 4), (-0.5, 1, 2.9)), (("CAUCHY", 1, 2), st.cauchy(1, 2), (-3, 1, 4)),
        (("LOGISTIC", 1, 2), st.logistic(1, 2), (-3, 1, 4)), (("LAPLACE", 1, 2), st.laplace(1, 2), (-3, 1, 4)),
        (("WEIBULL", 1.5, 2), st.weibull_min(1.5, scale=2), (0.5, 2, 5)),
        (("BINOMIAL", .3, 12), st.binom(12, .3), (0, 3, 7, 12)), (("POISSON", 4.2), st.poisson(4.2), (0, 3, 9)),
        (("NEGBINOMIAL", .4, 3), st.nbinom(3, .4), (0, 2, 8)), (("GEOMETRIC", .25), st.geom(.25, loc=-1), (0, 1, 6)),
        (("BERNOULLI", .3), st.bernoulli(.3), (0, 1)),
    ]


def test_distributions_agree_with_scipy_stats():
    for (name, *params), ref, points in _scipy_cases():
        discrete = name in ("BINOMIAL", "POISSON", "NEGBINOMIAL", "GEOMETRIC", "BERNOULLI")
        for x in points:
            assert f("CDF", name, x, *params) == pytest.approx(ref.cdf(x), rel=1e-9, abs=1e-12), (name, x)
            assert f("SDF", name, x, *params) == pytest.approx(ref.sf(x), rel=1e-9, abs=1e-12), (name, x)
            want = ref.pmf(x) if discrete else ref.pdf(x)
            assert f("PDF", name, x, *params) == pytest.approx(want, rel=1e-9, abs=1e-12), (name, x)
        for p in (0.05, 0.5, 0.93):
            assert f("QUANTILE", name, p, *params) == pytest.approx(ref.ppf(p), rel=1e-8, abs=1e-10), (name, p)


def test_call_allperm_minimal_change_order():
    from statgrid.sas.functions import CALL_ROUTINES
    r, x, seen = rt(), ["ant", "bee", "cat", "dog"], []
    for i in range(1, 26):
        out = CALL_ROUTINES["ALLPERM"].fn(r, [float(i)] + x)
        if out is not None:
            new = out[1:]
            diff = [k for k in range(4) if new[k] != x[k]]
            assert len(diff) == 2 and diff[1] == diff[0] + 1          # two adjacent values interchanged
            x = new
        seen.append(tuple(x))
    # the manual's log: 1 ant bee cat dog, 2 ant bee dog cat, 3 ant dog bee cat
    assert seen[:3] == [("ant", "bee", "cat", "dog"), ("ant", "bee", "dog", "cat"), ("ant", "dog", "bee", "cat")]
    assert len(set(seen[:24])) == 24 and seen[24] == seen[23]                  # count > 4!: unchanged
