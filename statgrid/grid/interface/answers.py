"""How the master's web app answers what no route answers: errors as {"error": message, "usage":
bool}, pydantic's and the JSON reader's complaints turned into one line naming the parameter and its
value, any fault as a 500 whose traceback goes to the master's log only, a full grid home as a 503
naming its file system (diskfull.py), and a request body over the cap refused before it is read.
The API (api.py) and the gate in front of API and console (statgrid.webapp) share these.
"""
from __future__ import annotations

import logging
from pathlib import Path as FilePath
from typing import Any

from fastapi.responses import JSONResponse

from statgrid.grid.interface import diskfull
from statgrid.grid.master.jobspec import shown

log = logging.getLogger("statgrid.api")      # the API's logger name, as before the split


def error_response(message: str, status: int, usage: bool, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "usage": usage}, status_code=status, headers=headers)


_WHERE = {"path": "path parameter", "query": "query parameter", "body": "body field"}


def validation_message(errors: list[dict[str, Any]]) -> str:
    """Pydantic's errors as one line: each parameter named, with its value and what it should be."""
    parts = []
    for err in errors[:3]:
        loc = [str(x) for x in err.get("loc", ())]
        where = _WHERE.get(loc[0], loc[0]) if loc else "request"
        name = ".".join(loc[1:])
        if err.get("type") == "json_invalid":
            parts.append(f"the body is not valid JSON ({err.get('ctx', {}).get('error', err.get('msg'))})")
        elif err.get("type") == "missing":
            parts.append(f"{where} {name!r} is missing")
        else:
            parts.append(f"{where} {name + ' ' if name else ''}= {shown(err.get('input'))}: {err.get('msg')}")
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(parts) + more + "; see the API in README.md ('The grid')."


def body_error_message(cause: BaseException) -> str:
    """Why a JSON body could not be read (FastAPI says only "There was an error parsing the body")."""
    import sys

    if isinstance(cause, UnicodeDecodeError):
        return (f"the body is not UTF-8 text: byte {cause.start} (0x{cause.object[cause.start]:02x}) cannot be decoded; "
                "send JSON in UTF-8 (RFC 8259 §8.1).")
    if isinstance(cause, RecursionError):
        return (f"the body nests arrays or objects deeper than the API reads (Python's recursion limit, "
                f"{sys.getrecursionlimit():,} levels); a request nests a few levels: send one of README.md's shapes.")
    if isinstance(cause, ValueError) and "integer string conversion" in str(cause):
        return (f"the body holds a number of more than {sys.get_int_max_str_digits():,} digits (Python's "
                "int_max_str_digits); no field takes such a number: send the value in range.")
    return f"the body could not be read as JSON ({type(cause).__name__}: {shown(str(cause), 200)})."


class HttpMiddleware:
    """An ASGI middleware of HTTP requests: `http(scope, receive, send)` sees each one; anything else (the
    server's lifespan) goes to the app untouched."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope, receive, send) -> None:
        raise NotImplementedError


class FaultsAs500(HttpMiddleware):
    """Any exception no handler took → 500 {"error", "usage": false} naming it; the traceback
    goes to the master's log (before the answer), never to the client. A full file system is no
    fault of the master's: 503 naming it (diskfull.py). (Starlette's own 500 is
    plain text, and its exception_handler(Exception) logs only after answering.)"""

    def __init__(self, app, log_path: FilePath, home: FilePath):
        super().__init__(app)
        self.log_path = log_path
        self.home = home

    async def http(self, scope, receive, send) -> None:
        started = False

        async def send_(message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_)
        except Exception as exc:
            log.exception("%s %s failed", scope["method"], scope["path"])
            if started:
                raise                                # too late to answer: the server closes it
            if diskfull.is_disk_full(exc):
                await error_response(diskfull.message(self.home, f"{scope['method']} {scope['path']}"), 503, usage=False,
                             headers={"Retry-After": str(diskfull.RETRY_AFTER_S)})(scope, receive, send)
                return
            await error_response(f"internal error of the master on {scope['method']} {scope['path']}: {type(exc).__name__}: "
                         f"{shown(str(exc), 200)}; the traceback is in the master's log ({self.log_path} when "
                         "started with --detach).", 500, usage=False)(scope, receive, send)


class BodyLimit(HttpMiddleware):
    """413 {"error"} for a request body over max_bytes, by its Content-Length or, when it is sent
    in chunks, as soon as the bytes read pass the limit."""

    def __init__(self, app, max_bytes: int):
        super().__init__(app)
        self.max_bytes = max_bytes

    def _refuse(self, size: str):
        return error_response(f"the request body ({size}) is over the API's limit of {self.max_bytes // 2**20} MiB; a job's "
                      "command and environment may be 64 KiB each: put large settings in a file.", 413, usage=True)

    async def http(self, scope, receive, send) -> None:
        length = dict(scope.get("headers") or ()).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_bytes:
            await self._refuse(f"{int(length):,} bytes")(scope, receive, send)
            return
        seen = 0
        refused = False

        async def counted():
            # Past the limit: answer 413 here, at once, and tell the app the client went away; what
            # the app sends after that is dropped (an exception raised here would be taken by the
            # body parser for a malformed body and answered 400).
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                refused = True
                await self._refuse(f"over {self.max_bytes:,} bytes, sent in chunks")(scope, receive, send)
                return {"type": "http.disconnect"}
            return message

        async def send_(message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, counted, send_)
