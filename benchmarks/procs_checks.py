"""The procs benchmark's checks: digests of each side's result (sort order, summary values,
frequency counts) and their comparison across sides; procs.py runs them after the timed work."""
from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

MEASURES = [f"x{j}" for j in range(1, 11)]
STATS = ["n", "mean", "std", "min", "max"]
REL_TOL = 1e-9                      # summary agreement


def sort_digest(path: Path, stable: bool) -> dict:
    """Row count, first/last keys, whether the file is sorted (and stable), and digests of the
    key sequence and of the row order (id sequence) — equal across sides iff same output order."""
    import numpy as np
    import pyarrow.parquet as pq
    t = pq.read_table(path, columns=["k1", "k2", "id"])
    k1 = t.column("k1").to_numpy()
    k2 = t.column("k2").to_numpy()
    ids = t.column("id").to_numpy()
    n = len(k1)
    d1, d2 = np.diff(k1.astype(np.int64)), np.diff(k2.astype(np.int64))
    # k1 ascending, k2 descending within k1; stable: id ascending within equal (k1, k2)
    bad_order = (d1 < 0) | ((d1 == 0) & (d2 > 0))
    ties = (d1 == 0) & (d2 == 0)
    unstable_ties = ties & (np.diff(ids) < 0)
    keys = hashlib.blake2b(np.ascontiguousarray(k1).tobytes() + np.ascontiguousarray(k2).tobytes(),
                           digest_size=8).hexdigest()
    order = hashlib.blake2b(np.ascontiguousarray(ids).tobytes(), digest_size=8).hexdigest()
    ncols = len(pq.read_schema(path).names)
    return {"rows": n, "columns": ncols,
            "first": (int(k1[0]), int(k2[0])) if n else None, "last": (int(k1[-1]), int(k2[-1])) if n else None,
            "sorted": not bool(bad_order.any()), "stable": not bool(unstable_ties.any()),
            "keys_digest": keys, "order_digest": order, "id_sum": int(ids.sum())}


def summary_values(side: str, res) -> dict[tuple[str, str, str], float]:
    out = {}
    if side == "statgrid":
        for r in res.to_dicts():
            for st in STATS:
                out[(r["cat1"], r["variable"], st)] = r[st]
    elif side in ("duckdb", "polars"):
        rows = res.to_pylist() if side == "duckdb" else res.to_dicts()
        for r in rows:
            for v in MEASURES:
                for st in STATS:
                    out[(r["cat1"], v, st)] = r[f"{v}__{st}"]
    elif side == "pandas":
        names = {"n": "count", "mean": "mean", "std": "std", "min": "min", "max": "max"}
        for cat in res.index:
            for v in MEASURES:
                for st in STATS:
                    out[(str(cat), v, st)] = float(res.loc[cat, (v, names[st])])
    return {k: (None if v is None else float(v)) for k, v in out.items()}


def freq_values(side: str, res) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    if side == "statgrid":
        for r in res[0].rows:
            out[("cat1", r[0])] = int(r[1])
        for r in res[1].rows:
            out[("cat1*cat2", r[0], r[1])] = int(r[2])
    elif side == "duckdb":
        from statgrid.procs.freq import grouping_id
        one = grouping_id(["cat1", "cat2"], ["cat1"])
        for s, c1, c2, n in res:       # tables_sql's rows: (set, cat1, cat2, n)
            out[("cat1", c1) if s == one else ("cat1*cat2", c1, c2)] = int(n)
    elif side == "pandas":
        for k, v in res[0].items():
            out[("cat1", str(k))] = int(v)
        for (a, b), v in res[1].items():
            out[("cat1*cat2", str(a), str(b))] = int(v)
    elif side == "polars":
        for r in res[0].iter_rows():
            out[("cat1", r[0])] = int(r[1])
        for r in res[1].iter_rows():
            out[("cat1*cat2", r[0], r[1])] = int(r[2])
    return out


def close_enough(a: float | None, b: float | None, rel: float) -> bool:
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return (a is None or math.isnan(a)) and (b is None or math.isnan(b))
    return abs(a - b) <= rel * max(abs(a), abs(b)) or a == b


