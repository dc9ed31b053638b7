"""PROC LOGISTIC's CONTRAST, ODDSRATIO and UNITS statements on a fitted binary model (SAS/STAT User's Guide, The
LOGISTIC Procedure: CONTRAST, ODDSRATIO and UNITS statements; "Odds Ratio Estimation"; "Testing Linear Hypotheses
about the Regression Coefficients"):

  - CONTRAST 'label' rows: L over the model's parameters *as the CLASS statement's PARAM= codes them* (EFFECT, REF
    or GLM — not GLM's over-parameterized columns filled in from contained effects): an effect not named is 0,
    missing trailing coefficients are 0, extra ones are ignored with a WARNING. The Wald χ² (Lb)'(LVL')⁻(Lb) on
    DF = rank L ("Contrast Test Results"); ESTIMATE=PARM|EXP|BOTH adds each row's l'b (PARM) and/or exp(l'b) (EXP)
    with Wald limits at ALPHA= (EXP: the limits exponentiated, the standard error exp(l'b)·se by the delta
    method) and the row's Wald χ² ("Contrast Estimation and Testing Results by Row"). A row that is not
    estimable (PARAM=GLM, or columns aliased by the data) makes the contrast's values missing with a WARNING.
  - ODDSRATIO <'label'> var </ AT(v=values|ALL|REF …) DIFF=ALL|REF CL=WALD ALPHA=>: the log odds ratio is the
    difference of the linear predictors of two profiles that differ only in `var` — for a CLASS variable each
    pair of levels (DIFF=ALL, the default: every i < j; DIFF=REF: each level against the last), for a continuous
    one its mean against its mean + each UNITS value (1 by default). Variables that interact with `var` are held
    at AT's values, by default each level of a CLASS variable and the mean of a continuous one, and the label
    says so ("a 1 vs 2 at x=4.5"). Independent of PARAM= (the profiles go through the coding).
  - UNITS var=list </ DEFAULT=list>: the odds ratio of a change of `number`, `SD`, `-SD` or `number*SD` (SD the
    sample standard deviation of the variable over the rows used) in a continuous main effect not inside an
    interaction: exp(u·β) with Wald limits ("Odds Ratio Estimates and Wald Confidence Intervals", with the CLASS
    main effects' odds ratios against the last level as MODEL / CLODDS=WALD gives them).
Odds ratios need LINK=LOGIT: with another link they are an error that says so.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._irls import special
from statgrid.procs.design import level_text
from statgrid.procs.genmod import p_chi2

ESTIMATE_KINDS = ("parm", "exp", "both")


def _exp(v: float) -> float:
    return math.exp(v) if v < 709.0 else math.inf


class Model:
    """What the statements need of a fit: the design, its coding T (over-parameterized → coded columns), the
    coded columns' names and each effect's coded slice, the fit, and the rows' null space (coded columns)."""

    def __init__(self, design: Any, T: np.ndarray, cnames: list[str], cslices: list[slice], fit: Any,
                 null: np.ndarray, log: Any = None):
        self.design, self.T, self.cnames, self.cslices, self.fit, self.null, self.log = \
            design, T, cnames, cslices, fit, null, log
        self.cov = fit.cov()

    def estimate(self, lc: np.ndarray) -> tuple[float, float] | None:
        """l'b and its standard error for l over the coded columns; None when not estimable (or naming columns of
        an effect the selection left out of the model)."""
        inside = set(self.fit.kept) | set(self.fit.aliased)
        if any(v != 0 for j, v in enumerate(lc) if j not in inside):
            return None
        if self.null.size and np.max(np.abs(lc @ self.null)) > 1e-7 * max(1.0, float(np.abs(lc).max())):
            return None
        kept = self.fit.kept
        lk = lc[kept]
        return float(lk @ self.fit.beta[kept]), math.sqrt(max(float(lk @ self.cov @ lk), 0.0))


# ------------------------------------------------------------------------------------------------ CONTRAST
def l_row(m: Model, spec: dict, label: str) -> np.ndarray:
    """One row of L over the coded parameters from {effect: coefficients}."""
    L = np.zeros(m.T.shape[1])
    by_name = {e.name.upper(): (e, sl) for e, sl in zip(m.design.effects, m.cslices)}
    for name, coeffs in spec.items():
        coeffs = [float(c) for c in coeffs]
        if name.upper() == "INTERCEPT":
            if not m.design.intercept:
                raise StatgridError(f"CONTRAST {label!r} names INTERCEPT but the model has none (NOINT); drop it.")
            L[0] = coeffs[0] if coeffs else 0.0
            continue
        if name.upper() not in by_name:
            raise StatgridError(f"effect {name!r} of CONTRAST {label!r} is not in the model; its effects: "
                                f"{', '.join(e.name for e in m.design.effects) or 'none'}.")
        e, sl = by_name[name.upper()]
        width = sl.stop - sl.start
        if len(coeffs) > width and m.log is not None:
            m.log.warning(f"Effect {e.name} has {width} parameter(s) in the CONTRAST {label!r}; the extra "
                          f"{len(coeffs) - width} coefficient(s) are ignored.")
        coeffs = coeffs[:width]
        L[sl.start:sl.start + len(coeffs)] = coeffs
    return L


