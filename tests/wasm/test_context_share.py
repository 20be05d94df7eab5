"""The status bar's context share after a compaction: what the context holds once the hook
replaced it, never the last request's input tokens from before (which can be past the window:
the `context 103 %` a person saw right after a compaction). A real session with a WAT
`on-compaction` hook, its events fed to the status bar's model in the order they came."""

from __future__ import annotations

from pathlib import Path

from tests.responses import call_response, text_response
from tests.wasm.conftest import WasmCapsule
from tests.wasm.test_compaction import compacting_capsule
from tests.wasm.test_wasm_session import run
from tui.app.models.status import SessionState
from tui.core.events import vocabulary as ev

WINDOW = 400  # compacting_capsule's context.max_tokens; its threshold is 0.5


def context_part(state: SessionState) -> str:
    """The `context …` part of the status line, exactly as drawn."""
    return next(part for part in state.line().split("  ·  ") if part.startswith("context"))


def test_the_share_after_a_compaction_is_what_the_compaction_left(
        wasm_capsule: WasmCapsule, tmp_path: Path) -> None:
    # Murmur v0.11 spec §6.5 (`compaction {turn, tokens_before, tokens_after}`) and the
    # `context.max_tokens` window: turn 1 echoes a long input, so its reply alone passes the
    # threshold and the hook compacts; turn 2's request (the summary, the call and its echoed
    # result) is larger than the whole window; the hook compacts again after it
    long = "lorem ipsum dolor " * 60  # ~1,080 characters: ~270 tokens each time it is sent
    root = compacting_capsule(wasm_capsule, tmp_path, [
        call_response("echo", {"text": long}), text_response("first summary"),
        text_response("done"), text_response("second summary")])
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "done"
    state = SessionState()
    seen: list[tuple[str, int, str]] = []
    for event in sink.events:
        state.apply(event)
        if isinstance(event, ev.TurnStarted):
            seen.append(("request", event.input_tokens, context_part(state)))
        elif isinstance(event, ev.Compacted):
            seen.append(("compacted", event.tokens_after, context_part(state)))
    kinds = [kind for kind, _, _ in seen]
    assert kinds == ["request", "compacted", "request", "compacted"]
    _, second_request, second_text = seen[2]
    assert second_request > WINDOW and second_text == "context full"
    for _, after, text in (seen[1], seen[3]):
        assert after < WINDOW and text == f"context {after * 100 // WINDOW}%"
    assert seen[0][2] == f"context {seen[0][1] * 100 // WINDOW}%"


def test_the_share_is_rounded_down_and_full_only_when_the_window_is() -> None:
    state = SessionState(context_max=WINDOW)
    for tokens, text in ((0, "context 0%"), (399, "context 99%"), (400, "context full"),
                         (481, "context full")):
        state.apply(ev.TurnStarted(task_id="t", turn=0, max_turns=5, input_tokens=tokens))
        assert context_part(state) == text
    state.apply(ev.Compacted(task_id="t", turn=0, tokens_before=481, tokens_after=37))
    assert context_part(state) == "context 9%"
    assert SessionState().context_text is None  # no window declared: no share at all
