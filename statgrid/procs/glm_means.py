"""PROC GLM's MEANS statement (SAS/STAT User's Guide, The GLM Procedure: MEANS statement, "Multiple
Comparisons"): arithmetic means and standard deviations of the responses and continuous regressors within
the levels of classification effects, and multiple comparisons of main-effect means with the model's error
mean square (MSE, ν error DF):

  pairwise   TUKEY (Tukey–Kramer: q(α; k, ν)·√(MSE/2·(1/nᵢ + 1/nⱼ))), BON (t at α/(2c), c = k(k−1)/2), SIDAK
             (t at (1 − (1−α)^(1/c))/2), SCHEFFE (√((k−1)·F(α; k−1, ν))), LSD / T (t at α/2), each times
             √(MSE·(1/nᵢ + 1/nⱼ)) for the t and F methods;
  range      DUNCAN (protection level αₚ = 1 − (1−α)^(p−1) for a range of p means) and SNK (αₚ = α): critical
             range Rₚ = q(αₚ; p, ν)·√(MSE/n), n the harmonic mean of the cell sizes when they differ. A range is
             significant only if it exceeds Rₚ and every range containing it is significant.
Results are shown as SAS shows them: LINES (grouping letters: maximal runs of the sorted means with no
significant difference get A, B, … from the highest mean down) for the range tests and for balanced data,
CLDIFF (every ordered pair of levels: difference and simultaneous limits, '***' where 0 is outside them)
for the pairwise methods with unequal cell sizes; the LINES or CLDIFF option chooses. With unequal cell sizes
LINES uses the harmonic mean of the cell sizes, as SAS.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import format_value, qi

PAIRWISE = {"TUKEY": "Tukey's Studentized Range (HSD) Test", "BON": "Bonferroni (Dunn) t Tests",
            "SIDAK": "Sidak t Tests", "SCHEFFE": "Scheffe's Test", "LSD": "t Tests (LSD)", "T": "t Tests (LSD)"}
RANGE = {"DUNCAN": "Duncan's Multiple Range Test", "SNK": "Student-Newman-Keuls Test"}
METHODS = {**PAIRWISE, **RANGE}
CRITICAL = {"TUKEY": "Critical Value of Studentized Range", "SCHEFFE": "Critical Value of F"}


@dataclass
class MeansRequest:
    """One MEANS statement: its effects (names as in the model) and options."""
    effects: list[str]
    methods: list[str] = field(default_factory=list)     # keys of METHODS, in the order given
    alpha: float = 0.05
    lines: bool = False
    cldiff: bool = False
    deponly: bool = False


def means_tables(s, sql: str, design, responses: Sequence[str], errors: dict, requests: Sequence[MeansRequest]
                 ) -> list[dict]:
    """Per MEANS effect: {'kind': 'means', effect, classes, variables, rows [levels…, N, (mean, sd) per
    variable]}; per response and method on a main effect: {'kind': 'lines'|'cldiff', effect, dependent,
    method, title, info [[label, value]], ranges [[p, Rp]] (range tests), rows}. errors: response → (MSE, ν)."""
    out = []
    for req in requests:
        for name in req.effects:
            effect = _effect(design, name)
            classes = design.effect_classes(effect)
            variables = list(responses) + ([] if req.deponly else list(design.continuous))
            rows = _group_rows(s, sql, classes, variables)
            out.append({"kind": "means", "effect": effect.name, "classes": classes, "variables": variables,
                        "rows": rows})
            if len(classes) != 1:
                continue                       # SAS: comparisons of main-effect means only
            for y in responses:
                j = 2 + 2 * variables.index(y)          # [level, N, mean₁, sd₁, …]
                levels = [r[0] for r in rows]
                m = np.array([r[j] for r in rows], dtype=float)
                n = np.array([r[1] for r in rows], dtype=float)
                mse, df = errors[y]
                for method in req.methods:
                    out.append(compare(method, effect.name, y, levels, m, n, mse, df, req))
    return out


def _effect(design, name: str):
    for e in design.effects:
        if e.name.upper() == name.upper().replace(" ", ""):
            if len(design.effect_classes(e)) != len(e.variables):
                raise StatgridError(f"MEANS effect {e.name!r} has a continuous variable; MEANS takes classification "
                                    "effects only (use LSMEANS for adjusted means).")
            return e
    raise StatgridError(f"MEANS effect {name!r} is not in the model; its effects: "
                        f"{', '.join(e.name for e in design.effects)}.")


def _group_rows(s, sql: str, classes: list[str], variables: list[str]) -> list[list]:
    """[levels…, N, mean₁, sd₁, mean₂, sd₂, …] per level combination, in SAS's level order."""
    keys = ", ".join(qi(c) for c in classes)
    stats = ", ".join(f"avg({qi(v)}), stddev_samp({qi(v)})" for v in variables)
    q = f"SELECT {keys}, count(*), {stats} FROM ({sql}) GROUP BY {keys} ORDER BY {keys}"
    return [list(r) for r in s.con.sql(q).fetchall()]


def _stud_range(alpha: float, k: int, df: float) -> float:
    from scipy.stats import studentized_range
    return float(studentized_range.ppf(1 - alpha, k, df))


