"""PROC TRANSPOSE and PROC SURVEYSELECT.

transpose: within each BY group, every VAR variable becomes one row (`_NAME_` holds its name)
and the group's observations become columns, named by the ID variable's values or COL1, COL2, …
surveyselect: simple random sampling without replacement (METHOD=SRS), systematic (SYS) or with
replacement (URS, NumberHits, OUTHITS), overall or per stratum, with SAMPSIZE (n) or SAMPRATE (rate, rounded
up as SAS does); reproducible with seed=, and the output carries SelectionProb / ExpectedHits and
SamplingWeight as SAS's does.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from statgrid.errors import StatgridError
from statgrid.procs._base import as_list, check_columns, dataset_types, is_numeric, procedure, qi

_ROWNUM = "file_row_number"


@procedure("PROCEDURE TRANSPOSE")
def transpose(s, data: str, out: str, var: str | Sequence[str] | None = None, by: str | Sequence[str] | None = None,
              id: str | None = None, prefix: str = "COL", name: str = "_NAME_"):
    """Transpose `var` (default: numeric variables not in BY/ID) within BY groups into `out`."""
    import pyarrow as pa

    src, types = dataset_types(s, data)
    names = list(types)
    groups = check_columns(as_list(by), names, "BY", str(src))
    id_col = check_columns([id], names, "ID", str(src))[0] if id else None
    if var is None:
        variables = [c for c, t in types.items() if is_numeric(t) and c not in groups and c != id_col]
    else:
        variables = check_columns(as_list(var), names, "VAR", str(src))
    if not variables:
        raise StatgridError(f"{src} has no variables to transpose; name them with var=[...].")
    numeric = all(is_numeric(types[v]) for v in variables)
    order = ", ".join([*(f"{qi(g)} NULLS FIRST" for g in groups), _ROWNUM])
    wanted = list(dict.fromkeys([*groups, *([id_col] if id_col else []), *variables]))
    rows = s.fetch_arrow(f"SELECT {', '.join(qi(c) for c in wanted)} FROM {src.scan_sql(row_numbers=True)} "
                         f"ORDER BY {order}").to_pylist()
    out_cols: list[str] = []
    records: list[dict] = []
    i = 0
    while i < len(rows):
        key = tuple(rows[i][g] for g in groups)
        j = i
        while j < len(rows) and tuple(rows[j][g] for g in groups) == key:
            j += 1
        block = rows[i:j]
        if id_col:
            labels = [str(r[id_col]) for r in block]
            dup = {x for x in labels if labels.count(x) > 1}
            if dup:
                where = f" in BY group {dict(zip(groups, key))}" if groups else ""
                raise StatgridError(f"ID value {sorted(dup)[0]!r} occurs more than once{where}; ID values must be "
                                    "unique within a BY group (add a BY variable, or leave id= out).")
        else:
            labels = [f"{prefix}{k + 1}" for k in range(len(block))]
        for lab in labels:
            if lab not in out_cols:
                out_cols.append(lab)
        for v in variables:
            rec = {g: k for g, k in zip(groups, key)}
            rec[name] = v
            for lab, r in zip(labels, block):
                val = r[v]
                rec[lab] = val if numeric or val is None else str(val)
            records.append(rec)
        i = j
    clash = set(out_cols) & ({name} | set(groups))
    if clash:
        raise StatgridError(f"a transposed column would be named {sorted(clash)[0]!r}, like a BY or _NAME_ column; "
                            "use prefix= or another ID variable.")
    value_type = pa.float64() if numeric else pa.string()
    arrays = [pa.array([r.get(g) for r in records]) for g in groups]
    arrays.append(pa.array([r[name] for r in records], pa.string()))
    arrays += [pa.array([r.get(c) for r in records], value_type) for c in out_cols]
    table = pa.Table.from_arrays(arrays, names=[*groups, name, *out_cols])
    return s.write_table(out, table)


@procedure("PROCEDURE SURVEYSELECT")
def surveyselect(s, data: str, out: str, n: int | None = None, rate: float | None = None,
                 strata: str | Sequence[str] | None = None, method: str = "srs", seed: int | None = None,
                 outhits: bool = False, summary: dict | None = None):
    """Select a sample of n rows (or the share rate) from `data`, per stratum if strata= is given, into `out`
    (input order kept). method: 'srs' (simple random sampling without replacement; rate·N rounded up), 'sys'
    (systematic: interval N/n or 1/rate after a random start, in input order) — both add SelectionProb (n/N or
    the rate) and SamplingWeight; 'urs' (with replacement: n draws) adds NumberHits, ExpectedHits (n/N) and
    SamplingWeight (N/n), one row per unit selected or, with outhits=True, one per selection (SAS/STAT
    SURVEYSELECT). seed= makes it reproducible; without one a seed is drawn and logged. `summary`, a dict, gets
    what SAS's Sample Selection Summary shows: seed, population (rows), strata (their number, 0 without
    strata=), sample (units selected; selections for 'urs'), prob (the selection probability, or the expected
    hits for 'urs', when every stratum shares it; else None)."""
    import pyarrow as pa

    method = method.lower()
    if method not in ("srs", "sys", "urs"):
        raise StatgridError(f"method={method!r} is not supported; use 'srs' (simple random), 'sys' (systematic) "
                            "or 'urs' (with replacement).")
    if (n is None) == (rate is None):
        raise StatgridError("give exactly one of n= (rows per stratum) or rate= (share of each stratum).")
    if n is not None and n < 0:
        raise StatgridError(f"n={n} is not allowed: a sample size is 0 or more.")
    if rate is not None and not 0 < rate <= 1:
        raise StatgridError(f"rate={rate} is not allowed: use a share in (0, 1], e.g. rate=0.1.")
    if outhits and method != "urs":
        raise StatgridError("outhits=True is for method='urs' (with replacement); other methods select a row once.")
    src = s.dataset(data)
    names = [c for c, _ in s.columns(src.scan_sql())]
    strata_cols = check_columns(as_list(strata), names, "STRATA", str(src))
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**31)
    rng = np.random.default_rng(seed)
    keys = ", ".join([*(qi(c) for c in strata_cols), _ROWNUM])
    frame = s.fetch_arrow(f"SELECT {keys} FROM {src.scan_sql(row_numbers=True)} "
                          f"ORDER BY {', '.join([*(f'{qi(c)} NULLS FIRST' for c in strata_cols), _ROWNUM])}")
    rownum = frame.column(_ROWNUM).to_numpy()
    strata_vals = list(zip(*(frame.column(c).to_pylist() for c in strata_cols))) if strata_cols else \
        [()] * len(rownum)
    chosen, probs, hits = [], [], []
    start = 0
    while start < len(rownum):
        stop = start
        while stop < len(rownum) and strata_vals[stop] == strata_vals[start]:
            stop += 1
        size = stop - start
        where = f"stratum {dict(zip(strata_cols, strata_vals[start]))}" if strata_cols else str(src)
        pick, prob, hit = _select(rng, method, size, n, rate, where)
        if outhits:                                         # URS: a row for each selection of a unit
            pick, prob, hit = np.repeat(pick, hit), np.repeat(prob, hit), np.repeat(hit, hit)
        chosen.append(rownum[pick + start])
        probs.append(prob)
        hits.append(hit)
        start = stop
    cat = (lambda parts, t: pa.array(np.concatenate(parts) if parts else [], t))
    sel = pa.table({_ROWNUM: cat(chosen, pa.int64()), "p": cat(probs, pa.float64()), "hits": cat(hits, pa.int64())})
    if method == "urs":
        stats = "sel.hits AS NumberHits, sel.p AS ExpectedHits, 1 / sel.p AS SamplingWeight"
    else:
        stats = "sel.p AS SelectionProb, 1 / sel.p AS SamplingWeight"
    s.con.register("__statgrid_selected", sel)
    try:
        ref = s.write(out, f"SELECT t.* EXCLUDE ({_ROWNUM}), {stats} FROM {src.scan_sql(row_numbers=True)} AS t "
                           f"JOIN temp.main.__statgrid_selected AS sel USING ({_ROWNUM}) ORDER BY t.{_ROWNUM}")
    finally:
        s.con.unregister("__statgrid_selected")
    label = {"srs": "simple random sampling", "sys": "systematic random sampling",
             "urs": "unrestricted random sampling, with replacement"}[method]
    drawn = int(sum(h.sum() for h in hits)) if method == "urs" else len(sel)
    if summary is not None:
        shared = np.unique(np.concatenate(probs)) if probs and sum(len(p) for p in probs) else np.zeros(0)
        summary.update(seed=seed, population=len(rownum), strata=len(chosen) if strata_cols else 0, sample=drawn,
                       prob=float(shared[0]) if len(shared) == 1 else None)
    rows = len(sel) if not outhits else drawn
    s.log.note(f"SURVEYSELECT: {drawn} selection(s) of {len(rownum)} rows, {rows} output row(s) ({label}, "
               f"seed={seed}).")
    return ref


def _select(rng, method: str, size: int, n: int | None, rate: float | None, where: str):
    """One stratum of `size` rows: the positions selected (0-based, in order; a position once per output row),
    each row's SelectionProb (ExpectedHits for URS) and its NumberHits."""
    if method == "sys":
        if n is not None and n > size:
            raise StatgridError(f"n={n} is more than the {size} rows of {where}; systematic sampling selects a row "
                                "once: lower n=, or use rate=.")
        if n == 0 or size == 0:
            return np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)
        k = size / n if n is not None else 1.0 / rate
        r = rng.uniform(0.0, k)                            # the random start in the first interval
        count = n if n is not None else int(math.ceil((size - r) / k))
        pick = np.minimum(np.floor(r + k * np.arange(count)).astype(np.int64), size - 1)
        return pick, np.full(len(pick), 1.0 / k), np.ones(len(pick), np.int64)
    k = n if n is not None else math.ceil(rate * size)
    if method == "urs":
        if size == 0 or k == 0:
            return np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)
        draws = rng.integers(0, size, size=k)
        pick, count = np.unique(draws, return_counts=True)
        return pick, np.full(len(pick), k / size), count
    if k > size:
        raise StatgridError(f"n={k} is more than the {size} rows of {where}; sampling is without replacement: "
                            "lower n=, or use rate=.")
    pick = rng.choice(size, size=k, replace=False)
    return pick, np.full(k, k / size), np.ones(k, np.int64)
