"""What runs inside a grid node (a Dask worker): start a job through the node's launcher, wait
for it, write its attempt file and report to the master; kill a job; list running jobs.

These functions are shipped to workers by reference (the worker imports statgrid), so they
must stay importable without the master's modules.

Reporting (DESIGN.md, "Flow of a job"): every attempt leaves a file in the job's directory —
`attempt-N.json`, first {"state": "started", ...}, then {"state": "finished", ...} — or
{"state": "lost", "reason": ...} when the node's launcher died under the job — written before
the matching event goes to the master through the scheduler's event log (`Worker.log_event`).
The file is the durable record a restarted master reconciles from; the event is the fast path
that frees the slot at once.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

logger = logging.getLogger("statgrid.node")

JOB_TOPIC = "statgrid-job"
KILL_GRACE_S = 10.0        # SIGTERM first (the session cleans WORK), SIGKILL after this (LSF: JOB_TERMINATE_INTERVAL)
# Each job in a cgroup v2 of its own where the launcher may create one (launcher.py says why);
# False runs the launcher with --no-cgroup: jobs are then tracked by process group alone.
LAUNCHER_CGROUPS = True
ORPHAN_WAIT_S = 10.0       # after the launcher died: how long to wait for its killed job to be gone before cleaning WORK

_lock = threading.Lock()
_server: dict[str, object] = {}                   # the launcher process and its socket, per worker process
_running: dict[str, dict] = {}                    # task key → {"pid", "pgid", "start_ts", "job_id", "attempt"}


def attempt_path(job_dir: str | Path, attempt: int) -> Path:
    return Path(job_dir) / f"attempt-{attempt}.json"


def write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _launcher_socket() -> str:
    """Start this worker's launcher on first use; restart it if it died."""
    with _lock:
        proc = _server.get("proc")
        if proc is not None and proc.poll() is None:
            return _server["path"]
        if proc is not None:                      # killed (kill -9, the OOM killer): its socket is left
            logger.warning("the node launcher (pid %d) died (exit status %s); starting a new one",
                           proc.pid, proc.returncode)
            shutil.rmtree(os.path.dirname(_server["path"]), ignore_errors=True)
        tmpdir = tempfile.mkdtemp(prefix="statgrid-node-")          # 0700: only we may ask for jobs
        path = os.path.join(tmpdir, "launcher.sock")
        script = Path(__file__).with_name("launcher.py")
        argv = [sys.executable, "-I", "-S", str(script), path] + ([] if LAUNCHER_CGROUPS else ["--no-cgroup"])
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
                                close_fds=True)
        line = proc.stdout.readline()
        if line.strip() != b"ready":
            raise RuntimeError(f"the node launcher did not start (exit code {proc.poll()})")
        proc.stdout.close()
        _server.update(proc=proc, path=path)
        if _server.get("cpus"):                   # a new or restarted launcher gets the host's cpuset
            _pin(proc.pid, _server["cpus"])
        return path


def prepare(work_roots: list[str] | None = None, monitor: dict | None = None, cpus: tuple[int, ...] = (),
            dask_worker=None) -> int:
    """Warm the launcher (so the first job does not pay its start), confine it to the host's
    `cpus` (jobs it forks inherit the set, like an LSF host's cpuset), start this node's monitor,
    and clean WORK left by jobs that died with an earlier worker. Returns the launcher's pid.
    (`client.run` passes dask_worker: its stream to the scheduler flushes within 1 ms, see
    engine.BATCH_INTERVAL_S.)"""
    if dask_worker is not None:
        dask_worker.batched_stream.interval = 0.001
    with _lock:
        _server["cpus"] = tuple(cpus)
        proc = _server.get("proc")
        running = proc is not None and proc.poll() is None
    if running and cpus:                          # a launcher _launcher_socket starts is pinned there
        _pin(proc.pid, cpus)
    _launcher_socket()
    if monitor:
        _start_monitor(monitor, str(dask_worker.name) if dask_worker is not None else monitor["host"])
    if work_roots:
        # client.run calls this on the worker's event loop: a slow shared file system must not
        # stall its heartbeats, so the sweep runs in a thread.
        from statgrid.session.scratch import clean_stale
        threading.Thread(target=clean_stale, args=([Path(p) for p in work_roots],), daemon=True).start()
    return _server["proc"].pid


