"""PROC GENMOD with a REPEATED statement (GEE): MODEL / TYPE3 <WALD>, CONTRAST, ESTIMATE and the GEE Fit
Criteria (QIC, QICu) in SAS programs, their ODS OUTPUT data sets against independent computations:

- Wald (TYPE3 WALD, CONTRAST / WALD) and ESTIMATE against R geepack's geeglm (TYPE=IND: geepack's estimates
  and sandwich are SAS's; the working correlation is the only place SAS and geepack part): anova(geeglm) for
  the last term and (Lb)'(LVL')⁻¹(Lb) from geepack's coef/vcov for the others, sum-to-zero coded for Type 3;
- generalized score tests (SAS's "Generalized Score Statistics": T = S'Σm L (L'Σe L)⁻¹ L'Σm S at the restricted
  estimates) against numpy written here from that formula, the restricted model fitted by geepack — for
  TYPE=EXCH with SAS's moment estimator of α iterated to its fixed point around geepack's fixed-correlation fit;
- QIC and QICu against geepack::QIC (scale.fix=TRUE: φ = 1, SAS's for Poisson and binomial), and for the
  normal with its φ̂ = RSS/(N − p) put in (geepack's normal quasi-likelihood and trace have φ = 1).
Tolerance: 1e-6 relative (both sides iterated to 1e-10 or tighter; SAS prints 2 to 4 decimals).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tests.support.rscript import r_numbers
from tests.unit.sas.standins import run_sas, work_frame

K, M = 40, 4
RTOL = 1e-6
SAS_ORDER = [0, 1, 3, 2]        # R's terms of a*b + x are a, b, x, a:b; SAS's Type 3 lists a, b, a*b, x


@pytest.fixture
def panel(session, tmp_path):
    rng = np.random.default_rng(5)
    n = K * M
    d = pd.DataFrame({"id": np.repeat(np.arange(1, K + 1), M), "t": np.tile(np.arange(1, M + 1), K),
                      "a": rng.choice(["p", "q", "r"], n), "b": np.repeat(rng.choice(["u", "v"], K), M),
                      "x": np.round(rng.normal(size=n), 4)})
    u = np.repeat(rng.normal(size=K), M)
    d["y"] = np.round(1 + 0.5 * d.x + 0.4 * (d.a == "q") + u + rng.normal(size=n), 6)
    d["cnt"] = rng.poisson(np.exp(0.2 + 0.3 * d.x + 0.3 * (d.a == "r") + 0.4 * u))
    d["bin"] = (rng.random(n) < 1 / (1 + np.exp(-(-0.2 + 0.7 * d.x + u)))).astype(int)
    d["gy"] = np.round(rng.gamma(2.0, np.exp(0.3 + 0.2 * d.x + 0.3 * u) / 2.0), 6)
    session.write_table("work.p", pa.Table.from_pandas(d, preserve_index=False))
    csv = tmp_path / "p.csv"
    d.to_csv(csv, index=False)
    return d, csv


def r(code: str) -> list[float]:
    return r_numbers(code, packages=("geepack",))


def sas(session, text: str) -> str:
    code, log, lst = run_sas(session, text)
    assert code == 0, log
    return lst


def frame(session, member: str, key: str) -> pd.DataFrame:
    return work_frame(session, member).set_index(key)


# ------------------------------------------------------------------------------------------- independent score
def score_statistic(X, y, beta, L, R, family: str, ids) -> float:
    """SAS's generalized score statistic written out: at the restricted estimates beta (full-model columns X),
    S = Σ D'V⁻¹(y − μ), Σm = (Σ D'V⁻¹D)⁻¹, Σe = Σm (Σ uᵢuᵢ') Σm, T = S'Σm L'(L Σe L')⁻¹ L Σm S (φ = 1: it
    cancels)."""
    eta = X @ beta
    mu = np.exp(eta) if family == "poisson" else eta
    dmu = mu if family == "poisson" else np.ones_like(mu)
    var = mu if family == "poisson" else np.ones_like(mu)
    p = X.shape[1]
    S, I0, meat = np.zeros(p), np.zeros((p, p)), np.zeros((p, p))
    for i in np.unique(ids):
        rows = ids == i
        D = dmu[rows, None] * X[rows]
        a = np.sqrt(var[rows])
        V = a[:, None] * R[: rows.sum(), : rows.sum()] * a[None, :]
        Vi = np.linalg.inv(V)
        ui = D.T @ Vi @ (y[rows] - mu[rows])
        S += ui
        I0 += D.T @ Vi @ D
        meat += np.outer(ui, ui)
    sm = np.linalg.inv(I0)
    se = sm @ meat @ sm
    v = L @ sm @ S
    return float(v @ np.linalg.solve(L @ se @ L.T, v))


R_SUM_DESIGN = """suppressMessages(library(geepack))
d <- read.csv('{csv}'); d <- d[order(d$id, d$t), ]
d$a <- factor(d$a); d$b <- factor(d$b)
X <- model.matrix(~ a * b + x, d, contrasts.arg = list(a = 'contr.sum', b = 'contr.sum'))
asg <- attr(X, 'assign')
"""


# ------------------------------------------------------------------------------------------- Wald and ESTIMATE
def test_type3_wald_contrast_wald_and_estimate_match_geepack(session, panel):
    d, csv = panel
    sas(session, """
