"""`statgrid advise` through the real CLI (a subprocess) on a real bundle — tests/data/bundle_ma2, a
`statgrid demo --sessions 2` run with node1's monitor series — with and without an inventory.json, on this
machine now (no bundle), and on bad input. The figures it prints are checked against the bundle's own
files read here with DuckDB and json, not through statgrid."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import run_cli

BUNDLE = Path(__file__).parent.parent / "data" / "bundle_ma2"


@pytest.fixture()
def bundle(tmp_path) -> Path:
    dst = tmp_path / "ma2"
    shutil.copytree(BUNDLE, dst)
    return dst


def test_advise_on_a_demo_bundle_finds_cpu_not_io(bundle):
    r = run_cli("advise", str(bundle), timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"statgrid advise: bundle {bundle}; inventory from bundle.json")
    verify = {line.split()[3] if line.startswith("verify: not") else line.split()[2]: line
              for line in lines if line.startswith("verify:")}
    # the jobs that waited: CPU/real = (user + sys) ÷ STIMER real, from jobs.jsonl
    jobs = [json.loads(x) for x in (bundle / "jobs.jsonl").read_text().splitlines()]
    waited = [j for j in jobs if (j["stimer_total"]["user_cpu_s"] + j["stimer_total"]["sys_cpu_s"])
              / j["stimer_total"]["real_s"] < 0.7]
    assert len(waited) == 1
    j = waited[0]
    # node1's CPUs over that job's run: the samples whose interval overlaps [start, end]
    node = str(bundle / "grid" / "monitor" / "node1" / "node-*.parquet")
    busy = duckdb.sql(f"select avg(cpu_user_pct + cpu_system_pct) from read_parquet('{node}') where ts > "
                      f"{j['start_ts']} and ts - interval_s < {j['end_ts']}").fetchall()[0][0]
    ratio = (j["stimer_total"]["user_cpu_s"] + j["stimer_total"]["sys_cpu_s"]) / j["stimer_total"]["real_s"]
    assert busy >= 90
    assert verify["job.short_of_cpu"].startswith("verify: failed")
    assert verify["job.short_of_cpu"].endswith(f"found 1 of 1 jobs checked flagged ({len(jobs) - 1} not concerned)")
    assert f"    job {j['id']} {j['template']} on {j['host']}: short of CPU (the node's CPUs were busy {busy:.1f} %; " \
           f"CPU/real {ratio:.2f})" in lines
    assert verify["job.short_of_io"].startswith("verify: passed")
    assert verify["run.short_of_io"].startswith("verify: passed") and verify["run.short_of_cpu"].startswith(
        "verify: failed")
    assert "starved" not in r.stdout
    # bundle.json: 2 CPUs, an embedded grid of 4 hosts × 2 slots → 8 slots on 2 CPUs
    meta = json.loads((bundle / "bundle.json").read_text())
    assert verify["grid.slots_vs_cpus"].endswith(
        f"found slots {meta['grid']['nodes'] * meta['grid']['slots']}, threads {meta['host']['cpus']}")
    assert "not evaluated (no library in the inventory): gpfs.pagepool" in r.stdout

    js = run_cli("advise", str(bundle), "--json", timeout=300)
    assert js.returncode == 0, js.stderr
    recs = json.loads(js.stdout)
    assert {rec["status"] for rec in recs} <= {"passed", "failed", "not evaluated", "not applicable"}
    cpu = next(rec for rec in recs if rec["rule"] == "job.short_of_cpu")
    assert [i["id"] for i in cpu["items"]] == [j["id"]] and cpu["source"].startswith("seed 002")
    assert cpu["condition"] == "not (job.node_cpu_busy_pct >= 90 or job.psi_cpu_some_pct >= 50)"


def test_advise_reads_the_bundles_inventory(bundle):
    """An inventory.json in the contract's shape, written by hand: a GPFS library with a small pagepool."""
    gpfs = {"pagepool_bytes": 1 << 30, "maxMBpS": 6000, "blocksize_bytes": 1 << 20, "prefetchPct": 40,
            "seqDiscardThreshold_bytes": 1 << 30, "worker1Threads": 48, "maxFilesToCache": 20000}
    lib = {"path": "/gpfs/sas/data", "host": "vm", "fs_type": "gpfs", "mount_point": "/gpfs/sas", "source": "sasfs",
           "mount_options": ["rw"], "block_bytes": 1 << 20, "devices": [], "readahead_kb": None, "scheduler": None,
           "nr_requests": None, "max_sectors_kb": None, "rotational": None, "gpfs": gpfs, "nfs": None}
    inv = {"schema": 1, "taken_ts": 0, "nodes": {"vm": {"threads": 2, "cores": 2, "thp": "never"}},
           "libraries": {"DATA": lib, "WORK": {**lib, "path": "/gpfs/sas/work"}},
           "session": {"bufsize_bytes": 256 << 10}, "grid": {"hosts": {"node1": {"slots": 2, "machine": "vm"}},
                                                             "master_host": "vm", "dispatch_interval_s": 0.0}}
    (bundle / "inventory.json").write_text(json.dumps(inv))
    r = run_cli("advise", str(bundle), "--set", "stripe_bytes=1M", "--set", "required_mb_s=4000", timeout=300)
    assert r.returncode == 0, r.stderr
    on = "DATA, WORK on sasfs (gpfs)"
    assert (f"verify: failed         gpfs.pagepool              {on}: GPFS pagepool at least 4 GB … expected ≥ 4 GiB, "
            "found gpfs.pagepool_bytes 1 GiB") in r.stdout
    assert f"verify: passed         gpfs.blocksize_stripe      {on}:" in r.stdout          # 1 MiB on a 1 MiB stripe
    assert f"verify: failed         gpfs.maxmbps               {on}:" in r.stdout          # 6000 < 2 × 4000
    assert "verify: passed         session.bufsize" in r.stdout
    assert "inventory from the bundle's inventory.json" in r.stdout.splitlines()[0]


def test_advise_without_a_bundle_checks_this_machine_now(home):
    r = run_cli("advise", timeout=300)
    assert r.returncode == 0, r.stderr
    assert "this machine and grid, now (no run figures)" in r.stdout.splitlines()[0]
    assert "needs a bundle (run figures): give `statgrid advise BUNDLE`" in r.stdout
    assert "job.short_of_cpu" in r.stdout


def test_advise_bad_input(tmp_path, home):
    r = run_cli("advise", str(tmp_path), timeout=300)
    assert r.returncode == 2
    assert f"BUNDLE {str(tmp_path)!r} is not a `bench mixed` results bundle (no bundle.json)" in r.stderr
    r = run_cli("advise", "--set", "stripe_bytes=wide", timeout=300)
    assert r.returncode == 2 and "--set 'stripe_bytes=wide': 'wide' is not a positive size such as 1M" in r.stderr
