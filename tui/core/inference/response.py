"""Parsing a driver's response JSON (spec §4.3)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tui.core.chat import ToolCallBlock, tool_calls_of
from tui.core.errors import MalformedResponse

USAGE_KEYS = ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens",
              "thinking_tokens")
STOP_REASONS = ("end_turn", "tool_call", "max_tokens", "error")


@dataclass(frozen=True)
class ModelResponse:
    stop_reason: str
    content: list[dict[str, Any]]
    usage: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    @property
    def tool_calls(self) -> list[ToolCallBlock]:
        return tool_calls_of(self.content)

    @property
    def text(self) -> str:
        return "\n".join(str(block.get("text", "")) for block in self.content
                         if block.get("type") == "text")


def parse_response(raw: str) -> ModelResponse:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise MalformedResponse(f"the driver's response is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise MalformedResponse("the driver's response is not a JSON object")
    stop_reason = value.get("stop_reason")
    if not isinstance(stop_reason, str):
        raise MalformedResponse("the driver's response has no string stop_reason")
    content = value.get("content", [])
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise MalformedResponse("the driver's response content is not a list of blocks")
    for block in content:
        if block.get("type") == "tool_call":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise MalformedResponse("a tool_call block needs a string id and name")
            if "input" in block and not isinstance(block["input"], dict):
                raise MalformedResponse(f"tool_call {block['id']!r}: input is not an object")
    usage_raw = value.get("usage")
    usage: dict[str, int] = {}
    if isinstance(usage_raw, dict):
        for key in USAGE_KEYS:
            amount = usage_raw.get(key)
            if isinstance(amount, int) and not isinstance(amount, bool) and amount >= 0:
                usage[key] = amount
    error = value.get("error")
    return ModelResponse(stop_reason=stop_reason, content=content, usage=usage,
                         error=str(error) if error is not None else None)