ods output Type3=work.t3 Contrasts=work.con Estimates=work.est;
proc genmod data=work.p;
  class id a b;
  model cnt = a b a*b x / dist=poisson type3 wald;
  repeated subject=id / type=ind converge=1e-12;
  contrast 'pq' a 1 -1 0 a*b .5 .5 -.5 -.5 0 0 / wald;
  estimate 'x' x 1 / exp alpha=0.1;
run;
""")
    out = r(R_SUM_DESIGN.format(csv=csv) + """
ctl <- geese.control(epsilon = 1e-12, maxit = 200)
options(contrasts = c('contr.sum', 'contr.poly'))
f <- geeglm(cnt ~ a * b + x, id = id, data = d, family = poisson, corstr = 'independence', control = ctl)
b <- coef(f); V <- vcov(f)
w <- sapply(1:4, function(k) { i <- which(asg == k); drop(t(b[i]) %*% solve(V[i, i], b[i])) })
av <- anova(f)
options(contrasts = c('contr.treatment', 'contr.poly'))
d$a <- relevel(d$a, ref = 'r'); d$b <- relevel(d$b, ref = 'v')
g <- geeglm(cnt ~ a * b + x, id = id, data = d, family = poisson, corstr = 'independence', control = ctl)
bt <- coef(g); Vt <- vcov(g)
l <- setNames(rep(0, length(bt)), names(bt)); l[c('ap', 'aq', 'ap:bu', 'aq:bu')] <- c(1, -1, .5, -.5)
cat(sprintf('%.15g', c(w, av[nrow(av), 'X2'], sum(l * bt), drop(t(l) %*% Vt %*% l), bt['x'], sqrt(Vt['x', 'x']))))
""")
    wald_terms = [out[k] for k in SAS_ORDER]
    anova_last, lb, lvl, bx, sex = out[4], out[5], out[6], out[7], out[8]
    t3 = frame(session, "t3", "Source")
    assert list(t3.columns) == ["DF", "ChiSq", "ProbChiSq"]
    assert list(t3.index) == ["a", "b", "a*b", "x"] and list(t3.DF) == [2, 1, 2, 1]
    np.testing.assert_allclose(t3.ChiSq, wald_terms, rtol=RTOL)
    np.testing.assert_allclose(t3.loc["a*b", "ChiSq"], anova_last, rtol=RTOL)     # geepack's own Wald
    from scipy.stats import chi2, norm
    np.testing.assert_allclose(t3.ProbChiSq, chi2.sf(wald_terms, [2, 1, 2, 1]), rtol=RTOL)
    con = frame(session, "con", "Contrast")
    assert list(con.columns) == ["DF", "ChiSq", "ProbChiSq", "Type"]
    assert con.loc["pq", "Type"] == "Wald" and con.loc["pq", "DF"] == 1
    np.testing.assert_allclose(con.loc["pq", "ChiSq"], lb * lb / lvl, rtol=RTOL)
    est = frame(session, "est", "Label")
    z = norm.ppf(0.95)
    np.testing.assert_allclose(est.loc["x", ["LBetaEstimate", "StdErr", "LBetaLowerCL", "LBetaUpperCL", "ChiSq"]],
                               [bx, sex, bx - z * sex, bx + z * sex, (bx / sex) ** 2], rtol=RTOL)
    np.testing.assert_allclose(est.loc["x", "MeanEstimate"], np.exp(bx), rtol=RTOL)        # log link's inverse
    np.testing.assert_allclose(est.loc["Exp(x)", ["LBetaEstimate", "StdErr", "LBetaLowerCL", "LBetaUpperCL"]],
                               [np.exp(bx), np.exp(bx) * sex, np.exp(bx - z * sex), np.exp(bx + z * sex)], rtol=RTOL)
    assert est.loc["x", "Alpha"] == pytest.approx(0.1)


# ------------------------------------------------------------------------------------------- score tests
def test_type3_and_contrast_score_tests_independent(session, panel):
    d, csv = panel
    lst = sas(session, """
