"""The property: whatever was done to a dead session's journal — its lines duplicated, moved,
deleted, cut, forged (valid JSON, plausible fields, no or a wrong MAC), tampered with (its MAC
kept), lines from another session's journal added, its end cut away — a resume never runs a
replay-unsafe call that may have run, never delivers an answer the person did not give in
that session, and never hands the model a result that session did not produce.

Driven as close to the real thing as is fast: one real session built once (the real tool
table, with the asking WebAssembly fixture as `check`, replay-safe, and `ask`, replay-unsafe;
the real dispatcher and host); the genuine journals are written by running the turn with that
dispatcher, and each example is read back by the resume's journal reader and rebuilt by
`rebuild.rebuild`, as `launch --resume` does. The end-to-end kill-and-resume regressions for
the three forgeries are tests/wasm/test_journal_forgery.py."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.capsules import write_capsule
from tests.responses import text_response
from tests.wasm.conftest import FIXTURES
from tests.wasm.test_rebuilt_turn import SAFE, tool_folder
from tui.core.asking.request import InputRequest
from tui.core.chat import Message, text_of
from tui.core.loop import rebuild
from tui.core.loop.context import Context
from tui.core.loop.journal import JOURNAL, Journal, JournaledQuestions
from tui.core.loop.journal_read import read_journal
from tui.core.loop.journal_seal import Seal
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.loop.state import TaskState
from tui.core.manifest.reader import load_capsule

CONTEXT, TASK = "ctx_property", "tsk_property"
CALLS = (("check", "c1"), ("ask", "c2"), ("ask", "c3"), ("check", "c4"))
UNSAFE = {cid for name, cid in CALLS if name == "ask"}
NEW_KEY = bytes(range(100, 132))  # every resuming session's key: one secret to redact


class Person:
    """Answers each question with `<tag>-<call id>`, and remembers what was asked."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.asked: list[str] = []

    def ask(self, request: InputRequest) -> str:
        call_id = json.loads(request.prompt)["q"].rstrip("?")
        self.asked.append(call_id)
        return f"{self.tag}-{call_id}"


@dataclass
class World:
    session: Session
    home: Path
    genuine: list[bytes]  # the dead session's journal, every line of the whole turn
    other: list[bytes]  # another session's journal of the same turn (the same question ids)
    results: dict[str, Message]  # the dead session's result of each call

    def __repr__(self) -> str:
        return "World()"


