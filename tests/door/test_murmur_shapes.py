"""The door's answers in Murmur's exact shapes, field by field (murmur-newest.md §5, and its table
§11; read in Murmur's `docs/content/reference/agent-card.md` (CARD), `streaming-protocol.md` (SP)
and `crates/capsule-runtime/src/identity.rs` (ID)): the HTTP framing, `params`, the card's tools
and frames, `session/stop`, `CancelTask` with its residue, a fresh context per task, and one
final status per task. A real door (Door + DoorServer) on loopback, and real `launch --headless
--serve` processes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CapsuleFactory
from tests.door.test_serve import frames
from tests.door.wire import JSON, build, connect, exchange, json_answer, rpc_body
from tests.responses import call_response, text_response
from tests.served import SLEEP, V1, Served, serve
from tests.wasm.conftest import FIXTURES
from tui.core.asking.questions import QuestionBoard
from tui.core.door import Door
from tui.core.door.server import DoorServer
from tui.core.manifest.reader import parse_capsule

# CARD's example capsule: `my-agent` 0.1.0, `bash` installed, shell and network granted
MY_AGENT = """\
name: my-agent
version: "0.1.0"
artifacts:
  - name: bash
    runtime: tool
    version: "1.0.0"
  - name: guard
    runtime: hook
    version: "1.0.0"
capabilities:
  shell:
    allow: [git]
  network:
    allow: [api.example.com]
"""
NO_TASKS = MY_AGENT + "lifecycle:\n  task_acceptance: none\n"


class Listening:
    def __init__(self, door: Door, server: DoorServer, url: str) -> None:
        self.door, self.server, self.url = door, server, url


def listen(tmp_path: Path, manifest: str = MY_AGENT) -> Listening:
    path = tmp_path / "murmur.yaml"
    path.write_text(manifest, encoding="utf-8")
    door = Door(parse_capsule(path, manifest), QuestionBoard())
    server = DoorServer(door, door.broadcast, door.tokens, door.public_card)
    host, port = server.bind("127.0.0.1", 0)
    server.start()
    door.url = f"http://{host}:{port}"
    return Listening(door, server, door.url)


@pytest.fixture
def door(tmp_path: Path) -> Iterator[Listening]:
    item = listen(tmp_path)
    yield item
    item.server.close()


def status_line(raw: bytes) -> bytes:
    return raw.split(b"\r\n", 1)[0]


# -- HTTP ---------------------------------------------------------------------------------------
def test_every_answer_has_murmurs_status_line(door: Listening) -> None:
    """ID `handle_connection`: `HTTP/1.1 200 OK` for the card and every JSON-RPC answer,
    `404 Not Found` for anything but `POST /` with a JSON body (never an empty reason)."""
    card = exchange(door.url, b"GET /.well-known/agent-card.json HTTP/1.1\r\nhost: x\r\n\r\n")
    assert status_line(card) == b"HTTP/1.1 200 OK"
    answer = exchange(door.url, build(rpc_body("GetTask", {"id": "tsk_none"}), JSON))
    assert status_line(answer) == b"HTTP/1.1 200 OK"
    assert json_answer(answer)[1]["error"]["code"] == -32001
    missing = exchange(door.url, build(b"{}", JSON, target=b"/elsewhere"))
    assert status_line(missing) == b"HTTP/1.1 404 Not Found"


def test_a_stream_is_framed_as_murmurs(door: Listening) -> None:
    """SP "Endpoints": `HTTP/1.1 200 OK`, `content-type: text/event-stream`, `cache-control:
    no-cache`, `connection: keep-alive`, no content-length — and no chunked encoding: the
    frames are the body's bytes, `id:`/`event:`/`data:` lines (SP "Frame format")."""
    with connect(door.url) as sock:
        sock.sendall(build(rpc_body("stream/watch", {}), JSON))
        got = b""
        while b"connection-ack" not in got:
            chunk = sock.recv(65536)
            assert chunk, got
            got += chunk
        door.door.broadcast.publish("text", {"id": "tsk_1", "text": "hi", "final": False})
        while b"event: text" not in got or not got.endswith(b"\n\n"):
            chunk = sock.recv(65536)
            assert chunk, got
            got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    assert head == (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"cache-control: no-cache\r\nconnection: keep-alive")
    assert body == (b'event: connection-ack\ndata: {"role":"observer",'
                    b'"conversation_mode":"stateless"}\n\n'
                    b'id: 1\nevent: text\ndata: {"id":"tsk_1","text":"hi","final":false}\n\n')


# -- params -------------------------------------------------------------------------------------
@pytest.mark.parametrize("params", [None, [], "x", 3, True])
def test_params_present_and_not_an_object_is_32602(door: Listening, params: Any) -> None:
    """CARD "What the door answers" step 13 / ID: `params` that is present and is not an
    object — `null` included — is `-32602` `Invalid parameters: params must be an object`."""
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "GetTask",
                       "params": params}).encode()
    status, answer = json_answer(exchange(door.url, build(body, JSON)))
    assert status == 200
    assert answer == {"jsonrpc": "2.0", "id": 7, "error": {
        "code": -32602, "message": "Invalid parameters: params must be an object"}}


