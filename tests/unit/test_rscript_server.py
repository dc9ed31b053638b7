"""tests/support/rscript.py: one R process per packages tuple, kept across calls and across calls with
other tuples (the R cross-checks alternate lme4, geepack, car, lmerTest…), each script in a fresh
environment, a package never seen by a script whose tuple does not name it, and at most KEEP processes."""
from __future__ import annotations

import shutil

import pytest

from tests.support import rscript as R

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="Rscript is not installed")

PID_AND_STATS4 = 'cat(Sys.getpid(), "package:stats4" %in% search())'


def _pid_and_stats4(packages: tuple[str, ...]) -> tuple[int, bool]:
    code = ("suppressMessages(library(stats4));" if packages else "") + PID_AND_STATS4
    res = R.rscript(code, packages)
    assert res.returncode == 0, res.stderr
    pid, attached = res.stdout.split()
    return int(pid), attached == "TRUE"


def test_each_tuple_keeps_its_process_and_sees_only_its_packages():
    plain = _pid_and_stats4(())
    with_stats4 = _pid_and_stats4(("stats4",))
    assert with_stats4[1] is True and with_stats4[0] != plain[0]
    # back to the first tuple: the same process as before, still without stats4 attached
    assert _pid_and_stats4(()) == (plain[0], False)
    assert _pid_and_stats4(("stats4",)) == with_stats4


def test_a_script_does_not_see_the_previous_scripts_variables():
    assert R.rscript("leftover_x <- 41; cat(leftover_x + 1)").stdout == "42"
    res = R.rscript("cat(exists('leftover_x'))")
    assert res.returncode == 0 and res.stdout == "FALSE"


def test_an_error_is_returncode_1_with_r_message_and_the_process_goes_on():
    before = int(R.rscript("cat(Sys.getpid())").stdout)
    res = R.rscript("stop('no such thing here')")
    assert res.returncode == 1 and "no such thing here" in res.stderr
    assert int(R.rscript("cat(Sys.getpid())").stdout) == before


def test_at_most_keep_processes_the_least_recently_used_ends(monkeypatch):
    monkeypatch.setattr(R, "KEEP", 1)
    first, _ = _pid_and_stats4(())
    _pid_and_stats4(("stats4",))                       # a second tuple: the first one's process ends
    assert list(R._servers) == [("stats4",)]
    again, _ = _pid_and_stats4(())
    assert again != first