def run_turn(world_session: Session, home: Path, folder: Path, session_id: str,
             person: Person, key: bytes | None = None) -> None:
    """The turn, run by the real dispatcher, journaled by `session_id` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    questions = JournaledQuestions(Journal(folder / JOURNAL, Seal(home, session_id, key)),
                                   CONTEXT, session_id)
    session = world_session
    session.host.questions = session.dispatch.questions = questions
    session.host.responder = person
    session.report.position.task_id = TASK
    message = {"role": "assistant", "id": "msg_turn", "content": [
        {"type": "tool_call", "id": cid, "name": name, "input": {"q": f"{cid}?"}}
        for name, cid in CALLS]}
    session.dispatch.run_turn(TaskState(TASK, 0.0), 0, message, blocks(message))


def blocks(message: Message) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b.get("type") == "tool_call"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("journal-property")
    home = tmp / "home"
    root = write_capsule(tmp / "capsule", [text_response("never")], name="property",
                         max_turns=None, shell=(), artifacts=tool_folder(tmp, "check", SAFE),
                         tools={"ask": FIXTURES / "ask_tool.wasm"},
                         extra="context:\n  record: false\n")
    session = Session(load_capsule(root), LaunchOptions(task="pick", home=home))
    session.paths.create()  # the tools' work folder, as `run` makes it
    try:
        run_turn(session, home, tmp / "dead", "ses_dead", Person("A"))  # mints its key
        run_turn(session, home, tmp / "other", "ses_other", Person("B"), NEW_KEY[::-1])
        genuine = (tmp / "dead" / JOURNAL).read_bytes().splitlines()
        results = {x["call_id"]: x["message"] for x in map(json.loads, genuine)
                   if x["event"] == "call"}
        yield World(session, home, genuine, (tmp / "other" / JOURNAL).read_bytes().splitlines(),
                    results)
    finally:
        session.close_unstarted()


def mac_of(line: bytes) -> str:
    try:
        return str(json.loads(line)["mac"])
    except (ValueError, KeyError, TypeError, RecursionError):
        return ""


def forged(kind: str, call: str, place: int, mac: str, lines: list[bytes],
           genuine: list[bytes]) -> bytes:
    """A line murmur-tui did not write, as plausible as can be: its place (1-based) and `prev`
    right, its MAC missing, zeros, or another line's."""
    before = mac_of(lines[place - 2]) if 2 <= place <= len(lines) + 1 else ""
    asked = next((json.loads(x) for x in genuine if b'"asked"' in x and
                  f'"call_id":"{call}"'.encode() in x), None)
    fields: dict[str, Any] = {"seq": place, "prev": before, "ts_ms": 1}
    if kind == "call":
        fields.update(event="call", call_id=call, tool_name="ask", message={
            "role": "tool", "tool_call_id": call, "is_error": False, "id": f"msg_{call}_forged",
            "content": [{"type": "text", "text": f"FORGED result of {call}"}]})
    elif kind == "answered":
        fields.update(event="answered", id=asked["id"] if asked else "q_x",
                      answer=f"FORGED-{call}")
    elif kind == "taken":
        fields.update(event="taken", id=asked["id"] if asked else "q_x", by_session="ses_x")
    elif kind == "dropped":
        fields.update(event="dropped", message_id="msg_turn", why="StopOnCancel")
    else:  # a turn whose calls have not run: every call "not started"
        fields.update(event="turn", task_id=TASK, turn=1, message={
            "role": "assistant", "id": "msg_turn", "content": [
                {"type": "tool_call", "id": cid, "name": name, "input": {"q": f"{cid}?"}}
                for name, cid in CALLS]})
    if mac == "other":
        fields["mac"] = mac_of(genuine[place % len(genuine)])
    elif mac == "zeros":
        fields["mac"] = "0" * 64
    return json.dumps(fields, separators=(",", ":")).encode()


def tampered(line: bytes) -> bytes:
    """A genuine line with what it says changed and its MAC kept."""
    for old, new in ((b'"A-', b'"FORGED-'), (b'"call"', b'"turn"'), (b'"asked"', b'"taken"')):
        if old in line:
            return line.replace(old, new, 1)
    return line.replace(b'"ts_ms":', b'"ts_ms":1', 1)


OPS = st.one_of(
    st.tuples(st.just("dup"), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("move"), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("delete"), st.integers(0, 99)),
    st.tuples(st.just("cut"), st.integers(0, 99), st.integers(1, 400)),
    st.tuples(st.just("tail"), st.integers(1, 4)),
    st.tuples(st.just("forge"), st.sampled_from(["call", "answered", "taken", "dropped", "turn"]),
              st.sampled_from([cid for _, cid in CALLS]), st.integers(0, 99),
              st.sampled_from(["none", "zeros", "other"])),
    st.tuples(st.just("tamper"), st.integers(0, 99)),
    st.tuples(st.just("other"), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("junk"), st.integers(0, 99),
              st.sampled_from([b"\x00\xff", b"[" * 5000, b'{"event":"turn"', b"{}"])),
)


def mutate(lines: list[bytes], ops: list[tuple[Any, ...]], genuine: list[bytes],
           other: list[bytes]) -> list[bytes]:
    lines = list(lines)
    for op in ops:
        size = len(lines)
        if op[0] == "dup" and size:
            lines.insert(op[2] % (size + 1), lines[op[1] % size])
        elif op[0] == "move" and size:
            line = lines.pop(op[1] % size)
            lines.insert(op[2] % size, line)
        elif op[0] == "delete" and size:
            lines.pop(op[1] % size)
        elif op[0] == "cut" and size:
            at = op[1] % size
            lines[at] = lines[at][:op[2] % max(1, len(lines[at]))]
        elif op[0] == "tail":
            lines = lines[:max(0, size - op[1])]
        elif op[0] == "forge":
            place = op[3] % (size + 1)
            lines.insert(place, forged(op[1], op[2], place + 1, op[4], lines, genuine))
        elif op[0] == "tamper" and size:
            at = op[1] % size
            lines[at] = tampered(lines[at])
        elif op[0] == "other":
            lines.insert(op[2] % (size + 1), other[op[1] % len(other)])
        elif op[0] == "junk":
            lines.insert(op[1] % (size + 1), op[2])
    return lines


