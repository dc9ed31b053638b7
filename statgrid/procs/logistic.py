"""PROC LOGISTIC: binary logistic regression, with model selection.

Maximum likelihood by IRLS (statgrid.procs._irls: one QR of √W·[X | z] per pass, rows in memory
when they fit, else streamed each pass). CLASS variables are coded as PARAM=EFFECT by default
(SAS's default for LOGISTIC; 'ref' too). As SAS, the probability modelled is that of the
FIRST response level in sorted order unless event= names the level or descending=True — the
listing says which.

Tables: model fit statistics (AIC, SC, −2 Log L with and without covariates), the global null
hypothesis by likelihood ratio, score and Wald; maximum likelihood estimates with Wald χ²; Type 3
Wald tests of effects; odds ratios with Wald confidence limits (continuous effects per unit, CLASS
levels against the last level, effects not inside an interaction, as SAS); association of
predicted probabilities and responses — concordant/discordant/tied pairs counted exactly (no
binning: c equals the area under the ROC curve), Somers' D, Gamma, Tau-a, c; Hosmer–Lemeshow
(lackfit=True) with SAS's partition of the sorted predicted probabilities (ties kept together).
Selection (forward/backward/stepwise): an effect enters on the score χ² at the current estimates
(one pass: QR of √W·[X_model | X_candidates]; the candidate block left after the model's columns
gives each score statistic) and leaves on its Wald χ²; SLENTRY/SLSTAY 0.05 by default, and an
interaction enters only after the effects it contains (SAS's HIERARCHY=SINGLE).
Errors instead of doubtful answers: a response with other than two levels (the values are named),
complete separation (no maximum likelihood estimate exists), non-convergence with the iteration
count (quasi-complete separation shows as estimates that keep growing, and the message says so).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import _irls
from statgrid.procs._irls import special
from statgrid.procs._stepwise import stepwise
from statgrid.procs import design as _design
from statgrid.procs._base import ResultTable, procedure, qi, render_table
from statgrid.procs.genmod import model_rows, p_chi2

Z95 = 1.959963984540054


def _literal(v) -> str:
    import datetime as _dt
    from decimal import Decimal
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, _dt.datetime):
        return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
    if isinstance(v, _dt.date):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, Decimal):
        return str(v)
    return repr(v)


def _same_number(level, event) -> bool:
    try:
        return not isinstance(level, str) and float(level) == float(event)
    except (TypeError, ValueError):
        return False


def _wald(beta: np.ndarray, cov: np.ndarray) -> tuple[float, int]:
    if beta.size == 0:
        return float("nan"), 0
    x, _, rank, _ = np.linalg.lstsq(cov, beta, rcond=1e-12)
    return float(beta @ x), int(rank)


@procedure("PROCEDURE LOGISTIC")
def logistic(s, data: str, model: str, class_: str | Sequence[str] | None = None, param: str = "effect",
             event=None, descending: bool = False, selection: str | None = None, sle: float = 0.05,
             sls: float = 0.05, include: int = 0, lackfit: bool = False, maxiter: int = 25,
             noint: bool = False, outest: str | None = None, print: bool = True, output: dict | None = None,
             alpha: float = 0.05, link: str = "logit", contrasts: Sequence | None = None,
             oddsratios: Sequence | None = None, units: dict | None = None, units_default: Sequence | None = None,
             clodds: bool = False, model_alpha: float = 0.05, exact: Sequence | None = None,
             ref: dict | None = None, order: str | None = None) -> ResultTable:
    """Binary logistic regression of 'y = effects'. Returns the parameter estimates (Parameter, DF,
    Estimate, StdErr, WaldChiSq, ProbChiSq); `stats` holds fit statistics, global tests, type3,
    odds_ratios, association (c, somers_d, gamma, tau_a, concordant…), hosmer_lemeshow, selection.
    output={'p': name, 'xbeta': …, 'stdxbeta': …, 'lower': …, 'upper': …} (SAS's OUTPUT statement; limits at
    `alpha`): stats['output'] is the input, every row, with those variables and _LEVEL_ (logistic_output.py).
    link: logit (normit/probit, cloglog too: the fit, tests and OUTPUT through that link; odds ratios need logit).
    param: effect, ref or glm (GLM: every level a column, the later ones aliased as SAS's; Type 3 and the default
    odds ratios from the same model in effect coding). contrasts [(label, [row {effect: [coefficients]}],
    {'estimate': parm|exp|both|None, 'alpha': a})], oddsratios [(label, var, {'at': {v: values}, 'diff':
    all|ref, 'alpha': a})], units {var: [number|SD|…]} with units_default, clodds (limits at model_alpha):
    logistic_tests.py; exact [(label, [effects | 'INTERCEPT'], {'joint', 'jointonly'})]: logistic_exact.py; their
    rows in stats['contrast_tests'], ['contrast_estimates'], ['contrast_coeffs'] (/ E: (label, rows [parameter,
    row 1, row 2 …])), ['oddsratios_wald'], ['clodds_wald'], ['exact_tests'].
    ref: {CLASS variable: REF= level | 'FIRST' | 'LAST'}: that level last among the variable's levels (SAS's
    CLASS var(REF=)).
    order: SAS's ORDER= of the CLASS levels ('data': first appearance, 'freq': descending count; else sorted)."""
    src = s.dataset(data)
    names_all = [c for c, _ in s.columns(src.scan_sql())]
    (yname,), effects = _design.parse_model(model, names_all, str(src), many_responses=False)
    method = (selection or "none").lower()
    if method not in ("none", "forward", "backward", "stepwise"):
        raise StatgridError(f"selection {selection!r} is not one of forward, backward, stepwise.")
    design, sql, _, n_missing = _design.prepare(s, src, effects, [], class_, raw=[yname], intercept=not noint,
                                                ref=ref, order=order)
    levels = [r[0] for r in s.con.sql(f"SELECT DISTINCT {qi(yname)} FROM ({sql}) ORDER BY 1 LIMIT 21").fetchall()]
    if len(levels) != 2:
        shown = ", ".join(repr(v) for v in levels[:20]) + (" …" if len(levels) > 20 else "")
        raise StatgridError(f"response {yname!r} of logistic must have exactly two levels; found {len(levels)}: "
                            f"{shown or 'none (no complete rows)'}. Recode it to two levels first.")
    if event is not None:
        match = [v for v in levels if str(v) == str(event) or _same_number(v, event)]
        if not match:
            raise StatgridError(f"event={event!r} is not a level of {yname!r}; its levels are "
                                f"{', '.join(repr(v) for v in levels)}.")
        ev = match[0]
    else:
        ev = levels[-1] if descending else levels[0]
    sql = f"SELECT *, CAST({qi(yname)} = {_literal(ev)} AS DOUBLE) AS __event FROM ({sql})"
    if param not in ("effect", "ref", "glm"):
        raise StatgridError(f"param {param!r} is not one of effect, ref, glm.")
    lk_name = {"normit": "probit", "logistic": "logit", "clog": "cloglog"}.get(str(link).lower(), str(link).lower())
    if lk_name not in ("logit", "probit", "cloglog"):
        raise StatgridError(f"link {link!r} of logistic is not one of LOGIT, PROBIT (NORMIT), CLOGLOG.")
    if exact and method != "none":
        raise StatgridError("EXACT is not performed with a model selection method (SAS: exact analyses need the "
                            "model as written); drop SELECTION= or fit the selected model again with EXACT.")
    if lk_name != "logit" and exact:
        raise StatgridError(f"EXACT (exact conditional logistic tests) needs LINK=LOGIT; the model's link is "
                            f"{lk_name.upper()}.")
    if lk_name != "logit" and (oddsratios or units or clodds):
        raise StatgridError(f"odds ratios (ODDSRATIO, UNITS, CLODDS=) need LINK=LOGIT; the model's link is "
                            f"{lk_name.upper()}. Drop them or fit with LINK=LOGIT.")
    if param == "glm":
        T, cnames, cslices = np.eye(design.width), design.column_names(), design.slices()
    else:
        T, cnames, cslices = design.coding(param)
    rows, n = model_rows(s, design, sql, T, "__event")
    p = T.shape[1]
    base = [0] if not noint else []
    eff_cols = [list(range(sl.start, sl.stop)) for sl in cslices]

    fam = _irls.family("binomial")
    lk = _irls.link(lk_name, fam)
    fits: dict[tuple[int, ...], _irls.GLMFit] = {}

    def cols_of(chosen: list[int]) -> list[int]:
        return base + [c for i in sorted(chosen) for c in eff_cols[i]]

    def fit(chosen: list[int]) -> _irls.GLMFit:
        """The model of effects `chosen`, fitted once: selection steps and the report share fits."""
        key = tuple(sorted(chosen))
        if key not in fits:
            fits[key] = _irls.irls(rows, p, fam, lk, cols_of(chosen), maxiter=maxiter, tol=1e-10,
                                   what="logistic model", allow_separation=True)
        return fits[key]

    fixed = list(range(min(include, len(effects))))
    steps: list[list] = []
    if method == "none":
        chosen = list(range(len(effects)))
    else:
        chosen = _select(rows, fam, lk, fit, cols_of, effects, eff_cols, fixed, method, sle, sls, steps)
    final = fit(chosen)
    alt = _effect_coded(rows, design, effects, chosen, fam, lk, maxiter, noint) if param == "glm" else None
    result = _report(s, rows, final, cnames, design, effects, cslices, T, chosen, n, n_missing, yname, ev, lackfit,
                     lk, alt)
    if contrasts or oddsratios or units or clodds:
        result.stats.update(_statements(s, sql, rows, design, T, cnames, cslices, final, effects, chosen, contrasts,
                                        oddsratios, units, units_default, clodds, model_alpha))
    if exact:
        from statgrid.procs import logistic_exact
        chunks = list(rows)
        X = np.vstack([c[0] for c in chunks]) if chunks else np.zeros((0, T.shape[1]))
        y_all = np.concatenate([c[1] for c in chunks]) if chunks else np.zeros(0)
        result.stats["exact_tests"] = logistic_exact.exact(X, y_all, cnames, cslices, effects, bool(design.intercept),
                                                           exact, final.kept)
    result.stats["selection"] = steps
    result.stats["event"] = ev
    result.stats["levels"] = levels
    result.stats["class_levels"] = {c: list(design.levels[c]) for c in design.classes}     # in coding order
    result.stats["param"] = param
    if output is not None:
        from statgrid.procs import logistic_output
        rows_in = f"SELECT * FROM ({src.scan_sql()})"
        result.stats["output"] = logistic_output.scored(s, rows_in, design, T, final, ev, output, alpha, lk.inv)
    if print:
        s.log.listing(_listing(result, design, yname, ev, n, n_missing))
    if outest:
        result.out = s.write_table(outest, result.to_arrow())
    return result


