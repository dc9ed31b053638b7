"""Notebook kernels the grid places (statgrid/kernels/), driven by jupyter_client's real AsyncKernelManager through
statgrid's provisioner (its entry point, as JupyterLab and `jupyter console` find it), on a real grid."""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import statistics
import sys
import time
import pytest

from statgrid.kernels.specs import kernel_json
from tests.conftest import WAIT_S, scratch_dirs, wait_for
from tests.support.gridtest import Grid, running
from tests.support.gridtoml import toml_text

pytest.importorskip("ipykernel")


def _toml(**interactive) -> str:
    return toml_text({"node1": 2}, {"normal": {}, "interactive": {"user_limit": 1, **interactive}})


@pytest.fixture
def specs(tmp_path, monkeypatch):
    """statgrid-sas and statgrid-python as `statgrid kernels install` writes them, found through JUPYTER_PATH."""
    root = tmp_path / "jupyter"
    for lang in ("sas", "python"):
        d = root / "kernels" / f"statgrid-{lang}"
        d.mkdir(parents=True)
        (d / "kernel.json").write_text(json.dumps(kernel_json(lang)))
    monkeypatch.setenv("JUPYTER_PATH", str(root))
    return root


def _grid(tmp_path, monkeypatch, **interactive) -> Grid:
    grid = Grid(tmp_path, _toml(**interactive))
    for k, v in grid.env.items():
        monkeypatch.setenv(k, v)
    return grid


async def _start(lang: str):
    from jupyter_client.manager import AsyncKernelManager

    km = AsyncKernelManager(kernel_name=f"statgrid-{lang}")
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=WAIT_S)
    return km, kc


async def _run(kc, code: str) -> tuple[dict, list[dict]]:
    msgs: list[dict] = []
    reply = await kc.execute_interactive(code, output_hook=msgs.append, timeout=WAIT_S)
    return reply["content"], msgs


async def _stream_says(kc, msg_id: str, text: str) -> None:
    """Wait until the cell msg_id has written `text` to its output."""
    while True:
        msg = await kc.get_iopub_msg(timeout=WAIT_S)
        if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream"
                and text in msg["content"]["text"]):
            return


def _ended_done_without_work(grid, job_id: int) -> None:
    job = grid.client.wait([job_id], timeout_s=WAIT_S)[0]
    assert job["state"] == "DONE", job
    assert not [p for p in scratch_dirs(grid.home) if p.name.startswith("SGwork_")]


def _texts(msgs, kind: str, mime: str = "text/plain") -> str:
    if kind == "stream":
        return "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream")
    return "\n".join(m["content"]["data"].get(mime, "") for m in msgs if m["msg_type"] == kind)


def test_sas_cells_share_one_session_and_shutdown_ends_the_job_done_with_work_removed(tmp_path, monkeypatch, specs):
    grid = _grid(tmp_path, monkeypatch)

    async def scenario():
        km, kc = await _start("sas")
        job_id = km.provisioner.job_id
        try:
            content, msgs = await _run(kc, "data work.a; do i = 1 to 5; x = i * 2; output; end; run;")
            assert content["status"] == "ok", content
            log = _texts(msgs, "display_data")
            assert "NOTE: The data set WORK.A has 5 observations and 2 variables." in log
            assert "\x1b[34mNOTE:" in log                      # NOTE lines coloured (ANSI for a console)
            assert 'style="color:#0000d0"' in _texts(msgs, "display_data", "text/html")
            # the next cell sees the first one's WORK data set: one session while the kernel lives
            content, msgs = await _run(kc, "proc means data=work.a n mean max; var x; run;")
            assert content["status"] == "ok", content
            xs = [2.0 * i for i in range(1, 6)]
            listing = _texts(msgs, "display_data")
            assert "The MEANS Procedure" in listing and f"{statistics.mean(xs):.7f}" in listing
            # MEANS writes its own layout: shown preformatted; REG's tables are ODS tables: HTML tables
            assert '<pre class="statgrid-listing">' in _texts(msgs, "display_data", "text/html")
            content, msgs = await _run(kc, "proc reg data=work.a; model x = i; run; quit;")
            html = _texts(msgs, "display_data", "text/html")
            model_ss = sum((x - statistics.mean(xs)) ** 2 for x in xs)      # x = 2i exactly: all of it is the model's
            assert "<caption>Analysis of Variance</caption>" in html and f"<td style=\"text-align:right\">{model_ss:.5f}</td>" in html
            # an ERROR makes the cell's reply an error, and the session goes on (no syntax-check mode)
            content, msgs = await _run(kc, "data work.b; set work.nothere; run;")
            assert content["status"] == "error" and "ERROR" in _texts(msgs, "display_data")
            content, msgs = await _run(kc, "data work.c; set work.a; run;")
            assert content["status"] == "ok" and "WORK.C has 5 observations" in _texts(msgs, "display_data")
            assert len([p for p in scratch_dirs(grid.home) if p.name.startswith("SGwork_")]) == 1
            conn = grid.home / "jobs" / str(job_id) / "kernel.json"
            assert stat.S_IMODE(conn.stat().st_mode) == 0o600
            assert stat.S_IMODE((grid.home / "jobs" / str(job_id)).stat().st_mode) == 0o700
        finally:
            await km.shutdown_kernel()
            kc.stop_channels()
        return job_id

    with running(grid):
        job_id = asyncio.run(scenario())
        _ended_done_without_work(grid, job_id)