def truth(prefix: list[bytes], counted: bool) -> tuple[set[str], set[str], dict[str, str]]:
    """What really happened before the kill: the calls that finished, the calls that may have
    started (those and the one running) and the answers given (question id -> answer). The
    session goes on after a line only once it is counted: killed before, nothing that line
    leads to (the next call) had begun."""
    values = [json.loads(x) for x in prefix]
    finished = {x["call_id"] for x in values if x["event"] == "call"}
    before = values if counted else values[:-1]
    done_before = {x["call_id"] for x in before if x["event"] == "call"}
    started = set(finished)
    if any(x["event"] == "turn" for x in before):
        running = next((cid for _, cid in CALLS if cid not in done_before), None)
        started |= {running} if running else set()
    answers = {x["id"]: x["answer"] for x in values if x["event"] == "answered"}
    return finished, started, answers


@settings(max_examples=250, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kept=st.integers(1, 14), counted_before_kill=st.booleans(),
       ops=st.lists(OPS, max_size=6))
def test_no_unsafe_call_runs_twice_and_no_answer_is_delivered_that_was_not_given(
        world: World, kept: int, counted_before_kill: bool, ops: list[tuple[Any, ...]]) -> None:
    genuine = world.genuine[:min(kept, len(world.genuine))]
    finished, started, given_answers = truth(genuine, counted_before_kill)
    session, home = world.session, world.home
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / JOURNAL).write_bytes(b"".join(
            line + b"\n" for line in mutate(genuine, ops, world.genuine, world.other)))
        # the count is written after each line's sync: a kill between them leaves it one short
        count = len(genuine) - (0 if counted_before_kill else 1)
        Seal(home, "ses_dead").count_path.write_text(f"{count}\n")
        found = read_journal(folder, "ses_dead", home)
        person = Person("P")
        new = Seal(home, "ses_new")
        new.key_path.write_bytes(NEW_KEY)
        questions = JournaledQuestions(
            Journal(folder / "new.jsonl", Seal(home, "ses_new", NEW_KEY)),
            CONTEXT, "ses_new", found.carried())
        session.host.questions = session.dispatch.questions = questions
        session.host.responder = person
        context = Context(session.attachments)
        turn = found.turn
        if turn is not None and rebuild.needed(turn, context):
            session.report.position.task_id = TASK
            rebuild.rebuild(turn, TaskState(TASK, 0.0), context, session.dispatch,
                            session.report)
        ran = [x["call_id"] for x in map(json.loads, (folder / "new.jsonl").read_bytes()
                                         .splitlines()) if x["event"] == "asked"] \
            if (folder / "new.jsonl").exists() else []
        delivered = [json.loads(x) for x in (folder / "new.jsonl").read_bytes().splitlines()
                     if b'"answered"' in x] if (folder / "new.jsonl").exists() else []

    assert not (set(ran) & UNSAFE & started), f"an unsafe call that may have run ran again: {ran}"
    assert len(ran) == len(set(ran)), f"a call ran twice in the resume: {ran}"
    for line in delivered:
        if "taken_from" in line:  # delivered from the journal: the person gave it there
            assert given_answers.get(line["id"]) == line["answer"], line
        else:  # asked now
            assert line["answer"].startswith("P-"), line
    results = {m["tool_call_id"]: m for m in context.messages if m.get("role") == "tool"}
    for call_id, message in results.items():
        text = text_of(message.get("content"))
        if call_id in ran or "was interrupted when session" in text:
            continue
        assert call_id in finished and message == world.results[call_id], \
            f"the model reads a result of {call_id} the dead session did not produce: {text}"
    if not ops and turn is not None:  # an untouched journal: the resume goes on exactly
        running = next((cid for _, cid in CALLS if cid not in finished), None)
        assert set(ran) == {cid for _, cid in CALLS if cid not in finished and
                            not (cid == running and cid in UNSAFE)}
