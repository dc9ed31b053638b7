"""iobench through the real CLI: record shape (fio's keys), exact byte counts, cleanup, bad input."""
from __future__ import annotations

import csv
import io
import json
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import run_cli


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
    deadline = time.monotonic() + 30
    while not files_left(d) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert files_left(d), "the layout never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "files were removed" in err
    assert files_left(d) == []
