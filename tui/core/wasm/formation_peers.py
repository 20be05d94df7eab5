"""A formation member's callees as its components see them (spec murmur-newest §7.5).

Every WebAssembly component of a member that may call someone gets
`MURMUR_FORMATION_PEERS="coder=http://coder.formation.invalid reviewer=http://reviewer.formation.invalid"`
(its callees, roster order). A wasi:http request to `http://<callee>.formation.invalid[/path]`
is the runtime's to carry: the gate (`http_gate.py`) refuses it unless the component's
`capabilities.network.allow` names `localhost` and `<callee>` is one of the member's callees,
then points the very request at this relay — a loopback listener of this process, the path
prefixed with a secret the guest never sees (it hands the request over before it is rewritten)
and the callee's name. The relay drops the guest's `Authorization`, `x-murmur-task-origin` and
`x-murmur-task-trust`, adds `Authorization: Bearer <the edge's mft1 token>` and
`x-murmur-task-origin: peer`, sends it to the callee's real door (the URL the launcher sent on
the formation channel) and passes the answer back as it is. The token never reaches the guest,
and a request to the listener without the secret is answered 404 and goes nowhere.

wasi:http's outgoing headers cannot be changed once the request exists (they are immutable
for the host too), which is why the headers are swapped here rather than in the gate.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PEERS_ENV = "MURMUR_FORMATION_PEERS"
SUFFIX = ".formation.invalid"
STRIPPED = frozenset({"authorization", "x-murmur-task-origin", "x-murmur-task-trust"})
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
                        "host", "content-length"})
URL_WAIT = 10.0  # seconds to wait for the launcher's URLs before a request fails
CONNECT_WITHIN = 10.0  # seconds to reach a callee's door (an answer may take as long as it takes)
NO_LOCALHOST = ("capabilities.network.allow does not include localhost, so no member's door "
                "can be reached (W-RUN-008)")


class HasToken(Protocol):
    @property
    def token(self) -> str: ...


class CalleeSeat(Protocol):
    """What the relay needs of a member's seat (tui/core/formation/seat.py)."""

    @property
    def callee_names(self) -> tuple[str, ...]: ...

    def callee(self, name: str) -> HasToken | None: ...

    def url(self, name: str, timeout: float) -> str | None: ...


def address(name: str) -> str:
    return f"http://{name}{SUFFIX}"


def env_value(names: tuple[str, ...]) -> str:
    return " ".join(f"{name}={address(name)}" for name in names)


def formation_host(host: str) -> str | None:
    """`coder` for `coder.formation.invalid` (any case); None for any other host."""
    host = host.lower()
    return host[:-len(SUFFIX)] if host.endswith(SUFFIX) else None


def refusal(names: tuple[str, ...], name: str, scheme: str, port: int | None,
            localhost: bool) -> str | None:
    """Why a request to `<name>.formation.invalid` may not go (`names`: the member's
    callees), or None. Said as the allow-list's refusals are said."""
    shown = f"{scheme}://{name}{SUFFIX}" + (f":{port}" if port not in (None, 80) else "")
    if name not in names:
        may = ", ".join(names) if names else "none"
        return (f"network policy: '{shown}' is not a member this one may call "
                f"(its callees: {may})")
    if scheme != "http" or port not in (None, 80):
        return (f"network policy: '{shown}' is not a formation address (they are "
                f"http://<member>{SUFFIX}, as {PEERS_ENV} gives them)")
    if not localhost:
        return f"network policy: '{shown}' is a formation member, but {NO_LOCALHOST}"
    return None


class PeerRelay:
    """The loopback relay of one member's session, started at its first request."""

    def __init__(self, seat: CalleeSeat) -> None:
        self.seat = seat
        self.names = seat.callee_names
        self.env = {PEERS_ENV: env_value(self.names)} if self.names else {}
        self._secret = secrets.token_urlsafe(24)
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    def refusal(self, name: str, scheme: str, port: int | None, localhost: bool) -> str | None:
        return refusal(self.names, name, scheme, port, localhost)

    def target(self, name: str, path: str | None) -> tuple[str, str]:
        """The (authority, path) the gate points a request to `name` at."""
        path = path or "/"
        if not path.startswith("/"):
            path = "/" + path
        return self._listen(), f"/{self._secret}/{name}{path}"

    def _listen(self) -> str:
        with self._lock:
            if self._server is None:
                from http.server import ThreadingHTTPServer  # a member that calls out pays

                self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
                self._server.daemon_threads = True
                threading.Thread(target=self._server.serve_forever, name="formation-relay",
                                 daemon=True).start()
            return f"127.0.0.1:{self._server.server_address[1]}"

    def resolve(self, path: str) -> tuple[str, str] | None:
        """(callee, its door path) from a relayed path; None without the secret."""
        prefix = f"/{self._secret}/"
        if not path.startswith(prefix):
            return None
        name, slash, rest = path[len(prefix):].partition("/")
        if name not in self.names:
            return None
        return name, slash + rest

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()


def _handler(relay: PeerRelay) -> type[BaseHTTPRequestHandler]:
    from http.server import BaseHTTPRequestHandler

    class Relay(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # the answer's end is the connection's

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

        def _relay(self) -> None:
            import httpx  # only a member whose components call someone pays for it

            found = relay.resolve(self.path)
            if found is None:
                self._plain(404, "not found")
                return
            name, path = found
            callee, base = relay.seat.callee(name), relay.seat.url(name, URL_WAIT)
            if callee is None or base is None:
                self._plain(502, f"no address for formation member {name}")
                return
            headers = [(key, value) for key, value in self.headers.items()
                       if key.lower() not in STRIPPED and key.lower() not in HOP_BY_HOP]
            headers += [("authorization", f"Bearer {callee.token}"),
                        ("x-murmur-task-origin", "peer")]
            try:
                body = self._body()
            except ValueError:
                self._plain(400, "the request's body could not be read")
                return
            try:
                timeout = httpx.Timeout(CONNECT_WITHIN, read=None, write=60.0)
                # trust_env off: a proxy from the environment must not see the token
                with httpx.Client(timeout=timeout, trust_env=False) as client, client.stream(
                        self.command, base.rstrip("/") + path, headers=headers,
                        content=body) as answer:
                    self.send_response_only(answer.status_code)
                    for key, value in answer.headers.multi_items():
                        if key.lower() not in HOP_BY_HOP:
                            self.send_header(key, value)
                    self.send_header("connection", "close")
                    self.end_headers()
                    for chunk in answer.iter_raw():
                        self.wfile.write(chunk)
                        self.wfile.flush()
            except httpx.HTTPError as exc:
                self._plain(502, f"formation member {name}'s door: {type(exc).__name__}")
            except OSError:
                pass  # the guest went away

        def _body(self) -> bytes:
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                return b"".join(self._chunks())
            length = int(self.headers.get("content-length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def _chunks(self) -> Iterator[bytes]:
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return
                yield self.rfile.read(size)
                self.rfile.readline()

        def _plain(self, status: int, text: str) -> None:
            body = text.encode()
            self.send_response_only(status)
            self.send_header("content-type", "text/plain; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _relay

    return Relay
