"""PROC CORR (Base SAS Procedures: CORR): Pearson, Spearman and Kendall tau-b with their p-values, pairwise and
listwise (NOMISS) deletion, COV, FREQ, WITH, BY, OUTP=/OUTS=/OUTK= and the listing. Expected figures come from
scipy.stats (pearsonr, spearmanr, kendalltau variant='b') on the same numbers, from R where said (the R command
beside the figure), or by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tests.unit.sas.standins import rows, run_sas

X = [1, 2, 2, 3, 4, 5, 5, 6, 7, 8]
Y = [2, 1, 3, 3, 5, 4, 6, 6, 8, 7]
Z = [5, None, 4, 9, 1, 3, None, 2, 8, 6]


def _data() -> str:
    lines = [f"{x} {y} {'.' if z is None else z}" for x, y, z in zip(X, Y, Z)]
    return "data a; input x y z; datalines;\n" + "\n".join(lines) + "\n;\nrun;\n"


def _by_name(session, member):
    return {(r["_TYPE_"], r["_NAME_"]): r for r in rows(session, member)}


def test_pearson_spearman_kendall_agree_with_scipy_and_r(session):
    code, log, _ = run_sas(session, _data() + """ods output PearsonCorr=work.pc KendallCorr=work.kc SpearmanCorr=work.sc;
proc corr data=a pearson spearman kendall outp=op outs=os outk=ok; var x y; run;""")
    assert code == 0, log
    pr, pp = stats.pearsonr(X, Y)
    sr, sp = stats.spearmanr(X, Y)
    kr, kp = stats.kendalltau(X, Y, variant="b")
    # R 4: cor.test(x, y, method="kendall", exact=FALSE, continuity=FALSE) → tau 0.813953488372, p 0.00146944986482
    #      cor.test(x, y) → r 0.91979330123, p 0.000164208331396
    assert kr == pytest.approx(0.813953488372, abs=1e-10) and kp == pytest.approx(0.00146944986482, rel=1e-8)
    assert pr == pytest.approx(0.91979330123, abs=1e-10)
    for member, r in (("work.op", pr), ("work.os", sr), ("work.ok", kr)):
        got = _by_name(session, member)
        assert got[("CORR", "x")]["y"] == pytest.approx(r, abs=1e-12), member
        assert got[("CORR", "y")]["y"] == 1.0
    p = {m: {r["Variable"]: r for r in rows(session, f"work.{m}")} for m in ("pc", "sc", "kc")}
    assert p["pc"]["x"]["Py"] == pytest.approx(pp, rel=1e-9) and p["pc"]["x"]["Py"] == pytest.approx(
        0.000164208331396, rel=1e-8)
    assert p["sc"]["x"]["Py"] == pytest.approx(sp, rel=1e-9)
    assert p["kc"]["y"]["Px"] == pytest.approx(kp, rel=1e-9)
    assert p["pc"]["x"]["Px"] is None                # no p-value on the diagonal, as SAS


def test_outp_layout_means_std_n_and_cov_rows(session):
    code, log, _ = run_sas(session, _data() + "proc corr data=a cov outp=op noprint; var x y; run;")
    assert code == 0, log
    got = rows(session, "work.op")
    assert [(r["_TYPE_"], r["_NAME_"]) for r in got] == [("COV", "x"), ("COV", "y"), ("MEAN", ""), ("STD", ""),
                                                          ("N", ""), ("CORR", "x"), ("CORR", "y")]
    # by hand: Σx = 43, x̄ 4.3; Σy = 45, ȳ 4.5
    assert got[2]["x"] == pytest.approx(4.3) and got[2]["y"] == pytest.approx(4.5)
    assert got[3]["x"] == pytest.approx(np.std(X, ddof=1)) and got[4]["y"] == 10
    assert got[0]["y"] == pytest.approx(np.cov(X, Y)[0, 1]) and got[1]["y"] == pytest.approx(np.var(Y, ddof=1))


def test_pairwise_deletion_by_default_and_nomiss_listwise(session):
    code, log, _ = run_sas(session, _data() + """ods output PearsonCorr=work.pw;
proc corr data=a; var x y z; run;
ods output PearsonCorr=work.lw;
proc corr data=a nomiss; var x y z; run;""")
    assert code == 0, log
    keep = [i for i, z in enumerate(Z) if z is not None]
    xs, ys, zs = (np.array([v[i] for i in keep], float) for v in (X, Y, Z))
    pw = {r["Variable"]: r for r in rows(session, "work.pw")}
    # x with y over all 10 rows, x with z over the 8 with z
    assert pw["x"]["y"] == pytest.approx(stats.pearsonr(X, Y)[0]) and pw["x"]["Ny"] == 10
    assert pw["x"]["z"] == pytest.approx(stats.pearsonr(xs, zs)[0]) and pw["x"]["Nz"] == 8
    assert pw["y"]["Pz"] == pytest.approx(stats.pearsonr(ys, zs)[1])
    lw = {r["Variable"]: r for r in rows(session, "work.lw")}
    assert lw["x"]["y"] == pytest.approx(stats.pearsonr(xs, ys)[0])       # x, y only where z is present too
    assert "Nx" not in lw["x"]                                            # one N for all pairs: no N columns


def test_freq_repeats_rows_and_with_by(session):
    code, log, _ = run_sas(session, """data f; input g x y n; datalines;
