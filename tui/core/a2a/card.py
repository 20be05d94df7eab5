"""An agent card (`GET /.well-known/agent-card.json`), read once, the one way: which generation
of Murmur's door answers, the session it names, the methods it serves.

Three generations of the door are in use (docs/fleet.md, "Three generations of the door"):

- `A` — Murmur v0.2.0 and every card up to v0.4.0: no `supportedInterfaces`, a top-level `url`;
  `message/send`, `tasks/get`, role `user`, lower-case states. A v0.4.0 card also carries
  `session_id` and `serves.methods`;
- `B` — an A2A card whose JSONRPC interface declares `protocolVersion` 0.3 (`"0.3"`, `"0.3.0"`):
  the 0.3 method names, as A;
- `C` — the newest: `protocolVersion` 1.0 (`"1.0"`, `"1.0.1"`); `SendMessage`, `GetTask`,
  `CancelTask`, `ROLE_USER`, `TASK_STATE_*`, and `A2A-Version: 1.0` on every request.

A door answers the method names it lists (agent-card.md: "a capsule serving [the previous card]
answers the method names of its own version"), so a card without `supportedInterfaces` whose
`serves.methods` lists the v1.0 names (`SendMessage`, `GetTask`, …) is read as `C`, not `A`.
An interface without `protocolBinding` counts as JSONRPC (A2A 0.3's default transport).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tui.core import names
from tui.core.a2a.rpc import shown_text
from tui.core.errors import DoorError

Generation = Literal["A", "B", "C"]
CARD_PATH = "/.well-known/agent-card.json"
DOOR_EXT = "#murmur-door-v1"
CAPSULE_EXT = "#murmur-capsule-v1"
STREAM_EXT = "#murmur-stream-v1"
NAME_EXT = "urn:murmur-tui:agent-card:session-name-v1"  # murmur-tui's: the session's name

# The method each call uses, per generation (None: that door has no such method).
METHODS: dict[str, dict[Generation, str | None]] = {
    "send": {"A": "message/send", "B": "message/send", "C": "SendMessage"},
    "get": {"A": "tasks/get", "B": "tasks/get", "C": "GetTask"},
    "cancel": {"A": None, "B": "tasks/cancel", "C": "CancelTask"},
    "stop": {"A": None, "B": "session/stop", "C": "session/stop"},
    "extended": {"A": None, "B": "agent/getAuthenticatedExtendedCard",
                 "C": "GetExtendedAgentCard"},
}
DEFAULT_METHODS: dict[Generation, tuple[str, ...]] = {
    "A": ("message/send", "message/stream", "stream/watch", "tasks/get"),
    "B": ("message/send", "message/stream", "stream/watch", "tasks/get", "tasks/cancel",
          "session/stop"),
    "C": ("SendMessage", "SendStreamingMessage", "stream/watch", "GetTask", "CancelTask",
          "session/stop"),
}
_V1_METHODS = frozenset({"SendMessage", "SendStreamingMessage", "GetTask", "CancelTask",
                         "GetExtendedAgentCard"})
# The `A2A-Version` header each generation's requests carry (None: none).
VERSION_HEADER: dict[Generation, str | None] = {"A": None, "B": None, "C": "1.0"}
# What `murmur-tui ps --json` prints as `door` (docs/fleet.md): kept as it always was.
DOOR_WORDS: dict[Generation, str] = {"A": "legacy", "B": "0.3", "C": "1.0"}


@dataclass(frozen=True)
class Card:
    """What a door's agent card says, whatever its generation."""

    generation: Generation
    name: str
    version: str
    url: str
    session_id: str | None  # None: the card does not say (door A, or an authenticated door)
    methods: tuple[str, ...]
    streaming: bool
    authenticated: bool = False  # `capabilities.extendedAgentCard`: the door asks for a token
    conversation_mode: str | None = None
    session_name: str | None = None  # murmur-tui's name extension (docs/fleet.md, "Names")

    @property
    def protocol(self) -> str:
        return {"A": "Murmur v0.2.0", "B": "A2A 0.3", "C": "A2A 1.0"}[self.generation]


def extension(card: Mapping[str, Any], suffix: str) -> Mapping[str, Any] | None:
    """The `params` of the extension whose `uri` ends with `suffix` (found by uri, never by
    position, as agent-card.md asks)."""
    capabilities = card.get("capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    if not isinstance(extensions, list):
        return None
    for item in extensions:
        if isinstance(item, Mapping) and str(item.get("uri", "")).endswith(suffix):
            params = item.get("params")
            return params if isinstance(params, Mapping) else {}
    return None


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def _session(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_card(card: Any, url: str) -> Card:
    """The generation and facts of an agent card, or a DoorError naming `url` and why
    murmur-tui cannot speak to the door that served it (module docstring)."""
    if not isinstance(card, Mapping):
        raise DoorError(f"the door at {url} served an agent card that is not a JSON object")
    name, version = card.get("name"), card.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        raise DoorError(f"the door at {url} served an agent card without a name and version")
    capabilities = card.get("capabilities")
    capabilities = capabilities if isinstance(capabilities, Mapping) else {}
    streaming = capabilities.get("streaming") is True
    authenticated = capabilities.get("extendedAgentCard") is True
    interfaces = card.get("supportedInterfaces")
    if interfaces is None:  # the previous card: Murmur v0.4.0 and earlier
        if not isinstance(card.get("url"), str):
            raise DoorError(f"the door at {url} served an agent card with neither "
                            "supportedInterfaces nor url: not a Murmur door")
        serves = card.get("serves")
        methods = _strings(serves.get("methods")) if isinstance(serves, Mapping) else None
        generation: Generation = "C" if methods and _V1_METHODS & set(methods) else "A"
        return Card(generation, name, version, url, _session(card.get("session_id")),
                    methods or DEFAULT_METHODS[generation], streaming, authenticated)
    if not isinstance(interfaces, list):
        raise DoorError(f"the door at {url} served an agent card whose supportedInterfaces "
                        "is not a list")
    versions = [str(item.get("protocolVersion", "")) for item in interfaces
                if isinstance(item, Mapping)
                and item.get("protocolBinding", "JSONRPC") == "JSONRPC"]
    if any(v == "1.0" or v.startswith("1.0.") for v in versions):
        generation = "C"
    elif any(v == "0.3" or v.startswith("0.3.") for v in versions):
        generation = "B"
    else:
        said = ", ".join(repr(v) for v in versions) or "no JSONRPC interface"
        raise DoorError(f"the door at {url} speaks {shown_text(said, 200)}; murmur-tui speaks "
                        "A2A 1.0, 0.3 and Murmur v0.2.0's door")
    door = extension(card, DOOR_EXT) or {}
    capsule = extension(card, CAPSULE_EXT) or {}
    named = extension(card, NAME_EXT) or {}
    return Card(generation, name, version, url, _session(capsule.get("sessionId")),
                _strings(door.get("methods")) or DEFAULT_METHODS[generation], streaming,
                authenticated, session_name=names.valid(named.get("name")))
