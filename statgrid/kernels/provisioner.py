"""jupyter_client's KernelProvisioner for statgrid's kernel specs (registered under the entry point group
`jupyter_client.kernel_provisioners` as "statgrid-provisioner"; the mechanism Jupyter Enterprise Gateway's remote
kernels use). Any KernelManager — JupyterLab's, `jupyter console`'s, a script's — that starts statgrid-sas or
statgrid-python goes through it:

- launch_kernel submits an interactive job as you (the master knows who you are: the local socket's peer, or
  your token) and waits — while the job is pending, the reason is logged each time it changes — until the
  kernel listens, then takes its connection from the master (GET /jobs/<id>/kernel: yours alone);
- poll/wait follow the job's state from one background long-poll (GET /jobs/<id>/wait), not one request per call;
- send_signal(SIGINT) is the notebook's interrupt, through the grid to the kernel's process group on its node;
  terminate and kill are `statgrid kill`;
- a kernel the grid ended (statgrid kill, the console's Kill, an administrator, idle_timeout, grid down, a lost
  host) is not started again by Jupyter's auto-restart: the notebook sees it dead. A restart the user asks for
  restarts it in its job: the node's side closes the session (WORK removed) and starts again on the same ports with
  the same keys, so the job keeps its slot and every client its connection; a new session opens at the first cell.
"""
from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

from jupyter_client.provisioning.provisioner_base import KernelProvisionerBase
from traitlets import Float, Unicode

from statgrid.job.lifecycle import FINISHED_NAMES

# Of the client's environment, what goes to the kernel's job (the grid caps a job's env; the rest — the
# notebook server's tokens, JPY_* session names — is the client's own).
ENV_PASSED = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "PATH")
WATCH_POLL_S = 30.0


def _client():
    from statgrid.config import load_config
    from statgrid.grid.interface.client import default_client

    return default_client(load_config(None))


