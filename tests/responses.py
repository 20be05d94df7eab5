"""What a scripted driver answers, one turn each (the §4.3 response shape): the builders
every test's script is made of."""

from __future__ import annotations

from typing import Any

Response = dict[str, Any]


def text_response(text: str) -> Response:
    """A turn that ends the task with `text`."""
    return {"stop_reason": "end_turn", "content": [{"type": "text", "text": text}]}


def call_response(tool: str, tool_input: dict[str, Any], call_id: str = "c1",
                  text: str = "") -> Response:
    """A turn that calls `tool` with `tool_input` (said after `text`, when given)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.append({"type": "tool_call", "id": call_id, "name": tool, "input": tool_input})
    return {"stop_reason": "tool_call", "content": content}


def tool_response(command: str, call_id: str = "call_1", tool: str = "bash",
                  text: str = "") -> Response:
    """A turn that runs a shell `command` (the input a shell tool takes)."""
    return call_response(tool, {"command": command}, call_id, text)
