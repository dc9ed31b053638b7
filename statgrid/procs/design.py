"""MODEL statements with CLASS variables: effects, design columns and their codings.

A model is written as SAS writes it: `y1 y2 = a b a*b x a|b|c @2`. `a*b` crosses variables,
`a|b|c` expands to every crossing in SAS's order (a b a*b c a*c b*c a*b*c) and `@n` keeps the
crossings of at most n variables. Nested effects (`b(a)`) are not supported (the error says so).

The design is built the way PROC GLM builds it: over-parameterized, one 0/1 column per level (per
level combination for a crossing, the first variable's level varying slowest) times the product of
the effect's continuous variables. Aliasing then leaves the later columns of each effect at 0, as
SAS's G2 inverse does. Other codings are linear maps of these columns, effect by effect — a
Kronecker product of one matrix per class variable — so one pass over the data serves them all:
`coding(kind)` gives the map T with X_coded = X_over · T, for
  - 'effect': sum-to-zero (deviation) columns, the last level −1 (LOGISTIC's PARAM=EFFECT; with
    every cell filled, dropping an effect's columns gives Type III sums of squares);
  - 'ref': reference cell, the last level 0 (PARAM=REF).
Class levels are sorted as SAS sorts unformatted values: numbers by value, strings by bytes.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import as_list, check_columns, is_numeric, qi


@dataclass(frozen=True)
class Effect:
    variables: tuple[str, ...]

    @property
    def name(self) -> str:
        return "*".join(self.variables)


def _expand(token: str, by_lower: dict[str, str], where: str) -> list[tuple[str, ...]]:
    degree = None
    if "@" in token:
        token, _, d = token.partition("@")
        if not d.isdigit() or int(d) < 1:
            raise StatgridError(f"'@{d}' in {where} is not a positive whole number (e.g. a|b|c@2).")
        degree = int(d)
    if "(" in token:
        raise StatgridError(f"nested effect {token!r} in {where} is not supported; write the crossing "
                            "(a*b) instead.")
    if "|" in token:
        parts = [p for p in token.split("|")]
        crossed: list[tuple[str, ...]] = []
        for p in parts:                                   # SAS order: a b a*b c a*c b*c a*b*c
            new = [tuple(p.split("*"))]
            new += [c + tuple(p.split("*")) for c in crossed]
            crossed += new
        effects = crossed
    else:
        effects = [tuple(token.split("*"))]
    out = []
    for e in effects:
        if any(not v for v in e):
            raise StatgridError(f"effect {token!r} in {where} has an empty name; write a*b or a|b.")
        names = []
        for v in e:
            if v.lower() not in by_lower:
                raise StatgridError(f"effect variable {v!r} in {where} is not in the data; its variables are: "
                                    f"{', '.join(by_lower.values())}.")
            names.append(by_lower[v.lower()])        # x*x of a number is x squared; a*a of a class is a
        if degree is None or len(e) <= degree:
            out.append(tuple(names))
    return out


def parse_model(model: str, available: Sequence[str], dsname: str, many_responses: bool = True
                ) -> tuple[list[str], list[Effect]]:
    """'y1 y2 = a b a*b' → responses and effects (duplicates dropped, order kept)."""
    left, sep, right = model.partition("=")
    if not sep or not left.strip():
        raise StatgridError(f"model {model!r} is not 'y = effects'; name the response, '=', then the effects "
                            "(a b a*b x or a|b).")
    responses = check_columns(left.split(), available, "response", dsname)
    if len(responses) > 1 and not many_responses:
        raise StatgridError(f"model {model!r} names {len(responses)} responses; this procedure takes one.")
    return responses, parse_effects(right, available, f"model {model!r}")


def parse_effects(text: str, available: Sequence[str], where: str) -> list[Effect]:
    """'a b a*b x a|b@2' → effects in SAS's order (duplicates dropped)."""
    by_lower = {a.lower(): a for a in available}
    effects: list[Effect] = []
    # tokens: split on whitespace, but keep 'a | b' and 'a * b' written with spaces together
    text = re.sub(r"\s*([|*@])\s*", r"\1", text.strip())
    for token in text.split():
        for e in _expand(token, by_lower, where):
            if Effect(e) not in effects:
                effects.append(Effect(e))
    return effects


