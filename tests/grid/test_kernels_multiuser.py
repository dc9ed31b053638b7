"""Only its owner reaches a kernel (issue 28, item 2), tried as other real users on a shared grid run by root: the
connection (ports, HMAC and CurveZMQ keys) goes to the owner alone through the API — another user and an
administrator are refused — and nothing another user can read holds the keys; a client without them gets no
answer from the kernel's ports (which anyone can find in /proc/net/tcp)."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

from statgrid.kernels.specs import kernel_json
from tests.conftest import WAIT_S
from tests.grid.test_multiuser_grid import made_people, shared_grid
from tests.support.gridtoml import SHARED_SECTIONS, toml_text
from tests.support.multiuser import run_as, site_install, user_env  # noqa: F401 — site_install: a fixture

GRID = toml_text({"node1": 2}, {"normal": {}, "interactive": {}}, **SHARED_SECTIONS)

OWNER = textwrap.dedent("""
    import asyncio, sys
    from jupyter_client.manager import AsyncKernelManager

    async def main():
        km = AsyncKernelManager(kernel_name="statgrid-python")
        await km.start_kernel()
        kc = km.client(); kc.start_channels()
        await kc.wait_for_ready(timeout=120)
        out = []
        reply = await kc.execute_interactive("secret = 'alice-only'; print(__import__('os').getuid())", timeout=120,
                                             output_hook=lambda m: out.append(m["content"].get("text", "")))
        uid = "".join(out).split()[-1]
        print("JOB", km.provisioner.job_id, reply["content"]["status"], uid, flush=True)
        await asyncio.to_thread(sys.stdin.readline)          # the test's "go on"
        await km.shutdown_kernel(); kc.stop_channels()
        print("SHUT", flush=True)
    asyncio.run(main())
""")

INTRUDER = textwrap.dedent("""
    import json, sys
    from statgrid.config import load_config
    from statgrid.errors import StatgridError
    from statgrid.grid.interface.client import GridClient
    try:
        print(json.dumps(GridClient(load_config(None)).kernel(int(sys.argv[1]))))
    except StatgridError as exc:
        print("REFUSED", exc)
""")

# A client that knows the ports but not the keys (no CurveZMQ server key, a made-up HMAC key): the kernel must
# not answer. Waiting for an answer that must not come is bounded: 5 s, far above a local kernel's reply time.
PROBE = textwrap.dedent("""
    import json, sys
    from jupyter_client.blocking import BlockingKernelClient
    info = json.loads(sys.argv[1])
    kc = BlockingKernelClient(ip=info["ip"], transport="tcp", shell_port=info["shell_port"],
                              iopub_port=info["iopub_port"], stdin_port=info["stdin_port"], hb_port=info["hb_port"],
                              control_port=info["control_port"])
    kc.session.key = b"not-the-key"
    kc.start_channels()
    msg_id = kc.execute("print(secret)")
    try:
        reply = kc.get_shell_msg(timeout=5)
        print("ANSWERED", reply["content"])
    except Exception as exc:
        print("NO ANSWER", type(exc).__name__)
    kc.stop_channels()
""")

# The same with the kernel's Curve public key (as if it had leaked): the Curve handshake succeeds, so what stops
# the request is the HMAC key alone — an execute_request signed with another key is dropped.
SIGNED_WRONG = textwrap.dedent("""
    import json, sys, zmq
    from jupyter_client.session import Session
    info = json.loads(sys.argv[1])
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.curve_serverkey = info["curve_publickey"].encode()
    sock.curve_publickey, sock.curve_secretkey = zmq.curve_keypair()
    sock.connect(f"tcp://{info['ip']}:{info['shell_port']}")
    Session(key=b"not-the-key").send(sock, "execute_request", {"code": "print(secret)", "silent": False,
                                                               "store_history": False, "user_expressions": {},
                                                               "allow_stdin": False, "stop_on_error": True})
    print("ANSWERED" if sock.poll(5000) else "NO ANSWER", flush=True)
