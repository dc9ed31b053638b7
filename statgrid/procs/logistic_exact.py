"""PROC LOGISTIC's EXACT statement: exact conditional tests of parameters (SAS/STAT User's Guide, LOGISTIC: "Exact
Conditional Logistic Regression", Hypothesis Tests), for a binary response and the logit link.

The sufficient statistics of the parameters are T = y'X (X the model's coded design). For an effect of interest
(its columns I, every other column — the intercept and the other effects — a nuisance N), the distribution of T_I
given T_N = t_N under β_I = 0 is C(t_I, t_N) / Σ_u C(u, t_N), C counting the response vectors y that give those
statistics. It is enumerated exactly: rows with the same design values are taken together (k events out of m
rows in C(m, k) ways), the partial sums kept in a table keyed by (T_N, T_I) and pruned where the rows left can no
longer reach the observed t_N (Hirji, Mehta and Patel's network idea, in its simplest form). Counts are Python
integers (exact); design values must be multiples of 10⁻⁶ (they are scaled to integers), and a table of more than
MAX_POINTS points is an ERROR naming the limit — exact tests are for small data.

Tests (as SAS): the exact conditional score test, statistic s = (t − μ)'Σ⁻(t − μ) with μ, Σ the conditional mean
and variance of T_I, p = Pr(S ≥ s); the exact probability test, statistic f(t_obs), p = Pr(f(T) ≤ f(t_obs)); mid p
= p − ½·f(t_obs). Each effect is tested given all the other parameters; JOINT adds the joint test of all the
statement's effects ("Joint"), JOINTONLY gives that alone.
"""
from __future__ import annotations

from collections import defaultdict
from math import comb
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError

MAX_POINTS = 500_000          # points of the enumerated table at any step
DECIMALS = 6                  # design values must be multiples of 10^-DECIMALS
REL_TIE = 1e-7                # statistics this close (relatively) are ties


