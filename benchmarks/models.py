"""benchmarks/models: reg and logistic — statgrid vs statsmodels on the same data, same run.

    python benchmarks/models.py [--reg-rows 5000000] [--regressors 100] [--logit-rows 1000000]
                                [--logit-regressors 50] [--runs 3] [--memsize 2G] [--small-memsize 512M]
                                [--dir DIR] [--cases reg,logistic] [--sides statsmodels,statgrid,statgrid-ooc]
                                [--json FILE]

Data (deterministic, numpy seeded) are written once as Parquet under --dir and read by every
side, so each side's time includes reading its input:
  reg       y = Xβ + ε with --regressors N(0,1) columns on --reg-rows rows (5 M × 100: 4 GB)
  logistic  a 0/1 response from a logit model with --logit-regressors columns on --logit-rows rows
Sides, each run in its own fresh process (peak memory = the child's max RSS from wait4):
  statsmodels      pyarrow → numpy → OLS(...).fit(method="qr") / Logit(...).fit(method="newton")
  statgrid         session.reg / session.logistic with memsize --memsize
  statgrid-ooc     the same with --small-memsize, smaller than the table: rows stream in chunks
                   (reg: one pass; logistic: one pass per IRLS iteration)
Runs are interleaved (run r rotates the side order by r). Printed: wall time and peak RSS of each
side as median (min … max, N runs), and the ratios statgrid ÷ statsmodels per run, as
median (min … max, N runs); the largest |difference| of the estimates between sides is checked.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_stat  # noqa: E402

HERE = Path(__file__).resolve()


# ---------------------------------------------------------------------------- data
def make_data(case: str, rows: int, k: int, path: Path) -> None:
    if path.exists():
        return
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(20261122 + k)
    beta = rng.normal(size=k) * (0.5 if case == "reg" else 0.1)
    tmp = path.with_suffix(".tmp")
    writer = None
    step = 500_000
    for start in range(0, rows, step):
        m = min(step, rows - start)
        X = rng.normal(size=(m, k))
        eta = 1.0 + X @ beta
        y = eta + rng.normal(size=m) if case == "reg" else (rng.random(m) < 1 / (1 + np.exp(-eta))).astype(np.float64)
        table = pa.table({**{f"x{j + 1}": X[:, j] for j in range(k)}, "y": y})
        if writer is None:
            writer = pq.ParquetWriter(tmp, table.schema, compression="zstd")
        writer.write_table(table, row_group_size=122_880)
    writer.close()
    os.replace(tmp, path)


# ---------------------------------------------------------------------------- one side, in a child process
def child(case: str, side: str, path: str, k: int, memsize: str) -> dict:
    import numpy as np
    try:                    # if memory runs out, the kernel kills this run first, not the machine's other work
        Path("/proc/self/oom_score_adj").write_text("1000")
    except OSError:
        pass
    t0 = time.perf_counter()
    if side == "statsmodels":
        import pyarrow.parquet as pq
        import statsmodels.api as sm
        table = pq.read_table(path)
        X = np.empty((table.num_rows, k + 1))
        X[:, 0] = 1.0
        for j in range(k):
            X[:, j + 1] = table.column(f"x{j + 1}").to_numpy()
        y = table.column("y").to_numpy()
        del table
        if case == "reg":
            params = sm.OLS(y, X).fit(method="qr").params
        else:
            params = sm.Logit(y, X).fit(method="newton", disp=0, tol=1e-10, maxiter=50).params
    else:
        import io

        from statgrid.config import load_config
        from statgrid.session import Session
        from statgrid.session.log import SessionLog
        quiet = SessionLog(text=io.StringIO(), jsonl=io.StringIO(), listing=io.StringIO())
        with Session(load_config(), {"memsize": memsize}, log=quiet) as s:
            s.libname("bench", str(Path(path).parent))
            model = "y = " + " ".join(f"x{j + 1}" for j in range(k))
            member = "bench." + Path(path).stem
            if case == "reg":
                r = s.reg(member, model, print=False)
            else:
                r = s.logistic(member, model, event=1, print=False)
            params = np.array([row[2] for row in r.rows])
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "params": [float(v) for v in params]}


def run_side(case: str, side: str, path: Path, k: int, memsize: str) -> dict:
    proc = subprocess.Popen([sys.executable, str(HERE), "--child", case, side, str(path), str(k), memsize],
                            stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss * 1024 / 1024 ** 3
    if proc.returncode != 0:
        why = "killed by the kernel (out of memory)" if proc.returncode == -9 else f"exit {proc.returncode}"
        return {"failed": why, "peak_rss_gib": peak, "wall_s": None, "params": None}
    rec = json.loads(out.strip().splitlines()[-1])
    rec["peak_rss_gib"] = peak
    return rec


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        case, side, path, k, memsize = sys.argv[2:7]
        print(json.dumps(child(case, side, path, int(k), memsize)))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reg-rows", default="5000000,2000000",
                    help="comma list: statsmodels needs > 23 GiB for 5 M × 100, so a size it can fit runs too")
    ap.add_argument("--regressors", type=int, default=100)
    ap.add_argument("--logit-rows", type=int, default=1_000_000)
    ap.add_argument("--logit-regressors", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--memsize", default="2G")
    ap.add_argument("--small-memsize", default="512M")
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp/statgrid-bench/models"))
    ap.add_argument("--cases", default="reg,logistic")
    ap.add_argument("--sides", default="statsmodels,statgrid,statgrid-ooc",
                    help="comma list of statsmodels, statgrid, statgrid-ooc (statsmodels is the baseline of the ratios)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    wanted = [x.strip() for x in a.sides.split(",") if x.strip()]
    bad = [x for x in wanted if x not in ("statsmodels", "statgrid", "statgrid-ooc")]
    if bad or "statsmodels" not in wanted:
        ap.error(f"--sides {a.sides!r}: choose from statsmodels, statgrid, statgrid-ooc, with statsmodels "
                 "(the baseline of every ratio)")
    a.dir.mkdir(parents=True, exist_ok=True)
    report = {}
    todo = [("reg", int(r), a.regressors) for r in a.reg_rows.split(",") if "reg" in a.cases.split(",")]
    if "logistic" in a.cases.split(","):
        todo.append(("logistic", a.logit_rows, a.logit_regressors))
    for case, rows, k in todo:
        path = a.dir / f"{case}_{rows}x{k}.parquet"
        t = time.perf_counter()
        make_data(case, rows, k, path)
        size_gib = path.stat().st_size / 1024 ** 3
        raw_gib = rows * (k + 1) * 8 / 1024 ** 3
        print(f"\n== {case}: {rows:,} rows × {k} regressors (Parquet {size_gib:.2f} GiB, {raw_gib:.2f} GiB as doubles; "
              f"data ready in {time.perf_counter() - t:.0f} s)", flush=True)
        sides = [(s, m) for s, m in (("statsmodels", a.memsize), ("statgrid", a.memsize),
                                     ("statgrid-ooc", a.small_memsize)) if s in wanted]
        results: dict[str, list[dict]] = {s: [] for s, _ in sides}
        mem_of = dict(sides)
        for r in range(a.runs):
            order = sides[r % len(sides):] + sides[:r % len(sides)]
            for side, mem in order:
                rec = run_side(case, "statsmodels" if side == "statsmodels" else "statgrid", path, k, mem)
                results[side].append(rec)
                took = f"{rec['wall_s']:8.1f} s" if rec["wall_s"] is not None else f"FAILED: {rec['failed']}"
                print(f"  run {r + 1} {side:<13} {took}  peak RSS {rec['peak_rss_gib']:6.2f} GiB", flush=True)
            if results["statsmodels"] and all(x.get("failed") for x in results["statsmodels"]):
                sides = [x for x in sides if x[0] != "statsmodels"]       # it will not fit on a rerun either
        import numpy as np
        done = [x for s in results for x in results[s] if x["params"] is not None]
        base = np.array(done[0]["params"])
        diff = max(float(np.max(np.abs(np.array(x["params"]) - base))) for x in done)
        print(f"  largest |estimate difference| between sides: {diff:.3g}")
        for side in results:
            walls = [x["wall_s"] for x in results[side]]
            rss = [x["peak_rss_gib"] for x in results[side]]
            fails = [x["failed"] for x in results[side] if x.get("failed")]
            print(f"  {side:<13} (memsize {mem_of[side]:>5}) wall {fmt_stat(walls)} s   peak RSS {fmt_stat(rss)} GiB"
                  + (f"   {len(fails)} failed: {fails[0]}" if fails else ""))
        for side in [s for s in ("statgrid", "statgrid-ooc") if s in results]:
            pairs = [(x, b) for x, b in zip(results[side], results["statsmodels"]) if x["wall_s"] and b["wall_s"]]
            wr = [x["wall_s"] / b["wall_s"] for x, b in pairs]
            mr = [x["peak_rss_gib"] / b["peak_rss_gib"] for x, b in pairs]
            print(f"  {side} ÷ statsmodels: wall {fmt_stat(wr)}   peak RSS {fmt_stat(mr)}")
        report[f"{case}_{rows}"] = {"rows": rows, "regressors": k, "parquet_gib": size_gib, "max_abs_diff": diff,
                        "runs": {s: [{k2: v for k2, v in x.items() if k2 != "params"} for x in results[s]]
                                 for s in results}}
    if a.json:
        a.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
