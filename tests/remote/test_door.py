"""The door client against a fake door of each generation: the card, the request shapes,
refusals as readable errors."""

from __future__ import annotations

import socket

import pytest

from tests.door_fake import CONTEXT, SESSION, FakeDoor, serving
from tui.core.a2a.client import DoorClient, parse_card
from tui.core.errors import DoorError


@pytest.mark.parametrize(("generation", "session"), [("A", None), ("B", SESSION), ("C", SESSION)])
def test_the_card_names_its_generation(generation: str, session: str | None) -> None:
    with serving(FakeDoor(generation)) as door:
        card = DoorClient(door.url).card()
    assert (card.generation, card.name, card.version, card.session_id) == (
        generation, "fake-capsule", "0.1.0", session)
    assert card.streaming
    assert ("SendMessage" in card.methods) == (generation == "C")


def test_an_unknown_protocol_version_is_named() -> None:
    card = {"name": "x", "version": "1", "supportedInterfaces": [
        {"url": "http://h", "protocolBinding": "JSONRPC", "protocolVersion": "2.0"}]}
    with pytest.raises(DoorError, match=r"speaks '2.0'"):
        parse_card(card, "http://h")
    with pytest.raises(DoorError, match="not a JSON object"):
        parse_card([], "http://h")


@pytest.mark.parametrize("generation", ["A", "B"])
def test_older_doors_get_a_plain_message_as_the_answer(generation: str) -> None:
    with serving(FakeDoor(generation)) as door:
        door.wait_input("tsk_9", "Which env?")
        task = DoorClient(door.url).answer("tsk_9", None, "staging")
    assert task.state == "working"
    sent = door.rpc("message/send")[-1]
    assert sent.body["params"] == {"message": {"messageId": sent.body["params"]["message"][
        "messageId"], "role": "user", "parts": [{"text": "staging"}]}}
    assert "a2a-version" not in sent.headers
    assert door.tasks["tsk_9"].answers == ["staging"]


def test_the_newest_door_gets_the_task_and_its_context() -> None:
    with serving(FakeDoor("C")) as door:
        door.wait_input("tsk_9", "Which env?", context="ctx_7")
        client = DoorClient(door.url)
        assert client.get_task("tsk_9").prompt == "Which env?"
        task = client.answer("tsk_9", None, "staging")  # the context is read from GetTask
    assert task.state == "working"
    sent = door.rpc("SendMessage")[-1]
    message = sent.body["params"]["message"]
    assert {k: message[k] for k in ("role", "taskId", "contextId", "parts")} == {
        "role": "ROLE_USER", "taskId": "tsk_9", "contextId": "ctx_7",
        "parts": [{"text": "staging"}]}
    assert all(r.headers.get("a2a-version") == "1.0" for r in door.requests if r.method == "POST")


@pytest.mark.parametrize("generation", ["A", "B"])
def test_older_doors_refuse_a_new_task_while_one_waits(generation: str) -> None:
    with serving(FakeDoor(generation)) as door:
        door.wait_input("tsk_9", "Which env?")
        client = DoorClient(door.url)
        with pytest.raises(DoorError, match=r"tsk_9 .* waits for an answer"):
            client.send_task("deploy it")
        assert door.rpc("message/send") == []  # nothing reached the waiting task
        assert door.tasks["tsk_9"].answers == []
        door.tasks["tsk_9"].state = "completed"
        assert client.send_task("deploy it").state == "submitted"


def test_the_newest_door_takes_a_new_task_while_one_waits() -> None:
    with serving(FakeDoor("C")) as door:
        door.wait_input("tsk_9", "Which env?")
        task = DoorClient(door.url).send_task("another")
    assert task.state == "submitted" and task.id != "tsk_9"
    assert door.tasks["tsk_9"].answers == []


def test_answering_a_task_that_does_not_wait_is_refused_on_older_doors() -> None:
    with serving(FakeDoor("B")) as door:
        door.wait_input("tsk_9", "Which env?")
        door.tasks["tsk_9"].state = "working"
        with pytest.raises(DoorError, match="is working, not waiting"):
            DoorClient(door.url).answer("tsk_9", CONTEXT, "staging")
        assert door.rpc("message/send") == []


def test_cancel_and_stop_where_the_door_serves_them() -> None:
    with serving(FakeDoor("C")) as door:
        door.wait_input("tsk_9", "q")
        client = DoorClient(door.url)
        assert client.cancel("tsk_9").state == "canceled"
        door.wait_input("tsk_8", "q")
        stopped = client.stop()  # Murmur's answer (agent-card.md "session/stop")
        assert door.stopped
        assert (stopped.session_id, stopped.canceled, stopped.residue) == (
            "ses_fake", ("tsk_8",), ())
    with serving(FakeDoor("C")) as door:  # what an earlier murmur-tui door answered
        door.stop_answer = {"stopped": True, "canceled": ["tsk_1"], "notStarted": ["tsk_2"],
                            "residue": []}
        stopped = DoorClient(door.url).stop()
        assert (stopped.session_id, stopped.canceled) == (None, ("tsk_1", "tsk_2"))
    with serving(FakeDoor("A")) as door, pytest.raises(DoorError, match="does not serve "
                                                       "canceling a task"):
        DoorClient(door.url).cancel("tsk_9")


def test_refusals_are_one_readable_error_and_never_show_the_token() -> None:
    token = "tok-very-secret-0123456789"
    with serving(FakeDoor("C", token="right-token-abcdef")) as door:
        with pytest.raises(DoorError) as no_token:
            DoorClient(door.url).get_task("tsk_1")
        with pytest.raises(DoorError) as bad_token:
            DoorClient(door.url, token=token).get_task("tsk_1")  # the door echoes it back
    assert no_token.value.status == 401 and no_token.value.reason == "unauthenticated"
    assert f"the door at {door.url} refused GetTask: HTTP 401 unauthenticated" in str(
        no_token.value)
    assert bad_token.value.reason == "invalid_token"
    assert token not in str(bad_token.value) and "[redacted]" in str(bad_token.value)
    with serving(FakeDoor("C", scopes=["stream/watch"])) as door, pytest.raises(DoorError) as e:
        DoorClient(door.url).get_task("tsk_1")
    assert e.value.status == 403
    assert "credential 'watcher' does not reach GetTask" in str(e.value)


def test_json_rpc_errors_and_unreachable_doors() -> None:
    with serving(FakeDoor("C")) as door, pytest.raises(DoorError) as error:
        DoorClient(door.url).get_task("tsk_nope")
    assert error.value.rpc_code == -32001 and "Task not found" in str(error.value)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(DoorError, match=f"cannot reach the door at http://127.0.0.1:{port}: "
                       "connection refused"):
        DoorClient(f"127.0.0.1:{port}").card()


def test_a_silent_door_times_out() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(DoorError, match=r"did not answer the agent card within 0\.3 s"):
            DoorClient(f"http://127.0.0.1:{port}", timeout=0.3).card()
