"""`bench mixed --repeat N` (statgrid/bench/repeat.py) and its report: each figure's mean and spread over the runs.
The runs here are copies of a real bundle whose clock time is set by hand, so the expected mean, lowest, highest
and spread are worked out from those clocks."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from statgrid.bench import repeat as rp
from statgrid.errors import StatgridError, UsageError
from statgrid.report import build, md

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "bundle_ma2"


def test_runs_kept_and_reported_with_their_spread(tmp_path):
    clocks = iter([10.0, 14.0, 12.0])

    def run_one(d: Path) -> Path:
        shutil.copytree(BUNDLE, d)
        meta = json.loads((d / "bundle.json").read_text())
        meta["end_ts"] = meta["workload_start_ts"] + next(clocks)
        (d / "bundle.json").write_text(json.dumps(meta))
        return d

    seen = []
    root = rp.run(3, tmp_path / "rep", run_one, lambda b: build.mixed_report(b)[1], seen.append)
    assert seen == ["run 1/3", "run 2/3", "run 3/3"]
    assert [r["bundle"] for r in rp.load(root)["runs"]] == ["run-1", "run-2", "run-3"]
    assert build.kind_of(root) == "repeat"
    rep = build.build(root)
    clock = next(r for r in rep.tables[0].rows if r["figure"] == "clock time")
    assert (clock["mean"], clock["min"], clock["max"], clock["runs"]) == (12.0, 10.0, 14.0, 3)
    assert clock["spread"] == pytest.approx((14 - 10) / 12)
    jobs = next(r for r in rep.tables[0].rows if r["figure"] == "jobs")
    assert (jobs["mean"], jobs["spread"]) == (7, 0)                     # the same jobs every time
    assert "Summary over 3 runs" in md.serialize(rep)


def test_bad_input(tmp_path, home):
    with pytest.raises(UsageError, match="--repeat 0 must be at least 1"):
        rp.run(0, tmp_path / "x", lambda d: d, lambda b: {})
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    with pytest.raises(StatgridError, match="exists and is not empty"):
        rp.run(2, tmp_path / "full", lambda d: d, lambda b: {})
    with pytest.raises(StatgridError, match="is not a --repeat directory"):
        rp.load(tmp_path)
    from statgrid.cli.app import app
    r = CliRunner().invoke(app, ["bench", "mixed", "--repeat", "0"])
    assert r.exit_code != 0 and "--repeat 0 must be at least 1" in r.output
