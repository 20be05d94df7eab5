"""`murmur:message/send` from a real script capsule (the `py_delegate` guest) to peers that are
real HTTP servers on loopback: the network policy refuses before any connection; a door-C peer
gets `SendMessage` with `A2A-Version: 1.0` and a running session's token, a door-A peer
`message/send`; a 401, a peer that never answers, and hostile answers become the call's err."""

from __future__ import annotations

import io
import json
import select
import shutil
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import read_jsonl
from tests.e2e.test_language_guests import guest
from tests.fakes import Collect
from tests.guests.build import cache_root
from tui.core.a2a import send as delegation
from tui.core.a2a.net_policy import parse_rules
from tui.core.errors import DelegationError
from tui.core.events import vocabulary as ev
from tui.core.events.wording import log_line
from tui.core.headless import HeadlessResponder
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule
from tui.core.running.records import RunningRecord, write_record
from tui.core.running.tokens import token_at, write_token

pytestmark = pytest.mark.slow  # builds the Python delegating capsule (componentize-py)

CARD_C = {"name": "worker", "version": "1.0.0",
          "supportedInterfaces": [{"url": "http://127.0.0.1:1/", "protocolBinding": "JSONRPC",
                                   "protocolVersion": "1.0"}],
          "capabilities": {"streaming": True}}
TASK_C = {"task": {"id": "tsk_peer1", "contextId": "ctx-1",
                   "status": {"state": "TASK_STATE_SUBMITTED"}}}
TASK_A = {"id": "tsk_peerA", "contextId": "ctx_new", "status": {"state": "submitted"}}
TOKEN = "door-token-8c1f7e2a9b44d0"


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Peer:
    """A door on 127.0.0.1: answers the card and POST / as told, and keeps what it got."""

    card: Any = None  # a JSON value, or (status, raw bytes)
    reply: Any = None
    seen: list[Seen] = field(default_factory=list)
    hang: threading.Event = field(default_factory=threading.Event)
    server: ThreadingHTTPServer | None = None

    @property
    def authority(self) -> str:
        assert self.server is not None
        return f"127.0.0.1:{self.server.server_address[1]}"

    def answer(self, what: Any) -> tuple[int, bytes]:
        if what == "hang":
            self.hang.wait(60)
            return 500, b""
        if isinstance(what, tuple):
            return what
        return 200, json.dumps(what).encode()


@pytest.fixture
def peer() -> Iterator[Peer]:
    door = Peer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            door.seen.append(Seen(method, self.path, {k.lower(): v for k, v in
                                                      self.headers.items()}, body))
            what = door.card if method == "GET" else door.reply
            status, data = door.answer(what)
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    door.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    door.server.daemon_threads = True
    thread = threading.Thread(target=door.server.serve_forever, daemon=True)
    thread.start()
    yield door
    door.hang.set()
    door.server.shutdown()
    door.server.server_close()
    thread.join(10)


@pytest.fixture(autouse=True)
def shared_compile_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    # the 18 MB guest is compiled once for every test, not once per MURMUR_HOME
    monkeypatch.setenv("MURMUR_COMPILED_CACHE", str(cache_root() / "compiled-host"))


def delegating_capsule(tmp_path: Path, allow: str) -> Path:
    root = tmp_path / "delegator"
    root.mkdir()
    shutil.copy(guest("py_delegate"), root / "capsule.wasm")
    (root / "murmur.yaml").write_text(
        "name: delegator\nversion: '1.0.0'\ncapabilities:\n"
        f"  network:\n    allow: ['{allow}']\n"
        "  limits: {memory_bytes: 268435456}\n", encoding="utf-8")
    return root


def run(root: Path, task: str) -> tuple[SessionResult, Collect, dict[str, Any]]:
    sink = Collect()
    responder = HeadlessResponder([], stdin=io.StringIO(""), err=io.StringIO())
    session = Session(load_capsule(root), LaunchOptions(task=task), sinks=[sink],
                      responder=responder)
    result = session.run()
    written = json.loads(result.paths.result.read_text())
    return result, sink, written


def running_record(home: Path, url: str, token: str | None) -> None:
    record = RunningRecord(session_id="ses_peer", url=url.removeprefix("http://"), pid=1,
                           process_start="1", capsule_name="worker", capsule_version="1.0.0",
                           workdir=home, outlives_launcher=False,
                           started_at="2026-01-01T00:00:00Z")
    write_record(home, record)
    if token is not None:
        write_token(home, "ses_peer", token)