ods output Type3=work.s3 Contrasts=work.scon;
proc genmod data=work.p;
  class id a b;
  model cnt = a b a*b x / dist=poisson type3;
  repeated subject=id / type=ind converge=1e-12;
  contrast 'pq' a 1 -1 0 a*b .5 .5 -.5 -.5 0 0;
  contrast 'x' x 1;
run;
""")
    assert "Score Statistics For Type 3 GEE Analysis" in lst and "Contrast Results for GEE Analysis" in lst
    # restricted fits by geepack: Type 3's (the sum-coded design without the effect's columns) and the pq
    # contrast's (treatment coding, last levels reference, on the null space of L)
    out = r(R_SUM_DESIGN.format(csv=csv) + """
ctl <- geese.control(epsilon = 1e-12, maxit = 200)
res <- c()
for (k in 1:4) {
  Xr <- X[, asg != k, drop = FALSE]
  f <- geeglm(d$cnt ~ 0 + Xr, id = d$id, family = poisson, corstr = 'independence', control = ctl)
  b <- rep(0, ncol(X)); b[asg != k] <- coef(f); res <- c(res, b)
}
d$a <- relevel(d$a, ref = 'r'); d$b <- relevel(d$b, ref = 'v')
Xt <- model.matrix(~ a * b + x, d)
l <- setNames(rep(0, ncol(Xt)), colnames(Xt)); l[c('ap', 'aq', 'ap:bu', 'aq:bu')] <- c(1, -1, .5, -.5)
N <- qr.Q(qr(cbind(l, diag(length(l)))))[, -1]
Z <- Xt %*% N
g <- geeglm(d$cnt ~ 0 + Z, id = d$id, family = poisson, corstr = 'independence', control = ctl)
cat(sprintf('%.15g', c(res, N %*% coef(g), asg)))
""")
    d = d.sort_values(["id", "t"]).reset_index(drop=True)
    Xs = np.column_stack([np.ones(len(d)), np.where(d.a == "p", 1.0, np.where(d.a == "r", -1.0, 0.0)),
                          np.where(d.a == "q", 1.0, np.where(d.a == "r", -1.0, 0.0)),
                          np.where(d.b == "u", 1.0, -1.0), d.x])
    Xs = np.column_stack([Xs[:, :4], Xs[:, 4], Xs[:, 1] * Xs[:, 3], Xs[:, 2] * Xs[:, 3]])   # R's column order
    p = Xs.shape[1]
    betas = np.array(out[:4 * p]).reshape(4, p)
    beta_pq = np.array(out[4 * p:4 * p + 7])
    asg = np.array(out[4 * p + 7:])
    y, ids, R = d.cnt.to_numpy(float), d.id.to_numpy(), np.eye(M)
    want = [score_statistic(Xs, y, betas[k], np.eye(p)[asg == k + 1], R, "poisson", ids) for k in SAS_ORDER]
    t3 = frame(session, "s3", "Source")
    assert list(t3.index) == ["a", "b", "a*b", "x"] and list(t3.DF) == [2, 1, 2, 1]
    np.testing.assert_allclose(t3.ChiSq, want, rtol=RTOL)
    Xt = np.column_stack([np.ones(len(d)), d.a == "p", d.a == "q", d.b == "u", d.x,
                          (d.a == "p") & (d.b == "u"), (d.a == "q") & (d.b == "u")]).astype(float)
    lvec = np.array([[0, 1, -1, 0, 0, 0.5, -0.5]])
    con = frame(session, "scon", "Contrast")
    assert list(con.Type) == ["Score", "Score"] and list(con.DF) == [1, 1]
    np.testing.assert_allclose(con.loc["pq", "ChiSq"], score_statistic(Xt, y, beta_pq, lvec, R, "poisson", ids),
                               rtol=RTOL)
    np.testing.assert_allclose(con.loc["x", "ChiSq"], t3.loc["x", "ChiSq"], rtol=RTOL)   # the same hypothesis


def test_score_test_exchangeable_restricted_fit_with_sas_alpha(session, panel):
    d, csv = panel
    sas(session, """
