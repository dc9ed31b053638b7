"""The set-up PROC MIXED and GLIMMIX share: their statements checked, the rows used read into memory,
the fixed-effects design (GLM parameterization, aliased columns, Type III coding), and the listing pieces
both print. See statgrid.procs.mixed for the model."""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs import design as _design
from statgrid.procs._aliasing import split_aliased
from statgrid.procs._base import as_list, check_columns, dataset_types, format_value, is_numeric, render_table
from statgrid.procs.design import Effect


# ---------------------------------------------------------------------------- model specification
INTERCEPT = Effect(())                 # mixed lists the intercept as an effect (its DF, its row)


def _parse_subject(text: str | Sequence[str] | None, names: Sequence[str], dsname: str) -> tuple[list[str], str]:
    """'id', 'id(trt)', 'id*site' or a list → (columns, the name SAS would print)."""
    if text is None:
        return [], ""
    if not isinstance(text, str):
        cols = check_columns(list(text), names, "SUBJECT", dsname)
        return cols, "*".join(cols)
    token = text.strip()
    cols = check_columns([p for p in re.split(r"[*()\s]+", token) if p], names, "SUBJECT", dsname)
    if not cols:
        raise StatgridError("subject= is empty; name the subject variable, e.g. subject='id'.")
    return cols, token


# ---------------------------------------------------------------------------- design matrices
@dataclass
class Fixed:
    """The fixed-effects design of the rows used: PROC GLM's over-parameterized columns (design.py),
    those aliased (_aliasing) left out of X, and the effect coding of the Type 3 tests."""

    effects: list[Effect]               # INTERCEPT first, then the MODEL's effects
    X: np.ndarray                       # kept (non-aliased) columns of the GLM parameterization
    X_full: np.ndarray                  # every column of the GLM parameterization
    col_effect: list[int]               # per GLM column: index of its effect
    col_levels: list[dict[str, Any]]    # per GLM column: CLASS variable → level
    kept: list[int]                     # GLM columns estimated (the others are aliased, estimate 0)
    T: np.ndarray                       # GLM columns → sum-to-zero (Type III) columns
    coded_effect: list[int]             # per sum-to-zero column: index of its effect

    @property
    def n_full(self) -> int:
        return self.X_full.shape[1]

    def reordered(self, order: np.ndarray) -> Fixed:
        """The same design with its rows in `order`."""
        return dataclasses.replace(self, X=self.X[order], X_full=self.X_full[order])


def _fixed(st: Setup, memsize: int) -> Fixed:
    d = st.design
    n = len(st.df)
    if n * d.width * 8 * 3 > memsize:
        raise StatgridError(f"the fixed-effects design has {d.width} columns × {n} rows, above memsize; "
                            "drop CLASS effects with many levels or raise memsize.")
    X = d.matrix(st.table)
    kept, _ = split_aliased(np.linalg.qr(X, mode="r"))
    labels = d.column_labels()
    T, _, slices = d.coding("effect")
    coded = [0] + [i + 1 for i, sl in enumerate(slices) for _ in range(sl.start, sl.stop)]
    return Fixed([INTERCEPT, *d.effects], X[:, kept], X, [0 if i is None else i + 1 for i, _ in labels],
                 [lab for _, lab in labels], kept, T, coded)


# ---------------------------------------------------------------------------- shared set-up
@dataclass
class Setup:
    src: Any
    dep: str
    effects: list[Effect]
    class_vars: list[str]
    subject: list[str]
    subject_name: str
    design: Any = None        # statgrid.procs.design.Design of the MODEL effects
    sql: str = ""             # the SELECT of the rows used (design.prepare)
    table: Any = None         # those rows (Arrow)
    df: Any = None            # and as pandas
    n_read: int = 0
    levels: dict[str, list] = field(default_factory=dict)     # every CLASS variable's levels


