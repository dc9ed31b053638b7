"""Seed 000 Table 1 (jobs by user type and data size) and seed 004's workload profile (percent of work by user
type) from a run's job records; the expected counts and percentages are worked out by hand below."""
from __future__ import annotations

import pytest

from statgrid.report import md
from statgrid.report.profile import jobs_by_type_and_size, work_profile


def job(i, user_type, read_bytes, wall, cpu):
    return {"id": i, "user_type": user_type, "start_ts": 100.0, "end_ts": 100.0 + wall,
            "rusage": {"user_cpu_s": cpu * 0.75, "sys_cpu_s": cpu * 0.25, "logical_read_bytes": read_bytes}}


JOBS = [job(1, "Base SAS statistics", 0.5e9, 10.0, 8.0), job(2, "Base SAS statistics", 2e9, 30.0, 12.0),
        job(3, "Base SAS statistics", 20e9, 20.0, 20.0), job(4, "Advanced analytics", 0.2e9, 40.0, 40.0),
        job(5, "Advanced analytics", 0.9e9, 0.0, 0.0)]


def test_table1_counts_jobs_by_user_type_and_size_class():
    t = jobs_by_type_and_size(JOBS)
    got = [(r["user_type"], r["data_size"], r["jobs"], r["mean_read_mb"]) for r in t.rows]
    assert got == [("Advanced analytics", "less than 1 GB", 2, pytest.approx((200 + 900) / 2)),
                   ("Base SAS statistics", "less than 1 GB", 1, 500.0),
                   ("Base SAS statistics", "1 to 10 GB", 1, 2000.0),
                   ("Base SAS statistics", "more than 10 GB", 1, 20000.0)]
    assert "seed 000 Table 1" in md.table_md(t)


def test_profile_is_the_share_of_summed_wall_time():
    t = work_profile(JOBS)
    rows = {r["user_type"]: r for r in t.rows}
    # wall: base 10+30+20 = 60, advanced 40 + 0 = 40 (of 100); CPU: base 40, advanced 40 (of 80); jobs 3 and 2 of 5
    assert rows["Base SAS statistics"]["work_pct"] == pytest.approx(60.0)
    assert rows["Advanced analytics"]["work_pct"] == pytest.approx(40.0)
    assert rows["Advanced analytics"]["jobs_pct"] == pytest.approx(40.0)
    assert rows["Base SAS statistics"]["cpu_pct"] == pytest.approx(50.0)
    assert rows["Total"]["work_pct"] == 100.0 and rows["Total"]["wall_s"] == pytest.approx(100.0)
    assert [r["user_type"] for r in t.rows] == ["Advanced analytics", "Base SAS statistics", "Total"]


def test_no_jobs_gives_empty_tables():
    assert jobs_by_type_and_size([]).rows == [] and work_profile([]).rows == []


def test_compare_has_seed_002_table5_per_node_difference(tmp_path):
    """report --compare's per-node table: each host's summed STIMER real time on both sides and B − A; B here is
    A with every job's STIMER real time on node1 doubled, so node1's difference is its own A time."""
    import json
    import shutil
    from pathlib import Path

    from statgrid.report import build
    src = Path(__file__).resolve().parents[1] / "data" / "bundle_ma2"
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(src, a)
    shutil.copytree(src, b)
    jobs = [json.loads(line) for line in (b / "jobs.jsonl").read_text().splitlines()]
    node1_s = sum(j["stimer_total"]["real_s"] for j in jobs if j["host"] == "node1")
    for j in jobs:
        if j["host"] == "node1":
            j["stimer_total"]["real_s"] *= 2
    (b / "jobs.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
    rep = build.compare_report(a, b)
    t = next(t for t in rep.tables if t.id == "compare_nodes")
    rows = {r["host"]: r for r in t.rows}
    hosts = sorted({j["host"] for j in jobs})
    assert [r["host"] for r in t.rows] == hosts + (["average"] if len(hosts) > 1 else [])
    assert rows["node1"]["diff_min"] == pytest.approx(node1_s / 60)
    assert all(rows[h]["diff_min"] == pytest.approx(0.0) for h in hosts if h != "node1")
    if len(hosts) > 1:
        assert rows["average"]["diff_min"] == pytest.approx(node1_s / 60 / len(hosts))
