"""`builtin: openai`: any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM,
llama.cpp, OpenRouter…), mapped to and from Murmur's request and response JSON (spec §4.2/4.3).

Messages: the system prompt first; user text (and images as data URLs); assistant text with
`tool_calls` (arguments as JSON text); each tool result a `tool` message. Thinking blocks are not
sent back (chat completions has no place for them). Streaming reads `delta.content`,
`delta.reasoning_content` / `delta.reasoning` (thinking, as vLLM, DeepSeek and Ollama send it)
and `delta.tool_calls` pieces, whose arguments arrive split across chunks; usage comes in the
last chunk (`stream_options.include_usage`).
"""

from __future__ import annotations

import json
from typing import Any

from tui.core.errors import DriverError, ProviderError
from tui.core.events.kinds import StopReason
from tui.core.inference.composing import CallSizes, composing_of
from tui.core.inference.driver import StreamSink

# a provider's finish reason -> the stop reason of Murmur's response
STOPS: dict[str, StopReason] = {"stop": "end_turn", "tool_calls": "tool_call",
                                "function_call": "tool_call", "length": "max_tokens",
                                "content_filter": "end_turn"}


def body(request: dict[str, Any], stream: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if request.get("system"):
        messages.append({"role": "system", "content": request["system"]})
    for message in request.get("messages", []):
        messages.extend(_message(message))
    out: dict[str, Any] = {"model": request.get("model"), "messages": messages,
                           "max_tokens": request.get("max_tokens")}
    tools = [{"type": "function", "function": {
        "name": tool["name"], "description": tool.get("description", ""),
        "parameters": tool.get("parameters") or {"type": "object", "properties": {}}}}
        for tool in request.get("tools", [])]
    if tools:
        out["tools"] = tools
    if stream:
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    out.update(request.get("params") or {})
    return out


def _text(blocks: list[dict[str, Any]]) -> str:
    return "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")


def _message(message: dict[str, Any]) -> list[dict[str, Any]]:
    role = message.get("role")
    blocks = [b for b in message.get("content", []) if isinstance(b, dict)]
    if role == "tool":
        text = _text(blocks) or "(no output)"
        images = sum(1 for b in blocks if b.get("type") == "image")
        if images:
            text += f"\n[{images} image(s) attached to this result are not sent to this API]"
        return [{"role": "tool", "tool_call_id": message.get("tool_call_id"), "content": text}]
    if role == "assistant":
        calls = [{"id": b.get("id"), "type": "function", "function": {
            "name": b.get("name"), "arguments": json.dumps(b.get("input") or {})}}
            for b in blocks if b.get("type") == "tool_call"]
        out: dict[str, Any] = {"role": "assistant", "content": _text(blocks) or None}
        if calls:
            out["tool_calls"] = calls
        return [out]
    if any(b.get("type") == "image" for b in blocks):
        parts: list[dict[str, Any]] = []
        for b in blocks:
            if b.get("type") == "text":
                parts.append({"type": "text", "text": b.get("text", "")})
            elif b.get("type") == "image":
                source = b.get("source") or {}
                parts.append({"type": "image_url", "image_url": {
                    "url": f"data:{source.get('media_type')};base64,{source.get('data')}"}})
        return [{"role": "user", "content": parts}]
    return [{"role": "user", "content": _text(blocks)}]


class ChatChunkAssembler:
    """Builds Murmur's response from chat-completion chunks (or one whole answer)."""

    def __init__(self, sink: StreamSink) -> None:
        self.sink = sink
        self.sizes = CallSizes(composing_of(sink))  # the calls the model is writing
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: dict[str, int] = {}

    def chunk(self, data: dict[str, Any]) -> None:
        if isinstance(data.get("error"), dict):
            raise ProviderError(str(data["error"].get("message") or data["error"]))
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if thought:
                self.thinking.append(thought)
                self.sink.thinking(thought)
            if delta.get("content"):
                self.text.append(delta["content"])
                self.sink.text(delta["content"])
            for piece in delta.get("tool_calls") or []:
                call = self.calls.setdefault(int(piece.get("index", len(self.calls))),
                                             {"id": None, "name": "", "arguments": [],
                                              "bytes": 0})
                if piece.get("id"):
                    call["id"] = piece["id"]
                function = piece.get("function") or {}
                if function.get("name"):
                    call["name"] += function["name"]
                if function.get("arguments"):
                    call["arguments"].append(function["arguments"])
                    call["bytes"] += len(function["arguments"].encode())
                self.sizes.tell(call["id"], call["name"], call["bytes"])
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
        self._usage(data.get("usage"))

    def whole(self, data: dict[str, Any]) -> None:
        if isinstance(data.get("error"), dict):
            raise ProviderError(str(data["error"].get("message") or data["error"]))
        choice = (data.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        thought = message.get("reasoning_content") or message.get("reasoning")
        if thought:
            self.thinking.append(thought)
        if message.get("content"):
            self.text.append(message["content"])
        for index, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            self.calls[index] = {"id": call.get("id"), "name": function.get("name", ""),
                                 "arguments": [function.get("arguments") or ""]}
        self.finish = choice.get("finish_reason")
        self._usage(data.get("usage"))

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        self.usage["input_tokens"] = int(usage.get("prompt_tokens") or 0)
        self.usage["output_tokens"] = int(usage.get("completion_tokens") or 0)
        details = usage.get("prompt_tokens_details") or {}
        if details.get("cached_tokens"):
            self.usage["cached_tokens"] = int(details["cached_tokens"])

    def response(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if self.thinking:
            content.append({"type": "thinking", "text": "".join(self.thinking),
                            "signature": ""})
        if self.text:
            content.append({"type": "text", "text": "".join(self.text)})
        for index in sorted(self.calls):
            call = self.calls[index]
            arguments = "".join(call["arguments"]).strip() or "{}"
            try:
                parsed = json.loads(arguments)
            except ValueError:
                raise DriverError(f"tool call {call['name']!r} has arguments that are not "
                                  f"JSON: {arguments[:200]}", cause="malformed_response") from None
            content.append({"type": "tool_call", "id": call["id"] or f"call_{index}",
                            "name": call["name"],
                            "input": parsed if isinstance(parsed, dict) else {"value": parsed}})
        stop = STOPS.get(self.finish or "stop", "end_turn")
        if self.calls:
            stop = "tool_call"
        out: dict[str, Any] = {"stop_reason": stop, "content": content}
        if self.usage:
            out["usage"] = self.usage
        return out