# ---------------------------------------------------------------------------- selection
def _contains(big, small) -> bool:
    return set(small.variables) < set(big.variables)


def _score_tests(rows, fam, lk, fit: _irls.GLMFit, model_cols: list[int], candidates: dict[int, list[int]]):
    """Score χ² and DF for adding each candidate effect to the fitted model: with d = dμ/dη and V = μ(1 − μ),
    U = X'(y − μ)·d/V and the information X'WX, W = d²/V (for the logit d = V: U = X'(y − μ), W = V)."""
    cand_cols = [c for cols in candidates.values() for c in cols]
    allc = model_cols + cand_cols
    R = None
    U = np.zeros(len(cand_cols))
    beta = fit.beta[fit.kept]
    for X, y, w, off in rows:
        eta = X[:, fit.kept] @ beta + off
        mu = np.clip(lk.inv(eta), _irls.EPS, 1 - _irls.EPS)
        v = mu * (1 - mu)
        d = 1.0 / lk.deriv(mu)
        sw = np.sqrt(w * d * d / v)
        a = X[:, allc] * sw[:, None]
        R = _irls.fold_r(R, a)
        U += X[:, cand_cols].T @ (w * (y - mu) * d / v)
    k = len(model_cols)
    out = {}
    pos = k
    for e, cols in candidates.items():
        block = R[k:, pos:pos + len(cols)] if R.shape[0] > k else np.zeros((0, len(cols)))
        r22 = np.linalg.qr(block, mode="r") if block.shape[0] else block
        u = U[pos - k:pos - k + len(cols)]
        x, _, rank, _ = np.linalg.lstsq(r22.T, u, rcond=1e-10)
        out[e] = (float(x @ x), int(rank))
        pos += len(cols)
    return out