def _setup(s, data, model, class_, subject, extra: list[str], role: str, numeric_dep: bool,
           repeated: Sequence[str] = (), ref: dict | None = None) -> Setup:
    """Check the statements, and read the rows used (no missing value in any variable named, as SAS)
    into memory: rows × variables × 8 bytes above MEMSIZE is an error. extra: numeric RANDOM
    variables; repeated: the REPEATED effect's variables (any type); ref: CLASS var(REF=) levels put last."""
    src, types = dataset_types(s, data)
    names = list(types)
    (dep,), effects = _design.parse_model(model, names, str(src), many_responses=False)
    class_vars = check_columns(as_list(class_), names, "CLASS", str(src))
    subj, subj_name = _parse_subject(subject, names, str(src))
    extra = check_columns(extra, names, "RANDOM", str(src))
    repeated = check_columns(list(repeated), names, "REPEATED", str(src))
    if numeric_dep and not is_numeric(types[dep]):
        raise StatgridError(f"dependent variable {dep!r} in {src} is {types[dep]}, not numeric.")
    if dep in {v for e in effects for v in e.variables}:
        raise StatgridError(f"dependent variable {dep!r} is also a fixed effect in model {model!r}.")
    used = list(dict.fromkeys([dep, *[v for e in effects for v in e.variables], *class_vars, *subj, *extra,
                               *repeated]))
    n_read = s.con.sql(f"SELECT count(*) FROM ({src.scan_sql()})").fetchall()[0][0]
    need = n_read * len(used) * 8
    if need > s.options.memsize_bytes:
        raise StatgridError(f"{role} holds its data in memory: {n_read} rows × {len(used)} variables × 8 bytes = "
                            f"{need / 2**20:.1f} MiB, above memsize={s.options.memsize_bytes / 2**20:.1f} MiB; "
                            "raise memsize or fit a sample or subset of the data.")
    design, sql, where, _ = _design.prepare(s, src, effects, [dep] if numeric_dep else [], class_vars, extra=extra,
                                            raw=[*subj, *repeated, *([] if numeric_dep else [dep])], ref=ref)
    st = Setup(src, dep, [INTERCEPT, *effects], class_vars, subj, subj_name, design, sql)
    st.table = s.fetch_arrow(sql)
    st.df = st.table.to_pandas()[[c for c in used if c in st.table.column_names]]
    st.n_read = n_read
    if st.df.empty:
        raise StatgridError(f"{src} has no observation with every variable of the model present "
                            f"({st.n_read} read, all with a missing value); nothing to fit.")
    others = _design.levels_of(s, f"SELECT * FROM ({src.scan_sql()}) WHERE {where}",
                               [c for c in class_vars if c not in design.classes])
    st.levels = {c: design.levels[c] if c in design.levels else others[c].to_pylist() for c in class_vars}
    return st


def _solution_rows(st: Setup, design: Fixed, est, se, dfs, stat_name: str, dist) -> tuple[list[str], list[list]]:
    class_in = [v for v in st.class_vars if any(v in e.variables for e in design.effects)]
    columns = ["Effect", *class_in, "Estimate", "StdErr", *(["DF"] if dfs is not None else []), stat_name,
               "Probt" if dfs is not None else "Probz"]
    pos = {j: k for k, j in enumerate(design.kept)}
    rows = []
    for j, (ei, lab) in enumerate(zip(design.col_effect, design.col_levels)):
        e = design.effects[ei]
        levels = [format_value(lab[v]) if v in lab else "" for v in class_in]
        if j in pos:
            k = pos[j]
            t = float(est[k] / se[k]) if se[k] > 0 else float("nan")
            df_e = dfs[ei] if dfs is not None else None
            p = dist(t, df_e)
            rows.append([e.name, *levels, float(est[k]), float(se[k]), *([df_e] if dfs is not None else []), t, p])
        else:       # aliased: SAS shows 0 and missing values
            rows.append([e.name, *levels, 0.0, None, *([None] if dfs is not None else []), None, None])
    return columns, rows


def _kv(pairs: Sequence[Sequence[Any]], title: str) -> str:
    """A SAS-like two-column table without a header: label, value."""
    w = max(len(str(k)) for k, _ in pairs)
    return "\n".join([title, ""] + [f"{str(k).ljust(w)}  {format_value(v)}" for k, v in pairs]) + "\n"


def _class_table(st: Setup) -> str:
    if not st.class_vars:
        return ""
    rows = [[v, len(st.levels[v]), " ".join(format_value(x) for x in st.levels[v][:30])
             + (" ..." if len(st.levels[v]) > 30 else "")] for v in st.class_vars]
    return render_table(["Class", "Levels", "Values"], rows, title="Class Level Information")
