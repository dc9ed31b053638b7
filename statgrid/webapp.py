"""The master's web app, assembled in one place: the API (grid/interface/api.py), the console
(console/app.py) mounted beside it, and the gate in front of both that says who is asking — a
token, the local socket's peer uid, or the console's sign-in cookie. It stands above grid and
console so that neither imports the other; the server (grid/interface/server.py) is handed
create_app and serves whatever it builds.
"""
from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import RedirectResponse

from statgrid.config import Config
from statgrid.console.app import COOKIE, mount
from statgrid.console.app import _same_origin as same_origin
from statgrid.grid.interface import api, server
from statgrid.grid.interface.answers import HttpMiddleware, error_response as _error
from statgrid.grid.master.core import Master
from statgrid.grid.security import auth
from statgrid.grid.security.auth import Forbidden, NotAuthenticated


def create_app(master: Master, on_down=None, on_stopped=None, stop_engine=lambda: True) -> FastAPI:
    """The API with the console mounted, behind the gate (see api.create_app for the arguments)."""
    app = api.create_app(master, _Authenticate, on_down=on_down, on_stopped=on_stopped, stop_engine=stop_engine)
    mount(app, master)
    return app


def serve(cfg: Config, ready_message: bool = True) -> None:
    """Run the master with this web app in this process (server.serve)."""
    server.serve(cfg, create_app, ready_message=ready_message)


class _Authenticate(HttpMiddleware):
    """Who is asking, before anything reads the request: the local socket's peer uid (set by the
    server's protocol), a bearer token, or on /console paths the console's sign-in cookie. Refused: 401 (no or bad credential) or 403 (a personal
    grid's stranger), recorded in the audit trail; 429 once the client has failed too often
    (auth.Throttle). GET /health alone passes without a caller."""

    def __init__(self, app, master: Master, throttle: auth.Throttle):
        super().__init__(app)
        self.master = master
        self.throttle = throttle

    async def http(self, scope, receive, send) -> None:
        headers = dict(scope.get("headers") or ())
        path, method = scope["path"], scope["method"]
        console = path == "/console" or path.startswith("/console/")
        authorization = headers.get(b"authorization", b"").decode("latin-1")
        cookie = _console_cookie(headers) if console and not authorization else None
        try:
            if cookie is not None and scope.get(auth.PEER_UID_KEY) is None:
                caller = self.master.console.sessions.caller(cookie)
                if caller is None:
                    raise NotAuthenticated("your console sign-in has ended (signed out, expired after 12 h, the master "
                                           "restarted, or its token was revoked): sign in again at /console/login.")
                if method not in ("GET", "HEAD"):
                    _check_same_origin(headers)      # the cookie rides along on a forged request; these don't
            else:
                caller = self.master.authenticate(scope.get(auth.PEER_UID_KEY), authorization)
        except (NotAuthenticated, Forbidden) as exc:
            if (method == "GET" and path in ANONYMOUS_PATHS) or (console and path in CONSOLE_ANONYMOUS) \
                    or path.startswith("/console/static/"):
                caller = None
            elif console and method == "GET" and isinstance(exc, NotAuthenticated) and path != "/console/stream" \
                    and not path.startswith("/console/api/"):                   # a page: to the sign-in page
                from urllib.parse import quote

                target = path + ("?" + scope["query_string"].decode("latin-1") if scope.get("query_string") else "")
                await RedirectResponse("/console/login?next=" + quote(target, safe=""),
                                       status_code=303)(scope, receive, send)
                return
            else:
                retry_after_s = auth.refused(scope, self.throttle, self.master.audit, f"{method} {path}", str(exc))
                if retry_after_s is not None:
                    await _error(auth.throttled_message(scope, retry_after_s, str(exc)), 429, usage=False,
                                 headers={"Retry-After": auth.retry_after_header(retry_after_s)})(scope, receive, send)
                    return
                status = 401 if isinstance(exc, NotAuthenticated) else 403
                await _error(str(exc), status, usage=False,
                             headers={"WWW-Authenticate": "Bearer"} if status == 401 else None)(scope, receive, send)
                return
        scope[auth.CALLER_KEY] = caller
        await self.app(scope, receive, send)


ANONYMOUS_PATHS = ("/health", "/")
CONSOLE_ANONYMOUS = ("/console", "/console/", "/console/login")


def _console_cookie(headers: dict[bytes, bytes]) -> str | None:
    """The console's sign-in cookie (console/app.py: a session id, never the token), if any."""
    from http.cookies import CookieError, SimpleCookie

    raw = headers.get(b"cookie")
    if not raw:
        return None
    try:
        jar = SimpleCookie(raw.decode("latin-1"))
    except CookieError:
        return None
    return jar[COOKIE].value if COOKIE in jar else None


def _check_same_origin(headers: dict[bytes, bytes]) -> None:
    """A change made with the console's cookie must come from the console's own page: htmx's
    HX-Request header (a form or link of another site cannot send it; a script of another site
    cannot send it without a CORS preflight this master never allows) and, when the browser says
    where the request comes from, this master's origin."""
    if headers.get(b"hx-request") != b"true":
        raise Forbidden("a change through the console must come from the console's page (it sends HX-Request); "
                        "from a script use the API with a token (Authorization: Bearer).")
    origin = headers.get(b"origin")
    if not same_origin(None if origin is None else origin.decode("latin-1"), headers.get(b"host", b"").decode("latin-1")):
        raise Forbidden(f"the request comes from {origin.decode('latin-1')!r}, not from this console's page; "
                        "nothing was changed.")