def test_params_left_out_read_as_an_empty_object(door: Listening) -> None:
    """CARD "JSON-RPC request": `params` omitted reads as `{}`; GetTask then names its id,
    CancelTask too (CARD "Errors": `-32602` names the parameter)."""
    _, get = json_answer(exchange(door.url, build(rpc_body("GetTask"), JSON)))
    assert get["error"] == {"code": -32602, "message": "GetTask requires an id"}
    _, cancel = json_answer(exchange(door.url, build(rpc_body("CancelTask"), JSON)))
    assert cancel["error"] == {"code": -32602,
                               "message": "Invalid params: CancelTask requires an id"}


# -- the card -----------------------------------------------------------------------------------
def test_the_card_is_murmurs_documented_card(door: Listening) -> None:
    """CARD's card for `my-agent` (ID `a2a_card_is_the_documented_document`): `tools` names the
    installed artifacts the model can call — never a shell binary (`shell: true` says the
    shell) nor a hook — and `frames` every event type the streams write."""
    card = door.door.public_card()
    assert card == {
        "name": "my-agent",
        "description": "Murmur capsule my-agent 0.1.0",
        "version": "0.1.0",
        "supportedInterfaces": [{"url": door.url, "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {
            "streaming": True, "pushNotifications": False, "extendedAgentCard": False,
            "extensions": [
                {"uri": "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1",
                 "description": "Every JSON-RPC method this door answers, including the "
                 "murmur methods stream/watch and session/stop, which are not A2A methods, "
                 "and whether it accepts tasks from peer capsules.",
                 "required": False,
                 "params": {"methods": ["SendMessage", "SendStreamingMessage", "stream/watch",
                                        "GetTask", "CancelTask", "session/stop"],
                            "peerTasks": False}},
                {"uri": "https://docs.murmur.nexus/reference/agent-card/#murmur-capsule-v1",
                 "description": "The session answering this address and what the capsule may "
                 "do. Served only to authenticated callers once the door authenticates.",
                 "required": False,
                 "params": {"sessionId": "", "tools": ["bash"], "shell": True,
                            "network": True, "planes": []}},
                {"uri": "https://docs.murmur.nexus/reference/streaming-protocol/"
                        "#murmur-stream-v1",
                 "description": "Every server-sent event type this capsule's "
                 "SendStreamingMessage and stream/watch connections can write. Only status "
                 "and artifact correspond to A2A events; the others are murmur frames.",
                 "required": False,
                 "params": {"frames": ["status", "artifact", "text", "thinking",
                                       "tool-call-started", "tool-call-progress", "gap",
                                       "lagged", "connection-ack", "capsule-closed",
                                       "error"]}}]},
        "securitySchemes": {},
        "securityRequirements": [],
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{"id": "task", "name": "Run a task",
                    "description": "Runs one task given as a text message and reports its "
                    "outcome.", "tags": ["task"]}],
    }


def test_a_door_that_takes_no_task_lists_no_error_frame(tmp_path: Path) -> None:
    """ID `HTTP_FRAMES`: under `task_acceptance: none` no SendStreamingMessage is served, so
    the `error` frame (written on it alone) is not listed; nor are the message methods."""
    listening = listen(tmp_path, NO_TASKS)
    try:
        card = listening.door.public_card()
    finally:
        listening.server.close()
    params = {ext["uri"].rsplit("#", 1)[1]: ext["params"]
              for ext in card["capabilities"]["extensions"]}
    assert params["murmur-stream-v1"]["frames"] == [
        "status", "artifact", "text", "thinking", "tool-call-started", "tool-call-progress",
        "gap", "lagged", "connection-ack", "capsule-closed"]
    assert params["murmur-door-v1"]["methods"] == ["stream/watch", "GetTask", "CancelTask",
                                                   "session/stop"]
    assert card["skills"] == [] and card["capabilities"]["streaming"] is False


# -- tasks on a real served session ---------------------------------------------------------


def task_starts(murmur_home: Path, served: Served) -> dict[str, str | None]:
    record = json.loads((murmur_home / "running" / f"{served.session_id}.json").read_text())
    trace = Path(record["workdir"]) / "trace.jsonl"
    lines = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    return {line["task_id"]: line.get("context_id") for line in lines
            if line.get("event_type") == "task_start"}


