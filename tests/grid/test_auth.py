"""Who is asking and what they may do (issue 15), for any account: the rules (auth.Rights, tokens,
the grid.toml keys), the local socket, and a real grid's API over its socket and over HTTPS with
a token. The same with real users of a shared grid: tests/grid/test_multiuser_grid.py (root only)."""
from __future__ import annotations

import http.client
import json
import time
import os
import socket
import sqlite3
import ssl
from pathlib import Path

import pytest

from statgrid.config import load_config
from statgrid.errors import ConfigError, StatgridError
from statgrid.grid.interface import localsock
from statgrid.grid.security import auth
from statgrid.grid.interface.client import Forbidden, GridClient, NotAuthenticated, Remote, read_client_config
from statgrid.grid.interface.server import _bind_tcp
from statgrid.grid.master.store import JobStore
from tests.support import gridtest


def cfg_with(tmp_path: Path, text: str):
    (tmp_path / "grid.toml").write_text(text)
    return load_config(tmp_path / "grid.toml", {})


# -- the rules ----------------------------------------------------------------------------------------
def test_a_personal_grid_serves_its_own_account_only(tmp_path):
    rights = auth.Rights(cfg_with(tmp_path, ""), grid_uid=os.geteuid() or 65534)
    me = os.geteuid() or 65534
    assert rights.personal
    assert rights.caller(me, "socket", user="me").admin          # its own account administers it
    with pytest.raises(auth.Forbidden, match="not as root .a personal grid.*accepts requests only from"):
        rights.caller(me + 1, "socket", user="someone")


@pytest.mark.root
def test_on_a_shared_grid_root_and_the_listed_admins_administer_and_others_own_their_jobs(tmp_path):
    rights = auth.Rights(cfg_with(tmp_path, '[grid]\nadmins = ["carol"]\n'), grid_uid=0)
    root, carol, ann = (rights.caller(0, "socket", user="root"), rights.caller(1002, "socket", user="carol"),
                        rights.caller(1001, "socket", user="ann"))
    assert (root.admin, carol.admin, ann.admin) == (True, True, False)
    rights.require_owner(ann, "ann", "kill", "job 1")
    rights.require_owner(carol, "ann", "kill", "job 1")
    with pytest.raises(auth.Forbidden) as refused:
        rights.require_owner(ann, "bob", "kill", "job 7")
    assert str(refused.value) == ("job 7 belongs to 'bob'; only 'bob' or a grid administrator (root, or carol of "
                                  "[grid] admins) may kill it (you are 'ann').")
    with pytest.raises(auth.Forbidden, match=r"only a grid administrator \(root, or carol of \[grid\] admins\) may "
                                             "stop the grid"):
        rights.require_admin(ann, "stop the grid")
    assert rights.sees_detail(ann, "ann") and rights.sees_detail(carol, "ann") and not rights.sees_detail(ann, "bob")


def test_tokens_are_kept_as_digests_and_revoked_at_once(tmp_path):
    con = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    tokens = auth.Tokens(con)
    token_id, token = tokens.create("ann", "laptop")
    assert token.startswith("sg_") and len(token) > 40
    assert tokens.lookup(token) == (token_id, "ann")
    assert tokens.lookup(token + "x") is None and tokens.lookup("sg_" + "a" * 300) is None
    assert token not in (tmp_path / "t.db").read_bytes().decode("latin-1")       # only its SHA-256
    assert auth.Tokens(con).lookup(token) == (token_id, "ann")                      # a restarted master too
    tokens.revoke(token_id, "carol")
    assert tokens.lookup(token) is None and auth.Tokens(con).lookup(token) is None
    assert tokens.get(token_id)["revoked_by"] == "carol"


def test_the_api_keys_of_grid_toml(tmp_path):
    cfg = cfg_with(tmp_path, '[grid]\nadmins = ["carol", "dan"]\n[master]\nlisten = "0.0.0.0"\nnames = ["grid1"]\n')
    assert (cfg.admins, cfg.master.listen, cfg.master.api_tls, cfg.master.names) == \
        (("carol", "dan"), "0.0.0.0", True, ("grid1",))
    with pytest.raises(ConfigError, match="master.api_tls = false with master.listen = '10.1.2.3'.*only with TLS"):
        cfg_with(tmp_path, '[master]\nlisten = "10.1.2.3"\napi_tls = false\n')
    assert not cfg_with(tmp_path, '[master]\napi_tls = false\n').master.api_tls        # loopback: allowed
    with pytest.raises(ConfigError, match="master.listen = 'grid1' is not allowed: expected an IP address"):
        cfg_with(tmp_path, '[master]\nlisten = "grid1"\n')
    with pytest.raises(ConfigError, match="grid.admins"):
        cfg_with(tmp_path, '[grid]\nadmins = "carol"\n')


