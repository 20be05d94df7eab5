"""The agent loop with the scripted driver and the real shell tool, real files throughout."""

from __future__ import annotations

import json
import resource
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CapsuleFactory, read_jsonl
from tests.fakes import Collect
from tests.responses import text_response, tool_response
from tui.core.cancel import CancelToken
from tui.core.errors import LaunchError
from tui.core.events import vocabulary as ev
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule


def run_session(root: Path, task: str = "do it", **options: Any
                ) -> tuple[SessionResult, Collect]:
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task=task, **options), sinks=[sink])
    return session.run(), sink


def test_tool_call_then_tool_result_then_end_turn(make_capsule: CapsuleFactory,
                                                  murmur_home: Path) -> None:
    root = make_capsule([tool_response("echo hi", text="Checking."), text_response("Done: hi")])
    result, sink = run_session(root)
    assert result.exit_status == "ok" and result.result == "Done: hi"
    assert result.paths.result.read_text() == "Done: hi"
    kinds = [e.event_type for e in sink.events if not isinstance(e, ev.TextDelta)]
    assert kinds == ["SessionStarted", "TaskStarted", "TurnStarted", "TurnCompleted",
                     "ToolCallStarted", "ShellOutput", "ToolCallFinished", "ShellExecuted",
                     "TurnStarted",
                     "TurnCompleted", "TaskEnded", "SessionEnded"]
    assert "".join(e.text for e in sink.of(ev.TextDelta)) == "Checking.Done: hi"
    shell = sink.of(ev.ShellExecuted)[0]
    assert (shell.command, shell.exit_code, shell.stdout) == ("echo hi", 0, "hi\n")
    live = sink.of(ev.ShellOutput)  # the line as it came, before the call's result
    assert [(e.stream, e.text) for e in live] == [("stdout", "hi")]
    assert [e.seq for e in sink.events] == list(range(1, len(sink.events) + 1))
    # the record: user task, assistant with the call, fenced tool result, final answer
    assert result.record_path is not None
    lines = read_jsonl(result.record_path)
    assert [m["role"] for m in lines] == ["user", "assistant", "tool", "assistant"]
    assert lines[0]["content"] == [{"type": "text", "text": "do it"}]
    assert lines[2]["tool_call_id"] == "call_1" and lines[2]["is_error"] is False
    assert lines[2]["fence"] == "tool:bash"
    assert lines[2]["content"][0]["text"].startswith(
        "<untrusted-content source=tool:bash>\n$ echo hi\nExit code: 0\nStdout:\nhi\n")
    assert len({m["id"] for m in lines}) == 4


def test_second_turn_sends_the_tool_result_to_the_driver(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("echo one"), text_response("ok")])
    _, sink = run_session(root)
    turns = sink.of(ev.TurnCompleted)
    assert len(turns[0].message_ids) == 1 and len(turns[1].message_ids) == 3
    assert turns[1].input_tokens > turns[0].input_tokens
    assert turns[0].decision == "tool_call" and turns[0].tool_name == "bash"
    assert turns[1].decision == "end_turn"


def test_max_turns_ends_the_task_with_murmurs_message(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("true", call_id=f"c{n}") for n in range(5)], max_turns=3)
    result, sink = run_session(root)
    assert result.exit_status == "max_turns_reached"
    assert result.paths.result.read_text() == "error: inference loop exceeded 3 turns"
    assert sink.of(ev.TaskFailed) == []
    end = sink.of(ev.TaskEnded)[0]
    assert (end.turns, end.tool_calls, end.shell_calls) == (3, 3, 3)
    assert result.record_path is not None
    assert [m["role"] for m in read_jsonl(result.record_path)] == \
        ["user"] + ["assistant", "tool"] * 3


def test_a_script_that_runs_out_is_a_driver_error(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("true")])
    result, sink = run_session(root)
    assert result.exit_status == "failed"
    failed = sink.of(ev.TaskFailed)[0]
    assert failed.cause == "driver_error" and failed.turn == 1
    assert "ran out" in failed.reason
    assert result.paths.result.read_text().startswith("error: scripted driver: ")
    turn = sink.of(ev.TurnCompleted)[-1]
    assert (turn.decision, turn.stop_reason, turn.output_tokens) == ("error", "error", None)