""")


@pytest.mark.root
def test_another_user_and_an_administrator_cannot_reach_a_users_kernel(site_install, tmp_path):
    with made_people(("alice", "bob", "carol")) as people, shared_grid(site_install, people, GRID) as grid:
        specs = grid.root / "jupyter"
        for lang in ("python", "sas"):
            d = specs / "kernels" / f"statgrid-{lang}"
            d.mkdir(parents=True)
            (d / "kernel.json").write_text(json.dumps(kernel_json(lang)))
        for p in [specs, *specs.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        env = {**grid.env, "JUPYTER_PATH": str(specs)}
        script = grid.root / "owner.py"
        script.write_text(OWNER)
        os.chmod(script, 0o644)
        alice = people["alice"]
        owner = subprocess.Popen(["setpriv", f"--reuid={alice.uid}", f"--regid={alice.gid}", "--init-groups", "--",
                                  str(site_install.python), str(script)], cwd=str(alice.home),
                                 env=user_env(alice, site_install, env), stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = owner.stdout.readline()
            assert line.startswith("JOB "), line + owner.stderr.read() if owner.poll() is not None else line
            _, job_id, status, uid = line.split()
            assert status == "ok" and int(uid) == alice.uid          # the kernel runs as its owner
            job_dir = grid.home / "jobs" / job_id
            conn_file = job_dir / "kernel.json"
            st = conn_file.stat()
            assert (st.st_uid, st.st_mode & 0o777) == (alice.uid, 0o600)
            assert (job_dir.stat().st_uid, job_dir.stat().st_mode & 0o777) == (alice.uid, 0o700)
            info = json.loads(conn_file.read_text())
            key = info["key"]

            # the owner gets it through the API; bob (another user) and carol (an administrator) are refused
            got = run_as(alice, ["python", "-c", INTRUDER, job_id], env=env, site=site_install)
            assert json.loads(got.stdout)["connection"]["key"] == key, got.stdout + got.stderr
            for who in ("bob", "carol"):
                out = run_as(people[who], ["python", "-c", INTRUDER, job_id], env=env, site=site_install)
                assert out.stdout.startswith("REFUSED") and f"only {alice.name!r} may connect to it" in out.stdout, \
                    out.stdout + out.stderr
                assert key not in out.stdout
                # nor can they read the file, or find the key in any job record or process they can see
                cat = run_as(people[who], ["cat", str(conn_file)], site=site_install)
                assert cat.returncode != 0 and key not in cat.stdout
                shown = run_as(people[who], ["statgrid", "jobs", "-u", "all", "--json"], env=env, site=site_install)
                assert key not in shown.stdout
                ps = run_as(people[who], ["ps", "-eo", "args"], site=site_install)
                assert key not in ps.stdout
            # bob, knowing the ports (they are in /proc/net/tcp for all) but not the keys, gets no answer
            probe = run_as(people["bob"], ["python", "-c", PROBE, json.dumps(info)], site=site_install, timeout=60)
            assert "NO ANSWER" in probe.stdout, probe.stdout + probe.stderr
            public_only = {k: v for k, v in info.items() if k not in ("key", "curve_secretkey")}
            signed = run_as(people["bob"], ["python", "-c", SIGNED_WRONG, json.dumps(public_only)], site=site_install,
                            timeout=60)
            assert signed.stdout.strip() == "NO ANSWER", signed.stdout + signed.stderr
            # the administrator may end it (the notebook then sees it die)
            killed = run_as(people["carol"], ["statgrid", "kill", job_id], env=env, site=site_install)
            assert killed.returncode == 0, killed.stderr
            done = grid.wait("alice", int(job_id))
            assert done["state"] == "KILLED", done
        finally:
            if owner.poll() is None:
                owner.stdin.write("\n")
                owner.stdin.flush()
            try:
                owner.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                owner.kill()
