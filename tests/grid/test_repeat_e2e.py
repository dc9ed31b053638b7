"""`statgrid bench mixed --repeat 2` end to end: two real runs of the smallest workload (one session, one job,
one host with one slot) through the real CLI and the embedded grid, then `statgrid report` on the directory.
repeat.json's figures of each run, and the report's mean / min / max / spread / runs, are checked against the
runs' own bundles — bundle.json and jobs.jsonl read here with json, not through statgrid."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from conftest import run_cli

WORKLOAD = """# the smallest workload: one session, one job
[global]
name = "R1"
sessions = 1
ramp_s = 0
concurrency = 1
scale = 0.0001
seed = 1

[io_import_household]
count = 1
"""


def own_figures(bundle: Path) -> dict:
    """A run's figures from its own files: clock = end − workload start (bundle.json); from jobs.jsonl the jobs,
    the DONE ones, the summed wall time (end − start), the summed STIMER real time and the jobs' logical MB/s
    (rusage logical_read_bytes + logical_write_bytes over the clock)."""
    meta = json.loads((bundle / "bundle.json").read_text())
    jobs = [json.loads(line) for line in (bundle / "jobs.jsonl").read_text().splitlines() if line.strip()]
    clock = meta["end_ts"] - meta["workload_start_ts"]
    logical = sum(j["rusage"].get("logical_read_bytes", 0) + j["rusage"].get("logical_write_bytes", 0) for j in jobs)
    return {"clock time": clock, "jobs": len(jobs), "jobs DONE": sum(j["state"] == "DONE" for j in jobs),
            "response time (summed wall time of the jobs)": sum(j["end_ts"] - j["start_ts"] for j in jobs),
            "summed step real time (STIMER)": sum(j["stimer_total"]["real_s"] for j in jobs),
            "jobs' logical reads + writes": logical / 1e6 / clock}


KEYS = {"clock time": "clock_s", "jobs": "jobs", "jobs DONE": "jobs_done",
        "response time (summed wall time of the jobs)": "summed_real_s",
        "summed step real time (STIMER)": "stimer_real_s", "jobs' logical reads + writes": "jobs_logical_mb_s"}


def test_repeat_two_runs_kept_and_reported_with_their_own_figures(home, tmp_path):
    (tmp_path / "r1.toml").write_text(WORKLOAD)
    root = tmp_path / "rep"
    r = run_cli("bench", "mixed", "--workload", str(tmp_path / "r1.toml"), "--nodes", "1", "--slots", "1",
                "--repeat", "2", "--out", str(root), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[-1].startswith(f"2 runs: {root} ")
    assert re.findall(r"\brun (\d)/2\b", r.stderr) == ["1", "2"]       # (the live table may end a line before it)

    rec = json.loads((root / "repeat.json").read_text())
    assert rec["kind"] == "statgrid-bench-repeat" and [x["bundle"] for x in rec["runs"]] == ["run-1", "run-2"]
    own = [own_figures(root / name) for name in ("run-1", "run-2")]
    for run, mine in zip(rec["runs"], own):
        for figure, key in KEYS.items():
            assert run["figures"][key] == pytest.approx(mine[figure], rel=1e-9), (run["bundle"], key)
        assert mine["jobs"] == mine["jobs DONE"] == 1

    rep = run_cli("report", str(root), "--format", "csv,md", timeout=300)
    assert rep.returncode == 0, rep.stderr[-3000:]
    rows = {row["figure"]: row for row in csv.DictReader(open(root / "report" / "repeat.csv"))}
    for figure in KEYS:
        a, b = own[0][figure], own[1][figure]
        row = rows[figure]
        mean = (a + b) / 2
        assert float(row["mean"]) == pytest.approx(mean, rel=1e-9), figure
        assert (float(row["min"]), float(row["max"])) == (pytest.approx(min(a, b)), pytest.approx(max(a, b))), figure
        assert int(row["runs"]) == 2
        assert float(row["spread"]) == pytest.approx((max(a, b) - min(a, b)) / mean, abs=1e-12), figure
    assert "Summary over 2 runs" in (root / "report" / "report.md").read_text()
