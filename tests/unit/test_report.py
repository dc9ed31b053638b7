"""statgrid report: exact text of what it writes for a fixed bundle (tests/data/bundle_ma2: a real
`statgrid demo --sessions 2` run, monitor series of node1 kept), figures cross-checked against
DuckDB over the raw series, --compare ratios, the scale and iobench reports, the HTML report in
headless Chromium, and the CLI's errors."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from conftest import run_cli
from statgrid.report import build, csv_out, md, tables
from statgrid.report.model import fmt
from tests.conftest import WAIT_S, wait_for

DATA = Path(__file__).parent.parent / "data"
BUNDLE = DATA / "bundle_ma2"


@pytest.fixture()
def bundle(tmp_path) -> Path:
    dst = tmp_path / "ma2"
    shutil.copytree(BUNDLE, dst)
    return dst


def test_fmt_rules():
    assert [fmt(x) for x in (None, True, 1234, 1234.5, 12.345, 0.9, 0.02291, 0.0, float("nan"))] == \
        ["—", "yes", "1,234", "1,234", "12.35", "0.900", "0.0229", "0.00", "—"]
    assert fmt(2.0, 3) == "2.000"


def test_summary_figures_match_duckdb_over_the_raw_series():
    rep, f = build.mixed_report(BUNDLE)
    meta = json.loads((BUNDLE / "bundle.json").read_text())
    t0, t1 = meta["workload_start_ts"], meta["end_ts"]
    disk = str(BUNDLE / "grid" / "monitor" / "node1" / "disk-*.parquet")
    per_ts = duckdb.sql(f"select ts, sum(read_bytes_per_s + write_bytes_per_s) / 1e6 as mbs from read_parquet('{disk}')"
                        f" where ts between {t0 - 0.5} and {t1 + 0.5} group by ts").fetchall()
    assert f["mb_s_peak"] == pytest.approx(max(v for _, v in per_ts), rel=1e-12)
    node = str(BUNDLE / "grid" / "monitor" / "node1" / "node-*.parquet")
    iv, first, last = duckdb.sql(f"select median(interval_s), min(ts), max(ts) from read_parquet('{node}') "
                                 f"where ts between {t0 - 0.5} and {t1 + 0.5}").fetchall()[0]
    # bytes moved (each sample's rate × the interval) ÷ the time the samples cover
    assert f["mb_s_mean"] == pytest.approx(sum(v for _, v in per_ts) * iv / (last - first + iv), rel=1e-9)
    assert f["mb_s_peak"] >= f["mb_s_sustained"] >= f["mb_s_mean"] * 0.999
    jobs = [json.loads(x) for x in (BUNDLE / "jobs.jsonl").read_text().splitlines()]
    assert f["summed_real_s"] == pytest.approx(sum(j["end_ts"] - j["start_ts"] for j in jobs))
    assert f["clock_s"] == pytest.approx(t1 - t0)
    assert f["cpu_busy_pct"] + f["cpu_wait_pct"] + f["cpu_idle_pct"] == pytest.approx(100, abs=2)   # steal, rounding
    assert f["mb_s_per_core"] == pytest.approx(f["mb_s_sustained"] / meta["host"]["cpus"])


def test_markdown_and_csv_exact_text():
    rep, _ = build.mixed_report(BUNDLE)
    expected = (DATA / "bundle_ma2.report.md").read_text()
    assert md.serialize(rep) == expected
    nodes = next(t for t in rep.tables if t.id == "nodes")
    assert csv_out.table_csv(nodes).splitlines()[0] == "host,jobs,cpu_real_mean,real_min,memory_gb,user_cpu_min,sys_cpu_min"
    rows = list(csv.DictReader(io.StringIO(csv_out.table_csv(nodes))))
    assert [r["host"] for r in rows][-2:] == ["all", "spread (max − min) ÷ mean"]
    assert sum(int(r["jobs"]) for r in rows[:-2]) == 7


ACCT_NOTE = ("*Finished jobs (DONE, EXIT, KILLED), as `statgrid acct` counts them: wait = start − submit and run = end "
             "− start, of the jobs that started; p95 by nearest rank (the ⌈0.95·n⌉-th smallest wait); CPU = the job "
             "process's user + system time (rusage). A user in two groups counts in both; '-' under group: in none.*")
ACCT_HEAD = ("## Accounting\n\n| by | name | jobs | DONE | EXIT | KILLED | started | mean wait (s) | p95 wait (s) | "
             "summed run (s) | mean run (s) | summed CPU (s) |\n|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def test_accounting_table_exact_text(bundle):
    """`statgrid acct`'s figures over a bundle's jobs (grid/master/acct.py): this bundle's records predate
    user and queue, so they count under '-'; with them, and the grid's [groups] in bundle.json, a
    row per user, group and queue."""
    rep, _ = build.mixed_report(bundle)
    t = next(t for t in rep.tables if t.id == "acct")
    figures = "| 7 | 7 | 0 | 0 | 7 | 0.012 | 0.013 | 14.78 | 2.11 | 12.06 |"
    assert md.table_md(t) == "\n".join([
        ACCT_HEAD, f"| user | - {figures}", f"| group | - {figures}", f"| queue | - {figures}", f"| total | all {figures}",
        "", ACCT_NOTE, "*Some job records of this bundle name no user or queue (bundles saved before bench mixed kept "
        "them): they count under '-'.*"])
    jobs = [json.loads(x) for x in (bundle / "jobs.jsonl").read_text().splitlines()]
    waits = sorted(j["start_ts"] - j["submit_ts"] for j in jobs)
    total = t.rows[-1]
    assert (total["wait_mean_s"], total["wait_p95_s"]) == (pytest.approx(sum(waits) / 7, rel=1e-12), waits[6])
    assert total["cpu_sum_s"] == pytest.approx(sum(j["rusage"]["user_cpu_s"] + j["rusage"]["sys_cpu_s"] for j in jobs))
    assert csv_out.table_csv(t).splitlines()[0] == \
        "by,name,jobs,done,exit,killed,started,wait_mean_s,wait_p95_s,run_sum_s,run_mean_s,cpu_sum_s"

    for j in jobs:
        j.update(user="ann" if j["id"] % 2 else "bob", queue="normal")
    (bundle / "jobs.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
    meta = json.loads((bundle / "bundle.json").read_text())
    (bundle / "bundle.json").write_text(json.dumps({**meta, "groups": {"risk": ["ann"], "ops": ["carol"]}}))
    rep, _ = build.mixed_report(bundle)
    assert md.table_md(next(t for t in rep.tables if t.id == "acct")) == "\n".join([
        ACCT_HEAD,
        "| user | ann | 3 | 3 | 0 | 0 | 3 | 0.010 | 0.012 | 5.94 | 1.98 | 4.79 |",        # jobs 13, 15, 17
        "| user | bob | 4 | 4 | 0 | 0 | 4 | 0.013 | 0.013 | 8.84 | 2.21 | 7.27 |",        # jobs 12, 14, 16, 18
        "| group | risk | 3 | 3 | 0 | 0 | 3 | 0.010 | 0.012 | 5.94 | 1.98 | 4.79 |",       # ann; ops has no job
        "| group | - | 4 | 4 | 0 | 0 | 4 | 0.013 | 0.013 | 8.84 | 2.21 | 7.27 |",
        f"| queue | normal {figures}", f"| total | all {figures}", "", ACCT_NOTE])


def test_moving_max_and_sustained_window():
    from statgrid.monitor.store import moving_max
    assert moving_max({0: 1.0, 1: 5.0, 3: 3.0}, 2) == 3.0
    assert moving_max({0: 4.0, 2: 4.0}, 2) == 2.0                   # slot 1 has no sample: it counts as 0
    assert moving_max({0: 1.0, 1: 2.0}, 60) == 1.5                  # shorter than the window: its mean
    assert moving_max({}, 3) is None


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_compare_gives_the_expected_ratios(bundle, tmp_path):
    slow = tmp_path / "slow"
    shutil.copytree(bundle, slow)
    meta = json.loads((slow / "bundle.json").read_text())
    clock = meta["end_ts"] - meta["workload_start_ts"]
    meta["end_ts"] = meta["workload_start_ts"] + 2 * clock          # B's clock twice A's, same jobs
    (slow / "bundle.json").write_text(json.dumps(meta))
    r = run_cli("report", str(bundle), "--compare", str(slow), "--format", "csv,md")
    assert r.returncode == 0, r.stderr
    rows = {row["figure"]: row for row in csv.DictReader(open(bundle / "compare-slow" / "compare.csv"))}
    assert float(rows["clock time (s)"]["ratio"]) == pytest.approx(2.0)
    assert float(rows["jobs' logical reads + writes (MB/s)"]["ratio"]) == pytest.approx(0.5)
    assert float(rows["response time (summed wall time of the jobs) (s)"]["ratio"]) == pytest.approx(1.0)
    assert float(rows["jobs"]["diff"]) == 0
    text = (bundle / "compare-slow" / "report.md").read_text()
    assert "| workload | clock time (s) | " in text and " | 2.000 |" in text
    assert "## Per-node FULLSTIMER aggregates — A: ma2" in text and "## Per-node FULLSTIMER aggregates — B: slow" in text
    assert (bundle / "compare-slow" / "nodes_a.csv").read_text() == (bundle / "compare-slow" / "nodes_b.csv").read_text()


def test_response_time_is_one_figure_named_for_what_it_is(bundle, tmp_path):
    """Seed 000's response time (the jobs' cumulative real time) is the jobs' wall times summed, in
    bench mixed's printed summary, the report's summary and --compare alike; the per-node table's
    STIMER sum is named as such (issue 14, item 9)."""
    from statgrid.bench import mixed

    meta, jobs = mixed.load_bundle(bundle)
    wall_s = sum(j["end_ts"] - j["start_ts"] for j in jobs)                     # every job ran: start and end
    stimer_s = sum(j["stimer_total"]["real_s"] for j in jobs)
    assert round(wall_s, 2) == 14.78 and round(stimer_s, 2) == 7.48              # two figures, far apart
    assert mixed.summary(meta, jobs).splitlines()[1:3] == [
        f"response time (summed wall time of the jobs): {wall_s:.1f} s",
        f"summed step real time (STIMER): {stimer_s:.1f} s"]
    rep, f = build.mixed_report(bundle)
    rows = {r["key"]: r for r in next(t for t in rep.tables if t.id == "summary").rows}
    assert (rows["summed_real_s"]["figure"], rows["summed_real_s"]["value"]) == \
        ("response time (summed wall time of the jobs)", pytest.approx(wall_s, rel=1e-12))
    assert (rows["stimer_real_s"]["figure"], rows["stimer_real_s"]["value"]) == \
        ("summed step real time (STIMER)", pytest.approx(stimer_s, rel=1e-12))
    nodes = next(t for t in rep.tables if t.id == "nodes")
    assert [c.header for c in nodes.columns][3] == "summed step real time (STIMER, min)"
    assert nodes.rows[-2]["host"] == "all" and nodes.rows[-2]["real_min"] == pytest.approx(stimer_s / 60)
    per_job = next(t for t in rep.tables if t.id == "jobs")
    assert sum(r["wall_s"] for r in per_job.rows) == pytest.approx(wall_s)
    cmp = build.compare_report(bundle, BUNDLE).tables[0]
    by = {r["figure"]: r for r in cmp.rows}
    assert by["response time (summed wall time of the jobs) (s)"]["a"] == pytest.approx(wall_s, rel=1e-12)
    assert by["summed step real time (STIMER) (s)"]["b"] == pytest.approx(stimer_s, rel=1e-12)


def _scale_dir(path: Path, clocks_s: list[float]) -> Path:
    """A scale.json of 10 sessions (36 jobs) per node with these clock times for 1, 2, … nodes."""
    path.mkdir()
    steps = []
    for i, clock in enumerate(clocks_s):
        n = i + 1
        jobs_per_h = 36 * n / clock * 3600
        steps.append({"nodes": n, "sessions": 10 * n, "jobs": 36 * n, "done": 36 * n, "exit": 0, "clock_s": clock,
                      "jobs_per_h": jobs_per_h, "summed_real_s": 180.0 * n, "io_mb_per_s": 12.5 * n,
                      "efficiency": jobs_per_h / n / steps[0]["jobs_per_h"] if steps else 1.0,
                      "bundle": f"{n}-nodes"})
    (path / "scale.json").write_text(json.dumps({"kind": "statgrid-bench-scale", "max_nodes": len(steps),
                                                 "sessions_per_node": 10, "slots": 2,
                                                 "note": "each node has 1 CPU(s) of its own",
                                                 "host": {"hostname": "h", "cpus": 2}, "steps": steps}))
    return path


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_scale_and_iobench_reports(tmp_path):
    scale = _scale_dir(tmp_path / "scale", [100.0, 125.0])
    r = run_cli("report", str(scale), "--format", "md")
    assert r.returncode == 0, r.stderr
    text = (scale / "report" / "report.md").read_text()
    assert ("| 1 | 10 | 36 | 36 | 0 | 100.0 | 1,296.0 | 180.0 | 12.50 | 1.000 |\n"
            "| 2 | 20 | 72 | 72 | 0 | 125.0 | 2,073.6 | 360.0 | 25.00 | 0.800 |") in text
    assert "![Scalability: throughput and efficiency by nodes](charts/scaling.svg)" in text
    assert (scale / "report" / "charts" / "scaling.png").stat().st_size > 1000

    io_json = tmp_path / "io.json"
    lat = {"min": 1, "max": 9, "mean": 2e6, "stddev": 0.0, "N": 10, "percentile": {"99.000000": 5e6}}
    d = {"bw_bytes": {"mean": 250e6, "min": 240e6, "max": 260e6, "stddev": 1.0, "n": 2},
         "iops": {"mean": 238.4, "min": 1, "max": 2, "stddev": 0, "n": 2}, "lat_ns": lat}
    zero = {"bw_bytes": {"mean": 0, "min": 0, "max": 0, "stddev": 0, "n": 2}, "iops": d["iops"], "lat_ns": lat}
    io_json.write_text(json.dumps({"spec": {"dir": "/x", "mode": "read", "pattern": "seq", "bs": 1048576, "threads": 4,
                                            "direct": True, "runs": 2},
                                   "runs": [], "summary": {"nodes": {"node1": {"read": d, "write": zero}},
                                                           "total": {"read": d, "write": zero}}}))
    r = run_cli("report", str(io_json), "--format", "md")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "io-report" / "report.md").read_text()
    assert "| node1 | read | 250.0 | 240.0 | 260.0 | 238 | 2.000 | 5.000 | 2 |" in text


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_bad_input_is_named(tmp_path):
    r = run_cli("report", str(tmp_path / "nope"))
    assert r.returncode != 0 and "does not exist" in r.stderr
    r = run_cli("report", str(tmp_path))
    assert r.returncode != 0 and "is not a result statgrid reports on" in r.stderr
    r = run_cli("report", str(BUNDLE), "--format", "html,pdf", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "'pdf' is not a format" in r.stderr
    assert not (tmp_path / "o").exists()
    (tmp_path / "cap" / "h1").mkdir(parents=True)
    (tmp_path / "cap" / "h1" / "node-1.0-1.parquet").write_text("cut short")
    r = run_cli("report", str(tmp_path / "cap"))
    assert r.returncode == 1 and "holds no node samples the report can read" in r.stderr
    assert not (tmp_path / "cap" / "report").exists()


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
@pytest.mark.browser
@pytest.mark.skipif(_chromium() is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_html_report_renders_in_headless_chromium(bundle, tmp_path):
    r = run_cli("report", str(bundle), "--format", "html")
    assert r.returncode == 0, r.stderr
    page = bundle / "report" / "report.html"
    text = page.read_text()
    assert "<script" not in text and not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?https?:""",
                                                   text)                                       # nothing to fetch
    assert text.count("<svg") == len(build.mixed_report(bundle)[0].charts) == 5
    shot = tmp_path / "shot.png"
    p = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                        "--v=0", "--window-size=1200,2400", f"--screenshot={shot}", page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert shot.is_file(), p.stderr[-2000:]
    console = [line for line in p.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console
    from PIL import Image
    img = Image.open(shot).convert("RGB")
    colors = img.getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 50                       # text, tables and charts, not a blank page
    # the charts' colours are on the page: the CPU chart's user red, the I/O kind's blue
    assert any(c == (0xd6, 0x27, 0x28) for _, c in colors) and any(c == (0x1f, 0x77, 0xb4) for _, c in colors)


def test_per_job_flags_are_the_findings_given():
    jobs = [{"id": 1, "state": "DONE", "host": "n1", "kind": "io", "start_ts": 0.0, "end_ts": 10.0, "submit_ts": 0.0,
             "stimer_total": {"real_s": 10.0, "user_cpu_s": 5.0, "sys_cpu_s": 1.0, "memory_bytes": 1}, "rusage": {}},
            {"id": 2, "state": "DONE", "host": "n1", "kind": "cpu", "start_ts": 0.0, "end_ts": 10.0, "submit_ts": 0.0,
             "stimer_total": {"real_s": 10.0, "user_cpu_s": 9.0, "sys_cpu_s": 1.0, "memory_bytes": 1}, "rusage": {}}]
    # the flag is what advise found about the job (statgrid.advise, tests/unit/test_advise.py), shown as given:
    # a low CPU/real alone no longer reads "starved for I/O" (issue 29: CPU 99.9 % busy, 0 % wait)
    assert [r["flag"] for r in tables.per_job(jobs).rows] == ["", ""]
    t = tables.per_job(jobs, {1: "short of CPU (the node's CPUs were busy 99.9 %; CPU/real 0.60)"})
    assert [r["flag"] for r in t.rows] == ["short of CPU (the node's CPUs were busy 99.9 %; CPU/real 0.60)", ""]
    assert "1 of 2 jobs flagged" in t.notes[0]


# -- a bare monitor capture as the source ------------------------------------------------------------
def _summary(report_dir: Path) -> dict:
    data = json.loads((report_dir / "report.json").read_text())
    return {r["key"]: r["value"] for r in next(t for t in data["tables"] if t["id"] == "summary")["rows"]}


def test_capture_report_exact_text(tmp_path):
    """The bundle's monitor directory is a capture like `statgrid monitor --out` writes (one host)."""
    cap = tmp_path / "cap"
    shutil.copytree(BUNDLE / "grid" / "monitor", cap)
    assert build.kind_of(cap) == "monitor"
    rep, f = build.monitor_report(cap)
    assert md.serialize(rep) == (DATA / "monitor_ma2.report.md").read_text()
    disk = str(cap / "node1" / "disk-*.parquet")
    per_ts = duckdb.sql(f"select ts, sum(read_bytes_per_s + write_bytes_per_s) / 1e6 from read_parquet('{disk}') "
                        "group by ts").fetchall()
    assert f["mb_s_peak"] == pytest.approx(max(v for _, v in per_ts), rel=1e-12)
    assert f["samples"] == len(per_ts) and f["machines"] == 1


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_capture_of_two_hosts_on_one_machine_counts_it_once(tmp_path):
    """Two real monitors (`statgrid monitor`) on this machine while a file is written: one kernel,
    so one machine; without machine.json (an older capture) each host is a machine of its own."""
    from statgrid.monitor.sampler import map_libraries

    if map_libraries({"t": tmp_path})[0].device is None:
        pytest.skip(f"{tmp_path} has no block device (tmpfs?): the monitor cannot see its writes")
    cap = tmp_path / "cap"
    # Until stopped (a duration would be a bet on the machine's speed): from their first sample (past
    # the priming one) until each has sampled after the write reached the device.
    procs = [subprocess.Popen([sys.executable, "-m", "statgrid", "monitor", "--out", str(cap), "--host", h, "-q"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for h in ("a", "b")]
    try:
        def last_ts(h: str) -> float:
            try:
                return json.loads((cap / h / "latest.json").read_text())["node"][-1]["ts"]
            except (OSError, ValueError, KeyError, IndexError):
                return 0.0
        wait_for(lambda: all(last_ts(h) for h in "ab"), "a first sample of both monitors")
        with open(tmp_path / "blob", "wb") as fh:
            for _ in range(32):
                fh.write(b"\1" * (1 << 20))
            fh.flush()
            os.fsync(fh.fileno())
        written = time.time()
        wait_for(lambda: all(last_ts(h) > written + 1 for h in "ab"), "both monitors' samples after the write",
                 state=lambda: {h: last_ts(h) - written for h in "ab"})
    finally:
        for p in procs:
            p.terminate()
    for p in procs:
        assert p.wait(timeout=WAIT_S) == 0, p.stderr.read()
    r = run_cli("report", str(cap), "--format", "md,json,csv")
    assert r.returncode == 0, r.stderr
    f = _summary(cap / "report")
    assert (f["hosts"], f["machines"]) == (2, 1)
    ids = {json.loads((cap / h / "machine.json").read_text())["machine_id"] for h in "ab"}
    assert len(ids) == 1 and None not in ids
    # each host saw every byte of the device; the machine counts them once: bytes ÷ span like host a's own
    moved_mb = {}
    for h in "ab":
        moved_mb[h] = duckdb.sql(f"select sum(read_bytes_per_s + write_bytes_per_s) / 1e6 from "
                                 f"read_parquet('{cap / h / 'disk-*.parquet'}')").fetchall()[0][0]   # × 1 s each
    assert moved_mb["a"] >= 32 and moved_mb["b"] >= 32          # the 32 MB reached the device inside the capture
    assert f["mb_s_mean"] * f["span_s"] == pytest.approx(moved_mb["a"], rel=0.25)
    text = (cap / "report" / "report.md").read_text()
    assert "| a | a, b | " in text
    assert not (cap / "report" / "charts" / "throughput_machine.svg").exists()

    (cap / "b" / "machine.json").unlink()
    r = run_cli("report", str(cap), "--format", "json,md", "--out", str(tmp_path / "two"))
    assert r.returncode == 0, r.stderr
    f2 = _summary(tmp_path / "two")
    # b's CPUs now come from its samples (busy cores ÷ busy share), an estimate that a stalled sample of
    # a quiet capture can move: the report must add the machines' figures, whatever b's estimate is
    from statgrid.monitor.store import load as load_table
    from statgrid.report.series import cpus_seen

    b_rows = [r for r in load_table(cap, "node").to_pylist() if r["host"] == "b"]
    assert (f2["hosts"], f2["machines"], f2["cpus"]) == (2, 2, f["cpus"] + (cpus_seen(b_rows) or 1))
    # the same device counted twice (what machine.json prevents): twice the bytes over the same span
    assert f2["mb_s_mean"] == pytest.approx(2 * f["mb_s_mean"], rel=0.25)
    assert (tmp_path / "two" / "charts" / "throughput_machine.svg").exists()
    libs = next(c for c in json.loads((tmp_path / "two" / "report.json").read_text())["charts"]
                if c["id"] == "throughput_library")["data"]["series"]
    assert sorted(x["name"].split(" on ")[1] for x in libs) == ["a)", "b)"]     # one line per machine, named


def test_machines_group_by_boot_id_and_cpus_come_from_the_samples():
    from statgrid.report import series

    infos = {"n1": {"machine_id": "k1"}, "n2": {"machine_id": "k1"}, "n3": {"machine_id": "k2"}, "n4": {}}
    assert series.group_machines(infos, embedded=False) == {"n1": ["n1", "n2"], "n3": ["n3"], "n4": ["n4"]}
    assert series.group_machines(infos, embedded=True) == {"n1": ["n1", "n2", "n3", "n4"]}   # one machine
    rows = [{"cpu_busy_cores": 1.5, "cpu_user_pct": 30.0, "cpu_system_pct": 7.5},     # 1.5 ÷ 0.375 = 4
            {"cpu_busy_cores": 0.0, "cpu_user_pct": 0.0, "cpu_system_pct": 0.0},      # idle: says nothing
            {"cpu_busy_cores": 2.0, "cpu_user_pct": 45.0, "cpu_system_pct": 5.0}]
    assert series.cpus_seen(rows) == 4
    assert series.cpus_seen(rows[1:2]) is None


def _fake_capture(root: Path, host: str, info: dict, interval_s: float, t_s: range | list, mb_s, busy_pct=0.0):
    """Samples as `statgrid monitor` writes them (MonitorWriter), one every interval_s at the
    given seconds, with mb_s(t) MB/s of writes on vda and busy_pct % CPU."""
    from statgrid.monitor import store
    from statgrid.monitor.metrics import DISK_METRICS, NODE_METRICS

    w = store.MonitorWriter(root, host, flush_every=10_000)
    if info:
        store.write_machine(root, host, info)
    t0 = 1_800_000_000.0
    for t in t_s:
        node = {"ts": t0 + t, "host": host, "interval_s": interval_s, **{m.name: None for m in NODE_METRICS},
                "cpu_user_pct": busy_pct, "cpu_system_pct": 0.0, "cpu_iowait_pct": 0.0,
                "cpu_idle_pct": 100.0 - busy_pct, "cpu_busy_cores": busy_pct / 100 * info.get("cpus", 2),
                "mem_used_bytes": 1e9}
        disk = {"ts": t0 + t, "host": host, "device": "vda", **{m.name: 0.0 for m in DISK_METRICS},
                "write_bytes_per_s": mb_s(t) * 1e6, "write_iops": mb_s(t), "avg_request_bytes": 1e6, "await_ms": 1.0}
        w.append({"node": [node], "disk": [disk], "library": []})
    w.flush()


def test_capture_machines_sampled_at_different_intervals_add_up(tmp_path):
    """A at 1 s and B at 5 s, 10 MB/s each, on two machines: 20 MB/s together, 10 each."""
    _fake_capture(tmp_path, "a", {"machine_id": "ka", "cpus": 2}, 1.0, range(1, 61), lambda t: 10.0)
    _fake_capture(tmp_path, "b", {"machine_id": "kb", "cpus": 2}, 5.0, range(5, 61, 5), lambda t: 10.0)
    rep, f = build.monitor_report(tmp_path)
    assert f["mb_s_mean"] == pytest.approx(20.0) and f["mb_s_peak"] == pytest.approx(20.0)
    assert f["read_write_ratio"] == 0.0 and f["latency_ms_mean"] == pytest.approx(1.0)
    machines = next(t for t in rep.tables if t.id == "machines").rows
    assert [(r["machine"], r["mb_s_mean"], r["mb_s_peak"]) for r in machines] == \
        [("a", pytest.approx(10.0), pytest.approx(10.0)), ("b", pytest.approx(10.0), pytest.approx(10.0))]
    sizes = next(t for t in rep.tables if t.id == "io_sizes").rows
    assert sum(r["requests"] for r in sizes) == 60 * 10 + 12 * 10 * 5          # IOPS × each machine's interval


def test_capture_hosts_of_one_machine_each_moment_counted_once(tmp_path):
    """Hosts a (0–30 s) and b (0–60 s, 500 MB/s after 30 s) on one kernel: a stands for the
    first half, b for the rest; an idle capture takes its CPUs from machine.json."""
    info = {"machine_id": "k", "cpus": 8}
    _fake_capture(tmp_path, "a", info, 1.0, range(1, 31), lambda t: 10.0)
    _fake_capture(tmp_path, "b", info, 1.0, range(1, 61), lambda t: 10.0 if t <= 30 else 500.0)
    rep, f = build.monitor_report(tmp_path)
    assert (f["machines"], f["hosts"], f["samples"]) == (1, 2, 60)
    assert f["mb_s_mean"] == pytest.approx((30 * 10 + 30 * 500) / 60)
    assert f["mb_s_peak"] == pytest.approx(500.0) and f["span_s"] == pytest.approx(60.0)
    assert f["cpus"] == 8 and f["cpu_idle_cores"] == pytest.approx(8.0)         # idle: nothing to count CPUs by


# -- several iobench results: seed 000 Table 2 --------------------------------------------------------
def _io_result(mode: str, direct: bool, runs_mb_s: list[float], threads: int = 4) -> dict:
    reads = {"read": 1.0, "write": 0.0, "rw": 0.5}[mode]
    lat = {"min": 1, "max": 9, "mean": 2e6 if direct else 1e6, "stddev": 0.0, "N": 10,
           "percentile": {"99.000000": 5e6}}
    zero_lat = {**lat, "mean": 0.0, "N": 0, "percentile": {}}

    def spread(xs):
        return {"mean": sum(xs) / len(xs), "min": min(xs), "max": max(xs), "stddev": 0.0, "n": len(xs)}

    def direction(share):
        bw = [x * 1e6 * share for x in runs_mb_s]
        return {"bw_bytes": spread(bw), "iops": spread([b / 2**20 for b in bw]), "lat_ns": lat if share else zero_lat}

    total = {"read": direction(reads), "write": direction(1 - reads)}
    runs = [{"run": i + 1, "nodes": [], "total": {"read": {"bw_bytes": x * 1e6 * reads},
                                                  "write": {"bw_bytes": x * 1e6 * (1 - reads)}}}
            for i, x in enumerate(runs_mb_s)]
    return {"spec": {"dir": "/gpfs/t", "mode": mode, "rwmixread": 50, "pattern": "seq", "bs": 1 << 20,
                     "threads": threads, "size_per_thread": 8 << 30, "direct": direct, "fsync": False,
                     "runs": len(runs_mb_s)},
            "runs": runs, "summary": {"nodes": {"node1": total}, "total": total}}


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_several_iobench_results_make_seed_table_2(tmp_path):
    figures = {("read", True): [4000, 4100], ("rw", True): [1800, 1800], ("write", True): [1350, 1400],
               ("read", False): [4100, 4000], ("rw", False): [1800, 1840], ("write", False): [1375, 1425]}
    paths = []
    for (mode, direct), mbs in figures.items():
        p = tmp_path / f"{'raw' if direct else 'fs'}-{mode}.json"
        p.write_text(json.dumps(_io_result(mode, direct, mbs)))
        paths.append(str(p))
    r = run_cli("report", *paths, "--format", "md,csv")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "iobench-report"
    text = (out / "report.md").read_text()
    assert ("| operation | O_DIRECT mean MB/s | O_DIRECT peak MB/s | buffered mean MB/s | buffered peak MB/s | comments |\n"
            "|:---|---:|---:|---:|---:|:---|\n"
            "| 100% read | 4,050.0 | 4,100.0 | 4,050.0 | 4,100.0 | O_DIRECT: read latency 2 ms (p99 5 ms) · "
            "buffered: read latency 1 ms (p99 5 ms) |\n"
            "| 50% read-write | 1,800.0 | 1,800.0 | 1,820.0 | 1,840.0 | O_DIRECT: read latency 2 ms (p99 5 ms); "
            "write latency 2 ms (p99 5 ms) · buffered: read latency 1 ms (p99 5 ms); write latency 1 ms (p99 5 ms) |\n"
            "| 100% write | 1,375.0 | 1,400.0 | 1,400.0 | 1,425.0 | O_DIRECT: write latency 2 ms (p99 5 ms) · "
            "buffered: write latency 1 ms (p99 5 ms) |\n") in text
    assert "*Every test: seq, 1M blocks, 4 threads, 8G per thread, no fsync; directory /gpfs/t.*" in text
    assert (out / "iobench_table2.csv").read_text().splitlines()[0] == \
        "operation,mean:O_DIRECT,peak:O_DIRECT,mean:buffered,peak:buffered,comments"
    assert "| fs-rw | node1 | write | 910.0 | 900.0 | 920.0 |" in text
    assert (out / "charts" / "iobench.svg").exists()

    # two results of one operation and configuration: columns are the file names
    # a second raw read: only the colliding results get their names; a same-named file its directory's
    (tmp_path / "again.json").write_text(json.dumps(_io_result("read", True, [3000])))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "raw-read.json").write_text(json.dumps(_io_result("read", True, [2000])))
    t = build.build([*paths, str(tmp_path / "again.json"), str(tmp_path / "b" / "raw-read.json")]).tables[0]
    assert [c.header for c in t.columns if c.key.startswith("mean:")] == \
        ["O_DIRECT mean MB/s", "buffered mean MB/s", "O_DIRECT, again mean MB/s", "O_DIRECT, b/raw-read mean MB/s"]
    assert [t.rows[0][k] for k in ("mean:O_DIRECT", "mean:O_DIRECT, again", "mean:O_DIRECT, b/raw-read")] \
        == [4050.0, 3000.0, 2000.0]
    assert t.rows[1]["mean:O_DIRECT"] == 1800.0 and t.rows[1].get("mean:O_DIRECT, again") is None
    detail = build.build([*paths, str(tmp_path / "b" / "raw-read.json")]).tables[1]
    assert {r["file"] for r in detail.rows} >= {f"{tmp_path.name}/raw-read", "b/raw-read", "fs-rw"}

    broken = _io_result("read", True, [1.0])
    broken["summary"]["nodes"] = {}
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    r = run_cli("report", str(tmp_path / "broken.json"))
    assert r.returncode == 1 and "broken.json' lacks summary.nodes" in r.stderr and "Traceback" not in r.stderr

    r = run_cli("report", paths[0], str(BUNDLE), "--format", "md", "--out", str(tmp_path / "x"))
    assert r.returncode != 0 and "is a mixed result: several RESULTS must all be `iobench --json` files" in r.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.grid   # a subprocess (the CLI): not the one-process unit layer
def test_compare_two_scale_tests_and_a_capture_with_a_bundle(tmp_path):
    a = _scale_dir(tmp_path / "scale-a", [100.0, 125.0])
    b = _scale_dir(tmp_path / "scale-b", [50.0, 100.0, 200.0])
    r = run_cli("report", str(a), "--compare", str(b), "--format", "md")
    assert r.returncode == 0, r.stderr
    text = (a / "compare-scale-b" / "report.md").read_text()
    assert ("| nodes | A clock s | B clock s | A jobs/h | B jobs/h | jobs/h B ÷ A | A efficiency | B efficiency |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
            "| 1 | 100.0 | 50.0 | 1,296.0 | 2,592.0 | 2.000 | 1.000 | 1.000 |\n"
            "| 2 | 125.0 | 100.0 | 2,073.6 | 2,592.0 | 1.250 | 0.800 | 0.500 |\n"
            "| 3 | — | 200.0 | — | 1,944.0 | — | — | 0.250 |\n") in text
    assert (a / "compare-scale-b" / "charts" / "scaling.svg").exists()

    cap = tmp_path / "cap"
    shutil.copytree(BUNDLE / "grid" / "monitor", cap)
    r = run_cli("report", str(BUNDLE), "--compare", str(cap), "--format", "json", "--out", str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr
    rows = next(t for t in json.loads((tmp_path / "c" / "report.json").read_text())["tables"]
                if t["id"] == "compare")["rows"]
    by = {r["figure"]: r for r in rows}
    # the capture holds the bundle's samples and the grid's start before the workload's window
    assert by["peak throughput (MB/s)"]["b"] >= by["peak throughput (MB/s)"]["a"] > 0
    assert by["time span of the samples (s)"]["a"] is None and by["time span of the samples (s)"]["b"] == pytest.approx(19, abs=0.1)
    assert by["clock time (s)"]["b"] is None and by["CPUs of the grid's machines"]["ratio"] == 1.0
    r = run_cli("report", str(a), "--compare", str(BUNDLE), "--out", str(tmp_path / "d"))
    assert r.returncode != 0 and "--compare got a scale result" in r.stderr and "needs two" in " ".join(r.stderr.split())
