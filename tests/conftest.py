"""Shared fixtures: a throw-away grid home, an in-process session, the real CLI, and a grid.toml
built from arguments.

The suite's layers are its folders: tests/unit/ (fast, in pytest's process: `pytest -m unit`, or
`pytest -m unit -n 2 --dist loadfile` on two pytest-xdist workers: the unit tests are parallel-safe), tests/grid/
(tests that start a master, a Dask engine or a grid's processes), tests/support/ (helpers the tests
import: gridtest, multiuser, netns, gridtoml, rscript). The layer's marker is given here from the
folder, so a test cannot sit in one folder and claim the other layer; root, netns and browser are
written on the tests that need them, and grid on a test of tests/unit/ that starts statgrid's CLI in a
subprocess (it runs with the grid layer: `-m unit` stays in one process)."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from statgrid.config import load_config
from statgrid.session import Session, SessionLog



def pytest_configure(config) -> None:
    """No test reads the running account's own client config (~/.config/statgrid/client.toml: a
    token and a master's address that `statgrid token create` wrote there): the CLI would talk to
    that master instead of failing or finding the test's. Tests that want one set their own."""
    import tempfile

    os.environ["XDG_CONFIG_HOME"] = config.statgrid_config_home = tempfile.mkdtemp(prefix="statgrid-test-config-")


def pytest_unconfigure(config) -> None:
    import shutil

    if getattr(config, "statgrid_config_home", None):
        shutil.rmtree(config.statgrid_config_home, ignore_errors=True)

_LAYERS = {"unit": "unit", "grid": "grid"}      # folder under tests/ → its marker
_NOT_UNIT = ("grid", "root", "netns", "browser")


def pytest_addoption(parser) -> None:
    parser.addoption("--reverse", action="store_true",
                     help="run the collected tests in reverse order: a test that needs what an earlier one left "
                          "(a file, a job, a grid's state) fails")


def _grid_cannot_match(markexpr: str) -> bool:
    """True where no test of tests/grid/ can match `-m markexpr`: each is `grid` and never `unit`
    (pytest_collection_modifyitems sees to it), so the expression is false whatever else they carry
    (each other name it uses tried true and false). `-m unit` then need not import tests/grid/'s
    modules (about 5 s of the unit layer's collection). An expression this cannot read: collect."""
    import itertools
    import re

    from _pytest.mark.expression import Expression

    try:
        expr = Expression.compile(markexpr)
    except Exception:
        return False
    fixed = {"grid": True, "unit": False}
    free = sorted(set(re.findall(r"[A-Za-z_][\w.\-]*", markexpr)) - set(fixed) - {"and", "or", "not"})
    if len(free) > 8:
        return False
    for values in itertools.product((False, True), repeat=len(free)):
        known = {**fixed, **dict(zip(free, values))}
        try:
            if expr.evaluate(lambda name, **kw: known.get(name, False)):
                return False
        except Exception:
            return False
    return True


def pytest_ignore_collect(collection_path, config):
    """tests/grid/ is not collected where `-m` rules all its tests out (None: pytest decides as usual).
    tests/unit/ always is: some of its tests are `grid` too."""
    markexpr = config.getoption("markexpr", "") or ""
    if (markexpr.strip() and collection_path.name == "grid"
            and collection_path.resolve() == Path(__file__).resolve().parent / "grid"
            and _grid_cannot_match(markexpr)):
        return True
    return None


