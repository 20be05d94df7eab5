"""`murmur-tui fleet --web [HOST:PORT]`: the fleet served as a web page (docs/fleet.md, "In a
browser"). Binds, mints the links' tokens, prints the links once on stdout, and serves until
Ctrl+C (tui/web/server.py). aiohttp and textual-serve are imported here only."""

from __future__ import annotations

import asyncio
import secrets
import socket
import sys

from tui.core.errors import WebRefused


def parse_bind(text: str) -> tuple[str, int]:
    """The places `--serve` takes (tui/core/door)."""
    from tui.core.door import parse_bind as door_bind

    return door_bind(text, "--web", WebRefused)


def bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise WebRefused(f"--web {host}:{port}: {host!r} is not an address of this machine "
                         f"({exc})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise WebRefused(f"--web {host}:{port}: cannot listen there: "
                         f"{exc.strerror or exc}") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


def links_of(sock: socket.socket, full: str | None, watch: str) -> list[tuple[str, str]]:
    """The two links to print: (what it gives, URL)."""
    bound = sock.getsockname()
    host, port = str(bound[0]), int(bound[1])
    if host in ("0.0.0.0", "::"):  # every address: name the machine
        host = socket.gethostname()
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    return [("full", f"{base}/{full}/" if full else f"{base}/"),
            ("read-only (the sessions' watcher credential)", f"{base}/{watch}/")]


def serve(where: str, theme: str | None, hosts: list[str] | None = None) -> int:
    """`hosts`: the `--host`/`--token-file` arguments each browser tab's fleet gets again."""
    from tui.core.text.secrets import remember
    from tui.web.server import Links, WebFleet, is_loopback

    host, port = parse_bind(where)
    sock = bind(host, port)
    loopback = is_loopback(str(sock.getsockname()[0]))
    full = None if loopback else secrets.token_urlsafe(32)
    watch = secrets.token_urlsafe(32)
    for token in filter(None, (full, watch)):
        remember(token)  # never in a log, a trace or an error
    fleet = WebFleet(sock, Links(full, watch), theme, hosts or [])

    def ready() -> None:
        bound = sock.getsockname()
        lines = [f"murmur-tui fleet: serving on {bound[0]}:{bound[1]} (Ctrl+C stops it)"]
        lines += [f"  {what}: {url}" for what, url in links_of(sock, full, watch)]
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()

    try:
        asyncio.run(fleet.run(ready))
    finally:
        sock.close()
    return 0