class GridProvisioner(KernelProvisionerBase):
    language = Unicode("sas", config=True, help="The kernel's language: sas or python.")
    queue = Unicode("", config=True, help="The queue (default: `interactive` when the grid has it).")
    launch_timeout_s = Float(600.0, config=True, help="How long to wait for a pending kernel before giving up.")

    job_id: int | None = None
    _exit: int | None = None
    _ended = False
    _ours = False                 # this provisioner asked for the end (shutdown, restart, kill)
    _watcher: asyncio.Task | None = None
    _launches = 0
    _restarting = False           # a restart the notebook asked for is under way (in the same job)
    _restarted_info: dict | None = None   # the connection of the kernel's new start, once poll() saw it
    _generation = 0               # which start of the kernel in its job the connection is of

    @property
    def has_process(self) -> bool:
        return self.job_id is not None and not self._ended

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        kwargs = await super().pre_launch(**kwargs)
        kwargs.setdefault("cmd", list(self.kernel_spec.argv))
        return kwargs

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> dict[str, Any]:
        if self._restarted_info is not None:            # restarted in its job: poll() saw the new start
            info, self._restarted_info = self._restarted_info, None
            return self._connection(info)
        env = {k: v for k, v in (kwargs.get("env") or os.environ).items() if k in ENV_PASSED}
        cwd = kwargs.get("cwd") or os.getcwd()
        self._launches += 1
        self._exit, self._ended, self._ours, self._restarting = None, False, False, False
        client = await asyncio.to_thread(_client)
        try:
            rec = await asyncio.to_thread(client.submit_kernel, self.language, self.queue,
                                          f"{self.language} kernel {self.kernel_id[:8]}", None, cwd, env,
                                          f"{self.kernel_id}-{self._launches}")
            self.job_id = int(rec["id"])
            self.log.info("statgrid: kernel %s is job %s (queue %s)", self.kernel_id, self.job_id, rec.get("queue"))
            answer = await self._until_listening(client)
        except BaseException:
            # given up (the start cancelled, the client stopping, the master gone, the job ended or too long
            # pending): a job nobody will attach to must not hold a slot
            if self.job_id is not None and not self._ended:
                await asyncio.shield(asyncio.to_thread(_kill_quietly, self.job_id))
                self._ended, self._exit = True, self._exit if self._exit is not None else 1
            raise
        finally:
            client.close()
        self._watcher = asyncio.create_task(self._watch(self.job_id))
        return self._connection(answer["connection"])

    async def _until_listening(self, client) -> dict:
        deadline = time.monotonic() + self.launch_timeout_s
        said = None
        while True:
            left = max(0.0, min(10.0, deadline - time.monotonic()))
            answer = await asyncio.to_thread(client.kernel, self.job_id, left)
            if answer["connection"] is not None:
                return answer
            job = answer["job"]
            if job["state"] in FINISHED_NAMES:
                self._ended, self._exit = True, job.get("exit_code") or 1
                raise RuntimeError(f"statgrid: the kernel's job {self.job_id} ended before the kernel listened: "
                                   f"{job.get('exit_reason') or job['state']} (its output: statgrid peek {self.job_id}).")
            reason = answer.get("pend_reason")
            if reason and reason != said:
                said = reason
                self.log.warning("statgrid: kernel job %s is pending: %s", self.job_id, reason)
            if time.monotonic() >= deadline:
                raise TimeoutError(f"statgrid: the kernel's job {self.job_id} did not start within "
                                   f"{self.launch_timeout_s:.0f} s ({said or 'starting'}); it is killed.")

    def _connection(self, info: dict) -> dict[str, Any]:
        info = dict(info)
        self._generation = int(info.pop("statgrid_generation", 1))
        info["key"] = info["key"].encode()
        self.connection_info = info
        return info

    async def _restart_seen(self) -> bool:
        """During a restart in the job: has the kernel's new start bound (a new generation of its connection)?
        Asked by poll(), which jupyter_client calls every 0.1 s while it waits for the old kernel to end."""
        client = await asyncio.to_thread(_client)
        try:
            answer = await asyncio.to_thread(client.kernel, self.job_id, 0.5, self._generation + 1)
        except Exception:
            return False
        finally:
            client.close()
        info = answer["connection"]
        if info is not None and int(info.get("statgrid_generation", 1)) > self._generation:
            self._restarted_info, self._restarting, self._ours = info, False, False
            return True
        return False

    async def _watch(self, job_id: int) -> None:
        """Follow the job until it ends. While the master cannot be reached (restarting, or gone with `grid down`),
        the kernel's own heartbeat says whether it lives: two missed in a row and it is taken as ended."""
        client = await asyncio.to_thread(_client)
        missed = 0
        try:
            while True:
                try:
                    job = (await asyncio.to_thread(client.wait, [job_id], WATCH_POLL_S))[0]
                except Exception as exc:             # the master unreachable: ask the kernel itself
                    alive = await asyncio.to_thread(_heartbeat, self.connection_info)
                    missed = 0 if alive else missed + 1
                    if missed >= 2:
                        job = {"state": "EXIT", "exit_code": None,
                               "exit_reason": f"the master is unreachable ({exc}) and the kernel does not answer"}
                        break
                    await asyncio.sleep(1.0)
                    continue
                missed = 0
                if job["state"] in FINISHED_NAMES:
                    break
        finally:
            client.close()
        if job_id != self.job_id:
            return
        self._exit = job.get("exit_code") if job.get("exit_code") is not None else 1
        self._ended = True
        if not self._ours:
            # The grid ended it: Jupyter's restarter must not start it again (the notebook shows it dead).
            restarter = getattr(self.parent, "_restarter", None)
            if restarter is not None:
                restarter.restart_limit = 0
            self.log.warning("statgrid: kernel job %s ended: %s", job_id, job.get("exit_reason") or job["state"])

    async def poll(self) -> int | None:
        if self._restarting and not self._ended:
            # the old kernel counts as ended once the new one listens (its job goes on); a kernel that does not
            # end (a cell deaf to the interrupt) stays alive, and jupyter_client then kills it: the job ends,
            # and the restart submits a new one
            return 0 if await self._restart_seen() else None
        if self._restarted_info is not None:
            return 0
        return self._exit if self._ended else None

    async def wait(self) -> int | None:
        while self._restarting and not self._ended:
            if await self._restart_seen():
                return 0
            await asyncio.sleep(0.1)
        if self._restarted_info is not None:
            return 0
        while self._watcher is not None and not self._watcher.done():
            await asyncio.sleep(0.05)
        return self._exit

    async def send_signal(self, signum: int) -> None:
        if self.job_id is None or self._ended or signum == 0:
            return
        if signum == signal.SIGINT:
            # jupyter_client interrupts before every shutdown: a master that cannot be reached (or a job not yet
            # started) must not make the shutdown itself fail
            client = await asyncio.to_thread(_client)
            try:
                await asyncio.to_thread(client.signal, self.job_id, "SIGINT")
            except Exception as exc:
                self.log.warning("statgrid: could not interrupt kernel job %s: %s", self.job_id, exc)
            finally:
                client.close()
        else:
            await self.kill()

    async def kill(self, restart: bool = False) -> None:
        if self.job_id is None or self._ended:
            return
        self._ours, self._restarting = True, False
        client = await asyncio.to_thread(_client)
        try:
            await asyncio.to_thread(client.kill, [self.job_id])
        finally:
            client.close()

    async def terminate(self, restart: bool = False) -> None:
        await self.kill(restart)

    async def shutdown_requested(self, restart: bool = False) -> None:
        self._ours = True
        self._restarting = restart and self.job_id is not None and not self._ended

    async def cleanup(self, restart: bool = False) -> None:
        if self._restarted_info is not None:
            return                         # restarted in the same job: its watcher goes on
        if self._watcher is not None and not self._watcher.done():
            self._watcher.cancel()
        if restart:
            self.job_id, self._watcher = None, None

    def get_shutdown_wait_time(self, recommended: float = 5.0) -> float:
        return max(recommended, 10.0)         # a grid round trip and WORK removed before the job ends

    async def get_provisioner_info(self) -> dict[str, Any]:
        info = await super().get_provisioner_info()
        info.update({"job_id": self.job_id, "language": self.language})
        return info

    async def load_provisioner_info(self, provisioner_info: dict) -> None:
        await super().load_provisioner_info(provisioner_info)
        self.job_id = provisioner_info.get("job_id")
        self.language = provisioner_info.get("language", self.language)


def _kill_quietly(job_id: int) -> None:
    try:
        client = _client()
        try:
            client.kill([job_id])
        finally:
            client.close()
    except Exception:
        pass


def _heartbeat(info: dict, timeout_s: float = 2.0) -> bool:
    """Does the kernel answer on its heartbeat port (ZeroMQ REQ/REP echo, CurveZMQ as the kernel requires)?"""
    import zmq

    if not info:
        return False
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    try:
        sock.linger = 0
        if info.get("curve_publickey"):
            public, secret = zmq.curve_keypair()
            sock.curve_serverkey = _bytes(info["curve_publickey"])
            sock.curve_publickey, sock.curve_secretkey = public, secret
        sock.connect(f"tcp://{info['ip']}:{info['hb_port']}")
        sock.send(b"ping")
        return bool(sock.poll(int(timeout_s * 1000))) and sock.recv() == b"ping"
    except zmq.ZMQError:
        return False
    finally:
        sock.close()


def _bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()
