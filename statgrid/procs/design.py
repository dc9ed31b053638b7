"""MODEL statements with CLASS variables: effects, design columns and their codings — the one
design layer of glm, logistic, genmod and mixed.

A model is written as SAS writes it: `y1 y2 = a b a*b x a|b|c @2 b(a) x(a)`. `a*b` crosses
variables, `a|b|c` expands to every crossing in SAS's order (a b a*b c a*c b*c a*b*c), `@n` keeps
the crossings of at most n variables, and `b(a)` is b nested within a (`c(a b)`, `b*c(a)`, and a
continuous variable within a CLASS one, `x(a)`, too); the variables inside the parentheses must be
CLASS variables. A bar does not combine with nesting (write `a b(a)`).

The design is built the way PROC GLM builds it: over-parameterized, one 0/1 column per level (per
level combination for a crossing, the first variable's level varying slowest; for a nested effect
the nesting variables vary slowest — SAS: "variables outside the parentheses index faster than those
inside") times the product of the effect's continuous variables. Aliasing (statgrid.procs._aliasing)
then leaves the later columns of each effect at 0, as SAS's G2 inverse does. Other codings are
linear maps of these columns, effect by effect — a Kronecker product of one matrix per class
variable — so one pass over the data serves them all: `coding(kind)` gives the map T with
X_coded = X_over · T, for
  - 'effect': sum-to-zero (deviation) columns, the last level −1 (LOGISTIC's PARAM=EFFECT; with
    every cell filled, dropping an effect's columns gives Type III sums of squares);
  - 'ref': reference cell, the last level 0 (PARAM=REF).
A nested effect has columns for the level combinations present in the data only (SAS: "no columns
are generated corresponding to combinations of levels that do not occur"), so each a may have its
own b labels, and b(a) takes b's contrasts among the b levels present within each level of a.
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



def level_text(v) -> str:
    """A CLASS level as SAS shows it (BEST. for a number: 0, not Python's 0.0)."""
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.12g}"
    return str(v)

@dataclass(frozen=True)
class Effect:
    """One MODEL effect: its variables as written ('b*c(a)' → ('b', 'c', 'a')) and, for a nested
    effect, the nesting variables, those inside the parentheses (('a',)). No variables: the intercept."""

    variables: tuple[str, ...]
    within: tuple[str, ...] = ()

    @property
    def outer(self) -> tuple[str, ...]:
        """The variables outside the parentheses (all of them for a crossing)."""
        return self.variables[:len(self.variables) - len(self.within)]

    @property
    def name(self) -> str:
        if not self.variables:
            return "Intercept"
        if not self.within:
            return "*".join(self.variables)
        return f"{'*'.join(self.outer)}({'*'.join(self.within)})"


NESTED = re.compile(r"([^()|@]+)\(([^()|@]+)\)")


def _tokens(text: str) -> list[str]:
    """Split on whitespace, keeping 'a | b', 'a * b', 'b ( a )' and 'c(a b)' together as one token."""
    text = re.sub(r"\s*([|*@])\s*", r"\1", text.strip())
    text = re.sub(r"\s*\(\s*", "(", text)
    text = re.sub(r"\s*\)", ")", text)
    text = re.sub(r"\(([^()]*)\)", lambda m: "(" + "*".join(m.group(1).split()) + ")", text)   # c(a b) = c(a*b)
    return text.split()


def _expand(token: str, by_lower: dict[str, str], where: str) -> list[Effect]:
    degree = None
    if "@" in token:
        token, _, d = token.partition("@")
        if not d.isdigit() or int(d) < 1:
            raise StatgridError(f"'@{d}' in {where} is not a positive whole number (e.g. a|b|c@2).")
        degree = int(d)

    def resolve(names: list[str]) -> list[str]:
        out = []
        for v in names:
            if not v:
                raise StatgridError(f"effect {token!r} in {where} has an empty name; write a*b, a|b or b(a).")
            if v.lower() not in by_lower:
                raise StatgridError(f"effect variable {v!r} in {where} is not in the data; its variables are: "
                                    f"{', '.join(by_lower.values())}.")
            out.append(by_lower[v.lower()])        # x*x of a number is x squared; a*a of a class is a
        return out

    if "(" in token or ")" in token:
        m = NESTED.fullmatch(token)
        if not m:
            raise StatgridError(f"effect {token!r} in {where} is not a nested effect as SAS writes one: b(a), "
                                "c(a b) or b*c(a); a bar does not combine with nesting (write a b(a)).")
        if degree is not None:
            raise StatgridError(f"'@{degree}' after the nested effect {token!r} in {where}: '@' limits an "
                                "a|b|c expansion; remove it.")
        outer, within = resolve(m.group(1).split("*")), resolve(m.group(2).split("*"))
        if set(outer) & set(within):
            raise StatgridError(f"effect {token!r} in {where} nests a variable within itself; write b(a).")
        return [Effect(tuple(outer + within), tuple(within))]
    if "|" in token:
        crossed: list[tuple[str, ...]] = []
        for part in token.split("|"):                    # SAS order: a b a*b c a*c b*c a*b*c
            new = [tuple(part.split("*"))]
            new += [c + tuple(part.split("*")) for c in crossed]
            crossed += new
    else:
        crossed = [tuple(token.split("*"))]
    return [Effect(tuple(resolve(list(e)))) for e in crossed if degree is None or len(e) <= degree]