def test_a_peer_outside_network_allow_is_refused_and_never_connected_to(
        tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        port = listener.getsockname()[1]
        root = delegating_capsule(tmp_path, f"http://127.0.0.1:{port + 1 if port < 65535 else 1}")
        result, sink, written = run(root, f"127.0.0.1:{port}\nsummarise the report")
        # nothing ever reached the listening socket: no connection is pending on it
        assert select.select([listener], [], [], 0.5)[0] == []
    finally:
        listener.close()
    assert result.exit_status == "ok"
    assert written == {"error": f"network policy: '127.0.0.1:{port}' not in "
                                "capabilities.network.allow"}
    assert not sink.of(ev.Delegated)


def test_a_door_c_peer_gets_send_message_with_its_version_header_and_token(
        tmp_path: Path, peer: Peer, murmur_home: Path) -> None:
    peer.card, peer.reply = CARD_C, {"jsonrpc": "2.0", "id": 1, "result": TASK_C}
    running_record(murmur_home, f"http://localhost:{peer.authority.split(':')[1]}", TOKEN)
    root = delegating_capsule(tmp_path, f"http://{peer.authority}")
    result, sink, written = run(root, f"http://{peer.authority}\ncontext: ctx-1\n"
                                      "Summarise the file at /data/report.csv")
    assert result.exit_status == "ok"
    assert written == {"ok": {"task_id": "tsk_peer1", "context_id": "ctx-1",
                              "state": "submitted"}}
    card, sent = peer.seen
    assert (card.method, card.path) == ("GET", "/.well-known/agent-card.json")
    assert (sent.method, sent.path) == ("POST", "/")
    assert sent.headers["a2a-version"] == "1.0"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["authorization"] == f"Bearer {TOKEN}"
    body = json.loads(sent.body)
    assert body["jsonrpc"] == "2.0" and body["method"] == "SendMessage"
    assert isinstance(body["id"], str) and body["id"]
    assert body["params"] == {"message": {
        "messageId": "m1", "role": "ROLE_USER", "contextId": "ctx-1",
        "parts": [{"text": "Summarise the file at /data/report.csv"}]}}
    # the session tells who it asked, in an event and in Murmur's a2a_send trace line
    delegated = sink.of(ev.Delegated)
    assert [(d.peer_url, d.peer_task_id, d.state) for d in delegated] == [
        (f"http://{peer.authority}", "tsk_peer1", "submitted")]
    assert delegated[0].task_id == sink.of(ev.TaskStarted)[0].task_id
    assert log_line(delegated[0]) == (f"⇢ sent a task to http://{peer.authority}: tsk_peer1 "
                                      "(submitted)")
    trace = read_jsonl(result.paths.trace)
    sends = [line for line in trace if line["event_type"] == "a2a_send"]
    assert [(s["peer_url"], s["message_id"], s["task_id"], s["context_id"]) for s in sends] == [
        (f"http://{peer.authority}", "m1", "tsk_peer1", "ctx-1")]
    task_node = next(line for line in trace if line["event_type"] == "task_start")["event_id"]
    assert sends[0]["parent_id"] == task_node
    # the token went to the peer alone
    for path in (result.paths.trace, result.paths.result):
        assert TOKEN not in path.read_text()
    assert all(TOKEN not in e.to_json() for e in sink.events)


def test_a_door_a_peer_gets_message_send_in_its_own_shape(tmp_path: Path, peer: Peer) -> None:
    peer.card = {"name": "worker", "version": "0.2.0", "url": f"localhost:{peer.authority}",
                 "capabilities": {"tools": [], "shell": [], "network": [], "streaming": True}}
    peer.reply = {"jsonrpc": "2.0", "id": "x", "result": TASK_A}
    root = delegating_capsule(tmp_path, peer.authority)  # host:port, any scheme
    result, sink, written = run(root, f"{peer.authority}\nwhat changed?")
    assert result.exit_status == "ok"
    assert written == {"ok": {"task_id": "tsk_peerA", "context_id": "ctx_new",
                              "state": "submitted"}}
    sent = peer.seen[-1]
    assert "a2a-version" not in sent.headers and "authorization" not in sent.headers
    body = json.loads(sent.body)
    assert body["method"] == "message/send"
    assert body["params"] == {"message": {"messageId": "m1", "role": "user",
                                          "parts": [{"text": "what changed?"}]}}
    assert [d.peer_task_id for d in sink.of(ev.Delegated)] == ["tsk_peerA"]


def test_a_401_from_the_peer_is_the_calls_err_with_murmurs_code(
        tmp_path: Path, peer: Peer) -> None:
    refusal = json.dumps({"error": "invalid_token", "message": "token not recognised"})
    peer.card, peer.reply = CARD_C, (401, refusal.encode())
    root = delegating_capsule(tmp_path, f"http://{peer.authority}")
    result, sink, written = run(root, f"http://{peer.authority}\ngo")
    assert result.exit_status == "ok"
    assert written == {"error": f"peer http://{peer.authority} refused the request: "
                                "HTTP 401 invalid_token"}
    assert not sink.of(ev.Delegated)
    assert not any(line["event_type"] == "a2a_send" for line in read_jsonl(result.paths.trace))


def test_a_peer_that_never_answers_is_an_err_after_the_read_timeout(
        tmp_path: Path, peer: Peer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delegation, "READ_SECONDS", 1.0)  # 30 s in use
    peer.card, peer.reply = CARD_C, "hang"
    root = delegating_capsule(tmp_path, f"http://{peer.authority}")
    result, _, written = run(root, f"http://{peer.authority}\ngo")
    assert result.exit_status == "ok"
    assert written == {"error": f"peer http://{peer.authority} did not answer within 1 s"}


# -- the HTTP side alone: answers no door should give ------------------------------------------
def send(peer: Peer, home: Path | None = None) -> delegation.TaskResult:
    rules = parse_rules((f"http://{peer.authority}",))
    return delegation.send(f"http://{peer.authority}",
                           delegation.Outgoing("m1", None, "hello"), rules,
                           partial(token_at, home) if home is not None else None)


@pytest.mark.parametrize(("reply", "words"), [
    ((200, b"{" * 10 + b"x"), "sent its answer that is not JSON"),
    ((200, b"[" * 100_000), "sent its answer that is not JSON"),
    ((200, b" " * (delegation.MAX_RESPONSE_BYTES + 1)), "answered with more than 1 MiB"),
    ((302, b""), "answered with a redirect (HTTP 302); it is not followed"),
    ((500, b"oops"), "answered HTTP 500 to SendMessage"),
    ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32009, "message": "bad \x1b[2J version"}},
     "refused the task: JSON-RPC error -32009 (bad ␛[2J version)"),
    ({"jsonrpc": "2.0", "id": 1, "result": {"message": {"messageId": "r"}}},
     "answered with a message, not a task"),
    ({"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t", "contextId": "c",
                                                     "status": {"state": "TASK_STATE_BOGUS"}}}},
     "answered with a task in an unknown state 'TASK_STATE_BOGUS'"),
    ({"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": 7, "contextId": "c"}}},
     "answered with a task without a readable id"),
])
def test_hostile_or_broken_answers_are_errors_naming_the_peer(peer: Peer, reply: Any,
                                                              words: str) -> None:
    peer.card, peer.reply = CARD_C, reply
    with pytest.raises(DelegationError) as raised:
        send(peer)
    assert raised.value.text == f"peer http://{peer.authority} {words}"


def test_a_door_b_peer_and_a_peer_without_a_card_get_message_send(peer: Peer) -> None:
    peer.card = {**CARD_C, "supportedInterfaces": [{"protocolVersion": "0.3"}]}
    peer.reply = {"jsonrpc": "2.0", "id": 1, "result": {**TASK_A, "status": {"state": "working"}}}
    assert send(peer).state == "working"
    peer.card = (404, b"")
    assert send(peer).task_id == "tsk_peerA"
    methods = [json.loads(s.body)["method"] for s in peer.seen if s.method == "POST"]
    assert methods == ["message/send", "message/send"]
    assert all("a2a-version" not in s.headers for s in peer.seen)


def test_a_token_is_sent_only_to_the_peer_its_record_names(peer: Peer, tmp_path: Path) -> None:
    peer.card, peer.reply = CARD_C, {"jsonrpc": "2.0", "id": 1, "result": TASK_C}
    running_record(tmp_path, "http://127.0.0.1:1", TOKEN)  # another session's door
    send(peer, tmp_path)
    assert all("authorization" not in s.headers for s in peer.seen)
