"""The node's side of a notebook kernel: what `statgrid kernel-run LANGUAGE` runs, as the job's user, in the job the
grid placed (kind "kernel", jobspec.launch_argv).

One process holds the session (WORK and UTIL kept while the kernel lives, removed when it ends, STIMER for each
step) and the kernel (ipykernel's IPKernelApp, with the SAS or the IPython kernel class). Its connection:
- ports bound by the kernel itself on the node's grid address ($STATGRID_KERNEL_IP, from the engine's record of
  the host's worker; loopback on an embedded grid), in the queue's `kernel_ports` range when one is set (the
  firewall's); the sockets bind their own ports (no port picked, closed and re-bound, the race Enterprise
  Gateway's launchers have) except the heartbeat's, which ipykernel picks that way (here within the range);
- a new 256-bit HMAC key and a CurveZMQ key pair, made here: the HMAC key signs messages (without it nobody's
  execute_request is taken), Curve encrypts them (without it anyone who reaches the iopub port reads every
  output: ZeroMQ's PUB socket answers any subscriber), also on loopback, which every local user reaches;
- written as <job dir>/kernel.json, 0600, atomically, in the job's directory (the user's, 0700): nothing
  another user can read holds the keys, and nothing in the job's argv or environment (/proc/PID/cmdline and
  /proc/PID/environ of a job are readable by its user alone, but argv by anyone). The master hands the file to
  the job's owner only (GET /jobs/<id>/kernel).
Signals: SIGINT interrupts the running cell (and its DuckDB query); SIGTERM (statgrid kill, an administrator,
grid down, the run limit) ends the kernel with its session closed and WORK removed. Idle: with the queue's
`idle_timeout` ($STATGRID_KERNEL_IDLE_S), a kernel that ran no cell that long is ended, after a warning on the
notebook's output a tenth of the timeout (at most 5 minutes) before.
"""
from __future__ import annotations

import inspect
import io
import json
import os
import secrets
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from statgrid.job.jobdir import JobDir

IP_ENV = "STATGRID_KERNEL_IP"
PORTS_ENV = "STATGRID_KERNEL_PORTS"           # "40000..40999" or unset
IDLE_ENV = "STATGRID_KERNEL_IDLE_S"
IDLE_CHECK_S = 1.0
IDLE_WARNING_MAX_S = 300.0
IDLE_EXIT_CODE = 0                            # an idle kernel ends DONE: nothing failed
RESTART_ENV = "STATGRID_KERNEL_RESTART"       # set when the kernel restarts in its job: the generation it is


class KernelHost:
    """What the kernel keeps between cells: the session, its log captured per cell, the job directory (the
    activity clock), the idle timer. The session opens at the first cell (WORK and UTIL made then, on the main
    thread): an idle kernel that ran nothing holds neither DuckDB nor Arrow (~50 MiB less on its node)."""

    def __init__(self, open_session: Callable[[], Any], job_dir: JobDir, captured_log: io.StringIO,
                 captured_listing: io.StringIO, idle_timeout_s: float = 0.0):
        self._open_session = open_session
        self._session: Any = None
        self.job_dir = job_dir
        self.captured_log = captured_log
        self.captured_listing = captured_listing
        self.idle_timeout_s = idle_timeout_s
        self.last_activity = time.monotonic()
        self.busy = False
        self.warned = False
        self.closed = False
        self.restart_requested = False
        self.touch()

    @property
    def opened(self) -> bool:
        return self._session is not None

    @property
    def session(self) -> Any:
        """The session, opened now if it is not yet. Session() puts in its own SIGTERM/SIGINT handlers (a batch
        job ends at either); the kernel's are put back (SIGINT as it was: ipykernel's while a cell runs)."""
        if self._session is None:
            if self.closed:
                raise RuntimeError("the kernel's session has ended")
            sigint = signal.getsignal(signal.SIGINT)
            self._session = self._open_session()
            _signals(self, sigint)
        return self._session

    def drain(self) -> tuple[str, str]:
        """The log and listing text written since the last drain."""
        log, lst = self.captured_log.getvalue(), self.captured_listing.getvalue()
        for buf in (self.captured_log, self.captured_listing):
            buf.seek(0)
            buf.truncate()
        return log, lst

    def cell_started(self) -> None:
        self.busy = True

    def cell_ended(self) -> None:
        self.busy, self.warned = False, False
        self.last_activity = time.monotonic()
        self.touch()

    def touch(self) -> None:
        """The activity file's mtime is when the last cell ended: the master's idle clock (statgrid jobs)."""
        try:
            self.job_dir.kernel_activity.touch(mode=0o600)       # an existing file: its mtime set to now
        except OSError:
            pass

    def idle_s(self) -> float:
        return 0.0 if self.busy else time.monotonic() - self.last_activity

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._session is not None:
                self._session.close()


