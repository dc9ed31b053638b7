"""The web console (issue 17): pages served by the master's own app, under /console.

Libraries, each for what it does: Jinja2 renders the pages and the fragments pushed to them
(autoescaping: a job name is text, never markup); htmx (+ its SSE extension) swaps those
fragments in as the server pushes them and posts the buttons; uPlot draws the time series. All
three ship in `statgrid/console/static` (their licenses beside them): nothing is fetched from
elsewhere, an air-gapped grid works.

Signing in: a browser cannot use the CLI's local socket, so it reaches the master over HTTPS
(`[master] listen`) and signs in with a token (`statgrid token create --print`). The cookie holds a
random session id (live.Sessions), never the token: HttpOnly, SameSite=Strict, Secure over HTTPS,
path /console (the JSON API never accepts it). A session ends at sign-out, after 12 h, when its
token is revoked or the master restarts; a live stream of an ended session stops within
SESSION_CHECK_S. A request that changes something (kill, close/open, sign out) with that cookie must
also carry htmx's HX-Request header and, when the browser sends one, an Origin of this master:
another site can make a browser send neither (statgrid/webapp.py's _Authenticate checks before any route).

Live updates: each page holds one server-sent-events stream (/console/stream, the page's view and
filters in its query). The stream takes the master's broadcast job and host changes and the
console's samples, log and usage chunks (live.py) and turns those this viewer shows into HTML
fragments (each rendered once per change for all viewers alike) named for the element that
shows them (`job-12`, `host-node1`); htmx swaps them in. A viewer costs no store query.

Every stream sends a comment line every KEEPALIVE_S, whatever else it sends or skips: a viewer
whose page ignores all the changes of a busy grid (a capped jobs list, another job's page) would
otherwise read nothing at all, and its client or a proxy would end it (issue 24: 10 viewers of a
capped list all hit a 30 s read timeout). A jobs list that shows new jobs as they come keeps the
newest SHOWN_MAX_JOBS rows: past that each new row pushes the oldest off the bottom, and the page
says so ("showing the newest 1,000 of N jobs").

Both numbers can be lowered for tests (and for a proxy that cuts idle streams sooner) with
STATGRID_CONSOLE_KEEPALIVE_S and STATGRID_CONSOLE_LIVE_ROWS in the master's environment.
"""
from __future__ import annotations

import asyncio
import heapq
import json
import os
import re
import time
import urllib.parse
from pathlib import Path as FilePath
from typing import Annotated, Any, Optional

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from markupsafe import escape

from statgrid.console import data
from statgrid.console.live import LOG_PAGE_BYTES, Console, output_size, read_output
from statgrid.errors import StatgridError, UsageError
from statgrid.job.lifecycle import FINISHED_NAMES
from statgrid.grid.security import auth
from statgrid.grid.security.auth import Caller
from statgrid.grid.master.events import Subscription
from statgrid.host.files import NotTrusted
from statgrid.job.record import JOB_ID_MAX
from statgrid.job.jobdir import JobDir, usage_path
from statgrid.job.lifecycle import SHOWN_NAMES

COOKIE = "statgrid_console"
COOKIE_MAX_AGE_S = 12 * 3600
KEEPALIVE_S = 15.0                # a stream sends at least a comment this often (a proxy cuts one silent for a minute)
PAGE_JOBS = 100
SHOWN_MAX_JOBS = 1000            # rows a live jobs list keeps: the newest, the oldest drop off the bottom
NAME_MAX = 128
# Pages may load only this master's scripts; styles inline too (uPlot sizes its elements).
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
# Saved reports are static HTML (SVG charts inlined): served sandboxed, no script runs in them.
REPORT_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"

_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
SESSION_CHECK_S = 5.0             # how often a live stream checks that its sign-in still holds

JobId = Annotated[int, Path(ge=1, le=JOB_ID_MAX)]
HostName = Annotated[str, Path(max_length=NAME_MAX)]
Filter = Annotated[Optional[str], Query(max_length=NAME_MAX)]