def test_a_task_without_a_context_gets_a_fresh_one_of_its_own(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    """CARD "Messages": `contextId` — "A new task without one is given a fresh `ctx_…`"; ID
    `start_task`: the message's, else `ctx_` + a UUIDv7 (32 hex digits)."""
    root = make_capsule([text_response("one"), text_response("two"), text_response("three")],
                        extra=SLEEP)
    door = serve(root)
    served.append(door)
    first, second = door.send("first"), door.send("second")
    mine = door.send("third", contextId="ctx_mine")
    for task in (first, second, mine):
        door.until(task["id"], "TASK_STATE_COMPLETED")
    contexts = [first["contextId"], second["contextId"]]
    assert contexts[0] != contexts[1]
    assert all(c.startswith("ctx_") and len(c) == 36 and int(c[4:], 16) >= 0 for c in contexts)
    assert mine["contextId"] == "ctx_mine"
    assert task_starts(murmur_home, door) == {first["id"]: contexts[0],
                                              second["id"]: contexts[1],
                                              mine["id"]: "ctx_mine"}
    door.rpc("session/stop")
    assert door.process.wait(60) == 0


def test_a_launch_given_a_context_runs_every_task_in_it(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    """ID `start_task` / OBS: `mur run --context` fixes one context for every task."""
    root = make_capsule([text_response("one"), text_response("two")], extra=SLEEP)
    door = serve(root, "--context", "ctx_fixed")
    served.append(door)
    tasks = [door.send("first"), door.send("second")]
    assert [task["contextId"] for task in tasks] == ["ctx_fixed", "ctx_fixed"]
    for task in tasks:
        door.until(task["id"], "TASK_STATE_COMPLETED")
    door.rpc("session/stop")
    assert door.process.wait(60) == 0


ASK_AFTER_SLEEP = [call_response("sleep", {"command": "30"}),
                   call_response("ask", {"q": "branch?"})]


def residue_capsule(make_capsule: CapsuleFactory) -> Path:
    return make_capsule([*ASK_AFTER_SLEEP, text_response("done")], shell=("sleep",),
                        tools={"ask": FIXTURES / "ask_tool.wasm"},
                        extra=SLEEP + "  shell_grace_secs: 0.3\n  input_timeout_secs: 120\n")


def test_cancel_answers_at_once_with_what_still_runs_and_stop_answers_murmurs_three_keys(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    """CARD "GetTask" (CancelTask): a live task is answered at once in `TASK_STATE_CANCELED`
    with a `residue` artifact, one `application/json` data part per item still running
    (`{kind: detached_shell, work_id, binary, command, started_at_ms}`). ID
    `handle_session_stop`: `{session_id, canceled, residue}`, all three keys always present,
    `canceled` only what this call canceled, `residue` a list. SP "status": a queued task's
    final status is `task canceled before it started`, a running one's `task canceled`, and
    each task has exactly one."""
    door = serve(residue_capsule(make_capsule))
    served.append(door)
    running = door.send("sleep, then ask")
    door.until(running["id"], "TASK_STATE_INPUT_REQUIRED")  # `sleep 30` went on behind
    queued, other = door.send("queued one"), door.send("and another")
    watching = door.client.stream("POST", "/", headers={**V1, "Last-Event-ID": "0"}, json={
        "jsonrpc": "2.0", "id": 9, "method": "stream/watch"})
    with watching as watch:
        answer = door.rpc("CancelTask", {"id": queued["id"]}).json()["result"]
        (residue,) = answer.pop("artifacts")
        answer.pop("history")  # murmur-tui's own: what the task was asked (A2A's Task has it)
        assert answer == {"id": queued["id"], "contextId": queued["contextId"],
                          "status": {"state": "TASK_STATE_CANCELED"}}
        assert residue["artifactId"] == residue["name"] == "residue"
        (part,) = residue["parts"]
        assert part["mediaType"] == "application/json"
        item = part["data"]
        assert set(item) == {"kind", "work_id", "binary", "command", "started_at_ms"}
        assert (item["kind"], item["binary"], item["command"]) == (
            "detached_shell", "sleep", "sleep 30")
        assert item["work_id"].startswith("wrk_") and isinstance(item["started_at_ms"], int)
        assert door.rpc("GetTask", {"id": queued["id"]}).json()["result"]["status"] == {
            "state": "TASK_STATE_CANCELED", "message": {
                "messageId": f"msg_{queued['id']}_status", "contextId": queued["contextId"],
                "taskId": queued["id"], "role": "ROLE_AGENT",
                "parts": [{"text": "task canceled before it started",
                           "mediaType": "text/plain"}]}}

        stop = door.rpc("session/stop").json()["result"]
        assert stop == {"session_id": door.session_id,
                        "canceled": [running["id"], other["id"]], "residue": [item]}
        seen = b"".join(watch.iter_bytes())  # to the end: the session ends after a stop
    assert door.process.wait(60) is not None

    finals: dict[str, list[str]] = {}
    for _, event, data in frames(seen.decode()):
        if event == "status" and data["final"]:
            finals.setdefault(data["id"], []).append(data["status"]["message"])
    assert finals == {running["id"]: ["task canceled"],
                      queued["id"]: ["task canceled before it started"],
                      other["id"]: ["task canceled before it started"]}
    starts = [event for _, event, data in frames(seen.decode())
              if event == "status" and data["status"]["state"] == "submitted"]
    assert starts == []  # no frame of its own at a task's start (SP "status")