def _free_port_in(ip: str, low: int, high: int) -> int:
    """A TCP port of low..high free on ip now (bound and let go, as ipykernel's heartbeat picks one)."""
    import random
    import socket

    ports = list(range(low, high + 1))
    random.shuffle(ports)
    for port in ports:
        with socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET) as sock:
            try:
                sock.bind((ip, port))
            except OSError:
                continue
            return port
    raise OSError(f"no free port in the queue's kernel_ports {low}..{high} on {ip}")


def _port_range() -> tuple[int, int] | None:
    text = os.environ.get(PORTS_ENV, "")
    low, _, high = text.partition("..")
    try:
        return (int(low), int(high)) if text else None
    except ValueError:
        return None


def _app_class():
    """IPKernelApp with statgrid's connection: bound in the port range, written atomically, keys made here."""
    import zmq
    from ipykernel.kernelapp import IPKernelApp

    class GridKernelApp(IPKernelApp):
        name = "statgrid-kernel"
        port_range: tuple[int, int] | None = None
        generation = 1

        def init_connection_file(self):
            # The connection is made here (ports 0: bound in init_sockets) and written once the ports are bound,
            # by write_connection_file; removed at exit. A kernel restarted in its job (RESTART_ENV) takes the
            # connection it had — its own file, the same ports and keys — so its clients go on talking to it.
            restart = os.environ.get(RESTART_ENV)
            if restart:
                info = json.loads(Path(self.abs_connection_file).read_text())
                self.generation = int(restart)
            else:
                Path(self.abs_connection_file).unlink(missing_ok=True)      # an earlier attempt's, if any
                public, secret = zmq.curve_keypair()
                info = {"transport": "tcp", "ip": self.ip, "key": secrets.token_hex(32),
                        "signature_scheme": "hmac-sha256", "curve_publickey": public, "curve_secretkey": secret}
            self.load_connection_info(info)
            import atexit
            atexit.register(self.cleanup_connection_file)

        def _try_bind_socket(self, s, port):
            if self.port_range and self.transport == "tcp" and port <= 0:
                low, high = self.port_range
                return s.bind_to_random_port(f"tcp://{self.ip}", min_port=low, max_port=high + 1, max_tries=200)
            return super()._try_bind_socket(s, port)

        def init_heartbeat(self):
            # ipykernel's heartbeat picks its own port (bind to 0, close, bind again in its thread): in a port
            # range, pick one there the same way (the range is the firewall's)
            if self.port_range and self.transport == "tcp" and not self.hb_port:
                self.hb_port = _free_port_in(self.ip, *self.port_range)
            super().init_heartbeat()

        def write_connection_file(self, **kwargs: Any) -> None:
            info = {"ip": self.ip, "transport": self.transport, "key": self.session.key.decode(),
                    "signature_scheme": self.session.signature_scheme, "kernel_name": self.kernel_name or "",
                    "shell_port": self.shell_port, "iopub_port": self.iopub_port, "stdin_port": self.stdin_port,
                    "hb_port": self.hb_port, "control_port": self.control_port,
                    "curve_publickey": self.curve_publickey.decode(), "curve_secretkey": self.curve_secretkey.decode(),
                    "statgrid_generation": self.generation,
                    "statgrid_attempt": int(os.environ.get("STATGRID_JOB_ATTEMPT") or 0)}
            path = Path(self.abs_connection_file)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(info, f)
            os.replace(tmp, path)

    return GridKernelApp


def run_kernel(language: str, config: Any, overrides: dict[str, str], job_dir: Path) -> int:
    """Run the kernel until it is shut down, killed or culled; the exit code (0: shut down or idle)."""
    from statgrid.session.log import SessionLog

    jd = JobDir(job_dir)
    captured_log, captured_listing = io.StringIO(), io.StringIO()
    log = SessionLog.to_directory(jd.path, text_echo=captured_log, listing_echo=captured_listing,
                                  append=bool(os.environ.get(RESTART_ENV)))
    options = config.session.with_overrides(overrides, source="-o")   # checked now: a bad -o fails the start
    idle_s = float(os.environ.get(IDLE_ENV) or 0)

    def open_session():
        from statgrid.session.core import Session           # DuckDB, Arrow: imported with the first cell

        return Session(config, options, log, pinned_options=frozenset(overrides))

    host = KernelHost(open_session, jd, captured_log, captured_listing, idle_s)
    code = 0
    app = None
    std_fds = (os.dup(1), os.dup(2))                  # the job's output file: ipykernel puts pipes on fds 1 and 2
    try:
        app = _make_app(language, host, jd)
        _signals(host, signal.SIG_IGN)                 # ipykernel installs its own SIGINT handler around each cell
        if idle_s > 0:
            threading.Thread(target=_idle_watch, args=(app, host), name="statgrid-idle", daemon=True).start()
        app.start()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
        host.restart_requested = False
    finally:
        host.close()
        log.close()
    if host.restart_requested:
        _restart_in_place(app, std_fds)
    return code


