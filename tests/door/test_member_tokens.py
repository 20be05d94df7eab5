"""Formation tokens at a member's door (murmur-newest §5.2, §7.5): a token the launcher minted for
`lead → coder` is, at coder's door, the credential `member:lead` — it sends a task (a peer task,
traced with `caller_member`) and reads or cancels only the tasks lead sent; a token for another
member's door is `403 not_permitted`, a forged one `401 invalid_token`, each the same bytes every
time. A real session served on loopback with a seat built here, spoken to over raw HTTP."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.capsules import write_capsule
from tests.door.test_murmur_shapes import MY_AGENT, listen
from tests.door.wire import JSON, build, exchange, rpc_body
from tests.responses import text_response
from tests.waits import block_until
from tui.core.asking.questions import QuestionBoard
from tui.core.door import Door
from tui.core.door.serving import Serving
from tui.core.formation.seat import Seat
from tui.core.formation.tokens import mint, new_keys
from tui.core.headless import HeadlessResponder
from tui.core.ids import formation_id
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

MEMBER = ("exports:\n  peer_tasks:\n    accept: true\n"
          "network:\n  authentication:\n    scheme: bearer\n")
AUTH = "network:\n  authentication:\n    scheme: bearer\n"
SLEEP = {"task_acceptance": "queue", "after_task": "sleep", "queue_depth": 4}


@dataclass
class Member:
    """coder's door, and the tokens a launcher would mint around it."""

    url: str
    door: Door
    session: Session
    frm: str
    operator: str
    lead: str  # lead → coder: reaches coder
    reviewer: str  # reviewer → coder: reaches coder, as another caller
    elsewhere: str  # lead → reviewer: a real token, for another door
    forged: str  # lead → coder, signed by another launch's key


def message(text: str) -> dict[str, Any]:
    return {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}


def call(item: Member, token: str | None, method: str, params: Any = None,
         extra: list[tuple[bytes, bytes]] | None = None) -> bytes:
    headers = list(JSON) + (extra or [])
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    return exchange(item.url, build(rpc_body(method, params), headers))


def parts(raw: bytes) -> tuple[bytes, bytes, Any]:
    """(status line, lower-cased head, JSON body)."""
    head, _, body = raw.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0], head.lower(), json.loads(body)


def answer(raw: bytes) -> Any:
    status, _, body = parts(raw)
    assert status == b"HTTP/1.1 200 OK", raw
    return body


def task_state(item: Member, token: str, task_id: str) -> str:
    return str(answer(call(item, token, "GetTask", {"id": task_id}))["result"]["status"]["state"])


@contextlib.contextmanager
def serving_coder(tmp_path: Path, responses: list[dict[str, Any]],
                  driver_config: dict[str, Any] | None = None) -> Iterator[Member]:
    """coder, a formation member's session served on loopback, its first task from the door."""
    root = write_capsule(tmp_path / "coder", responses, name="coder", shell=(),
                         lifecycle=SLEEP, extra=MEMBER, driver_config=driver_config)
    capsule = load_capsule(root)
    frm = formation_id()
    signing, key = new_keys()
    other_signing, _ = new_keys()
    seat = Seat(frm, "coder", False, key)
    board = QuestionBoard()
    door = Door(capsule, board, seat=seat)
    session = Session(capsule, LaunchOptions(home=tmp_path / "home", seat=seat),
                      sinks=[door.sink], responder=HeadlessResponder([], board=board))
    serving = Serving.start(door, session)

    def run() -> None:
        if serving.first_task(session.cancel):
            session.run()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    operator = door.tokens.operator
    assert operator is not None
    item = Member(serving.url, door, session, frm, operator,
                  mint(signing, frm, "lead", "coder"), mint(signing, frm, "reviewer", "coder"),
                  mint(signing, frm, "lead", "reviewer"),
                  mint(other_signing, frm, "lead", "coder"))
    try:
        yield item
    finally:
        session.inbox.close()
        door.stop()
        worker.join(30)
        serving.end()


@pytest.fixture
def coder(tmp_path: Path) -> Iterator[Member]:
    with serving_coder(tmp_path, [text_response(f"done {n}") for n in range(8)]) as item:
        yield item