ods output Type3=work.e3;
proc genmod data=work.p;
  class id a b;
  model y = a b x / type3;
  repeated subject=id / type=exch converge=1e-12;
run;
""")
    # the restricted model (without a) by geepack at a fixed exchangeable correlation, α recomputed by SAS's
    # moment estimator Σ_i Σ_{j<k} e_ij e_ik / ((N* − p_r) φ), φ = Σe²/(N − p_r), until it stops moving
    out = r(f"""suppressMessages(library(geepack))
d <- read.csv('{csv}'); d <- d[order(d$id, d$t), ]
d$a <- factor(d$a); d$b <- factor(d$b)
X <- model.matrix(~ a + b + x, d, contrasts.arg = list(a = 'contr.sum', b = 'contr.sum'))
asg <- attr(X, 'assign'); Xr <- X[, asg != 1]; pr <- ncol(Xr)
alpha <- 0
for (it in 1:100) {{
  R <- matrix(alpha, {M}, {M}); diag(R) <- 1
  z <- fixed2Zcor(R, id = d$id, waves = d$t)
  f <- geeglm(d$y ~ 0 + Xr, id = d$id, waves = d$t, corstr = 'fixed', zcor = z,
              control = geese.control(epsilon = 1e-13, maxit = 200))
  e <- d$y - fitted(f); phi <- sum(e^2) / (nrow(d) - pr)
  s <- tapply(e, d$id, function(v) (sum(v)^2 - sum(v^2)) / 2)
  npairs <- sum(tapply(e, d$id, function(v) length(v) * (length(v) - 1) / 2))
  new <- sum(s) / ((npairs - pr) * phi)
  if (abs(new - alpha) < 1e-13) break
  alpha <- new
}}
b <- rep(0, ncol(X)); b[asg != 1] <- coef(f)
cat(sprintf('%.15g', c(alpha, b)))
""")
    alpha, beta = out[0], np.array(out[1:])
    d = d.sort_values(["id", "t"]).reset_index(drop=True)
    X = np.column_stack([np.ones(len(d)), np.where(d.a == "p", 1.0, np.where(d.a == "r", -1.0, 0.0)),
                         np.where(d.a == "q", 1.0, np.where(d.a == "r", -1.0, 0.0)),
                         np.where(d.b == "u", 1.0, -1.0), d.x])
    R = np.full((M, M), alpha) + (1 - alpha) * np.eye(M)
    L = np.eye(5)[[1, 2]]
    want = score_statistic(X, d.y.to_numpy(float), beta, L, R, "normal", d.id.to_numpy())
    t3 = frame(session, "e3", "Source")
    assert t3.loc["a", "DF"] == 2
    np.testing.assert_allclose(t3.loc["a", "ChiSq"], want, rtol=RTOL)


# ------------------------------------------------------------------------------------------- QIC
@pytest.mark.parametrize("dist, y, family", [("poisson", "cnt", "poisson"), ("binomial", "bin", "binomial")])
def test_qic_and_qicu_match_geepack(session, panel, dist, y, family):
    _, csv = panel
    lst = sas(session, f"""
