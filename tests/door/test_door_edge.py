"""The door's edge against hostile input, on a real `launch --headless --serve` process: every
request gets an HTTP answer naming what is wrong, nothing reaches a file that a reader could
not read back, and the session goes on serving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.capsules import set_driver_config
from tests.conftest import CapsuleFactory
from tests.door.wire import JSON, build, exchange, files_intact, json_answer, rpc_body
from tests.responses import text_response
from tests.served import SLEEP, Served, serve

LONE = "\ud800"
MESSAGE = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}


def still_serves(door: Served, capsule: Path, murmur_home: Path) -> None:
    """A task sent now completes, and every session file reads back."""
    task = door.send("are you there?")
    door.until(task["id"], "TASK_STATE_COMPLETED")
    assert files_intact(capsule, murmur_home) >= 3


def test_a_body_nested_200000_deep_gets_a_parse_error_saying_so_and_the_session_goes_on(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    root = make_capsule([text_response("still here")], extra=SLEEP)
    door = serve(root)
    served.append(door)
    for deep in (b"[" * 200_000 + b"]" * 200_000, b'{"a":' * 150_000 + b"1" + b"}" * 150_000):
        status, body = json_answer(exchange(door.url, build(deep, JSON)))
        assert status == 200
        assert body["error"] == {"code": -32700,
                                 "message": "Invalid JSON payload: nested deeper than 127"}
        assert body["id"] is None
    # the limit is Murmur's: 127 levels are read, 128 are not
    for depth, code in ((127, -32001), (128, -32700)):
        params = json.dumps({"id": "tsk_none", "extra": json.loads("[" * (depth - 2) +
                                                                   "]" * (depth - 2))})
        raw = b'{"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": %s}' % \
            params.encode()
        assert json_answer(exchange(door.url, build(raw, JSON)))[1]["error"]["code"] == code
    still_serves(door, root, murmur_home)


@pytest.mark.parametrize(("value", "said"), [
    (b"7" * 5000, "is over 18446744073709551615"),
    (b"18446744073709551616", "is over 18446744073709551615"),
    (b"\xb2", "byte 1 is 0xb2"),  # latin-1 superscript two: isdigit() in Python, not a number
    ("\u0663".encode(), "byte 1 is 0xd9"),  # an Arabic-Indic digit
    (b"12\xed\xa0\x80", "byte 3 is 0xed"),  # a surrogate, UTF-8 encoded
], ids=["5000-digits", "past-u64", "latin-1-digit", "arabic-digit", "surrogate-bytes"])
def test_a_last_event_id_that_is_not_an_event_id_gets_400_naming_the_header(
        make_capsule: CapsuleFactory, served: list[Served], value: bytes, said: str) -> None:
    door = serve(make_capsule([text_response("x")], extra=SLEEP))
    served.append(door)
    for method in ("stream/watch", "GetTask"):
        raw = exchange(door.url, build(rpc_body(method, {"id": "tsk_x"}),
                                       [*JSON, (b"last-event-id", value)]))
        status, body = json_answer(raw)
        assert status == 400 and body["error"] == "invalid_header"
        assert body["message"].startswith("the Last-Event-ID header") and said in body["message"]
    # text that is not a number is Murmur's "from the start": the stream is served
    raw = exchange(door.url, build(rpc_body("stream/watch"), [*JSON, (b"last-event-id", b"x")]))
    assert raw.startswith(b"HTTP/1.1 200") and b"text/event-stream" in raw
    assert door.process.poll() is None


def test_a_lone_surrogate_anywhere_in_params_is_refused_naming_the_field_and_nothing_is_written(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    root = make_capsule([text_response("still here")], extra=SLEEP)
    door = serve(root)
    served.append(door)
    part = {"text": "hello"}
    cases = [
        ("SendMessage", {"message": {**MESSAGE, "parts": [{"text": f"a{LONE}b"}]}},
         "params.message.parts[0].text"),
        ("SendMessage", {"message": {**MESSAGE, "parts": [part, {"data": {"k": [LONE]}}]}},
         "params.message.parts[1].data.k[0]"),
        ("SendMessage", {"message": {**MESSAGE, "contextId": LONE}}, "params.message.contextId"),
        ("SendMessage", {"message": {**MESSAGE, "taskId": f"tsk_{LONE}"}},
         "params.message.taskId"),
        ("SendMessage", {"message": {**MESSAGE, "messageId": LONE}}, "params.message.messageId"),
        ("SendMessage", {"message": {**MESSAGE, "metadata": {"note": LONE}}},
         "params.message.metadata.note"),
        ("SendMessage", {"message": MESSAGE, "metadata": {LONE: 1}}, "a key of params.metadata"),
        ("SendStreamingMessage", {"message": {**MESSAGE, "parts": [{"text": LONE}]}},
         "params.message.parts[0].text"),
        ("GetTask", {"id": f"tsk_{LONE}"}, "params.id"),
        ("CancelTask", {"id": f"tsk_{LONE}"}, "params.id"),
        ("stream/watch", {"cursor": LONE}, "params.cursor"),
    ]
    for method, params, field in cases:
        status, body = json_answer(exchange(door.url, build(rpc_body(method, params), JSON)))
        assert status == 200, (method, field)
        assert body["error"]["code"] == -32602, (method, field, body)
        assert body["error"]["message"] == (f"Invalid params: {field} holds a lone surrogate "
                                            "(not a character); send text as Unicode "
                                            "characters")
    # an id holding one is no request (it could not be written back in the answer)
    status, body = json_answer(exchange(door.url, build(rpc_body("GetTask", {"id": "x"},
                                                                 request_id=LONE), JSON)))
    assert body == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "Request payload validation error"}}
    still_serves(door, root, murmur_home)
    assert list(murmur_home.rglob("conversation.jsonl")) and list(root.rglob("trace.jsonl"))


@pytest.mark.parametrize("value", [b"Bearer \x00abc", b"Bearer abc\rdef", b"Bearer \x00"],
                         ids=["nul", "cr", "nul-alone"])
def test_a_control_character_in_authorization_gets_400_naming_the_header_not_echoing_it(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served],
        value: bytes) -> None:
    auth = "network:\n  authentication:\n    scheme: bearer\n"
    door = serve(make_capsule([text_response("x")], extra=SLEEP + auth))
    served.append(door)
    record = json.loads((murmur_home / "running" / f"{door.session_id}.json").read_text())
    token = str(record["door_token"]).encode()
    sent = value.replace(b"abc", token)
    raw = exchange(door.url, build(rpc_body("GetTask", {"id": "x"}),
                                   [*JSON, (b"Authorization", sent)]))
    status, body = json_answer(raw)
    assert status == 400 and body == {
        "error": "bad_request",
        "message": "the Authorization header holds a control character (NUL, CR or LF)"}
    assert token not in raw
    # a line break splits the header: the rest is no header, and that is said
    raw = exchange(door.url, build(rpc_body("GetTask", {"id": "x"}),
                                   [*JSON, (b"Authorization", b"Bearer " + token + b"\nzz")]))
    status, body = json_answer(raw)
    assert status == 400 and "after the Authorization header" in body["message"]
    assert token not in raw
    assert door.rpc("GetTask", {"id": "x"}, {"Authorization": f"Bearer {token.decode()}"}
                    ).json()["error"]["code"] == -32001


def test_an_authenticated_door_refuses_a_stranger_before_its_body_arrives(
        make_capsule: CapsuleFactory, served: list[Served]) -> None:
    auth = "network:\n  authentication:\n    scheme: bearer\n"
    door = serve(make_capsule([text_response("x")], extra=SLEEP + auth))
    served.append(door)
    # a body of 900 KB announced and never sent: the answer comes without it
    for headers in (JSON, [*JSON, (b"authorization", b"Bearer forged")]):
        status, body = json_answer(exchange(door.url, build(b"", headers, length=900_000)))
        assert status == 401 and body["error"] in ("unauthenticated", "invalid_token")


def test_cancel_task_naming_another_context_is_refused_and_the_task_runs_on(
        make_capsule: CapsuleFactory, served: list[Served]) -> None:
    root = make_capsule([text_response("slow " * 400), text_response("slow " * 400)],
                        extra=SLEEP)
    set_driver_config(root, chars_per_second=40)
    door = serve(root)
    served.append(door)
    task = door.send("talk slowly")
    door.until(task["id"], "TASK_STATE_WORKING")
    for params in ({"id": task["id"], "contextId": "ctx_someone_else"},
                   {"id": task["id"], "metadata": {"contextId": "ctx_someone_else"}}):
        refused = door.rpc("CancelTask", params).json()
        assert refused["error"] == {
            "code": -32602, "message": f"Invalid params: task {task['id']} is not in context "
            "ctx_someone_else; a caller cancels only its own context's tasks"}
        state = door.rpc("GetTask", {"id": task["id"]}).json()["result"]["status"]["state"]
        assert state == "TASK_STATE_WORKING"
    bad = door.rpc("CancelTask", {"id": task["id"], "contextId": 7}).json()
    assert bad["error"]["code"] == -32602 and "contextId" in bad["error"]["message"]
    mine = door.rpc("CancelTask", {"id": task["id"], "contextId": task["contextId"]}).json()
    assert mine["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    door.until(task["id"], "TASK_STATE_CANCELED")
    # a caller that names no context speaks for the session (as `mur cancel` does)
    other = door.send("talk slowly again")
    door.until(other["id"], "TASK_STATE_WORKING")
    assert door.rpc("CancelTask", {"id": other["id"]}).json()["result"]["status"]["state"] == \
        "TASK_STATE_CANCELED"
