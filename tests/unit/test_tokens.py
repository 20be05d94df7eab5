"""Token counts: cl100k_base from the bundled file, and the per-message payload counter."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.chat import assistant_message, for_payload, tool_message, user_message
from tui.core.text import tokens


def test_counts_match_known_cl100k_values() -> None:
    assert tokens.count("hello world") == 2
    assert tokens.count("") == 0
    assert tokens.encoding().encode_ordinary("tiktoken is great!") == [
        83, 1609, 5963, 374, 2294, 0]


def test_special_token_text_counts_as_plain_text() -> None:
    assert tokens.count("<|endoftext|>") > 1


def test_counting_never_touches_the_network() -> None:
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise RuntimeError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from tui.core.text import tokens\n"
        "print(tokens.count('offline counting works'))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "TIKTOKEN_CACHE_DIR": "/nonexistent"})
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 0


HEAD: dict[str, Any] = {
    "model": "m", "max_tokens": 8192, "system": "[Capsule]\nName: x\n",
    "tools": [{"name": "bash", "description": "Run it.", "parameters": {"type": "object"}}],
    "params": {}, "prompt_cache_key": "x:1:ctx",
}

text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@st.composite
def a_message(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["user", "assistant", "tool", "call"]))
    body = draw(text)
    if kind == "user":
        return user_message(body)
    if kind == "tool":
        return tool_message(draw(text), draw(st.booleans()), body, "tool:x")
    content: list[dict[str, Any]] = [{"type": "text", "text": body}]
    if kind == "call":
        content.append({"type": "tool_call", "id": draw(text), "name": "bash",
                        "input": {"command": draw(text), "n": draw(st.integers())}})
    return assistant_message(content)


@settings(max_examples=300, deadline=None)
@given(st.lists(a_message(), max_size=8), text)
def test_payload_counter_equals_counting_the_whole_payload(
        messages: list[dict[str, Any]], system: str) -> None:
    head = {**HEAD, "system": system}
    counter = tokens.PayloadCounter(head)
    payload = [for_payload(m) for m in messages]
    ids = [m["id"] for m in messages]
    whole = tokens.count(tokens.serialize_payload(head, payload))
    assert counter.count(payload, ids) == whole
    # and again, growing one message at a time, with the cache warm
    for end in range(len(payload) + 1):
        expected = tokens.count(tokens.serialize_payload(head, payload[:end]))
        assert counter.count(payload[:end], ids[:end]) == expected