1 1 2 1
1 2 1 3
1 3 5 2
1 4 3 1
2 1 1 1
2 2 4 2
2 3 2 1
2 5 6 2
;
ods output PearsonCorr=work.pc SpearmanCorr=work.sc;
proc corr data=f pearson spearman; by g; var x; with y; freq n; run;""")
    assert code == 0, log
    pc, sc = rows(session, "work.pc"), rows(session, "work.sc")
    data = {1: ([1, 2, 3, 4], [2, 1, 5, 3], [1, 3, 2, 1]), 2: ([1, 2, 3, 5], [1, 4, 2, 6], [1, 2, 1, 2])}
    for g, (x, y, n) in data.items():
        xr, yr = np.repeat(x, n), np.repeat(y, n)
        p = next(r for r in pc if r["g"] == g)
        s = next(r for r in sc if r["g"] == g)
        assert p["Variable"] == "y"
        assert p["x"] == pytest.approx(stats.pearsonr(xr, yr)[0]) and p["Px"] == pytest.approx(stats.pearsonr(xr, yr)[1])
        assert s["x"] == pytest.approx(stats.spearmanr(xr, yr)[0]) and s["Px"] == pytest.approx(stats.spearmanr(xr, yr)[1])


def test_listing_layout(session):
    code, log, lst = run_sas(session, """data s; input x y; datalines;
1 2
2 1
3 4
4 3
5 5
;
proc corr data=s; run;""")
    assert code == 0, log
    lines = [ln.strip() for ln in lst.splitlines()]
    assert "The CORR Procedure" in lines and "2  Variables:    x   y" in lines and "Simple Statistics" in lines
    # by hand: x̄ = ȳ = 3, s = √2.5 = 1.58114, Σ 15
    assert "x         5  3.00000  1.58114  15.00000  1.00000  5.00000" in lines
    assert "Pearson Correlation Coefficients, N = 5" in lines and "Prob > |r| under H0: Rho=0" in lines
    # dx = -2 -1 0 1 2, dy = -1 -2 1 0 2: Σdxdy 8, Σdx² = Σdy² = 10, r = 0.8
    assert "x      1.00000      0.80000" in lines
    # p: t = 0.8·√(3/0.36), two-sided on 3 df
    p = 2 * stats.t.sf(0.8 * (3 / 0.36) ** 0.5, 3)
    assert f"{p:.4f}" in lines


@pytest.mark.parametrize("text, msg", [
    ("proc corr data=a hoeffding; run;", "HOEFFDING is not supported"),
    ("data c; set a; length s $ 3; s = 'a'; run; proc corr data=c; var x s; run;", "does not match type"),
    ("proc corr data=a; var x y; tables x; run;", "not valid or not supported in PROC CORR"),
])
def test_bad_input_names_the_fault(session, text, msg):
    code, log, _ = run_sas(session, _data() + text)
    assert code != 0 and msg in log, log


def test_weight_enters_pearson_only(session):
    code, log, _ = run_sas(session, """data w; input x y w; datalines;
1 2 1
2 1 3
3 5 2
4 3 1
5 6 2
;
ods output PearsonCorr=work.pc SpearmanCorr=work.sc Cov=work.cv;
proc corr data=w pearson spearman cov; var x y; weight w; run;""")
    assert code == 0, log
    x, y, w = np.array([1, 2, 3, 4, 5.]), np.array([2, 1, 5, 3, 6.]), np.array([1, 3, 2, 1, 2.])
    # weighted means and cross products (SAS: Σw(x - x̄w)(y - ȳw), covariance divisor n - 1 under VARDEF=DF)
    xm, ym = (w * x).sum() / w.sum(), (w * y).sum() / w.sum()
    sxy, sxx, syy = (w * (x - xm) * (y - ym)).sum(), (w * (x - xm) ** 2).sum(), (w * (y - ym) ** 2).sum()
    pc = {r["Variable"]: r for r in rows(session, "work.pc")}
    assert pc["x"]["y"] == pytest.approx(sxy / math.sqrt(sxx * syy))
    assert {r["Variable"]: r for r in rows(session, "work.cv")}["x"]["y"] == pytest.approx(sxy / 4)
    sc = {r["Variable"]: r for r in rows(session, "work.sc")}
    assert sc["x"]["y"] == pytest.approx(stats.spearmanr(x, y)[0])      # the weights left out


def test_kendall_counting_in_blocks_and_by_sort_agree_with_scipy():
    from statgrid.procs import corr as eng
    rng = np.random.default_rng(7)
    x = rng.integers(0, 40, 3500).astype(float)         # many ties
    y = x + rng.integers(0, 25, 3500)
    want = stats.kendalltau(x, y, variant="b")
    small = eng.kendall_tau_b(x[:700], y[:700], block=64)  # the O(n²) block count
    assert small[0] == pytest.approx(stats.kendalltau(x[:700], y[:700]).statistic, rel=1e-12)
    assert small[1] == pytest.approx(stats.kendalltau(x[:700], y[:700]).pvalue, rel=1e-9)
    big = eng.kendall_tau_b(x, y)                           # past EXACT_KENDALL_N: scipy's sort count
    assert big[0] == pytest.approx(want.statistic, rel=1e-12) and big[1] == pytest.approx(want.pvalue, rel=1e-9)


def test_thirty_variables_in_one_pass(session):
    # 30 variables: 465 pairs in the one Arrow pass of matrix products
    code, log, _ = run_sas(session, """data m; array v{30}; do r = 1 to 12; do i = 1 to 30; v{i} = mod(r*r*i + 3*i + r, 17);
end; output; end; drop r i; run;
proc corr data=m outp=op noprint; run;""")
    assert code == 0, log
    data = np.array([[(r * r * i + 3 * i + r) % 17 for i in range(1, 31)] for r in range(1, 13)], float)
    want = np.corrcoef(data, rowvar=False)
    got = {r["_NAME_"]: r for r in rows(session, "work.op") if r["_TYPE_"] == "CORR"}
    for i in (0, 7, 29):
        for j in (3, 15, 28):
            assert got[f"v{i + 1}"][f"v{j + 1}"] == pytest.approx(want[i, j], abs=1e-12)
