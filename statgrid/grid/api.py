"""The master's HTTP API (FastAPI), on 127.0.0.1 only: the CLI and `statgrid.grid.client` use it.

Errors come back as {"error": message, "usage": bool} with 400 (bad input: the CLI exits 2),
404 (no such job) or 409 (refused now, e.g. shutting down); the message names the value and
the fix, as the CLI would print it.
"""
from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Optional

from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from statgrid.errors import StatgridError, UsageError
from statgrid.grid.jobspec import JobRequest
from statgrid.grid.master import Master, NotFound, job_dir
from statgrid.grid.model import JobState

PEEK_DEFAULT_BYTES = 4096


class KillBody(BaseModel):
    ids: list[int]
    user: Optional[str] = None


def create_app(master: Master, on_down=None, on_stopped=None) -> FastAPI:
    """The API of a started master; when the server ends, the lifespan stops the grid."""
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        try:
            yield
        finally:
            # Here, not after uvicorn returns: on Ctrl-C/SIGTERM uvicorn re-raises the signal
            # once the lifespan has ended, so nothing after serve() would run.
            await master.stop(stop_engine=True)
            if on_stopped is not None:
                on_stopped()

    app = FastAPI(title="statgrid master", lifespan=lifespan)

    @app.exception_handler(StatgridError)
    async def _statgrid_error(request: Request, exc: StatgridError):
        status = 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, UsageError) else 409
        return JSONResponse({"error": str(exc), "usage": isinstance(exc, UsageError)}, status_code=status)

    @app.get("/health")
    async def health():
        return {"status": "ok", "scheduler": master.engine.address, "hosts": sorted(master.engine.workers),
                "running": len(master.running)}

    @app.post("/jobs")
    async def submit(body: JobRequest):           # FastAPI validates the dataclass as the body
        return master.submit(body).to_dict()

    @app.get("/jobs")
    async def jobs(user: Optional[str] = None, all_states: bool = Query(False, alias="all"),
                   state: Optional[str] = None, limit: Optional[int] = None):
        if state:
            try:
                states = [JobState(s.strip().upper()) for s in state.split(",")]
            except ValueError:
                raise UsageError(f"state {state!r} is not one of {', '.join(s.value for s in JobState)}.") from None
        else:
            states = list(JobState) if all_states else [JobState.PEND, JobState.RUN]
        return [j.to_dict() for j in master.store.select(states, user=user, limit=limit)]

    @app.get("/jobs/{job_id}")
    async def job(job_id: int):
        j = master.get(job_id)
        return {**j.to_dict(), "events": master.store.events(job_id), "job_dir": str(job_dir(master.cfg, job_id))}

    @app.post("/kill")
    async def kill(body: KillBody):
        """One result per id: the job record, or {"id", "error"} (unknown id, not the owner)."""
        out = []
        for i in body.ids:
            try:
                out.append((await master.kill(i, body.user)).to_dict())
            except StatgridError as exc:
                out.append({"id": i, "error": str(exc)})
        return out

    @app.get("/jobs/{job_id}/wait")
    async def wait(job_id: int, timeout_s: float = 30.0):
        return (await master.wait(job_id, min(timeout_s, 300.0))).to_dict()

    @app.get("/jobs/{job_id}/peek")
    async def peek(job_id: int, nbytes: int = PEEK_DEFAULT_BYTES):
        j = master.get(job_id)
        path = job_dir(master.cfg, job_id) / "output.txt"
        return {"job": j.to_dict(), "path": str(path), "text": _tail(path, nbytes)}

    @app.get("/hosts")
    async def hosts():
        return await master.hosts()

    @app.get("/queues")
    async def queues():
        return master.queues()

    @app.post("/grid/down")
    async def down():
        if on_down is not None:
            asyncio.get_running_loop().call_soon(on_down)
        return {"status": "stopping"}

    return app


def _tail(path: Path, nbytes: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - nbytes))
            return f.read().decode(errors="replace")
    except FileNotFoundError:
        return ""