ods output GEEFitCriteria=work.q;
proc genmod data=work.p descending;
  class id a;
  model {y} = a x / dist={dist};
  repeated subject=id / type=ind converge=1e-12;
run;
""")
    assert "GEE Fit Criteria" in lst
    quasi, cic, qicu, scale = r(f"""suppressMessages(library(geepack))
d <- read.csv('{csv}'); d <- d[order(d$id, d$t), ]; d$a <- factor(d$a)
f <- geeglm({y} ~ a + x, id = id, data = d, family = {family}, corstr = 'independence',
            control = geese.control(epsilon = 1e-12, maxit = 200))
cat(sprintf('%.15g', c(QIC(f)[c('Quasi Lik', 'CIC', 'QICu')], f$geese$gamma)))
""")
    # geepack's trace (CIC) inverts its naive covariance, which carries its scale estimate (Pearson/N; its
    # scale.fix does not reach vbeta.naiv in geepack 1.3.9): × that scale gives tr(Ω_I V_R) with φ = 1
    q = frame(session, "q", "Criterion")
    assert list(q.index) == ["QIC", "QICu"]
    np.testing.assert_allclose(q.Value, [-2 * quasi + 2 * cic * scale, qicu], rtol=RTOL)


def test_qic_normal_exchangeable_scaled_by_phi(session, panel):
    d, csv = panel
    sas(session, """
ods output GEEFitCriteria=work.qn;
proc genmod data=work.p;
  class id a;
  model y = a x;
  repeated subject=id / type=exch converge=1e-12;
run;
""")
    alpha = session.gee("work.p", "y = a x", subject="id", type="exch", class_="id a", converge=1e-12,
                        print=False).stats["alpha"]
    quasi, cic, scale_ind = r(f"""suppressMessages(library(geepack))
d <- read.csv('{csv}'); d <- d[order(d$id, d$t), ]; d$a <- factor(d$a)
R <- matrix({alpha:.17g}, {M}, {M}); diag(R) <- 1
z <- fixed2Zcor(R, id = d$id, waves = d$t)
ctl <- geese.control(epsilon = 1e-13, maxit = 200)
f <- geeglm(y ~ a + x, id = id, waves = t, data = d, corstr = 'fixed', zcor = z, control = ctl)
g <- geeglm(y ~ a + x, id = id, waves = t, data = d, corstr = 'independence', control = ctl)
cat(sprintf('%.15g', c(QIC(f)[c('Quasi Lik', 'CIC')], g$geese$gamma)))
""")
    # geepack: quasi = −RSS/2 (φ = 1), CIC = tr(X'X V_R)/scale_ind (its independence refit's naive covariance)
    n, p = len(d), 4
    phi = -2 * quasi / (n - p)             # the GEE's φ̂ = Σe²/(N − p)
    trace = cic * scale_ind / phi          # tr(Ω_I V_R), Ω_I = X'X/φ̂
    q = frame(session, "qn", "Criterion")
    np.testing.assert_allclose(q.loc["QIC", "Value"], -2 * quasi / phi + 2 * trace, rtol=RTOL)
    np.testing.assert_allclose(q.loc["QICu", "Value"], n - p + 2 * p, rtol=RTOL)


def test_qic_gamma_log_link_independent(session, panel):
    d, csv = panel
    sas(session, """