def test_stop_reason_error_fails_the_task_with_the_error(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([{"stop_reason": "error", "content": [], "error": "HTTP 500: boom"}])
    result, sink = run_session(root)
    assert result.exit_status == "failed"
    assert result.paths.result.read_text() == "error: HTTP 500: boom"
    assert sink.of(ev.TaskFailed)[0].cause == "driver_error"


@pytest.mark.parametrize("response, reason", [
    ({"stop_reason": "tool_call", "content": [{"type": "text", "text": "x"}]},
     "stop_reason tool_call without a tool_call block"),
    ({"stop_reason": "pondering", "content": []}, "unsupported stop_reason 'pondering'"),
    ({"stop_reason": "tool_call", "content": [{"type": "tool_call", "name": "bash"}]},
     "a tool_call block needs a string id and name"),
])
def test_malformed_responses_fail_the_task(make_capsule: CapsuleFactory,
                                           response: dict[str, Any], reason: str) -> None:
    result, sink = run_session(make_capsule([response]))
    assert result.exit_status == "failed"
    failed = sink.of(ev.TaskFailed)[0]
    assert failed.cause == "malformed_response" and failed.reason == reason
    assert result.paths.result.read_text() == f"error: {reason}"


def test_max_tokens_is_ok_with_a_warning(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([{"stop_reason": "max_tokens",
                          "content": [{"type": "text", "text": "partial"}]}])
    result, sink = run_session(root)
    assert result.exit_status == "ok" and result.result == "partial"
    assert [w.code for w in sink.of(ev.Warning)] == ["W-RUN-001"]
    assert sink.of(ev.TurnCompleted)[0].decision == "text"


def test_undeclared_tool_gets_an_error_result_and_the_loop_goes_on(
        make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("x", tool="rm"), text_response("sorry")])
    result, sink = run_session(root)
    assert result.exit_status == "ok"
    finished = sink.of(ev.ToolCallFinished)[0]
    assert finished.status == "error" and finished.kind == "unknown"
    assert finished.output == "error: tool 'rm' is not declared in manifest allowlist"
    assert result.record_path is not None
    tool = read_jsonl(result.record_path)[2]
    assert tool["is_error"] is True and "fence" not in tool


def test_several_tool_calls_in_one_turn_run_in_order(make_capsule: CapsuleFactory) -> None:
    calls = {"stop_reason": "tool_call", "content": [
        {"type": "tool_call", "id": "a", "name": "bash", "input": {"command": "echo 1"}},
        {"type": "tool_call", "id": "b", "name": "bash", "input": {"command": "echo 2"}},
    ]}
    result, sink = run_session(make_capsule([calls, text_response("both")]))
    assert [e.stdout for e in sink.of(ev.ShellExecuted)] == ["1\n", "2\n"]
    assert result.record_path is not None
    roles = [(m["role"], m.get("tool_call_id")) for m in read_jsonl(result.record_path)]
    assert roles == [("user", None), ("assistant", None), ("tool", "a"), ("tool", "b"),
                     ("assistant", None)]


def test_cancel_between_turns_ends_canceled_with_complete_files(
        make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("sleep 30"), text_response("never")],
                        extra="lifecycle:\n  shell_grace_secs: 600\n")  # stays the call's
    sink = Collect()
    cancel = CancelToken()
    session = Session(load_capsule(root), LaunchOptions(task="t"), sinks=[sink], cancel=cancel)
    threading.Timer(0.5, cancel.set).start()
    result = session.run()
    assert result.exit_status == "canceled"
    assert result.paths.result.read_text() == "error: canceled by the user"
    trace = read_jsonl(result.paths.trace)
    assert trace[-1]["event_type"] == "session_end"
    assert trace[-1]["exit_status"] == "canceled"


