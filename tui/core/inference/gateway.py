"""The credential gateway: how a WebAssembly driver reaches its provider without a key.

A loopback HTTP server inside murmur-tui (127.0.0.1, an ephemeral port, one per session
driver). The driver is told `MURMUR_INFERENCE_ENDPOINT` (and `MURMUR_GATEWAY_ENDPOINT`) =
`http://127.0.0.1:<port>/<secret>` + the path of its `gateway.endpoint`, and sends its provider
requests there through wasi:http. `<secret>` is minted per gateway and never written anywhere:
a request without it is refused (403), so no other local process — a shell command included —
can spend the key.

The gateway only ever talks to its upstream. It accepts origin-form request targets only (`/`
+ path [+ `?query`]: no scheme, no authority, no `@`, no `\\`, no dot segments, no encoded
`.` `/` `\\`, no empty segments) and refuses anything else with 400 before a byte leaves; the
upstream URL is the configured endpoint's origin joined with the path after the secret; the
component's `Host` header is ignored. Each request is forwarded with httpx after removing every
auth header the component sent (`authorization`, `x-api-key`, and the configured
`upstream_auth.header`, in any case) and adding exactly one rendered from the key. The answer
streams back as it arrives (chunked), redirects are returned, not followed, and every answer —
body and headers, whatever its status — passes through the one redaction (`secrets.py`), so a
provider that echoes the key never hands it to the component.

A 401 is buffered: the key is read again and, if it changed, the same bytes are sent once more;
an unchanged key is recorded as a rejection (the driver's call then fails the task
`credential_rejected`). The last status each call saw (or a broken connection) is kept, so the
host can decide whether the driver's failed call is worth retrying.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import re
import secrets as token_source
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import httpx

from tui.core.errors import CredentialError, GatewayRefused
from tui.core.inference.credentials import Credentials, Key
from tui.core.manifest.model import Gateway
from tui.core.text import secrets

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "te", "trailer", "trailers", "transfer-encoding", "upgrade", "host",
                        "content-length"})
AUTH_HEADERS = frozenset({"authorization", "x-api-key"})
WHOLE_BYTES = 1 << 20  # answers up to this size, with a known length, are relayed in one write
MAX_REQUEST_BYTES = 32 << 20  # a request body larger than this is refused (413)
_PATH_CHARS = re.compile(r"^[A-Za-z0-9\-._~!$&'()*+,;=:%/]*$")
_ENCODED_SEPARATOR = re.compile(r"%(2[eEfF]|5[cC]|00)")
_QUERY_CHARS = re.compile(r"^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$")


def upstream_target(target: str, secret: str) -> str:
    """The path and query to send upstream for a request target, or GatewayRefused.

    Only `/<secret>/path[?query]` is accepted; what follows the secret must be a plain path of
    non-empty segments, none of them `.` or `..`, with no percent-encoded `.`, `/`, `\\` or NUL.
    """
    if not target.startswith("/") or target.startswith("//"):
        raise GatewayRefused(400, "only origin-form request targets (a path starting with "
                             "one /) are accepted")
    path, _, query = target.partition("?")
    first, slash, rest = path[1:].partition("/")
    if not hmac.compare_digest(first.encode(), secret.encode()):
        raise GatewayRefused(403, "this gateway serves its own session's driver only")
    rest = slash + rest
    if "#" in target or not _PATH_CHARS.match(rest) or (query and not _QUERY_CHARS.match(query)):
        raise GatewayRefused(400, "the request target has characters a path may not have")
    if _ENCODED_SEPARATOR.search(rest):
        raise GatewayRefused(400, "the path may not percent-encode '.', '/', '\\' or NUL")
    segments = rest.split("/")[1:] if rest else []
    if any(segment in ("", ".", "..") for segment in segments[:-1]) or \
            (segments and segments[-1] in (".", "..")):
        raise GatewayRefused(400, "the path may not have empty, '.' or '..' segments")
    return (rest or "/") + (f"?{query}" if query else "")


@dataclass
class Seen:
    """What the gateway saw of the last request it forwarded (`forwarded` False: none yet)."""

    forwarded: bool = False
    status: int | None = None  # None: the provider could not be reached, or the stream broke
    rejected: str | None = None  # a 401 with a key that did not change: why


class CredentialGateway:
    def __init__(self, name: str, gateway: Gateway, credentials: Credentials) -> None:
        self.name = name
        self.gateway = gateway
        self.credentials = credentials
        parts = urlsplit(gateway.endpoint)
        self.upstream = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path.rstrip("/")
        self.secret = token_source.token_urlsafe(24)
        secrets.remember(self.secret)
        header, template = gateway.upstream_auth or ("authorization", "Bearer {key}")
        self.auth_header, self.auth_template = header.lower(), template
        self.last = Seen()
        self._client = httpx.Client(timeout=httpx.Timeout(30.0, read=300.0),
                                    follow_redirects=False)
        with contextlib.suppress(CredentialError):  # reported when a request needs it
            self.key()  # known from the start, so redaction covers it before any output
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name=f"gateway-{name}", daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        """What the driver is told: this gateway plus the path of `gateway.endpoint`."""
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/{self.secret}{self.path}"

    @property
    def origin(self) -> str:
        """Where the driver's wasi:http may always go: this gateway (`http://127.0.0.1:<port>`)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def environment(self) -> dict[str, str]:
        return {"MURMUR_INFERENCE_ENDPOINT": self.endpoint,
                "MURMUR_GATEWAY_ENDPOINT": self.endpoint}

    def key(self) -> Key:
        return self.credentials.resolve(self.gateway.api_key, self.gateway.keyless,
                                        f"artifacts[{self.name}].gateway.api_key")

    def headers(self, sent: list[tuple[str, str]], key: Key) -> dict[str, str]:
        drop = AUTH_HEADERS | {self.auth_header} | HOP_BY_HOP
        headers = {name: value for name, value in sent if name.lower() not in drop}
        if key.value is not None:
            headers[self.auth_header] = self.auth_template.replace("{key}", key.value)
        return headers

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A request that broke the handler ends its connection; nothing is printed (the
        default prints a traceback to stderr)."""
        return None


def _handler(gateway: CredentialGateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # each streamed chunk leaves at once (Nagle's algorithm would hold small writes back
        # for the peer's delayed acknowledgement: ~40 ms on a kept-alive connection)
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return None

        def do_GET(self) -> None:
            self._forward()

        def do_POST(self) -> None:
            self._forward()

        def do_PUT(self) -> None:
            self._forward()

        def do_DELETE(self) -> None:
            self._forward()

        def _body(self) -> bytes:
            if self.headers.get("transfer-encoding", "").lower() == "chunked":
                parts: list[bytes] = []
                total = 0
                while True:
                    size = int(self.rfile.readline(64).split(b";")[0].strip() or b"0", 16)
                    total += size
                    if size < 0 or total > MAX_REQUEST_BYTES:
                        raise GatewayRefused(413, "the request body is over "
                                             f"{MAX_REQUEST_BYTES} bytes")
                    if size == 0:
                        self.rfile.readline(64)
                        return b"".join(parts)
                    parts.append(self.rfile.read(size))
                    self.rfile.readline(64)
            length = int(self.headers.get("content-length") or 0)
            if length < 0 or length > MAX_REQUEST_BYTES:
                raise GatewayRefused(413, f"the request body is over {MAX_REQUEST_BYTES} bytes")
            return self.rfile.read(length)

        def _forward(self) -> None:
            try:
                url = gateway.upstream + upstream_target(self.path, gateway.secret)
                body = self._body()
            except GatewayRefused as refused:
                self.close_connection = True
                self._error(refused.status, refused.reason)
                return
            except ValueError:
                self.close_connection = True
                self._error(400, "the request's length or chunking cannot be read")
                return
            try:
                key = gateway.key()
            except CredentialError as exc:
                gateway.last = Seen(True, 401, str(exc))
                self._error(401, str(exc))
                return
            rotated = False
            while True:
                request = gateway._client.build_request(
                    self.command, url, content=body,
                    headers=gateway.headers(list(self.headers.items()), key))
                try:
                    response = gateway._client.send(request, stream=True)
                except httpx.HTTPError as exc:
                    gateway.last = Seen(True, None)
                    self._error(502, f"the gateway could not reach {gateway.upstream}: {exc!r}")
                    return
                if response.status_code == 401:
                    response.read()
                    response.close()
                    fresh = gateway.key()
                    if not rotated and fresh.value != key.value:
                        rotated, key = True, fresh
                        continue
                    gateway.last = Seen(True, 401, "the provider rejected the key")
                    self._relay_buffered(response)
                    return
                gateway.last = Seen(True, response.status_code)
                self._relay(response)
                return

        def _relay_buffered(self, response: httpx.Response) -> None:
            self._send(response.status_code, secrets.redact_bytes(response.content), [
                ("content-type", response.headers.get("content-type", "text/plain"))])

        def _send(self, status: int, data: bytes, headers: list[tuple[str, str]]) -> None:
            """A whole answer of known length."""
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, secrets.redact(value))
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _relay(self, response: httpx.Response) -> None:
            length = response.headers.get("content-length")
            if length is not None and length.isdigit() and int(length) <= WHOLE_BYTES and \
                    "content-encoding" not in response.headers:
                self._relay_whole(response)  # a small answer of known size: no chunking
                return
            redactor = secrets.ByteStreamRedactor()
            try:
                self.send_response(response.status_code)
                for name, value in response.headers.multi_items():
                    if name.lower() not in HOP_BY_HOP and name.lower() != "content-encoding":
                        self.send_header(name, secrets.redact(value))
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for chunk in response.iter_bytes():
                    self._chunk(redactor.feed(chunk))
                self._chunk(redactor.flush())
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (OSError, httpx.HTTPError):
                gateway.last = Seen(True, None)  # the stream broke: the driver sees it end short
                self.close_connection = True
            finally:
                response.close()

        def _chunk(self, data: bytes) -> None:
            if data:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

        def _relay_whole(self, response: httpx.Response) -> None:
            try:
                data = secrets.redact_bytes(response.read())
                self._send(response.status_code, data, [
                    (name, value) for name, value in response.headers.multi_items()
                    if name.lower() not in HOP_BY_HOP])
            except (OSError, httpx.HTTPError):
                gateway.last = Seen(True, None)
                self.close_connection = True
            finally:
                response.close()

        def _error(self, status: int, message: str) -> None:
            data = json.dumps({"error": {"message": secrets.redact(message),
                                         "from": "murmur-tui gateway"}})
            self._send(status, data.encode(), [("content-type", "application/json")])

    return Handler
