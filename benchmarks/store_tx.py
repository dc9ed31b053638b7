"""The job store before and after issue 24 (item 2: every multi-row change one transaction), in one
run, interleaved: a plain submit (one job and its event), a dispatch (a compare-and-set update
and its event) and a 20-job array, per operation in µs; and the same with a submit's idempotency
key (the new store only). The old store is this repository's store.py at `--before` (default:
e8435a1, where each statement committed alone), loaded from git.

    python benchmarks/store_tx.py [--runs 5] [--ops 300] [--before e8435a1]

Prints `after / before` as median (min … max, N runs): below 1 is faster.
"""
from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import fmt_stat  # noqa: E402
from statgrid.grid.master import store as new_store# noqa: E402
from statgrid.job.record import Job, JobState  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/home/ann", "PADDING": "x" * 2000}    # a modest user environment


def old_store_module(rev: str) -> types.ModuleType:
    text = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:statgrid/grid/master/store.py"], check=True,
                          capture_output=True, text=True).stdout
    module = types.ModuleType("store_before")
    sys.modules["store_before"] = module            # dataclasses look their module up
    exec(compile(text, f"{rev}:statgrid/grid/master/store.py", "exec"), module.__dict__)
    return module


def a_job(i: int) -> Job:
    return Job(id=0, user="ann", queue="normal", name=f"j{i}", kind="command", argv=["true"], cwd="/", env=ENV,
               submit_ts=time.time())


def measure(module, root: Path, ops: int, key: bool = False) -> dict[str, float]:
    """µs per submit, per dispatch update, per 20-job array, on a fresh store file."""
    s = module.JobStore(root / f"{module.__name__}-{time.monotonic_ns()}.db")
    out = {}
    t = time.perf_counter()
    jobs = []
    for i in range(ops):
        if key:
            with s.transaction():
                jobs.append(s.add(a_job(i)))
                s.record_submit_key("ann", f"k{i}", "d" * 64, "job", {"job_ids": [jobs[-1].id]})
        else:
            jobs.append(s.add(a_job(i)))
    out["submit_us"] = (time.perf_counter() - t) / ops * 1e6
    t = time.perf_counter()
    for j in jobs:
        s.update(dataclasses.replace(j, state=JobState.RUN, attempt=1, host="node1"), JobState.PEND, 0, "dispatch")
    out["dispatch_us"] = (time.perf_counter() - t) / ops * 1e6
    arrays = max(1, ops // 20)
    t = time.perf_counter()
    for a in range(arrays):
        tx = s.transaction() if hasattr(s, "transaction") else s.con
        with tx:
            flow_id = s.add_flow("array", "ann", f"a{a}", 0, time.time(), {"jobs": 20})
            s.add_many([dataclasses.replace(a_job(i), flow_id=flow_id, array_index=i) for i in range(20)])
    out["array20_us"] = (time.perf_counter() - t) / arrays * 1e6
    s.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ops", type=int, default=300)
    ap.add_argument("--before", default="e8435a1")
    args = ap.parse_args()
    before = old_store_module(args.before)
    runs: list[tuple[dict, dict, dict]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):                 # interleaved: before, after, after with a key
            runs.append((measure(before, Path(tmp), args.ops), measure(new_store, Path(tmp), args.ops),
                         measure(new_store, Path(tmp), args.ops, key=True)))
    print(f"store before ({args.before}) and after, {args.ops} operations a run, {args.runs} runs interleaved")
    for what in ("submit_us", "dispatch_us", "array20_us"):
        b = [r[0][what] for r in runs]
        a = [r[1][what] for r in runs]
        print(f"  {what:12} before {fmt_stat(b, 1)} µs, after {fmt_stat(a, 1)} µs, "
              f"after/before {fmt_stat([x / y for x, y in zip(a, b)], 2)}")
    k = [r[2]["submit_us"] / r[1]["submit_us"] for r in runs]
    print(f"  submit with an idempotency key / without: {fmt_stat(k, 2)}")


if __name__ == "__main__":
    main()