def contrast(m: Model, label: str, specs: Sequence[dict], estimate: str | None = None, alpha: float = 0.05
             ) -> tuple[list, list[list]]:
    """([Contrast, DF, WaldChiSq, ProbChiSq], rows [Contrast, Type, Row, Estimate, StdErr, Alpha, LowerLimit,
    UpperLimit, WaldChiSq, ProbChiSq] for ESTIMATE=)."""
    kind = (estimate or "").lower() or None
    if kind is not None and kind not in ESTIMATE_KINDS:
        raise StatgridError(f"ESTIMATE={estimate} in CONTRAST {label!r} is not one of PARM, EXP, BOTH.")
    if not 0 < alpha < 1:
        raise StatgridError(f"ALPHA={alpha:g} in CONTRAST {label!r} must be between 0 and 1 (e.g. ALPHA=0.05).")
    L = np.array([l_row(m, s, label) for s in specs])
    got = [m.estimate(r) for r in L]
    if any(g is None for g in got):
        if m.log is not None:
            m.log.warning(f"Contrast {label!r} is not estimable.")
        return [label, None, None, None], []
    kept = m.fit.kept
    Lk = L[:, kept]
    rank = int(np.linalg.matrix_rank(Lk))
    if rank == 0:
        test = [label, 0, 0.0, None]
    else:
        lb = Lk @ m.fit.beta[kept]
        chi = float(lb @ np.linalg.pinv(Lk @ m.cov @ Lk.T) @ lb)
        test = [label, rank, chi, p_chi2(chi, rank)]
    rows: list[list] = []
    if kind is not None:
        z = float(special.ndtri(1 - alpha / 2))
        for i, (est, se) in enumerate(got, start=1):
            chi = (est / se) ** 2 if se > 0 else float("nan")
            p = p_chi2(chi, 1)
            if kind in ("parm", "both"):
                rows.append([label, "PARM", i, est, se, alpha, est - z * se, est + z * se, chi, p])
            if kind in ("exp", "both"):
                e = _exp(est)
                rows.append([label, "EXP", i, e, e * se, alpha, _exp(est - z * se), _exp(est + z * se), chi, p])
    return test, rows


# ------------------------------------------------------------------------------------------------ odds ratios
def moments(s: Any, sql: str, names: Sequence[str]) -> dict[str, tuple[float, float]]:
    """{variable: (mean, sample standard deviation)} over the rows of `sql` (the rows the model used)."""
    from statgrid.procs._base import qi
    if not names:
        return {}
    parts = ", ".join(f"AVG({qi(v)}), STDDEV_SAMP({qi(v)})" for v in names)
    row = s.con.sql(f"SELECT {parts} FROM ({sql})").fetchall()[0]
    return {v: (float(row[2 * i]), float(row[2 * i + 1]) if row[2 * i + 1] is not None else float("nan"))
            for i, v in enumerate(names)}


def unit_value(text: str, var: str, sd: float) -> float:
    """One UNITS entry: number, SD, -SD, number*SD."""
    t = str(text).replace(" ", "").upper()
    try:
        if t.endswith("SD"):
            head = t[:-2].rstrip("*")
            k = -1.0 if head == "-" else (1.0 if head in ("", "+") else float(head))
            return k * sd
        v = float(t)
    except ValueError:
        raise StatgridError(f"UNITS {var}={text} is not a number, SD, -SD or number*SD (e.g. {var}=10 or "
                            f"{var}=2*SD).") from None
    if v == 0:
        raise StatgridError(f"UNITS {var}=0: a unit of change must be nonzero (e.g. {var}=1).")
    return v


def _profile_row(m: Model, levels: dict, values: dict) -> np.ndarray:
    """The coded design row of one profile: CLASS variable → level, continuous variable → value."""
    d = m.design
    codes = {c: np.array([d.levels[c].index(levels[c]) if c in levels else 0]) for c in d.classes}
    vals = {v: np.array([float(values.get(v, 0.0))]) for v in d.continuous}
    return (d.build(codes, vals, 1) @ m.T)[0]


def _interacting(m: Model, var: str) -> list[str]:
    out: list[str] = []
    for e in m.design.effects:
        if var in e.variables:
            out += [v for v in e.variables if v != var and v not in out]
    return out


def _match_level(levels: list, text: Any, var: str) -> Any:
    for v in levels:
        if str(v) == str(text) or level_text(v) == str(text) or (not isinstance(v, str) and _num_eq(v, text)):
            return v
    raise StatgridError(f"AT {var}={text!r} is not a level of {var}; its levels: "
                        f"{', '.join(level_text(v) for v in levels)}.")


