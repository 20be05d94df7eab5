"""`builtin: anthropic`: the Messages API, mapped to and from Murmur's request and response
JSON (spec §4.2/4.3).

Murmur's `tool_call` blocks are `tool_use`, its tool messages become `tool_result` blocks in a
user turn (the results of one assistant turn, and any user text after them, share one user
message: the API wants the roles to alternate), `thinking` blocks go back with their signature
(and are left out without one, which the API would refuse), images as base64 sources. The
stream's `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`,
`thinking_delta`, `signature_delta`) / `message_delta` events build the answer; an `error`
event mid-stream is a provider error.
"""

from __future__ import annotations

import json
from typing import Any

from tui.core.errors import DriverError, ProviderError
from tui.core.events.kinds import StopReason
from tui.core.inference.composing import CallSizes, composing_of
from tui.core.inference.driver import StreamSink

VERSION = "2023-06-01"
# a provider's stop reason -> the stop reason of Murmur's response
STOPS: dict[str, StopReason] = {"end_turn": "end_turn", "tool_use": "tool_call",
                                "max_tokens": "max_tokens", "stop_sequence": "end_turn",
                                "pause_turn": "end_turn", "refusal": "end_turn"}


def body(request: dict[str, Any], stream: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for message in request.get("messages", []):
        role, blocks = _message(message)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    out: dict[str, Any] = {"model": request.get("model"), "messages": messages,
                           "max_tokens": request.get("max_tokens") or 4096}
    if request.get("system"):
        out["system"] = request["system"]
    tools = [{"name": tool["name"], "description": tool.get("description", ""),
              "input_schema": tool.get("parameters") or {"type": "object", "properties": {}}}
             for tool in request.get("tools", [])]
    if tools:
        out["tools"] = tools
    if stream:
        out["stream"] = True
    out.update(request.get("params") or {})
    return out


def _block(block: dict[str, Any]) -> dict[str, Any] | None:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))} if block.get("text") \
            else None
    if kind == "tool_call":
        return {"type": "tool_use", "id": block.get("id"), "name": block.get("name"),
                "input": block.get("input") or {}}
    if kind == "thinking":
        if not block.get("signature"):
            return None
        return {"type": "thinking", "thinking": block.get("text", ""),
                "signature": block["signature"]}
    if kind == "image":
        source = block.get("source") or {}
        return {"type": "image", "source": {"type": "base64",
                                            "media_type": source.get("media_type"),
                                            "data": source.get("data")}}
    return None


def _message(message: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    blocks = [b for b in message.get("content", []) if isinstance(b, dict)]
    if message.get("role") == "tool":
        inner = [b for b in (_block(x) for x in blocks) if b is not None]
        result: dict[str, Any] = {"type": "tool_result",
                                  "tool_use_id": message.get("tool_call_id"),
                                  "content": inner or [{"type": "text", "text": "(no output)"}]}
        if message.get("is_error"):
            result["is_error"] = True
        return "user", [result]
    role = "assistant" if message.get("role") == "assistant" else "user"
    return role, [b for b in (_block(x) for x in blocks) if b is not None]


class MessageEventAssembler:
    """Builds Murmur's response from Messages-API stream events (or one whole answer)."""

    def __init__(self, sink: StreamSink) -> None:
        self.sink = sink
        self.sizes = CallSizes(composing_of(sink))  # the calls the model is writing
        self.blocks: dict[int, dict[str, Any]] = {}
        self.stop: str | None = None
        self.usage: dict[str, int] = {}

    def event(self, name: str, data: dict[str, Any]) -> None:
        kind = data.get("type", name)
        if kind == "error":
            error = data.get("error") or {}
            raise ProviderError(f"{error.get('type', 'error')}: {error.get('message', data)}")
        if kind == "message_start":
            self._usage((data.get("message") or {}).get("usage"))
        elif kind == "content_block_start":
            block = dict(data.get("content_block") or {})
            block["_json"] = []
            block["_bytes"] = 0
            self.blocks[int(data.get("index", len(self.blocks)))] = block
            if block.get("type") == "tool_use":
                self.sizes.tell(block.get("id"), block.get("name"), 0)
        elif kind == "content_block_delta":
            self._delta(int(data.get("index", 0)), data.get("delta") or {})
        elif kind == "message_delta":
            self.stop = (data.get("delta") or {}).get("stop_reason") or self.stop
            self._usage(data.get("usage"))

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self.blocks.setdefault(index, {"type": "text", "_json": []})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.get("text", "")
            self.sink.text(delta.get("text", ""))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            self.sink.thinking(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.get("signature", "")
        elif kind == "input_json_delta":
            piece = delta.get("partial_json", "")
            block["_json"].append(piece)
            block["_bytes"] = block.get("_bytes", 0) + len(piece.encode())
            if block.get("type") == "tool_use":
                self.sizes.tell(block.get("id"), block.get("name"), block["_bytes"])

    def whole(self, data: dict[str, Any]) -> None:
        if data.get("type") == "error":
            self.event("error", data)
        for index, block in enumerate(data.get("content") or []):
            self.blocks[index] = {**block, "_json": []}
        self.stop = data.get("stop_reason")
        self._usage(data.get("usage"))

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        names = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
                 "cache_read_input_tokens": "cached_tokens",
                 "cache_creation_input_tokens": "cache_write_tokens"}
        for theirs, ours in names.items():
            if usage.get(theirs) is not None:
                self.usage[ours] = int(usage[theirs])

    def response(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            kind = block.get("type")
            if kind == "text":
                content.append({"type": "text", "text": block.get("text", "")})
            elif kind == "thinking":
                content.append({"type": "thinking", "text": block.get("thinking", ""),
                                "signature": block.get("signature", "")})
            elif kind == "tool_use":
                raw = "".join(block["_json"]).strip()
                try:
                    value = json.loads(raw) if raw else block.get("input") or {}
                except ValueError:
                    raise DriverError(f"tool call {block.get('name')!r} has input that is "
                                      f"not JSON: {raw[:200]}",
                                      cause="malformed_response") from None
                content.append({"type": "tool_call", "id": block.get("id"),
                                "name": block.get("name"), "input": value})
        stop = STOPS.get(self.stop or "end_turn", "end_turn")
        out: dict[str, Any] = {"stop_reason": stop, "content": content}
        if self.usage:
            out["usage"] = _with_cache_in_input(self.usage)
        return out


def _with_cache_in_input(usage: dict[str, int]) -> dict[str, int]:
    """Murmur's usage counts the input read from and written to the prompt cache in
    `input_tokens` (spec §4.3: `cached_tokens` is a part of it, as OpenAI reports it);
    Anthropic's `input_tokens` is only the rest, so the cache counts are added back."""
    if "input_tokens" not in usage:
        return dict(usage)
    cached = usage.get("cached_tokens", 0) + usage.get("cache_write_tokens", 0)
    return {**usage, "input_tokens": usage["input_tokens"] + cached}
