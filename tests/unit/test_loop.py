"""The loop's pieces on their own, without a Session: a turn with a recording driver, dispatch
with a tool table, compaction with a context and a hook point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import Collect, RecordingDriver
from tests.responses import text_response, tool_response
from tui.core.cancel import CancelToken
from tui.core.chat import assistant_message, user_message
from tui.core.errors import DriverError, StopOnCancel
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.fs.workdir import SessionPaths
from tui.core.inference.driver import DriverReply
from tui.core.loop import compaction
from tui.core.loop.context import Context
from tui.core.loop.dispatch import Dispatcher
from tui.core.loop.hook_points import HookPoints
from tui.core.loop.report import Report
from tui.core.loop.state import Continue, Failed, Finished, Limited, TaskState, Usage
from tui.core.loop.turn import Turns
from tui.core.manifest.model import Compaction, Inference
from tui.core.shell.handler import ShellHandler
from tui.core.shell.tool import ShellTool
from tui.core.tools.table import SkillHandler, ToolTable
from tui.core.wasm.hooks import Fault
from tui.core.wasm.values import record

HEAD: dict[str, Any] = {"model": "m", "max_tokens": 100, "system": "be brief", "tools": [],
                        "params": {}}


class NoImages:
    def payload_block(self, block: dict[str, Any]) -> dict[str, Any]:
        return block


class Record:
    """The record writer's part the context uses: what was appended, in order."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def append(self, message: dict[str, Any]) -> bool:
        self.messages.append(message)
        return True


class Loop:
    """The pieces a turn needs, built by hand."""

    def __init__(self, tmp: Path, driver: RecordingDriver, tools: ToolTable | None = None,
                 **inference: Any) -> None:
        self.sink = Collect()
        self.cancel = CancelToken()
        self.report = Report(EventStream("ses_t", [self.sink]), tmp / "bootstrap.log")
        self.record = Record()
        self.context = Context(NoImages(), self.record, hashes=True, context_id="ctx_1",
                               head=HEAD)
        paths = SessionPaths(accessible=tmp / "work", session=tmp / "ses")
        self.hooks = HookPoints([], None, None, paths, self.report)  # type: ignore[arg-type]
        self.dispatch = Dispatcher(tools or ToolTable(), self.report, self.hooks, self.cancel,
                                   self.report.current_turn_stream())
        self.turns = Turns(driver, self.context, self.report, self.hooks, self.dispatch,
                           self.cancel, Inference(model="m", driver_artifact="d", **inference),
                           None, tmp / "out", HEAD, [], "sys-sha", "tools-sha")
        self.task = TaskState("tsk_1", 0.0)
        self.report.position.task_id = self.task.task_id

    def kinds(self) -> list[str]:
        return [e.event_type for e in self.sink.events]


# -- state --------------------------------------------------------------------------------------
def test_usage_adds_counter_by_counter() -> None:
    total = Usage(1, 10, 5, 2, 1) + Usage(2, 20, 7, 0, 3)
    assert total == Usage(3, 30, 12, 2, 4)
    assert total.tokens == 42


# -- a turn -------------------------------------------------------------------------------------
def test_a_tool_call_turn_goes_on_and_the_next_turn_finishes(tmp_path: Path) -> None:
    driver = RecordingDriver(tool_response("ls", tool="nope"), text_response("all done"))
    loop = Loop(tmp_path, driver)
    loop.context.append(user_message("list the files"))
    assert isinstance(loop.turns.one(loop.task, 0), Continue)
    roles = [m["role"] for m in loop.context.messages]
    assert roles == ["user", "assistant", "tool"]
    assert "not declared in manifest allowlist" in json.dumps(loop.context.messages[-1])
    outcome = loop.turns.one(loop.task, 1)
    assert outcome == Finished("all done")
    assert loop.task.usage.turns == 2 and loop.task.usage.tool_calls == 1
    assert loop.task.usage.output_tokens > 0
    # every message went to the record, and the second request carried all four of them
    assert [m["role"] for m in loop.record.messages] == ["user", "assistant", "tool",
                                                         "assistant"]
    assert len(driver.requests[1]["messages"]) == 3
    completed = loop.sink.of(ev.TurnCompleted)
    assert [c.decision for c in completed] == ["tool_call", "end_turn"]
    assert completed[0].tool_name == "nope" and completed[0].system_sha == "sys-sha"
    assert len(completed[1].message_shas) == 3  # capture content: one hash per message sent
    assert "TextDelta" in loop.kinds()