def _num_eq(v, text) -> bool:
    try:
        return float(v) == float(text)
    except (TypeError, ValueError):
        return False


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def oddsratio(m: Model, label: str | None, var: str, at: dict | None, diff: str, alpha: float,
              units: Sequence[float], mom: dict) -> list[list]:
    """Rows [Label, Effect (the odds ratio's description), Estimate, LowerCL, UpperCL] of one ODDSRATIO."""
    d = m.design
    names = {v.upper(): v for v in [*d.classes, *d.continuous]}
    if var.upper() not in names:
        raise StatgridError(f"ODDSRATIO variable {var!r} is not in the model; its variables: "
                            f"{', '.join(names.values()) or 'none'}.")
    var = names[var.upper()]
    diff = diff.lower()
    if diff not in ("all", "ref"):
        raise StatgridError(f"DIFF={diff.upper()} in ODDSRATIO {var} is not one of ALL, REF.")
    at_in = {names.get(k.upper(), k): v for k, v in (at or {}).items()}
    for k in at_in:
        if k not in names.values():
            raise StatgridError(f"AT variable {k!r} of ODDSRATIO {var} is not in the model.")
    settings: list[tuple[dict, dict, str]] = [({}, {}, "")]          # (levels, values, label suffix)
    for v in _interacting(m, var):
        nxt = []
        if v in d.classes:
            spec = at_in.get(v, ["ALL"])
            spec = [spec] if isinstance(spec, str) else list(spec)
            if [str(x).upper() for x in spec] == ["ALL"]:
                chosen = list(d.levels[v])
            elif [str(x).upper() for x in spec] == ["REF"]:
                chosen = [d.levels[v][-1]]
            else:
                chosen = [_match_level(d.levels[v], x, v) for x in spec]
            for lv, vals, suf in settings:
                nxt += [({**lv, v: c}, vals, f"{suf} {v}={level_text(c)}") for c in chosen]
        else:
            spec = at_in.get(v)
            chosen = [float(x) for x in ([spec] if isinstance(spec, (str, int, float)) else spec)] if spec \
                else [mom[v][0]]
            for lv, vals, suf in settings:
                nxt += [(lv, {**vals, v: c}, f"{suf} {v}={_fmt(c)}") for c in chosen]
        settings = nxt
    z = float(special.ndtri(1 - alpha / 2))
    out = []
    for lv, vals, suf in settings:
        at_text = f" at{suf}" if suf else ""
        if var in d.classes:
            levels = d.levels[var]
            pairs = ([(a, b) for i, a in enumerate(levels) for b in levels[i + 1:]] if diff == "all"
                     else [(a, levels[-1]) for a in levels[:-1]])
            contrasts = [(f"{var} {level_text(a)} vs {level_text(b)}{at_text}",
                          _profile_row(m, {**lv, var: a}, vals) - _profile_row(m, {**lv, var: b}, vals))
                         for a, b in pairs]
        else:
            base = {**vals, var: vals.get(var, mom[var][0])}
            contrasts = [(f"{var}{'' if u == 1 else f' Units={_fmt(u)}'}{at_text}",
                          _profile_row(m, lv, {**base, var: base[var] + u}) - _profile_row(m, lv, base))
                         for u in units]
        for text, lc in contrasts:
            got = m.estimate(lc)
            if got is None:
                out.append([label or "", text, None, None, None])
                continue
            est, se = got
            out.append([label or "", text, _exp(est), _exp(est - z * se), _exp(est + z * se)])
    return out


def clodds(m: Model, effects: list, chosen: list[int], units: dict, default: Sequence[str] | None, mom: dict,
           alpha: float) -> list[list]:
    """Rows [Effect, Unit, Estimate, LowerCL, UpperCL]: each main effect not inside an interaction — a
    continuous one per unit of UNITS (or DEFAULT=, else 1), a CLASS one each level against the last."""
    d = m.design
    upper = {k.upper(): v for k, v in units.items()}
    z = float(special.ndtri(1 - alpha / 2))
    inside = {v for i in chosen if len(effects[i].variables) > 1 for v in effects[i].variables}
    out = []
    for i in chosen:
        e = effects[i]
        if len(e.variables) > 1 or e.variables[0] in inside:
            continue
        v = e.variables[0]
        if v in d.classes:
            levels = d.levels[v]
            rows = [(f"{v} {level_text(a)} vs {level_text(levels[-1])}", 1.0,
                     _profile_row(m, {v: a}, {}) - _profile_row(m, {v: levels[-1]}, {})) for a in levels[:-1]]
        else:
            texts = upper.get(v.upper(), default if default is not None else ["1"])
            us = [unit_value(t, v, mom[v][1]) for t in texts]
            rows = [(v, u, _profile_row(m, {}, {v: u}) - _profile_row(m, {}, {v: 0.0})) for u in us]
        for text, u, lc in rows:
            got = m.estimate(lc)
            if got is None:
                continue
            est, se = got
            out.append([text, u, _exp(est), _exp(est - z * se), _exp(est + z * se)])
    return out