def _select(rows, fam, lk, fit, cols_of, effects, eff_cols, fixed, method, sle, sls, steps) -> list[int]:
    def enter(current: list[int]) -> int | None:          # the score test's smallest p-value, at SLE
        cand = {i: eff_cols[i] for i in range(len(effects)) if i not in current
                and all(j in current for j in range(len(effects)) if _contains(effects[i], effects[j]))}
        if not cand:
            return None
        model_fit = fit(current)
        model_cols = [c for c in cols_of(current) if c in model_fit.kept]
        scores = _score_tests(rows, fam, lk, model_fit, model_cols, cand)
        pv = {i: p_chi2(chi, df) if df else 1.0 for i, (chi, df) in scores.items()}
        i = min(pv, key=lambda k: (pv[k], -scores[k][0]))
        if not pv[i] <= sle:
            return None
        steps.append([len(steps) + 1, effects[i].name, "entered", scores[i][1], scores[i][0], pv[i], "score"])
        return i

    def remove(current: list[int]) -> int | None:         # the Wald test's largest p-value, above SLS
        removable = [i for i in current if i not in fixed
                     and not any(_contains(effects[j], effects[i]) for j in current)]
        if not removable:
            return None
        f = fit(current)
        cov = f.cov()
        stats = {}
        for i in removable:
            idx = [f.kept.index(c) for c in eff_cols[i] if c in f.kept]
            chi, df = _wald(f.beta[[f.kept[j] for j in idx]], cov[np.ix_(idx, idx)])
            stats[i] = (chi, df, p_chi2(chi, df) if df else 1.0)
        i = max(stats, key=lambda k: (stats[k][2], -stats[k][0]))
        if stats[i][2] <= sls:
            return None
        steps.append([len(steps) + 1, effects[i].name, "removed", stats[i][1], stats[i][0], stats[i][2], "Wald"])
        return i

    start = list(fixed) if method != "backward" else list(range(len(effects)))
    return sorted(stepwise(method, start, enter, remove))


