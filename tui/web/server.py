"""The web server of `murmur-tui fleet --web` (docs/fleet.md, "In a browser"): textual-serve's
page, its JavaScript terminal and its per-tab app process, behind murmur-tui's own links.

textual-serve has no notion of who asks: its `Server` answers `/` and spawns an app for every
websocket. Here the same parts (`AppService`, its page template and static files) are served
by an aiohttp app of murmur-tui's, where every path starts with the link it came by:

- `/<full-token>/…` — the fleet with the operator's tokens; on a loopback bind with no token,
  `/…` (as the door on loopback needs none);
- `/<watch-token>/…` — the read-only fleet, holding each session's `watcher` credential.

Anything else is a 403 page, and no app process is started. The tokens are compared in
constant time, never logged (no access log; the token is registered with the redaction), and
each response asks the browser to send no `Referer` and to be framed by no other page. A
websocket must come from the page's own origin (another site's script cannot drive the fleet
through the user's browser), and on a loopback bind the `Host` must be a loopback name (a
DNS-rebinding page cannot reach it either).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import shlex
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import jinja2
import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from tui.web import DRIVER, LINK_ENV

MAX_CELLS = 1000  # a page's width or height at most (a larger one: the default)
MAX_TABS = 8  # app processes at once: each is a fleet watching every session
QUIT_SECONDS = 5.0  # an app process told to quit is killed after this long
PACKAGE = Path(textual_serve.__file__).parent
REFUSED_PAGE = """<!DOCTYPE html>
<html><head><title>murmur-tui fleet</title></head>
<body><h1>This link needs its token</h1>
<p>Open the link <code>murmur-tui fleet --web</code> printed when it started.</p></body></html>
"""
HEADERS = {"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
           "Content-Security-Policy": "frame-ancestors 'none'", "Cache-Control": "no-store",
           "X-Content-Type-Options": "nosniff"}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Links:
    """The tokens of the two links: `full` is None on a loopback bind (its path is `/`)."""

    full: str | None
    watch: str


class ServedApp(AppService):
    """One browser tab's fleet process: murmur-tui's driver, and which link opened it."""

    def __init__(self, command: str, link: str, **parts: object) -> None:
        super().__init__(command, **parts)  # type: ignore[arg-type]
        self.link = link

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment["TEXTUAL_DRIVER"] = DRIVER
        environment[LINK_ENV] = self.link
        return environment

    async def end(self) -> None:
        """Tell the process to quit, and kill it when it has not ended within QUIT_SECONDS.
        (Not before: a kill polls the process first and would reap it behind asyncio's
        child watcher, which then says the process is unknown.)"""
        process = self._process
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.stop(), QUIT_SECONDS)
        if process is None:
            return
        try:
            await asyncio.wait_for(process.wait(), QUIT_SECONDS)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()


class WebFleet:
    def __init__(self, sock: socket.socket, links: Links, theme: str | None = None,
                 hosts: list[str] | None = None) -> None:
        self.sock = sock
        self.links = links
        self.loopback = is_loopback(sock.getsockname()[0])
        argv = [sys.executable, "-m", "tui", "fleet", *(["--theme", theme] if theme else []),
                *(hosts or [])]
        self.command = shlex.join(argv)
        self.tabs: set[ServedApp] = set()
        self.template = jinja2.Environment(
            loader=jinja2.FileSystemLoader(PACKAGE / "templates"), autoescape=True,
        ).get_template("app_index.html")
        self.statics = (PACKAGE / "static").resolve()

    # -- the application ----------------------------------------------------------------------
    def application(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        app.router.add_get("/{path:.*}", self._dispatch)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as exc:  # answered as a response of its own (aiohttp no
            response = web.Response(status=exc.status, reason=exc.reason,  # longer takes
                                    text=exc.text, headers=exc.headers)  # one returned)
        response.headers.update(HEADERS)
        return response

    def which(self, path: str) -> tuple[str, str] | None:
        """(the link, the rest of the path) for a request path, or None: refused."""
        head, _, rest = path.lstrip("/").partition("/")
        given = head.encode()
        if hmac.compare_digest(given, self.links.watch.encode()):
            return "watch", rest
        if self.links.full is not None:
            if hmac.compare_digest(given, self.links.full.encode()):
                return "full", rest
            return None
        return "full", path.lstrip("/")

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        if self.loopback and not _loopback_host(request.host):
            return _refused(421)  # a name that is not this machine's: a rebinding page
        found = self.which(request.path)
        if found is None:
            return _refused(403)
        link, rest = found
        prefix = request.path[: len(request.path) - len(rest)].rstrip("/")
        if rest == "" and not request.path.endswith("/"):
            raise web.HTTPFound(f"{prefix}/")
        if rest == "":
            return self._page(request, prefix)
        if rest == "ws":
            return await self._tab(request, link)
        if rest.startswith("static/"):
            return self._static(rest.removeprefix("static/"))
        raise web.HTTPNotFound(text="not found")

    def _page(self, request: web.Request, prefix: str) -> web.Response:
        secure = request.headers.get("X-Forwarded-Proto", request.scheme) == "https"
        origin = f"{'https' if secure else 'http'}://{request.host}{prefix}"
        html = self.template.render(
            font_size=16, app_websocket_url=f"{'wss' if secure else 'ws'}://{request.host}"
                                            f"{prefix}/ws",
            config={"static": {"url": f"{origin}/static/"}},
            application={"name": "murmur-tui fleet"})
        return web.Response(text=html, content_type="text/html")

    def _static(self, name: str) -> web.StreamResponse:
        path = (self.statics / name).resolve()
        if not path.is_relative_to(self.statics) or not path.is_file():
            raise web.HTTPNotFound(text="not found")
        return web.FileResponse(path)

    async def _tab(self, request: web.Request, link: str) -> web.StreamResponse:
        """A browser tab's websocket: its own fleet process, while the tab is open."""
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            return _refused(403)  # another site's page, through the user's browser
        if sum(1 for tab in self.tabs if tab.link == link) >= MAX_TABS:  # each link its own:
            # the read-only link's holders cannot take the operator's pages
            raise web.HTTPServiceUnavailable(text=f"{MAX_TABS} fleet pages are open already")
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        tab = ServedApp(self.command, link, write_bytes=websocket.send_bytes,
                        write_str=websocket.send_str, close=websocket.close,
                        download_manager=DownloadManager())
        self.tabs.add(tab)
        try:
            width, height = _size(request.query.get("width"), 80), \
                _size(request.query.get("height"), 24)
            await tab.start(width, height)
            await _relay(websocket, tab)
        finally:
            self.tabs.discard(tab)
            await tab.end()
        return websocket

    # -- running --------------------------------------------------------------------------------
    async def run(self, ready: Callable[[], None]) -> None:
        """Serve until SIGINT or SIGTERM; every tab's process is ended before returning."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for each in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(each, stop.set)
        runner = web.AppRunner(self.application(), access_log=None, handle_signals=False)
        await runner.setup()
        await web.SockSite(runner, self.sock).start()
        ready()
        try:
            await stop.wait()
        finally:
            await asyncio.gather(*(tab.end() for tab in list(self.tabs)))
            await runner.cleanup()


async def _relay(websocket: web.WebSocketResponse, tab: ServedApp) -> None:
    """What the page sends, to the tab's process (textual-serve's envelope)."""
    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            envelope = message.json()
        except ValueError:
            continue
        if not isinstance(envelope, list) or not envelope:
            continue
        kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
        if kind == "stdin" and isinstance(data, str):
            await tab.send_bytes(data.encode("utf-8"))
        elif kind == "resize" and isinstance(data, dict):
            width, height = _size(data.get("width"), 0), _size(data.get("height"), 0)
            if width and height:
                await tab.set_terminal_size(width, height)
        elif kind == "ping":
            await websocket.send_json(["pong", data])
        elif kind in ("blur", "focus"):
            await (tab.blur() if kind == "blur" else tab.focus())


def _size(value: object, default: int) -> int:
    """A page's width or height in cells: 1 to MAX_CELLS, else `default`."""
    size = _number(value, default)
    return size if 0 < size <= MAX_CELLS else default


def _number(value: object, default: int) -> int:
    try:
        return int(str(value)) if value is not None else default
    except ValueError:
        return default


def _refused(status: int) -> web.Response:
    return web.Response(status=status, text=REFUSED_PAGE, content_type="text/html")


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _loopback_host(host: str) -> bool:
    """A `Host` header naming this machine: a loopback address or `localhost`."""
    name = urlsplit(f"//{host}").hostname or ""
    return name == "localhost" or is_loopback(name)