def _pair_critical(method: str, alpha: float, k: int, df: float) -> tuple[float, float]:
    """(critical value as SAS prints it, the factor f with MSD = f·√(MSE·(1/nᵢ + 1/nⱼ)))."""
    from scipy import stats
    c = k * (k - 1) / 2
    if method == "TUKEY":
        q = _stud_range(alpha, k, df)
        return q, q / math.sqrt(2)
    if method == "SCHEFFE":
        f = float(stats.f.ppf(1 - alpha, k - 1, df))
        return f, math.sqrt((k - 1) * f)
    level = {"BON": alpha / (2 * c), "SIDAK": (1 - (1 - alpha) ** (1 / c)) / 2}.get(method, alpha / 2)
    t = float(stats.t.ppf(1 - level, df))
    return t, t


def compare(method: str, effect: str, y: str, levels: list, m: np.ndarray, n: np.ndarray, mse: float, df: float,
            req: MeansRequest) -> dict:
    k = len(levels)
    order = sorted(range(k), key=lambda i: -m[i])
    balanced = bool(np.all(n == n[0]))
    nh = float(k / np.sum(1.0 / n))
    info = [["Alpha", req.alpha], ["Error Degrees of Freedom", df], ["Error Mean Square", mse]]
    base = {"effect": effect, "dependent": y, "method": METHODS[method], "info": info,
            "title": f"{METHODS[method]} for {y}"}
    if k < 2:
        return {**base, "kind": "lines", "rows": [["A", float(m[0]), int(n[0]), levels[0]]] if k else []}
    if method in RANGE:
        ranges = {p: _stud_range(1 - (1 - req.alpha) ** (p - 1) if method == "DUNCAN" else req.alpha, p, df)
                  * math.sqrt(mse / nh) for p in range(2, k + 1)}
        if not balanced:
            info.append(["Harmonic Mean of Cell Sizes", nh])
        ms = m[order]
        ns = _range_nonsig(ms, ranges)
        return {**base, "kind": "lines", "ranges": [[p, r] for p, r in ranges.items()],
                "rows": _lines(ns, [(float(m[i]), int(n[i]), levels[i]) for i in order])}
    crit, factor = _pair_critical(method, req.alpha, k, df)
    if req.lines or (balanced and not req.cldiff):
        msd = factor * math.sqrt(mse * 2 / nh)
        info += [[CRITICAL.get(method, "Critical Value of t"), crit], ["Minimum Significant Difference", msd]]
        if not balanced:
            info.append(["Harmonic Mean of Cell Sizes", nh])
        ms = m[order]
        ns = {(i, j): ms[i] - ms[j] <= msd for i in range(k) for j in range(i, k)}
        return {**base, "kind": "lines", "rows": _lines(ns, [(float(m[i]), int(n[i]), levels[i]) for i in order])}
    info.append([CRITICAL.get(method, "Critical Value of t"), crit])
    rows = []
    for i in order:
        for j in order:
            if i == j:
                continue
            d = float(m[i] - m[j])
            half = factor * math.sqrt(mse * (1 / n[i] + 1 / n[j]))
            label = f"{format_value(levels[i])} - {format_value(levels[j])}"
            rows.append([label, d, d - half, d + half, "***" if abs(d) > half else ""])
    return {**base, "kind": "cldiff", "rows": rows}


def _range_nonsig(ms: np.ndarray, ranges: dict[int, float]) -> dict[tuple[int, int], bool]:
    """(i, j) → no significant difference between sorted means i…j: its range is within Rₚ, or a range
    containing it is not significant (the multiple-stage tests' protection)."""
    k = len(ms)
    ns: dict[tuple[int, int], bool] = {}
    for length in range(k, 0, -1):
        for i in range(0, k - length + 1):
            j = i + length - 1
            inside = (i > 0 and ns[(i - 1, j)]) or (j < k - 1 and ns[(i, j + 1)])
            ns[(i, j)] = bool(length == 1 or inside or ms[i] - ms[j] <= ranges[length])
    return ns


def _lines(ns: dict[tuple[int, int], bool], sorted_means: list[tuple]) -> list[list]:
    """Rows [Group letters, Mean, N, level] from the non-significance of each run (i, j) of sorted means."""
    k = len(sorted_means)
    runs = [(i, j) for i in range(k) for j in range(i, k) if ns[(i, j)]
            and not (i > 0 and ns[(i - 1, j)]) and not (j < k - 1 and ns[(i, j + 1)])]
    runs.sort()
    letters = [_letter(x) for x in range(len(runs))]
    rows = []
    for pos, (mean, count, level) in enumerate(sorted_means):
        slots = [letters[r] if runs[r][0] <= pos <= runs[r][1] else " " for r in reversed(range(len(runs)))]
        rows.append([" ".join(slots).rstrip(), mean, count, level])
    return rows


def _letter(i: int) -> str:
    """A … Z, then AA, AB, … for more than 26 groups."""
    return chr(65 + i) if i < 26 else _letter(i // 26 - 1) + chr(65 + i % 26)