# ---------------------------------------------------------------------------- report
def _report(s, rows, fit, cnames, design, effects, cslices, T, chosen, n, n_missing, yname, ev, lackfit, lk, alt=None):
    """The tables of the fit; `alt` (PARAM=GLM): (fit, T, slices) of the same model in effect coding, whose
    Type 3 tests and odds ratios are SAS's for the GLM coding (every cell filled)."""
    cov = fit.cov()
    se = fit.stderr()
    # predictions, separation check, unweighted QR of [X | y] for the score test of the global null
    p_hat, y_all = [], []
    R0 = None
    model_cols = fit.kept + fit.aliased
    for X, y, _w, off in rows:
        eta = X[:, fit.kept] @ fit.beta[fit.kept] + off
        p_hat.append(lk.inv(eta))
        y_all.append(y)
        R0 = _irls.fold_r(R0, np.column_stack([X[:, sorted(model_cols)], y]))
    p_hat = np.concatenate(p_hat)
    y_all = np.concatenate(y_all)
    perfect = ((y_all == 1) & (p_hat > 1 - 1e-8)) | ((y_all == 0) & (p_hat < 1e-8))
    if perfect.all() or fit.separated:
        # SAS LOGISTIC's warnings (the fit goes on, reported at its last iteration)
        s.log.warning("There is a complete separation of data points. The maximum likelihood estimate does not exist."
                      if perfect.all() else "There is possibly a quasi-complete separation of data points. The "
                      "maximum likelihood estimate may not exist.")
        s.log.warning("The LOGISTIC procedure continues in spite of the above warning. Results shown are based on "
                      "the last maximum likelihood iteration. Validity of the model fit is questionable.")
    events = float(y_all.sum())
    pbar = events / n
    intercept = bool(design.intercept)
    ll0 = (special.xlogy(events, pbar) + special.xlogy(n - events, 1 - pbar)) if intercept else n * math.log(0.5)
    m2ll0, m2ll = -2 * ll0, fit.deviance
    k = len(fit.kept)
    k0 = 1 if intercept else 0
    lr = m2ll0 - m2ll
    df_global = k - k0
    from statgrid.procs.regression import fit_from_r
    if R0.shape[0] < R0.shape[1]:
        R0 = np.vstack([R0, np.zeros((R0.shape[1] - R0.shape[0], R0.shape[1]))])
    ols = fit_from_r(R0, n, [f"c{i}" for i in range(R0.shape[1] - 1)], intercept)
    score = (ols.sst - ols.sse) / (pbar * (1 - pbar)) if intercept and 0 < pbar < 1 else float("nan")
    slopes = [i for i, c in enumerate(fit.kept) if not (intercept and c == 0)]
    wald, _ = _wald(fit.beta[[fit.kept[i] for i in slopes]], cov[np.ix_(slopes, slopes)])
    global_tests = [["Likelihood Ratio", lr, df_global, p_chi2(lr, df_global)],
                    ["Score", score, df_global, p_chi2(score, df_global)],
                    ["Wald", wald, df_global, p_chi2(wald, df_global)]]
    fit_stats = [["AIC", m2ll0 + 2 * k0, m2ll + 2 * k], ["SC", m2ll0 + k0 * math.log(n), m2ll + k * math.log(n)],
                 ["-2 Log L", m2ll0, m2ll]]
    # estimates of the effects in the model
    in_model = set(k0 * [0]) | {c for i in chosen for c in range(cslices[i].start, cslices[i].stop)}
    est_rows = []
    for j, nm in enumerate(cnames):
        if j not in in_model:
            continue
        if j in fit.aliased:
            est_rows.append([nm, 0, 0.0, None, None, None])
            continue
        b = float(fit.beta[j])
        chi = (b / se[j]) ** 2 if se[j] > 0 else float("nan")
        est_rows.append([nm, 1, b, float(se[j]), chi, p_chi2(chi, 1)])
    t_fit, t_T, t_slices = alt if alt is not None else (fit, T, cslices)
    t_cov = t_fit.cov() if alt is not None else cov
    type3 = []
    for i in chosen:
        idx = [t_fit.kept.index(c) for c in range(t_slices[i].start, t_slices[i].stop) if c in t_fit.kept]
        chi, df = _wald(t_fit.beta[[t_fit.kept[j] for j in idx]], t_cov[np.ix_(idx, idx)])
        type3.append([effects[i].name, df, chi, p_chi2(chi, df)])
    odds = _odds_ratios(design, effects, chosen, t_T, t_fit, t_cov) if lk.name == "logit" else []
    assoc = association(p_hat, y_all)
    result = ResultTable(["Parameter", "DF", "Estimate", "StdErr", "WaldChiSq", "ProbChiSq"], est_rows)
    result.stats = {"n": n, "n_missing": n_missing, "events": int(events), "fit": fit_stats,
                    "global": global_tests, "type3": type3, "odds_ratios": odds, "association": assoc,
                    "m2loglik": m2ll, "m2loglik_intercept": m2ll0, "iterations": fit.iterations,
                    "effects": [effects[i].name for i in chosen], "link": lk.name}
    if lackfit:
        result.stats["hosmer_lemeshow"] = hosmer_lemeshow(p_hat, y_all)
    return result