def parse_model(model: str, available: Sequence[str], dsname: str, many_responses: bool = True
                ) -> tuple[list[str], list[Effect]]:
    """'y1 y2 = a b a*b' → responses and effects (duplicates dropped, order kept)."""
    left, sep, right = model.partition("=")
    if not sep or not left.strip():
        raise StatgridError(f"model {model!r} is not 'y = effects'; name the response, '=', then the effects "
                            "(a b a*b x, a|b or b(a)).")
    responses = check_columns(left.split(), available, "response", dsname)
    if len(responses) > 1 and not many_responses:
        raise StatgridError(f"model {model!r} names {len(responses)} responses; this procedure takes one.")
    return responses, parse_effects(right, available, f"model {model!r}")


def parse_effects(text: str, available: Sequence[str], where: str) -> list[Effect]:
    """'a b a*b x a|b@2 c(a)' → effects in SAS's order (duplicates dropped)."""
    by_lower = {a.lower(): a for a in available}
    effects: list[Effect] = []
    for token in _tokens(text):
        for e in _expand(token, by_lower, where):
            if e not in effects:
                effects.append(e)
    return effects


@dataclass
class Design:
    """Columns of the over-parameterized design for `effects` (with an intercept unless noint)."""

    effects: list[Effect]
    classes: list[str]
    levels: dict[str, list] = field(default_factory=dict)     # class variable → sorted levels
    intercept: bool = True
    value_sets: dict = field(default_factory=dict, repr=False)  # class variable → its levels as an Arrow array
    # nested effect → the level combinations present in the data, as positions in the full grid of its
    # CLASS variables (effect_classes order, the first slowest), sorted: SAS makes columns for these only
    cells: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.continuous = sorted({v for e in self.effects for v in e.variables if v not in self.classes},
                                 key=lambda v: [x for e in self.effects for x in e.variables].index(v))

    # ------------------------------------------------------------------ column layout
    def effect_classes(self, e: Effect) -> list[str]:
        """e's CLASS variables in column order, the first varying slowest: as written for a crossing,
        the nesting variables first for a nested effect."""
        return [v for v in dict.fromkeys(e.within + e.outer) if v in self.classes]

    def grid_size(self, e: Effect) -> int:
        """How many combinations of levels e's CLASS variables have (1: none)."""
        return int(np.prod([len(self.levels[v]) for v in self.effect_classes(e)] or [1]))

    def combination(self, e: Effect, position: int) -> dict:
        """The levels at `position` of e's grid of level combinations (column order, the first slowest)."""
        out = {}
        for v in reversed(self.effect_classes(e)):
            position, k = divmod(int(position), len(self.levels[v]))
            out[v] = self.levels[v][k]
        return {v: out[v] for v in self.effect_classes(e)}

    def effect_width(self, e: Effect) -> int:
        return len(self.cells[e]) if e in self.cells else self.grid_size(e)

    def contrast_terms(self, spec: dict):
        """The terms of a CONTRAST or ESTIMATE ({effect: coefficients}) as (the name as written, the effect, its
        columns, the coefficients as floats), the effect and its columns None for INTERCEPT; an effect not in the
        model is an error."""
        by_name = {e.name.upper(): (e, sl) for e, sl in zip(self.effects, self.slices())}
        for name, coeffs in spec.items():
            coeffs = [float(c) for c in coeffs]
            if name.upper() == "INTERCEPT":
                yield name, None, None, coeffs
            elif name.upper() not in by_name:
                raise StatgridError(f"effect {name!r} of a CONTRAST or ESTIMATE is not in the model; its effects: "
                                    f"{', '.join(e.name for e in self.effects)}.")
            else:
                yield (name, *by_name[name.upper()], coeffs)

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

    def column_labels(self) -> list[tuple[int | None, dict]]:
        """Per design column: the index of its effect (None: the intercept) and its CLASS levels."""
        out: list[tuple[int | None, dict]] = [(None, {})] if self.intercept else []
        for i, e in enumerate(self.effects):
            out += [(i, lab) for lab in self.effect_labels(e)]
        return out

    def effect_labels(self, e: Effect) -> list[dict]:
        """The CLASS levels of each of e's columns."""
        return [self.combination(e, g) for g in (self.cells[e] if e in self.cells else range(self.grid_size(e)))]

    def label(self, e: Effect, levels: dict) -> str:
        """'a*b p 1', 'b(a) 1 p': the effect and its levels in the order the effect names them."""
        shown = [level_text(levels[v]) for v in dict.fromkeys(e.variables) if v in levels]
        return " ".join([e.name, *shown])

    def column_names(self) -> list[str]:
        return ["Intercept" if i is None else self.label(self.effects[i], lab) for i, lab in self.column_labels()]

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
            if e in self.cells:                      # grid position → its column among the present cells
                index = np.searchsorted(self.cells[e], index)
            X[np.arange(m), sl.start + index] = cont
        return X

    def matrix(self, rows, tail: Sequence[str] = ()) -> np.ndarray:
        """Design rows of an Arrow table or record batch (CLASS columns raw, numbers as DOUBLE, no
        missing values: prepare's SELECT), with the `tail` number columns appended."""
        codes = {c: self.codes(rows, c) for c in self.classes}
        values = {v: rows.column(v).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
                  for v in {*self.continuous, *tail}}
        X = self.build(codes, values, rows.num_rows)
        return np.hstack([X, np.column_stack([values[t] for t in tail])]) if tail else X

    def codes(self, rows, c: str) -> np.ndarray:
        """Level index of CLASS variable c in each row of an Arrow table or batch."""
        import pyarrow.compute as pc

        return pc.index_in(rows.column(c), value_set=self.value_sets[c]).to_numpy(zero_copy_only=False) \
            .astype(np.int64)

    # ------------------------------------------------------------------ codings
    def _full_coded(self) -> list[dict[str, bool]]:
        """Per effect, per CLASS variable: coded with all k indicators (True) or k−1 contrasts.
        Marginality: contrasts only where the effect without that variable is already in the model
        (the intercept for a main effect); otherwise all k, so the coded columns span what the
        over-parameterized ones span (noint, 'a a*x', 'a a*b')."""
        spanned = {frozenset()} if self.intercept else set()
        out = []
        for e in self.effects:
            vars_e = frozenset(e.variables)
            full = {v: (vars_e - {v}) not in spanned for v in self.effect_classes(e)}
            spanned |= {vars_e - {v} for v, f in full.items() if f} | {vars_e}
            out.append(full)
        return out

    def present_coded(self, i: int) -> bool:
        """Whether coding() takes effect i's contrasts among the levels present: a nested effect with
        one CLASS variable outside the parentheses, coded by contrasts, its nesting variables by
        indicators (b(a) in 'a b(a)')."""
        e, full = self.effects[i], self._full_coded()[i]
        outer = [v for v in e.outer if v in self.classes]
        return bool(e.within) and len(outer) == 1 and not full[outer[0]] and all(full[v] for v in e.within)

    def coding(self, kind: str) -> tuple[np.ndarray, list[str], list[slice]]:
        """T (over-parameterized → coded columns), the coded column names and each effect's slice."""
        if kind not in ("effect", "ref"):
            raise StatgridError(f"param {kind!r} is not one of effect, ref.")
        blocks, names, slices = [], [], []
        if self.intercept:
            blocks.append(np.ones((1, 1)))
            names.append("Intercept")
        start = len(names)
        for i, (e, full) in enumerate(zip(self.effects, self._full_coded())):
            cls = self.effect_classes(e)
            if self.present_coded(i):
                t, labels = self._nested_contrasts(e, kind)
            else:
                mats, per_var = [], []
                for v in cls:
                    k = len(self.levels[v])
                    c = np.eye(k) if full[v] else np.eye(k)[:, :k - 1]
                    if kind == "effect" and not full[v]:
                        c = c.copy()
                        c[k - 1, :] = -1.0
                    mats.append(c)
                    per_var.append(self.levels[v] if full[v] else self.levels[v][:k - 1])
                t = np.ones((1, 1))
                for mtx in mats:
                    t = np.kron(t, mtx)
                if e in self.cells:        # rows of the cells present (the others have no column)
                    t = t[self.cells[e]]
                labels = [dict(zip(cls, combo)) for combo in itertools.product(*per_var)]
            blocks.append(t)
            names += [self.label(e, lab) for lab in labels]
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

    def _nested_contrasts(self, e: Effect, kind: str) -> tuple[np.ndarray, list[dict]]:
        """b(a): within each level (combination) of the nesting variables, contrasts among the b levels
        present there — the last present one −1 ('effect') or 0 ('ref')."""
        k = len(self.levels[self.effect_classes(e)[-1]])
        present = self.cells.get(e, np.arange(self.grid_size(e)))
        columns, labels = [], []
        for block in np.unique(present // k):
            here = np.flatnonzero(present // k == block)          # this block's columns, in order
            for j in here[:-1]:
                col = np.zeros(len(present))
                col[j] = 1.0
                if kind == "effect":
                    col[here[-1]] = -1.0
                columns.append(col)
                labels.append(self.combination(e, present[j]))
        return (np.column_stack(columns) if columns else np.zeros((len(present), 0))), labels

    def average_weights(self, e: Effect, chosen: dict, labels: list[dict] | None = None) -> np.ndarray:
        """LS-means: the weight of each of e's columns in the average that sets the CLASS variables in
        `chosen` to their levels and averages over the others, each level equally weighted; for a
        nested effect, over the cells present within each level of its nesting variables (as SAS).
        labels: effect_labels(e), when the caller has them already."""
        labels = self.effect_labels(e) if labels is None else labels
        w = np.array([float(all(lab[v] == chosen[v] for v in lab if v in chosen)) for lab in labels])
        free = [v for v in self.effect_classes(e) if v not in chosen]
        free_outer = [v for v in free if v not in e.within] if e in self.cells else []
        w /= float(np.prod([len(self.levels[v]) for v in free if v not in free_outer]))
        if free_outer:
            groups = [tuple(lab[v] for v in e.within) for lab in labels]
            count: dict[tuple, int] = {}
            for g, x in zip(groups, w):
                count[g] = count.get(g, 0) + (x != 0)
            w = np.array([x / count[g] if x else 0.0 for g, x in zip(groups, w)])
        return w


def prepare(s, src, effects: list[Effect], responses: list[str], class_: str | Sequence[str] | None,
            extra: Sequence[str] = (), intercept: bool = True, raw: Sequence[str] = (), ref: dict | None = None,
            order: str | None = None) -> tuple[Design, str, str, int]:
    """Check the variables, find the class levels over the rows used, and return the design, the
    SELECT that streams the rows used (class columns raw, numbers as DOUBLE), its WHERE clause and
    the number of rows dropped for a missing value. `raw` columns (any type) are selected as they are.
    ref: {CLASS variable: 'FIRST' | 'LAST' | a level as written} — SAS's CLASS var(REF=): that level is put at
    the end of the variable's levels, so it is the reference (0 in PARAM=REF, −1 in PARAM=EFFECT, the aliased
    column in PARAM=GLM). order: SAS's ORDER= of the CLASS levels — 'data' (first appearance in the input) or
    'freq' (descending count, ties by value); otherwise sorted (INTERNAL, and FORMATTED without a format)."""
    cols = s.columns(src.scan_sql())
    names_all = [c for c, _ in cols]
    types = dict(cols)
    classes = check_columns(as_list(class_), names_all, "CLASS", str(src))
    used_in_effects = {v for e in effects for v in e.variables}
    for v in [*responses, *extra, *[u for u in used_in_effects if u not in classes]]:
        if not is_numeric(types[v]):
            raise StatgridError(f"variable {v!r} in {src} is {types[v]}, not numeric; name it in class= to treat "
                                f"it as a classification variable (class_={v!r}).")
    for e in effects:
        for v in e.within:
            if v not in classes:
                raise StatgridError(f"nested effect {e.name!r}: {v!r}, inside the parentheses, must be a CLASS "
                                    "variable; name it in class=.")
    for r in responses:
        if r in classes:
            raise StatgridError(f"response {r!r} is also a CLASS variable; a response must be numeric.")
    unused_classes = [c for c in classes if c not in used_in_effects]
    classes = [c for c in classes if c in used_in_effects]
    used = list(dict.fromkeys([*classes, *[v for e in effects for v in e.variables if v not in classes],
                               *extra, *responses, *raw]))
    # a row is used only if every CLASS variable is present, in the model or not (as SAS)
    where = " AND ".join(f"{qi(c)} IS NOT NULL" for c in [*used, *unused_classes]) or "TRUE"
    rows_used = f"SELECT * FROM ({src.scan_sql()}) WHERE {where}"
    value_sets = levels_of(s, rows_used, classes)
    if str(order or "").lower() in ("data", "freq"):
        numbered = f"SELECT * FROM {src.scan_sql(row_numbers=True)} WHERE {where}"
        by = "min(file_row_number)" if str(order).lower() == "data" else "count(*) DESC, 1"
        value_sets = {c: s.con.sql(f"SELECT {qi(c)} FROM ({numbered}) GROUP BY 1 ORDER BY {by}").to_arrow_table()
                      .column(0).combine_chunks() for c in classes}
    for var, level in (ref or {}).items():
        match = [c for c in value_sets if c.upper() == str(var).upper()]
        if match:
            value_sets[match[0]] = reference_last(value_sets[match[0]], match[0], level)
    design = Design(effects, classes, {c: v.to_pylist() for c, v in value_sets.items()}, intercept, value_sets)
    for e in effects:
        cls = design.effect_classes(e)
        if e.within and len(cls) > 1:
            combos = s.con.sql(f"SELECT DISTINCT {', '.join(qi(c) for c in cls)} FROM ({rows_used})").to_arrow_table()
            position = np.zeros(combos.num_rows, dtype=np.int64)
            for c in cls:
                position = position * len(design.levels[c]) + design.codes(combos, c)
            design.cells[e] = np.unique(position)
    select = ", ".join(qi(c) if c in classes or c in raw else f"CAST({qi(c)} AS DOUBLE) AS {qi(c)}" for c in used)
    sql = f"SELECT {select} FROM ({src.scan_sql()}) WHERE {where}"
    n_missing = s.con.sql(f"SELECT count(*) FROM ({src.scan_sql()}) WHERE NOT ({where})").fetchall()[0][0]
    return design, sql, where, n_missing


def reference_last(values, var: str, level):
    """The levels (an Arrow array, sorted) with the REF= level moved to the end: FIRST, LAST or a level as
    written (a number matches by value, text by its trimmed value)."""
    import pyarrow as pa

    items = values.to_pylist()
    key = str(level).strip()
    if key.upper() == "LAST" or not items:
        return values
    if key.upper() == "FIRST":
        k = 0
    else:
        def same(v) -> bool:
            if isinstance(v, (int, float)):
                try:
                    return float(key) == float(v)
                except ValueError:
                    return False
            return str(v).rstrip() == key
        hits = [i for i, v in enumerate(items) if same(v)]
        if not hits:
            raise StatgridError(f"REF='{key}' is not a level of CLASS variable {var!r}; its levels: "
                                f"{', '.join(level_text(v) for v in items[:20])}{' …' if len(items) > 20 else ''}. "
                                "Name one of them, or REF=FIRST / REF=LAST.")
        k = hits[0]
    return pa.array(items[:k] + items[k + 1:] + [items[k]], type=values.type)


def levels_of(s, sql: str, columns: Sequence[str]) -> dict:
    """The distinct values of each column over the rows of `sql`, sorted as SAS sorts unformatted
    values (the engine's ORDER BY: numbers by value, strings by bytes), as Arrow arrays."""
    return {c: s.con.sql(f"SELECT DISTINCT {qi(c)} FROM ({sql}) ORDER BY 1").to_arrow_table().column(0)
            .combine_chunks() for c in columns}


def chunks(s, design: Design, sql: str, rows: int, tail: Sequence[str]):
    """Stream the rows of `sql` as design matrices with the `tail` number columns appended."""
    for batch in s.con.sql(sql).to_arrow_reader(rows):
        if batch.num_rows:
            yield design.matrix(batch, tail)


def chunk_rows(memsize_bytes: int, width: int) -> int:
    """Rows per chunk: about memsize/16 bytes, as reg does (several copies live during a QR)."""
    return int(max(1024, min(1 << 20, memsize_bytes // 16 // (8 * (width + 1)))))


def used_class_levels(s, data: str, dep: str, effects: str, classes: list[str], subject: str | None) -> dict:
    """Each CLASS variable's levels among the rows a model uses (none of its variables missing): the Class
    Level Information of PROC MIXED / HPMIXED."""
    from statgrid.procs._base import dataset_types, qi

    src, types = dataset_types(s, data)
    by_upper = {c.upper(): c for c in types}
    words = re.split(r"[*|()@=\s]+", " ".join([dep, effects, subject or "", *classes]))
    used = list(dict.fromkeys(by_upper[w.upper()] for w in words if w.upper() in by_upper))
    where = " AND ".join(f"{qi(c)} IS NOT NULL" for c in used) or "TRUE"
    cls = [by_upper[c.upper()] for c in classes if c.upper() in by_upper]
    got = levels_of(s, f"SELECT * FROM {src.scan_sql()} WHERE {where}", cls)
    return {c: got[by_upper[c.upper()]].to_pylist() for c in classes if c.upper() in by_upper}
