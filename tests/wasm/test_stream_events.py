"""`murmur:stream/events@0.1.0` end to end from `launch --headless`: a WebAssembly driver streams
its answer and announces the tool call it is writing before the call runs; a component that
imports an interface murmur-tui does not link is refused at launch, naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import read_jsonl, run_cli
from tests.responses import text_response
from tests.wasm.conftest import FIXTURES, WasmCapsule
from tui.core.wasm import stream_events
from tui.core.wasm.calls import CallContext, pop, push

COMPOSING_DRIVER = ("  - name: wasm-driver\n    runtime: driver\n"
                    f"    source: {FIXTURES}/composing_driver.wasm\n"
                    "    gateway: {endpoint: 'https://models.example'}\n")
ECHO = "  - name: echo\n    runtime: tool\n    source: {fixtures}/echo_tool.wasm\n"


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_a_driver_streams_text_then_the_call_it_composes_before_the_call_runs(
        wasm_capsule: WasmCapsule, murmur_home: Path) -> None:
    root = wasm_capsule(None, ECHO, driver=COMPOSING_DRIVER)
    done = run_cli("launch", str(root), "--headless", "--json", "--task", "echo hi")
    assert done.returncode == 0, done.stderr
    seen = events(done.stdout)
    kinds = [e["event"] for e in seen]

    composing = [e for e in seen if e["event"] == "ToolCallComposing"]
    # the start, then each count that grew; the unknown id, the empty id, the second start
    # and the smaller count are ignored
    assert [(e["call_id"], e["tool_name"], e["input_bytes"]) for e in composing] == [
        ("c1", "echo", 0), ("c1", "echo", 6), ("c1", "echo", 13)]
    assert {(e["task_id"], e["turn"]) for e in composing} == \
        {(seen[kinds.index("TurnStarted")]["task_id"], 0)}

    first_turn_text = [e["text"] for e in seen[:kinds.index("TurnCompleted")]
                       if e["event"] == "TextDelta"]
    assert "".join(first_turn_text) == "Writing it."
    last_text = max(i for i, k in enumerate(kinds[:kinds.index("TurnCompleted")])
                    if k == "TextDelta")
    started = kinds.index("ToolCallStarted")
    assert last_text < kinds.index("ToolCallComposing") < started
    assert kinds.index("ToolCallComposing") < kinds.index("TurnCompleted") < started
    call = seen[started]
    assert (call["call_id"], call["tool_name"], call["input"]) == ("c1", "echo", {"text": "hi"})
    assert len(json.dumps(call["input"], separators=(",", ":"))) == composing[-1]["input_bytes"]
    finished = seen[kinds.index("ToolCallFinished")]
    assert finished["status"] == "ok" and finished["call_id"] == "c1"
    assert seen[kinds.index("TaskEnded")]["result"] == "Done."

    # announcing a call is not a trace line: the trace has the call once it ran
    trace = read_jsonl(Path(seen[0]["workdir"]) / "trace.jsonl")
    assert [line["tool_call_id"] for line in trace if line["event_type"] == "tool_call"] == ["c1"]
    assert not any("compos" in line["event_type"] for line in trace)


def test_the_headless_log_says_a_call_is_being_composed_once(
        wasm_capsule: WasmCapsule, murmur_home: Path) -> None:
    root = wasm_capsule(None, ECHO, driver=COMPOSING_DRIVER)
    done = run_cli("launch", str(root), "--headless", "--task", "echo hi")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    composing = [line for line in lines if line.startswith("✎ ")]
    assert composing == ["✎ echo · composing a call (c1)"]
    assert lines.index(composing[0]) < next(i for i, line in enumerate(lines)
                                            if line.startswith("→ echo"))
    assert "  Writing it." in lines


def test_a_tool_importing_an_interface_murmur_tui_does_not_link_is_refused_at_launch(
        wasm_capsule: WasmCapsule, murmur_home: Path) -> None:
    root = wasm_capsule([text_response("never")],
                        "  - name: runner\n    runtime: tool\n"
                        "    source: {fixtures}/process_tool.wasm\n")
    done = run_cli("launch", str(root), "--headless", "--task", "t")
    assert done.returncode == 2
    assert "process_tool.wasm imports murmur:process/process@0.1.0, which murmur-tui does " \
        "not link" in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(murmur_home.rglob("trace.jsonl")) and not (root / "workdir").exists()


class Recorder:
    """A driver's stream that keeps what it is told."""

    def __init__(self) -> None:
        self.said: list[tuple[str, ...]] = []

    def text(self, chunk: str) -> None:
        self.said.append(("text", chunk))

    def thinking(self, chunk: str) -> None:
        self.said.append(("thinking", chunk))

    def tool_call_composing(self, call_id: str, tool_name: str, input_bytes: int) -> None:
        self.said.append(("call", call_id, tool_name, str(input_bytes)))


def heard(kind: str, calls: list[tuple[str, tuple[Any, ...]]]) -> list[tuple[str, ...]]:
    sink = Recorder()
    push(CallContext("component", kind, None, sink))
    try:
        for name, args in calls:
            getattr(stream_events, name)(*args)
    finally:
        pop()
    return sink.said


def test_only_the_driver_announces_calls_and_each_call_context_starts_afresh() -> None:
    calls: list[tuple[str, tuple[Any, ...]]] = [
        ("emit_thinking_chunk", ("hm",)), ("tool_call_started", ("c1", "grep")),
        ("tool_call_input_bytes", ("c1", 2**40)), ("emit_chunk", ("ok",))]
    assert heard("driver", calls) == [("thinking", "hm"), ("call", "c1", "grep", "0"),
                                      ("call", "c1", "grep", str(2**40)), ("text", "ok")]
    assert heard("driver", calls)[1] == ("call", "c1", "grep", "0")  # a new call: new state
    assert heard("tool", calls) == [("thinking", "hm"), ("text", "ok")]