def test_a_driver_error_fails_the_turn_with_the_drivers_cause(tmp_path: Path) -> None:
    driver = RecordingDriver(DriverError("key refused", cause="credential_rejected"))
    loop = Loop(tmp_path, driver)
    loop.context.append(user_message("hi"))
    outcome = loop.turns.one(loop.task, 0)
    assert outcome == Failed("error: key refused", "credential_rejected", 0)
    (completed,) = loop.sink.of(ev.TurnCompleted)
    assert completed.decision == "error" and completed.error == "key refused"


def test_a_failed_reply_names_the_responses_error(tmp_path: Path) -> None:
    reply = DriverReply("failed", json.dumps({"stop_reason": "error", "content": [],
                                              "error": "upstream said 500"}))
    loop = Loop(tmp_path, RecordingDriver(reply))
    loop.context.append(user_message("hi"))
    assert loop.turns.one(loop.task, 0) == Failed("error: upstream said 500", "driver_error",
                                                  0)


def test_turns_stop_at_max_turns_and_at_the_spend_ceiling(tmp_path: Path) -> None:
    loop = Loop(tmp_path, RecordingDriver(*[tool_response("x", tool="nope")] * 2), max_turns=2)
    loop.context.append(user_message("go"))
    outcome = loop.turns.run(loop.task)
    assert outcome == Limited("max_turns_reached", "error: inference loop exceeded 2 turns")
    spent = Loop(tmp_path, RecordingDriver(tool_response("x", tool="nope")),
                 max_session_tokens=1)
    spent.context.append(user_message("go"))
    limited = spent.turns.run(spent.task)
    assert isinstance(limited, Limited) and limited.exit_status == "spend_ceiling_reached"
    assert spent.task.usage.turns == 1  # the first turn ran; the ceiling stopped the second


def test_a_cancel_before_the_turn_raises_and_sends_nothing(tmp_path: Path) -> None:
    driver = RecordingDriver(text_response("never"))
    loop = Loop(tmp_path, driver)
    loop.cancel.set()
    with pytest.raises(StopOnCancel):
        loop.turns.run(loop.task)
    assert driver.requests == []


