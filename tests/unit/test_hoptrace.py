"""hoptrace (statgrid/grid/execution/hoptrace.py): the optional trace of a job's hops through the
grid's processes, and its reading into the steps of each slot refill (benchmarks/dispatch.py --trace)."""
from __future__ import annotations

import importlib

import pytest

from statgrid.grid.execution import hoptrace


@pytest.fixture
def traced(tmp_path, monkeypatch):
    """hoptrace as a process started with $STATGRID_HOP_TRACE set loads it."""
    path = tmp_path / "trace.txt"
    monkeypatch.setenv(hoptrace.ENV, str(path))
    module = importlib.reload(hoptrace)
    yield module, path
    monkeypatch.delenv(hoptrace.ENV)
    importlib.reload(hoptrace)


def test_marks_are_lines_of_time_pid_hop_key_and_read_keeps_each_hops_first_time(traced):
    module, path = traced
    module.mark("W.run", "statgrid-job-3-1")
    module.mark("L.request", "statgrid-job-3-1")
    module.mark("W.run", "statgrid-job-3-1")              # a second time: read keeps the first
    lines = path.read_text().splitlines()
    assert [line.split()[2:] for line in lines] == [["W.run", "statgrid-job-3-1"], ["L.request", "statgrid-job-3-1"],
                                                     ["W.run", "statgrid-job-3-1"]]
    first = float(lines[0].split()[0])
    assert module.read(str(path)) == {"statgrid-job-3-1": {"W.run": first, "L.request": float(lines[1].split()[0])}}


def test_off_without_the_variable_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(hoptrace.ENV, raising=False)
    module = importlib.reload(hoptrace)
    monkeypatch.chdir(tmp_path)
    module.mark("W.run", "statgrid-job-1-1")
    assert module.PATH is None and list(tmp_path.iterdir()) == []


# Job 1 (statgrid-job-1-1) ends on the node at t = 100.000; the master, handling its end, dispatches
# job 2 (statgrid-job-2-1). Job 3's dispatch comes outside any end's handling (a submit): no refill.
TRACE = """\
100.000000 11 L.reaped statgrid-job-1-1
100.001000 12 W.exited statgrid-job-1-1
100.002500 12 W.attempt_written statgrid-job-1-1
100.005500 13 S.event_attempt.finished statgrid-job-1-1
100.009500 14 M.recv_attempt.finished statgrid-job-1-1
100.009750 14 M.event_AttemptFinished statgrid-job-1-1
100.011000 14 M.submit statgrid-job-2-1
100.011500 14 M.submitted statgrid-job-2-1
100.012000 14 M.handled_AttemptFinished statgrid-job-1-1
100.018500 13 S.waiting>processing statgrid-job-2-1
100.021500 12 W.ready>executing statgrid-job-2-1
100.023500 12 W.run statgrid-job-2-1
100.024500 11 L.request statgrid-job-2-1
100.025000 11 L.start statgrid-job-2-1
100.027000 11 L.started_sent statgrid-job-2-1
100.200000 14 M.submit statgrid-job-3-1
"""


def test_refill_hops_splits_each_refill_into_its_steps(tmp_path):
    path = tmp_path / "trace.txt"
    path.write_text(TRACE)
    steps = hoptrace.refill_hops(str(path))
    # By hand from TRACE, each the difference of two consecutive points, in ms.
    expected = [1.0, 1.5, 3.0, 4.0, 1.5, 0.5, 7.0, 3.0, 2.0, 1.0, 0.5, 2.0]
    names = [name for _, _, name in hoptrace.REFILL if name]
    assert list(steps)[:len(names)] == names
    assert [round(steps[name][0], 6) for name in names] == expected
    assert all(len(steps[name]) == 1 for name in names)          # job 3's dispatch is no refill
    assert round(steps["gap (end_ts → start_ts)"][0], 6) == 24.5   # L.reaped of 1 → L.request of 2


def test_a_refill_missing_a_hop_is_left_out(tmp_path):
    path = tmp_path / "trace.txt"
    path.write_text("".join(line + "\n" for line in TRACE.splitlines() if " W.run " not in line))
    assert all(values == [] for values in hoptrace.refill_hops(str(path)).values())
