"""PROC GENMOD: generalized linear models — normal, Poisson, binomial, gamma, negative binomial.

The fit is statgrid.procs._irls (IRLS with one QR per pass, rows in memory when they fit, else
streamed again each pass); the design is PROC GLM's (over-parameterized CLASS columns, later levels
aliased to 0). As GENMOD, the scale is estimated by maximum likelihood: σ = √(deviance/n) for the
normal, the shape ν for the gamma (reported as Scale), the dispersion α of the negative binomial
(variance μ + αμ²); it is 1 for Poisson and binomial unless scale='pearson' or 'deviance' (SAS
SCALE=P/D: φ = χ²/DF). Standard errors use the expected information (SAS's EXPECTED option; the same
as SAS's default for canonical links). The binomial takes a 0/1 response — as SAS, the probability
of the lowest level (0) is modelled unless descending=True — or events with trials=.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import _irls
from statgrid.procs._irls import special
from statgrid.procs import design as _design
from statgrid.procs import genmod_tests
from statgrid.procs._base import ResultTable, check_columns, format_value, procedure, qi, render_table


def p_chi2(x: float, df: float) -> float:
    return float(special.chdtrc(df, x)) if df > 0 and not math.isnan(x) else float("nan")


def model_rows(s, design, sql: str, T: np.ndarray | None, y: str, weight: str | None = None,
               offset: str | None = None, y_map=None) -> tuple[_irls.Rows, int]:
    """The rows used, as (X, y, w, offset) chunks in the coding T (None: over-parameterized)."""
    n = s.con.sql(f"SELECT count(*) FROM ({sql})").fetchall()[0][0]
    tail = [c for c in (y, weight, offset) if c]
    p = design.width
    width = T.shape[1] if T is not None else p
    rows_per_chunk = _design.chunk_rows(s.options.memsize_bytes, width + len(tail))

    def produce():
        for a in _design.chunks(s, design, sql, rows_per_chunk, tail):
            X = a[:, :p] if T is None else a[:, :p] @ T
            yy = a[:, p]
            w = a[:, p + 1] if weight else np.ones(len(yy))
            off = a[:, p + 1 + (1 if weight else 0)] if offset else np.zeros(len(yy))
            if y_map is not None:
                yy, w = y_map(yy, w)
            yield X, yy, w, off
    return _irls.Rows(produce, n, width, s.options.memsize_bytes), n


def estimates_table(names: list[str], fit: _irls.GLMFit, phi: float, z: float = 1.959963984540054) -> list[list]:
    """Parameter, DF, Estimate, StdErr, Wald 95% lower/upper, Wald χ², Pr > χ²."""
    se = fit.stderr(phi)
    rows = []
    for j, nm in enumerate(names):
        if j in fit.aliased:
            rows.append([nm, 0, 0.0, None, None, None, None, None])
            continue
        b = float(fit.beta[j])
        chi = (b / se[j]) ** 2 if se[j] > 0 else float("nan")
        rows.append([nm, 1, b, float(se[j]), b - z * se[j], b + z * se[j], chi, p_chi2(chi, 1)])
    return rows


@procedure("PROCEDURE GENMOD")
def genmod(s, data: str, model: str, dist: str = "normal", link: str | None = None,
           class_: str | Sequence[str] | None = None, trials: str | None = None, offset: str | None = None,
           noint: bool = False, scale: str | None = None, maxiter: int = 50, descending: bool = False,
           outest: str | None = None, print: bool = True, type3: bool = False,
           contrasts: Sequence | None = None, estimates: Sequence | None = None,
           output: dict | None = None, output_alpha: float = 0.05, ref: dict | None = None,
           order: str | None = None) -> ResultTable:
    """Generalized linear model of 'y = effects'. Returns the parameter estimates (Parameter, DF,
    Estimate, StdErr, LowerWaldCL, UpperWaldCL, ChiSq, ProbChiSq, plus the Scale/Dispersion row);
    `stats` holds the criteria for goodness of fit (deviance, Pearson χ², log-likelihood, AIC,
    AICC, BIC) and the iteration count. SAS's tests (genmod_tests.py), in `stats` too:
      type3=True     stats['type3']: [Source, DF, (DenDF, FValue, ProbF,) ChiSq, ProbChiSq] — likelihood
                     ratio (F columns with scale='deviance'/'pearson');
      contrasts      [(label, [row {effect: [coefficients]}, …], wald)] → stats['contrasts']: [Contrast, DF,
                     (DenDF, FValue, ProbF,) ChiSq, ProbChiSq, Type 'LR'|'Wald'];
      estimates      [(label, row, alpha, exp)] → stats['estimates']: [Label, MeanEstimate, MeanLowerCL,
                     MeanUpperCL, LBetaEstimate, StdErr, Alpha, LBetaLowerCL, LBetaUpperCL, ChiSq, ProbChiSq].
    ref: {CLASS variable: REF= level | 'FIRST' | 'LAST'}: that level last among the variable's levels (SAS's
    CLASS var(REF=)).
    order: SAS's ORDER= of the CLASS levels ('data': first appearance, 'freq': descending count; else sorted)."""
    src = s.dataset(data)
    names_all = [c for c, _ in s.columns(src.scan_sql())]
    responses, effects = _design.parse_model(model, names_all, str(src), many_responses=False)
    fam = _irls.family(dist)
    lk = _irls.link(link, fam)
    scale = scale.lower() if isinstance(scale, str) else scale
    if scale not in (None, "pearson", "deviance", "p", "d"):
        raise StatgridError(f"scale {scale!r} is not one of pearson, deviance (or leave it out for maximum "
                            "likelihood / 1).")
    if trials and fam.name != "binomial":
        raise StatgridError(f"trials={trials!r} is for dist='binomial' (events/trials); dist is {fam.name}.")
    extra = check_columns([c for c in (trials, offset) if c], names_all, "trials/offset", str(src))
    design, sql, _, n_missing = _design.prepare(s, src, effects, responses, class_, extra=extra,
                                                intercept=not noint, ref=ref, order=order)
    y = responses[0]
    _check_response(s, sql, y, fam, trials)
    # A 0/1 response: as SAS, the probability modelled is that of the lowest level (0) unless descending.
    binary_low = fam.name == "binomial" and not trials and not descending
    y_map = (lambda yy, w: (yy / w, w)) if trials else (lambda yy, w: (1.0 - yy, w)) if binary_low else None
    rows, n = model_rows(s, design, sql, None, y, trials, offset, y_map)
    if n == 0:
        raise StatgridError(f"{src} has no observation with every MODEL variable present "
                            f"({n_missing} with a missing value); nothing to fit.")
    p = design.width
    if fam.name == "negbin":
        fit, fam = _irls.fit_negbin(rows, p, lk, maxiter=maxiter)
    else:
        fit = _irls.irls(rows, p, fam, lk, maxiter=maxiter, what="model")
    k = len(fit.kept)
    df = n - k
    if fam.name == "normal":
        phi, scale_row = fit.deviance / fit.weight_sum, ("Scale", math.sqrt(fit.deviance / fit.weight_sum))
    elif fam.name == "gamma":
        nu = _irls.gamma_shape(fit.deviance, fit.weight_sum)
        phi, scale_row = 1.0 / nu, ("Scale", nu)
    elif fam.name == "negbin":
        phi, scale_row = 1.0, ("Dispersion", fam.alpha)
    else:
        phi, scale_row = 1.0, ("Scale", 1.0)
    ll = _irls.loglik_at(rows, fit.kept, fam, lk, fit.beta[fit.kept], phi)
    est_phi = phi
    if scale in ("pearson", "p", "deviance", "d"):
        est_phi = (fit.pearson if scale[0] == "p" else fit.deviance) / df if df > 0 else float("nan")
        scale_row = ("Scale", math.sqrt(est_phi))
    names = design.column_names()
    rows_out = estimates_table(names, fit, est_phi)
    rows_out.append([scale_row[0], 0 if scale or fam.name in ("poisson", "binomial") else 1, scale_row[1],
                     None, None, None, None, None])
    n_params = k + (1 if fam.name in ("normal", "gamma", "negbin") else 0)
    aic = -2 * ll + 2 * n_params
    crit = {"deviance": fit.deviance, "df": df, "scaled_deviance": fit.deviance / est_phi,
            "pearson_chisq": fit.pearson, "scaled_pearson": fit.pearson / est_phi,
            "deviance_df": fit.deviance / df if df else float("nan"),
            "pearson_df": fit.pearson / df if df else float("nan"), "loglik": ll,
            "loglik_kernel": ll - _loglik_constant(rows, fam), "aic": aic,
            "aicc": aic + 2 * n_params * (n_params + 1) / (n - n_params - 1) if n - n_params - 1 > 0 else float("nan"),
            "bic": -2 * ll + n_params * math.log(n), "n": n, "n_missing": n_missing, "iterations": fit.iterations,
            "dist": fam.name, "link": lk.name, "phi": est_phi, "alpha": fam.alpha if fam.name == "negbin" else None,
            "modeled": (f"{y} = 0" if binary_low else f"{y} = 1") if fam.name == "binomial" and not trials else None,
            "response": y, "trials_var": trials}
    if fam.name == "binomial" and not trials:   # SAS's Response Profile: each level's count among the rows used
        crit["response_counts"] = dict(s.con.sql(f"SELECT {qi(y)}, count(*) FROM ({sql}) GROUP BY 1 ORDER BY 1")
                                       .fetchall())
    for j in fit.aliased:
        s.log.note(f"{names[j]} is a linear combination of the columns before it; its estimate is set to 0.")
    result = ResultTable(["Parameter", "DF", "Estimate", "StdErr", "LowerWaldCL", "UpperWaldCL", "ChiSq",
                          "ProbChiSq"], rows_out, stats=crit)
    result.stats["class_levels"] = {c: [_design.level_text(x) for x in design.levels[c]] for c in design.classes}
    if type3 or contrasts or estimates:
        full = genmod_tests.Fitted(rows, design, fam, lk, fit, ll, est_phi, bool(scale), df, maxiter)
        result.stats.update(_tests(s, full, type3, contrasts or (), estimates or ()))
    if output:       # SAS's OUTPUT statement: statistic → variable (model_output.GENMOD_STATISTICS)
        from statgrid.procs import model_output
        result.stats["output"] = model_output.genmod_scores(
            s, f"SELECT * FROM ({src.scan_sql()})", design, fit, fam, lk, est_phi, y, offset, output, output_alpha,
            trials=trials, flip=binary_low)
    if print:
        s.log.listing(_listing(result, design, y, trials))
    if outest:
        result.out = s.write_table(outest, result.to_arrow())
    return result


