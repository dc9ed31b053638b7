"""The master's HTTP API (FastAPI): the CLI and `statgrid.grid.interface.client` use it, on the local socket
or over HTTPS with a token (server.py serves both; auth.py says who is asking and what they may do).

Every request but GET /health is authenticated before anything else reads it (statgrid.webapp's gate):
401 without a credential (or with a bad or revoked token), 403 for what the caller may not do —
each message says how to get a token, or who may do it —, 429 with Retry-After once a client has
failed too often (auth.Throttle). Nothing of a refused request is stored; the refusal is in the
audit trail (coalesced per client). A full grid home is a 503 naming its file system (diskfull.py).

Errors come back as {"error": message, "usage": bool}: 400 for bad input (usage true: the CLI
exits 2) — a parameter of the wrong type or out of its bounds, named with its value —, 404 (no
such job), 409 (refused now, e.g. shutting down, or an Idempotency-Key sent again with another
request) and 500 (a fault of the master: the message
names it, the traceback goes to the master's log only). The message says the fix, as the CLI
would print it.

Every parameter is bounded: job ids 1 … 2**63 − 1 (SQLite's INTEGER), wait timeout_s finite in
[0, 300], peek nbytes ≤ 1 MiB, listing pages ≤ 1000 jobs, names ≤ 128 printable characters
(a submit's fields are checked by `jobspec.check_bounds`, for the CLI and the API alike).

`GET /jobs` answers one page, {"jobs": [...], "next_after_id": N or null}: ask again with
after_id=N until it is null. The page is read and encoded in a worker thread (store.page), so
a listing of any size never holds up the loop that submits, dispatches and answers status;
writes stay on the loop.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path as FilePath
from typing import Annotated, Optional

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from statgrid.errors import StatgridError, UsageError
from statgrid.grid.security import auth
from statgrid.grid.security.auth import Caller, Forbidden
from statgrid.grid.interface.address import api_url
from statgrid.grid.interface.answers import BodyLimit, FaultsAs500, body_error_message, error_response, validation_message
from statgrid.grid.master.metrics import CONTENT_TYPE_LATEST
from statgrid.host.files import NotTrusted, read_untrusted
from statgrid.grid.master.jobspec import NAME_MAX_CHARS, JobRequest, NotBool
from statgrid.grid.master.jobspec import check_name as jobspec_check_name
from statgrid.grid.master.core import Master, NotFound, grid_dir, job_dir
from statgrid.job.record import JOB_ID_MAX, PAGE_MAX_JOBS, PEEK_MAX_BYTES, JobState
from statgrid.job.jobdir import JobDir
from statgrid.grid.master.store import JobFilter

PEEK_DEFAULT_BYTES = 4096
WAIT_DEFAULT_S = 30.0
WAIT_MAX_S = 300.0                      # one long poll; the client asks again for longer waits
PAGE_DEFAULT_JOBS = 100
KILL_MAX_IDS = 10_000
# The largest sound request is a submit: command and environment ≤ 64 KiB each (jobspec) plus
# names. Bodies are read into memory before any field is checked, so a cap bounds what one hostile
# request can cost; it sits well above sound requests so that merely oversized fields (a 10 MB job
# name) still get the message naming the field.
BODY_MAX_BYTES = 16 * 2**20
EVENTS_KEEPALIVE_S = 15.0

JobId = Annotated[int, Path(ge=1, le=JOB_ID_MAX, description="a job id, 1 … 2**63 − 1")]
Name = Annotated[Optional[str], Query(max_length=NAME_MAX_CHARS)]


class KillBody(BaseModel):
    ids: list[Annotated[int, Field(ge=1, le=JOB_ID_MAX)]] = Field(max_length=KILL_MAX_IDS)


class SignalBody(BaseModel):
    signal: str = Field(max_length=16)          # "SIGINT": a notebook kernel's interrupt


class ModifyBody(BaseModel):
    """What `statgrid modify` may change of a pending job (unset: unchanged)."""
    queue: Optional[str] = Field(None, max_length=NAME_MAX_CHARS)
    name: Optional[str] = Field(None, max_length=NAME_MAX_CHARS)
    priority: Optional[Annotated[int, NotBool()]] = Field(None, ge=0, le=1000)
    runlimit_s: Optional[Annotated[float, NotBool()]] = Field(None, ge=0, le=366 * 86400, allow_inf_nan=False)
    mem_bytes: Optional[Annotated[int, NotBool()]] = Field(None, ge=0, le=2**50)


class FlowJobBody(BaseModel):
    name: str = Field(max_length=NAME_MAX_CHARS)
    request: JobRequest
    after: str = Field("", max_length=4096)


class FlowBody(BaseModel):
    name: str = Field(max_length=NAME_MAX_CHARS)
    jobs: list[FlowJobBody] = Field(max_length=1000)


class ScheduleBody(BaseModel):
    """A calendar: `cron` (5 fields or @daily…), `tz` (IANA name), and one of `request` (a job, as
    POST /jobs) or `flow` (as POST /flows)."""
    cron: str = Field(max_length=256)
    tz: str = Field("UTC", max_length=64)
    request: Optional[JobRequest] = None
    flow: Optional[FlowBody] = None


class HostCloseBody(BaseModel):
    reason: str = Field("", max_length=NAME_MAX_CHARS)


HostName = Annotated[str, Path(max_length=NAME_MAX_CHARS, description="a host of grid.toml")]


class TokenBody(BaseModel):
    name: str = Field("", max_length=auth.TOKEN_NAME_MAX_CHARS)


async def _caller(request: Request) -> Caller:
    # async: FastAPI runs a plain-def dependency in a worker thread, a hand-off per request (every
    # submit and wait) that competes with the loop for the GIL.
    return request.scope[auth.CALLER_KEY]


Who = Annotated[Caller, Depends(_caller)]


def create_app(master: Master, authenticate, on_down=None, on_stopped=None, stop_engine=lambda: True) -> FastAPI:
    """The API of a started master; when the server ends, the lifespan stops the master — and the
    grid (engine and jobs) when stop_engine() says so (`grid down`, Ctrl-C), not on SIGTERM (a
    restart of the master, as systemd's: the jobs run on, the next master adopts them).
    authenticate(app, master=, throttle=) is the ASGI gate that says who is asking (statgrid.webapp's:
    it also knows the console's sign-in, which this module does not)."""
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        try:
            yield
        finally:
            # Here, not after uvicorn returns: on Ctrl-C/SIGTERM uvicorn re-raises the signal
            # once the lifespan has ended, so nothing after serve() would run.
            await master.stop(stop_engine=stop_engine())
            if on_stopped is not None:
                on_stopped()

    app = FastAPI(title="statgrid master", lifespan=lifespan)

    @app.exception_handler(StatgridError)
    async def _statgriderror_response(request: Request, exc: StatgridError):
        if isinstance(exc, Forbidden):
            master.audit.record(request.scope.get(auth.CALLER_KEY), f"{request.method} {request.url.path}",
                                outcome="refused", detail=str(exc))
            return error_response(str(exc), 403, usage=False)
        status = 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, UsageError) else 409
        return error_response(str(exc), status, usage=isinstance(exc, UsageError))

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, exc: RequestValidationError):
        # FastAPI's own answer is 422 {"detail": [...]}; ours is the documented shape.
        return error_response(validation_message(exc.errors()), 400, usage=True)

    @app.exception_handler(StarletteHTTPException)
    async def _httperror_response(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 400 and exc.__cause__ is not None:    # FastAPI could not read the JSON body
            return error_response(body_error_message(exc.__cause__), 400, usage=True)
        return error_response(f"{exc.detail}: {request.method} {request.url.path} (the API's paths are in README.md, "
                      "'The grid').", exc.status_code, usage=False, headers=exc.headers)

    app.add_middleware(FaultsAs500, log_path=grid_dir(master.cfg) / "master.log", home=master.cfg.home)
    app.state.auth_throttle = auth.Throttle()                       # the console's sign-in counts here too
    app.add_middleware(authenticate, master=master, throttle=app.state.auth_throttle)
    app.add_middleware(BodyLimit, max_bytes=BODY_MAX_BYTES)       # outermost: before anything reads

    def private(record: dict, who: Caller) -> dict:
        """A job record as `who` may see it: STIMER records are the owner's (and admins')."""
        if not master.rights.sees_detail(who, record["user"]):
            record["stimer"] = None
        return record

    @app.get("/health")
    async def health(request: Request):
        """The only anonymous call: whether the master answers. Authenticated callers get more."""
        if request.scope.get(auth.CALLER_KEY) is None:
            return {"status": "ok"}
        return {"status": "ok", "scheduler": master.engine.address, "hosts": sorted(master.engine.workers),
                "running": len(master.running)}

    @app.get("/metrics")
    async def metrics(who: Who):
        """Prometheus's text format (grid/master/metrics.py); any authenticated caller (a token for a scraper)."""
        await asyncio.to_thread(master.metrics.refresh_monitor)
        return Response(master.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/events")
    async def events(who: Who):
        """Server-sent events (text/event-stream): every job change (`event: job`, its record as
        `who` may see it) and host change (`event: host`) from now on, broadcast by the master from
        memory (events.py); `event: resync` when this stream fell behind (fetch the view again); a
        comment line every EVENTS_KEEPALIVE_S keeps proxies from closing an idle stream."""
        sub = master.events.subscribe()

        async def stream():
            try:
                yield b": statgrid events\n\n"
                while True:
                    event = await sub.next(EVENTS_KEEPALIVE_S)
                    if event is None:
                        yield b": keep-alive\n\n"
                        continue
                    if event["type"] == "end":
                        return
                    if event["type"] == "job":
                        event = {**event, "job": private(dict(event["job"]), who)}
                    yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
            finally:
                master.events.unsubscribe(sub)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    @app.get("/whoami")
    async def whoami(who: Who):
        return {**who.to_dict(), "grid_user": master.rights.grid_user, "personal": master.rights.personal,
                "admins": list(master.rights.admins)}

    @app.post("/jobs")
    async def submit(body: JobRequest, who: Who, request: Request):  # FastAPI checks the types; jobspec the bounds
        # Idempotency-Key: a retry of a submit whose answer was lost answers what it made (flows.py)
        job = master.submit(body, who, key=request.headers.get("idempotency-key"))
        master.audit.record(who, "submit", f"job {job.id}", detail=f"queue {job.queue}")
        return JSONResponse(job.to_dict())             # json.dumps: FastAPI's encoder took ~0.2 ms a job

    @app.get("/jobs")
    async def jobs(who: Who, user: Name = None, queue: Name = None, host: Name = None,
                   mine: bool = Query(False, description="only the caller's jobs"),
                   parent: Annotated[Optional[int], Query(ge=1, le=JOB_ID_MAX)] = None,
                   all_states: bool = Query(False, alias="all"),
                   state: Annotated[Optional[str], Query(max_length=64)] = None,
                   limit: Annotated[int, Query(ge=1, le=PAGE_MAX_JOBS)] = PAGE_DEFAULT_JOBS,
                   after_id: Annotated[int, Query(ge=0, le=JOB_ID_MAX)] = 0):
        """One page of jobs in id order; "next_after_id" is the after_id of the next page (null: none)."""
        if state:
            try:
                states = tuple(JobState(s.strip().upper()) for s in state.split(","))
            except ValueError:
                raise UsageError(f"state {state!r} is not one of {', '.join(s.value for s in JobState)} "
                                 "(comma-separated).") from None
        else:
            states = None if all_states else (JobState.PEND, JobState.RUN)
        flt = JobFilter(states=states, user=who.user if mine else user, queue=queue, host=host, parent_id=parent)
        viewer = None if who.admin else who.user
        records, next_after_id = await asyncio.to_thread(master.store.page, flt, after_id, limit, viewer)
        if states is None or JobState.PEND in states or JobState.RUN in states:
            records = await asyncio.to_thread(_with_reasons, master, records)
        return Response(f'{{"jobs":{records},"next_after_id":{json.dumps(next_after_id)}}}',
                        media_type="application/json")

    @app.get("/jobs/{job_id}")
    async def job(job_id: JobId, who: Who):
        j = master.get(job_id)
        return {**private(j.to_dict(), who), "pend_reason": master.pend_reason(master.pending.get(job_id) or j),
                **({"idle_s": master.kernels.idle_s(job_id, time.time())}
                   if j.kind == "kernel" and j.state == JobState.RUN else {}),
                "runlimit_s": master.runlimit_s(j) or None, "events": master.store.events(job_id),
                "job_dir": str(job_dir(master.cfg, job_id))}

    @app.post("/kill")
    async def kill(body: KillBody, who: Who):
        """One result per id: the job record, or {"id", "error"} (unknown id, not the owner)."""
        out = []
        for i in body.ids:
            try:
                out.append(private((await master.kill(i, who)).to_dict(), who))
                master.audit.record(who, "kill", f"job {i}")
            except StatgridError as exc:
                master.audit.record(who, "kill", f"job {i}", outcome="refused", detail=str(exc))
                out.append({"id": i, "error": str(exc)})
        return out

    @app.post("/jobs/{job_id}/suspend")
    async def suspend(job_id: JobId, who: Who):
        job = await master.suspend(job_id, who)
        master.audit.record(who, "suspend", f"job {job_id}")
        return private(job.to_dict(), who)

    @app.post("/jobs/{job_id}/resume")
    async def resume(job_id: JobId, who: Who):
        job = await master.resume(job_id, who)
        master.audit.record(who, "resume", f"job {job_id}")
        return private(job.to_dict(), who)

    @app.post("/jobs/{job_id}/modify")
    async def modify(job_id: JobId, body: ModifyBody, who: Who):
        changes = body.model_dump(exclude_none=True)
        job = master.modify(job_id, who, changes)
        master.audit.record(who, "modify", f"job {job_id}", detail=json.dumps(changes))
        return private(job.to_dict(), who)

    @app.post("/jobs/{job_id}/top")
    async def top(job_id: JobId, who: Who):
        job = master.move(job_id, who, "top")
        master.audit.record(who, "top", f"job {job_id}")
        return private(job.to_dict(), who)

    @app.post("/jobs/{job_id}/bottom")
    async def bottom(job_id: JobId, who: Who):
        job = master.move(job_id, who, "bottom")
        master.audit.record(who, "bottom", f"job {job_id}")
        return private(job.to_dict(), who)

    @app.post("/flows")
    async def flow_submit(body: FlowBody, who: Who, request: Request):
        rec = master.submit_flow(body.name, [(j.name, j.request, j.after) for j in body.jobs], who,
                                 key=request.headers.get("idempotency-key"))
        master.audit.record(who, "flow submit", f"flow {rec['id']}", detail=f"{len(body.jobs)} jobs")
        return rec

    @app.get("/flows")
    async def flow_list(who: Who, user: Name = None, mine: bool = Query(False)):
        return master.flows(who.user if mine else user)

    @app.get("/flows/{flow_id}")
    async def flow_show(flow_id: JobId, who: Who):
        return master.flow(flow_id)

    @app.post("/flows/{flow_id}/kill")
    async def flow_kill(flow_id: JobId, who: Who):
        rec = await master.kill_flow(flow_id, who)
        master.audit.record(who, "flow kill", f"flow {flow_id}")
        return rec

    @app.post("/schedules")
    async def schedule_add(body: ScheduleBody, who: Who):
        flow = None if body.flow is None else {"name": body.flow.name,
                                               "jobs": [(j.name, j.request, j.after) for j in body.flow.jobs]}
        rec = master.schedule_add(who, body.cron, body.tz, body.request, flow)
        master.audit.record(who, "calendar add", f"calendar {rec['id']}", detail=rec["cron"])
        return rec

    @app.get("/schedules")
    async def schedule_list(who: Who, all_users: bool = Query(False, alias="all")):
        if all_users:
            master.rights.require_admin(who, "list everyone's calendars")
        return master.schedules(None if all_users else who.user)

    @app.delete("/schedules/{sched_id}")
    async def schedule_remove(sched_id: JobId, who: Who):
        rec = master.schedule_remove(sched_id, who)
        master.audit.record(who, "calendar remove", f"calendar {sched_id}")
        return rec

    @app.get("/jobs/{job_id}/wait")
    async def wait(job_id: JobId, who: Who,
                   timeout_s: Annotated[float, Query(ge=0, le=WAIT_MAX_S, allow_inf_nan=False)] = WAIT_DEFAULT_S):
        return private((await master.wait(job_id, timeout_s)).to_dict(), who)

    @app.get("/jobs/{job_id}/kernel")
    async def kernel(job_id: JobId, who: Who,
                     timeout_s: Annotated[float, Query(ge=0, le=WAIT_MAX_S, allow_inf_nan=False)] = 0.0,
                     min_generation: Annotated[int, Query(ge=1, le=1_000_000)] = 1):
        """A notebook kernel's connection (ports, HMAC and CurveZMQ keys), for its owner alone: once it listens
        (long-poll up to timeout_s), else "connection": null with the job and why it is pending. Recorded in the
        audit trail once per start of the kernel."""
        rec = await master.kernels.connection(job_id, who, timeout_s, min_generation)
        if rec["connection"] is not None and master.kernels.first_handout(job_id, rec["connection"]):
            master.audit.record(who, "kernel connect", f"job {job_id}")
        return rec

    @app.post("/jobs/{job_id}/signal")
    async def signal_job(job_id: JobId, body: SignalBody, who: Who):
        job = await master.kernels.signal(job_id, body.signal, who)
        master.audit.record(who, "signal", f"job {job_id}", detail=body.signal)
        return private(job.to_dict(), who)

    @app.get("/jobs/{job_id}/peek")
    async def peek(job_id: JobId, who: Who,
                   nbytes: Annotated[int, Query(ge=1, le=PEEK_MAX_BYTES)] = PEEK_DEFAULT_BYTES):
        j = master.get(job_id)
        master.rights.require_owner(who, j.user, "read the output of", f"job {job_id}")
        path = JobDir(job_dir(master.cfg, job_id)).output
        owner = master.files_uid(j.user)
        if owner is None:
            raise StatgridError(f"job {job_id}'s user {j.user!r} has no account on the master's machine any more: its "
                                f"output is not shown (it is at {path}).")
        return {"job": private(j.to_dict(), who), "path": str(path), "text": _tail(path, nbytes, owner)}

    @app.get("/hosts")
    async def hosts(who: Who):
        return await master.hosts()

    @app.post("/hosts/{host}/close")
    async def host_close(host: HostName, body: HostCloseBody, who: Who):
        jobspec_check_name("reason", body.reason, "give a shorter reason, printable characters only")
        closed = master.close_host(host, who, body.reason)
        master.audit.record(who, "host close", f"host {host}", detail=body.reason or None)
        return {"host": host, **closed}

    @app.post("/hosts/{host}/open")
    async def host_open(host: HostName, who: Who):
        master.open_host(host, who)
        master.audit.record(who, "host open", f"host {host}")
        return {"host": host, "state": master.host_views()[host].state}

    @app.get("/queues")
    async def queues(who: Who):
        return master.queues()

    @app.get("/shares")
    async def shares(who: Who, queue: Name = None):
        """Fairshare per queue (LSF's bqueues -r): each user and group's shares, running and pending
        jobs, decayed usage and dynamic priority. Shares are not private: everyone sees everyone's, as
        they see everyone's job rows."""
        return master.shares(queue)

    @app.get("/acct")
    async def acct(who: Who, user: Name = None, queue: Name = None,
                   since: Annotated[Optional[str], Query(max_length=64)] = None):
        """Accounting of finished jobs (acct.py, like bacct): yours by default; user=NAME or
        user=all for administrators; since: Unix seconds (jobs that ended then or later)."""
        from statgrid.grid.master import acct as acct_mod

        since_ts = None
        if since:
            try:
                since_ts = float(since)
            except ValueError:
                pass
            if since_ts is None or not 0 <= since_ts < 1e11:         # nan, inf and year 5138 on are no times
                raise UsageError(f"since {since!r} is not a time: give Unix seconds, e.g. since="
                                 f"{int(time.time()) - 86400} for a day ago (`statgrid acct --since` also takes "
                                 "2026-11-01 or 24h).")
        user = user or who.user
        if user != who.user:
            whose = "all users" if user == "all" else repr(user)
            master.rights.require_admin(who, f"see the accounting of {whose} — your own is `statgrid acct` "
                                             "without -u")
        groups = master.cfg.groups
        target = None if user == "all" else user

        def compute() -> dict:
            records = acct_mod.finished_records(master.store, target, queue, since_ts)
            return acct_mod.account(records, groups, target, queue, since_ts).to_dict()

        return await asyncio.to_thread(compute)

    @app.post("/grid/down")
    async def down(who: Who):
        master.rights.require_admin(who, "stop the grid")
        master.audit.record(who, "grid down")
        if on_down is not None:
            asyncio.get_running_loop().call_soon(on_down)
        return {"status": "stopping"}

    @app.post("/grid/reconfig")
    async def reconfig(who: Who):
        try:
            changes = await master.reconfig(who)
        except UsageError as exc:
            master.audit.record(who, "reconfig", outcome="refused", detail=str(exc))
            raise
        master.audit.record(who, "reconfig", detail="; ".join(changes) or "no change")
        return {"changes": changes}

    @app.post("/tokens")
    async def token_create(body: TokenBody, who: Who):
        """A new token for the caller, on the local socket only: a token never makes another (so
        revoking one ends what was done with it)."""
        if who.via != "socket":
            raise Forbidden("tokens are made on the master's machine, through its local socket: log in there and run "
                            "`statgrid token create`; a token cannot make another.")
        auth_name = body.name or f"made {time.strftime('%Y-%m-%d %H:%M', time.localtime())}"
        jobspec_check_name("token name", auth_name, "give a shorter name with printable characters")
        token_id, token = master.tokens.create(who.user, auth_name)
        master.audit.record(who, "token create", f"token {token_id}")
        ca = grid_dir(master.cfg) / "ca.pem"
        return {"id": token_id, "user": who.user, "name": auth_name, "token": token, "url": api_url(master.cfg),
                "ca_pem": ca.read_text() if master.cfg.master.api_tls and ca.is_file() else None}

    @app.get("/tokens")
    async def token_list(who: Who, all_users: bool = Query(False, alias="all")):
        if all_users:
            master.rights.require_admin(who, "list everyone's tokens")
        return master.tokens.list(None if all_users else who.user)

    @app.delete("/tokens/{token_id}")
    async def token_revoke(token_id: JobId, who: Who):
        token = master.tokens.get(token_id)
        if token is None:
            raise NotFound(f"token {token_id} does not exist; see `statgrid token list`.")
        master.rights.require_owner(who, token["user"], "revoke", f"token {token_id}")
        master.tokens.revoke(token_id, who.user)
        master.audit.record(who, "token revoke", f"token {token_id}", detail=f"of {token['user']}")
        return master.tokens.get(token_id)

    return app


def _with_reasons(master: Master, records: str) -> str:
    """A page's JSON records with each PEND job's pending reason added ("pend_reason"), and each running
    notebook kernel's idle time ("idle_s")."""
    jobs = json.loads(records)
    now = time.time()
    for rec in jobs:
        if rec["state"] == "PEND":
            job = master.pending.get(rec["id"])
            rec["pend_reason"] = master.pend_reason(job) if job is not None else None
        elif rec["kind"] == "kernel" and rec["state"] == "RUN":
            rec["idle_s"] = master.kernels.idle_s(rec["id"], now)
    return json.dumps(jobs)


def _tail(path: FilePath, nbytes: int, owner_uid: int | None) -> str:
    """The last nbytes of a job's output. The job's directory is its user's, who could put a link, a
    FIFO or a hard link to another's file there: only a regular file of the job's user is read."""
    try:
        return read_untrusted(path, nbytes, owner_uid=owner_uid, tail=True).decode(errors="replace")
    except FileNotFoundError:
        return ""
    except NotTrusted as exc:
        raise StatgridError(f"{exc.strerror or exc}; the output of a job is a file its user owns: not shown.") from None