def test_interrupt_stops_a_cell_and_a_kill_is_seen_by_the_client_without_a_restart(tmp_path, monkeypatch, specs):
    grid = _grid(tmp_path, monkeypatch)

    async def scenario():
        km, kc = await _start("python")
        job_id = km.provisioner.job_id
        km.autorestart = True
        try:
            content, msgs = await _run(kc, "s.sql('create table work.t as select 42 as v'); print(1 + 1)")
            assert content["status"] == "ok" and "2" in _texts(msgs, "stream")
            assert "WORK.T has 1 observations" in _texts(msgs, "stream")
            # a long cell, interrupted through the grid (SIGINT to the kernel's process group on its node)
            msg_id = kc.execute("import time\nprint('started', flush=True)\nfor _ in range(6000): time.sleep(0.05)")
            await _stream_says(kc, msg_id, "started")          # the cell runs: interrupt it now
            await km.interrupt_kernel()
            reply = await kc.get_shell_msg(timeout=WAIT_S)
            while reply["parent_header"].get("msg_id") != msg_id:
                reply = await kc.get_shell_msg(timeout=WAIT_S)
            assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
            # the kernel and its session go on. (ipykernel aborts requests that reach it while it is still
            # aborting the queue behind the failed cell — Jupyter's stop_on_error: run again when told "aborted")
            content = {"status": "aborted"}
            while content["status"] == "aborted":
                content, msgs = await _run(kc, "print('after', 6 * 7)")
            assert content["status"] == "ok" and "after 42" in _texts(msgs, "stream")
            # `statgrid jobs` and `job ID` show the session's idle time (since its last cell)
            listing = grid.cli("jobs")
            assert listing.returncode == 0 and "IDLE_S" in listing.stdout.splitlines()[0], listing.stdout
            detail = grid.cli("job", str(job_id))
            assert "Interactive session: idle" in detail.stdout, detail.stdout
            # killed from the CLI: the client sees the kernel die, and the provisioner does not start it again
            kill = grid.cli("kill", str(job_id))
            assert kill.returncode == 0, kill.stderr
            await _until(lambda: km.is_alive(), False)
            assert km.provisioner.job_id == job_id
        finally:
            kc.stop_channels()
            await km.cleanup_resources()
        return job_id

    with running(grid):
        job_id = asyncio.run(scenario())
        jobs = grid.client.jobs(all_states=True)
        assert [j["state"] for j in jobs if j["id"] == job_id] == ["KILLED"]
        assert len(jobs) == 1                                   # no second kernel job was submitted
        acct = grid.cli("acct")
        assert "Interactive sessions (notebook kernels) by the day they started" in acct.stdout, acct.stdout


