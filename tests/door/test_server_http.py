"""The door's HTTP server over a real loopback socket: a real Door (its Broadcast, tokens and
card) served by DoorServer, spoken to with raw sockets where the edge of the protocol is the
point (silence, a cut body, an oversized body, pipelining, a vanished client) and with httpx
elsewhere."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.waits import block_until
from tui.core.asking.questions import QuestionBoard
from tui.core.door import Door
from tui.core.door import server as door_server
from tui.core.door.server import MAX_BODY, ConnectionLimits, DoorServer
from tui.core.manifest.reader import parse_capsule

MANIFEST = 'name: demo\nversion: "1.0.0"\n'
WATCH = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "stream/watch"}).encode()
WAIT = 60.0  # generous: a loaded machine still passes, a hang still fails


class Served:
    def __init__(self, door: Door, server: DoorServer, host: str, port: int) -> None:
        self.door, self.server, self.host, self.port = door, server, host, port
        self.url = f"http://{host}:{port}"

    def connect(self) -> socket.socket:
        sock = socket.create_connection((self.host, self.port), timeout=WAIT)
        return sock

    def publish(self, text: str) -> None:
        self.door.broadcast.publish("text", {"id": "tsk_1", "text": text, "final": False})

    def until_subscribers(self, count: int) -> None:
        block_until(lambda: self.door.broadcast.subscribers == count, WAIT,
                    lambda: f"{self.door.broadcast.subscribers} != {count}", step=0.01)


def start(tmp_path: Path, heartbeat: float = door_server.HEARTBEAT_SECONDS,
          manifest: str = MANIFEST, limits: ConnectionLimits | None = None) -> Served:
    path = tmp_path / "murmur.yaml"
    path.write_text(manifest, encoding="utf-8")
    door = Door(parse_capsule(path, manifest), QuestionBoard())
    server = DoorServer(door, door.broadcast, door.tokens, door.public_card, heartbeat=heartbeat,
                        limits=limits)
    host, port = server.bind("127.0.0.1", 0)
    server.start()
    door.url = f"http://{host}:{port}"
    return Served(door, server, host, port)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    item = start(tmp_path)
    yield item
    item.server.close()


def request(body: bytes, method: str = "POST", target: str = "/",
            headers: str = "content-type: application/json\r\n") -> bytes:
    return (f"{method} {target} HTTP/1.1\r\nhost: x\r\n{headers}"
            f"content-length: {len(body)}\r\n\r\n").encode() + body


def read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def response(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def read_until(sock: socket.socket, marker: bytes, data: bytes = b"") -> bytes:
    while marker not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before {marker!r}: {data[-300:]!r}"
        data += chunk
    return data


def ok(served: Served) -> None:
    """The server still answers: the card over a fresh connection."""
    card = httpx.get(f"{served.url}/.well-known/agent-card.json", timeout=WAIT)
    assert card.status_code == 200 and card.json()["name"] == "demo"


def test_a_client_that_sends_nothing_holds_up_no_one_and_is_let_go(tmp_path: Path) -> None:
    served = start(tmp_path, limits=ConnectionLimits(read_timeout=0.5))  # the 30 s limit, shortened
    try:
        silent = served.connect()
        ok(served)
        assert read_all(silent) == b""  # closed by the server, no answer to nothing
        ok(served)
    finally:
        served.server.close()


def test_a_body_that_is_cut_short_gets_no_answer_and_the_server_goes_on(served: Served) -> None:
    sock = served.connect()
    whole = request(WATCH)
    sock.sendall(whole[:-10])
    sock.shutdown(socket.SHUT_WR)
    assert read_all(sock) == b""
    ok(served)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_over_one_mebibyte_is_413(served: Served, chunked: bool) -> None:
    body = b"x" * (MAX_BODY + 1)
    sock = served.connect()
    if chunked:
        head = b"POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n" \
               b"transfer-encoding: chunked\r\n\r\n"
        payload = head + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    else:
        payload = request(body)
    # the server may answer and close before the whole body is sent
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        sock.sendall(payload)
    status, headers, answer = response(read_until(sock, b"}"))
    assert status == 413 and headers["content-type"] == "application/json"
    assert json.loads(answer[:int(headers["content-length"])]) == {
        "error": "payload_too_large", "message": f"the body is over {MAX_BODY} bytes"}
    ok(served)


def test_a_body_of_exactly_one_mebibyte_is_read(served: Served) -> None:
    sock = served.connect()
    sock.sendall(request(b" " * (MAX_BODY - 2) + b"{}"))
    status, _, body = response(read_all(sock))
    assert status == 200 and json.loads(body)["error"]["code"] == -32600


@pytest.mark.parametrize(("method", "target"), [("GET", "/"), ("PUT", "/"), ("DELETE", "/"),
                                                ("POST", "/other"), ("GET", "/agent-card")])
def test_anything_but_post_slash_and_the_card_is_404(served: Served, method: str,
                                                     target: str) -> None:
    sock = served.connect()
    sock.sendall(request(WATCH, method, target))
    status, _, body = response(read_all(sock))
    assert status == 404
    assert json.loads(body) == {"error": "not_found",
                                "message": "this door answers POST / with a JSON body"}


def test_pipelined_requests_get_the_first_answer_and_a_clean_close(served: Served) -> None:
    get_task = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "GetTask",
                           "params": {"id": "tsk_none"}}).encode()
    sock = served.connect()
    sock.sendall(request(get_task, headers="content-type: application/json\r\n"
                         "a2a-version: 1.0\r\n") * 3)
    raw = read_all(sock)
    status, headers, body = response(raw)
    assert status == 200 and headers["connection"] == "close"
    assert json.loads(body[:int(headers["content-length"])])["error"]["code"] == -32001
    assert raw.count(b"HTTP/1.1") == 1  # one request per connection, said by `close`
    ok(served)


def watch(served: Served) -> socket.socket:
    sock = served.connect()
    sock.sendall(request(WATCH, headers="content-type: application/json\r\n"
                         "a2a-version: 1.0\r\n"))
    return sock


def test_a_hundred_watchers_all_get_the_same_frames(served: Served) -> None:
    watchers = [watch(served) for _ in range(100)]
    served.until_subscribers(100)
    for n in range(20):
        served.publish(f"line {n}")
    served.door.broadcast.close()
    streams = [read_all(sock) for sock in watchers]
    bodies = {raw.partition(b"\r\n\r\n")[2] for raw in streams}
    assert len(bodies) == 1  # byte for byte the same stream
    text = streams[0].decode()
    assert text.count("event: text") == 20 and text.count("event: connection-ack") == 1
    # Murmur's framing (streaming-protocol.md "Endpoints"): no content-length, no chunks —
    # the frames are the body as they are, and the body ends as the door closes the connection
    assert streams[0].startswith(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                                 b"cache-control: no-cache\r\nconnection: keep-alive\r\n\r\n")
    assert text.endswith("\n\nevent: capsule-closed\ndata: {}\n\n")
    ok(served)


def test_a_client_that_read_a_stream_to_its_end_is_answered_on_its_next_request(
        served: Served) -> None:
    """A stream's body ends only as the connection closes (Murmur's framing, whatever its
    `connection: keep-alive` says), so an HTTP client never sends its next request on it: that
    request would be lost ("server disconnected without sending a response")."""
    with httpx.Client(base_url=served.url, timeout=WAIT,
                      headers={"a2a-version": "1.0"}) as client:
        with client.stream("POST", "/", content=WATCH,
                           headers={"content-type": "application/json"}) as stream:
            served.until_subscribers(1)
            served.door.broadcast.close()
            assert b"capsule-closed" in stream.read()
        assert stream.headers["connection"] == "keep-alive"
        assert "content-length" not in stream.headers
        assert "transfer-encoding" not in stream.headers
        answer = client.post("/", json={"jsonrpc": "2.0", "id": 2, "method": "GetTask",
                                        "params": {"id": "tsk_none"}})
        assert answer.json()["error"]["code"] == -32001


def test_a_watcher_that_vanishes_mid_stream_leaves_the_others_served(served: Served) -> None:
    gone, staying = watch(served), watch(served)
    served.until_subscribers(2)
    served.publish("first")
    read_until(gone, b"first")
    gone.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    gone.close()  # a reset, as a killed client leaves it
    for n in range(200):  # enough writes that the server meets the dead socket
        served.publish(f"after {n}")
    served.until_subscribers(1)
    data = read_until(staying, b"after 199")
    missed = sum(json.loads(line.split(b"data: ", 1)[1].split(b"\n", 1)[0])["missed"]
                 for line in data.split(b"event: lagged\n")[1:])
    assert data.count(b"event: text") + missed == 201  # each frame, or told it was lost
    ok(served)
    served.door.broadcast.close()
    assert b"capsule-closed" in read_all(staying)


def test_an_idle_stream_gets_heartbeats_at_the_period_given(tmp_path: Path) -> None:
    served = start(tmp_path, heartbeat=0.05)
    try:
        sock = watch(served)
        data = read_until(sock, b"connection-ack")
        while data.count(b":heartbeat\n\n") < 3:
            chunk = sock.recv(65536)
            assert chunk
            data += chunk
        served.publish("still here")
        read_until(sock, b"still here", data)
    finally:
        served.server.close()


def test_the_card_and_a_refusal_over_http_on_an_authenticated_door(tmp_path: Path) -> None:
    served = start(tmp_path, manifest=MANIFEST + "network:\n  authentication:\n"
                   "    scheme: bearer\n    credentials: {watcher: [stream/watch]}\n")
    try:
        card = httpx.get(f"{served.url}/.well-known/agent-card.json", timeout=WAIT).json()
        assert card["capabilities"]["extendedAgentCard"] is True
        anonymous = httpx.post(served.url, content=WATCH, timeout=WAIT,
                               headers={"content-type": "application/json"})
        assert anonymous.status_code == 401
        assert anonymous.headers["www-authenticate"] == 'Bearer realm="demo"'
        watcher = next(c.token for c in served.door.tokens.credentials if c.name == "watcher")
        stop = httpx.post(served.url, timeout=WAIT, json={
            "jsonrpc": "2.0", "id": 1, "method": "session/stop"}, headers={
            "authorization": f"bearer {watcher}", "a2a-version": "1.0"})
        assert stop.status_code == 403 and stop.json() == {
            "error": "insufficient_scope",
            "message": "credential 'watcher' does not reach session/stop"}
        assert watcher not in stop.text
    finally:
        served.server.close()
