"""`launch --headless --serve`: a real murmur-tui process serving Murmur's newest A2A door,
spoken to with httpx over loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import CapsuleFactory
from tests.responses import call_response, text_response
from tests.served import SLEEP, V1, Served, serve
from tests.wasm.conftest import FIXTURES


def frames(text: str) -> list[tuple[int | None, str, dict[str, Any]]]:
    found = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines()
                      if ": " in line and not line.startswith(":"))
        if "event" in fields:
            found.append((int(fields["id"]) if "id" in fields else None, fields["event"],
                          json.loads(fields["data"])))
    return found


def test_a_task_sent_to_the_door_runs_and_its_frames_replay_from_last_event_id(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    root = make_capsule([text_response("four"), text_response("five")], extra=SLEEP)
    door = serve(root)
    served.append(door)
    record = murmur_home / "running" / f"{door.session_id}.json"
    fields = json.loads(record.read_text())
    assert set(fields) == {"session_id", "url", "pid", "process_start", "capsule_name",
                           "capsule_version", "workdir", "records_dir", "outlives_launcher",
                           "started_at"}
    assert fields["pid"] == door.process.pid and f"http://{fields['url']}" == door.url
    assert record.stat().st_mode & 0o777 == 0o600
    card = door.client.get("/.well-known/agent-card.json").json()
    assert card["supportedInterfaces"][0] == {"url": door.url, "protocolBinding": "JSONRPC",
                                              "protocolVersion": "1.0"}
    capsule_ext = next(e for e in card["capabilities"]["extensions"] if "capsule" in e["uri"])
    assert capsule_ext["params"]["sessionId"] == door.session_id

    first = door.send("2+2")
    assert first["status"]["state"] == "TASK_STATE_SUBMITTED"
    done = door.until(first["id"], "TASK_STATE_COMPLETED")
    assert done["artifacts"][0]["parts"][0]["text"] == "four"
    assert done["contextId"] == first["contextId"]

    seen = door.watch_until(b'"completed"')
    got = frames(seen.decode())
    assert got[0][1] == "connection-ack" and got[0][2]["role"] == "observer"
    ids = [frame_id for frame_id, _, _ in got if frame_id is not None]
    assert ids == list(range(1, len(ids) + 1))  # a replay from 0: every frame, from 1
    final = next(data for _, event, data in got if event == "status" and data["final"])
    assert final["status"] == {"state": "completed", "message": "session ended",
                               "response": "four"} and final["id"] == first["id"]
    assert any(event == "status" and data["status"]["message"] == "inference turn 1"
               for _, event, data in got)

    # from the last id but one: exactly the last frame
    with door.client.stream("POST", "/", headers={**V1, "Last-Event-ID": str(ids[-2])}, json={
            "jsonrpc": "2.0", "id": 3, "method": "stream/watch"}) as watch:
        seen = b""
        for chunk in watch.iter_bytes():
            seen += chunk
            if seen.count(b"\n\n") >= 2:
                break
    assert [f[0] for f in frames(seen.decode())] == [None, ids[-1]]

    stop = door.rpc("session/stop").json()  # Murmur's answer: nothing was live, nothing runs
    assert stop["result"] == {"session_id": door.session_id, "canceled": [], "residue": []}
    assert door.process.wait(60) == 0
    assert not record.exists()


def test_a_served_session_without_a_task_waits_for_its_first_task_from_the_door(
        make_capsule: CapsuleFactory, served: list[Served]) -> None:
    root = make_capsule([text_response("hello back")])
    door = serve(root)
    served.append(door)
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    with door.client.stream("POST", "/", headers=V1, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": message}}) as stream:
        assert stream.headers["content-type"] == "text/event-stream"
        got = frames(b"".join(stream.iter_bytes()).decode())  # it ends on the task's final
    assert [event for _, event, _ in got].count("capsule-closed") == 0
    last_event, final = got[-1][1], got[-1][2]
    assert last_event == "status" and final["final"] is True
    assert final["status"]["response"] == "hello back"
    assert door.process.wait(60) == 0  # single, after_task exit: the session ends


def test_bad_requests_get_murmurs_answers(make_capsule: CapsuleFactory,
                                          served: list[Served]) -> None:
    door = serve(make_capsule([text_response("x")], extra=SLEEP))
    served.append(door)
    post = door.client.post
    missing = post("/", json={"jsonrpc": "2.0", "id": 7, "method": "GetTask",
                              "params": {"id": "tsk_x"}}).json()
    assert missing["id"] == 7 and missing["error"]["code"] == -32009
    assert missing["error"]["data"][0]["metadata"] == {"requestedVersion": "",
                                                       "supportedVersions": "1.0"}
    old = door.rpc("GetTask", {"id": "x"}, {"A2A-Version": "0.3"}).json()
    assert old["error"]["code"] == -32009
    assert post("/", content=b"{nope", headers={**V1, "content-type": "application/json"}
                ).json()["error"] == {"code": -32700, "message": "Invalid JSON payload"}
    assert post("/", content=b"[]", headers={**V1, "content-type": "application/json"}
                ).json()["error"]["code"] == -32600
    assert post("/", content=b"{}", headers={**V1, "content-type": "text/plain"}
                ).status_code == 404
    assert door.client.get("/nowhere").status_code == 404
    huge = post("/", content=b" " * (1024 * 1024 + 1),
                headers={**V1, "content-type": "application/json"})
    assert huge.status_code == 413
    assert door.rpc("message/send", {}).json()["error"]["code"] == -32601
    assert door.rpc("GetTask", {"id": "tsk_none"}).json()["error"]["code"] == -32001
    assert door.rpc("GetTask", {}).json()["error"]["message"] == "GetTask requires an id"
    user = door.rpc("SendMessage", {"message": {"messageId": "m", "role": "user",
                                                "parts": [{"text": "x"}]}}).json()
    assert user["error"]["code"] == -32602
    assert door.rpc("GetExtendedAgentCard").json()["error"]["code"] == -32004
    assert door.process.poll() is None  # none of it hurt the session


def test_a_question_is_answered_through_the_door_naming_its_task(
        make_capsule: CapsuleFactory, served: list[Served]) -> None:
    script = [call_response("ask", {"q": "branch?"}), text_response("thanks")]
    extra = (SLEEP + "  input_timeout_secs: 60\n")
    root = make_capsule(script, tools={"ask": FIXTURES / "ask_tool.wasm"}, extra=extra)
    door = serve(root)
    served.append(door)
    task = door.send("ask me")
    waiting = door.until(task["id"], "TASK_STATE_INPUT_REQUIRED")
    assert waiting["artifacts"][0]["artifactId"] == "prompt"
    assert "branch?" in waiting["artifacts"][0]["parts"][0]["text"]
    wrong = door.rpc("SendMessage", {"message": {
        "messageId": "r0", "role": "ROLE_USER", "taskId": task["id"], "contextId": "ctx_other",
        "parts": [{"text": "main"}]}}).json()
    assert wrong["error"]["code"] == -32602
    answered = door.send("main", taskId=task["id"], contextId=task["contextId"])
    assert answered["status"]["state"] == "TASK_STATE_WORKING"
    door.until(task["id"], "TASK_STATE_COMPLETED")
    seen = door.watch_until(b'"completed"')
    got = frames(seen.decode())
    artifact = next(data for _, event, data in got if event == "artifact")["artifact"]
    assert "main" in artifact["content"] and artifact["tool_name"] == "ask"
    assert any(e == "status" and d["status"] == {"state": "working", "message": "resumed"}
               for _, e, d in got)
    again = door.rpc("SendMessage", {"message": {
            "messageId": "r2", "role": "ROLE_USER", "taskId": task["id"],
            "parts": [{"text": "late"}]}}).json()
    assert again["error"]["code"] == -32004


def test_tokens_on_an_authenticated_door_and_a_non_loopback_bind(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    auth = ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
            "      watcher:\n        scopes: [stream/watch, GetTask]\n")
    door = serve(make_capsule([text_response("x")], extra=SLEEP + auth))
    served.append(door)
    record_file = murmur_home / "running" / f"{door.session_id}.json"
    assert record_file.stat().st_mode & 0o777 == 0o600
    token = json.loads(record_file.read_text())["door_token"]  # the record is its one place
    none = door.rpc("GetTask", {"id": "x"})
    assert none.status_code == 401 and none.json()["error"] == "unauthenticated"
    assert none.headers["www-authenticate"] == 'Bearer realm="test-capsule"'
    bad = door.rpc("GetTask", {"id": "x"}, {"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.json()["error"] == "invalid_token"
    ok = door.rpc("GetTask", {"id": "x"}, {"Authorization": f"Bearer {token}"})
    assert ok.json()["error"]["code"] == -32001
    card = door.client.get("/.well-known/agent-card.json").json()
    assert card["capabilities"]["extendedAgentCard"] is True
    assert not any("capsule" in e["uri"] for e in card["capabilities"]["extensions"])
    extended = door.rpc("GetExtendedAgentCard", None, {"Authorization": f"Bearer {token}"})
    assert door.session_id in json.dumps(extended.json()["result"])
    door.rpc("session/stop", None, {"Authorization": f"Bearer {token}"})
    assert door.process.wait(60) == 0
    assert door.process.stdout is not None and door.process.stderr is not None
    said = door.process.stdout.read() + door.process.stderr.read() + json.dumps(door.ready)
    assert token not in said
    assert not record_file.exists()

    wide = serve(make_capsule([text_response("x")], extra=SLEEP, folder="wide"), "0.0.0.0:0")
    served.append(wide)
    port = wide.url.rsplit(":", 1)[1]
    local = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    refused = local.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"},
                         headers=V1)
    assert refused.status_code == 401
    assert "door_token" in json.loads(
        (murmur_home / "running" / f"{wide.session_id}.json").read_text())
    local.close()
