"""CancelTask on a served session (`launch --headless --serve`, a real process over loopback):
it cancels the task it names and no other, and a sleeping session goes on serving."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import CapsuleFactory
from tests.responses import call_response, text_response
from tests.served import SLEEP, Served, serve
from tests.wasm.conftest import FIXTURES

ASK = [call_response("ask", {"q": "branch?"})]


def asking_capsule(make_capsule: CapsuleFactory, script: list[dict[str, Any]]) -> Path:
    return make_capsule(script, tools={"ask": FIXTURES / "ask_tool.wasm"},
                        extra=SLEEP + "  input_timeout_secs: 120\n")


def trace_lines(door: Served, murmur_home: Path) -> list[dict[str, Any]]:
    record = json.loads((murmur_home / "running" / f"{door.session_id}.json").read_text())
    trace = Path(record["workdir"]) / "trace.jsonl"
    return [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]


def kind(line: dict[str, Any]) -> str:
    return str(line.get("event_type"))


def test_cancel_ends_the_running_task_alone_and_a_sleeping_session_takes_the_next(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    root = asking_capsule(make_capsule, [*ASK, text_response("second done")])
    door = serve(root)
    served.append(door)
    first = door.send("ask me")
    door.until(first["id"], "TASK_STATE_INPUT_REQUIRED")

    canceled = door.rpc("CancelTask", {"id": first["id"]}).json()["result"]
    assert canceled["id"] == first["id"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    again = door.rpc("CancelTask", {"id": first["id"]}).json()["error"]
    assert again["code"] == -32002
    assert again["data"][0]["metadata"] == {"taskId": first["id"],
                                            "state": "TASK_STATE_CANCELED"}

    assert door.process.poll() is None  # the session sleeps and serves on
    second = door.send("and now this")
    done = door.until(second["id"], "TASK_STATE_COMPLETED")
    assert done["artifacts"][0]["parts"][0]["text"] == "second done"

    lines = trace_lines(door, murmur_home)
    started = [line["task_id"] for line in lines if kind(line) == "task_start"]
    assert started == [first["id"], second["id"]]  # the door's ids, in the trace too
    assert [line["task_id"] for line in lines if kind(line) == "task_canceled"] == [first["id"]]
    assert not any(kind(line) == "session_end" for line in lines)
    door.rpc("session/stop")
    assert door.process.wait(60) in (0, 1)


def test_cancel_takes_a_queued_task_out_before_it_runs(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    root = asking_capsule(make_capsule, [*ASK, text_response("first done"),
                                         text_response("third done")])
    door = serve(root)
    served.append(door)
    first = door.send("ask me")
    door.until(first["id"], "TASK_STATE_INPUT_REQUIRED")
    queued = door.send("never run me")
    third = door.send("then me")
    assert queued["status"]["state"] == "TASK_STATE_SUBMITTED"

    canceled = door.rpc("CancelTask", {"id": queued["id"]}).json()["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert door.rpc("GetTask", {"id": queued["id"]}).json()["result"]["status"]["state"] \
        == "TASK_STATE_CANCELED"
    assert door.rpc("GetTask", {"id": first["id"]}).json()["result"]["status"]["state"] \
        == "TASK_STATE_INPUT_REQUIRED"  # the running task is untouched

    door.send("main", taskId=first["id"], contextId=first["contextId"])
    assert door.until(first["id"], "TASK_STATE_COMPLETED")["artifacts"][0]["parts"][0][
        "text"] == "first done"
    assert door.until(third["id"], "TASK_STATE_COMPLETED")["artifacts"][0]["parts"][0][
        "text"] == "third done"
    started = [line["task_id"] for line in trace_lines(door, murmur_home)
               if kind(line) == "task_start"]
    assert started == [first["id"], third["id"]]
    door.rpc("session/stop")
    assert door.process.wait(60) == 0