def _effect_coded(rows, design, effects, chosen, fam, lk, maxiter, noint):
    """PARAM=GLM: the same model in effect coding, (fit, T, slices), for its Type 3 tests and odds ratios."""
    from statgrid.procs.genmod_tests import Mapped
    T, _, slices = design.coding("effect")
    cols = ([] if noint else [0]) + [c for i in sorted(chosen) for c in range(slices[i].start, slices[i].stop)]
    fit = _irls.irls(Mapped(rows, T), T.shape[1], fam, lk, cols, maxiter=maxiter, tol=1e-10,
                     what="logistic model", allow_separation=True)
    return fit, T, slices


def _statements(s, sql, rows, design, T, cnames, cslices, fit, effects, chosen, contrasts, oddsratios, units,
                units_default, clodds, alpha) -> dict:
    """CONTRAST, ODDSRATIO, UNITS/CLODDS rows (logistic_tests.py)."""
    from statgrid.procs import logistic_tests as lt
    from statgrid.procs.genmod_tests import design_null_space
    null = design_null_space(rows, T.shape[1]) if fit.aliased else np.zeros((T.shape[1], 0))
    m = lt.Model(design, T, cnames, cslices, fit, null, s.log)
    out: dict = {"contrast_tests": [], "contrast_estimates": [], "oddsratios_wald": [], "clodds_wald": []}
    for label, specs, opts in contrasts or ():
        test, est = lt.contrast(m, label, specs, opts.get("estimate"), float(opts.get("alpha", 0.05)))
        out["contrast_tests"].append(test)
        out["contrast_estimates"] += est
        if opts.get("e"):                            # CONTRAST / E: the L matrix over the coded parameters
            L = np.array([lt.l_row(m, sp, label) for sp in specs])
            out.setdefault("contrast_coeffs", []).append((label, [[nm, *map(float, L[:, j])]
                                                                  for j, nm in enumerate(cnames)]))
    units = dict(units or {})
    cont = {v.upper(): v for v in design.continuous}
    for v in units:
        if v.upper() not in cont and v.upper() not in {c.upper() for c in design.classes}:
            raise StatgridError(f"UNITS names {v!r}, which is not a variable of the model; its continuous "
                                f"variables: {', '.join(design.continuous) or 'none'}.")
    mom = lt.moments(s, sql, design.continuous) if (oddsratios or units or clodds) else {}
    for label, var, opts in oddsratios or ():
        texts = next((u for k, u in units.items() if k.upper() == str(var).upper()), units_default or ["1"])
        us = [lt.unit_value(t, var, mom.get(cont.get(str(var).upper(), ""), (0.0, float("nan")))[1])
              for t in texts] if str(var).upper() in cont else [1.0]
        out["oddsratios_wald"] += lt.oddsratio(m, label, var, opts.get("at"), opts.get("diff", "all"),
                                               float(opts.get("alpha", alpha)), us, mom)
    if units or clodds:
        out["clodds_wald"] = lt.clodds(m, effects, chosen, units, units_default, mom, alpha)
    return out