@dataclass
class Design:
    """Columns of the over-parameterized design for `effects` (with an intercept unless noint)."""

    effects: list[Effect]
    classes: list[str]
    levels: dict[str, list] = field(default_factory=dict)     # class variable → sorted levels
    intercept: bool = True

    def __post_init__(self):
        self.continuous = sorted({v for e in self.effects for v in e.variables if v not in self.classes},
                                 key=lambda v: [x for e in self.effects for x in e.variables].index(v))

    # ------------------------------------------------------------------ column layout
    def effect_classes(self, e: Effect) -> list[str]:
        seen: list[str] = []
        for v in e.variables:
            if v in self.classes and v not in seen:
                seen.append(v)
        return seen

    def effect_width(self, e: Effect) -> int:
        return int(np.prod([len(self.levels[v]) for v in self.effect_classes(e)] or [1]))

    def slices(self) -> list[slice]:
        """Column range of each effect in the over-parameterized design (after the intercept)."""
        out, start = [], 1 if self.intercept else 0
        for e in self.effects:
            w = self.effect_width(e)
            out.append(slice(start, start + w))
            start += w
        return out

    @property
    def width(self) -> int:
        return (1 if self.intercept else 0) + sum(self.effect_width(e) for e in self.effects)

    def column_names(self) -> list[str]:
        names = ["Intercept"] if self.intercept else []
        for e in self.effects:
            cls = self.effect_classes(e)
            if not cls:
                names.append(e.name)
                continue
            for combo in itertools.product(*[self.levels[v] for v in cls]):
                names.append(f"{e.name} {' '.join(str(c) for c in combo)}")
        return names

    # ------------------------------------------------------------------ building
    def build(self, codes: dict[str, np.ndarray], values: dict[str, np.ndarray], m: int) -> np.ndarray:
        """Design rows for one chunk: codes = class variable → level index, values = number columns."""
        X = np.zeros((m, self.width))
        if self.intercept:
            X[:, 0] = 1.0
        for e, sl in zip(self.effects, self.slices()):
            cont = np.ones(m)
            for v in e.variables:
                if v not in self.classes:
                    cont = cont * values[v]
            cls = self.effect_classes(e)
            if not cls:
                X[:, sl.start] = cont
                continue
            index = np.zeros(m, dtype=np.int64)
            for v in cls:
                index = index * len(self.levels[v]) + codes[v]
            X[np.arange(m), sl.start + index] = cont
        return X

    def coding(self, kind: str) -> tuple[np.ndarray, list[str], list[slice]]:
        """T (over-parameterized → coded columns), the coded column names and each effect's slice."""
        if kind not in ("effect", "ref"):
            raise StatgridError(f"param {kind!r} is not one of effect, ref.")
        blocks, names, slices = [], [], []
        if self.intercept:
            blocks.append(np.ones((1, 1)))
            names.append("Intercept")
        start = len(names)
        # Marginality: a class variable is coded with k−1 contrasts only where the effect without it
        # is already in the model (the intercept for a main effect); otherwise with all k indicators,
        # so the coded columns span what the over-parameterized ones span (noint, 'a a*x', 'a a*b').
        spanned = {frozenset()} if self.intercept else set()
        for e in self.effects:
            cls = self.effect_classes(e)
            vars_e = frozenset(e.variables)
            mats, labels = [], []
            for v in cls:
                k = len(self.levels[v])
                full = (vars_e - {v}) not in spanned
                c = np.eye(k) if full else np.eye(k)[:, :k - 1]
                if kind == "effect" and not full:
                    c = c.copy()
                    c[k - 1, :] = -1.0
                mats.append(c)
                labels.append([str(x) for x in (self.levels[v] if full else self.levels[v][:k - 1])])
                if full:
                    spanned.add(vars_e - {v})
            spanned.add(vars_e)
            t = np.ones((1, 1))
            for mtx in mats:
                t = np.kron(t, mtx)
            blocks.append(t)
            if cls:
                for combo in itertools.product(*labels):
                    names.append(f"{e.name} {' '.join(combo)}")
            else:
                names.append(e.name)
            slices.append(slice(start, start + t.shape[1]))
            start += t.shape[1]
        rows = sum(b.shape[0] for b in blocks)
        cols = sum(b.shape[1] for b in blocks)
        T = np.zeros((rows, cols))
        r = c = 0
        for b in blocks:
            T[r:r + b.shape[0], c:c + b.shape[1]] = b
            r += b.shape[0]
            c += b.shape[1]
        return T, names, slices