def test_threaded_conversation_reloads_the_record_without_rewriting_it(
        make_capsule: CapsuleFactory) -> None:
    root = make_capsule([text_response("first answer"), text_response("second answer")],
                        extra="lifecycle:\n  conversation: threaded\n")
    first, _ = run_session(root, task="one", context_id="ctx_thread")
    assert first.record_path is not None
    before = first.record_path.read_text()
    # the second launch replays the script from the top, so give it its own script
    (root / "script.json").write_text(json.dumps([text_response("second answer")]))
    second, sink = run_session(root, task="two", context_id="ctx_thread")
    assert second.record_path == first.record_path
    after = second.record_path.read_text()
    assert after.startswith(before)
    lines = read_jsonl(second.record_path)
    assert [m["role"] for m in lines] == ["user", "assistant", "user", "assistant"]
    assert len(sink.of(ev.TurnCompleted)[0].message_ids) == 3
    assert (second.paths.out / f"result_{sink.of(ev.TaskStarted)[0].task_id}.txt").read_text() \
        == "second answer"


def test_a_threaded_reload_leaves_out_record_messages_a_model_cannot_take(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("fine")],
                        extra="lifecycle:\n  conversation: threaded\n")
    record = murmur_home / "conversations" / "test-capsule" / "ctx_hostile" / "conversation.jsonl"
    record.parent.mkdir(parents=True)
    record.write_text("\n".join(json.dumps(line) for line in [
        {"role": "user", "content": [{"type": "text", "text": "kept"}], "id": "msg_1"},
        {"role": "user", "content": 5, "id": "msg_2"},
        {"role": "x" * 5000, "content": [], "id": "msg_3"},
        {"role": "assistant", "content": [7, "text"], "id": "msg_4"},
    ]) + "\n")
    result, sink = run_session(root, task="go on", context_id="ctx_hostile")
    assert result.ok, result.result
    assert sink.of(ev.TurnCompleted)[0].message_ids[0] == "msg_1"
    assert len(sink.of(ev.TurnCompleted)[0].message_ids) == 2  # msg_1 and the new task
    warned = [w.text for w in sink.of(ev.Warning) if w.code == "W-RECORD"]
    assert len(warned) == 1 and "3 of 4 messages" in warned[0]


def test_stateless_conversation_appends_but_does_not_reload(
        make_capsule: CapsuleFactory) -> None:
    root = make_capsule([text_response("a")])
    run_session(root, context_id="ctx_same")
    result, sink = run_session(root, context_id="ctx_same")
    assert len(sink.of(ev.TurnCompleted)[0].message_ids) == 1
    assert result.record_path is not None
    assert len(read_jsonl(result.record_path)) == 4


def test_record_off_creates_nothing(make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("a")], extra="context:\n  record: off\n")
    result, _ = run_session(root)
    assert result.exit_status == "ok" and result.record_path is None
    assert not (murmur_home / "conversations").exists()


def test_bad_context_id_refuses_before_anything_is_written(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("a")])
    with pytest.raises(LaunchError, match=r"--context '\.\./escape' is not a single path"):
        Session(load_capsule(root), LaunchOptions(context_id="../escape"))
    assert not (root / "workdir").exists()
    assert not murmur_home.exists()


def test_workdir_option_splits_accessible_and_session_folders(
        make_capsule: CapsuleFactory, tmp_path: Path) -> None:
    root = make_capsule([tool_response("cat task.md; pwd"), text_response("ok")])
    target = tmp_path / "mywork"
    result, sink = run_session(root, task="read me", workdir=target)
    assert sink.of(ev.ShellExecuted)[0].stdout == f"read me{target}\n"
    assert result.paths.session == target / ".murmur" / result.session_id
    assert (result.paths.session / "trace.jsonl").is_file()
    assert (result.paths.session / "out" / "result.txt").read_text() == "ok"
    assert (target / "task.md").read_text() == "read me"