def _pin(pid: int, cpus: tuple[int, ...]) -> None:
    """Confine the launcher (and so every job it starts from now on) to `cpus`. CPUs this machine
    does not have are left out; if none is left the jobs run unconfined and the worker log says so."""
    usable = set(cpus) & os.sched_getaffinity(0)
    if not usable:
        logger.warning("hosts cpus = %s: this machine has none of these CPUs (it has %s); jobs run on all CPUs",
                       list(cpus), sorted(os.sched_getaffinity(0)))
        return
    if usable != set(cpus):
        logger.warning("hosts cpus = %s: CPUs %s do not exist here; jobs run on %s", list(cpus),
                       sorted(set(cpus) - usable), sorted(usable))
    os.sched_setaffinity(pid, usable)


def _start_monitor(spec: dict, host: str) -> None:
    """The node's sampler, as its own process (its overhead is measurable on its own) that
    stops when this worker's pipe to it closes. spec: out, interval_s, libraries."""
    with _lock:
        proc = _server.get("monitor")
        if proc is not None and proc.poll() is None:
            return
        out = Path(spec["out"])
        out.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "statgrid.monitor", "--host", host, "--out", str(out),
                "--interval", str(spec["interval_s"]), "--stdin-liveness"]
        for name, path in spec.get("libraries", {}).items():
            argv += ["--library", f"{name}={path}"]
        with open(out / f"{host}.log", "ab") as log:
            _server["monitor"] = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                                  stderr=log, start_new_session=True, close_fds=True)


def monitor_pid() -> int | None:
    proc = _server.get("monitor")
    return proc.pid if proc is not None and proc.poll() is None else None


def _event(msg: dict) -> None:
    try:
        from distributed import get_worker
        get_worker().log_event(JOB_TOPIC, msg)
    except ValueError:
        pass                                      # not in a worker (direct call in a test)