def prepare(s, src, effects: list[Effect], responses: list[str], class_: str | Sequence[str] | None,
            extra: Sequence[str] = (), intercept: bool = True, raw: Sequence[str] = ()
            ) -> tuple[Design, str, str, int]:
    """Check the variables, find the class levels over the rows used, and return the design, the
    SELECT that streams the rows used (class columns raw, numbers as DOUBLE), its WHERE clause and
    the number of rows dropped for a missing value. `raw` columns (any type) are selected as they are."""
    cols = s.columns(src.scan_sql())
    names_all = [c for c, _ in cols]
    types = dict(cols)
    classes = check_columns(as_list(class_), names_all, "CLASS", str(src))
    used_in_effects = {v for e in effects for v in e.variables}
    for v in [*responses, *extra, *[u for u in used_in_effects if u not in classes]]:
        if not is_numeric(types[v]):
            raise StatgridError(f"variable {v!r} in {src} is {types[v]}, not numeric; name it in class= to treat "
                                "it as a classification variable.")
    for r in responses:
        if r in classes:
            raise StatgridError(f"response {r!r} is also a CLASS variable; a response must be numeric.")
    unused_classes = [c for c in classes if c not in used_in_effects]
    classes = [c for c in classes if c in used_in_effects]
    used = list(dict.fromkeys([*classes, *[v for e in effects for v in e.variables if v not in classes],
                               *extra, *responses, *raw]))
    # a row is used only if every CLASS variable is present, in the model or not (as SAS)
    where = " AND ".join(f"{qi(c)} IS NOT NULL" for c in [*used, *unused_classes]) or "TRUE"
    levels = {}
    for c in classes:
        vals = s.con.sql(f"SELECT DISTINCT {qi(c)} FROM ({src.scan_sql()}) WHERE {where} ORDER BY 1"
                         ).to_arrow_table().column(0)
        levels[c] = vals
    design = Design(effects, classes, {c: v.to_pylist() for c, v in levels.items()}, intercept)
    design._value_sets = levels                                  # arrow arrays for index_in
    select = ", ".join(qi(c) if c in classes or c in raw else f"CAST({qi(c)} AS DOUBLE) AS {qi(c)}" for c in used)
    sql = f"SELECT {select} FROM ({src.scan_sql()}) WHERE {where}"
    n_missing = s.con.sql(f"SELECT count(*) FROM ({src.scan_sql()}) WHERE NOT ({where})").fetchall()[0][0]
    return design, sql, where, n_missing


def chunks(s, design: Design, sql: str, rows: int, tail: Sequence[str]):
    """Stream the rows of `sql` as design matrices with the `tail` number columns appended."""
    import pyarrow.compute as pc

    reader = s.con.sql(sql).to_arrow_reader(rows)
    for batch in reader:
        m = batch.num_rows
        if m == 0:
            continue
        codes = {c: pc.index_in(batch.column(c), value_set=design._value_sets[c]).to_numpy(zero_copy_only=False)
                 .astype(np.int64) for c in design.classes}
        values = {v: batch.column(v).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
                  for v in {*design.continuous, *tail}}
        X = design.build(codes, values, m)
        yield np.hstack([X, np.column_stack([values[t] for t in tail])]) if tail else X


def chunk_rows(memsize_bytes: int, width: int) -> int:
    """Rows per chunk: about memsize/16 bytes, as reg does (several copies live during a QR)."""
    return int(max(1024, min(1 << 20, memsize_bytes // 16 // (8 * (width + 1)))))
