"""PROC GLIMMIX for a binary response: a logistic model with a random intercept per subject.

GLIMMIX. glimmix() fits a logistic model with a random intercept per subject with statsmodels'
BinomialBayesMixedGLM: method='vb' (variational Bayes, mean-field Gaussian approximation to the
posterior) or 'map' (posterior mode with a Laplace approximation). SAS GLIMMIX's default,
residual pseudo-likelihood (RSPL), is not available in statsmodels: the listing and the log say
which method was used and that it is not RSPL. The priors are N(0, 10²) on each fixed effect and
N(0, 1) on the log of the random-intercept standard deviation. Estimates are posterior means, their
standard errors posterior standard deviations, with normal (z) tests. The random-intercept variance
reported is exp(2m), m the posterior mean (VB) or mode (MAP) of the log standard deviation. With
MAP the joint posterior mode often collapses that variance to ~0 (a known degenerate mode, not an
estimate): that, or an optimiser that does not converge, is an error. As in SAS, the probability
modelled is that of the first ordered response level unless event= names the level ('first',
'last' or a value). The variance's standard error is the delta-method 2·v·sd(log SD). No Type 3
tests are given: VB's mean-field posterior has no correlations between fixed effects to test with.

The statements, the rows used and the fixed-effects design are those of PROC MIXED
(statgrid.procs._mixed_setup); data are held in memory as there.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import design as _design
from statgrid.procs._base import ResultTable, as_list, format_value, procedure, render_table
from statgrid.procs._mixed_gls import _blocks
from statgrid.procs._mixed_setup import Setup, _class_table, _fixed, _kv, _setup, _solution_rows

FE_PRIOR_SD = 10.0      # GLIMMIX: prior SD of each fixed effect (logit scale)
VC_PRIOR_SD = 1.0       # GLIMMIX: prior SD of log(random-intercept SD)
SEED = 0                # GLIMMIX: statsmodels draws starting values; fixed for reproducible results

GLIMMIX_METHODS = {
    "vb": "Variational Bayes (mean-field Gaussian), statsmodels BinomialBayesMixedGLM.fit_vb",
    "map": "Posterior mode with Laplace approximation, statsmodels BinomialBayesMixedGLM.fit_map",
}


@procedure("PROCEDURE GLIMMIX")
def glimmix(s, data: str, model: str, random: str, subject: str | Sequence[str], class_: str | Sequence[str] | None = None,
            event: Any = None, method: str = "vb", print: bool = True, data_label: str | None = None,
            solution: bool = True, ref: dict | None = None) -> ResultTable:
    """Logistic model for a binary response with a random intercept per subject (random='intercept').
    Returns the Solution for Fixed Effects (Effect, CLASS levels, Estimate, StdErr, zValue, Probz;
    posterior mean and SD, normal tests) with `stats`: covparms, method, method_description,
    event, response_levels, n_read, n_used, subjects, iterations. event= is 'first' (SAS's default:
    the lowest ordered level), 'last' or a response value. method 'vb' or 'map' — not SAS's RSPL
    (see the module docstring). data_label: the data set's name for the listing (default: `data`'s own name);
    solution: the listing shows the Solution for Fixed Effects (SAS: MODEL / S); ref: CLASS var(REF=) levels."""
    meth = method.lower()
    if meth not in GLIMMIX_METHODS:
        raise StatgridError(f"method={method!r} is not one of {', '.join(GLIMMIX_METHODS)} (SAS's RSPL "
                            "pseudo-likelihood is not available).")
    terms = as_list(random)
    if [t.lower() for t in terms] not in (["intercept"], ["int"]):
        raise StatgridError(f"random={random!r} is not supported: glimmix fits a random intercept per subject only "
                            "(random='intercept').")
    if subject is None:
        raise StatgridError("glimmix needs subject= (the unit that gets a random intercept), e.g. subject='id'.")
    st = _setup(s, data, model, class_, subject, [], "PROC GLIMMIX", numeric_dep=False, ref=ref)
    df = st.df
    n = len(df)
    resp = df[st.dep]
    values = _design.levels_of(s, st.sql, [st.dep])[st.dep].to_pylist()
    if len(values) != 2:
        shown = ", ".join(format_value(v) for v in values[:10]) + (" ..." if len(values) > 10 else "")
        raise StatgridError(f"response {st.dep!r} must be binary (two values) for the binomial model; found "
                            f"{len(values)} value(s): {shown}.")
    if event is None or (isinstance(event, str) and event.lower() == "first"):
        ev = values[0]
    elif isinstance(event, str) and event.lower() == "last":
        ev = values[1]
    else:
        match = [v for v in values if v == event or format_value(v) == str(event)]
        if not match:
            raise StatgridError(f"event={event!r} is not a value of {st.dep!r}; its values are "
                                f"{', '.join(format_value(v) for v in values)} (or use 'first' / 'last').")
        ev = match[0]
    b = _blocks(df, st.subject)
    if b.g < 2:
        raise StatgridError(f"subject {st.subject_name!r} has {b.g} level among the {n} observations used; a random "
                            "intercept per subject needs at least 2 subjects.")
    design = _fixed(st, s.options.memsize_bytes)
    y = (resp == ev).to_numpy(dtype=float)

    from scipy import sparse
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    codes = np.empty(n, dtype=int)
    codes[b.order] = b.gidx
    Zs = sparse.csr_array((np.ones(n), (np.arange(n), codes)), shape=(n, b.g))
    bm = BinomialBayesMixedGLM(y, design.X, Zs, np.zeros(b.g, dtype=int), vcp_p=VC_PRIOR_SD, fe_p=FE_PRIOR_SD)
    rng = np.random.default_rng(SEED)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            fit = bm.fit_vb(rng=rng) if meth == "vb" else bm.fit_map(rng=rng)
        except (np.linalg.LinAlgError, ValueError, FloatingPointError) as exc:
            raise StatgridError(f"the GLIMMIX fit ({meth}) failed numerically ({exc}); try method='vb' or check "
                                "for separation (a covariate that predicts the response perfectly).") from None
    ret = fit.optim_retvals
    nit = int(getattr(ret, "nit", 0) or 0)
    if not getattr(ret, "success", True):
        raise StatgridError(f"the GLIMMIX {meth.upper()} optimisation did not converge after {nit} iterations "
                            f"({getattr(ret, 'message', '')}); " +
                            ("use method='vb'." if meth == "map" else "rescale the covariates or simplify the model."))
    var = float(np.exp(2 * fit.vcp_mean[0]))
    var_se = float(2 * var * fit.vcp_sd[0]) if np.isfinite(fit.vcp_sd[0]) else float("nan")
    if meth == "map" and var < 1e-8:
        raise StatgridError(f"the posterior mode collapsed the random-intercept variance to {var:.3g}: the joint "
                            "mode of statsmodels' fit_map is degenerate for variance components, not an estimate; "
                            "use method='vb'.")
    est = np.asarray(fit.fe_mean, dtype=float)
    se = np.asarray(fit.fe_sd, dtype=float)
    columns, rows = _solution_rows(st, design, est, se, None, "zValue", lambda z, _df: _p_z(z))
    covparms = [{"CovParm": "Intercept", "Subject": st.subject_name, "Estimate": var, "StdErr": var_se}]
    note = (f"GLIMMIX estimation: {GLIMMIX_METHODS[meth]}; this is not SAS's default RSPL (residual "
            f"pseudo-likelihood). Priors: N(0, {FE_PRIOR_SD:g}^2) on fixed effects, N(0, {VC_PRIOR_SD:g}^2) on the "
            "log random-intercept SD.")
    s.log.note(note)
    result = ResultTable(columns, rows)
    result.stats = {"covparms": covparms, "method": meth, "method_description": GLIMMIX_METHODS[meth],
                    "event": ev, "response_levels": values, "n_read": st.n_read, "n_used": n, "subjects": b.g,
                    "iterations": nit, "dependent": st.dep, "note": note}
    if print:
        s.log.listing(_glimmix_listing(st, result, resp, note, data_label, solution))
    return result


def _p_z(z: float) -> float:
    from scipy.special import ndtr
    return float(2 * ndtr(-abs(z))) if math.isfinite(z) else float("nan")


def _glimmix_listing(st: Setup, r: ResultTable, resp, note: str, data_label: str | None = None,
                     solution: bool = True) -> str:
    x = r.stats
    info = [["Data Set", data_label or str(st.src)], ["Response Variable", st.dep], ["Response Distribution", "Binomial"],
            ["Link Function", "Logit"], ["Variance Function", "Default"], ["Variance Matrix Blocked By", st.subject_name],
            ["Estimation Technique", x["method_description"]], ["Degrees of Freedom Method", "None (z tests)"]]
    parts = ["The GLIMMIX Procedure", _kv(info, title="Model Information"), f"NOTE: {note}\n"]
    cls = _class_table(st)
    if cls:
        parts.append(cls)
    parts.append(_kv([["Number of Observations Read", x["n_read"]],
                                         ["Number of Observations Used", x["n_used"]]], title="Number of Observations"))
    counts = resp.value_counts()
    parts.append(render_table(["Ordered Value", st.dep, "Total Frequency"],
                              [[i + 1, format_value(v), int(counts.get(v, 0))] for i, v in enumerate(x["response_levels"])],
                              title="Response Profile"))
    parts.append(f"The GLIMMIX procedure is modeling the probability that {st.dep}='{format_value(x['event'])}'.\n")
    parts.append(_kv([["Subjects (Blocks in V)", x["subjects"]],
                                         ["Iterations", x["iterations"]]], title="Dimensions"))
    parts.append(render_table(["Cov Parm", "Subject", "Estimate", "Standard Error"],
                              [[c["CovParm"], c["Subject"], c["Estimate"], c["StdErr"]] for c in x["covparms"]],
                              title="Covariance Parameter Estimates"))
    if solution:
        parts.append(render_table(r.columns, r.rows, title="Solution for Fixed Effects (posterior mean and SD)"))
    return "\n".join(parts)