# -- dispatch -----------------------------------------------------------------------------------
def test_dispatch_runs_a_shell_call_and_a_skill_with_their_events(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    skill = tmp_path / "SKILL.md"
    skill.write_text("Say hello politely.\nMore guidance.\n", encoding="utf-8")
    table = ToolTable()
    table.shell["echo"] = ShellHandler("echo", ShellTool(("echo",), tmp_path / "work",
                                                         tmp_path / "logs"))
    table.skills["greet"] = SkillHandler("greet", skill)
    loop = Loop(tmp_path, RecordingDriver(), table)
    shell = loop.dispatch.call_block(loop.task, 3, {"id": "c1", "name": "echo",
                                                    "input": {"command": "hi there"}})
    assert shell["tool_call_id"] == "c1" and not shell["is_error"]
    assert "hi there" in json.dumps(shell) and "untrusted-content" in json.dumps(shell)
    guidance = loop.dispatch.call_block(loop.task, 3, {"id": "c2", "name": "greet",
                                                       "input": {}})
    assert "Say hello politely." in json.dumps(guidance)
    assert "untrusted-content" not in json.dumps(guidance)  # the operator's own text
    assert loop.task.usage.tool_calls == 1 and loop.task.usage.shell_calls == 1  # skills: 0
    (executed,) = loop.sink.of(ev.ShellExecuted)
    assert executed.exit_code == 0 and executed.stdout.strip() == "hi there"
    finished = loop.sink.of(ev.ToolCallFinished)
    assert [(f.tool_name, f.kind, f.status, f.turn) for f in finished] == [
        ("echo", "shell", "ok", 3), ("greet", "skill", "ok", 3)]


def test_dispatch_refuses_an_undeclared_tool_and_stops_when_canceled(tmp_path: Path) -> None:
    loop = Loop(tmp_path, RecordingDriver())
    refused = loop.dispatch.call_block(loop.task, 0, {"id": "c1", "name": "rm", "input": {}})
    assert refused["is_error"] and "tool 'rm' is not declared" in json.dumps(refused)
    assert loop.sink.of(ev.ToolCallFinished)[0].kind == "unknown"
    loop.cancel.set()
    with pytest.raises(StopOnCancel):
        loop.dispatch.call_block(loop.task, 0, {"id": "c2", "name": "rm", "input": {}})


# -- compaction ---------------------------------------------------------------------------------
class Named:
    def __init__(self, name: str) -> None:
        self.name = name


class Output:
    def __init__(self, payload: Any) -> None:
        self.payload = payload


class CompactionHook:
    """A hook point bound to on-compaction that commits `replacement` (or fails)."""

    def __init__(self, replacement: list[Any] | None = None, fails: str | None = None) -> None:
        self.replacement = replacement
        self.fails = fails
        self.events: list[Any] = []

    def bound(self, handler: str) -> bool:
        return handler == "on-compaction"

    def compaction(self, event: Any, failures: list[Fault]) -> list[tuple[Any, Any]]:
        self.events.append(event)
        if self.fails:
            failures.append(Fault("summariser", "on-compaction", None, self.fails, True))
            return []
        if self.replacement is None:
            return []
        return [(Named("summariser"), Output(self.replacement))]


def long_context(tmp_path: Path) -> Loop:
    loop = Loop(tmp_path, RecordingDriver())
    loop.context.append(user_message("word " * 200))
    loop.context.append(assistant_message([{"type": "text", "text": "answer " * 200}]))
    loop.context.held = None
    return loop


def check(loop: Loop, hooks: CompactionHook, tmp_path: Path, window: int = 100) -> Any:
    return compaction.check(loop.context, hooks, loop.report, Compaction(threshold=0.5),
                            window, "m", tmp_path, "tsk_1", 2, loop.context.count())


def test_a_committed_replacement_becomes_the_context_and_the_record(tmp_path: Path) -> None:
    loop = long_context(tmp_path)
    before = loop.context.count()
    hooks = CompactionHook([record(role="user", content="summary: words and answers",
                                   source_id=None)])
    assert check(loop, hooks, tmp_path) is None
    assert [m["role"] for m in loop.context.messages] == ["user"]
    assert loop.record.messages[-1]["content"][0]["text"] == "summary: words and answers"
    (compacted,) = loop.sink.of(ev.Compacted)
    assert compacted.tokens_before == before > compacted.tokens_after == loop.context.count()
    assert len(hooks.events[0].messages) == 2  # the hook saw the whole context


def test_compaction_declines_an_unpaired_replacement_and_fails_on_a_hook_error(
        tmp_path: Path) -> None:
    loop = long_context(tmp_path)
    dangling = assistant_message([{"type": "tool_call", "id": "c9", "name": "bash",
                                   "input": {}}])
    unpaired = CompactionHook([record(role="assistant", content=json.dumps(dangling["content"]),
                                      source_id=None)])
    assert check(loop, unpaired, tmp_path) is None
    assert loop.sink.of(ev.CompactionDeclined)[0].reason == "unresolved_tool_call"
    assert len(loop.context.messages) == 2  # nothing replaced
    failed = check(loop, CompactionHook(fails="trap: out of fuel"), tmp_path)
    assert failed == Failed("error: compaction hook summariser failed: trap: out of fuel",
                            "compaction_hook", 2)


def test_compaction_waits_until_the_threshold(tmp_path: Path) -> None:
    loop = long_context(tmp_path)
    hooks = CompactionHook([record(role="user", content="short", source_id=None)])
    assert check(loop, hooks, tmp_path, window=1_000_000) is None
    assert hooks.events == [] and len(loop.context.messages) == 2


def test_context_replace_drops_a_held_continuation(tmp_path: Path) -> None:
    loop = Loop(tmp_path, RecordingDriver())
    loop.context.append(user_message("a"))
    loop.context.after_reply(DriverReply("passed", "{}", metadata=(("continuation_id", "k"),)),
                             1)
    loop.context.append(assistant_message([{"type": "text", "text": "b"}]))
    held = loop.context.request(HEAD, loop.context.payload)
    # the driver acknowledged the one message it was sent, not its own answer
    assert held["continuation_id"] == "k" and [m["role"] for m in held["messages"]] == [
        "assistant"]
    loop.context.replace([user_message("b")])
    assert "continuation_id" not in loop.context.request(HEAD, loop.context.payload)