ods output GEEFitCriteria=work.qg;
proc genmod data=work.p;
  class id a;
  model gy = a x / dist=gamma link=log;
  repeated subject=id / type=ind converge=1e-12;
run;
""")
    # SAS's gamma Q_ij = −(y/μ + log μ), φ̂ = Σ((y − μ)/μ)²/(N − p), Ω_I = X'WX/φ̂ (W = 1 for the log link:
    # (∂μ/∂η)²/v(μ) = μ²/μ²); geepack's CIC = tr(X'WX V_R)/its scale (geepack's own gamma quasi-likelihood is
    # not SAS's, so it is computed here from geepack's fitted means)
    quasi, phi, cic, scale = r(f"""suppressMessages(library(geepack))
d <- read.csv('{csv}'); d <- d[order(d$id, d$t), ]; d$a <- factor(d$a)
f <- geeglm(gy ~ a + x, id = id, data = d, family = Gamma(link = 'log'), corstr = 'independence',
            control = geese.control(epsilon = 1e-12, maxit = 200))
mu <- as.vector(fitted(f))
cat(sprintf('%.15g', c(sum(-(d$gy / mu + log(mu))), sum(((d$gy - mu) / mu)^2) / (nrow(d) - 4),
                       QIC(f)['CIC'], f$geese$gamma)))
""")
    q = frame(session, "qg", "Criterion")
    np.testing.assert_allclose(q.Value, [-2 * quasi / phi + 2 * cic * scale / phi, -2 * quasi / phi + 2 * 4],
                               rtol=RTOL)


# ------------------------------------------------------------------------------------------- listing and errors
def test_listing_order_titles_and_errors(session, panel):
    lst = sas(session, """
proc genmod data=work.p;
  class id a;
  model y = a x / type3 wald;
  repeated subject=id / type=exch;
  contrast 'a' a 1 -1 0, a 0 1 -1 / wald;
  estimate 'x' x 1;
run;
""")
    order = [lst.index(t) for t in ("Exchangeable Working Correlation", "GEE Fit Criteria",
                                    "Analysis Of GEE Parameter Estimates", "Wald Statistics For Type 3 GEE Analysis",
                                    "Contrast Results for GEE Analysis", "Contrast Estimate Results")]
    assert order == sorted(order)
    words = [line.split() for line in lst.splitlines()]
    contrast_row = next(w for w in words if w[:1] == ["a"] and w[-1] == "Wald")
    type3_row = next(w for w in words if w[:1] == ["a"] and len(w) == 4 and w[1] == "2")
    assert contrast_row == type3_row + ["Wald"]          # the same hypothesis, Wald both times
    code, log, _ = run_sas(session, """
proc genmod data=work.p; class id a; model y = a x; repeated subject=id; contrast 'c' z 1; run;
""")
    assert code == 1 and "effect 'z' of a CONTRAST or ESTIMATE is not in the model" in log, log
    code, log, _ = run_sas(session, """
proc genmod data=work.p; class id a; model y = a x; repeated subject=id; output out=work.o p=p; run;
""")
    assert code == 1 and "The OUTPUT statement of PROC GENMOD with a REPEATED statement" in log, log


def test_empty_cells_note_and_not_estimable_contrast(session, panel):
    code, log, lst = run_sas(session, """
ods output Contrasts=work.ne;
proc genmod data=work.p;
  where not (a = 'r' and b = 'v');
  class id a b;
  model y = a b a*b x / type3;
  repeated subject=id / type=exch;
  contrast 'p-q' a 1 -1 0;
run;
""")
    assert code == 0, log
    assert "NOTE: Some cells of a*b have no observations: the Type 3 tests here test sum-to-zero" in log
    assert "WARNING: Contrast 'p-q' is not estimable." in log     # GENMOD fills in no a*b coefficients
    row = work_frame(session, "ne").iloc[0]
    assert row.Contrast == "p-q" and row.Type == "Score" and np.isnan(row.DF) and np.isnan(row.ChiSq)