def test_task_falls_back_to_the_capsules_task_md(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([text_response("ok")])
    (root / "task.md").write_text("from the capsule")
    sink = Collect()
    Session(load_capsule(root), LaunchOptions(), sinks=[sink]).run()
    assert sink.of(ev.TaskStarted)[0].text == "from the capsule"


def test_system_block_and_tools_reach_the_driver_payload(make_capsule: CapsuleFactory,
                                                         tmp_path: Path) -> None:
    root = make_capsule([text_response("ok")], shell=("bash", "git"),
                        extra="inference_note: x\n")
    capsule = load_capsule(root)
    seen: list[dict[str, Any]] = []

    class Recording:
        name = "recording"

        def complete(self, request: dict[str, Any], stream: Any, cancel: Any) -> Any:
            from tui.core.inference.driver import DriverReply
            seen.append(request)
            return DriverReply("passed", json.dumps(text_response("ok")))

        def close(self) -> None:
            pass

    Session(capsule, LaunchOptions(task="t"), driver=Recording()).run()
    request = seen[0]
    assert request["system"].startswith("[Capsule]\nName: test-capsule\nVersion: 1.0.0\n")
    assert [tool["name"] for tool in request["tools"]] == ["bash", "git"]
    assert request["tools"][0]["parameters"]["required"] == ["command"]
    assert request["messages"] == [{"role": "user",
                                    "content": [{"type": "text", "text": "t"}]}]
    assert request["max_tokens"] == 8192 and request["model"] == "test-model"
    assert request["prompt_cache_key"].startswith("test-capsule:1.0.0:ctx_")


def test_a_crashing_sink_does_not_end_the_session(make_capsule: CapsuleFactory) -> None:
    class Broken:
        def emit(self, event: ev.Event) -> None:
            raise RuntimeError("printer fell over")

    session = Session(load_capsule(make_capsule([text_response("fine")])),
                      LaunchOptions(task="t"), sinks=[Broken()])
    assert session.run().exit_status == "ok"


def test_a_skill_returns_its_guidance_unfenced(make_capsule: CapsuleFactory) -> None:
    root = make_capsule(
        [tool_response("", tool="house-style"), text_response("styled")],
        extra="",
    )
    manifest = (root / "murmur.yaml").read_text().replace(
        "artifacts:\n", "artifacts:\n  - name: house-style\n    runtime: skill\n"
                        "    source: skills/house-style\n")
    (root / "murmur.yaml").write_text(manifest)
    (root / "skills" / "house-style").mkdir(parents=True)
    (root / "skills" / "house-style" / "skill.md").write_text("Write short lines.\nMore.\n")
    result, sink = run_session(root)
    assert result.exit_status == "ok"
    finished = sink.of(ev.ToolCallFinished)[0]
    assert finished.kind == "skill" and finished.output == "Write short lines.\nMore.\n"
    trace_types = [line["event_type"] for line in read_jsonl(result.paths.trace)]
    assert "skill_call" in trace_types and "tool_call" not in trace_types


def test_a_missing_skill_is_bad_input_naming_where_it_looked(
        make_capsule: CapsuleFactory) -> None:
    root = make_capsule([text_response("x")])
    manifest = (root / "murmur.yaml").read_text().replace(
        "artifacts:\n", "artifacts:\n  - name: gone\n    runtime: skill\n    version: '1'\n")
    (root / "murmur.yaml").write_text(manifest)
    with pytest.raises(LaunchError, match=r"skill 'gone': no skill.md found \(looked in: "):
        Session(load_capsule(root), LaunchOptions(task="t"))


def test_a_failed_trace_write_ends_the_session_and_says_why(
        make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("echo x"), text_response("never")])
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task="t"), sinks=[sink])
    # every write to the trace fails as on a full disk: it is already as large as this
    # process may make a file (RLIMIT_FSIZE; Python ignores SIGXFSZ, so a write is EFBIG)
    limit = 1 << 20
    session.paths.session.mkdir(parents=True)
    session.paths.trace.write_bytes(b"\n" * limit)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        result = session.run()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert result.exit_status == "failed"
    assert "E-RUN-007" in result.paths.result.read_text()
    assert "cannot write trace" in result.paths.bootstrap_log.read_text()
    kinds = [e.event_type for e in sink.events]
    assert kinds[0] == "SessionStarted" and kinds[-1] == "SessionEnded"
    assert any(w.code == "E-RUN-007" for w in sink.of(ev.Warning))
    assert sink.of(ev.SessionEnded)[0].exit_status == "failed"
