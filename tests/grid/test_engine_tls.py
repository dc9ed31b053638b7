"""Issue 15, "the engine is closed": only the grid's daemons may talk to its Dask scheduler and
workers. A real grid (`grid up --detach`, embedded engine); an intruder in a separate Python
process that knows the scheduler's address — but not the grid's key — tries to connect and run a
function on every worker and on the scheduler (the function would write a marker file); with
the grid's own certificate the same script succeeds, so the test is not vacuous."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from statgrid.grid.security import tls
from tests.conftest import run_cli
from tests.support.gridtest import Grid, running
from tests.support.gridtoml import toml_text

GRID_TOML = toml_text({"nodeA": 1, "nodeB": 1}, monitor=True)

# Runs in its own interpreter: argv = scheduler address, marker directory, mode, [ca cert key];
# $WORKERS: worker addresses to call directly as well (`run`, the handler client.run reaches).
# Prints one JSON line: {"connected": bool, "error": str, "ran": [where the function ran],
# "workers": [their addresses], "direct": [results of direct calls], "direct_errors": [...]}.
INTRUDER = textwrap.dedent('''
    import asyncio, json, os, ssl, sys
    from distributed import Client
    from distributed.core import rpc
    from distributed.protocol.pickle import dumps
    from distributed.security import Security

    address, marker_dir, mode = sys.argv[1:4]

    def mark(where, dask_worker=None, dask_scheduler=None):
        path = os.path.join(marker_dir, where)
        with open(path, "w") as f:
            f.write(str(os.getuid()))
        return where

    class NoCertificate(Security):
        """TLS, but no client certificate (and trusting any server)."""
        def get_connection_args(self, role):
            ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            return {"ssl_context": ctx, "require_encryption": True, "extra_conn_args": {}}

    if mode == "plain":                       # the address as given, no TLS at all
        target, security = address.replace("tls://", "tcp://"), None
    elif mode == "no-cert":
        target, security = address, NoCertificate(require_encryption=True)
    else:                                     # "cert": a CA, certificate and key given as files
        ca, cert, key = sys.argv[4:7]
        target, security = address, Security(require_encryption=True, tls_ca_file=ca, tls_client_cert=cert,
                                              tls_client_key=key)
    out = {"connected": False, "error": "", "ran": [], "workers": [], "direct": [], "direct_errors": []}
    try:
        with Client(target, security=security, timeout="5s") as client:
            out["connected"] = True
            ran = client.run(mark, "worker-" + mode)
            out["workers"], out["ran"] = list(ran), list(ran.values())
            out["ran"].append(client.run_on_scheduler(mark, "scheduler-" + mode))
    except BaseException as exc:              # noqa: BLE001 - what matters is that it did not get in
        out["error"] = f"{type(exc).__name__}: {exc}"

    async def direct(addr):
        conn = rpc(addr, connection_args=security.get_connection_args("client") if security else {}, timeout=5)
        try:
            return await conn.run(function=dumps(mark), args=dumps(("direct-" + mode,)))
        finally:
            await conn.close_rpc()

    for addr in json.loads(os.environ.get("WORKERS", "[]")):
        try:
            out["direct"].append(repr(asyncio.run(direct(addr.replace("tls://", "tcp://") if mode == "plain"
                                                             else addr))))
        except BaseException as exc:          # noqa: BLE001
            out["direct_errors"].append(f"{type(exc).__name__}: {exc}")
    print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    with running(Grid(tmp_path_factory.mktemp("tlsgrid"), GRID_TOML)) as g:
        yield g


def _engine(grid) -> dict:
    return json.loads((grid.home / "grid" / "engine.json").read_text())


def _intrude(tmp_path, address: str, mode: str, *files, workers: tuple[str, ...] = ()) -> dict:
    script = tmp_path / "intruder.py"
    script.write_text(INTRUDER)
    markers = tmp_path / "markers"
    markers.mkdir(exist_ok=True)
    # A clean environment: nothing of the grid (no STATGRID_HOME, no DASK_ settings).
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "WORKERS": json.dumps(list(workers))}
    proc = subprocess.run([sys.executable, str(script), address, str(markers), mode, *map(str, files)], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.stdout.strip(), proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["markers"] = sorted(p.name for p in markers.iterdir())
    return out


def _grid_files(grid) -> tuple:
    files = tls.TlsFiles.under(grid.home / "grid")
    return files.ca_cert, files.cert, files.key


@pytest.fixture(scope="module")
def workers(grid, tmp_path_factory) -> tuple[str, ...]:
    """The workers' addresses (an intruder could scan for the ports), found with the grid's key."""
    out = _intrude(tmp_path_factory.mktemp("probe"), _engine(grid)["address"], "cert", *_grid_files(grid))
    assert len(out["workers"]) == 2 and all(w.startswith("tls://") for w in out["workers"]), out
    return tuple(out["workers"])


def test_jobs_run_over_tls(grid):
    assert _engine(grid)["address"].startswith("tls://")
    ids = [grid.submit("sh", "-c", "echo $STATGRID_HOST") for _ in range(2)]
    jobs = grid.wait(ids)
    assert [j["state"] for j in jobs] == ["DONE", "DONE"]


@pytest.mark.parametrize("mode", ["plain", "no-cert", "other-ca"])
def test_a_process_without_the_key_cannot_connect(grid, workers, tmp_path, mode):
    files = ()
    if mode == "other-ca":                         # a certificate of a CA the intruder made itself
        ca, _, cert, key = tls.make_ca_and_cert()
        files = (tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem")
        for path, data in zip(files, (ca, cert, key)):
            path.write_bytes(data)
        mode = "cert"
    out = _intrude(tmp_path, _engine(grid)["address"], mode, *files, workers=workers)
    assert not out["connected"] and out["error"], out
    assert out["direct"] == [] and len(out["direct_errors"]) == len(workers), out     # workers refuse it too
    assert out["ran"] == [] and out["markers"] == [], out       # nothing ran on a worker or the scheduler


def test_the_grid_key_connects(grid, workers, tmp_path):
    """The same script with the grid's own files gets in: the refusals above are the key's doing."""
    out = _intrude(tmp_path, _engine(grid)["address"], "cert", *_grid_files(grid), workers=workers)
    assert out["connected"] and out["direct_errors"] == [], out
    assert out["markers"] == ["direct-cert", "scheduler-cert", "worker-cert"], out


def test_keys_and_engine_file_are_private(grid):
    files = tls.TlsFiles.under(grid.home / "grid")
    assert stat.S_IMODE(files.dir.stat().st_mode) == 0o700
    for path in files.all():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE((grid.home / "grid" / "engine.json").stat().st_mode) == 0o600


def test_keys_are_made_once_and_reused(tmp_path):
    first = tls.ensure(tmp_path)
    before = [p.read_bytes() for p in first.all()]
    again = tls.ensure(tmp_path)
    assert [p.read_bytes() for p in again.all()] == before


def test_worker_without_the_key_says_what_to_copy(tmp_path):
    env = {"STATGRID_HOME": str(tmp_path / "home"), "STATGRID_CONFIG": str(tmp_path / "none.toml")}
    (tmp_path / "none.toml").write_text("[hosts.nodeA]\nslots = 1\n")
    res = run_cli("worker", "--master", "tls://127.0.0.1:1", "--name", "nodeA", "--slots", "1", env=env, timeout=60)
    assert res.returncode != 0
    assert str(tmp_path / "home" / "grid" / "tls" / "ca.pem") in res.stderr, res.stderr
    plain = run_cli("worker", "--master", "tcp://127.0.0.1:1", "--name", "nodeA", "--slots", "1", env=env, timeout=60)
    assert plain.returncode != 0 and "tls://" in plain.stderr, plain.stderr


def test_certificates_near_expiry_are_renewed_only_when_allowed(tmp_path):
    """A start of a new engine renews a set that expires within RENEW_BEFORE_DAYS; a start that
    reconnects to a running engine (renew=False) keeps the set that engine was started with."""
    files = tls.ensure(tmp_path)
    for path, data in zip((files.ca_cert, files.ca_key, files.cert, files.key),
                          tls.make_ca_and_cert(days=tls.RENEW_BEFORE_DAYS - 1)):
        path.write_bytes(data)
    expiring = files.cert.read_bytes()
    assert tls.ensure(tmp_path, renew=False).cert.read_bytes() == expiring
    assert tls.ensure(tmp_path).cert.read_bytes() != expiring


def test_a_plain_scheduler_address_is_refused(tmp_path, grid_toml):
    toml = tmp_path / "grid.toml"
    grid_toml({"nodeA": 1}, path=toml, master={"scheduler": "tcp://127.0.0.1:1"}, monitor=True)
    res = run_cli("grid", "up", env={"STATGRID_HOME": str(tmp_path / "home"), "STATGRID_CONFIG": str(toml)},
                  timeout=120)
    assert res.returncode != 0
    assert "'tcp://127.0.0.1:1'" in res.stderr and "tls://" in res.stderr, res.stderr