def _loglik_constant(rows, fam) -> float:
    """The terms of the full log likelihood that depend on the data only, which SAS's "Log Likelihood" (the
    kernel) leaves out and "Full Log Likelihood" keeps (SAS/STAT GENMOD, "Log-Likelihood Functions"): −log y!
    (Poisson, negative binomial), log C(n, r) (binomial events/trials; 0 for a 0/1 response). Normal and gamma:
    none (their kernel is the full log likelihood)."""
    total = 0.0
    for _, y, w, _ in rows:
        if fam.name in ("poisson", "negbin"):
            total -= float(np.sum(w * special.gammaln(y + 1)))
        elif fam.name == "binomial":
            k = w * y
            total += float(np.sum(special.gammaln(w + 1) - special.gammaln(k + 1) - special.gammaln(w - k + 1)))
    return total


def _tests(s, full, type3: bool, contrasts: Sequence, estimates: Sequence) -> dict:
    out: dict = {"fixed_scale": full.fixed_scale}
    if type3:
        out["type3"] = genmod_tests.type3(full)
    if contrasts or estimates:
        null = genmod_tests.design_null_space(full.rows, full.design.width)
        out["contrasts"] = [genmod_tests.contrast(full, label, rows, bool(wald), null, s.log)
                            for label, rows, wald in contrasts]
        out["estimates"] = [r for label, row, alpha, exp in estimates
                            for r in genmod_tests.estimate(full, label, row, float(alpha), bool(exp), null, s.log)]
    return out


