"""The door under load: its connection caps, the whole-request deadline, streams that outlive
it, the last-resort answer, and running out of descriptors. A real Door served by DoorServer
on loopback with limits made small (so nothing waits 30 s), and a real `launch --serve`
process under a low descriptor limit."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CapsuleFactory
from tests.door.test_server_http import Served, read_all, read_until, start, watch
from tests.door.wire import WAIT, answer, build, connect, exchange, rpc_body
from tests.responses import text_response
from tests.served import SLEEP, V1
from tests.waits import block_until
from tui.core.asking.questions import QuestionBoard
from tui.core.door import Door
from tui.core.door.guard import Guard
from tui.core.door.server import ConnectionLimits, DoorServer
from tui.core.manifest.reader import parse_capsule


def card_from(served: Served, source: str) -> int:
    raw = exchange(served.url, build(b"", [], b"GET", b"/.well-known/agent-card.json"), source)
    return answer(raw)[0]


def until_open(served: Served, count: int) -> None:
    """Wait until the door counts `count` connections."""
    block_until(lambda: served.server.guard.open == count, WAIT,
                lambda: f"{served.server.guard.open} != {count}", step=0.01)


def is_open(sock: socket.socket) -> bool:
    """Still open, nothing to read (it was not closed on us)."""
    sock.setblocking(False)
    try:
        return bool(sock.recv(1, socket.MSG_PEEK)) or False
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def test_a_request_trickled_a_byte_at_a_time_is_answered_408_at_the_deadline(
        tmp_path: Path) -> None:
    # each byte comes well within the wait for the next one: only the whole-request deadline
    # can end it (30 s by default; 1 s here)
    served = start(tmp_path, limits=ConnectionLimits(deadline=1.0, read_timeout=20.0))
    try:
        sock = served.connect()
        data = build(rpc_body("GetTask", {"id": "x"}), [(b"content-type", b"application/json")])
        got = b""
        for byte in data:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            sock.settimeout(0.1)
            try:
                got += sock.recv(65536)
            except TimeoutError:
                continue
            if got:
                break
        sock.settimeout(WAIT)
        got += read_all(sock)
        status, _, body = answer(got)
        assert status == 408 and json.loads(body) == {
            "error": "request_timeout", "message": "the request was not whole within 1 s"}
        assert got.count(b"HTTP/1.1") == 1  # answered once, then closed
        assert len(got) < len(data) * 10
    finally:
        served.server.close()


def test_a_stream_outlives_the_request_deadline(tmp_path: Path) -> None:
    served = start(tmp_path, heartbeat=0.05,
                   limits=ConnectionLimits(deadline=0.2, read_timeout=0.2))
    try:
        sock = watch(served)
        data = read_until(sock, b"connection-ack")
        while data.count(b":heartbeat\n\n") < 10:  # ten heartbeats: past the deadline twice
            chunk = sock.recv(65536)
            assert chunk, "the stream was closed"
            data += chunk
        served.publish("still streaming")
        read_until(sock, b"still streaming", data)
    finally:
        served.server.close()


def test_a_peer_holds_at_most_its_share_of_slow_connections_and_others_are_untouched(
        tmp_path: Path, sockets: list[socket.socket]) -> None:
    served = start(tmp_path, limits=ConnectionLimits(per_peer=2, silent_after=0.0, slow_after=0.0))
    try:
        first, second = connect(served.url, "127.0.0.1"), connect(served.url, "127.0.0.1")
        neighbour = connect(served.url, "127.0.0.2")
        sockets += [first, second, neighbour]
        assert card_from(served, "127.0.0.3") == 200  # all three are counted by now
        third = connect(served.url, "127.0.0.1")
        sockets.append(third)
        assert read_all(first) == b""  # the peer's oldest slow connection made way
        assert card_from(served, "127.0.0.3") == 200
        assert is_open(second) and is_open(third) and is_open(neighbour)
    finally:
        served.server.close()


def test_past_the_total_a_slow_connection_makes_way_and_with_none_slow_it_is_503(
        tmp_path: Path, sockets: list[socket.socket]) -> None:
    served = start(tmp_path,
                   limits=ConnectionLimits(connections=4, silent_after=0.0, slow_after=0.0))
    try:
        silent = [connect(served.url) for _ in range(4)]
        sockets += silent
        until_open(served, 4)
        assert card_from(served, "127.0.0.2") == 200  # the oldest silent one made way
        assert read_all(silent[0]) == b""
        for sock in silent[1:]:
            sock.close()
        until_open(served, 0)
        watchers = [watch(served) for _ in range(4)]
        sockets += watchers
        served.until_subscribers(4)
        raw = exchange(served.url, build(b"", [], b"GET", b"/.well-known/agent-card.json"))
        status, headers, body = answer(raw)
        assert status == 503 and headers["retry-after"] == "1"
        assert json.loads(body)["error"] == "busy"
        served.door.broadcast.close()
        for sock in watchers:
            assert b"capsule-closed" in read_all(sock)
    finally:
        served.server.close()


def test_a_burst_of_requests_from_one_peer_is_never_cut(
        tmp_path: Path, sockets: list[socket.socket]) -> None:
    served = start(tmp_path, limits=ConnectionLimits(per_peer=2))
    try:
        card = build(b"", [], b"GET", b"/.well-known/agent-card.json")
        for _ in range(20):  # each sends its request as it connects: none is slow
            sock = connect(served.url)
            sock.sendall(card)
            sockets.append(sock)
        assert [answer(read_all(sock))[0] for sock in sockets] == [200] * 20
    finally:
        served.server.close()


def test_a_connection_whose_request_has_arrived_is_never_the_one_closed_to_make_room() -> None:
    guard = Guard(ConnectionLimits(connections=2, silent_after=0.0, slow_after=0.0))
    arrived, arrived_peer = socket.socketpair()
    silent, silent_peer = socket.socketpair()
    closed: list[str] = []
    try:
        arrived_peer.sendall(b"GET / HTTP/1.1\r\n\r\n")  # in the kernel, not yet read
        assert guard.admit("a", lambda: closed.append("arrived"), arrived) is not None
        assert guard.admit("b", lambda: closed.append("silent"), silent) is not None
        assert guard.admit("c", lambda: closed.append("third")) is not None
        assert closed == ["silent"]  # the idle one made way, the arrived request did not
        fourth = guard.admit("d", lambda: closed.append("fourth"))
        assert fourth is not None and closed == ["silent", "third"]
        # with only served work and arrived requests held, there is no place to make: 503
        fourth.phase = "streaming"
        assert guard.admit("e", lambda: closed.append("fifth")) is None
        assert guard.refused == 1 and closed == ["silent", "third"]
    finally:
        for sock in (arrived, arrived_peer, silent, silent_peer):
            sock.close()


def test_a_connection_is_closed_to_make_room_only_once_silent_long_enough() -> None:
    now = [100.0]
    guard = Guard(ConnectionLimits(connections=1, per_peer=1, silent_after=0.1, slow_after=0.5),
                  clock=lambda: now[0])
    closed: list[str] = []
    first = guard.admit("a", lambda: closed.append("first"))
    assert first is not None
    now[0] += 0.05  # young: it still has time to send its request
    assert guard.admit("a", lambda: closed.append("second")) is None
    first.heard = now[0]  # it sent some: heard from just now, it has half a second more
    now[0] += 0.4
    assert guard.admit("b", lambda: closed.append("second")) is None
    assert closed == [] and guard.refused == 2
    now[0] += 0.2  # half a second since it was last heard from, but what it sent waits in
    first.arrived = 120  # its transport's buffer for a loop running late: not its silence
    assert guard.admit("b", lambda: closed.append("third")) is None
    first.taken = 120  # read: now it is slow
    assert guard.admit("b", lambda: closed.append("third")) is not None
    assert closed == ["first"] and guard.open == 1
    now[0] += 0.15  # the third has sent nothing since it came, over a tenth of a second: slow
    assert guard.admit("c", lambda: closed.append("fourth")) is not None
    assert closed == ["first", "third"]


def test_an_error_while_answering_is_answered_internal_error_and_said_once(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "murmur.yaml"
    path.write_text('name: demo\nversion: "1.0.0"\n', encoding="utf-8")
    door = Door(parse_capsule(path, path.read_text()), QuestionBoard())
    lines: list[str] = []

    def broken_card() -> dict[str, Any]:
        raise KeyError("a card that cannot be built")

    server = DoorServer(door, door.broadcast, door.tokens, broken_card, log=lines.append)
    host, port = server.bind("127.0.0.1", 0)
    server.start()
    try:
        url = f"http://{host}:{port}"
        for _ in range(20):
            reply = httpx.get(f"{url}/.well-known/agent-card.json", timeout=WAIT)
            assert reply.status_code == 200 and reply.json() == {
                "jsonrpc": "2.0", "id": None,
                "error": {"code": -32603, "message": "internal error"}}
        assert lines == ["door: internal error answering a request (KeyError)"]
        task = httpx.post(url, json={"jsonrpc": "2.0", "id": 4, "method": "GetTask",
                                     "params": {"id": "tsk_x"}}, headers=V1, timeout=WAIT)
        assert task.json()["error"]["code"] == -32001  # the door goes on
    finally:
        server.close()
    assert "Traceback" not in capfd.readouterr().err


def test_out_of_descriptors_the_door_pauses_says_so_once_and_then_serves_who_waited(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "murmur.yaml"
    path.write_text('name: demo\nversion: "1.0.0"\n', encoding="utf-8")
    door = Door(parse_capsule(path, path.read_text()), QuestionBoard())
    lines: list[str] = []
    server = DoorServer(door, door.broadcast, door.tokens, door.public_card, log=lines.append)
    host, port = server.bind("127.0.0.1", 0)
    server.start()
    assert server.listener is not None
    clients = [socket.socket() for _ in range(8)]  # made while descriptors are still free
    card = build(b"", [], b"GET", b"/.well-known/agent-card.json")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    fillers: list[int] = []
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (len(os.listdir("/proc/self/fd")) + 8, hard))
        with contextlib.suppress(OSError):
            while True:  # this process, and so the door in it, has no descriptor left
                fillers.append(os.open(os.devnull, os.O_RDONLY))
        for client in clients:
            client.settimeout(WAIT)
            client.connect((host, port))  # a connecting socket needs no new descriptor
            client.sendall(card)
        deadline = time.monotonic() + WAIT
        while server.listener.pauses < 3:  # it has tried again, and again
            assert time.monotonic() < deadline, server.listener.pauses
            time.sleep(0.01)
        assert lines == ["door: out of file descriptors (Too many open files); accepting "
                         "pauses until some close"]
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        # the peers waited in the kernel's queue: each is served once descriptors are free
        assert [answer(read_all(client))[0] for client in clients] == [200] * 8
        assert len(lines) == 1
    finally:
        for client in clients:
            client.close()
        server.close()
    assert "Traceback" not in capfd.readouterr().err


def serve_low(root: Path, limit: int, stderr: Path) -> tuple[subprocess.Popen[bytes], str]:
    def low() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--json", "--serve"],
        stdout=subprocess.PIPE, stderr=stderr.open("wb"), stdin=subprocess.DEVNULL,
        env=dict(os.environ), preexec_fn=low)
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        assert line, stderr.read_text()
        ready = json.loads(line)
        if "event" not in ready:
            return process, f"http://{ready['url']}"  # `host:port`, as `mur run --json`


def test_150_half_open_connections_under_a_low_descriptor_limit_leave_the_session_serving(
        make_capsule: CapsuleFactory, tmp_path: Path, sockets: list[socket.socket]) -> None:
    root = make_capsule([text_response("after the flood")], extra=SLEEP)
    stderr = tmp_path / "stderr"
    process, url = serve_low(root, 64, stderr)
    try:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        for _ in range(150):  # connected, never a byte sent
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex((host, int(port)))
            sockets.append(sock)
        # it holds at most half the 64 (less what it had open): the rest are answered 503 or
        # make way, and are closed; the session keeps descriptors for its own work
        ended: set[socket.socket] = set()
        deadline = time.monotonic() + WAIT
        while len(ended) < 150 - 32:
            assert time.monotonic() < deadline, len(ended)
            readable, _, _ = select.select([s for s in sockets if s not in ended], [], [], 0.1)
            ended.update(readable)
        for sock in sockets:
            sock.close()
        client = httpx.Client(base_url=url, timeout=WAIT)
        sent = client.post("/", headers=V1, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}).json()
        task_id = sent["result"]["task"]["id"]
        deadline = time.monotonic() + WAIT
        state = ""
        while time.monotonic() < deadline and state != "TASK_STATE_COMPLETED":
            state = client.post("/", headers=V1, json={
                "jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task_id}}
                ).json()["result"]["status"]["state"]
            time.sleep(0.05)
        assert state == "TASK_STATE_COMPLETED"
        client.close()
    finally:
        process.kill()
        process.wait(WAIT)
    errors = stderr.read_bytes()
    logs = b"".join(log.read_bytes() for log in root.rglob("bootstrap.log"))
    assert len(errors) < 1000 and b"Traceback" not in errors + logs