def trace_lines(item: Member) -> list[dict[str, Any]]:
    path = item.session.paths.trace
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_callers_token_sends_a_peer_task_traced_with_its_caller(coder: Member) -> None:
    sent = answer(call(coder, coder.lead, "SendMessage", message("write it")))
    task_id = sent["result"]["task"]["id"]
    block_until(lambda: task_state(coder, coder.lead, task_id) == "TASK_STATE_COMPLETED",
                what="the member's task completes")
    got = answer(call(coder, coder.lead, "GetTask", {"id": task_id}))["result"]
    assert got["artifacts"][0]["parts"][0]["text"] == "done 0"
    # the first task was the session's first (it waited for one); the next is queued
    later = answer(call(coder, coder.reviewer, "SendMessage", message("review it")))
    later_id = later["result"]["task"]["id"]
    block_until(lambda: task_state(coder, coder.reviewer, later_id) == "TASK_STATE_COMPLETED",
                what="reviewer's task completes")
    block_until(lambda: sum(line["event_type"] == "task_end" for line in trace_lines(coder)) == 2,
                what="the trace holds both tasks' ends")
    lines = trace_lines(coder)
    received = [line for line in lines if line["event_type"] == "a2a_task_received"]
    started = [line for line in lines if line["event_type"] == "task_start"]
    assert [(r["task_id"], r["caller_member"]) for r in received] == [
        (task_id, "lead"), (later_id, "reviewer")]
    assert [(s["task_id"], s["origin"]) for s in started] == [
        (task_id, "peer"), (later_id, "peer")]
    session_node = lines[0]["event_id"]
    assert all(r["parent_id"] == session_node for r in received)
    assert coder.door.table.get(task_id).caller_member == "lead"  # type: ignore[union-attr]
    # no token byte in the trace
    text = coder.session.paths.trace.read_text(encoding="utf-8")
    for token in (coder.lead, coder.operator):
        assert token not in text and token.split(".")[-1] not in text


def test_a_member_sees_only_the_tasks_it_sent(coder: Member) -> None:
    mine = answer(call(coder, coder.lead, "SendMessage", message("one")))["result"]["task"]["id"]
    block_until(lambda: task_state(coder, coder.lead, mine) == "TASK_STATE_COMPLETED",
                what="lead's task completes")
    theirs = answer(call(coder, coder.operator, "SendMessage", message("two")))
    operators = theirs["result"]["task"]["id"]
    block_until(lambda: task_state(coder, coder.operator, operators) == "TASK_STATE_COMPLETED",
                what="the operator's task completes")
    # another member's token, and lead's token on a task lead did not send: not found, as an
    # unknown task is (Murmur: not visible to a formation token), for GetTask and CancelTask
    for token, task_id in ((coder.reviewer, mine), (coder.lead, operators)):
        for method in ("GetTask", "CancelTask"):
            error = answer(call(coder, token, method, {"id": task_id}))["error"]
            assert error["code"] == -32001 and error["message"] == "Task not found"
            assert error["data"][0]["metadata"] == {"taskId": task_id}
        assert answer(call(coder, token, "SendMessage", {"message": {
            **message("more")["message"], "taskId": task_id}}))["error"]["code"] == -32001
    # the operator's own token still sees every task
    assert task_state(coder, coder.operator, mine) == "TASK_STATE_COMPLETED"
    assert task_state(coder, coder.lead, mine) == "TASK_STATE_COMPLETED"


def test_a_member_cancels_the_task_it_sent(tmp_path: Path) -> None:
    slow = [text_response("x" * 4000)]  # streamed at 100 characters a second: it still runs
    with serving_coder(tmp_path, slow, {"chars_per_second": 100}) as coder:
        task_id = answer(call(coder, coder.lead, "SendMessage", message("work"))
                         )["result"]["task"]["id"]
        block_until(lambda: task_state(coder, coder.lead, task_id) == "TASK_STATE_WORKING",
                    what="lead's task runs")
        refused = answer(call(coder, coder.reviewer, "CancelTask", {"id": task_id}))
        assert refused["error"]["code"] == -32001  # not reviewer's to cancel
        reply = answer(call(coder, coder.lead, "CancelTask", {"id": task_id}))
        assert reply["result"]["status"]["state"] == "TASK_STATE_CANCELED"
        assert task_state(coder, coder.lead, task_id) == "TASK_STATE_CANCELED"


@pytest.mark.parametrize("method,params", [
    ("SendStreamingMessage", message("stream it")), ("stream/watch", {}),
    ("session/stop", {}), ("GetExtendedAgentCard", None)])
def test_a_member_reaches_nothing_else(coder: Member, method: str, params: Any) -> None:
    first, second = (call(coder, coder.lead, method, params) for _ in range(2))
    assert first == second
    status, head, body = parts(first)
    assert status == b"HTTP/1.1 403 Forbidden"
    assert body == {"error": "not_permitted",
                    "message": f"member 'lead' may not call {method} on this capsule"}
    assert (b'www-authenticate: bearer realm="coder", error="insufficient_scope", '
            b'scope="' + method.lower().encode() + b'"') in head
    assert coder.door.table.live() == []  # nothing was started
    assert coder.door.session is not None and not coder.door.ended.is_set()


