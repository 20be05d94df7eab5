"""Peer tasks at the door, as Murmur's newest door tells and enforces them (murmur-newest.md
§5.1: the door extension's `peerTasks` is `exports.peer_tasks.accept`; §5.2 step 3: a request
with `x-murmur-task-origin: peer` to a capsule that does not accept peer tasks is `403
peer_not_accepted`, after the door token and before anything else, byte-identical every time;
§7.5: a peer's task runs with origin `peer`). A real door on loopback, and real `launch
--headless --serve` processes whose trace is read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import CapsuleFactory
from tests.door.test_murmur_shapes import MY_AGENT, listen
from tests.door.wire import JSON, build, exchange, rpc_body
from tests.responses import text_response
from tests.served import SLEEP, Served, serve

ACCEPTS = "exports:\n  peer_tasks:\n    accept: true\n"
DECLINES = "exports:\n  peer_tasks:\n    accept: false\n"
AUTH = "network:\n  authentication:\n    scheme: bearer\n"
PEER = (b"x-murmur-task-origin", b"peer")
REFUSED = (b'{"error": "peer_not_accepted", '
           b'"message": "this capsule does not accept tasks from peers"}')
MESSAGE = {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}


def door_params(tmp_path: Path, manifest: str) -> dict[str, Any]:
    tmp_path.mkdir()
    item = listen(tmp_path, manifest)
    try:
        raw = exchange(item.url, b"GET /.well-known/agent-card.json HTTP/1.1\r\nhost: x\r\n\r\n")
    finally:
        item.server.close()
    card = json.loads(raw.split(b"\r\n\r\n", 1)[1])
    door = [e for e in card["capabilities"]["extensions"] if e["uri"].endswith("#murmur-door-v1")]
    return dict(door[0]["params"])


def test_the_cards_peer_tasks_is_the_manifests_accept(tmp_path: Path) -> None:
    assert door_params(tmp_path / "a", MY_AGENT + ACCEPTS)["peerTasks"] is True
    assert door_params(tmp_path / "b", MY_AGENT + DECLINES)["peerTasks"] is False
    assert door_params(tmp_path / "c", MY_AGENT)["peerTasks"] is False  # always present


def split(raw: bytes) -> tuple[bytes, bytes, bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0], head.lower(), body


def test_a_peer_task_to_a_capsule_that_declines_is_403_byte_for_byte_every_time(
        tmp_path: Path) -> None:
    item = listen(tmp_path, MY_AGENT + DECLINES)
    try:
        send = build(rpc_body("SendMessage", MESSAGE), [*JSON, PEER])
        first, second = exchange(item.url, send), exchange(item.url, send)
        assert first == second  # byte-identical, head and body
        status, head, body = split(first)
        assert status == b"HTTP/1.1 403 Forbidden"
        assert body == REFUSED
        assert b"www-authenticate" not in head
        # step 3 comes before the path, the body and the method (steps 5-10): a GET elsewhere,
        # a body that is not JSON, a method the door has not — the same bytes
        for other in (build(b"", [PEER], method=b"GET", target=b"/elsewhere"),
                      build(b"{not json", [*JSON, PEER]),
                      build(rpc_body("NoSuchMethod"), [(b"X-Murmur-Task-Origin", b" peer ")])):
            assert exchange(item.url, other) == first
        # nothing reached the session, and the operator's own request is served as before
        assert item.door.table.live() == []
        status, _, body = split(exchange(item.url, build(rpc_body("GetTask", {"id": "tsk_x"}),
                                                         JSON)))
        assert status == b"HTTP/1.1 200 OK" and b'"TASK_NOT_FOUND"' in body
    finally:
        item.server.close()


def test_on_an_authenticated_door_the_token_is_checked_before_peer_consent(
        tmp_path: Path) -> None:
    item = listen(tmp_path, MY_AGENT + DECLINES + AUTH)
    try:
        send = rpc_body("SendMessage", MESSAGE)
        status, head, body = split(exchange(item.url, build(send, [*JSON, PEER])))
        assert status == b"HTTP/1.1 401 Unauthorized" and b'"unauthenticated"' in body
        assert b"www-authenticate: bearer" in head
        bearer = (b"authorization", f"Bearer {item.door.tokens.operator}".encode())
        status, head, body = split(exchange(item.url, build(send, [*JSON, PEER, bearer])))
        assert status == b"HTTP/1.1 403 Forbidden" and body == REFUSED
        assert b"www-authenticate" not in head
    finally:
        item.server.close()


def task_origins(murmur_home: Path, served: Served) -> dict[str, str]:
    record = json.loads((murmur_home / "running" / f"{served.session_id}.json").read_text())
    trace = Path(record["workdir"]) / "trace.jsonl"
    lines = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    return {line["task_id"]: line["origin"] for line in lines
            if line.get("event_type") == "task_start"}


def test_a_capsule_that_accepts_runs_the_peers_task_and_traces_its_origin(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    root = make_capsule([text_response("for the peer"), text_response("for the operator"),
                         text_response("for the peer again")], extra=SLEEP + ACCEPTS)
    door = serve(root)
    served.append(door)
    peer = {"x-murmur-task-origin": "peer"}
    # the session waits for its first task: a peer's is it (task.md, as a task given at launch)
    first = door.rpc("SendMessage", MESSAGE, headers=peer).json()["result"]["task"]
    done = door.until(first["id"], "TASK_STATE_COMPLETED")
    assert done["artifacts"][0]["parts"][0]["text"] == "for the peer"
    mine = door.send("from the operator")
    door.until(mine["id"], "TASK_STATE_COMPLETED")
    again = door.rpc("SendMessage", MESSAGE, headers=peer).json()["result"]["task"]
    door.until(again["id"], "TASK_STATE_COMPLETED")
    assert task_origins(murmur_home, door) == {first["id"]: "peer", mine["id"]: "user",
                                               again["id"]: "peer"}
    door.rpc("session/stop")
    assert door.process.wait(60) == 0