def run_checks(case: str, digests: dict[str, Any], rows: int) -> list[dict]:
    """Compare every side's first-run result with statgrid's (or, without statgrid, the first one)."""
    checks: list[dict] = []

    def add(name: str, ok: bool, detail: str) -> None:
        checks.append({"check": name, "ok": bool(ok), "detail": detail})

    if not digests:
        return checks
    ref_side = "statgrid" if "statgrid" in digests else next(iter(digests))
    ref = digests[ref_side]
    if case in ("sort", "sort_unstable"):
        stable = case == "sort"
        for side, d in digests.items():
            add(f"{side}: {d['rows']:,} rows, {d['columns']} columns", d["rows"] == rows and d["columns"] == 20,
                f"expected {rows:,} rows × 20 columns")
            add(f"{side}: sorted by k1, k2 desc", d["sorted"], "keys in order" if d["sorted"] else "OUT OF ORDER")
            if stable:
                add(f"{side}: stable (ties in input order)", d["stable"],
                    "ties keep input order" if d["stable"] else "ties NOT in input order")
            add(f"{side}: same rows (sum of id)", d["id_sum"] == rows * (rows - 1) // 2, "every input row once")
        for side, d in digests.items():
            if side == ref_side:
                continue
            same = d["rows"] == ref["rows"] and d["first"] == ref["first"] and d["last"] == ref["last"]
            add(f"{ref_side} vs {side}: row count, first/last keys", same,
                f"{ref_side} {ref['rows']:,} {ref['first']}…{ref['last']}; {side} {d['rows']:,} {d['first']}…{d['last']}")
            add(f"{ref_side} vs {side}: identical key sequence", d["keys_digest"] == ref["keys_digest"],
                f"{ref['keys_digest']} vs {d['keys_digest']}")
            if stable:
                add(f"{ref_side} vs {side}: identical row order", d["order_digest"] == ref["order_digest"],
                    f"{ref['order_digest']} vs {d['order_digest']}")
    elif case == "summary":
        # The check is against pandas; every other side is compared as well.
        base_side = "pandas" if "pandas" in digests else ref_side
        base = digests[base_side]
        for side, vals in digests.items():
            if side == base_side:
                continue
            keys_ok = set(vals) == set(base)
            worst, worst_key = 0.0, None
            for k in set(vals) & set(base):
                a, b = vals[k], base[k]
                if not close_enough(a, b, REL_TOL):
                    err = abs(a - b) / max(abs(a), abs(b)) if a is not None and b is not None else math.inf
                    if err >= worst:
                        worst, worst_key = err, k
            ok = keys_ok and worst_key is None
            add(f"{side} vs {base_side}: n mean std min max of {len(MEASURES)} vars × "
                f"{len({k[0] for k in vals})} classes within {REL_TOL:g} rel.", ok,
                "agree" if ok else (f"groups differ: {sorted(set(vals) ^ set(base))[:4]}" if not keys_ok
                                    else f"worst {worst:.3g} at {worst_key}: {vals[worst_key]!r} vs {base[worst_key]!r}"))
        if "statgrid" in digests:
            total = sum(v for (c, var, st), v in digests["statgrid"].items() if st == "n" and var == "x1")
            add(f"statgrid: n(x1) sums to {rows:,}", total == rows, f"{total:,.0f}")
    elif case == "freq":
        for side, vals in digests.items():
            n1 = sum(v for k, v in vals.items() if k[0] == "cat1")
            n2 = sum(v for k, v in vals.items() if k[0] == "cat1*cat2")
            add(f"{side}: table totals = rows", n1 == rows and n2 == rows, f"cat1 {n1:,}, cat1*cat2 {n2:,}")
            if side != ref_side:
                add(f"{ref_side} vs {side}: identical counts", vals == ref,
                    f"{len(ref)} cells" if vals == ref else f"differ in {len(set(vals.items()) ^ set(ref.items()))} cells")
    return checks