def test_the_api_socket_sets_tcp_nodelay_on_its_connections(tmp_path):
    """asyncio sets TCP_NODELAY only where the listening socket's proto is IPPROTO_TCP; without
    it every HTTPS answer waited ~40 ms for a delayed ACK."""
    sock = _bind_tcp(cfg_with(tmp_path, f"[master]\nport = {gridtest.free_port()}\n"))
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_the_local_socket_works_at_a_path_longer_than_sun_path(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = deep / localsock.SOCKET_NAME
    assert len(str(path)) > localsock.SUN_PATH_MAX
    server = localsock.bind(path)
    try:
        server.setblocking(True)
        client = localsock.connect(path, 5)
        conn, _ = server.accept()
        assert auth.peer_uid(conn) == os.getuid()          # the kernel's word for who connected
        assert path.stat().st_mode & 0o777 == 0o666
        conn.close()
        client.close()
    finally:
        server.close()


def test_a_client_config_others_may_read_is_refused(tmp_path):
    conf = tmp_path / "client.toml"
    conf.write_text('url = "https://grid1:8642"\ntoken = "sg_x"\n')
    os.chmod(conf, 0o644)
    with pytest.raises(StatgridError, match="others may read it .mode 0644.*chmod 600"):
        read_client_config(conf)
    os.chmod(conf, 0o600)
    assert read_client_config(conf) == Remote(url="https://grid1:8642", token="sg_x", ca=None, source=str(conf))


# -- a real grid ---------------------------------------------------------------------------------------
GRID_TOML = gridtest.ONE_SLOT_TOML


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    with gridtest.running(gridtest.Grid(tmp_path_factory.mktemp("auth"), GRID_TOML)) as g:
        yield g


def https(grid, method: str, path: str, token: str | None = None, body=None, host="localhost") -> tuple[int, dict]:
    context = ssl.create_default_context(cafile=str(grid.home / "grid" / "ca.pem"))
    conn = http.client.HTTPSConnection(host, grid.cfg.master.port, timeout=30, context=context)
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_nothing_but_health_is_anonymous_and_a_refused_request_stores_nothing(grid):
    status, health = https(grid, "GET", "/health")
    assert (status, health) == (200, {"status": "ok"})            # no addresses, hosts or counts
    before = len(grid.client.jobs(all_states=True))
    for method, path, body in [("GET", "/jobs", None), ("GET", "/whoami", None), ("GET", "/hosts", None),
                               ("POST", "/jobs", {"argv": ["true"], "cwd": "/"}), ("POST", "/grid/down", None),
                               ("POST", "/tokens", {}), ("GET", "/nosuchpath", None)]:
        for token in (None, "sg_not-a-token", "Basic abc"):
            status, payload = https(grid, method, path, token=token, body=body)
            assert status == 401, (method, path, token, status, payload)
            assert "statgrid token create" in payload["error"], payload
    assert len(grid.client.jobs(all_states=True)) == before
    audit = (grid.home / "grid" / "audit.log").read_text().splitlines()
    assert any('"action": "POST /grid/down"' in line and '"outcome": "refused"' in line for line in audit)
    assert (grid.home / "grid" / "audit.log").stat().st_mode & 0o777 == 0o600


def test_a_token_made_on_the_socket_works_over_https_until_revoked(grid):
    made = grid.client.token_create("test")
    me = grid.client.whoami()
    assert me["via"] == "socket"
    status, who = https(grid, "GET", "/whoami", token=made["token"])
    assert status == 200 and (who["user"], who["via"], who["token_id"]) == (me["user"], "token", made["id"])
    remote = GridClient(grid.cfg, remote=Remote(url=f"https://localhost:{grid.cfg.master.port}", token=made["token"],
                                                ca=str(grid.home / "grid" / "ca.pem")))
    job = remote.submit(["true"], cwd=str(grid.root), env={"PATH": os.environ["PATH"]})
    assert remote.wait([job["id"]])[0]["state"] == "DONE"
    with pytest.raises(Forbidden, match="local socket"):
        remote.token_create("another")                              # a token cannot make another
    grid.client.token_revoke(made["id"])
    with pytest.raises(NotAuthenticated, match="revoked"):
        remote.jobs()
    # the certificate names this machine: a client that checks host names accepts it
    assert https(grid, "GET", "/health", host="127.0.0.1")[0] == 200
    assert made["url"].startswith("https://")


def test_the_api_answers_https_only_with_the_grids_ca(grid):
    with pytest.raises(ssl.SSLCertVerificationError):
        conn = http.client.HTTPSConnection("localhost", grid.cfg.master.port, timeout=30,
                                           context=ssl.create_default_context())
        conn.request("GET", "/health")
    plain = http.client.HTTPConnection("localhost", grid.cfg.master.port, timeout=30)
    plain.request("GET", "/health")
    with pytest.raises(http.client.RemoteDisconnected):           # plain HTTP gets no answer at all
        plain.getresponse()
    plain.close()


def test_files_of_the_grid_home_are_private_where_they_hold_anything_of_a_job(grid):
    gdir = grid.home / "grid"
    assert gdir.stat().st_mode & 0o777 == 0o711
    for name in ("jobs.db", "jobs.db-wal", "audit.log", "engine.json", "master.log"):
        path = gdir / name
        if path.exists():
            assert path.stat().st_mode & 0o077 == 0, (name, oct(path.stat().st_mode))
    assert (gdir / "master.sock").stat().st_mode & 0o777 == 0o666
    assert (gdir / "ca.pem").stat().st_mode & 0o777 == 0o644
    assert (grid.home / "jobs").stat().st_mode & 0o777 == 0o755


def test_an_administrator_closes_and_opens_a_host_and_it_stays_closed_across_a_restart(tmp_path):
    g = gridtest.Grid(tmp_path, GRID_TOML)
    with gridtest.running(g):
        closed = g.cli("host", "close", "node1", "--reason", "disk swap")
        assert closed.returncode == 0, closed.stderr
        row = g.client.hosts()[0]
        assert (row["state"], row["closed_by"], row["closed_reason"]) == ("closed_Adm", g.client.whoami()["user"],
                                                                           "disk swap")
        assert "disk swap" in g.cli("hosts").stdout
        job = g.submit("true")
        assert g.client.job(job)["state"] == "PEND"                 # its only host takes no new job
        unknown = g.cli("host", "close", "nosuch")
        assert unknown.returncode == 1 and "host 'nosuch' does not exist" in unknown.stderr
    with gridtest.running(g):                                      # a new master: still closed, job still waits
        assert g.client.hosts()[0]["state"] == "closed_Adm"
        assert g.client.job(job)["state"] == "PEND"
        opened = g.cli("host", "open", "node1")
        assert opened.returncode == 0, opened.stderr
        assert g.wait([job])[0]["state"] == "DONE"
    audit = (g.home / "grid" / "audit.log").read_text()
    assert '"action": "host close", "target": "host node1"' in audit and '"action": "host open"' in audit


def test_a_token_is_never_sent_in_clear_to_another_machine(tmp_path):
    cfg = cfg_with(tmp_path, "")
    far = GridClient(cfg, remote=Remote(url="http://10.1.2.3:8642", token="sg_x"))
    with pytest.raises(StatgridError, match="plain http to another machine.*use https"):
        far.jobs()                                      # refused before any connection is made
    near = GridClient(cfg, remote=Remote(url="http://127.0.0.1:1", token="sg_x"))
    with pytest.raises(StatgridError, match="no master answers"):
        near.jobs()                                     # loopback http may carry it (api_tls = false)


def test_the_clients_token_is_not_sent_with_a_jobs_environment(grid, monkeypatch):
    monkeypatch.setenv("STATGRID_TOKEN", "sg_secret-of-the-client")
    monkeypatch.setenv("KEEP_ME", "1")
    job = grid.client.submit(["true"], cwd=str(grid.root))
    stored = JobStore(grid.home / "grid" / "jobs.db").get(job["id"]).env
    assert stored.get("KEEP_ME") == "1" and "STATGRID_TOKEN" not in stored
    grid.client.wait([job["id"]])


def test_a_busy_keep_alive_connection_is_not_closed_by_the_header_timeout(grid):
    """Requests 2 s apart on one connection for longer than the header timeout: each response
    starts the next request's deadline afresh (it was counted from the connection's start)."""
    import http.client

    conn = http.client.HTTPConnection("localhost", timeout=30)
    conn.sock = localsock.connect(grid.client.socket_path, 30)
    try:
        for _ in range(7):                                   # 12 s in all, past HEADER_TIMEOUT_S (10 s)
            conn.request("GET", "/health")
            response = conn.getresponse()
            assert response.status == 200 and json.loads(response.read())["status"] == "ok"
            time.sleep(2)
    finally:
        conn.close()


def test_a_connection_that_sends_no_request_is_closed(grid):
    """One that never sends a request, and one that sends its header a line at a time (slowloris),
    are closed after the header timeout (10 s) instead of being held open for ever — 2048 such
    connections used to shut everyone else out. The recv bound only keeps a failure from hanging."""
    idle, slow = (localsock.connect(grid.client.socket_path, 60) for _ in range(2))
    slow.sendall(b"GET /health HTTP/1.1\r\n")
    def closed(sock, more: bytes = b"") -> bool:
        """The master closed it: EOF, or a reset/broken pipe (closed with our bytes unread)."""
        try:
            if more:
                sock.sendall(more)
            return sock.recv(100) == b""
        except (BrokenPipeError, ConnectionResetError):
            return True

    try:
        assert closed(idle)
        assert closed(slow, b"Host: x\r\n")                 # its header is still not whole: closed too
        assert grid.client.health()["status"] == "ok"       # and it serves on
    finally:
        idle.close()
        slow.close()
