"""PROC LOGISTIC's EXACT statement: exact conditional tests of parameters (SAS/STAT User's Guide, LOGISTIC: "Exact
Conditional Logistic Regression", Hypothesis Tests), for a binary response and the logit link.

The sufficient statistics of the parameters are T = y'X (X the model's coded design). For an effect of interest
(its columns I, every other column — the intercept and the other effects — a nuisance N), the distribution of T_I
given T_N = t_N under β_I = 0 is C(t_I, t_N) / Σ_u C(u, t_N), C counting the response vectors y that give those
statistics. It is enumerated exactly: rows with the same design values are taken together (k events out of m
rows in C(m, k) ways), the partial sums kept in a table keyed by (T_N, T_I) and pruned where the rows left can no
longer reach the observed t_N (Hirji, Mehta and Patel's network idea, in its simplest form). Counts are Python
integers (exact up to 62 rows; in floating point past that); design values must be multiples of 10⁻⁶ (they are
scaled to integers), and a table of more than MAX_POINTS points is an ERROR naming the limit — exact tests are for
small data (60 rows, a 3-level CLASS, a 2-level CLASS and an 11-valued covariate: ≈ 8 s of CPU, ≈ 0.4 GB, near
the limit).

Tests (as SAS): the exact conditional score test, statistic s = (t − μ)'Σ⁻(t − μ) with μ, Σ the conditional mean
and variance of T_I, p = Pr(S ≥ s); the exact probability test, statistic f(t_obs), p = Pr(f(T) ≤ f(t_obs)); mid p
= p − ½·f(t_obs). Each effect is tested given all the other parameters; JOINT adds the joint test of all the
statement's effects ("Joint"), JOINTONLY gives that alone.
"""
from __future__ import annotations

from math import comb
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError

MAX_POINTS = 1_000_000          # points of the enumerated table at any step (≈ 50 MB a statistic)
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
    the interest columns' statistic with the nuisance statistic at its observed value. The table is numpy arrays
    (points × statistics, and counts); counts are exact int64 up to 62 rows (they sum to at most 2^n), float64
    past that (relative error ~1e-16)."""
    nuis = [j for j in range(X.shape[1]) if j not in interest]
    Xo = X[:, list(nuis) + list(interest)]
    k = len(nuis)
    target = (np.asarray(y) @ X[:, nuis]).round().astype(np.int64) if nuis else np.zeros(0, dtype=np.int64)
    rows, mult = np.unique(Xo, axis=0, return_counts=True)
    ctype = np.int64 if len(y) <= 62 else np.float64
    # what the rows after group g can still add to the nuisance sums: [lo[g], hi[g]]
    adds = rows[:, :k] * mult[:, None]
    lo = np.vstack([np.cumsum(np.minimum(adds, 0)[::-1], axis=0)[::-1], np.zeros((1, k), dtype=np.int64)])
    hi = np.vstack([np.cumsum(np.maximum(adds, 0)[::-1], axis=0)[::-1], np.zeros((1, k), dtype=np.int64)])
    # each point's statistics as one int64 key (mixed radix over the range partial sums can take) when it fits
    all_adds = rows * mult[:, None]
    base = np.minimum(all_adds, 0).sum(axis=0)
    radix = np.maximum(all_adds, 0).sum(axis=0) - base + 1
    packed = float(np.prod(radix.astype(float))) < 2.0 ** 62
    place = np.concatenate([np.cumprod(radix[::-1])[::-1][1:], [1]]).astype(np.int64) if packed else None
    states = np.zeros((1, Xo.shape[1]), dtype=np.int64)
    counts = np.ones(1, dtype=ctype)
    for g, (x, m) in enumerate(zip(rows, mult)):
        parts, weights, total = [], [], 0
        for e in range(int(m) + 1):
            st = states + e * x
            need = target - st[:, :k]
            ok = np.all((need >= lo[g + 1]) & (need <= hi[g + 1]), axis=1)
            total += int(ok.sum())
            if total > 3 * MAX_POINTS:                  # before stacking them: memory stays bounded
                _too_many(g, len(rows))
            parts.append(st[ok])
            weights.append(counts[ok] * ctype(comb(int(m), e)))
        st = np.vstack(parts)
        if packed:
            _, first, inv = np.unique((st - base) @ place, return_index=True, return_inverse=True)
            states = st[first]
        else:
            states, inv = np.unique(st, axis=0, return_inverse=True)
        if len(states) > MAX_POINTS:
            _too_many(g, len(rows))
        counts = np.zeros(len(states), dtype=ctype)
        np.add.at(counts, inv.ravel(), np.concatenate(weights))
    final = np.all(states[:, :k] == target, axis=1)
    return {tuple(int(v) for v in t): (int(c) if ctype is np.int64 else float(c))
            for t, c in zip(states[final][:, k:], counts[final])}


def _too_many(g: int, groups: int) -> None:
    raise StatgridError(f"EXACT: the conditional distribution grew past {MAX_POINTS} points (statgrid's limit for "
                        f"exact tests) after {g + 1} of {groups} distinct design rows; use fewer rows or coarser "
                        "covariates, or the asymptotic tests (CONTRAST).")


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
