"""The built-in HTTP drivers say which tool call the model is writing while its arguments
stream in (ToolCallComposing, as a WebAssembly driver does), against a real provider server on
loopback."""

from __future__ import annotations

import json
from pathlib import Path

from tests.providers.server import (
    Provider,
    anthropic_answer,
    anthropic_frames,
    openai_answer,
    openai_call,
)
from tests.providers.test_http_drivers import capsule, run
from tui.core.events import vocabulary as ev


def order(events: list[ev.Event]) -> list[str]:
    return [e.event_type for e in events if isinstance(e, (ev.ToolCallComposing,
                                                            ev.ToolCallStarted))]


def test_openai_says_the_call_and_its_growing_size_before_it_runs(
        provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    pieces = ['{"comm', 'and": "echo ', 'hi"}']
    provider.replies = [openai_call("call_1", "bash", pieces), openai_answer("It said hi.")]
    result, sink = run(capsule(tmp_path / "c", murmur_home, "openai", provider.url))
    assert result.exit_status == "ok"
    composing = sink.of(ev.ToolCallComposing)
    sizes = [len("".join(pieces[:n]).encode()) for n in range(1, len(pieces) + 1)]
    assert [(c.call_id, c.tool_name, c.input_bytes) for c in composing] == \
        [("call_1", "bash", 0)] + [("call_1", "bash", size) for size in sizes]
    assert {c.turn for c in composing} == {0}
    assert order(sink.events)[-1] == "ToolCallStarted"  # every composing line comes first


def test_anthropic_says_the_call_and_its_growing_size_before_it_runs(
        provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    pieces = ['{"command":', ' "ls"}']
    provider.replies = [lambda h: h.sse(anthropic_frames("Checking.",
                                                         tool=("toolu_1", "bash", pieces))),
                        anthropic_answer("Nothing much.")]
    result, sink = run(capsule(tmp_path / "c", murmur_home, "anthropic", provider.url))
    assert result.exit_status == "ok"
    composing = sink.of(ev.ToolCallComposing)
    assert [(c.call_id, c.input_bytes) for c in composing] == [
        ("toolu_1", 0), ("toolu_1", len(pieces[0])), ("toolu_1", len("".join(pieces)))]
    (started,) = sink.of(ev.ToolCallStarted)
    assert started.call_id == "toolu_1"
    assert len(json.dumps(started.input, separators=(",", ":"))) <= composing[-1].input_bytes
    assert sink.events.index(composing[-1]) < sink.events.index(started)
    text = [e for e in sink.events if isinstance(e, ev.TextDelta) and e.turn == 0]
    assert sink.events.index(text[-1]) < sink.events.index(composing[0])  # text went first
