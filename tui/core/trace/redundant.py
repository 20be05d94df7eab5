"""Redundant-call detection, as Murmur's `mur trace` does it (spec §6.2).

A call is redundant when it reads a resource an earlier call already read, with no call in
between that changed that resource. Nothing here knows a tool by name: *which* resource a call
addressed and *how* it affected it come from what the call declares about itself.

1. The resource is the call's `resource_id` when it is a non-empty string, taken verbatim;
   else the first string value of a top-level input key named (case-insensitively on the key,
   in this priority) `path`, `file`, `file_path`, `filepath`, `filename`; else the call is
   left out entirely — neither flagged nor remembered.
2. The effect is its `state_effect`: `read`, `mutate`, or anything else (absent included)
   `unknown`.
3. A read of a resource already read is redundant (it re-reads the turn of the last read);
   every read then becomes the last read. A mutate or an unknown effect forgets the resource:
   an undeclared call is never assumed harmless, and never credited as a redundant read.

Calls are taken in file order, whatever their status.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

PATH_KEYS = ("path", "file", "file_path", "filepath", "filename")

Effect = Literal["read", "mutate", "unknown"]


@dataclass(frozen=True)
class Call:
    """What the rule reads of one `tool_call` line."""

    turn: int
    tool_name: str
    input: Any = None
    state_effect: str | None = None
    resource_id: str | None = None


@dataclass(frozen=True)
class RedundantCall:
    turn: int
    tool_name: str
    resource: str
    prior_turn: int  # the turn of the read this call repeats


def resource_of(resource_id: str | None, tool_input: Any) -> str | None:
    """The resource a call addressed, or None when the rule leaves the call out."""
    if resource_id:
        return resource_id
    if not isinstance(tool_input, Mapping):
        return None
    for wanted in PATH_KEYS:
        for key, value in tool_input.items():
            if isinstance(key, str) and key.lower() == wanted and isinstance(value, str):
                return value
    return None


def effect_of(state_effect: str | None) -> Effect:
    if state_effect == "read":
        return "read"
    if state_effect == "mutate":
        return "mutate"
    return "unknown"


def redundant_calls(calls: Iterable[Call]) -> list[RedundantCall]:
    """Every redundant call among `calls` (in file order), in the order they were made."""
    last_read: dict[str, int] = {}
    found: list[RedundantCall] = []
    for call in calls:
        resource = resource_of(call.resource_id, call.input)
        if resource is None:
            continue
        if effect_of(call.state_effect) == "read":
            prior = last_read.get(resource)
            if prior is not None:
                found.append(RedundantCall(call.turn, call.tool_name, resource, prior))
            last_read[resource] = call.turn
        else:
            last_read.pop(resource, None)
    return found
