"""Stateful driver continuation (seed 001, spec §4.2).

A driver that holds the conversation provider-side returns `continuation_id` in its result's
metadata. While one is held for the context about to be sent, a request carries only the
messages appended since the driver acknowledged state, plus the id at the top level. The driver
acknowledges what it was *sent* (seed 000; Murmur's continuation test): its own reply was not
sent to it, so after a tool-calling turn the next request holds the assistant message that
records the reply **and** the tool results (after a reopen: the answer and the reason). A reply
without the key
(or with an empty value), a compaction, or another context id means a full resend. Session
tokens are always counted on the full logical payload, never on what went over the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui.core.chat import Message
from tui.core.inference.driver import DriverReply


@dataclass(frozen=True)
class Held:
    continuation_id: str
    context_id: str | None
    acknowledged: int  # messages of the context the driver holds


def request(head: dict[str, Any], messages: list[Message], context_id: str | None,
            held: Held | None) -> dict[str, Any]:
    """The driver request: incremental under a continuation for this context, else full."""
    if held is not None and held.context_id == context_id and \
            held.acknowledged <= len(messages):
        return {**head, "messages": messages[held.acknowledged:],
                "continuation_id": held.continuation_id}
    return {**head, "messages": messages}


def after_reply(reply: DriverReply, context_id: str | None, sent: int) -> Held | None:
    """What is held after a passed reply to a request over `sent` context messages: the
    driver acknowledged those `sent`, not its own answer."""
    continuation_id = reply.meta("continuation_id")
    if not continuation_id:
        return None
    return Held(continuation_id, context_id, sent)