def _read_stimer_total(path: Path) -> dict | None:
    """The session's last 'total' STIMER record, if the job was a session and wrote one."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("record") == "total":
            return rec
    return None


def run_job(spec: dict) -> dict:
    """Run one attempt of a job to its end. `spec` keys: key, job_id, attempt, host, argv, env,
    cwd, job_dir, work_roots. Returns the outcome: state "finished", exit_code or signal,
    start_ts, end_ts, rusage (user_cpu_s, sys_cpu_s, max_rss_bytes, ...), io (read_bytes, ...),
    stimer; or state "lost" and a reason if the launcher died while the job ran."""
    key, job_dir = spec["key"], Path(spec["job_dir"])
    base = {"key": key, "job_id": spec["job_id"], "attempt": spec["attempt"], "host": spec.get("host")}
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(_launcher_socket())
        request = {"argv": spec["argv"], "env": spec["env"], "cwd": spec["cwd"],
                   "stdout": str(job_dir / "output.txt")}
        sock.sendall((json.dumps(request) + "\n").encode())
        reader = sock.makefile("rb")
        started = json.loads(reader.readline() or b"{}")
        if started.get("event") != "started":
            raise RuntimeError(started.get("error", "the launcher closed the connection"))
        info = {**base, "state": "started", "pid": started["pid"], "pgid": started["pgid"],
                "cgroup": started.get("cgroup"), "start_ts": started["start_ts"]}
        _running[key] = info
        write_json_atomic(attempt_path(job_dir, spec["attempt"]), info)
        _event({"kind": "started", **info})
        try:
            line = reader.readline()
        except OSError:                            # a reset: the launcher is gone all the same
            line = b""
        reader.close()
        exited = json.loads(line) if line.endswith(b"\n") else {}      # no line, or half of one
        if exited.get("event") == "exited":
            outcome = {**info, "state": "finished", "exit_code": exited["exit_code"], "signal": exited["signal"],
                       "end_ts": exited["end_ts"], "rusage": exited["rusage"], "io": exited["io"],
                       "stimer": _read_stimer_total(job_dir / "session.stimer.jsonl")}
        else:
            # The launcher died under the job (kill -9, the OOM killer): a fault of the node, not
            # of the job, so it ends as on the loss of the worker (master._host_lost).
            _end_orphaned_job(info)
            outcome = {**info, "state": "lost", "end_ts": time.time(),
                       "reason": f"host lost: the launcher of {spec.get('host')} died"}
        if (outcome["state"] == "lost" or outcome["signal"] is not None) and spec.get("work_roots"):
            # A killed session could not remove its WORK; its lock is gone now, so this is safe.
            from statgrid.session.scratch import clean_stale
            clean_stale([Path(p) for p in spec["work_roots"]])
    except Exception as exc:                       # report, never leave the master waiting
        outcome = {**base, "state": "finished", "exit_code": None, "signal": None, "end_ts": time.time(),
                   "launch_error": f"{type(exc).__name__}: {exc}"}
    finally:
        # Closing our end makes the launcher kill the job if it is still running (an error here
        # must not leave a job nobody accounts for). shutdown: a file object made from the
        # socket would keep it open past close().
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
        _running.pop(key, None)
    try:
        write_json_atomic(attempt_path(job_dir, spec["attempt"]), outcome)
    except OSError as exc:                          # the event below still reports the end
        outcome["attempt_file_error"] = str(exc)
    _event({"kind": outcome["state"], **outcome})
    return outcome


def _end_orphaned_job(info: dict, wait_s: float = ORPHAN_WAIT_S) -> None:
    """SIGKILL what is left of a job whose launcher died: its first process got SIGKILL from the
    kernel (PR_SET_PDEATHSIG), its children were re-parented and run on. Its process group
    outlives the leader while a member lives (the kernel does not reuse the id meanwhile, so the
    kill reaches only the job), and its cgroup holds even those that left the group. Waits (at most wait_s) until none is left, so that the
    session's WORK can be cleaned, then removes the job's cgroup and what the dead launcher left."""
    from statgrid.grid import launcher
    from statgrid.session._procfs import process_group_alive

    pgid, cgroup = info["pgid"], info.get("cgroup")
    logger.warning("the node launcher died while job %s ran: killing its process group %d%s", info["job_id"],
                   pgid, f" and cgroup {cgroup}" if cgroup else "")
    _signal_group(pgid, signal.SIGKILL)
    if cgroup:
        launcher.kill_cgroup(cgroup)
    deadline = time.monotonic() + wait_s
    # A zombie does not count: the job's first process, re-parented when its launcher died, stays
    # one for as long as PID 1 does not reap it (a container's entrypoint that is not an init).
    while process_group_alive(pgid) or (cgroup and launcher.cgroup_populated(cgroup)):
        if time.monotonic() > deadline:
            logger.warning("job %s: processes of group %d still exist %.0f s after SIGKILL", info["job_id"], pgid,
                           wait_s)
            break
        time.sleep(0.05)
    if cgroup:
        launcher.remove_cgroup(cgroup)
        launcher.sweep_dead_servers(os.path.dirname(os.path.dirname(cgroup)))


def kill_job(key: str, grace_s: float = KILL_GRACE_S) -> bool:
    """SIGTERM the job's process group now, SIGKILL it after grace_s if it is still running.
    Returns False if the job is not running here (finished already, or never started)."""
    info = _running.get(key)
    if info is None:
        return False
    _signal_group(info["pgid"], signal.SIGTERM)

    def escalate() -> None:
        # Only the same attempt, still running: a reused pgid must never be hit.
        if _running.get(key) is info:
            _signal_group(info["pgid"], signal.SIGKILL)

    timer = threading.Timer(grace_s, escalate)
    timer.daemon = True
    timer.start()
    return True


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def list_running() -> dict[str, dict]:
    """Task key → started info of every job this node runs now."""
    return dict(_running)


def launcher_pid() -> int | None:
    proc = _server.get("proc")
    return proc.pid if proc is not None and proc.poll() is None else None