def _restart_in_place(app, std_fds: tuple[int, int]) -> None:
    """A restart the notebook asked for (shutdown_request with restart): the session has closed (WORK removed);
    the process execs itself with the same connection (RESTART_ENV), so the job keeps its slot and its node and
    the clients their sockets — as a local kernel restarts on the ports it had. A new session opens at the
    first cell."""
    generation = getattr(app, "generation", 1) + 1
    try:
        app.close()                                  # its sockets' ports free for the new process
    except Exception:
        pass
    os.environ[RESTART_ENV] = str(generation)
    os.dup2(std_fds[0], 1)                           # the output file again, not the dead kernel's pipes
    os.dup2(std_fds[1], 2)
    os.execv(sys.executable, [sys.executable, "-m", "statgrid", *sys.argv[1:]])


def _make_app(language: str, host: KernelHost, jd: JobDir):
    cls = _app_class()
    if language == "sas":
        from statgrid.kernels.saskernel import SasKernel as kernel_class
    else:
        from ipykernel.ipkernel import IPythonKernel as kernel_class
    app = cls.instance(kernel_class=kernel_class, connection_file=str(jd.kernel_connection),
                       ip=os.environ.get(IP_ENV) or "127.0.0.1", kernel_name=f"statgrid-{language}")
    app.port_range = _port_range()
    app.initialize([])
    app.kernel.statgrid = host
    shutdown = app.kernel.do_shutdown

    async def do_shutdown(restart):
        host.restart_requested = bool(restart)
        result = shutdown(restart)
        return await result if inspect.isawaitable(result) else result

    app.kernel.do_shutdown = do_shutdown
    if language != "sas":
        from statgrid.kernels.pykernel import attach

        attach(app.kernel, host)
    return app


def _signals(host: KernelHost, sigint: Any) -> None:
    """SIGTERM: end the kernel (its session closes in run_kernel's finally); the session's own handler (which ends
    a batch job at SIGINT too) is replaced, as SIGINT here interrupts a cell only (`sigint`: ipykernel's handler
    while a cell runs, the SAS kernel's with DuckDB's interrupt; ignored between cells)."""
    def terminate(signum, frame):
        host.restart_requested = False
        if host._session is not None:
            host._session.terminating = host._session.terminating or signum    # its end record says why
        if host.busy:
            # inside a cell: a SystemExit raised there is the cell's (IPython catches it), so end here — the
            # session closed (WORK removed) on this, the main, thread, then the process
            try:
                host.close()
            finally:
                os._exit(128 + signum)
        con = getattr(host._session, "con", None)
        if con is not None:
            try:
                con.interrupt()
            except Exception:
                pass
        raise SystemExit(128 + signum)

    def end(signum, frame):
        if host.busy:
            return                     # a cell began since the idle watch decided: it starts the clock again
        host.restart_requested = False
        raise SystemExit(IDLE_EXIT_CODE)

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGUSR1, end)                 # idle timeout, ENDSAS: ended on the main thread
    signal.signal(signal.SIGINT, sigint)


def _idle_watch(app, host: KernelHost) -> None:
    """End the kernel after idle_timeout without a cell, always warned first: a warning when it has warn_before
    left, the end no sooner than warn_before after the warning (a cell in between starts the clock again)."""
    warn_before = min(IDLE_WARNING_MAX_S, host.idle_timeout_s / 10)
    step = min(IDLE_CHECK_S, max(0.05, warn_before / 4))
    warned_at = 0.0
    while not host.closed:
        time.sleep(step)
        idle = host.idle_s()
        if not host.warned:
            if idle >= host.idle_timeout_s - warn_before:
                host.warned, warned_at = True, time.monotonic()
                _say(app, f"statgrid: this kernel has been idle for {idle:.0f} s; it will be ended in "
                          f"{max(warn_before, host.idle_timeout_s - idle):.0f} s (the queue's idle_timeout) "
                          "unless a cell runs.\n")
        elif idle >= host.idle_timeout_s and time.monotonic() - warned_at >= warn_before:
            _say(app, f"statgrid: this kernel was idle for {idle:.0f} s (the queue's idle_timeout is "
                      f"{host.idle_timeout_s:.0f} s): it ends now, and its WORK library with it.\n")
            os.kill(os.getpid(), signal.SIGUSR1)
            host.warned = False        # if a cell began meanwhile (the end refused), the clock starts again


def _say(app, text: str) -> None:
    """A stream message on iopub with no parent: `jupyter console` and JupyterLab's kernel show it."""
    try:
        app.session.send(app.iopub_socket, "stream", {"name": "stderr", "text": text}, ident=b"stream.stderr")
    except Exception:
        print(text, file=sys.__stderr__, flush=True)