def _exp(v: float) -> float:
    """exp that gives inf past the largest double instead of raising (an odds ratio limit of a
    nearly separated or nearly collinear effect)."""
    return math.exp(v) if v < 709.0 else math.inf


def _odds_ratios(design, effects, chosen, T, fit, cov) -> list[list]:
    out = []
    in_interaction = {v for i in chosen if len(effects[i].variables) > 1 for v in effects[i].variables}
    over_slices = design.slices()
    for i in chosen:
        e = effects[i]
        if len(e.variables) > 1 or e.variables[0] in in_interaction:
            continue
        sl = over_slices[design.effects.index(e)]
        cls = design.effect_classes(e)
        pairs = []
        if not cls:
            L = np.zeros(T.shape[0])
            L[sl.start] = 1.0
            pairs.append((e.name, L))
        else:
            levels = design.levels[cls[0]]
            for a in range(len(levels) - 1):
                L = np.zeros(T.shape[0])
                L[sl.start + a] = 1.0
                L[sl.start + len(levels) - 1] = -1.0
                pairs.append((f"{e.name} {_design.level_text(levels[a])} vs {_design.level_text(levels[-1])}", L))
        for label, L in pairs:
            lc = L @ T
            if fit.aliased and np.any(np.abs(lc[fit.aliased]) > 0):
                continue
            lk = lc[fit.kept]
            est = float(lk @ fit.beta[fit.kept])
            se = math.sqrt(float(lk @ cov @ lk))
            out.append([label, _exp(est), _exp(est - Z95 * se), _exp(est + Z95 * se)])
    return out


def association(p_hat: np.ndarray, y: np.ndarray) -> dict:
    """Concordant, discordant and tied event/non-event pairs of predicted probabilities, counted
    exactly by sorting (O(n log n)); c, Somers' D, Gamma, Tau-a as SAS defines them."""
    ev = np.sort(p_hat[y == 1])
    non = np.sort(p_hat[y == 0])
    lo = np.searchsorted(non, ev, "left").astype(np.float64)
    hi = np.searchsorted(non, ev, "right").astype(np.float64)
    conc, tied = float(lo.sum()), float((hi - lo).sum())
    pairs = float(ev.size) * float(non.size)
    disc = pairs - conc - tied
    n = y.size
    return {"pairs": int(pairs), "concordant_pct": 100 * conc / pairs if pairs else float("nan"),
            "discordant_pct": 100 * disc / pairs if pairs else float("nan"),
            "tied_pct": 100 * tied / pairs if pairs else float("nan"),
            "somers_d": (conc - disc) / pairs if pairs else float("nan"),
            "gamma": (conc - disc) / (conc + disc) if conc + disc else float("nan"),
            "tau_a": (conc - disc) / (0.5 * n * (n - 1)) if n > 1 else float("nan"),
            "c": (conc + 0.5 * tied) / pairs if pairs else float("nan")}