async def _until(fn, want, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        got = await fn()
        if got == want:
            return
        assert time.monotonic() < deadline, f"still {got!r}, waiting for {want!r}"
        await asyncio.sleep(0.05)


def test_a_full_queue_gives_the_pending_reason_then_the_kernel_starts(tmp_path, monkeypatch, specs):
    """user_limit = 1 in the interactive queue: a second kernel waits, and says why; a start given up while it
    waits leaves no job behind; a waiting kernel starts when the first one ends."""
    grid = _grid(tmp_path, monkeypatch)

    async def pending_start():
        from jupyter_client.manager import AsyncKernelManager

        km = AsyncKernelManager(kernel_name="statgrid-python")
        task = asyncio.create_task(km.start_kernel())
        pend = await asyncio.to_thread(wait_for, lambda: [j for j in grid.client.jobs() if j["state"] == "PEND"],
                                       "a kernel pending")
        return km, task, pend[0]["id"]

    async def scenario():
        km1, kc1 = await _start("python")
        km2, second, job2 = await pending_start()
        answer = grid.client.kernel(job2, 0)
        assert answer["connection"] is None and "user_limit" in answer["pend_reason"].replace(" ", "_").lower() \
            or "limit" in answer["pend_reason"], answer
        second.cancel()                                   # given up (the notebook closed while it waited)
        with contextlib.suppress(asyncio.CancelledError):
            await second
        assert (await asyncio.to_thread(grid.client.wait, [job2], WAIT_S))[0]["state"] == "KILLED"
        km3, third, _ = await pending_start()
        await km1.shutdown_kernel()
        kc1.stop_channels()
        await asyncio.wait_for(third, WAIT_S)
        kc3 = km3.client()
        kc3.start_channels()
        await kc3.wait_for_ready(timeout=WAIT_S)
        content, msgs = await _run(kc3, "print(40 + 2)")
        assert "42" in _texts(msgs, "stream")
        await km3.shutdown_kernel()
        kc3.stop_channels()

    with running(grid):
        asyncio.run(scenario())


def test_endsas_ends_the_kernel_after_its_reply_and_a_kill_in_a_cell_removes_work(tmp_path, monkeypatch, specs):
    grid = _grid(tmp_path, monkeypatch)

    async def scenario():
        km, kc = await _start("sas")
        ended = km.provisioner.job_id
        try:
            content, msgs = await _run(kc, "data work.a; x = 1; run; endsas;")
            assert content["status"] == "ok" and "ENDSAS" in _texts(msgs, "stream")   # the reply came
            await _until(lambda: km.is_alive(), False)
        finally:
            kc.stop_channels()
            await km.cleanup_resources()
        km, kc = await _start("python")
        killed = km.provisioner.job_id
        try:
            msg_id = kc.execute("import time\ns.sql('create table work.b as select 1 as v')\nprint('started', "
                                "flush=True)\nwhile True: time.sleep(0.05)")
            await _stream_says(kc, msg_id, "started")
            kill = await asyncio.to_thread(grid.cli, "kill", str(killed))
            assert kill.returncode == 0, kill.stderr
            await _until(lambda: km.is_alive(), False)
        finally:
            kc.stop_channels()
            await km.cleanup_resources()
        return ended, killed

    with running(grid):
        ended, killed = asyncio.run(scenario())
        jobs = {j["id"]: j for j in grid.client.wait([ended, killed], timeout_s=WAIT_S)}
        assert (jobs[ended]["state"], jobs[killed]["state"]) == ("DONE", "KILLED"), jobs
        # the killed kernel closed its session itself (not left to the node's SIGKILL): its log says so
        assert "ended (terminated); WORK and UTIL removed" in (grid.home / "jobs" / str(killed) / "session.log").read_text()
        assert not [p for p in scratch_dirs(grid.home) if p.name.startswith("SGwork_")]


def test_an_idle_kernel_is_warned_then_ended(tmp_path, monkeypatch, specs):
    grid = _grid(tmp_path, monkeypatch, idle_timeout="4s")

    async def scenario():
        km, kc = await _start("sas")
        job_id = km.provisioner.job_id
        seen: list[str] = []
        try:
            # a cell first: the idle clock starts again when it ends, and this client surely listens by then
            content, _ = await _run(kc, "%put idle from here;")
            assert content["status"] == "ok"
            while True:
                try:
                    msg = await kc.get_iopub_msg(timeout=WAIT_S)
                except Exception:
                    break
                if msg["msg_type"] == "stream":
                    seen.append(msg["content"]["text"])
                if any("it ends now" in t for t in seen):
                    break
            await _until(lambda: km.is_alive(), False)
        finally:
            kc.stop_channels()
            await km.cleanup_resources()
        return job_id, seen

    with running(grid):
        job_id, seen = asyncio.run(scenario())
        assert any("will be ended in" in t for t in seen), seen
        assert any("idle_timeout" in t for t in seen), seen
        _ended_done_without_work(grid, job_id)


def test_the_connection_goes_to_the_owner_only_and_is_in_no_argv(tmp_path, monkeypatch, specs):
    """The key is in no process's argv (/proc/PID/cmdline is world-readable) and in no job record the API shows."""
    grid = _grid(tmp_path, monkeypatch)

    async def scenario():
        km, kc = await _start("sas")
        job_id = km.provisioner.job_id
        try:
            key = km.session.key.decode()
            assert len(key) == 64
            import psutil

            for p in psutil.process_iter():
                try:
                    assert key not in " ".join(p.cmdline())
                    assert key not in json.dumps(p.environ())
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    pass
            assert key not in json.dumps(grid.client.job(job_id))
            assert key not in json.dumps(grid.client.jobs(all_states=True))
            info = grid.client.kernel(job_id)["connection"]
            assert info["key"] == key and info["curve_secretkey"]
        finally:
            await km.shutdown_kernel()
            kc.stop_channels()

    with running(grid):
        asyncio.run(scenario())


def test_jupyter_console_runs_sas_on_the_grid(tmp_path, monkeypatch, specs):
    """`jupyter console --kernel statgrid-sas` (the README's second way in): a DATA step typed in, its PUT line back."""
    import shutil
    import subprocess

    console = shutil.which("jupyter-console", path=os.path.dirname(sys.executable))
    if console is None:
        pytest.skip("jupyter-console is not installed (the lab extra: requirements.lock has it)")
    grid = _grid(tmp_path, monkeypatch)
    with running(grid):
        done = subprocess.run([console, "--kernel", "statgrid-sas", "--simple-prompt"],
                              input='data _null_; x = 6 * 7; put "answer " x; run;\n', capture_output=True,
                              text=True, timeout=WAIT_S, env={**os.environ, "JUPYTER_PATH": str(specs)})
        assert "answer 42" in done.stdout, done.stdout + done.stderr
        jobs = grid.client.wait([j["id"] for j in grid.client.jobs(all_states=True)], timeout_s=WAIT_S)
        assert [(j["kind"], j["state"]) for j in jobs] == [("kernel", "DONE")], jobs     # shut down, not killed


def test_a_restart_keeps_the_job_with_a_new_session_and_grid_down_ends_the_kernel_seen_dead(tmp_path, monkeypatch,
                                                                                            specs):
    grid = _grid(tmp_path, monkeypatch)

    async def scenario():
        km, kc = await _start("sas")
        job_id = km.provisioner.job_id
        try:
            content, _ = await _run(kc, "%let kept = 1; data work.a; x = 1; run;")
            assert content["status"] == "ok"
            work = [p for p in scratch_dirs(grid.home) if p.name.startswith("SGwork_")]
            # the user's restart: the same job (its slot, its node), the same connection — the client that was
            # connected goes on — and a new session: macro variables and WORK of before are gone
            await km.restart_kernel()
            await kc.wait_for_ready(timeout=WAIT_S)
            assert km.provisioner.job_id == job_id
            content, msgs = await _run(kc, "%put kept=%symexist(kept); data _null_; set work.a; run;")
            log = _texts(msgs, "display_data")
            assert "kept=0" in log and "WORK.A.DATA does not exist" in log, log
            assert not work[0].exists()
            assert [(j["id"], j["state"]) for j in grid.client.jobs(all_states=True)] == [(job_id, "RUN")]
            down = await asyncio.to_thread(grid.cli, "grid", "down", timeout=240)
            assert down.returncode == 0, down.stderr
            await _until(lambda: km.is_alive(), False)
        finally:
            kc.stop_channels()
            await km.cleanup_resources()
        return job_id

    with running(grid):
        job_id = asyncio.run(scenario())
        grid.up()                                     # running() stops it again at the end
        assert [(j["id"], j["state"]) for j in grid.client.jobs(all_states=True)] == [(job_id, "KILLED")]
        assert not [p for p in scratch_dirs(grid.home) if p.name.startswith("SGwork_")]


def test_restarting_a_kernel_deaf_to_interrupts_ends_its_job_and_starts_a_new_one(tmp_path, monkeypatch, specs):
    """A cell that swallows KeyboardInterrupt keeps the kernel from ending for the restart: jupyter_client kills it
    after the provisioner's shutdown wait, its job ends KILLED, and the restart submits a new job (new ports and
    keys: a client connects anew)."""
    grid = _grid(tmp_path, monkeypatch)

    async def scenario():
        km, kc = await _start("python")
        first = km.provisioner.job_id
        try:
            msg_id = kc.execute("import time\nprint('started', flush=True)\nwhile True:\n    try:\n"
                                "        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass")
            await _stream_says(kc, msg_id, "started")
        finally:
            kc.stop_channels()
        await km.restart_kernel()
        second = km.provisioner.job_id
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=WAIT_S)
            content, msgs = await _run(kc, "print('new', 6 * 7)")
            assert content["status"] == "ok" and "new 42" in _texts(msgs, "stream")
        finally:
            await km.shutdown_kernel()
            kc.stop_channels()
        return first, second

    with running(grid):
        first, second = asyncio.run(scenario())
        assert second != first
        jobs = {j["id"]: j["state"] for j in grid.client.wait([first, second], timeout_s=WAIT_S)}
        assert jobs == {first: "KILLED", second: "DONE"}, jobs
