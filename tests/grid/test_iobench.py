"""iobench through the real CLI: record shape (fio's keys), exact byte counts, cleanup, bad input."""
from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import WAIT_S, run_cli, wait_for
from tests.support.gridtoml import toml_text


def files_left(d):
    return sorted(p.name for p in d.iterdir() if p.name.startswith("sgio."))


@pytest.mark.parametrize("direct", [True, False])
def test_write_then_read_record_has_fio_keys_and_exact_bytes(home, tmp_path, direct):
    d = tmp_path / "io"
    d.mkdir()
    flags = ["--direct"] if direct else ["--fsync"]
    r = run_cli("iobench", "--dir", str(d), "--mode", "write", "--threads", "2", "--size-per-thread", "8M",
                "--bs", "1M", "--runs", "2", "--json", str(tmp_path / "w.json"), "--csv", str(tmp_path / "w.csv"),
                *flags)
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "w.json").read_text())
    for run in res["runs"]:
        w = run["total"]["write"]
        assert w["io_bytes"] == 2 * 8 << 20 and w["total_ios"] == 16 and run["total"]["read"]["io_bytes"] == 0
        assert w["bw_bytes"] > 0 and w["iops"] == pytest.approx(w["total_ios"] / (w["runtime"] / 1000))
        lat = w["lat_ns"]
        p = lat["percentile"]
        assert lat["N"] == 16 and lat["min"] <= p["50.000000"] <= p["99.000000"] <= p["99.900000"] <= lat["max"]
    assert res["summary"]["total"]["write"]["bw_bytes"]["n"] == 2
    rows = list(csv.DictReader(io.StringIO((tmp_path / "w.csv").read_text())))
    assert [(x["run"], x["direction"], x["io_bytes"]) for x in rows] == [("1", "write", str(16 << 20)),
                                                                         ("2", "write", str(16 << 20))]
    assert "MB/s" in r.stdout and "± " in r.stdout and "2 runs" in r.stdout
    assert files_left(d) == []
    r = run_cli("iobench", "--dir", str(d), "--mode", "rw", "--rwmixread", "25", "--pattern", "rand", "--bs", "4K",
                "--threads", "2", "--size-per-thread", "1M", "--runs", "1", "--json", str(tmp_path / "rw.json"),
                *(["--direct"] if direct else []))
    assert r.returncode == 0, r.stderr
    t = json.loads((tmp_path / "rw.json").read_text())["runs"][0]["total"]
    assert t["read"]["io_bytes"] + t["write"]["io_bytes"] == 2 << 20
    assert t["read"]["total_ios"] + t["write"]["total_ios"] == 512
    assert 0.15 < t["read"]["total_ios"] / 512 < 0.35                    # 25 % reads, seeded
    assert files_left(d) == []


def test_bad_input_names_the_value(home, tmp_path):
    cases = [(["--mode", "append"], "--mode 'append' is not one of"),
             (["--direct", "--bs", "1000"], "multiple of 4 KiB with --direct"),
             (["--bs", "lots"], "--bs 'lots' is not allowed"),
             (["--size-per-thread", "1K", "--bs", "1M"], "smaller than --bs"),
             (["--dir", str(tmp_path / "nope")], "is not a directory"),
             (["--library", "nope"], "--library 'nope' is not a library")]
    for args, message in cases:
        r = run_cli("iobench", *args)
        assert r.returncode == 2 and message in r.stderr, (args, r.stderr)


def test_interrupted_run_removes_its_files(home, tmp_path):
    d = tmp_path / "io"
    d.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "statgrid", "iobench", "--dir", str(d), "--mode", "read",
                             "--threads", "2", "--size-per-thread", "2G", "--runs", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: files_left(d), "the layout to start")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130 and "files were removed" in err
    assert files_left(d) == []


# -- on a grid whose default queue lets a user run one job at a time (issue 14 item 8) -------------
LIMITED_GRID = toml_text({"node1": 2, "node2": 2, "node3": 2, "node4": 2},
                         {"normal": {"user_limit": 1}, "free": {}, "pair": {"hosts": "node3 node4"}})


@pytest.fixture(scope="module")
def limited_grid(tmp_path_factory):
    from tests.support.gridtest import Grid, running

    root = tmp_path_factory.mktemp("limited")
    (root / "io").mkdir()
    with running(Grid(root, LIMITED_GRID)) as grid:
        def cli(*args, timeout=60):
            # A short timeout: the old code spun at its barrier for 600 s here.
            return grid.cli("iobench", "--dir", str(root / "io"), "--mode", "write", "--size-per-thread", "1M",
                            "--runs", "1", *args, timeout=timeout)

        yield root, cli, grid.client


def test_grid_iobench_refused_at_once_when_a_queue_limit_would_stop_its_jobs(limited_grid):
    root, cli, client = limited_grid
    r = cli("--nodes", "all")
    assert r.returncode == 2, r.stderr
    assert "queue 'normal' has user_limit = 1" in r.stderr and "needs 4 jobs running together" in r.stderr
    assert "-q QUEUE" in r.stderr and "e.g. -q free" in r.stderr
    r = cli("--nodes", "node1,node3", "-q", "pair")
    assert r.returncode == 2 and "host 'node1' is not used by queue 'pair'" in r.stderr, r.stderr
    r = cli("--nodes", "all", "-q", "nope")
    assert r.returncode == 2 and "-q/--queue 'nope' does not exist" in r.stderr, r.stderr
    r = cli("-q", "free")
    assert r.returncode == 2 and "applies to grid runs: add --nodes" in r.stderr, r.stderr
    assert client.jobs(all_states=True) == []                    # nothing was submitted
    assert not (root / "home" / "iobench").exists()


def test_grid_iobench_refused_when_slots_or_the_users_jobs_are_in_the_way(limited_grid):
    root, cli, client = limited_grid
    env = {"PATH": os.environ["PATH"]}
    busy = [client.submit(["sleep", "60"], queue="free", hosts=["node2"], cwd=str(root), env=env)["id"]
            for _ in range(2)]
    mine = client.submit(["sleep", "60"], hosts=["node1"], cwd=str(root), env=env)["id"]   # queue normal
    try:
        r = cli("--nodes", "all", "-q", "free")
        assert r.returncode == 1 and "no free slot on node2 (2 of 2 slots running)" in r.stderr, r.stderr
        r = cli("--nodes", "node3")
        assert r.returncode == 1, r.stderr
        assert "user_limit = 1 and you have 1 job(s) running or pending there" in r.stderr
        assert sorted(j["id"] for j in client.jobs(all_states=True)) == sorted(busy + [mine])
    finally:
        client.kill(busy + [mine])
        client.wait(busy + [mine], timeout_s=60)


def test_grid_iobench_all_means_the_queues_hosts(limited_grid):
    root, cli, client = limited_grid
    r = cli("--nodes", "all", "-q", "pair", "--json", str(root / "pair.json"))
    assert r.returncode == 0, r.stderr
    run = json.loads((root / "pair.json").read_text())["runs"][0]
    assert [n["node"] for n in run["nodes"]] == ["node3", "node4"]
    jobs = [j for j in client.jobs(all_states=True) if j["name"].startswith("iobench-")]
    assert sorted((j["host"], j["queue"], j["state"]) for j in jobs) == [("node3", "pair", "DONE"),
                                                                        ("node4", "pair", "DONE")]