def _check_response(s, sql: str, y: str, fam, trials: str | None) -> None:
    lo, hi, non_int = s.con.sql(f"SELECT min({qi(y)}), max({qi(y)}), "
                                f"count(*) FILTER (WHERE {qi(y)} <> round({qi(y)})) FROM ({sql})").fetchall()[0]
    if lo is None:
        return
    if fam.name in ("poisson", "negbin") and (lo < 0 or non_int):
        raise StatgridError(f"response {y!r} has values from {lo} to {hi}{' and non-integers' if non_int else ''}; "
                            f"dist={fam.name} needs counts (whole numbers ≥ 0).")
    if fam.name == "gamma" and lo <= 0:
        raise StatgridError(f"response {y!r} has values ≤ 0 (min {lo}); dist=gamma needs positive values.")
    if fam.name == "binomial":
        if trials:
            bad = s.con.sql(f"SELECT count(*) FROM ({sql}) WHERE {qi(y)} < 0 OR {qi(y)} > {qi(trials)} "
                            f"OR {qi(trials)} <= 0").fetchall()[0][0]
            if bad:
                raise StatgridError(f"{bad} row(s) have events {y!r} outside 0 … trials {trials!r} (or trials ≤ 0).")
        elif lo < 0 or hi > 1 or non_int:
            vals = [r[0] for r in s.con.sql(f"SELECT DISTINCT {qi(y)} FROM ({sql}) ORDER BY 1 LIMIT 11").fetchall()]
            raise StatgridError(f"response {y!r} of dist=binomial must be 0/1 (or events with trials=); values found: "
                                f"{', '.join(format_value(v) for v in vals[:10])}{' …' if len(vals) > 10 else ''}.")


