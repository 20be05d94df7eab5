"""The newest door's bodies checked against the official A2A SDK's `lf.a2a.v1` types: the agent
card, GetTask's task in each state a supervisor reads, and SendMessage's result parse under the
strict protobuf JSON parser, so a misspelt or misplaced field fails here.

The SDK is a test-only oracle (the `test` extra); murmur-tui never imports it."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.types import a2a_pb2
from google.protobuf import json_format

from tui.core.door.card import CardFacts, card
from tui.core.door.residue import residue_artifact
from tui.core.door.tasks import DoorTask

FACTS = CardFacts(name="demo", version="1.0.0", url="http://127.0.0.1:41873",
                  session_id="ses_0190", takes_tasks=True, authenticated=False,
                  tools=("bash", "echo"), shell=True, network=False)


def parse(body: dict[str, Any], message: Any) -> Any:
    """`body` as `message`, strictly: an unknown field or a wrong type raises ParseError."""
    return json_format.ParseDict(body, message(), ignore_unknown_fields=False)


@pytest.mark.parametrize(("authenticated", "extended"), [(False, False), (True, False),
                                                        (True, True)],
                         ids=["public", "authenticated-public", "extended"])
def test_the_card_parses_as_an_agent_card(authenticated: bool, extended: bool) -> None:
    facts = CardFacts(**{**FACTS.__dict__, "authenticated": authenticated})
    parsed = parse(card(facts, extended=extended), a2a_pb2.AgentCard)
    assert parsed.name == "demo" and parsed.version == "1.0.0"
    assert parsed.supported_interfaces[0].protocol_version == "1.0"
    assert parsed.supported_interfaces[0].protocol_binding == "JSONRPC"
    assert parsed.capabilities.extended_agent_card is authenticated
    uris = [extension.uri.rsplit("#", 1)[1] for extension in parsed.capabilities.extensions]
    assert uris == (["murmur-door-v1", "murmur-stream-v1"] if authenticated and not extended
                    else ["murmur-door-v1", "murmur-capsule-v1", "murmur-stream-v1"])
    if authenticated:
        scheme = parsed.security_schemes["bearer"].http_auth_security_scheme
        assert scheme.scheme == "Bearer"
        assert [list(r.schemes["bearer"].list) for r in parsed.skills[0].security_requirements
                ] == [["SendMessage"], ["SendStreamingMessage"]]


@pytest.mark.parametrize(("authenticated", "extended", "named"), [
    (False, False, True), (True, False, False), (True, True, True)],
    ids=["public", "authenticated-public", "extended"])
def test_a_named_sessions_card_parses_and_says_the_name_where_it_says_the_session(
        authenticated: bool, extended: bool, named: bool) -> None:
    """The name rides in murmur-tui's own extension, beside the session id: the card still
    parses as an AgentCard, Murmur's three extensions keep their places, and a door that
    asks for a token says the name only on its extended card."""
    facts = CardFacts(**{**FACTS.__dict__, "authenticated": authenticated,
                         "session_name": "nightly build"})
    body = card(facts, extended=extended)
    parsed = parse(body, a2a_pb2.AgentCard)
    uris = [extension.uri for extension in parsed.capabilities.extensions]
    murmur = [uri.rsplit("#", 1)[1] for uri in uris if uri.startswith("https://docs.murmur")]
    assert murmur == (["murmur-door-v1", "murmur-stream-v1"] if authenticated and not extended
                      else ["murmur-door-v1", "murmur-capsule-v1", "murmur-stream-v1"])
    if named:
        assert uris[-1] == "urn:murmur-tui:agent-card:session-name-v1"
        last = parsed.capabilities.extensions[-1]
        assert last.required is False and dict(last.params) == {"name": "nightly build"}
    else:
        assert len(uris) == len(murmur)
    # everything else is the card of the same session with no name, key for key
    unnamed = card(CardFacts(**{**facts.__dict__, "session_name": None}), extended=extended)
    extensions = body["capabilities"]["extensions"]
    body["capabilities"]["extensions"] = extensions[:-1] if named else extensions
    assert body == unnamed


def test_a_door_that_takes_no_tasks_has_a_card_with_no_skill() -> None:
    facts = CardFacts(**{**FACTS.__dict__, "takes_tasks": False})
    parsed = parse(card(facts), a2a_pb2.AgentCard)
    assert list(parsed.skills) == [] and parsed.capabilities.streaming is False


def task(state: str, **fields: Any) -> DoorTask:
    return DoorTask("tsk_1", "ctx_1", state=state, text="deploy the app", **fields)


def test_a_working_task_parses_with_what_it_was_asked() -> None:
    parsed = parse(task("working").wire(), a2a_pb2.Task)
    assert parsed.status.state == a2a_pb2.TASK_STATE_WORKING
    assert parsed.history[0].role == a2a_pb2.ROLE_USER
    assert parsed.history[0].parts[0].text == "deploy the app"


def test_an_input_required_task_carries_its_question_as_the_prompt_artifact() -> None:
    parsed = parse(task("input-required", prompt="Which env?", request_id="r1").wire(),
                   a2a_pb2.Task)
    assert parsed.status.state == a2a_pb2.TASK_STATE_INPUT_REQUIRED
    (artifact,) = parsed.artifacts
    assert (artifact.artifact_id, artifact.name) == ("prompt", "prompt")
    assert (artifact.parts[0].text, artifact.parts[0].media_type) == ("Which env?", "text/plain")


def test_a_completed_task_carries_its_response_status_message_and_history() -> None:
    parsed = parse(task("completed", message="session ended", result="deployed").wire(),
                   a2a_pb2.Task)
    assert parsed.status.state == a2a_pb2.TASK_STATE_COMPLETED
    assert parsed.status.message.role == a2a_pb2.ROLE_AGENT
    assert parsed.status.message.parts[0].text == "session ended"
    assert [(a.artifact_id, a.parts[0].text) for a in parsed.artifacts] == [
        ("response", "deployed")]
    assert parsed.history[0].parts[0].text == "deploy the app"


@pytest.mark.parametrize("state", ["submitted", "failed", "rejected", "canceled"])
def test_every_other_state_parses(state: str) -> None:
    parsed = parse(task(state, message="why").wire(), a2a_pb2.Task)
    assert a2a_pb2.TaskState.Name(parsed.status.state) == f"TASK_STATE_{state.upper()}"


def test_a_send_message_result_parses_as_a_send_message_response() -> None:
    parsed = parse({"task": task("submitted").wire()}, a2a_pb2.SendMessageResponse)
    assert parsed.WhichOneof("payload") == "task" and parsed.task.id == "tsk_1"


def test_a_cancel_task_answer_with_its_residue_parses_as_a_task() -> None:
    """CancelTask's answer (agent-card.md "GetTask"): the task in TASK_STATE_CANCELED with a
    `residue` artifact, one `application/json` data part per item still running."""
    body = task("canceled", message="task canceled").wire()
    body["status"] = {"state": "TASK_STATE_CANCELED"}
    body["artifacts"] = [residue_artifact([{
        "kind": "detached_shell", "work_id": "wrk_01", "binary": "sleep",
        "command": "sleep 30", "started_at_ms": 1760000000000}])]
    parsed = parse(body, a2a_pb2.Task)
    (artifact,) = parsed.artifacts
    assert (artifact.artifact_id, artifact.parts[0].media_type) == ("residue",
                                                                    "application/json")
    assert json_format.MessageToDict(artifact.parts[0].data)["command"] == "sleep 30"


def test_the_sdks_stream_types_do_not_read_murmurs_frames() -> None:
    """Why the stream is not checked here (docs/fleet.md): Murmur's SSE frames are its own
    (streaming-protocol.md "Frame format"), not A2A's `StreamResponse` — a `status` frame's
    data does not parse as one, on Murmur's door and on murmur-tui's alike."""
    frame = {"id": "tsk_1", "context_id": "ctx_1",
             "status": {"state": "working", "message": "inference turn 1"}, "final": False}
    with pytest.raises(json_format.ParseError):
        parse(frame, a2a_pb2.StreamResponse)


def test_the_oracle_refuses_a_misspelt_field() -> None:
    body = task("working").wire()
    body["contextID"] = body.pop("contextId")
    with pytest.raises(json_format.ParseError):
        parse(body, a2a_pb2.Task)


def test_murmur_tui_itself_never_imports_the_sdk() -> None:
    import subprocess
    import sys

    script = ("import sys\nimport tui.commands.main\nfrom tui.core import door\n"
              "from tui.core.door import server, rpc, card, frames, auth, tasks\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('a2a', 'google')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
