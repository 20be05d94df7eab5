"""Raw HTTP/1.1 over a loopback socket, for requests no well-behaved client would send (a NUL
in a header, bytes that are not ASCII in `Last-Event-ID`, a body announced and never sent)."""

from __future__ import annotations

import contextlib
import json
import socket
from typing import Any
from urllib.parse import urlsplit

WAIT = 60.0  # generous: a loaded machine still passes, a hang still fails


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def build(body: bytes, headers: list[tuple[bytes, bytes]], method: bytes = b"POST",
          target: bytes = b"/", length: int | None = None) -> bytes:
    head = b"%s %s HTTP/1.1\r\nhost: door\r\n" % (method, target)
    for name, value in headers:
        head += name + b": " + value + b"\r\n"
    head += b"content-length: %d\r\n\r\n" % (len(body) if length is None else length)
    return head + body


def rpc_body(method: str, params: Any = None, request_id: Any = 1) -> bytes:
    value: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        value["params"] = params
    return json.dumps(value).encode()  # ensure_ascii: a lone surrogate goes as "\ud800"


JSON = [(b"content-type", b"application/json"), (b"a2a-version", b"1.0")]


def connect(url: str, source: str | None = None) -> socket.socket:
    host, port = address(url)
    return socket.create_connection((host, port), timeout=WAIT,
                                    source_address=(source, 0) if source else None)


def exchange(url: str, data: bytes, source: str | None = None) -> bytes:
    """Send `data` and read the answer: to the end, or its head alone for a stream."""
    with connect(url, source) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(data)
        got = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            got += chunk
            head, _, _ = got.partition(b"\r\n\r\n")
            if b"\r\n\r\n" in got and b"text/event-stream" in head.lower():
                break
        return got


def answer(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one HTTP/1.1 answer."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)
    if "content-length" in headers:
        body = body[:int(headers["content-length"])]
    return int(lines[0].split()[1]), headers, body


def json_answer(raw: bytes) -> tuple[int, Any]:
    status, _, body = answer(raw)
    return status, json.loads(body)


def files_intact(*roots: Any) -> int:
    """Every session file under `roots` reads: each line of a `.jsonl` as Murmur would read it
    (no lone surrogate, nothing nested too deep), each `.json` whole, each `.md` as UTF-8.
    How many files were read (a sweep that found nothing proves nothing)."""
    from pathlib import Path

    from tui.core.text.strict_json import loads_line

    read = 0
    for root in roots:
        for path in Path(root).rglob("*"):
            if not path.is_file() or path.is_symlink():
                continue
            data = path.read_bytes()
            if path.suffix == ".jsonl":
                for number, line in enumerate(data.splitlines(), 1):
                    if line.strip():
                        try:
                            loads_line(line)
                        except ValueError as exc:
                            raise AssertionError(f"{path}:{number}: {exc}") from None
            elif path.suffix == ".json":
                loads_line(data.strip())
            elif path.suffix == ".md":
                data.decode("utf-8")
            else:
                continue
            read += 1
    return read