def test_a_token_for_another_members_door_is_403_not_permitted(coder: Member) -> None:
    first = call(coder, coder.elsewhere, "SendMessage", message("hi"))
    status, head, body = parts(first)
    assert status == b"HTTP/1.1 403 Forbidden"
    assert body == {"error": "not_permitted", "message": "member 'lead' may not call this capsule"}
    assert b'www-authenticate: bearer realm="coder", error="insufficient_scope"\r\n' in \
        head + b"\r\n"
    # the token is looked at before the path, the body and the method, the same bytes each time
    header = [(b"authorization", f"Bearer {coder.elsewhere}".encode())]
    for other in (build(b"", header, method=b"GET", target=b"/elsewhere"),
                  build(b"{not json", [*JSON, *header]),
                  build(rpc_body("NoSuchMethod"), [*JSON, *header])):
        assert exchange(coder.url, other) == first
    assert call(coder, coder.elsewhere, "SendMessage", message("hi")) == first
    assert coder.door.table.live() == []


def test_a_forged_or_malformed_token_is_401_as_any_unknown_bearer(coder: Member) -> None:
    unknown = call(coder, "not-a-token-this-door-minted", "GetTask", {"id": "tsk_x"})
    status, head, body = parts(unknown)
    assert status == b"HTTP/1.1 401 Unauthorized"
    assert body["error"] == "invalid_token"
    assert b'www-authenticate: bearer realm="coder", error="invalid_token"' in head
    payload = coder.lead.split(".")[1]
    for token in (coder.forged, "mft1.x.y", f"mft1.{payload}.{'A' * 86}",
                  coder.lead[:-3] + "AAA", "mft1." + coder.lead):
        assert call(coder, token, "SendMessage", message("hi")) == unknown
    # the door's own token works as before
    reply = answer(call(coder, coder.operator, "GetTask", {"id": "tsk_x"}))
    assert reply["error"]["code"] == -32001


def test_a_member_to_a_capsule_that_declines_peers_is_peer_not_accepted(tmp_path: Path) -> None:
    """A member's call is a peer's whatever its headers say (step 3, after the token)."""
    declines = "exports:\n  peer_tasks:\n    accept: false\n" + AUTH
    root = write_capsule(tmp_path / "coder", [text_response("x")], name="coder", shell=(),
                         lifecycle=SLEEP, extra=declines)
    frm = formation_id()
    signing, key = new_keys()
    door = Door(load_capsule(root), QuestionBoard(), seat=Seat(frm, "coder", False, key))
    from tui.core.door.server import DoorServer

    server = DoorServer(door, door.broadcast, door.tokens, door.public_card)
    host, port = server.bind("127.0.0.1", 0)
    server.start()
    try:
        raw = exchange(f"http://{host}:{port}", build(rpc_body("SendMessage", message("hi")), [
            *JSON, (b"authorization", f"Bearer {mint(signing, frm, 'lead', 'coder')}".encode())]))
        status, _, body = parts(raw)
        assert status == b"HTTP/1.1 403 Forbidden" and body["error"] == "peer_not_accepted"
    finally:
        server.close()


def test_a_door_without_a_seat_takes_mft1_as_any_unknown_bearer(tmp_path: Path) -> None:
    item = listen(tmp_path, MY_AGENT + AUTH)
    try:
        frm = formation_id()
        signing, _ = new_keys()
        token = mint(signing, frm, "lead", "my-agent")
        unknown = exchange(item.url, build(rpc_body("GetTask", {"id": "tsk_x"}), [
            *JSON, (b"authorization", b"Bearer some-other-bearer")]))
        member = exchange(item.url, build(rpc_body("GetTask", {"id": "tsk_x"}), [
            *JSON, (b"authorization", f"Bearer {token}".encode())]))
        assert member == unknown
        assert parts(member)[2]["error"] == "invalid_token"
    finally:
        item.server.close()


def test_a_task_that_echoes_its_callers_token_is_told_back_redacted(coder: Member) -> None:
    sent = answer(call(coder, coder.lead, "SendMessage", message(f"my token: {coder.lead}")))
    task = sent["result"]["task"]
    told = json.dumps(task)
    assert coder.lead not in told and coder.lead.split(".")[2] not in told
    assert task["history"][0]["parts"][0]["text"] == "my token: [redacted]"