def _listing(t: ResultTable, design, y: str, trials: str | None) -> str:
    st = t.stats
    head = (f"The GENMOD Procedure\n\nDistribution {st['dist']}\nLink Function {st['link']}\n"
            f"Dependent Variable {y}{' / ' + trials if trials else ''}\n\n"
            f"Number of Observations Read {st['n'] + st['n_missing']}\nNumber of Observations Used {st['n']}\n"
            + (f"Probability modeled is {st['modeled']}.\n" if st["modeled"] else "")
            + f"Algorithm converged in {st['iterations']} iterations.\n")
    crit = render_table(["Criterion", "DF", "Value", "Value/DF"], [
        ["Deviance", st["df"], st["deviance"], st["deviance_df"]],
        ["Scaled Deviance", st["df"], st["scaled_deviance"], st["scaled_deviance"] / st["df"] if st["df"] else None],
        ["Pearson Chi-Square", st["df"], st["pearson_chisq"], st["pearson_df"]],
        ["Scaled Pearson X2", st["df"], st["scaled_pearson"], st["scaled_pearson"] / st["df"] if st["df"] else None],
        ["Log Likelihood", None, st["loglik_kernel"], None],
        ["Full Log Likelihood", None, st["loglik"], None],
        ["AIC (smaller is better)", None, st["aic"], None],
        ["AICC (smaller is better)", None, st["aicc"], None],
        ["BIC (smaller is better)", None, st["bic"], None]], title="Criteria For Assessing Goodness Of Fit")
    est = render_table(["Parameter", "DF", "Estimate", "Standard Error", "Wald 95% Lower", "Wald 95% Upper",
                        "Wald Chi-Square", "Pr > ChiSq"], t.rows, title="Analysis Of Maximum Likelihood Parameter "
                                                                             "Estimates")
    return "\n".join([head, crit, est])
