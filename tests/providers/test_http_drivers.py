"""The built-in OpenAI-compatible and Anthropic drivers against a provider on loopback: real
HTTP, real SSE, retries, a rotated key, a cancel, and no key in anything a session writes."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import read_jsonl, run_cli
from tests.fakes import Collect
from tests.providers.server import (
    Handler,
    Provider,
    anthropic_answer,
    anthropic_frames,
    openai_answer,
    openai_call,
    openai_frames,
)
from tui.core.errors import ManifestError
from tui.core.events import vocabulary as ev
from tui.core.headless import HeadlessResponder
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

KEY = "sk-test-4f9a1c2e8b7d"
ROTATED = "sk-test-rotated-00aa11"


def capsule(root: Path, home: Path, kind: str, endpoint: str, *, key: str = KEY,
            extra_config: str = "", retry: str = "max_attempts: 3, initial_backoff_ms: 10, "
            "max_backoff_ms: 500") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(f"credentials:\n  PROVIDER_KEY: {key}\n")
    config = f"    config: {{{extra_config}}}\n" if extra_config else ""
    (root / "murmur.yaml").write_text(
        "name: real-model\nversion: '1'\nartifacts:\n"
        f"  - name: model\n    runtime: driver\n    builtin: {kind}\n{config}"
        f"    gateway:\n      endpoint: {endpoint}\n      api_key: ${{PROVIDER_KEY}}\n"
        "capabilities:\n  shell:\n    allow: [bash]\n"
        f"inference:\n  model: test-model\n  max_turns: 4\n  retry: {{{retry}}}\n"
        "  driver:\n    artifact: model\n")
    return root


def run(root: Path, cancel_after: float | None = None) -> tuple[SessionResult, Collect]:
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task="what is here?"), sinks=[sink],
                      responder=HeadlessResponder([], stdin=io.StringIO(""),
                                                  err=io.StringIO()))
    if cancel_after is not None:
        threading.Timer(cancel_after, session.cancel.set).start()
    return session.run(), sink


def every_file_written(*roots: Path) -> str:
    text = []
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and path.name != "config.yaml":
                text.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(text)


def test_openai_streams_an_answer(provider: Provider, tmp_path: Path,
                                  murmur_home: Path) -> None:
    provider.replies = [openai_answer("The workdir is empty.", thinking="Let me look.")]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url + "/v1")
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "The workdir is empty."
    assert "".join(e.text for e in sink.of(ev.TextDelta)) == "The workdir is empty."
    assert len(sink.of(ev.TextDelta)) == 3  # as the chunks arrived
    assert "".join(e.text for e in sink.of(ev.ThinkingDelta)) == "Let me look."
    request = provider.seen[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["stream"] is True and request.body["model"] == "test-model"
    assert request.body["messages"][0]["role"] == "system"
    assert request.body["messages"][1] == {"role": "user", "content": "what is here?"}
    assert [t["function"]["name"] for t in request.body["tools"]] == ["bash"]
    turn = next(x for x in read_jsonl(result.paths.trace) if x["event_type"] == "inference")
    assert (turn["input_tokens_actual"], turn["output_tokens_actual"]) == (12, 5)


def test_openai_tool_call_with_arguments_split_across_chunks(provider: Provider,
                                                             tmp_path: Path,
                                                             murmur_home: Path) -> None:
    provider.replies = [openai_call("call_1", "bash", ['{"comm', 'and": "echo ', 'hi"}']),
                        openai_answer("It said hi.")]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "It said hi."
    shell = sink.of(ev.ShellExecuted)
    assert shell[0].command == "echo hi" and shell[0].stdout.strip() == "hi"
    second = provider.seen[1].body["messages"]
    assistant = second[2]
    assert assistant["tool_calls"][0]["function"] == {"name": "bash",
                                                      "arguments": '{"command": "echo hi"}'}
    assert second[3]["role"] == "tool" and second[3]["tool_call_id"] == "call_1"
    assert "hi" in second[3]["content"]


def test_anthropic_streams_thinking_text_and_a_tool_call(provider: Provider, tmp_path: Path,
                                                         murmur_home: Path) -> None:
    provider.replies = [
        lambda h: h.sse(anthropic_frames("Checking.", thinking="I should list it.",
                                         tool=("toolu_1", "bash", ['{"command":', ' "ls"}']))),
        anthropic_answer("Nothing much."),
    ]
    root = capsule(tmp_path / "c", murmur_home, "anthropic", provider.url)
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "Nothing much."
    first = provider.seen[0]
    assert first.path == "/v1/messages"
    assert first.headers["x-api-key"] == KEY and "authorization" not in first.headers
    assert first.headers["anthropic-version"] == "2023-06-01"
    assert first.body["system"] and first.body["max_tokens"] == 8192
    assert first.body["tools"][0]["input_schema"]["type"] == "object"
    second = provider.seen[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    sent_back = second[1]["content"]
    assert sent_back[0] == {"type": "thinking", "thinking": "I should list it.",
                            "signature": "sig-1"}
    assert sent_back[2] == {"type": "tool_use", "id": "toolu_1", "name": "bash",
                            "input": {"command": "ls"}}
    result_block = second[2]["content"][0]
    assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == "toolu_1"
    assert "".join(e.text for e in sink.of(ev.ThinkingDelta)) == "I should list it."


def test_429_with_retry_after_is_retried(provider: Provider, tmp_path: Path,
                                         murmur_home: Path) -> None:
    provider.replies = [
        lambda h: h.status(429, {"error": {"message": "slow down"}}, {"retry-after": "0.2"}),
        openai_answer("ok"),
    ]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    result, sink = run(root)
    assert result.exit_status == "ok" and len(provider.seen) == 2
    retry = sink.of(ev.InferenceRetry)
    assert len(retry) == 1 and retry[0].status == 429 and retry[0].delay_ms == 200
    assert "slow down" in retry[0].reason
    assert provider.seen[0].body == provider.seen[1].body  # the same request again


def test_500_twice_then_success(provider: Provider, tmp_path: Path,
                                murmur_home: Path) -> None:
    boom = lambda h: h.status(500, {"error": {"message": "overloaded"}})  # noqa: E731
    provider.replies = [boom, boom, openai_answer("third time")]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "third time"
    assert [r.attempt for r in sink.of(ev.InferenceRetry)] == [1, 2]


def test_retries_are_bounded(provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    provider.replies = [lambda h: h.status(503, {"error": "down"})] * 3
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    result, _ = run(root)
    assert result.exit_status == "failed" and len(provider.seen) == 3
    assert "503" in result.result and "after 3 attempts" in result.result


def test_a_stream_cut_midway_is_retried_and_its_partial_answer_dropped(
        provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    provider.replies = [lambda h: h.sse(openai_frames("a partial answer"), cut_after=3),
                        openai_answer("the whole answer")]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "the whole answer"
    retry = sink.of(ev.InferenceRetry)
    assert len(retry) == 1 and retry[0].status is None
    assert "stream broke" in retry[0].reason
    record = read_jsonl(result.record_path) if result.record_path else []
    assert [m["content"][0]["text"] for m in record if m["role"] == "assistant"] == [
        "the whole answer"]


def test_malformed_json_fails_the_task(provider: Provider, tmp_path: Path,
                                       murmur_home: Path) -> None:
    provider.replies = [lambda h: h.sse(iter(["data: {not json\n\n"]))]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    result, sink = run(root)
    assert result.exit_status == "failed"
    assert sink.of(ev.TaskFailed)[0].cause == "malformed_response"
    assert "not JSON" in result.result


def test_a_rotated_key_is_read_again_after_a_401(provider: Provider, tmp_path: Path,
                                                 murmur_home: Path) -> None:
    def reject_and_rotate(handler: Handler) -> None:
        (murmur_home / "config.yaml").write_text(f"credentials:\n  PROVIDER_KEY: {ROTATED}\n")
        handler.status(401, {"error": {"message": f"invalid key {KEY}"}})

    provider.replies = [reject_and_rotate, openai_answer("welcome back")]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    result, _ = run(root)
    assert result.exit_status == "ok" and result.result == "welcome back"
    assert [s.headers["authorization"] for s in provider.seen] == [
        f"Bearer {KEY}", f"Bearer {ROTATED}"]


def test_a_rejected_key_fails_the_task_and_no_key_is_written_anywhere(
        provider: Provider, tmp_path: Path, murmur_home: Path) -> None:
    provider.replies = [lambda h: h.status(401, {"error": {"message": f"bad key {KEY}"}})]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    result, sink = run(root)
    assert result.exit_status == "failed"
    assert sink.of(ev.TaskFailed)[0].cause == "credential_rejected"
    assert "[redacted]" in result.result and KEY not in result.result
    written = every_file_written(result.paths.session, murmur_home)
    assert KEY not in written and "[redacted]" in written
    events = json.dumps([vars(e) for e in sink.events], default=str)
    assert KEY not in events


def test_a_slow_stream_is_cancelled_promptly(provider: Provider, tmp_path: Path,
                                             murmur_home: Path) -> None:
    provider.replies = [lambda h: h.sse(openai_frames("x" * 400, pieces=200), delay=0.05)]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    result, sink = run(root, cancel_after=0.5)
    assert result.exit_status == "canceled"
    streamed = "".join(e.text for e in sink.of(ev.TextDelta))
    assert 0 < len(streamed) < 400  # it stopped in the middle of the stream


def test_a_whole_answer_without_streaming(provider: Provider, tmp_path: Path,
                                          murmur_home: Path) -> None:
    answer: dict[str, Any] = {"choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "in one piece"}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    provider.replies = [lambda h: h.status(200, answer)]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url,
                   extra_config="stream: false")
    result, _ = run(root)
    assert result.exit_status == "ok" and result.result == "in one piece"
    assert "stream" not in provider.seen[0].body


def test_endpoints_follow_the_gateway_rules(tmp_path: Path, murmur_home: Path) -> None:
    for endpoint, why in [("http://api.example.com/v1", "loopback"),
                          ("https://user:pw@api.example.com", "user or password"),
                          ("https://api.example.com/v1?key=1", "query")]:
        root = capsule(tmp_path / endpoint.split("/")[2].replace(":", "_").replace("@", "_"),
                       murmur_home, "openai", endpoint)
        with pytest.raises(ManifestError) as refused:
            load_capsule(root)
        assert "gateway.endpoint" in str(refused.value) and why in str(refused.value)


def test_the_command_line_runs_a_real_model_capsule_headless(provider: Provider,
                                                             tmp_path: Path,
                                                             murmur_home: Path) -> None:
    # streaming, a tool call and a retry, through `murmur-tui launch --headless`
    provider.replies = [
        lambda h: h.status(503, {"error": {"message": "warming up"}}, {"retry-after": "0"}),
        openai_call("call_1", "bash", ['{"command": "pwd"}'], text="Looking."),
        openai_answer("Done looking."),
    ]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    done = run_cli("launch", str(root), "--headless", "--task", "where am I?")
    assert done.returncode == 0, done.stderr
    assert "↻ model call failed (503)" in done.stdout and "warming up" in done.stdout
    assert "$ pwd" in done.stdout and "Done looking." in done.stdout
    assert "session ok" in done.stdout and KEY not in done.stdout + done.stderr
    assert len(provider.seen) == 3