def pytest_collection_modifyitems(config, items) -> None:
    """Each test gets its folder's layer marker. A test of tests/unit/ that needs root, namespaces or
    a browser is not `unit` (it is slow or skipped there): it keeps its own marker only. --reverse
    turns the order round."""
    if config.getoption("--reverse"):
        items.reverse()
    tests_dir = Path(__file__).resolve().parent
    for item in items:
        try:
            folder = Path(item.fspath).resolve().relative_to(tests_dir).parts[0]
        except ValueError:
            continue
        layer = _LAYERS.get(folder)
        if layer == "grid" and item.get_closest_marker("unit"):
            raise pytest.UsageError(f"{item.nodeid} is marked unit but sits in tests/grid/: a grid-layer test "
                                    f"is never unit (`-m unit` does not collect tests/grid/); move it to "
                                    f"tests/unit/ or drop the marker")
        if layer == "unit" and any(item.get_closest_marker(m) for m in _NOT_UNIT):
            continue
        if layer is not None:
            item.add_marker(layer)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("STATGRID_HOME", str(h))
    monkeypatch.delenv("STATGRID_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    return h


class Captured:
    def __init__(self):
        self.text, self.jsonl, self.listing = io.StringIO(), io.StringIO(), io.StringIO()

    def log(self) -> SessionLog:
        return SessionLog(text=self.text, jsonl=self.jsonl, listing=self.listing)


@pytest.fixture
def grid_toml(tmp_path):
    """Writes a grid.toml built from arguments and returns its path: grid_toml(hosts, queues, *,
    path=tmp_path/"grid.toml", port=a free port (None: no port line), monitor=False, **sections), as
    tests/support/gridtoml.py's toml_text spells them, e.g.

        grid_toml({"node1": 2, "node2": {"slots": 1, "open": False}}, {"night": {"priority": 5}},
                  master={"api_tls": False}, session={"memsize": "256M"})

    (A grid started by tests/support/gridtest.py's Grid takes toml_text's text and writes it itself.)"""
    from statgrid.bench.mixed import free_port
    from tests.support.gridtoml import toml_text

    def write(hosts=None, queues=None, *, path: Path | None = None, port="free", **sections) -> Path:
        path = path or tmp_path / "grid.toml"
        port_value = free_port() if port == "free" else port
        template = toml_text(hosts, queues, port=None if port_value is None else "{port}", **sections)
        path.write_text(template.format(port=port_value))
        return path

    return write


@pytest.fixture
def own_launcher(monkeypatch):
    """node.py's own launcher, started by run_job in this process (as whoever runs the tests), and
    stopped at the test's end."""
    from statgrid.grid.execution import node

    monkeypatch.setattr(node, "_server", {})
    yield
    proc = node._server.get("proc")
    if proc is not None and proc.poll() is None:
        proc.stdin.close()
        proc.wait(10)


@pytest.fixture
def captured() -> Captured:
    return Captured()


@pytest.fixture
def session(home, captured):
    s = Session(load_config(), {"memsize": "512M", "threads": "2"}, log=captured.log())
    yield s
    s.close()


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120
            ) -> subprocess.CompletedProcess:
    """Run the real `statgrid` CLI (python -m statgrid) in a subprocess."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "statgrid", *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def scratch_dirs(home: Path) -> list[Path]:
    """WORK and UTIL session directories left under a default grid home."""
    return [p for root in ("work", "util") if (home / root).is_dir() for p in (home / root).iterdir()]


def pgid_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


WAIT_S = 120.0   # the suite's deadline for an awaited event: generous, the machine may be loaded and shared


def wait_for(predicate, what: str, timeout_s: float = WAIT_S, state=None, every_s: float = 0.05):
    """predicate()'s first true value, polled every `every_s` until `timeout_s`; then fail naming
    `what` and the last state seen: state() if given, else predicate()'s last value. Every wait of
    the suite for something to happen goes through here: it waits for the event, never for a time."""
    import time

    deadline = time.monotonic() + timeout_s
    value = None
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            break
        time.sleep(every_s)
    last = state() if state is not None else value
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}; last seen: {last!r}")


def wait_gone(pids, timeout_s: float = WAIT_S) -> None:
    """Wait until none of the processes runs (a zombie counts as gone); fail naming survivors."""
    import psutil

    pids = list(pids)

    def alive() -> list[int]:
        out = []
        for p in pids:
            try:
                if psutil.Process(p).status() != psutil.STATUS_ZOMBIE:
                    out.append(p)
            except psutil.NoSuchProcess:
                pass
        return out

    wait_for(lambda: not alive(), f"processes {list(pids)} to end", timeout_s, state=alive)
