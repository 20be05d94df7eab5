"""Chat messages as the runtime holds them: the driver content-block shape plus an `id` (spec §3.2).

A message is a plain dict so it serialises to a record line and a driver payload without
conversion. Keys appear in Murmur's order: `role`, (`tool_call_id`, `is_error`), `content`,
`id`, (`source_id`), (`fence`), and (`inserted_by`: `replace-context` or `seed-context` on a
message a hook put in the context; hook@0.9.0 hands it back as `inserted-by`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, Required, TypedDict, TypeGuard, cast

from tui.core import ids

Role = Literal["user", "assistant", "tool", "system"]
Block = dict[str, Any]  # one content block: {"type": ..., ...}; a model may send any type
# a message line as a record file holds it: an object with a string `role` (Murmur's rule),
# anything else as it is; `as_message` says whether it can go back to a model
RecordLine = dict[str, Any]


class Message(TypedDict, total=False):
    """One message as the record holds it and a driver reads it (less the record-only keys)."""
    role: Required[Role]
    content: Required[list[Block]]
    tool_call_id: str  # a tool message: the call it answers
    is_error: bool  # a tool message: the call failed
    id: str  # the record's id of it
    source_id: str  # where a hook's message came from
    fence: str  # a tool message: the fence its untrusted text was wrapped in
    inserted_by: str  # a hook put it in the context: `replace-context` or `seed-context`


class ToolCallBlock(TypedDict):
    """A model's request to call a tool, as a block of its turn's content."""
    type: Literal["tool_call"]
    id: str
    name: str
    input: NotRequired[dict[str, Any]]

_RECORD_ONLY_KEYS = ("id", "source_id", "fence", "inserted_by")


def user_message(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}], "id": ids.message_id()}


def assistant_message(content: list[dict[str, Any]]) -> Message:
    return {"role": "assistant", "content": content, "id": ids.message_id()}


def tool_message(call_id: str, is_error: bool, text: str, fence: str | None,
                 images: tuple[dict[str, Any], ...] = ()) -> Message:
    message: Message = {
        "role": "tool",
        "tool_call_id": call_id,
        "is_error": is_error,
        "content": [{"type": "text", "text": text}, *images],
        "id": ids.message_id(),
    }
    if fence is not None:
        message["fence"] = fence
    return message


CHAT_ROLES: tuple[Role, ...] = ("user", "assistant", "tool", "system")


def is_tool_call(block: Any) -> TypeGuard[ToolCallBlock]:
    return isinstance(block, dict) and block.get("type") == "tool_call"


def chat_shape_problem(message: Mapping[str, Any]) -> str | None:
    """Why a record message cannot go back to a model (a threaded reload), or None: the role
    must be a chat role and `content` a list of blocks, each an object with a string `type`."""
    if message.get("role") not in CHAT_ROLES:
        return f"its role {str(message.get('role'))[:40]!r} is not a chat role"
    content = message.get("content")
    if not isinstance(content, list) or not all(
            isinstance(block, dict) and isinstance(block.get("type"), str) for block in content):
        return "its content is not a list of blocks"
    return None


def as_message(line: Mapping[str, Any]) -> Message | None:
    """A record line as a chat message, or None when it cannot be one (`chat_shape_problem`)."""
    return cast(Message, line) if chat_shape_problem(line) is None else None


def for_payload(message: Mapping[str, Any]) -> Message:
    """The message as a driver sees it: `id`, `source_id` and `fence` stripped."""
    return cast(Message, {key: value for key, value in message.items()
                          if key not in _RECORD_ONLY_KEYS})


def compact_json(value: Any) -> str:
    """JSON as Murmur writes it: no spaces, UTF-8 kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def text_of(content: Any) -> str:
    """The text blocks of a content array joined with newlines."""
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def tool_calls_of(content: Any) -> list[ToolCallBlock]:
    if not isinstance(content, list):
        return []
    return [block for block in content if is_tool_call(block)]


def wit_content(message: Mapping[str, Any]) -> str:
    """`content` as a hook or conversation reader receives it (spec §3.3).

    A tool message becomes the JSON string of the tool-message envelope (its fields as they
    are, whatever their type); any other message the JSON of its content, whatever it is, or
    "" when it has none (as Murmur).
    """
    if message.get("role") == "tool":
        return compact_json({
            "__murmur_tool_msg__": True,
            "tool_call_id": message.get("tool_call_id"),
            "is_error": message.get("is_error"),
            "body": message.get("content"),
        })
    if "content" not in message:
        return ""
    return compact_json(message["content"])


def from_wit_message(wit: dict[str, Any], keep_ids: bool = True) -> Message | None:
    """A message a hook handed back (`replace-context`, `seed-context`, `run-inference`) as
    the runtime holds it (spec §3.3). A tool message must carry the envelope with a non-empty
    `tool_call_id`, else it is dropped (None). With `keep_ids`, it gets a fresh id and keeps
    its `source_id`."""
    role = str(wit.get("role", ""))
    raw = wit.get("content", "")
    if role == "tool":
        try:
            envelope = json.loads(raw)
        except (TypeError, ValueError):
            return None
        if not (isinstance(envelope, dict) and envelope.get("__murmur_tool_msg__") is True
                and isinstance(envelope.get("tool_call_id"), str)
                and envelope["tool_call_id"]):
            return None
        body = envelope.get("body")
        message: Message = {
            "role": "tool", "tool_call_id": envelope["tool_call_id"],
            "is_error": bool(envelope.get("is_error")),
            "content": body if isinstance(body, list) else _as_blocks(body),
        }
    elif role in CHAT_ROLES:
        message = {"role": role, "content": _content_from_json(raw)}
    else:  # a role Murmur's chat has not: kept as the hook gave it (the record takes any)
        message = cast(Message, {"role": role, "content": _content_from_json(raw)})
    if keep_ids:
        message["id"] = ids.message_id()
        if isinstance(wit.get("source_id"), str):
            message["source_id"] = wit["source_id"]
        if isinstance(wit.get("inserted_by"), str):
            message["inserted_by"] = wit["inserted_by"]
    return message


def _content_from_json(raw: Any) -> list[dict[str, Any]]:
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return [{"type": "text", "text": str(raw)}]
    if isinstance(value, list):
        return value
    return _as_blocks(value)


def _as_blocks(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    return [{"type": "text", "text": compact_json(value)}]
