"""`statgrid size` through the real CLI (a subprocess) on a real bench mixed bundle kept with the tests
(tests/data/bundle_ma2: 2 sessions, 7 jobs, 4 embedded hosts sharing the machine's 2 CPUs), and its errors."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from conftest import run_cli

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "bundle_ma2"


def bundle_figures():
    """The bundle's figures computed here from its files, independently of statgrid.advise."""
    meta = json.loads((BUNDLE / "bundle.json").read_text())
    jobs = [json.loads(x) for x in (BUNDLE / "jobs.jsonl").read_text().splitlines() if x.strip()]
    clock = meta["end_ts"] - meta["workload_start_ts"]
    cpu = sum(j["rusage"]["user_cpu_s"] + j["rusage"]["sys_cpu_s"] for j in jobs)
    io = sum(j["rusage"]["logical_read_bytes"] + j["rusage"]["logical_write_bytes"] for j in jobs)
    return meta, jobs, clock, cpu, io


@pytest.mark.grid
def test_size_json_and_text_from_one_record(tmp_path):
    meta, jobs, clock, cpu, io = bundle_figures()
    r = run_cli("size", str(BUNDLE), "--users", "4", "--sessions-per-user", "2", "--json",
                "--what-if", "nodes=2,slots=2,cores=1,mbps=20", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["measured"]["jobs"] == len(jobs) == 7 and d["measured"]["clock_s"] == pytest.approx(clock)
    assert d["measured"]["cores"] == meta["host"]["cpus"] and d["measured"]["cores_shared"] is True
    assert d["target"]["sessions"] == 8 and d["target"]["users"] == 4
    # 8 sessions of the 2 measured ones' work in the measured clock
    assert d["needed"]["cores_floor"] == pytest.approx(8 / 2 * cpu / clock)
    assert d["needed"]["mb_s"] == pytest.approx(8 / 2 * io / 1e6 / clock)
    assert d["needed"]["nodes_arithmetic"] == math.ceil(8 / 2 * cpu / clock / meta["host"]["cpus"])
    w = d["what_if"]
    assert (w["nodes"], w["slots"], w["cores_per_node"], w["mbps"], w["sessions"]) == (2, 2, 1.0, 20.0, 8)
    # 8 sessions × 3.5 jobs = 28 jobs, all placed on the 2 nodes; the storage (20 MB/s) bounds the clock:
    # the jobs' bytes cannot move faster than that.
    assert w["jobs"] == 28 and sum(p["jobs"] for p in w["per_node"]) == 28
    assert w["clock_s"] >= 8 / 2 * io / 20e6
    text = run_cli("size", str(BUNDLE), "--users", "4", "--sessions-per-user", "2",
                   "--what-if", "nodes=2,slots=2,cores=1,mbps=20", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    out = text.stdout
    assert "for 4 users × 2 session(s) each = 8 sessions (28 jobs)" in out
    assert f"predicted clock {w['clock_s']:.1f} s" in out
    assert "100–150 MB/s per core" in out and "90–150 MB/s per core" in out


@pytest.mark.grid
def test_size_bad_input_exits_with_the_fix(tmp_path):
    r = run_cli("size", str(BUNDLE), "--sessions", "0", cwd=tmp_path)
    assert r.returncode == 2 and "--sessions 0 must be at least 1" in r.stderr and "Try 'statgrid size --help'" in r.stderr
    r = run_cli("size", str(BUNDLE), "--what-if", "nodes=x", cwd=tmp_path)
    assert r.returncode == 2 and "--what-if nodes='x' is not a whole number; e.g. --what-if nodes=" in r.stderr
    r = run_cli("size", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 1 and "is not a bench mixed bundle (" in r.stderr and "bundle.json is missing" in r.stderr
    r = run_cli("size", str(tmp_path / "nope"), cwd=tmp_path)
    assert r.returncode == 2 and "is not a directory" in r.stderr
    r = run_cli("size", str(BUNDLE), "--sessions", "3", "--users", "2", cwd=tmp_path)
    assert r.returncode == 2 and "not both" in r.stderr