def _to_integers(X: np.ndarray) -> tuple[np.ndarray, float]:
    """X scaled by 10^k (the smallest k ≤ DECIMALS that makes every value an integer) as int64, and 10^k."""
    for k in range(DECIMALS + 1):
        scaled = X * 10.0 ** k
        r = np.round(scaled)
        if np.all(np.abs(scaled - r) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            if np.abs(r).max(initial=0) * len(X) > 2 ** 62:
                break
            return r.astype(np.int64), 10.0 ** k
    raise StatgridError(f"EXACT needs design values that are multiples of 10^-{DECIMALS} (counts, codes, values "
                        f"with at most {DECIMALS} decimals); round the covariates first, or test them with the "
                        "asymptotic Wald tests (CONTRAST).")


def conditional_counts(X: np.ndarray, y: np.ndarray, interest: Sequence[int]) -> dict[tuple, int]:
    """{t_I: C(t_I, t_N)} over the integer design X: the counts of the response vectors that give each value of
    the interest columns' statistic with the nuisance statistic at its observed value."""
    nuis = [j for j in range(X.shape[1]) if j not in interest]
    Xo = X[:, list(nuis) + list(interest)]
    target = tuple(int(v) for v in (y @ X[:, nuis]).round().astype(np.int64)) if nuis else ()
    rows, mult = np.unique(Xo, axis=0, return_counts=True)
    k = len(nuis)
    # bounds of what the rows after group g can still add to the nuisance sums
    lo = np.zeros((len(rows) + 1, k), dtype=object)
    hi = np.zeros((len(rows) + 1, k), dtype=object)
    for g in range(len(rows) - 1, -1, -1):
        add = [int(v) * int(mult[g]) for v in rows[g, :k]]
        lo[g] = [lo[g + 1][j] + min(0, add[j]) for j in range(k)]
        hi[g] = [hi[g + 1][j] + max(0, add[j]) for j in range(k)]
    states: dict[tuple, int] = {(0,) * Xo.shape[1]: 1}
    for g, (x, m) in enumerate(zip(rows, mult)):
        x = [int(v) for v in x]
        m = int(m)
        ways = [comb(m, e) for e in range(m + 1)]
        nxt: dict[tuple, int] = defaultdict(int)
        for state, count in states.items():
            for e in range(m + 1):
                s = tuple(a + e * b for a, b in zip(state, x))
                if all(lo[g + 1][j] <= target[j] - s[j] <= hi[g + 1][j] for j in range(k)):
                    nxt[s] += count * ways[e]
        if len(nxt) > MAX_POINTS:
            raise StatgridError(f"EXACT: the conditional distribution grew past {MAX_POINTS} points (statgrid's "
                                f"limit for exact tests) after {g + 1} of {len(rows)} distinct design rows; use "
                                "fewer rows or coarser covariates, or the asymptotic tests (CONTRAST).")
        states = nxt
    return {s[k:]: c for s, c in states.items() if s[:k] == target}


def tests(counts: dict[tuple, int], observed: tuple, scale: float) -> list[list]:
    """[[Test, Statistic, ExactPValue, MidPValue]] for Score and Probability from the conditional counts."""
    total = sum(counts.values())
    pts = np.array(list(counts), dtype=float) / scale
    f = np.array([c / total for c in counts.values()])
    t0 = np.array(observed, dtype=float) / scale
    f0 = counts.get(tuple(observed), 0) / total
    mu = f @ pts
    dev = pts - mu
    cov = (dev * f[:, None]).T @ dev
    pinv = np.linalg.pinv(cov) if cov.size else cov
    score = np.einsum("ij,jk,ik->i", dev, pinv, dev)
    s0 = float((t0 - mu) @ pinv @ (t0 - mu))
    p_score = float(f[score >= s0 - REL_TIE * max(1.0, abs(s0))].sum())
    p_prob = float(f[f <= f0 * (1 + REL_TIE)].sum())
    return [["Score", s0, min(p_score, 1.0), max(min(p_score, 1.0) - 0.5 * f0, 0.0)],
            ["Probability", f0, min(p_prob, 1.0), max(min(p_prob, 1.0) - 0.5 * f0, 0.0)]]


def exact(X: np.ndarray, y: np.ndarray, cnames: list[str], cslices: list[slice], effects: list, intercept: bool,
          statements: Sequence, kept: Sequence[int]) -> list[list]:
    """Rows [Label, Effect, Test, Statistic, ExactPValue, MidPValue] of the EXACT statements
    [(label, [effect names | 'INTERCEPT'], {'joint': bool, 'jointonly': bool})]. X is the coded design of the
    rows used (aliased columns dropped: `kept`), y the 0/1 events."""
    Xi, scale = _to_integers(X[:, list(kept)])
    yi = np.asarray(y).round().astype(np.int64)
    pos = {c: i for i, c in enumerate(kept)}
    by_name = {e.name.upper(): sl for e, sl in zip(effects, cslices)}
    out = []
    for number, (label, names, opts) in enumerate(statements, start=1):
        label = label or f"Exact{number}"
        groups = []
        for name in names:
            if name.upper() == "INTERCEPT":
                if not intercept:
                    raise StatgridError("EXACT INTERCEPT in a model without an intercept (NOINT); drop INTERCEPT.")
                cols = [0]
                shown = "Intercept"
            elif name.upper() in by_name:
                sl = by_name[name.upper()]
                cols = list(range(sl.start, sl.stop))
                shown = next(e.name for e in effects if e.name.upper() == name.upper())
            else:
                raise StatgridError(f"effect {name!r} of EXACT {label!r} is not in the model; its effects: "
                                    f"{', '.join(e.name for e in effects) or 'none'}.")
            groups.append((shown, [pos[c] for c in cols if c in pos]))
        if not groups:
            raise StatgridError(f"EXACT {label!r} names no effect; name INTERCEPT or effects of the MODEL.")
        todo = [] if opts.get("jointonly") else list(groups)
        if (opts.get("joint") or opts.get("jointonly")) and len(groups) > 0:
            todo.append(("Joint", sorted({c for _, cols in groups for c in cols})))
        for shown, cols in todo:
            if not cols:
                continue
            counts = conditional_counts(Xi, yi, cols)
            observed = tuple(int(v) for v in yi @ Xi[:, cols])
            for row in tests(counts, observed, scale):
                out.append([label, shown, *row])
    return out