def _templates():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("statgrid.console", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["ts"] = lambda ts: "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    env.filters["secs"] = lambda s: "-" if s is None else f"{s:.1f}"
    env.filters["mib"] = lambda b: "-" if b is None else f"{b / 2**20:.1f}"
    env.globals["FINISHED_NAMES"] = FINISHED_NAMES          # the lifecycle's, not spelled in a template
    return env


def page_headers() -> dict[str, str]:
    return {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
            "Cache-Control": "no-store"}


def sse(name: str, text: str) -> bytes:
    """One server-sent event: `name`, its data line by line. A browser ends a line at CR, LF or
    CRLF alike: all three are split here, or a CR in a job's command or output could start an
    event of its own choosing."""
    lines = "".join(f"data: {line}\n" for line in _LINE_BREAKS.split(text))
    return f"event: {name}\n{lines}\n".encode()


def _env_number(name: str, default: float, low: float, high: float) -> float:
    """A number from the master's environment (a test's or an operator's override), within [low, high]."""
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:
        raise UsageError(f"{name}={text!r} is not a number from {low:g} to {high:g}; set one, or unset it for "
                         f"the default {default:g}.")
    return value


def mount(app: FastAPI, master) -> Console:
    """Add the console's routes to the master's app."""
    console = Console(master)
    master.console = console
    keepalive_s = _env_number("STATGRID_CONSOLE_KEEPALIVE_S", KEEPALIVE_S, 0.1, 3600)
    live_rows = int(_env_number("STATGRID_CONSOLE_LIVE_ROWS", SHOWN_MAX_JOBS, 1, SHOWN_MAX_JOBS))
    env = _templates()
    macros = env.get_template("macros.html").module
    console.render_queues = lambda: str(macros.queues_body(data.queues_view(master)))
    import importlib.resources

    static = importlib.resources.files("statgrid.console") / "static"
    app.mount("/console/static", StaticFiles(directory=str(static)), name="console-static")

    def who_of(request: Request) -> Caller:
        return request.scope[auth.CALLER_KEY]

    def render(name: str, request: Request, status: int = 200, **context) -> HTMLResponse:
        who = request.scope.get(auth.CALLER_KEY)
        html = env.get_template(name).render(who=who, m=macros, **context)
        return HTMLResponse(html, status_code=status, headers=page_headers())

    # -- signing in ------------------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    async def root():
        return RedirectResponse("/console/", status_code=303)

    @app.get("/console", include_in_schema=False)
    @app.get("/console/", include_in_schema=False)
    async def home():
        return RedirectResponse("/console/grid", status_code=303)

    @app.get("/console/login", response_class=HTMLResponse)
    async def login_form(request: Request, next: Annotated[str, Query(max_length=2048)] = "/console/grid"):
        return render("login.html", request, title="sign in", next=_local(next), error=None)

    @app.post("/console/login", response_class=HTMLResponse)
    async def login(request: Request):
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=4)
        token = (form.get("token") or [""])[0].strip()
        target = _local((form.get("next") or ["/console/grid"])[0])
        try:
            if not _same_origin(request.headers.get("origin"), request.headers.get("host")):
                raise auth.Forbidden("sign in from the console's own sign-in page (this request came from "
                                     f"{request.headers.get('origin')!r}).")
            who = master.authenticate(None, f"Bearer {token}")
        except (auth.NotAuthenticated, auth.Forbidden) as exc:
            retry_after_s = auth.refused(request.scope, request.app.state.auth_throttle, master.audit, "console login",
                                         str(exc))
            if retry_after_s is not None:
                page = render("login.html", request, status=429, title="sign in", next=target,
                              error=auth.throttled_message(request.scope, retry_after_s, str(exc)))
                page.headers["Retry-After"] = auth.retry_after_header(retry_after_s)
                return page
            return render("login.html", request, status=401, title="sign in", next=target, error=str(exc))
        master.audit.record(who, "console login", detail=f"token {who.token_id}")
        response = RedirectResponse(target, status_code=303, headers=page_headers())
        response.set_cookie(COOKIE, console.sessions.create(who), max_age=COOKIE_MAX_AGE_S, path="/console",
                            httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response

    @app.post("/console/logout")
    async def logout(request: Request):
        session = request.cookies.get(COOKIE)
        if session:
            console.sessions.end(session)
        response = Response(status_code=204, headers={"HX-Redirect": "/console/login"})
        response.delete_cookie(COOKIE, path="/console", httponly=True, samesite="strict",
                               secure=request.url.scheme == "https")
        return response

    # -- views: the page and the JSON behind it -----------------------------------------------------------
    def json_response(record: dict) -> Response:
        # json.dumps straight away: FastAPI's jsonable_encoder walked the charts' 600-point series
        # value by value (26 of 35 ms for a grid of 4 hosts, on the loop).
        return Response(json.dumps(record), media_type="application/json")

    @app.get("/console/api/grid")
    async def grid_json(request: Request):
        return json_response(data.grid_view(master, console))

    @app.get("/console/grid", response_class=HTMLResponse)
    async def grid_page(request: Request):
        return render("grid.html", request, title="grid", view=data.grid_view(master, console), stream="view=grid")

    @app.get("/console/api/queues")
    async def queues_json(request: Request):
        return data.queues_view(master)

    @app.get("/console/queues", response_class=HTMLResponse)
    async def queues_page(request: Request):
        return render("queues.html", request, title="queues", view=data.queues_view(master), stream="view=queues")

    async def jobs_view(who: Caller, user, state, queue, host, sort, order, offset) -> dict[str, Any]:
        from statgrid.grid.master.store import JobFilter

        states = data.jobs_query_state(state or "unfinished")
        if sort not in master.store.SORT_COLUMNS:
            raise UsageError(f"sort {sort!r} is not one of {', '.join(master.store.SORT_COLUMNS)}.")
        flt = JobFilter(states=states, user=user or None, queue=queue or None, host=host or None)
        records, total = await asyncio.to_thread(master.store.listing, flt, sort, order != "asc", offset, PAGE_JOBS,
                                                 None if who.admin else who.user)
        return {"jobs": [data.job_row(master, r) for r in records], "total": total, "offset": offset,
                "limit": PAGE_JOBS, "filters": {"user": user or "", "state": state or "unfinished",
                                                "queue": queue or "", "host": host or "", "sort": sort,
                                                "order": order}}

    def jobs_params(user: Filter = None, state: Filter = None, queue: Filter = None, host: Filter = None,
                    sort: Annotated[str, Query(max_length=16)] = "id",
                    order: Annotated[str, Query(pattern="^(asc|desc)$")] = "desc",
                    offset: Annotated[int, Query(ge=0, le=10**9)] = 0):
        return user, state, queue, host, sort, order, offset

    @app.get("/console/api/jobs")
    async def jobs_json(request: Request, params=Depends(jobs_params)):
        return await jobs_view(who_of(request), *params)

    @app.get("/console/jobs", response_class=HTMLResponse)
    async def jobs_page(request: Request, params=Depends(jobs_params)):
        view = await jobs_view(who_of(request), *params)
        f = view["filters"]
        query = {k: v for k, v in f.items() if v}
        stream = urllib.parse.urlencode({"view": "jobs", **query, "offset": view["offset"], "total": view["total"],
                                         "ids": ",".join(str(j["id"]) for j in view["jobs"])})
        return render("jobs.html", request, title="jobs", view=view, stream=stream, query=query,
                      states=["unfinished", *SHOWN_NAMES, "all"],
                      queues=list(master.cfg.queues), hosts=list(master.cfg.hosts))

    async def job_view(who: Caller, job_id: int) -> dict[str, Any]:
        view = data.job_view(master, who, job_id)                  # memory and the store: on the loop
        if view["detail"]:
            await asyncio.to_thread(data.job_files_view, master, view)   # the user's files: off it
        return view

    @app.get("/console/api/jobs/{job_id}")
    async def job_json(request: Request, job_id: JobId):
        view = await job_view(who_of(request), job_id)
        return {**view, "usage_charts": data.usage_chart(job_id, view["usage"])}

    @app.get("/console/jobs/{job_id}", response_class=HTMLResponse)
    async def job_page(request: Request, job_id: JobId):
        view = await job_view(who_of(request), job_id)
        stream = urllib.parse.urlencode({"view": "job", "id": job_id, "log_from": view["log_offset"]})
        return render("job.html", request, title=f"job {job_id}", view=view, stream=stream,
                      charts=data.usage_chart(job_id, view["usage"]) if view["detail"] else [])

    @app.get("/console/api/hosts/{host}")
    async def host_json(request: Request, host: HostName):
        master.check_host(host)
        return json_response(data.host_view(master, console, host))

    @app.get("/console/hosts/{host}", response_class=HTMLResponse)
    async def host_page(request: Request, host: HostName):
        master.check_host(host)
        return render("host.html", request, title=f"host {host}", view=data.host_view(master, console, host),
                      stream=urllib.parse.urlencode({"view": "host", "host": host}))

    @app.get("/console/api/results")
    async def results_json(request: Request):
        return {"results": await asyncio.to_thread(data.results, master)}

    @app.get("/console/results", response_class=HTMLResponse)
    async def results_page(request: Request):
        return render("results.html", request, title="results", results=await asyncio.to_thread(data.results, master),
                      stream="view=results")

    @app.get("/console/files/{relative:path}")
    async def result_file(relative: Annotated[str, Path(max_length=1024)]):
        try:
            body = await asyncio.to_thread(data.result_file, master, relative)
        except (OSError, ValueError):                  # missing, not the grid's, a link, a NUL in the path
            return HTMLResponse("<p>No such report.</p>", status_code=404, headers=page_headers())
        return HTMLResponse(body, headers={"Content-Security-Policy": REPORT_CSP, "X-Content-Type-Options": "nosniff",
                                           "Cache-Control": "no-store"})

    # -- actions -------------------------------------------------------------------------------------------
    def flash(text: str, ok: bool = True) -> HTMLResponse:
        return HTMLResponse(str(macros.flash(text, ok)), headers=page_headers())

    @app.post("/console/jobs/{job_id}/kill")
    async def kill(request: Request, job_id: JobId):
        who = who_of(request)
        try:
            job = await master.kill(job_id, who)
        except StatgridError as exc:
            master.audit.record(who, "kill", f"job {job_id}", outcome="refused", detail=str(exc))
            return flash(str(exc), ok=False)
        master.audit.record(who, "kill", f"job {job_id}", detail="console")
        return flash(f"job {job_id}: {'kill requested' if job.state.value == 'RUN' else job.state.value}")

    @app.post("/console/hosts/{host}/close")
    async def close(request: Request, host: HostName):
        who = who_of(request)
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=4)
        reason = (form.get("reason") or [""])[0].strip()
        try:
            from statgrid.grid.master.jobspec import check_name

            check_name("reason", reason, "give a shorter reason, printable characters only")
            master.close_host(host, who, reason)
        except StatgridError as exc:
            master.audit.record(who, "host close", f"host {host}", outcome="refused", detail=str(exc))
            return flash(str(exc), ok=False)
        master.audit.record(who, "host close", f"host {host}", detail=reason or None)
        return flash(f"host {host} closed")

    @app.post("/console/hosts/{host}/open")
    async def open_(request: Request, host: HostName):
        who = who_of(request)
        try:
            master.open_host(host, who)
        except StatgridError as exc:
            master.audit.record(who, "host open", f"host {host}", outcome="refused", detail=str(exc))
            return flash(str(exc), ok=False)
        master.audit.record(who, "host open", f"host {host}")
        return flash(f"host {host} opened")

    # -- the live stream -----------------------------------------------------------------------------------
    @app.get("/console/stream")
    async def stream(request: Request, view: Annotated[str, Query(pattern="^(grid|queues|jobs|job|host|results)$")],
                     id: Annotated[int, Query(ge=0, le=JOB_ID_MAX)] = 0, host: Filter = None,
                     user: Filter = None, state: Filter = None, queue: Filter = None,
                     sort: Annotated[str, Query(max_length=16)] = "id",
                     order: Annotated[str, Query(max_length=4)] = "desc",
                     offset: Annotated[int, Query(ge=0)] = 0,
                     ids: Annotated[str, Query(max_length=PAGE_JOBS * 21)] = "",
                     total: Annotated[int, Query(ge=0, le=JOB_ID_MAX)] = 0,
                     log_from: Annotated[int, Query(ge=0)] = 0):
        who = who_of(request)
        viewer = _Viewer(master, console, env, macros, who, view, id, host, user, state, queue, sort, order, offset,
                         ids, log_from, total, live_rows)
        viewer.check()
        session = request.cookies.get(COOKIE) if request.scope.get(auth.PEER_UID_KEY) is None \
            and not request.headers.get("authorization") else None

        async def body():
            # Subscribed here, in the generator, so that the finally below always undoes it.
            # Each view takes only the feeds it shows: a feed it ignored would wake it for nothing.
            sub = Subscription()
            master.events.subscribe(sub)
            feeds = [console.samples] if view in ("grid", "host") else [console.live] if view == "queues" else []
            for feed in feeds:
                feed.subscribe(sub)
            watch = viewer.begin(sub)
            console.queues_viewers += view == "queues"
            checked = time.monotonic()
            beat = checked + keepalive_s
            try:
                yield b": statgrid console\n\n"
                for chunk in await viewer.catch_up():
                    yield chunk
                while True:
                    event = await sub.next(max(0.05, beat - time.monotonic()))
                    now = time.monotonic()
                    if session is not None and now - checked > SESSION_CHECK_S:
                        checked = now
                        if console.sessions.caller(session) is None:
                            return                                   # signed out, expired or token revoked
                    # On time whatever arrives: events this viewer does not show write nothing, and a
                    # steady flow of them used to hold the keep-alive back for good (issue 24).
                    if now >= beat:
                        beat = now + keepalive_s
                        yield b": keep-alive\n\n"
                    if event is None:
                        continue
                    if event["type"] == "end":
                        return
                    for chunk in await viewer.on(event):
                        yield chunk
            finally:
                master.events.unsubscribe(sub)
                for feed in feeds:
                    feed.unsubscribe(sub)
                viewer.end(sub, watch)
                console.queues_viewers -= view == "queues"

        return StreamingResponse(body(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    return console


def _local(target: str) -> str:
    """A redirect target of this console only (never another site: `//evil`, `https://…`)."""
    if not target.startswith("/console/") or target.startswith("//") or "\\" in target:
        return "/console/grid"
    return target


def _same_origin(origin: str | None, host: str | None) -> bool:
    """True when the browser sent no Origin, or the Origin names this master (its Host): for
    sign-ins here and for changes made with the cookie (statgrid/webapp.py's _check_same_origin)."""
    from urllib.parse import urlsplit

    return origin is None or urlsplit(origin).netloc == (host or "")


class _Viewer:
    """One console stream: which events its page shows, as which fragments."""

    def __init__(self, master, console: Console, env, macros, who: Caller, view: str, job_id: int, host, user, state,
                 queue, sort, order, offset, ids: str, log_from: int, total: int = 0,
                 live_rows: int = SHOWN_MAX_JOBS):
        self.master, self.console, self.env, self.macros, self.who = master, console, env, macros, who
        self.view, self.job_id, self.host = view, job_id, host
        self.filters = {"user": user or None, "queue": queue or None, "host": host if view == "jobs" else None}
        self.states = data.jobs_query_state(state or "unfinished") if view == "jobs" else None
        self.newest_first = sort == "id" and order == "desc" and offset == 0
        self.shown: set[int] = {int(x) for x in ids.split(",") if x.strip().isdigit()} if ids else set()
        self.oldest_shown = sorted(self.shown)          # a heap: the row at the bottom of the list first
        self.live_rows = live_rows
        self.matching = total                           # jobs the list's filters match: at load, + submitted since
        self.dropped = 0                                # rows pushed off the bottom by newer ones
        self.log_pos = log_from
        self.detail = False
        self.owner_uid: int | None = None
        self.output: FilePath | None = None             # the job's output.txt (job view, with detail)
        self.attempt = 0

    def check(self) -> None:
        if self.view == "job":
            job = self.master.get(self.job_id).to_dict()           # NotFound → 404
            self.detail = data.can_act(self.who, job["user"])
            if self.detail:
                directory, self.owner_uid = data.job_files(self.master, job)
                self.detail = self.owner_uid is not None
                self.output, self.attempt = JobDir(directory).output, job["attempt"]
        if self.view == "host" and self.host is not None:
            self.master.check_host(self.host)

    def begin(self, sub: Subscription):
        """Watch the job's output and usage (job view, owner or administrator): its own hub."""
        if self.view != "job" or not self.detail:
            return None
        from statgrid.grid.master.core import attempts_dir

        watch = self.console.watches.add(self.job_id, self.output, self.owner_uid,
                                         usage_path(attempts_dir(self.master.cfg), self.job_id, self.attempt or 1))
        watch.hub.subscribe(sub)
        return watch

    def end(self, sub: Subscription, watch) -> None:
        if watch is not None:
            watch.hub.unsubscribe(sub)
            self.console.watches.remove(self.job_id)

    async def catch_up(self) -> list[bytes]:
        """What the job's output gained between the page's load and this stream's start."""
        if self.view != "job" or not self.detail:
            return []
        return await asyncio.to_thread(self._read_log_gap, None)

    def _read_log_gap(self, upto: int | None) -> list[bytes]:
        """The output from this stream's position to `upto` (its size now), LOG_PAGE_BYTES at most:
        a larger gap is skipped, and said (the size is the user's to choose: a sparse file of
        terabytes costs them nothing, and must not cost the master its memory). Runs in a thread:
        files only, nothing of the master's (its store connection is the loop's)."""
        path = self.output
        end = output_size(path) if upto is None else upto
        if end <= self.log_pos:
            self.log_pos = min(self.log_pos, end)
            return []
        out = []
        if end - self.log_pos > LOG_PAGE_BYTES:
            skipped = end - LOG_PAGE_BYTES - self.log_pos
            out.append(sse("log", f"\n[… {skipped:,} bytes not shown …]\n"))
            self.log_pos = end - LOG_PAGE_BYTES
        try:
            chunk = read_output(path, self.log_pos, end - self.log_pos, self.owner_uid)
        except (NotTrusted, OSError):
            return out
        self.log_pos += len(chunk)
        if chunk:
            out.append(sse("log", str(escape(chunk.decode(errors="replace")))))
        return out

    def _host_row(self, event: dict, host: str) -> bytes | None:
        if host not in self.master.cfg.hosts:
            return None

        def make():
            row = next(r for r in data.host_rows(self.master, self.console) if r["host"] == host)
            return self.macros.host_row(row, self.who.admin)
        return sse(f"host-{host}", self.console.fragment(event, ("host-row", host, self.who.admin), make))

    def _shown_new(self, job_id: int) -> list[bytes]:
        """A new row is on top: past live_rows the oldest leave the bottom (an empty fragment in
        place of a row removes it) and the page says how many of how many it shows."""
        self.shown.add(job_id)
        heapq.heappush(self.oldest_shown, job_id)
        self.matching += 1
        out = []
        while len(self.shown) > self.live_rows:
            oldest = heapq.heappop(self.oldest_shown)
            self.shown.discard(oldest)
            self.dropped += 1
            out.append(sse(f"job-{oldest}", ""))
        if self.dropped:
            out.append(sse("jobs-capped", str(self.macros.jobs_capped(len(self.shown), self.matching))))
        return out

    def _matches(self, job: dict) -> bool:
        if self.states is not None and job["state"] not in {s.value for s in self.states}:
            return False
        return all(v is None or job.get(k) == v for k, v in self.filters.items())

    async def on(self, event: dict) -> list[bytes]:
        kind, view, out = event["type"], self.view, []
        fragment = self.console.fragment
        if kind == "resync":
            return [sse("resync", "")]
        if kind == "job":
            job = event["job"]
            if view == "jobs":
                mine = data.can_act(self.who, job["user"])

                def row():
                    return self.macros.job_row(data.job_row(self.master, job), mine)
                if job["id"] in self.shown:
                    out.append(sse(f"job-{job['id']}", fragment(event, ("job-row", mine), row)))
                elif event.get("event") == "submit" and self.newest_first and self._matches(job):
                    out.append(sse("job-new", fragment(event, ("job-row", mine), row)))
                    out += self._shown_new(job["id"])
            elif view == "job" and job["id"] == self.job_id:
                def header():
                    record = {**job, "stimer": job["stimer"] if self.detail else None}
                    return self.macros.job_header({"job": data.job_row(self.master, record), "detail": self.detail,
                                                   "can_kill": self.detail and record["state"] in data.UNFINISHED})
                out.append(sse(f"job-{job['id']}", fragment(event, ("job-header", self.detail), header)))
            elif view == "grid":
                if job.get("host") and event.get("event") != "submit":
                    row = self._host_row(event, job["host"])
                    if row:
                        out.append(row)
                out.append(sse("grid-summary", fragment(event, ("grid-summary",), lambda: self.macros.grid_summary(
                    data.grid_summary(self.master)))))
            elif view == "host" and job.get("host") == self.host and event.get("event") != "submit":
                row = self._host_row(event, self.host)
                if row:
                    out.append(row)

                def running():
                    return self.macros.running_rows(sorted((j.to_dict() for j in self.master.running.values()
                                                            if j.host == self.host), key=lambda r: r["id"]))
                out.append(sse("host-running", fragment(event, ("host-running", self.host), running)))
        elif kind == "host":
            if view == "grid" or (view == "host" and event["host"] == self.host):
                row = self._host_row(event, event["host"])
                if row:
                    out.append(row)
        elif kind == "queues" and view == "queues":
            out.append(sse("queues", event["html"]))
        elif kind == "sample":
            if view == "grid" or (view == "host" and event["host"] == self.host):
                out.append(sse("sample", fragment(event, ("sample",),
                                                  lambda: json.dumps({"host": event["host"], **event["sample"]}))))
        elif kind == "log" and event["job"] == self.job_id:        # only a watcher's hub sends these
            start, chunk = event["offset"], event["data"]
            if start > self.log_pos:                       # this stream missed a part: read it itself
                out += await asyncio.to_thread(self._read_log_gap, start)
            if start + len(chunk) > self.log_pos >= start:
                piece = chunk[self.log_pos - start:]
                self.log_pos += len(piece)
                out.append(sse("log", str(escape(piece.decode(errors="replace")))))
        elif kind == "usage" and event["job"] == self.job_id:
            out.append(sse("usage", json.dumps({"job": self.job_id, **event["point"]})))
        return out
