"""bench mixed end to end: a 10-session workload (36 jobs) through a real embedded grid at a tiny
scale; every job DONE, a bundle that reloads with per-job STIMER steps, no process left behind."""
from __future__ import annotations

import json

from conftest import run_cli
from statgrid.bench import mixed


def test_ma10_through_the_real_grid(home, tmp_path):
    bundle = tmp_path / "ma10"
    r = run_cli("bench", "mixed", "--sessions", "10", "--nodes", "4", "--scale", "0.0001", "--out", str(bundle),
                timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    meta, jobs = mixed.load_bundle(bundle)
    assert meta["workload"]["jobs"] == 36 and len(jobs) == 36
    assert all(j["state"] == "DONE" for j in jobs), [(j["id"], j["state"], j["exit_reason"]) for j in jobs]
    assert {j["host"] for j in jobs} <= {"node1", "node2", "node3", "node4"} and len({j["host"] for j in jobs}) > 1
    for j in jobs:
        assert j["steps"] and all(s["status"] == "ok" and s["real_s"] >= 0 for s in j["steps"])
        assert j["stimer_total"]["real_s"] > 0 and j["rusage"]["user_cpu_s"] >= 0
    assert {j["kind"] for j in jobs} == {"io", "cpu", "memory"}
    assert sorted({j["session"] for j in jobs}) == list(range(1, 11))
    assert "36 DONE" in r.stdout and (bundle / "grid" / "monitor").is_dir()
    assert json.loads((bundle / "bundle.json").read_text())["datagen"]["design"]["seed"] == 1
