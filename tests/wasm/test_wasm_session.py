"""WebAssembly tools, drivers, hooks and script capsules inside real headless sessions."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import read_jsonl
from tests.fakes import Collect
from tests.responses import call_response, text_response
from tests.wasm.conftest import FIXTURES, WasmCapsule, fixture
from tui.core.errors import LaunchError
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream
from tui.core.headless import HeadlessResponder
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def run(root: Path, answers: list[str] | None = None, task: str = "go",
        stdin: io.TextIOBase | None = None) -> tuple[SessionResult, Collect]:
    sink = Collect()
    responder = HeadlessResponder(answers or [], stdin=stdin or io.StringIO(""),
                                  err=io.StringIO())
    session = Session(load_capsule(root), LaunchOptions(task=task), sinks=[sink],
                      responder=responder)
    return session.run(), sink


def tool_entry(name: str, fixture_name: str, extra: str = "") -> str:
    return (f"  - name: {name}\n    runtime: tool\n    source: {{fixtures}}/{fixture_name}.wasm\n"
            + extra)


def test_a_wasm_tool_runs_and_its_metadata_reaches_event_and_trace(
        wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([call_response("echo", {"x": 1}), text_response("done")],
                        tool_entry("echo", "echo_tool"))
    result, sink = run(root)
    assert result.exit_status == "ok"
    finished = sink.of(ev.ToolCallFinished)[0]
    assert finished.kind == "wasm" and finished.status == "ok"
    assert (finished.state_effect, finished.resource_id) == ("read", "echo:last")
    assert finished.output == '<untrusted-content source=tool:echo>\n{"x":1}\n</untrusted-content>'
    line = next(x for x in read_jsonl(result.paths.trace) if x["event_type"] == "tool_call")
    assert (line["state_effect"], line["resource_id"]) == ("read", "echo:last")
    assert result.record_path is not None
    assert read_jsonl(result.record_path)[2]["fence"] == "tool:echo"


def test_the_artifact_manifest_describes_the_tool_to_the_model(
        wasm_capsule: WasmCapsule, tmp_path: Path) -> None:
    folder = tmp_path / "artifacts" / "echo"
    folder.mkdir(parents=True)
    shutil.copy(fixture("echo_tool"), folder / "echo.wasm")
    (folder / "murmur.yaml").write_text(
        "name: echo\nversion: '1'\nruntime: tool\ndescription: Echo the input back.\n"
        'input_schema: \'{"type":"object","properties":{"x":{"type":"integer"}}}\'\n')
    root = wasm_capsule(None, f"  - name: echo\n    runtime: tool\n    source: {folder}\n")
    seen: list[dict[str, Any]] = []

    class Recording:
        name = "recording"

        def complete(self, request: dict[str, Any], stream: Any, cancel: Any) -> Any:
            from tui.core.inference.driver import DriverReply
            seen.append(request)
            return DriverReply("passed", json.dumps(text_response("ok")))

        def close(self) -> None:
            pass

    (root / "script.json").write_text(json.dumps([text_response("x")]))
    Session(load_capsule(root), LaunchOptions(task="t"), driver=Recording()).run()
    assert seen[0]["tools"] == [{"name": "echo", "description": "Echo the input back.",
                                 "parameters": {"type": "object",
                                                "properties": {"x": {"type": "integer"}}}}]


def test_artifacts_resolve_from_the_capsule_and_home_folders(
        wasm_capsule: WasmCapsule, murmur_home: Path) -> None:
    root = wasm_capsule([call_response("echo", {}), call_response("other", {}, "c2"),
                         text_response("ok")],
                        "  - name: echo\n    runtime: tool\n    version: '1.0.0'\n"
                        "  - name: other\n    runtime: tool\n    version: '2.0.0'\n")
    local = root / ".murmur" / "artifacts" / "echo" / "1.0.0"
    local.mkdir(parents=True)
    shutil.copy(fixture("echo_tool"), local / "echo.wasm")
    home = murmur_home / "artifacts" / "other" / "2.0.0"
    home.mkdir(parents=True)
    shutil.copy(fixture("echo_tool"), home / "other.wasm")
    result, sink = run(root)
    assert result.exit_status == "ok"
    assert [e.status for e in sink.of(ev.ToolCallFinished)] == ["ok", "ok"]


def test_a_missing_component_refuses_the_launch_listing_where_it_looked(
        wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([text_response("x")],
                        "  - name: ghost\n    runtime: tool\n    version: '9'\n")
    with pytest.raises(LaunchError) as info:
        Session(load_capsule(root), LaunchOptions(task="t"))
    assert "artifact 'ghost' (tool): no component found" in str(info.value)
    assert ".murmur/artifacts/ghost/9" in str(info.value)
    assert not (root / "workdir").exists()


def test_a_component_of_another_version_refuses_the_launch(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([text_response("x")], tool_entry("future", "future_tool"))
    with pytest.raises(LaunchError, match=r"exports murmur:tool/run@0\.3\.0.*rebuild"):
        Session(load_capsule(root), LaunchOptions(task="t"))


def test_request_input_question_and_answer_flow(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([call_response("ask", {"q": "branch?"}), text_response("thanks")],
                        tool_entry("ask", "ask_tool"))
    result, sink = run(root, answers=["main"])
    assert result.exit_status == "ok"
    asked = sink.of(ev.InputRequested)[0]
    assert asked.tool_name == "ask" and asked.prompt == '{"q":"branch?"}'
    answered = sink.of(ev.InputAnswered)[0]
    assert answered.request_id == asked.request_id and answered.answer == "main"
    assert "main" in sink.of(ev.ToolCallFinished)[0].output
    kinds = [e.event_type for e in sink.events]
    assert kinds.index("InputRequested") < kinds.index("InputAnswered") < \
        kinds.index("ToolCallFinished")


def test_no_answer_available_is_an_error_result_not_a_crash(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([call_response("ask", {}), text_response("went on")],
                        tool_entry("ask", "ask_tool"))
    result, sink = run(root, answers=[])
    assert result.exit_status == "ok"
    finished = sink.of(ev.ToolCallFinished)[0]
    assert finished.status == "error" and "stdin is closed" in finished.output


def test_input_timeout_fails_the_task(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([call_response("ask", {}), text_response("never")],
                        tool_entry("ask", "ask_tool"),
                        extra="lifecycle:\n  input_timeout_secs: 0.3\n")
    read_end, write_end = os.pipe()
    silent = os.fdopen(read_end)  # a pipe nobody writes to
    try:
        result, sink = run(root, stdin=silent)  # type: ignore[arg-type]
    finally:
        os.close(write_end)  # the reader thread sees the end; then the read end can close
    silent.close()
    assert result.exit_status == "failed"
    failed = sink.of(ev.TaskFailed)[0]
    assert failed.cause == "input_timeout"
    assert "lifecycle.input_timeout_secs" in failed.reason
    assert result.paths.result.read_text().startswith("error: input-timeout")
    assert read_jsonl(result.paths.trace)[-1]["event_type"] == "session_end"


def test_a_spinning_tool_runs_out_of_time_and_the_session_goes_on(
        wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([call_response("spin", {}), text_response("recovered")], tool_entry(
        "spin", "spin_tool", "    capabilities:\n      limits: {deadline_seconds: 0.3}\n"))
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "recovered"
    finished = sink.of(ev.ToolCallFinished)[0]
    assert finished.status == "error"
    assert finished.output == ("error: out of time: spin ran past its 0.3 s deadline "
                               "(artifacts[spin].capabilities.limits.deadline_seconds)")


def test_a_tool_cannot_write_outside_its_workdir(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([call_response("escape", {}), text_response("ok")],
                        tool_entry("escape", "escape_tool"))
    result, sink = run(root)
    assert result.exit_status == "ok"
    finished = sink.of(ev.ToolCallFinished)[0]
    assert "refused: " in finished.output and finished.status == "error"
    assert not (result.paths.accessible.parent / "escaped.txt").exists()


def test_attachments_are_checked_and_stored_once(wasm_capsule: WasmCapsule,
                                                 tmp_path: Path) -> None:
    root = wasm_capsule([call_response("attach", {}), call_response("attach", {}, "c2"),
                         text_response("seen")],
                        tool_entry("attach", "attach_tool"),
                        extra="context:\n  images:\n    max_bytes: 1000\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "good.png").write_bytes(PNG)
    (work / "fake.png").write_bytes(b"GIF89a not a png")
    (tmp_path / "outside.gif").write_bytes(b"GIF89a")
    (work / "link.png").symlink_to(work / "good.png")
    (work / "huge.png").write_bytes(PNG + b"\x00" * 2000)
    (work / "notes.txt").write_text("text")
    sink = Collect()
    result = Session(load_capsule(root), LaunchOptions(task="t", workdir=work),
                     sinks=[sink]).run()
    finished = sink.of(ev.ToolCallFinished)[0]
    assert finished.status == "ok"
    assert [a["path"] for a in finished.attachments] == ["good.png"]
    for path, reason in (("fake.png", "its bytes are not image/png"),
                         ("../outside.gif", "outside the work folder"),
                         ("link.png", "it is a link"),
                         ("huge.png", "over context.images.max_bytes"),
                         ("notes.txt", "media type 'text/plain'"),
                         ("missing.jpg", "no such file")):
        assert f"[attachment {path} refused: " in finished.output, path
        assert reason in finished.output, reason
    assert result.record_path is not None
    stored = list((result.record_path.parent / "attachments").iterdir())
    assert len(stored) == 1 and stored[0].read_bytes() == PNG
    tool_line = read_jsonl(result.record_path)[2]
    assert tool_line["content"][1] == {"type": "image", "source": {
        "type": "sha256", "media_type": "image/png", "sha256": stored[0].name}}


def test_attachments_reach_the_driver_as_base64(wasm_capsule: WasmCapsule,
                                                tmp_path: Path) -> None:
    import base64

    root = wasm_capsule(None, tool_entry("attach", "attach_tool"))
    work = tmp_path / "w"
    work.mkdir()
    (work / "good.png").write_bytes(PNG)
    seen: list[dict[str, Any]] = []

    class Recording:
        name = "recording"
        turn = 0

        def complete(self, request: dict[str, Any], stream: Any, cancel: Any) -> Any:
            from tui.core.inference.driver import DriverReply
            seen.append(request)
            self.turn += 1
            reply = call_response("attach", {}) if self.turn == 1 else text_response("ok")
            return DriverReply("passed", json.dumps(reply))

        def close(self) -> None:
            pass

    (root / "script.json").write_text("[]")
    Session(load_capsule(root), LaunchOptions(task="t", workdir=work),
            driver=Recording()).run()
    image = seen[1]["messages"][2]["content"][1]
    assert image == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png",
        "data": base64.b64encode(PNG).decode()}}


def test_a_wasm_driver_streams_and_calls_tools(wasm_capsule: WasmCapsule) -> None:
    driver = ("  - name: wasm-driver\n    runtime: driver\n"
              f"    source: {FIXTURES}/stream_driver.wasm\n"
              "    gateway: {endpoint: 'https://models.example'}\n")
    root = wasm_capsule(None, tool_entry("echo", "echo_tool"), driver=driver)
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "All done."
    thinking = "".join(e.text for e in sink.of(ev.ThinkingDelta))
    text = "".join(e.text for e in sink.of(ev.TextDelta))
    assert thinking == "Thinking it over." and text == "Calling echo.All done."
    assert sink.of(ev.ToolCallFinished)[0].output.endswith('{"text":"hi"}\n</untrusted-content>')
    turns = sink.of(ev.TurnCompleted)
    assert turns[0].usage == {"input_tokens": 10, "output_tokens": 5}


def test_a_trapping_driver_fails_the_task_with_complete_files(wasm_capsule: WasmCapsule) -> None:
    driver = ("  - name: wasm-driver\n    runtime: driver\n"
              f"    source: {FIXTURES}/trap_driver.wasm\n"
              "    gateway: {endpoint: 'https://models.example'}\n")
    root = wasm_capsule(None, "", driver=driver)
    result, sink = run(root)
    assert result.exit_status == "failed"
    failed = sink.of(ev.TaskFailed)[0]
    assert failed.cause == "runtime_error" and "trapped" in failed.reason
    assert result.paths.result.read_text().startswith("error: driver wasm-driver: ")
    assert read_jsonl(result.paths.trace)[-1]["exit_status"] == "failed"


def hook_entry(name: str, fixture_name: str, grant: bool = False, contract: str = "",
               tmp: Path | None = None) -> str:
    if contract and tmp is not None:
        folder = tmp / f"hook-{name}"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(fixture(fixture_name), folder / f"{name}.wasm")
        (folder / "murmur.yaml").write_text(f"name: {name}\nversion: '1'\nruntime: hook\n"
                                            + contract)
        source = str(folder)
    else:
        source = f"{{fixtures}}/{fixture_name}.wasm"
    caps = "    capabilities:\n      conversation: {read: true}\n" if grant else ""
    return f"  - name: {name}\n    runtime: hook\n    source: {source}\n{caps}"


def test_hook_faults_are_logged_traced_and_the_session_goes_on(
        wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([call_response("echo", {}), text_response("fine")],
                        tool_entry("echo", "echo_tool") + hook_entry("watcher", "all_hook"))
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "fine"
    faults = {(f.handler, f.arm) for f in sink.of(ev.HookFault)}
    assert ("on-tool-call", "replace-context") in faults
    assert ("on-task-start", None) in faults  # read-messages without the grant
    assert ("on-session-end", None) in faults  # a trap
    start = next(f for f in sink.of(ev.HookFault) if f.handler == "on-task-start")
    assert start.error == "not-granted"
    log = (result.paths.logs / "hook-watcher.log").read_text()
    assert "on-tool-call returned replace-context" in log and "trapped" in log
    traced = [x for x in read_jsonl(result.paths.trace)
              if x["event_type"] == "hook_dispatch_error"]
    assert {(x["event"], x["arm"]) for x in traced} >= {("on-tool-call", "replace-context"),
                                                       ("on-task-start", "error")}
    assert all(x["event"] != "on-stage" for x in traced)
    artifacts = (result.paths.out / "hook-artifacts.jsonl").read_text().splitlines()
    assert [json.loads(line)["artifact"] for line in artifacts] == ["seen", "seen"]


def test_a_granted_hook_reads_the_record(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([text_response("ok")], hook_entry("reader", "all_hook", grant=True))
    _, sink = run(root)
    assert not any(f.handler == "on-task-start" for f in sink.of(ev.HookFault))


def test_optional_handlers_are_probed_not_required(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([text_response("ok")], hook_entry("bare", "bare_hook"))
    result, sink = run(root)
    assert result.exit_status == "ok"
    assert not any(f.handler in ("on-task-start", "on-task-end") for f in sink.of(ev.HookFault))


def test_a_reopen_task_hook_sends_the_task_back(wasm_capsule: WasmCapsule,
                                                tmp_path: Path) -> None:
    hook = hook_entry("gate", "all_hook", contract="binding: on-task-end\n"
                      "commit_policy: reopen-task\n", tmp=tmp_path)
    root = wasm_capsule([text_response("first"), text_response("second")], hook,
                        extra="lifecycle:\n  max_task_reopens: 1\n")
    result, sink = run(root)
    reopened = sink.of(ev.TaskReopened)
    assert len(reopened) == 1 and reopened[0].reason == "again"
    assert result.exit_status == "reopen_budget_exhausted"
    assert result.record_path is not None
    texts = [m["content"][0]["text"] for m in read_jsonl(result.record_path)]
    assert texts == ["go", "first", "again", "second"]
    assert [x["event_type"] for x in read_jsonl(result.paths.trace)].count("task_reopened") == 1


def test_a_task_reopened_within_its_budget_finishes_ok(wasm_capsule: WasmCapsule) -> None:
    # the demo's review-hook sends the task back once, then lets it end
    review = Path(__file__).resolve().parents[2] / "tui" / "demo" / "components" / "review-hook"
    root = wasm_capsule([text_response("first"), text_response("checked")],
                        f"  - name: review-hook\n    runtime: hook\n    source: {review}\n")
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "checked"
    assert [r.reopen_number for r in sink.of(ev.TaskReopened)] == [1]
    assert not sink.of(ev.TaskFailed)
    ended = [x for x in read_jsonl(result.paths.trace) if x["event_type"] == "task_end"]
    assert ended[0]["exit_status"] == "ok" and ended[0]["reopen_count"] == 1


def test_a_bad_hook_contract_refuses_the_launch(wasm_capsule: WasmCapsule,
                                                tmp_path: Path) -> None:
    hook = hook_entry("bad", "all_hook", contract="execution_mode: async\n"
                      "commit_policy: reopen-task\n", tmp=tmp_path)
    root = wasm_capsule([text_response("x")], hook)
    with pytest.raises(LaunchError, match="an async hook must have commit_policy: none"):
        Session(load_capsule(root), LaunchOptions(task="t"))


def test_async_hooks_fault_without_a_trace_line(wasm_capsule: WasmCapsule,
                                                tmp_path: Path) -> None:
    hook = hook_entry("bg", "all_hook", contract="execution_mode: async\n", tmp=tmp_path)
    root = wasm_capsule([call_response("echo", {}), text_response("ok")],
                        tool_entry("echo", "echo_tool") + hook)
    result, sink = run(root)
    assert result.exit_status == "ok"
    assert any(f.handler == "on-tool-call" and not f.traced for f in sink.of(ev.HookFault))
    assert not any(x["event_type"] == "hook_dispatch_error"
                   for x in read_jsonl(result.paths.trace))


def test_a_script_capsule_invokes_declared_tools(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule(None, tool_entry("echo", "echo_tool"), driver="")
    manifest = (root / "murmur.yaml").read_text()
    manifest = manifest[:manifest.index("inference:")]
    (root / "murmur.yaml").write_text(manifest)
    shutil.copy(fixture("invoke_capsule"), root / "capsule.wasm")
    result, sink = run(root)
    assert result.exit_status == "ok"
    calls = sink.of(ev.ToolCallFinished)
    assert [(c.tool_name, c.status) for c in calls] == [("echo", "ok")]
    assert calls[0].input == {"data": "from capsule"}
    trace = read_jsonl(result.paths.trace)
    assert [x["event_type"] for x in trace] == ["session_start", "task_start", "tool_call",
                                                "task_end", "session_end"]


def test_a_hook_runs_inference_through_the_sessions_driver(wasm_capsule: WasmCapsule,
                                                           tmp_path: Path) -> None:
    from tui.core.loop import hook_points  # noqa: F401 - the records handlers receive
    from tui.core.wasm.values import plain, record

    hook = hook_entry("summariser", "all_hook", contract="binding: on-compaction\n"
                      "commit_policy: replace-context\n", tmp=tmp_path)
    root = wasm_capsule([text_response("a short summary")], hook)
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task="t"), sinks=[sink])
    try:
        assert session.hooks.runner is not None
        event = record(messages=[], session_tokens=10, threshold=0.99, model=None,
                       system_prompt=None)
        committed = session.hooks.runner.dispatch("on-compaction", event)
    finally:
        session.hooks.close()
        session.close_runtime()
    assert len(committed) == 1
    replacement = plain(committed[0][1])
    assert replacement["tag"] == "replace-context"
    assert replacement["payload"][0]["content"] == "a short summary"
    turn = sink.of(ev.TurnCompleted)[0]
    assert turn.origin == "hook:summariser" and turn.model == "test-model"
    assert turn.output_tokens and turn.input_tokens > 0


def test_hook_inference_lines_carry_their_origin_in_the_trace(tmp_path: Path) -> None:
    from tui.core.trace.writer import TraceWriter

    writer = TraceWriter(tmp_path / "trace.jsonl")
    stream = EventStream("ses_x", primary=writer)
    stream.emit(ev.TurnCompleted(task_id="tsk_1", turn=2, input_tokens=5, output_tokens=3,
                decision="end_turn", stop_reason="end_turn", tool_name=None, model="small",
                origin="hook:summariser"))
    writer.close()
    line = read_jsonl(tmp_path / "trace.jsonl")[0]
    assert (line["event_type"], line["origin"], line["model"]) == ("inference",
                                                                  "hook:summariser", "small")