def hosmer_lemeshow(p_hat: np.ndarray, y: np.ndarray) -> dict:
    """SAS's partition: observations sorted by predicted probability, equal probabilities kept
    together; with M = [0.1·N + 0.5], a block of n_j tied observations joins the current group if
    the group has c < M and c + [n_j / 2] ≤ M, else starts a new group; a last group of at most
    [0.05·N] observations joins the one before. χ² = Σ (O − E)² / (E (1 − E/n_g)), DF = groups − 2."""
    order = np.argsort(p_hat, kind="stable")
    ps, ys = p_hat[order], y[order]
    _, start, counts = np.unique(ps, return_index=True, return_counts=True)
    n = ps.size
    target = int(0.1 * n + 0.5)
    groups: list[list[int]] = []          # [begin, end) per group
    c = 0
    for b, nj in zip(start, counts):
        if groups and c < target and c + nj // 2 <= target:
            groups[-1][1] = b + nj
            c += nj
        else:
            groups.append([b, b + nj])
            c = nj
    if len(groups) > 1 and groups[-1][1] - groups[-1][0] <= int(0.05 * n):
        groups[-2][1] = groups[-1][1]
        groups.pop()
    table, chi = [], 0.0
    for begin, end in groups:
        ng = end - begin
        obs = float(ys[begin:end].sum())
        exp = float(ps[begin:end].sum())
        table.append([len(table) + 1, int(ng), obs, exp, ng - obs, ng - exp])
        if exp > 0 and ng - exp > 0:
            chi += (obs - exp) ** 2 / (exp * (1 - exp / ng))
    df = len(table) - 2
    return {"chisq": chi, "df": df, "p": p_chi2(chi, df) if df > 0 else float("nan"), "table": table}


def _listing(t: ResultTable, design, yname, ev, n, n_missing) -> str:
    st = t.stats
    parts = [f"The LOGISTIC Procedure\n\nResponse Variable {yname}\nNumber of Observations Read {n + n_missing}\n"
             f"Number of Observations Used {n}\nProbability modeled is {yname}={ev}.\n"]
    if design.classes:
        parts.append(render_table(["Class", "Levels", "Values"],
                                  [[c, len(design.levels[c]), " ".join(str(v) for v in design.levels[c])]
                                   for c in design.classes], title="Class Level Information"))
    if st["selection"]:
        parts.append(render_table(["Step", "Effect", "Action", "DF", "Chi-Square", "Pr > ChiSq", "Test"],
                                  st["selection"], title="Summary of Selection"))
    parts.append(f"Convergence criterion satisfied after {st['iterations']} iterations.\n")
    parts.append(render_table(["Criterion", "Intercept Only", "Intercept and Covariates"], st["fit"],
                              title="Model Fit Statistics"))
    parts.append(render_table(["Test", "Chi-Square", "DF", "Pr > ChiSq"], st["global"],
                              title="Testing Global Null Hypothesis: BETA=0"))
    if design.classes and st["type3"]:
        parts.append(render_table(["Effect", "DF", "Wald Chi-Square", "Pr > ChiSq"], st["type3"],
                                  title="Type 3 Analysis of Effects"))
    parts.append(render_table(["Parameter", "DF", "Estimate", "Standard Error", "Wald Chi-Square", "Pr > ChiSq"],
                              t.rows, title="Analysis of Maximum Likelihood Estimates"))
    if st["odds_ratios"]:
        parts.append(render_table(["Effect", "Point Estimate", "95% Wald Lower", "95% Wald Upper"],
                                  st["odds_ratios"], title="Odds Ratio Estimates"))
    a = st["association"]
    parts.append(render_table(["Statistic", "Value", "Statistic", "Value"], [
        ["Percent Concordant", a["concordant_pct"], "Somers' D", a["somers_d"]],
        ["Percent Discordant", a["discordant_pct"], "Gamma", a["gamma"]],
        ["Percent Tied", a["tied_pct"], "Tau-a", a["tau_a"]],
        ["Pairs", a["pairs"], "c", a["c"]]], title="Association of Predicted Probabilities and Observed Responses"))
    if "hosmer_lemeshow" in st:
        hl = st["hosmer_lemeshow"]
        parts.append(render_table(["Group", "Total", "Events Observed", "Events Expected", "Nonevents Observed",
                                   "Nonevents Expected"], hl["table"], title="Partition for the Hosmer and "
                                                                               "Lemeshow Test"))
        parts.append(render_table(["Chi-Square", "DF", "Pr > ChiSq"], [[hl["chisq"], hl["df"], hl["p"]]],
                                  title="Hosmer and Lemeshow Goodness-of-Fit Test"))
    return "\n".join(parts)
